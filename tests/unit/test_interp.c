/* test_interp.c — the semantic pass and the compile-time interpreter
 * (sema/check) through their public API: fly_eval_text on lone expressions
 * (what `flyc eval` and `flyc layout` print) and fly_check_unit on small
 * programs held in memory. Each test has its own unit whose diagnostics go
 * to a memory stream, so a test compares the value printed, the number of
 * errors and the messages exactly; the unit is released around each test so
 * that LeakSanitizer (the sanitized build) sees every session.
 *
 * Covered: integer arithmetic and overflow at the int64 bounds, typed
 * constants (wrapping with `as`, range errors without it), float printing,
 * short-circuit && and ||, tuples, layout literals and the algebra, if
 * const, range_const loops with carried values, recursive helpers, the
 * depth and step limits with their call chains, const blocks,
 * static_assert, -D defines and the specialisation lines, targets, and the
 * bits of floats and vectors of constants. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_check.h"
#include "fly_parse.h"
#include "fly_unit.h"
#include "fly_value.h"

static FlyUnit u;
static FlyCheckOptions opt;
static FILE *diag_out;
static char *diag_buf;
static size_t diag_len;
static size_t diag_mark; /* what diag_new() has already returned */

/* Buffers a test fills (printed values, specialisation lines): freed by the
   teardown, so that a failed assertion leaks nothing. */
enum { MAX_KEPT = 8 };
static char *kept[MAX_KEPT];
static int nkept;

static char **keep_slot(void) {
  if (nkept == MAX_KEPT)
    fail_msg("a test keeps more than %d buffers", MAX_KEPT);
  kept[nkept] = NULL;
  return &kept[nkept++];
}

static int setup(void **state) {
  (void)state;
  diag_buf = NULL;
  diag_len = 0;
  diag_mark = 0;
  diag_out = open_memstream(&diag_buf, &diag_len);
  if (!diag_out)
    return -1;
  fly_unit_init(&u, diag_out);
  fly_check_options_init(&opt);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  fly_unit_release(&u);
  fclose(diag_out);
  free(diag_buf);
  for (int i = 0; i < nkept; i++)
    free(kept[i]);
  nkept = 0;
  return 0;
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* ---- helpers --------------------------------------------------------------------------- */

/* Everything the diagnostics printed since the last call. */
static const char *diag_new(void) {
  fflush(diag_out);
  const char *all = diag_buf ? diag_buf : "";
  size_t start = diag_mark <= diag_len ? diag_mark : diag_len;
  diag_mark = diag_len;
  return all + start;
}

/* Adds text to the unit as the file "t.fly" and parses it, as fly_unit_load
   does for a file on disk (imports are not followed). */
static void load(const char *text) {
  char err[256];
  int file = fly_sources_add(&u.sources, "t.fly", text, strlen(text), err, sizeof err);
  if (file < 0)
    fail_msg("fly_sources_add: %s", err);
  assert_true(fly_unit_reserve(&u));
  int errors = u.diag.errors;
  u.trees[file] = fly_parse(&u.arena, &u.diag, file);
  u.state[file] = 2;
  u.rank[file] = u.ranked++;
  u.root = file;
  fly_unit_check_definitions(&u);
  if (u.diag.errors != errors)
    fail_msg("the program does not parse:\n%s", diag_new());
}

/* Loads the program and runs the semantic pass over it. */
static bool check(const char *text) {
  load(text);
  return fly_check_unit(&u, &opt);
}

/* The program checks without a diagnostic. */
static void check_ok(const char *text) {
  (void)diag_new();
  bool ok = check(text);
  const char *d = diag_new();
  if (!ok || d[0])
    fail_msg("want no diagnostics, got:\n%s", d);
}

/* fly_eval_text on the request; *printed is what it printed (freed by the
   teardown, or earlier with release()). */
static bool eval_request(const FlyEvalRequest *r, char **printed) {
  size_t len = 0;
  char **slot = keep_slot();
  FILE *out = open_memstream(slot, &len);
  assert_non_null(out);
  bool ok = fly_eval_text(&u, &opt, r, out);
  fclose(out);
  *printed = *slot;
  return ok;
}

static bool eval(const char *expr, char **printed) {
  FlyEvalRequest r = {.name = "<expr>", .text = expr};
  return eval_request(&r, printed);
}

/* Frees the last buffer kept, early: for loops of many evaluations. */
static void release(void) {
  free(kept[--nkept]);
  kept[nkept] = NULL;
}

/* expr evaluates to want (printed with a newline) without a diagnostic. */
static void want_value_at(const char *expr, const char *want, const char *file, int line) {
  int errors = u.diag.errors;
  char *got;
  bool ok = eval(expr, &got);
  const char *d = diag_new();
  char wantnl[512];
  snprintf(wantnl, sizeof wantnl, "%s\n", want);
  bool good = ok && u.diag.errors == errors && !d[0] && got && strcmp(got, wantnl) == 0;
  if (!good)
    print_error("%s:%d: %s: want %s, got %s%s%s\n", file, line, expr, want,
                got && got[0] ? got : "nothing\n", d[0] ? "diagnostics:\n" : "", d);
  if (!good)
    fail();
  release();
}
#define want_value(expr, want) want_value_at(expr, want, __FILE__, __LINE__)

/* expr fails with exactly one error, and everything the diagnostics printed
   for it is want (the message, its source line and caret, any notes). */
static void want_diag_at(const char *expr, const char *want, const char *file, int line) {
  int errors = u.diag.errors;
  char *got;
  bool ok = eval(expr, &got);
  const char *d = diag_new();
  bool good = !ok && u.diag.errors == errors + 1 && got && !got[0] && strcmp(d, want) == 0;
  if (!good)
    print_error("%s:%d: %s: want the error\n%sgot %d error(s)%s%s:\n%s\n", file, line, expr, want,
                u.diag.errors - errors, got && got[0] ? " and the value " : "", got ? got : "", d);
  if (!good)
    fail();
  release();
}
#define want_diag(expr, want) want_diag_at(expr, want, __FILE__, __LINE__)

/* expr fails with one error whose first line ends with message. */
static void want_error_at(const char *expr, const char *message, const char *file, int line) {
  int errors = u.diag.errors;
  char *got;
  bool ok = eval(expr, &got);
  const char *d = diag_new();
  const char *colon = strstr(d, ": error: ");
  const char *eol = colon ? strchr(colon, '\n') : NULL;
  size_t mlen = strlen(message);
  bool good = !ok && u.diag.errors == errors + 1 && eol && (size_t)(eol - colon) == mlen + 9 &&
              memcmp(colon + 9, message, mlen) == 0;
  if (!good)
    print_error("%s:%d: %s: want one error \"%s\", got %d error(s):\n%s\n", file, line, expr,
                message, u.diag.errors - errors, d);
  if (!good)
    fail();
  release();
}
#define want_error(expr, message) want_error_at(expr, message, __FILE__, __LINE__)

static void use_target(const char *arch) { assert_non_null(opt.target = fly_target_find(arch)); }

/* ---- integers ----------------------------------------------------------------------------- */

static void int_arithmetic(void **state) {
  (void)state;
  want_value("1 + 2 * 3", "7");
  want_value("(1 + 2) * 3", "9");
  want_value("7 / 2", "3");
  want_value("-7 / 2", "-3"); /* truncates toward zero, as in C */
  want_value("-7 % 2", "-1");
  want_value("7 % -2", "1");
  want_value("(1 << 62) >> 61", "2");
  want_value("-16 >> 2", "-4"); /* arithmetic shift */
  want_value("~0", "-1");
  want_value("6 & 3 | 8 ^ 1", "11");
  want_value("0x7fff_ffff_ffff_ffff", "9223372036854775807");
  want_value("1_000_000 * 1_000_000", "1000000000000");
  want_value("ceil_div(7, 2)", "4");
  want_value("min(3, 1, 2)", "1");
  want_value("max(3, 1, 2)", "3");
  want_value("abs(-4)", "4");
  want_value("1 < 2", "true");
  want_value("2 <= 1", "false");
  want_value("1 == 1.0", "true");
  assert_int_equal(u.diag.errors, 0);
}

static void int_bounds(void **state) {
  (void)state;
  want_value("9223372036854775807", "9223372036854775807");
  want_value("-9223372036854775808", "-9223372036854775808");
  want_value("-9223372036854775807 - 1", "-9223372036854775808");
  want_value("9223372036854775806 + 1", "9223372036854775807");
  want_value("4611686018427387904 * -2", "-9223372036854775808");
  want_value("(1 << 62) - 1 + (1 << 62)", "9223372036854775807");
  want_value("-9223372036854775808 / 1", "-9223372036854775808");
  want_value("~9223372036854775807", "-9223372036854775808");
  want_value("18446744073709551615 as i64", "-1 as i64");
  want_value("9223372036854775808 as i64", "-9223372036854775808 as i64");
}

static void int_overflow(void **state) {
  (void)state;
  want_diag("9223372036854775807 + 1",
            "<expr>:1:1: error: integer overflow in a compile-time expression: "
            "9223372036854775807 + 1 does not fit in 64 bits (int)\n"
            "9223372036854775807 + 1\n"
            "^~~~~~~~~~~~~~~~~~~~~~~\n");
  want_error("-9223372036854775808 - 1",
             "integer overflow in a compile-time expression: -9223372036854775808 - 1 does not "
             "fit in 64 bits (int)");
  want_error("9223372036854775807 * 2",
             "integer overflow in a compile-time expression: 9223372036854775807 * 2 does not "
             "fit in 64 bits (int)");
  want_error("(-9223372036854775808) / -1",
             "integer overflow in a compile-time expression: -9223372036854775808 / -1 does "
             "not fit in 64 bits (int)");
  want_error("(-9223372036854775808) % -1",
             "integer overflow in a compile-time expression: -9223372036854775808 % -1 does "
             "not fit in 64 bits (int)");
  want_error("-(-9223372036854775808)",
             "integer overflow in a compile-time expression: -(-9223372036854775808) "
             "does not fit in 64 bits (int)");
  want_error("1 << 63", "integer overflow in a compile-time expression: 1 << 63 does not fit "
                        "in 64 bits (int)");
  want_error("1 << 64", "shift by 64 is out of range for int (0 to 63)");
  want_error("1 >> -1", "shift by -1 is out of range for int (0 to 63)");
  want_error("abs(-9223372036854775808)",
             "integer overflow in a compile-time expression: "
             "abs(-9223372036854775808) does not fit in 64 bits (int)");
  want_diag("9223372036854775808",
            "<expr>:1:1: error: integer literal 9223372036854775808 does not fit in int (the "
            "largest is 9223372036854775807); for a bit pattern, cast it: "
            "9223372036854775808 as i64\n"
            "9223372036854775808\n"
            "^~~~~~~~~~~~~~~~~~~\n");
  want_diag("1 + 7 / 0", "<expr>:1:5: error: division by zero in a compile-time expression "
                         "(7 / 0)\n"
                         "1 + 7 / 0\n"
                         "    ^~~~~\n");
  want_error("7 % 0", "division by zero in a compile-time expression (7 % 0)");
  want_error("ceil_div(7, 0)", "ceil_div divides by a positive number, not 0");
  assert_int_equal(u.diag.errors, 14);
}

/* ---- typed constants ------------------------------------------------------------------------ */

static void typed_constants_wrap_with_as(void **state) {
  (void)state;
  want_value("7 as i8", "7 as i8");
  want_value("200 as i8", "-56 as i8");
  want_value("255 as i8", "-1 as i8");
  want_value("128 as i8", "-128 as i8");
  want_value("-128 as i8", "-128 as i8"); /* (-128) as i8: prefix - binds tighter */
  want_value("65535 as i16", "-1 as i16");
  want_value("4294967296 as i32", "0 as i32");
  want_value("(100 as i8) + 27", "127 as i8");
  want_value("(200 as i8) as i32", "-56 as i32");
  want_value("2.75 as i32", "2 as i32");
  want_value("-2.75 as i32", "-2 as i32");
  want_value("true as i32", "1 as i32");
  want_value("5 as i1", "true");
  want_value("3 as f32", "3.0 as f32");
  want_value("1.5 as f16", "1.5 as f16");
  want_value("(7 as i8) as int", "7");
  want_value("1e10 as int", "10000000000");
}

static void typed_constants_range_errors(void **state) {
  (void)state;
  want_diag("127 as i8 + 1", "<expr>:1:1: error: integer overflow in a compile-time "
                             "expression: 127 + 1 does not fit in i8\n"
                             "127 as i8 + 1\n"
                             "^~~~~~~~~~~~~\n");
  want_error("(-128 as i8) - 1",
             "integer overflow in a compile-time expression: -128 - 1 does not fit in i8");
  want_error("(16 as i8) * 8",
             "integer overflow in a compile-time expression: 16 * 8 does not fit in i8");
  want_error("(1 as i8) << 7",
             "integer overflow in a compile-time expression: 1 << 7 does not fit in i8");
  want_error("(1 as i8) << 8", "shift by 8 is out of range for i8 (0 to 7)");
  want_error("-(-128 as i8)",
             "integer overflow in a compile-time expression: -(-128) does not fit in i8");
  /* An untyped operand takes the typed one's type, if it fits. */
  want_diag("(1 as i8) + 200", "<expr>:1:1: error: the constant 200 does not fit in i8\n"
                               "(1 as i8) + 200\n"
                               "^~~~~~~~~~~~~~~\n");
  want_error("2 as i8 + 3 as i16", "mismatched operand types i8 and i16 (convert one with 'as')");
  want_error("(1 as i8) + 1.5", "a float cannot be an operand of type i8 without a cast ('as i8')");
  assert_int_equal(u.diag.errors, 9);
}

static void typed_constants_in_declarations(void **state) {
  (void)state;
  bool ok = check("const A: i8 = 127;\n"
                  "const B: i8 = 128;\n"
                  "const C: i16 = -32769;\n"
                  "fn narrow(x: i8) { x }\n"
                  "const D = narrow(300);\n"
                  "fn wide() -> i8 { 1000 }\n"
                  "const E = wide();\n"
                  "static_assert(A == 127 as i8);\n");
  assert_false(ok);
  assert_int_equal(u.diag.errors, 4);
  assert_string_equal(diag_new(),
                      "t.fly:2:15: error: the constant 128 does not fit in i8 (cast it with 'as' "
                      "to wrap it)\n"
                      "const B: i8 = 128;\n"
                      "              ^~~\n"
                      "t.fly:3:16: error: the constant -32769 does not fit in i16 (cast it with "
                      "'as' to wrap it)\n"
                      "const C: i16 = -32769;\n"
                      "               ^~~~~~\n"
                      "t.fly:5:18: error: the constant 300 does not fit in i8 (cast it with 'as' "
                      "to wrap it)\n"
                      "const D = narrow(300);\n"
                      "                 ^~~\n"
                      "t.fly:6:19: error: the constant 1000 does not fit in i8 (cast it with 'as' "
                      "to wrap it)\n"
                      "fn wide() -> i8 { 1000 }\n"
                      "                  ^~~~\n"
                      "t.fly:7:11: note: in the call of 'wide' here\n"
                      "const E = wide();\n"
                      "          ^~~~~~\n");
}

/* ---- floats ------------------------------------------------------------------------------- */

static void float_shortest_printing(void **state) {
  (void)state;
  want_value("1.0", "1.0");
  want_value("0.1", "0.1");
  want_value("0.5", "0.5");
  want_value("-0.5", "-0.5");
  want_value("0.1 + 0.2", "0.30000000000000004");
  want_value("1.0 / 3.0", "0.3333333333333333");
  want_value("2.0 / 3.0", "0.6666666666666666");
  want_value("7.0 / 2.0", "3.5");
  want_value("2.0 * 3", "6.0"); /* an int operand becomes a float */
  want_value("123456789.0", "123456789.0");
  want_value("0.000123", "0.000123");
  want_value("2.5e-7", "2.5e-07");
  want_value("1e20", "1e+20");
  want_value("6.022_140e23", "6.02214e+23");
  want_value("5e-324", "5e-324"); /* the smallest denormal */
  want_value("1.7976931348623157e308", "1.7976931348623157e+308");
  want_value("sqrt(2.0)", "1.4142135623730951");
  want_value("exp2(10.0)", "1024.0");
  want_value("min(2, 1.5)", "1.5");
  want_value("5.5 % 2.0", "1.5");
}

static void float_errors(void **state) {
  (void)state;
  want_diag("1e300 * 1e300",
            "<expr>:1:1: error: floating-point overflow in a compile-time expression\n"
            "1e300 * 1e300\n"
            "^~~~~~~~~~~~~\n");
  want_error("1.0 / 0.0", "division by zero in a compile-time expression");
  want_error("1.5 & 1.0", "'&' takes integers, not floats");
  want_error("sqrt(-1.0)", "sqrt(-1) is not a number");
  want_error("exp(1000.0)", "exp(1000) overflows");
  assert_int_equal(u.diag.errors, 5);
}

/* A float constant of a narrow type holds a value of that type: casts and
   implicit conversions round to nearest, ties to even, and a value beyond
   the type's largest finite one is an error. */
static void float_narrow_types_round(void **state) {
  (void)state;
  want_value("0.1 as f16", "0.0999755859375 as f16");
  want_value("0.1 as bf16", "0.10009765625 as bf16");
  want_value("0.1 as f32", "0.10000000149011612 as f32");
  want_value("0.1 as f64", "0.1 as f64");
  want_value("0.1 as f8e4m3", "0.1015625 as f8e4m3");
  want_value("0.1 as f8e5m2", "0.09375 as f8e5m2");
  want_value("2049.0 as f16", "2048.0 as f16"); /* a tie: to the even neighbour */
  want_value("2051.0 as f16", "2052.0 as f16"); /* a tie: to the even neighbour */
  want_value("16777217 as f32", "16777216.0 as f32");
  want_value("65519.0 as f16", "65504.0 as f16");             /* below the halfway point to 65536 */
  want_value("464.0 as f8e4m3", "448.0 as f8e4m3");           /* f8e4m3 (FN) has no infinity */
  want_value("3e-8 as f16", "5.9604644775390625e-08 as f16"); /* the smallest subnormal */
  want_value("1e-10 as f16", "0.0 as f16");
  want_value("(0.1 as f16) + 1.0", "1.099609375 as f16");
  want_value("f16(0.1)", "0.0999755859375 as f16");
  want_error("1e10 as f16",
             "the float 1e+10 does not fit in f16 (the largest finite f16 is 65504)");
  want_error("65520.0 as f16",
             "the float 65520 does not fit in f16 (the largest finite f16 is 65504)");
  want_error("-465.0 as f8e4m3",
             "the float -465 does not fit in f8e4m3 (the largest finite f8e4m3 is 448)");
  want_error("61440.0 as f8e5m2",
             "the float 61440 does not fit in f8e5m2 (the largest finite f8e5m2 is 57344)");
  want_error("1e39 as f32",
             "the float 1e+39 does not fit in f32 (the largest finite f32 is 3.40282e+38)");
  want_error("1e39 as bf16",
             "the float 1e+39 does not fit in bf16 (the largest finite bf16 is 3.38953e+38)");
  want_error("100000 as f16",
             "the constant 100000 does not fit in f16 (the largest finite f16 is 65504)");
  want_error("(60000.0 as f16) * 2.0",
             "floating-point overflow in a compile-time expression: 60000 * 2 does not fit in "
             "f16");
  want_error("exp(12.0 as f16)", "exp(12) overflows f16");
  assert_int_equal(u.diag.errors, 9);
  /* Implicitly, an untyped constant rounds too; a typed one only widens. */
  check_ok("const H: f16 = 0.1;\n"
           "static_assert(H == 0.1 as f16);\n"
           "const W: f32 = 0.1 as f16;\n"
           "static_assert(W == 0.0999755859375);\n");
}

/* Every code of the 8- and 16-bit formats is a number that encodes back
   to the same code, or an infinity or a NaN (as many as each format has);
   f32 and f64 at their edges. */
static void float_bits_round_trip(void **state) {
  (void)state;
  static const struct {
    FlyTypeCode code;
    int nonfinite;
  } formats[] = {
      {FLY_TYPE_F16, 2 * 1024}, {FLY_TYPE_BF16, 2 * 128},
      {FLY_TYPE_F8E4M3, 2},                               /* FN: only S.1111.111 is NaN */
      {FLY_TYPE_F8E5M2, 2 * 4}, {FLY_TYPE_F8E4M3FNUZ, 1}, /* FNUZ: only 0x80 (-0's code) is NaN */
      {FLY_TYPE_F8E5M2FNUZ, 1}};
  for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
    const FlyType *t = fly_type_scalar(formats[f].code);
    int nonfinite = 0;
    for (uint64_t bits = 0; bits < (uint64_t)1 << fly_type_bits(t); bits++) {
      double x, r;
      if (!fly_float_from_bits(t, bits, &x)) {
        nonfinite++;
        continue;
      }
      assert_int_equal(fly_float_bits(t, x), bits);
      assert_true(fly_float_round(t, x, &r) && r == x);
    }
    assert_int_equal(nonfinite, formats[f].nonfinite);
  }
  const FlyType *f16 = fly_type_scalar(FLY_TYPE_F16), *f32 = fly_type_scalar(FLY_TYPE_F32);
  const FlyType *f64 = fly_type_scalar(FLY_TYPE_F64);
  double x;
  assert_int_equal(fly_float_bits(f16, -0.0), 0x8000);
  assert_int_equal(fly_float_bits(fly_type_scalar(FLY_TYPE_F8E4M3), 448.0), 0x7E);
  assert_int_equal(fly_float_bits(fly_type_scalar(FLY_TYPE_F8E5M2), 57344.0), 0x7B);
  /* FNUZ: biases 8 and 16, every code but 0x80 a number, -0 is 0. */
  const FlyType *e4fnuz = fly_type_scalar(FLY_TYPE_F8E4M3FNUZ);
  const FlyType *e5fnuz = fly_type_scalar(FLY_TYPE_F8E5M2FNUZ);
  assert_int_equal(fly_float_bits(e4fnuz, 240.0), 0x7F);
  assert_int_equal(fly_float_bits(e4fnuz, 1.0), 0x40);
  assert_int_equal(fly_float_bits(e4fnuz, -0.0), 0);
  assert_int_equal(fly_float_bits(e4fnuz, NAN), 0x80);
  assert_int_equal(fly_float_bits(e5fnuz, 57344.0), 0x7F);
  assert_int_equal(fly_float_bits(e5fnuz, 0x1p-17), 1);
  assert_true(fly_float_from_bits(e4fnuz, 0xFF, &x) && x == -240.0);
  assert_true(fly_float_from_bits(e4fnuz, 0x08, &x) && x == 0x1p-7);
  assert_false(fly_float_from_bits(e5fnuz, 0x80, &x));
  assert_true(fly_float_max(e4fnuz) == 240.0 && fly_float_max(e5fnuz) == 57344.0);
  assert_int_equal(fly_float_bits(fly_type_scalar(FLY_TYPE_BF16), 1.0), 0x3F80);
  assert_int_equal(fly_float_bits(f32, -2.5), 0xC0200000);
  assert_int_equal(fly_float_bits(f32, 0x1p-149), 1);
  assert_int_equal(fly_float_bits(f32, 0x1.fffffep127), 0x7F7FFFFF);
  assert_int_equal(fly_float_bits(f64, 1.0), 0x3FF0000000000000);
  assert_int_equal(fly_float_bits(f64, 0x1p-1074), 1);
  assert_true(fly_float_from_bits(f32, 0x00800000, &x) && x == 0x1p-126);
  assert_true(fly_float_from_bits(f64, 0x8000000000000000, &x) && x == 0 && signbit(x));
  assert_false(fly_float_from_bits(f32, 0x7F800000, &x));
  assert_false(fly_float_from_bits(f64, 0x7FF8000000000000, &x));
}

/* The vector builtins fold what they compute from vectors of constants. */
static void vectors_of_constants(void **state) {
  (void)state;
  want_value("sum(vec<4, i32>(1, 2, 3, 4))", "10 as i32");
  want_value("sum(vec<3, f32>(0.1, 0.2, 0.3))", "0.6000000238418579 as f32"); /* in f32, in order */
  want_value("max(vec<4, f16>(1.0, -2.0, 3.5, 0.25))", "3.5 as f16");
  want_value("min(vec<4, i8>(1, -2, 3, -128))", "-128 as i8");
  want_value("vec<4, i32>(7)[3]", "7 as i32");
  want_value("vec<4, i32>(1, 2, 3, 4).insert(0, 9).insert(3, 8)[0]", "9 as i32");
  want_value("sum(vec<4, i32>(1, 2, 3, 4).insert(2, -3))", "4 as i32");
  want_value("bitcast(1.0, i32)", "1065353216 as i32");
  want_value("bitcast(-16128 as i16, f16)", "-2.5 as f16");
  /* An infinity (or a NaN) is left to the GPU. */
  want_error("bitcast(0x7C00 as i16, f16)", "the value of the expression must be known at compile "
                                            "time, but this value is known only when the kernel "
                                            "runs");
  want_value("bitcast(bitcast(2.5 as f64, vec<2, i32>), f64)", "2.5 as f64");
  want_value("bitcast(vec<2, f16>(1.0, 2.0), i32)", "1073757184 as i32"); /* element 0 low */
  want_value("bitcast(vec<4, f8e4m3>(1.0, -2.0, 448.0, 0.015625), i32)", "142524472 as i32");
  want_value("sum(bitcast(vec<2, f32>(1.0, 2.0), vec<4, i16>))", "32640 as i16");
  want_value("where(true, 1, 2.5)", "1");
  want_value("where(false, 1, 2.5)", "2.5");
  want_value("sum(where(vec<3, i1>(true, false, true), vec<3, i32>(1, 2, 3), 10))", "14 as i32");
  want_value("max(where(vec<2, i1>(false, true), 0.5, vec<2, f32>(4.0, 3.0)))", "4.0 as f32");
  want_error("sum(vec<2, i8>(100, 100))",
             "integer overflow in a compile-time expression: 100 + 100 does not fit in i8");
  want_error("vec<4, i32>(1, 2, 3, 4)[4]", "index 4 is out of range for vec<4, i32> (0 to 3)");
}

static void typed_min_max_and_abs(void **state) {
  (void)state;
  want_value("max(2 as i8, 3)", "3 as i8");
  want_value("min(3, 2 as i8)", "2 as i8");
  want_value("max(3, 2.5)", "3.0");
  want_value("min(1.5 as f16, 2)", "1.5 as f16");
  want_value("abs(-127 as i8)", "127 as i8");
  want_error("abs(-128 as i8)",
             "integer overflow in a compile-time expression: abs(-128) does not fit in i8");
  want_error("max(2 as i8, 300)", "the constant 300 does not fit in i8");
  want_error("max(1 as i8, 2 as i16)",
             "mismatched operand types i8 and i16 (convert one with 'as')");
  assert_int_equal(u.diag.errors, 3);
}

/* ---- booleans and short circuits ---------------------------------------------------------- */

static void short_circuit(void **state) {
  (void)state;
  /* The right side is not evaluated when the left decides. */
  want_value("false && 1 / 0 == 0", "false");
  want_value("true || 1 / 0 == 0", "true");
  want_value("false && undefined_name", "false");
  want_value("true || (9223372036854775807 + 1 > 0)", "true");
  want_value("1 > 2 || 2 > 1", "true");
  want_value("!(true && false)", "true");
  want_value("true ^ true", "false");
  /* ... and it is when it does not. */
  want_diag("true && 1 / 0 == 0",
            "<expr>:1:9: error: division by zero in a compile-time expression (1 / 0)\n"
            "true && 1 / 0 == 0\n"
            "        ^~~~~\n");
  want_error("false || 1 / 0 == 0", "division by zero in a compile-time expression (1 / 0)");
  want_error("1 && true", "'&&' takes booleans, not an integer");
  want_error("true + 1", "'+' takes numbers, not booleans");
  want_error("!1", "'!' takes a boolean, not an integer");
  assert_int_equal(u.diag.errors, 5);
}

/* ---- tuples --------------------------------------------------------------------------------- */

static void tuples(void **state) {
  (void)state;
  want_value("()", "()");
  want_value("(4,)", "(4,)");
  want_value("(4)", "4");
  want_value("(1, (2, 3), ())", "(1,(2,3),())");
  want_value("(1, (2, 3))[1]", "(2,3)");
  want_value("(1, (2, 3))[1][0]", "2");
  want_value("(10, 20, 30)[1 + 1]", "30");
  want_value("(1, 2) == (1, 2)", "true");
  want_value("(1, 2) != (1, (2,))", "true");
  want_value("rank((1, (2, 3)))", "2");
  want_value("depth((1, (2, (3,))))", "3");
  want_value("(\"a\", 1.5, true, f32)", "(\"a\",1.5,true,f32)");
  want_diag("(1, 2, 3)[3]", "<expr>:1:11: error: index 3 is out of range for a tuple of 3 "
                            "elements\n"
                            "(1, 2, 3)[3]\n"
                            "          ^\n");
  want_error("(1, 2, 3)[-1]", "index -1 is out of range for a tuple of 3 elements");
  want_error("(1, 2)[0, 1]", "a tuple takes one index, not 2");
  want_error("(1, 2)[0.5]", "the index of a tuple element must be an integer, not a float");
  want_error("()[0]", "index 0 is out of range for a tuple of 0 elements");
  want_error("(1, 2) < 3",
             "'<' compares numbers; compare tuples leaf by leaf with elem_less(a, b)");
  assert_int_equal(u.diag.errors, 6);
}

/* ---- layouts -------------------------------------------------------------------------------- */

static void layout_literals(void **state) {
  (void)state;
  want_value("8:1", "8:1");
  want_value("(8, 16):(1, 8)", "(8,16):(1,8)");
  want_value("(4, (2, 2)):(2, (1, 8))", "(4,(2,2)):(2,(1,8))");
  want_value("2 * 4 : 1", "8:1"); /* ':' binds loosest */
  want_value("(8, 4):(-1, 0)", "(8,4):(-1,0)");
  /* A rank-1 layout whose mode is a tuple prints without the outer pair of
     parentheses, as CuTe prints it; rank tells it from a rank-2 layout. */
  want_value("((4, 2),):((1, 4),)", "(4,2):(1,4)");
  want_value("rank(((4, 2),):((1, 4),))", "1");
  want_value("rank(((4,2)):((1,4)))", "1");
  want_value("rank((4,2):(1,4))", "2");
  want_value("((8, 16):(1, 8))[3, 2]", "19");
  want_value("((8, 16):(1, 8))[(3, 2)]", "19");
  want_value("((8, 16):(1, 8))[_, 2]", "8:1");
  want_value("((8, 16):(1, 8))[3, _]", "16:8");
  want_value("(8:1) == (8:1)", "true");
  want_value("(8:1) == (8:2)", "false");
  want_diag("(8, 4):(1, 2, 3)", "<expr>:1:1: error: the shape (8,4) and the stride (1,2,3) of "
                                "a layout must have the same form\n"
                                "(8, 4):(1, 2, 3)\n"
                                "^~~~~~~~~~~~~~~~\n");
  want_error("(8, 1.5):(1, 8)",
             "the shape of a layout must be an integer or a tuple of integers, not a float");
  want_error("(8:1) + 1", "'+' cannot take a layout");
  assert_int_equal(u.diag.errors, 3);
}

static void layout_algebra(void **state) {
  (void)state;
  want_value("size((8, 16):(1, 8))", "128");
  want_value("cosize((4, 2):(2, 1))", "8");
  want_value("shape((8, 16):(1, 8))", "(8,16)");
  want_value("stride((8, 16):(1, 8))", "(1,8)");
  want_value("composition(8:2, 4:2)", "4:4");
  want_value("coalesce((2, 4):(1, 2))", "8:1");
  want_value("complement(4:1, 16)", "4:4");
  want_value("right_inverse((4, 2):(2, 1))", "(2,4):(4,1)");
  want_value("left_inverse((4, 2):(2, 1))", "(2,4):(4,1)");
  want_value("logical_divide(16:1, 4:1)", "(4,4):(1,4)");
  want_value("zipped_divide((8, 8):(1, 8), (2, 4))", "((2,4),(4,2)):((1,8),(2,32))");
  want_value("logical_product(2:1, 3:2)", "(2,3):(1,4)");
  want_value("blocked_product(2:1, 3:1)", "(2,3):(1,2)");
  want_value("flatten(((2, 2), 3):((1, 2), 4))", "(2,2,3):(1,2,4)");
  want_value("make_layout((8, 4), (1, 8))", "(8,4):(1,8)");
  want_value("make_row_major((4, 8))", "(4,8):(8,1)");
  want_value("idx2crd(5, (2, 4))", "(1,2)");
  want_value("crd2idx((1, 2), (2, 4):(1, 2))", "5");
  want_value("composition(swizzle(3, 3, 3), (8, 64):(64, 1))", "S<3,3,3> o 0 o (8,64):(64,1)");
  want_error("size((9223372036854775807, 2):(1, 1))",
             "integer overflow: 9223372036854775807 * 2 does not fit in 64 bits");
  want_error("size(3.0)", "this argument must be a layout, not a float");
  want_diag("idx2crd(5, (0, 4))", "<expr>:1:12: error: the extents of a shape must be positive, "
                                  "not (0,4)\n"
                                  "idx2crd(5, (0, 4))\n"
                                  "           ^~~~~~\n");
  want_error("(0, 4):(1, 1)", "shape 0 is not positive");
  assert_int_equal(u.diag.errors, 4);
}

static void layout_request(void **state) {
  (void)state;
  /* flyc layout: layouts only, tilers in CuTe's text, tables. */
  char *got;
  FlyEvalRequest r = {.name = "<expr>", .text = "(4:1, 8:2)", .layouts_only = true};
  assert_true(eval_request(&r, &got));
  assert_string_equal(got, "(4:1,8:2)\n");

  r.text = "(2, 2):(1, 2)";
  r.table = true;
  assert_true(eval_request(&r, &got));
  assert_non_null(strstr(got, "0"));
  assert_non_null(strstr(got, "3"));

  r.text = "1.5";
  r.table = false;
  assert_false(eval_request(&r, &got));
  assert_string_equal(got, "");
  assert_string_equal(diag_new(), "<expr>:1:1: error: flyc layout shows layouts, but this is a "
                                  "float; use 'flyc eval' for other values\n"
                                  "1.5\n"
                                  "^~~\n");
  assert_int_equal(u.diag.errors, 1);
}

/* ---- if const -------------------------------------------------------------------------------- */

static void if_const_selects_a_branch(void **state) {
  (void)state;
  /* The branch not taken is never evaluated. */
  want_value("if const 1 < 2 { 10 } else { 1 / 0 }", "10");
  want_value("if const 1 > 2 { 1 / 0 } else { 20 }", "20");
  want_value("if 1 > 2 { 1 } else if 2 > 1 { 2 } else { 3 }", "2");
  want_error("if const 1 { 1 } else { 2 }", "a condition must be a boolean, not an integer");
  check_ok("fn pick(const wide: bool) {\n"
           "    if const wide { (128, \"wide\") } else { (32, 1 / 0) }\n"
           "}\n"
           "const P = pick(true);\n"
           "static_assert(P[0] == 128 && P[1] == \"wide\");\n");
  want_value("pick(true)", "(128,\"wide\")");
  want_error("pick(false)", "division by zero in a compile-time expression (1 / 0)");
  assert_int_equal(u.diag.errors, 2);
}

static void if_const_needs_a_static_condition(void **state) {
  (void)state;
  bool ok = check("kernel k(X: tensor<f32>, n: i32) {\n"
                  "    if const n > 0 { }\n"
                  "}\n"
                  "launch k { grid = 1; block = 32; }\n");
  assert_false(ok);
  assert_int_equal(u.diag.errors, 1);
  assert_string_equal(diag_new(), "t.fly:2:14: error: the condition of 'if const' must be known "
                                  "at compile time, but this value is known only when the kernel "
                                  "runs\n"
                                  "    if const n > 0 { }\n"
                                  "             ^~~~~\n"
                                  "t.fly:1:26: note: it depends on 'n', a runtime parameter of "
                                  "kernel 'k'\n"
                                  "kernel k(X: tensor<f32>, n: i32) {\n"
                                  "                         ^~~~~~\n");
}

/* ---- range_const and carried values ------------------------------------------------------ */

static const char helpers[] = "fn factorial(const n: int) -> int {\n"
                              "    for i in range_const(1, n + 1) carry (p = 1) {\n"
                              "        yield p * i;\n"
                              "    }\n"
                              "    p\n"
                              "}\n"
                              "fn log2_floor(const n: int) -> int {\n"
                              "    static_assert(n >= 1, \"log2_floor: n must be at least 1\");\n"
                              "    for i in range_const(63) carry (k = 0) {\n"
                              "        yield if const (n >> (i + 1)) > 0 { k + 1 } else { k };\n"
                              "    }\n"
                              "    k\n"
                              "}\n"
                              "fn fib_pair(const n: int) {\n"
                              "    for _ in range_const(n) carry (a = 0, b = 1) {\n"
                              "        yield (b, a + b);\n"
                              "    }\n"
                              "    (a, b)\n"
                              "}\n"
                              "fn fib(n) {\n"
                              "    if n < 2 { n } else { fib(n - 1) + fib(n - 2) }\n"
                              "}\n"
                              "fn evens(const n: int) {\n"
                              "    for i in range_const(0, n, 2) carry (sum = 0, count = 0) {\n"
                              "        yield (sum + i, count + 1);\n"
                              "    }\n"
                              "    (sum, count)\n"
                              "}\n";

static void range_const_with_carries(void **state) {
  (void)state;
  check_ok(helpers);
  want_value("factorial(0)", "1");
  want_value("factorial(5)", "120");
  want_value("factorial(20)", "2432902008176640000");
  want_value("log2_floor(1)", "0");
  want_value("log2_floor(1024)", "10");
  want_value("log2_floor(1025)", "10");
  want_value("log2_floor(9223372036854775807)", "62");
  want_value("fib_pair(10)", "(55,89)");
  want_value("evens(7)", "(12,4)");
  want_value("evens(0)", "(0,0)");
  want_value("range_const(4)", "range_const(0, 4, 1)");
  assert_int_equal(u.diag.errors, 0);
}

static void range_const_errors(void **state) {
  (void)state;
  check_ok(helpers);
  /* 21! overflows: the message has the call chain. */
  want_diag("factorial(21)", "t.fly:3:15: error: integer overflow in a compile-time expression: "
                             "2432902008176640000 * 21 does not fit in 64 bits (int)\n"
                             "        yield p * i;\n"
                             "              ^~~~~\n"
                             "<expr>:1:1: note: in the call of 'factorial' here\n"
                             "factorial(21)\n"
                             "^~~~~~~~~~~~~\n");
  want_diag("log2_floor(0)", "t.fly:8:19: error: static assertion failed: log2_floor: n must "
                             "be at least 1\n"
                             "    static_assert(n >= 1, \"log2_floor: n must be at least 1\");\n"
                             "                  ^~~~~~\n"
                             "<expr>:1:1: note: in the call of 'log2_floor' here\n"
                             "log2_floor(0)\n"
                             "^~~~~~~~~~~~~\n");
  want_error("range_const(1.5)", "the bounds of range_const are integers, not a float");
  want_error("range_const(0, 4, 0)", "the step of range_const must be positive, not 0");
  want_error("range_const(2000000)",
             "range_const of 2000000 iterations is more than the step limit (1000000)");
  want_error("range_const(-9223372036854775808, 9223372036854775807)",
             "range_const from -9223372036854775808 to 9223372036854775807 has too many "
             "iterations");
  assert_int_equal(u.diag.errors, 6);
}

static void range_const_at_the_int64_bounds(void **state) {
  (void)state;
  /* The last step would pass INT64_MAX: the loop stops at its bound. */
  want_value("range_const(9223372036854775806, 9223372036854775807, 5)",
             "range_const(9223372036854775806, 9223372036854775807, 5)");
  check_ok("const {\n"
           "    for i in range_const(9223372036854775806, 9223372036854775807, 5) carry (n = 0) {\n"
           "        yield n + 1;\n"
           "    }\n"
           "    let HIGH = n;\n"
           "    for i in range_const(-9223372036854775808, -9223372036854775804, 2) carry (m = 0) "
           "{\n"
           "        yield m + 1;\n"
           "    }\n"
           "    let LOW = m;\n"
           "    for i in range_const(9223372036854775805, 9223372036854775807) carry (last = 0) {\n"
           "        yield i;\n"
           "    }\n"
           "    let LAST = last;\n"
           "}\n"
           "static_assert(HIGH == 1 && LOW == 2 && LAST == 9223372036854775806);\n");
}

static void loop_body_rules(void **state) {
  (void)state;
  bool ok = check("const {\n"
                  "    for i in range_const(3) carry (s = 0) { let t = s + i; }\n"
                  "}\n"
                  "const {\n"
                  "    for i in range_const(3) { yield i; }\n"
                  "}\n"
                  "const {\n"
                  "    for i in range_const(3) carry (a = 0, b = 0) { yield a; }\n"
                  "}\n"
                  "const {\n"
                  "    for i in 3 { }\n"
                  "}\n");
  assert_false(ok);
  assert_int_equal(u.diag.errors, 4);
  const char *d = diag_new();
  assert_non_null(strstr(d, "t.fly:2:43: error: the loop carries 1 value, so its body must end "
                            "with 'yield' giving it\n"));
  assert_non_null(strstr(d, "t.fly:5:31: error: this loop carries no values, so there is nothing "
                            "to yield\n"));
  assert_non_null(strstr(d, "t.fly:8:52: error: the loop carries 2 values, so 'yield' must give "
                            "a tuple of 2, not an integer\n"));
  assert_non_null(strstr(d, "t.fly:11:14: error: a for loop runs over range(...) or "
                            "range_const(...), not an integer\n"));
}

/* ---- recursion and limits ------------------------------------------------------------------- */

static void recursive_fibonacci(void **state) {
  (void)state;
  check_ok("fn fib(n) {\n"
           "    if n < 2 { n } else { fib(n - 1) + fib(n - 2) }\n"
           "}\n"
           "const F12 = fib(12);\n"
           "static_assert(F12 == 144, \"fib(12) is 144\");\n"
           "fn first_positive(a, b) {\n"
           "    if a > 0 {\n"
           "        return a;\n"
           "    }\n"
           "    return b;\n"
           "}\n");
  want_value("fib(20)", "6765");
  want_value("F12", "144");
  want_value("(first_positive(-1, 5), first_positive(2, 5))", "(5,2)");
}

static void depth_limit(void **state) {
  (void)state;
  opt.depth_limit = 5;
  bool ok = check("fn fib(n) {\n"
                  "    if n < 2 { n } else { fib(n - 1) + fib(n - 2) }\n"
                  "}\n"
                  "const SMALL = fib(4);\n"
                  "const BIG = fib(10);\n");
  assert_false(ok);
  assert_int_equal(u.diag.errors, 1);
  /* The chain innermost first; a recursion is one note with its count. */
  assert_string_equal(diag_new(),
                      "t.fly:2:27: error: calls nested too deeply at compile time (the limit is "
                      "5); is 'fib' recursive without end?\n"
                      "    if n < 2 { n } else { fib(n - 1) + fib(n - 2) }\n"
                      "                          ^~~~~~~~~~\n"
                      "t.fly:2:27: note: in the call of 'fib' here (4 times, nested)\n"
                      "    if n < 2 { n } else { fib(n - 1) + fib(n - 2) }\n"
                      "                          ^~~~~~~~~~\n"
                      "t.fly:5:13: note: in the call of 'fib' here\n"
                      "const BIG = fib(10);\n"
                      "            ^~~~~~~\n");
}

static void depth_limit_short_chain(void **state) {
  (void)state;
  opt.depth_limit = 2;
  bool ok = check("fn a(n) { b(n) }\n"
                  "fn b(n) { c(n) }\n"
                  "fn c(n) { n }\n"
                  "const X = a(1);\n");
  assert_false(ok);
  assert_int_equal(u.diag.errors, 1);
  assert_string_equal(diag_new(), "t.fly:2:11: error: calls nested too deeply at compile time "
                                  "(the limit is 2; raise it with --depth-limit=N)\n"
                                  "fn b(n) { c(n) }\n"
                                  "          ^~~~\n"
                                  "t.fly:1:11: note: in the call of 'b' here\n"
                                  "fn a(n) { b(n) }\n"
                                  "          ^~~~\n"
                                  "t.fly:4:11: note: in the call of 'a' here\n"
                                  "const X = a(1);\n"
                                  "          ^~~~\n");
}

static void unbounded_recursion_stops(void **state) {
  (void)state;
  /* The default limit: the check ends with one error, whatever the chain. */
  bool ok = check("fn ping(n) { pong(n + 1) }\n"
                  "fn pong(n) { ping(n) }\n"
                  "const X = ping(0);\n"
                  "const Y = 1 / 0;\n");
  assert_false(ok);
  assert_int_equal(u.diag.errors, 1); /* the limit aborts the pass */
  const char *d = diag_new();
  assert_non_null(strstr(d, "error: calls nested too deeply at compile time (the limit is 200); "
                            "is 'p"));
  /* The four innermost calls, then the rest from where the chain started. */
  assert_non_null(strstr(d, "t.fly:3:11: note: ... and 196 more calls, from the call of 'ping' "
                            "here\n"
                            "const X = ping(0);\n"));
}

static void step_limit(void **state) {
  (void)state;
  opt.step_limit = 100;
  bool ok = check("fn total(n) {\n"
                  "    for i in range_const(n) carry (s = 0) { yield s + i; }\n"
                  "    s\n"
                  "}\n"
                  "const S = total(100);\n"
                  "const T = 1 / 0;\n");
  assert_false(ok);
  assert_int_equal(u.diag.errors, 1);
  assert_string_equal(diag_new(), "t.fly:2:51: error: compile-time evaluation did not finish "
                                  "within 100 steps (the step limit; raise it with "
                                  "--step-limit=N)\n"
                                  "    for i in range_const(n) carry (s = 0) { yield s + i; }\n"
                                  "                                                  ^~~~~\n"
                                  "t.fly:5:11: note: in the call of 'total' here\n"
                                  "const S = total(100);\n"
                                  "          ^~~~~~~~~~\n");
}

static void step_limit_is_enough(void **state) {
  (void)state;
  opt.step_limit = 2000;
  check_ok("fn total(n) {\n"
           "    for i in range_const(n) carry (s = 0) { yield s + i; }\n"
           "    s\n"
           "}\n"
           "const S = total(100);\n"
           "static_assert(S == 4950);\n");
}

static void step_limit_in_eval(void **state) {
  (void)state;
  opt.step_limit = 50;
  want_error("range_const(51)", "range_const of 51 iterations is more than the step limit (50)");
  check_ok("fn fib(n) {\n"
           "    if n < 2 { n } else { fib(n - 1) + fib(n - 2) }\n"
           "}\n");
  want_error("fib(10)", "compile-time evaluation did not finish within 50 steps (the step "
                        "limit; raise it with --step-limit=N)");
}

/* ---- const blocks and static_assert ------------------------------------------------------- */

static void const_blocks(void **state) {
  (void)state;
  check_ok("const WARPS = 4;\n"
           "const THREADS: int = WARPS * 32;\n"
           "const {\n"
           "    let BM = 128;\n"
           "    let BN = if BM >= 128 { 64 } else { 128 };\n"
           "    let (STAGES, SPLIT) = (3, 1);\n"
           "    let (_, (DEEP, _)) = (0, (7, 0));\n"
           "    const DEPTH = STAGES * SPLIT;\n"
           "}\n"
           "static_assert(BM * BN % THREADS == 0);\n"
           "kernel k(A: tensor<f16>) {\n"
           "    const PER_THREAD = BM * BN / THREADS;\n"
           "    const {\n"
           "        let HALF = PER_THREAD / 2;\n"
           "        let HALF = HALF + 1;\n"
           "    }\n"
           "    static_assert(HALF == 33, \"the later binding wins\");\n"
           "}\n"
           "launch k { grid = 1; block = THREADS; }\n");
  want_value("(BM, BN, STAGES, SPLIT, DEPTH, DEEP)", "(128,64,3,1,3,7)");
  want_value("THREADS", "128");
}

static void const_block_errors(void **state) {
  (void)state;
  bool ok = check("kernel k(X: tensor<f32>, n: i32) {\n"
                  "    const {\n"
                  "        let z = n + 1;\n"
                  "    }\n"
                  "}\n"
                  "launch k { grid = 1; block = 32; }\n"
                  "const {\n"
                  "    let (P, Q) = (1, 2, 3);\n"
                  "}\n"
                  "const M = SELF + 1;\n"
                  "const SELF = M;\n");
  assert_false(ok);
  assert_int_equal(u.diag.errors, 3);
  const char *d = diag_new();
  assert_non_null(strstr(d, "t.fly:8:9: error: this pattern takes a tuple of 2 elements, but the "
                            "value is (1,2,3)\n"));
  assert_non_null(strstr(d, "t.fly:8:18: note: the value comes from here\n"));
  assert_non_null(strstr(d, "t.fly:11:14: error: 'M' depends on its own value\n"));
  assert_non_null(strstr(d, "t.fly:3:17: error: a value in a const block must be known at "
                            "compile time, but this value is known only when the kernel runs\n"));
}

static void static_assert_messages(void **state) {
  (void)state;
  bool ok = check("const N = 3;\n"
                  "static_assert(N == 3);\n"
                  "static_assert(N % 2 == 0);\n"
                  "static_assert(N % 2 == 0, \"N must be even\");\n"
                  "static_assert(N, \"not a boolean\");\n"
                  "static_assert(N == 3, N);\n"
                  "static_assert(N == 3, \"unused when it holds\");\n");
  assert_false(ok);
  assert_int_equal(u.diag.errors, 4);
  assert_string_equal(diag_new(),
                      "t.fly:3:15: error: static assertion failed\n"
                      "static_assert(N % 2 == 0);\n"
                      "              ^~~~~~~~~~\n"
                      "t.fly:4:15: error: static assertion failed: N must be even\n"
                      "static_assert(N % 2 == 0, \"N must be even\");\n"
                      "              ^~~~~~~~~~\n"
                      "t.fly:5:15: error: a condition must be a boolean, not an integer\n"
                      "static_assert(N, \"not a boolean\");\n"
                      "              ^\n"
                      "t.fly:6:23: error: the message of static_assert must be a string, not an "
                      "integer\n"
                      "static_assert(N == 3, N);\n"
                      "                      ^\n");
}

static void static_assert_in_helper_has_call_chain(void **state) {
  (void)state;
  bool ok = check("fn need_even(const n: int) {\n"
                  "    static_assert(n % 2 == 0, \"odd\");\n"
                  "    n / 2\n"
                  "}\n"
                  "fn half(const n: int) { need_even(n) }\n"
                  "const H = half(7);\n");
  assert_false(ok);
  assert_int_equal(u.diag.errors, 1);
  assert_string_equal(diag_new(), "t.fly:2:19: error: static assertion failed: odd\n"
                                  "    static_assert(n % 2 == 0, \"odd\");\n"
                                  "                  ^~~~~~~~~~\n"
                                  "t.fly:5:25: note: in the call of 'need_even' here\n"
                                  "fn half(const n: int) { need_even(n) }\n"
                                  "                        ^~~~~~~~~~~~\n"
                                  "t.fly:6:11: note: in the call of 'half' here\n"
                                  "const H = half(7);\n"
                                  "          ^~~~~~~\n");
}

/* ---- kernels, -D and specialisations ----------------------------------------------------- */

static const char kernel_src[] =
    "kernel k(X: tensor<f32>, const BLOCK: int = 128, const VEC = 4) {\n"
    "    static_assert(BLOCK % warp_size == 0, \"BLOCK must be a multiple of the warp size\");\n"
    "    const PER = BLOCK * VEC;\n"
    "    let i = block_idx.x * BLOCK + thread_idx.x;\n"
    "}\n"
    "launch k { grid = ceil_div(size(X), BLOCK * VEC); block = BLOCK; }\n";

/* Checks kernel_src with the defines and returns the specialisation lines. */
static char *specialise(const FlyDefine *defines, int n, bool *ok) {
  size_t len = 0;
  char **lines = keep_slot();
  FILE *specs = open_memstream(lines, &len);
  assert_non_null(specs);
  opt.defines = defines;
  opt.ndefines = n;
  opt.specializations = specs;
  *ok = check(kernel_src);
  fclose(specs);
  opt.specializations = NULL;
  return *lines;
}

static void specialisation_defaults(void **state) {
  (void)state;
  bool ok;
  char *lines = specialise(NULL, 0, &ok);
  assert_true(ok);
  assert_string_equal(lines, "k BLOCK=128 VEC=4 @sm_90\n");
  assert_string_equal(diag_new(), "");
}

static void specialisation_defines(void **state) {
  (void)state;
  FlyDefine d[] = {{"BLOCK", "256"}, {"VEC", "2 * 4"}};
  bool ok;
  char *lines = specialise(d, 2, &ok);
  assert_true(ok);
  assert_string_equal(lines, "k BLOCK=256 VEC=8 @sm_90\n");
  assert_string_equal(diag_new(), "");
}

static void specialisation_later_define_wins(void **state) {
  (void)state;
  FlyDefine d[] = {{"BLOCK", "64"}, {"BLOCK", "512"}, {"VEC", "3"}};
  bool ok;
  char *lines = specialise(d, 3, &ok);
  assert_true(ok);
  assert_string_equal(lines, "k BLOCK=512 VEC=3 @sm_90\n");
  assert_string_equal(diag_new(), ""); /* the BLOCK=64 given first counts as used */
}

static void define_errors(void **state) {
  (void)state;
  FlyDefine d[] = {{"BLOCK", "100"}, {"NOPE", "1"}};
  bool ok;
  char *lines = specialise(d, 2, &ok);
  assert_false(ok);
  assert_int_equal(u.diag.errors, 2);
  /* The specialisation is printed before its body is checked. */
  assert_string_equal(lines, "k BLOCK=100 VEC=4 @sm_90\n");
  assert_string_equal(diag_new(),
                      "t.fly:2:19: error: static assertion failed: BLOCK must be a multiple of "
                      "the warp size\n"
                      "    static_assert(BLOCK % warp_size == 0, \"BLOCK must be a multiple of "
                      "the warp size\");\n"
                      "                  ^~~~~~~~~~~~~~~~~~~~~~\n"
                      "flyc: error: -D NOPE: no kernel has a const parameter named 'NOPE'\n");
}

static void define_syntax_error(void **state) {
  (void)state;
  FlyDefine d[] = {{"BLOCK", "1 +"}};
  bool ok;
  char *lines = specialise(d, 1, &ok);
  assert_false(ok);
  assert_int_equal(u.diag.errors, 1);
  assert_string_equal(lines, "");
  assert_string_equal(diag_new(), "-D BLOCK:1:4: error: expected an expression, found the end of "
                                  "the file\n"
                                  "1 +\n"
                                  "   ^\n");
}

static void define_of_the_wrong_type(void **state) {
  (void)state;
  /* The error points into the -D value, not at the parameter's default. */
  FlyDefine d[] = {{"BLOCK", "\"x\""}};
  bool ok;
  char *lines = specialise(d, 1, &ok);
  assert_false(ok);
  assert_int_equal(u.diag.errors, 1);
  assert_string_equal(lines, "");
  assert_string_equal(diag_new(), "-D BLOCK:1:1: error: expected int, but this is a string\n"
                                  "\"x\"\n"
                                  "^~~\n");
}

static void define_not_static(void **state) {
  (void)state;
  FlyDefine d[] = {{"BLOCK", "thread_idx.x"}};
  bool ok;
  char *lines = specialise(d, 1, &ok);
  assert_false(ok);
  assert_int_equal(u.diag.errors, 1);
  assert_string_equal(lines, "");
  const char *diag = diag_new();
  assert_non_null(strstr(diag, "-D BLOCK:1:1: error: the value of -D BLOCK must be known at "
                               "compile time, but "));
}

static void const_parameter_without_value(void **state) {
  (void)state;
  bool ok = check("kernel k(X: tensor<f32>, const N: int) { }\n"
                  "launch k { grid = 1; block = 1; }\n");
  assert_false(ok);
  assert_int_equal(u.diag.errors, 1);
  assert_string_equal(diag_new(), "t.fly:1:26: error: the const parameter 'N' of kernel 'k' has "
                                  "no value: give it a default or pass -D N=VALUE\n"
                                  "kernel k(X: tensor<f32>, const N: int) { }\n"
                                  "                         ^~~~~~~~~~~~\n");
}

static void several_kernels(void **state) {
  (void)state;
  size_t len = 0;
  char **lines = keep_slot();
  FILE *specs = open_memstream(lines, &len);
  assert_non_null(specs);
  opt.specializations = specs;
  FlyDefine d[] = {{"N", "3"}};
  opt.defines = d;
  opt.ndefines = 1;
  bool ok = check("kernel a(X: tensor<f32>, const N = 1, const S: str = \"x\") { }\n"
                  "kernel b(X: tensor<f32>, const N: int = 2, const L = 4:1) { }\n"
                  "kernel c(X: tensor<f32>) { }\n"
                  "launch a { grid = 1; block = 1; }\n"
                  "launch b { grid = 1; block = 1; }\n"
                  "launch c { grid = 1; block = 1; }\n");
  fclose(specs);
  opt.specializations = NULL;
  assert_true(ok);
  assert_string_equal(*lines, "a N=3 S=\"x\" @sm_90\n"
                              "b N=3 L=4:1 @sm_90\n"
                              "c @sm_90\n");
}

/* ---- targets ------------------------------------------------------------------------------- */

static void target_values(void **state) {
  (void)state;
  want_value("warp_size", "32");
  want_value("(target.vendor, target.arch)", "(\"nvidia\",\"sm_90\")");
  use_target("gfx942");
  want_value("warp_size", "64");
  want_value("(target.vendor, target.arch)", "(\"amd\",\"gfx942\")");
  want_value("if const warp_size == 64 { \"wave64\" } else { \"warp32\" }", "\"wave64\"");
  use_target("gfx1201");
  want_value("warp_size", "32");
  want_value("target.vendor", "\"amd\"");
  want_value("target.family", "\"rdna4\"");
  want_error("target.name",
             "target has the members vendor, arch and family and the method has(name), not 'name'");
}

static void target_lookup(void **state) {
  (void)state;
  const FlyTarget *t = fly_target_find("sm_80");
  assert_non_null(t);
  assert_int_equal(t->vendor, FLY_VENDOR_NVIDIA);
  assert_string_equal(fly_vendor_name(t->vendor), "nvidia");
  assert_int_equal(t->warp_size, 32);
  assert_true(fly_target_has(t, FLY_FEATURE_CP_ASYNC));
  assert_false(fly_target_has(t, FLY_FEATURE_TMA));
  assert_non_null(t = fly_target_find("gfx90a"));
  assert_string_equal(fly_vendor_name(t->vendor), "amd");
  assert_int_equal(t->warp_size, 64);
  assert_true(fly_target_has_mma(t, FLY_MMA_AMD_MFMA));
  assert_null(fly_target_find("sm_75"));
  assert_null(fly_target_find(""));
  assert_string_equal(fly_target_names(),
                      "sm_80, sm_90, sm_90a, gfx90a, gfx942, gfx950, gfx1201, gfx1250");
  assert_string_equal(fly_targets_with_feature(FLY_FEATURE_TMA), "sm_90, sm_90a");
  assert_string_equal(fly_targets_with_mma(FLY_MMA_NV_WGMMA), "sm_90a");
  assert_int_equal(fly_feature_find("tma", 3), FLY_FEATURE_TMA);
  assert_int_equal(fly_feature_find("tmax", 4), -1);
  /* What a GPU reports, to a target: NVIDIA's newest older one, never an
     `a` target; AMD's own chip only. */
  assert_string_equal(fly_target_for_device(FLY_VENDOR_NVIDIA, 90)->arch, "sm_90");
  assert_string_equal(fly_target_for_device(FLY_VENDOR_NVIDIA, 100)->arch, "sm_90");
  assert_string_equal(fly_target_for_device(FLY_VENDOR_NVIDIA, 86)->arch, "sm_80");
  assert_null(fly_target_for_device(FLY_VENDOR_NVIDIA, 75));
  assert_string_equal(fly_target_for_device(FLY_VENDOR_AMD, 90402)->arch, "gfx942");
  assert_null(fly_target_for_device(FLY_VENDOR_AMD, 110000));
  FlyCheckOptions o;
  fly_check_options_init(&o);
  assert_string_equal(o.target->arch, FLY_DEFAULT_TARGET);
  assert_int_equal(o.step_limit, FLY_DEFAULT_STEP_LIMIT);
  assert_int_equal(o.depth_limit, FLY_DEFAULT_DEPTH_LIMIT);
}

static void kernel_per_target(void **state) {
  (void)state;
  /* BLOCK = 96 is three warps of 32 but one and a half wavefronts of 64. */
  FlyDefine d[] = {{"BLOCK", "96"}};
  bool ok;
  char *lines = specialise(d, 1, &ok);
  assert_true(ok);
  assert_string_equal(lines, "k BLOCK=96 VEC=4 @sm_90\n");
  assert_string_equal(diag_new(), "");
}

static void kernel_per_target_amd(void **state) {
  (void)state;
  use_target("gfx942");
  FlyDefine d[] = {{"BLOCK", "96"}};
  bool ok;
  char *lines = specialise(d, 1, &ok);
  assert_false(ok);
  assert_string_equal(lines, "k BLOCK=96 VEC=4 @gfx942\n");
  assert_int_equal(u.diag.errors, 1);
  assert_non_null(strstr(diag_new(), "error: static assertion failed: BLOCK must be a multiple "
                                     "of the warp size\n"));
}

static void target_specific_branches(void **state) {
  (void)state;
  static const char src[] =
      "kernel mma(A: tensor<f16>) {\n"
      "    let atom = if const target.vendor == \"nvidia\" {\n"
      "        mma_atom(nv.mma_sync_16x8x16, f16, f32)\n"
      "    } else {\n"
      "        mma_atom(amd.mfma_16x16x16, f16, f32)\n"
      "    };\n"
      "    static_assert(warp_size == (if const target.vendor == \"nvidia\" { 32 } else { 64 }));\n"
      "}\n"
      "launch mma { grid = 1; block = warp_size; }\n";
  check_ok(src);
}

static void target_specific_branches_amd(void **state) {
  (void)state;
  use_target("gfx942");
  check_ok("kernel mma(A: tensor<f16>) {\n"
           "    let atom = if const target.vendor == \"nvidia\" {\n"
           "        mma_atom(nv.mma_sync_16x8x16, f16, f32)\n"
           "    } else {\n"
           "        mma_atom(amd.mfma_16x16x16, f16, f32)\n"
           "    };\n"
           "    static_assert(warp_size == 64);\n"
           "}\n"
           "launch mma { grid = 1; block = warp_size; }\n");
}

/* ---- a whole program, and runtime values -------------------------------------------------- */

static void unknown_name_reported_once(void **state) {
  (void)state;
  bool ok = check("fn f() { nope }\n"
                  "const G = f();\n");
  assert_false(ok);
  assert_int_equal(u.diag.errors, 1);
  assert_string_equal(diag_new(), "t.fly:1:10: error: unknown name 'nope'\n"
                                  "fn f() { nope }\n"
                                  "         ^~~~\n");
}

static void runtime_values_are_tracked(void **state) {
  (void)state;
  check_ok("kernel total(Y: tensor<f32>, n: i32, x: f32, const THREADS: int = 256) {\n"
           "    let i = block_idx.x * THREADS + thread_idx.x;\n"
           "    for j in range(i, n, THREADS) carry (acc = 0.0, count = 0) {\n"
           "        yield (acc + x * (j as f32), count + 1);\n"
           "    }\n"
           "    let mean = if count > 0 { acc / (count as f32) } else { 0.0 };\n"
           "    let w = if i < n { shuffle(mean, (lane + 1) % warp_size) } else { mean };\n"
           "    barrier();\n"
           "    printf(\"%d %f\\n\", i, w);\n"
           "}\n"
           "launch total {\n"
           "    let blocks = ceil_div(n, THREADS);\n"
           "    grid = (blocks, 1);\n"
           "    block = THREADS;\n"
           "    shared = THREADS * 4;\n"
           "}\n");
}

static void tensor_elements(void **state) {
  (void)state;
  check_ok("kernel total(X: tensor<f32>, Y: tensor<f32>, M: tensor<f16, (?, 8):(8, 1)>, n: i32,\n"
           "        const THREADS: int = 256) {\n"
           "    let i = block_idx.x * THREADS + thread_idx.x;\n"
           "    for j in range(i, n, THREADS) carry (acc = 0.0) {\n"
           "        yield acc + X[j].load();\n"
           "    }\n"
           "    let row = M[i, _];\n"
           "    let h = row[7].load() + M[0, 0].load();\n"
           "    if i < n {\n"
           "        Y[i].store(acc + (h as f32));\n"
           "    }\n"
           "}\n"
           "launch total { grid = ceil_div(n, THREADS); block = THREADS; }\n");
  bool ok = check("kernel k(M: tensor<f16, (?, 8):(8, 1)>) {\n"
                  "    let e = M[0, 8];\n"
                  "}\n"
                  "launch k { grid = 1; block = 1; }\n");
  assert_false(ok);
  assert_int_equal(u.diag.errors, 1);
  assert_non_null(strstr(diag_new(), "error: index 8 is out of range for a mode of size 8\n"));
}

/* Statements nest without evaluations between them; with recursion that
   still ends at the evaluation depth limit, before the C stack runs out. */
static void nesting_is_bounded(void **state) {
  (void)state;
  enum { LEVELS = 120 };
  static const char loop[] = "for i in range_const(1) { ";
  size_t size = 64 + LEVELS * (sizeof loop + 2);
  char **text = keep_slot();
  *text = malloc(size);
  assert_non_null(*text);
  char *p = *text;
  p += sprintf(p, "fn forever(n) {\n    ");
  for (int i = 0; i < LEVELS; i++)
    p += sprintf(p, "%s", loop);
  p += sprintf(p, "let q = forever(n + 1);");
  for (int i = 0; i < LEVELS; i++)
    p += sprintf(p, " }");
  sprintf(p, "\n    0\n}\nconst X = forever(0);\nconst Y = 1 / 0;\n");
  bool ok = check(*text);
  assert_false(ok);
  assert_int_equal(u.diag.errors, 1);
  assert_non_null(strstr(
      diag_new(), "error: compile-time evaluation nested too deeply (limit is 6000 levels)"));
}

static void eval_needs_a_static_value(void **state) {
  (void)state;
  want_diag("thread_idx.x + 1", "<expr>:1:1: error: the value of the expression must be known "
                                "at compile time, but this value is known only when the kernel "
                                "runs\n"
                                "thread_idx.x + 1\n"
                                "^~~~~~~~~~~~~~~~\n"
                                "<expr>:1:1: note: it depends on the thread index\n"
                                "thread_idx.x + 1\n"
                                "^~~~~~~~~~~~\n");
  want_error("barrier()", "this expression has no value");
  want_error("unknown_name", "unknown name 'unknown_name'");
  want_error("?", "'?' stands for a value given at launch and is allowed only in the layout of "
                  "a tensor type, such as tensor<f32, (?, ?):(?, 1)>, and as the size of a "
                  "shared tile, smem<f32>(?)");
  assert_int_equal(u.diag.errors, 4);
}

static void repeated_sessions_do_not_leak(void **state) {
  (void)state;
  /* Many sessions on one unit: each releases what it allocated (LSan). */
  check_ok(helpers);
  for (int i = 0; i < 50; i++) {
    want_value("factorial(10)", "3628800");
    want_value("logical_divide((8, 8):(1, 8), (2:1, 4:1))", "((2,4),(4,2)):((1,2),(8,32))");
  }
  want_error("factorial(30)", "integer overflow in a compile-time expression: "
                              "2432902008176640000 * 21 does not fit in 64 bits (int)");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      TEST(int_arithmetic),
      TEST(int_bounds),
      TEST(int_overflow),
      TEST(typed_constants_wrap_with_as),
      TEST(typed_constants_range_errors),
      TEST(typed_constants_in_declarations),
      TEST(float_shortest_printing),
      TEST(float_errors),
      TEST(float_narrow_types_round),
      TEST(float_bits_round_trip),
      TEST(vectors_of_constants),
      TEST(typed_min_max_and_abs),
      TEST(short_circuit),
      TEST(tuples),
      TEST(layout_literals),
      TEST(layout_algebra),
      TEST(layout_request),
      TEST(if_const_selects_a_branch),
      TEST(if_const_needs_a_static_condition),
      TEST(range_const_with_carries),
      TEST(range_const_errors),
      TEST(range_const_at_the_int64_bounds),
      TEST(loop_body_rules),
      TEST(recursive_fibonacci),
      TEST(depth_limit),
      TEST(depth_limit_short_chain),
      TEST(unbounded_recursion_stops),
      TEST(step_limit),
      TEST(step_limit_is_enough),
      TEST(step_limit_in_eval),
      TEST(const_blocks),
      TEST(const_block_errors),
      TEST(static_assert_messages),
      TEST(static_assert_in_helper_has_call_chain),
      TEST(specialisation_defaults),
      TEST(specialisation_defines),
      TEST(specialisation_later_define_wins),
      TEST(define_errors),
      TEST(define_syntax_error),
      TEST(define_of_the_wrong_type),
      TEST(define_not_static),
      TEST(const_parameter_without_value),
      TEST(several_kernels),
      TEST(target_values),
      TEST(target_lookup),
      TEST(kernel_per_target),
      TEST(kernel_per_target_amd),
      TEST(target_specific_branches),
      TEST(target_specific_branches_amd),
      TEST(unknown_name_reported_once),
      TEST(runtime_values_are_tracked),
      TEST(tensor_elements),
      TEST(nesting_is_bounded),
      TEST(eval_needs_a_static_value),
      TEST(repeated_sessions_do_not_leak),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
