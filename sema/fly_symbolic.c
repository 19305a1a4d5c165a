/* fly_symbolic.c — size, crd2idx and idx2crd with runtime leaves
 * (fly_symbolic.h). */
#include "fly_symbolic.h"

FlySym fly_sym_leaf(const FlyTuple *leaf) {
  return leaf->kind == FLY_TUPLE_DYNAMIC ? fly_sym_handle(leaf->sym) : fly_sym_const(leaf->value);
}

const void *fly_sym_value(const FlySymOps *o, FlySym x) {
  return fly_sym_is_const(x) ? o->constant(o->ctx, x.c) : x.v;
}

static bool is(FlySym x, int64_t c) { return fly_sym_is_const(x) && x.c == c; }

FlySym fly_sym_add(const FlySymOps *o, FlySym x, FlySym y) {
  if (fly_sym_is_const(x) && fly_sym_is_const(y))
    return fly_sym_const(x.c + y.c);
  if (is(x, 0))
    return y;
  if (is(y, 0))
    return x;
  return fly_sym_handle(o->add(o->ctx, fly_sym_value(o, x), fly_sym_value(o, y)));
}

FlySym fly_sym_mul(const FlySymOps *o, FlySym x, FlySym y) {
  if (fly_sym_is_const(x) && fly_sym_is_const(y))
    return fly_sym_const(x.c * y.c);
  if (is(x, 0) || is(y, 0))
    return fly_sym_const(0);
  if (is(x, 1))
    return y;
  if (is(y, 1))
    return x;
  return fly_sym_handle(o->mul(o->ctx, fly_sym_value(o, x), fly_sym_value(o, y)));
}

FlySym fly_sym_div(const FlySymOps *o, FlySym x, FlySym y) {
  if (fly_sym_is_const(x) && fly_sym_is_const(y) && y.c)
    return fly_sym_const(x.c / y.c);
  if (is(y, 1) || is(x, 0))
    return x;
  return fly_sym_handle(o->div(o->ctx, fly_sym_value(o, x), fly_sym_value(o, y)));
}

FlySym fly_sym_rem(const FlySymOps *o, FlySym x, FlySym y) {
  if (fly_sym_is_const(x) && fly_sym_is_const(y) && y.c)
    return fly_sym_const(x.c % y.c);
  if (is(y, 1) || is(x, 0))
    return fly_sym_const(0);
  return fly_sym_handle(o->rem(o->ctx, fly_sym_value(o, x), fly_sym_value(o, y)));
}

FlySym fly_sym_size(const FlySymOps *o, const FlyTuple *shape) {
  if (shape->kind != FLY_TUPLE_SEQ)
    return fly_sym_leaf(shape);
  FlySym s = fly_sym_const(1);
  for (int i = 0; i < shape->n; i++)
    s = fly_sym_mul(o, s, fly_sym_size(o, shape->elem[i]));
  return s;
}

FlySym fly_sym_index(const FlySymOps *o, FlySym idx, const FlyTuple *shape,
                     const FlyTuple *stride) {
  if (shape->kind != FLY_TUPLE_SEQ || stride->kind != FLY_TUPLE_SEQ)
    return fly_sym_mul(o, idx,
                       stride->kind != FLY_TUPLE_SEQ ? fly_sym_leaf(stride) : fly_sym_const(0));
  /* Its coordinate in each sub-mode, column-major, the last sub-mode
     taking what remains. */
  FlySym off = fly_sym_const(0);
  for (int i = 0; i < shape->n && i < stride->n; i++) {
    FlySym c = idx;
    if (i + 1 < shape->n) {
      FlySym s = fly_sym_size(o, shape->elem[i]);
      c = fly_sym_rem(o, idx, s);
      idx = fly_sym_div(o, idx, s);
    }
    off = fly_sym_add(o, off, fly_sym_index(o, c, shape->elem[i], stride->elem[i]));
  }
  return off;
}

bool fly_sym_crd2idx(const FlySymOps *o, const FlyTuple *crd, const FlyTuple *shape,
                     const FlyTuple *stride, FlySym *out) {
  if (fly_tuple_has_basis(stride))
    return false;
  if (crd->kind == FLY_TUPLE_UNDERSCORE) {
    *out = fly_sym_const(0);
    return true;
  }
  if (crd->kind != FLY_TUPLE_SEQ) {
    *out = fly_sym_index(o, fly_sym_leaf(crd), shape, stride);
    return true;
  }
  if (shape->kind != FLY_TUPLE_SEQ || stride->kind != FLY_TUPLE_SEQ || shape->n < crd->n ||
      stride->n < crd->n)
    return false;
  FlySym off = fly_sym_const(0);
  for (int i = 0; i < crd->n; i++) {
    FlySym part;
    if (!fly_sym_crd2idx(o, crd->elem[i], shape->elem[i], stride->elem[i], &part))
      return false;
    off = fly_sym_add(o, off, part);
  }
  *out = off;
  return true;
}

static void idx2crd(const FlySymOps *o, FlySym idx, const FlyTuple *shape, FlySym *out, int cap,
                    int *n) {
  if (shape->kind != FLY_TUPLE_SEQ) {
    if (*n < cap)
      out[*n] = idx;
    (*n)++;
    return;
  }
  for (int i = 0; i < shape->n; i++) {
    FlySym c = idx;
    if (i + 1 < shape->n) {
      FlySym s = fly_sym_size(o, shape->elem[i]);
      c = fly_sym_rem(o, idx, s);
      idx = fly_sym_div(o, idx, s);
    }
    idx2crd(o, c, shape->elem[i], out, cap, n);
  }
}

int fly_sym_idx2crd(const FlySymOps *o, FlySym idx, const FlyTuple *shape, FlySym *out, int cap) {
  int n = 0;
  idx2crd(o, idx, shape, out, cap, &n);
  return n;
}

/* ---- coordinates as values (basis strides) ---------------------------------- */

/* Where the terms of a coordinate-valued layout go: one sum per leaf of
   profile (one for integers). */
typedef struct Coord {
  const FlySymOps *o;
  const FlyTuple *profile;
  FlySym *acc;
  int n;
} Coord;

/* The leaf of profile a basis element lands on, -1 if none. */
static int slot_of(const FlyTuple *profile, const FlyTuple *e) {
  int slot = 0;
  for (int k = 0; k < e->nmodes; k++) {
    if (profile->kind != FLY_TUPLE_SEQ || e->modes[k] >= profile->n)
      return -1;
    for (int i = 0; i < e->modes[k]; i++)
      slot += fly_tuple_leaf_count(profile->elem[i]);
    profile = profile->elem[e->modes[k]];
  }
  return profile->kind == FLY_TUPLE_SEQ ? -1 : slot;
}

/* Adds idx times the stride leaf d. */
static bool add_term(Coord *k, FlySym idx, const FlyTuple *d) {
  int slot = 0;
  FlySym scale;
  if (d->kind == FLY_TUPLE_BASIS) {
    if ((slot = slot_of(k->profile, d)) < 0)
      return false;
    scale = fly_sym_const(d->value);
  } else if (k->profile->kind == FLY_TUPLE_SEQ) { /* beside basis elements only 0 */
    return d->kind == FLY_TUPLE_INT && d->value == 0;
  } else {
    scale = fly_sym_leaf(d);
  }
  k->acc[slot] = fly_sym_add(k->o, k->acc[slot], fly_sym_mul(k->o, idx, scale));
  return true;
}

/* fly_sym_index, each term where it belongs. */
static bool index_terms(Coord *k, FlySym idx, const FlyTuple *shape, const FlyTuple *stride) {
  if (shape->kind != FLY_TUPLE_SEQ || stride->kind != FLY_TUPLE_SEQ)
    return stride->kind == FLY_TUPLE_SEQ || add_term(k, idx, stride);
  for (int i = 0; i < shape->n && i < stride->n; i++) {
    FlySym c = idx;
    if (i + 1 < shape->n) {
      FlySym s = fly_sym_size(k->o, shape->elem[i]);
      c = fly_sym_rem(k->o, idx, s);
      idx = fly_sym_div(k->o, idx, s);
    }
    if (!index_terms(k, c, shape->elem[i], stride->elem[i]))
      return false;
  }
  return true;
}

static bool crd_terms(Coord *k, const FlyTuple *crd, const FlyTuple *shape,
                      const FlyTuple *stride) {
  if (crd->kind == FLY_TUPLE_UNDERSCORE)
    return true;
  if (crd->kind != FLY_TUPLE_SEQ)
    return index_terms(k, fly_sym_leaf(crd), shape, stride);
  if (shape->kind != FLY_TUPLE_SEQ || stride->kind != FLY_TUPLE_SEQ || shape->n < crd->n ||
      stride->n < crd->n)
    return false;
  for (int i = 0; i < crd->n; i++)
    if (!crd_terms(k, crd->elem[i], shape->elem[i], stride->elem[i]))
      return false;
  return true;
}

int fly_sym_crd2coord(const FlySymOps *o, const FlyTuple *crd, const FlyTuple *shape,
                      const FlyTuple *stride, const FlyTuple *profile, FlySym *out, int cap) {
  enum { MAX_SLOTS = 1024 };
  FlySym acc[MAX_SLOTS];
  int n = fly_tuple_leaf_count(profile);
  if (n > MAX_SLOTS)
    return -1;
  for (int i = 0; i < n; i++)
    acc[i] = fly_sym_const(0);
  Coord k = {o, profile, acc, n};
  if (!crd_terms(&k, crd, shape, stride))
    return -1;
  for (int i = 0; i < n && i < cap; i++)
    out[i] = acc[i];
  return n;
}
