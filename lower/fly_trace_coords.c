/* fly_trace_coords.c — coordinates known only at run time: integer tuples
 * with runtime leaves, static layouts as values, fly.crd2idx and
 * fly.idx2crd. Their arithmetic is left to the layout lowering. */
#include <string.h>

#include "fly_layout.h"
#include "fly_strbuf.h"
#include "fly_trace_internal.h"
#include "mlir-c/BuiltinAttributes.h"

/* The type `!fly.KIND<"TEXT">`. */
static MlirType text_type(FlyTrace *t, const char *kind, const char *text) {
  FlyStrBuf sb;
  fly_sb_init(&sb, &t->A);
  fly_sb_puts(&sb, "!fly.");
  fly_sb_puts(&sb, kind);
  fly_sb_puts(&sb, "<\"");
  fly_sb_puts(&sb, text);
  fly_sb_puts(&sb, "\">");
  char *type = fly_sb_finish(&sb);
  return type ? fly_mlir_type(t->m, type) : (MlirType){NULL};
}

static MlirValue tuple_op(FlyTrace *t, const char *text, int n, const MlirValue *dyn) {
  MlirType ty = text_type(t, "int_tuple", text);
  if (mlirTypeIsNull(ty))
    return (MlirValue){NULL};
  MlirNamedAttribute value = fly_mlir_named(t->m, "value", fly_mlir_str_attr(t->m, text));
  return fly_mlir_op1(t->m, t->ip, t->loc, "fly.make_int_tuple", ty, n, dyn, 1, &value);
}

/* fly.make_int_tuple of a tuple of integers and runtime values. */
static MlirValue int_tuple(FlyTrace *t, const FlyVal *v) {
  const FlyVal *leaves[FLY_MAX_MODES * 4];
  int n = fly_trace_runtime_leaves(v, leaves, FLY_MAX_MODES * 4);
  MlirValue dyn[FLY_MAX_MODES * 4];
  for (int i = 0; i < n; i++)
    if (mlirValueIsNull(dyn[i] = fly_trace_value(t, leaves[i], fly_type_scalar(FLY_TYPE_I32))))
      return dyn[i];
  char *text = fly_trace_tuple_text(t, v);
  return text ? tuple_op(t, text, n, dyn) : (MlirValue){NULL};
}

/* A static layout as a value: fly.make_layout of two constant tuples. */
static MlirValue layout_value(FlyTrace *t, const FlyLayout *L) {
  const char *shape = fly_tuple_str(&t->A, L->shape);
  const char *stride = fly_tuple_str(&t->A, L->stride);
  const char *text = fly_layout_str(&t->A, L);
  if (!shape || !stride || !text)
    return (MlirValue){NULL};
  MlirValue v[2] = {tuple_op(t, shape, 0, NULL), tuple_op(t, stride, 0, NULL)};
  if (mlirValueIsNull(v[0]) || mlirValueIsNull(v[1]))
    return (MlirValue){NULL};
  MlirType ty = text_type(t, "layout", text);
  if (mlirTypeIsNull(ty))
    return (MlirValue){NULL};
  return fly_mlir_op1(t->m, t->ip, t->loc, "fly.make_layout", ty, 2, v, 0, NULL);
}

bool fly_trace_crd2idx(FlyTrace *t, FlyVal *result, const FlyVal *const *args, const FlyNode *at) {
  MlirValue v[2] = {int_tuple(t, args[0]), layout_value(t, args[1]->layout)};
  if (mlirValueIsNull(v[0]) || mlirValueIsNull(v[1]))
    return fly_trace_error(t, at, "internal error: the operands of crd2idx could not be built");
  MlirValue r = fly_mlir_op1(t->m, t->ip, t->loc, "fly.crd2idx",
                             fly_trace_type(t, fly_type_scalar(FLY_TYPE_I32)), 2, v, 0, NULL);
  if (mlirValueIsNull(r))
    return fly_trace_error(t, at, "internal error: crd2idx could not be built");
  result->ssa = r.ptr;
  return true;
}

/* Gives each runtime leaf of the coordinate its fly.get_leaf, in order. */
static bool bind_leaves(FlyTrace *t, MlirValue tuple, FlyVal *const *leaves, int n) {
  for (int i = 0; i < n; i++) {
    MlirValue r = fly_trace_get_leaf(t, tuple, "value", i);
    if (mlirValueIsNull(r))
      return false;
    leaves[i]->ssa = r.ptr;
  }
  return true;
}

bool fly_trace_idx2crd(FlyTrace *t, FlyVal *result, const FlyVal *const *args, const FlyNode *at) {
  /* args[1] is the shape's column-major layout (fly_builtins_algebra.c). */
  const FlyLayout *L = args[1]->layout;
  MlirValue v[2] = {fly_trace_value(t, args[0], fly_type_scalar(FLY_TYPE_I32)), layout_value(t, L)};
  if (mlirValueIsNull(v[0]) || mlirValueIsNull(v[1]))
    return fly_trace_error(t, at, "internal error: the operands of idx2crd could not be built");
  char *text = fly_trace_tuple_text(t, result);
  MlirType ty = text ? text_type(t, "int_tuple", text) : (MlirType){NULL};
  MlirValue r = mlirTypeIsNull(ty)
                    ? (MlirValue){NULL}
                    : fly_mlir_op1(t->m, t->ip, t->loc, "fly.idx2crd", ty, 2, v, 0, NULL);
  const FlyVal *leaves[FLY_MAX_MODES * 4];
  int n = fly_trace_runtime_leaves(result, leaves, FLY_MAX_MODES * 4);
  if (mlirValueIsNull(r) || !bind_leaves(t, r, (FlyVal *const *)leaves, n))
    return fly_trace_error(t, at, "internal error: idx2crd could not be built");
  result->ssa = r.ptr;
  return true;
}
