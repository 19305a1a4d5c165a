/* test_fp8.c — Fly's 8-bit floats (OCP E4M3FN and E5M2) on gfx942, whose
 * instructions convert only the FNUZ formats: the fix-ups of
 * lower/fly_lower_rocdl.c (amd_fp8_pack with fnuz_pack_fix, amd_fp8_unpack
 * with fnuz_unpack_fix), modelled here step for step on a model of the
 * FNUZ instructions, against the OCP formats' definition: every byte
 * decoded, and the values around every byte's (each value, the halfway
 * points and their neighbours) and a sweep of the f32 encodings, encoded.
 * The expected encoding is the semantic pass's rounding (fly_float_round,
 * which convert's compile-time values use), saturated. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "fly_value.h"

typedef struct Format {
  int ebits, mbits, bias;
  bool fnuz; /* 0x80 is NaN, no -0, no infinity */
  bool ieee; /* the top exponent is infinity and NaN (E5M2) */
} Format;

static const Format E4M3FN = {4, 3, 7, false, false}, E5M2 = {5, 2, 15, false, true};
static const Format E4M3FNUZ = {4, 3, 8, true, false}, E5M2FNUZ = {5, 2, 16, true, false};

/* A byte's value, from the format's definition. */
static double decode(const Format *f, uint8_t b) {
  bool neg = b & 0x80;
  int e = (b >> f->mbits) & ((1 << f->ebits) - 1), m = b & ((1 << f->mbits) - 1);
  int top = (1 << f->ebits) - 1;
  if (f->fnuz && b == 0x80)
    return NAN;
  if (f->ieee && e == top)
    return m ? NAN : neg ? -INFINITY : INFINITY;
  if (!f->fnuz && !f->ieee && e == top && m == (1 << f->mbits) - 1)
    return NAN; /* E4M3FN: only S.1111.111 is NaN */
  double v =
      e ? ldexp((1 << f->mbits) + m, e - f->bias - f->mbits) : ldexp(m, 1 - f->bias - f->mbits);
  return neg ? -v : v;
}

/* decode, from a table made once per format (the sweep decodes often). */
static double value(const Format *f, uint8_t b) {
  static const Format *formats[4] = {&E4M3FN, &E5M2, &E4M3FNUZ, &E5M2FNUZ};
  static double table[4][256];
  static bool made[4];
  int k = 0;
  while (formats[k] != f)
    k++;
  if (!made[k])
    for (int c = 0; c < 256; c++)
      table[k][c] = decode(f, (uint8_t)c);
  made[k] = true;
  return table[k][b];
}

static bool same(double a, double b) {
  return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b));
}

/* ---- the FNUZ instructions, as modelled ---------------------------------------------------- */

/* v_cvt_f32_fp8 / v_cvt_f32_bf8 on gfx942: the FNUZ value. */
static float fnuz_unpack(const Format *fnuz, uint8_t b) { return (float)value(fnuz, b); }

/* v_cvt_pk_fp8_f32 on gfx942: the nearest FNUZ value, ties to the even
   code; NaN is 0x80; a zero is 0x00, or 0x80 when `negative_zero` (the
   model does not know which the hardware does, so both are tried). The
   input is within the format's range (the clamp before sees to it). */
static uint8_t fnuz_pack(const Format *fnuz, float x, bool negative_zero) {
  if (isnan(x))
    return 0x80;
  double a = fabs(x);
  uint8_t lo = 0;
  for (int c = 1; c < 0x80 && value(fnuz, (uint8_t)c) <= a; c++)
    lo = (uint8_t)c;
  assert_true(lo < 0x7F || a == value(fnuz, 0x7F));
  uint8_t hi = lo < 0x7F ? lo + 1 : lo;
  double dl = a - value(fnuz, lo), dh = value(fnuz, hi) - a;
  uint8_t c = dl < dh ? lo : dh < dl ? hi : (lo % 2 == 0 ? lo : hi);
  if (c == 0)
    return negative_zero && signbit(x) ? 0x80 : 0x00;
  return signbit(x) ? c | 0x80 : c;
}

/* ---- Fly's algorithm (fly_lower_rocdl.c) ------------------------------------------------------
 */

static const Format *fnuz_of(const Format *ocp) { return ocp == &E4M3FN ? &E4M3FNUZ : &E5M2FNUZ; }
static const FlyType *type_of(const Format *ocp) {
  return fly_type_scalar(ocp == &E4M3FN ? FLY_TYPE_F8E4M3 : FLY_TYPE_F8E5M2);
}

/* amd_fp8_unpack and fnuz_unpack_fix: twice the FNUZ value, then OCP's own
   codes (-0, NaN, and E5M2's infinities). */
static float ocp_unpack(const Format *ocp, uint8_t b) {
  float r = 2 * fnuz_unpack(fnuz_of(ocp), b);
  uint8_t low = b & 0x7F;
  if (b == 0x80)
    r = -0.0f;
  if (ocp == &E4M3FN)
    return low == 0x7F ? NAN : r;
  if (low == 0x7C)
    r = (b & 0x80) ? -INFINITY : INFINITY;
  return low > 0x7C ? NAN : r;
}

/* amd_fp8_pack and fnuz_pack_fix: clamped to the OCP range (the maximum and
   minimum propagate NaN), halved, packed as FNUZ; then NaN is 0x7F and a
   zero takes x's sign. */
static uint8_t ocp_pack(const Format *ocp, float x, bool negative_zero) {
  float max = (float)fly_float_max(type_of(ocp));
  float y = isnan(x) ? x : x < -max ? -max : x > max ? max : x;
  uint8_t b = fnuz_pack(fnuz_of(ocp), y * 0.5f, negative_zero);
  if (isnan(x))
    return 0x7F;
  if ((b & 0x7F) == 0)
    return signbit(x) ? 0x80 : 0x00;
  return b;
}

/* ---- the expected -----------------------------------------------------------------------------
 */

/* x rounded to nearest even, saturated to the finite range: its byte. */
static uint8_t ocp_expected(const Format *ocp, float x) {
  if (isnan(x))
    return 0x7F;
  const FlyType *t = type_of(ocp);
  double v;
  if (!fly_float_round(t, x, &v) || isinf(x))
    v = copysign(fly_float_max(t), x);
  for (int c = 0; c < 256; c++)
    if (same(value(ocp, (uint8_t)c), v))
      return (uint8_t)c;
  fail_msg("%a rounds to %a, which is no byte", (double)x, v);
  return 0;
}

static void check_pack(const Format *ocp, float x) {
  uint8_t want = ocp_expected(ocp, x);
  for (int nz = 0; nz < 2; nz++) {
    uint8_t got = ocp_pack(ocp, x, nz);
    bool nan = isnan(value(ocp, want)) && isnan(value(ocp, got));
    if (got != want && !nan)
      fail_msg("%a: 0x%02x, not 0x%02x", (double)x, got, want);
  }
}

/* ---- the tests --------------------------------------------------------------------------------
 */

/* For every byte finite in both formats, the OCP value is twice the FNUZ
   one: the relation the algorithm rests on. */
static void ocp_is_twice_fnuz(void **state) {
  (void)state;
  const Format *ocps[2] = {&E4M3FN, &E5M2};
  for (int k = 0; k < 2; k++)
    for (int b = 0; b < 256; b++) {
      double o = decode(ocps[k], (uint8_t)b), f = decode(fnuz_of(ocps[k]), (uint8_t)b);
      if (isfinite(o) && isfinite(f))
        assert_true(same(o, 2 * f));
    }
}

static void unpack_every_byte(void **state) {
  (void)state;
  const Format *ocps[2] = {&E4M3FN, &E5M2};
  for (int k = 0; k < 2; k++)
    for (int b = 0; b < 256; b++)
      if (!same(ocp_unpack(ocps[k], (uint8_t)b), decode(ocps[k], (uint8_t)b)))
        fail_msg("byte 0x%02x of %s: %a, not %a", b, k ? "E5M2" : "E4M3FN",
                 (double)ocp_unpack(ocps[k], (uint8_t)b), decode(ocps[k], (uint8_t)b));
}

/* Each finite value, the halfway points between neighbours and the f32
   values next to those, of both signs; the ends of the range, infinities
   and NaN. */
static void pack_around_every_value(void **state) {
  (void)state;
  const Format *ocps[2] = {&E4M3FN, &E5M2};
  for (int k = 0; k < 2; k++) {
    const Format *f = ocps[k];
    float max = (float)fly_float_max(type_of(f));
    for (int b = 0; b < 0x80; b++) {
      double v = decode(f, (uint8_t)b), next = decode(f, (uint8_t)(b + 1));
      if (!isfinite(v))
        continue;
      double mid = isfinite(next) ? (v + next) / 2 : v + (v - decode(f, (uint8_t)(b - 1))) / 2;
      float around[] = {(float)v, (float)mid, nextafterf((float)mid, -INFINITY),
                        nextafterf((float)mid, INFINITY), nextafterf((float)v, INFINITY)};
      for (size_t i = 0; i < sizeof around / sizeof around[0]; i++) {
        check_pack(f, around[i]);
        check_pack(f, -around[i]);
      }
    }
    float ends[] = {max, 2 * max, 1e30f, INFINITY, -INFINITY, NAN, 0.0f, -0.0f, 0x1p-149f};
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
      check_pack(f, ends[i]);
      check_pack(f, -ends[i]);
    }
  }
}

/* A sweep of the f32 encodings (every 16411th, a prime: the mantissas are
   covered unevenly but widely), NaNs included. */
static void pack_sweep(void **state) {
  (void)state;
  for (uint64_t u = 0; u < (1ull << 32); u += 16411) {
    uint32_t w = (uint32_t)u;
    float x;
    memcpy(&x, &w, sizeof x);
    check_pack(&E4M3FN, x);
    check_pack(&E5M2, x);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ocp_is_twice_fnuz),
      cmocka_unit_test(unpack_every_byte),
      cmocka_unit_test(pack_around_every_value),
      cmocka_unit_test(pack_sweep),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
