/* fly_layout_product.c — logical_product and the products built on it.
 *
 * The product of a block L and a tiler B repeats L once for every element
 * of B, placing the copies in the space L leaves free:
 *   logical_product(L, B) =
 *     make_layout(L, composition(complement(L, size(L) * cosize(B)), B)). */
#include "fly_layout_internal.h"

static FlyLayout *product_by_layout(FlyAlgebra *A, const FlyLayout *L, const FlyLayout *B) {
  int64_t size, cosize, reach; /* the complement of L needs integer strides */
  if (!fly_layout_needs_integers(A, "logical_product", L) ||
      !fly_layout_needs_integers(A, "logical_product", B) || !fly_layout_size(A, L, &size) ||
      !fly_layout_cosize(A, B, &cosize) || !fly_mul(A, size, cosize, &reach))
    return NULL;
  FlyLayout *free_space = fly_layout_complement(A, L, fly_tuple_int(A, reach));
  return fly_layout_pair(A, fly_layout_raw(A, L->shape, L->stride),
                         fly_layout_composition(A, free_space, B));
}

FlyLayout *fly_layout_logical_product(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *T) {
  return fly_layout_by_tiler(A, L, T, product_by_layout, true, "logical_product");
}

FlyLayout *fly_layout_zipped_product(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *T) {
  return fly_layout_zip2_by(A, fly_layout_logical_product(A, L, T), T);
}

FlyLayout *fly_layout_tiled_product(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *T) {
  return fly_layout_unpack(A, fly_layout_zipped_product(A, L, T), false, true);
}

FlyLayout *fly_layout_flat_product(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *T) {
  return fly_layout_unpack(A, fly_layout_zipped_product(A, L, T), true, true);
}

/* Pad both to the same rank, take the product as whole layouts, and pair
 * the modes of the block with the modes of the repetition. */
static FlyLayout *rank_product(FlyAlgebra *A, const FlyLayout *L, const FlyLayout *B, bool raked) {
  const char *op = raked ? "raked_product" : "blocked_product";
  if (!L || !B || !fly_layout_needs_integers(A, op, L) || !fly_layout_needs_integers(A, op, B))
    return NULL;
  int r = fly_layout_rank(L) > fly_layout_rank(B) ? fly_layout_rank(L) : fly_layout_rank(B);
  FlyLayout *block = fly_layout_pad(A, L, r);
  FlyLayout *p = product_by_layout(A, block, fly_layout_pad(A, B, r));
  FlyLayout *inner = fly_layout_get(A, p, 0), *outer = fly_layout_get(A, p, 1);
  return fly_layout_zip(A, raked ? fly_layout_pair(A, outer, inner)
                                 : fly_layout_pair(A, inner, outer));
}

FlyLayout *fly_layout_blocked_product(FlyAlgebra *A, const FlyLayout *L, const FlyLayout *B) {
  return rank_product(A, L, B, false);
}

FlyLayout *fly_layout_raked_product(FlyAlgebra *A, const FlyLayout *L, const FlyLayout *B) {
  return rank_product(A, L, B, true);
}
