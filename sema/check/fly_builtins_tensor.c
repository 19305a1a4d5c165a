/* fly_builtins_tensor.c — tensors: making them, indexing and slicing,
 * their divides and queries, load, store and zeros_like.
 *
 * A tensor's shape and stride are tuples whose leaves are integers or, for
 * what is given at launch, runtime values. Where every leaf is static the
 * layout algebra computes exactly; otherwise the structure (ranks and the
 * static leaves) is followed, which is what checking needs. */
#include <inttypes.h>
#include <string.h>

#include "fly_atom.h"
#include "fly_builtins.h"
#include "fly_layout_tv.h"

/* ---- tensors ------------------------------------------------------------------------- */

const FlyVal *fly_make_tensor(FlyInterp *I, const FlyType *elem, FlySpace space,
                              const FlyVal *shape, const FlyVal *stride) {
  if (!shape || !stride)
    return NULL;
  FlyVal *v = fly_val_new(&I->A, FLY_V_TENSOR);
  if (!v)
    return NULL;
  v->tensor.elem = elem;
  v->tensor.space = space;
  /* A tensor's shape is always a tuple: its modes. */
  if (shape->kind != FLY_V_TUPLE) {
    shape = fly_val_tuple(&I->A, 1, &shape);
    stride = fly_val_tuple(&I->A, 1, &stride);
  }
  v->tensor.shape = shape;
  v->tensor.stride = stride;
  return v;
}

const FlyVal *fly_tensor_like(FlyInterp *I, const FlyVal *like, const FlyVal *shape,
                              const FlyVal *stride) {
  FlyVal *v = (FlyVal *)fly_make_tensor(I, like->tensor.elem, like->tensor.space, shape, stride);
  if (v) {
    v->tensor.swizzled = like->tensor.swizzled;
    v->tensor.swizzle = like->tensor.swizzle;
    v->tensor.origin = like->tensor.origin;
  }
  return v;
}

const FlyLayout *fly_tensor_static_layout(FlyInterp *I, const FlyTensor *t) {
  if (!fly_val_is_static(t->shape) || !fly_val_is_static(t->stride))
    return NULL;
  FlyTuple *sh = fly_val_to_tuple(I, t->shape, NULL, "a shape");
  FlyTuple *st = sh ? fly_val_to_tuple(I, t->stride, NULL, "a stride") : NULL;
  return st ? fly_layout_make(&I->A, sh, st) : NULL;
}

const FlyVal *fly_runtime_leaf(FlyInterp *I, const FlyNode *at, const char *why) {
  FlyOrigin o = {at, why};
  return fly_val_runtime(&I->A, fly_type_scalar(FLY_TYPE_I32), o);
}

/* A tuple congruent to p with runtime leaves: strides the checker does not
   follow. */
const FlyVal *fly_runtime_like(FlyInterp *I, const FlyVal *p, const FlyNode *at, const char *why) {
  FlyOrigin o = {at, why};
  return fly_map_leaves(I, p, fly_leaf_runtime, &o);
}

/* The product of a shape's leaves: static, or a runtime i32. */
const FlyVal *fly_shape_size(FlyInterp *I, const FlyVal *shape, const FlyNode *at) {
  if (fly_val_is_static(shape)) {
    FlyTuple *t = fly_val_to_tuple(I, shape, at, "a shape");
    int64_t n;
    if (!t || !fly_tuple_product(&I->A, t, &n))
      return t ? fly_err_algebra(I, at) : NULL;
    return fly_val_int(&I->A, n, NULL);
  }
  const FlyVal *r = fly_val_first_runtime(shape);
  return fly_emit_value(I, fly_val_runtime(&I->A, fly_type_scalar(FLY_TYPE_I32), r->origin),
                        FLY_OPCODE_SIZE, 1, &shape, at);
}

bool fly_tensor_static_size(FlyInterp *I, const FlyVal *t, int64_t *n) {
  if (!fly_val_is_static(t->tensor.shape))
    return false;
  const FlyVal *s = fly_shape_size(I, t->tensor.shape, NULL);
  if (!s)
    return false;
  *n = s->i;
  return true;
}

int fly_tensor_rank(const FlyVal *t) { return t->tensor.shape->n; }

static const FlyVal *element_of(FlyInterp *I, const FlyVal *t) {
  const FlyVal *empty = fly_val_tuple(&I->A, 0, NULL);
  FlyVal *v = fly_val_new(&I->A, FLY_V_TENSOR);
  if (!v || !empty)
    return NULL;
  v->tensor = t->tensor;
  v->tensor.shape = empty;
  v->tensor.stride = empty;
  return v;
}

bool fly_tensor_is_element(const FlyVal *t) {
  return t->kind == FLY_V_TENSOR && fly_tensor_rank(t) == 0;
}

bool fly_val_is_integer(const FlyVal *v) {
  return v->kind == FLY_V_INT || (v->kind == FLY_V_RUNTIME && fly_type_is_int(v->type));
}

/* Checks a coordinate against a shape and collects the modes under `_`. */
static bool slice_modes(FlyInterp *I, const FlyVal *c, const FlyVal *sh, const FlyVal *st,
                        const FlyVal **ksh, const FlyVal **kst, int *k, const FlyNode *at) {
  if (c->kind == FLY_V_UNDERSCORE) {
    if (*k >= FLY_MAX_MODES) {
      fly_err(I, at, "too many modes (limit is %d)", FLY_MAX_MODES);
      return false;
    }
    ksh[*k] = sh;
    kst[*k] = st;
    (*k)++;
    return true;
  }
  if (c->kind == FLY_V_TUPLE) {
    if (sh->kind != FLY_V_TUPLE || sh->n != c->n) {
      fly_err(I, at, "the coordinate %s does not match the shape %s",
              fly_val_str_canonical(&I->A, c), fly_val_str_canonical(&I->A, sh));
      return false;
    }
    for (int i = 0; i < c->n; i++)
      if (!slice_modes(I, c->elems[i], sh->elems[i], st->elems[i], ksh, kst, k, at))
        return false;
    return true;
  }
  if (!fly_val_is_integer(c)) {
    fly_err(I, at, "a coordinate is an integer, '_' or a tuple of them, not %s",
            fly_val_describe(&I->A, c));
    return false;
  }
  if (c->kind == FLY_V_INT && fly_val_is_static(sh)) {
    const FlyVal *n = fly_shape_size(I, sh, at);
    if (!n)
      return false;
    if (c->i < 0 || c->i >= n->i) {
      fly_err(I, at, "index %" PRId64 " is out of range for a mode of size %" PRId64, c->i, n->i);
      return false;
    }
  }
  return true;
}

static const FlyVal *index_tensor(FlyInterp *I, const FlyVal *t, const FlyVal *c,
                                  const FlyNode *at);

const FlyVal *fly_index_tensor(FlyInterp *I, const FlyVal *t, int n, const FlyVal **idx,
                               const FlyNode *at) {
  const FlyVal *c = n == 1 ? idx[0] : fly_val_tuple(&I->A, n, idx);
  const FlyVal *args[2] = {t, c};
  if (c && fly_is_identity(t))
    return fly_identity_index(I, t, index_tensor(I, t, c, at), c, at);
  return c ? fly_emit_value(I, index_tensor(I, t, c, at), FLY_OPCODE_INDEX, 2, args, at) : NULL;
}

static const FlyVal *index_tensor(FlyInterp *I, const FlyVal *t, const FlyVal *c,
                                  const FlyNode *at) {
  if (fly_tensor_is_element(t))
    return fly_err(I, at, "this is one element of a tensor; it cannot be indexed further");
  /* One integer is an index into the whole tensor, as in CuTe. */
  if (fly_val_is_integer(c)) {
    if (c->kind == FLY_V_INT && fly_val_is_static(t->tensor.shape)) {
      const FlyVal *size = fly_shape_size(I, t->tensor.shape, at);
      if (!size)
        return NULL;
      if (c->i < 0 || c->i >= size->i)
        return fly_err(I, at->kid[1],
                       "index %" PRId64 " is out of range for a tensor of %" PRId64 " elements",
                       c->i, size->i);
    }
    return element_of(I, t);
  }
  /* `_` alone keeps every mode, as it does for a layout (CuTe's slice of
     `_` is the whole layout). */
  if (c->kind == FLY_V_UNDERSCORE)
    return t;
  if (c->kind != FLY_V_TUPLE)
    return fly_err(I, at->kid[1], "a coordinate is an integer, '_' or a tuple of them, not %s",
                   fly_val_describe(&I->A, c));
  if (c->n != fly_tensor_rank(t))
    return fly_err(I, at, "this tensor has %d modes, but the coordinate has %d", fly_tensor_rank(t),
                   c->n);
  const FlyVal **ksh = fly_alloc(&I->A, sizeof *ksh * FLY_MAX_MODES);
  const FlyVal **kst = fly_alloc(&I->A, sizeof *kst * FLY_MAX_MODES);
  int k = 0;
  if (!ksh || !kst || !slice_modes(I, c, t->tensor.shape, t->tensor.stride, ksh, kst, &k, at))
    return NULL;
  if (k == 0)
    return element_of(I, t);
  FlyVal *v = fly_val_new(&I->A, FLY_V_TENSOR);
  if (!v)
    return NULL;
  v->tensor = t->tensor;
  v->tensor.shape = fly_val_tuple(&I->A, k, ksh);
  v->tensor.stride = fly_val_tuple(&I->A, k, kst);
  return v->tensor.shape && v->tensor.stride ? v : NULL;
}

/* ---- divides of tensors ---------------------------------------------------------------- */

/* One mode of a tensor cut by one tiler element: the tile and the rest,
   each a shape and a stride. */
typedef struct Cut {
  const FlyVal *tile, *tile_stride, *rest, *rest_stride;
} Cut;

/* A leaf made from runtime leaves gets its code here, so that every
   runtime leaf of a tensor the tracer sees has a value to lower from. */
static const FlyVal *leaf_op(FlyInterp *I, FlyOpcode op, const FlyVal *x, int64_t n,
                             const FlyNode *at, const char *why) {
  const FlyVal *args[2] = {x, fly_val_int(&I->A, n, NULL)};
  return fly_emit_value(I, fly_runtime_leaf(I, at, why), op, 2, args, at);
}

static const FlyVal *tiles_of(FlyInterp *I, const FlyVal *s, int64_t n, const FlyNode *at) {
  if (s->kind == FLY_V_INT)
    return fly_val_int(&I->A, (s->i + n - 1) / n, NULL);
  const char *why = "the number of tiles of a tensor whose shape is given at launch";
  const FlyVal *up = n == 1 ? s : leaf_op(I, FLY_OPCODE_ADD, s, n - 1, at, why);
  return up && n != 1 ? leaf_op(I, FLY_OPCODE_DIV, up, n, at, why) : up;
}

/* n * d for a stride d: static when d is, the same runtime value when n
   is 1, a new runtime value otherwise. */
static const FlyVal *scaled_stride(FlyInterp *I, const FlyVal *d, int64_t n, const FlyNode *at) {
  if (d->kind == FLY_V_INT)
    return fly_val_int(&I->A, d->i * n, NULL);
  if (d->kind == FLY_V_BASIS) { /* an identity tensor's: n@i */
    FlyTuple *s = fly_tuple_arith(&I->A, FLY_ARITH_MUL, d->basis, fly_tuple_int(&I->A, n));
    return s ? fly_tuple_to_val(I, s) : fly_err_algebra(I, at);
  }
  if (n == 1)
    return d;
  return leaf_op(I, FLY_OPCODE_MUL, d, n, at,
                 "a stride given at launch, times a number known at compile time");
}

/* Where the tensor's shape is given at launch the algebra cannot run, but
   the common cut is exact: a mode that is one integer, cut by a tile n:1,
   is n:d beside ceil(s/n):(n*d). Anything else is followed structurally,
   its strides as runtime values. */
static bool cut_mode(FlyInterp *I, const FlyVal *mode, const FlyVal *stride, const FlyTiler *T,
                     const FlyNode *at, Cut *c) {
  if (T->kind == FLY_TILER_UNDERSCORE) {
    *c = (Cut){mode, stride, fly_val_int(&I->A, 1, NULL), fly_val_int(&I->A, 0, NULL)};
    return true;
  }
  if (T->kind == FLY_TILER_SEQ) {
    fly_err(I, at, "a nested tiler needs a tensor whose layout is known at compile time");
    return false;
  }
  const FlyLayout *tl = T->layout;
  if (mode->kind != FLY_V_TUPLE && fly_tuple_is_int(tl->shape) && tl->stride->value == 1 &&
      tl->shape->value > 0) {
    int64_t n = tl->shape->value;
    *c = (Cut){fly_val_int(&I->A, n, NULL), stride, tiles_of(I, mode, n, at),
               scaled_stride(I, stride, n, at)};
    return c->rest && c->rest_stride;
  }
  c->tile = fly_tuple_to_val(I, tl->shape);
  c->rest =
      fly_runtime_leaf(I, at, "the number of tiles of a tensor whose shape is given at launch");
  if (!c->tile || !c->rest)
    return false;
  c->tile_stride = fly_runtime_like(I, c->tile, at, "a stride given at launch");
  c->rest_stride = fly_runtime_like(I, c->rest, at, "a stride given at launch");
  return c->tile_stride && c->rest_stride;
}

static const FlyVal *pair_of(FlyInterp *I, const FlyVal *a, const FlyVal *b) {
  const FlyVal *e[2] = {a, b};
  return fly_val_tuple(&I->A, 2, e);
}

static const FlyVal *divide_dynamic(FlyInterp *I, FlyBuiltinId op, const FlyVal *t,
                                    const FlyTiler *T, const FlyNode *at) {
  const FlyVal *shape = t->tensor.shape, *stride = t->tensor.stride;
  int r = shape->n;
  if (T->kind == FLY_TILER_LAYOUT) {
    /* A layout tiler cuts the tensor as one mode: (tile, rest), whichever
       divide it is, as in CuTe. */
    Cut c;
    const FlyVal *mode = r == 1 ? shape->elems[0] : shape;
    if (!cut_mode(I, mode, r == 1 ? stride->elems[0] : stride, T, at, &c))
      return NULL;
    if (r != 1)
      c.tile_stride = fly_runtime_like(I, c.tile, at, "a stride given at launch");
    return fly_tensor_like(I, t, pair_of(I, c.tile, c.rest),
                           pair_of(I, c.tile_stride, c.rest_stride));
  }
  int nt = T->kind == FLY_TILER_SEQ ? T->n : 1;
  if (nt > r)
    return fly_err(I, at, "the tiler has %d modes but the tensor only %d", nt, r);
  Cut *cuts = fly_alloc(&I->A, sizeof *cuts * (size_t)(r ? r : 1));
  if (!cuts)
    return NULL;
  for (int i = 0; i < nt; i++) {
    const FlyTiler *Ti = T->kind == FLY_TILER_SEQ ? T->elem[i] : T;
    if (!cut_mode(I, shape->elems[i], stride->elems[i], Ti, at, &cuts[i]))
      return NULL;
  }
  for (int i = nt; i < r; i++)
    cuts[i] = (Cut){NULL, NULL, shape->elems[i], stride->elems[i]};
  const FlyVal **osh = fly_alloc(&I->A, sizeof *osh * (size_t)(2 * r + 2));
  const FlyVal **ost = fly_alloc(&I->A, sizeof *ost * (size_t)(2 * r + 2));
  if (!osh || !ost)
    return NULL;
  int n = 0;
  if (op == FLY_BUILTIN_LOGICAL_DIVIDE) {
    for (int i = 0; i < nt; i++, n++) {
      osh[n] = pair_of(I, cuts[i].tile, cuts[i].rest);
      ost[n] = pair_of(I, cuts[i].tile_stride, cuts[i].rest_stride);
    }
    for (int i = nt; i < r; i++, n++)
      osh[n] = cuts[i].rest, ost[n] = cuts[i].rest_stride;
  } else {
    /* The tiles, then the rests: grouped (zipped), the tiles grouped and
       the rests beside them (tiled), or all flat. */
    bool zipped = op == FLY_BUILTIN_ZIPPED_DIVIDE, flat = op == FLY_BUILTIN_FLAT_DIVIDE;
    const FlyVal **tsh = fly_alloc(&I->A, sizeof *tsh * (size_t)(r + 1));
    const FlyVal **tst = fly_alloc(&I->A, sizeof *tst * (size_t)(r + 1));
    const FlyVal **rsh = fly_alloc(&I->A, sizeof *rsh * (size_t)(r + 1));
    const FlyVal **rst = fly_alloc(&I->A, sizeof *rst * (size_t)(r + 1));
    if (!tsh || !tst || !rsh || !rst)
      return NULL;
    for (int i = 0; i < nt; i++)
      tsh[i] = cuts[i].tile, tst[i] = cuts[i].tile_stride;
    for (int i = 0; i < r; i++)
      rsh[i] = cuts[i].rest, rst[i] = cuts[i].rest_stride;
    if (flat) {
      for (int i = 0; i < nt; i++, n++)
        osh[n] = tsh[i], ost[n] = tst[i];
    } else {
      osh[n] = fly_val_tuple(&I->A, nt, tsh), ost[n] = fly_val_tuple(&I->A, nt, tst);
      n++;
    }
    if (zipped) {
      osh[n] = fly_val_tuple(&I->A, r, rsh), ost[n] = fly_val_tuple(&I->A, r, rst);
      n++;
    } else {
      for (int i = 0; i < r; i++, n++)
        osh[n] = rsh[i], ost[n] = rst[i];
    }
  }
  for (int i = 0; i < n; i++)
    if (!osh[i] || !ost[i])
      return NULL;
  return fly_tensor_like(I, t, fly_val_tuple(&I->A, n, osh), fly_val_tuple(&I->A, n, ost));
}

const FlyVal *fly_tensor_divide(FlyInterp *I, FlyBuiltinId which, const FlyArgs *a) {
  const FlyVal *t = a->v[0];
  const char *name = fly_builtin_function(which)->name;
  FlyOpcode op;
  switch (which) {
  case FLY_BUILTIN_LOGICAL_DIVIDE:
    op = FLY_OPCODE_LOGICAL_DIVIDE;
    break;
  case FLY_BUILTIN_ZIPPED_DIVIDE:
    op = FLY_OPCODE_ZIPPED_DIVIDE;
    break;
  case FLY_BUILTIN_TILED_DIVIDE:
    op = FLY_OPCODE_TILED_DIVIDE;
    break;
  case FLY_BUILTIN_FLAT_DIVIDE:
    op = FLY_OPCODE_FLAT_DIVIDE;
    break;
  default:
    return fly_err(I, a->call, "%s repeats layouts; it does not apply to tensors", name);
  }
  if (fly_tensor_is_element(t))
    return fly_err(I, a->node[0], "%s needs a tensor of at least one mode, not one element", name);
  FlyTiler *T = fly_val_to_tiler(I, a->v[1], a->node[1]);
  if (!T)
    return NULL;
  FlyProbe p;
  const FlyLayout *L = fly_tensor_probe(I, &t->tensor, &p);
  FlyLayout *R = !L                                ? NULL
                 : op == FLY_OPCODE_LOGICAL_DIVIDE ? fly_layout_logical_divide(&I->A, L, T)
                 : op == FLY_OPCODE_ZIPPED_DIVIDE  ? fly_layout_zipped_divide(&I->A, L, T)
                 : op == FLY_OPCODE_TILED_DIVIDE   ? fly_layout_tiled_divide(&I->A, L, T)
                                                   : fly_layout_flat_divide(&I->A, L, T);
  const FlyVal *v;
  if (R)
    v = fly_tensor_unprobe(I, t, R, &p, a->call);
  else if (L && !p.n)
    v = fly_err_algebra(I, a->call);
  else {
    fly_algebra_clear_error(&I->A);
    v = divide_dynamic(I, which, t, T, a->call);
  }
  return fly_emit_value(I, v, op, 2, a->v, a->call);
}

/* ---- views: composition and recast ---------------------------------------------------------- */

/* The tensor's layout for the algebra: static, or with probes standing for
   its runtime strides (its shape must be static). NULL after an error. */
static const FlyLayout *view_layout(FlyInterp *I, const FlyVal *t, FlyProbe *p, const char *what,
                                    const FlyNode *at) {
  const FlyLayout *L = fly_tensor_probe(I, &t->tensor, p);
  if (!L)
    fly_err(I, at, "%s needs a tensor whose shape is known at compile time (cut a tile first)",
            what);
  return L;
}

/* composition(t, L): the same memory, element c at t's layout of L(c); so
   composition(V, (N, M):(M, 1)) of an M x N tile is its transpose. */
const FlyVal *fly_tensor_compose(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *t = a->v[0];
  if (a->n != 2)
    return fly_err(I, a->call, "composition of a tensor takes the tensor and one layout");
  const FlyLayout *B = fly_arg_layout(I, a, 1, "the layout a tensor is seen through");
  FlyProbe p;
  const FlyLayout *L = B ? view_layout(I, t, &p, "composition", a->node[0]) : NULL;
  if (!L)
    return NULL;
  FlyLayout *R = fly_layout_composition(&I->A, L, B);
  const FlyVal *v = R ? fly_tensor_unprobe(I, t, R, &p, a->call) : fly_err_algebra(I, a->call);
  return fly_emit_value(I, v, FLY_OPCODE_TENSOR_COMPOSITION, 2, a->v, a->call);
}

/* A swizzled tile seen as elements of to_bits: the same swizzle of the
   bytes, which wider elements can express only when the swizzle leaves
   them whole (its base M at least log2 of the ratio). */
static bool recast_swizzle(FlyInterp *I, const FlyTensor *t, int from_bits, int to_bits,
                           const FlyArgs *a, FlyTensor *out) {
  FlySwizzle s = t->swizzle;
  int ratio = to_bits > from_bits ? to_bits / from_bits : 1, k = 0;
  while ((1 << k) < ratio)
    k++;
  if (s.bits > 0 && s.base < k) {
    fly_err(I, a->call,
            "recast of a tile swizzled by %s to %s splits elements the swizzle moves apart "
            "(its base %d is below log2(%d)); recast to at most %d bits",
            fly_swizzle_str(&I->A, s), fly_type_str(&I->A, a->v[1]->type_value), s.base, ratio,
            from_bits << s.base);
    return false;
  }
  if (!fly_swizzle_recast(&I->A, s, from_bits, to_bits, &out->swizzle)) {
    fly_err_algebra(I, a->call);
    return false;
  }
  return true;
}

/* recast(t, T): the same bytes as elements of T; the layout is recast from
   the old width to the new (recast(L, from, to)). */
const FlyVal *fly_tensor_recast(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *t = a->v[0];
  if (a->n != 2 || a->v[1]->kind != FLY_V_TYPE || a->v[1]->type_value->kind != FLY_TY_SCALAR)
    return fly_err(I, a->n == 2 ? a->node[1] : a->call,
                   "recast of a tensor takes the tensor and a scalar element type, recast(t, f16)");
  const FlyType *to = a->v[1]->type_value;
  int from_bits = fly_type_bits(t->tensor.elem), to_bits = fly_type_bits(to);
  if (from_bits < 8 || to_bits < 8)
    return fly_err(I, a->call, "recast moves whole bytes: %s to %s is not supported",
                   fly_type_str(&I->A, t->tensor.elem), fly_type_str(&I->A, to));
  FlyProbe p;
  const FlyLayout *L = view_layout(I, t, &p, "recast", a->node[0]);
  if (!L)
    return NULL;
  FlyLayout *R = fly_layout_recast(&I->A, L, from_bits, to_bits);
  FlyVal *v = R ? (FlyVal *)fly_tensor_unprobe(I, t, R, &p, a->call) : NULL;
  if (!R)
    return fly_err_algebra(I, a->call);
  if (v && v->kind == FLY_V_TENSOR) {
    FlyVal *c = fly_val_new(&I->A, FLY_V_TENSOR);
    if (!c)
      return NULL;
    *c = *v;
    c->tensor.elem = to;
    if (t->tensor.swizzled && !recast_swizzle(I, &t->tensor, from_bits, to_bits, a, &c->tensor))
      return NULL;
    v = c;
  }
  return fly_emit_value(I, v, FLY_OPCODE_TENSOR_RECAST, 2, a->v, a->call);
}

/* ---- queries ---------------------------------------------------------------------------- */

static int64_t mma_threads(FlyInterp *I, const FlyObject *o) {
  int64_t n = 1;
  fly_tuple_product(&I->A, o->layout->shape, &n);
  return n * o->base->object.atom->threads;
}

const FlyVal *fly_tensor_query(FlyInterp *I, FlyBuiltinId which, const FlyArgs *a) {
  const FlyVal *t = a->v[0];
  if (t->kind == FLY_V_OBJECT) {
    if (which != FLY_BUILTIN_SIZE)
      return fly_err(I, a->node[0], "%s has a size (its number of threads) but no %s",
                     fly_val_describe(&I->A, t), fly_builtin_function(which)->name);
    if (t->object.kind == FLY_OBJ_TILED_MMA)
      return fly_val_int(&I->A, mma_threads(I, &t->object), NULL);
    int64_t n;
    if (!fly_tuple_product(&I->A, t->object.tv->tv->shape->elem[0], &n))
      return fly_err_algebra(I, a->call);
    return fly_val_int(&I->A, n, NULL);
  }
  if (which == FLY_BUILTIN_SIZE)
    return fly_shape_size(I, t->tensor.shape, a->call);
  if (which == FLY_BUILTIN_RANK)
    return fly_val_int(&I->A, fly_tensor_rank(t), NULL);
  return which == FLY_BUILTIN_SHAPE ? t->tensor.shape : t->tensor.stride;
}

/* ---- load, store, zeros_like ------------------------------------------------- */

const FlyVal *fly_arg_tensor(FlyInterp *I, const FlyArgs *a, int i, const char *fn) {
  if (a->v[i]->kind == FLY_V_TENSOR)
    return a->v[i];
  return fly_err(I, a->node[i], "%s takes a tensor, not %s", fn, fly_val_describe(&I->A, a->v[i]));
}

/* The type a whole tensor loads as: its element, or a vec of its size. */
const FlyType *fly_tensor_value_type(FlyInterp *I, const FlyVal *t, const FlyNode *at,
                                     const char *fn) {
  if (fly_tensor_is_element(t))
    return t->tensor.elem;
  int64_t n;
  if (!fly_tensor_static_size(I, t, &n)) {
    fly_err(I, at,
            "%s of a whole tensor needs its size at compile time, but this tensor's "
            "shape is %s",
            fn, fly_val_str_canonical(&I->A, t->tensor.shape));
    return NULL;
  }
  if (n > 4096) {
    fly_err(I, at, "%s of %" PRId64 " elements at once is too many for registers (limit 4096)", fn,
            n);
    return NULL;
  }
  return n == 1 ? t->tensor.elem : fly_type_vec(&I->A, (int)n, t->tensor.elem);
}

const FlyVal *fly_builtin_load(FlyInterp *I, const FlyArgs *a) {
  if (I->in_launch)
    return fly_err(I, a->call, "load() runs on the GPU; a launch block runs on the host");
  const FlyVal *t = fly_arg_tensor(I, a, 0, "load");
  if (fly_is_identity(t))
    return fly_identity_load(I, t, a->call);
  if (t && !fly_access_is_plain(a))
    return fly_ordered_load(I, a);
  const FlyType *vt = t ? fly_tensor_value_type(I, t, a->call, "load()") : NULL;
  if (!vt)
    return NULL;
  FlyOrigin o = {a->call, "a value loaded from memory"};
  return fly_emit_value(I, fly_val_runtime(&I->A, vt, o), FLY_OPCODE_LOAD, 1, a->v, a->call);
}

const FlyVal *fly_store_value(FlyInterp *I, const FlyArgs *a, const FlyVal *t, const FlyType *vt) {
  const FlyVal *v = a->v[1];
  if (v->kind == FLY_V_RUNTIME && fly_type_equal(v->type, vt))
    return v;
  if (v->kind == FLY_V_RUNTIME || vt->kind == FLY_TY_VEC) {
    const char *have = fly_val_describe(&I->A, v);
    return fly_err(I, a->node[1], "this stores %s into a tensor of %s; expected %s", have,
                   fly_type_str(&I->A, t->tensor.elem), fly_type_str(&I->A, vt));
  }
  return fly_convert(I, v, vt, a->node[1], false);
}

const FlyVal *fly_builtin_store(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *t = fly_arg_tensor(I, a, 0, "store");
  if (fly_is_identity(t))
    return fly_err(I, a->node[0],
                   "an identity tensor holds coordinates, not memory: it cannot "
                   "be stored to");
  if (t && !fly_access_is_plain(a)) {
    if (I->in_launch)
      return fly_err(I, a->call, "store() runs on the GPU; a launch block runs on the host");
    return fly_ordered_store(I, a) ? fly_val_none() : NULL;
  }
  const FlyType *vt = t ? fly_tensor_value_type(I, t, a->call, "store()") : NULL;
  if (!vt)
    return NULL;
  if (I->in_launch)
    return fly_err(I, a->call, "store() runs on the GPU; a launch block runs on the host");
  const FlyVal *args[2] = {t, fly_store_value(I, a, t, vt)};
  if (!args[1])
    return NULL;
  return fly_emit_effect(I, FLY_OPCODE_STORE, 2, args, a->call) ? fly_val_none() : NULL;
}

const FlyVal *fly_builtin_zeros_like(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *x = a->v[0];
  const FlyType *t;
  if (x->kind == FLY_V_TENSOR)
    t = fly_tensor_value_type(I, x, a->call, "zeros_like");
  else if (x->kind == FLY_V_RUNTIME)
    t = x->type;
  else
    return fly_err(I, a->node[0], "zeros_like takes a tensor or a runtime value, not %s",
                   fly_val_describe(&I->A, x));
  if (!t)
    return NULL;
  FlyOrigin o = {a->call, "a value in registers (zeros_like)"};
  return fly_emit_value(I, fly_val_runtime(&I->A, t, o), FLY_OPCODE_ZEROS_LIKE, 1, a->v, a->call);
}
