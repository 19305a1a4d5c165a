/* fly_swizzle.c — swizzle functions (composed layouts: fly_composed.c). */
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

int fly_swizzle_top(FlySwizzle s) {
  return s.bits ? s.base + (s.shift < 0 ? -s.shift : s.shift) + s.bits : s.base;
}

int64_t fly_swizzle_tile_align(FlySwizzle s, int elem_bytes) {
  int top = fly_swizzle_top(s);
  int64_t period = ((int64_t)1 << (top < 40 ? top : 40)) * (elem_bytes > 0 ? elem_bytes : 1);
  return period > 1024 ? period : 1024;
}

/* The j with swizzle(X) a multiple of 2^j for every multiple X of 2^k:
   a bit b >= k that S reads lands at b - S. */
static int swizzled_multiple(FlySwizzle s, int k) {
  if (k >= fly_swizzle_top(s))
    return k;
  int j = k;
  int64_t yyy = (((int64_t)1 << s.bits) - 1) << (s.base + (s.shift > 0 ? s.shift : 0));
  for (int bit = k; bit < TOP_BIT; bit++)
    if ((yyy >> bit) & 1 && bit - s.shift < j)
      j = bit - s.shift;
  return j;
}

/* x + c = (x + hi + whole) + lo with x + hi a multiple of 2^k and lo below
   it, so x + hi and lo share no bit, and as a swizzle is linear over xor,
   swizzle(x + hi + lo) = swizzle(x + hi) ^ swizzle(lo); swizzle(lo)'s bits
   below 2^j add to swizzle(x + hi), a multiple of 2^j. */
FlySwizzleSplit fly_swizzle_split(FlySwizzle s, int k, int64_t c) {
  FlySwizzleSplit r;
  int64_t period = (int64_t)1 << fly_swizzle_top(s);
  r.whole = c - (c & (period - 1));
  c -= r.whole;
  int64_t lo = c & (((int64_t)1 << k) - 1), slo = fly_swizzle_apply(s, lo);
  r.hi = c - lo;
  r.j = swizzled_multiple(s, k);
  r.add = slo & (((int64_t)1 << r.j) - 1);
  r.flip = slo - r.add;
  return r;
}

int64_t fly_swizzle_span(FlySwizzle s, int64_t cosize) {
  int top = fly_swizzle_top(s);
  if (cosize <= 0 || top >= 40)
    return cosize;
  int64_t period = (int64_t)1 << top;
  if (cosize % period == 0 || cosize > ((int64_t)1 << 24))
    return (cosize + period - 1) / period * period;
  int64_t span = cosize;
  for (int64_t x = cosize / period * period; x < cosize; x++) {
    int64_t y = fly_swizzle_apply(s, x);
    if (y >= span)
      span = y + 1;
  }
  return span;
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
