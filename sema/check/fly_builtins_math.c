/* fly_builtins_math.c — iteration, arithmetic and math builtins. */
#include <inttypes.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

#include "fly_builtins.h"

static bool is_numeric(const FlyVal *v) {
  return v->kind == FLY_V_INT || v->kind == FLY_V_FLOAT || v->kind == FLY_V_RUNTIME;
}

const FlyVal *fly_arg_number(FlyInterp *I, const FlyArgs *a, int i, const char *fn) {
  const FlyVal *v = a->v[i];
  if (is_numeric(v) &&
      !(v->kind == FLY_V_RUNTIME && v->type->kind == FLY_TY_SCALAR && v->type->code == FLY_TYPE_I1))
    return v;
  return fly_err(I, a->node[i], "%s takes numbers, not %s", fn, fly_val_describe(&I->A, v));
}

/* ---- iteration ------------------------------------------------------------------------ */

static const FlyVal *make_range(FlyInterp *I, const FlyArgs *a, bool unrolled) {
  const FlyVal *bounds[3] = {NULL, NULL, NULL};
  const char *name = unrolled ? "range_const" : "range";
  for (int i = 0; i < a->n; i++) {
    if (unrolled && !fly_val_is_static(a->v[i]))
      return fly_err_not_static(I, a->node[i], a->v[i], "the bounds of range_const");
    const FlyVal *v = a->v[i];
    bool integer = v->kind == FLY_V_INT || (v->kind == FLY_V_RUNTIME && fly_type_is_int(v->type));
    if (!integer)
      return fly_err(I, a->node[i], "the bounds of %s are integers, not %s", name,
                     fly_val_describe(&I->A, v));
  }
  if (a->n == 1) {
    bounds[0] = fly_val_int(&I->A, 0, NULL);
    bounds[1] = a->v[0];
  } else {
    bounds[0] = a->v[0];
    bounds[1] = a->v[1];
  }
  bounds[2] = a->n == 3 ? a->v[2] : fly_val_int(&I->A, 1, NULL);
  if (bounds[2]->kind == FLY_V_INT && bounds[2]->i <= 0)
    return fly_err(I, a->node[a->n - 1], "the step of %s must be positive, not %" PRId64, name,
                   bounds[2]->i);
  if (unrolled) {
    int64_t lo = bounds[0]->i, hi = bounds[1]->i, step = bounds[2]->i, span;
    if (hi > lo && __builtin_sub_overflow(hi, lo, &span))
      return fly_err(I, a->call,
                     "range_const from %" PRId64 " to %" PRId64 " has too many "
                     "iterations",
                     lo, hi);
    int64_t count = hi > lo ? (span - 1) / step + 1 : 0;
    if (count > I->options.step_limit)
      return fly_err(I, a->call,
                     "range_const of %" PRId64 " iterations is more than the step "
                     "limit (%ld)",
                     count, I->options.step_limit);
  }
  FlyVal *v = fly_val_new(&I->A, FLY_V_OBJECT);
  if (!v)
    return NULL;
  v->object.kind = FLY_OBJ_RANGE;
  v->object.unrolled = unrolled;
  v->object.lo = bounds[0];
  v->object.hi = bounds[1];
  v->object.step = bounds[2];
  return v;
}

const FlyVal *fly_builtin_range(FlyInterp *I, const FlyArgs *a) { return make_range(I, a, false); }
const FlyVal *fly_builtin_range_const(FlyInterp *I, const FlyArgs *a) {
  return make_range(I, a, true);
}

/* ---- arithmetic ------------------------------------------------------------------------ */

const FlyVal *fly_builtin_ceil_div(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *x = a->v[0], *y = a->v[1];
  if (x->kind == FLY_V_TUPLE || y->kind == FLY_V_TUPLE) /* CuTe's, of shapes */
    return fly_ceil_div_tuples(I, a);
  if (x->kind == FLY_V_INT && y->kind == FLY_V_INT) {
    if (y->i <= 0)
      return fly_err(I, a->node[1], "ceil_div divides by a positive number, not %" PRId64, y->i);
    int64_t q = x->i / y->i + (x->i % y->i > 0);
    return fly_val_int(&I->A, q, x->type ? x->type : y->type);
  }
  if (!fly_arg_number(I, a, 0, "ceil_div") || !fly_arg_number(I, a, 1, "ceil_div"))
    return NULL;
  /* (x + y - 1) / y, by type. */
  const FlyVal *s = fly_binary(I, FLY_OP_ADD, x, y, a->call);
  s = fly_binary(I, FLY_OP_SUB, s, fly_val_int(&I->A, 1, NULL), a->call);
  return fly_binary(I, FLY_OP_DIV, s, y, a->call);
}

/* The static value chosen between a and b, with the type an operator on
   them would give: max(2 as i8, 3) is 3 as i8 (as (2 as i8) + 3 is typed),
   max(3, 2.5) is 3.0. */
static const FlyVal *chosen_as_common(FlyInterp *I, const FlyVal *chosen, const FlyVal *a,
                                      const FlyVal *b, const FlyNode *at) {
  if (a->type || b->type) {
    const FlyType *t = fly_operand_type(I, a, b, at);
    return t ? fly_convert(I, chosen, t, at, false) : NULL;
  }
  if (chosen->kind == FLY_V_INT && (a->kind == FLY_V_FLOAT || b->kind == FLY_V_FLOAT))
    return fly_val_float(&I->A, (double)chosen->i, NULL);
  return chosen;
}

static const FlyVal *min_max(FlyInterp *I, const FlyArgs *a, bool is_max) {
  const char *name = is_max ? "max" : "min";
  /* Of one vec: its largest (smallest) element. */
  if (a->n == 1) {
    const FlyVal *v = a->v[0];
    if (v->kind == FLY_V_RUNTIME && v->type->kind == FLY_TY_VEC)
      return fly_reduce_vec(I, a, is_max ? FLY_OPCODE_MAX : FLY_OPCODE_MIN, name);
    return fly_err(I, a->call,
                   "%s takes two or more numbers, or one vec to reduce; its only "
                   "argument is %s",
                   name, fly_val_describe(&I->A, v));
  }
  const FlyVal *r = fly_arg_number(I, a, 0, name);
  for (int i = 1; r && i < a->n; i++) {
    const FlyVal *v = fly_arg_number(I, a, i, name);
    if (!v)
      return NULL;
    if (r->kind != FLY_V_RUNTIME && v->kind != FLY_V_RUNTIME) {
      const FlyVal *lt = fly_binary(I, FLY_OP_LT, r, v, a->call);
      if (!lt)
        return NULL;
      r = chosen_as_common(I, lt->i == is_max ? v : r, r, v, a->call);
      continue;
    }
    const FlyType *t = fly_operand_type(I, r, v, a->call);
    if (!t)
      return NULL;
    const FlyVal *pair[2] = {r, v};
    const FlyVal *rv = r->kind == FLY_V_RUNTIME ? r : v;
    r = fly_emit_value(I, fly_val_runtime(&I->A, t, rv->origin),
                       is_max ? FLY_OPCODE_MAX : FLY_OPCODE_MIN, 2, pair, a->call);
  }
  return r;
}
const FlyVal *fly_builtin_min(FlyInterp *I, const FlyArgs *a) { return min_max(I, a, false); }
const FlyVal *fly_builtin_max(FlyInterp *I, const FlyArgs *a) { return min_max(I, a, true); }

/* The type of a runtime operation on all of a's arguments, as operators
   would type them pairwise (a typed argument, runtime or static, sets it;
   untyped constants must fit it). NULL after an error. */
static const FlyType *common_runtime_type(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *typed = NULL;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < a->n; i++) {
      const FlyVal *v = a->v[i];
      bool has_type = v->kind == FLY_V_RUNTIME || v->type;
      if (has_type != (pass == 0))
        continue;
      if (!typed) {
        typed = v;
        continue;
      }
      const FlyType *t = fly_operand_type(I, typed, v, a->node[i]);
      if (!t)
        return NULL;
      typed = fly_val_runtime(&I->A, t, typed->origin);
    }
  return typed ? typed->type : NULL;
}

/* The pair (x, y) as the arguments of a two-argument builtin. */
static FlyArgs pair_args(const FlyArgs *a, const FlyVal **v, const FlyNode **node, const FlyVal *x,
                         int ix, const FlyVal *y, int iy) {
  FlyArgs p = *a;
  v[0] = x, v[1] = y;
  node[0] = a->node[ix], node[1] = a->node[iy];
  p.n = 2, p.v = v, p.node = node;
  return p;
}

/* clamp(x, lo, hi) is min(max(x, lo), hi), typed as min and max are, so hi
   wins where lo > hi at run time (as in PyTorch and NumPy); bounds known
   now to be in the wrong order are an error. For floats a NaN argument
   gives NaN (the NaN-propagating maximum and minimum, unlike max and min),
   and -0.0 counts as below +0.0. */
const FlyVal *fly_builtin_clamp(FlyInterp *I, const FlyArgs *a) {
  for (int i = 0; i < 3; i++)
    if (!fly_arg_number(I, a, i, "clamp"))
      return NULL;
  const FlyVal *x = a->v[0], *lo = a->v[1], *hi = a->v[2];
  if (lo->kind != FLY_V_RUNTIME && hi->kind != FLY_V_RUNTIME) {
    const FlyVal *above = fly_binary(I, FLY_OP_GT, lo, hi, a->call);
    if (!above)
      return NULL;
    if (above->i)
      return fly_err(I, a->node[1], "clamp's lower bound %s is above its upper bound %s",
                     fly_val_str_canonical(&I->A, lo), fly_val_str_canonical(&I->A, hi));
  }
  const FlyVal *v[2];
  const FlyNode *node[2];
  if (x->kind != FLY_V_RUNTIME && lo->kind != FLY_V_RUNTIME && hi->kind != FLY_V_RUNTIME) {
    FlyArgs p = pair_args(a, v, node, x, 0, lo, 1);
    const FlyVal *r = min_max(I, &p, true);
    if (!r)
      return NULL;
    p = pair_args(a, v, node, r, 0, hi, 2);
    return min_max(I, &p, false);
  }
  const FlyType *t = common_runtime_type(I, a);
  if (!t)
    return NULL;
  const FlyVal *rv = x->kind == FLY_V_RUNTIME ? x : lo->kind == FLY_V_RUNTIME ? lo : hi;
  return fly_emit_value(I, fly_val_runtime(&I->A, t, rv->origin), FLY_OPCODE_CLAMP, 3, a->v,
                        a->call);
}

/* ---- math ------------------------------------------------------------------------------ */

typedef double (*MathFn)(double);

static double rsqrt(double x) { return 1.0 / sqrt(x); }
static double exp2_(double x) { return exp2(x); }
static double log2_(double x) { return log2(x); }
/* In the default rounding mode, which the compiler never changes: to
   nearest, halves to even. */
static double roundeven_(double x) { return nearbyint(x); }

/* A math function of a float: computed now when the argument is static,
   else a runtime value of the argument's type. */
static const FlyVal *math1(FlyInterp *I, const FlyArgs *a, const char *name, FlyOpcode op,
                           MathFn f) {
  const FlyVal *x = fly_arg_number(I, a, 0, name);
  if (!x)
    return NULL;
  if (x->kind == FLY_V_RUNTIME) {
    const FlyType *e = x->type->kind == FLY_TY_VEC ? x->type->elem : x->type;
    if (!fly_type_is_float(e))
      return fly_err(I, a->node[0], "%s takes a float, not %s (convert it with 'as f32')", name,
                     fly_type_str(&I->A, x->type));
    return fly_emit_value(I, fly_val_runtime(&I->A, x->type, x->origin), op, 1, &x, a->call);
  }
  double v = x->kind == FLY_V_FLOAT ? x->f : (double)x->i;
  double r = f(v);
  if (isnan(r) && !isnan(v))
    return fly_err(I, a->node[0], "%s(%g) is not a number", name, v);
  if (isinf(r) && !isinf(v))
    return fly_err(I, a->node[0], "%s(%g) overflows", name, v);
  /* A typed float gives a value of its type. */
  const FlyType *t = x->kind == FLY_V_FLOAT ? x->type : NULL;
  double rounded;
  if (!fly_float_round(t, r, &rounded))
    return fly_err(I, a->node[0], "%s(%g) overflows %s", name, v, fly_type_str(&I->A, t));
  return fly_val_float(&I->A, rounded, t);
}

#define MATH_BUILTIN(name, f, ID)                                                                  \
  const FlyVal *fly_builtin_##name(FlyInterp *I, const FlyArgs *a) {                               \
    return math1(I, a, #name, FLY_OPCODE_##ID, f);                                                 \
  }
MATH_BUILTIN(exp, exp, EXP)
MATH_BUILTIN(exp2, exp2_, EXP2)
MATH_BUILTIN(log, log, LOG)
MATH_BUILTIN(log2, log2_, LOG2)
MATH_BUILTIN(sqrt, sqrt, SQRT)
MATH_BUILTIN(rsqrt, rsqrt, RSQRT)
MATH_BUILTIN(floor, floor, FLOOR)
MATH_BUILTIN(ceil, ceil, CEIL)
MATH_BUILTIN(trunc, trunc, TRUNC)
MATH_BUILTIN(round, round, ROUND)
MATH_BUILTIN(roundeven, roundeven_, ROUNDEVEN)

const FlyVal *fly_builtin_abs(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *x = fly_arg_number(I, a, 0, "abs");
  if (x && x->kind == FLY_V_RUNTIME)
    return fly_emit_value(I, fly_val_runtime(&I->A, x->type, x->origin), FLY_OPCODE_ABS, 1, &x,
                          a->call);
  if (!x)
    return NULL;
  if (x->kind == FLY_V_FLOAT)
    return fly_val_float(&I->A, fabs(x->f), x->type);
  /* As for -x: the result must fit in the constant's type. */
  if (x->i == INT64_MIN || (x->type && !fly_int_fits(x->type, -x->i)))
    return fly_err(I, a->call,
                   "integer overflow in a compile-time expression: abs(%" PRId64
                   ") does not fit in %s",
                   x->i, x->type ? fly_type_str(&I->A, x->type) : "64 bits (int)");
  return fly_val_int(&I->A, x->i < 0 ? -x->i : x->i, x->type);
}

static double number(const FlyVal *v) { return v->kind == FLY_V_FLOAT ? v->f : (double)v->i; }

/* a * b + c rounded once to the type t (NULL: float, a double): C's fma
   for doubles. For narrower types the product of two of their values is
   exact in a double, and the sum is made round-to-odd (its error, from
   Knuth's two-sum, moves an even result to its odd neighbour toward the
   exact value) so that rounding it to t, with 53 bits for t's 24 or
   fewer, gives what rounding the exact value once would. False when the
   result overflows t. */
static bool fused(const FlyType *t, double a, double b, double c, double *out) {
  if (!t || t->code == FLY_TYPE_F64) {
    *out = fma(a, b, c);
    return isfinite(*out);
  }
  double p = a * b, s = p + c, bp = s - p, err = (p - (s - bp)) + (c - bp);
  uint64_t bits;
  memcpy(&bits, &s, sizeof bits);
  if (err != 0 && isfinite(s) && (bits & 1) == 0)
    s = nextafter(s, err > 0 ? INFINITY : -INFINITY);
  return fly_float_round(t, s, out) && isfinite(*out);
}

const FlyVal *fly_builtin_fma(FlyInterp *I, const FlyArgs *a) {
  for (int i = 0; i < 3; i++)
    if (!fly_arg_number(I, a, i, "fma"))
      return NULL;
  /* Typed as a * b + c; at run time one fused operation, so the product
     is worked out without an emitter and only the fma is emitted. */
  FlyEmitter *emit = I->emit;
  I->emit = NULL;
  const FlyVal *p = fly_binary(I, FLY_OP_MUL, a->v[0], a->v[1], a->call);
  const FlyVal *r = fly_binary(I, FLY_OP_ADD, p, a->v[2], a->call);
  I->emit = emit;
  if (r && r->kind == FLY_V_FLOAT) {
    double f;
    if (!fused(r->type, number(a->v[0]), number(a->v[1]), number(a->v[2]), &f))
      return fly_err(I, a->call, "fma(%g, %g, %g) overflows %s", number(a->v[0]), number(a->v[1]),
                     number(a->v[2]), r->type ? fly_type_str(&I->A, r->type) : "a float");
    return fly_val_float(&I->A, f, r->type);
  }
  if (!r || r->kind != FLY_V_RUNTIME)
    return r;
  if (!fly_type_is_float(r->type->kind == FLY_TY_VEC ? r->type->elem : r->type))
    return fly_err(I, a->call, "fma takes floats, not %s", fly_type_str(&I->A, r->type));
  return fly_emit_value(I, fly_val_runtime(&I->A, r->type, r->origin), FLY_OPCODE_FMA, 3, a->v,
                        a->call);
}

const FlyVal *fly_builtin_sizeof_bits(FlyInterp *I, const FlyArgs *a) {
  const FlyType *t = fly_arg_type(I, a, 0, "the argument of sizeof_bits");
  if (!t)
    return NULL;
  int bits = fly_type_bits(t);
  if (bits < 1 || (t->kind != FLY_TY_SCALAR && t->kind != FLY_TY_VEC))
    return fly_err(I, a->node[0], "%s has no size in bits", fly_type_str(&I->A, t));
  return fly_val_int(&I->A, bits, NULL);
}
