/* fly_trace_ops.c — the operations: arithmetic, GPU, math, tensors, atoms.
 *
 * The interpreter names each runtime operation (fly_emit.h) and passes its
 * own values; here each name becomes MLIR. Numbers use arith, math and
 * vector; GPU indices, barriers and printf use gpu; tensors, atoms,
 * atomics and the layout algebra on runtime values use the Fly dialect
 * (atomics: their scope and order as attributes, which only the target pass
 * can turn into a vendor's syncscope). The warp operations, each vendor's
 * own, are fly_trace_warp.c. */
#include <stdlib.h>
#include <string.h>

#include "fly_atom.h"
#include "fly_layout_tv.h"
#include "fly_memory_order.h"
#include "fly_strbuf.h"
#include "fly_trace_internal.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

typedef struct Op {
  FlyTrace *t;
  FlyVal *result;
  int n;
  const FlyVal *const *args;
  const FlyNode *at;
} Op;

static const FlyType *scalar_of(const FlyType *ty) {
  return ty->kind == FLY_TY_VEC ? ty->elem : ty;
}

static MlirValue op1(Op *o, const char *name, MlirType res, int n, const MlirValue *v, int nattr,
                     const MlirNamedAttribute *attr) {
  return fly_mlir_op1(o->t->m, o->t->ip, o->t->loc, name, res, n, v, nattr, attr);
}

static bool set_result(Op *o, MlirValue v) {
  if (mlirValueIsNull(v))
    return fly_trace_error(o->t, o->at, "internal error: this operation could not be built");
  o->result->ssa = v.ptr;
  return true;
}

static MlirNamedAttribute int_attr(FlyTrace *t, const char *name, int64_t v) {
  return fly_mlir_named(t->m, name, mlirIntegerAttrGet(mlirIntegerTypeGet(t->m->ctx, 64), v));
}

static MlirNamedAttribute parsed_attr(FlyTrace *t, const char *name, const char *text) {
  return fly_mlir_named(t->m, name,
                        mlirAttributeParseGet(t->m->ctx, mlirStringRefCreateFromCString(text)));
}

/* The type both operands of a binary operator take: the runtime one's. */
static const FlyType *operand_type(const FlyVal *a, const FlyVal *b, const FlyType *result) {
  const FlyType *ta = a->kind == FLY_V_RUNTIME ? a->type : NULL;
  const FlyType *tb = b->kind == FLY_V_RUNTIME ? b->type : NULL;
  if (ta && tb)
    return ta->kind == FLY_TY_VEC ? ta : tb;
  if (ta || tb)
    return ta ? ta : tb;
  return result;
}

/* ---- arithmetic ---------------------------------------------------------------------------- */

/* arith's predicate for a comparison opcode, or -1. */
static int cmp_predicate(FlyOpcode op, bool is_float) {
  /* eq ne slt sle sgt sge; oeq une olt ole ogt oge */
  static const struct {
    FlyOpcode op;
    int ipred, fpred;
  } table[] = {{FLY_OPCODE_EQ, 0, 1}, {FLY_OPCODE_NE, 1, 13}, {FLY_OPCODE_LT, 2, 4},
               {FLY_OPCODE_LE, 3, 5}, {FLY_OPCODE_GT, 4, 2},  {FLY_OPCODE_GE, 5, 3}};
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (table[i].op == op)
      return is_float ? table[i].fpred : table[i].ipred;
  return -1;
}

static bool binary(Op *o, FlyOpcode op) {
  FlyTrace *t = o->t;
  const FlyVal *a = o->args[0], *b = o->args[1];
  const FlyType *ty = operand_type(a, b, o->result->type);
  bool fl = fly_type_is_float(scalar_of(ty));
  MlirValue v[2] = {fly_trace_value(t, a, ty), fly_trace_value(t, b, ty)};
  if (mlirValueIsNull(v[0]) || mlirValueIsNull(v[1]))
    return false;
  MlirType rt = fly_trace_type(t, o->result->type);
  int pred = cmp_predicate(op, fl);
  if (pred >= 0) {
    MlirNamedAttribute p = int_attr(t, "predicate", pred);
    return set_result(o, op1(o, fl ? "arith.cmpf" : "arith.cmpi", rt, 2, v, 1, &p));
  }
  static const struct {
    FlyOpcode op;
    const char *i, *f;
  } table[] = {
      {FLY_OPCODE_ADD, "arith.addi", "arith.addf"},  {FLY_OPCODE_SUB, "arith.subi", "arith.subf"},
      {FLY_OPCODE_MUL, "arith.muli", "arith.mulf"},  {FLY_OPCODE_DIV, "arith.divsi", "arith.divf"},
      {FLY_OPCODE_MOD, "arith.remsi", "arith.remf"}, {FLY_OPCODE_SHL, "arith.shli", NULL},
      {FLY_OPCODE_SHR, "arith.shrsi", NULL},         {FLY_OPCODE_BITAND, "arith.andi", NULL},
      {FLY_OPCODE_BITOR, "arith.ori", NULL},         {FLY_OPCODE_BITXOR, "arith.xori", NULL},
      {FLY_OPCODE_AND, "arith.andi", NULL},          {FLY_OPCODE_OR, "arith.ori", NULL},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (table[i].op == op) {
      const char *name = fl ? table[i].f : table[i].i;
      if (!name)
        break;
      return set_result(o, op1(o, name, rt, 2, v, 0, NULL));
    }
  return fly_trace_error(t, o->at, "internal error: no code for the operator '%s'",
                         fly_opcode_name(op));
}

static bool unary(Op *o, FlyOpcode op) {
  FlyTrace *t = o->t;
  const FlyType *ty = o->result->type;
  MlirValue x = fly_trace_value(t, o->args[0], ty);
  if (mlirValueIsNull(x))
    return false;
  MlirType rt = fly_trace_type(t, ty);
  if (op == FLY_OPCODE_NEG && fly_type_is_float(scalar_of(ty)))
    return set_result(o, op1(o, "arith.negf", rt, 1, &x, 0, NULL));
  if (op == FLY_OPCODE_NEG) {
    MlirValue v[2] = {fly_trace_constant(t, ty, 0, 0), x};
    return set_result(o, op1(o, "arith.subi", rt, 2, v, 0, NULL));
  }
  /* ! and ~ flip every bit: xor with all ones (true for i1). */
  MlirValue v[2] = {x, fly_trace_constant(t, ty, 0, -1)};
  return set_result(o, op1(o, "arith.xori", rt, 2, v, 0, NULL));
}

static bool vec(Op *o) {
  FlyTrace *t = o->t;
  const FlyType *ty = o->result->type;
  MlirType rt = fly_trace_type(t, ty);
  MlirValue v[4096];
  if (o->n > 4096)
    return fly_trace_error(t, o->at, "a vector of more than 4096 elements");
  for (int i = 0; i < o->n; i++)
    if (mlirValueIsNull(v[i] = fly_trace_value(t, o->args[i], ty->elem)))
      return false;
  if (o->n == 1)
    return set_result(o, op1(o, "vector.broadcast", rt, 1, v, 0, NULL));
  return set_result(o, op1(o, "vector.from_elements", rt, o->n, v, 0, NULL));
}

/* ---- vectors --------------------------------------------------------------------------------- */

/* Up to this many elements, a runtime index selects among the elements
   (v[i]: a chain of N - 1 compares and selects; insert: one compare of a
   vector and one select), which stays in registers. NVPTX lowers a dynamic
   extractelement or insertelement through a stack slot in local memory
   (the whole vector stored, one element loaded, or the reverse); AMD's
   back end selects too, or indexes the registers when the index is the
   same in every lane. Beyond the bound, the dynamic operations are left to
   the back ends: the chain grows with N, the stack slot's round trip does
   not. 16 bounds the chain's length; it is a choice, not a measurement. */
enum { SELECT_CHAIN_MAX = 16 };

/* vector.extract and vector.insert name their position in an attribute;
   a dynamic one is INT64_MIN there, with the index as an operand. */
static MlirNamedAttribute position(FlyTrace *t, int64_t k) {
  return fly_mlir_named(t->m, "static_position", mlirDenseI64ArrayGet(t->m->ctx, 1, &k));
}

static MlirValue extract_at(Op *o, MlirValue v, MlirType elem, int64_t k) {
  MlirNamedAttribute p = position(o->t, k);
  return op1(o, "vector.extract", elem, 1, &v, 1, &p);
}

/* A runtime index as an `index`, for a dynamic position. */
static MlirValue as_index(Op *o, const FlyVal *i) {
  MlirValue v = fly_trace_value(o->t, i, NULL);
  if (i->type->code == FLY_TYPE_INDEX || mlirValueIsNull(v))
    return v;
  return op1(o, "arith.index_cast", mlirIndexTypeGet(o->t->m->ctx), 1, &v, 0, NULL);
}

/* i == k, for a runtime integer index i. */
static MlirValue index_is(Op *o, MlirValue i, const FlyType *ity, int64_t k) {
  MlirValue v[2] = {i, fly_trace_constant(o->t, ity, 0, k)};
  MlirNamedAttribute eq = int_attr(o->t, "predicate", 0);
  return op1(o, "arith.cmpi", mlirIntegerTypeGet(o->t->m->ctx, 1), 2, v, 1, &eq);
}

/* v[i]: an element at a static position, or at a runtime one by a select
   chain (r = v[0], then r = i == k ? v[k] : r for each k). */
static bool extract(Op *o) {
  FlyTrace *t = o->t;
  const FlyVal *i = o->args[1];
  int n = o->args[0]->type->n;
  MlirValue v = fly_trace_value(t, o->args[0], NULL);
  MlirType elem = fly_trace_type(t, o->result->type);
  if (mlirValueIsNull(v))
    return false;
  if (i->kind == FLY_V_INT)
    return set_result(o, extract_at(o, v, elem, i->i));
  if (n > SELECT_CHAIN_MAX) {
    MlirValue vi[2] = {v, as_index(o, i)};
    MlirNamedAttribute p = position(t, INT64_MIN);
    return set_result(o, op1(o, "vector.extract", elem, 2, vi, 1, &p));
  }
  MlirValue idx = fly_trace_value(t, i, NULL), r = extract_at(o, v, elem, 0);
  for (int k = 1; k < n && !mlirValueIsNull(idx); k++) {
    MlirValue s[3] = {index_is(o, idx, i->type, k), extract_at(o, v, elem, k), r};
    r = op1(o, "arith.select", elem, 3, s, 0, NULL);
  }
  return set_result(o, r);
}

/* The vector (0, 1, ..., n - 1) of an integer type. */
static MlirValue iota(Op *o, const FlyType *ity, int n) {
  FlyTrace *t = o->t;
  MlirType vt = fly_trace_type(t, fly_type_vec(&t->A, n, ity));
  MlirType et = fly_trace_type(t, ity);
  MlirAttribute *e = fly_alloc(&t->A, sizeof *e * (size_t)n);
  if (!e)
    return (MlirValue){NULL};
  for (int k = 0; k < n; k++)
    e[k] = mlirIntegerAttrGet(et, k);
  MlirNamedAttribute value = fly_mlir_named(t->m, "value", mlirDenseElementsAttrGet(vt, n, e));
  return op1(o, "arith.constant", vt, 0, NULL, 1, &value);
}

/* v.insert(i, x): at a static position, or at a runtime one by a select
   of the vector (i, i, ...) == (0, 1, ...) between x splatted and v. */
static bool insert(Op *o) {
  FlyTrace *t = o->t;
  const FlyVal *i = o->args[1];
  const FlyType *vty = o->result->type;
  MlirType vt = fly_trace_type(t, vty);
  MlirValue v = fly_trace_value(t, o->args[0], NULL);
  MlirValue x = fly_trace_value(t, o->args[2], vty->elem);
  if (mlirValueIsNull(v) || mlirValueIsNull(x))
    return false;
  if (i->kind == FLY_V_INT) {
    MlirValue xv[2] = {x, v};
    MlirNamedAttribute p = position(t, i->i);
    return set_result(o, op1(o, "vector.insert", vt, 2, xv, 1, &p));
  }
  if (vty->n > SELECT_CHAIN_MAX) {
    MlirValue xvi[3] = {x, v, as_index(o, i)};
    MlirNamedAttribute p = position(t, INT64_MIN);
    return set_result(o, op1(o, "vector.insert", vt, 3, xvi, 1, &p));
  }
  const FlyType *ivty = fly_type_vec(&t->A, vty->n, i->type);
  MlirValue c[2] = {fly_trace_value(t, i, ivty), iota(o, i->type, vty->n)};
  if (mlirValueIsNull(c[0]) || mlirValueIsNull(c[1]))
    return false;
  MlirNamedAttribute eq = int_attr(t, "predicate", 0);
  MlirType mask = fly_trace_type(t, fly_type_vec(&t->A, vty->n, fly_type_scalar(FLY_TYPE_I1)));
  MlirValue s[3] = {op1(o, "arith.cmpi", mask, 2, c, 1, &eq),
                    op1(o, "vector.broadcast", vt, 1, &x, 0, NULL), v};
  return set_result(o, op1(o, "arith.select", vt, 3, s, 0, NULL));
}

/* sum(v), min(v), max(v): one vector.reduction, in element order (no
   reassociation for floats). A float sum starts from -0.0, the identity of
   addition (+0.0 would cost an add and turn a sum of -0.0 into +0.0).
   maxnumf and minnumf ignore a NaN element unless every element is one, as
   max(a, b) does. */
static bool reduction(Op *o, FlyOpcode op) {
  FlyTrace *t = o->t;
  const FlyType *ty = o->result->type;
  bool fl = fly_type_is_float(ty);
  const char *kind = op == FLY_OPCODE_SUM ? "#vector.kind<add>"
                     : op == FLY_OPCODE_MAX
                         ? (fl ? "#vector.kind<maxnumf>" : "#vector.kind<maxsi>")
                         : (fl ? "#vector.kind<minnumf>" : "#vector.kind<minsi>");
  MlirValue v[2] = {fly_trace_value(t, o->args[0], NULL)};
  if (mlirValueIsNull(v[0]))
    return false;
  bool acc = fl && op == FLY_OPCODE_SUM;
  if (acc)
    v[1] = fly_trace_constant(t, ty, -0.0, 0);
  MlirNamedAttribute k = parsed_attr(t, "kind", kind);
  return set_result(o, op1(o, "vector.reduction", fly_trace_type(t, ty), acc ? 2 : 1, v, 1, &k));
}

/* bitcast(x, T): arith.bitcast where the shapes agree, vector.bitcast
   between vecs of other lengths; a scalar goes through a vector of one
   element. */
static bool bitcast(Op *o) {
  FlyTrace *t = o->t;
  const FlyVal *x = o->args[0];
  const FlyType *from = x->type, *to = o->result->type;
  MlirValue v = fly_trace_value(t, x, from);
  if (mlirValueIsNull(v))
    return false;
  bool vfrom = from->kind == FLY_TY_VEC, vto = to->kind == FLY_TY_VEC;
  if (vfrom == vto && (!vfrom || from->n == to->n))
    return set_result(o, op1(o, "arith.bitcast", fly_trace_type(t, to), 1, &v, 0, NULL));
  if (!vfrom)
    v = op1(o, "vector.from_elements", fly_trace_type(t, fly_type_vec(&t->A, 1, from)), 1, &v, 0,
            NULL);
  const FlyType *vec_to = vto ? to : fly_type_vec(&t->A, 1, to);
  v = op1(o, "vector.bitcast", fly_trace_type(t, vec_to), 1, &v, 0, NULL);
  return set_result(o, vto ? v : extract_at(o, v, fly_trace_type(t, to), 0));
}

/* where(c, a, b): arith.select, element by element for a mask; scalar
   values are splatted to the result's vec. */
static bool where(Op *o) {
  FlyTrace *t = o->t;
  const FlyType *ty = o->result->type;
  MlirValue v[3] = {fly_trace_value(t, o->args[0], NULL), fly_trace_value(t, o->args[1], ty),
                    fly_trace_value(t, o->args[2], ty)};
  for (int k = 0; k < 3; k++)
    if (mlirValueIsNull(v[k]))
      return false;
  return set_result(o, op1(o, "arith.select", fly_trace_type(t, ty), 3, v, 0, NULL));
}

/* ---- GPU ----------------------------------------------------------------------------------- */

/* thread_idx, block_idx, block_dim and grid_dim (their argument is the
   dimension, 0 to 2) and lane. */
static bool gpu_index(Op *o, FlyOpcode op) {
  FlyTrace *t = o->t;
  MlirType index = mlirIndexTypeGet(t->m->ctx);
  MlirValue id;
  if (op == FLY_OPCODE_LANE) {
    id = op1(o, "gpu.lane_id", index, 0, NULL, 0, NULL);
  } else {
    const char *name = op == FLY_OPCODE_THREAD_IDX  ? "gpu.thread_id"
                       : op == FLY_OPCODE_BLOCK_IDX ? "gpu.block_id"
                       : op == FLY_OPCODE_BLOCK_DIM ? "gpu.block_dim"
                                                    : "gpu.grid_dim";
    char dim[32];
    snprintf(dim, sizeof dim, "#gpu<dim %c>", (char)('x' + o->args[0]->i));
    MlirNamedAttribute a = parsed_attr(t, "dimension", dim);
    id = op1(o, name, index, 0, NULL, 1, &a);
  }
  return set_result(o,
                    op1(o, "arith.index_cast", mlirIntegerTypeGet(t->m->ctx, 32), 1, &id, 0, NULL));
}

/* ---- math ---------------------------------------------------------------------------------- */

static bool math(Op *o, FlyOpcode op) {
  FlyTrace *t = o->t;
  const FlyType *ty = o->result->type;
  bool fl = fly_type_is_float(scalar_of(ty));
  static const struct {
    FlyOpcode op;
    const char *f, *i;
  } table[] = {
      {FLY_OPCODE_EXP, "math.exp", NULL},
      {FLY_OPCODE_EXP2, "math.exp2", NULL},
      {FLY_OPCODE_LOG, "math.log", NULL},
      {FLY_OPCODE_LOG2, "math.log2", NULL},
      {FLY_OPCODE_SQRT, "math.sqrt", NULL},
      {FLY_OPCODE_RSQRT, "math.rsqrt", NULL},
      {FLY_OPCODE_ABS, "math.absf", "math.absi"},
      {FLY_OPCODE_FMA, "math.fma", NULL},
      {FLY_OPCODE_MAX, "arith.maxnumf", "arith.maxsi"},
      {FLY_OPCODE_MIN, "arith.minnumf", "arith.minsi"},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    if (table[i].op != op)
      continue;
    const char *name = fl ? table[i].f : table[i].i;
    if (!name)
      break;
    MlirValue v[3];
    for (int k = 0; k < o->n && k < 3; k++)
      if (mlirValueIsNull(v[k] = fly_trace_value(t, o->args[k], ty)))
        return false;
    return set_result(o, op1(o, name, fly_trace_type(t, ty), o->n, v, 0, NULL));
  }
  return fly_trace_error(t, o->at, "internal error: no code for '%s' of %s", fly_opcode_name(op),
                         fly_type_str(&t->A, ty));
}

/* An LLVM intrinsic of one float (a scalar or a vector): the instruction
   both back ends select, where the math dialect would call a device
   library. */
static bool intrinsic(Op *o, const char *name) {
  FlyTrace *t = o->t;
  const FlyType *ty = o->result->type;
  MlirValue x = fly_trace_value(t, o->args[0], ty);
  if (mlirValueIsNull(x))
    return false;
  return set_result(o, fly_mlir_intrinsic(t->m, t->ip, t->loc, name, fly_trace_type(t, ty), 1, &x));
}

/* clamp(x, lo, hi) as max, then min: for floats the NaN-propagating
   llvm.maximum and llvm.minimum (max.NaN.f32 on NVIDIA; on AMD v_max_f32
   with a NaN select, or v_maximum3_f32 on gfx950), for integers arith's
   signed max and min. */
static bool clamp(Op *o) {
  FlyTrace *t = o->t;
  const FlyType *ty = o->result->type;
  MlirValue v[3];
  for (int k = 0; k < 3; k++)
    if (mlirValueIsNull(v[k] = fly_trace_value(t, o->args[k], ty)))
      return false;
  MlirType rt = fly_trace_type(t, ty);
  bool fl = fly_type_is_float(scalar_of(ty));
  MlirValue at_least[2] = {v[0], v[1]};
  MlirValue m = fl ? fly_mlir_intrinsic(t->m, t->ip, t->loc, "llvm.maximum", rt, 2, at_least)
                   : op1(o, "arith.maxsi", rt, 2, at_least, 0, NULL);
  MlirValue at_most[2] = {m, v[2]};
  return set_result(o, fl ? fly_mlir_intrinsic(t->m, t->ip, t->loc, "llvm.minimum", rt, 2, at_most)
                          : op1(o, "arith.minsi", rt, 2, at_most, 0, NULL));
}

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
static bool size(Op *o) {
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
static bool tensor_result(Op *o, const char *name, int n, const MlirValue *v, int nattr,
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
static bool view_result(Op *o, const char *name, int n, const MlirValue *v, int nattr,
                        const MlirNamedAttribute *attr) {
  const FlyVal *leaves[256];
  int k = fly_trace_runtime_leaves(o->result->tensor.shape, leaves, 128);
  k += fly_trace_runtime_leaves(o->result->tensor.stride, leaves + k, 128);
  MlirValue all[4 + 256 + 2 * 128];
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

static bool slice(Op *o) {
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

static bool divide(Op *o, const char *name) {
  FlyTrace *t = o->t;
  MlirValue src = fly_trace_handle(t, o->args[0]);
  char *tiler = fly_val_str_canonical(&t->A, o->args[1]);
  MlirNamedAttribute a = fly_mlir_named(t->m, "tiler", fly_mlir_str_attr(t->m, tiler ? tiler : ""));
  return view_result(o, name, 1, &src, 1, &a);
}

/* ---- atoms ---------------------------------------------------------------------------------- */

/* The operation that makes a static atom or tiled atom: its parameters are
   attributes (the atom's name in the atom table, its widths, types and
   layouts), which the lowering reads. Null after an error. */
static MlirValue atom_value(Op *o, const FlyVal *v) {
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
  MlirNamedAttribute a[5];
  int n = 0;
  a[n++] = fly_mlir_named(t->m, "atom", fly_mlir_str_attr(t->m, at->atom->name));
  bool copy = ob->kind == FLY_OBJ_COPY_ATOM || ob->kind == FLY_OBJ_TILED_COPY;
  if (copy)
    a[n++] = int_attr(t, "bits", at->bits);
  a[n++] = fly_mlir_named(t->m, "elem", mlirTypeAttrGet(fly_trace_type(t, at->elem)));
  if (!copy)
    a[n++] = fly_mlir_named(t->m, "acc", mlirTypeAttrGet(fly_trace_type(t, at->acc)));
  if (ob->kind == FLY_OBJ_TILED_COPY) {
    a[n++] = fly_mlir_named(t->m, "tv", fly_mlir_str_attr(t->m, fly_layout_str(&t->A, ob->tv->tv)));
    a[n++] =
        fly_mlir_named(t->m, "tile", fly_mlir_str_attr(t->m, fly_tuple_str(&t->A, ob->tv->tile)));
  } else if (ob->kind == FLY_OBJ_TILED_MMA) {
    a[n++] =
        fly_mlir_named(t->m, "atoms", fly_mlir_str_attr(t->m, fly_layout_str(&t->A, ob->layout)));
  }
  return op1(o, make, fly_mlir_type(t->m, type), 0, NULL, n, a);
}

/* partition_S/D and partition_A/B/C and their fragments: (tiled, thread,
   tensor). A fragment is a new tensor, the others views. */
static bool partition(Op *o, const char *name, bool fragment) {
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

static bool gemm(Op *o) {
  FlyTrace *t = o->t;
  MlirValue v[4] = {atom_value(o, o->args[0])};
  for (int i = 1; i < 4; i++)
    v[i] = fly_trace_value(t, o->args[i], NULL);
  for (int i = 0; i < 4; i++)
    if (mlirValueIsNull(v[i]))
      return fly_trace_error(t, o->at, "internal error: the operands of gemm have no code");
  return set_result(o, op1(o, "fly.gemm", fly_trace_type(t, o->result->type), 4, v, 0, NULL));
}

static bool printf_op(Op *o) {
  FlyTrace *t = o->t;
  const FlyVal *fmt = o->args[0];
  /* Static strings are spliced into the format; numbers are arguments. */
  FlyStrBuf sb;
  fly_sb_init(&sb, &t->A);
  MlirValue v[64];
  int nv = 0, arg = 1;
  for (uint32_t i = 0; i < fmt->len; i++) {
    char c = fmt->s[i];
    if (c != '%' || (i + 1 < fmt->len && fmt->s[i + 1] == '%')) {
      fly_sb_putc(&sb, c);
      if (c == '%')
        fly_sb_putc(&sb, fmt->s[++i]);
      continue;
    }
    uint32_t j = i;
    while (j + 1 < fmt->len && strchr("-+ #0123456789.lhz", fmt->s[j + 1]))
      j++;
    const FlyVal *a = arg < o->n ? o->args[arg++] : NULL;
    if (a && a->kind == FLY_V_STR) {
      for (uint32_t k = 0; k < a->len; k++) {
        if (a->s[k] == '%')
          fly_sb_putc(&sb, '%');
        fly_sb_putc(&sb, a->s[k]);
      }
    } else {
      for (uint32_t k = i; k <= j + 1; k++)
        fly_sb_putc(&sb, fmt->s[k]);
      if (a && nv < 64 && mlirValueIsNull(v[nv++] = fly_trace_value(t, a, NULL)))
        return false;
    }
    i = j + 1;
  }
  MlirNamedAttribute f =
      fly_mlir_named(t->m, "format", fly_mlir_str_attr(t->m, fly_sb_finish(&sb)));
  fly_mlir_op(t->m, t->ip, t->loc, "gpu.printf", 0, NULL, nv, v, 1, &f, 0, NULL);
  return true;
}

static bool store(Op *o) {
  FlyTrace *t = o->t;
  const FlyVal *dst = o->args[0], *x = o->args[1];
  MlirValue v[2] = {fly_trace_value(t, x, x->kind == FLY_V_RUNTIME ? NULL : dst->tensor.elem),
                    fly_trace_handle(t, dst)};
  if (mlirValueIsNull(v[0]) || mlirValueIsNull(v[1]))
    return false;
  fly_mlir_op(t->m, t->ip, t->loc, "fly.store", 0, NULL, 2, v, 0, NULL, 0, NULL);
  return true;
}

static bool copy(Op *o) {
  FlyTrace *t = o->t;
  MlirValue v[3] = {atom_value(o, o->args[0]), fly_trace_handle(t, o->args[1]),
                    fly_trace_handle(t, o->args[2])};
  for (int i = 0; i < 3; i++)
    if (mlirValueIsNull(v[i]))
      return fly_trace_error(t, o->at, "internal error: the operands of copy have no code");
  fly_mlir_op(t->m, t->ip, t->loc, "fly.copy", 0, NULL, 3, v, 0, NULL, 0, NULL);
  return true;
}

static bool load(Op *o) {
  FlyTrace *t = o->t;
  MlirValue src = fly_trace_handle(t, o->args[0]);
  return set_result(o, op1(o, "fly.load", fly_trace_type(t, o->result->type), 1, &src, 0, NULL));
}

/* ---- atomics and memory order (fly_memory_order.h) ------------------------------------------ */

/* The scope and order the semantic pass passes as static integers, from
   args[i] on, as the attributes `scope` and `order`. */
static void scope_order_attrs(Op *o, int i, MlirNamedAttribute *a) {
  FlyTrace *t = o->t;
  a[0] = fly_mlir_named(t->m, "scope",
                        fly_mlir_str_attr(t->m, fly_mem_scope_name((FlyMemScope)o->args[i]->i)));
  a[1] = fly_mlir_named(
      t->m, "order", fly_mlir_str_attr(t->m, fly_mem_order_name((FlyMemOrder)o->args[i + 1]->i)));
}

/* An operand of an atomic on a tensor's elements: a static number made a
   constant of the element type; a runtime one (a packed pair too) as it is. */
static MlirValue atomic_operand(Op *o, int i) {
  const FlyVal *x = o->args[i];
  return fly_trace_value(o->t, x, x->kind == FLY_V_RUNTIME ? NULL : o->args[0]->tensor.elem);
}

/* (t, x, scope, order) */
static bool atomic_rmw(Op *o, FlyAtomicOp kind) {
  FlyTrace *t = o->t;
  MlirValue v[2] = {fly_trace_handle(t, o->args[0]), atomic_operand(o, 1)};
  if (mlirValueIsNull(v[0]) || mlirValueIsNull(v[1]))
    return false;
  MlirNamedAttribute a[3] = {
      fly_mlir_named(t->m, "kind", fly_mlir_str_attr(t->m, fly_atomic_op_name(kind)))};
  scope_order_attrs(o, 2, a + 1);
  return set_result(o, op1(o, "fly.atomic_rmw", fly_trace_type(t, o->result->type), 2, v, 3, a));
}

/* (t, expected, desired, scope, order) */
static bool atomic_cas(Op *o) {
  FlyTrace *t = o->t;
  MlirValue v[3] = {fly_trace_handle(t, o->args[0]), atomic_operand(o, 1), atomic_operand(o, 2)};
  if (mlirValueIsNull(v[0]) || mlirValueIsNull(v[1]) || mlirValueIsNull(v[2]))
    return false;
  MlirNamedAttribute a[2];
  scope_order_attrs(o, 3, a);
  return set_result(o, op1(o, "fly.atomic_cas", fly_trace_type(t, o->result->type), 3, v, 2, a));
}

/* (scope, order) */
static bool fence(Op *o) {
  MlirNamedAttribute a[2];
  scope_order_attrs(o, 0, a);
  fly_mlir_op(o->t->m, o->t->ip, o->t->loc, "fly.fence", 0, NULL, 0, NULL, 2, a, 0, NULL);
  return true;
}

/* An element loaded atomically (t, scope, order) or as volatile (t). */
static bool ordered_load(Op *o, bool is_volatile) {
  FlyTrace *t = o->t;
  MlirValue src = fly_trace_handle(t, o->args[0]);
  if (mlirValueIsNull(src))
    return false;
  MlirNamedAttribute a[2];
  if (!is_volatile)
    scope_order_attrs(o, 1, a);
  const char *name = is_volatile ? "fly.volatile_load" : "fly.atomic_load";
  return set_result(
      o, op1(o, name, fly_trace_type(t, o->result->type), 1, &src, is_volatile ? 0 : 2, a));
}

/* An element stored atomically (t, x, scope, order) or as volatile (t, x). */
static bool ordered_store(Op *o, bool is_volatile) {
  FlyTrace *t = o->t;
  MlirValue v[2] = {atomic_operand(o, 1), fly_trace_handle(t, o->args[0])};
  if (mlirValueIsNull(v[0]) || mlirValueIsNull(v[1]))
    return false;
  MlirNamedAttribute a[2];
  if (!is_volatile)
    scope_order_attrs(o, 2, a);
  const char *name = is_volatile ? "fly.volatile_store" : "fly.atomic_store";
  fly_mlir_op(t->m, t->ip, t->loc, name, 0, NULL, 2, v, is_volatile ? 0 : 2, a, 0, NULL);
  return true;
}

/* ---- dispatch ---------------------------------------------------------------------------------
 */

/* Every opcode of fly_ops.def has its case: a new one fails the build
   here (-Wswitch) until it is given its code. */
static bool trace(Op *o, FlyOpcode op) {
  FlyTrace *t = o->t;
  switch (op) {
  case FLY_OPCODE_ADD:
  case FLY_OPCODE_SUB:
  case FLY_OPCODE_MUL:
  case FLY_OPCODE_DIV:
  case FLY_OPCODE_MOD:
  case FLY_OPCODE_SHL:
  case FLY_OPCODE_SHR:
  case FLY_OPCODE_BITAND:
  case FLY_OPCODE_BITOR:
  case FLY_OPCODE_BITXOR:
  case FLY_OPCODE_AND:
  case FLY_OPCODE_OR:
  case FLY_OPCODE_EQ:
  case FLY_OPCODE_NE:
  case FLY_OPCODE_LT:
  case FLY_OPCODE_LE:
  case FLY_OPCODE_GT:
  case FLY_OPCODE_GE:
    return binary(o, op);
  case FLY_OPCODE_NEG:
  case FLY_OPCODE_NOT:
  case FLY_OPCODE_BITNOT:
    return unary(o, op);
  case FLY_OPCODE_CONVERT:
    return set_result(o, fly_trace_convert(t, o->result->type, o->n, o->args));
  case FLY_OPCODE_VEC:
    return vec(o);
  case FLY_OPCODE_THREAD_IDX:
  case FLY_OPCODE_BLOCK_IDX:
  case FLY_OPCODE_BLOCK_DIM:
  case FLY_OPCODE_GRID_DIM:
  case FLY_OPCODE_LANE:
    return gpu_index(o, op);
  case FLY_OPCODE_SHUFFLE:
  case FLY_OPCODE_SHUFFLE_XOR:
  case FLY_OPCODE_SHUFFLE_UP:
  case FLY_OPCODE_SHUFFLE_DOWN:
    return set_result(o, fly_trace_shuffle(t, op, o->args[0], o->args[1], (int)o->args[2]->i));
  case FLY_OPCODE_VOTE_ANY:
  case FLY_OPCODE_VOTE_ALL:
  case FLY_OPCODE_BALLOT:
    return set_result(o, fly_trace_vote(t, op, o->args[0]));
  case FLY_OPCODE_SIZE:
    return size(o);
  case FLY_OPCODE_ZEROS_LIKE:
    return set_result(o, fly_trace_constant(t, o->result->type, 0, 0));
  case FLY_OPCODE_INDEX:
    return slice(o);
  case FLY_OPCODE_LOGICAL_DIVIDE:
    return divide(o, "fly.logical_divide");
  case FLY_OPCODE_ZIPPED_DIVIDE:
    return divide(o, "fly.zipped_divide");
  case FLY_OPCODE_TILED_DIVIDE:
    return divide(o, "fly.tiled_divide");
  case FLY_OPCODE_FLAT_DIVIDE:
    return divide(o, "fly.flat_divide");
  case FLY_OPCODE_SMEM:
    return tensor_result(o, "fly.alloc_smem", 0, NULL, 0, NULL);
  case FLY_OPCODE_RMEM:
    return tensor_result(o, "fly.alloc_reg", 0, NULL, 0, NULL);
  case FLY_OPCODE_PARTITION_S:
    return partition(o, "fly.partition_s", false);
  case FLY_OPCODE_PARTITION_D:
    return partition(o, "fly.partition_d", false);
  case FLY_OPCODE_PARTITION_A:
    return partition(o, "fly.partition_a", false);
  case FLY_OPCODE_PARTITION_B:
    return partition(o, "fly.partition_b", false);
  case FLY_OPCODE_PARTITION_C:
    return partition(o, "fly.partition_c", false);
  case FLY_OPCODE_PARTITION_FRAGMENT_A:
    return partition(o, "fly.partition_fragment_a", true);
  case FLY_OPCODE_PARTITION_FRAGMENT_B:
    return partition(o, "fly.partition_fragment_b", true);
  case FLY_OPCODE_PARTITION_FRAGMENT_C:
    return partition(o, "fly.partition_fragment_c", true);
  case FLY_OPCODE_LOAD:
    return load(o);
  case FLY_OPCODE_ATOMIC_ADD:
    return atomic_rmw(o, FLY_ATOMIC_ADD);
  case FLY_OPCODE_ATOMIC_MIN:
    return atomic_rmw(o, FLY_ATOMIC_MIN);
  case FLY_OPCODE_ATOMIC_MAX:
    return atomic_rmw(o, FLY_ATOMIC_MAX);
  case FLY_OPCODE_ATOMIC_UMIN:
    return atomic_rmw(o, FLY_ATOMIC_UMIN);
  case FLY_OPCODE_ATOMIC_UMAX:
    return atomic_rmw(o, FLY_ATOMIC_UMAX);
  case FLY_OPCODE_ATOMIC_AND:
    return atomic_rmw(o, FLY_ATOMIC_AND);
  case FLY_OPCODE_ATOMIC_OR:
    return atomic_rmw(o, FLY_ATOMIC_OR);
  case FLY_OPCODE_ATOMIC_XOR:
    return atomic_rmw(o, FLY_ATOMIC_XOR);
  case FLY_OPCODE_ATOMIC_EXCH:
    return atomic_rmw(o, FLY_ATOMIC_EXCH);
  case FLY_OPCODE_ATOMIC_CAS:
    return atomic_cas(o);
  case FLY_OPCODE_FENCE:
    return fence(o);
  case FLY_OPCODE_ATOMIC_LOAD:
    return ordered_load(o, false);
  case FLY_OPCODE_VOLATILE_LOAD:
    return ordered_load(o, true);
  case FLY_OPCODE_ATOMIC_STORE:
    return ordered_store(o, false);
  case FLY_OPCODE_VOLATILE_STORE:
    return ordered_store(o, true);
  case FLY_OPCODE_GEMM:
    return gemm(o);
  case FLY_OPCODE_CRD2IDX:
    return fly_trace_crd2idx(t, o->result, o->args, o->at);
  case FLY_OPCODE_IDX2CRD:
    return fly_trace_idx2crd(t, o->result, o->args, o->at);
  case FLY_OPCODE_EXP:
  case FLY_OPCODE_EXP2:
  case FLY_OPCODE_LOG:
  case FLY_OPCODE_LOG2:
  case FLY_OPCODE_SQRT:
  case FLY_OPCODE_RSQRT:
  case FLY_OPCODE_ABS:
  case FLY_OPCODE_FMA:
    return math(o, op);
  case FLY_OPCODE_MIN:
  case FLY_OPCODE_MAX:
    /* Of one vec, they reduce it. */
    return o->n == 1 ? reduction(o, op) : math(o, op);
  case FLY_OPCODE_SUM:
    return reduction(o, op);
  case FLY_OPCODE_EXTRACT:
    return extract(o);
  case FLY_OPCODE_INSERT:
    return insert(o);
  case FLY_OPCODE_BITCAST:
    return bitcast(o);
  case FLY_OPCODE_WHERE:
    return where(o);
  case FLY_OPCODE_CLAMP:
    return clamp(o);
  case FLY_OPCODE_FLOOR:
    return intrinsic(o, "llvm.floor");
  case FLY_OPCODE_CEIL:
    return intrinsic(o, "llvm.ceil");
  case FLY_OPCODE_TRUNC:
    return intrinsic(o, "llvm.trunc");
  case FLY_OPCODE_ROUND:
    return intrinsic(o, "llvm.round");
  case FLY_OPCODE_ROUNDEVEN:
    return intrinsic(o, "llvm.roundeven");
  case FLY_OPCODE_BARRIER:
    fly_mlir_op(t->m, t->ip, t->loc, "gpu.barrier", 0, NULL, 0, NULL, 0, NULL, 0, NULL);
    return true;
  case FLY_OPCODE_STORE:
    return store(o);
  case FLY_OPCODE_COPY:
    return copy(o);
  case FLY_OPCODE_PRINTF:
    return printf_op(o);
  case FLY_OPCODE_COUNT:
    break;
  }
  return fly_trace_error(t, o->at, "internal error: no code for '%s'", fly_opcode_name(op));
}

bool fly_trace_value_op(void *ctx, FlyVal *result, FlyOpcode op, int n, const FlyVal *const *args,
                        const FlyNode *at) {
  FlyTrace *t = ctx;
  if (at)
    fly_trace_loc(t, at);
  Op o = {t, result, n, args, at};
  return trace(&o, op);
}

bool fly_trace_effect_op(void *ctx, FlyOpcode op, int n, const FlyVal *const *args,
                         const FlyNode *at) {
  FlyTrace *t = ctx;
  if (at)
    fly_trace_loc(t, at);
  Op o = {t, NULL, n, args, at};
  return trace(&o, op);
}
