/* fly_layout_tile.c — gathering the modes of divides and products.
 *
 * logical_divide and logical_product leave, at each mode the tiler names, a
 * rank-2 pair (tile, rest). zip2_by gathers the tiles into one mode and the
 * rests (then the modes the tiler did not name) into another; tiled_ and
 * flat_ then unpack one or both of those into the top level. */
#include "fly_layout_internal.h"

FlyLayout *fly_layout_by_tiler(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *T, FlyTileOp op,
                               bool keep_rest, const char *name) {
  if (!L || !T)
    return NULL;
  switch (T->kind) {
  case FLY_TILER_LAYOUT:
    return op(A, L, T->layout);
  case FLY_TILER_UNDERSCORE:
    return fly_layout_raw(A, L->shape, L->stride);
  case FLY_TILER_SEQ:
    break;
  }
  int r = fly_layout_rank(L);
  if (T->n > r)
    return fly_fail(A, "%s: the tiler has %d modes but the layout only %d", name, T->n, r);
  int n = keep_rest ? r : T->n;
  FlyLayout **m = fly_alloc(A, (size_t)(n ? n : 1) * sizeof *m);
  if (!m)
    return NULL;
  for (int i = 0; i < n; i++) {
    FlyLayout *mode = fly_layout_get(A, L, i);
    m[i] = i < T->n ? fly_layout_by_tiler(A, mode, T->elem[i], op, keep_rest, name) : mode;
    if (!m[i])
      return NULL;
  }
  return fly_layout_seq(A, n, m);
}

FlyLayout *fly_layout_zip2_by(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *guide) {
  if (!L || !guide)
    return NULL;
  if (guide->kind == FLY_TILER_UNDERSCORE) /* untiled: trivial tile, whole mode is rest */
    return fly_layout_pair(A, fly_layout_leaf(A, 1, 0), fly_layout_raw(A, L->shape, L->stride));
  if (guide->kind == FLY_TILER_LAYOUT) {
    if (fly_layout_rank(L) != 2)
      return fly_fail(A, "internal: a tiled mode is not a (tile, rest) pair");
    return fly_layout_raw(A, L->shape, L->stride);
  }
  int n = guide->n, r = fly_layout_rank(L);
  if (n > r)
    return fly_fail(A, "the tiler has %d modes but the layout only %d", n, r);
  FlyLayout **tiles = fly_alloc(A, (size_t)(n ? n : 1) * sizeof *tiles);
  FlyLayout **rests = fly_alloc(A, (size_t)r * sizeof *rests);
  if (!tiles || !rests)
    return NULL;
  for (int i = 0; i < r; i++) {
    FlyLayout *mode = fly_layout_get(A, L, i);
    if (i >= n) {
      rests[i] = mode;
      continue;
    }
    FlyLayout *split = fly_layout_zip2_by(A, mode, guide->elem[i]);
    tiles[i] = fly_layout_get(A, split, 0);
    rests[i] = fly_layout_get(A, split, 1);
    if (!tiles[i] || !rests[i])
      return NULL;
  }
  return fly_layout_pair(A, fly_layout_seq(A, n, tiles), fly_layout_seq(A, r, rests));
}

/* The modes of M, or M itself as one mode when `spread` is false. CuTe
 * spreads by slicing with repeat<rank(M)>(_), and repeat<1>(_) is a bare `_`,
 * so a mode of rank 1 such as (4) stays whole, parentheses included. */
static int put_modes(FlyAlgebra *A, FlyLayout *M, bool spread, FlyLayout **out) {
  if (!spread || M->shape->kind != FLY_TUPLE_SEQ || M->shape->n == 1) {
    out[0] = M;
    return 1;
  }
  for (int i = 0; i < M->shape->n; i++)
    if (!(out[i] = fly_layout_get(A, M, i)))
      return -1;
  return M->shape->n;
}

FlyLayout *fly_layout_unpack(FlyAlgebra *A, const FlyLayout *L, bool first, bool second) {
  if (!L)
    return NULL;
  FlyLayout *m0 = fly_layout_get(A, L, 0), *m1 = fly_layout_get(A, L, 1);
  if (!m0 || !m1)
    return NULL;
  int cap = fly_layout_rank(m0) + fly_layout_rank(m1);
  FlyLayout **out = fly_alloc(A, (size_t)cap * sizeof *out);
  if (!out)
    return NULL;
  int a = put_modes(A, m0, first, out);
  int b = a < 0 ? -1 : put_modes(A, m1, second, out + a);
  if (b < 0)
    return NULL;
  return fly_layout_seq(A, a + b, out);
}
