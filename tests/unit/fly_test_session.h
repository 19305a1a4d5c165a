/* fly_test_session.h — what the algebra's cmocka tests share: one session
 * per test (set up and released around it, so LeakSanitizer sees each), text
 * readers that fail the test on bad input, and checks that print the
 * difference. Include after <cmocka.h>. Helpers are static inline so a test
 * file may use any subset of them. */
#ifndef FLY_TEST_SESSION_H
#define FLY_TEST_SESSION_H

#include <string.h>

#include "fly_layout_text.h"

static FlyAlgebra A;

static inline int setup(void **state) {
  (void)state;
  fly_algebra_init(&A);
  return 0;
}

static inline int teardown(void **state) {
  (void)state;
  fly_algebra_release(&A);
  return 0;
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

static inline FlyTuple *tup(const char *text) {
  FlyTuple *t = fly_parse_tuple(&A, text, strlen(text));
  if (!t)
    fail_msg("parse_tuple(\"%s\"): %s", text, fly_algebra_message(&A));
  return t;
}

static inline FlyLayout *lay(const char *text) {
  FlyLayout *L = fly_parse_layout(&A, text, strlen(text));
  if (!L)
    fail_msg("parse_layout(\"%s\"): %s", text, fly_algebra_message(&A));
  return L;
}

static inline FlyTiler *til(const char *text) {
  FlyTiler *T = fly_parse_tiler(&A, text, strlen(text));
  if (!T)
    fail_msg("parse_tiler(\"%s\"): %s", text, fly_algebra_message(&A));
  return T;
}

static inline FlyComposed *comp(const char *text) {
  FlyComposed *C = fly_parse_composed(&A, text, strlen(text));
  if (!C)
    fail_msg("parse_composed(\"%s\"): %s", text, fly_algebra_message(&A));
  return C;
}

static inline bool text_is(char *got, const char *want) {
  if (!got || strcmp(got, want) != 0) {
    print_error("want %s, got %s (error: %s)\n", want, got ? got : "NULL", fly_algebra_message(&A));
    return false;
  }
  return true;
}

static inline bool layout_is(const FlyLayout *got, const char *want) {
  return text_is(fly_layout_str(&A, got), want);
}

static inline bool tuple_is(const FlyTuple *got, const char *want) {
  return text_is(fly_tuple_str(&A, got), want);
}

#define expect_layout(got, want) assert_true(layout_is(got, want))
#define expect_tuple(got, want) assert_true(tuple_is(got, want))

/* The operation failed (ok is false) with a message containing part; the
 * error is cleared afterwards so the test can go on. */
static inline bool failed_with(bool ok, const char *part) {
  bool good = true;
  if (ok || !fly_algebra_failed(&A)) {
    print_error("want an error containing \"%s\", got %s\n", part,
                ok ? "success" : "a failure without a message");
    good = false;
  } else if (!strstr(fly_algebra_message(&A), part)) {
    print_error("want an error containing \"%s\", got \"%s\"\n", part, fly_algebra_message(&A));
    good = false;
  }
  fly_algebra_clear_error(&A);
  return good;
}

#define expect_error(result, part) assert_true(failed_with((result) != NULL, part))
#define expect_false_error(ok, part) assert_true(failed_with(ok, part))

#endif
