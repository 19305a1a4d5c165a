/* fly_trace_tensor.c — tensors and atoms: runtime sizes, views and slices,
 * the divides, shared and register buffers, and the atoms' partition, gemm
 * and copy (their parameters as attributes on fly.make_* operations). */
#include <string.h>

#include "fly_atom.h"
#include "fly_layout_tv.h"
#include "fly_trace_op.h"

/* The product of the static leaves of a shape. */
static int64_t static_product(const FlyVal *v) {
  if (v->kind == FLY_V_INT)
    return v->i;
  int64_t p = 1;
  for (int i = 0; v->kind == FLY_V_TUPLE && i < v->n; i++)
    p *= static_product(v->elems[i]);
  return p;
}

/* The product of a runtime shape's leaves: its static part as one
   constant (left out when 1), times each runtime leaf. */
bool fly_op_size(FlyTraceOp *o) {
  FlyTrace *t = o->t;
  const FlyVal *leaves[FLY_MAX_MODES * 2];
  int n = fly_trace_runtime_leaves(o->args[0], leaves, FLY_MAX_MODES * 2);
  int64_t fixed = static_product(o->args[0]);
  MlirType i32 = mlirIntegerTypeGet(t->m->ctx, 32);
  bool skip_fixed = fixed == 1 && n > 0;
  MlirValue acc = skip_fixed ? fly_trace_handle(t, leaves[0]) : fly_trace_i32(t, fixed);
  for (int i = skip_fixed ? 1 : 0; i < n; i++) {
    MlirValue v[2] = {acc, fly_trace_handle(t, leaves[i])};
    if (mlirValueIsNull(v[1]))
      return fly_trace_error(t, o->at, "internal error: a shape leaf has no code");
    acc = op1(o, "arith.muli", i32, 2, v, 0, NULL);
  }
  return set_result(o, acc);
}

/* ---- tensors --------------------------------------------------------------------------------- */

/* The result tensor's memref, made by a Fly operation. */
static bool tensor_result(FlyTraceOp *o, const char *name, int n, const MlirValue *v, int nattr,
                          const MlirNamedAttribute *attr) {
  MlirValue r = op1(o, name, fly_trace_tensor_type(o->t, o->result), n, v, nattr, attr);
  if (!mlirValueIsNull(r))
    fly_trace_note_leaves(o->t, o->result, r);
  return set_result(o, r);
}

/* A view of a tensor (a slice, divide or partition): its operands, then the
   runtime leaves of the result (shape, then stride, each in order), so that
   the lowering finds every `?` of the result type as a value. Where the
   semantic pass could not follow a leaf it has no code; the view is then
   emitted without them and the lowering reports it. */
static bool view_result(FlyTraceOp *o, const char *name, int n, const MlirValue *v, int nattr,
                        const MlirNamedAttribute *attr) {
  const FlyVal *leaves[256];
  int k = fly_trace_runtime_leaves(o->result->tensor.shape, leaves, 128);
  k += fly_trace_runtime_leaves(o->result->tensor.stride, leaves + k, 128);
  MlirValue all[4 + 256 + 2 * 128];
  if (n > 0)
    memcpy(all, v, sizeof *v * (size_t)n);
  int m = n;
  for (int i = 0; i < k; i++) {
    if (!leaves[i]->ssa) {
      m = n;
      break;
    }
    all[m++] = fly_trace_handle(o->t, leaves[i]);
  }
  MlirValue r = op1(o, name, fly_trace_tensor_type(o->t, o->result), m, all, nattr, attr);
  if (!mlirValueIsNull(r))
    fly_trace_note_leaves(o->t, o->result, r);
  return set_result(o, r);
}

bool fly_op_slice(FlyTraceOp *o) {
  FlyTrace *t = o->t;
  const FlyVal *leaves[FLY_MAX_MODES * 2];
  int n = fly_trace_runtime_leaves(o->args[1], leaves, FLY_MAX_MODES * 2);
  MlirValue v[1 + FLY_MAX_MODES * 2];
  v[0] = fly_trace_handle(t, o->args[0]);
  for (int i = 0; i < n; i++)
    if (mlirValueIsNull(v[1 + i] = fly_trace_value(t, leaves[i], fly_type_scalar(FLY_TYPE_I32))))
      return false;
  char *coord = fly_trace_tuple_text(t, o->args[1]);
  MlirNamedAttribute a = fly_mlir_named(t->m, "coord", fly_mlir_str_attr(t->m, coord ? coord : ""));
  return view_result(o, "fly.slice", 1 + n, v, 1, &a);
}

bool fly_op_divide(FlyTraceOp *o, const char *name) {
  FlyTrace *t = o->t;
  MlirValue src = fly_trace_handle(t, o->args[0]);
  char *tiler = fly_val_str_canonical(&t->A, o->args[1]);
  MlirNamedAttribute a = fly_mlir_named(t->m, "tiler", fly_mlir_str_attr(t->m, tiler ? tiler : ""));
  return view_result(o, name, 1, &src, 1, &a);
}

bool fly_op_view(FlyTraceOp *o, const char *name, const char *attr) {
  FlyTrace *t = o->t;
  MlirValue src = fly_trace_handle(t, o->args[0]);
  const FlyVal *arg = o->args[1];
  const char *text = arg->kind == FLY_V_TYPE ? fly_type_str(&t->A, arg->type_value)
                                             : fly_val_str_canonical(&t->A, arg);
  MlirNamedAttribute a = fly_mlir_named(t->m, attr, fly_mlir_str_attr(t->m, text ? text : ""));
  return view_result(o, name, 1, &src, 1, &a);
}

/* ---- atoms ---------------------------------------------------------------------------------- */

/* The operation that makes a static atom or tiled atom: its parameters are
   attributes (the atom's name in the atom table, its widths, types and
   layouts), which the lowering reads. Null after an error. */
static MlirValue atom_value(FlyTraceOp *o, const FlyVal *v) {
  FlyTrace *t = o->t;
  MlirValue none = {NULL};
  if (v->kind != FLY_V_OBJECT)
    return none;
  const FlyObject *ob = &v->object;
  if (ob->kind == FLY_OBJ_THR_COPY || ob->kind == FLY_OBJ_THR_MMA)
    return atom_value(o, ob->base);
  bool tiled = ob->kind == FLY_OBJ_TILED_COPY || ob->kind == FLY_OBJ_TILED_MMA;
  const FlyObject *at = tiled ? &ob->base->object : ob;
  const char *make, *type;
  switch (ob->kind) {
  case FLY_OBJ_COPY_ATOM:
    make = "fly.make_copy_atom", type = "!fly.copy_atom";
    break;
  case FLY_OBJ_MMA_ATOM:
    make = "fly.make_mma_atom", type = "!fly.mma_atom";
    break;
  case FLY_OBJ_TILED_COPY:
    make = "fly.make_tiled_copy", type = "!fly.tiled_copy";
    break;
  case FLY_OBJ_TILED_MMA:
    make = "fly.make_tiled_mma", type = "!fly.tiled_mma";
    break;
  default:
    return none;
  }
  MlirNamedAttribute a[7];
  int n = 0;
  a[n++] = fly_mlir_named(t->m, "atom", fly_mlir_str_attr(t->m, at->atom->name));
  bool copy = ob->kind == FLY_OBJ_COPY_ATOM || ob->kind == FLY_OBJ_TILED_COPY;
  if (copy)
    a[n++] = int_attr(t, "bits", at->bits);
  a[n++] = fly_mlir_named(t->m, "elem", mlirTypeAttrGet(fly_trace_type(t, at->elem)));
  /* An atom that mixes types names B's apart (elem is A's). */
  if (!copy && !fly_type_equal(at->elem, at->elem_b))
    a[n++] = fly_mlir_named(t->m, "elem_b", mlirTypeAttrGet(fly_trace_type(t, at->elem_b)));
  if (!copy)
    a[n++] = fly_mlir_named(t->m, "acc", mlirTypeAttrGet(fly_trace_type(t, at->acc)));
  if (ob->kind == FLY_OBJ_TILED_COPY) {
    a[n++] = fly_mlir_named(t->m, "tv", fly_mlir_str_attr(t->m, fly_layout_str(&t->A, ob->tv->tv)));
    a[n++] =
        fly_mlir_named(t->m, "tile", fly_mlir_str_attr(t->m, fly_tuple_str(&t->A, ob->tv->tile)));
    if (ob->tv->dst) /* a warp-wide copy's destination side (partition_D) */
      a[n++] =
          fly_mlir_named(t->m, "tv_d", fly_mlir_str_attr(t->m, fly_layout_str(&t->A, ob->tv->dst)));
  } else if (ob->kind == FLY_OBJ_TILED_MMA) {
    a[n++] =
        fly_mlir_named(t->m, "atoms", fly_mlir_str_attr(t->m, fly_layout_str(&t->A, ob->layout)));
  }
  return op1(o, make, fly_mlir_type(t->m, type), 0, NULL, n, a);
}

/* partition_S/D and partition_A/B/C and their fragments: (tiled, thread,
   tensor). A fragment is a new tensor, the others views. */
bool fly_op_partition(FlyTraceOp *o, const char *name, bool fragment) {
  FlyTrace *t = o->t;
  const FlyVal *thr = o->args[0];
  MlirValue v[3] = {atom_value(o, thr),
                    fly_trace_value(t, thr->object.thread, fly_type_scalar(FLY_TYPE_I32)),
                    fly_trace_handle(t, o->args[1])};
  if (mlirValueIsNull(v[0]) || mlirValueIsNull(v[1]) || mlirValueIsNull(v[2]))
    return fly_trace_error(t, o->at, "internal error: the operands of %s have no code", name);
  if (fragment)
    return tensor_result(o, name, 3, v, 0, NULL);
  return view_result(o, name, 3, v, 0, NULL);
}

bool fly_op_gemm(FlyTraceOp *o) {
  FlyTrace *t = o->t;
  MlirValue v[4] = {atom_value(o, o->args[0])};
  /* A and B in shared memory (wgmma) are passed as memrefs: the MMA reads
     them through descriptors. */
  for (int i = 1; i < 4; i++)
    v[i] = o->args[i]->kind == FLY_V_TENSOR && o->args[i]->tensor.space == FLY_SPACE_SHARED
               ? fly_trace_handle(t, o->args[i])
               : fly_trace_value(t, o->args[i], NULL);
  for (int i = 0; i < 4; i++)
    if (mlirValueIsNull(v[i]))
      return fly_trace_error(t, o->at, "internal error: the operands of gemm have no code");
  return set_result(o, op1(o, "fly.gemm", fly_trace_type(t, o->result->type), 4, v, 0, NULL));
}

/* fly.copy(atom, src, dst), or fly.copy_if(atom, src, dst, pred[, fill]). */
bool fly_op_copy(FlyTraceOp *o) {
  FlyTrace *t = o->t;
  MlirValue v[5] = {atom_value(o, o->args[0]), fly_trace_handle(t, o->args[1]),
                    fly_trace_handle(t, o->args[2])};
  if (o->n > 3)
    v[3] = fly_trace_handle(t, o->args[3]);
  if (o->n > 4)
    v[4] = fly_trace_value(t, o->args[4], o->args[1]->tensor.elem);
  for (int i = 0; i < o->n && i < 5; i++)
    if (mlirValueIsNull(v[i]))
      return fly_trace_error(t, o->at, "internal error: the operands of copy have no code");
  fly_mlir_op(t->m, t->ip, t->loc, o->n > 3 ? "fly.copy_if" : "fly.copy", 0, NULL,
              o->n < 5 ? o->n : 5, v, 0, NULL, 0, NULL);
  return true;
}

/* smem and rmem: a buffer of the result's layout (fly.alloc_smem, fly.alloc_reg);
   smem<T>(?), the tile the launch sizes, with its length as an operand. */
bool fly_op_alloc(FlyTraceOp *o, const char *name) {
  if (!fly_val_is_static(o->result->tensor.shape))
    return view_result(o, name, 0, NULL, 0, NULL);
  return tensor_result(o, name, 0, NULL, 0, NULL);
}

bool fly_op_smem_launch_size(FlyTraceOp *o) {
  FlyTrace *t = o->t;
  MlirNamedAttribute a = fly_mlir_named(
      t->m, "elem_bytes", mlirIntegerAttrGet(mlirIntegerTypeGet(t->m->ctx, 64), o->args[0]->i));
  return set_result(
      o, op1(o, "fly.smem_launch_size", mlirIntegerTypeGet(t->m->ctx, 32), 0, NULL, 1, &a));
}
