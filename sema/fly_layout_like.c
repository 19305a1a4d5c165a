/* fly_layout_like.c — compact layouts made after another layout (CuTe's
 * make_layout_like, make_fragment_like and tile_to_shape) and the way back
 * from an index of a compact layout to its coordinate (get_hier_coord,
 * get_flat_coord, get_1d_coord). */
#include "fly_layout_internal.h"

/* A tuple congruent to shape whose leaves are v[*k], v[*k + 1], ... */
static FlyTuple *with_leaves(FlyAlgebra *A, const FlyTuple *shape, const int64_t *v, int *k) {
  if (shape->kind != FLY_TUPLE_SEQ)
    return fly_tuple_int(A, v[(*k)++]);
  FlyTuple **e = fly_alloc(A, (size_t)(shape->n ? shape->n : 1) * sizeof *e);
  if (!e)
    return NULL;
  for (int i = 0; i < shape->n; i++)
    if (!(e[i] = with_leaves(A, shape->elem[i], v, k)))
      return NULL;
  return fly_tuple_seq(A, shape->n, e);
}

/* Compact strides for shape: the leaf with the smallest key (the leaves of
 * a tuple congruent to shape; NULL: the leaves' positions, column-major)
 * gets stride 1, the next continues after it, ties in the order of the
 * leaves. A leaf of size 1 gets stride 0, as in Fly's other compact
 * layouts, and so does every leaf where `zeros` (NULL: none) has a 0, which
 * keeps a broadcast mode broadcast (CuTe's filter_zeros). */
static FlyTuple *compact_by_key(FlyAlgebra *A, FlyTuple *shape, const FlyTuple *key,
                                const FlyTuple *zeros) {
  int n = fly_tuple_leaf_count(shape);
  if (n > FLY_MAX_MODES)
    return fly_fail(A, "too many modes in a layout (limit is %d)", FLY_MAX_MODES);
  FlyTuple **s = fly_alloc(A, (size_t)n * sizeof *s), **k = fly_alloc(A, (size_t)n * sizeof *k);
  FlyTuple **z = fly_alloc(A, (size_t)n * sizeof *z);
  int64_t *stride = fly_alloc(A, (size_t)n * sizeof *stride);
  bool *done = fly_alloc(A, (size_t)n * sizeof *done);
  if (!s || !k || !z || !stride || !done)
    return NULL;
  fly_tuple_leaves(shape, s, n);
  if (key)
    fly_tuple_leaves((FlyTuple *)key, k, n);
  if (zeros)
    fly_tuple_leaves((FlyTuple *)zeros, z, n);
  int64_t next = 1;
  for (int step = 0; step < n; step++) {
    int best = -1;
    for (int i = 0; i < n; i++)
      if (!done[i] && (best < 0 || (key && k[i]->value < k[best]->value)))
        best = i;
    done[best] = true;
    if (s[best]->value == 1 || (zeros && z[best]->value == 0))
      continue; /* stride 0 */
    stride[best] = next;
    if (!fly_mul(A, next, s[best]->value, &next))
      return NULL;
  }
  int at = 0;
  return with_leaves(A, shape, stride, &at);
}

FlyLayout *fly_layout_like(FlyAlgebra *A, const FlyLayout *L) {
  if (!L || !fly_layout_needs_integers(A, "make_layout_like", L))
    return NULL;
  return fly_layout_make(A, L->shape, compact_by_key(A, L->shape, L->stride, L->stride));
}

FlyLayout *fly_layout_fragment_like(FlyAlgebra *A, const FlyLayout *L) {
  if (!L || !fly_layout_needs_integers(A, "make_fragment_like", L))
    return NULL;
  int r = fly_layout_rank(L);
  if (r < 2)
    return fly_layout_col_major(A, L->shape);
  /* Mode 0, the atom's values, column-major (its broadcast leaves stay
   * broadcast); the other modes compact in the order of L's strides, then
   * laid out after it. */
  FlyLayout *m0 = fly_layout_get(A, L, 0), *rest = fly_layout_take(A, L, 1, r);
  if (!m0 || !rest)
    return NULL;
  FlyLayout *block = fly_layout_make(A, m0->shape, compact_by_key(A, m0->shape, NULL, m0->stride));
  FlyLayout *tiles =
      fly_layout_make(A, rest->shape, compact_by_key(A, rest->shape, rest->stride, NULL));
  FlyLayout *F = fly_layout_tiled_product(A, block, fly_tiler_layout(A, tiles));
  if (r > 2 || !F)
    return F;
  /* A single other mode is a tuple of one there (CuTe's take<1,2>): it
   * comes back as the mode L has, so (8,16) gives (8,16), not (8,(16)). */
  return fly_layout_pair(A, fly_layout_get(A, F, 0), fly_layout_get(A, fly_layout_get(A, F, 1), 0));
}

FlyLayout *fly_layout_tile_to_shape(FlyAlgebra *A, const FlyLayout *block, FlyTuple *target,
                                    const FlyTuple *order) {
  if (!block || !target || !fly_layout_needs_integers(A, "tile_to_shape", block))
    return NULL;
  int r = fly_tuple_rank(target);
  if (fly_layout_rank(block) > r)
    return fly_fail(A, "tile_to_shape: the block has %d modes but the target shape only %d",
                    fly_layout_rank(block), r);
  FlyLayout *padded = fly_layout_pad(A, block, r);
  FlyTuple *have = padded ? fly_tuple_product_each(A, padded->shape) : NULL;
  FlyTuple *want = fly_tuple_product_each(A, target);
  FlyTuple *reps = have && want ? fly_tuple_ceil_div_tuple(A, want, have) : NULL;
  FlyTuple *back = reps ? fly_tuple_arith(A, FLY_ARITH_MUL, reps, have) : NULL;
  if (!back)
    return NULL;
  if (!fly_tuple_equal(back, want)) {
    char *h = fly_tuple_str(A, have), *w = fly_tuple_str(A, want);
    return fly_fail(A, "tile_to_shape: the block's shape %s does not divide the target shape %s",
                    h ? h : "?", w ? w : "?");
  }
  FlyLayout *tiles =
      order ? fly_layout_ordered(A, reps, (FlyTuple *)order) : fly_layout_col_major(A, reps);
  return fly_layout_blocked_product(A, padded, tiles);
}

/* ---- from an index back to the coordinate ---------------------------------------------- */

/* CuTe's idx2crd(idx, shape, stride): each leaf's coordinate is
 * (idx / stride) % shape. */
static FlyTuple *hier(FlyAlgebra *A, int64_t idx, const FlyTuple *s, const FlyTuple *d) {
  if (s->kind == FLY_TUPLE_SEQ) {
    FlyTuple **e = fly_alloc(A, (size_t)(s->n ? s->n : 1) * sizeof *e);
    if (!e)
      return NULL;
    for (int i = 0; i < s->n; i++)
      if (!(e[i] = hier(A, idx, s->elem[i], d->elem[i])))
        return NULL;
    return fly_tuple_seq(A, s->n, e);
  }
  if (s->value == 1)
    return fly_tuple_int(A, 0);
  if (d->value <= 0)
    return fly_fail(A,
                    "the stride %lld of a mode of size %lld has no inverse: the layout is not "
                    "compact",
                    (long long)d->value, (long long)s->value);
  return fly_tuple_int(A, idx / d->value % s->value);
}

FlyTuple *fly_layout_hier_coord(FlyAlgebra *A, const FlyLayout *L, int64_t idx) {
  if (!L || !fly_layout_needs_integers(A, "get_hier_coord", L))
    return NULL;
  if (idx < 0)
    return fly_fail(A, "index %lld is negative", (long long)idx);
  FlyTuple *c = hier(A, idx, L->shape, L->stride);
  int64_t back;
  if (!c || !fly_layout_crd2idx(A, c, L, &back))
    return NULL;
  if (back != idx) { /* not an index L gives */
    char *ls = fly_layout_str(A, L);
    return fly_fail(A, "%s does not give the index %lld", ls ? ls : "?", (long long)idx);
  }
  return c;
}

/* The column-major 1-D index of coordinate c in shape. */
static bool colex(FlyAlgebra *A, const FlyTuple *c, FlyTuple *shape, int64_t *out) {
  FlyLayout *C = fly_layout_col_major(A, shape);
  return C && fly_layout_crd2idx(A, c, C, out);
}

FlyTuple *fly_layout_flat_coord(FlyAlgebra *A, const FlyLayout *L, int64_t idx) {
  FlyTuple *c = fly_layout_hier_coord(A, L, idx);
  if (!c)
    return NULL;
  int r = fly_layout_rank(L);
  int64_t v;
  if (L->shape->kind != FLY_TUPLE_SEQ)
    return colex(A, c, L->shape, &v) ? fly_tuple_int(A, v) : NULL;
  FlyTuple **e = fly_alloc(A, (size_t)(r ? r : 1) * sizeof *e);
  if (!e)
    return NULL;
  for (int i = 0; i < r; i++)
    if (!colex(A, c->elem[i], L->shape->elem[i], &v) || !(e[i] = fly_tuple_int(A, v)))
      return NULL;
  return fly_tuple_seq(A, r, e);
}

bool fly_layout_1d_coord(FlyAlgebra *A, const FlyLayout *L, int64_t idx, int64_t *out) {
  FlyTuple *c = fly_layout_hier_coord(A, L, idx);
  return c && colex(A, c, L->shape, out);
}
