/* fly_trace_values.c — types, constants and the handles of values. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fly_strbuf.h"
#include "fly_trace_internal.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

bool fly_trace_error(FlyTrace *t, const FlyNode *at, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fly_error(&t->unit->diag, at ? fly_node_span(at) : fly_no_span(), "%s", msg);
  t->failed = true;
  return false;
}

MlirLocation fly_trace_loc(FlyTrace *t, const FlyNode *at) {
  if (!at || at->file < 0 || at->file >= t->unit->sources.count)
    return t->loc;
  uint32_t line, col;
  fly_source_line_col(&t->unit->sources, at->file, at->begin, &line, &col);
  const char *path = t->unit->sources.files[at->file].path;
  t->loc = mlirLocationFileLineColGet(t->m->ctx, mlirStringRefCreateFromCString(path), line, col);
  return t->loc;
}

static const char *scalar_name(FlyTypeCode c) {
  switch (c) {
  case FLY_TYPE_I1:
    return "i1";
  case FLY_TYPE_I8:
    return "i8";
  case FLY_TYPE_I16:
    return "i16";
  case FLY_TYPE_I32:
    return "i32";
  case FLY_TYPE_I64:
    return "i64";
  case FLY_TYPE_INDEX:
    return "index";
  case FLY_TYPE_F16:
    return "f16";
  case FLY_TYPE_BF16:
    return "bf16";
  case FLY_TYPE_F32:
    return "f32";
  case FLY_TYPE_F64:
    return "f64";
  case FLY_TYPE_F8E4M3:
    return "f8E4M3FN";
  case FLY_TYPE_F8E5M2:
    return "f8E5M2";
  case FLY_TYPE_F8E4M3FNUZ:
    return "f8E4M3FNUZ";
  case FLY_TYPE_F8E5M2FNUZ:
    return "f8E5M2FNUZ";
  default:
    return NULL;
  }
}

void fly_trace_put_type(FlyStrBuf *sb, const FlyType *ty) {
  if (ty->kind == FLY_TY_VEC) {
    fly_sb_puts(sb, "vector<");
    fly_sb_int(sb, ty->n);
    fly_sb_putc(sb, 'x');
    fly_trace_put_type(sb, ty->elem);
    fly_sb_putc(sb, '>');
  } else {
    const char *s = ty->kind == FLY_TY_SCALAR ? scalar_name(ty->code) : NULL;
    fly_sb_puts(sb, s ? s : "none");
  }
}

char *fly_trace_tuple_text(FlyTrace *t, const FlyVal *v) {
  return fly_tuple_str(&t->A, fly_val_pattern(&t->A, v));
}

char *fly_trace_layout_text(FlyTrace *t, const FlyVal *shape, const FlyVal *stride) {
  FlyStrBuf sb;
  fly_sb_init(&sb, &t->A);
  fly_sb_puts(&sb, fly_trace_tuple_text(t, shape));
  fly_sb_putc(&sb, ':');
  fly_sb_puts(&sb, fly_trace_tuple_text(t, stride));
  return fly_sb_finish(&sb);
}

static const char *space_name(FlySpace s) {
  return s == FLY_SPACE_SHARED ? "shared" : s == FLY_SPACE_REGISTER ? "register" : "global";
}

MlirType fly_trace_tensor_type(FlyTrace *t, const FlyVal *tensor) {
  const FlyTensor *x = &tensor->tensor;
  FlyStrBuf sb;
  fly_sb_init(&sb, &t->A);
  fly_sb_puts(&sb, "!fly.memref<");
  fly_trace_put_type(&sb, x->elem);
  fly_sb_puts(&sb, ", \"");
  fly_sb_puts(&sb, space_name(x->space));
  fly_sb_puts(&sb, "\", \"");
  if (x->swizzled) {
    fly_sb_puts(&sb, fly_swizzle_str(&t->A, x->swizzle));
    fly_sb_puts(&sb, " o ");
  }
  fly_sb_puts(&sb, fly_trace_layout_text(t, x->shape, x->stride));
  fly_sb_puts(&sb, "\">");
  char *s = fly_sb_finish(&sb);
  return fly_mlir_type(t->m, s ? s : "none");
}

MlirType fly_trace_type(FlyTrace *t, const FlyType *ty) {
  FlyStrBuf sb;
  fly_sb_init(&sb, &t->A);
  fly_trace_put_type(&sb, ty);
  char *s = fly_sb_finish(&sb);
  return fly_mlir_type(t->m, s ? s : "none");
}

static const FlyType *scalar_of(const FlyType *ty) {
  return ty->kind == FLY_TY_VEC ? ty->elem : ty;
}

MlirValue fly_trace_constant(FlyTrace *t, const FlyType *ty, double f, int64_t i) {
  MlirType mt = fly_trace_type(t, ty);
  MlirType et = fly_trace_type(t, scalar_of(ty));
  MlirAttribute a;
  bool is_float = fly_type_is_float(scalar_of(ty));
  if (is_float)
    a = mlirFloatAttrDoubleGet(t->m->ctx, et, f);
  else
    a = mlirIntegerAttrGet(et, i);
  if (ty->kind == FLY_TY_VEC)
    a = mlirDenseElementsAttrSplatGet(mt, a);
  MlirNamedAttribute value = fly_mlir_named(t->m, "value", a);
  return fly_mlir_op1(t->m, t->ip, t->loc, "arith.constant", mt, 0, NULL, 1, &value);
}

MlirValue fly_trace_i32(FlyTrace *t, int64_t i) {
  return fly_trace_constant(t, fly_type_scalar(FLY_TYPE_I32), 0, i);
}

void fly_trace_note_leaves(FlyTrace *t, const FlyVal *tensor, MlirValue memref) {
  const FlyVal *parts[2] = {tensor->tensor.shape, tensor->tensor.stride};
  for (int p = 0; p < 2; p++) {
    const FlyVal *leaves[FLY_MAX_MODES * 2];
    int n = fly_trace_runtime_leaves(parts[p], leaves, FLY_MAX_MODES * 2);
    /* fly.get_leaf numbers the `?` leaves of the part in order. */
    for (int i = 0; i < n; i++) {
      if (leaves[i]->ssa)
        continue;
      if (t->nleaves == t->cap) {
        int cap = t->cap ? t->cap * 2 : 64;
        FlyLeafRef *r = fly_alloc(&t->A, sizeof *r * (size_t)cap);
        if (!r)
          return;
        if (t->nleaves)
          memcpy(r, t->leaves, sizeof *r * (size_t)t->nleaves);
        t->leaves = r;
        t->cap = cap;
      }
      FlyLeafRef ref = {leaves[i], memref, p, i};
      t->leaves[t->nleaves++] = ref;
    }
  }
}

int fly_trace_runtime_leaves(const FlyVal *v, const FlyVal **out, int cap) {
  if (v->kind == FLY_V_TUPLE) {
    int n = 0;
    for (int i = 0; i < v->n && n < cap; i++)
      n += fly_trace_runtime_leaves(v->elems[i], out + n, cap - n);
    return n;
  }
  if (v->kind == FLY_V_RUNTIME && cap > 0) {
    out[0] = v;
    return 1;
  }
  return 0;
}

MlirValue fly_trace_get_leaf(FlyTrace *t, MlirValue src, const char *part, int index) {
  MlirNamedAttribute attrs[2] = {
      fly_mlir_named(t->m, "part", fly_mlir_str_attr(t->m, part)),
      fly_mlir_named(t->m, "index", mlirIntegerAttrGet(mlirIntegerTypeGet(t->m->ctx, 32), index)),
  };
  return fly_mlir_op1(t->m, t->ip, t->loc, "fly.get_leaf", mlirIntegerTypeGet(t->m->ctx, 32), 1,
                      &src, 2, attrs);
}

static MlirValue leaf_value(FlyTrace *t, const FlyVal *v) {
  for (int i = t->nleaves - 1; i >= 0; i--) {
    FlyLeafRef *r = &t->leaves[i];
    if (r->leaf == v)
      return fly_trace_get_leaf(t, r->memref, r->part ? "stride" : "shape", r->index);
  }
  MlirValue none = {NULL};
  return none;
}

MlirValue fly_trace_handle(FlyTrace *t, const FlyVal *v) {
  MlirValue h = {v ? v->ssa : NULL};
  if (!mlirValueIsNull(h) || !v || v->kind != FLY_V_RUNTIME)
    return h;
  return leaf_value(t, v);
}

MlirValue fly_trace_value(FlyTrace *t, const FlyVal *v, const FlyType *ty) {
  MlirValue none = {NULL};
  if (!v)
    return none;
  if (v->kind == FLY_V_RUNTIME || v->kind == FLY_V_TENSOR) {
    MlirValue h = fly_trace_handle(t, v);
    if (mlirValueIsNull(h))
      fly_trace_error(t, NULL, "internal error: a runtime value has no code (%s)",
                      fly_val_describe(&t->A, v));
    /* A scalar where a vector is expected is broadcast. */
    if (!mlirValueIsNull(h) && ty && ty->kind == FLY_TY_VEC && v->kind == FLY_V_RUNTIME &&
        v->type->kind != FLY_TY_VEC)
      return fly_mlir_op1(t->m, t->ip, t->loc, "vector.broadcast", fly_trace_type(t, ty), 1, &h, 0,
                          NULL);
    return h;
  }
  if (!ty)
    ty = fly_default_runtime_type(v);
  switch (v->kind) {
  case FLY_V_INT:
  case FLY_V_BOOL:
    return fly_trace_constant(t, ty, (double)v->i, v->i);
  case FLY_V_FLOAT:
    /* A float constant is only ever a float operand; its integer part is
       taken only where it exists (F32_LOWEST has none in 64 bits). */
    return fly_trace_constant(t, ty, v->f, v->f > -9.2e18 && v->f < 9.2e18 ? (int64_t)v->f : 0);
  default:
    fly_trace_error(t, NULL, "internal error: %s has no runtime form", fly_val_describe(&t->A, v));
    return none;
  }
}
