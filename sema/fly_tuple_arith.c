/* fly_tuple_arith.c — arithmetic on integer tuples and basis elements
 * (CuTe's int_tuple.hpp and numeric/arithmetic_tuple.hpp): leaf-by-leaf
 * operators, ceil_div, shape_div, elem_less, product_each, take, and the
 * basis elements of make_basis_like and as_arithmetic_tuple. */
#include <string.h>

#include "fly_tuple.h"

static FlyTuple **elems(FlyAlgebra *A, int n) {
  return fly_alloc(A, (size_t)(n > 0 ? n : 1) * sizeof(FlyTuple *));
}

static const char *text(FlyAlgebra *A, const FlyTuple *t) {
  char *s = fly_tuple_str(A, t);
  return s ? s : "?";
}

/* ---- basis elements --------------------------------------------------------- */

/* path: the modes that lead to shape, depth of them. */
static FlyTuple *basis_like(FlyAlgebra *A, const FlyTuple *shape, int *path, int depth) {
  if (shape->kind == FLY_TUPLE_SEQ) {
    if (depth >= FLY_MAX_DEPTH)
      return fly_fail(A, "tuples nested too deeply (limit is %d)", FLY_MAX_DEPTH);
    FlyTuple **e = elems(A, shape->n);
    if (!e)
      return NULL;
    for (int i = 0; i < shape->n; i++) {
      path[depth] = i;
      if (!(e[i] = basis_like(A, shape->elem[i], path, depth + 1)))
        return NULL;
    }
    return fly_tuple_seq(A, shape->n, e);
  }
  if (shape->kind != FLY_TUPLE_INT)
    return fly_fail(A, "make_basis_like: %s is not a shape", text(A, shape));
  return depth == 0 ? fly_tuple_int(A, 1) : fly_tuple_basis(A, 1, depth, path);
}

FlyTuple *fly_tuple_basis_like(FlyAlgebra *A, const FlyTuple *shape) {
  int path[FLY_MAX_DEPTH];
  return shape ? basis_like(A, shape, path, 0) : NULL;
}

/* scale placed at the end of the path modes[k..n), zeros before it at
 * each level: 3@1 is (0,3). */
static FlyTuple *basis_coord(FlyAlgebra *A, int64_t scale, const int *modes, int n) {
  FlyTuple *x = fly_tuple_int(A, scale);
  for (int k = n - 1; k >= 0 && x; k--) {
    FlyTuple **e = elems(A, modes[k] + 1);
    if (!e)
      return NULL;
    for (int i = 0; i < modes[k]; i++)
      if (!(e[i] = fly_tuple_int(A, 0)))
        return NULL;
    e[modes[k]] = x;
    x = fly_tuple_seq(A, modes[k] + 1, e);
  }
  return x;
}

FlyTuple *fly_tuple_as_coord(FlyAlgebra *A, const FlyTuple *t) {
  if (!t)
    return NULL;
  if (t->kind == FLY_TUPLE_BASIS)
    return basis_coord(A, t->value, t->modes, t->nmodes);
  if (t->kind != FLY_TUPLE_SEQ || !fly_tuple_has_basis(t))
    return (FlyTuple *)t;
  FlyTuple **e = elems(A, t->n);
  if (!e)
    return NULL;
  for (int i = 0; i < t->n; i++)
    if (!(e[i] = fly_tuple_as_coord(A, t->elem[i])))
      return NULL;
  return fly_tuple_seq(A, t->n, e);
}

/* ---- leaf-by-leaf operators ---------------------------------------------------- */

static const char *spelling(FlyArith op) {
  static const char *const s[] = {"+", "-", "*", "/", "%"};
  return s[op];
}

static FlyTuple *int_op(FlyAlgebra *A, FlyArith op, int64_t x, int64_t y) {
  int64_t r = 0;
  switch (op) {
  case FLY_ARITH_ADD:
    if (!fly_add(A, x, y, &r))
      return NULL;
    break;
  case FLY_ARITH_SUB:
    if (__builtin_sub_overflow(x, y, &r))
      return fly_fail(A, "integer overflow: %lld - %lld does not fit in 64 bits", (long long)x,
                      (long long)y);
    break;
  case FLY_ARITH_MUL:
    if (!fly_mul(A, x, y, &r))
      return NULL;
    break;
  case FLY_ARITH_DIV:
  case FLY_ARITH_MOD:
    if (y == 0)
      return fly_fail(A, "division by zero (%lld %s 0)", (long long)x, spelling(op));
    if (x == INT64_MIN && y == -1)
      return fly_fail(A, "integer overflow: %lld %s -1 does not fit in 64 bits", (long long)x,
                      spelling(op));
    r = op == FLY_ARITH_DIV ? x / y : x % y;
    break;
  }
  return fly_tuple_int(A, r);
}

static bool is_sum(FlyArith op) { return op == FLY_ARITH_ADD || op == FLY_ARITH_SUB; }

/* a op b once bases are coordinates (for + and -) or scaled (for *). An
 * integer meeting a tuple applies to all its leaves when `spread` (it was a
 * whole operand), else only a 0 of + or - may (a missing mode). */
static FlyTuple *arith(FlyAlgebra *A, FlyArith op, const FlyTuple *a, const FlyTuple *b,
                       bool spread) {
  if (a->kind == FLY_TUPLE_UNDERSCORE || a->kind == FLY_TUPLE_DYNAMIC ||
      b->kind == FLY_TUPLE_UNDERSCORE || b->kind == FLY_TUPLE_DYNAMIC)
    return fly_fail(
        A, "'%s' takes integers, not %s", spelling(op),
        text(A, a->kind == FLY_TUPLE_UNDERSCORE || a->kind == FLY_TUPLE_DYNAMIC ? a : b));
  if (a->kind == FLY_TUPLE_BASIS || b->kind == FLY_TUPLE_BASIS) {
    const FlyTuple *e = a->kind == FLY_TUPLE_BASIS ? a : b, *k = e == a ? b : a;
    bool scale = op == FLY_ARITH_MUL || (op == FLY_ARITH_DIV && e == a);
    if (!scale || k->kind != FLY_TUPLE_INT)
      return fly_fail(A,
                      "'%s' of %s and %s: a basis element is scaled by an integer (* or /) or "
                      "added to coordinates (+, -), nothing else",
                      spelling(op), text(A, a), text(A, b));
    if (op == FLY_ARITH_DIV && (k->value == 0 || e->value % k->value != 0))
      return fly_fail(A, "'/' of %s and %s: the scale is not a multiple of %lld (CuTe's safe_div)",
                      text(A, a), text(A, b), (long long)k->value);
    int64_t s;
    if (op == FLY_ARITH_DIV) {
      FlyTuple *q = int_op(A, op, e->value, k->value);
      return q ? fly_tuple_basis(A, q->value, e->nmodes, e->modes) : NULL;
    }
    return fly_mul(A, e->value, k->value, &s) ? fly_tuple_basis(A, s, e->nmodes, e->modes) : NULL;
  }
  if (a->kind == FLY_TUPLE_INT && b->kind == FLY_TUPLE_INT)
    return int_op(A, op, a->value, b->value);
  bool sa = a->kind == FLY_TUPLE_SEQ, sb = b->kind == FLY_TUPLE_SEQ;
  if (sa != sb && !spread && !(is_sum(op) && (sa ? b : a)->value == 0))
    return fly_fail(A, "'%s' of %s and %s: a number where the other has a tuple", spelling(op),
                    text(A, a), text(A, b));
  int n = sa ? a->n : b->n;
  if (sa && sb && a->n != b->n) {
    if (!is_sum(op))
      return fly_fail(A, "'%s' of %s and %s: the tuples do not have the same modes", spelling(op),
                      text(A, a), text(A, b));
    n = a->n > b->n ? a->n : b->n; /* the missing modes are 0 */
  }
  FlyTuple **e = elems(A, n), *zero = fly_tuple_int(A, 0);
  if (!e || !zero)
    return NULL;
  for (int i = 0; i < n; i++) {
    const FlyTuple *x = a->kind != FLY_TUPLE_SEQ ? a : i < a->n ? a->elem[i] : zero;
    const FlyTuple *y = b->kind != FLY_TUPLE_SEQ ? b : i < b->n ? b->elem[i] : zero;
    if (!(e[i] = arith(A, op, x, y, spread || sa != sb)))
      return NULL;
  }
  return fly_tuple_seq(A, n, e);
}

FlyTuple *fly_tuple_arith(FlyAlgebra *A, FlyArith op, const FlyTuple *a, const FlyTuple *b) {
  if (!a || !b)
    return NULL;
  if (is_sum(op)) {
    a = fly_tuple_as_coord(A, a);
    b = fly_tuple_as_coord(A, b);
    if (!a || !b)
      return NULL;
  }
  return arith(A, op, a, b, a->kind != FLY_TUPLE_SEQ || b->kind != FLY_TUPLE_SEQ);
}

/* ---- divisions of shapes --------------------------------------------------------- */

static bool plain(FlyAlgebra *A, const char *op, const FlyTuple *t) {
  if (t->kind == FLY_TUPLE_SEQ) {
    for (int i = 0; i < t->n; i++)
      if (!plain(A, op, t->elem[i]))
        return false;
    return true;
  }
  if (t->kind == FLY_TUPLE_INT)
    return true;
  fly_fail(A, "%s takes integers, not %s", op, text(A, t));
  return false;
}

static FlyTuple *ceil_div_rec(FlyAlgebra *A, const FlyTuple *a, const FlyTuple *b) {
  int64_t q;
  if (a->kind != FLY_TUPLE_SEQ) {
    if (!fly_tuple_product(A, b, &q))
      return NULL;
    if (q <= 0)
      return fly_fail(A, "ceil_div by %lld: the divisor must be positive", (long long)q);
    return fly_tuple_int(A, a->value / q + (a->value % q > 0));
  }
  if (b->kind != FLY_TUPLE_SEQ)
    return fly_tuple_ceil_div(A, (FlyTuple *)a, b->value);
  if (b->n > a->n)
    return fly_fail(A, "ceil_div of %s by %s: the divisor has more modes", text(A, a), text(A, b));
  FlyTuple **e = elems(A, a->n), *one = fly_tuple_int(A, 1);
  if (!e || !one)
    return NULL;
  for (int i = 0; i < a->n; i++)
    if (!(e[i] = ceil_div_rec(A, a->elem[i], i < b->n ? b->elem[i] : one)))
      return NULL;
  return fly_tuple_seq(A, a->n, e);
}

FlyTuple *fly_tuple_ceil_div_tuple(FlyAlgebra *A, const FlyTuple *a, const FlyTuple *b) {
  if (!a || !b || !plain(A, "ceil_div", a) || !plain(A, "ceil_div", b))
    return NULL;
  return ceil_div_rec(A, a, b);
}

/* shape_div of two positive integers: one must divide the other. */
static bool shape_div_int(FlyAlgebra *A, int64_t a, int64_t b, int64_t *out) {
  if (a < 1 || b < 1) {
    fly_fail(A, "shape_div of %lld by %lld: shapes are positive", (long long)a, (long long)b);
    return false;
  }
  if (a % b != 0 && b % a != 0) {
    fly_fail(A, "shape_div: %lld and %lld do not divide each other (the divisibility condition)",
             (long long)a, (long long)b);
    return false;
  }
  *out = a / b + (a % b != 0);
  return true;
}

static FlyTuple *shape_div_rec(FlyAlgebra *A, const FlyTuple *a, const FlyTuple *b) {
  int64_t q, r;
  if (a->kind != FLY_TUPLE_SEQ) {
    if (!fly_tuple_product(A, b, &q) || !shape_div_int(A, a->value, q, &r))
      return NULL;
    return fly_tuple_int(A, r);
  }
  FlyTuple **e = elems(A, a->n);
  if (!e)
    return NULL;
  if (b->kind == FLY_TUPLE_SEQ) {
    if (b->n != a->n)
      return fly_fail(A, "shape_div of %s by %s: the tuples do not have the same modes", text(A, a),
                      text(A, b));
    for (int i = 0; i < a->n; i++)
      if (!(e[i] = shape_div_rec(A, a->elem[i], b->elem[i])))
        return NULL;
    return fly_tuple_seq(A, a->n, e);
  }
  /* Each element takes what the ones before it left of the divisor. */
  int64_t rest = b->value;
  for (int i = 0; i < a->n; i++) {
    FlyTuple *d = fly_tuple_int(A, rest);
    if (!d || !(e[i] = shape_div_rec(A, a->elem[i], d)) || !fly_tuple_product(A, a->elem[i], &q) ||
        !shape_div_int(A, rest, q, &rest))
      return NULL;
  }
  return fly_tuple_seq(A, a->n, e);
}

FlyTuple *fly_tuple_shape_div(FlyAlgebra *A, const FlyTuple *a, const FlyTuple *b) {
  if (!a || !b || !plain(A, "shape_div", a) || !plain(A, "shape_div", b))
    return NULL;
  return shape_div_rec(A, a, b);
}

/* ---- comparisons and modes --------------------------------------------------------- */

static bool elem_less(FlyAlgebra *A, const FlyTuple *a, const FlyTuple *b, bool *out) {
  bool sa = a->kind == FLY_TUPLE_SEQ, sb = b->kind == FLY_TUPLE_SEQ;
  if (!sa && !sb) {
    *out = a->value < b->value;
    return true;
  }
  if (sa != sb) {
    fly_fail(A, "elem_less: %s and %s do not match (an integer against a tuple)", text(A, a),
             text(A, b));
    return false;
  }
  *out = true;
  for (int i = 0; i < a->n; i++) {
    bool less;
    if (i >= b->n) { /* a runs past b */
      *out = false;
      return true;
    }
    if (!elem_less(A, a->elem[i], b->elem[i], &less))
      return false;
    *out = *out && less;
  }
  return true;
}

bool fly_tuple_elem_less(FlyAlgebra *A, const FlyTuple *a, const FlyTuple *b, bool *out) {
  return a && b && plain(A, "elem_less", a) && plain(A, "elem_less", b) && elem_less(A, a, b, out);
}

FlyTuple *fly_tuple_product_each(FlyAlgebra *A, const FlyTuple *t) {
  int64_t p;
  if (!t)
    return NULL;
  if (t->kind != FLY_TUPLE_SEQ)
    return fly_tuple_product(A, t, &p) ? fly_tuple_int(A, p) : NULL;
  FlyTuple **e = elems(A, t->n);
  if (!e)
    return NULL;
  for (int i = 0; i < t->n; i++)
    if (!fly_tuple_product(A, t->elem[i], &p) || !(e[i] = fly_tuple_int(A, p)))
      return NULL;
  return fly_tuple_seq(A, t->n, e);
}

FlyTuple *fly_tuple_take(FlyAlgebra *A, FlyTuple *t, int begin, int end) {
  if (!t)
    return NULL;
  int r = fly_tuple_rank(t);
  if (begin < 0 || begin >= end || end > r)
    return fly_fail(A, "take(%d, %d) is not a non-empty range of the %d modes of %s", begin, end, r,
                    text(A, t));
  if (t->kind != FLY_TUPLE_SEQ)
    return fly_tuple_seq(A, 1, &t);
  return fly_tuple_seq(A, end - begin, t->elem + begin);
}
