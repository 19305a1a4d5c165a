/* fly_builtins_convert.c — conversions at run time (`x as T` and
 * convert(x, T, rounding = ..., saturate = ...)) and what they refuse, and
 * convert's value at compile time.
 *
 * Both are the CONVERT opcode: `as` with x alone, convert with two static
 * arguments more, its rounding (a FlyRounding) and whether it saturates.
 * convert saturates unless told not to: a result beyond T's range becomes
 * T's nearest end (its largest finite value of that sign for a float, an
 * infinity included; NaN stays NaN, or becomes 0 in an integer type), where
 * `as` wraps integers, leaves floats' overflow undefined in integer types
 * and infinite in float types. Conversions to the 8-bit floats saturate
 * either way (the hardware's fp8 instructions do), unless convert is told
 * not to. */
#include <inttypes.h>
#include <math.h>

#include "fly_builtins.h"
#include "fly_emit.h"
#include "fly_target.h"

/* The choices of rounding, in FlyRounding's order. */
static const char *const roundings[] = {"nearest", "zero", "down", "up", NULL};
enum { ROUNDING_DEFAULT = 4 };

static const FlyType *scalar_of(const FlyType *t) { return t->kind == FLY_TY_VEC ? t->elem : t; }

/* Whether target t converts to and from the 8-bit float f8: the OCP
   formats natively (FP8) or on top of CDNA3's FNUZ instructions; the FNUZ
   formats on CDNA3's only (no other chip has them, and no format of the
   others holds every FNUZ value's code). */
static bool converts(const FlyTarget *t, const FlyType *f8) {
  if (fly_type_is_fnuz(f8))
    return fly_target_has(t, FLY_FEATURE_FP8_FNUZ);
  return fly_target_has(t, FLY_FEATURE_FP8) || fly_target_has(t, FLY_FEATURE_FP8_FNUZ);
}

/* "sm_90, sm_90a, gfx942, ...": the targets whose conversions of f8 Fly
   lowers. */
static const char *fp8_targets(const FlyType *f8) {
  static char list[256];
  size_t n = 0;
  list[0] = 0;
  for (int i = 0; fly_target_at(i) && n < sizeof list; i++) {
    const FlyTarget *t = fly_target_at(i);
    if (converts(t, f8))
      n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", t->arch);
  }
  return list;
}

/* Whether a runtime conversion from `from` to `to` (scalars) can be made
   for the target; the error at `at` when not. */
static bool convertible(FlyInterp *I, const FlyType *from, const FlyType *to, const FlyNode *at) {
  if (!fly_type_is_f8(from) && !fly_type_is_f8(to))
    return true;
  const char *f = fly_type_str(&I->A, from), *t = fly_type_str(&I->A, to);
  if (from->code == FLY_TYPE_F64 && fly_type_is_f8(to)) {
    fly_err(I, at,
            "f64 converts to %s only through f32, which rounds twice; write 'x as f32 as %s' "
            "to accept that",
            t, t);
    return false;
  }
  const FlyTarget *tg = I->target;
  bool from_ok = !fly_type_is_f8(from) || converts(tg, from);
  if (from_ok && (!fly_type_is_f8(to) || converts(tg, to)))
    return true;
  const FlyType *f8 = from_ok ? to : from; /* the side the target cannot convert */
  if (fly_type_is_fnuz(f8))
    fly_err(I, at,
            "converting %s to %s needs the conversion instructions of the FNUZ 8-bit floats "
            "(target feature fp8_fnuz), which %s does not have; Fly converts %s on %s",
            f, t, tg->arch, fly_type_str(&I->A, f8), fp8_targets(f8));
  else
    fly_err(I, at,
            "converting %s to %s needs fp8 conversion instructions (target feature fp8 or "
            "fp8_fnuz), which %s does not have; Fly converts fp8 on %s",
            f, t, tg->arch, fp8_targets(f8));
  return false;
}

const FlyVal *fly_emit_convert(FlyInterp *I, const FlyVal *v, const FlyType *t,
                               const FlyVal *const *options, const FlyNode *at) {
  if (!convertible(I, scalar_of(v->type), scalar_of(t), at))
    return NULL;
  const FlyVal *args[3] = {v, options ? options[0] : NULL, options ? options[1] : NULL};
  return fly_emit_value(I, fly_val_runtime(&I->A, t, v->origin), FLY_OPCODE_CONVERT,
                        options ? 3 : 1, args, at);
}

/* ---- convert at compile time ----------------------------------------------------------- */

/* A static number as an integer of type t (with r; saturated, or an error). */
static const FlyVal *static_to_int(FlyInterp *I, const FlyVal *x, const FlyType *t, FlyRounding r,
                                   bool saturate, const FlyNode *at) {
  int64_t lo, hi;
  fly_int_range(t, &lo, &hi);
  if (x->kind == FLY_V_INT) {
    if (x->i >= lo && x->i <= hi)
      return fly_val_int(&I->A, x->i, t);
    if (!saturate) /* as `as` and the run time: two's complement */
      return fly_convert(I, x, t, at, true);
    return fly_val_int(&I->A, x->i < lo ? lo : hi, t);
  }
  double f = r == FLY_ROUND_NEAREST ? nearbyint(x->f)
             : r == FLY_ROUND_DOWN  ? floor(x->f)
             : r == FLY_ROUND_UP    ? ceil(x->f)
                                    : trunc(x->f);
  /* The ends of a 64-bit range are not doubles: compare with 2^63. */
  bool below = f < (double)lo, above = hi == INT64_MAX ? f >= 0x1p63 : f > (double)hi;
  if (!below && !above)
    return fly_val_int(&I->A, (int64_t)f, t);
  if (!saturate)
    return fly_err(I, at, "convert(%g, %s) is beyond the range of %s (saturate = true clamps it)",
                   x->f, fly_type_str(&I->A, t), fly_type_str(&I->A, t));
  return fly_val_int(&I->A, below ? lo : hi, t);
}

/* A static number as a float of type t (with r; saturated, or an error). */
static const FlyVal *static_to_float(FlyInterp *I, const FlyVal *x, const FlyType *t, FlyRounding r,
                                     bool saturate, const FlyNode *at) {
  double f = x->kind == FLY_V_FLOAT ? x->f : (double)x->i, out;
  if (fly_float_round_to(t, f, r, &out))
    return fly_val_float(&I->A, out, t);
  if (!saturate)
    return fly_err(I, at,
                   "convert(%g, %s) overflows %s (the largest finite %s is %g; saturate = true "
                   "gives it)",
                   f, fly_type_str(&I->A, t), fly_type_str(&I->A, t), fly_type_str(&I->A, t),
                   fly_float_max(t));
  return fly_val_float(&I->A, copysign(fly_float_max(t), f), t);
}

/* ---- convert(x, T, rounding = ..., saturate = ...) ------------------------------------- */

/* The rounding convert was given, checked against the conversion from
   `from` (NULL: an untyped integer constant; FLY_TYPE_FLOAT's type for an
   untyped float) to `to`; the default when none was given; -1 after an
   error. */
static int rounding_of(FlyInterp *I, const FlyArgs *a, bool from_float, const FlyType *to) {
  int r = fly_arg_choice(I, a, "rounding", roundings, ROUNDING_DEFAULT);
  if (r < 0)
    return -1;
  const FlyNode *at;
  fly_arg_named(a, "rounding", &at);
  bool to_float = fly_type_is_float(to);
  if (r == ROUNDING_DEFAULT)
    return from_float && !to_float ? FLY_ROUND_ZERO : FLY_ROUND_NEAREST;
  const char *t = fly_type_str(&I->A, to);
  if (!from_float && !to_float) {
    fly_err(I, at, "an integer converts to %s exactly or saturates: it has nothing to round", t);
    return -1;
  }
  if (!from_float && r != FLY_ROUND_NEAREST) {
    fly_err(I, at, "a conversion from an integer to %s rounds to nearest only", t);
    return -1;
  }
  if (fly_type_is_f8(to) && r != FLY_ROUND_NEAREST) {
    fly_err(I, at,
            "a conversion to %s rounds to nearest only (the fp8 conversion instructions have no "
            "other rounding)",
            t);
    return -1;
  }
  return r;
}

/* Whether convert saturates (true unless saturate = false); -1 after an
   error. */
static int saturate_of(FlyInterp *I, const FlyArgs *a) {
  const FlyNode *at;
  const FlyVal *v = fly_arg_named(a, "saturate", &at);
  if (!v)
    return 1;
  if (v->kind != FLY_V_BOOL) {
    fly_err(I, at, "saturate is true or false (known at compile time), not %s",
            fly_val_describe(&I->A, v));
    return -1;
  }
  return v->i != 0;
}

const FlyVal *fly_builtin_convert(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *x = fly_arg_number(I, a, 0, "convert");
  const FlyType *to = fly_arg_type(I, a, 1, "the type convert gives");
  if (!x || !to)
    return NULL;
  bool numeric = to->kind == FLY_TY_SCALAR && to->code != FLY_TYPE_I1 &&
                 (fly_type_is_int(to) || fly_type_is_float(to));
  if (!numeric)
    return fly_err(I, a->node[1],
                   "convert gives a number type (i8 ... i64, index, f16, bf16, f32, f64, f8e4m3, "
                   "f8e5m2, f8e4m3fnuz, f8e5m2fnuz), not %s; a vector converts element by element",
                   fly_type_str(&I->A, to));
  const FlyType *from = x->type ? scalar_of(x->type) : NULL;
  bool from_float = from ? fly_type_is_float(from) : x->kind == FLY_V_FLOAT;
  int r = rounding_of(I, a, from_float, to);
  int sat = r < 0 ? -1 : saturate_of(I, a);
  if (sat < 0)
    return NULL;
  if (x->kind != FLY_V_RUNTIME)
    return fly_type_is_int(to) ? static_to_int(I, x, to, (FlyRounding)r, sat, a->call)
                               : static_to_float(I, x, to, (FlyRounding)r, sat, a->call);
  const FlyType *rt = x->type->kind == FLY_TY_VEC ? fly_type_vec(&I->A, x->type->n, to) : to;
  if (fly_type_equal(from, to))
    return x;
  const FlyVal *options[2] = {fly_val_int(&I->A, r, NULL), fly_val_bool(sat)};
  return fly_emit_convert(I, x, rt, options, a->call);
}
