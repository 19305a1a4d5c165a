/* test_oom.c — allocation failures and NULL inputs.
 *
 * For each operation, the N-th arena allocation of a fresh session is made
 * to fail (FlyAlgebra.arena.fail_at) for N = 1, 2, ... until the operation
 * succeeds: every failing run must return NULL (or false) with the message
 * "out of memory" and not crash; every session is released, so the
 * sanitized build's LeakSanitizer checks nothing escapes the arena. Then:
 * NULL inputs give NULL at once and leave the session's error alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "fly_layout_text.h"

/* ---- allocation failure injection ----------------------------------------- */

/* Runs in a fresh session; returns what the operation printed, or NULL. The
 * parses inside may fail too: that is part of the operation. */
typedef const char *(*Operation)(FlyAlgebra *A);

#define S(text) (text), strlen(text)

static const char *op_parse_and_logical_divide(FlyAlgebra *A) {
  FlyLayout *L = fly_parse_layout(A, S("(9,(4,8)):(59,(13,1))"));
  FlyTiler *T = fly_parse_tiler(A, S("(3:3,(2,4):(1,8))"));
  return fly_layout_str(A, fly_layout_logical_divide(A, L, T));
}

static const char *op_zipped_and_tiled_divide(FlyAlgebra *A) {
  FlyLayout *L = fly_parse_layout(A, S("(4,8,3):(1,4,32)"));
  FlyTiler *T = fly_parse_tiler(A, S("(2:1,_)"));
  FlyLayout *z = fly_layout_zipped_divide(A, L, T);
  return fly_layout_str(A, fly_layout_tiled_divide(A, z, fly_parse_tiler(A, S("(_,2)"))));
}

static const char *op_blocked_product(FlyAlgebra *A) {
  FlyLayout *L = fly_parse_layout(A, S("(2,5):(5,1)"));
  FlyLayout *B = fly_parse_layout(A, S("(3,4):(1,3)"));
  return fly_layout_str(A, fly_layout_blocked_product(A, L, B));
}

static const char *op_raked_and_flat_product(FlyAlgebra *A) {
  FlyLayout *L = fly_parse_layout(A, S("(2,2):(1,2)"));
  FlyLayout *r = fly_layout_raked_product(A, L, fly_parse_layout(A, S("3:1")));
  return fly_layout_str(A, fly_layout_flat_product(A, r, fly_parse_tiler(A, S("(2,_)"))));
}

static const char *op_complement(FlyAlgebra *A) {
  FlyLayout *L = fly_parse_layout(A, S("(2,2):(1,6)"));
  return fly_layout_str(A, fly_layout_complement(A, L, fly_parse_tuple(A, S("(4,(3,2))"))));
}

static const char *op_inverses_and_coalesce(FlyAlgebra *A) {
  FlyLayout *L = fly_parse_layout(A, S("((2,2),(2,3)):((1,8),(2,16))"));
  FlyLayout *r = fly_layout_right_inverse(A, fly_layout_coalesce(A, L));
  FlyLayout *l = fly_layout_left_inverse(A, fly_layout_filter(A, L));
  return fly_layout_str(A, fly_layout_pair(A, r, l));
}

static const char *op_composition_and_slice(FlyAlgebra *A) {
  FlyLayout *L = fly_parse_layout(A, S("(12,(4,8)):(59,(13,1))"));
  FlyLayout *c = fly_layout_compose_tiler(A, L, fly_parse_tiler(A, S("(3:4,8:2)")));
  int64_t offset;
  return fly_layout_str(A, fly_layout_slice(A, fly_parse_tuple(A, S("(_,(1,_))")), c, &offset));
}

static const char *op_recast_and_common_layout(FlyAlgebra *A) {
  FlyLayout *L = fly_parse_layout(A, S("(8,(4,4)):(1,(8,64))"));
  FlyLayout *w = fly_layout_recast(A, L, 16, 32);
  FlyLayout *c = fly_layout_col_major(A, w ? w->shape : NULL);
  return fly_layout_str(A, fly_layout_max_common_layout(A, w, c));
}

static const char *op_composed(FlyAlgebra *A) {
  FlyComposed *C = fly_parse_composed(A, S("S<3,3,3> o 0 o (8,64):(64,1)"));
  FlyComposed *s = fly_composed_slice(A, fly_parse_tuple(A, S("(2,_)")), C);
  return fly_composed_str(A, fly_composed_recast(A, s, 16, 32));
}

static const char *op_parse_value(FlyAlgebra *A) {
  FlyValue v;
  if (!fly_parse_value(A, S("((2,2):(1,4),(_,(4:1,8:2)))"), &v))
    return NULL;
  return fly_value_str(A, &v);
}

static const char *op_ordered_and_idx2crd(FlyAlgebra *A) {
  FlyTuple *shape = fly_parse_tuple(A, S("(2,(3,4),5)"));
  FlyLayout *L = fly_layout_ordered(A, shape, fly_parse_tuple(A, S("(1,(0,3),2)")));
  FlyTuple *c = fly_tuple_idx2crd(A, 77, shape);
  int64_t v;
  if (!fly_layout_crd2idx(A, c, L, &v))
    return NULL;
  return fly_tuple_str(A, fly_tuple_pair(A, fly_tuple_flatten(A, c), fly_tuple_int(A, v)));
}

static const char *op_identity_divide_and_values(FlyAlgebra *A) {
  FlyLayout *I = fly_layout_identity(A, fly_parse_tuple(A, S("(8,(2,3))")));
  FlyLayout *Z = fly_layout_zipped_divide(A, I, fly_parse_tiler(A, S("(2,(2,3))")));
  FlyTuple *off = NULL;
  FlyLayout *s = fly_layout_slice_and_offset(A, fly_parse_tuple(A, S("(_,(1,0))")), Z, &off);
  FlyTuple *v = fly_layout_value_at(A, fly_layout_coalesce(A, s), 5);
  FlyTuple *sum = fly_tuple_arith(A, FLY_ARITH_ADD, off, v);
  return fly_tuple_str(A, fly_tuple_pair(A, sum, fly_layout_coshape(A, Z)));
}

static const char *op_tuple_arithmetic(FlyAlgebra *A) {
  FlyTuple *a = fly_tuple_arith(A, FLY_ARITH_ADD, fly_parse_tuple(A, S("1@0@1")),
                                fly_parse_tuple(A, S("(2,(3,4))")));
  FlyTuple *b = fly_tuple_shape_div(A, fly_parse_tuple(A, S("(4,5,6)")), fly_tuple_int(A, 40));
  FlyTuple *c =
      fly_tuple_ceil_div_tuple(A, fly_parse_tuple(A, S("(4,6)")), fly_parse_tuple(A, S("(3,4)")));
  FlyTuple *e[3] = {a, b, fly_tuple_product_each(A, c)};
  return fly_tuple_str(A, fly_tuple_seq(A, 3, e));
}

static const char *op_layouts_after_others(FlyAlgebra *A) {
  FlyLayout *L = fly_parse_layout(A, S("((2,2),4,8):((1,64),8,256)"));
  FlyLayout *F = fly_layout_fragment_like(A, L);
  FlyLayout *T =
      fly_layout_tile_to_shape(A, fly_layout_like(A, fly_parse_layout(A, S("(8,8):(8,1)"))),
                               fly_parse_tuple(A, S("(32,16)")), NULL);
  FlyTuple *c = fly_layout_flat_coord(A, F, 77);
  return fly_layout_str(A, fly_layout_pair(A, F, T)) && c ? fly_tuple_str(A, c) : NULL;
}

static const char *op_composed_with_a_layout(FlyAlgebra *A) {
  FlyComposed *C = fly_parse_composed(A, S("(8,8):(8,1) o (2,0) o (4,4):(1@0,1@1)"));
  FlyComposed *s = fly_composed_slice(A, fly_parse_tuple(A, S("(1,_)")), C);
  FlyTuple *v = fly_composed_value(A, fly_parse_tuple(A, S("3")), s);
  return v ? fly_composed_str(A, s) : NULL;
}

/* Printing alone: the value is built first, only the printer's allocations
 * are made to fail. */
static const char *op_print_only(FlyAlgebra *A) {
  long fail_at = A->arena.fail_at;
  A->arena.fail_at = 0; /* the parses must not fail here... */
  FlyLayout *L = fly_parse_layout(A, S("((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))"));
  FlyTiler *T = fly_parse_tiler(A, S("((2,2):(1,4),(_,(4:1,8:2)))"));
  if (!L || !T)
    return NULL;
  A->arena.fail_at = fail_at > 0 ? A->arena.allocations + fail_at : 0; /* ...the printing may */
  char *l = fly_layout_str(A, L), *t = fly_tiler_str(A, T);
  char *c = fly_composed_str(A, fly_composed_make(A, (FlySwizzle){3, 3, 3}, 0, L));
  if (!l || !t || !c)
    return NULL;
  return l;
}

/* Runs op with fail_at = 1, 2, ... in fresh sessions until it succeeds;
 * returns how many runs failed (so at least one allocation was tried). */
static int fail_each_allocation(Operation op, const char *name) {
  enum { LIMIT = 100000 };
  for (int n = 1; n < LIMIT; n++) {
    FlyAlgebra A;
    fly_algebra_init(&A);
    A.arena.fail_at = n;
    const char *got = op(&A);
    bool failed = fly_algebra_failed(&A);
    char message[FLY_MESSAGE_SIZE], result[512];
    snprintf(message, sizeof message, "%s", fly_algebra_message(&A));
    snprintf(result, sizeof result, "%s", got ? got : "");
    fly_algebra_release(&A);
    if (got && !failed)
      return n - 1;
    if (got)
      fail_msg("%s with allocation %d failing: a result (%s) and an error (%s)", name, n, result,
               message);
    if (!failed)
      fail_msg("%s with allocation %d failing: NULL without an error", name, n);
    if (strcmp(message, "out of memory") != 0)
      fail_msg("%s with allocation %d failing: want \"out of memory\", got \"%s\"", name, n,
               message);
  }
  fail_msg("%s still fails after %d allocations", name, LIMIT);
  return -1;
}

static void check_operation(Operation op, const char *name, const char *want) {
  /* First, without failures: the operation works and prints want. */
  FlyAlgebra A;
  fly_algebra_init(&A);
  const char *got = op(&A);
  bool ok = got && strcmp(got, want) == 0;
  char seen[512];
  snprintf(seen, sizeof seen, "%s", got ? got : fly_algebra_message(&A));
  fly_algebra_release(&A);
  if (!ok)
    fail_msg("%s: want %s, got %s", name, want, seen);
  int failures = fail_each_allocation(op, name);
  assert_true(failures >= 1);
}

static void test_oom_parse_and_logical_divide(void **state) {
  (void)state;
  check_operation(op_parse_and_logical_divide, "parse + logical_divide",
                  "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))");
}

static void test_oom_zipped_and_tiled_divide(void **state) {
  (void)state;
  check_operation(op_zipped_and_tiled_divide, "zipped + tiled divide",
                  "((1,2),(2,1),24):((0,2),(1,0),4)");
}

static void test_oom_blocked_product(void **state) {
  (void)state;
  check_operation(op_blocked_product, "blocked_product", "((2,3),(5,4)):((5,10),(1,30))");
}

static void test_oom_raked_and_flat_product(void **state) {
  (void)state;
  check_operation(op_raked_and_flat_product, "raked + flat product",
                  "((3,2),1,2,(1,2)):((4,1),0,2,(0,2))");
}

static void test_oom_complement(void **state) {
  (void)state;
  check_operation(op_complement, "complement", "(3,2):(2,12)");
}

static void test_oom_inverses_and_coalesce(void **state) {
  (void)state;
  check_operation(op_inverses_and_coalesce, "inverses + coalesce",
                  "((2,2),(2,4,2,3)):((1,4),(1,4,2,8))");
}

static void test_oom_basis_strides(void **state) {
  (void)state;
  check_operation(op_identity_divide_and_values, "identity, divide, slice and values",
                  "((3,(0,1)),(8,(2,3)))");
  check_operation(op_tuple_arithmetic, "tuple arithmetic", "((2,(4,4)),(1,1,3),(2,2))");
  check_operation(op_layouts_after_others, "layouts after others", "(1,3,4)");
  check_operation(op_composed_with_a_layout, "composed with a layout inside",
                  "(8,8):(8,1) o (3,0) o 4:1@1");
}

static void test_oom_composition_and_slice(void **state) {
  (void)state;
  check_operation(op_composition_and_slice, "composition + slice", "(3,4):(236,1)");
}

static void test_oom_recast_and_common_layout(void **state) {
  (void)state;
  check_operation(op_recast_and_common_layout, "recast + max_common_layout", "16:1");
}

static void test_oom_composed(void **state) {
  (void)state;
  check_operation(op_composed, "composed slice + recast", "S<3,2,3> o 64 o 32:1");
}

static void test_oom_parse_value(void **state) {
  (void)state;
  check_operation(op_parse_value, "parse_value", "((2,2):(1,4),(_,(4:1,8:2)))");
}

static void test_oom_ordered_and_idx2crd(void **state) {
  (void)state;
  check_operation(op_ordered_and_idx2crd, "ordered + idx2crd", "((1,2,0,3),23)");
}

static void test_oom_printing(void **state) {
  (void)state;
  check_operation(op_print_only, "printing", "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))");
}

static void test_arena_limit(void **state) {
  (void)state;
  FlyAlgebra A;
  fly_algebra_init(&A);
  assert_null(fly_alloc(&A, FLY_ARENA_LIMIT + 1));
  assert_non_null(strstr(fly_algebra_message(&A), "too much memory (limit is 256 MiB)"));
  fly_algebra_clear_error(&A);
  /* The session still works after the refusal. */
  assert_non_null(fly_parse_layout(&A, S("8:1")));
  assert_false(fly_algebra_failed(&A));
  fly_algebra_release(&A);
}

/* ---- NULL inputs ------------------------------------------------------------ */

static FlyAlgebra N;

static int setup_with_error(void **state) {
  (void)state;
  fly_algebra_init(&N);
  fly_fail(&N, "the first error");
  return 0;
}

static int teardown_session(void **state) {
  (void)state;
  fly_algebra_release(&N);
  return 0;
}

static int setup_clean(void **state) {
  (void)state;
  fly_algebra_init(&N);
  return 0;
}

/* Every operation given a NULL input returns NULL (or false) at once. */
static void null_inputs_give_null(void) {
  FlyAlgebra *A = &N;
  /* Real values built before the session had its error... */
  bool had_error = fly_algebra_failed(A);
  FlyAlgebra scratch;
  fly_algebra_init(&scratch);
  FlyLayout *L = fly_parse_layout(&scratch, S("(4,8):(1,4)"));
  FlyTiler *T = fly_parse_tiler(&scratch, S("(2,_)"));
  FlyTuple *t = fly_parse_tuple(&scratch, S("(_,2)"));
  assert_non_null(L);
  assert_non_null(T);
  assert_non_null(t);

  int64_t v = 7;
  int modes[] = {0};
  FlyTuple *one[1] = {NULL};
  FlyLayout *none[1] = {NULL};
  FlyTiler *no_tiler[1] = {NULL};

  assert_null(fly_tuple_seq(A, 1, one));
  assert_null(fly_tuple_pair(A, t, NULL));
  assert_null(fly_tuple_get(A, NULL, 0));
  assert_null(fly_tuple_flatten(A, NULL));
  assert_null(fly_tuple_prefix_product(A, NULL, 1));
  assert_null(fly_tuple_suffix_product(A, NULL, 1));
  assert_null(fly_tuple_ceil_div(A, NULL, 2));
  assert_null(fly_tuple_idx2crd(A, 3, NULL));
  assert_null(fly_tuple_str(A, NULL));

  assert_null(fly_layout_make(A, NULL, t));
  assert_null(fly_layout_make(A, t, NULL));
  assert_null(fly_layout_col_major(A, NULL));
  assert_null(fly_layout_row_major(A, NULL));
  assert_null(fly_layout_ordered(A, NULL, t));
  assert_null(fly_layout_seq(A, 1, none));
  assert_null(fly_layout_pair(A, L, NULL));
  assert_null(fly_tiler_layout(A, NULL));
  assert_null(fly_tiler_seq(A, 1, no_tiler));

  assert_false(fly_layout_size(A, NULL, &v));
  assert_false(fly_layout_cosize(A, NULL, &v));
  assert_null(fly_layout_get(A, NULL, 0));
  assert_null(fly_layout_select(A, NULL, 1, modes));
  assert_null(fly_layout_group(A, NULL, 0, 1));
  assert_null(fly_layout_append(A, NULL, L));
  assert_null(fly_layout_prepend(A, NULL, L));
  assert_null(fly_layout_pad(A, NULL, 3));
  assert_null(fly_layout_zip(A, NULL));
  assert_null(fly_layout_flatten(A, NULL));

  assert_false(fly_layout_crd2idx(A, NULL, L, &v));
  assert_false(fly_layout_crd2idx(A, t, NULL, &v));
  assert_false(fly_layout_eval(A, NULL, 0, &v));
  assert_null(fly_layout_slice(A, NULL, L, &v));
  assert_null(fly_layout_slice(A, t, NULL, &v));
  assert_null(fly_layout_dice(A, NULL, L));
  assert_null(fly_layout_dice(A, t, NULL));

  assert_null(fly_layout_coalesce(A, NULL));
  assert_null(fly_layout_coalesce_by(A, NULL, t));
  assert_null(fly_layout_coalesce_by(A, L, NULL));
  assert_null(fly_layout_filter(A, NULL));
  assert_null(fly_layout_filter_by(A, L, NULL));
  assert_null(fly_layout_composition(A, NULL, L));
  assert_null(fly_layout_composition(A, L, NULL));
  assert_null(fly_layout_compose_tiler(A, NULL, T));
  assert_null(fly_layout_compose_tiler(A, L, NULL));
  assert_null(fly_layout_complement(A, NULL, t));
  assert_null(fly_layout_complement(A, L, NULL));
  assert_null(fly_layout_right_inverse(A, NULL));
  assert_null(fly_layout_left_inverse(A, NULL));

  assert_null(fly_layout_logical_divide(A, NULL, T));
  assert_null(fly_layout_logical_divide(A, L, NULL));
  assert_null(fly_layout_zipped_divide(A, NULL, T));
  assert_null(fly_layout_zipped_divide(A, L, NULL));
  assert_null(fly_layout_tiled_divide(A, L, NULL));
  assert_null(fly_layout_flat_divide(A, L, NULL));
  assert_null(fly_layout_logical_product(A, NULL, T));
  assert_null(fly_layout_logical_product(A, L, NULL));
  assert_null(fly_layout_zipped_product(A, L, NULL));
  assert_null(fly_layout_tiled_product(A, L, NULL));
  assert_null(fly_layout_flat_product(A, NULL, T));
  assert_null(fly_layout_blocked_product(A, NULL, L));
  assert_null(fly_layout_blocked_product(A, L, NULL));
  assert_null(fly_layout_raked_product(A, NULL, L));
  assert_null(fly_layout_raked_product(A, L, NULL));

  assert_null(fly_layout_recast(A, NULL, 16, 32));
  assert_false(fly_layout_max_common_vector(A, NULL, L, &v));
  assert_false(fly_layout_max_common_vector(A, L, NULL, &v));
  assert_null(fly_layout_max_common_layout(A, NULL, L));
  assert_null(fly_layout_max_common_layout(A, L, NULL));
  assert_int_equal(v, 7); /* never written */

  assert_null(fly_layout_str(A, NULL));
  assert_null(fly_tiler_str(A, NULL));

  FlySwizzle s = {3, 3, 3};
  assert_null(fly_composed_make(A, s, 0, NULL));
  assert_false(fly_composed_crd2idx(A, t, NULL, &v));
  assert_false(fly_composed_eval(A, NULL, 0, &v));
  assert_null(fly_composed_slice(A, t, NULL));
  assert_null(fly_composed_with_layout(A, NULL, L));
  assert_null(fly_composed_recast(A, NULL, 16, 32));
  assert_null(fly_composed_str(A, NULL));

  fly_algebra_release(&scratch);
  assert_int_equal(fly_algebra_failed(A), had_error);
}

static void test_null_inputs_keep_the_existing_error(void **state) {
  (void)state;
  null_inputs_give_null();
  assert_true(fly_algebra_failed(&N));
  assert_string_equal(fly_algebra_message(&N), "the first error");
  assert_int_equal(fly_algebra_error_pos(&N), -1);
}

static void test_null_inputs_record_no_error(void **state) {
  (void)state;
  null_inputs_give_null();
  assert_false(fly_algebra_failed(&N));
  assert_string_equal(fly_algebra_message(&N), "");
}

/* After an error, operations on the values that failed keep returning NULL
 * down the chain, and the first message survives. */
static void test_failure_propagates_down_a_chain(void **state) {
  (void)state;
  FlyAlgebra *A = &N;
  FlyLayout *bad = fly_parse_layout(A, S("(4,0):(1,4)"));
  assert_null(bad);
  FlyLayout *good = fly_parse_layout(A, S("8:1"));
  FlyLayout *r =
      fly_layout_coalesce(A, fly_layout_logical_divide(A, fly_layout_composition(A, bad, good),
                                                       fly_tiler_layout(A, good)));
  assert_null(r);
  assert_null(fly_layout_str(A, r));
  assert_string_equal(fly_algebra_message(A), "shape 0 is not positive");
  assert_int_equal(fly_algebra_error_pos(A), 3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_oom_parse_and_logical_divide),
      cmocka_unit_test(test_oom_zipped_and_tiled_divide),
      cmocka_unit_test(test_oom_blocked_product),
      cmocka_unit_test(test_oom_raked_and_flat_product),
      cmocka_unit_test(test_oom_complement),
      cmocka_unit_test(test_oom_inverses_and_coalesce),
      cmocka_unit_test(test_oom_composition_and_slice),
      cmocka_unit_test(test_oom_basis_strides),
      cmocka_unit_test(test_oom_recast_and_common_layout),
      cmocka_unit_test(test_oom_composed),
      cmocka_unit_test(test_oom_parse_value),
      cmocka_unit_test(test_oom_ordered_and_idx2crd),
      cmocka_unit_test(test_oom_printing),
      cmocka_unit_test(test_arena_limit),
      cmocka_unit_test_setup_teardown(test_null_inputs_keep_the_existing_error, setup_with_error,
                                      teardown_session),
      cmocka_unit_test_setup_teardown(test_null_inputs_record_no_error, setup_clean,
                                      teardown_session),
      cmocka_unit_test_setup_teardown(test_failure_propagates_down_a_chain, setup_clean,
                                      teardown_session),
  };
  return cmocka_run_group_tests_name("oom", tests, NULL, NULL);
}
