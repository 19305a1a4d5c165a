/* fly_layout_divide.c — logical_divide and its zipped, tiled and flat forms.
 *
 * Dividing L by a tile B splits L's domain into (the elements B selects,
 * the repetitions of B that cover the rest of L):
 *   logical_divide(L, B) = composition(L, make_layout(B, complement(B, size(L)))).
 * CuTe passes shape(coalesce(L)) as the complement's cotarget; the size is
 * the definition and gives the same function wherever the tile divides L. */
#include "fly_layout_internal.h"

static FlyLayout *divide_by_layout(FlyAlgebra *A, const FlyLayout *L, const FlyLayout *B) {
  int64_t size; /* L may have basis strides: only the tile needs a complement */
  if (!fly_layout_size(A, L, &size) || !fly_layout_needs_integers(A, "logical_divide", B))
    return NULL;
  FlyLayout *rest = fly_layout_complement(A, B, fly_tuple_int(A, size));
  return fly_layout_composition(A, L, fly_layout_pair(A, (FlyLayout *)B, rest));
}

FlyLayout *fly_layout_logical_divide(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *T) {
  return fly_layout_by_tiler(A, L, T, divide_by_layout, true, "logical_divide");
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
