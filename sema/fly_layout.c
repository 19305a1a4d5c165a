/* fly_layout.c — layouts: construction, queries, modes, coordinates, text. */
#include "fly_layout.h"

#include <inttypes.h>
#include <string.h>

#include "fly_layout_internal.h"
#include "fly_strbuf.h"

/* ---- flat mode lists ------------------------------------------------- */

bool fly_flat_init(FlyAlgebra *A, FlyFlat *f, int cap) {
  if (cap < 1)
    cap = 1;
  f->n = 0;
  f->cap = cap;
  f->shape = fly_alloc(A, (size_t)cap * sizeof *f->shape);
  f->stride = fly_alloc(A, (size_t)cap * sizeof *f->stride);
  f->basis = fly_alloc(A, (size_t)cap * sizeof *f->basis);
  return f->shape && f->stride && f->basis;
}

bool fly_flat_push_basis(FlyAlgebra *A, FlyFlat *f, int64_t shape, int64_t stride,
                         const FlyTuple *basis) {
  if (f->n >= f->cap || f->n >= FLY_MAX_MODES) {
    fly_fail(A, "too many modes in a layout (limit is %d)", FLY_MAX_MODES);
    return false;
  }
  f->shape[f->n] = shape;
  f->stride[f->n] = stride;
  f->basis[f->n] = basis;
  f->n++;
  return true;
}

bool fly_flat_push(FlyAlgebra *A, FlyFlat *f, int64_t shape, int64_t stride) {
  return fly_flat_push_basis(A, f, shape, stride, NULL);
}

bool fly_flat_same_direction(const FlyFlat *f, int i, const FlyFlat *g, int j) {
  const FlyTuple *a = f->basis[i], *b = g->basis[j];
  return a == b || (a && b && fly_tuple_same_basis(a, b));
}

static bool flat_collect(FlyAlgebra *A, const FlyTuple *s, const FlyTuple *d, FlyFlat *f) {
  if (s->kind != FLY_TUPLE_SEQ)
    return fly_flat_push_basis(A, f, s->value, d->value, d->kind == FLY_TUPLE_BASIS ? d : NULL);
  for (int i = 0; i < s->n; i++)
    if (!flat_collect(A, s->elem[i], d->elem[i], f))
      return false;
  return true;
}

bool fly_flat_of(FlyAlgebra *A, const FlyLayout *L, FlyFlat *out) {
  int n = fly_tuple_leaf_count(L->shape);
  if (n > FLY_MAX_MODES) {
    fly_fail(A, "too many modes in a layout (limit is %d)", FLY_MAX_MODES);
    return false;
  }
  return fly_flat_init(A, out, n) && flat_collect(A, L->shape, L->stride, out);
}

FlyLayout *fly_layout_leaf(FlyAlgebra *A, int64_t shape, int64_t stride) {
  return fly_layout_raw(A, fly_tuple_int(A, shape), fly_tuple_int(A, stride));
}

static FlyTuple *flat_stride(FlyAlgebra *A, const FlyFlat *f, int i) {
  const FlyTuple *b = f->basis[i];
  return b ? fly_tuple_basis(A, f->stride[i], b->nmodes, b->modes) : fly_tuple_int(A, f->stride[i]);
}

FlyLayout *fly_flat_layout(FlyAlgebra *A, const FlyFlat *f) {
  if (f->n == 0)
    return fly_layout_leaf(A, 1, 0);
  if (f->n == 1)
    return fly_layout_raw(A, fly_tuple_int(A, f->shape[0]), flat_stride(A, f, 0));
  FlyTuple **s = fly_alloc(A, (size_t)f->n * sizeof *s);
  FlyTuple **d = fly_alloc(A, (size_t)f->n * sizeof *d);
  if (!s || !d)
    return NULL;
  for (int i = 0; i < f->n; i++) {
    s[i] = fly_tuple_int(A, f->shape[i]);
    d[i] = flat_stride(A, f, i);
  }
  return fly_layout_raw(A, fly_tuple_seq(A, f->n, s), fly_tuple_seq(A, f->n, d));
}

/* ---- construction ---------------------------------------------------- */

FlyLayout *fly_layout_raw(FlyAlgebra *A, FlyTuple *shape, FlyTuple *stride) {
  if (!shape || !stride)
    return NULL;
  FlyLayout *L = fly_alloc(A, sizeof *L);
  if (L) {
    L->shape = shape;
    L->stride = stride;
  }
  return L;
}

static bool shape_is_valid(FlyAlgebra *A, const FlyTuple *s) {
  switch (s->kind) {
  case FLY_TUPLE_INT:
    if (s->value < 1) {
      fly_fail(A, "shape %lld is not positive", (long long)s->value);
      return false;
    }
    return true;
  case FLY_TUPLE_UNDERSCORE:
    fly_fail(A, "'_' is not a shape");
    return false;
  case FLY_TUPLE_DYNAMIC: /* the algebra computes on static layouts only */
    fly_fail(A, "'?' is known only when the kernel runs");
    return false;
  case FLY_TUPLE_BASIS: {
    char *t = fly_tuple_str(A, s);
    fly_fail(A, "the basis element %s is a stride, not a shape", t ? t : "?");
    return false;
  }
  case FLY_TUPLE_SEQ:
    for (int i = 0; i < s->n; i++)
      if (!shape_is_valid(A, s->elem[i]))
        return false;
    return true;
  }
  return false;
}

FlyLayout *fly_layout_make(FlyAlgebra *A, FlyTuple *shape, FlyTuple *stride) {
  if (!shape || !stride)
    return NULL;
  if (!fly_tuple_congruent(shape, stride)) {
    char *s = fly_tuple_str(A, shape), *d = fly_tuple_str(A, stride);
    return fly_fail(A, "shape %s and stride %s are not congruent", s ? s : "?", d ? d : "?");
  }
  if (!shape_is_valid(A, shape))
    return NULL;
  if (fly_tuple_has_underscore(stride))
    return fly_fail(A, "'_' is not a stride");
  if (!fly_tuple_is_static(stride))
    return fly_fail(A, "'?' is known only when the kernel runs");
  if (!fly_stride_coprofile(A, stride)) /* basis elements must add up */
    return NULL;
  int64_t size;
  if (!fly_tuple_product(A, shape, &size))
    return NULL;
  return fly_layout_raw(A, shape, stride);
}

FlyLayout *fly_layout_col_major(FlyAlgebra *A, FlyTuple *shape) {
  return fly_layout_make(A, shape, fly_tuple_compact_strides(A, shape, false));
}

FlyLayout *fly_layout_row_major(FlyAlgebra *A, FlyTuple *shape) {
  return fly_layout_make(A, shape, fly_tuple_compact_strides(A, shape, true));
}

/* Shape products at the leaves of order (order may be coarser than shape). */
static bool product_like(FlyAlgebra *A, const FlyTuple *shape, const FlyTuple *order,
                         FlyFlat *out) {
  if (order->kind == FLY_TUPLE_SEQ) {
    if (shape->kind != FLY_TUPLE_SEQ || shape->n != order->n) {
      fly_fail(A, "make_ordered_layout: the order does not match the shape's modes");
      return false;
    }
    for (int i = 0; i < order->n; i++)
      if (!product_like(A, shape->elem[i], order->elem[i], out))
        return false;
    return true;
  }
  if (order->kind != FLY_TUPLE_INT) {
    fly_fail(A, "make_ordered_layout: '_' is not an order");
    return false;
  }
  int64_t p;
  return fly_tuple_product(A, shape, &p) && fly_flat_push(A, out, p, order->value);
}

static FlyTuple *ordered_strides(FlyAlgebra *A, FlyTuple *shape, const FlyTuple *order,
                                 const FlyFlat *ref) {
  if (order->kind == FLY_TUPLE_SEQ) {
    FlyTuple **e = fly_alloc(A, (size_t)(order->n ? order->n : 1) * sizeof *e);
    if (!e)
      return NULL;
    for (int i = 0; i < order->n; i++)
      if (!(e[i] = ordered_strides(A, shape->elem[i], order->elem[i], ref)))
        return NULL;
    return fly_tuple_seq(A, order->n, e);
  }
  /* This mode starts after every mode of a smaller order. */
  int64_t start = 1;
  for (int j = 0; j < ref->n; j++)
    if (ref->stride[j] < order->value && !fly_mul(A, start, ref->shape[j], &start))
      return NULL;
  return fly_tuple_prefix_product(A, shape, start);
}

FlyLayout *fly_layout_ordered(FlyAlgebra *A, FlyTuple *shape, FlyTuple *order) {
  if (!shape || !order)
    return NULL;
  if (!shape_is_valid(A, shape))
    return NULL;
  FlyFlat ref; /* shape: the mode's size, stride: its order */
  if (!fly_flat_init(A, &ref, fly_tuple_leaf_count(order)) || !product_like(A, shape, order, &ref))
    return NULL;
  for (int i = 0; i < ref.n; i++)
    for (int j = i + 1; j < ref.n; j++)
      if (ref.stride[i] == ref.stride[j])
        return fly_fail(A, "make_ordered_layout: order %lld appears twice",
                        (long long)ref.stride[i]);
  return fly_layout_make(A, shape, ordered_strides(A, shape, order, &ref));
}

FlyLayout *fly_layout_seq(FlyAlgebra *A, int n, FlyLayout *const *modes) {
  if (n < 0 || n > FLY_MAX_MODES)
    return fly_fail(A, "too many modes in a layout (limit is %d)", FLY_MAX_MODES);
  for (int i = 0; i < n; i++)
    if (!modes[i])
      return NULL;
  FlyTuple **s = fly_alloc(A, (size_t)(n ? n : 1) * sizeof *s);
  FlyTuple **d = fly_alloc(A, (size_t)(n ? n : 1) * sizeof *d);
  if (!s || !d)
    return NULL;
  for (int i = 0; i < n; i++) {
    s[i] = modes[i]->shape;
    d[i] = modes[i]->stride;
  }
  return fly_layout_raw(A, fly_tuple_seq(A, n, s), fly_tuple_seq(A, n, d));
}

FlyLayout *fly_layout_pair(FlyAlgebra *A, FlyLayout *a, FlyLayout *b) {
  FlyLayout *m[2] = {a, b};
  return fly_layout_seq(A, 2, m);
}

FlyTiler *fly_tiler_layout(FlyAlgebra *A, FlyLayout *L) {
  if (!L)
    return NULL;
  FlyTiler *T = fly_alloc(A, sizeof *T);
  if (T) {
    T->kind = FLY_TILER_LAYOUT;
    T->layout = L;
  }
  return T;
}

FlyTiler *fly_tiler_underscore(FlyAlgebra *A) {
  FlyTiler *T = fly_alloc(A, sizeof *T);
  if (T)
    T->kind = FLY_TILER_UNDERSCORE;
  return T;
}

FlyTiler *fly_tiler_seq(FlyAlgebra *A, int n, FlyTiler *const *elems) {
  if (n < 0 || n > FLY_MAX_MODES)
    return fly_fail(A, "too many modes in a tiler (limit is %d)", FLY_MAX_MODES);
  for (int i = 0; i < n; i++)
    if (!elems[i])
      return NULL;
  FlyTiler *T = fly_alloc(A, sizeof *T);
  FlyTiler **e = fly_alloc(A, (size_t)(n ? n : 1) * sizeof *e);
  if (!T || !e)
    return NULL;
  memcpy(e, elems, (size_t)n * sizeof *e);
  T->kind = FLY_TILER_SEQ;
  T->n = n;
  T->elem = e;
  return T;
}

/* ---- queries ----------------------------------------------------------- */

bool fly_layout_size(FlyAlgebra *A, const FlyLayout *L, int64_t *out) {
  return L && fly_tuple_product(A, L->shape, out);
}

/* CuTe's size(coshape(L)) (CuTe 3.9 on): the largest index the layout can
 * reach with every stride made non-negative, plus one, so a negative stride
 * counts by its extent: 1 + sum of (s-1)*|d| over the leaves. */
bool fly_layout_cosize(FlyAlgebra *A, const FlyLayout *L, int64_t *out) {
  FlyFlat f;
  if (L && fly_layout_has_basis(L)) { /* the size of the coshape */
    FlyTuple *coshape = fly_layout_coshape(A, L);
    return coshape && fly_tuple_product(A, coshape, out);
  }
  if (!L || !fly_flat_of(A, L, &f))
    return false;
  int64_t total = 1;
  for (int i = 0; i < f.n; i++) {
    int64_t d = f.stride[i] < 0 ? -f.stride[i] : f.stride[i], term;
    if (f.stride[i] == INT64_MIN)
      return fly_fail(A, "cosize: stride %" PRId64 " has no magnitude in 64 bits", f.stride[i]);
    if (!fly_mul(A, f.shape[i] - 1, d, &term) || !fly_add(A, total, term, &total))
      return false;
  }
  *out = total;
  return true;
}

int fly_layout_rank(const FlyLayout *L) { return fly_tuple_rank(L->shape); }
int fly_layout_depth(const FlyLayout *L) { return fly_tuple_depth(L->shape); }
int fly_layout_modes(const FlyLayout *L) { return fly_tuple_rank(L->shape); }

bool fly_layout_equal(const FlyLayout *a, const FlyLayout *b) {
  return fly_tuple_equal(a->shape, b->shape) && fly_tuple_equal(a->stride, b->stride);
}

/* ---- modes ------------------------------------------------------------- */

FlyLayout *fly_layout_get(FlyAlgebra *A, const FlyLayout *L, int i) {
  if (!L)
    return NULL;
  if (i < 0 || i >= fly_layout_rank(L))
    return fly_fail(A, "mode %d out of range: the layout has rank %d", i, fly_layout_rank(L));
  if (L->shape->kind != FLY_TUPLE_SEQ)
    return fly_layout_raw(A, L->shape, L->stride);
  return fly_layout_raw(A, L->shape->elem[i], L->stride->elem[i]);
}

FlyLayout *fly_layout_select(FlyAlgebra *A, const FlyLayout *L, int n, const int *modes) {
  if (!L)
    return NULL;
  if (n < 0 || n > FLY_MAX_MODES)
    return fly_fail(A, "too many modes in a layout (limit is %d)", FLY_MAX_MODES);
  FlyLayout **m = fly_alloc(A, (size_t)(n ? n : 1) * sizeof *m);
  if (!m)
    return NULL;
  for (int i = 0; i < n; i++)
    if (!(m[i] = fly_layout_get(A, L, modes[i])))
      return NULL;
  return fly_layout_seq(A, n, m);
}

/* The modes of L as an array (a leaf is one mode). */
static FlyLayout **modes_of(FlyAlgebra *A, const FlyLayout *L, int extra) {
  int r = fly_layout_rank(L);
  FlyLayout **m = fly_alloc(A, (size_t)(r + extra) * sizeof *m);
  if (!m)
    return NULL;
  for (int i = 0; i < r; i++)
    if (!(m[i] = fly_layout_get(A, L, i)))
      return NULL;
  return m;
}

FlyLayout *fly_layout_group(FlyAlgebra *A, const FlyLayout *L, int begin, int end) {
  if (!L)
    return NULL;
  int r = fly_layout_rank(L);
  if (begin < 0 || begin > end || end > r)
    return fly_fail(A, "group(%d, %d) is not a range of modes of a rank-%d layout", begin, end, r);
  FlyLayout **m = modes_of(A, L, 1);
  if (!m)
    return NULL;
  FlyLayout *grouped = fly_layout_seq(A, end - begin, m + begin);
  FlyLayout **out = fly_alloc(A, (size_t)(r + 1) * sizeof *out);
  if (!grouped || !out)
    return NULL;
  int n = 0;
  for (int i = 0; i < begin; i++)
    out[n++] = m[i];
  // As CuTe's group<B,E>: an empty range inserts nothing.
  if (begin < end)
    out[n++] = grouped;
  for (int i = end; i < r; i++)
    out[n++] = m[i];
  return fly_layout_seq(A, n, out);
}

FlyLayout *fly_layout_take(FlyAlgebra *A, const FlyLayout *L, int begin, int end) {
  if (!L)
    return NULL;
  int r = fly_layout_rank(L);
  if (begin < 0 || begin >= end || end > r)
    return fly_fail(A, "take(%d, %d) is not a non-empty range of modes of a rank-%d layout", begin,
                    end, r);
  return fly_layout_raw(A, fly_tuple_take(A, L->shape, begin, end),
                        fly_tuple_take(A, L->stride, begin, end));
}

static FlyLayout *add_mode(FlyAlgebra *A, const FlyLayout *L, const FlyLayout *X, bool front) {
  if (!L)
    return NULL;
  FlyLayout *x = X ? (FlyLayout *)X : fly_layout_leaf(A, 1, 0);
  int r = fly_layout_rank(L);
  FlyLayout **m = modes_of(A, L, 1);
  if (!m || !x)
    return NULL;
  if (front) {
    memmove(m + 1, m, (size_t)r * sizeof *m);
    m[0] = x;
  } else {
    m[r] = x;
  }
  return fly_layout_seq(A, r + 1, m);
}

FlyLayout *fly_layout_append(FlyAlgebra *A, const FlyLayout *L, const FlyLayout *X) {
  return add_mode(A, L, X, false);
}

FlyLayout *fly_layout_prepend(FlyAlgebra *A, const FlyLayout *L, const FlyLayout *X) {
  return add_mode(A, L, X, true);
}

FlyLayout *fly_layout_pad(FlyAlgebra *A, const FlyLayout *L, int rank) {
  if (!L)
    return NULL;
  int r = fly_layout_rank(L);
  if (rank > FLY_MAX_MODES)
    return fly_fail(A, "too many modes in a layout (limit is %d)", FLY_MAX_MODES);
  if (r >= rank)
    return fly_layout_raw(A, L->shape, L->stride);
  FlyLayout **m = modes_of(A, L, rank - r);
  FlyLayout *one = fly_layout_leaf(A, 1, 0);
  if (!m || !one)
    return NULL;
  for (int i = r; i < rank; i++)
    m[i] = one;
  return fly_layout_seq(A, rank, m);
}

FlyLayout *fly_layout_zip(FlyAlgebra *A, const FlyLayout *L) {
  if (!L)
    return NULL;
  if (L->shape->kind != FLY_TUPLE_SEQ || L->shape->n == 0)
    return fly_layout_raw(A, L->shape, L->stride);
  int n = L->shape->n;
  FlyLayout **m = modes_of(A, L, 0);
  if (!m)
    return NULL;
  /* As in CuTe: a first mode that is not a tuple makes the whole a single mode. */
  if (m[0]->shape->kind != FLY_TUPLE_SEQ)
    return fly_layout_seq(A, 1, (FlyLayout **)&L);
  int r = fly_layout_rank(m[0]);
  for (int i = 1; i < n; i++)
    if (fly_layout_rank(m[i]) != r)
      return fly_fail(A, "zip: mode %d has rank %d but mode 0 has rank %d", i,
                      fly_layout_rank(m[i]), r);
  FlyLayout **out = fly_alloc(A, (size_t)(r ? r : 1) * sizeof *out);
  FlyLayout **col = fly_alloc(A, (size_t)n * sizeof *col);
  if (!out || !col)
    return NULL;
  for (int j = 0; j < r; j++) {
    for (int i = 0; i < n; i++)
      if (!(col[i] = fly_layout_get(A, m[i], j)))
        return NULL;
    if (!(out[j] = fly_layout_seq(A, n, col)))
      return NULL;
  }
  return fly_layout_seq(A, r, out);
}

FlyLayout *fly_layout_flatten(FlyAlgebra *A, const FlyLayout *L) {
  if (!L)
    return NULL;
  if (L->shape->kind != FLY_TUPLE_SEQ)
    return fly_layout_raw(A, L->shape, L->stride);
  return fly_layout_raw(A, fly_tuple_flatten(A, L->shape), fly_tuple_flatten(A, L->stride));
}

/* ---- coordinates ------------------------------------------------------- */

/* Where the terms c * stride of a layout's value go: one sum for integer
 * strides (profile NULL), else one per leaf of the coprofile. */
typedef struct Sink {
  const FlyTuple *profile;
  int64_t *acc;
} Sink;

static bool sink_init(FlyAlgebra *A, const FlyLayout *L, Sink *k) {
  k->profile = NULL;
  if (fly_layout_has_basis(L) && !(k->profile = fly_layout_coprofile(A, L)))
    return false;
  int slots = k->profile ? fly_tuple_leaf_count(k->profile) : 1;
  k->acc = fly_alloc(A, (size_t)slots * sizeof *k->acc);
  return k->acc != NULL;
}

static FlyTuple *sink_value(FlyAlgebra *A, const Sink *k) {
  return k->profile ? fly_coprofile_fill(A, k->profile, k->acc) : fly_tuple_int(A, k->acc[0]);
}

/* Adds c times the stride leaf d. */
static bool sink_add(FlyAlgebra *A, Sink *k, int64_t c, const FlyTuple *d) {
  int slot = 0;
  if (d->kind == FLY_TUPLE_BASIS) {
    if (!k->profile || (slot = fly_coprofile_slot(k->profile, d)) < 0) {
      fly_fail(A, "internal: the stride %s has no place among the layout's values",
               fly_tuple_str(A, d));
      return false;
    }
  } else if (k->profile && d->value == 0) {
    return true; /* a zero beside basis elements */
  }
  int64_t term;
  return fly_mul(A, c, d->value, &term) && fly_add(A, k->acc[slot], term, &k->acc[slot]);
}

/* An integer coordinate c into a (sub)shape: split it colexicographically;
 * with `extend`, the last leaf takes whatever is left past the size. */
static bool index_into(FlyAlgebra *A, int64_t c, const FlyTuple *s, const FlyTuple *d, bool extend,
                       Sink *k) {
  if (s->kind != FLY_TUPLE_SEQ)
    return sink_add(A, k, c, d);
  for (int i = 0; i < s->n; i++) {
    bool last = i == s->n - 1;
    int64_t size, ci;
    if (!fly_tuple_product(A, s->elem[i], &size))
      return false;
    ci = (last && extend) ? c : c % size;
    if (!index_into(A, ci, s->elem[i], d->elem[i], extend && last, k))
      return false;
    c /= size;
  }
  return true;
}

/* Checks coord against shape s (`_` allowed where underscore_ok) and, with
 * a sink, adds its terms. */
static bool crd_rec(FlyAlgebra *A, const FlyTuple *c, const FlyTuple *s, const FlyTuple *d,
                    bool underscore_ok, Sink *k) {
  if (c->kind == FLY_TUPLE_UNDERSCORE) {
    if (underscore_ok)
      return true;
    fly_fail(A, "'_' in a coordinate: use slice");
    return false;
  }
  if (c->kind == FLY_TUPLE_SEQ) {
    if (s->kind != FLY_TUPLE_SEQ || s->n != c->n) {
      char *cs = fly_tuple_str(A, c), *ss = fly_tuple_str(A, s);
      fly_fail(A, "coordinate %s does not match shape %s", cs ? cs : "?", ss ? ss : "?");
      return false;
    }
    for (int i = 0; i < c->n; i++)
      if (!crd_rec(A, c->elem[i], s->elem[i], d->elem[i], underscore_ok, k))
        return false;
    return true;
  }
  if (c->kind != FLY_TUPLE_INT) {
    char *cs = fly_tuple_str(A, c);
    fly_fail(A, "%s is not a coordinate: coordinates are integers", cs ? cs : "?");
    return false;
  }
  int64_t size;
  if (!fly_tuple_product(A, s, &size))
    return false;
  if (c->value < 0 || c->value >= size) {
    char *ss = fly_tuple_str(A, s);
    fly_fail(A, "coordinate %lld is out of range for shape %s (size %lld)", (long long)c->value,
             ss ? ss : "?", (long long)size);
    return false;
  }
  return !k || index_into(A, c->value, s, d, false, k);
}

/* The integer value of an integer layout: an error for basis strides. */
static bool integer_value(FlyAlgebra *A, const FlyLayout *L, const Sink *k, int64_t *out) {
  if (k->profile) {
    char *ls = fly_layout_str(A, L);
    fly_fail(A, "%s has basis strides: its values are coordinates, not integers", ls ? ls : "?");
    return false;
  }
  *out = k->acc[0];
  return true;
}

bool fly_layout_crd2idx(FlyAlgebra *A, const FlyTuple *coord, const FlyLayout *L, int64_t *out) {
  Sink k;
  if (!coord || !L || !sink_init(A, L, &k))
    return false;
  return crd_rec(A, coord, L->shape, L->stride, false, &k) && integer_value(A, L, &k, out);
}

bool fly_layout_eval(FlyAlgebra *A, const FlyLayout *L, int64_t i, int64_t *out) {
  Sink k;
  if (!L || !sink_init(A, L, &k))
    return false;
  if (i < 0) {
    fly_fail(A, "index %lld is negative", (long long)i);
    return false;
  }
  return index_into(A, i, L->shape, L->stride, true, &k) && integer_value(A, L, &k, out);
}

FlyTuple *fly_layout_value(FlyAlgebra *A, const FlyTuple *coord, const FlyLayout *L) {
  Sink k;
  if (!coord || !L || !sink_init(A, L, &k))
    return NULL;
  return crd_rec(A, coord, L->shape, L->stride, false, &k) ? sink_value(A, &k) : NULL;
}

FlyTuple *fly_layout_value_at(FlyAlgebra *A, const FlyLayout *L, int64_t i) {
  Sink k;
  if (!L || !sink_init(A, L, &k))
    return NULL;
  if (i < 0)
    return fly_fail(A, "index %lld is negative", (long long)i);
  return index_into(A, i, L->shape, L->stride, true, &k) ? sink_value(A, &k) : NULL;
}

/* slice keeps the parts under `_`, dice the parts under integers; both
 * concatenate what they keep (CuTe's filter_tuple) and unwrap at the top. */
static bool cut(FlyAlgebra *A, const FlyTuple *c, FlyTuple *s, FlyTuple *d, bool keep_under,
                FlyTuple **ks, FlyTuple **kd, int *n) {
  if (c->kind == FLY_TUPLE_SEQ) {
    if (s->kind != FLY_TUPLE_SEQ || s->n != c->n) {
      char *cs = fly_tuple_str(A, c), *ss = fly_tuple_str(A, s);
      fly_fail(A, "coordinate %s does not match shape %s", cs ? cs : "?", ss ? ss : "?");
      return false;
    }
    for (int i = 0; i < c->n; i++)
      if (!cut(A, c->elem[i], s->elem[i], d->elem[i], keep_under, ks, kd, n))
        return false;
    return true;
  }
  if ((c->kind == FLY_TUPLE_UNDERSCORE) == keep_under) {
    ks[*n] = s;
    kd[*n] = d;
    (*n)++;
  }
  return true;
}

static FlyLayout *cut_layout(FlyAlgebra *A, const FlyTuple *c, const FlyLayout *L,
                             bool keep_under) {
  if (c->kind != FLY_TUPLE_SEQ) { /* a whole-layout `_` or integer */
    if ((c->kind == FLY_TUPLE_UNDERSCORE) == keep_under)
      return fly_layout_raw(A, L->shape, L->stride);
    return fly_layout_raw(A, fly_tuple_seq(A, 0, NULL), fly_tuple_seq(A, 0, NULL));
  }
  int leaves = fly_tuple_leaf_count(c);
  FlyTuple **ks = fly_alloc(A, (size_t)leaves * sizeof *ks);
  FlyTuple **kd = fly_alloc(A, (size_t)leaves * sizeof *kd);
  int n = 0;
  if (!ks || !kd || !cut(A, c, L->shape, L->stride, keep_under, ks, kd, &n))
    return NULL;
  FlyTuple *s = fly_tuple_seq(A, n, ks), *d = fly_tuple_seq(A, n, kd);
  return fly_layout_raw(A, fly_tuple_unwrap(s), fly_tuple_unwrap(d));
}

FlyLayout *fly_layout_slice_and_offset(FlyAlgebra *A, const FlyTuple *coord, const FlyLayout *L,
                                       FlyTuple **offset) {
  Sink k;
  if (!coord || !L || !sink_init(A, L, &k) || !crd_rec(A, coord, L->shape, L->stride, true, &k))
    return NULL;
  if (offset && !(*offset = sink_value(A, &k)))
    return NULL;
  return cut_layout(A, coord, L, true);
}

FlyLayout *fly_layout_slice(FlyAlgebra *A, const FlyTuple *coord, const FlyLayout *L,
                            int64_t *offset) {
  Sink k;
  if (!coord || !L || !sink_init(A, L, &k) || !crd_rec(A, coord, L->shape, L->stride, true, &k))
    return NULL;
  if (offset && !integer_value(A, L, &k, offset))
    return NULL;
  return cut_layout(A, coord, L, true);
}

FlyLayout *fly_layout_dice(FlyAlgebra *A, const FlyTuple *coord, const FlyLayout *L) {
  if (!coord || !L || !crd_rec(A, coord, L->shape, L->stride, true, NULL))
    return NULL; /* the coordinate must fit the shape */
  return cut_layout(A, coord, L, false);
}

/* ---- text -------------------------------------------------------------- */

char *fly_layout_str(FlyAlgebra *A, const FlyLayout *L) {
  if (!L)
    return NULL;
  /* A rank-1 top level prints without parentheses, at every level, so that
   * printing what was read back prints the same text again. */
  const FlyTuple *s = L->shape, *d = L->stride;
  while (s->kind == FLY_TUPLE_SEQ && s->n == 1) {
    s = s->elem[0];
    d = d->elem[0];
  }
  char *ss = fly_tuple_str(A, s), *ds = fly_tuple_str(A, d);
  if (!ss || !ds)
    return NULL;
  FlyStrBuf sb;
  fly_sb_init(&sb, A);
  fly_sb_puts(&sb, ss);
  fly_sb_putc(&sb, ':');
  fly_sb_puts(&sb, ds);
  return fly_sb_finish(&sb);
}

static void put_tiler(FlyAlgebra *A, FlyStrBuf *sb, const FlyTiler *T) {
  switch (T->kind) {
  case FLY_TILER_UNDERSCORE:
    fly_sb_putc(sb, '_');
    return;
  case FLY_TILER_LAYOUT: {
    char *s = fly_layout_str(A, T->layout);
    if (!s)
      sb->broken = true;
    else
      fly_sb_puts(sb, s);
    return;
  }
  case FLY_TILER_SEQ:
    fly_sb_putc(sb, '(');
    for (int i = 0; i < T->n; i++) {
      if (i)
        fly_sb_putc(sb, ',');
      put_tiler(A, sb, T->elem[i]);
    }
    fly_sb_putc(sb, ')');
    return;
  }
}

char *fly_tiler_str(FlyAlgebra *A, const FlyTiler *T) {
  if (!T)
    return NULL;
  FlyStrBuf sb;
  fly_sb_init(&sb, A);
  put_tiler(A, &sb, T);
  return fly_sb_finish(&sb);
}
