/* test_symbolic.c — layout patterns with runtime leaves (fly_parse_*_pattern)
 * and the symbolic coordinate functions (fly_symbolic.h): what they fold,
 * what they ask the caller to compute, and that with every leaf static
 * they agree with the algebra's own crd2idx and idx2crd. The caller's
 * arithmetic here writes expressions as text, so each test reads like the
 * code the lowering would emit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

#include "fly_symbolic.h"
#include "fly_test_session.h"

/* Expressions as arena strings: the handles of this test's "runtime". */
static const void *text_op(const char *fmt, const void *x, const void *y) {
  char buf[512];
  snprintf(buf, sizeof buf, fmt, (const char *)x, (const char *)y);
  return fly_strdup(&A, buf);
}
static const void *t_constant(void *ctx, int64_t c) {
  (void)ctx;
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", (long long)c);
  return fly_strdup(&A, buf);
}
static const void *t_add(void *ctx, const void *x, const void *y) {
  (void)ctx;
  return text_op("(%s + %s)", x, y);
}
static const void *t_mul(void *ctx, const void *x, const void *y) {
  (void)ctx;
  return text_op("(%s * %s)", x, y);
}
static const void *t_div(void *ctx, const void *x, const void *y) {
  (void)ctx;
  return text_op("%s / %s", x, y);
}
static const void *t_rem(void *ctx, const void *x, const void *y) {
  (void)ctx;
  return text_op("%s %% %s", x, y);
}
static const FlySymOps ops = {NULL, t_constant, t_add, t_mul, t_div, t_rem};

/* A layout pattern whose `?` leaves are named a, b, c ... in order. */
static FlyLayout *pattern(const char *text) {
  FlyLayout *L = fly_parse_layout_pattern(&A, text, strlen(text));
  if (!L)
    fail_msg("parse_layout_pattern(\"%s\"): %s", text, fly_algebra_message(&A));
  FlyTuple *leaves[64];
  int n = fly_tuple_leaves(L->shape, leaves, 32);
  n += fly_tuple_leaves(L->stride, leaves + n, 32);
  char name = 'a';
  for (int i = 0; i < n; i++)
    if (leaves[i]->kind == FLY_TUPLE_DYNAMIC) {
      char s[2] = {name++, 0};
      leaves[i]->sym = fly_strdup(&A, s);
    }
  return L;
}

static const char *text_of(FlySym x) {
  return fly_sym_is_const(x) ? t_constant(NULL, x.c) : (const char *)x.v;
}

static void patterns_keep_their_structure(void **state) {
  (void)state;
  FlyLayout *L = fly_parse_layout_pattern(&A, "((32,?),(?,1)):((1,?),(32,0))", 29);
  assert_non_null(L);
  assert_string_equal(fly_tuple_str(&A, L->shape), "((32,?),(?,1))");
  assert_string_equal(fly_tuple_str(&A, L->stride), "((1,?),(32,0))");
  /* A rank-1 level stays: (?):(1) is a tensor of one mode. */
  L = fly_parse_layout_pattern(&A, "(?):(1)", 7);
  assert_non_null(L);
  assert_int_equal(fly_tuple_rank(L->shape), 1);
  assert_string_equal(fly_tuple_str(&A, L->shape), "(?)");
  assert_false(fly_tuple_is_static(L->shape));
  assert_true(fly_tuple_is_static(L->stride));
  FlyTuple *c = fly_parse_tuple_pattern(&A, "(_,(?,3))", 9);
  assert_non_null(c);
  assert_string_equal(fly_tuple_str(&A, c), "(_,(?,3))");
}

static void patterns_are_refused_elsewhere(void **state) {
  (void)state;
  /* The algebra's own readers take static text only. */
  assert_null(fly_parse_layout(&A, "(?,4):(1,?)", 11));
  assert_string_equal(fly_algebra_message(&A), "expected a number, '_' or '(' but found '?'");
  fly_algebra_clear_error(&A);
  assert_null(fly_parse_layout_pattern(&A, "(?,4)", 5));
  fly_algebra_clear_error(&A);
  assert_null(fly_parse_layout_pattern(&A, "(?,4):(1)", 9));
  fly_algebra_clear_error(&A);
  /* A `?` reaching the algebra proper is an error, not a zero. */
  FlyLayout *L = pattern("(4,?):(1,4)");
  int64_t n;
  assert_false(fly_tuple_product(&A, L->shape, &n));
  assert_string_equal(fly_algebra_message(&A), "'?' is known only when the kernel runs");
  fly_algebra_clear_error(&A);
  assert_null(fly_layout_make(&A, tup("(4,4)"), pattern("(4,4):(1,?)")->stride));
  fly_algebra_clear_error(&A);
  assert_null(fly_layout_make(&A, L->shape, tup("(1,4)")));
}

static void static_layouts_fold_to_numbers(void **state) {
  (void)state;
  FlyLayout *L = pattern("((4,2),8):((2,1),8)");
  FlySym off;
  assert_true(fly_sym_crd2idx(&ops, tup("((3,1),5)"), L->shape, L->stride, &off));
  assert_true(fly_sym_is_const(off));
  assert_int_equal(off.c, 3 * 2 + 1 + 5 * 8);
  FlySym size = fly_sym_size(&ops, L->shape);
  assert_true(fly_sym_is_const(size));
  assert_int_equal(size.c, 64);
}

static void runtime_leaves_become_expressions(void **state) {
  (void)state;
  /* The strides of a tensor given at launch. */
  FlyLayout *L = pattern("(8,?):(?,1)");
  FlySym off;
  assert_true(fly_sym_crd2idx(&ops, tup("(3,5)"), L->shape, L->stride, &off));
  assert_string_equal(text_of(off), "((3 * b) + 5)");
  /* A runtime coordinate; `_` adds nothing. */
  FlyTuple *c = fly_parse_tuple_pattern(&A, "(?,_)", 5);
  c->elem[0]->sym = "i";
  assert_true(fly_sym_crd2idx(&ops, c, L->shape, L->stride, &off));
  assert_string_equal(text_of(off), "(i * b)");
  /* A whole mode's index is split column-major, the last sub-mode taking
     the rest. */
  FlyLayout *M = pattern("((4,?),2):((1,8),?)");
  FlySym i = fly_sym_handle("t");
  assert_string_equal(text_of(fly_sym_index(&ops, i, M->shape->elem[0], M->stride->elem[0])),
                      "(t % 4 + (t / 4 * 8))");
  assert_string_equal(text_of(fly_sym_size(&ops, M->shape)), "((4 * a) * 2)");
  FlySym crd[4];
  assert_int_equal(fly_sym_idx2crd(&ops, i, M->shape, crd, 4), 3);
  assert_string_equal(text_of(crd[0]), "t % (4 * a) % 4");
  assert_string_equal(text_of(crd[1]), "t % (4 * a) / 4");
  assert_string_equal(text_of(crd[2]), "t / (4 * a)");
  /* A coordinate with more modes than the layout. */
  assert_false(fly_sym_crd2idx(&ops, tup("(1,2,3)"), L->shape, L->stride, &off));
}

/* With every leaf static the symbolic functions are the algebra's. */
static void agree_with_the_algebra(void **state) {
  (void)state;
  const char *layouts[] = {"((4,2),(3,5)):((1,4),(8,24))", "(2,(3,2),4):(12,(1,3),6)",
                           "((2,2),2):((0,1),2)", "8:3"};
  for (size_t k = 0; k < sizeof layouts / sizeof layouts[0]; k++) {
    FlyLayout *L = lay(layouts[k]);
    int64_t size;
    assert_true(fly_layout_size(&A, L, &size));
    for (int64_t i = 0; i < size; i++) {
      FlySym got = fly_sym_index(&ops, fly_sym_const(i), L->shape, L->stride);
      int64_t want;
      assert_true(fly_layout_eval(&A, L, i, &want));
      assert_true(fly_sym_is_const(got));
      assert_int_equal(got.c, want);
      FlySym crd[16];
      int n = fly_sym_idx2crd(&ops, fly_sym_const(i), L->shape, crd, 16);
      FlyTuple *c = fly_tuple_flatten(&A, fly_tuple_idx2crd(&A, i, L->shape));
      assert_int_equal(n, c->n);
      for (int j = 0; j < n; j++)
        assert_int_equal(crd[j].c, c->elem[j]->value);
    }
  }
}

/* The values of a layout with basis strides are coordinates, one FlySym per
   leaf of its coprofile. */
static void basis_strides_give_coordinates(void **state) {
  (void)state;
  FlySym out[8];
  /* The identity tensor of a runtime shape: coordinate (i,j) is (i,j). */
  FlyLayout *I = pattern("(?,?):(1@0,1@1)");
  FlyTuple *profile = fly_layout_coprofile(&A, I);
  expect_tuple(profile, "(0,0)");
  FlyTuple *c = fly_parse_tuple_pattern(&A, "(?,?)", 5);
  c->elem[0]->sym = "i";
  c->elem[1]->sym = "j";
  assert_int_equal(fly_sym_crd2coord(&ops, c, I->shape, I->stride, profile, out, 8), 2);
  assert_string_equal(text_of(out[0]), "i");
  assert_string_equal(text_of(out[1]), "j");
  /* A 1-D runtime index into a static identity splits column-major. */
  FlyLayout *S = lay("(4,(2,3)):(1@0,(1@0@1,1@1@1))");
  FlyTuple *t = fly_parse_tuple_pattern(&A, "?", 1);
  t->sym = "t";
  profile = fly_layout_coprofile(&A, S);
  assert_int_equal(fly_sym_crd2coord(&ops, t, S->shape, S->stride, profile, out, 8), 3);
  assert_string_equal(text_of(out[0]), "t % 4");
  assert_string_equal(text_of(out[1]), "t / 4 % 2");
  assert_string_equal(text_of(out[2]), "t / 4 / 2");
  /* A thread's tile of a divided identity: the element (i,j) of tile (3,1)
     of (8,6) in tiles of (2,3) is at (i + 6, j + 3). */
  FlyLayout *Z = fly_layout_zipped_divide(&A, lay("(8,6):(1@0,1@1)"), til("(2,3)"));
  expect_layout(Z, "((2,3),(4,2)):((1@0,1@1),(2@0,3@1))");
  FlyTuple *zc = fly_parse_tuple_pattern(&A, "((?,?),(3,1))", 13);
  zc->elem[0]->elem[0]->sym = "i";
  zc->elem[0]->elem[1]->sym = "j";
  profile = fly_layout_coprofile(&A, Z);
  assert_int_equal(fly_sym_crd2coord(&ops, zc, Z->shape, Z->stride, profile, out, 8), 2);
  assert_string_equal(text_of(out[0]), "(i + 6)");
  assert_string_equal(text_of(out[1]), "(j + 3)");
  /* Zeros beside basis elements add nothing; `_` neither. */
  FlyLayout *B = lay("(4,2,3):(1@1,0,2@0)");
  FlyTuple *bc = fly_parse_tuple_pattern(&A, "(?,?,_)", 7);
  bc->elem[0]->sym = "x";
  bc->elem[1]->sym = "y";
  assert_int_equal(
      fly_sym_crd2coord(&ops, bc, B->shape, B->stride, fly_layout_coprofile(&A, B), out, 8), 2);
  assert_string_equal(text_of(out[0]), "0");
  assert_string_equal(text_of(out[1]), "x");
  /* An integer profile: the index, as fly_sym_crd2idx gives it. */
  FlyLayout *L = pattern("(8,?):(?,1)");
  assert_int_equal(fly_sym_crd2coord(&ops, tup("(3,5)"), L->shape, L->stride, tup("0"), out, 8), 1);
  assert_string_equal(text_of(out[0]), "((3 * b) + 5)");
  /* Refused: more modes than the shape, a runtime stride beside basis
     elements, a basis stride in fly_sym_crd2idx. */
  assert_int_equal(
      fly_sym_crd2coord(&ops, tup("(1,2,3)"), I->shape, I->stride, tup("(0,0)"), out, 8), -1);
  FlyLayout *R = pattern("(4,4):(1@0,?)");
  assert_int_equal(fly_sym_crd2coord(&ops, tup("(1,2)"), R->shape, R->stride,
                                     fly_layout_coprofile(&A, R), out, 8),
                   -1);
  assert_int_equal(
      fly_sym_crd2coord(&ops, tup("(1,2)"), I->shape, I->stride, tup("(0,(0))"), out, 8), -1);
  FlySym off;
  assert_false(fly_sym_crd2idx(&ops, tup("(1,2)"), S->shape, S->stride, &off));
}

/* With every leaf static, fly_sym_crd2coord is fly_layout_value_at. */
static void coordinates_agree_with_the_algebra(void **state) {
  (void)state;
  const char *layouts[] = {"(4,(2,3)):(1@0,(1@0@1,1@1@1))", "((2,4),(3,2)):((1@0,2@0),(1@1,3@1))",
                           "(3,2,2):(2@1,0,-1@0)", "((2,2),3):((1,4),8)"};
  for (size_t k = 0; k < sizeof layouts / sizeof layouts[0]; k++) {
    FlyLayout *L = lay(layouts[k]);
    FlyTuple *profile = fly_layout_coprofile(&A, L);
    int64_t size;
    assert_true(fly_layout_size(&A, L, &size));
    for (int64_t i = 0; i < size; i++) {
      FlySym out[8];
      int n = fly_sym_crd2coord(&ops, fly_tuple_int(&A, i), L->shape, L->stride, profile, out, 8);
      FlyTuple *want = fly_tuple_flatten(&A, fly_layout_value_at(&A, L, i));
      assert_int_equal(n, want->n);
      for (int j = 0; j < n; j++) {
        assert_true(fly_sym_is_const(out[j]));
        assert_int_equal(out[j].c, want->elem[j]->value);
      }
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      TEST(patterns_keep_their_structure),
      TEST(patterns_are_refused_elsewhere),
      TEST(static_layouts_fold_to_numbers),
      TEST(runtime_leaves_become_expressions),
      TEST(agree_with_the_algebra),
      TEST(basis_strides_give_coordinates),
      TEST(coordinates_agree_with_the_algebra),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
