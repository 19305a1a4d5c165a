/* fly_swizzle.h — CuTe swizzles and composed layouts.
 *
 * Swizzle<B,M,S> xors B bits taken S positions above bit M+max(0,S) into the
 * B bits starting at M-min(0,S) (CuTe's yyy/zzz masks): a bijection on the
 * integers that shared-memory layouts use to avoid bank conflicts. A composed
 * layout is swizzle o offset o layout: c -> swizzle(offset + layout(c)). */
#ifndef FLY_SWIZZLE_H
#define FLY_SWIZZLE_H

#include "fly_layout.h"

typedef struct FlySwizzle {
  int bits;  /* B >= 0 */
  int base;  /* M >= 0 */
  int shift; /* S, |S| >= B; positive moves the high bits down */
} FlySwizzle;

typedef struct FlyComposed {
  FlySwizzle swizzle;
  int64_t offset;
  FlyLayout *layout;
} FlyComposed;

/* Validates B >= 0, M >= 0, |S| >= B and that every bit touched is below
 * bit 62 (indices are 64-bit). */
bool fly_swizzle_make(FlyAlgebra *A, int bits, int base, int shift, FlySwizzle *out);
int64_t fly_swizzle_apply(FlySwizzle s, int64_t x);
bool fly_swizzle_equal(FlySwizzle a, FlySwizzle b);
/* Swizzles of elements new_bits wide over the same bytes (upcast/downcast);
 * the widths' ratio must be a power of two. */
bool fly_swizzle_recast(FlyAlgebra *A, FlySwizzle s, int old_bits, int new_bits, FlySwizzle *out);

FlyComposed *fly_composed_make(FlyAlgebra *A, FlySwizzle s, int64_t offset, FlyLayout *L);
bool fly_composed_crd2idx(FlyAlgebra *A, const FlyTuple *coord, const FlyComposed *C, int64_t *out);
bool fly_composed_eval(FlyAlgebra *A, const FlyComposed *C, int64_t i, int64_t *out);
/* Slicing folds the sliced-away part into the offset, so the result is
 * again swizzle o offset' o layout'. */
FlyComposed *fly_composed_slice(FlyAlgebra *A, const FlyTuple *coord, const FlyComposed *C);
/* The operations on the domain act on the inner layout and keep the
 * swizzle and offset, as CuTe's ComposedLayout does. */
FlyComposed *fly_composed_with_layout(FlyAlgebra *A, const FlyComposed *C, FlyLayout *L);
FlyComposed *fly_composed_recast(FlyAlgebra *A, const FlyComposed *C, int old_bits, int new_bits);

/* S<3,3,3> and S<3,3,3> o 0 o (8,8):(8,1). */
char *fly_swizzle_str(FlyAlgebra *A, FlySwizzle s);
char *fly_composed_str(FlyAlgebra *A, const FlyComposed *C);

#endif
