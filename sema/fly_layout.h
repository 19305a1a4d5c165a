/* fly_layout.h — CuTe layouts (shape:stride) and their algebra.
 *
 * A layout maps a coordinate, hierarchical or a plain index, to an index:
 * L(c) = sum_i c_i * stride_i over the leaves. Names and semantics follow
 * CuTe's include/cute/layout.hpp; docs/layout-algebra.md gives an example of
 * every operation and lists where Fly deliberately differs.
 *
 * Conventions: every operation takes the session first, returns an arena
 * value or NULL after recording an error, and returns NULL at once when an
 * input is NULL (so derived operations chain). Inputs are never modified. */
#ifndef FLY_LAYOUT_H
#define FLY_LAYOUT_H

#include "fly_tuple.h"

typedef struct FlyLayout {
  FlyTuple *shape;  /* positive integers */
  FlyTuple *stride; /* congruent to shape; integers (0 and negative allowed), or
                       basis elements (fly_tuple_is_basis) beside zeros */
} FlyLayout;

/* A tiler says how to cut each mode: a layout (an integer n means n:1),
 * `_` (leave the mode alone) or a tuple of tilers, one per mode. */
typedef enum FlyTilerKind {
  FLY_TILER_LAYOUT,
  FLY_TILER_UNDERSCORE,
  FLY_TILER_SEQ,
} FlyTilerKind;

typedef struct FlyTiler FlyTiler;
struct FlyTiler {
  FlyTilerKind kind;
  FlyLayout *layout; /* FLY_TILER_LAYOUT */
  int n;             /* FLY_TILER_SEQ */
  FlyTiler **elem;
};

/* ---- construction ---------------------------------------------------- */

/* @pre shape and stride congruent, shape leaves >= 1, no `_`; the basis
 * elements of stride add up (fly_layout_coprofile), and beside them every
 * integer stride is 0. */
FlyLayout *fly_layout_make(FlyAlgebra *A, FlyTuple *shape, FlyTuple *stride);
/* Compact layouts: column-major (LayoutLeft), row-major (LayoutRight), and by
 * order: the mode with the smallest order value gets stride 1, the next
 * smallest continues after it, and so on (make_ordered_layout). */
FlyLayout *fly_layout_col_major(FlyAlgebra *A, FlyTuple *shape);
FlyLayout *fly_layout_row_major(FlyAlgebra *A, FlyTuple *shape);
FlyLayout *fly_layout_ordered(FlyAlgebra *A, FlyTuple *shape, FlyTuple *order);
/* make_layout(L0, L1, ...): each layout becomes one mode of the result. */
FlyLayout *fly_layout_seq(FlyAlgebra *A, int n, FlyLayout *const *modes);
FlyLayout *fly_layout_pair(FlyAlgebra *A, FlyLayout *a, FlyLayout *b);

FlyTiler *fly_tiler_layout(FlyAlgebra *A, FlyLayout *L);
FlyTiler *fly_tiler_underscore(FlyAlgebra *A);
FlyTiler *fly_tiler_seq(FlyAlgebra *A, int n, FlyTiler *const *elems);

/* ---- queries ----------------------------------------------------------- */

bool fly_layout_size(FlyAlgebra *A, const FlyLayout *L, int64_t *out);
/* L(size-1) + 1: one past the largest index (for non-negative strides); for
 * basis strides, the product of the coshape. */
bool fly_layout_cosize(FlyAlgebra *A, const FlyLayout *L, int64_t *out);
/* Plain queries: their arguments must not be NULL. */
int fly_layout_rank(const FlyLayout *L);
int fly_layout_depth(const FlyLayout *L);
bool fly_layout_equal(const FlyLayout *a, const FlyLayout *b);

/* ---- modes ------------------------------------------------------------- */

FlyLayout *fly_layout_get(FlyAlgebra *A, const FlyLayout *L, int i);
/* make_layout(get(L, modes[0]), get(L, modes[1]), ...). */
FlyLayout *fly_layout_select(FlyAlgebra *A, const FlyLayout *L, int n, const int *modes);
/* Modes [begin, end) become one mode. */
FlyLayout *fly_layout_group(FlyAlgebra *A, const FlyLayout *L, int begin, int end);
/* CuTe's take<begin,end>: the layout of modes [begin, end), a non-empty
 * range (one mode stays a mode: take of (4,(2,3)) 1 2 is ((2,3)):((...))). */
FlyLayout *fly_layout_take(FlyAlgebra *A, const FlyLayout *L, int begin, int end);
/* X becomes a new last (first) mode; X == NULL means 1:0. */
FlyLayout *fly_layout_append(FlyAlgebra *A, const FlyLayout *L, const FlyLayout *X);
FlyLayout *fly_layout_prepend(FlyAlgebra *A, const FlyLayout *L, const FlyLayout *X);
/* append<N>: pad with 1:0 modes up to rank n (a no-op at rank >= n). */
FlyLayout *fly_layout_pad(FlyAlgebra *A, const FlyLayout *L, int rank);
/* zip: ((a0,a1),(b0,b1)) -> ((a0,b0),(a1,b1)); every mode needs the same rank. */
FlyLayout *fly_layout_zip(FlyAlgebra *A, const FlyLayout *L);
FlyLayout *fly_layout_flatten(FlyAlgebra *A, const FlyLayout *L);

/* ---- coordinates ------------------------------------------------------- */

/* L(coord): coord may be an integer (a 1-D index), or a tuple that matches
 * the shape down to where it stops (each integer there is a 1-D index into
 * that mode). A coordinate outside the shape is an error, and so is a
 * layout with basis strides (its values are coordinates: fly_layout_value). */
bool fly_layout_crd2idx(FlyAlgebra *A, const FlyTuple *coord, const FlyLayout *L, int64_t *out);
/* L(i) for an integer i; i past the size continues along the last mode,
 * which is how composition extends a layout (CuTe's semantics). i >= 0. */
bool fly_layout_eval(FlyAlgebra *A, const FlyLayout *L, int64_t i, int64_t *out);
/* The modes where coord has `_` (slice) or an integer (dice); slice also
 * gives the offset of the sliced-away part (CuTe's slice_and_offset), an
 * integer: NULL offset for layouts with basis strides, or use
 * fly_layout_slice_and_offset. */
FlyLayout *fly_layout_slice(FlyAlgebra *A, const FlyTuple *coord, const FlyLayout *L,
                            int64_t *offset);
/* slice, with the offset as a value of L (fly_layout_value): an integer
 * leaf, or a coordinate for basis strides. offset may be NULL. */
FlyLayout *fly_layout_slice_and_offset(FlyAlgebra *A, const FlyTuple *coord, const FlyLayout *L,
                                       FlyTuple **offset);
FlyLayout *fly_layout_dice(FlyAlgebra *A, const FlyTuple *coord, const FlyLayout *L);

/* ---- layouts whose values are coordinates -------------------------------- */

/* A layout whose strides are basis elements (CuTe's ScaledBasis strides,
 * fly_tuple.h) maps coordinates to coordinates: (4,3):(1@0,1@1), the
 * identity layout of shape (4,3), sends 5 = (1,1) to 1*(1@0) + 1*(1@1) =
 * (1,1). Such layouts compose, divide, slice and coalesce like others; the
 * operations that need integer values (complement, the inverses, the
 * products, recast, max_common_*) refuse them, as CuTe does. */

/* Whether some stride of L is a basis element. Plain query: L != NULL. */
bool fly_layout_has_basis(const FlyLayout *L);
/* CuTe's coprofile: the zero of L's values, the structure every value
 * has: 0 for integer strides, (0,0) for (4,3):(1@0,1@1), (0,(0,0)) for
 * strides 1@0, 1@0@1 and 1@1@1. */
FlyTuple *fly_layout_coprofile(FlyAlgebra *A, const FlyLayout *L);
/* L(coord) and L(i) (as fly_layout_crd2idx and fly_layout_eval) as a
 * tuple: an integer leaf for integer strides; for basis strides the
 * coordinate the terms add up to, congruent to the coprofile, so the
 * identity layout of shape s gives fly_tuple_idx2crd(i, s). */
FlyTuple *fly_layout_value(FlyAlgebra *A, const FlyTuple *coord, const FlyLayout *L);
FlyTuple *fly_layout_value_at(FlyAlgebra *A, const FlyLayout *L, int64_t i);
/* CuTe's make_identity_layout: make_layout(shape, make_basis_like(shape)),
 * the layout whose value at every coordinate is that coordinate. */
FlyLayout *fly_layout_identity(FlyAlgebra *A, FlyTuple *shape);
/* CuTe's coshape: 1 + the largest value of each leaf of the codomain, every
 * stride counted by its magnitude; the cosize for integer strides, (4,3)
 * for the identity layout of (4,3). */
FlyTuple *fly_layout_coshape(FlyAlgebra *A, const FlyLayout *L);

/* ---- the algebra -------------------------------------------------------- */

/* @post depth(result) <= 1, result(i) == L(i) for i < size(L). */
FlyLayout *fly_layout_coalesce(FlyAlgebra *A, const FlyLayout *L);
/* Coalesce each mode of L named by a leaf of profile (by-mode coalesce). */
FlyLayout *fly_layout_coalesce_by(FlyAlgebra *A, const FlyLayout *L, const FlyTuple *profile);
/* Drop stride-0 and size-1 modes, then coalesce; 1:0 if nothing is left. */
FlyLayout *fly_layout_filter(FlyAlgebra *A, const FlyLayout *L);
FlyLayout *fly_layout_filter_by(FlyAlgebra *A, const FlyLayout *L, const FlyTuple *profile);

/* @post result(c) == L(B(c)) for every coordinate c of B; the result's shape
 * has B's modes, each possibly split further ((4,3) may become ((2,2),3)).
 * An error when B's strides and shapes do not divide L's modes (CuTe's
 * stride and shape divisibility conditions, checked exactly).
 * @pre B's modes do not overlap (as in CuTe, composition distributes over
 * B's modes, which is exact only for such B). */
FlyLayout *fly_layout_composition(FlyAlgebra *A, const FlyLayout *L, const FlyLayout *B);
/* By-mode composition with a tiler; modes of L past the tiler's rank are
 * dropped, as in CuTe. */
FlyLayout *fly_layout_compose_tiler(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *T);

/* @post the result is ordered, disjoint from L's image, and (L, result)
 * covers [0, cotarget) when cotarget is a multiple of L's extent.
 * cotarget is an integer or a shape; for a shape the rest follows CuTe's
 * ceil_div mode by mode, (3,8) / 4 = (1,4), which may cover less than the
 * shape's size. An error when L is not injective,
 * when its modes interleave, or when a stride (in sorted order) is not a
 * multiple of the extent of the modes below it. */
FlyLayout *fly_layout_complement(FlyAlgebra *A, const FlyLayout *L, const FlyTuple *cotarget);
/* @post L(result(i)) == i for i < size(result); the largest such prefix. */
FlyLayout *fly_layout_right_inverse(FlyAlgebra *A, const FlyLayout *L);
/* @post result(L(i)) == i for i < size(L) when L is injective, and
 * L(result(L(i))) == L(i) in general. An error when L's nonzero-stride
 * modes overlap. */
FlyLayout *fly_layout_left_inverse(FlyAlgebra *A, const FlyLayout *L);

/* logical_divide(L, B) == composition(L, make_layout(B, complement(B, size(L)))),
 * applied by mode for a tuple tiler. The zipped, tiled and flat forms gather
 * the tile modes and the rest modes as CuTe does. */
FlyLayout *fly_layout_logical_divide(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *T);
FlyLayout *fly_layout_zipped_divide(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *T);
FlyLayout *fly_layout_tiled_divide(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *T);
FlyLayout *fly_layout_flat_divide(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *T);

/* logical_product(L, B) ==
 *   make_layout(L, composition(complement(L, size(L)*cosize(B)), B)). */
FlyLayout *fly_layout_logical_product(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *T);
FlyLayout *fly_layout_zipped_product(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *T);
FlyLayout *fly_layout_tiled_product(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *T);
FlyLayout *fly_layout_flat_product(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *T);
/* Rank-sensitive products: rank(result) == max(rank(L), rank(B)); blocked
 * keeps L's blocks contiguous, raked interleaves them. */
FlyLayout *fly_layout_blocked_product(FlyAlgebra *A, const FlyLayout *L, const FlyLayout *B);
FlyLayout *fly_layout_raked_product(FlyAlgebra *A, const FlyLayout *L, const FlyLayout *B);

/* The layout of the same memory seen as elements of new_bits instead of
 * old_bits (CuTe's recast_layout: upcast then downcast). */
FlyLayout *fly_layout_recast(FlyAlgebra *A, const FlyLayout *L, int old_bits, int new_bits);
/* The largest N such that a(R(i)) == i and b(R(i)) == i for i < N, with
 * R = right_inverse(b) (1 when nothing is contiguous). Where CuTe's
 * composition a o R is inadmissible the agreeing prefix is counted directly;
 * an error only when that prefix is longer than 2^20. */
bool fly_layout_max_common_vector(FlyAlgebra *A, const FlyLayout *a, const FlyLayout *b,
                                  int64_t *out);
FlyLayout *fly_layout_max_common_layout(FlyAlgebra *A, const FlyLayout *a, const FlyLayout *b);

/* ---- compact layouts after another (fly_layout_like.c) -------------------- */

/* CuTe's make_layout_like: L's shape with compact strides in the order of
 * L's strides (the smallest first; equal strides left to right), stride-0
 * modes kept at 0: (2,3,4,5):(0,42,1,0) -> (2,3,4,5):(0,4,1,0). */
FlyLayout *fly_layout_like(FlyAlgebra *A, const FlyLayout *L);
/* CuTe's make_fragment_like: the registers for a tile shaped like L. Mode
 * 0 (an atom's values) is compact column-major, keeping its stride-0
 * leaves; the other modes follow it, compact in the order of L's strides.
 * A rank-1 L gives the column-major layout of its shape. */
FlyLayout *fly_layout_fragment_like(FlyAlgebra *A, const FlyLayout *L);
/* CuTe's tile_to_shape: block repeated (blocked_product) until each mode
 * has the size of target's, the repetitions in the order of `order` (one
 * integer per mode, as fly_layout_ordered; NULL: column-major). An error
 * when the block has more modes than target or a mode's size does not
 * divide the target's. */
FlyLayout *fly_layout_tile_to_shape(FlyAlgebra *A, const FlyLayout *block, FlyTuple *target,
                                    const FlyTuple *order);
/* The coordinate of index idx of a compact layout L (L(result) == idx):
 * hierarchical, congruent to L's shape (CuTe's get_hier_coord); one 1-D
 * coordinate per mode of L (get_flat_coord); or one for the whole shape
 * (get_1d_coord). An error when L does not give idx or a mode of size > 1
 * has a stride <= 0. */
FlyTuple *fly_layout_hier_coord(FlyAlgebra *A, const FlyLayout *L, int64_t idx);
FlyTuple *fly_layout_flat_coord(FlyAlgebra *A, const FlyLayout *L, int64_t idx);
bool fly_layout_1d_coord(FlyAlgebra *A, const FlyLayout *L, int64_t idx, int64_t *out);

/* Canonical text: 8:1, (8,16):(1,8). Rank-1 levels at the top print without
 * parentheses, as CuTe's unwrap: ((4,2)):((1,4)) prints (4,2):(1,4). */
char *fly_layout_str(FlyAlgebra *A, const FlyLayout *L);
char *fly_tiler_str(FlyAlgebra *A, const FlyTiler *T);

#endif
