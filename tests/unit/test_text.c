/* test_text.c — reading and printing the canonical text of tuples, layouts,
 * tilers, swizzles and composed layouts (fly_layout_text.h): round trips,
 * which kind fly_parse_value picks, and every parser error with its message
 * and the byte offset fly_algebra_error_pos reports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_test_session.h"

/* ---- helpers ------------------------------------------------------------ */

typedef enum { AS_TUPLE, AS_LAYOUT, AS_TILER, AS_SWIZZLE, AS_COMPOSED, AS_VALUE } Parser;

static const char *parser_name(Parser p) {
  static const char *names[] = {"tuple", "layout", "tiler", "swizzle", "composed", "value"};
  return names[p];
}

/* Parses len bytes of text with parser p and prints the result; NULL when
 * the parse failed. */
static char *parse_and_print(Parser p, const char *text, size_t len) {
  switch (p) {
  case AS_TUPLE:
    return fly_tuple_str(&A, fly_parse_tuple(&A, text, len));
  case AS_LAYOUT:
    return fly_layout_str(&A, fly_parse_layout(&A, text, len));
  case AS_TILER:
    return fly_tiler_str(&A, fly_parse_tiler(&A, text, len));
  case AS_SWIZZLE: {
    FlySwizzle s;
    return fly_parse_swizzle(&A, text, len, &s) ? fly_swizzle_str(&A, s) : NULL;
  }
  case AS_COMPOSED:
    return fly_composed_str(&A, fly_parse_composed(&A, text, len));
  case AS_VALUE: {
    FlyValue v;
    return fly_parse_value(&A, text, len, &v) ? fly_value_str(&A, &v) : NULL;
  }
  }
  return NULL;
}

/* text parses and prints as want; printing that parses and prints the same. */
static bool prints_as(Parser p, const char *text, const char *want) {
  char *got = parse_and_print(p, text, strlen(text));
  if (!got || strcmp(got, want) != 0) {
    print_error("parse_%s(\"%s\"): want %s, got %s (error: %s)\n", parser_name(p), text, want,
                got ? got : "NULL", fly_algebra_message(&A));
    return false;
  }
  char *again = parse_and_print(p, got, strlen(got));
  if (!again || strcmp(again, got) != 0) {
    print_error("parse_%s(\"%s\") does not print the same: %s (error: %s)\n", parser_name(p), got,
                again ? again : "NULL", fly_algebra_message(&A));
    return false;
  }
  return true;
}

#define expect_prints(p, text, want) assert_true(prints_as(p, text, want))

/* Parsing len bytes fails with a message containing `part` at byte `pos`;
 * the error is cleared afterwards. */
static bool fails_with(Parser p, const char *text, size_t len, const char *part, long pos) {
  fly_algebra_clear_error(&A);
  char *got = parse_and_print(p, text, len);
  bool ok = true;
  if (got || !fly_algebra_failed(&A)) {
    print_error("parse_%s(\"%.*s\"): want an error, got %s\n", parser_name(p), (int)len, text,
                got ? got : "NULL without an error");
    ok = false;
  } else if (!strstr(fly_algebra_message(&A), part)) {
    print_error("parse_%s(\"%.*s\"): want a message containing \"%s\", got \"%s\"\n",
                parser_name(p), (int)len, text, part, fly_algebra_message(&A));
    ok = false;
  } else if (fly_algebra_error_pos(&A) != pos) {
    print_error("parse_%s(\"%.*s\"): want the error at %ld, got %ld (\"%s\")\n", parser_name(p),
                (int)len, text, pos, fly_algebra_error_pos(&A), fly_algebra_message(&A));
    ok = false;
  }
  fly_algebra_clear_error(&A);
  return ok;
}

#define expect_parse_error(p, text, part, pos)                                                     \
  assert_true(fails_with(p, text, strlen(text), part, pos))
#define expect_error_len(p, text, len, part, pos) assert_true(fails_with(p, text, len, part, pos))

/* "(((...(8)...)))" with `depth` parentheses, in a malloc'd buffer. */
static char *nested(int depth) {
  char *s = malloc((size_t)depth * 2 + 2);
  assert_non_null(s);
  int n = 0;
  for (int i = 0; i < depth; i++)
    s[n++] = '(';
  s[n++] = '8';
  for (int i = 0; i < depth; i++)
    s[n++] = ')';
  s[n] = '\0';
  return s;
}

/* "(1,1,...,1)" with `count` elements, in a malloc'd buffer. */
static char *ones(int count) {
  char *s = malloc((size_t)count * 2 + 2);
  assert_non_null(s);
  int n = 0;
  s[n++] = '(';
  for (int i = 0; i < count; i++) {
    if (i)
      s[n++] = ',';
    s[n++] = '1';
  }
  s[n++] = ')';
  s[n] = '\0';
  return s;
}

/* ---- round trips ---------------------------------------------------------- */

static void test_layout_canonical_round_trips(void **state) {
  (void)state;
  expect_prints(AS_LAYOUT, "8:1", "8:1");
  expect_prints(AS_LAYOUT, "(8,16):(1,8)", "(8,16):(1,8)");
  expect_prints(AS_LAYOUT, "(4,(2,3)):(1,(4,8))", "(4,(2,3)):(1,(4,8))");
  expect_prints(AS_LAYOUT, "((2,2),(2,3)):((4,1),(2,8))", "((2,2),(2,3)):((4,1),(2,8))");
  expect_prints(AS_LAYOUT, "(8,16):(0,1)", "(8,16):(0,1)");
  expect_prints(AS_LAYOUT, "8:0", "8:0");
  expect_prints(AS_LAYOUT, "(8,16):(-1,-8)", "(8,16):(-1,-8)");
  expect_prints(AS_LAYOUT, "4:-9223372036854775808", "4:-9223372036854775808");
  expect_prints(AS_LAYOUT, "(4,8):(4611686018427387904,1)", "(4,8):(4611686018427387904,1)");
  expect_prints(AS_LAYOUT, "():()", "():()");
}

static void test_layout_rank_one_top_level_prints_without_parentheses(void **state) {
  (void)state;
  expect_prints(AS_LAYOUT, "(8):(1)", "8:1");
  /* Every rank-1 level at the top loses its parentheses (CuTe's unwrap), so
   * printing what was read back prints the same text again; a rank-1
   * layout whose mode is a tuple prints like a layout of that tuple's rank. */
  expect_prints(AS_LAYOUT, "((4,2)):((1,4))", "(4,2):(1,4)");
  expect_prints(AS_LAYOUT, "((8)):((1))", "8:1");
  FlyLayout *L = fly_parse_layout(&A, "(8):(1)", 7);
  assert_non_null(L);
  assert_int_equal(fly_layout_rank(L), 1);
  assert_int_equal(fly_layout_depth(L), 1);
}

static void test_layout_blanks_are_accepted(void **state) {
  (void)state;
  expect_prints(AS_LAYOUT, "( 8 , 16 ) : ( 1 , 8 )", "(8,16):(1,8)");
  expect_prints(AS_LAYOUT, "  8:1  ", "8:1");
  expect_prints(AS_LAYOUT, "\t(4,\n(2,3)) :\r(1,(4, 8))\n", "(4,(2,3)):(1,(4,8))");
}

static void test_layout_parse_reads_len_bytes_only(void **state) {
  (void)state;
  FlyLayout *L = fly_parse_layout(&A, "8:1xyz", 3);
  assert_non_null(L);
  assert_string_equal(fly_layout_str(&A, L), "8:1");
  /* The text ends where len says, even without a terminator. */
  expect_error_len(AS_LAYOUT, "(8,16):(1,8)", 5, "text ended", 5);
}

static void test_tuple_round_trips(void **state) {
  (void)state;
  expect_prints(AS_TUPLE, "8", "8");
  expect_prints(AS_TUPLE, "0", "0");
  expect_prints(AS_TUPLE, "-5", "-5");
  expect_prints(AS_TUPLE, "(8,16)", "(8,16)");
  expect_prints(AS_TUPLE, "(4,(2,3))", "(4,(2,3))");
  expect_prints(AS_TUPLE, "()", "()");
  expect_prints(AS_TUPLE, "(())", "(())");
  expect_prints(AS_TUPLE, "(8)", "(8)");
  expect_prints(AS_TUPLE, "_", "_");
  expect_prints(AS_TUPLE, "(_,2)", "(_,2)");
  expect_prints(AS_TUPLE, "( 1 , ( 2 , _ ) )", "(1,(2,_))");
  expect_prints(AS_TUPLE, "-9223372036854775808", "-9223372036854775808");
  expect_prints(AS_TUPLE, "9223372036854775807", "9223372036854775807");
}

static void test_tiler_round_trips(void **state) {
  (void)state;
  expect_prints(AS_TILER, "(4:1,8:2)", "(4:1,8:2)");
  expect_prints(AS_TILER, "_", "_");
  expect_prints(AS_TILER, "4", "4:1");
  expect_prints(AS_TILER, "4:2", "4:2");
  expect_prints(AS_TILER, "(8):(1)", "8:1");
  expect_prints(AS_TILER, "((2,2):(1,4),_)", "((2,2):(1,4),_)");
  expect_prints(AS_TILER, "(4,8)", "(4:1,8:1)");
  expect_prints(AS_TILER, "(4:1, 8)", "(4:1,8:1)");
  expect_prints(AS_TILER, "((2,2),_)", "((2:1,2:1),_)");
  expect_prints(AS_TILER, "(3:3,(2,4):(1,8))", "(3:3,(2,4):(1,8))");
  expect_prints(AS_TILER, "()", "()");

  FlyTiler *T = fly_parse_tiler(&A, "(4,_)", 5);
  assert_non_null(T);
  assert_int_equal(T->kind, FLY_TILER_SEQ);
  assert_int_equal(T->n, 2);
  assert_int_equal(T->elem[0]->kind, FLY_TILER_LAYOUT);
  assert_int_equal(T->elem[1]->kind, FLY_TILER_UNDERSCORE);
}

static void test_swizzle_round_trips(void **state) {
  (void)state;
  expect_prints(AS_SWIZZLE, "S<3,3,3>", "S<3,3,3>");
  expect_prints(AS_SWIZZLE, "S<0,0,0>", "S<0,0,0>");
  expect_prints(AS_SWIZZLE, "S<2,4,-3>", "S<2,4,-3>");
  expect_prints(AS_SWIZZLE, " S <3 , 2 , 3 > ", "S<3,2,3>");

  FlySwizzle s;
  assert_true(fly_parse_swizzle(&A, "S<2,4,-3>", 9, &s));
  assert_int_equal(s.bits, 2);
  assert_int_equal(s.base, 4);
  assert_int_equal(s.shift, -3);
}

static void test_composed_round_trips(void **state) {
  (void)state;
  expect_prints(AS_COMPOSED, "S<3,3,3> o 0 o (8,8):(8,1)", "S<3,3,3> o 0 o (8,8):(8,1)");
  expect_prints(AS_COMPOSED, "S<3,3,3>o5o8:1", "S<3,3,3> o 5 o 8:1");
  expect_prints(AS_COMPOSED, "  S<1,0,1>  o  -4  o  (8):(1)  ", "S<1,0,1> o -4 o 8:1");

  FlyComposed *C = fly_parse_composed(&A, "S<2,4,3> o 7 o (8,8):(8,1)", 26);
  assert_non_null(C);
  assert_int_equal(C->swizzle.bits, 2);
  assert_int_equal(C->swizzle.base, 4);
  assert_int_equal(C->swizzle.shift, 3);
  assert_int_equal(C->offset, 7);
  assert_string_equal(fly_layout_str(&A, C->layout), "(8,8):(8,1)");
}

static void test_parse_value_picks_the_kind(void **state) {
  (void)state;
  static const struct {
    const char *text;
    FlyValueKind kind;
    const char *printed;
  } cases[] = {
      {"8", FLY_VALUE_TUPLE, "8"},
      {"(4,_)", FLY_VALUE_TUPLE, "(4,_)"},
      {"_", FLY_VALUE_TUPLE, "_"}, /* a tuple wins over a tiler */
      {"()", FLY_VALUE_TUPLE, "()"},
      {"(4,8)", FLY_VALUE_TUPLE, "(4,8)"},
      {"8:1", FLY_VALUE_LAYOUT, "8:1"},
      {"(8):(1)", FLY_VALUE_LAYOUT, "8:1"},
      {"(4,(2,3)):(1,(4,8))", FLY_VALUE_LAYOUT, "(4,(2,3)):(1,(4,8))"},
      {"(4:1,8:2)", FLY_VALUE_TILER, "(4:1,8:2)"},
      {"(4:1,_)", FLY_VALUE_TILER, "(4:1,_)"},
      {"(4:1,8)", FLY_VALUE_TILER, "(4:1,8:1)"},
      {"((2,2):(1,4),_)", FLY_VALUE_TILER, "((2,2):(1,4),_)"},
      {"S<3,3,3>", FLY_VALUE_SWIZZLE, "S<3,3,3>"},
      {"S<3,3,3> o 0 o (8,8):(8,1)", FLY_VALUE_COMPOSED, "S<3,3,3> o 0 o (8,8):(8,1)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    FlyValue v;
    if (!fly_parse_value(&A, cases[i].text, strlen(cases[i].text), &v))
      fail_msg("parse_value(\"%s\") failed: %s", cases[i].text, fly_algebra_message(&A));
    if (v.kind != cases[i].kind)
      fail_msg("parse_value(\"%s\"): want kind %d, got %d", cases[i].text, cases[i].kind, v.kind);
    assert_string_equal(fly_value_str(&A, &v), cases[i].printed);
  }
}

static void test_parse_value_errors(void **state) {
  (void)state;
  expect_parse_error(AS_VALUE, "S<3,3,3> x", "expected 'o' after the swizzle but found 'x'", 9);
  expect_parse_error(AS_VALUE, "(4:1,0)", "tile size 0 is not positive", 5);
  expect_parse_error(AS_VALUE, "(4,0):(1,4)", "shape 0 is not positive", 3);
  expect_parse_error(AS_VALUE, "", "text ended", 0);
}

/* ---- errors ------------------------------------------------------------- */

static void test_error_unclosed_parenthesis(void **state) {
  (void)state;
  expect_parse_error(AS_LAYOUT, "(8,16", "expected ',' or ')' to close the '(' at column 1", 5);
  expect_parse_error(AS_LAYOUT, "(8,16", "but the text ended", 5);
  expect_parse_error(AS_LAYOUT, "(8,16):(1,8", "to close the '(' at column 8 but the text ended",
                     11);
  expect_parse_error(AS_TUPLE, "(4,(2,3)", "to close the '(' at column 1", 8);
  expect_parse_error(AS_TUPLE, "(8 16)",
                     "expected ',' or ')' to close the '(' at column 1 but found '1'", 3);
  expect_parse_error(AS_TUPLE, "(,)", "expected a number, '_' or '(' but found ','", 1);
  expect_parse_error(AS_TUPLE, "(8,)", "expected a number, '_' or '(' but found ')'", 3);
}

static void test_error_missing_stride(void **state) {
  (void)state;
  expect_parse_error(AS_LAYOUT, "8:", "expected a number, '_' or '(' but the text ended", 2);
  expect_parse_error(AS_LAYOUT, "(8,16):", "expected a number, '_' or '(' but the text ended", 7);
  expect_parse_error(AS_LAYOUT, "8::1", "expected a number, '_' or '(' but found ':'", 2);
  /* No ':' at all: a tuple, not a layout. */
  expect_parse_error(AS_LAYOUT, "8", "expected a layout shape:stride", 0);
  expect_parse_error(AS_LAYOUT, "  (8,16)", "expected a layout shape:stride", 2);
}

static void test_error_stride_not_congruent(void **state) {
  (void)state;
  expect_parse_error(AS_LAYOUT, "(8,16):(1,(8,2))",
                     "stride (1,(8,2)) does not have the structure of shape (8,16)", 7);
  expect_parse_error(AS_LAYOUT, "(8,16):1", "stride 1 does not have the structure of shape (8,16)",
                     7);
  expect_parse_error(AS_LAYOUT, "8:(1)", "does not have the structure", 2);
  expect_parse_error(AS_LAYOUT, "(4,(2,3)):(1,(4,8,3))", "does not have the structure", 10);
}

static void test_error_shape_not_positive(void **state) {
  (void)state;
  expect_parse_error(AS_LAYOUT, "0:1", "shape 0 is not positive", 0);
  expect_parse_error(AS_LAYOUT, "(4,0):(1,4)", "shape 0 is not positive", 3);
  expect_parse_error(AS_LAYOUT, "-3:1", "shape -3 is not positive", 0);
  expect_parse_error(AS_LAYOUT, "(4,(2,-1)):(1,(4,8))", "shape -1 is not positive", 6);
  expect_parse_error(AS_TILER, "0", "tile size 0 is not positive", 0);
  expect_parse_error(AS_TILER, "(4,-2)", "tile size -2 is not positive", 3);
  expect_parse_error(AS_TILER, "(4:1,0:1)", "shape 0 is not positive", 5);
}

static void test_error_underscore_in_shape_or_stride(void **state) {
  (void)state;
  expect_parse_error(AS_LAYOUT, "(_,4):(1,4)", "'_' cannot be part of a shape", 1);
  expect_parse_error(AS_LAYOUT, "_:1", "'_' cannot be part of a shape", 0);
  expect_parse_error(AS_LAYOUT, "(4,4):(1,_)", "'_' cannot be part of a stride", 9);
  expect_parse_error(AS_TILER, "(4:_,_)", "'_' cannot be part of a stride", 3);
}

static void test_error_layout_inside_a_tuple(void **state) {
  (void)state;
  expect_parse_error(AS_LAYOUT, "(4:1,4):(1,4)", "a layout cannot be part of a shape", 1);
  expect_parse_error(AS_LAYOUT, "(4,4):(1,(2:1))", "a layout cannot be part of a stride", 10);
  expect_parse_error(AS_TUPLE, "(4:1)", "a layout cannot be part of a tuple", 1);
  expect_parse_error(AS_TUPLE, "8:1", "a layout cannot be part of a tuple", 0);
}

static void test_error_trailing_text(void **state) {
  (void)state;
  expect_parse_error(AS_LAYOUT, "8:1 x", "unexpected 'x' after the end of the value", 4);
  expect_parse_error(AS_LAYOUT, "8:1)", "unexpected ')' after the end of the value", 3);
  expect_parse_error(AS_LAYOUT, "8:1:2", "unexpected ':' after the end of the value", 3);
  expect_parse_error(AS_TUPLE, "(8) (8)", "unexpected '(' after the end of the value", 4);
  expect_parse_error(AS_TILER, "(4:1,8:2),", "unexpected ','", 9);
  expect_parse_error(AS_SWIZZLE, "S<3,3,3> x", "unexpected 'x' after the end of the value", 9);
  expect_parse_error(AS_SWIZZLE, "S<3,3,3> o 0 o 8:1", "unexpected 'o'", 9);
  expect_parse_error(AS_COMPOSED, "S<3,3,3> o 0 o 8:1 x", "unexpected 'x'", 19);
  expect_parse_error(AS_COMPOSED, "S<3,3,3> o 0 o (8,8):(8,1) o", "unexpected 'o'", 27);
}

static void test_error_empty_input(void **state) {
  (void)state;
  expect_parse_error(AS_TUPLE, "", "expected a number, '_' or '(' but the text ended", 0);
  expect_parse_error(AS_LAYOUT, "", "but the text ended", 0);
  expect_parse_error(AS_TILER, "", "but the text ended", 0);
  expect_parse_error(AS_LAYOUT, "   ", "but the text ended", 3);
  expect_parse_error(AS_SWIZZLE, "", "expected a swizzle S<B,M,S> but the text ended", 0);
  expect_parse_error(AS_COMPOSED, "", "expected a swizzle S<B,M,S>", 0);
}

static void test_error_integer_overflow(void **state) {
  (void)state;
  expect_parse_error(AS_TUPLE, "9223372036854775808", "number too large for 64 bits", 0);
  expect_parse_error(AS_TUPLE, "-9223372036854775809", "number too large for 64 bits", 0);
  expect_parse_error(AS_TUPLE, "(1,99999999999999999999)", "number too large for 64 bits", 3);
  expect_parse_error(AS_LAYOUT, "(8,9223372036854775808):(1,2)", "number too large for 64 bits", 3);
  expect_parse_error(AS_LAYOUT, "8:18446744073709551616", "number too large for 64 bits", 2);
  /* Every number fits but the size does not: reported at the shape. */
  expect_parse_error(AS_LAYOUT, "(4611686018427387904,4):(1,1)", "integer overflow", 0);
  expect_parse_error(AS_LAYOUT, " (1099511627776,1099511627776):(1,1099511627776)",
                     "integer overflow: 1099511627776 * 1099511627776", 1);
}

static void test_error_minus_sign_without_digits(void **state) {
  (void)state;
  expect_parse_error(AS_TUPLE, "-", "expected a digit after '-' but the text ended", 1);
  expect_parse_error(AS_TUPLE, "--3", "expected a digit after '-' but found '-'", 1);
  expect_parse_error(AS_LAYOUT, "8:-", "expected a digit after '-' but the text ended", 3);
  expect_parse_error(AS_LAYOUT, "8:-x", "expected a digit after '-' but found 'x'", 3);
}

/* A number is one token: "- 3" is an error at the blank after the sign. The
 * parser skips the blank before it reports, so it points at the digit and
 * says it expected a digit but found '3' (a digit). */
static void test_error_blank_after_minus_sign_points_at_the_blank(void **state) {
  (void)state;
  fly_algebra_clear_error(&A);
  assert_null(fly_parse_tuple(&A, "- 3", 3));
  assert_non_null(strstr(fly_algebra_message(&A), "expected a digit"));
  if (strstr(fly_algebra_message(&A), "found '3'"))
    fail_msg("parse_tuple(\"- 3\"): the message claims the digit '3' is not a digit: \"%s\"",
             fly_algebra_message(&A));
  assert_int_equal(fly_algebra_error_pos(&A), 1);
}

static void test_error_nesting_too_deep(void **state) {
  (void)state;
  char *ok = nested(FLY_MAX_DEPTH);
  FlyTuple *t = fly_parse_tuple(&A, ok, strlen(ok));
  assert_non_null(t);
  assert_int_equal(fly_tuple_depth(t), FLY_MAX_DEPTH);
  assert_string_equal(fly_tuple_str(&A, t), ok);
  free(ok);

  char *deep = nested(FLY_MAX_DEPTH + 1);
  /* The (FLY_MAX_DEPTH+1)-th '(' is at byte FLY_MAX_DEPTH. */
  expect_parse_error(AS_TUPLE, deep, "tuples nested too deeply (limit is 32)", FLY_MAX_DEPTH);
  free(deep);

  /* The limit holds inside a stride, counted from that stride's start. */
  char layout[256];
  char *d = nested(FLY_MAX_DEPTH + 1);
  snprintf(layout, sizeof layout, "8:%s", d);
  expect_parse_error(AS_LAYOUT, layout, "nested too deeply", 2 + FLY_MAX_DEPTH);
  free(d);
}

static void test_error_too_many_modes(void **state) {
  (void)state;
  char *ok = ones(FLY_MAX_MODES);
  FlyTuple *t = fly_parse_tuple(&A, ok, strlen(ok));
  assert_non_null(t);
  assert_int_equal(fly_tuple_rank(t), FLY_MAX_MODES);
  free(ok);

  char *many = ones(FLY_MAX_MODES + 1);
  /* Element k starts at byte 1 + 2k; element 1024 is the first too many. */
  expect_parse_error(AS_TUPLE, many, "too many modes in a tuple (limit is 1024)",
                     1 + 2 * FLY_MAX_MODES);
  free(many);
}

static void test_error_bad_swizzle(void **state) {
  (void)state;
  expect_parse_error(AS_SWIZZLE, "S<2,3,1>", "|S| must be at least B", 0);
  expect_parse_error(AS_SWIZZLE, "S<3,0,-2>", "|S| must be at least B", 0);
  expect_parse_error(AS_SWIZZLE, "S<-1,3,3>", "B and M must not be negative", 0);
  expect_parse_error(AS_SWIZZLE, "S<3,-3,3>", "B and M must not be negative", 0);
  expect_parse_error(AS_SWIZZLE, "S<40,10,40>", "touches bits past 61", 0);
  expect_parse_error(AS_SWIZZLE, "S<3,3,100>", "swizzle parameter 100 is out of range", 0);
  expect_parse_error(AS_SWIZZLE, "S<3,3,3", "expected '>' but the text ended", 7);
  expect_parse_error(AS_SWIZZLE, "S<3;3,3>", "expected ',' but found ';'", 3);
  expect_parse_error(AS_SWIZZLE, "S<3,3,x>", "expected a digit but found 'x'", 6);
  expect_parse_error(AS_SWIZZLE, "S", "expected a swizzle S<B,M,S> but the text ended", 1);
  expect_parse_error(AS_SWIZZLE, "8:1", "expected a swizzle S<B,M,S> but found '8'", 0);
  expect_parse_error(AS_VALUE, "S<2,3,1> o 0 o 8:1", "|S| must be at least B", 0);
}

/* A swizzle error points at its 'S', wherever the blanks before it end (as
 * every other error does); today it points at the start of the text. */
static void test_error_swizzle_position_skips_leading_blanks(void **state) {
  (void)state;
  expect_parse_error(AS_SWIZZLE, "  S<40,10,40>", "touches bits past 61", 2);
  expect_parse_error(AS_SWIZZLE, " S<2,3,1>", "|S| must be at least B", 1);
  expect_parse_error(AS_COMPOSED, "   S<3,-3,3> o 0 o 8:1", "B and M must not be negative", 3);
}

static void test_error_composed_missing_o(void **state) {
  (void)state;
  expect_parse_error(AS_COMPOSED, "S<3,3,3> 0 o 8:1",
                     "expected 'o' after the swizzle but found '0'", 9);
  expect_parse_error(AS_COMPOSED, "S<3,3,3> o 0 8:1", "expected 'o' after the offset but found '8'",
                     13);
  expect_parse_error(AS_COMPOSED, "S<3,3,3>", "expected 'o' after the swizzle but the text ended",
                     8);
  expect_parse_error(AS_COMPOSED, "S<3,3,3> o 0 o",
                     "expected a number, '_' or '(' but the text ended", 14);
  expect_parse_error(AS_COMPOSED, "S<3,3,3> o 0 o (8,8)", "expected a layout shape:stride", 15);
  expect_parse_error(AS_COMPOSED, "S<3,3,3> o x o 8:1", "expected a digit but found 'x'", 11);
  expect_parse_error(AS_VALUE, "S<3,3,3> o 0 8:1", "expected 'o' after the offset", 13);
}

static void test_error_non_printable_byte(void **state) {
  (void)state;
  expect_parse_error(AS_LAYOUT, "8:1\x07", "unexpected byte 0x07 after the end of the value", 3);
  expect_parse_error(AS_TUPLE, "\x01", "expected a number, '_' or '(' but found byte 0x01", 0);
  expect_parse_error(AS_TUPLE, "(8,\x7f)", "found byte 0x7f", 3);
  expect_parse_error(AS_LAYOUT, "8:1\xc3\xa9", "unexpected byte 0xc3", 3);
  /* A NUL inside the text is a byte like any other. */
  expect_error_len(AS_LAYOUT, "8:1\0", 4, "unexpected byte 0x00", 3);
  expect_error_len(AS_TUPLE, "(8,\0)", 5, "found byte 0x00", 3);
}

static void test_first_error_is_kept_until_cleared(void **state) {
  (void)state;
  assert_null(fly_parse_layout(&A, "(8,16", 5));
  assert_true(fly_algebra_failed(&A));
  assert_int_equal(fly_algebra_error_pos(&A), 5);
  char first[FLY_MESSAGE_SIZE];
  snprintf(first, sizeof first, "%s", fly_algebra_message(&A));

  /* A later error does not replace the first one... */
  assert_null(fly_parse_layout(&A, "0:1", 3));
  assert_string_equal(fly_algebra_message(&A), first);
  assert_int_equal(fly_algebra_error_pos(&A), 5);

  /* ...until the session forgets it. */
  fly_algebra_clear_error(&A);
  assert_false(fly_algebra_failed(&A));
  assert_string_equal(fly_algebra_message(&A), "");
  assert_int_equal(fly_algebra_error_pos(&A), -1);
  assert_non_null(fly_parse_layout(&A, "8:1", 3));
  assert_false(fly_algebra_failed(&A));
}

static void test_printing_null_gives_null(void **state) {
  (void)state;
  assert_null(fly_tuple_str(&A, NULL));
  assert_null(fly_layout_str(&A, NULL));
  assert_null(fly_tiler_str(&A, NULL));
  assert_null(fly_composed_str(&A, NULL));
  assert_false(fly_algebra_failed(&A));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      TEST(test_layout_canonical_round_trips),
      TEST(test_layout_rank_one_top_level_prints_without_parentheses),
      TEST(test_layout_blanks_are_accepted),
      TEST(test_layout_parse_reads_len_bytes_only),
      TEST(test_tuple_round_trips),
      TEST(test_tiler_round_trips),
      TEST(test_swizzle_round_trips),
      TEST(test_composed_round_trips),
      TEST(test_parse_value_picks_the_kind),
      TEST(test_parse_value_errors),
      TEST(test_error_unclosed_parenthesis),
      TEST(test_error_missing_stride),
      TEST(test_error_stride_not_congruent),
      TEST(test_error_shape_not_positive),
      TEST(test_error_underscore_in_shape_or_stride),
      TEST(test_error_layout_inside_a_tuple),
      TEST(test_error_trailing_text),
      TEST(test_error_empty_input),
      TEST(test_error_integer_overflow),
      TEST(test_error_minus_sign_without_digits),
      TEST(test_error_blank_after_minus_sign_points_at_the_blank),
      TEST(test_error_nesting_too_deep),
      TEST(test_error_too_many_modes),
      TEST(test_error_bad_swizzle),
      TEST(test_error_swizzle_position_skips_leading_blanks),
      TEST(test_error_composed_missing_o),
      TEST(test_error_non_printable_byte),
      TEST(test_first_error_is_kept_until_cleared),
      TEST(test_printing_null_gives_null),
  };
  return cmocka_run_group_tests_name("text", tests, NULL, NULL);
}
