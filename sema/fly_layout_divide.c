/* fly_layout_divide.c — logical_divide and its zipped, tiled and flat forms.
 *
 * Dividing L by a tile B splits L's domain into (the elements B selects,
 * the repetitions of B that cover the rest of L):
 *   logical_divide(L, B) = composition(L, make_layout(B, complement(B, size(L)))).
 * CuTe passes shape(coalesce(L)) as the complement's cotarget; the size is
 * the definition and gives the same function wherever the tile divides L. */
#include "fly_layout_internal.h"

static FlyLayout *divide_by_layout(FlyAlgebra *A, const FlyLayout *L, FlyLayout *B) {
  int64_t size;
  if (!fly_layout_size(A, L, &size))
    return NULL;
  FlyLayout *rest = fly_layout_complement(A, B, fly_tuple_int(A, size));
  return fly_layout_composition(A, L, fly_layout_pair(A, B, rest));
}

FlyLayout *fly_layout_logical_divide(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *T) {
  if (!L || !T)
    return NULL;
  switch (T->kind) {
  case FLY_TILER_LAYOUT:
    return divide_by_layout(A, L, T->layout);
  case FLY_TILER_UNDERSCORE:
    return fly_layout_raw(A, L->shape, L->stride);
  case FLY_TILER_SEQ:
    break;
  }
  int r = fly_layout_rank(L);
  if (T->n > r)
    return fly_fail(A, "logical_divide: the tiler has %d modes but the layout only %d", T->n, r);
  FlyLayout **m = fly_alloc(A, (size_t)r * sizeof *m);
  if (!m)
    return NULL;
  for (int i = 0; i < r; i++) {
    FlyLayout *mode = fly_layout_get(A, L, i);
    m[i] = i < T->n ? fly_layout_logical_divide(A, mode, T->elem[i]) : mode;
    if (!m[i])
      return NULL;
  }
  return fly_layout_seq(A, r, m);
}

FlyLayout *fly_layout_zipped_divide(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *T) {
  return fly_layout_zip2_by(A, fly_layout_logical_divide(A, L, T), T);
}

FlyLayout *fly_layout_tiled_divide(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *T) {
  return fly_layout_unpack(A, fly_layout_zipped_divide(A, L, T), false, true);
}

FlyLayout *fly_layout_flat_divide(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *T) {
  return fly_layout_unpack(A, fly_layout_zipped_divide(A, L, T), true, true);
}
