/* flyrt_half.c — 16-bit floats on the host, bit by bit: f16 (IEEE binary16)
 * and bf16 (the upper half of a float), rounding to nearest even. Not all
 * compilers offer _Float16 on x86-64, and a host needs these to make
 * inputs and read results. */
#include <math.h>
#include <string.h>

#include "fly/runtime.h"

static uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static float float_of(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

uint16_t flyrtF32ToBF16(float f) {
  uint32_t u = bits_of(f);
  if (isnan(f))
    return (uint16_t)((u >> 16) | 0x40); /* stays a NaN, quiet */
  return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

float flyrtBF16ToF32(uint16_t h) { return float_of((uint32_t)h << 16); }

uint16_t flyrtF32ToF16(float f) {
  uint32_t u = bits_of(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  uint32_t exp = (u >> 23) & 0xff, man = u & 0x7fffff;
  if (exp == 0xff) /* infinity, NaN (kept quiet) */
    return sign | 0x7c00 | (man ? 0x200 : 0);
  int e = (int)exp - 127 + 15;
  if (e >= 31) /* too large: infinity */
    return sign | 0x7c00;
  if (e <= 0) {
    /* A subnormal half (or zero): the implicit bit shifted in. */
    if (e < -10)
      return sign;
    man |= 0x800000;
    int shift = 14 - e;
    uint32_t half = man >> shift, rest = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1)))
      half++;
    return sign | (uint16_t)half;
  }
  uint32_t half = ((uint32_t)e << 10) | (man >> 13), rest = man & 0x1fff;
  /* Rounding may carry into the exponent, up to infinity: still right. */
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    half++;
  return sign | (uint16_t)half;
}

float flyrtF16ToF32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0x1f)
    return float_of(sign | 0x7f800000 | (man << 13));
  if (exp == 0) /* zero or subnormal: man * 2^-24 */
    return (sign ? -1.0f : 1.0f) * (float)man * 0x1p-24f;
  return float_of(sign | ((exp - 15 + 127) << 23) | (man << 13));
}
