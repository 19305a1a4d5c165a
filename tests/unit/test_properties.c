/* test_properties.c — randomized property tests of the layout algebra.
 *
 * Every property is checked on thousands of generated inputs drawn from a
 * deterministic PRNG (splitmix64, one fixed seed per test), index by index
 * over the relevant domain. Generators are biased towards admissible inputs
 * (tiles that divide the layout they are cut from, layouts that have a
 * complement) so that the success path is exercised; each test counts the
 * inputs the operation accepted and asserts a minimum fraction, so none can
 * pass vacuously. A failure prints the test's seed, the iteration and the
 * inputs' text; the iteration alone reproduces it (each iteration reseeds).
 *
 * Layouts are evaluated twice: with fly_layout_eval and with a reference
 * evaluator over the flattened leaves written here, and the two must agree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fly_layout.h"
#include "fly_layout_text.h"
#include "fly_swizzle.h"

/* ---- failure context ------------------------------------------------------ */

static char g_ctx[16384];
static size_t g_ctx_len;

static void ctx_addf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void ctx_addf(const char *fmt, ...) {
  if (g_ctx_len >= sizeof g_ctx - 1)
    return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(g_ctx + g_ctx_len, sizeof g_ctx - g_ctx_len, fmt, ap);
  va_end(ap);
  if (n > 0)
    g_ctx_len += (size_t)n;
  if (g_ctx_len >= sizeof g_ctx)
    g_ctx_len = sizeof g_ctx - 1;
}

static void ctx_begin(const char *test, uint64_t seed, int iteration) {
  g_ctx_len = 0;
  g_ctx[0] = '\0';
  ctx_addf("%s: seed 0x%llx, iteration %d", test, (unsigned long long)seed, iteration);
}

static void ctx_layout(FlyAlgebra *A, const char *name, const FlyLayout *L) {
  char *s = L ? fly_layout_str(A, L) : NULL;
  ctx_addf("\n    %s = %s", name, s ? s : "(null)");
}

static void ctx_tuple(FlyAlgebra *A, const char *name, const FlyTuple *t) {
  char *s = t ? fly_tuple_str(A, t) : NULL;
  ctx_addf("\n    %s = %s", name, s ? s : "(null)");
}

static void ctx_tiler(FlyAlgebra *A, const char *name, const FlyTiler *T) {
  char *s = T ? fly_tiler_str(A, T) : NULL;
  ctx_addf("\n    %s = %s", name, s ? s : "(null)");
}

/* The session of the running iteration, released when a check fails (the
 * failure leaves the test by longjmp). */
static FlyAlgebra *g_live;

static void session_begin(FlyAlgebra *A) {
  fly_algebra_init(A);
  g_live = A;
}

static void session_end(FlyAlgebra *A) {
  fly_algebra_release(A);
  g_live = NULL;
}

static void check_failed(const char *file, int line, const char *expr, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void check_failed(const char *file, int line, const char *expr, const char *fmt, ...) {
  print_error("%s:%d: property violated: %s\n  %s\n  ", file, line, expr, g_ctx);
  va_list ap;
  va_start(ap, fmt);
  vprint_error(fmt, ap);
  va_end(ap);
  print_error("\n");
  if (g_live)
    fly_algebra_release(g_live);
  g_live = NULL;
  _fail(file, line);
}

#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      check_failed(__FILE__, __LINE__, #cond, __VA_ARGS__);                                        \
  } while (0)

/* A result that must exist: the session's message explains a NULL. */
#define CHECK_OK(A, x, what) CHECK((x) != NULL, "%s failed: %s", what, fly_algebra_message(A))

/* ---- PRNG ------------------------------------------------------------------ */

typedef struct Rng {
  uint64_t state;
} Rng;

static uint64_t rng_u64(Rng *r) {
  uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static int64_t rng_range(Rng *r, int64_t lo, int64_t hi) {
  return lo + (int64_t)(rng_u64(r) % (uint64_t)(hi - lo + 1));
}

static bool rng_pct(Rng *r, int percent) { return rng_range(r, 0, 99) < percent; }

static Rng rng_for(uint64_t seed, int iteration) {
  Rng r = {seed ^ ((uint64_t)iteration * 0xd1b54a32d192ed03ULL)};
  rng_u64(&r);
  return r;
}

static void shuffle_pairs(Rng *r, int n, int64_t *a, int64_t *b) {
  for (int i = n - 1; i > 0; i--) {
    int j = (int)rng_range(r, 0, i);
    int64_t t = a[i];
    a[i] = a[j];
    a[j] = t;
    t = b[i];
    b[i] = b[j];
    b[j] = t;
  }
}

/* ---- flat leaves and the reference evaluator ------------------------------ */

enum { MAXLEAF = 512, MAXDEPTH = 3, SAMPLES = 512 };

typedef struct Flat {
  int n;
  int64_t s[MAXLEAF], d[MAXLEAF];
} Flat;

static void flat_push(Flat *f, int64_t s, int64_t d) {
  CHECK(f->n < MAXLEAF, "test limit: more than %d leaves", MAXLEAF);
  f->s[f->n] = s;
  f->d[f->n] = d;
  f->n++;
}

static void flat_collect(const FlyTuple *s, const FlyTuple *d, Flat *f) {
  if (!fly_tuple_is_seq(s)) {
    flat_push(f, s->value, d ? d->value : 0);
    return;
  }
  for (int i = 0; i < s->n; i++)
    flat_collect(s->elem[i], d ? d->elem[i] : NULL, f);
}

static void flat_of(const FlyLayout *L, Flat *f) {
  f->n = 0;
  flat_collect(L->shape, L->stride, f);
}

static void flat_shape(const FlyTuple *s, Flat *f) {
  f->n = 0;
  flat_collect(s, NULL, f);
}

/* Colexicographic over the leaves; the last leaf takes indices past the size. */
static int64_t ref_eval(const Flat *f, int64_t i) {
  int64_t sum = 0;
  for (int k = 0; k < f->n; k++) {
    int64_t c = k == f->n - 1 ? i : i % f->s[k];
    if (k != f->n - 1)
      i /= f->s[k];
    sum += c * f->d[k];
  }
  return sum;
}

static int64_t flat_size(const Flat *f) {
  int64_t p = 1;
  for (int k = 0; k < f->n; k++)
    p *= f->s[k];
  return p;
}

static int64_t tuple_size(const FlyTuple *t) {
  if (!fly_tuple_is_seq(t))
    return t->value;
  int64_t p = 1;
  for (int i = 0; i < t->n; i++)
    p *= tuple_size(t->elem[i]);
  return p;
}

static int64_t size_of(const FlyLayout *L) { return tuple_size(L->shape); }

/* L(i) for i < n, by fly_layout_eval, checked against the reference. */
static int64_t *table(FlyAlgebra *A, const FlyLayout *L, int64_t n) {
  Flat f;
  flat_of(L, &f);
  int64_t *t = fly_alloc(A, (size_t)(n > 0 ? n : 1) * sizeof *t);
  CHECK_OK(A, t, "test allocation");
  for (int64_t i = 0; i < n; i++) {
    int64_t v = 0;
    bool ok = fly_layout_eval(A, L, i, &v);
    CHECK(ok, "eval(%lld) failed: %s", (long long)i, fly_algebra_message(A));
    CHECK(v == ref_eval(&f, i), "eval(%lld) = %lld but the reference gives %lld", (long long)i,
          (long long)v, (long long)ref_eval(&f, i));
    t[i] = v;
  }
  return t;
}

static int64_t eval1(FlyAlgebra *A, const FlyLayout *L, int64_t i) {
  Flat f;
  flat_of(L, &f);
  int64_t v = 0;
  bool ok = fly_layout_eval(A, L, i, &v);
  CHECK(ok && v == ref_eval(&f, i), "eval(%lld) = %lld, the reference gives %lld (%s)",
        (long long)i, (long long)v, (long long)ref_eval(&f, i), fly_algebra_message(A));
  return v;
}

static int cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int64_t *sorted(FlyAlgebra *A, const int64_t *t, int64_t n) {
  int64_t *s = fly_alloc(A, (size_t)(n > 0 ? n : 1) * sizeof *s);
  CHECK_OK(A, s, "test allocation");
  memcpy(s, t, (size_t)n * sizeof *s);
  qsort(s, (size_t)n, sizeof *s, cmp64);
  return s;
}

static bool same_multiset(FlyAlgebra *A, const int64_t *a, int64_t na, const int64_t *b,
                          int64_t nb) {
  if (na != nb)
    return false;
  int64_t *x = sorted(A, a, na), *y = sorted(A, b, nb);
  return memcmp(x, y, (size_t)na * sizeof *x) == 0;
}

/* Sorts and removes duplicates; returns the new count. */
static int64_t unique(FlyAlgebra *A, const int64_t *t, int64_t n, int64_t **out) {
  int64_t *s = sorted(A, t, n), m = 0;
  for (int64_t i = 0; i < n; i++)
    if (m == 0 || s[m - 1] != s[i])
      s[m++] = s[i];
  *out = s;
  return m;
}

static bool same_set(FlyAlgebra *A, const int64_t *a, int64_t na, const int64_t *b, int64_t nb) {
  int64_t *x, *y;
  int64_t mx = unique(A, a, na, &x), my = unique(A, b, nb, &y);
  return mx == my && memcmp(x, y, (size_t)mx * sizeof *x) == 0;
}

static bool injective(FlyAlgebra *A, const int64_t *t, int64_t n) {
  int64_t *u;
  return unique(A, t, n, &u) == n;
}

static bool contains(const char *haystack, const char *needle) {
  return strstr(haystack, needle) != NULL;
}

/* ---- building layouts ------------------------------------------------------ */

typedef struct Pair {
  FlyTuple *s, *d;
} Pair;

/* Leaves [lo, hi) of f as a random nesting of depth <= MAXDEPTH - depth. */
static Pair nest(FlyAlgebra *A, Rng *r, const Flat *f, int lo, int hi, int depth) {
  Pair p = {NULL, NULL};
  int n = hi - lo;
  if (n == 1 && (depth >= MAXDEPTH - 1 || rng_pct(r, 88))) {
    p.s = fly_tuple_int(A, f->s[lo]);
    p.d = fly_tuple_int(A, f->d[lo]);
    return p;
  }
  FlyTuple **es = fly_alloc(A, (size_t)(n > 0 ? n : 1) * sizeof *es);
  FlyTuple **ed = fly_alloc(A, (size_t)(n > 0 ? n : 1) * sizeof *ed);
  CHECK_OK(A, es && ed ? es : NULL, "test allocation");
  int k = 0;
  if (depth >= MAXDEPTH - 1) { /* only leaves below this level */
    for (int i = lo; i < hi; i++) {
      es[k] = fly_tuple_int(A, f->s[i]);
      ed[k++] = fly_tuple_int(A, f->d[i]);
    }
  } else {
    int groups = n <= 1 ? n : (rng_pct(r, 8) ? 1 : (int)rng_range(r, 2, n < 4 ? n : 4));
    int start = lo;
    for (int g = 0; g < groups; g++) {
      int left = hi - start, need = groups - g - 1;
      int len = g == groups - 1 ? left : (int)rng_range(r, 1, left - need);
      Pair e = nest(A, r, f, start, start + len, depth + 1);
      es[k] = e.s;
      ed[k++] = e.d;
      start += len;
    }
  }
  p.s = fly_tuple_seq(A, k, es);
  p.d = fly_tuple_seq(A, k, ed);
  return p;
}

static FlyLayout *nest_layout(FlyAlgebra *A, Rng *r, const Flat *f) {
  if (f->n == 0)
    return fly_layout_make(A, fly_tuple_int(A, 1), fly_tuple_int(A, 0));
  Pair p = nest(A, r, f, 0, f->n, 0);
  FlyLayout *L = fly_layout_make(A, p.s, p.d);
  CHECK_OK(A, L, "fly_layout_make of a generated layout");
  return L;
}

/* A tuple congruent to shape whose leaves are v[*k], v[*k + 1], ... */
static FlyTuple *with_leaves(FlyAlgebra *A, const FlyTuple *shape, const int64_t *v, int *k) {
  if (!fly_tuple_is_seq(shape))
    return fly_tuple_int(A, v[(*k)++]);
  FlyTuple **e = fly_alloc(A, (size_t)(shape->n ? shape->n : 1) * sizeof *e);
  CHECK_OK(A, e, "test allocation");
  for (int i = 0; i < shape->n; i++)
    e[i] = with_leaves(A, shape->elem[i], v, k);
  return fly_tuple_seq(A, shape->n, e);
}

static FlyLayout *relabel(FlyAlgebra *A, const FlyLayout *L, const int64_t *strides) {
  int k = 0;
  FlyLayout *R = fly_layout_make(A, L->shape, with_leaves(A, L->shape, strides, &k));
  CHECK_OK(A, R, "fly_layout_make of relabelled strides");
  return R;
}

/* Random shape leaves, 1..8 each, product <= cap. */
static void gen_leaves(Rng *r, Flat *f, int64_t cap, int min_leaf) {
  int n = (int)rng_range(r, 1, rng_pct(r, 30) ? 8 : 4);
  f->n = 0;
  int64_t budget = cap;
  for (int i = 0; i < n && budget >= min_leaf; i++) {
    int64_t hi = budget < 8 ? budget : 8;
    int64_t s = rng_range(r, min_leaf, hi);
    flat_push(f, s, 0);
    budget /= s;
  }
  if (f->n == 0)
    flat_push(f, min_leaf, 0);
}

static int64_t size_cap(Rng *r) {
  static const int64_t caps[] = {8, 32, 64, 256, 1024, 4096};
  return caps[rng_range(r, 0, 5)];
}

/* Compact strides for f's shapes in the order given by prio (smallest
 * first), written into f->d. */
static void compact_by_order(Flat *f, const int64_t *prio) {
  bool done[MAXLEAF] = {false};
  int64_t acc = 1;
  for (int step = 0; step < f->n; step++) {
    int best = -1;
    for (int k = 0; k < f->n; k++)
      if (!done[k] && (best < 0 || prio[k] < prio[best]))
        best = k;
    done[best] = true;
    f->d[best] = acc;
    acc *= f->s[best];
  }
}

static void random_perm(Rng *r, int n, int64_t *p) {
  for (int i = 0; i < n; i++)
    p[i] = i;
  for (int i = n - 1; i > 0; i--) {
    int j = (int)rng_range(r, 0, i);
    int64_t t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
}

/* Any layout: compact (col-major, row-major or ordered, through the
 * library), perhaps with stride-0 modes and a dilation, or random strides
 * (negative ones only when allowed). */
static FlyLayout *gen_wild_cap(FlyAlgebra *A, Rng *r, bool negative, int64_t cap) {
  Flat f;
  gen_leaves(r, &f, cap, 1);
  FlyLayout *S = nest_layout(A, r, &f);
  FlyLayout *L = NULL;
  int kind = (int)rng_range(r, 0, 5);
  if (kind == 0) {
    L = fly_layout_col_major(A, S->shape);
  } else if (kind == 1) {
    L = fly_layout_row_major(A, S->shape);
  } else if (kind == 2) {
    int64_t perm[MAXLEAF];
    FlyTuple *order;
    if (fly_tuple_is_seq(S->shape) && rng_pct(r, 30)) { /* an order coarser than the shape */
      random_perm(r, S->shape->n, perm);
      FlyTuple *e[MAXLEAF];
      for (int i = 0; i < S->shape->n; i++)
        e[i] = fly_tuple_int(A, perm[i] * 3 - 2);
      order = fly_tuple_seq(A, S->shape->n, e);
    } else {
      random_perm(r, f.n, perm);
      int k = 0;
      order = with_leaves(A, S->shape, perm, &k);
    }
    L = fly_layout_ordered(A, S->shape, order);
    CHECK_OK(A, L, "fly_layout_ordered");
  } else {
    for (int k = 0; k < f.n; k++) {
      f.d[k] = rng_pct(r, 15) ? 0 : rng_range(r, 1, 12);
      if (negative && rng_pct(r, 10))
        f.d[k] = -rng_range(r, 1, 6);
    }
    return relabel(A, S, f.d);
  }
  CHECK_OK(A, L, "compact layout");
  Flat g;
  flat_of(L, &g);
  bool changed = false;
  if (rng_pct(r, 30)) {
    for (int k = 0; k < g.n; k++)
      if (rng_pct(r, 25)) {
        g.d[k] = 0;
        changed = true;
      }
  }
  if (rng_pct(r, 20)) {
    int64_t c = rng_range(r, 2, 3);
    for (int k = 0; k < g.n; k++)
      g.d[k] *= c;
    changed = true;
  }
  return changed ? relabel(A, L, g.d) : L;
}

static FlyLayout *gen_wild(FlyAlgebra *A, Rng *r, bool negative) {
  return gen_wild_cap(A, r, negative, size_cap(r));
}

/* A layout that has a complement: the modes of a compact layout in a random
 * order, some of them dropped, all dilated, perhaps with stride-0 modes.
 * *compact says it is a bijection onto [0, size) up to stride-0 modes. */
static FlyLayout *gen_injective(FlyAlgebra *A, Rng *r, bool zeros, bool *compact, int64_t cap) {
  Flat f, g;
  gen_leaves(r, &f, cap, 1);
  int64_t prio[MAXLEAF];
  random_perm(r, f.n, prio);
  compact_by_order(&f, prio);
  bool all = rng_pct(r, 35);
  int64_t dil = rng_pct(r, 65) ? 1 : rng_range(r, 2, 3);
  g.n = 0;
  for (int k = 0; k < f.n; k++)
    if (all || rng_pct(r, 70))
      flat_push(&g, f.s[k], f.d[k] * dil);
  bool dropped = g.n != f.n;
  if (zeros && rng_pct(r, 15))
    for (int z = (int)rng_range(r, 1, 2); z > 0; z--)
      flat_push(&g, rng_range(r, 1, 4), 0);
  shuffle_pairs(r, g.n, g.s, g.d);
  if (compact)
    *compact = !dropped && dil == 1;
  return nest_layout(A, r, &g);
}

/* A tile of the domain of `shape`: its leaves split into factors, adjacent
 * factors merged into runs, a random subset of the runs in a random order
 * (each run n:r reads n consecutive digits of the domain). Such a B always
 * composes with a layout of that shape. `extend` may add a mode that reaches
 * past the domain (along its last mode), `zeros` stride-0 modes. */
static FlyLayout *gen_tile(FlyAlgebra *A, Rng *r, const FlyTuple *shape, bool extend, bool zeros) {
  Flat dom, fac, run, sel;
  flat_shape(shape, &dom);
  fac.n = 0;
  int64_t pre = 1;
  for (int k = 0; k < dom.n; k++) {
    int64_t rem = dom.s[k], at = pre;
    while (rem > 1) {
      int64_t f;
      do
        f = rng_range(r, 2, rem);
      while (rem % f != 0);
      flat_push(&fac, f, at);
      at *= f;
      rem /= f;
    }
    pre *= dom.s[k];
  }
  run.n = 0;
  for (int k = 0; k < fac.n; k++) {
    if (run.n > 0 && rng_pct(r, 40))
      run.s[run.n - 1] *= fac.s[k];
    else
      flat_push(&run, fac.s[k], fac.d[k]);
  }
  sel.n = 0;
  for (int k = 0; k < run.n; k++)
    if (rng_pct(r, 65))
      flat_push(&sel, run.s[k], run.d[k]);
  if (extend && rng_pct(r, 20))
    flat_push(&sel, rng_range(r, 2, 3), pre);
  if (rng_pct(r, 50))
    shuffle_pairs(r, sel.n, sel.s, sel.d);
  if (zeros && rng_pct(r, 15)) {
    flat_push(&sel, rng_range(r, 2, 3), 0);
    shuffle_pairs(r, sel.n, sel.s, sel.d);
  }
  return nest_layout(A, r, &sel);
}

static FlyLayout *mode(FlyAlgebra *A, const FlyLayout *L, int i) {
  FlyLayout *m = fly_layout_get(A, L, i);
  CHECK_OK(A, m, "fly_layout_get");
  return m;
}

/* A tiler for L: the whole layout (a tile of its domain) or one tiler per
 * leading mode (`_`, a tile of that mode, or, for a tuple mode, a tiler
 * of its modes). */
static FlyTiler *gen_tiler(FlyAlgebra *A, Rng *r, const FlyLayout *L, int depth, bool whole) {
  if (whole || !fly_tuple_is_seq(L->shape) || depth > 1)
    return fly_tiler_layout(A, gen_tile(A, r, L->shape, false, false));
  int n = (int)rng_range(r, 1, L->shape->n);
  FlyTiler *e[MAXLEAF];
  for (int i = 0; i < n; i++) {
    FlyLayout *m = mode(A, L, i);
    int pick = (int)rng_range(r, 0, 9);
    if (pick < 2)
      e[i] = fly_tiler_underscore(A);
    else if (pick < 3 && fly_tuple_is_seq(m->shape))
      e[i] = gen_tiler(A, r, m, depth + 1, false);
    else
      e[i] = fly_tiler_layout(A, gen_tile(A, r, m->shape, false, false));
  }
  return fly_tiler_seq(A, n, e);
}

/* ---- text ------------------------------------------------------------------ */

/* Blanks around the punctuation of text, which the reader must skip. */
static char *with_blanks(FlyAlgebra *A, Rng *r, const char *text) {
  size_t n = strlen(text);
  char *out = fly_alloc(A, 3 * n + 3);
  CHECK_OK(A, out, "test allocation");
  size_t k = 0;
  static const char blanks[] = {' ', '\t', '\n'};
  for (size_t i = 0; i < n; i++) {
    bool punct = strchr("(),:<>", text[i]) != NULL;
    if (punct && rng_pct(r, 30))
      out[k++] = blanks[rng_range(r, 0, 2)];
    out[k++] = text[i];
    if (punct && rng_pct(r, 30))
      out[k++] = blanks[rng_range(r, 0, 2)];
  }
  out[k] = '\0';
  return out;
}

static void test_text_roundtrip(void **state) {
  (void)state;
  const uint64_t seed = 0x7e47;
  for (int it = 0; it < 3000; it++) {
    Rng r = rng_for(seed, it);
    FlyAlgebra A;
    session_begin(&A);
    ctx_begin("text_roundtrip", seed, it);
    FlyLayout *L = gen_wild(&A, &r, true);
    ctx_layout(&A, "L", L);
    char *text = fly_layout_str(&A, L);
    CHECK_OK(&A, text, "fly_layout_str");
    FlyLayout *P = fly_parse_layout(&A, text, strlen(text));
    CHECK_OK(&A, P, "fly_parse_layout");
    char *again = fly_layout_str(&A, P);
    CHECK(strcmp(text, again) == 0, "print(parse(\"%s\")) gives \"%s\"", text, again);
    /* parse(print(L)) == L, but a rank-1 top level loses its parentheses. */
    const FlyLayout *expect = L;
    /* The printer drops rank-1 wrappers at the top; nothing else may change. */
    while (!fly_layout_equal(P, expect) && fly_tuple_is_seq(expect->shape) && expect->shape->n == 1)
      expect = mode(&A, expect, 0);
    CHECK(fly_layout_equal(P, expect), "parse(\"%s\") is not the layout printed", text);
    char *spaced = with_blanks(&A, &r, text);
    FlyLayout *Q = fly_parse_layout(&A, spaced, strlen(spaced));
    CHECK(Q && fly_layout_equal(Q, P), "\"%s\" does not read as \"%s\": %s", spaced, text,
          fly_algebra_message(&A));
    FlyValue v;
    CHECK(fly_parse_value(&A, text, strlen(text), &v) && v.kind == FLY_VALUE_LAYOUT,
          "fly_parse_value(\"%s\") is not a layout", text);
    /* Tuples: the shape and a coordinate with underscores. */
    char *st = fly_tuple_str(&A, L->shape);
    FlyTuple *t = fly_parse_tuple(&A, st, strlen(st));
    CHECK(t && fly_tuple_equal(t, L->shape), "parse_tuple(\"%s\") differs", st);
    CHECK(fly_parse_value(&A, st, strlen(st), &v) && v.kind == FLY_VALUE_TUPLE &&
              fly_tuple_equal(v.as.tuple, L->shape),
          "fly_parse_value(\"%s\") is not that tuple", st);
    /* Tilers. */
    FlyTiler *T = gen_tiler(&A, &r, L, 0, rng_pct(&r, 30));
    char *tt = fly_tiler_str(&A, T);
    CHECK_OK(&A, tt, "fly_tiler_str");
    FlyTiler *PT = fly_parse_tiler(&A, tt, strlen(tt));
    CHECK_OK(&A, PT, "fly_parse_tiler");
    char *tt2 = fly_tiler_str(&A, PT);
    CHECK(strcmp(tt, tt2) == 0, "tiler \"%s\" prints back as \"%s\"", tt, tt2);
    /* Composed layouts. */
    FlySwizzle sw;
    int b = (int)rng_range(&r, 0, 3), s = (int)rng_range(&r, b, 5) * (rng_pct(&r, 20) ? -1 : 1);
    CHECK(fly_swizzle_make(&A, b, (int)rng_range(&r, 0, 4), s, &sw), "fly_swizzle_make: %s",
          fly_algebra_message(&A));
    FlyComposed *C = fly_composed_make(&A, sw, rng_range(&r, 0, 300), L);
    char *ct = fly_composed_str(&A, C);
    CHECK_OK(&A, ct, "fly_composed_str");
    FlyComposed *PC = fly_parse_composed(&A, ct, strlen(ct));
    CHECK_OK(&A, PC, "fly_parse_composed");
    CHECK(fly_swizzle_equal(PC->swizzle, C->swizzle) && PC->offset == C->offset &&
              fly_layout_equal(PC->layout, expect),
          "composed \"%s\" reads back differently", ct);
    char *ct2 = fly_composed_str(&A, PC);
    CHECK(strcmp(ct, ct2) == 0, "composed \"%s\" prints back as \"%s\"", ct, ct2);
    char *cs = with_blanks(&A, &r, ct);
    PC = fly_parse_composed(&A, cs, strlen(cs));
    CHECK(PC && fly_layout_equal(PC->layout, expect), "\"%s\" does not read as \"%s\": %s", cs, ct,
          fly_algebra_message(&A));
    session_end(&A);
  }
}

/* ---- coordinates ----------------------------------------------------------- */

/* The colexicographic 1-D index of coordinate c in shape s. */
static int64_t colex(const FlyTuple *c, const FlyTuple *s) {
  if (!fly_tuple_is_seq(s))
    return c->value;
  int64_t idx = 0, mul = 1;
  for (int i = 0; i < s->n; i++) {
    idx += colex(c->elem[i], s->elem[i]) * mul;
    mul *= tuple_size(s->elem[i]);
  }
  return idx;
}

/* c with random sub-coordinates replaced by their 1-D index. */
static FlyTuple *collapse(FlyAlgebra *A, Rng *r, FlyTuple *c, const FlyTuple *s) {
  if (!fly_tuple_is_seq(s))
    return c;
  if (rng_pct(r, 20))
    return fly_tuple_int(A, colex(c, s));
  FlyTuple **e = fly_alloc(A, (size_t)(s->n ? s->n : 1) * sizeof *e);
  CHECK_OK(A, e, "test allocation");
  for (int i = 0; i < s->n; i++)
    e[i] = collapse(A, r, c->elem[i], s->elem[i]);
  return fly_tuple_seq(A, s->n, e);
}

static void test_eval_crd2idx(void **state) {
  (void)state;
  const uint64_t seed = 0xc4d2;
  for (int it = 0; it < 1000; it++) {
    Rng r = rng_for(seed, it);
    FlyAlgebra A;
    session_begin(&A);
    ctx_begin("eval_crd2idx", seed, it);
    FlyLayout *L = gen_wild(&A, &r, true);
    ctx_layout(&A, "L", L);
    int64_t n = size_of(L), size;
    CHECK(fly_layout_size(&A, L, &size) && size == n, "size is %lld, expected %lld",
          (long long)size, (long long)n);
    /* eval agrees with the reference, past the size too (table checks it). */
    int64_t *t = table(&A, L, 2 * n + 3);
    FlyLayout *cm = fly_layout_col_major(&A, L->shape);
    CHECK_OK(&A, cm, "fly_layout_col_major");
    for (int64_t k = 0; k < (n < SAMPLES ? n : SAMPLES); k++) {
      int64_t i = n <= SAMPLES ? k : rng_range(&r, 0, n - 1);
      FlyTuple *c = fly_tuple_idx2crd(&A, i, L->shape);
      CHECK_OK(&A, c, "fly_tuple_idx2crd");
      CHECK(fly_tuple_congruent(c, L->shape), "idx2crd(%lld) is not congruent to the shape",
            (long long)i);
      CHECK(colex(c, L->shape) == i, "idx2crd(%lld) is not the colexicographic coordinate",
            (long long)i);
      int64_t v = -1, w = -1;
      CHECK(fly_layout_crd2idx(&A, c, L, &v) && v == t[i],
            "crd2idx(idx2crd(%lld)) = %lld, expected L(%lld) = %lld (%s)", (long long)i,
            (long long)v, (long long)i, (long long)t[i], fly_algebra_message(&A));
      CHECK(fly_layout_crd2idx(&A, c, cm, &w) && w == i, "col-major crd2idx(idx2crd(%lld)) = %lld",
            (long long)i, (long long)w);
      FlyTuple *p = collapse(&A, &r, c, L->shape);
      CHECK(fly_layout_crd2idx(&A, p, L, &v) && v == t[i], "crd2idx(%s) = %lld, expected %lld (%s)",
            fly_tuple_str(&A, p), (long long)v, (long long)t[i], fly_algebra_message(&A));
    }
    /* Out of range coordinates are errors, not wrapped. */
    int64_t v;
    FlyTuple *big = fly_tuple_int(&A, n);
    CHECK(!fly_layout_crd2idx(&A, big, L, &v), "crd2idx(%lld) of a size-%lld layout succeeded",
          (long long)n, (long long)n);
    session_end(&A);
  }
}

/* ---- coalesce and filter ----------------------------------------------------- */

static void check_flat_result(FlyAlgebra *A, const FlyLayout *R, bool no_zero) {
  CHECK(fly_layout_depth(R) <= 1, "depth %d > 1", fly_layout_depth(R));
  Flat f;
  flat_of(R, &f);
  if (f.n == 1 && f.s[0] == 1 && f.d[0] == 0)
    return;
  for (int k = 0; k < f.n; k++) {
    CHECK(f.s[k] != 1, "leaf %d has shape 1 in %s", k, fly_layout_str(A, R));
    CHECK(!no_zero || f.d[k] != 0, "leaf %d has stride 0 in %s", k, fly_layout_str(A, R));
    CHECK(k == 0 || f.s[k - 1] * f.d[k - 1] != f.d[k], "leaves %d and %d of %s should merge", k - 1,
          k, fly_layout_str(A, R));
  }
}

static void test_coalesce(void **state) {
  (void)state;
  const uint64_t seed = 0xc0a1;
  for (int it = 0; it < 2000; it++) {
    Rng r = rng_for(seed, it);
    FlyAlgebra A;
    session_begin(&A);
    ctx_begin("coalesce", seed, it);
    FlyLayout *L = gen_wild(&A, &r, true);
    ctx_layout(&A, "L", L);
    int64_t n = size_of(L);
    FlyLayout *C = fly_layout_coalesce(&A, L);
    CHECK_OK(&A, C, "coalesce");
    ctx_layout(&A, "coalesce(L)", C);
    CHECK(size_of(C) == n, "size %lld, expected %lld", (long long)size_of(C), (long long)n);
    check_flat_result(&A, C, false);
    int64_t *tl = table(&A, L, n), *tc = table(&A, C, n);
    for (int64_t i = 0; i < n; i++)
      CHECK(tl[i] == tc[i], "coalesce(L)(%lld) = %lld, L(%lld) = %lld", (long long)i,
            (long long)tc[i], (long long)i, (long long)tl[i]);
    FlyLayout *CC = fly_layout_coalesce(&A, C);
    CHECK(CC && fly_layout_equal(CC, C), "coalesce is not idempotent: %s", fly_layout_str(&A, CC));

    /* filter: same image, no stride-0 or size-1 modes. */
    FlyLayout *F = fly_layout_filter(&A, L);
    CHECK_OK(&A, F, "filter");
    ctx_layout(&A, "filter(L)", F);
    check_flat_result(&A, F, true);
    Flat fl;
    flat_of(L, &fl);
    int64_t nz = 1;
    for (int k = 0; k < fl.n; k++)
      if (fl.d[k] != 0)
        nz *= fl.s[k];
    CHECK(size_of(F) == nz, "size(filter) = %lld, expected %lld", (long long)size_of(F),
          (long long)nz);
    int64_t *tf = table(&A, F, nz);
    CHECK(same_set(&A, tl, n, tf, nz), "filter changes the image");
    session_end(&A);
  }
}

/* A profile for L: a leaf, or per-mode profiles for some leading modes. */
static FlyTuple *gen_profile(FlyAlgebra *A, Rng *r, const FlyTuple *shape) {
  if (!fly_tuple_is_seq(shape) || shape->n == 0 || rng_pct(r, 35))
    return fly_tuple_int(A, 1);
  int n = (int)rng_range(r, 1, shape->n);
  FlyTuple *e[MAXLEAF];
  for (int i = 0; i < n; i++)
    e[i] = gen_profile(A, r, shape->elem[i]);
  return fly_tuple_seq(A, n, e);
}

typedef FlyLayout *(*WholeOp)(FlyAlgebra *, const FlyLayout *);

/* R == by-mode op(L, profile), checked mode by mode. */
static void check_by_profile(FlyAlgebra *A, const FlyLayout *L, const FlyLayout *R,
                             const FlyTuple *profile, WholeOp op) {
  if (!fly_tuple_is_seq(profile)) {
    FlyLayout *W = op(A, L);
    CHECK(W && fly_layout_equal(R, W), "a profiled mode %s is not op(%s) = %s",
          fly_layout_str(A, R), fly_layout_str(A, L), fly_layout_str(A, W));
    return;
  }
  int r = fly_layout_rank(L);
  CHECK(fly_layout_rank(R) == r, "rank %d, expected %d", fly_layout_rank(R), r);
  for (int i = 0; i < r; i++) {
    FlyLayout *lm = mode(A, L, i), *rm = mode(A, R, i);
    if (i < profile->n)
      check_by_profile(A, lm, rm, profile->elem[i], op);
    else
      CHECK(fly_layout_equal(lm, rm), "mode %d past the profile changed", i);
  }
}

static void test_coalesce_filter_by(void **state) {
  (void)state;
  const uint64_t seed = 0xb9;
  for (int it = 0; it < 1500; it++) {
    Rng r = rng_for(seed, it);
    FlyAlgebra A;
    session_begin(&A);
    ctx_begin("coalesce_by", seed, it);
    FlyLayout *L = gen_wild(&A, &r, true);
    FlyTuple *p = gen_profile(&A, &r, L->shape);
    ctx_layout(&A, "L", L);
    ctx_tuple(&A, "profile", p);
    int64_t n = size_of(L);
    FlyLayout *C = fly_layout_coalesce_by(&A, L, p);
    CHECK_OK(&A, C, "coalesce_by");
    ctx_layout(&A, "coalesce_by", C);
    check_by_profile(&A, L, C, p, fly_layout_coalesce);
    CHECK(size_of(C) == n, "size changed");
    int64_t *tl = table(&A, L, n), *tc = table(&A, C, n);
    for (int64_t i = 0; i < n; i++)
      CHECK(tl[i] == tc[i], "coalesce_by(L)(%lld) = %lld, L(%lld) = %lld", (long long)i,
            (long long)tc[i], (long long)i, (long long)tl[i]);
    FlyLayout *F = fly_layout_filter_by(&A, L, p);
    CHECK_OK(&A, F, "filter_by");
    check_by_profile(&A, L, F, p, fly_layout_filter);
    session_end(&A);
  }
}

/* ---- composition --------------------------------------------------------------- */

static void nonzero_leaves(const FlyLayout *L, Flat *f);
static int64_t *flat_table(FlyAlgebra *A, const Flat *f, int64_t n);

/* The shape of B with each leaf refined into a tuple of the same size. */
static bool refines(const FlyTuple *b, const FlyTuple *r) {
  if (!fly_tuple_is_seq(b))
    return tuple_size(r) == b->value;
  if (!fly_tuple_is_seq(r) || r->n != b->n)
    return false;
  for (int i = 0; i < b->n; i++)
    if (!refines(b->elem[i], r->elem[i]))
      return false;
  return true;
}

/* R == L o B: R(i) == L(B(i)), for 1-D and natural coordinates of B. */
static void check_composition(FlyAlgebra *A, Rng *r, const FlyLayout *L, const FlyLayout *B,
                              const FlyLayout *R) {
  int64_t n = size_of(B);
  CHECK(size_of(R) == n, "size(L o B) = %lld, size(B) = %lld", (long long)size_of(R), (long long)n);
  CHECK(refines(B->shape, R->shape), "the shape of L o B does not refine B's shape");
  if (fly_tuple_is_seq(B->shape))
    CHECK(fly_layout_rank(R) == fly_layout_rank(B), "rank(L o B) = %d, rank(B) = %d",
          fly_layout_rank(R), fly_layout_rank(B));
  int64_t *tb = table(A, B, n), *tr = table(A, R, n);
  int64_t hi = 0;
  for (int64_t i = 0; i < n; i++) {
    CHECK(tb[i] >= 0, "B(%lld) is negative yet composition succeeded", (long long)i);
    hi = tb[i] > hi ? tb[i] : hi;
  }
  int64_t *tl = table(A, L, hi + 1);
  for (int64_t i = 0; i < n; i++)
    CHECK(tr[i] == tl[tb[i]], "(L o B)(%lld) = %lld but L(B(%lld)) = L(%lld) = %lld", (long long)i,
          (long long)tr[i], (long long)i, (long long)tb[i], (long long)tl[tb[i]]);
  for (int64_t k = 0; k < (n < 64 ? n : 64); k++) {
    int64_t i = rng_range(r, 0, n - 1), v = -1;
    FlyTuple *c = fly_tuple_idx2crd(A, i, B->shape);
    CHECK(fly_layout_crd2idx(A, c, R, &v) && v == tr[i], "(L o B)(%s) = %lld, expected %lld (%s)",
          fly_tuple_str(A, c), (long long)v, (long long)tr[i], fly_algebra_message(A));
  }
}

static void test_composition_random(void **state) {
  (void)state;
  const uint64_t seed = 0xc0c0;
  int ok = 0, total = 3000, overlapping = 0, inexact = 0;
  for (int it = 0; it < total; it++) {
    Rng r = rng_for(seed, it);
    FlyAlgebra A;
    session_begin(&A);
    ctx_begin("composition_random", seed, it);
    FlyLayout *L = gen_wild(&A, &r, true), *B = gen_wild(&A, &r, rng_pct(&r, 20));
    ctx_layout(&A, "L", L);
    ctx_layout(&A, "B", B);
    FlyLayout *R = fly_layout_composition(&A, L, B);
    ctx_layout(&A, "L o B", R);
    Flat fb;
    nonzero_leaves(B, &fb);
    int64_t nfb = flat_size(&fb);
    if (R && injective(&A, flat_table(&A, &fb, nfb), nfb)) {
      ok++;
      check_composition(&A, &r, L, B, R);
    } else if (R) {
      overlapping++; /* CuTe's by-mode rule: exact only when B's modes do not overlap */
      int64_t n = size_of(B), *tb = table(&A, B, n), *tr = table(&A, R, n), hi = 0;
      for (int64_t i = 0; i < n; i++)
        hi = tb[i] > hi ? tb[i] : hi;
      int64_t *tl = table(&A, L, hi + 1);
      for (int64_t i = 0; i < n; i++)
        if (tr[i] != tl[tb[i]]) {
          inexact++;
          break;
        }
    } else {
      CHECK(contains(fly_algebra_message(&A), "composition"),
            "the error does not name composition: %s", fly_algebra_message(&A));
      flat_of(B, &fb);
      bool trivial = true;
      for (int k = 0; k < fb.n; k++)
        trivial = trivial && (fb.d[k] == 0 || fb.s[k] == 1);
      CHECK(!trivial, "composition with a constant B failed: %s", fly_algebra_message(&A));
    }
    session_end(&A);
  }
  print_message("composition_random: %d of %d random pairs composed exactly; %d more with "
                "overlapping B composed, %d of them to another function than L(B(i))\n",
                ok, total, overlapping, inexact);
  assert_true(ok * 10 >= total * 2);
}

static void test_composition_admissible(void **state) {
  (void)state;
  const uint64_t seed = 0xad31;
  for (int it = 0; it < 2000; it++) {
    Rng r = rng_for(seed, it);
    FlyAlgebra A;
    session_begin(&A);
    ctx_begin("composition_admissible", seed, it);
    FlyLayout *L = gen_wild(&A, &r, true);
    FlyLayout *B = gen_tile(&A, &r, L->shape, true, true);
    ctx_layout(&A, "L", L);
    ctx_layout(&A, "B", B);
    FlyLayout *R = fly_layout_composition(&A, L, B);
    CHECK_OK(&A, R, "composition of an admissible pair");
    ctx_layout(&A, "L o B", R);
    check_composition(&A, &r, L, B, R);
    /* By-mode composition with a tiler of tiles. */
    FlyTiler *T = gen_tiler(&A, &r, L, 0, false);
    ctx_tiler(&A, "T", T);
    FlyLayout *RT = fly_layout_compose_tiler(&A, L, T);
    CHECK_OK(&A, RT, "compose_tiler with admissible tiles");
    if (T->kind == FLY_TILER_SEQ) {
      CHECK(fly_layout_rank(RT) == T->n, "rank %d, tiler rank %d", fly_layout_rank(RT), T->n);
      for (int i = 0; i < T->n; i++) {
        FlyLayout *lm = mode(&A, L, i), *rm = mode(&A, RT, i);
        FlyLayout *want = fly_layout_compose_tiler(&A, lm, T->elem[i]);
        CHECK(want && fly_layout_equal(rm, want), "mode %d is not mode %d composed", i, i);
        if (T->elem[i]->kind == FLY_TILER_LAYOUT)
          check_composition(&A, &r, lm, T->elem[i]->layout, rm);
      }
    }
    session_end(&A);
  }
}

/* ---- complement and inverses ---------------------------------------------------- */

/* The leaves of L with a nonzero stride (filter without coalescing). */
static void nonzero_leaves(const FlyLayout *L, Flat *f) {
  Flat all;
  flat_of(L, &all);
  f->n = 0;
  for (int k = 0; k < all.n; k++)
    if (all.d[k] != 0 && all.s[k] != 1)
      flat_push(f, all.s[k], all.d[k]);
}

static int64_t *flat_table(FlyAlgebra *A, const Flat *f, int64_t n) {
  int64_t *t = fly_alloc(A, (size_t)(n > 0 ? n : 1) * sizeof *t);
  CHECK_OK(A, t, "test allocation");
  for (int64_t i = 0; i < n; i++)
    t[i] = ref_eval(f, i);
  return t;
}

static void test_complement(void **state) {
  (void)state;
  const uint64_t seed = 0xc0e1;
  int ok = 0, total = 2500;
  for (int it = 0; it < total; it++) {
    Rng r = rng_for(seed, it);
    FlyAlgebra A;
    session_begin(&A);
    ctx_begin("complement", seed, it);
    bool admissible = rng_pct(&r, 70), compact = false;
    FlyLayout *L =
        admissible ? gen_injective(&A, &r, true, &compact, size_cap(&r)) : gen_wild(&A, &r, false);
    ctx_layout(&A, "L", L);
    Flat f;
    nonzero_leaves(L, &f);
    int64_t nf = flat_size(&f), extent = 1;
    for (int k = 0; k < f.n; k++)
      extent = f.s[k] * f.d[k] > extent ? f.s[k] * f.d[k] : extent;
    int64_t M;
    FlyTuple *cot;
    if (rng_pct(&r, 15)) { /* a shape as the cotarget */
      Flat g;
      gen_leaves(&r, &g, 4 * extent, 1);
      cot = nest_layout(&A, &r, &g)->shape;
      M = tuple_size(cot);
    } else {
      int pick = (int)rng_range(&r, 0, 2);
      M = pick == 0   ? extent * rng_range(&r, 1, 4)
          : pick == 1 ? rng_range(&r, 1, 2 * extent + 5)
                      : nf;
      cot = fly_tuple_int(&A, M);
    }
    ctx_tuple(&A, "cotarget", cot);
    FlyLayout *R = fly_layout_complement(&A, L, cot);
    ctx_layout(&A, "complement", R);
    if (!R) {
      const char *msg = fly_algebra_message(&A);
      CHECK(!admissible, "complement of an admissible layout failed: %s", msg);
      CHECK(contains(msg, "complement"), "the error does not name complement: %s", msg);
      if (contains(msg, "not injective") && !contains(msg, "interleave"))
        CHECK(!injective(&A, flat_table(&A, &f, nf), nf),
              "complement says \"%s\" but L without its stride-0 modes is injective", msg);
      session_end(&A);
      continue;
    }
    ok++;
    int64_t nr = size_of(R);
    int64_t *tr = table(&A, R, nr);
    for (int64_t j = 0; j + 1 < nr; j++)
      CHECK(tr[j] < tr[j + 1], "complement is not ordered: R(%lld) = %lld, R(%lld) = %lld",
            (long long)j, (long long)tr[j], (long long)(j + 1), (long long)tr[j + 1]);
    int64_t *tl = flat_table(&A, &f, nf);
    int64_t *img;
    int64_t ni = unique(&A, tl, nf, &img);
    for (int64_t j = 1; j < nr; j++)
      CHECK(bsearch(&tr[j], img, (size_t)ni, sizeof *img, cmp64) == NULL,
            "complement(%lld) = %lld is in L's image", (long long)j, (long long)tr[j]);
    /* (L, R) is a bijection onto [0, size(L) * size(R)), which reaches M. */
    /* A shape cotarget follows CuTe's ceil_div mode by mode and may fall short
     * of its size ((3,8) / 4 = (1,4)); an integer one is reached exactly when
     * it is a multiple of L's extent. */
    int64_t total_n = nf * nr;
    if (!fly_tuple_is_seq(cot)) {
      CHECK(total_n >= M, "size(L) * size(R) = %lld does not reach the cotarget %lld",
            (long long)total_n, (long long)M);
      if (M % extent == 0)
        CHECK(total_n == M, "size(L) * size(R) = %lld, cotarget %lld", (long long)total_n,
              (long long)M);
    }
    int64_t *both = fly_alloc(&A, (size_t)total_n * sizeof *both);
    CHECK_OK(&A, both, "test allocation");
    for (int64_t b = 0; b < nr; b++)
      for (int64_t a = 0; a < nf; a++)
        both[a + nf * b] = tl[a] + tr[b];
    int64_t *sb = sorted(&A, both, total_n);
    for (int64_t i = 0; i < total_n; i++)
      CHECK(sb[i] == i, "(L, complement) does not cover [0, %lld) exactly: %lld is missing",
            (long long)total_n, (long long)i);
    session_end(&A);
  }
  print_message("complement: %d of %d layouts had a complement\n", ok, total);
  assert_true(ok * 10 >= total * 7);
}

static FlyLayout *gen_inverse_input(FlyAlgebra *A, Rng *r, bool *admissible, bool *compact) {
  int pick = (int)rng_range(r, 0, 9);
  *admissible = pick < 6;
  *compact = false;
  if (pick < 6)
    return gen_injective(A, r, true, compact, size_cap(r));
  return gen_wild(A, r, false);
}

static void test_right_inverse(void **state) {
  (void)state;
  const uint64_t seed = 0x41;
  int nontrivial = 0, total = 2500;
  for (int it = 0; it < total; it++) {
    Rng r = rng_for(seed, it);
    FlyAlgebra A;
    session_begin(&A);
    ctx_begin("right_inverse", seed, it);
    bool admissible, compact;
    FlyLayout *L = gen_inverse_input(&A, &r, &admissible, &compact);
    ctx_layout(&A, "L", L);
    FlyLayout *R = fly_layout_right_inverse(&A, L);
    CHECK_OK(&A, R, "right_inverse");
    ctx_layout(&A, "right_inverse", R);
    int64_t nr = size_of(R), nl = size_of(L);
    int64_t *tr = table(&A, R, nr), *tl = table(&A, L, nl);
    for (int64_t i = 0; i < nr; i++) {
      CHECK(tr[i] >= 0 && tr[i] < nl, "R(%lld) = %lld is outside L's domain", (long long)i,
            (long long)tr[i]);
      CHECK(tl[tr[i]] == i, "L(R(%lld)) = L(%lld) = %lld", (long long)i, (long long)tr[i],
            (long long)tl[tr[i]]);
    }
    Flat f;
    flat_of(L, &f);
    bool zero = false;
    for (int k = 0; k < f.n; k++)
      zero = zero || (f.d[k] == 0 && f.s[k] > 1);
    if (compact && !zero)
      CHECK(nr == nl, "L is a bijection onto [0, %lld) but size(R) = %lld", (long long)nl,
            (long long)nr);
    nontrivial += nr > 1;
    session_end(&A);
  }
  print_message("right_inverse: %d of %d inverses were nontrivial\n", nontrivial, total);
  assert_true(nontrivial * 10 >= total * 4);
}

static void test_left_inverse(void **state) {
  (void)state;
  const uint64_t seed = 0x1ef7;
  int ok = 0, inj = 0, total = 2500;
  for (int it = 0; it < total; it++) {
    Rng r = rng_for(seed, it);
    FlyAlgebra A;
    session_begin(&A);
    ctx_begin("left_inverse", seed, it);
    bool admissible, compact;
    FlyLayout *L = gen_inverse_input(&A, &r, &admissible, &compact);
    ctx_layout(&A, "L", L);
    int64_t nl = size_of(L);
    int64_t *tl = table(&A, L, nl);
    bool is_inj = injective(&A, tl, nl);
    FlyLayout *R = fly_layout_left_inverse(&A, L);
    ctx_layout(&A, "left_inverse", R);
    if (!R) {
      const char *msg = fly_algebra_message(&A);
      CHECK(!admissible, "left_inverse of a layout with disjoint modes failed: %s", msg);
      CHECK(contains(msg, "left_inverse"), "the error does not name left_inverse: %s", msg);
      if (contains(msg, "not injective") && !contains(msg, "interleave"))
        CHECK(!is_inj, "left_inverse says \"%s\" but L is injective", msg);
      session_end(&A);
      continue;
    }
    ok++;
    int64_t hi = 0;
    for (int64_t i = 0; i < nl; i++)
      hi = tl[i] > hi ? tl[i] : hi;
    int64_t *tr = table(&A, R, hi + 1);
    for (int64_t i = 0; i < nl; i++) {
      int64_t back = tr[tl[i]];
      CHECK(back >= 0 && back < nl, "R(L(%lld)) = %lld is outside L's domain", (long long)i,
            (long long)back);
      if (is_inj)
        CHECK(back == i, "R(L(%lld)) = R(%lld) = %lld", (long long)i, (long long)tl[i],
              (long long)back);
      CHECK(tl[back] == tl[i], "L(R(L(%lld))) = %lld but L(%lld) = %lld", (long long)i,
            (long long)tl[back], (long long)i, (long long)tl[i]);
    }
    inj += is_inj;
    session_end(&A);
  }
  print_message("left_inverse: %d of %d inverted (%d injective)\n", ok, total, inj);
  assert_true(ok * 10 >= total * 6 && inj * 10 >= total * 4);
}

/* ---- divide ---------------------------------------------------------------------- */

static void check_divide_by_layout(FlyAlgebra *A, const FlyLayout *L, const FlyLayout *B,
                                   const FlyLayout *D) {
  int64_t n = size_of(L);
  FlyLayout *rest = fly_layout_complement(A, B, fly_tuple_int(A, n));
  FlyLayout *Z = fly_layout_pair(A, (FlyLayout *)B, rest);
  FlyLayout *E = fly_layout_composition(A, L, Z);
  CHECK_OK(A, E, "composition(L, (B, complement(B, size(L))))");
  CHECK(fly_layout_equal(D, E), "logical_divide = %s but the definition gives %s",
        fly_layout_str(A, D), fly_layout_str(A, E));
  CHECK(fly_layout_rank(D) == 2, "rank %d, expected (tile, rest)", fly_layout_rank(D));
  CHECK(size_of(D) == n, "size %lld, expected %lld", (long long)size_of(D), (long long)n);
  CHECK(size_of(mode(A, D, 0)) == size_of(B), "the tile mode has size %lld, B %lld",
        (long long)size_of(mode(A, D, 0)), (long long)size_of(B));
  /* (B, rest) permutes L's domain, and D(i) == L(Z(i)). */
  int64_t *tz = table(A, Z, n), *tl = table(A, L, n), *td = table(A, D, n);
  int64_t *sz = sorted(A, tz, n);
  for (int64_t i = 0; i < n; i++)
    CHECK(sz[i] == i, "(B, complement) is not a permutation of [0, %lld)", (long long)n);
  for (int64_t i = 0; i < n; i++)
    CHECK(td[i] == tl[tz[i]], "D(%lld) = %lld but L(Z(%lld)) = L(%lld) = %lld", (long long)i,
          (long long)td[i], (long long)i, (long long)tz[i], (long long)tl[tz[i]]);
}

/* D == logical_divide(L, T), checked against the definition mode by mode. */
static void check_divide(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *T, const FlyLayout *D) {
  switch (T->kind) {
  case FLY_TILER_UNDERSCORE:
    CHECK(fly_layout_equal(D, L), "dividing by _ changed the layout");
    return;
  case FLY_TILER_LAYOUT:
    check_divide_by_layout(A, L, T->layout, D);
    return;
  case FLY_TILER_SEQ:
    break;
  }
  int r = fly_layout_rank(L);
  CHECK(fly_layout_rank(D) == r, "rank %d, expected %d", fly_layout_rank(D), r);
  for (int i = 0; i < r; i++) {
    FlyLayout *lm = mode(A, L, i), *dm = mode(A, D, i);
    if (i < T->n)
      check_divide(A, lm, T->elem[i], dm);
    else
      CHECK(fly_layout_equal(lm, dm), "mode %d past the tiler changed", i);
  }
}

/* Number of modes of X when spread at the top level. */
static int modes_of(const FlyLayout *X) { return fly_layout_rank(X); }

/* The zipped, tiled and flat forms regroup the logical form's modes: same
 * size, same image (as a multiset, since the domain is only permuted). */
static void check_forms(FlyAlgebra *A, const FlyLayout *logical, const FlyTiler *T,
                        const FlyLayout *zipped, const FlyLayout *tiled, const FlyLayout *flat) {
  int64_t n = size_of(logical);
  int64_t *tg = table(A, logical, n);
  const FlyLayout *forms[3] = {zipped, tiled, flat};
  static const char *names[3] = {"zipped", "tiled", "flat"};
  for (int k = 0; k < 3; k++) {
    CHECK(size_of(forms[k]) == n, "%s has size %lld, logical %lld", names[k],
          (long long)size_of(forms[k]), (long long)n);
    int64_t *tf = table(A, forms[k], n);
    CHECK(same_multiset(A, tg, n, tf, n), "%s has another image than the logical form", names[k]);
  }
  CHECK(fly_layout_rank(zipped) == 2, "zipped has rank %d", fly_layout_rank(zipped));
  FlyLayout *z0 = mode(A, zipped, 0), *z1 = mode(A, zipped, 1);
  if (T->kind == FLY_TILER_LAYOUT) {
    CHECK(fly_layout_equal(zipped, logical), "zipped differs from logical for a layout tiler");
    Flat a, b;
    flat_of(logical, &a);
    flat_of(tiled, &b);
    CHECK(a.n == b.n && !memcmp(a.s, b.s, sizeof a.s[0] * (size_t)a.n) &&
              !memcmp(a.d, b.d, sizeof a.d[0] * (size_t)a.n),
          "tiled has other leaves than logical for a layout tiler");
    flat_of(flat, &b);
    CHECK(a.n == b.n && !memcmp(a.s, b.s, sizeof a.s[0] * (size_t)a.n) &&
              !memcmp(a.d, b.d, sizeof a.d[0] * (size_t)a.n),
          "flat has other leaves than logical for a layout tiler");
  } else if (T->kind == FLY_TILER_SEQ) {
    CHECK(fly_layout_rank(z0) == T->n, "the tile mode has rank %d, tiler %d", fly_layout_rank(z0),
          T->n);
    CHECK(fly_layout_rank(z1) == fly_layout_rank(logical),
          "the rest mode has rank %d, the layout %d", fly_layout_rank(z1),
          fly_layout_rank(logical));
    for (int i = 0; i < T->n; i++) {
      FlyLayout *lm = mode(A, logical, i);
      if (T->elem[i]->kind == FLY_TILER_UNDERSCORE) {
        CHECK(size_of(mode(A, z0, i)) == 1, "the tile of a _ mode is not trivial");
        CHECK(fly_layout_equal(mode(A, z1, i), lm), "the rest of a _ mode is not the mode");
      } else if (T->elem[i]->kind == FLY_TILER_LAYOUT) {
        CHECK(fly_layout_equal(mode(A, z0, i), mode(A, lm, 0)), "tile %d is not mode (%d,0)", i, i);
        CHECK(fly_layout_equal(mode(A, z1, i), mode(A, lm, 1)), "rest %d is not mode (%d,1)", i, i);
      }
    }
    for (int i = T->n; i < fly_layout_rank(logical); i++)
      CHECK(fly_layout_equal(mode(A, z1, i), mode(A, logical, i)),
            "mode %d past the tiler is not in the rest", i);
  }
  CHECK(fly_layout_rank(tiled) == 1 + modes_of(z1), "tiled has rank %d, expected %d",
        fly_layout_rank(tiled), 1 + modes_of(z1));
  CHECK(fly_layout_equal(mode(A, tiled, 0), z0), "tiled's first mode is not the tile");
  CHECK(fly_layout_rank(flat) == modes_of(z0) + modes_of(z1), "flat has rank %d, expected %d",
        fly_layout_rank(flat), modes_of(z0) + modes_of(z1));
}

static void test_logical_divide(void **state) {
  (void)state;
  const uint64_t seed = 0xd1d;
  for (int it = 0; it < 1200; it++) {
    Rng r = rng_for(seed, it);
    FlyAlgebra A;
    session_begin(&A);
    ctx_begin("logical_divide", seed, it);
    FlyLayout *L = gen_wild_cap(&A, &r, true, rng_pct(&r, 90) ? 256 : 2048);
    FlyTiler *T = gen_tiler(&A, &r, L, 0, rng_pct(&r, 50));
    ctx_layout(&A, "L", L);
    ctx_tiler(&A, "T", T);
    FlyLayout *D = fly_layout_logical_divide(&A, L, T);
    CHECK_OK(&A, D, "logical_divide by a tile that divides the layout");
    ctx_layout(&A, "logical_divide", D);
    check_divide(&A, L, T, D);
    int64_t n = size_of(L);
    CHECK(size_of(D) == n, "size changed");
    CHECK(same_multiset(&A, table(&A, L, n), n, table(&A, D, n), n),
          "logical_divide changed the image");
    FlyLayout *Z = fly_layout_zipped_divide(&A, L, T);
    FlyLayout *TD = fly_layout_tiled_divide(&A, L, T);
    FlyLayout *FD = fly_layout_flat_divide(&A, L, T);
    CHECK_OK(&A, Z && TD ? FD : NULL, "zipped/tiled/flat_divide");
    ctx_layout(&A, "zipped", Z);
    ctx_layout(&A, "tiled", TD);
    ctx_layout(&A, "flat", FD);
    check_forms(&A, D, T, Z, TD, FD);
    session_end(&A);
  }
}

/* ---- product ---------------------------------------------------------------------- */

/* A block for a product and a tiler: B either any non-negative layout (always
 * composes when L has no gaps) or a tile of the domain of complement(L, ...). */
static FlyLayout *gen_product_tile(FlyAlgebra *A, Rng *r, const FlyLayout *L, bool gapless,
                                   int64_t cap) {
  if (gapless || rng_pct(r, 40))
    return gen_wild_cap(A, r, false, cap);
  FlyLayout *C = fly_layout_complement(A, L, fly_tuple_int(A, cap * size_of(L)));
  CHECK_OK(A, C, "complement of a generated block");
  return gen_tile(A, r, C->shape, false, true);
}

static void check_product_by_layout(FlyAlgebra *A, const FlyLayout *L, const FlyLayout *B,
                                    const FlyLayout *P) {
  int64_t nl = size_of(L), nb = size_of(B), cb;
  CHECK(fly_layout_cosize(A, B, &cb), "cosize(B): %s", fly_algebra_message(A));
  FlyLayout *C = fly_layout_complement(A, L, fly_tuple_int(A, nl * cb));
  FlyLayout *CB = fly_layout_composition(A, C, B);
  CHECK_OK(A, CB, "composition(complement(L, size(L) * cosize(B)), B)");
  FlyLayout *E = fly_layout_pair(A, (FlyLayout *)L, CB);
  CHECK(fly_layout_equal(P, E), "logical_product = %s but the definition gives %s",
        fly_layout_str(A, P), fly_layout_str(A, E));
  CHECK(size_of(P) == nl * nb, "size %lld, expected %lld", (long long)size_of(P),
        (long long)(nl * nb));
  int64_t *tp = table(A, P, nl * nb), *tl = table(A, L, nl), *tb = table(A, B, nb);
  int64_t hi = 0;
  for (int64_t b = 0; b < nb; b++)
    hi = tb[b] > hi ? tb[b] : hi;
  int64_t *tc = table(A, C, hi + 1);
  Flat fb;
  nonzero_leaves(B, &fb);
  int64_t nfb = flat_size(&fb);
  if (!injective(A, flat_table(A, &fb, nfb), nfb))
    return; /* composition is by mode: exact only when B's modes do not overlap */
  for (int64_t b = 0; b < nb; b++)
    for (int64_t a = 0; a < nl; a++)
      CHECK(tp[a + nl * b] == tl[a] + tc[tb[b]], "P(%lld + %lld * %lld) = %lld, expected %lld",
            (long long)a, (long long)nl, (long long)b, (long long)tp[a + nl * b],
            (long long)(tl[a] + tc[tb[b]]));
  if (injective(A, tl, nl) && injective(A, tb, nb))
    CHECK(injective(A, tp, nl * nb), "the product of injective layouts is not injective");
}

static void check_product(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *T,
                          const FlyLayout *P) {
  switch (T->kind) {
  case FLY_TILER_UNDERSCORE:
    CHECK(fly_layout_equal(P, L), "the product by _ changed the layout");
    return;
  case FLY_TILER_LAYOUT:
    check_product_by_layout(A, L, T->layout, P);
    return;
  case FLY_TILER_SEQ:
    break;
  }
  int r = fly_layout_rank(L);
  CHECK(fly_layout_rank(P) == r, "rank %d, expected %d", fly_layout_rank(P), r);
  for (int i = 0; i < r; i++) {
    FlyLayout *lm = mode(A, L, i), *pm = mode(A, P, i);
    if (i < T->n)
      check_product(A, lm, T->elem[i], pm);
    else
      CHECK(fly_layout_equal(lm, pm), "mode %d past the tiler changed", i);
  }
}

static void test_logical_product(void **state) {
  (void)state;
  const uint64_t seed = 0x9d;
  int ok = 0, total = 800;
  for (int it = 0; it < total; it++) {
    Rng r = rng_for(seed, it);
    FlyAlgebra A;
    session_begin(&A);
    ctx_begin("logical_product", seed, it);
    bool gapless;
    FlyLayout *L = gen_injective(&A, &r, false, &gapless, rng_pct(&r, 50) ? 16 : 64);
    FlyTiler *T;
    if (fly_tuple_is_seq(L->shape) && rng_pct(&r, 40)) { /* one tile per leading mode */
      int n = (int)rng_range(&r, 1, L->shape->n);
      FlyTiler *e[MAXLEAF];
      for (int i = 0; i < n; i++)
        e[i] = rng_pct(&r, 20)
                   ? fly_tiler_underscore(&A)
                   : fly_tiler_layout(&A, gen_product_tile(&A, &r, mode(&A, L, i), false, 8));
      T = fly_tiler_seq(&A, n, e);
    } else {
      T = fly_tiler_layout(&A, gen_product_tile(&A, &r, L, gapless, 32));
    }
    ctx_layout(&A, "L", L);
    ctx_tiler(&A, "T", T);
    FlyLayout *P = fly_layout_logical_product(&A, L, T);
    ctx_layout(&A, "logical_product", P);
    if (!P) {
      CHECK(!(gapless && T->kind == FLY_TILER_LAYOUT), "the product of a compact block failed: %s",
            fly_algebra_message(&A));
      session_end(&A);
      continue;
    }
    ok++;
    if (size_of(P) > 4096) { /* keeps the run short; such products are rare */
      session_end(&A);
      continue;
    }
    check_product(&A, L, T, P);
    FlyLayout *Z = fly_layout_zipped_product(&A, L, T);
    FlyLayout *TP = fly_layout_tiled_product(&A, L, T);
    FlyLayout *FP = fly_layout_flat_product(&A, L, T);
    CHECK_OK(&A, Z && TP ? FP : NULL, "zipped/tiled/flat_product");
    ctx_layout(&A, "zipped", Z);
    ctx_layout(&A, "tiled", TP);
    ctx_layout(&A, "flat", FP);
    check_forms(&A, P, T, Z, TP, FP);
    session_end(&A);
  }
  print_message("logical_product: %d of %d products formed\n", ok, total);
  assert_true(ok * 10 >= total * 8);
}

/* Equal up to rank-1 wrappers: raked_product of a rank-1 tuple block nests it
 * one level deeper than blocked_product does (CuTe's zip does the same). */
static bool equal_unwrapped(const FlyLayout *a, const FlyLayout *b) {
  return fly_tuple_equal(fly_tuple_unwrap(a->shape), fly_tuple_unwrap(b->shape)) &&
         fly_tuple_equal(fly_tuple_unwrap(a->stride), fly_tuple_unwrap(b->stride));
}

static void test_blocked_raked_product(void **state) {
  (void)state;
  const uint64_t seed = 0xb10c;
  for (int it = 0; it < 800; it++) {
    Rng r = rng_for(seed, it);
    FlyAlgebra A;
    session_begin(&A);
    ctx_begin("blocked_raked_product", seed, it);
    Flat f;
    gen_leaves(&r, &f, rng_pct(&r, 50) ? 8 : 32, 1);
    int64_t prio[MAXLEAF];
    random_perm(&r, f.n, prio);
    compact_by_order(&f, prio);
    shuffle_pairs(&r, f.n, f.s, f.d);
    FlyLayout *L = nest_layout(&A, &r, &f);
    FlyLayout *B = gen_wild_cap(&A, &r, false, rng_pct(&r, 50) ? 8 : 32);
    ctx_layout(&A, "L", L);
    ctx_layout(&A, "B", B);
    int rl = fly_layout_rank(L), rb = fly_layout_rank(B), rank = rl > rb ? rl : rb;
    int64_t nl = size_of(L), nb = size_of(B);
    FlyLayout *LP = fly_layout_logical_product(&A, L, fly_tiler_layout(&A, B));
    CHECK_OK(&A, LP, "logical_product of a compact block");
    int64_t *tlp = table(&A, LP, nl * nb);
    FlyLayout *Lp = fly_layout_pad(&A, L, rank), *Bp = fly_layout_pad(&A, B, rank);
    for (int raked = 0; raked < 2; raked++) {
      FlyLayout *P =
          raked ? fly_layout_raked_product(&A, L, B) : fly_layout_blocked_product(&A, L, B);
      CHECK_OK(&A, P, raked ? "raked_product" : "blocked_product");
      ctx_layout(&A, raked ? "raked" : "blocked", P);
      CHECK(size_of(P) == nl * nb, "size %lld, expected %lld", (long long)size_of(P),
            (long long)(nl * nb));
      CHECK(fly_layout_rank(P) == rank, "rank %d, expected max(%d, %d)", fly_layout_rank(P), rl,
            rb);
      CHECK(same_multiset(&A, tlp, nl * nb, table(&A, P, nl * nb), nl * nb),
            "the image differs from logical_product's");
      for (int i = 0; i < rank; i++) {
        FlyLayout *pm = mode(&A, P, i), *lm = mode(&A, Lp, i);
        CHECK(fly_layout_rank(pm) == 2, "mode %d is not a (block, repetition) pair", i);
        CHECK(equal_unwrapped(mode(&A, pm, raked ? 1 : 0), lm), "mode %d does not hold L's", i);
        CHECK(size_of(pm) == size_of(lm) * size_of(mode(&A, Bp, i)),
              "mode %d has size %lld, expected %lld", i, (long long)size_of(pm),
              (long long)(size_of(lm) * size_of(mode(&A, Bp, i))));
      }
    }
    session_end(&A);
  }
}

/* ---- slice and dice ------------------------------------------------------------- */

typedef struct Parts {
  int n_under, n_int;
  FlyTuple *under[MAXLEAF]; /* the shapes under `_`, in order */
  int64_t ints[MAXLEAF];    /* the integers, in order */
} Parts;

/* A coordinate of index idx in shape with random parts replaced by `_`,
 * and random tuple parts given as a 1-D index. */
static FlyTuple *gen_pattern(FlyAlgebra *A, Rng *r, FlyTuple *shape, int64_t idx, Parts *p) {
  if (rng_pct(r, 25)) {
    p->under[p->n_under++] = shape;
    return fly_tuple_underscore(A);
  }
  if (!fly_tuple_is_seq(shape) || rng_pct(r, 15)) {
    p->ints[p->n_int++] = idx;
    return fly_tuple_int(A, idx);
  }
  FlyTuple **e = fly_alloc(A, (size_t)(shape->n ? shape->n : 1) * sizeof *e);
  CHECK_OK(A, e, "test allocation");
  for (int i = 0; i < shape->n; i++) {
    int64_t s = tuple_size(shape->elem[i]);
    e[i] = gen_pattern(A, r, shape->elem[i], idx % s, p);
    idx /= s;
  }
  return fly_tuple_seq(A, shape->n, e);
}

/* The pattern with its `_` replaced by v[0], v[1], ... */
static FlyTuple *fill(FlyAlgebra *A, const FlyTuple *c, const int64_t *v, int *k) {
  if (c->kind == FLY_TUPLE_UNDERSCORE)
    return fly_tuple_int(A, v[(*k)++]);
  if (!fly_tuple_is_seq(c))
    return (FlyTuple *)c;
  FlyTuple **e = fly_alloc(A, (size_t)(c->n ? c->n : 1) * sizeof *e);
  CHECK_OK(A, e, "test allocation");
  for (int i = 0; i < c->n; i++)
    e[i] = fill(A, c->elem[i], v, k);
  return fly_tuple_seq(A, c->n, e);
}

/* The 1-D index j of the sliced layout as one index per `_`. */
static void split_index(const Parts *p, int64_t j, int64_t *v) {
  for (int k = 0; k < p->n_under; k++) {
    int64_t s = tuple_size(p->under[k]);
    v[k] = j % s;
    j /= s;
  }
}

static FlyTuple *ints_coord(FlyAlgebra *A, const Parts *p) {
  if (p->n_int == 1)
    return fly_tuple_int(A, p->ints[0]);
  FlyTuple *e[MAXLEAF];
  for (int k = 0; k < p->n_int; k++)
    e[k] = fly_tuple_int(A, p->ints[k]);
  return fly_tuple_seq(A, p->n_int, e);
}

static void test_slice_dice(void **state) {
  (void)state;
  const uint64_t seed = 0x51ce;
  for (int it = 0; it < 2500; it++) {
    Rng r = rng_for(seed, it);
    FlyAlgebra A;
    session_begin(&A);
    ctx_begin("slice_dice", seed, it);
    FlyLayout *L = gen_wild(&A, &r, true);
    Parts p = {0, 0, {NULL}, {0}};
    FlyTuple *c = gen_pattern(&A, &r, L->shape, rng_range(&r, 0, size_of(L) - 1), &p);
    ctx_layout(&A, "L", L);
    ctx_tuple(&A, "coord", c);
    int64_t off = -1;
    FlyLayout *S = fly_layout_slice(&A, c, L, &off);
    CHECK_OK(&A, S, "slice");
    ctx_layout(&A, "slice", S);
    int64_t ns = size_of(S), want = 1;
    for (int k = 0; k < p.n_under; k++)
      want *= tuple_size(p.under[k]);
    CHECK(ns == want, "size(slice) = %lld, expected %lld", (long long)ns, (long long)want);
    int64_t *ts = table(&A, S, ns);
    for (int64_t k = 0; k < (ns < 128 ? ns : 128); k++) {
      int64_t j = ns <= 128 ? k : rng_range(&r, 0, ns - 1), v[MAXLEAF], full = -1;
      split_index(&p, j, v);
      int at = 0;
      FlyTuple *cf = fill(&A, c, v, &at);
      CHECK(fly_layout_crd2idx(&A, cf, L, &full) && full == off + ts[j],
            "L(%s) = %lld but offset %lld + slice(%lld) = %lld (%s)", fly_tuple_str(&A, cf),
            (long long)full, (long long)off, (long long)j, (long long)(off + ts[j]),
            fly_algebra_message(&A));
    }
    FlyLayout *D = fly_layout_dice(&A, c, L);
    CHECK_OK(&A, D, "dice");
    ctx_layout(&A, "dice", D);
    int64_t got = -1;
    FlyTuple *dc = ints_coord(&A, &p);
    CHECK(fly_layout_crd2idx(&A, dc, D, &got) && got == off,
          "dice(%s) = %lld, expected the slice offset %lld (%s)", fly_tuple_str(&A, dc),
          (long long)got, (long long)off, fly_algebra_message(&A));
    session_end(&A);
  }
}

/* ---- recast and max_common_vector ---------------------------------------------- */

static void test_recast(void **state) {
  (void)state;
  const uint64_t seed = 0x3ec;
  for (int it = 0; it < 2000; it++) {
    Rng r = rng_for(seed, it);
    FlyAlgebra A;
    session_begin(&A);
    ctx_begin("recast", seed, it);
    int64_t N = (int64_t)1 << rng_range(&r, 1, 3);
    Flat f, up, down;
    gen_leaves(&r, &f, 512, 2);
    int64_t prio[MAXLEAF];
    random_perm(&r, f.n, prio);
    int first = 0; /* the leaf that gets stride 1 */
    for (int k = 0; k < f.n; k++)
      if (prio[k] == 0)
        first = k;
    f.s[first] *= N;
    compact_by_order(&f, prio);
    FlyLayout *L = nest_layout(&A, &r, &f);
    ctx_layout(&A, "L", L);
    ctx_addf("\n    N = %lld", (long long)N);
    /* Wider elements: the stride-1 leaf shrinks by N, the other strides too. */
    up = f;
    up.s[first] /= N;
    compact_by_order(&up, prio);
    FlyLayout *U = fly_layout_recast(&A, L, 16, 16 * (int)N);
    CHECK_OK(&A, U, "recast to wider elements");
    ctx_layout(&A, "upcast", U);
    CHECK(fly_layout_equal(U, relabel(&A, U, up.d)), "upcast has strides other than compact");
    Flat fu;
    flat_of(U, &fu);
    for (int k = 0; k < f.n; k++)
      CHECK(fu.s[k] == up.s[k], "upcast leaf %d has shape %lld, expected %lld", k,
            (long long)fu.s[k], (long long)up.s[k]);
    FlyLayout *back = fly_layout_recast(&A, U, 16 * (int)N, 16);
    CHECK(back && fly_layout_equal(back, L), "recast back gives %s", fly_layout_str(&A, back));
    /* Narrower elements: the stride-1 leaf grows by N, the other strides too. */
    down = f;
    down.s[first] *= N;
    compact_by_order(&down, prio);
    FlyLayout *Dn = fly_layout_recast(&A, L, 16 * (int)N, 16);
    CHECK_OK(&A, Dn, "recast to narrower elements");
    ctx_layout(&A, "downcast", Dn);
    Flat fd;
    flat_of(Dn, &fd);
    for (int k = 0; k < f.n; k++)
      CHECK(fd.s[k] == down.s[k] && fd.d[k] == down.d[k],
            "downcast leaf %d is %lld:%lld, expected %lld:%lld", k, (long long)fd.s[k],
            (long long)fd.d[k], (long long)down.s[k], (long long)down.d[k]);
    /* The same width is the identity, for any layout. */
    FlyLayout *W = gen_wild(&A, &r, true);
    FlyLayout *same = fly_layout_recast(&A, W, 8, 8);
    CHECK(same && fly_layout_equal(same, W), "recast to the same width changed %s",
          fly_layout_str(&A, W));
    session_end(&A);
  }
}

static void test_max_common_vector(void **state) {
  (void)state;
  const uint64_t seed = 0x3c7;
  int ok = 0, total = 2000, longer = 0;
  for (int it = 0; it < total; it++) {
    Rng r = rng_for(seed, it);
    FlyAlgebra A;
    session_begin(&A);
    ctx_begin("max_common_vector", seed, it);
    bool compact = rng_pct(&r, 70);
    FlyLayout *a, *b;
    int64_t n = 0;
    if (compact) { /* two bijections onto [0, size) of the same shape */
      Flat f;
      gen_leaves(&r, &f, size_cap(&r), 1);
      FlyLayout *S = nest_layout(&A, &r, &f);
      int64_t pa[MAXLEAF], pb[MAXLEAF];
      random_perm(&r, f.n, pa);
      for (int k = 0; k < f.n; k++)
        pb[k] = pa[k];
      if (rng_pct(&r, 70)) /* b differs from a in its slower modes */
        for (int k = 0; k < f.n; k++)
          if (pb[k] >= rng_range(&r, 0, f.n))
            pb[k] = f.n + rng_range(&r, 0, 2 * f.n);
      compact_by_order(&f, pa);
      a = relabel(&A, S, f.d);
      compact_by_order(&f, pb);
      b = relabel(&A, S, f.d);
      n = size_of(a);
    } else {
      a = gen_wild(&A, &r, false);
      b = rng_pct(&r, 50) ? a : gen_wild(&A, &r, false);
    }
    ctx_layout(&A, "a", a);
    ctx_layout(&A, "b", b);
    int64_t N = -1;
    bool got = fly_layout_max_common_vector(&A, a, b, &N);
    FlyLayout *R = fly_layout_max_common_layout(&A, a, b);
    ctx_layout(&A, "max_common_layout", R);
    if (!got || !R) {
      CHECK(!compact, "max_common_vector of two compact layouts failed: %s",
            fly_algebra_message(&A));
      session_end(&A);
      continue;
    }
    ok++;
    ctx_addf("\n    N = %lld", (long long)N);
    CHECK(N >= 1, "max_common_vector = %lld", (long long)N);
    CHECK(size_of(R) == N, "size(max_common_layout) = %lld, max_common_vector = %lld",
          (long long)size_of(R), (long long)N);
    int64_t *tr = table(&A, R, N);
    for (int64_t i = 0; i < N && N > 1; i++) {
      CHECK(eval1(&A, a, tr[i]) == i, "a(R(%lld)) = a(%lld) = %lld", (long long)i, (long long)tr[i],
            (long long)eval1(&A, a, tr[i]));
      CHECK(eval1(&A, b, tr[i]) == i, "b(R(%lld)) = b(%lld) = %lld", (long long)i, (long long)tr[i],
            (long long)eval1(&A, b, tr[i]));
    }
    if (compact) { /* the brute-force answer: where a^-1 and b^-1 agree */
      int64_t *ta = table(&A, a, n), *tb = table(&A, b, n);
      int64_t *ia = fly_alloc(&A, (size_t)n * sizeof *ia),
              *ib = fly_alloc(&A, (size_t)n * sizeof *ib);
      CHECK_OK(&A, ia && ib ? ia : NULL, "test allocation");
      for (int64_t i = 0; i < n; i++) {
        ia[ta[i]] = i;
        ib[tb[i]] = i;
      }
      int64_t brute = 0;
      while (brute < n && ia[brute] == ib[brute])
        brute++;
      if (brute == 0)
        brute = 1;
      CHECK(N == brute, "max_common_vector = %lld, but a^-1 and b^-1 agree on [0, %lld)",
            (long long)N, (long long)brute);
      int64_t self = -1;
      CHECK(fly_layout_max_common_vector(&A, a, a, &self) && self == n,
            "max_common_vector(a, a) = %lld, size(a) = %lld", (long long)self, (long long)n);
      longer += N > 1 && N < n;
    }
    session_end(&A);
  }
  print_message("max_common_vector: %d of %d answered, %d partial prefixes\n", ok, total, longer);
  assert_true(ok * 10 >= total * 7 && longer * 20 >= total);
}

/* ---- swizzles and composed layouts ------------------------------------------------ */

static FlySwizzle gen_swizzle(FlyAlgebra *A, Rng *r, int maxbits) {
  FlySwizzle s;
  for (;;) {
    int b = (int)rng_range(r, 0, 4), m = (int)rng_range(r, 0, 4);
    int mag = (int)rng_range(r, b, b + 3), sh = rng_pct(r, 30) ? -mag : mag;
    if (b + m + mag > maxbits)
      continue;
    CHECK(fly_swizzle_make(A, b, m, sh, &s), "S<%d,%d,%d>: %s", b, m, sh, fly_algebra_message(A));
    return s;
  }
}

static void test_swizzle(void **state) {
  (void)state;
  const uint64_t seed = 0x5a;
  for (int it = 0; it < 400; it++) {
    Rng r = rng_for(seed, it);
    FlyAlgebra A;
    session_begin(&A);
    ctx_begin("swizzle", seed, it);
    FlySwizzle s = gen_swizzle(&A, &r, 13);
    int mag = s.shift < 0 ? -s.shift : s.shift;
    int bits = s.bits + s.base + mag;
    ctx_addf("\n    S<%d,%d,%d>", s.bits, s.base, s.shift);
    int64_t n = (int64_t)1 << bits;
    unsigned char *seen = fly_alloc(&A, (size_t)n);
    CHECK_OK(&A, seen, "test allocation");
    uint64_t mask = ((uint64_t)1 << s.bits) - 1;
    int from = s.base + (s.shift > 0 ? s.shift : 0), to = s.base - (s.shift < 0 ? s.shift : 0);
    for (int64_t x = 0; x < n; x++) {
      int64_t y = fly_swizzle_apply(s, x);
      int64_t want = x ^ (int64_t)((((uint64_t)x >> from) & mask) << to);
      CHECK(y == want, "S(%lld) = %lld, expected %lld", (long long)x, (long long)y,
            (long long)want);
      CHECK(y >= 0 && y < n, "S(%lld) = %lld leaves [0, %lld)", (long long)x, (long long)y,
            (long long)n);
      CHECK(!seen[y], "S is not a bijection: %lld is hit twice", (long long)y);
      seen[y] = 1;
      CHECK(fly_swizzle_apply(s, y) == x, "S(S(%lld)) = %lld", (long long)x,
            (long long)fly_swizzle_apply(s, y));
    }
    /* Bits above the swizzle pass through. */
    for (int k = 0; k < 16; k++) {
      int64_t x = (int64_t)(rng_u64(&r) >> 3);
      CHECK(fly_swizzle_apply(s, fly_swizzle_apply(s, x)) == x, "not an involution at %lld",
            (long long)x);
      CHECK((fly_swizzle_apply(s, x) >> bits) == (x >> bits), "S changes bits above %d", bits);
    }
    /* Narrower elements: the swizzle moves up by log2 of the ratio. */
    for (int k = 1; k <= 2; k++) {
      FlySwizzle d, u;
      CHECK(fly_swizzle_recast(&A, s, 16, 16 >> k, &d), "downcast: %s", fly_algebra_message(&A));
      for (int64_t x = 0; x < (n << k); x += 1 + (x >> 6))
        CHECK(fly_swizzle_apply(d, x) ==
                  ((fly_swizzle_apply(s, x >> k) << k) | (x & ((1 << k) - 1))),
              "downcast by %d: S'(%lld) is not S of its element", 1 << k, (long long)x);
      CHECK(fly_swizzle_recast(&A, d, 16 >> k, 16, &u) && fly_swizzle_equal(u, s),
            "down and up again does not give S back");
    }
    session_end(&A);
  }
}

/* fly_swizzle_split: swizzle(x + c) = (swizzle(x + hi) ^ flip) + add + whole
   for every multiple x of 2^k, the first part a multiple of 2^j and add
   below 2^j, so the code generator may add add + whole to a pointer. */
static void test_swizzle_split(void **state) {
  (void)state;
  const uint64_t seed = 0x5b11;
  for (int it = 0; it < 400; it++) {
    Rng r = rng_for(seed, it);
    FlyAlgebra A;
    session_begin(&A);
    ctx_begin("swizzle_split", seed, it);
    FlySwizzle s = gen_swizzle(&A, &r, 13);
    int top = fly_swizzle_top(s), k = (int)rng_range(&r, 0, top);
    ctx_addf("\n    S<%d,%d,%d>, k = %d", s.bits, s.base, s.shift, k);
    for (int t = 0; t < 64; t++) {
      int64_t x = rng_range(&r, 0, 1 << 12) << k, c = rng_range(&r, 0, 1 << 15) - x / 2;
      if (x + c < 0)
        c = -x;
      FlySwizzleSplit sp = fly_swizzle_split(s, k, c);
      int64_t part = fly_swizzle_apply(s, x + sp.hi) ^ sp.flip;
      CHECK(sp.hi % ((int64_t)1 << k) == 0 && sp.whole % ((int64_t)1 << top) == 0,
            "c = %lld: hi %lld or whole %lld is not a multiple", (long long)c, (long long)sp.hi,
            (long long)sp.whole);
      CHECK(part % ((int64_t)1 << sp.j) == 0 && sp.add >= 0 && sp.add < ((int64_t)1 << sp.j),
            "x = %lld, c = %lld: %lld is not a multiple of 2^%d or add %lld is too large",
            (long long)x, (long long)c, (long long)part, sp.j, (long long)sp.add);
      CHECK(part + sp.add + sp.whole == fly_swizzle_apply(s, x + c),
            "x = %lld, c = %lld: the split gives %lld, the swizzle %lld", (long long)x,
            (long long)c, (long long)(part + sp.add + sp.whole),
            (long long)fly_swizzle_apply(s, x + c));
    }
    /* Where x is a multiple of the period, nothing of x is swizzled. */
    FlySwizzleSplit sp = fly_swizzle_split(s, top, 5);
    CHECK(sp.j == top && sp.flip == 0 && sp.hi == 0, "a multiple of the period still swizzles");
    session_end(&A);
  }
}

static void test_composed(void **state) {
  (void)state;
  const uint64_t seed = 0xc0de;
  for (int it = 0; it < 1200; it++) {
    Rng r = rng_for(seed, it);
    FlyAlgebra A;
    session_begin(&A);
    ctx_begin("composed", seed, it);
    FlySwizzle s = gen_swizzle(&A, &r, 20);
    FlyLayout *L = gen_wild(&A, &r, false);
    int64_t off = rng_range(&r, 0, 255);
    FlyComposed *C = fly_composed_make(&A, s, off, L);
    CHECK_OK(&A, C, "fly_composed_make");
    ctx_addf("\n    C = %s", fly_composed_str(&A, C));
    int64_t n = size_of(L);
    int64_t *tl = table(&A, L, n);
    for (int64_t k = 0; k < (n < SAMPLES ? n : SAMPLES); k++) {
      int64_t i = n <= SAMPLES ? k : rng_range(&r, 0, n - 1), v = -1, w = -1;
      int64_t want = fly_swizzle_apply(s, off + tl[i]);
      CHECK(fly_composed_eval(&A, C, i, &v) && v == want, "C(%lld) = %lld, expected %lld",
            (long long)i, (long long)v, (long long)want);
      FlyTuple *c = fly_tuple_idx2crd(&A, i, L->shape);
      CHECK(fly_composed_crd2idx(&A, c, C, &w) && w == want, "C(%s) = %lld, expected %lld",
            fly_tuple_str(&A, c), (long long)w, (long long)want);
    }
    Parts p = {0, 0, {NULL}, {0}};
    FlyTuple *pc = gen_pattern(&A, &r, L->shape, rng_range(&r, 0, n - 1), &p);
    ctx_tuple(&A, "coord", pc);
    FlyComposed *S = fly_composed_slice(&A, pc, C);
    CHECK_OK(&A, S, "fly_composed_slice");
    ctx_addf("\n    slice = %s", fly_composed_str(&A, S));
    CHECK(fly_swizzle_equal(S->swizzle, s), "slicing changed the swizzle");
    int64_t ns = size_of(S->layout);
    for (int64_t k = 0; k < (ns < 128 ? ns : 128); k++) {
      int64_t j = ns <= 128 ? k : rng_range(&r, 0, ns - 1), v[MAXLEAF], full = -1, part = -1;
      split_index(&p, j, v);
      int at = 0;
      FlyTuple *cf = fill(&A, pc, v, &at);
      CHECK(fly_composed_crd2idx(&A, cf, C, &full) && fly_composed_eval(&A, S, j, &part) &&
                full == part,
            "C(%s) = %lld but slice(%lld) = %lld (%s)", fly_tuple_str(&A, cf), (long long)full,
            (long long)j, (long long)part, fly_algebra_message(&A));
    }
    session_end(&A);
  }
}

/* ---- identity layouts ---------------------------------------------------------- */

/* A compact layout of shape: column-major, row-major or in a random order. */
static FlyLayout *gen_compact(FlyAlgebra *A, Rng *r, FlyTuple *shape) {
  int kind = (int)rng_range(r, 0, 2);
  if (kind == 0)
    return fly_layout_col_major(A, shape);
  if (kind == 1)
    return fly_layout_row_major(A, shape);
  int64_t perm[MAXLEAF];
  int k = 0;
  random_perm(r, fly_tuple_leaf_count(shape), perm);
  return fly_layout_ordered(A, shape, with_leaves(A, shape, perm, &k));
}

/* What an operation made of the identity layout of a shape and of a data
 * layout L of that shape agree: for each i, the coordinate RI gives (after
 * its offset oi, completed with zeros to the shape) is where L has the
 * index RL gives (after its offset ol). */
static void check_same_coords(FlyAlgebra *A, const FlyLayout *L, const FlyTuple *zero,
                              const FlyLayout *RI, const FlyTuple *oi, const FlyLayout *RL,
                              int64_t ol, const char *what) {
  int64_t n = size_of(RI);
  CHECK(n == size_of(RL), "%s: sizes %lld and %lld differ", what, (long long)n,
        (long long)size_of(RL));
  int64_t *tl = table(A, RL, n);
  for (int64_t i = 0; i < n; i++) {
    FlyTuple *v = fly_layout_value_at(A, RI, i);
    FlyTuple *c = fly_tuple_arith(A, FLY_ARITH_ADD, zero, fly_tuple_arith(A, FLY_ARITH_ADD, oi, v));
    CHECK_OK(A, c, "the coordinate of the identity's value");
    int64_t got = -1;
    CHECK(fly_layout_crd2idx(A, c, L, &got) && got == ol + tl[i],
          "%s(%lld): the identity gives %s, where L is %lld, but L's result is %lld (%s)", what,
          (long long)i, fly_tuple_str(A, c), (long long)got, (long long)(ol + tl[i]),
          fly_algebra_message(A));
  }
}

static void test_identity(void **state) {
  (void)state;
  const uint64_t seed = 0x1de;
  int composed = 0, divided = 0, sliced = 0, total = 1500;
  for (int it = 0; it < total; it++) {
    Rng r = rng_for(seed, it);
    FlyAlgebra A;
    session_begin(&A);
    ctx_begin("identity", seed, it);
    Flat f;
    gen_leaves(&r, &f, rng_pct(&r, 80) ? 256 : 2048, 1);
    FlyTuple *shape = nest_layout(&A, &r, &f)->shape;
    FlyLayout *I = fly_layout_identity(&A, shape);
    FlyLayout *L = gen_compact(&A, &r, shape);
    CHECK_OK(&A, I && L ? I : NULL, "the identity and a compact layout");
    ctx_layout(&A, "identity", I);
    ctx_layout(&A, "L", L);
    FlyTuple *zero = fly_layout_coprofile(&A, I), *coshape = fly_layout_coshape(&A, I);
    CHECK_OK(&A, zero && coshape ? zero : NULL, "coprofile and coshape");
    CHECK(fly_tuple_congruent(zero, shape) && fly_tuple_equal(coshape, shape),
          "coprofile %s and coshape %s of the identity of %s", fly_tuple_str(&A, zero),
          fly_tuple_str(&A, coshape), fly_tuple_str(&A, shape));

    /* Every value is the coordinate idx2crd gives, and maps to itself. */
    int64_t n = size_of(I);
    FlyLayout *C = fly_layout_coalesce(&A, I);
    CHECK_OK(&A, C, "coalesce of the identity");
    for (int64_t i = 0; i < n; i++) {
      FlyTuple *v = fly_layout_value_at(&A, I, i), *c = fly_tuple_idx2crd(&A, i, shape);
      FlyTuple *back = c ? fly_layout_value(&A, c, I) : NULL;
      FlyTuple *cv = fly_tuple_arith(&A, FLY_ARITH_ADD, zero, fly_layout_value_at(&A, C, i));
      CHECK_OK(&A, v && back && cv ? v : NULL, "values of the identity");
      CHECK(fly_tuple_equal(v, c) && fly_tuple_equal(back, c) && fly_tuple_equal(cv, c),
            "identity(%lld) = %s, of its coordinate %s, coalesced %s; idx2crd gives %s",
            (long long)i, fly_tuple_str(&A, v), fly_tuple_str(&A, back), fly_tuple_str(&A, cv),
            fly_tuple_str(&A, c));
    }

    /* Composition with a tile of the domain. */
    FlyLayout *B = gen_tile(&A, &r, shape, false, rng_pct(&r, 20));
    ctx_layout(&A, "B", B);
    FlyLayout *RI = fly_layout_composition(&A, I, B), *RL = fly_layout_composition(&A, L, B);
    fly_algebra_clear_error(&A);
    if (RI && RL) {
      check_same_coords(&A, L, zero, RI, zero, RL, 0, "composition");
      composed++;
    }

    /* The divides, by the same tiler. */
    FlyTiler *T = gen_tiler(&A, &r, I, 0, rng_pct(&r, 40));
    ctx_tiler(&A, "T", T);
    FlyLayout *DI = fly_layout_logical_divide(&A, I, T), *DL = fly_layout_logical_divide(&A, L, T);
    FlyLayout *ZI = fly_layout_zipped_divide(&A, I, T), *ZL = fly_layout_zipped_divide(&A, L, T);
    fly_algebra_clear_error(&A);
    if (DI && DL && ZI && ZL) {
      ctx_layout(&A, "divided identity", DI);
      check_same_coords(&A, L, zero, DI, zero, DL, 0, "logical_divide");
      check_same_coords(&A, L, zero, ZI, zero, ZL, 0, "zipped_divide");
      divided++;
    }

    /* Slices, whose offsets are a coordinate and an index. */
    Parts p = {0, 0, {NULL}, {0}};
    FlyTuple *crd = gen_pattern(&A, &r, shape, rng_range(&r, 0, n - 1), &p);
    ctx_tuple(&A, "coord", crd);
    FlyTuple *oi = NULL;
    int64_t ol = -1;
    FlyLayout *SI = fly_layout_slice_and_offset(&A, crd, I, &oi);
    FlyLayout *SL = fly_layout_slice(&A, crd, L, &ol);
    CHECK_OK(&A, SI && SL ? SI : NULL, "slices");
    check_same_coords(&A, L, zero, SI, oi, SL, ol, "slice");
    sliced++;
    session_end(&A);
  }
  print_message("identity: %d compositions, %d divides and %d slices of %d shapes agreed\n",
                composed, divided, sliced, total);
  CHECK(composed > total * 9 / 10 && divided > total * 9 / 10 && sliced == total,
        "too few admissible cases: %d compositions, %d divides, %d slices of %d", composed, divided,
        sliced, total);
}

/* ---- compact layouts after others, and coordinates of indices ------------------- */

/* Whether t[0..n) hits every integer of [0, count) (and nothing else). */
static bool covers(FlyAlgebra *A, const int64_t *t, int64_t n, int64_t count) {
  int64_t *u;
  int64_t m = unique(A, t, n, &u);
  return m == count && (m == 0 || (u[0] == 0 && u[m - 1] == count - 1));
}

static void test_like_and_coords(void **state) {
  (void)state;
  const uint64_t seed = 0x11ce;
  int tiled = 0, total = 1500;
  for (int it = 0; it < total; it++) {
    Rng r = rng_for(seed, it);
    FlyAlgebra A;
    session_begin(&A);
    ctx_begin("like_and_coords", seed, it);
    FlyLayout *L = gen_wild(&A, &r, true);
    ctx_layout(&A, "L", L);
    int64_t n = size_of(L);
    Flat f, g;
    flat_of(L, &f);

    /* make_layout_like: compact over the leaves that move, in L's order. */
    FlyLayout *LL = fly_layout_like(&A, L);
    CHECK_OK(&A, LL, "make_layout_like");
    ctx_layout(&A, "layout_like", LL);
    flat_of(LL, &g);
    CHECK(fly_tuple_equal(LL->shape, L->shape), "the shape changed");
    int64_t moving = 1;
    for (int i = 0; i < f.n; i++) {
      if (f.d[i] != 0 && f.s[i] > 1)
        moving *= f.s[i];
      CHECK(f.d[i] != 0 || g.d[i] == 0, "leaf %d of stride 0 got stride %lld", i,
            (long long)g.d[i]);
      for (int j = 0; j < f.n; j++)
        if (f.d[i] != 0 && f.d[j] != 0 && f.s[i] > 1 && f.s[j] > 1 && f.d[i] < f.d[j])
          CHECK(g.d[i] < g.d[j], "leaves %d and %d changed order", i, j);
    }
    CHECK(covers(&A, table(&A, LL, n), n, moving), "layout_like is not compact");

    /* make_fragment_like: compact but for mode 0's broadcast leaves. */
    FlyLayout *F = fly_layout_fragment_like(&A, L);
    CHECK_OK(&A, F, "make_fragment_like");
    ctx_layout(&A, "fragment_like", F);
    CHECK(fly_tuple_equal(F->shape, L->shape), "the fragment's shape changed");
    int64_t broadcast = 1;
    if (fly_layout_rank(L) > 1) {
      Flat m0;
      flat_of(mode(&A, L, 0), &m0);
      for (int i = 0; i < m0.n; i++)
        broadcast *= m0.d[i] == 0 ? m0.s[i] : 1;
    }
    CHECK(covers(&A, table(&A, F, n), n, n / broadcast), "the fragment is not compact");

    /* The coordinates of a compact layout's indices. */
    FlyLayout *C = gen_compact(&A, &r, L->shape);
    CHECK_OK(&A, C, "a compact layout");
    ctx_layout(&A, "compact", C);
    int64_t *tc = table(&A, C, n);
    for (int64_t i = 0; i < n; i++) {
      FlyTuple *h = fly_layout_hier_coord(&A, C, tc[i]), *want = fly_tuple_idx2crd(&A, i, C->shape);
      FlyTuple *flat = fly_layout_flat_coord(&A, C, tc[i]);
      int64_t one = -1, back = -1;
      CHECK_OK(&A, h && want && flat ? h : NULL, "get_hier_coord and get_flat_coord");
      CHECK(fly_tuple_equal(h, want) && fly_layout_1d_coord(&A, C, tc[i], &one) && one == i &&
                fly_layout_crd2idx(&A, flat, C, &back) && back == tc[i],
            "index %lld: hier %s (want %s), 1d %lld, flat %s", (long long)tc[i],
            fly_tuple_str(&A, h), fly_tuple_str(&A, want), (long long)one, fly_tuple_str(&A, flat));
    }

    /* tile_to_shape of a compact block fills the target, compactly. */
    FlyTuple *block_shape = fly_tuple_is_seq(C->shape) && C->shape->n <= 3 ? C->shape : NULL;
    if (block_shape && n <= 256) {
      int rank = block_shape->n + (int)rng_range(&r, 0, 1);
      FlyTuple *e[4];
      int64_t want = 1;
      for (int i = 0; i < rank; i++) {
        int64_t m = i < block_shape->n ? tuple_size(block_shape->elem[i]) : 1;
        int64_t k = rng_range(&r, 1, 3);
        e[i] = fly_tuple_int(&A, m * k);
        want *= m * k;
      }
      FlyTuple *target = fly_tuple_seq(&A, rank, e);
      ctx_tuple(&A, "target", target);
      FlyLayout *T = fly_layout_tile_to_shape(&A, C, target, NULL);
      CHECK_OK(&A, T, "tile_to_shape");
      ctx_layout(&A, "tiled", T);
      FlyTuple *sizes = fly_tuple_product_each(&A, T->shape);
      CHECK(sizes && fly_tuple_equal(sizes, target), "tile_to_shape gave the sizes %s",
            fly_tuple_str(&A, sizes));
      CHECK(covers(&A, table(&A, T, want), want, want), "tile_to_shape is not compact");
      tiled++;
    }
    session_end(&A);
  }
  print_message("like_and_coords: %d of %d blocks tiled to a shape\n", tiled, total);
  CHECK(tiled > total / 4, "too few blocks tiled: %d", tiled);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_text_roundtrip),     cmocka_unit_test(test_eval_crd2idx),
      cmocka_unit_test(test_coalesce),           cmocka_unit_test(test_coalesce_filter_by),
      cmocka_unit_test(test_composition_random), cmocka_unit_test(test_composition_admissible),
      cmocka_unit_test(test_complement),         cmocka_unit_test(test_right_inverse),
      cmocka_unit_test(test_left_inverse),       cmocka_unit_test(test_logical_divide),
      cmocka_unit_test(test_logical_product),    cmocka_unit_test(test_blocked_raked_product),
      cmocka_unit_test(test_slice_dice),         cmocka_unit_test(test_recast),
      cmocka_unit_test(test_max_common_vector),  cmocka_unit_test(test_swizzle),
      cmocka_unit_test(test_swizzle_split),      cmocka_unit_test(test_composed),
      cmocka_unit_test(test_identity),           cmocka_unit_test(test_like_and_coords),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
