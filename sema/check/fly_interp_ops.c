/* fly_interp_ops.c — operators on values: arithmetic, comparisons, logic and
 * bits, at compile time on static values (with overflow and division by zero
 * detected) and by type on runtime values. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "fly_interp.h"

static bool is_number(const FlyVal *v) {
  return v->kind == FLY_V_INT || v->kind == FLY_V_FLOAT || v->kind == FLY_V_BOOL;
}

static bool is_arith(FlyOp op) {
  return op == FLY_OP_ADD || op == FLY_OP_SUB || op == FLY_OP_MUL || op == FLY_OP_DIV ||
         op == FLY_OP_MOD;
}
static bool is_compare(FlyOp op) { return op >= FLY_OP_EQ && op <= FLY_OP_GE; }
static bool is_bitwise(FlyOp op) {
  return op == FLY_OP_BITAND || op == FLY_OP_BITOR || op == FLY_OP_BITXOR || op == FLY_OP_SHL ||
         op == FLY_OP_SHR;
}
static bool is_logic(FlyOp op) { return op == FLY_OP_AND || op == FLY_OP_OR; }

bool fly_int_fits(const FlyType *t, int64_t v) {
  int64_t lo, hi;
  fly_int_range(t, &lo, &hi);
  return v >= lo && v <= hi;
}

static const char *type_name(FlyInterp *I, const FlyType *t) {
  return t ? fly_type_str(&I->A, t) : "int";
}

/* ---- static integers ------------------------------------------------------------ */

static const FlyVal *static_int(FlyInterp *I, FlyOp op, const FlyVal *a, const FlyVal *b,
                                const FlyType *t, const FlyNode *at) {
  int64_t x = a->i, y = b->i, r = 0;
  bool overflow = false;
  switch (op) {
  case FLY_OP_ADD:
    overflow = __builtin_add_overflow(x, y, &r);
    break;
  case FLY_OP_SUB:
    overflow = __builtin_sub_overflow(x, y, &r);
    break;
  case FLY_OP_MUL:
    overflow = __builtin_mul_overflow(x, y, &r);
    break;
  case FLY_OP_DIV:
  case FLY_OP_MOD:
    if (y == 0)
      return fly_err(I, at, "division by zero in a compile-time expression (%" PRId64 " %s 0)", x,
                     fly_op_spelling(op));
    if (x == INT64_MIN && y == -1) {
      overflow = true;
      break;
    }
    r = op == FLY_OP_DIV ? x / y : x % y;
    break;
  case FLY_OP_BITAND:
    r = x & y;
    break;
  case FLY_OP_BITOR:
    r = x | y;
    break;
  case FLY_OP_BITXOR:
    r = x ^ y;
    break;
  case FLY_OP_SHL:
  case FLY_OP_SHR: {
    int bits = t ? fly_type_bits(t) : 64;
    if (y < 0 || y >= bits)
      return fly_err(I, at, "shift by %" PRId64 " is out of range for %s (0 to %d)", y,
                     type_name(I, t), bits - 1);
    if (op == FLY_OP_SHR) {
      r = x >> y; /* arithmetic: gcc and clang define it for negative x */
    } else {
      r = (int64_t)((uint64_t)x << y);
      overflow = (r >> y) != x;
    }
    break;
  }
  default:
    return NULL;
  }
  if (overflow || (t && !fly_int_fits(t, r)))
    return fly_err(I, at,
                   "integer overflow in a compile-time expression: %" PRId64 " %s %" PRId64
                   " does not fit in %s",
                   x, fly_op_spelling(op), y, t ? type_name(I, t) : "64 bits (int)");
  return fly_val_int(&I->A, r, t);
}

static double as_double(const FlyVal *v) { return v->kind == FLY_V_FLOAT ? v->f : (double)v->i; }

static const FlyVal *static_float(FlyInterp *I, FlyOp op, const FlyVal *a, const FlyVal *b,
                                  const FlyType *t, const FlyNode *at) {
  double x = as_double(a), y = as_double(b), r;
  switch (op) {
  case FLY_OP_ADD:
    r = x + y;
    break;
  case FLY_OP_SUB:
    r = x - y;
    break;
  case FLY_OP_MUL:
    r = x * y;
    break;
  case FLY_OP_DIV:
    if (y == 0)
      return fly_err(I, at, "division by zero in a compile-time expression");
    r = x / y;
    break;
  case FLY_OP_MOD:
    if (y == 0)
      return fly_err(I, at, "division by zero in a compile-time expression");
    r = fmod(x, y);
    break;
  default:
    return fly_err(I, at, "'%s' takes integers, not floats", fly_op_spelling(op));
  }
  if (!isfinite(r) && isfinite(x) && isfinite(y))
    return fly_err(I, at, "floating-point overflow in a compile-time expression");
  /* A constant of a float type holds a value of that type. */
  double rounded;
  if (!fly_float_round(t, r, &rounded))
    return fly_err(I, at,
                   "floating-point overflow in a compile-time expression: %g %s %g does not fit "
                   "in %s",
                   x, fly_op_spelling(op), y, type_name(I, t));
  return fly_val_float(&I->A, rounded, t);
}

static int compare_numbers(const FlyVal *a, const FlyVal *b) {
  if (a->kind != FLY_V_FLOAT && b->kind != FLY_V_FLOAT)
    return (a->i > b->i) - (a->i < b->i);
  double x = as_double(a), y = as_double(b);
  return (x > y) - (x < y);
}

static bool compare_result(FlyOp op, int c) {
  switch (op) {
  case FLY_OP_EQ:
    return c == 0;
  case FLY_OP_NE:
    return c != 0;
  case FLY_OP_LT:
    return c < 0;
  case FLY_OP_LE:
    return c <= 0;
  case FLY_OP_GT:
    return c > 0;
  default:
    return c >= 0;
  }
}

/* ---- operand types -------------------------------------------------------------- */

static const FlyType *typed(const FlyVal *v) {
  if (v->kind == FLY_V_RUNTIME)
    return v->type;
  if (is_number(v))
    return v->type;
  return NULL;
}

bool fly_const_fits(const FlyVal *v, const FlyType *t) {
  const FlyType *e = t->kind == FLY_TY_VEC ? t->elem : t;
  double rounded;
  if (v->kind == FLY_V_BOOL)
    return e->kind == FLY_TY_SCALAR && e->code == FLY_TYPE_I1;
  if (v->kind == FLY_V_INT && fly_type_is_int(e))
    return fly_int_fits(e, v->i);
  if (fly_type_is_float(e) && (v->kind == FLY_V_FLOAT || v->kind == FLY_V_INT))
    return fly_float_round(e, v->kind == FLY_V_FLOAT ? v->f : (double)v->i, &rounded);
  return false;
}

/* Can static number v take type t without an explicit cast? If not, says
   why: a number out of t's range, or a value of another kind. */
static bool fits_implicitly(FlyInterp *I, const FlyVal *v, const FlyType *t, const FlyNode *at) {
  if (fly_const_fits(v, t))
    return true;
  const FlyType *e = t->kind == FLY_TY_VEC ? t->elem : t;
  if (v->kind == FLY_V_INT && fly_type_is_int(e))
    fly_err(I, at, "the constant %" PRId64 " does not fit in %s", v->i, type_name(I, e));
  else if (fly_type_is_float(e) && (v->kind == FLY_V_FLOAT || v->kind == FLY_V_INT))
    fly_float_const(I, v, e, at); /* reports the range */
  else
    fly_err(I, at, "%s cannot be an operand of type %s without a cast ('as %s')",
            fly_val_describe(&I->A, v), type_name(I, t), type_name(I, e));
  return false;
}

const FlyType *fly_operand_type(FlyInterp *I, const FlyVal *a, const FlyVal *b, const FlyNode *at) {
  const FlyType *ta = typed(a), *tb = typed(b);
  if (ta && tb) {
    if (fly_type_equal(ta, tb))
      return ta->kind == FLY_TY_VEC && ta->n < 0 ? tb : ta;
    /* A vector and a scalar of its element type: the scalar is broadcast. */
    if (ta->kind == FLY_TY_VEC && fly_type_equal(ta->elem, tb))
      return ta;
    if (tb->kind == FLY_TY_VEC && fly_type_equal(tb->elem, ta))
      return tb;
    fly_err(I, at, "mismatched operand types %s and %s (convert one with 'as')", type_name(I, ta),
            type_name(I, tb));
    return NULL;
  }
  if (ta)
    return fits_implicitly(I, b, ta, at) ? ta : NULL;
  if (tb)
    return fits_implicitly(I, a, tb, at) ? tb : NULL;
  return NULL;
}

/* ---- runtime operands ------------------------------------------------------------ */

static const FlyType *scalar_of(const FlyType *t) { return t->kind == FLY_TY_VEC ? t->elem : t; }

static const FlyVal *runtime_binary(FlyInterp *I, FlyOp op, const FlyVal *a, const FlyVal *b,
                                    const FlyNode *at) {
  if (!is_number(a) && a->kind != FLY_V_RUNTIME)
    return fly_err(I, at, "'%s' cannot take %s", fly_op_spelling(op), fly_val_describe(&I->A, a));
  if (!is_number(b) && b->kind != FLY_V_RUNTIME)
    return fly_err(I, at, "'%s' cannot take %s", fly_op_spelling(op), fly_val_describe(&I->A, b));
  const FlyType *t = fly_operand_type(I, a, b, at);
  if (!t)
    return NULL;
  const FlyType *e = scalar_of(t);
  /* A static right operand can make a runtime operation certainly wrong. */
  if (b->kind == FLY_V_INT && (op == FLY_OP_DIV || op == FLY_OP_MOD) && b->i == 0)
    return fly_err(I, at, "division by zero ('%s' by the constant 0)", fly_op_spelling(op));
  if (b->kind == FLY_V_INT && (op == FLY_OP_SHL || op == FLY_OP_SHR) &&
      (b->i < 0 || b->i >= fly_type_bits(e)))
    return fly_err(I, at, "shift by %" PRId64 " is out of range for %s (0 to %d)", b->i,
                   type_name(I, e), fly_type_bits(e) - 1);
  bool is_i1 = e->kind == FLY_TY_SCALAR && e->code == FLY_TYPE_I1;
  if (is_logic(op) && !is_i1)
    return fly_err(I, at, "'%s' takes booleans (i1), not %s", fly_op_spelling(op), type_name(I, t));
  if ((is_bitwise(op) || op == FLY_OP_MOD) && !fly_type_is_int(e) && !(is_i1 && !is_arith(op)))
    if (!(op == FLY_OP_MOD && fly_type_is_float(e)))
      return fly_err(I, at, "'%s' takes integers, not %s", fly_op_spelling(op), type_name(I, t));
  if (is_arith(op) && is_i1)
    return fly_err(I, at, "'%s' takes numbers, not booleans (i1)", fly_op_spelling(op));
  if (is_compare(op) && op != FLY_OP_EQ && op != FLY_OP_NE && is_i1)
    return fly_err(I, at, "'%s' compares numbers, not booleans (i1)", fly_op_spelling(op));
  const FlyType *rt = t;
  if (is_compare(op)) {
    const FlyType *i1 = fly_type_scalar(FLY_TYPE_I1);
    rt = t->kind == FLY_TY_VEC ? fly_type_vec(&I->A, t->n, i1) : i1;
  }
  const FlyVal *r = a->kind == FLY_V_RUNTIME ? a : b;
  const FlyVal *args[2] = {a, b};
  return fly_emit_value(I, fly_val_runtime(&I->A, rt, r->origin), fly_opcode_of_operator(op), 2,
                        args, at);
}

/* ---- the operator ---------------------------------------------------------------- */

static const FlyVal *static_equality(FlyInterp *I, FlyOp op, const FlyVal *a, const FlyVal *b,
                                     const FlyNode *at) {
  bool comparable = a->kind == b->kind || (is_number(a) && is_number(b));
  if (!comparable)
    return fly_err(I, at, "cannot compare %s with %s", fly_val_describe(&I->A, a),
                   fly_val_describe(&I->A, b));
  bool eq = fly_val_equal(a, b);
  return fly_val_bool(op == FLY_OP_EQ ? eq : !eq);
}

static bool has_runtime_leaf(const FlyVal *v) {
  if (v->kind == FLY_V_TUPLE) {
    for (int i = 0; i < v->n; i++)
      if (has_runtime_leaf(v->elems[i]))
        return true;
    return false;
  }
  return v->kind == FLY_V_RUNTIME;
}

/* t == u (or !=) of tuples with runtime leaves, such as shape(C) == (M, N)
   in a launch block: tuples of one structure compare leaf by leaf, a
   runtime bool; tuples of different lengths are never equal. */
static const FlyVal *runtime_tuple_equality(FlyInterp *I, FlyOp op, const FlyVal *a,
                                            const FlyVal *b, const FlyNode *at) {
  bool eq = op == FLY_OP_EQ;
  if (a->kind != FLY_V_TUPLE || b->kind != FLY_V_TUPLE)
    return a->kind == b->kind ? runtime_binary(I, op, a, b, at) : fly_val_bool(!eq);
  if (a->n != b->n)
    return fly_val_bool(!eq);
  const FlyVal *all = fly_val_bool(eq);
  for (int i = 0; i < a->n && all; i++) {
    const FlyVal *x = fly_binary(I, op, a->elems[i], b->elems[i], at);
    all = x ? fly_binary(I, eq ? FLY_OP_AND : FLY_OP_OR, all, x, at) : NULL;
  }
  return all;
}

const FlyVal *fly_binary(FlyInterp *I, FlyOp op, const FlyVal *a, const FlyVal *b,
                         const FlyNode *at) {
  if (!a || !b)
    return NULL;
  bool tuples = a->kind == FLY_V_TUPLE || b->kind == FLY_V_TUPLE || a->kind == FLY_V_BASIS ||
                b->kind == FLY_V_BASIS;
  if (tuples && (op == FLY_OP_EQ || op == FLY_OP_NE) &&
      (has_runtime_leaf(a) || has_runtime_leaf(b)))
    return runtime_tuple_equality(I, op, a, b, at);
  if (tuples && op != FLY_OP_EQ && op != FLY_OP_NE)
    return fly_tuple_binary(I, op, a, b, at);
  if (a->kind == FLY_V_RUNTIME || b->kind == FLY_V_RUNTIME)
    return runtime_binary(I, op, a, b, at);
  if ((op == FLY_OP_EQ || op == FLY_OP_NE) && !(is_number(a) && is_number(b)))
    return static_equality(I, op, a, b, at);
  if (!is_number(a) || !is_number(b)) {
    const FlyVal *bad = is_number(a) ? b : a;
    return fly_err(I, at, "'%s' cannot take %s", fly_op_spelling(op), fly_val_describe(&I->A, bad));
  }
  /* Two static numbers. A typed constant gives its type to an untyped one. */
  const FlyType *t = NULL;
  if (a->type || b->type) {
    t = fly_operand_type(I, a, b, at);
    if (!t)
      return NULL;
  }
  bool boolean = a->kind == FLY_V_BOOL && b->kind == FLY_V_BOOL;
  if (is_logic(op)) {
    if (!boolean)
      return fly_err(I, at, "'%s' takes booleans, not %s", fly_op_spelling(op),
                     fly_val_describe(&I->A, a->kind == FLY_V_BOOL ? b : a));
    return fly_val_bool(op == FLY_OP_AND ? (a->i && b->i) : (a->i || b->i));
  }
  if (boolean && (op == FLY_OP_BITAND || op == FLY_OP_BITOR || op == FLY_OP_BITXOR)) {
    int64_t r = op == FLY_OP_BITAND ? a->i & b->i : op == FLY_OP_BITOR ? a->i | b->i : a->i ^ b->i;
    return fly_val_bool(r != 0);
  }
  if (a->kind == FLY_V_BOOL || b->kind == FLY_V_BOOL) {
    if (is_compare(op) && boolean && (op == FLY_OP_EQ || op == FLY_OP_NE))
      return fly_val_bool(compare_result(op, (int)(a->i - b->i)));
    return fly_err(I, at, "'%s' takes numbers, not booleans", fly_op_spelling(op));
  }
  if (is_compare(op))
    return fly_val_bool(compare_result(op, compare_numbers(a, b)));
  if (a->kind == FLY_V_FLOAT || b->kind == FLY_V_FLOAT || fly_type_is_float(t)) {
    if (is_bitwise(op))
      return fly_err(I, at, "'%s' takes integers, not floats", fly_op_spelling(op));
    return static_float(I, op, a, b, t, at);
  }
  return static_int(I, op, a, b, t, at);
}

/* Unary operators, exported for the expression evaluator. */
const FlyVal *fly_unary(FlyInterp *I, FlyOp op, const FlyVal *a, const FlyNode *at) {
  if (!a)
    return NULL;
  if (a->kind == FLY_V_RUNTIME) {
    const FlyType *e = scalar_of(a->type);
    bool is_i1 = e->kind == FLY_TY_SCALAR && e->code == FLY_TYPE_I1;
    if (op == FLY_OP_NOT && !is_i1)
      return fly_err(I, at, "'!' takes a boolean (i1), not %s", type_name(I, a->type));
    if (op == FLY_OP_NEG && is_i1)
      return fly_err(I, at, "'-' takes a number, not a boolean (i1)");
    if (op == FLY_OP_BITNOT && !fly_type_is_int(e))
      return fly_err(I, at, "'~' takes an integer, not %s", type_name(I, a->type));
    return fly_emit_value(I, fly_val_runtime(&I->A, a->type, a->origin), fly_opcode_of_operator(op),
                          1, &a, at);
  }
  switch (op) {
  case FLY_OP_NOT:
    if (a->kind != FLY_V_BOOL)
      return fly_err(I, at, "'!' takes a boolean, not %s", fly_val_describe(&I->A, a));
    return fly_val_bool(!a->i);
  case FLY_OP_NEG:
    if (a->kind == FLY_V_FLOAT)
      return fly_val_float(&I->A, -a->f, a->type);
    if (a->kind != FLY_V_INT)
      return fly_err(I, at, "'-' takes a number, not %s", fly_val_describe(&I->A, a));
    if (a->i == INT64_MIN || (a->type && !fly_int_fits(a->type, -a->i)))
      return fly_err(
          I, at, "integer overflow in a compile-time expression: -(%" PRId64 ") does not fit in %s",
          a->i, a->type ? type_name(I, a->type) : "64 bits (int)");
    return fly_val_int(&I->A, -a->i, a->type);
  default:
    if (a->kind != FLY_V_INT)
      return fly_err(I, at, "'~' takes an integer, not %s", fly_val_describe(&I->A, a));
    return fly_val_int(&I->A, ~a->i, a->type);
  }
}
