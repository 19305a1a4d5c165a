/* fly_swizzle.c — swizzle functions and swizzle o offset o layout. */
#include "fly_swizzle.h"

#include "fly_layout_internal.h"
#include "fly_strbuf.h"

enum { TOP_BIT = 62 }; /* indices are non-negative int64: bits 0..61 are usable */

bool fly_swizzle_make(FlyAlgebra *A, int bits, int base, int shift, FlySwizzle *out) {
  int mag = shift < 0 ? -shift : shift;
  if (bits < 0 || base < 0) {
    fly_fail(A, "swizzle S<%d,%d,%d>: B and M must not be negative", bits, base, shift);
    return false;
  }
  if (mag < bits) {
    fly_fail(A, "swizzle S<%d,%d,%d>: |S| must be at least B, or the masks overlap", bits, base,
             shift);
    return false;
  }
  if (bits > TOP_BIT || base > TOP_BIT || mag > TOP_BIT || bits + base + mag > TOP_BIT) {
    fly_fail(A, "swizzle S<%d,%d,%d> touches bits past %d", bits, base, shift, TOP_BIT - 1);
    return false;
  }
  out->bits = bits;
  out->base = base;
  out->shift = shift;
  return true;
}

/* ZZZ ^= YYY: the B bits at M+max(0,S) are xored into the B bits at
 * M-min(0,S) (CuTe's yyy_msk and zzz_msk). */
int64_t fly_swizzle_apply(FlySwizzle s, int64_t x) {
  uint64_t mask = ((uint64_t)1 << s.bits) - 1;
  uint64_t yyy = mask << (s.base + (s.shift > 0 ? s.shift : 0));
  uint64_t ux = (uint64_t)x, y = ux & yyy;
  uint64_t moved = s.shift >= 0 ? y >> s.shift : y << -s.shift;
  return (int64_t)(ux ^ moved);
}

bool fly_swizzle_equal(FlySwizzle a, FlySwizzle b) {
  return a.bits == b.bits && a.base == b.base && a.shift == b.shift;
}

static int log2_exact(int64_t n) {
  int k = 0;
  while (((int64_t)1 << k) < n)
    k++;
  return ((int64_t)1 << k) == n ? k : -1;
}

bool fly_swizzle_recast(FlyAlgebra *A, FlySwizzle s, int old_bits, int new_bits, FlySwizzle *out) {
  if (old_bits < 1 || new_bits < 1) {
    fly_fail(A, "recast: element widths must be positive (got %d and %d bits)", old_bits, new_bits);
    return false;
  }
  bool wider = new_bits >= old_bits;
  int k = log2_exact(wider ? new_bits / old_bits : old_bits / new_bits);
  if (k < 0 || (wider ? new_bits % old_bits : old_bits % new_bits) != 0) {
    fly_fail(A, "recast of a swizzle from %d to %d bits: the ratio is not a power of two", old_bits,
             new_bits);
    return false;
  }
  if (!wider) /* downcast: each old element is 2^k new ones */
    return fly_swizzle_make(A, s.bits, s.base + k, s.shift, out);
  int base = s.base - k; /* upcast: bits below the element disappear */
  if (base >= 0)
    return fly_swizzle_make(A, s.bits, base, s.shift, out);
  return fly_swizzle_make(A, s.bits + base > 0 ? s.bits + base : 0, 0, s.shift, out);
}

FlyComposed *fly_composed_make(FlyAlgebra *A, FlySwizzle s, int64_t offset, FlyLayout *L) {
  if (!L)
    return NULL;
  FlySwizzle checked;
  if (!fly_swizzle_make(A, s.bits, s.base, s.shift, &checked))
    return NULL;
  FlyComposed *C = fly_alloc(A, sizeof *C);
  if (C) {
    C->swizzle = checked;
    C->offset = offset;
    C->layout = L;
  }
  return C;
}

static bool finish(FlyAlgebra *A, const FlyComposed *C, int64_t inner, int64_t *out) {
  int64_t x;
  if (!fly_add(A, C->offset, inner, &x))
    return false;
  *out = fly_swizzle_apply(C->swizzle, x);
  return true;
}

bool fly_composed_crd2idx(FlyAlgebra *A, const FlyTuple *coord, const FlyComposed *C,
                          int64_t *out) {
  int64_t inner;
  return C && fly_layout_crd2idx(A, coord, C->layout, &inner) && finish(A, C, inner, out);
}

bool fly_composed_eval(FlyAlgebra *A, const FlyComposed *C, int64_t i, int64_t *out) {
  int64_t inner;
  return C && fly_layout_eval(A, C->layout, i, &inner) && finish(A, C, inner, out);
}

FlyComposed *fly_composed_slice(FlyAlgebra *A, const FlyTuple *coord, const FlyComposed *C) {
  if (!C)
    return NULL;
  int64_t part, offset;
  FlyLayout *rest = fly_layout_slice(A, coord, C->layout, &part);
  if (!rest || !fly_add(A, C->offset, part, &offset))
    return NULL;
  return fly_composed_make(A, C->swizzle, offset, rest);
}

FlyComposed *fly_composed_with_layout(FlyAlgebra *A, const FlyComposed *C, FlyLayout *L) {
  if (!C)
    return NULL;
  return fly_composed_make(A, C->swizzle, C->offset, L);
}

FlyComposed *fly_composed_recast(FlyAlgebra *A, const FlyComposed *C, int old_bits, int new_bits) {
  if (!C)
    return NULL;
  FlySwizzle s;
  if (!fly_swizzle_recast(A, C->swizzle, old_bits, new_bits, &s))
    return NULL;
  int64_t scaled;
  if (!fly_mul(A, C->offset, old_bits, &scaled))
    return NULL;
  if (scaled % new_bits != 0)
    return fly_fail(A, "recast: offset %lld is not a whole number of %d-bit elements",
                    (long long)C->offset, new_bits);
  return fly_composed_make(A, s, scaled / new_bits,
                           fly_layout_recast(A, C->layout, old_bits, new_bits));
}

char *fly_swizzle_str(FlyAlgebra *A, FlySwizzle s) {
  FlyStrBuf sb;
  fly_sb_init(&sb, A);
  fly_sb_puts(&sb, "S<");
  fly_sb_int(&sb, s.bits);
  fly_sb_putc(&sb, ',');
  fly_sb_int(&sb, s.base);
  fly_sb_putc(&sb, ',');
  fly_sb_int(&sb, s.shift);
  fly_sb_putc(&sb, '>');
  return fly_sb_finish(&sb);
}

char *fly_composed_str(FlyAlgebra *A, const FlyComposed *C) {
  if (!C)
    return NULL;
  char *sw = fly_swizzle_str(A, C->swizzle), *l = fly_layout_str(A, C->layout);
  if (!sw || !l)
    return NULL;
  FlyStrBuf sb;
  fly_sb_init(&sb, A);
  fly_sb_puts(&sb, sw);
  fly_sb_puts(&sb, " o ");
  fly_sb_int(&sb, C->offset);
  fly_sb_puts(&sb, " o ");
  fly_sb_puts(&sb, l);
  return fly_sb_finish(&sb);
}
