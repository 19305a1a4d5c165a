/* fly_tuple.c — integer tuples: construction, shape arithmetic, printing. */
#include "fly_tuple.h"

#include <string.h>

#include "fly_strbuf.h"

static FlyTuple *new_tuple(FlyAlgebra *A, FlyTupleKind kind) {
  FlyTuple *t = fly_alloc(A, sizeof *t);
  if (t)
    t->kind = kind;
  return t;
}

FlyTuple *fly_tuple_int(FlyAlgebra *A, int64_t value) {
  FlyTuple *t = new_tuple(A, FLY_TUPLE_INT);
  if (t)
    t->value = value;
  return t;
}

FlyTuple *fly_tuple_underscore(FlyAlgebra *A) { return new_tuple(A, FLY_TUPLE_UNDERSCORE); }

FlyTuple *fly_tuple_dynamic(FlyAlgebra *A, const void *sym) {
  FlyTuple *t = new_tuple(A, FLY_TUPLE_DYNAMIC);
  if (t)
    t->sym = sym;
  return t;
}

FlyTuple *fly_tuple_seq(FlyAlgebra *A, int n, FlyTuple *const *elems) {
  if (n < 0 || n > FLY_MAX_MODES)
    return fly_fail(A, "too many modes in a tuple (limit is %d)", FLY_MAX_MODES);
  for (int i = 0; i < n; i++)
    if (!elems[i])
      return NULL;
  FlyTuple *t = new_tuple(A, FLY_TUPLE_SEQ);
  if (!t)
    return NULL;
  if (n > 0) {
    t->elem = fly_alloc(A, (size_t)n * sizeof *t->elem);
    if (!t->elem)
      return NULL;
    memcpy(t->elem, elems, (size_t)n * sizeof *t->elem);
  }
  t->n = n;
  return t;
}

FlyTuple *fly_tuple_pair(FlyAlgebra *A, FlyTuple *a, FlyTuple *b) {
  FlyTuple *e[2] = {a, b};
  return fly_tuple_seq(A, 2, e);
}

FlyTuple *fly_tuple_basis(FlyAlgebra *A, int64_t scale, int n, const int *modes) {
  if (n < 1 || n > FLY_MAX_DEPTH)
    return fly_fail(A, "a basis element has a path of 1 to %d modes, not %d", FLY_MAX_DEPTH, n);
  for (int i = 0; i < n; i++)
    if (modes[i] < 0 || modes[i] >= FLY_MAX_MODES)
      return fly_fail(A, "basis mode %d is out of range (0 to %d)", modes[i], FLY_MAX_MODES - 1);
  FlyTuple *t = new_tuple(A, FLY_TUPLE_BASIS);
  int *path = fly_alloc(A, (size_t)n * sizeof *path);
  if (!t || !path)
    return NULL;
  memcpy(path, modes, (size_t)n * sizeof *path);
  t->value = scale;
  t->nmodes = n;
  t->modes = path;
  return t;
}

bool fly_tuple_has_basis(const FlyTuple *t) {
  if (t->kind == FLY_TUPLE_BASIS)
    return true;
  for (int i = 0; t->kind == FLY_TUPLE_SEQ && i < t->n; i++)
    if (fly_tuple_has_basis(t->elem[i]))
      return true;
  return false;
}

bool fly_tuple_same_basis(const FlyTuple *a, const FlyTuple *b) {
  return a->kind == FLY_TUPLE_BASIS && b->kind == FLY_TUPLE_BASIS && a->nmodes == b->nmodes &&
         memcmp(a->modes, b->modes, (size_t)a->nmodes * sizeof *a->modes) == 0;
}

int fly_tuple_rank(const FlyTuple *t) { return t->kind == FLY_TUPLE_SEQ ? t->n : 1; }

int fly_tuple_depth(const FlyTuple *t) {
  if (t->kind != FLY_TUPLE_SEQ)
    return 0;
  int d = 0;
  for (int i = 0; i < t->n; i++) {
    int di = fly_tuple_depth(t->elem[i]);
    if (di > d)
      d = di;
  }
  return d + 1;
}

FlyTuple *fly_tuple_get(FlyAlgebra *A, FlyTuple *t, int i) {
  if (!t)
    return NULL;
  int r = fly_tuple_rank(t);
  if (i < 0 || i >= r)
    return fly_fail(A, "mode %d out of range: the tuple has rank %d", i, r);
  return t->kind == FLY_TUPLE_SEQ ? t->elem[i] : t;
}

bool fly_tuple_product(FlyAlgebra *A, const FlyTuple *t, int64_t *out) {
  switch (t->kind) {
  case FLY_TUPLE_INT:
    *out = t->value;
    return true;
  case FLY_TUPLE_UNDERSCORE:
    fly_fail(A, "'_' has no size");
    return false;
  case FLY_TUPLE_DYNAMIC:
    fly_fail(A, "'?' is known only when the kernel runs");
    return false;
  case FLY_TUPLE_BASIS:
    fly_fail(A, "a basis element such as %s is a stride, not a size", fly_tuple_str(A, t));
    return false;
  case FLY_TUPLE_SEQ:
    break;
  }
  int64_t p = 1;
  for (int i = 0; i < t->n; i++) {
    int64_t e;
    if (!fly_tuple_product(A, t->elem[i], &e) || !fly_mul(A, p, e, &p))
      return false;
  }
  *out = p;
  return true;
}

int fly_tuple_leaf_count(const FlyTuple *t) {
  if (t->kind != FLY_TUPLE_SEQ)
    return 1;
  int n = 0;
  for (int i = 0; i < t->n; i++)
    n += fly_tuple_leaf_count(t->elem[i]);
  return n;
}

static void collect_leaves(FlyTuple *t, FlyTuple **out, int *n) {
  if (t->kind != FLY_TUPLE_SEQ) {
    out[(*n)++] = t;
    return;
  }
  for (int i = 0; i < t->n; i++)
    collect_leaves(t->elem[i], out, n);
}

FlyTuple *fly_tuple_flatten(FlyAlgebra *A, FlyTuple *t) {
  if (!t)
    return NULL;
  int count = fly_tuple_leaf_count(t);
  if (count > FLY_MAX_MODES)
    return fly_fail(A, "too many modes in a tuple (limit is %d)", FLY_MAX_MODES);
  FlyTuple **leaves = fly_alloc(A, (size_t)(count ? count : 1) * sizeof *leaves);
  if (!leaves)
    return NULL;
  int n = 0;
  collect_leaves(t, leaves, &n);
  return fly_tuple_seq(A, n, leaves);
}

FlyTuple *fly_tuple_unwrap(FlyTuple *t) {
  while (t && t->kind == FLY_TUPLE_SEQ && t->n == 1)
    t = t->elem[0];
  return t;
}

bool fly_tuple_equal(const FlyTuple *a, const FlyTuple *b) {
  if (a->kind != b->kind)
    return false;
  if (a->kind == FLY_TUPLE_INT)
    return a->value == b->value;
  if (a->kind == FLY_TUPLE_UNDERSCORE)
    return true;
  if (a->kind == FLY_TUPLE_DYNAMIC)
    return a->sym == b->sym;
  if (a->kind == FLY_TUPLE_BASIS)
    return a->value == b->value && fly_tuple_same_basis(a, b);
  if (a->n != b->n)
    return false;
  for (int i = 0; i < a->n; i++)
    if (!fly_tuple_equal(a->elem[i], b->elem[i]))
      return false;
  return true;
}

bool fly_tuple_congruent(const FlyTuple *a, const FlyTuple *b) {
  bool sa = a->kind == FLY_TUPLE_SEQ, sb = b->kind == FLY_TUPLE_SEQ;
  if (sa != sb)
    return false;
  if (!sa)
    return true;
  if (a->n != b->n)
    return false;
  for (int i = 0; i < a->n; i++)
    if (!fly_tuple_congruent(a->elem[i], b->elem[i]))
      return false;
  return true;
}

bool fly_tuple_has_underscore(const FlyTuple *t) {
  if (t->kind == FLY_TUPLE_UNDERSCORE)
    return true;
  if (t->kind == FLY_TUPLE_SEQ)
    for (int i = 0; i < t->n; i++)
      if (fly_tuple_has_underscore(t->elem[i]))
        return true;
  return false;
}

bool fly_tuple_is_static(const FlyTuple *t) {
  if (t->kind == FLY_TUPLE_DYNAMIC)
    return false;
  for (int i = 0; t->kind == FLY_TUPLE_SEQ && i < t->n; i++)
    if (!fly_tuple_is_static(t->elem[i]))
      return false;
  return true;
}

int fly_tuple_leaves(FlyTuple *t, FlyTuple **out, int cap) {
  if (t->kind != FLY_TUPLE_SEQ) {
    if (cap > 0)
      out[0] = t;
    return 1;
  }
  int n = 0;
  for (int i = 0; i < t->n; i++)
    n += fly_tuple_leaves(t->elem[i], out + (n < cap ? n : cap), n < cap ? cap - n : 0);
  return n;
}

/* Strides of a compact layout: walk the modes in order (column-major) or in
 * reverse (row-major), handing each the running product. */
static FlyTuple *compact(FlyAlgebra *A, FlyTuple *shape, int64_t *current, bool reverse,
                         bool unit_zero) {
  if (shape->kind != FLY_TUPLE_SEQ) {
    if (unit_zero && shape->value == 1)
      return fly_tuple_int(A, 0);
    FlyTuple *d = fly_tuple_int(A, *current);
    if (!d || !fly_mul(A, *current, shape->value, current))
      return NULL;
    return d;
  }
  FlyTuple **e = fly_alloc(A, (size_t)(shape->n ? shape->n : 1) * sizeof *e);
  if (!e)
    return NULL;
  for (int k = 0; k < shape->n; k++) {
    int i = reverse ? shape->n - 1 - k : k;
    e[i] = compact(A, shape->elem[i], current, reverse, unit_zero);
    if (!e[i])
      return NULL;
  }
  return fly_tuple_seq(A, shape->n, e);
}

FlyTuple *fly_tuple_prefix_product(FlyAlgebra *A, FlyTuple *shape, int64_t init) {
  if (!shape)
    return NULL;
  return compact(A, shape, &init, false, false);
}

FlyTuple *fly_tuple_suffix_product(FlyAlgebra *A, FlyTuple *shape, int64_t init) {
  if (!shape)
    return NULL;
  return compact(A, shape, &init, true, false);
}

FlyTuple *fly_tuple_compact_strides(FlyAlgebra *A, FlyTuple *shape, bool row_major) {
  if (!shape)
    return NULL;
  int64_t current = 1;
  return compact(A, shape, &current, row_major, true);
}

static int64_t ceil_div_int(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* rest carries what the elements before have not yet divided away. */
static FlyTuple *ceil_div_rest(FlyAlgebra *A, FlyTuple *a, int64_t *rest) {
  if (a->kind != FLY_TUPLE_SEQ) {
    int64_t q = ceil_div_int(a->value, *rest);
    *rest = ceil_div_int(*rest, a->value);
    return fly_tuple_int(A, q);
  }
  FlyTuple **e = fly_alloc(A, (size_t)(a->n ? a->n : 1) * sizeof *e);
  if (!e)
    return NULL;
  for (int i = 0; i < a->n; i++) {
    int64_t r = *rest, p;
    e[i] = ceil_div_rest(A, a->elem[i], &r);
    if (!e[i] || !fly_tuple_product(A, a->elem[i], &p))
      return NULL;
    *rest = ceil_div_int(*rest, p);
  }
  return fly_tuple_seq(A, a->n, e);
}

FlyTuple *fly_tuple_ceil_div(FlyAlgebra *A, FlyTuple *a, int64_t b) {
  if (!a)
    return NULL;
  if (b <= 0)
    return fly_fail(A, "ceil_div by %lld: the divisor must be positive", (long long)b);
  return ceil_div_rest(A, a, &b);
}

/* Each leaf takes (idx / stride) % shape with compact column-major strides;
 * the very last leaf takes idx / stride so nothing past the size is lost. */
static FlyTuple *idx2crd_rec(FlyAlgebra *A, int64_t idx, FlyTuple *shape, int64_t *stride,
                             bool last) {
  if (shape->kind != FLY_TUPLE_SEQ) {
    int64_t c = idx / *stride;
    if (!last)
      c %= shape->value;
    if (!fly_mul(A, *stride, shape->value, stride))
      return NULL;
    return fly_tuple_int(A, c);
  }
  FlyTuple **e = fly_alloc(A, (size_t)(shape->n ? shape->n : 1) * sizeof *e);
  if (!e)
    return NULL;
  for (int i = 0; i < shape->n; i++) {
    e[i] = idx2crd_rec(A, idx, shape->elem[i], stride, last && i == shape->n - 1);
    if (!e[i])
      return NULL;
  }
  return fly_tuple_seq(A, shape->n, e);
}

FlyTuple *fly_tuple_idx2crd(FlyAlgebra *A, int64_t idx, FlyTuple *shape) {
  if (!shape)
    return NULL;
  if (idx < 0)
    return fly_fail(A, "idx2crd of a negative index %lld", (long long)idx);
  if (fly_tuple_has_underscore(shape))
    return fly_fail(A, "idx2crd: '_' is not a shape");
  int64_t stride = 1;
  return idx2crd_rec(A, idx, shape, &stride, true);
}

static void put_tuple(FlyStrBuf *sb, const FlyTuple *t) {
  switch (t->kind) {
  case FLY_TUPLE_INT:
    fly_sb_int(sb, t->value);
    return;
  case FLY_TUPLE_UNDERSCORE:
    fly_sb_putc(sb, '_');
    return;
  case FLY_TUPLE_DYNAMIC:
    fly_sb_putc(sb, '?');
    return;
  case FLY_TUPLE_BASIS: /* CuTe prints the innermost mode first: E<1,0> is 1@0@1 */
    fly_sb_int(sb, t->value);
    for (int i = t->nmodes - 1; i >= 0; i--) {
      fly_sb_putc(sb, '@');
      fly_sb_int(sb, t->modes[i]);
    }
    return;
  case FLY_TUPLE_SEQ:
    fly_sb_putc(sb, '(');
    for (int i = 0; i < t->n; i++) {
      if (i)
        fly_sb_putc(sb, ',');
      put_tuple(sb, t->elem[i]);
    }
    fly_sb_putc(sb, ')');
    return;
  }
}

char *fly_tuple_str(FlyAlgebra *A, const FlyTuple *t) {
  if (!t)
    return NULL;
  FlyStrBuf sb;
  fly_sb_init(&sb, A);
  put_tuple(&sb, t);
  return fly_sb_finish(&sb);
}
