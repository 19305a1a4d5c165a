/* fly_layout_inverse.c — complement, right_inverse and left_inverse.
 *
 * All three look at a layout's modes sorted by stride: a layout is
 * injective with a complement exactly when, in that order, each stride is a
 * multiple of the extent (shape * stride) of the mode before it. */
#include "fly_layout_internal.h"

/* Mode indices of f sorted by stride. This is CuTe's SortByKey, an exchange
 * sort, which is not stable: among equal strides it decides which mode a
 * right_inverse follows, so Fly sorts the same way to pick the same one. */
static int *sort_by_stride(FlyAlgebra *A, const FlyFlat *f) {
  int *idx = fly_alloc(A, (size_t)f->n * sizeof *idx);
  if (!idx)
    return NULL;
  for (int i = 0; i < f->n; i++)
    idx[i] = i;
  for (int i = 0; i < f->n; i++)
    for (int j = i + 1; j < f->n; j++)
      if (f->stride[idx[j]] < f->stride[idx[i]]) {
        int t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
      }
  return idx;
}

static bool flat_coalesced(FlyAlgebra *A, const FlyLayout *L, FlyFlat *f,
                           FlyLayout *(*simplify)(FlyAlgebra *, const FlyLayout *)) {
  FlyLayout *c = simplify(A, L);
  return c && fly_flat_of(A, c, f);
}

/* Whether f's modes, taken in stride order (idx), are what complement and
 * left_inverse need: no negative stride; each mode starts at or after the
 * extent of the modes below it (else they overlap or interleave); and its
 * stride is a multiple of that extent (complement: the gap below it must be
 * a layout) or of the stride below it (left_inverse's divisibility
 * condition). Stride-0 modes are skipped. */
static bool sorted_modes_admissible(FlyAlgebra *A, const char *op, const FlyFlat *f, const int *idx,
                                    bool by_extent) {
  int64_t prev = 1, extent = 1;
  for (int k = 0; k < f->n; k++) {
    int64_t s = f->shape[idx[k]], d = f->stride[idx[k]];
    if (d == 0)
      continue;
    if (d < 0) {
      fly_fail(A, "%s: negative stride %lld", op, (long long)d);
      return false;
    }
    if (d < extent) {
      fly_fail(A,
               "%s: mode %lld:%lld starts inside the modes of smaller stride, which reach "
               "%lld: the layout is not injective or its modes interleave",
               op, (long long)s, (long long)d, (long long)extent);
      return false;
    }
    if (by_extent && d % extent != 0) {
      fly_fail(A,
               "%s: stride %lld is not a multiple of %lld, so the gaps of the layout have no "
               "layout shape",
               op, (long long)d, (long long)extent);
      return false;
    }
    if (!by_extent && d % prev != 0) {
      fly_fail(A,
               "%s: stride %lld is not a multiple of the smaller stride %lld (the left inverse "
               "divisibility condition)",
               op, (long long)d, (long long)prev);
      return false;
    }
    prev = d;
    if (!fly_mul(A, s, d, &extent))
      return false;
  }
  return true;
}

/* ---- complement -------------------------------------------------------- */

FlyLayout *fly_layout_complement(FlyAlgebra *A, const FlyLayout *L, const FlyTuple *cotarget) {
  FlyFlat f, out;
  int64_t target;
  if (!L || !cotarget || !fly_layout_needs_integers(A, "complement", L) ||
      !fly_tuple_product(A, cotarget, &target))
    return NULL;
  if (target < 1)
    return fly_fail(A, "complement: the cotarget %lld is not positive", (long long)target);
  if (!flat_coalesced(A, L, &f, fly_layout_filter) || !fly_flat_init(A, &out, f.n + 1))
    return NULL;
  int64_t cur = 1; /* everything below cur is covered by L and the result so far */
  if (!(f.n == 1 && f.stride[0] == 0)) { /* filter leaves 1:0 when nothing is left */
    int *idx = sort_by_stride(A, &f);
    if (!idx || !sorted_modes_admissible(A, "complement", &f, idx, true))
      return NULL;
    for (int k = 0; k < f.n; k++) { /* each gap below a mode becomes a mode */
      int64_t s = f.shape[idx[k]], d = f.stride[idx[k]];
      if (!fly_flat_push(A, &out, d / cur, cur) || !fly_mul(A, s, d, &cur))
        return NULL;
    }
  }
  /* The rest reaches the cotarget: CuTe's ceil_div(cotarget, cur), multiplied out. */
  int64_t rest;
  FlyTuple *q = fly_tuple_ceil_div(A, (FlyTuple *)cotarget, cur);
  if (!q || !fly_tuple_product(A, q, &rest) || !fly_flat_push(A, &out, rest, cur))
    return NULL;
  return fly_layout_coalesce(A, fly_flat_layout(A, &out));
}

/* ---- inverses ---------------------------------------------------------- */

/* Exclusive prefix products of f's shapes: the index where each mode starts. */
static int64_t *starts_of(FlyAlgebra *A, const FlyFlat *f) {
  int64_t *p = fly_alloc(A, (size_t)f->n * sizeof *p), acc = 1;
  if (!p)
    return NULL;
  for (int i = 0; i < f->n; i++) {
    p[i] = acc;
    if (i + 1 < f->n && !fly_mul(A, acc, f->shape[i], &acc))
      return NULL;
  }
  return p;
}

FlyLayout *fly_layout_right_inverse(FlyAlgebra *A, const FlyLayout *L) {
  FlyFlat f, out;
  if (!L || !fly_layout_needs_integers(A, "right_inverse", L) ||
      !flat_coalesced(A, L, &f, fly_layout_coalesce) || !fly_flat_init(A, &out, f.n))
    return NULL;
  int64_t *start = starts_of(A, &f);
  int *idx = sort_by_stride(A, &f);
  if (!start || !idx)
    return NULL;
  int64_t cur = 1; /* the next index the result must reach */
  for (int k = 0; k < f.n; k++) {
    int i = idx[k];
    if (f.stride[i] != cur)
      continue;
    if (!fly_flat_push(A, &out, f.shape[i], start[i]) || !fly_mul(A, f.shape[i], cur, &cur))
      return NULL;
  }
  return fly_layout_coalesce(A, fly_flat_layout(A, &out));
}

FlyLayout *fly_layout_left_inverse(FlyAlgebra *A, const FlyLayout *L) {
  FlyFlat f, out;
  if (!L || !fly_layout_needs_integers(A, "left_inverse", L) ||
      !flat_coalesced(A, L, &f, fly_layout_coalesce) || !fly_flat_init(A, &out, f.n + 1))
    return NULL;
  int64_t *start = starts_of(A, &f);
  int *idx = sort_by_stride(A, &f);
  if (!start || !idx || !sorted_modes_admissible(A, "left_inverse", &f, idx, false))
    return NULL;
  /* An index j of the image is read as digits of radix d_k / d_{k-1} along
   * the sorted strides; digit k is the coordinate of mode k, which goes back
   * to where that mode starts in L's domain. The digit below the smallest
   * stride is always 0 in the image (stride 0 in the result). */
  int64_t prev = 1;
  int last = -1;
  for (int k = 0; k < f.n; k++) {
    int i = idx[k];
    int64_t d = f.stride[i];
    if (d == 0) /* a broadcast mode: any of its coordinates will do */
      continue;
    bool ok =
        last < 0 ? fly_flat_push(A, &out, d, 0) : fly_flat_push(A, &out, d / prev, start[last]);
    if (!ok)
      return NULL;
    prev = d;
    last = i;
  }
  if (last < 0) /* every stride is 0: the image is {0} */
    return fly_layout_leaf(A, f.shape[idx[f.n - 1]], 0);
  if (!fly_flat_push(A, &out, f.shape[last], start[last]))
    return NULL;
  return fly_layout_coalesce(A, fly_flat_layout(A, &out));
}
