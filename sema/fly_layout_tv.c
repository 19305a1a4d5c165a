/* fly_layout_tv.c — the TV layout of make_tiled_copy, as CuTe builds it. */
#include "fly_layout_tv.h"

/* CuTe's product_each(shape(L)): the size of each mode, as a tuple with one
 * integer per mode (a rank-1 layout gives a rank-1 tuple, (8)). */
static FlyTuple *sizes_of_modes(FlyAlgebra *A, const FlyLayout *L) {
  int r = fly_layout_rank(L);
  FlyTuple **sizes = fly_alloc(A, (size_t)r * sizeof *sizes);
  if (!sizes)
    return NULL;
  for (int i = 0; i < r; i++) {
    int64_t n;
    FlyLayout *mode = fly_layout_get(A, L, i);
    if (!fly_layout_size(A, mode, &n) || !(sizes[i] = fly_tuple_int(A, n)))
      return NULL;
  }
  return fly_tuple_seq(A, r, sizes);
}

FlyTvLayout *fly_tv_layout_make(FlyAlgebra *A, const FlyLayout *thr, const FlyLayout *val) {
  int64_t threads, values;
  if (!thr || !val || !fly_layout_size(A, thr, &threads) || !fly_layout_size(A, val, &values))
    return NULL;
  FlyLayout *layout_mn = fly_layout_raked_product(A, thr, val);
  if (!layout_mn)
    return NULL;
  /* with_shape(T,V) is composition with the compact column-major (T,V), so
   * (t,v) first becomes the index t + T*v of layout_mn's codomain. */
  FlyTuple *tv_shape = fly_tuple_pair(A, fly_tuple_int(A, threads), fly_tuple_int(A, values));
  FlyLayout *tv = fly_layout_composition(A, fly_layout_right_inverse(A, layout_mn),
                                         fly_layout_col_major(A, tv_shape));
  FlyTuple *tile = sizes_of_modes(A, layout_mn);
  FlyTvLayout *T = tv && tile ? fly_alloc(A, sizeof *T) : NULL;
  if (T) {
    T->tv = tv;
    T->tile = tile;
    T->dst = NULL;
  }
  return T;
}
