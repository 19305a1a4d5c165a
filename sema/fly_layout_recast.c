/* fly_layout_recast.c — recast between element widths, and the largest
 * vector two layouts have in common. */
#include "fly_layout_internal.h"

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static int64_t abs64(int64_t x) { return x < 0 ? -x : x; }

/* One leaf s:d becomes (*shape):(*stride) when elements change width by n. */
typedef bool (*LeafCast)(FlyAlgebra *A, int64_t s, int64_t d, int64_t n, int64_t *shape,
                         int64_t *stride);

/* Wider elements: N old elements make one new one. A stride-1 mode shrinks
 * by N (rounded up, as CuTe does); other strides are divided by N. */
static bool upcast_leaf(FlyAlgebra *A, int64_t s, int64_t d, int64_t n, int64_t *shape,
                        int64_t *stride) {
  *shape = s;
  *stride = d;
  if (d == 0)
    return true;
  int64_t mag = abs64(d);
  if (mag % n != 0 && n % mag != 0) {
    fly_fail(A,
             "recast: stride %lld and the width ratio %lld do not divide each other "
             "(the divisibility condition)",
             (long long)d, (long long)n);
    return false;
  }
  *stride = (d < 0 ? -1 : 1) * fly_ceil_div(mag, n);
  *shape = fly_ceil_div(s, fly_ceil_div(n, mag));
  return true;
}

/* Narrower elements: one old element becomes N new ones. The stride-1 mode
 * grows by N; every other stride is multiplied by N. */
static bool downcast_leaf(FlyAlgebra *A, int64_t s, int64_t d, int64_t n, int64_t *shape,
                          int64_t *stride) {
  *shape = s;
  *stride = d;
  if (d == 1 || d == -1)
    return fly_mul(A, s, n, shape);
  return fly_mul(A, d, n, stride);
}

/* Applies cast at every leaf, keeping the tree; the new strides go to *stride_out. */
static FlyTuple *cast_leaves(FlyAlgebra *A, FlyTuple *s, FlyTuple *d, int64_t n, LeafCast cast,
                             FlyTuple **stride_out) {
  if (s->kind != FLY_TUPLE_SEQ) {
    int64_t shape, stride;
    if (!cast(A, s->value, d->value, n, &shape, &stride))
      return NULL;
    *stride_out = fly_tuple_int(A, stride);
    return fly_tuple_int(A, shape);
  }
  FlyTuple **es = fly_alloc(A, (size_t)(s->n ? s->n : 1) * sizeof *es);
  FlyTuple **ed = fly_alloc(A, (size_t)(s->n ? s->n : 1) * sizeof *ed);
  if (!es || !ed)
    return NULL;
  for (int i = 0; i < s->n; i++)
    if (!(es[i] = cast_leaves(A, s->elem[i], d->elem[i], n, cast, &ed[i])))
      return NULL;
  *stride_out = fly_tuple_seq(A, s->n, ed);
  return fly_tuple_seq(A, s->n, es);
}

static bool has_unit_stride(const FlyTuple *d) {
  if (d->kind != FLY_TUPLE_SEQ)
    return d->value == 1 || d->value == -1;
  for (int i = 0; i < d->n; i++)
    if (has_unit_stride(d->elem[i]))
      return true;
  return false;
}

FlyLayout *fly_layout_recast(FlyAlgebra *A, const FlyLayout *L, int old_bits, int new_bits) {
  if (!L || !fly_layout_needs_integers(A, "recast", L))
    return NULL;
  if (old_bits < 1 || new_bits < 1)
    return fly_fail(A, "recast: element widths must be positive (got %d and %d bits)", old_bits,
                    new_bits);
  int64_t g = gcd64(old_bits, new_bits), up = new_bits / g, down = old_bits / g;
  FlyTuple *s = L->shape, *d = L->stride;
  if (up > 1 && !(s = cast_leaves(A, s, d, up, upcast_leaf, &d)))
    return NULL;
  if (down > 1) {
    if (!has_unit_stride(d))
      return fly_fail(A, "recast to a narrower type needs a mode of stride 1");
    if (!(s = cast_leaves(A, s, d, down, downcast_leaf, &d)))
      return NULL;
  }
  return fly_layout_raw(A, s, d);
}

/* coalesce(a o right_inverse(b)): where a and b agree, index by index. */
static FlyLayout *common_prefix(FlyAlgebra *A, const FlyLayout *a, FlyLayout *inv_b) {
  return fly_layout_coalesce(A, fly_layout_composition(A, a, inv_b));
}

enum { SCAN_LIMIT = 1 << 20 };

/* a(inv_b(i)) == i for i < N, counted one index at a time: for the pairs
 * whose composition CuTe cannot form although they share a prefix, such as
 * (6,6):(1,7) and (8,3):(1,10), which share 6 elements. */
static bool count_common(FlyAlgebra *A, const FlyLayout *a, const FlyLayout *inv_b, int64_t *out) {
  int64_t size_a, size_r, x, y;
  if (!fly_layout_size(A, a, &size_a) || !fly_layout_size(A, inv_b, &size_r))
    return false;
  int64_t n = 0, limit = size_a < size_r ? size_a : size_r;
  for (; n < limit; n++) {
    if (n == SCAN_LIMIT) {
      fly_fail(A, "max_common_vector: the common prefix is longer than %d", SCAN_LIMIT);
      return false;
    }
    if (!fly_layout_eval(A, inv_b, n, &x) || !fly_layout_eval(A, a, x, &y))
      return false;
    if (y != n)
      break;
  }
  *out = n > 1 ? n : 1;
  return true;
}

bool fly_layout_max_common_vector(FlyAlgebra *A, const FlyLayout *a, const FlyLayout *b,
                                  int64_t *out) {
  if (!a || !b || A->failed || !fly_layout_needs_integers(A, "max_common_vector", a) ||
      !fly_layout_needs_integers(A, "max_common_vector", b))
    return false;
  FlyLayout *inv_b = fly_layout_right_inverse(A, b);
  if (!inv_b)
    return false;
  FlyLayout *first = fly_layout_get(A, common_prefix(A, a, inv_b), 0);
  if (!first) { /* the composition was refused: the session had no error before */
    fly_algebra_clear_error(A);
    return count_common(A, a, inv_b, out);
  }
  *out = first->stride->value == 1 ? first->shape->value : 1;
  return true;
}

FlyLayout *fly_layout_max_common_layout(FlyAlgebra *A, const FlyLayout *a, const FlyLayout *b) {
  if (!a || !b || !fly_layout_needs_integers(A, "max_common_layout", a) ||
      !fly_layout_needs_integers(A, "max_common_layout", b))
    return NULL;
  FlyLayout *inv_b = fly_layout_right_inverse(A, b);
  FlyLayout *first = fly_layout_get(A, common_prefix(A, a, inv_b), 0);
  if (!first)
    return NULL;
  if (first->stride->value != 1)
    return fly_layout_leaf(A, 1, 0);
  return fly_layout_composition(A, inv_b, first);
}
