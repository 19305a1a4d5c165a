/* fly_builtins_gpu.c — iteration, arithmetic, math and GPU builtins. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "fly_builtins.h"

static bool is_numeric(const FlyVal *v) {
  return v->kind == FLY_V_INT || v->kind == FLY_V_FLOAT || v->kind == FLY_V_RUNTIME;
}

static const FlyVal *need_number(FlyInterp *I, const FlyArgs *a, int i, const char *fn) {
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

static const FlyVal *b_range(FlyInterp *I, const FlyArgs *a) { return make_range(I, a, false); }
static const FlyVal *b_range_const(FlyInterp *I, const FlyArgs *a) {
  return make_range(I, a, true);
}

/* ---- arithmetic ------------------------------------------------------------------------ */

static const FlyVal *b_ceil_div(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *x = a->v[0], *y = a->v[1];
  if (x->kind == FLY_V_INT && y->kind == FLY_V_INT) {
    if (y->i <= 0)
      return fly_err(I, a->node[1], "ceil_div divides by a positive number, not %" PRId64, y->i);
    int64_t q = x->i / y->i + (x->i % y->i > 0);
    return fly_val_int(&I->A, q, x->type ? x->type : y->type);
  }
  if (!need_number(I, a, 0, "ceil_div") || !need_number(I, a, 1, "ceil_div"))
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
  const FlyVal *r = need_number(I, a, 0, name);
  for (int i = 1; r && i < a->n; i++) {
    const FlyVal *v = need_number(I, a, i, name);
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
    r = fly_emit_value(I, fly_val_runtime(&I->A, t, rv->origin), name, 2, pair, a->call);
  }
  return r;
}
static const FlyVal *b_min(FlyInterp *I, const FlyArgs *a) { return min_max(I, a, false); }
static const FlyVal *b_max(FlyInterp *I, const FlyArgs *a) { return min_max(I, a, true); }

/* ---- math ------------------------------------------------------------------------------ */

typedef double (*MathFn)(double);

static double rsqrt(double x) { return 1.0 / sqrt(x); }
static double exp2_(double x) { return exp2(x); }
static double log2_(double x) { return log2(x); }

/* A math function of a float: computed now when the argument is static,
   else a runtime value of the argument's type. */
static const FlyVal *math1(FlyInterp *I, const FlyArgs *a, const char *name, MathFn f) {
  const FlyVal *x = need_number(I, a, 0, name);
  if (!x)
    return NULL;
  if (x->kind == FLY_V_RUNTIME) {
    const FlyType *e = x->type->kind == FLY_TY_VEC ? x->type->elem : x->type;
    if (!fly_type_is_float(e))
      return fly_err(I, a->node[0], "%s takes a float, not %s (convert it with 'as f32')", name,
                     fly_type_str(&I->A, x->type));
    return fly_emit_value(I, fly_val_runtime(&I->A, x->type, x->origin), name, 1, &x, a->call);
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

#define MATH_BUILTIN(name, f)                                                                      \
  static const FlyVal *b_##name(FlyInterp *I, const FlyArgs *a) { return math1(I, a, #name, f); }
MATH_BUILTIN(exp, exp)
MATH_BUILTIN(exp2, exp2_)
MATH_BUILTIN(log, log)
MATH_BUILTIN(log2, log2_)
MATH_BUILTIN(sqrt, sqrt)
MATH_BUILTIN(rsqrt, rsqrt)

static const FlyVal *b_abs(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *x = need_number(I, a, 0, "abs");
  if (x && x->kind == FLY_V_RUNTIME)
    return fly_emit_value(I, fly_val_runtime(&I->A, x->type, x->origin), "abs", 1, &x, a->call);
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

static const FlyVal *b_fma(FlyInterp *I, const FlyArgs *a) {
  for (int i = 0; i < 3; i++)
    if (!need_number(I, a, i, "fma"))
      return NULL;
  /* Typed as a * b + c; at run time one fused operation, so the product
     is worked out without an emitter and only the fma is emitted. */
  FlyEmitter *emit = I->emit;
  I->emit = NULL;
  const FlyVal *p = fly_binary(I, FLY_OP_MUL, a->v[0], a->v[1], a->call);
  const FlyVal *r = fly_binary(I, FLY_OP_ADD, p, a->v[2], a->call);
  I->emit = emit;
  if (!r || r->kind != FLY_V_RUNTIME)
    return r;
  if (!fly_type_is_float(r->type->kind == FLY_TY_VEC ? r->type->elem : r->type))
    return fly_err(I, a->call, "fma takes floats, not %s", fly_type_str(&I->A, r->type));
  return fly_emit_value(I, fly_val_runtime(&I->A, r->type, r->origin), "fma", 3, a->v, a->call);
}

static const FlyVal *b_sizeof_bits(FlyInterp *I, const FlyArgs *a) {
  const FlyType *t = fly_arg_type(I, a, 0, "the argument of sizeof_bits");
  if (!t)
    return NULL;
  int bits = fly_type_bits(t);
  if (bits < 1 || (t->kind != FLY_TY_SCALAR && t->kind != FLY_TY_VEC))
    return fly_err(I, a->node[0], "%s has no size in bits", fly_type_str(&I->A, t));
  return fly_val_int(&I->A, bits, NULL);
}

/* ---- GPU ------------------------------------------------------------------------------- */

static const FlyVal *gpu_only(FlyInterp *I, const FlyArgs *a, const char *name) {
  if (I->in_launch)
    return fly_err(I, a->call, "%s runs on the GPU; a launch block runs on the host", name);
  return fly_val_none();
}

static const FlyVal *b_barrier(FlyInterp *I, const FlyArgs *a) {
  if (!gpu_only(I, a, "barrier()"))
    return NULL;
  return fly_emit_effect(I, "barrier", 0, NULL, a->call) ? fly_val_none() : NULL;
}

static const FlyVal *b_shuffle(FlyInterp *I, const FlyArgs *a) {
  if (!gpu_only(I, a, "shuffle"))
    return NULL;
  const FlyVal *x = need_number(I, a, 0, "shuffle");
  const FlyVal *lane = a->v[1];
  if (!x)
    return NULL;
  if (!(lane->kind == FLY_V_INT || (lane->kind == FLY_V_RUNTIME && fly_type_is_int(lane->type))))
    return fly_err(I, a->node[1], "the lane of shuffle is an integer, not %s",
                   fly_val_describe(&I->A, lane));
  if (x->kind == FLY_V_RUNTIME && fly_type_bits(x->type) > 64)
    return fly_err(I, a->node[0], "shuffle moves values of at most 64 bits, not %s",
                   fly_type_str(&I->A, x->type));
  FlyOrigin o = {a->call, "a value read from another lane (shuffle)"};
  return fly_emit_value(
      I,
      fly_val_runtime(&I->A, x->kind == FLY_V_RUNTIME ? x->type : fly_default_runtime_type(x), o),
      "shuffle", 2, a->v, a->call);
}

const FlyVal *fly_atomic_add(FlyInterp *I, const FlyArgs *a); /* fly_builtins_data.c */

static const FlyVal *b_atomic_add(FlyInterp *I, const FlyArgs *a) {
  if (!gpu_only(I, a, "atomic_add"))
    return NULL;
  return fly_atomic_add(I, a);
}

/* The conversions of a printf format, counted; "%%" is a percent sign. */
static int count_conversions(const char *s, uint32_t len, bool *bad) {
  int n = 0;
  for (uint32_t i = 0; i < len; i++) {
    if (s[i] != '%')
      continue;
    if (i + 1 < len && s[i + 1] == '%') {
      i++;
      continue;
    }
    while (i + 1 < len && strchr("-+ #0123456789.lhz", s[i + 1]))
      i++;
    if (i + 1 >= len || !strchr("diouxXfFeEgGaAcsp", s[i + 1]))
      *bad = true;
    n++;
  }
  return n;
}

static const FlyVal *b_printf(FlyInterp *I, const FlyArgs *a) {
  if (!gpu_only(I, a, "printf"))
    return NULL;
  const FlyVal *fmt = a->v[0];
  if (fmt->kind != FLY_V_STR)
    return fly_err(I, a->node[0], "the format of printf must be a string, not %s",
                   fly_val_describe(&I->A, fmt));
  bool bad = false;
  int n = count_conversions(fmt->s, fmt->len, &bad);
  if (bad)
    return fly_err(I, a->node[0], "this printf format has an incomplete or unknown conversion");
  if (n != a->n - 1)
    return fly_err(I, a->call, "the format of printf has %d conversion%s but %d value%s follow%s",
                   n, n == 1 ? "" : "s", a->n - 1, a->n == 2 ? "" : "s", a->n == 2 ? "s" : "");
  for (int i = 1; i < a->n; i++) {
    const FlyVal *v = a->v[i];
    bool ok = v->kind == FLY_V_INT || v->kind == FLY_V_FLOAT || v->kind == FLY_V_BOOL ||
              v->kind == FLY_V_STR || (v->kind == FLY_V_RUNTIME && v->type->kind == FLY_TY_SCALAR);
    if (!ok)
      return fly_err(I, a->node[i], "printf prints numbers and strings, not %s",
                     fly_val_describe(&I->A, v));
  }
  return fly_emit_effect(I, "printf", a->n, a->v, a->call) ? fly_val_none() : NULL;
}

const FlyBuiltin fly_gpu_builtins[] = {
    {"range", 1, 3, b_range, "range(lo, hi[, step])"},
    {"range_const", 1, 3, b_range_const, "range_const(n) or range_const(lo, hi[, step])"},
    {"ceil_div", 2, 2, b_ceil_div, "ceil_div(a, b)"},
    {"min", 2, -1, b_min, "min(a, b, ...)"},
    {"max", 2, -1, b_max, "max(a, b, ...)"},
    {"exp", 1, 1, b_exp, "exp(x)"},
    {"exp2", 1, 1, b_exp2, "exp2(x)"},
    {"log", 1, 1, b_log, "log(x)"},
    {"log2", 1, 1, b_log2, "log2(x)"},
    {"sqrt", 1, 1, b_sqrt, "sqrt(x)"},
    {"rsqrt", 1, 1, b_rsqrt, "rsqrt(x)"},
    {"abs", 1, 1, b_abs, "abs(x)"},
    {"fma", 3, 3, b_fma, "fma(a, b, c)"},
    {"sizeof_bits", 1, 1, b_sizeof_bits, "sizeof_bits(T)"},
    {"barrier", 0, 0, b_barrier, "barrier()"},
    {"shuffle", 2, 2, b_shuffle, "shuffle(x, lane)"},
    {"atomic_add", 2, 2, b_atomic_add, "atomic_add(t[i], x)"},
    {"printf", 1, -1, b_printf, "printf(format, values...)"},
    {NULL, 0, 0, NULL, NULL},
};
