/* fly_swizzle.h — CuTe swizzles and composed layouts.
 *
 * Swizzle<B,M,S> xors B bits taken S positions above bit M+max(0,S) into the
 * B bits starting at M-min(0,S) (CuTe's yyy/zzz masks): a bijection on the
 * integers that shared-memory layouts use to avoid bank conflicts. A composed
 * layout is inner o offset o layout: c -> inner(offset + layout(c)), where
 * the inner function is a swizzle (a swizzled layout) or a layout. */
#ifndef FLY_SWIZZLE_H
#define FLY_SWIZZLE_H

#include "fly_layout.h"

typedef struct FlySwizzle {
  int bits;  /* B >= 0 */
  int base;  /* M >= 0 */
  int shift; /* S, |S| >= B; positive moves the high bits down */
} FlySwizzle;

/* A composed layout inner o offset o outer (CuTe's ComposedLayout<A,O,B>,
 * CuTe DSL's make_composed_layout(inner, offset, outer)): the function
 * c -> inner(offset + outer(c)). The outer layout defines the domain, so
 * the operations on coordinates (shape, get, slice, composition, the
 * divides ...) act on it and keep inner and offset. The inner function is
 * a swizzle, or any layout, which then reads offset + outer(c) as an index
 * (an integer, extended past its size as fly_layout_eval does) or as a
 * coordinate (when the outer layout has basis strides, whose values are
 * coordinates; the offset is then a coordinate too). */
typedef struct FlyComposed {
  FlySwizzle swizzle;   /* the inner function, when `inner` is NULL */
  FlyLayout *inner;     /* else the inner function: a layout */
  int64_t offset;       /* the offset, when outer's values are integers */
  FlyTuple *offset_crd; /* the offset, when they are coordinates; else NULL */
  FlyLayout *layout;    /* the outer layout */
} FlyComposed;

/* Validates B >= 0, M >= 0, |S| >= B and that every bit touched is below
 * bit 62 (indices are 64-bit). */
bool fly_swizzle_make(FlyAlgebra *A, int bits, int base, int shift, FlySwizzle *out);
int64_t fly_swizzle_apply(FlySwizzle s, int64_t x);
bool fly_swizzle_equal(FlySwizzle a, FlySwizzle b);
/* Swizzles of elements new_bits wide over the same bytes (upcast/downcast);
 * the widths' ratio must be a power of two. */
bool fly_swizzle_recast(FlyAlgebra *A, FlySwizzle s, int old_bits, int new_bits, FlySwizzle *out);
/* The lowest bit above every bit s reads or writes (M + |S| + B; M for a
 * swizzle of no bits): s changes nothing of x but its bits below, so it
 * commutes with adding a multiple of 2^top, its period. */
int fly_swizzle_top(FlySwizzle s);
/* The bytes a swizzled shared tile of elem_bytes-wide elements is aligned
 * to: its period in bytes, and at least 1024, which the hardware that
 * swizzles addresses itself (wgmma's descriptors, TMA) wants of a tile
 * swizzled 128 bytes wide. */
int64_t fly_swizzle_tile_align(FlySwizzle s, int elem_bytes);
/* swizzle(x + c) for an unknown x that is a multiple of 2^k (k at most
 * fly_swizzle_top) and a known c >= -x, split so that the unknown part
 * is shared by many c:
 *
 *     swizzle(x + c) = (swizzle(x + hi) ^ flip) + add + whole
 *
 * whole a multiple of the period (it passes the swizzle), hi a multiple
 * of 2^k, (swizzle(x + hi) ^ flip) a multiple of 2^j and 0 <= add < 2^j;
 * j is as large as the masks allow (k itself when 2^k is a multiple of
 * the period or when S moves no bit of x below 2^k). The code generator
 * emits swizzle(x + hi) ^ flip once per (hi, flip) and adds add + whole
 * as constants, which keeps runs of 2^j elements contiguous. */
typedef struct FlySwizzleSplit {
  int64_t whole, hi, flip, add;
  int j;
} FlySwizzleSplit;
FlySwizzleSplit fly_swizzle_split(FlySwizzle s, int k, int64_t c);
/* The elements a tile whose layout spans `cosize` spans once swizzled by
 * s: one past the largest swizzle(x), x < cosize (a swizzle maps each of
 * its periods onto itself, so at most cosize rounded up to a period). */
int64_t fly_swizzle_span(FlySwizzle s, int64_t cosize);

/* swizzle o offset o L; L's strides must be integers (a swizzle takes
 * integers). */
FlyComposed *fly_composed_make(FlyAlgebra *A, FlySwizzle s, int64_t offset, FlyLayout *L);
/* inner o offset o outer with a layout inner: offset is an integer when
 * outer's values are integers, else a coordinate that adds to them (a
 * missing mode counting as 0; the integer 0 stands for the origin). An
 * outer layout that gives only 0 (what slicing leaves) takes either. */
FlyComposed *fly_composed_make_layout(FlyAlgebra *A, FlyLayout *inner, const FlyTuple *offset,
                                      FlyLayout *outer);
/* The offset as a value: an integer leaf or a coordinate. */
FlyTuple *fly_composed_offset(FlyAlgebra *A, const FlyComposed *C);
/* C(coord) and C(i) as integers: an error when the inner layout's values
 * are coordinates (fly_composed_value). */
bool fly_composed_crd2idx(FlyAlgebra *A, const FlyTuple *coord, const FlyComposed *C, int64_t *out);
bool fly_composed_eval(FlyAlgebra *A, const FlyComposed *C, int64_t i, int64_t *out);
/* C(coord) as a tuple value, as fly_layout_value. */
FlyTuple *fly_composed_value(FlyAlgebra *A, const FlyTuple *coord, const FlyComposed *C);
/* Slicing folds the sliced-away part into the offset, so the result is
 * again inner o offset' o outer'. */
FlyComposed *fly_composed_slice(FlyAlgebra *A, const FlyTuple *coord, const FlyComposed *C);
/* The operations on the domain act on the outer layout and keep the inner
 * function and the offset, as CuTe's ComposedLayout does. */
FlyComposed *fly_composed_with_layout(FlyAlgebra *A, const FlyComposed *C, FlyLayout *L);
/* A swizzled layout's elements new_bits wide (a layout inner: an error). */
FlyComposed *fly_composed_recast(FlyAlgebra *A, const FlyComposed *C, int old_bits, int new_bits);
bool fly_composed_equal(const FlyComposed *a, const FlyComposed *b);

/* S<3,3,3>, S<3,3,3> o 0 o (8,8):(8,1), (8,8):(8,1) o (2,0) o (4,4):(1@0,1@1). */
char *fly_swizzle_str(FlyAlgebra *A, FlySwizzle s);
char *fly_composed_str(FlyAlgebra *A, const FlyComposed *C);

#endif
