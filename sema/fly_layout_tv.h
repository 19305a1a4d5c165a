/* fly_layout_tv.h — thread-value (TV) layouts of a tiled copy.
 *
 * CuTe's make_tiled_copy(atom, thr_layout, val_layout) (include/cute/atom/
 * copy_atom.hpp) describes who copies what: thr maps a coordinate of the
 * thread grid to a thread id, val a coordinate of one thread's block to a
 * value id. Their raked product lays the blocks out over a tile
 *   layout_mn = raked_product(thr, val)        (m,n) -> thread + size(thr) * value
 * and inverting it gives, for each (thread, value), the cell it owns
 *   tv   = right_inverse(layout_mn) o (size(thr),size(val)):(1,size(thr))
 *   tile = (size(mode 0 of layout_mn), size(mode 1 of layout_mn), ...)
 * so tv(t,v) is the column-major index m + M*n of a cell of the tile (M,N).
 * When thr and val are compact, every cell has exactly one owner. */
#ifndef FLY_LAYOUT_TV_H
#define FLY_LAYOUT_TV_H

#include "fly_layout.h"

typedef struct FlyTvLayout {
  FlyLayout *tv;  /* (thread, value) -> index in the tile, column-major */
  FlyTuple *tile; /* the tile's shape, e.g. (M,N): one integer per mode */
  /* The destination's TV layout where it differs from the source's (a warp-
     wide copy such as ldmatrix: lanes give rows, registers take pairs), or
     NULL: tv serves both. */
  FlyLayout *dst;
} FlyTvLayout;

/* Follows the conventions of fly_layout.h: NULL after recording an error
 * (whatever raked_product, right_inverse or composition reports), NULL at
 * once for a NULL input. */
FlyTvLayout *fly_tv_layout_make(FlyAlgebra *A, const FlyLayout *thr, const FlyLayout *val);

#endif
