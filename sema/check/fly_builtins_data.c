/* fly_builtins_data.c — tensors, atoms and the builtins that move and
 * multiply data: indexing and slicing, divides of tensors, load and store,
 * copy and MMA atoms, tiled copies and MMAs, partitions, copy and gemm.
 *
 * A tensor's shape and stride are tuples whose leaves are integers or, for
 * what is given at launch, runtime values. Where every leaf is static the
 * layout algebra computes exactly; otherwise the structure (ranks and the
 * static leaves) is followed, which is what checking needs. */
#include <inttypes.h>
#include <string.h>

#include "fly_atom.h"
#include "fly_builtins.h"
#include "fly_layout_text.h"
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
  }
  return v;
}

static bool all_static(const FlyVal *v) { return fly_val_is_static(v); }

const FlyLayout *fly_tensor_static_layout(FlyInterp *I, const FlyTensor *t) {
  if (!all_static(t->shape) || !all_static(t->stride))
    return NULL;
  FlyTuple *sh = fly_val_to_tuple(I, t->shape, NULL, "a shape");
  FlyTuple *st = sh ? fly_val_to_tuple(I, t->stride, NULL, "a stride") : NULL;
  return st ? fly_layout_make(&I->A, sh, st) : NULL;
}

static const FlyVal *runtime_leaf(FlyInterp *I, const FlyNode *at, const char *why) {
  FlyOrigin o = {at, why};
  return fly_val_runtime(&I->A, fly_type_scalar(FLY_TYPE_I32), o);
}

/* A tuple congruent to p with runtime leaves: strides the checker does not
   follow. */
static const FlyVal *runtime_like(FlyInterp *I, const FlyVal *p, const FlyNode *at,
                                  const char *why) {
  FlyOrigin o = {at, why};
  return fly_map_leaves(I, p, fly_leaf_runtime, &o);
}

/* The product of a shape's leaves: static, or a runtime i32. */
static const FlyVal *shape_size(FlyInterp *I, const FlyVal *shape, const FlyNode *at) {
  if (all_static(shape)) {
    FlyTuple *t = fly_val_to_tuple(I, shape, at, "a shape");
    int64_t n;
    if (!t || !fly_tuple_product(&I->A, t, &n))
      return t ? fly_err_algebra(I, at) : NULL;
    return fly_val_int(&I->A, n, NULL);
  }
  const FlyVal *r = fly_val_first_runtime(shape);
  return fly_emit_value(I, fly_val_runtime(&I->A, fly_type_scalar(FLY_TYPE_I32), r->origin), "size",
                        1, &shape, at);
}

static bool static_size(FlyInterp *I, const FlyVal *t, int64_t *n) {
  if (!all_static(t->tensor.shape))
    return false;
  const FlyVal *s = shape_size(I, t->tensor.shape, NULL);
  if (!s)
    return false;
  *n = s->i;
  return true;
}

static int tensor_rank(const FlyVal *t) { return t->tensor.shape->n; }

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

static bool is_element(const FlyVal *t) { return t->kind == FLY_V_TENSOR && tensor_rank(t) == 0; }

static bool is_int_value(const FlyVal *v) {
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
  if (!is_int_value(c)) {
    fly_err(I, at, "a coordinate is an integer, '_' or a tuple of them, not %s",
            fly_val_describe(&I->A, c));
    return false;
  }
  if (c->kind == FLY_V_INT && all_static(sh)) {
    const FlyVal *n = shape_size(I, sh, at);
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
  return c ? fly_emit_value(I, index_tensor(I, t, c, at), "slice", 2, args, at) : NULL;
}

static const FlyVal *index_tensor(FlyInterp *I, const FlyVal *t, const FlyVal *c,
                                  const FlyNode *at) {
  if (is_element(t))
    return fly_err(I, at, "this is one element of a tensor; it cannot be indexed further");
  /* One integer is an index into the whole tensor, as in CuTe. */
  if (is_int_value(c)) {
    if (c->kind == FLY_V_INT && all_static(t->tensor.shape)) {
      const FlyVal *size = shape_size(I, t->tensor.shape, at);
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
  if (c->n != tensor_rank(t))
    return fly_err(I, at, "this tensor has %d modes, but the coordinate has %d", tensor_rank(t),
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
static const FlyVal *leaf_op(FlyInterp *I, const char *op, const FlyVal *x, int64_t n,
                             const FlyNode *at, const char *why) {
  const FlyVal *args[2] = {x, fly_val_int(&I->A, n, NULL)};
  return fly_emit_value(I, runtime_leaf(I, at, why), op, 2, args, at);
}

static const FlyVal *tiles_of(FlyInterp *I, const FlyVal *s, int64_t n, const FlyNode *at) {
  if (s->kind == FLY_V_INT)
    return fly_val_int(&I->A, (s->i + n - 1) / n, NULL);
  const char *why = "the number of tiles of a tensor whose shape is given at launch";
  const FlyVal *up = n == 1 ? s : leaf_op(I, "+", s, n - 1, at, why);
  return up && n != 1 ? leaf_op(I, "/", up, n, at, why) : up;
}

/* n * d for a stride d: static when d is, the same runtime value when n
   is 1, a new runtime value otherwise. */
static const FlyVal *scaled_stride(FlyInterp *I, const FlyVal *d, int64_t n, const FlyNode *at) {
  if (d->kind == FLY_V_INT)
    return fly_val_int(&I->A, d->i * n, NULL);
  if (n == 1)
    return d;
  return leaf_op(I, "*", d, n, at,
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
  c->rest = runtime_leaf(I, at, "the number of tiles of a tensor whose shape is given at launch");
  if (!c->tile || !c->rest)
    return false;
  c->tile_stride = runtime_like(I, c->tile, at, "a stride given at launch");
  c->rest_stride = runtime_like(I, c->rest, at, "a stride given at launch");
  return c->tile_stride && c->rest_stride;
}

static const FlyVal *pair_of(FlyInterp *I, const FlyVal *a, const FlyVal *b) {
  const FlyVal *e[2] = {a, b};
  return fly_val_tuple(&I->A, 2, e);
}

static const FlyVal *divide_dynamic(FlyInterp *I, const char *op, const FlyVal *t,
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
      c.tile_stride = runtime_like(I, c.tile, at, "a stride given at launch");
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
  if (strcmp(op, "logical_divide") == 0) {
    for (int i = 0; i < nt; i++, n++) {
      osh[n] = pair_of(I, cuts[i].tile, cuts[i].rest);
      ost[n] = pair_of(I, cuts[i].tile_stride, cuts[i].rest_stride);
    }
    for (int i = nt; i < r; i++, n++)
      osh[n] = cuts[i].rest, ost[n] = cuts[i].rest_stride;
  } else {
    /* The tiles, then the rests: grouped (zipped), the tiles grouped and
       the rests beside them (tiled), or all flat. */
    bool zipped = strcmp(op, "zipped_divide") == 0, flat = strcmp(op, "flat_divide") == 0;
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

const FlyVal *fly_tensor_divide(FlyInterp *I, const char *op, const FlyArgs *a);
const FlyVal *fly_tensor_divide(FlyInterp *I, const char *op, const FlyArgs *a) {
  const FlyVal *t = a->v[0];
  if (strstr(op, "product"))
    return fly_err(I, a->call, "%s repeats layouts; it does not apply to tensors", op);
  if (is_element(t))
    return fly_err(I, a->node[0], "%s needs a tensor of at least one mode, not one element", op);
  FlyTiler *T = fly_val_to_tiler(I, a->v[1], a->node[1]);
  if (!T)
    return NULL;
  FlyProbe p;
  const FlyLayout *L = fly_tensor_probe(I, &t->tensor, &p);
  FlyLayout *R = !L                                  ? NULL
                 : strcmp(op, "logical_divide") == 0 ? fly_layout_logical_divide(&I->A, L, T)
                 : strcmp(op, "zipped_divide") == 0  ? fly_layout_zipped_divide(&I->A, L, T)
                 : strcmp(op, "tiled_divide") == 0   ? fly_layout_tiled_divide(&I->A, L, T)
                                                     : fly_layout_flat_divide(&I->A, L, T);
  const FlyVal *v;
  if (R)
    v = fly_tensor_unprobe(I, t, R, &p, a->call);
  else if (L && !p.n)
    v = fly_err_algebra(I, a->call);
  else {
    fly_algebra_clear_error(&I->A);
    v = divide_dynamic(I, op, t, T, a->call);
  }
  return fly_emit_value(I, v, op, 2, a->v, a->call);
}

/* ---- queries ---------------------------------------------------------------------------- */

static int64_t mma_threads(FlyInterp *I, const FlyObject *o) {
  int64_t n = 1;
  fly_tuple_product(&I->A, o->layout->shape, &n);
  return n * o->base->object.atom->threads;
}

const FlyVal *fly_tensor_query(FlyInterp *I, const char *op, const FlyArgs *a);
const FlyVal *fly_tensor_query(FlyInterp *I, const char *op, const FlyArgs *a) {
  const FlyVal *t = a->v[0];
  if (t->kind == FLY_V_OBJECT) {
    if (strcmp(op, "size") != 0)
      return fly_err(I, a->node[0], "%s has a size (its number of threads) but no %s",
                     fly_val_describe(&I->A, t), op);
    if (t->object.kind == FLY_OBJ_TILED_MMA)
      return fly_val_int(&I->A, mma_threads(I, &t->object), NULL);
    int64_t n;
    if (!fly_tuple_product(&I->A, t->object.tv->tv->shape->elem[0], &n))
      return fly_err_algebra(I, a->call);
    return fly_val_int(&I->A, n, NULL);
  }
  if (strcmp(op, "size") == 0)
    return shape_size(I, t->tensor.shape, a->call);
  if (strcmp(op, "rank") == 0)
    return fly_val_int(&I->A, tensor_rank(t), NULL);
  return strcmp(op, "shape") == 0 ? t->tensor.shape : t->tensor.stride;
}

/* ---- load, store, zeros_like, atomic_add ------------------------------------------------- */

static const FlyVal *need_tensor(FlyInterp *I, const FlyArgs *a, int i, const char *fn) {
  if (a->v[i]->kind == FLY_V_TENSOR)
    return a->v[i];
  return fly_err(I, a->node[i], "%s takes a tensor, not %s", fn, fly_val_describe(&I->A, a->v[i]));
}

/* The type a whole tensor loads as: its element, or a vec of its size. */
static const FlyType *value_type(FlyInterp *I, const FlyVal *t, const FlyNode *at, const char *fn) {
  if (is_element(t))
    return t->tensor.elem;
  int64_t n;
  if (!static_size(I, t, &n)) {
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

static const FlyVal *b_load(FlyInterp *I, const FlyArgs *a) {
  if (I->in_launch)
    return fly_err(I, a->call, "load() runs on the GPU; a launch block runs on the host");
  const FlyVal *t = need_tensor(I, a, 0, "load");
  const FlyType *vt = t ? value_type(I, t, a->call, "load()") : NULL;
  if (!vt)
    return NULL;
  FlyOrigin o = {a->call, "a value loaded from memory"};
  return fly_emit_value(I, fly_val_runtime(&I->A, vt, o), "load", 1, a->v, a->call);
}

static const FlyVal *b_store(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *t = need_tensor(I, a, 0, "store");
  const FlyType *vt = t ? value_type(I, t, a->call, "store()") : NULL;
  if (!vt)
    return NULL;
  if (I->in_launch)
    return fly_err(I, a->call, "store() runs on the GPU; a launch block runs on the host");
  const FlyVal *v = a->v[1];
  if (v->kind == FLY_V_RUNTIME && fly_type_equal(v->type, vt))
    return fly_emit_effect(I, "store", 2, a->v, a->call) ? fly_val_none() : NULL;
  if (v->kind == FLY_V_RUNTIME || vt->kind == FLY_TY_VEC) {
    const char *have = fly_val_describe(&I->A, v);
    return fly_err(I, a->node[1], "this stores %s into a tensor of %s; expected %s", have,
                   fly_type_str(&I->A, t->tensor.elem), fly_type_str(&I->A, vt));
  }
  const FlyVal *args[2] = {t, fly_convert(I, v, vt, a->node[1], false)};
  if (!args[1])
    return NULL;
  return fly_emit_effect(I, "store", 2, args, a->call) ? fly_val_none() : NULL;
}

static const FlyVal *b_zeros_like(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *x = a->v[0];
  const FlyType *t;
  if (x->kind == FLY_V_TENSOR)
    t = value_type(I, x, a->call, "zeros_like");
  else if (x->kind == FLY_V_RUNTIME)
    t = x->type;
  else
    return fly_err(I, a->node[0], "zeros_like takes a tensor or a runtime value, not %s",
                   fly_val_describe(&I->A, x));
  if (!t)
    return NULL;
  FlyOrigin o = {a->call, "a value in registers (zeros_like)"};
  return fly_emit_value(I, fly_val_runtime(&I->A, t, o), "zeros_like", 1, a->v, a->call);
}

const FlyVal *fly_atomic_add(FlyInterp *I, const FlyArgs *a);
const FlyVal *fly_atomic_add(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *t = need_tensor(I, a, 0, "atomic_add");
  if (!t)
    return NULL;
  if (!is_element(t))
    return fly_err(I, a->node[0], "atomic_add updates one element: index the tensor, t[i]");
  if (t->tensor.space == FLY_SPACE_REGISTER)
    return fly_err(I, a->node[0], "atomic_add needs global or shared memory, not registers");
  const FlyVal *v = a->v[1];
  if (v->kind == FLY_V_RUNTIME ? !fly_type_equal(v->type, t->tensor.elem)
                               : !fly_convert(I, v, t->tensor.elem, a->node[1], false)) {
    if (v->kind == FLY_V_RUNTIME)
      return fly_err(I, a->node[1], "atomic_add of %s to a tensor of %s",
                     fly_type_str(&I->A, v->type), fly_type_str(&I->A, t->tensor.elem));
    return NULL;
  }
  FlyOrigin o = {a->call, "the value before an atomic_add"};
  return fly_emit_value(I, fly_val_runtime(&I->A, t->tensor.elem, o), "atomic_add", 2, a->v,
                        a->call);
}

/* ---- atoms ------------------------------------------------------------------------------- */

static FlyVal *new_object(FlyInterp *I, FlyObjectKind kind) {
  FlyVal *v = fly_val_new(&I->A, FLY_V_OBJECT);
  if (v)
    v->object.kind = kind;
  return v;
}

/* "8, 16, 32, 64 or 128": the widths a copy atom allows. */
static const char *widths_text(FlyInterp *I, unsigned widths) {
  char buf[64];
  int at = 0, n = __builtin_popcount(widths), k = 0;
  for (int b = 0; b < 32; b++)
    if ((widths >> b) & 1u)
      at += snprintf(buf + at, sizeof buf - (size_t)at, "%s%u",
                     k++ == 0 ? ""
                     : k == n ? " or "
                              : ", ",
                     1u << b);
  char *s = fly_alloc(&I->A, (size_t)at + 1);
  if (s)
    memcpy(s, buf, (size_t)at + 1);
  return s ? s : "";
}

static const FlyVal *b_universal(FlyInterp *I, const FlyArgs *a) {
  const FlyAtom *atom = fly_atom_find("universal", 9);
  int64_t bits;
  if (!fly_arg_int(I, a, 0, "the width of a copy", &bits))
    return NULL;
  if (bits < 1 || bits > (1 << 30) || (bits & (bits - 1)) ||
      !((atom->widths >> __builtin_ctzll((unsigned long long)bits)) & 1u))
    return fly_err(I, a->node[0], "a universal copy moves %s bits, not %" PRId64,
                   widths_text(I, atom->widths), bits);
  FlyVal *v = new_object(I, FLY_OBJ_UNIVERSAL);
  if (v) {
    v->object.bits = (int)bits;
    v->object.atom = atom;
  }
  return v;
}

static const FlyVal *b_copy_atom(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *op = a->v[0];
  if (op->kind != FLY_V_OBJECT || op->object.kind != FLY_OBJ_UNIVERSAL)
    return fly_err(I, a->node[0], "copy_atom takes a copy operation such as universal(128), not %s",
                   fly_val_describe(&I->A, op));
  const FlyType *t = fly_arg_type(I, a, 1, "the element type of a copy atom");
  if (!t)
    return NULL;
  if (t->kind != FLY_TY_SCALAR || t->code == FLY_TYPE_I1)
    return fly_err(I, a->node[1], "a copy atom copies numbers, not %s", fly_type_str(&I->A, t));
  int eb = fly_type_bits(t);
  if (op->object.bits % eb != 0)
    return fly_err(I, a->call, "a copy of %d bits cannot move whole %s elements (%d bits each)",
                   op->object.bits, fly_type_str(&I->A, t), eb);
  FlyVal *v = new_object(I, FLY_OBJ_COPY_ATOM);
  if (v) {
    v->object.bits = op->object.bits;
    v->object.atom = op->object.atom;
    v->object.elem = t;
  }
  return v;
}

static const FlyVal *b_mma_atom(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *op = a->v[0];
  if (op->kind != FLY_V_OBJECT || op->object.kind != FLY_OBJ_ATOM_NAME)
    return fly_err(I, a->node[0],
                   "mma_atom takes an MMA instruction such as "
                   "nv.mma_sync_16x8x16, not %s",
                   fly_val_describe(&I->A, op));
  const FlyAtom *atom = op->object.atom;
  if (atom->kind != FLY_ATOM_MMA)
    return fly_err(I, a->node[0], "%s is a copy atom, not an MMA instruction", atom->name);
  FlyVendor vendor = (FlyVendor)fly_atom_vendor(atom);
  if (vendor != I->target->vendor)
    return fly_err(I, a->node[0],
                   "%s is an %s instruction, but the target is %s (%s); choose the atom with "
                   "'if const target.vendor == \"%s\"'",
                   atom->name, fly_vendor_title(vendor), I->target->arch,
                   fly_vendor_title(I->target->vendor), fly_vendor_name(vendor));
  if (!fly_atom_available(atom, I->target))
    return fly_err(I, a->node[0], "%s is an %s instruction, which %s does not have; it runs on %s",
                   atom->name, fly_mma_family_name(atom->mma), I->target->arch,
                   fly_atom_targets(atom));
  const FlyType *in = fly_arg_type(I, a, 1, "the operand type of an MMA");
  const FlyType *acc = in ? fly_arg_type(I, a, 2, "the accumulator type of an MMA") : NULL;
  if (!acc)
    return NULL;
  if (in->kind != FLY_TY_SCALAR || !fly_atom_takes(atom, in->code))
    return fly_err(I, a->node[1], "%s does not multiply %s", atom->name, fly_type_str(&I->A, in));
  if (acc->kind != FLY_TY_SCALAR || acc->code != atom->acc)
    return fly_err(I, a->node[2], "%s accumulates in %s, not %s", atom->name,
                   fly_type_code_name(atom->acc), fly_type_str(&I->A, acc));
  FlyVal *v = new_object(I, FLY_OBJ_MMA_ATOM);
  if (v) {
    v->object.name = atom->name;
    v->object.atom = atom;
    v->object.elem = in;
    v->object.acc = acc;
  }
  return v;
}

static const FlyVal *b_tiled_copy(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *atom = a->v[0];
  if (atom->kind != FLY_V_OBJECT || atom->object.kind != FLY_OBJ_COPY_ATOM)
    return fly_err(I, a->node[0], "tiled_copy takes a copy atom, not %s",
                   fly_val_describe(&I->A, atom));
  const FlyLayout *thr = fly_arg_layout(I, a, 1, "the thread layout of a tiled copy");
  const FlyLayout *val = thr ? fly_arg_layout(I, a, 2, "the value layout of a tiled copy") : NULL;
  if (!val)
    return NULL;
  int64_t nval;
  if (!fly_layout_size(&I->A, val, &nval))
    return fly_err_algebra(I, a->node[2]);
  int per_copy = atom->object.bits / fly_type_bits(atom->object.elem);
  if (nval % per_copy != 0)
    return fly_err(I, a->node[2],
                   "each thread copies %" PRId64 " values, which is not a multiple "
                   "of the %d the atom moves at once",
                   nval, per_copy);
  FlyTvLayout *tv = fly_tv_layout_make(&I->A, thr, val);
  if (!tv)
    return fly_err_algebra(I, a->call);
  FlyVal *v = new_object(I, FLY_OBJ_TILED_COPY);
  if (v) {
    v->object.base = atom;
    v->object.tv = tv;
  }
  return v;
}

static const FlyVal *b_tiled_mma(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *atom = a->v[0];
  if (atom->kind != FLY_V_OBJECT || atom->object.kind != FLY_OBJ_MMA_ATOM)
    return fly_err(I, a->node[0], "tiled_mma takes an MMA atom, not %s",
                   fly_val_describe(&I->A, atom));
  const FlyLayout *L =
      a->n > 1 ? fly_arg_layout(I, a, 1, "the layout of the atoms")
               : fly_layout_make(&I->A, fly_tuple_int(&I->A, 1), fly_tuple_int(&I->A, 0));
  if (!L)
    return NULL;
  if (fly_layout_rank(L) > 3)
    return fly_err(I, a->node[1],
                   "the atoms of a tiled MMA are laid out in at most 3 modes "
                   "(M, N, K)");
  FlyVal *v = new_object(I, FLY_OBJ_TILED_MMA);
  if (v) {
    v->object.base = atom;
    v->object.layout = L;
  }
  return v;
}

const FlyVal *fly_thread_slice(FlyInterp *I, const FlyArgs *a);
const FlyVal *fly_thread_slice(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *t = a->v[0];
  bool copy = t->object.kind == FLY_OBJ_TILED_COPY;
  if (!copy && t->object.kind != FLY_OBJ_TILED_MMA)
    return fly_err(I, a->node[0],
                   "slice takes a coordinate and a layout, or a thread of a tiled "
                   "copy or MMA; not %s",
                   fly_val_describe(&I->A, t));
  if (a->n != 2 || !is_int_value(a->v[1]))
    return fly_err(I, a->call, "tiled.slice(thread) takes one thread index");
  FlyVal *v = new_object(I, copy ? FLY_OBJ_THR_COPY : FLY_OBJ_THR_MMA);
  if (v) {
    v->object.base = t;
    v->object.thread = a->v[1];
  }
  return v;
}

/* ---- partitions ------------------------------------------------------------------------ */

/* (values per thread, tiles...) of tensor t cut by a tile of the given
   shape among `threads` threads. */
static const FlyVal *partition_shape(FlyInterp *I, const FlyVal *t, const FlyTuple *tile,
                                     int64_t threads, const FlyNode *at) {
  int64_t tile_size;
  if (!fly_tuple_product(&I->A, tile, &tile_size))
    return fly_err_algebra(I, at);
  if (tile_size % threads != 0)
    return fly_err(I, at,
                   "a tile of %" PRId64 " elements does not divide among %" PRId64 " threads",
                   tile_size, threads);
  int r = tile->kind == FLY_TUPLE_SEQ ? tile->n : 1;
  if (r > tensor_rank(t))
    return fly_err(I, at, "the tile has %d modes but the tensor only %d", r, tensor_rank(t));
  const FlyVal **e = fly_alloc(&I->A, sizeof *e * (size_t)(tensor_rank(t) + 1));
  if (!e)
    return NULL;
  e[0] = fly_val_int(&I->A, tile_size / threads, NULL);
  for (int i = 0; i < tensor_rank(t); i++) {
    const FlyVal *mode = t->tensor.shape->elems[i];
    if (i >= r) {
      e[i + 1] = mode;
      continue;
    }
    int64_t ti = tile->kind == FLY_TUPLE_SEQ ? tile->elem[i]->value : tile->value;
    if (all_static(mode)) {
      const FlyVal *n = shape_size(I, mode, at);
      if (!n)
        return NULL;
      if (n->i % ti != 0)
        return fly_err(I, at,
                       "a mode of size %" PRId64 " is not a whole number of tiles of %" PRId64,
                       n->i, ti);
      e[i + 1] = fly_val_int(&I->A, n->i / ti, NULL);
    } else {
      e[i + 1] = runtime_leaf(I, at,
                              "the number of tiles of a tensor whose shape is given at "
                              "launch");
    }
  }
  return fly_val_tuple(&I->A, tensor_rank(t) + 1, e);
}

static const FlyObject *thr_arg(FlyInterp *I, const FlyArgs *a, FlyObjectKind kind,
                                const char *fn) {
  const FlyVal *v = a->v[0];
  if (v->kind == FLY_V_OBJECT && v->object.kind == kind)
    return &v->object;
  fly_err(I, a->node[0], "%s is a method of %s, not of %s", fn,
          kind == FLY_OBJ_THR_COPY ? "a thread's slice of a tiled copy (tc.slice(t))"
                                   : "a thread's slice of a tiled MMA (mma.slice(t))",
          fly_val_describe(&I->A, v));
  return NULL;
}

static const FlyVal *copy_partition(FlyInterp *I, const FlyArgs *a, const char *fn) {
  const FlyObject *thr = thr_arg(I, a, FLY_OBJ_THR_COPY, fn);
  const FlyVal *t = thr ? need_tensor(I, a, 1, fn) : NULL;
  if (!t)
    return NULL;
  const FlyTvLayout *tv = thr->base->object.tv;
  int64_t threads;
  if (!fly_tuple_product(&I->A, tv->tv->shape->elem[0], &threads))
    return fly_err_algebra(I, a->call);
  FlyProbe p;
  const FlyLayout *L = fly_tensor_probe(I, &t->tensor, &p);
  if (L) {
    /* As CuTe's partition: the tensor in tiles, each tile through the TV
       layout, then this thread's values and every tile. */
    FlyTiler *T = fly_val_to_tiler(I, fly_tuple_to_val(I, tv->tile), a->call);
    FlyLayout *Z = T ? fly_layout_zipped_divide(&I->A, L, T) : NULL;
    FlyLayout *tile = Z ? fly_layout_get(&I->A, Z, 0) : NULL;
    FlyLayout *tvl = tile ? fly_layout_composition(&I->A, tile, tv->tv) : NULL;
    FlyLayout *vals = tvl ? fly_layout_get(&I->A, tvl, 1) : NULL;
    FlyLayout *rest = vals ? fly_layout_get(&I->A, Z, 1) : NULL;
    FlyLayout *R = rest ? fly_layout_prepend(&I->A, rest, vals) : NULL;
    if (R)
      return fly_tensor_unprobe(I, t, R, &p, a->call);
    if (!p.n)
      return fly_err_algebra(I, a->call);
    fly_algebra_clear_error(&I->A);
  }
  const FlyVal *sh = partition_shape(I, t, tv->tile, threads, a->call);
  if (!sh)
    return NULL;
  return fly_tensor_like(I, t, sh, runtime_like(I, sh, a->call, "a stride given at launch"));
}

static const FlyVal *b_partition_S(FlyInterp *I, const FlyArgs *a) {
  return fly_emit_value(I, copy_partition(I, a, "partition_S"), "partition_S", 2, a->v, a->call);
}
static const FlyVal *b_partition_D(FlyInterp *I, const FlyArgs *a) {
  return fly_emit_value(I, copy_partition(I, a, "partition_D"), "partition_D", 2, a->v, a->call);
}

/* What a tiled MMA does with one operand: the atom's tile of it (rows by
   columns: M x K for A, N x K for B, M x N for C), how many warps repeat
   that tile along each, and the atom's TV layout for it. */
typedef struct MmaOperand {
  int64_t rows, cols, warp_rows, warp_cols;
  const char *tv;
} MmaOperand;

static MmaOperand mma_operand(FlyInterp *I, const FlyObject *mma, char operand) {
  const FlyAtom *atom = mma->base->object.atom;
  const FlyTuple *shape = mma->layout->shape;
  int64_t wm = 1, wn = 1;
  if (shape->kind == FLY_TUPLE_SEQ) {
    fly_tuple_product(&I->A, shape->elem[0], &wm);
    if (shape->n > 1)
      fly_tuple_product(&I->A, shape->elem[1], &wn);
  } else {
    wm = shape->value;
  }
  MmaOperand o = {operand == 'B' ? atom->n : atom->m, operand == 'C' ? atom->n : atom->k,
                  operand == 'B' ? wn : wm, operand == 'C' ? wn : 1, atom->tv[operand - 'A']};
  return o;
}

static FlyTiler *tiler2(FlyInterp *I, int64_t a, int64_t b) {
  FlyTiler *e[2] = {fly_tiler_layout(&I->A, fly_layout_make(&I->A, fly_tuple_int(&I->A, a),
                                                            fly_tuple_int(&I->A, 1))),
                    fly_tiler_layout(&I->A, fly_layout_make(&I->A, fly_tuple_int(&I->A, b),
                                                            fly_tuple_int(&I->A, 1)))};
  return fly_tiler_seq(&I->A, 2, e);
}

/* One thread's values of operand A, B or C of a tiled MMA in a tensor of
   layout L, as CuTe's thrfrg_A/B/C and a thread's slice: L in the atom's
   tiles (rows R by columns C), each tile through the atom's TV layout, the
   tiles dealt out to the warps; the result is (the atom's values, tiles
   along R, tiles along C), whichever thread it is. */
static FlyLayout *mma_values(FlyInterp *I, const FlyLayout *L, const FlyObject *mma, char operand) {
  MmaOperand op = mma_operand(I, mma, operand);
  const char *text = op.tv;
  FlyLayout *tv = fly_parse_layout(&I->A, text, strlen(text));
  FlyTiler *T = tv ? tiler2(I, op.rows, op.cols) : NULL;
  FlyLayout *Z = T ? fly_layout_zipped_divide(&I->A, L, T) : NULL;
  FlyLayout *tile = Z ? fly_layout_get(&I->A, Z, 0) : NULL;
  FlyLayout *tvl = tile ? fly_layout_composition(&I->A, tile, tv) : NULL;
  FlyLayout *vals = tvl ? fly_layout_get(&I->A, tvl, 1) : NULL;
  FlyTiler *W = vals ? tiler2(I, op.warp_rows, op.warp_cols) : NULL;
  FlyLayout *rest = W ? fly_layout_get(&I->A, Z, 1) : NULL;
  FlyLayout *Zw = rest ? fly_layout_zipped_divide(&I->A, rest, W) : NULL;
  FlyLayout *tiles = Zw ? fly_layout_get(&I->A, Zw, 1) : NULL;
  return tiles ? fly_layout_prepend(&I->A, tiles, vals) : NULL;
}

/* The shape of mma_values for a tensor of the given shape, where it is
   only known in part: the atom's values, then a tile count per mode. */
static const FlyVal *mma_values_shape(FlyInterp *I, const FlyVal *t, const FlyObject *mma,
                                      char operand, const FlyNode *at) {
  MmaOperand op = mma_operand(I, mma, operand);
  int64_t step[2] = {op.rows * op.warp_rows, op.cols * op.warp_cols};
  const char *text = op.tv;
  FlyLayout *tv = fly_parse_layout(&I->A, text, strlen(text));
  FlyLayout *vals = tv ? fly_layout_get(&I->A, tv, 1) : NULL;
  if (!vals)
    return fly_err_algebra(I, at);
  int r = tensor_rank(t);
  const FlyVal **e = fly_alloc(&I->A, sizeof *e * (size_t)(r + 1));
  if (!e)
    return NULL;
  e[0] = fly_tuple_to_val(I, vals->shape);
  for (int i = 0; i < r; i++) {
    const FlyVal *mode = t->tensor.shape->elems[i];
    if (i >= 2)
      e[i + 1] = mode;
    else if (all_static(mode)) {
      const FlyVal *n = shape_size(I, mode, at);
      if (!n)
        return NULL;
      e[i + 1] = fly_val_int(&I->A, n->i / step[i], NULL);
    } else
      e[i + 1] =
          runtime_leaf(I, at, "the number of tiles of a tensor whose shape is given at launch");
  }
  return fly_val_tuple(&I->A, r + 1, e);
}

/* Every mode the MMA tiles must be a whole number of its tiles. */
static bool mma_fits(FlyInterp *I, const FlyVal *t, const FlyObject *mma, char operand,
                     const FlyNode *at) {
  MmaOperand op = mma_operand(I, mma, operand);
  int64_t step[2] = {op.rows * op.warp_rows, op.cols * op.warp_cols};
  const char *dims = operand == 'A' ? "MK" : operand == 'B' ? "NK" : "MN";
  if (tensor_rank(t) < 2) {
    fly_err(I, at, "operand %c of an MMA is a tensor of two modes (%c, %c), not of %d", operand,
            dims[0], dims[1], tensor_rank(t));
    return false;
  }
  for (int i = 0; i < 2; i++) {
    const FlyVal *mode = t->tensor.shape->elems[i];
    if (!all_static(mode))
      continue;
    const FlyVal *n = shape_size(I, mode, at);
    if (!n)
      return false;
    if (n->i % step[i] != 0) {
      fly_err(I, at,
              "mode %c of operand %c has %" PRId64 " elements, not a whole number of the MMA's "
              "tiles of %" PRId64,
              dims[i], operand, n->i, step[i]);
      return false;
    }
  }
  return true;
}

static const FlyVal *mma_partition(FlyInterp *I, const FlyArgs *a, char operand, bool fragment) {
  char fn[32];
  snprintf(fn, sizeof fn, "partition_%s%c", fragment ? "fragment_" : "", operand);
  const FlyObject *thr = thr_arg(I, a, FLY_OBJ_THR_MMA, fn);
  const FlyVal *t = thr ? need_tensor(I, a, 1, fn) : NULL;
  if (!t)
    return NULL;
  const FlyObject *mma = &thr->base->object;
  const FlyObject *atom = &mma->base->object;
  const FlyType *want = operand == 'C' ? atom->acc : atom->elem;
  if (!fragment && !fly_type_equal(t->tensor.elem, want) && operand != 'C')
    return fly_err(I, a->node[1], "the MMA multiplies %s, but this tensor holds %s",
                   fly_type_str(&I->A, want), fly_type_str(&I->A, t->tensor.elem));
  if (!mma_fits(I, t, mma, operand, a->call))
    return NULL;
  FlyProbe p;
  const FlyLayout *L = fly_tensor_probe(I, &t->tensor, &p);
  FlyLayout *R = L ? mma_values(I, L, mma, operand) : NULL;
  if (L && !R && !p.n)
    return fly_err_algebra(I, a->call);
  fly_algebra_clear_error(&I->A);
  const FlyVal *sh =
      R ? fly_tuple_to_val(I, R->shape) : mma_values_shape(I, t, mma, operand, a->call);
  if (!sh)
    return NULL;
  if (fragment) {
    /* A fragment lives in registers: a compact layout of its shape. */
    if (!all_static(sh))
      return fly_err(I, a->node[1], "%s needs a tensor whose shape is known at compile time", fn);
    FlyTuple *s = fly_val_to_tuple(I, sh, a->call, "a shape");
    FlyLayout *F = s ? fly_layout_col_major(&I->A, s) : NULL;
    if (!F)
      return fly_err_algebra(I, a->call);
    return fly_make_tensor(I, operand == 'C' ? atom->acc : atom->elem, FLY_SPACE_REGISTER,
                           fly_tuple_to_val(I, F->shape), fly_tuple_to_val(I, F->stride));
  }
  if (R)
    return fly_tensor_unprobe(I, t, R, &p, a->call);
  return fly_tensor_like(I, t, sh,
                         runtime_like(I, sh, a->call, "a stride chosen by the MMA's partition"));
}

#define MMA_PARTITION(op, frag, name)                                                              \
  static const FlyVal *b_##name(FlyInterp *I, const FlyArgs *a) {                                  \
    return fly_emit_value(I, mma_partition(I, a, op, frag), #name, 2, a->v, a->call);              \
  }
MMA_PARTITION('A', false, partition_A)
MMA_PARTITION('B', false, partition_B)
MMA_PARTITION('C', false, partition_C)
MMA_PARTITION('A', true, partition_fragment_A)
MMA_PARTITION('B', true, partition_fragment_B)
MMA_PARTITION('C', true, partition_fragment_C)

static const FlyVal *b_retile(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *t = need_tensor(I, a, a->n - 1, "retile");
  return t;
}

/* ---- copy and gemm ----------------------------------------------------------------------- */

static const FlyVal *b_copy(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *atom = a->v[0];
  bool tiled = atom->kind == FLY_V_OBJECT && atom->object.kind == FLY_OBJ_TILED_COPY;
  if (!tiled && !(atom->kind == FLY_V_OBJECT && atom->object.kind == FLY_OBJ_COPY_ATOM))
    return fly_err(I, a->node[0], "copy takes a copy atom or a tiled copy first, not %s",
                   fly_val_describe(&I->A, atom));
  if (I->in_launch)
    return fly_err(I, a->call, "copy runs on the GPU; a launch block runs on the host");
  if (tiled && !atom->object.base)
    return fly_err(I, a->node[0],
                   "this thread-value layout has no copy atom; make it with "
                   "tiled_copy(atom, threads, values)");
  const FlyVal *src = need_tensor(I, a, 1, "copy");
  const FlyVal *dst = src ? need_tensor(I, a, 2, "copy") : NULL;
  if (!dst)
    return NULL;
  const FlyType *elem = tiled ? atom->object.base->object.elem : atom->object.elem;
  for (int i = 1; i <= 2; i++)
    if (!fly_type_equal(a->v[i]->tensor.elem, elem))
      return fly_err(I, a->node[i], "the copy atom moves %s, but this tensor holds %s",
                     fly_type_str(&I->A, elem), fly_type_str(&I->A, a->v[i]->tensor.elem));
  int64_t ns, nd;
  if (static_size(I, src, &ns) && static_size(I, dst, &nd) && ns != nd)
    return fly_err(I, a->call, "copy from %" PRId64 " elements to %" PRId64 " elements", ns, nd);
  return fly_emit_effect(I, "copy", 3, a->v, a->call) ? fly_val_none() : NULL;
}

/* The value of an MMA operand: a register fragment or a runtime vector. */
static const FlyType *operand_type(FlyInterp *I, const FlyArgs *a, int i) {
  const FlyVal *v = a->v[i];
  if (v->kind == FLY_V_TENSOR)
    return value_type(I, v, a->node[i], "gemm");
  if (v->kind == FLY_V_RUNTIME)
    return v->type;
  fly_err(I, a->node[i], "gemm takes fragments or vectors, not %s", fly_val_describe(&I->A, v));
  return NULL;
}

static const FlyVal *b_gemm(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *m = a->v[0];
  const FlyObject *atom = NULL;
  if (m->kind == FLY_V_OBJECT && m->object.kind == FLY_OBJ_MMA_ATOM)
    atom = &m->object;
  else if (m->kind == FLY_V_OBJECT && m->object.kind == FLY_OBJ_TILED_MMA)
    atom = &m->object.base->object;
  else if (m->kind == FLY_V_OBJECT && m->object.kind == FLY_OBJ_THR_MMA)
    atom = &m->object.base->object.base->object;
  else
    return fly_err(I, a->node[0], "gemm takes an MMA atom or a tiled MMA first, not %s",
                   fly_val_describe(&I->A, m));
  const FlyType *ta = operand_type(I, a, 1), *tb = ta ? operand_type(I, a, 2) : NULL;
  const FlyType *tc = tb ? operand_type(I, a, 3) : NULL;
  if (!tc)
    return NULL;
  const FlyType *types[3] = {ta, tb, tc};
  for (int i = 0; i < 3; i++) {
    const FlyType *e = types[i]->kind == FLY_TY_VEC ? types[i]->elem : types[i];
    const FlyType *want = i == 2 ? atom->acc : atom->elem;
    if (!fly_type_equal(e, want))
      return fly_err(I, a->node[i + 1], "the MMA takes %s here, not %s", fly_type_str(&I->A, want),
                     fly_type_str(&I->A, e));
  }
  FlyOrigin o = {a->call, "the result of an MMA"};
  return fly_emit_value(I, fly_val_runtime(&I->A, tc, o), "gemm", 4, a->v, a->call);
}

const FlyBuiltin fly_data_builtins[] = {
    {"load", 1, 1, b_load, "t.load()"},
    {"store", 2, 2, b_store, "t.store(value)"},
    {"zeros_like", 1, 1, b_zeros_like, "zeros_like(t)"},
    {"universal", 1, 1, b_universal, "universal(bits)"},
    {"copy_atom", 2, 2, b_copy_atom, "copy_atom(universal(bits), T)"},
    {"mma_atom", 3, 3, b_mma_atom, "mma_atom(nv.mma_sync_16x8x16, f16, f32)"},
    {"tiled_copy", 3, 3, b_tiled_copy, "tiled_copy(atom, thread_layout, value_layout)"},
    {"tiled_mma", 1, 2, b_tiled_mma, "tiled_mma(atom[, atom_layout])"},
    {"partition_S", 2, 2, b_partition_S, "thr.partition_S(t)"},
    {"partition_D", 2, 2, b_partition_D, "thr.partition_D(t)"},
    {"partition_A", 2, 2, b_partition_A, "thr.partition_A(t)"},
    {"partition_B", 2, 2, b_partition_B, "thr.partition_B(t)"},
    {"partition_C", 2, 2, b_partition_C, "thr.partition_C(t)"},
    {"partition_fragment_A", 2, 2, b_partition_fragment_A, "thr.partition_fragment_A(t)"},
    {"partition_fragment_B", 2, 2, b_partition_fragment_B, "thr.partition_fragment_B(t)"},
    {"partition_fragment_C", 2, 2, b_partition_fragment_C, "thr.partition_fragment_C(t)"},
    {"retile", 1, 2, b_retile, "retile(t)"},
    {"copy", 3, 3, b_copy, "copy(atom, src, dst)"},
    {"gemm", 4, 4, b_gemm, "gemm(mma, a, b, c)"},
    {NULL, 0, 0, NULL, NULL},
};
