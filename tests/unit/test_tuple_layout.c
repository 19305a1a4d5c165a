/* test_tuple_layout.c — integer tuples (fly_tuple.h) and the non-algebraic
 * part of layouts (fly_layout.h): construction, queries, modes,
 * coordinates, slicing, compact layouts and overflow detection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "fly_test_session.h"

static int64_t crd(const char *coord, const FlyLayout *L) {
  int64_t v = -12345;
  if (!fly_layout_crd2idx(&A, tup(coord), L, &v))
    fail_msg("crd2idx(%s): %s", coord, fly_algebra_message(&A));
  return v;
}

static int64_t eval(const FlyLayout *L, int64_t i) {
  int64_t v = -12345;
  if (!fly_layout_eval(&A, L, i, &v))
    fail_msg("eval(%lld): %s", (long long)i, fly_algebra_message(&A));
  return v;
}

/* ---- tuples ------------------------------------------------------------- */

static void test_tuple_rank_and_depth(void **state) {
  (void)state;
  static const struct {
    const char *t;
    int rank, depth;
  } cases[] = {
      {"8", 1, 0},  {"_", 1, 0},      {"(8,16)", 2, 1}, {"(4,(2,3))", 2, 2},
      {"()", 0, 1}, {"((()))", 1, 3}, {"(8)", 1, 1},    {"(1,(2,(3,(4))),5)", 3, 4},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    FlyTuple *t = tup(cases[i].t);
    if (fly_tuple_rank(t) != cases[i].rank || fly_tuple_depth(t) != cases[i].depth)
      fail_msg("%s: want rank %d depth %d, got %d %d", cases[i].t, cases[i].rank, cases[i].depth,
               fly_tuple_rank(t), fly_tuple_depth(t));
  }
}

static void test_tuple_get(void **state) {
  (void)state;
  FlyTuple *t = tup("(4,(2,3))");
  expect_tuple(fly_tuple_get(&A, t, 0), "4");
  expect_tuple(fly_tuple_get(&A, t, 1), "(2,3)");
  FlyTuple *leaf = tup("8");
  assert_ptr_equal(fly_tuple_get(&A, leaf, 0), leaf);
  expect_error(fly_tuple_get(&A, t, 2), "mode 2 out of range: the tuple has rank 2");
  expect_error(fly_tuple_get(&A, t, -1), "mode -1 out of range");
  expect_error(fly_tuple_get(&A, leaf, 1), "the tuple has rank 1");
  expect_error(fly_tuple_get(&A, tup("()"), 0), "the tuple has rank 0");
}

static void test_tuple_product(void **state) {
  (void)state;
  int64_t p = 0;
  assert_true(fly_tuple_product(&A, tup("(4,(2,3))"), &p));
  assert_int_equal(p, 24);
  assert_true(fly_tuple_product(&A, tup("()"), &p));
  assert_int_equal(p, 1);
  assert_true(fly_tuple_product(&A, tup("7"), &p));
  assert_int_equal(p, 7);
  assert_true(fly_tuple_product(&A, tup("(4294967296,2147483647)"), &p));
  assert_int_equal(p, INT64_C(9223372032559808512));
  expect_false_error(fly_tuple_product(&A, tup("(2,_)"), &p), "'_' has no size");
  expect_false_error(fly_tuple_product(&A, tup("(4294967296,(2,4294967296))"), &p),
                     "integer overflow");
}

static void test_tuple_flatten_and_unwrap(void **state) {
  (void)state;
  expect_tuple(fly_tuple_flatten(&A, tup("(4,(2,(3,5)))")), "(4,2,3,5)");
  expect_tuple(fly_tuple_flatten(&A, tup("8")), "(8)");
  expect_tuple(fly_tuple_flatten(&A, tup("()")), "()");
  expect_tuple(fly_tuple_flatten(&A, tup("((),(_,()))")), "(_)");
  assert_int_equal(fly_tuple_leaf_count(tup("(4,(2,(3,5)))")), 4);
  assert_int_equal(fly_tuple_leaf_count(tup("()")), 0);

  expect_tuple(fly_tuple_unwrap(tup("(((8)))")), "8");
  expect_tuple(fly_tuple_unwrap(tup("((8,2))")), "(8,2)");
  expect_tuple(fly_tuple_unwrap(tup("(8,(2))")), "(8,(2))");
  expect_tuple(fly_tuple_unwrap(tup("()")), "()");
  assert_null(fly_tuple_unwrap(NULL));
}

static void test_tuple_equal_congruent_underscore(void **state) {
  (void)state;
  assert_true(fly_tuple_equal(tup("(4,(2,3))"), tup("(4,(2,3))")));
  assert_false(fly_tuple_equal(tup("(4,(2,3))"), tup("(4,(2,4))")));
  assert_false(fly_tuple_equal(tup("(8)"), tup("8")));
  assert_true(fly_tuple_equal(tup("(_,1)"), tup("(_,1)")));
  assert_false(fly_tuple_equal(tup("(_,1)"), tup("(0,1)")));

  assert_true(fly_tuple_congruent(tup("(4,(2,3))"), tup("(1,(4,8))")));
  assert_false(fly_tuple_congruent(tup("(4,(2,3))"), tup("(1,4,8)")));
  assert_false(fly_tuple_congruent(tup("(8)"), tup("8")));
  assert_true(fly_tuple_congruent(tup("()"), tup("()")));

  assert_true(fly_tuple_has_underscore(tup("(1,(2,_))")));
  assert_false(fly_tuple_has_underscore(tup("(1,(2,3))")));
}

static void test_tuple_prefix_and_suffix_products(void **state) {
  (void)state;
  expect_tuple(fly_tuple_prefix_product(&A, tup("(4,(2,3))"), 1), "(1,(4,8))");
  expect_tuple(fly_tuple_prefix_product(&A, tup("(4,(2,3))"), 2), "(2,(8,16))");
  expect_tuple(fly_tuple_prefix_product(&A, tup("8"), 1), "1");
  expect_tuple(fly_tuple_prefix_product(&A, tup("()"), 1), "()");
  expect_tuple(fly_tuple_suffix_product(&A, tup("(4,(2,3))"), 1), "(6,(3,1))");
  expect_tuple(fly_tuple_suffix_product(&A, tup("((2,2),2,5)"), 1), "((20,10),5,1)");
  expect_tuple(fly_tuple_suffix_product(&A, tup("(4,8)"), 3), "(24,3)");
}

static void test_tuple_ceil_div(void **state) {
  (void)state;
  static const struct {
    const char *a;
    int64_t b;
    const char *want;
  } cases[] = {
      /* Each element divides what the ones before it left over (CuTe). */
      {"(4,6)", 3, "(2,6)"},
      {"(4,6)", 8, "(1,3)"},
      {"(4,6)", 24, "(1,1)"},
      {"(4,6)", 100, "(1,1)"},
      {"(4,6)", 1, "(4,6)"},
      {"(2,(3,4))", 6, "(1,(1,4))"},
      {"7", 2, "4"},
      {"8", 2, "4"},
      /* The CuTe documentation's shape divisions. */
      {"(3,6,2,8)", 3, "(1,6,2,8)"},
      {"(3,6,2,8)", 6, "(1,3,2,8)"},
      {"(3,6,2,8)", 9, "(1,2,2,8)"},
      {"(3,6,2,8)", 72, "(1,1,1,4)"},
      {"(6,2)", 12, "(1,1)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    FlyTuple *q = fly_tuple_ceil_div(&A, tup(cases[i].a), cases[i].b);
    char *s = fly_tuple_str(&A, q);
    if (!s || strcmp(s, cases[i].want) != 0)
      fail_msg("ceil_div(%s, %lld): want %s, got %s", cases[i].a, (long long)cases[i].b,
               cases[i].want, s ? s : fly_algebra_message(&A));
  }
  expect_error(fly_tuple_ceil_div(&A, tup("(4,6)"), 0), "the divisor must be positive");
  expect_error(fly_tuple_ceil_div(&A, tup("(4,6)"), -2), "the divisor must be positive");
}

static void test_tuple_idx2crd(void **state) {
  (void)state;
  static const struct {
    int64_t idx;
    const char *shape, *want;
  } cases[] = {
      {0, "(4,8)", "(0,0)"},
      {5, "(4,8)", "(1,1)"},
      {31, "(4,8)", "(3,7)"},
      {13, "(4,(2,3))", "(1,(1,1))"},
      {23, "(4,(2,3))", "(3,(1,2))"},
      {5, "((2,2),2)", "((1,0),1)"},
      {5, "8", "5"},
      {3, "()", "()"},
      /* The last mode absorbs indices past the size. */
      {32, "(4,8)", "(0,8)"},
      {100, "(4,8)", "(0,25)"},
      {100, "(4,(2,3))", "(0,(1,12))"},
      {31, "((2,2),2)", "((1,1),7)"},
      {100, "8", "100"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *s = fly_tuple_str(&A, fly_tuple_idx2crd(&A, cases[i].idx, tup(cases[i].shape)));
    if (!s || strcmp(s, cases[i].want) != 0)
      fail_msg("idx2crd(%lld, %s): want %s, got %s", (long long)cases[i].idx, cases[i].shape,
               cases[i].want, s ? s : fly_algebra_message(&A));
  }
  expect_error(fly_tuple_idx2crd(&A, -1, tup("(4,8)")), "negative index");
  expect_error(fly_tuple_idx2crd(&A, 3, tup("(4,_)")), "'_' is not a shape");
}

/* ---- layout construction and queries -------------------------------------- */

static void test_layout_make_validates(void **state) {
  (void)state;
  expect_layout(fly_layout_make(&A, tup("(4,(2,3))"), tup("(1,(4,8))")), "(4,(2,3)):(1,(4,8))");
  expect_error(fly_layout_make(&A, tup("(4,8)"), tup("(1,4,32)")),
               "shape (4,8) and stride (1,4,32) are not congruent");
  expect_error(fly_layout_make(&A, tup("(4,0)"), tup("(1,4)")), "shape 0 is not positive");
  expect_error(fly_layout_make(&A, tup("(4,_)"), tup("(1,4)")), "'_' is not a shape");
  expect_error(fly_layout_make(&A, tup("(4,8)"), tup("(1,_)")), "'_' is not a stride");
  assert_null(fly_layout_make(&A, NULL, tup("1")));
  assert_false(fly_algebra_failed(&A));
}

static void test_layout_size_cosize_rank_depth(void **state) {
  (void)state;
  static const struct {
    const char *L;
    int64_t size, cosize;
    int rank, depth;
  } cases[] = {
      {"(4,(2,3)):(1,(4,8))", 24, 24, 2, 2},
      {"8:2", 8, 15, 1, 0},
      {"(8):(2)", 8, 15, 1, 1},
      {"(4,8):(0,1)", 32, 8, 2, 1},
      {"(4,8):(8,1)", 32, 32, 2, 1},
      {"(2,2):(1,6)", 4, 8, 2, 1},
      {"8:0", 8, 1, 1, 0},
      {"():()", 1, 1, 0, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    FlyLayout *L = lay(cases[i].L);
    int64_t size = -1, cosize = -1;
    assert_true(fly_layout_size(&A, L, &size));
    assert_true(fly_layout_cosize(&A, L, &cosize));
    if (size != cases[i].size || cosize != cases[i].cosize || fly_layout_rank(L) != cases[i].rank ||
        fly_layout_depth(L) != cases[i].depth)
      fail_msg("%s: want size %lld cosize %lld rank %d depth %d, got %lld %lld %d %d", cases[i].L,
               (long long)cases[i].size, (long long)cases[i].cosize, cases[i].rank, cases[i].depth,
               (long long)size, (long long)cosize, fly_layout_rank(L), fly_layout_depth(L));
  }
}

static void test_layout_equal(void **state) {
  (void)state;
  assert_true(fly_layout_equal(lay("(4,8):(1,4)"), lay("( 4 , 8 ):( 1 , 4 )")));
  assert_false(fly_layout_equal(lay("(4,8):(1,4)"), lay("(4,8):(1,5)")));
  assert_false(fly_layout_equal(lay("(4,8):(1,4)"), lay("(8,4):(1,4)")));
  assert_false(fly_layout_equal(lay("8:1"), lay("(8):(1)")));
}

/* ---- modes ---------------------------------------------------------------- */

static void test_layout_get_and_select(void **state) {
  (void)state;
  FlyLayout *L = lay("(4,(2,3)):(1,(4,8))");
  expect_layout(fly_layout_get(&A, L, 0), "4:1");
  expect_layout(fly_layout_get(&A, L, 1), "(2,3):(4,8)");
  expect_layout(fly_layout_get(&A, lay("8:2"), 0), "8:2");
  expect_error(fly_layout_get(&A, L, 2), "mode 2 out of range: the layout has rank 2");
  expect_error(fly_layout_get(&A, L, -1), "mode -1 out of range");
  expect_error(fly_layout_get(&A, lay("8:2"), 1), "the layout has rank 1");

  FlyLayout *M = lay("(4,8,3):(1,4,32)");
  int order[] = {2, 0};
  expect_layout(fly_layout_select(&A, M, 2, order), "(3,4):(32,1)");
  int one[] = {1};
  FlyLayout *S = fly_layout_select(&A, M, 1, one);
  expect_layout(S, "8:4");
  assert_int_equal(fly_layout_rank(S), 1);
  assert_int_equal(fly_layout_depth(S), 1); /* (8):(4), a rank-1 tuple */
  int twice[] = {1, 1};
  expect_layout(fly_layout_select(&A, M, 2, twice), "(8,8):(4,4)");
  expect_layout(fly_layout_select(&A, M, 0, NULL), "():()");
  int bad[] = {0, 3};
  expect_error(fly_layout_select(&A, M, 2, bad), "mode 3 out of range");
}

static void test_layout_group(void **state) {
  (void)state;
  FlyLayout *L = lay("(4,8,3):(1,4,32)");
  expect_layout(fly_layout_group(&A, L, 0, 2), "((4,8),3):((1,4),32)");
  expect_layout(fly_layout_group(&A, L, 1, 3), "(4,(8,3)):(1,(4,32))");
  expect_layout(fly_layout_group(&A, L, 0, 3), "(4,8,3):(1,4,32)"); /* ((4,8,3)) */
  assert_int_equal(fly_layout_rank(fly_layout_group(&A, L, 0, 3)), 1);
  expect_layout(fly_layout_group(&A, L, 1, 2), "(4,(8),3):(1,(4),32)");
  /* CuTe's group<B,B> inserts nothing. */
  expect_layout(fly_layout_group(&A, L, 1, 1), "(4,8,3):(1,4,32)");
  expect_error(fly_layout_group(&A, L, 2, 1), "group(2, 1) is not a range of modes");
  expect_error(fly_layout_group(&A, L, 0, 4), "group(0, 4) is not a range of modes of a rank-3");
  expect_error(fly_layout_group(&A, L, -1, 2), "is not a range of modes");
}

static void test_layout_append_prepend_pad(void **state) {
  (void)state;
  FlyLayout *L = lay("(4,8):(1,4)");
  expect_layout(fly_layout_append(&A, L, lay("3:32")), "(4,8,3):(1,4,32)");
  expect_layout(fly_layout_append(&A, L, NULL), "(4,8,1):(1,4,0)");
  expect_layout(fly_layout_prepend(&A, L, lay("3:32")), "(3,4,8):(32,1,4)");
  expect_layout(fly_layout_prepend(&A, L, NULL), "(1,4,8):(0,1,4)");
  expect_layout(fly_layout_append(&A, lay("8:1"), lay("(2,2):(8,16)")), "(8,(2,2)):(1,(8,16))");
  expect_layout(fly_layout_append(&A, lay("():()"), lay("8:1")), "8:1");

  expect_layout(fly_layout_pad(&A, L, 4), "(4,8,1,1):(1,4,0,0)");
  expect_layout(fly_layout_pad(&A, L, 2), "(4,8):(1,4)");
  expect_layout(fly_layout_pad(&A, L, 1), "(4,8):(1,4)");
  expect_layout(fly_layout_pad(&A, lay("8:1"), 2), "(8,1):(1,0)");
  expect_error(fly_layout_pad(&A, L, FLY_MAX_MODES + 1), "too many modes");
}

static void test_layout_zip_and_flatten(void **state) {
  (void)state;
  expect_layout(fly_layout_zip(&A, lay("((2,3),(4,5)):((1,2),(6,24))")),
                "((2,4),(3,5)):((1,6),(2,24))");
  expect_layout(fly_layout_zip(&A, lay("((2,3),(4,5),(6,7)):((1,2),(6,24),(0,0))")),
                "((2,4,6),(3,5,7)):((1,6,0),(2,24,0))");
  /* As in CuTe, modes that are not tuples make the whole one mode. */
  FlyLayout *Z = fly_layout_zip(&A, lay("(4,8):(1,4)"));
  expect_layout(Z, "(4,8):(1,4)");
  assert_int_equal(fly_layout_rank(Z), 1);
  expect_layout(fly_layout_zip(&A, lay("8:1")), "8:1");
  expect_error(fly_layout_zip(&A, lay("((2,3),(4,5,6)):((1,2),(6,24,1))")),
               "zip: mode 1 has rank 3 but mode 0 has rank 2");

  expect_layout(fly_layout_flatten(&A, lay("(4,(2,(3,5))):(1,(4,(8,24)))")),
                "(4,2,3,5):(1,4,8,24)");
  expect_layout(fly_layout_flatten(&A, lay("8:1")), "8:1");
  expect_layout(fly_layout_flatten(&A, lay("((8)):((1))")), "8:1");
}

/* ---- coordinates -------------------------------------------------------- */

static void test_crd2idx_integer_hierarchical_and_partial(void **state) {
  (void)state;
  FlyLayout *L = lay("(4,8):(1,4)");
  assert_int_equal(crd("5", L), 5);
  assert_int_equal(crd("(1,2)", L), 9);
  assert_int_equal(crd("(3,7)", L), 31);

  FlyLayout *H = lay("(4,(2,3)):(1,(4,8))");
  assert_int_equal(crd("(1,(1,2))", H), 21);
  /* A partial coordinate: 5 is a 1-D index into (2,3), i.e. (1,2). */
  assert_int_equal(crd("(1,5)", H), 21);
  assert_int_equal(crd("13", H), 13);

  FlyLayout *R = lay("(4,(2,3)):(6,(3,1))"); /* row-major */
  assert_int_equal(crd("(1,(1,2))", R), 11);
  assert_int_equal(crd("(1,5)", R), 11);
  assert_int_equal(crd("5", R), 6 + 3); /* 5 = (1,(1,0)) */

  /* Integer, natural and partial coordinates agree at every index. */
  int64_t size = 0;
  assert_true(fly_layout_size(&A, R, &size));
  for (int64_t i = 0; i < size; i++) {
    int64_t by_int, by_natural, by_eval;
    FlyTuple *natural = fly_tuple_idx2crd(&A, i, R->shape);
    assert_true(fly_layout_crd2idx(&A, fly_tuple_int(&A, i), R, &by_int));
    assert_true(fly_layout_crd2idx(&A, natural, R, &by_natural));
    by_eval = eval(R, i);
    assert_int_equal(by_int, by_natural);
    assert_int_equal(by_int, by_eval);
  }
}

static void test_crd2idx_errors(void **state) {
  (void)state;
  FlyLayout *L = lay("(4,8):(1,4)");
  FlyLayout *H = lay("(4,(2,3)):(1,(4,8))");
  int64_t v;
  expect_false_error(fly_layout_crd2idx(&A, tup("32"), L, &v),
                     "coordinate 32 is out of range for shape (4,8) (size 32)");
  expect_false_error(fly_layout_crd2idx(&A, tup("-1"), L, &v), "coordinate -1 is out of range");
  expect_false_error(fly_layout_crd2idx(&A, tup("(4,0)"), L, &v),
                     "coordinate 4 is out of range for shape 4");
  expect_false_error(fly_layout_crd2idx(&A, tup("(1,(1,3))"), H, &v),
                     "coordinate 3 is out of range for shape 3");
  expect_false_error(fly_layout_crd2idx(&A, tup("(1,6)"), H, &v),
                     "coordinate 6 is out of range for shape (2,3)");
  expect_false_error(fly_layout_crd2idx(&A, tup("(1,2,3)"), L, &v),
                     "coordinate (1,2,3) does not match shape (4,8)");
  expect_false_error(fly_layout_crd2idx(&A, tup("((1,2),0)"), L, &v),
                     "coordinate (1,2) does not match shape 4");
  expect_false_error(fly_layout_crd2idx(&A, tup("(1,_)"), L, &v), "'_' in a coordinate");
}

static void test_eval_continues_past_the_size(void **state) {
  (void)state;
  FlyLayout *L = lay("(4,8):(1,4)");
  assert_int_equal(eval(L, 31), 31);
  assert_int_equal(eval(L, 32), 32);
  assert_int_equal(eval(L, 40), 40);
  FlyLayout *T = lay("(4,8):(8,1)");
  assert_int_equal(eval(T, 35), 24 + 8); /* (3,8) */
  FlyLayout *S = lay("(2,3):(3,1)");
  assert_int_equal(eval(S, 6), 3); /* (0,3) */
  assert_int_equal(eval(lay("8:2"), 10), 20);
  /* A hierarchical last mode continues along its own last leaf. */
  FlyLayout *H = lay("(4,(2,3)):(1,(4,8))");
  assert_int_equal(eval(H, 24), 24);
  assert_int_equal(eval(H, 30), 2 + 4 + 24); /* (2,(1,3)) */

  int64_t v;
  expect_false_error(fly_layout_eval(&A, L, -1, &v), "index -1 is negative");
  /* crd2idx, unlike eval, keeps to the shape. */
  expect_false_error(fly_layout_crd2idx(&A, tup("32"), L, &v), "out of range");
}

static void test_slice_with_offsets(void **state) {
  (void)state;
  FlyLayout *L = lay("(4,8):(1,4)");
  int64_t off = -1;
  expect_layout(fly_layout_slice(&A, tup("(_,2)"), L, &off), "4:1");
  assert_int_equal(off, 8);
  expect_layout(fly_layout_slice(&A, tup("(2,_)"), L, &off), "8:4");
  assert_int_equal(off, 2);
  expect_layout(fly_layout_slice(&A, tup("(_,_)"), L, &off), "(4,8):(1,4)");
  assert_int_equal(off, 0);
  expect_layout(fly_layout_slice(&A, tup("_"), L, &off), "(4,8):(1,4)");
  assert_int_equal(off, 0);
  expect_layout(fly_layout_slice(&A, tup("(1,2)"), L, &off), "():()");
  assert_int_equal(off, 9);
  expect_layout(fly_layout_slice(&A, tup("3"), L, &off), "():()");
  assert_int_equal(off, 3);
  /* The offset pointer may be NULL. */
  expect_layout(fly_layout_slice(&A, tup("(_,2)"), L, NULL), "4:1");

  FlyLayout *H = lay("(4,(2,3)):(1,(4,8))");
  expect_layout(fly_layout_slice(&A, tup("(_,(1,_))"), H, &off), "(4,3):(1,8)");
  assert_int_equal(off, 4);
  expect_layout(fly_layout_slice(&A, tup("(2,(_,2))"), H, &off), "2:4");
  assert_int_equal(off, 18);
  expect_layout(fly_layout_slice(&A, tup("(_,5)"), H, &off), "4:1");
  assert_int_equal(off, 20); /* 5 is (1,2) in (2,3) */
  expect_layout(fly_layout_slice(&A, tup("(1,_)"), H, &off), "(2,3):(4,8)");
  assert_int_equal(off, 1);

  /* The slice plus its offset is L at every coordinate it keeps. */
  FlyLayout *part = fly_layout_slice(&A, tup("(3,(_,2))"), H, &off);
  for (int64_t j = 0; j < 2; j++) {
    int64_t full;
    FlyTuple *e[2] = {fly_tuple_int(&A, 3),
                      fly_tuple_pair(&A, fly_tuple_int(&A, j), fly_tuple_int(&A, 2))};
    assert_true(fly_layout_crd2idx(&A, fly_tuple_seq(&A, 2, e), H, &full));
    assert_int_equal(off + eval(part, j), full);
  }

  expect_error(fly_layout_slice(&A, tup("(_,8)"), L, &off),
               "coordinate 8 is out of range for shape 8");
  expect_error(fly_layout_slice(&A, tup("(_,(3,_))"), H, &off),
               "coordinate 3 is out of range for shape 2");
  expect_error(fly_layout_slice(&A, tup("(_,_,_)"), L, &off), "does not match shape (4,8)");
}

static void test_dice(void **state) {
  (void)state;
  FlyLayout *L = lay("(4,8):(1,4)");
  expect_layout(fly_layout_dice(&A, tup("(_,2)"), L), "8:4");
  expect_layout(fly_layout_dice(&A, tup("(2,_)"), L), "4:1");
  expect_layout(fly_layout_dice(&A, tup("(1,2)"), L), "(4,8):(1,4)");
  expect_layout(fly_layout_dice(&A, tup("3"), L), "(4,8):(1,4)");
  expect_layout(fly_layout_dice(&A, tup("_"), L), "():()");
  expect_layout(fly_layout_dice(&A, tup("(_,(1,_))"), lay("(4,(2,3)):(1,(4,8))")), "2:4");
  expect_error(fly_layout_dice(&A, tup("(_,9)"), L), "coordinate 9 is out of range");
}

/* ---- compact layouts ------------------------------------------------------ */

static void test_col_row_major_and_ordered(void **state) {
  (void)state;
  expect_layout(fly_layout_col_major(&A, tup("(4,(2,3))")), "(4,(2,3)):(1,(4,8))");
  expect_layout(fly_layout_row_major(&A, tup("(4,(2,3))")), "(4,(2,3)):(6,(3,1))");
  expect_layout(fly_layout_col_major(&A, tup("8")), "8:1");
  expect_layout(fly_layout_row_major(&A, tup("8")), "8:1");
  expect_layout(fly_layout_row_major(&A, tup("(2,2,2)")), "(2,2,2):(4,2,1)");

  /* CuTe's make_ordered_layout documentation example. */
  expect_layout(fly_layout_ordered(&A, tup("(2,2,2,2)"), tup("(0,2,3,1)")), "(2,2,2,2):(1,4,8,2)");
  expect_layout(fly_layout_ordered(&A, tup("(4,8)"), tup("(1,0)")), "(4,8):(8,1)");
  expect_layout(fly_layout_ordered(&A, tup("(4,8)"), tup("(5,7)")), "(4,8):(1,4)");
  /* The order may be coarser than the shape: a mode keeps compact strides. */
  expect_layout(fly_layout_ordered(&A, tup("(2,(3,4),5)"), tup("(1,0,2)")),
                "(2,(3,4),5):(12,(1,3),24)");
  expect_layout(fly_layout_ordered(&A, tup("(2,(3,4),5)"), tup("(1,(0,3),2)")),
                "(2,(3,4),5):(3,(1,30),6)");

  expect_error(fly_layout_ordered(&A, tup("(2,2,2)"), tup("(0,1,1)")), "order 1 appears twice");
  expect_error(fly_layout_ordered(&A, tup("(2,2)"), tup("(0,1,2)")),
               "the order does not match the shape's modes");
  expect_error(fly_layout_ordered(&A, tup("8"), tup("(0,1)")), "does not match");
  expect_error(fly_layout_ordered(&A, tup("(2,2)"), tup("(0,_)")), "'_' is not an order");
  expect_error(fly_layout_ordered(&A, tup("(2,0)"), tup("(0,1)")), "shape 0 is not positive");
}

/* ---- overflow ------------------------------------------------------------- */

static void test_overflow_is_detected(void **state) {
  (void)state;
  int64_t v;
  FlyTuple *big = tup("(1099511627776,1099511627776)"); /* (2^40,2^40) */
  expect_error(fly_layout_make(&A, big, tup("(1,1099511627776)")), "overflow");
  expect_error(fly_layout_col_major(&A, big), "overflow");
  expect_error(fly_layout_row_major(&A, big), "overflow");
  expect_false_error(fly_tuple_product(&A, big, &v), "integer overflow");

  /* Every index of the layout fits; the sum at (1,1) does not. */
  FlyLayout *L = lay("(2,2):(4611686018427387904,4611686018427387904)");
  assert_int_equal(crd("(1,0)", L), INT64_C(4611686018427387904));
  expect_false_error(fly_layout_crd2idx(&A, tup("(1,1)"), L, &v),
                     "integer overflow: 4611686018427387904 + 4611686018427387904");
  expect_false_error(fly_layout_eval(&A, L, 3, &v), "integer overflow");
  expect_false_error(fly_layout_cosize(&A, L, &v), "integer overflow");

  FlyLayout *M = lay("8:4611686018427387904");
  expect_false_error(fly_layout_eval(&A, M, 2, &v), "integer overflow: 2 * 4611686018427387904");
  expect_false_error(fly_layout_crd2idx(&A, tup("3"), M, &v), "integer overflow");
  /* eval past the size overflows too rather than wrapping. */
  expect_false_error(fly_layout_eval(&A, lay("4:2"), INT64_MAX, &v), "integer overflow");
}

/* ---- basis elements and layouts whose values are coordinates ----------------- */

static FlyTuple *value_at(const FlyLayout *L, int64_t i) {
  FlyTuple *v = fly_layout_value_at(&A, L, i);
  if (!v)
    fail_msg("value_at(%lld): %s", (long long)i, fly_algebra_message(&A));
  return v;
}

static void test_basis_text_and_equality(void **state) {
  (void)state;
  FlyTuple *e = tup("3@1");
  assert_true(fly_tuple_is_basis(e));
  assert_int_equal(e->value, 3);
  assert_int_equal(e->nmodes, 1);
  assert_int_equal(e->modes[0], 1);
  /* CuTe prints E<1,0> (mode 1, then mode 0 inside it) as 1@0@1. */
  FlyTuple *nested = tup("1@0@1");
  assert_int_equal(nested->nmodes, 2);
  assert_int_equal(nested->modes[0], 1);
  assert_int_equal(nested->modes[1], 0);
  expect_tuple(nested, "1@0@1");
  expect_tuple(fly_tuple_basis(&A, 1, 2, (int[]){1, 0}), "1@0@1");
  expect_tuple(tup("( -2@0 , 5 @ 3 )"), "(-2@0,5@3)");
  assert_true(fly_tuple_equal(tup("3@1"), tup("3@1")));
  assert_false(fly_tuple_equal(tup("3@1"), tup("3@0")));
  assert_false(fly_tuple_equal(tup("3@1"), tup("2@1")));
  assert_false(fly_tuple_equal(tup("1@0@1"), tup("1@1@0")));
  assert_false(fly_tuple_equal(tup("3@1"), tup("3")));
  assert_true(fly_tuple_same_basis(tup("3@1"), tup("7@1")));
  assert_false(fly_tuple_same_basis(tup("3@1"), tup("3@0@1")));
  assert_true(fly_tuple_has_basis(tup("(1,(2,1@0))")));
  assert_false(fly_tuple_has_basis(tup("(1,(2,3))")));
  assert_true(fly_tuple_congruent(tup("(1@0,1@1)"), tup("(4,3)")));

  int64_t p;
  expect_false_error(fly_tuple_product(&A, tup("(2,3@1)"), &p), "3@1 is a stride, not a size");
  expect_error(fly_tuple_basis(&A, 1, 0, NULL), "a path of 1 to 32 modes, not 0");
  expect_error(fly_tuple_basis(&A, 1, 1, (int[]){1024}), "basis mode 1024 is out of range");
  expect_error(fly_parse_tuple(&A, "1@-1", 4), "a basis mode is a number from 0 to 1023");
  expect_error(fly_parse_tuple(&A, "1@", 2), "expected a digit but the text ended");
  expect_error(fly_parse_layout(&A, "(4,3@1):(1,1)", 13), "a basis element is a stride");
  expect_error(fly_parse_tiler(&A, "(3@1,4)", 7), "a basis element is a stride, not a tile");
}

static void test_basis_layouts_are_validated(void **state) {
  (void)state;
  expect_layout(lay("(4,3):(1@0,1@1)"), "(4,3):(1@0,1@1)");
  expect_layout(lay("(4,3,2):(1@0,0,1@1)"), "(4,3,2):(1@0,0,1@1)");
  expect_error(fly_layout_make(&A, tup("(4,3)"), tup("(1,1@1)")),
               "the stride (1,1@1) mixes basis elements with the integer 1");
  expect_error(fly_layout_make(&A, tup("(4,3)"), tup("(1@1,1@0@1)")),
               "the strides 1@1 and 1@0@1 do not add up");
  expect_error(fly_layout_make(&A, tup("(4,1@1)"), tup("(1,1)")), "1@1 is a stride, not a shape");
  /* The reader points at the stride that does not add up. */
  const char *bad = "(4,3):(1,1@1)";
  assert_null(fly_parse_layout(&A, bad, strlen(bad)));
  assert_int_equal(fly_algebra_error_pos(&A), 6);
  fly_algebra_clear_error(&A);
  assert_true(fly_layout_has_basis(lay("(4,3):(0,1@1)")));
  assert_false(fly_layout_has_basis(lay("(4,3):(0,1)")));
}

static void test_basis_values(void **state) {
  (void)state;
  FlyLayout *I = fly_layout_identity(&A, tup("(4,3)"));
  expect_layout(I, "(4,3):(1@0,1@1)");
  expect_tuple(value_at(I, 5), "(1,1)");
  expect_tuple(value_at(I, 11), "(3,2)");
  expect_tuple(fly_layout_value(&A, tup("(3,2)"), I), "(3,2)");
  expect_tuple(fly_layout_value(&A, tup("7"), I), "(3,1)");
  expect_tuple(fly_layout_coprofile(&A, I), "(0,0)");
  expect_tuple(fly_layout_coshape(&A, I), "(4,3)");
  int64_t n;
  assert_true(fly_layout_cosize(&A, I, &n));
  assert_int_equal(n, 12);

  /* Nested shapes: make_basis_like gives each leaf its own path. */
  FlyLayout *N = fly_layout_identity(&A, tup("(4,(2,3))"));
  expect_layout(N, "(4,(2,3)):(1@0,(1@0@1,1@1@1))");
  expect_tuple(value_at(N, 13), "(1,(1,1))");
  expect_tuple(fly_layout_coprofile(&A, N), "(0,(0,0))");
  expect_tuple(fly_layout_coshape(&A, N), "(4,(2,3))");
  expect_layout(fly_layout_identity(&A, tup("8")), "8:1");

  /* Every value has the coprofile's structure: 2@1 alone is (0,2). */
  FlyLayout *one = lay("4:1@1");
  expect_tuple(value_at(one, 2), "(0,2)");
  expect_tuple(value_at(one, 6), "(0,6)"); /* past the size, as eval */
  expect_tuple(value_at(lay("(4,2):(2@0,0)"), 7), "(6)");
  expect_tuple(value_at(lay("(2,3):(-1@1,3@0)"), 5), "(6,-1)");
  expect_tuple(fly_layout_coshape(&A, lay("(2,3):(-1@1,3@0)")), "(7,2)");
  /* Integer layouts give integer leaves. */
  expect_tuple(value_at(lay("(4,3):(3,1)"), 5), "4");
  expect_tuple(fly_layout_coprofile(&A, lay("(4,3):(3,1)")), "0");
  expect_tuple(fly_layout_coshape(&A, lay("(4,3):(3,1)")), "12");

  int64_t v;
  expect_false_error(fly_layout_crd2idx(&A, tup("(1,1)"), I, &v),
                     "(4,3):(1@0,1@1) has basis strides: its values are coordinates");
  expect_false_error(fly_layout_eval(&A, I, 1, &v), "its values are coordinates");
  expect_error(fly_layout_value(&A, tup("(4,0)"), I), "coordinate 4 is out of range");
  expect_error(fly_layout_value(&A, tup("(1@0,0)"), I), "1@0 is not a coordinate");
  expect_error(fly_layout_value_at(&A, I, -1), "index -1 is negative");
}

static void test_basis_slice_and_modes(void **state) {
  (void)state;
  FlyLayout *I = lay("(4,(2,3)):(1@0,(1@0@1,1@1@1))");
  FlyTuple *off = NULL;
  expect_layout(fly_layout_slice_and_offset(&A, tup("(_,(1,2))"), I, &off), "4:1@0");
  expect_tuple(off, "(0,(1,2))");
  expect_layout(fly_layout_slice_and_offset(&A, tup("(3,_)"), I, &off), "(2,3):(1@0@1,1@1@1)");
  expect_tuple(off, "(3,(0,0))");
  expect_layout(fly_layout_slice_and_offset(&A, tup("(2,5)"), lay("(4,6):(3,1)"), &off), "():()");
  expect_tuple(off, "11");
  expect_layout(fly_layout_slice(&A, tup("(3,_)"), I, NULL), "(2,3):(1@0@1,1@1@1)");
  int64_t o;
  expect_error(fly_layout_slice(&A, tup("(3,_)"), I, &o), "its values are coordinates");
  expect_layout(fly_layout_dice(&A, tup("(3,_)"), I), "4:1@0");
  expect_layout(fly_layout_get(&A, I, 1), "(2,3):(1@0@1,1@1@1)");
  expect_layout(fly_layout_flatten(&A, I), "(4,2,3):(1@0,1@0@1,1@1@1)");
  expect_layout(fly_layout_select(&A, I, 2, (int[]){1, 0}), "((2,3),4):((1@0@1,1@1@1),1@0)");
  expect_layout(fly_layout_append(&A, I, NULL), "(4,(2,3),1):(1@0,(1@0@1,1@1@1),0)");
}

static void test_basis_algebra(void **state) {
  (void)state;
  FlyLayout *I = lay("(8,6):(1@0,1@1)");
  /* Composition scales L's basis strides. */
  expect_layout(fly_layout_composition(&A, lay("(4,3):(1@0,1@1)"), lay("(2,3):(1,4)")),
                "(2,3):(1@0,1@1)");
  expect_layout(fly_layout_composition(&A, I, lay("(4,3):(2,16)")), "(4,3):(2@0,2@1)");
  expect_layout(fly_layout_composition(&A, I, lay("16:1")), "(8,2):(1@0,1@1)");
  expect_layout(fly_layout_compose_tiler(&A, I, til("(4:2,_)")), "(4,6):(2@0,1@1)");
  /* A basis stride in B reads that mode of L (CuTe's special case). */
  expect_layout(fly_layout_composition(&A, lay("(4,8):(1,4)"), lay("2:1@1")), "2:4");
  expect_layout(fly_layout_composition(&A, lay("(4,8):(1,4)"), lay("(2,4):(1@1,1@0)")),
                "(2,4):(4,1)");
  expect_layout(fly_layout_composition(&A, lay("(4,(2,8)):(1,(4,8))"), lay("4:2@1@1")), "4:16");
  expect_error(fly_layout_composition(&A, lay("(4,8):(1,4)"), lay("2:1@2")),
               "the stride 1@2 names mode 2, but (4,8):(1,4) has 2");
  /* The divides only complement the tile. */
  expect_layout(fly_layout_logical_divide(&A, I, til("(2,3)")),
                "((2,4),(3,2)):((1@0,2@0),(1@1,3@1))");
  expect_layout(fly_layout_zipped_divide(&A, I, til("(2,3)")),
                "((2,3),(4,2)):((1@0,1@1),(2@0,3@1))");
  expect_layout(fly_layout_tiled_divide(&A, I, til("(2,3)")), "((2,3),4,2):((1@0,1@1),2@0,3@1)");
  expect_layout(fly_layout_flat_divide(&A, I, til("(2,3)")), "(2,3,4,2):(1@0,1@1,2@0,3@1)");
  expect_layout(fly_layout_logical_divide(&A, I, til("4:2")), "(4,(2,6)):(2@0,(1@0,1@1))");
  /* Coalesce merges along one basis element only. */
  expect_layout(fly_layout_coalesce(&A, lay("(4,3):(1@0,4@0)")), "12:1@0");
  expect_layout(fly_layout_coalesce(&A, I), "(8,6):(1@0,1@1)");
  expect_layout(fly_layout_coalesce(&A, lay("(2,(2,3)):(1@0,(2@0,1@1))")), "(4,3):(1@0,1@1)");
  expect_layout(fly_layout_coalesce(&A, lay("(2,2):(1@0,2@0@1)")), "(2,2):(1@0,2@0@1)");
  expect_layout(fly_layout_filter(&A, lay("(4,3,2):(1@0,0,1@1)")), "(4,2):(1@0,1@1)");
  expect_layout(fly_layout_filter(&A, lay("(4,3):(1@0,0@1)")), "4:1@0");

  /* What needs integer values refuses, naming the operation. */
  int64_t n;
  expect_error(fly_layout_complement(&A, I, tup("48")),
               "complement: (8,6):(1@0,1@1) has basis strides, so its values are coordinates");
  expect_error(fly_layout_right_inverse(&A, I), "right_inverse: (8,6):(1@0,1@1) has basis");
  expect_error(fly_layout_left_inverse(&A, I), "left_inverse:");
  expect_error(fly_layout_logical_product(&A, I, til("2")), "logical_product:");
  expect_error(fly_layout_blocked_product(&A, I, lay("2:1")), "blocked_product:");
  expect_error(fly_layout_raked_product(&A, lay("2:1"), I), "raked_product:");
  expect_error(fly_layout_recast(&A, I, 16, 32), "recast:");
  expect_false_error(fly_layout_max_common_vector(&A, I, lay("8:1"), &n), "max_common_vector:");
  expect_error(fly_layout_max_common_layout(&A, lay("8:1"), I), "max_common_layout:");
  expect_error(fly_layout_logical_divide(&A, lay("(8,6):(1,8)"), til("2:1@0")),
               "logical_divide: 2:1@0 has basis strides");
}

static void test_tuple_arith(void **state) {
  (void)state;
  static const struct {
    FlyArith op;
    const char *a, *b, *want;
  } cases[] = {
      {FLY_ARITH_ADD, "(1,2)", "(3,4)", "(4,6)"},
      {FLY_ARITH_SUB, "(1,2)", "(3,4)", "(-2,-2)"},
      {FLY_ARITH_MUL, "(2,(3,4))", "(4,(5,6))", "(8,(15,24))"},
      {FLY_ARITH_DIV, "(8,15)", "(2,3)", "(4,5)"},
      {FLY_ARITH_DIV, "(-7,7)", "2", "(-3,3)"},
      {FLY_ARITH_MOD, "(8,15)", "(3,4)", "(2,3)"},
      {FLY_ARITH_MUL, "(1,(2,3))", "2", "(2,(4,6))"},
      {FLY_ARITH_SUB, "10", "(1,(2,3))", "(9,(8,7))"},
      {FLY_ARITH_ADD, "(1,2)", "(3)", "(4,2)"},
      {FLY_ARITH_ADD, "(1,(2,3))", "(3,(4,5))", "(4,(6,8))"},
      {FLY_ARITH_SUB, "()", "(1,2)", "(-1,-2)"},
      {FLY_ARITH_ADD, "1@0", "2@1", "(1,2)"},
      {FLY_ARITH_ADD, "(1,(2))", "1@0@1", "(1,(3))"},
      {FLY_ARITH_ADD, "(5,(1,2))", "1@1@1", "(5,(1,3))"},
      {FLY_ARITH_SUB, "1@0", "1@0", "(0)"},
      {FLY_ARITH_MUL, "3", "1@1", "3@1"},
      {FLY_ARITH_MUL, "1@0@1", "-2", "-2@0@1"},
      {FLY_ARITH_MUL, "(1@0,1@1)", "4", "(4@0,4@1)"},
      {FLY_ARITH_ADD, "7", "8", "15"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    FlyTuple *r = fly_tuple_arith(&A, cases[i].op, tup(cases[i].a), tup(cases[i].b));
    if (!tuple_is(r, cases[i].want))
      fail_msg("case %zu: %s op %s", i, cases[i].a, cases[i].b);
  }
  expect_error(fly_tuple_arith(&A, FLY_ARITH_MUL, tup("(1,2)"), tup("(1,2,3)")),
               "'*' of (1,2) and (1,2,3): the tuples do not have the same modes");
  expect_error(fly_tuple_arith(&A, FLY_ARITH_ADD, tup("(1,1)"), tup("(1,(2))")),
               "a number where the other has a tuple");
  /* As in CuTe, (1,1) + (0,(1)) has no sum: mode 1 is a number and a tuple. */
  expect_error(fly_tuple_arith(&A, FLY_ARITH_ADD, tup("(1,1)"), tup("1@0@1")),
               "'+' of 1 and (1): a number where the other has a tuple");
  expect_error(fly_tuple_arith(&A, FLY_ARITH_DIV, tup("(1,2)"), tup("(1,0)")),
               "division by zero (2 / 0)");
  expect_error(fly_tuple_arith(&A, FLY_ARITH_MUL, tup("1@0"), tup("1@1")),
               "a basis element is scaled by an integer (* or /) or added");
  expect_tuple(fly_tuple_arith(&A, FLY_ARITH_DIV, tup("(2@0,8@1)"), tup("(2,4)")), "(1@0,2@1)");
  expect_error(fly_tuple_arith(&A, FLY_ARITH_DIV, tup("3@0"), tup("2")),
               "'/' of 3@0 and 2: the scale is not a multiple of 2 (CuTe's safe_div)");
  expect_error(fly_tuple_arith(&A, FLY_ARITH_DIV, tup("2"), tup("1@0")), "'/' of 2 and 1@0");
  expect_error(fly_tuple_arith(&A, FLY_ARITH_MOD, tup("4@0"), tup("2")), "'%' of 4@0 and 2");
  expect_error(fly_tuple_arith(&A, FLY_ARITH_ADD, tup("(1,_)"), tup("1")), "takes integers");
  expect_error(fly_tuple_arith(&A, FLY_ARITH_ADD, tup("9223372036854775807"), tup("1")),
               "integer overflow");
  expect_error(fly_tuple_arith(&A, FLY_ARITH_DIV, tup("-9223372036854775808"), tup("-1")),
               "integer overflow");

  expect_tuple(fly_tuple_basis_like(&A, tup("(4,(2,3))")), "(1@0,(1@0@1,1@1@1))");
  expect_tuple(fly_tuple_basis_like(&A, tup("7")), "1");
  expect_tuple(fly_tuple_as_coord(&A, tup("3@1")), "(0,3)");
  expect_tuple(fly_tuple_as_coord(&A, tup("(1@0,2,1@0@1)")), "((1),2,(0,(1)))");
}

static void test_tuple_divisions_and_comparisons(void **state) {
  (void)state;
  expect_tuple(fly_tuple_ceil_div_tuple(&A, tup("(4,6)"), tup("3")), "(2,6)");
  expect_tuple(fly_tuple_ceil_div_tuple(&A, tup("(4,6)"), tup("(3,4)")), "(2,2)");
  expect_tuple(fly_tuple_ceil_div_tuple(&A, tup("(4,6)"), tup("(3)")), "(2,6)");
  expect_tuple(fly_tuple_ceil_div_tuple(&A, tup("((4,5),6)"), tup("(3,4)")), "((2,5),2)");
  expect_tuple(fly_tuple_ceil_div_tuple(&A, tup("10"), tup("(2,3)")), "2");
  expect_tuple(fly_tuple_ceil_div_tuple(&A, tup("-7"), tup("2")), "-3");
  expect_error(fly_tuple_ceil_div_tuple(&A, tup("(2)"), tup("(1,2)")),
               "the divisor has more modes");
  expect_error(fly_tuple_ceil_div_tuple(&A, tup("(2,3)"), tup("(1,0)")), "must be positive");
  expect_error(fly_tuple_ceil_div_tuple(&A, tup("(2,3)"), tup("1@0")), "ceil_div takes integers");

  /* CuTe's documented example, then tuple by tuple. */
  expect_tuple(fly_tuple_shape_div(&A, tup("(4,5,6)"), tup("40")), "(1,1,3)");
  expect_tuple(fly_tuple_shape_div(&A, tup("(4,6)"), tup("(2,3)")), "(2,2)");
  expect_tuple(fly_tuple_shape_div(&A, tup("(4,(2,3))"), tup("8")), "(1,(1,3))");
  expect_tuple(fly_tuple_shape_div(&A, tup("6"), tup("(2,3)")), "1");
  expect_tuple(fly_tuple_shape_div(&A, tup("2"), tup("6")), "1");
  expect_error(fly_tuple_shape_div(&A, tup("(4,6)"), tup("(3,3)")),
               "shape_div: 4 and 3 do not divide each other (the divisibility condition)");
  expect_error(fly_tuple_shape_div(&A, tup("(4,6)"), tup("(2,3,1)")),
               "the tuples do not have the same modes");
  expect_error(fly_tuple_shape_div(&A, tup("4"), tup("0")), "shapes are positive");

  bool less = false;
  static const struct {
    const char *a, *b;
    bool want;
  } lt[] = {
      {"(1,2)", "(2,3)", true},
      {"(1,3)", "(2,3)", false},
      {"(1)", "(2,3)", true},
      {"(1,2,3)", "(2,3)", false},
      {"(1,(2,3))", "(2,(3,4))", true},
      {"(1,(2,4))", "(2,(3,4))", false},
      {"3", "4", true},
      {"()", "(1,2)", true},
      {"-1", "0", true},
  };
  for (size_t i = 0; i < sizeof lt / sizeof lt[0]; i++) {
    if (!fly_tuple_elem_less(&A, tup(lt[i].a), tup(lt[i].b), &less))
      fail_msg("elem_less(%s, %s): %s", lt[i].a, lt[i].b, fly_algebra_message(&A));
    if (less != lt[i].want)
      fail_msg("elem_less(%s, %s) is %d", lt[i].a, lt[i].b, less);
  }
  expect_false_error(fly_tuple_elem_less(&A, tup("1"), tup("(2,3)"), &less),
                     "elem_less: 1 and (2,3) do not match");

  expect_tuple(fly_tuple_product_each(&A, tup("(4,(2,3),())")), "(4,6,1)");
  expect_tuple(fly_tuple_product_each(&A, tup("5")), "5");
  expect_tuple(fly_tuple_take(&A, tup("(1,2,3)"), 1, 3), "(2,3)");
  expect_tuple(fly_tuple_take(&A, tup("(1,(2,3))"), 1, 2), "((2,3))");
  expect_tuple(fly_tuple_take(&A, tup("4"), 0, 1), "(4)");
  expect_error(fly_tuple_take(&A, tup("(1,2,3)"), 2, 2), "take(2, 2) is not a non-empty range");
  expect_error(fly_tuple_take(&A, tup("(1,2,3)"), 1, 4), "of the 3 modes of (1,2,3)");
}

/* ---- compact layouts after others ------------------------------------------------ */

static void test_layout_and_fragment_like(void **state) {
  (void)state;
  /* CuTe's make_layout_like examples (layout.hpp). */
  expect_layout(fly_layout_like(&A, lay("(2,2,2,2):(0,2,4,1)")), "(2,2,2,2):(0,2,4,1)");
  expect_layout(fly_layout_like(&A, lay("(2,3,4,5):(0,42,1,0)")), "(2,3,4,5):(0,4,1,0)");
  expect_layout(fly_layout_like(&A, lay("(4,(2,3)):(100,(-1,7))")), "(4,(2,3)):(6,(1,2))");
  /* Equal strides: left to right. */
  expect_layout(fly_layout_like(&A, lay("(2,3):(5,5)")), "(2,3):(1,2)");
  expect_error(fly_layout_like(&A, lay("(4,3):(1@0,1@1)")), "make_layout_like: (4,3):(1@0,1@1)");

  /* make_fragment_like: mode 0 column-major, the rest in stride order. */
  expect_layout(fly_layout_fragment_like(&A, lay("((2,2),4,8):((1,64),8,256)")),
                "((2,2),4,8):((1,2),4,16)");
  expect_layout(fly_layout_fragment_like(&A, lay("((2,2),4,8):((64,1),256,8)")),
                "((2,2),4,8):((1,2),32,4)");
  expect_layout(fly_layout_fragment_like(&A, lay("((2,2),3):((0,1),8)")), "((2,2),3):((0,1),2)");
  expect_layout(fly_layout_fragment_like(&A, lay("(4,2,2):(1,0,4)")), "(4,2,2):(1,4,8)");
  expect_layout(fly_layout_fragment_like(&A, lay("(8,16):(16,1)")), "(8,16):(1,8)");
  expect_layout(fly_layout_fragment_like(&A, lay("(8,(2,2)):(16,(1,8))")), "(8,(2,2)):(1,(8,16))");
  expect_layout(fly_layout_fragment_like(&A, lay("(4,2):(2,1)")), "(4,2):(1,4)");
  expect_layout(fly_layout_fragment_like(&A, lay("(4,2):(0,0)")), "(4,2):(0,1)");
  expect_layout(fly_layout_fragment_like(&A, lay("8:4")), "8:1");
  expect_error(fly_layout_fragment_like(&A, lay("(4,3):(1@0,1@1)")), "make_fragment_like:");
}

static void test_tile_to_shape_and_take(void **state) {
  (void)state;
  FlyLayout *atom = lay("(8,8):(8,1)");
  expect_layout(fly_layout_tile_to_shape(&A, atom, tup("(32,16)"), NULL),
                "((8,4),(8,2)):((8,64),(1,256))");
  expect_layout(fly_layout_tile_to_shape(&A, atom, tup("(32,16)"), tup("(1,0)")),
                "((8,4),(8,2)):((8,128),(1,64))");
  expect_layout(fly_layout_tile_to_shape(&A, lay("4:1"), tup("(8,3)"), NULL),
                "((4,2),(1,3)):((1,4),(0,8))");
  expect_layout(fly_layout_tile_to_shape(&A, atom, tup("((4,8),16)"), NULL),
                "((8,4),(8,2)):((8,64),(1,256))");
  expect_error(fly_layout_tile_to_shape(&A, atom, tup("(20,16)"), NULL),
               "tile_to_shape: the block's shape (8,8) does not divide the target shape (20,16)");
  expect_error(fly_layout_tile_to_shape(&A, lay("(2,2,2):(1,2,4)"), tup("(4,4)"), NULL),
               "the block has 3 modes but the target shape only 2");

  FlyLayout *L = lay("(4,(2,3),5):(1,(4,8),24)");
  expect_layout(fly_layout_take(&A, L, 1, 3), "((2,3),5):((4,8),24)");
  assert_int_equal(fly_layout_rank(fly_layout_take(&A, L, 1, 2)), 1);
  expect_layout(fly_layout_take(&A, L, 0, 3), "(4,(2,3),5):(1,(4,8),24)");
  expect_error(fly_layout_take(&A, L, 2, 2), "take(2, 2) is not a non-empty range");
  expect_error(fly_layout_take(&A, L, 0, 4), "of modes of a rank-3 layout");
}

static void test_coordinates_of_indices(void **state) {
  (void)state;
  FlyLayout *L = lay("(4,(2,3)):(6,(1,2))");
  expect_tuple(fly_layout_hier_coord(&A, L, 13), "(2,(1,0))");
  expect_tuple(fly_layout_flat_coord(&A, L, 13), "(2,1)");
  int64_t v = -1;
  assert_true(fly_layout_1d_coord(&A, L, 13, &v));
  assert_int_equal(v, 6);
  expect_tuple(fly_layout_flat_coord(&A, lay("8:2"), 6), "3");
  expect_tuple(fly_layout_hier_coord(&A, lay("(4,1,2):(2,0,1)"), 7), "(3,0,1)");
  expect_error(fly_layout_hier_coord(&A, lay("(4,3):(1,8)"), 13),
               "(4,3):(1,8) does not give the index 13");
  expect_error(fly_layout_hier_coord(&A, lay("(4,3):(1,0)"), 1),
               "the stride 0 of a mode of size 3");
  expect_error(fly_layout_hier_coord(&A, lay("8:1"), -1), "index -1 is negative");
  expect_error(fly_layout_flat_coord(&A, lay("(4,3):(1@0,1@1)"), 1), "get_hier_coord:");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      TEST(test_tuple_rank_and_depth),
      TEST(test_tuple_get),
      TEST(test_tuple_product),
      TEST(test_tuple_flatten_and_unwrap),
      TEST(test_tuple_equal_congruent_underscore),
      TEST(test_tuple_prefix_and_suffix_products),
      TEST(test_tuple_ceil_div),
      TEST(test_tuple_idx2crd),
      TEST(test_layout_make_validates),
      TEST(test_layout_size_cosize_rank_depth),
      TEST(test_layout_equal),
      TEST(test_layout_get_and_select),
      TEST(test_layout_group),
      TEST(test_layout_append_prepend_pad),
      TEST(test_layout_zip_and_flatten),
      TEST(test_crd2idx_integer_hierarchical_and_partial),
      TEST(test_crd2idx_errors),
      TEST(test_eval_continues_past_the_size),
      TEST(test_slice_with_offsets),
      TEST(test_dice),
      TEST(test_col_row_major_and_ordered),
      TEST(test_overflow_is_detected),
      TEST(test_basis_text_and_equality),
      TEST(test_basis_layouts_are_validated),
      TEST(test_basis_values),
      TEST(test_basis_slice_and_modes),
      TEST(test_basis_algebra),
      TEST(test_tuple_arith),
      TEST(test_tuple_divisions_and_comparisons),
      TEST(test_layout_and_fragment_like),
      TEST(test_tile_to_shape_and_take),
      TEST(test_coordinates_of_indices),
  };
  return cmocka_run_group_tests_name("tuple_layout", tests, NULL, NULL);
}
