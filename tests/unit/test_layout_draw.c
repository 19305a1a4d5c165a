/* test_layout_draw.c — pictures of layouts (fly_layout_draw.h) and the
 * thread-value layouts of tiled copies (fly_layout_tv.h).
 *
 * The text tables are compared character for character with what CuTe's
 * print_layout prints (include/cute/util/print_tensor.hpp); the TV layouts
 * with CuTe's make_tiled_copy, worked out by hand, and on random compact
 * thread and value layouts by their defining property: every cell of the
 * tile has exactly one owner, and layout_mn sends it back to t + T*v. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "fly_test_session.h"
#include "fly_layout_draw.h"

static FlyTvLayout *tv_of(const char *thr, const char *val) {
  FlyTvLayout *T = fly_tv_layout_make(&A, lay(thr), lay(val));
  if (!T)
    fail_msg("tv_layout_make(%s, %s): %s", thr, val, fly_algebra_message(&A));
  return T;
}

/* A TV layout given directly, for shapes make_tiled_copy never builds. */
static FlyTvLayout *tv_raw(const char *tv, const char *tile) {
  FlyTvLayout *T = fly_alloc(&A, sizeof *T);
  assert_non_null(T);
  T->tv = lay(tv);
  T->tile = tup(tile);
  return T;
}

static int count(const char *text, const char *part) {
  int n = 0;
  size_t len = strlen(part);
  for (const char *p = text ? strstr(text, part) : NULL; p; p = strstr(p + len, part))
    n++;
  return n;
}

#define expect_text(got, want) assert_true(text_is(got, want))

/* ---- text tables ---------------------------------------------------------- */

static void test_table_rank2(void **state) {
  (void)state;
  expect_text(fly_layout_table(&A, lay("(4,2):(1,4)")), "(4,2):(1,4)\n"
                                                        "      0   1 \n"
                                                        "    +---+---+\n"
                                                        " 0  | 0 | 4 |\n"
                                                        "    +---+---+\n"
                                                        " 1  | 1 | 5 |\n"
                                                        "    +---+---+\n"
                                                        " 2  | 2 | 6 |\n"
                                                        "    +---+---+\n"
                                                        " 3  | 3 | 7 |\n"
                                                        "    +---+---+\n");
  /* Row-major, and wider cells: the cosize 12 has two digits. */
  expect_text(fly_layout_table(&A, lay("(2,6):(6,1)")), "(2,6):(6,1)\n"
                                                        "       0    1    2    3    4    5 \n"
                                                        "    +----+----+----+----+----+----+\n"
                                                        " 0  |  0 |  1 |  2 |  3 |  4 |  5 |\n"
                                                        "    +----+----+----+----+----+----+\n"
                                                        " 1  |  6 |  7 |  8 |  9 | 10 | 11 |\n"
                                                        "    +----+----+----+----+----+----+\n");
}

static void test_table_width_follows_cosize(void **state) {
  (void)state;
  /* CuTe: num_digits(cosize), so a largest index of 9 gets two digits. */
  expect_text(fly_layout_table(&A, lay("(2,5):(1,2)")), "(2,5):(1,2)\n"
                                                        "       0    1    2    3    4 \n"
                                                        "    +----+----+----+----+----+\n"
                                                        " 0  |  0 |  2 |  4 |  6 |  8 |\n"
                                                        "    +----+----+----+----+----+\n"
                                                        " 1  |  1 |  3 |  5 |  7 |  9 |\n"
                                                        "    +----+----+----+----+----+\n");
  /* Broadcast: every cell reads 0. */
  expect_text(fly_layout_table(&A, lay("(2,2):(0,0)")), "(2,2):(0,0)\n"
                                                        "      0   1 \n"
                                                        "    +---+---+\n"
                                                        " 0  | 0 | 0 |\n"
                                                        "    +---+---+\n"
                                                        " 1  | 0 | 0 |\n"
                                                        "    +---+---+\n");
  /* Negative indices widen the cells so the grid stays aligned. */
  expect_text(fly_layout_table(&A, lay("(2,2):(-1,4)")), "(2,2):(-1,4)\n"
                                                         "       0    1 \n"
                                                         "    +----+----+\n"
                                                         " 0  |  0 |  4 |\n"
                                                         "    +----+----+\n"
                                                         " 1  | -1 |  3 |\n"
                                                         "    +----+----+\n");
}

static void test_table_rank1_is_one_column(void **state) {
  (void)state;
  expect_text(fly_layout_table(&A, lay("3:2")), "3:2\n"
                                                "      0 \n"
                                                "    +---+\n"
                                                " 0  | 0 |\n"
                                                "    +---+\n"
                                                " 1  | 2 |\n"
                                                "    +---+\n"
                                                " 2  | 4 |\n"
                                                "    +---+\n");
  /* A rank-1 layout with a hierarchical mode: still one column, by 1-D index. */
  expect_text(fly_layout_table(&A, lay("((2,2)):((2,1))")), "(2,2):(2,1)\n"
                                                            "      0 \n"
                                                            "    +---+\n"
                                                            " 0  | 0 |\n"
                                                            "    +---+\n"
                                                            " 1  | 2 |\n"
                                                            "    +---+\n"
                                                            " 2  | 1 |\n"
                                                            "    +---+\n"
                                                            " 3  | 3 |\n"
                                                            "    +---+\n");
}

static void test_table_hierarchical_modes(void **state) {
  (void)state;
  /* Row m = (m0,m1) and column n = (n0,n1), colexicographic in each mode. */
  expect_text(fly_layout_table(&A, lay("((2,2),(2,2)):((1,8),(2,4))")),
              "((2,2),(2,2)):((1,8),(2,4))\n"
              "       0    1    2    3 \n"
              "    +----+----+----+----+\n"
              " 0  |  0 |  2 |  4 |  6 |\n"
              "    +----+----+----+----+\n"
              " 1  |  1 |  3 |  5 |  7 |\n"
              "    +----+----+----+----+\n"
              " 2  |  8 | 10 | 12 | 14 |\n"
              "    +----+----+----+----+\n"
              " 3  |  9 | 11 | 13 | 15 |\n"
              "    +----+----+----+----+\n");
}

static void test_table_swizzled(void **state) {
  (void)state;
  /* S<1,0,1> flips bit 0 where bit 1 is set. */
  expect_text(fly_composed_table(&A, comp("S<1,0,1> o 0 o (4,2):(2,1)")),
              "S<1,0,1> o 0 o (4,2):(2,1)\n"
              "      0   1 \n"
              "    +---+---+\n"
              " 0  | 0 | 1 |\n"
              "    +---+---+\n"
              " 1  | 3 | 2 |\n"
              "    +---+---+\n"
              " 2  | 4 | 5 |\n"
              "    +---+---+\n"
              " 3  | 7 | 6 |\n"
              "    +---+---+\n");
  /* The offset is added before the swizzle: 2 + (0,1,2,3) -> 3,2,4,5. */
  expect_text(fly_composed_table(&A, comp("S<1,0,1> o 2 o 4:1")), "S<1,0,1> o 2 o 4:1\n"
                                                                  "      0 \n"
                                                                  "    +---+\n"
                                                                  " 0  | 3 |\n"
                                                                  "    +---+\n"
                                                                  " 1  | 2 |\n"
                                                                  "    +---+\n"
                                                                  " 2  | 4 |\n"
                                                                  "    +---+\n"
                                                                  " 3  | 5 |\n"
                                                                  "    +---+\n");
  /* Every cell agrees with fly_composed_crd2idx. */
  FlyComposed *C = comp("S<3,3,3> o 0 o (8,64):(64,1)");
  char *table = fly_composed_table(&A, C);
  assert_non_null(table);
  for (int m = 0; m < 8; m++) {
    int64_t v;
    char coord[32], cell[32];
    snprintf(coord, sizeof coord, "(%d,9)", m);
    assert_true(fly_composed_crd2idx(&A, tup(coord), C, &v));
    snprintf(cell, sizeof cell, "| %3lld ", (long long)v);
    assert_int_equal(count(table, cell), 1);
  }
}

/* Layouts of basis strides show the coordinates they give. */
static void test_table_of_coordinates(void **state) {
  (void)state;
  expect_text(fly_layout_table(&A, lay("(2,3):(1@0,1@1)")), "(2,3):(1@0,1@1)\n"
                                                            "          0       1       2 \n"
                                                            "    +-------+-------+-------+\n"
                                                            " 0  | (0,0) | (0,1) | (0,2) |\n"
                                                            "    +-------+-------+-------+\n"
                                                            " 1  | (1,0) | (1,1) | (1,2) |\n"
                                                            "    +-------+-------+-------+\n");
  /* A layout inside a composed layout: (8,8):(8,1) at (2,0) + (m,n). */
  char *table = fly_composed_table(&A, comp("(8,8):(8,1) o (2,0) o (2,2):(1@0,1@1)"));
  assert_non_null(table);
  assert_int_equal(count(table, "| 16 | 17 |"), 1);
  assert_int_equal(count(table, "| 24 | 25 |"), 1);
}

static void test_table_errors(void **state) {
  (void)state;
  expect_error(fly_layout_table(&A, lay("(2,2,2):(1,2,4)")),
               "a table needs a layout of rank 1 or 2; this one has rank 3");
  expect_error(fly_layout_svg(&A, lay("(2,2,2):(1,2,4)")),
               "a picture needs a layout of rank 1 or 2; this one has rank 3");
  expect_error(fly_composed_table(&A, comp("S<1,0,1> o 0 o (2,2,2):(1,2,4)")), "rank 3");
  expect_error(fly_layout_table(&A, lay("(256,257):(1,256)")),
               "too many cells to draw: 256 x 257 (limit is 65536)");
  expect_error(fly_layout_svg(&A, lay("1000000:1")),
               "too many cells to draw: 1000000 x 1 (limit is 65536)");
  /* A picture at the limit is fine. */
  assert_non_null(fly_layout_table(&A, lay("(256,256):(256,1)")));
  /* NULL in, NULL out, and no error of its own. */
  assert_null(fly_layout_table(&A, NULL));
  assert_null(fly_composed_svg(&A, NULL));
  assert_null(fly_tv_layout_table(&A, NULL));
  assert_null(fly_tv_layout_make(&A, NULL, lay("2:1")));
  assert_false(fly_algebra_failed(&A));
}

/* ---- TV layouts ------------------------------------------------------------ */

static void test_tv_make_known_cases(void **state) {
  (void)state;
  static const struct {
    const char *thr, *val, *tv, *tile;
  } cases[] = {
      /* Each thread copies two neighbours along n: T0 owns (0,0) and (0,1). */
      {"(2,2):(1,2)", "(1,2):(0,1)", "((2,2),2):((1,4),2)", "(2,4)"},
      {"(2,2):(2,1)", "(1,2):(0,1)", "((2,2),2):((4,1),2)", "(2,4)"},
      /* CuTe's 128-bit copy: 32x8 threads, row-major, 8 values along n. */
      {"(32,8):(8,1)", "(1,8):(0,1)", "((8,32),8):((256,1),32)", "(32,64)"},
      {"(2,3):(3,1)", "(2,2):(1,2)", "((3,2),(2,2)):((8,2),(1,4))", "(4,6)"},
      /* Rank 1 stays rank 1, as in CuTe: one column of 8. */
      {"4:1", "2:1", "(4,2):(2,1)", "(8)"},
      /* Ranks differ: val is padded with 1:0. */
      {"(2,2):(1,2)", "2:1", "(4,2):(2,1)", "(4,2)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    FlyTvLayout *T = tv_of(cases[i].thr, cases[i].val);
    char *tv = fly_layout_str(&A, T->tv), *tile = fly_tuple_str(&A, T->tile);
    if (strcmp(tv, cases[i].tv) != 0 || strcmp(tile, cases[i].tile) != 0)
      fail_msg("make_tiled_copy(%s, %s): want %s on %s, got %s on %s", cases[i].thr, cases[i].val,
               cases[i].tv, cases[i].tile, tv, tile);
  }
}

static void test_tv_table(void **state) {
  (void)state;
  expect_text(fly_tv_layout_table(&A, tv_of("(2,2):(1,2)", "(1,2):(0,1)")),
              "((2,2),2):((1,4),2) on tile (2,4)\n"
              "         0      1      2      3 \n"
              "    +------+------+------+------+\n"
              " 0  | T0V0 | T0V1 | T2V0 | T2V1 |\n"
              "    +------+------+------+------+\n"
              " 1  | T1V0 | T1V1 | T3V0 | T3V1 |\n"
              "    +------+------+------+------+\n");
  expect_text(fly_tv_layout_table(&A, tv_of("4:1", "2:1")), "(4,2):(2,1) on tile (8)\n"
                                                            "         0 \n"
                                                            "    +------+\n"
                                                            " 0  | T0V0 |\n"
                                                            "    +------+\n"
                                                            " 1  | T0V1 |\n"
                                                            "    +------+\n"
                                                            " 2  | T1V0 |\n"
                                                            "    +------+\n"
                                                            " 3  | T1V1 |\n"
                                                            "    +------+\n"
                                                            " 4  | T2V0 |\n"
                                                            "    +------+\n"
                                                            " 5  | T2V1 |\n"
                                                            "    +------+\n"
                                                            " 6  | T3V0 |\n"
                                                            "    +------+\n"
                                                            " 7  | T3V1 |\n"
                                                            "    +------+\n");
}

static void test_tv_broadcast_and_empty_cells(void **state) {
  (void)state;
  /* Threads 0 and 1 share their cells (stride 0): the first owner, T0, is
   * shown. Nobody owns row 1 or column 2. */
  FlyTvLayout *T = tv_raw("(2,2):(0,3)", "(3,3)");
  expect_text(fly_tv_layout_table(&A, T), "(2,2):(0,3) on tile (3,3)\n"
                                          "         0      1      2 \n"
                                          "    +------+------+------+\n"
                                          " 0  | T0V0 | T0V1 |      |\n"
                                          "    +------+------+------+\n"
                                          " 1  |      |      |      |\n"
                                          "    +------+------+------+\n"
                                          " 2  |      |      |      |\n"
                                          "    +------+------+------+\n");
  char *svg = fly_tv_layout_svg(&A, T);
  assert_int_equal(count(svg, "<rect class=\"cell\""), 9);
  assert_int_equal(count(svg, "></text>"), 7); /* the empty cells' labels */
  assert_int_equal(count(svg, ">T1V"), 0);
  /* A rank-1 TV layout has one value per thread; a leaf tile is one column. */
  T = tv_raw("3:1", "3");
  expect_text(fly_tv_layout_table(&A, T), "3:1 on tile 3\n"
                                          "         0 \n"
                                          "    +------+\n"
                                          " 0  | T0V0 |\n"
                                          "    +------+\n"
                                          " 1  | T1V0 |\n"
                                          "    +------+\n"
                                          " 2  | T2V0 |\n"
                                          "    +------+\n");
}

static void test_tv_errors(void **state) {
  (void)state;
  FlyTvLayout *T = tv_raw("(2,2):(1,2)", "(2,1,2)");
  expect_error(fly_tv_layout_table(&A, T),
               "a TV table needs a tile of rank 1 or 2; this one has rank 3");
  T->tile = tup("(2,2)");
  T->tv = lay("(2,2,1):(1,2,0)");
  expect_error(fly_tv_layout_svg(&A, T),
               "a picture needs a (thread, value) layout of rank 1 or 2; this one has rank 3");
  T->tv = lay("(2,2):(1,3)");
  expect_error(fly_tv_layout_table(&A, T),
               "thread 1 value 1 owns index 4, outside the tile of 2 x 2 cells");
  T->tv = lay("(2,2):(-1,1)");
  expect_error(fly_tv_layout_table(&A, T), "owns index -1");
  T->tv = lay("(2048,1024):(0,0)");
  expect_error(fly_tv_layout_table(&A, T),
               "too many (thread, value) pairs to draw: 2048 x 1024 (limit is 1048576)");
  T->tile = tup("(0,2)");
  expect_error(fly_tv_layout_table(&A, T),
               "a TV table needs a tile of positive sizes; this one is 0 x 2");
  T->tile = tup("(2,_)");
  expect_error(fly_tv_layout_table(&A, T), "'_' has no size");
  T->tile = tup("(512,512)");
  expect_error(fly_tv_layout_table(&A, T), "too many cells to draw: 512 x 512");
  /* The algebra's own errors come through make: a thread layout that is
   * not injective has no complement. */
  expect_error(fly_tv_layout_make(&A, lay("(2,2):(1,1)"), lay("2:1")), "complement");
}

/* ---- SVG ------------------------------------------------------------------- */

static void test_svg_layout(void **state) {
  (void)state;
  char *svg = fly_layout_svg(&A, lay("(4,2):(1,4)"));
  assert_non_null(svg);
  assert_int_equal(strncmp(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"", 47), 0);
  assert_int_equal(count(svg, " viewBox=\"0 0 "), 1);
  assert_int_equal(count(svg, "<title>(4,2):(1,4)</title>"), 1);
  assert_int_equal(count(svg, "<rect class=\"cell\""), 8);
  assert_int_equal(count(svg, "<text class=\"label\""), 8);
  assert_int_equal(count(svg, "<text class=\"index\""), 4 + 2);
  /* Cell (1,1) holds 5 and is coloured by 5 % 8; each label follows its rect. */
  assert_int_equal(count(svg, "data-m=\"1\" data-n=\"1\""), 1);
  const char *rect = strstr(svg, "data-m=\"1\" data-n=\"1\"");
  const char *label = strstr(rect, "<text class=\"label\"");
  assert_non_null(label);
  assert_true(label < strstr(rect + 1, "<rect"));
  assert_int_equal(strncmp(strchr(label, '>'), ">5</text>", 9), 0);
  assert_int_equal(count(svg, "fill=\"#bfbfbf\""), 1);
  assert_int_equal(count(svg, "</svg>\n"), 1);
}

static void test_svg_escapes_and_swizzles(void **state) {
  (void)state;
  char *svg = fly_composed_svg(&A, comp("S<3,0,3> o 0 o (8,8):(8,1)"));
  assert_non_null(svg);
  assert_int_equal(count(svg, "<title>S&lt;3,0,3&gt; o 0 o (8,8):(8,1)</title>"), 1);
  assert_int_equal(count(svg, "S<"), 0);
  assert_int_equal(count(svg, "<rect class=\"cell\""), 64);
  /* S<3,0,3> xors bits 3-5 into bits 0-2: cell (1,0), index 8, shows 9. */
  const char *rect = strstr(svg, "data-m=\"1\" data-n=\"0\"");
  assert_non_null(rect);
  assert_int_equal(strncmp(strchr(strstr(rect, "<text"), '>'), ">9</text>", 9), 0);
}

static void test_svg_tv(void **state) {
  (void)state;
  char *svg = fly_tv_layout_svg(&A, tv_of("(2,4):(4,1)", "(2,2):(1,2)"));
  assert_non_null(svg);
  assert_int_equal(count(svg, "<title>((4,2),(2,2)):((8,2),(1,4)) on tile (4,8)</title>"), 1);
  assert_int_equal(count(svg, "<rect class=\"cell\""), 32);
  char label[16];
  for (int t = 0; t < 8; t++)
    for (int v = 0; v < 4; v++) {
      snprintf(label, sizeof label, ">T%dV%d</text>", t, v);
      assert_int_equal(count(svg, label), 1);
    }
  /* Coloured by thread: CuTe's SVGColor_TV, 4 cells per thread. */
  assert_int_equal(count(svg, "fill=\"#afafff\""), 4);
  assert_int_equal(count(svg, "fill=\"#ffd2d2\""), 4);
}

/* ---- random compact thread and value layouts -------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static int rnd(int n) {
  rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
  return (int)((rng_state >> 33) % (uint64_t)n);
}

/* A random shape of rank 1 or 2, each mode a leaf or a pair of 1..4, made
 * compact in a random order of its leaves. */
static FlyLayout *random_compact(void) {
  FlyTuple *shape[2], *order[2], *sub[2], *osub[2];
  int rank = 1 + rnd(2), leaves = 0, perm[4] = {0, 1, 2, 3};
  for (int i = 3; i > 0; i--) {
    int j = rnd(i + 1), x = perm[i];
    perm[i] = perm[j];
    perm[j] = x;
  }
  for (int i = 0; i < rank; i++) {
    int parts = 1 + rnd(2);
    for (int k = 0; k < parts; k++) {
      sub[k] = fly_tuple_int(&A, 1 + rnd(4));
      osub[k] = fly_tuple_int(&A, perm[leaves++]);
    }
    shape[i] = parts == 1 ? sub[0] : fly_tuple_seq(&A, parts, sub);
    order[i] = parts == 1 ? osub[0] : fly_tuple_seq(&A, parts, osub);
  }
  FlyTuple *s = rank == 1 ? shape[0] : fly_tuple_seq(&A, 2, shape);
  FlyTuple *o = rank == 1 ? order[0] : fly_tuple_seq(&A, 2, order);
  FlyLayout *L = fly_layout_ordered(&A, s, o);
  if (!L)
    fail_msg("ordered layout: %s", fly_algebra_message(&A));
  return L;
}

static int64_t size_of(const FlyLayout *L) {
  int64_t n = -1;
  if (!fly_layout_size(&A, L, &n))
    fail_msg("size: %s", fly_algebra_message(&A));
  return n;
}

/* Every (t,v) owns a distinct cell of the tile, so all cells are covered,
 * and raked_product(thr, val) sends that cell back to t + T*v. */
static void check_tv_invariants(const FlyLayout *thr, const FlyLayout *val) {
  char *names = fly_layout_str(&A, thr), *namev = fly_layout_str(&A, val);
  FlyTvLayout *T = fly_tv_layout_make(&A, thr, val);
  if (!T)
    fail_msg("make(%s, %s): %s", names, namev, fly_algebra_message(&A));
  FlyLayout *mn = fly_layout_raked_product(&A, thr, val);
  int64_t threads = size_of(thr), values = size_of(val), cells;
  assert_true(fly_tuple_product(&A, T->tile, &cells));
  assert_int_equal(fly_tuple_rank(T->tile), fly_layout_rank(mn));
  if (cells != threads * values || size_of(T->tv) != cells)
    fail_msg("make(%s, %s): tile %s and tv %s for %lld threads x %lld values", names, namev,
             fly_tuple_str(&A, T->tile), fly_layout_str(&A, T->tv), (long long)threads,
             (long long)values);
  char *seen = test_calloc((size_t)cells, 1);
  for (int64_t t = 0; t < threads; t++)
    for (int64_t v = 0; v < values; v++) {
      int64_t idx, back;
      char coord[48];
      snprintf(coord, sizeof coord, "(%lld,%lld)", (long long)t, (long long)v);
      assert_true(fly_layout_crd2idx(&A, tup(coord), T->tv, &idx));
      if (idx < 0 || idx >= cells || seen[idx])
        fail_msg("make(%s, %s): T%lldV%lld owns %lld (tile of %lld, %s)", names, namev,
                 (long long)t, (long long)v, (long long)idx, (long long)cells,
                 idx >= 0 && idx < cells ? "taken" : "outside");
      seen[idx] = 1;
      assert_true(fly_layout_eval(&A, mn, idx, &back));
      assert_int_equal(back, t + threads * v);
    }
  test_free(seen);
  char *table = fly_tv_layout_table(&A, T);
  if (!table)
    fail_msg("table of make(%s, %s): %s", names, namev, fly_algebra_message(&A));
  assert_int_equal(count(table, "V"), cells); /* one "T{t}V{v}" per cell */
  assert_int_equal(count(fly_tv_layout_svg(&A, T), "<rect class=\"cell\""), cells);
}

static void test_tv_invariants_on_random_layouts(void **state) {
  (void)state;
  for (int i = 0; i < 400; i++) {
    check_tv_invariants(random_compact(), random_compact());
    /* Keep the session small: each check allocates a few KiB. */
    fly_algebra_release(&A);
    fly_algebra_init(&A);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      TEST(test_table_rank2),
      TEST(test_table_width_follows_cosize),
      TEST(test_table_rank1_is_one_column),
      TEST(test_table_hierarchical_modes),
      TEST(test_table_swizzled),
      TEST(test_table_of_coordinates),
      TEST(test_table_errors),
      TEST(test_tv_make_known_cases),
      TEST(test_tv_table),
      TEST(test_tv_broadcast_and_empty_cells),
      TEST(test_tv_errors),
      TEST(test_svg_layout),
      TEST(test_svg_escapes_and_swizzles),
      TEST(test_svg_tv),
      TEST(test_tv_invariants_on_random_layouts),
  };
  return cmocka_run_group_tests_name("layout_draw", tests, NULL, NULL);
}
