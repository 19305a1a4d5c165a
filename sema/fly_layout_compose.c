/* fly_layout_compose.c — composition: result(c) = L(B(c)).
 *
 * B is handled one leaf n:r at a time (composition distributes over B's
 * modes). L is flattened and coalesced with its last mode made unbounded:
 * indices past size(L) continue along the last stride, which is what lets
 * a tile reach past the layout it is carved from. Walking L's modes, the
 * r-strided samples either skip a whole mode (r a multiple of its shape) or
 * take shape/r of its elements and carry on in the next mode with stride 1.
 * CuTe only asserts the divisibility conditions when they are static and
 * otherwise computes a wrong layout; here each is checked exactly, and an
 * inadmissible pair is an error naming the mode.
 *
 * L's strides may be basis elements: the result's strides are those scaled
 * by integers, and modes merge only along the same basis element. A leaf of
 * B whose stride is a basis element s@i reads mode i of L, as CuTe's
 * composition does: it composes mode i of L with n:s. */
#include "fly_layout_internal.h"

/* L's flat modes, coalesced, with the last one unbounded (shape 0 marks it). */
static bool lhs_modes(FlyAlgebra *A, const FlyLayout *L, FlyFlat *out) {
  FlyFlat f;
  if (!fly_flat_of(A, L, &f) || !fly_flat_init(A, out, f.n))
    return false;
  for (int i = 0; i < f.n; i++) {
    bool last = i == f.n - 1;
    int64_t s = last ? 0 : f.shape[i], d = f.stride[i], extent;
    if (s == 1)
      continue;
    int k = out->n - 1;
    if (k >= 0 && fly_flat_same_direction(out, k, &f, i) &&
        !__builtin_mul_overflow(out->shape[k], out->stride[k], &extent) && extent == d) {
      if (last)
        out->shape[k] = 0;
      else if (!fly_mul(A, out->shape[k], s, &out->shape[k]))
        return false;
      continue;
    }
    if (!fly_flat_push_basis(A, out, s, d, f.basis[i]))
      return false;
  }
  /* The empty layout ():() maps everything to 0, like an unbounded 1:0. */
  return out->n > 0 || fly_flat_push(A, out, 0, 0);
}

/* `alone`: B is this single leaf. Then samples that stay inside one mode of
 * L are fine even when the stride does not divide that mode's shape; when B
 * has other modes their offsets add up and would cross the mode's end, so
 * CuTe's stride divisibility condition must hold exactly. */
static FlyLayout *compose_leaf(FlyAlgebra *A, const FlyFlat *lhs, int64_t n, int64_t r,
                               bool alone) {
  if (r == 0 || n == 1) /* every sample is L(0) */
    return fly_layout_leaf(A, n, 0);
  if (r < 0)
    return fly_fail(A, "composition: the right-hand layout has a negative stride %lld",
                    (long long)r);
  FlyFlat out;
  if (!fly_flat_init(A, &out, lhs->n))
    return NULL;
  int64_t rest_n = n, rest_r = r, d;
  for (int k = 0; k < lhs->n && rest_n > 1; k++) {
    int64_t s = lhs->shape[k];
    if (s == 0) { /* the unbounded last mode takes everything left */
      if (!fly_mul(A, rest_r, lhs->stride[k], &d) ||
          !fly_flat_push_basis(A, &out, rest_n, d, lhs->basis[k]))
        return NULL;
      rest_n = 1;
      break;
    }
    if (rest_r % s == 0) { /* the samples skip this mode entirely */
      rest_r /= s;
      continue;
    }
    if (rest_r > s)
      return fly_fail(A,
                      "composition: stride %lld and shape %lld do not divide each other "
                      "(the stride divisibility condition)",
                      (long long)rest_r, (long long)s);
    int64_t take = s / rest_r;
    if (s % rest_r != 0) {
      take++;
      if (rest_n > take || !alone)
        return fly_fail(A,
                        "composition: stride %lld does not divide shape %lld "
                        "(the stride divisibility condition)",
                        (long long)rest_r, (long long)s);
    }
    if (!fly_mul(A, rest_r, lhs->stride[k], &d))
      return NULL;
    if (rest_n <= take) { /* all remaining samples fall in this mode */
      if (!fly_flat_push_basis(A, &out, rest_n, d, lhs->basis[k]))
        return NULL;
      rest_n = 1;
      break;
    }
    if (rest_n % take != 0)
      return fly_fail(A,
                      "composition: shape %lld is not a multiple of %lld "
                      "(the shape divisibility condition)",
                      (long long)rest_n, (long long)take);
    if (!fly_flat_push_basis(A, &out, take, d, lhs->basis[k]))
      return NULL;
    rest_n /= take;
    rest_r = 1;
  }
  return fly_flat_layout(A, &out);
}

/* The mode of L a basis element's path leads to (CuTe's basis_get). */
static FlyLayout *basis_mode(FlyAlgebra *A, const FlyLayout *L, const FlyTuple *e) {
  FlyLayout *m = fly_layout_raw(A, L->shape, L->stride);
  for (int k = 0; k < e->nmodes && m; k++) {
    if (e->modes[k] >= fly_layout_rank(m)) {
      char *es = fly_tuple_str(A, e), *ms = fly_layout_str(A, m);
      return fly_fail(A, "composition: the stride %s names mode %d, but %s has %d", es ? es : "?",
                      e->modes[k], ms ? ms : "?", fly_layout_rank(m));
    }
    m = fly_layout_get(A, m, e->modes[k]);
  }
  return m;
}

/* lhs: L's modes (lhs_modes), for B's integer strides. */
static FlyLayout *compose_tree(FlyAlgebra *A, const FlyLayout *L, const FlyFlat *lhs, FlyTuple *s,
                               FlyTuple *d, bool alone) {
  if (s->kind != FLY_TUPLE_SEQ && d->kind == FLY_TUPLE_BASIS) {
    FlyFlat sub;
    FlyLayout *m = basis_mode(A, L, d);
    if (!m || !lhs_modes(A, m, &sub))
      return NULL;
    return compose_leaf(A, &sub, s->value, d->value, alone);
  }
  if (s->kind != FLY_TUPLE_SEQ)
    return compose_leaf(A, lhs, s->value, d->value, alone);
  FlyLayout **m = fly_alloc(A, (size_t)(s->n ? s->n : 1) * sizeof *m);
  if (!m)
    return NULL;
  for (int i = 0; i < s->n; i++)
    if (!(m[i] = compose_tree(A, L, lhs, s->elem[i], d->elem[i], alone)))
      return NULL;
  return fly_layout_seq(A, s->n, m);
}

FlyLayout *fly_layout_composition(FlyAlgebra *A, const FlyLayout *L, const FlyLayout *B) {
  FlyFlat lhs;
  if (!L || !B || !lhs_modes(A, L, &lhs))
    return NULL;
  return compose_tree(A, L, &lhs, B->shape, B->stride, fly_tuple_leaf_count(B->shape) == 1);
}

static FlyLayout *compose_op(FlyAlgebra *A, const FlyLayout *L, const FlyLayout *B) {
  return fly_layout_composition(A, L, B);
}

FlyLayout *fly_layout_compose_tiler(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *T) {
  return fly_layout_by_tiler(A, L, T, compose_op, false, "composition");
}
