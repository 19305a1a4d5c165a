/* fly_layout_coalesce.c — coalesce and filter, whole and by mode. */
#include "fly_layout_internal.h"

/* Merge adjacent flat modes when the second continues the first
 * (s0*d0 == d1, along the same basis element if they are ones), drop
 * size-1 modes. @post the same function on [0, size). */
static FlyLayout *coalesce_flat(FlyAlgebra *A, const FlyFlat *in) {
  FlyFlat out;
  if (!fly_flat_init(A, &out, in->n))
    return NULL;
  for (int i = 0; i < in->n; i++) {
    int64_t s = in->shape[i], d = in->stride[i], extent;
    if (s == 1)
      continue;
    int k = out.n - 1;
    if (k >= 0 && fly_flat_same_direction(&out, k, in, i) &&
        !__builtin_mul_overflow(out.shape[k], out.stride[k], &extent) && extent == d) {
      if (!fly_mul(A, out.shape[k], s, &out.shape[k]))
        return NULL;
      continue;
    }
    if (!fly_flat_push_basis(A, &out, s, d, in->basis[i]))
      return NULL;
  }
  return fly_flat_layout(A, &out); /* nothing left: 1:0 */
}

FlyLayout *fly_layout_coalesce(FlyAlgebra *A, const FlyLayout *L) {
  FlyFlat f;
  if (!L || !fly_flat_of(A, L, &f))
    return NULL;
  return coalesce_flat(A, &f);
}

FlyLayout *fly_layout_filter(FlyAlgebra *A, const FlyLayout *L) {
  FlyFlat f;
  if (!L || !fly_flat_of(A, L, &f))
    return NULL;
  for (int i = 0; i < f.n; i++)
    if (f.stride[i] == 0) /* 0 or a basis element scaled by 0 */
      f.shape[i] = 1;     /* CuTe's filter_zeros, then coalesce drops it */
  return coalesce_flat(A, &f);
}

typedef FlyLayout *(*WholeOp)(FlyAlgebra *, const FlyLayout *);

/* Apply op at the leaves of profile; modes past the profile stay as they are. */
static FlyLayout *by_profile(FlyAlgebra *A, const FlyLayout *L, const FlyTuple *profile,
                             WholeOp op) {
  if (!L || !profile)
    return NULL;
  if (profile->kind != FLY_TUPLE_SEQ)
    return op(A, L);
  int r = fly_layout_rank(L);
  if (profile->n > r)
    return fly_fail(A, "the profile has %d modes but the layout only %d", profile->n, r);
  FlyLayout **m = fly_alloc(A, (size_t)(r ? r : 1) * sizeof *m);
  if (!m)
    return NULL;
  for (int i = 0; i < r; i++) {
    FlyLayout *mode = fly_layout_get(A, L, i);
    m[i] = i < profile->n ? by_profile(A, mode, profile->elem[i], op) : mode;
    if (!m[i])
      return NULL;
  }
  return fly_layout_seq(A, r, m);
}

FlyLayout *fly_layout_coalesce_by(FlyAlgebra *A, const FlyLayout *L, const FlyTuple *profile) {
  return by_profile(A, L, profile, fly_layout_coalesce);
}

FlyLayout *fly_layout_filter_by(FlyAlgebra *A, const FlyLayout *L, const FlyTuple *profile) {
  return by_profile(A, L, profile, fly_layout_filter);
}
