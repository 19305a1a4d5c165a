/* fly_trace_convert.c — conversions: `x as T` and convert(x, T, rounding,
 * saturate), both the CONVERT opcode (fly_builtins_convert.c says what each
 * means), between scalar types and element by element for vectors.
 *
 * Every pair of scalar types converts. Where arith has no single op the
 * value goes through f32 or i64: f16 <-> bf16, index <-> float, i1 <->
 * index, and an 8-bit float to or from anything but another float. Two
 * things are left to the target pass (convert-fly-to-nvvm/-rocdl): an
 * arith.truncf with a rounding mode other than to nearest, which becomes
 * the hardware's rounding, and arith.truncf and arith.extf of the 8-bit
 * floats, which become the fp8 instructions, rounding to nearest and
 * saturating (a NaN stays NaN). */
#include <math.h>

#include "fly_trace_internal.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

typedef struct Conv {
  FlyTrace *t;
  const FlyType *shape; /* x's type: the vector length every step keeps */
  FlyRounding rounding;
  bool saturate;
} Conv;

/* The scalar type `to`, as a vector when x is one. */
static const FlyType *like(Conv *c, const FlyType *to) {
  return c->shape->kind == FLY_TY_VEC ? fly_type_vec(&c->t->A, c->shape->n, to) : to;
}
static const FlyType *scalar(FlyTypeCode code) { return fly_type_scalar(code); }

/* One step of a conversion, to the scalar type `to` (attr: its attribute,
   when it has one). */
static MlirValue step(Conv *c, const char *name, const FlyType *to, MlirValue v,
                      const MlirNamedAttribute *attr) {
  FlyTrace *t = c->t;
  return fly_mlir_op1(t->m, t->ip, t->loc, name, fly_trace_type(t, like(c, to)), 1, &v,
                      attr ? 1 : 0, attr);
}
static MlirValue binary(Conv *c, const char *name, const FlyType *ty, MlirValue a, MlirValue b) {
  FlyTrace *t = c->t;
  MlirValue v[2] = {a, b};
  return fly_mlir_op1(t->m, t->ip, t->loc, name, fly_trace_type(t, like(c, ty)), 2, v, 0, NULL);
}
static MlirValue constant(Conv *c, const FlyType *ty, double f, int64_t i) {
  return fly_trace_constant(c->t, like(c, ty), f, i);
}
static MlirValue intrinsic(Conv *c, const char *name, const FlyType *ty, int n, MlirValue *v) {
  FlyTrace *t = c->t;
  return fly_mlir_intrinsic(t->m, t->ip, t->loc, name, fly_trace_type(t, like(c, ty)), n, v);
}
static MlirValue compare(Conv *c, int predicate, MlirValue a, MlirValue b, bool fl) {
  FlyTrace *t = c->t;
  MlirNamedAttribute p = fly_mlir_named(
      t->m, "predicate", mlirIntegerAttrGet(mlirIntegerTypeGet(t->m->ctx, 64), predicate));
  MlirValue v[2] = {a, b};
  return fly_mlir_op1(t->m, t->ip, t->loc, fl ? "arith.cmpf" : "arith.cmpi",
                      fly_trace_type(t, like(c, scalar(FLY_TYPE_I1))), 2, v, 1, &p);
}
static MlirValue pick(Conv *c, MlirValue cond, MlirValue a, MlirValue b) {
  FlyTrace *t = c->t;
  MlirValue v[3] = {cond, a, b};
  return fly_mlir_op1(t->m, t->ip, t->loc, "arith.select", mlirValueGetType(a), 3, v, 0, NULL);
}

/* ---- floats ------------------------------------------------------------------------------ */

/* v (of float type ty) limited to ±hi with the NaN-propagating maximum and
   minimum: an infinity becomes ±hi, a NaN stays NaN. */
static MlirValue clamp_float(Conv *c, MlirValue v, const FlyType *ty, double hi) {
  MlirValue lo_v[2] = {v, constant(c, ty, -hi, 0)};
  MlirValue hi_v[2] = {intrinsic(c, "llvm.maximum", ty, 2, lo_v), constant(c, ty, hi, 0)};
  return intrinsic(c, "llvm.minimum", ty, 2, hi_v);
}

/* The result r of a saturating conversion of x (of float type from) to the
   8-bit float `to`, made non-saturating: where x rounds beyond the largest
   finite value, an infinity of x's sign (f8e5m2) or NaN (f8e4m3, which has
   no infinity), as the OCP formats define it and PyTorch converts; NaN
   (0x80) for the FNUZ formats, which have no infinity. */
static MlirValue f8_overflow(Conv *c, MlirValue x, const FlyType *from, MlirValue r,
                             const FlyType *to) {
  bool inclusive;
  double bound = fly_float_overflow_bound(to, &inclusive);
  MlirValue ax = intrinsic(c, "llvm.fabs", from, 1, &x);
  /* oge 3, ogt 2, olt 4 (arith's CmpFPredicate) */
  MlirValue over = compare(c, inclusive ? 3 : 2, ax, constant(c, from, bound, 0), true);
  const FlyType *i8 = scalar(FLY_TYPE_I8);
  MlirValue code;
  if (to->code == FLY_TYPE_F8E5M2) {
    MlirValue neg = compare(c, 4, x, constant(c, from, 0, 0), true);
    /* One statement each: the order of a call's arguments is unspecified
       (GCC and Clang differ), and the IR must not depend on it. */
    MlirValue inf = constant(c, i8, 0, 0x7C);
    MlirValue minus_inf = constant(c, i8, 0, (int8_t)0xFC);
    code = pick(c, neg, minus_inf, inf);
  } else {
    code = constant(c, i8, 0, fly_type_is_fnuz(to) ? (int8_t)0x80 : 0x7F);
  }
  MlirValue bytes = step(c, "arith.bitcast", i8, r, NULL);
  return step(c, "arith.bitcast", to, pick(c, over, code, bytes), NULL);
}

/* arith's RoundingMode of a directed rounding. */
static int arith_rounding(FlyRounding r) {
  return r == FLY_ROUND_DOWN ? 1 : r == FLY_ROUND_UP ? 2 : 3; /* downward, upward, toward_zero */
}

static MlirValue float_to_float(Conv *c, MlirValue v, const FlyType *from, const FlyType *to) {
  int fb = fly_type_bits(from), tb = fly_type_bits(to);
  if (fb == tb) { /* f16 <-> bf16, 8-bit floats: through f32, exactly */
    v = step(c, "arith.extf", scalar(FLY_TYPE_F32), v, NULL);
    from = scalar(FLY_TYPE_F32);
  } else if (fb < tb) {
    return step(c, "arith.extf", to, v, NULL); /* exact: nothing to round */
  }
  if (fly_type_is_f8(to)) {
    MlirValue r = step(c, "arith.truncf", to, v, NULL);
    return c->saturate ? r : f8_overflow(c, v, from, r, to);
  }
  MlirNamedAttribute mode;
  bool directed = c->rounding != FLY_ROUND_NEAREST;
  if (directed)
    mode = fly_mlir_named(
        c->t->m, "roundingmode",
        mlirIntegerAttrGet(mlirIntegerTypeGet(c->t->m->ctx, 32), arith_rounding(c->rounding)));
  MlirValue r = step(c, "arith.truncf", to, v, directed ? &mode : NULL);
  return c->saturate ? clamp_float(c, r, to, fly_float_max(to)) : r;
}

/* ---- integers ------------------------------------------------------------------------------ */

static MlirValue float_to_int(Conv *c, MlirValue v, const FlyType *from, const FlyType *to) {
  static const char *const whole[] = {"llvm.roundeven", NULL, "llvm.floor", "llvm.ceil"};
  if (whole[c->rounding])
    v = intrinsic(c, whole[c->rounding], from, 1, &v);
  if (!c->saturate)
    return step(c, "arith.fptosi", to, v, NULL);
  /* Out of range: the nearest end of to's range; NaN: 0. */
  FlyTrace *t = c->t;
  char name[96], rs[32], fs[32];
  fly_mlir_intrinsic_suffix(fly_trace_type(t, like(c, to)), rs, sizeof rs);
  fly_mlir_intrinsic_suffix(fly_trace_type(t, like(c, from)), fs, sizeof fs);
  snprintf(name, sizeof name, "llvm.fptosi.sat%s%s", rs, fs);
  return fly_mlir_call_intrinsic(t->m, t->ip, t->loc, name, fly_trace_type(t, like(c, to)), 1, &v);
}

/* v limited to lo .. hi (integers of type ty). */
static MlirValue clamp_int(Conv *c, MlirValue v, const FlyType *ty, int64_t lo, int64_t hi) {
  v = binary(c, "arith.maxsi", ty, v, constant(c, ty, (double)lo, lo));
  return binary(c, "arith.minsi", ty, v, constant(c, ty, (double)hi, hi));
}

static MlirValue int_to_int(Conv *c, MlirValue v, const FlyType *from, const FlyType *to) {
  if (from->code == FLY_TYPE_I1)
    return step(c, "arith.extui", to, v, NULL);
  if (fly_type_bits(from) < fly_type_bits(to))
    return step(c, "arith.extsi", to, v, NULL);
  if (c->saturate) {
    int64_t lo, hi;
    fly_int_range(to, &lo, &hi);
    v = clamp_int(c, v, from, lo, hi);
  }
  return step(c, "arith.trunci", to, v, NULL);
}

static MlirValue int_to_float(Conv *c, MlirValue v, const FlyType *from, const FlyType *to) {
  if (from->code == FLY_TYPE_I1)
    return step(c, "arith.uitofp", to, v, NULL);
  /* Integers beyond to's range (f16's from 32 bits up) saturate before. */
  double max = fly_float_max(to);
  int64_t lo, hi;
  fly_int_range(from, &lo, &hi);
  if (c->saturate && max < (double)hi)
    v = clamp_int(c, v, from, -(int64_t)max, (int64_t)max);
  return step(c, "arith.sitofp", to, v, NULL);
}

/* ---- the conversion ---------------------------------------------------------------------- */

static MlirValue convert(Conv *c, MlirValue v, const FlyType *from, const FlyType *to) {
  if (fly_type_equal(from, to))
    return v;
  bool ff = fly_type_is_float(from), tf = fly_type_is_float(to);
  bool fidx = from->code == FLY_TYPE_INDEX, tidx = to->code == FLY_TYPE_INDEX;
  const FlyType *f32 = scalar(FLY_TYPE_F32), *i64 = scalar(FLY_TYPE_I64);
  /* An 8-bit float converts to and from other floats only. */
  if (fly_type_is_f8(from) && !tf)
    return convert(c, step(c, "arith.extf", f32, v, NULL), f32, to);
  if (fly_type_is_f8(to) && !ff)
    return convert(c, convert(c, v, from, f32), f32, to);
  if (to->code == FLY_TYPE_I1) {
    /* To a boolean: not zero (a NaN is true, as in C). */
    return compare(c, ff ? 13 /* une */ : 1 /* ne */, v, constant(c, from, 0, 0), ff);
  }
  if (ff && tf)
    return float_to_float(c, v, from, to);
  if (fidx && tf)
    return int_to_float(c, step(c, "arith.index_cast", i64, v, NULL), i64, to);
  if (ff && tidx)
    return step(c, "arith.index_cast", to, float_to_int(c, v, from, i64), NULL);
  if (fidx && c->saturate && fly_type_bits(to) < 64)
    return int_to_int(c, step(c, "arith.index_cast", i64, v, NULL), i64, to);
  if (fidx || tidx) /* true is 1, not -1 */
    return step(c, from->code == FLY_TYPE_I1 ? "arith.index_castui" : "arith.index_cast", to, v,
                NULL);
  if (ff)
    return float_to_int(c, v, from, to);
  if (tf)
    return int_to_float(c, v, from, to);
  return int_to_int(c, v, from, to);
}

MlirValue fly_trace_convert(FlyTrace *t, const FlyType *rt, int n, const FlyVal *const *args) {
  const FlyVal *x = args[0];
  const FlyType *from = x->type->kind == FLY_TY_VEC ? x->type->elem : x->type;
  const FlyType *to = rt->kind == FLY_TY_VEC ? rt->elem : rt;
  Conv c = {t, x->type, FLY_ROUND_NEAREST, fly_type_is_f8(to)};
  if (n == 3) { /* convert(x, T, rounding, saturate) */
    c.rounding = (FlyRounding)args[1]->i;
    c.saturate = args[2]->i != 0;
  } else if (fly_type_is_float(from) && !fly_type_is_float(to)) {
    c.rounding = FLY_ROUND_ZERO; /* `as` truncates */
  }
  MlirValue v = fly_trace_value(t, x, NULL);
  return mlirValueIsNull(v) ? v : convert(&c, v, from, to);
}
