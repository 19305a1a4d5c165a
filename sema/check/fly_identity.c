/* fly_identity.c — identity tensors: tensors whose elements are their own
 * coordinates, CuTe's make_identity_tensor.
 *
 * An identity tensor has no memory. Its layout is the tensor's shape with
 * basis strides (1@0, 1@1, ...), so the algebra divides, slices and
 * partitions it exactly as it does the data tensor of the same shape, and
 * an element's value is the coordinate it has in the whole tensor. So a
 * thread that partitions a tile of A and the same tile of A's identity
 * tensor alike learns which coordinates of A its elements have, and guards
 * the ones past A's edge (elem_less(c, shape(A))).
 *
 * Everything about it is known at compile time except where a view starts:
 * its `origin`, the coordinate of its element 0, which slicing with a
 * runtime coordinate and partitioning among threads move. The origin's
 * leaves are ordinary integers, static or runtime; moving it is integer
 * arithmetic the interpreter emits through fly_binary, as any kernel
 * arithmetic. Identity tensors themselves are never traced. */
#include <string.h>

#include "fly_atom.h"
#include "fly_builtins.h"
#include "fly_layout_text.h"
#include "fly_interp.h"
#include "fly_layout_tv.h"
#include "fly_symbolic.h"

bool fly_is_identity(const FlyVal *v) {
  return v && v->kind == FLY_V_TENSOR && v->tensor.space == FLY_SPACE_COORD;
}

/* ---- the interpreter's arithmetic for fly_symbolic ------------------------------------- */

typedef struct Arith {
  FlyInterp *I;
  const FlyNode *at;
} Arith;

static const void *constant(void *ctx, int64_t c) {
  Arith *a = ctx;
  return fly_val_int(&a->I->A, c, NULL);
}
static const void *binary(Arith *a, FlyOp op, const void *x, const void *y) {
  if (!x || !y)
    return NULL;
  return fly_binary(a->I, op, x, y, a->at);
}
static const void *add(void *ctx, const void *x, const void *y) {
  return binary(ctx, FLY_OP_ADD, x, y);
}
static const void *mul(void *ctx, const void *x, const void *y) {
  return binary(ctx, FLY_OP_MUL, x, y);
}
static const void *div_(void *ctx, const void *x, const void *y) {
  return binary(ctx, FLY_OP_DIV, x, y);
}
static const void *rem(void *ctx, const void *x, const void *y) {
  return binary(ctx, FLY_OP_MOD, x, y);
}

static FlySymOps ops_of(Arith *a) { return (FlySymOps){a, constant, add, mul, div_, rem}; }

/* A value's leaves as an algebra tuple: numbers as numbers, runtime values
   as `?` leaves whose handle is the value, `_` and basis elements as they
   are. NULL after an error at `at`. */
static FlyTuple *sym_tuple(FlyInterp *I, const FlyVal *v, const FlyNode *at) {
  switch (v->kind) {
  case FLY_V_INT:
    return fly_tuple_int(&I->A, v->i);
  case FLY_V_RUNTIME:
    if (fly_type_is_int(v->type))
      return fly_tuple_dynamic(&I->A, v);
    break;
  case FLY_V_UNDERSCORE:
    return fly_tuple_underscore(&I->A);
  case FLY_V_BASIS:
    return (FlyTuple *)v->basis;
  case FLY_V_TUPLE: {
    FlyTuple **e = fly_alloc(&I->A, sizeof *e * (size_t)(v->n ? v->n : 1));
    if (!e)
      return NULL;
    for (int i = 0; i < v->n; i++)
      if (!(e[i] = sym_tuple(I, v->elems[i], at)))
        return NULL;
    return fly_tuple_seq(&I->A, v->n, e);
  }
  default:
    break;
  }
  fly_err(I, at, "a coordinate of an identity tensor is made of integers, not %s",
          fly_val_describe(&I->A, v));
  return NULL;
}

static const FlyVal *sym_val(FlyInterp *I, FlySym s) {
  return fly_sym_is_const(s) ? fly_val_int(&I->A, s.c, NULL) : (const FlyVal *)s.v;
}

/* origin + d, leaf by leaf: d's leaves in order, origin's structure. */
static const FlyVal *shifted(FlyInterp *I, const FlyVal *origin, const FlySym *d, int *next,
                             const FlyNode *at) {
  if (origin->kind != FLY_V_TUPLE) {
    const FlyVal *x = sym_val(I, d[(*next)++]);
    return x ? fly_binary(I, FLY_OP_ADD, origin, x, at) : NULL;
  }
  const FlyVal **e = fly_alloc(&I->A, sizeof *e * (size_t)(origin->n ? origin->n : 1));
  if (!e)
    return NULL;
  for (int i = 0; i < origin->n; i++)
    if (!(e[i] = shifted(I, origin->elems[i], d, next, at)))
      return NULL;
  return fly_val_tuple(&I->A, origin->n, e);
}

/* The view `result` of t whose element 0 is t's element at coordinate crd
   (a FlyTuple whose leaves may be runtime): its origin moved there. */
static const FlyVal *moved(FlyInterp *I, const FlyVal *t, const FlyVal *result, const FlyTuple *crd,
                           const FlyNode *at) {
  if (!result)
    return NULL;
  FlyTuple *shape = sym_tuple(I, t->tensor.shape, at);
  FlyTuple *stride = shape ? sym_tuple(I, t->tensor.stride, at) : NULL;
  FlyTuple *profile = stride ? sym_tuple(I, t->tensor.origin, at) : NULL;
  if (!profile)
    return NULL;
  Arith ar = {I, at};
  FlySymOps o = ops_of(&ar);
  enum { CAP = 64 };
  FlySym d[CAP];
  int n = fly_sym_crd2coord(&o, crd, shape, stride, profile, d, CAP);
  if (n < 0 || n > CAP)
    return fly_err(I, at, "internal error: a coordinate that does not fit its identity tensor");
  for (int i = 0; i < n; i++)
    if (!fly_sym_is_const(d[i]) && !d[i].v)
      return NULL;
  int next = 0;
  const FlyVal *origin = shifted(I, t->tensor.origin, d, &next, at);
  if (!origin)
    return NULL;
  FlyVal *v = fly_val_new(&I->A, FLY_V_TENSOR);
  if (!v)
    return NULL;
  *v = *result;
  v->tensor.origin = origin;
  return v;
}

/* ---- the operations ------------------------------------------------------------------- */

/* Zeros shaped like a shape: the origin, and the coordinates' profile. */
static const FlyVal *zeros_like_shape(FlyInterp *I, const FlyVal *s) {
  if (s->kind != FLY_V_TUPLE)
    return fly_val_int(&I->A, 0, NULL);
  const FlyVal **e = fly_alloc(&I->A, sizeof *e * (size_t)(s->n ? s->n : 1));
  if (!e)
    return NULL;
  for (int i = 0; i < s->n; i++)
    if (!(e[i] = zeros_like_shape(I, s->elems[i])))
      return NULL;
  return fly_val_tuple(&I->A, s->n, e);
}

/* A stand-in of the shape with every runtime leaf 2, for the structure of
   the basis strides (which do not depend on the extents). */
static FlyTuple *structure_of(FlyInterp *I, const FlyVal *s, const FlyNode *at) {
  if (s->kind == FLY_V_TUPLE) {
    FlyTuple **e = fly_alloc(&I->A, sizeof *e * (size_t)(s->n ? s->n : 1));
    if (!e)
      return NULL;
    for (int i = 0; i < s->n; i++)
      if (!(e[i] = structure_of(I, s->elems[i], at)))
        return NULL;
    return fly_tuple_seq(&I->A, s->n, e);
  }
  if (s->kind == FLY_V_INT && s->i >= 0)
    return fly_tuple_int(&I->A, s->i);
  if (s->kind == FLY_V_RUNTIME && fly_type_is_int(s->type))
    return fly_tuple_int(&I->A, 2);
  fly_err(I, at, "make_identity_tensor takes a shape of integers, not %s",
          fly_val_describe(&I->A, s));
  return NULL;
}

const FlyVal *fly_builtin_make_identity_tensor(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *shape = a->v[0];
  FlyTuple *st = structure_of(I, shape, a->node[0]);
  FlyTuple *bl = st ? fly_tuple_basis_like(&I->A, st) : NULL;
  if (st && !bl)
    return fly_err_algebra(I, a->call);
  if (!bl)
    return NULL;
  /* A shape of one leaf is one mode: its stride the basis of mode 0. */
  if (shape->kind != FLY_V_TUPLE) {
    const FlyVal *one[1] = {shape};
    shape = fly_val_tuple(&I->A, 1, one);
    int m0 = 0;
    FlyTuple *b0 = fly_tuple_basis(&I->A, 1, 1, &m0);
    bl = b0 ? fly_tuple_seq(&I->A, 1, &b0) : NULL;
  }
  const FlyVal *stride = bl ? fly_tuple_to_val(I, bl) : NULL;
  const FlyVal *origin = shape ? zeros_like_shape(I, shape) : NULL;
  if (!stride || !origin)
    return NULL;
  FlyVal *v =
      (FlyVal *)fly_make_tensor(I, fly_type_scalar(FLY_TYPE_I32), FLY_SPACE_COORD, shape, stride);
  if (v)
    v->tensor.origin = origin;
  return v;
}

const FlyVal *fly_identity_index(FlyInterp *I, const FlyVal *t, const FlyVal *result,
                                 const FlyVal *crd, const FlyNode *at) {
  FlyTuple *c = result ? sym_tuple(I, crd, at) : NULL;
  return c ? moved(I, t, result, c, at) : NULL;
}

const FlyVal *fly_identity_partition(FlyInterp *I, const FlyVal *t, const FlyVal *result,
                                     const FlyObject *thr, const FlyNode *at) {
  if (!result)
    return NULL;
  /* The thread's first value: the TV layout's thread mode gives its index
     in the tile, whose coordinate is its value in t's first tile. */
  const FlyTvLayout *tv = thr->base->object.tv;
  const FlyTuple *ts =
      tv->tv->shape->kind == FLY_TUPLE_SEQ ? tv->tv->shape->elem[0] : tv->tv->shape;
  const FlyTuple *td =
      tv->tv->stride->kind == FLY_TUPLE_SEQ ? tv->tv->stride->elem[0] : tv->tv->stride;
  Arith ar = {I, at};
  FlySymOps o = ops_of(&ar);
  FlySym thread =
      thr->thread->kind == FLY_V_INT ? fly_sym_const(thr->thread->i) : fly_sym_handle(thr->thread);
  FlySym k = fly_sym_index(&o, thread, ts, td);
  /* k is an index into the tile: its coordinate there, column-major. */
  enum { CAP = 64 };
  FlySym crd[CAP];
  int r = fly_sym_idx2crd(&o, k, tv->tile, crd, CAP);
  if (r < 0 || r > CAP)
    return fly_err(I, at, "internal error: a tile of too many modes");
  FlyTuple **e = fly_alloc(&I->A, sizeof *e * (size_t)(r ? r : 1));
  if (!e)
    return NULL;
  for (int i = 0; i < r; i++) {
    const FlyVal *x = sym_val(I, crd[i]);
    if (!x)
      return NULL;
    e[i] = x->kind == FLY_V_INT ? fly_tuple_int(&I->A, x->i) : fly_tuple_dynamic(&I->A, x);
  }
  FlyTuple *c = r == 1 ? e[0] : fly_tuple_seq(&I->A, r, e);
  return c ? moved(I, t, result, c, at) : NULL;
}

const FlyVal *fly_identity_mma_partition(FlyInterp *I, const FlyVal *t, const FlyVal *result,
                                         const FlyObject *thr, char operand, const FlyNode *at) {
  if (!result)
    return NULL;
  /* As the lowering places a tiled MMA's thread (fly_lower_views.c): its
     lane's first value in the atom's tile of the operand (the TV layout's
     thread mode), plus its warp's tile, the warps laid out column-major
     over the tiles. */
  const FlyObject *mma = &thr->base->object;
  const FlyAtom *atom = mma->base->object.atom;
  FlyMmaOperand op = fly_mma_operand(I, mma, operand);
  FlyLayout *tv = fly_parse_layout(&I->A, op.tv, strlen(op.tv));
  if (!tv)
    return fly_err_algebra(I, at);
  const FlyTuple *ts = tv->shape->kind == FLY_TUPLE_SEQ ? tv->shape->elem[0] : tv->shape;
  const FlyTuple *td = tv->stride->kind == FLY_TUPLE_SEQ ? tv->stride->elem[0] : tv->stride;
  int64_t wm = 1, wn = 1;
  const FlyTuple *ws = mma->layout->shape;
  if (ws->kind == FLY_TUPLE_SEQ) {
    fly_tuple_product(&I->A, ws->elem[0], &wm);
    if (ws->n > 1)
      fly_tuple_product(&I->A, ws->elem[1], &wn);
  } else {
    wm = ws->value;
  }
  Arith ar = {I, at};
  FlySymOps o = ops_of(&ar);
  FlySym thread =
      thr->thread->kind == FLY_V_INT ? fly_sym_const(thr->thread->i) : fly_sym_handle(thr->thread);
  FlySym lane = fly_sym_rem(&o, thread, fly_sym_const(atom->threads));
  FlySym warp = fly_sym_div(&o, thread, fly_sym_const(atom->threads));
  FlySym warp_m = fly_sym_rem(&o, warp, fly_sym_const(wm));
  FlySym warp_n = fly_sym_rem(&o, fly_sym_div(&o, warp, fly_sym_const(wm)), fly_sym_const(wn));
  FlySym k = fly_sym_index(&o, lane, ts, td);
  FlySym crd[2] = {fly_sym_rem(&o, k, fly_sym_const(op.rows)),
                   fly_sym_div(&o, k, fly_sym_const(op.rows))};
  crd[0] = fly_sym_add(&o, crd[0],
                       fly_sym_mul(&o, operand == 'B' ? warp_n : warp_m, fly_sym_const(op.rows)));
  if (operand == 'C')
    crd[1] = fly_sym_add(&o, crd[1], fly_sym_mul(&o, warp_n, fly_sym_const(op.cols)));
  FlyTuple *e[2];
  for (int i = 0; i < 2; i++) {
    const FlyVal *x = sym_val(I, crd[i]);
    if (!x)
      return NULL;
    e[i] = x->kind == FLY_V_INT ? fly_tuple_int(&I->A, x->i) : fly_tuple_dynamic(&I->A, x);
  }
  FlyTuple *c = fly_tuple_seq(&I->A, 2, e);
  return c ? moved(I, t, result, c, at) : NULL;
}

const FlyVal *fly_identity_load(FlyInterp *I, const FlyVal *t, const FlyNode *at) {
  if (!fly_tensor_is_element(t))
    return fly_err(I, at,
                   "load() of an identity tensor gives one element's coordinate: index an "
                   "element first, c[i].load()");
  return t->tensor.origin;
}

/* elem_less(c, shape) with runtime leaves: every leaf of c below the leaf
   of shape at its place, as one runtime bool. */
static const FlyVal *less_leaves(FlyInterp *I, const FlyVal *c, const FlyVal *s,
                                 const FlyNode *at) {
  if (c->kind == FLY_V_TUPLE || s->kind == FLY_V_TUPLE) {
    if (c->kind != FLY_V_TUPLE || s->kind != FLY_V_TUPLE || c->n > s->n)
      return fly_err(I, at, "elem_less compares a coordinate with a shape of its structure");
    const FlyVal *all = fly_val_bool(true);
    for (int i = 0; i < c->n && all; i++) {
      const FlyVal *x = less_leaves(I, c->elems[i], s->elems[i], at);
      all = x ? fly_binary(I, FLY_OP_AND, all, x, at) : NULL;
    }
    return all;
  }
  return fly_binary(I, FLY_OP_LT, c, s, at);
}

const FlyVal *fly_elem_less_runtime(FlyInterp *I, const FlyVal *c, const FlyVal *s,
                                    const FlyNode *at) {
  return less_leaves(I, c, s, at);
}
