/* fly_builtins_algebra.c — the layout algebra as builtin functions.
 *
 * Each builtin converts its arguments to algebra values, calls the operation
 * of fly_layout.h and converts the result back; the algebra's own messages
 * become errors at the call. The divides accept a tensor as well as a
 * layout (fly_builtins_data.c does the tensor part). */
#include <inttypes.h>
#include <string.h>

#include "fly_builtins.h"
#include "fly_layout_tv.h"

/* Defined in fly_builtins_data.c: the divides and products of tensors, and
   the size and shape of tensors and tiled operations. */
const FlyVal *fly_tensor_divide(FlyInterp *I, const char *op, const FlyArgs *a);
const FlyVal *fly_tensor_query(FlyInterp *I, const char *op, const FlyArgs *a);

static const FlyVal *layout_result(FlyInterp *I, const FlyLayout *L, const FlyArgs *a) {
  return L ? fly_val_layout(&I->A, L) : fly_err_algebra(I, a->call);
}

/* INT_RESULT(op, n): op stores its result in n and must run before
   n is read, which a function's arguments would not guarantee. */
#define INT_RESULT(op, n) ((op) ? fly_val_int(&I->A, (n), NULL) : fly_err_algebra(I, a->call))

static bool is_tensorish(const FlyVal *v) {
  return v->kind == FLY_V_TENSOR ||
         (v->kind == FLY_V_OBJECT &&
          (v->object.kind == FLY_OBJ_TILED_COPY || v->object.kind == FLY_OBJ_TILED_MMA));
}

/* A layout argument; a composed layout gives its inner layout when `inner`. */
static const FlyLayout *L_arg(FlyInterp *I, const FlyArgs *a, int i) {
  if (a->v[i]->kind == FLY_V_COMPOSED)
    return a->v[i]->composed->layout;
  return fly_arg_layout(I, a, i, "this argument");
}

static FlyTuple *T_arg(FlyInterp *I, const FlyArgs *a, int i, const char *what) {
  if (!fly_val_is_static(a->v[i])) {
    fly_err_not_static(I, a->node[i], a->v[i], what);
    return NULL;
  }
  return fly_val_to_tuple(I, a->v[i], a->node[i], what);
}

/* ---- queries ------------------------------------------------------------------------ */

static const FlyVal *b_size(FlyInterp *I, const FlyArgs *a) {
  if (is_tensorish(a->v[0]))
    return fly_tensor_query(I, "size", a);
  int64_t n;
  if (a->v[0]->kind == FLY_V_TUPLE || a->v[0]->kind == FLY_V_INT) {
    FlyTuple *t = T_arg(I, a, 0, "the argument of size");
    return t ? INT_RESULT(fly_tuple_product(&I->A, t, &n), n) : NULL;
  }
  const FlyLayout *L = L_arg(I, a, 0);
  return L ? INT_RESULT(fly_layout_size(&I->A, L, &n), n) : NULL;
}

static const FlyVal *b_cosize(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *L = L_arg(I, a, 0);
  int64_t n;
  return L ? INT_RESULT(fly_layout_cosize(&I->A, L, &n), n) : NULL;
}

static const FlyVal *b_rank(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *v = a->v[0];
  if (v->kind == FLY_V_TENSOR)
    return fly_tensor_query(I, "rank", a);
  if (v->kind == FLY_V_TUPLE)
    return fly_val_int(&I->A, v->n, NULL);
  if (v->kind == FLY_V_INT)
    return fly_val_int(&I->A, 1, NULL);
  const FlyLayout *L = L_arg(I, a, 0);
  return L ? fly_val_int(&I->A, fly_layout_rank(L), NULL) : NULL;
}

static const FlyVal *b_depth(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *v = a->v[0];
  if (v->kind == FLY_V_TUPLE || v->kind == FLY_V_INT) {
    FlyTuple *t = T_arg(I, a, 0, "the argument of depth");
    return t ? fly_val_int(&I->A, fly_tuple_depth(t), NULL) : NULL;
  }
  const FlyLayout *L = L_arg(I, a, 0);
  return L ? fly_val_int(&I->A, fly_layout_depth(L), NULL) : NULL;
}

static const FlyVal *b_shape(FlyInterp *I, const FlyArgs *a) {
  if (is_tensorish(a->v[0]))
    return fly_tensor_query(I, "shape", a);
  const FlyLayout *L = L_arg(I, a, 0);
  return L ? fly_tuple_to_val(I, L->shape) : NULL;
}

static const FlyVal *b_stride(FlyInterp *I, const FlyArgs *a) {
  if (is_tensorish(a->v[0]))
    return fly_tensor_query(I, "stride", a);
  const FlyLayout *L = L_arg(I, a, 0);
  return L ? fly_tuple_to_val(I, L->stride) : NULL;
}

/* ---- modes ------------------------------------------------------------------------- */

static bool mode_index(FlyInterp *I, const FlyArgs *a, int i, int rank, int *out) {
  int64_t m;
  if (!fly_arg_int(I, a, i, "a mode index", &m))
    return false;
  if (m < 0 || m >= rank) {
    fly_err(I, a->node[i], "mode %" PRId64 " is out of range (the rank is %d)", m, rank);
    return false;
  }
  *out = (int)m;
  return true;
}

/* get(x, i, j, ...) == get(get(x, i), j, ...), for layouts and tuples. */
static const FlyVal *b_get(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *v = a->v[0];
  for (int k = 1; k < a->n; k++) {
    int m;
    if (v->kind == FLY_V_TUPLE) {
      if (!mode_index(I, a, k, v->n, &m))
        return NULL;
      v = v->elems[m];
    } else if (v->kind == FLY_V_INT) {
      if (!mode_index(I, a, k, 1, &m))
        return NULL;
    } else {
      FlyArgs one = *a;
      one.v = &v;
      const FlyLayout *L = fly_val_to_layout(I, v, a->node[0], "the argument of get");
      if (!L || !mode_index(I, a, k, fly_layout_rank(L), &m))
        return NULL;
      v = layout_result(I, fly_layout_get(&I->A, L, m), &one);
      if (!v)
        return NULL;
    }
  }
  return v;
}

static const FlyVal *b_select(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *L = L_arg(I, a, 0);
  if (!L)
    return NULL;
  int modes[FLY_MAX_MODES];
  if (a->n - 1 > FLY_MAX_MODES)
    return fly_err(I, a->call, "too many modes (limit is %d)", FLY_MAX_MODES);
  for (int i = 1; i < a->n; i++)
    if (!mode_index(I, a, i, fly_layout_rank(L), &modes[i - 1]))
      return NULL;
  return layout_result(I, fly_layout_select(&I->A, L, a->n - 1, modes), a);
}

static const FlyVal *b_group(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *L = L_arg(I, a, 0);
  int64_t b, e;
  if (!L || !fly_arg_int(I, a, 1, "the first mode", &b) ||
      !fly_arg_int(I, a, 2, "the end mode", &e))
    return NULL;
  int r = fly_layout_rank(L);
  if (b < 0 || e > r || b > e)
    return fly_err(I, a->call, "group(L, %" PRId64 ", %" PRId64 ") needs 0 <= begin <= end <= %d",
                   b, e, r);
  return layout_result(I, fly_layout_group(&I->A, L, (int)b, (int)e), a);
}

static const FlyVal *append_or_prepend(FlyInterp *I, const FlyArgs *a, bool append) {
  const FlyLayout *L = L_arg(I, a, 0);
  const FlyLayout *X = a->n > 1 ? L_arg(I, a, 1) : NULL;
  if (!L || (a->n > 1 && !X))
    return NULL;
  return layout_result(I, append ? fly_layout_append(&I->A, L, X) : fly_layout_prepend(&I->A, L, X),
                       a);
}
static const FlyVal *b_append(FlyInterp *I, const FlyArgs *a) {
  return append_or_prepend(I, a, true);
}
static const FlyVal *b_prepend(FlyInterp *I, const FlyArgs *a) {
  return append_or_prepend(I, a, false);
}

static const FlyVal *b_zip(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *L = L_arg(I, a, 0);
  return L ? layout_result(I, fly_layout_zip(&I->A, L), a) : NULL;
}

static const FlyVal *b_flatten(FlyInterp *I, const FlyArgs *a) {
  if (a->v[0]->kind == FLY_V_TUPLE || a->v[0]->kind == FLY_V_INT) {
    FlyTuple *t = T_arg(I, a, 0, "the argument of flatten");
    return t ? fly_tuple_to_val(I, fly_tuple_flatten(&I->A, t)) : NULL;
  }
  const FlyLayout *L = L_arg(I, a, 0);
  return L ? layout_result(I, fly_layout_flatten(&I->A, L), a) : NULL;
}

/* ---- coordinates -------------------------------------------------------------------- */

/* A coordinate with runtime leaves against a static shape: a leaf (static
   or runtime) stands for a whole sub-shape, as in CuTe; a tuple must have
   the sub-shape's rank. Runtime leaves are integers. */
static bool runtime_coord_fits(FlyInterp *I, const FlyVal *c, const FlyTuple *shape,
                               const FlyNode *at) {
  if (c->kind == FLY_V_RUNTIME) {
    if (fly_type_is_int(c->type))
      return true;
    fly_err(I, at, "a coordinate's leaves are integers, not %s", fly_type_str(&I->A, c->type));
    return false;
  }
  if (c->kind == FLY_V_INT)
    return true;
  if (c->kind != FLY_V_TUPLE) {
    fly_err(I, at, "a coordinate is an integer or a tuple of them, not %s",
            fly_val_describe(&I->A, c));
    return false;
  }
  if (!fly_tuple_is_seq(shape) || shape->n != c->n) {
    fly_err(I, at, "the coordinate %s does not fit the shape %s", fly_val_str_canonical(&I->A, c),
            fly_tuple_str(&I->A, shape));
    return false;
  }
  for (int i = 0; i < c->n; i++)
    if (!runtime_coord_fits(I, c->elems[i], shape->elem[i], at))
      return false;
  return true;
}

static const FlyVal *runtime_i32(FlyInterp *I, const FlyNode *at, const char *why) {
  FlyOrigin o = {at, why};
  return fly_val_runtime(&I->A, fly_type_scalar(FLY_TYPE_I32), o);
}

static const FlyVal *b_crd2idx(FlyInterp *I, const FlyArgs *a) {
  if (!fly_val_is_static(a->v[0]) && a->v[1]->kind == FLY_V_LAYOUT) {
    /* A runtime coordinate in a static layout: computed on the GPU. */
    if (!runtime_coord_fits(I, a->v[0], a->v[1]->layout->shape, a->node[0]))
      return NULL;
    return fly_emit_value(I, runtime_i32(I, a->node[0], "a runtime coordinate"), "crd2idx", 2, a->v,
                          a->call);
  }
  FlyTuple *c = T_arg(I, a, 0, "a coordinate");
  const FlyLayout *L = c ? L_arg(I, a, 1) : NULL;
  int64_t idx;
  return L ? INT_RESULT(fly_layout_crd2idx(&I->A, c, L, &idx), idx) : NULL;
}

static bool positive_leaves(const FlyTuple *t) {
  if (t->kind == FLY_TUPLE_INT)
    return t->value >= 1;
  if (t->kind == FLY_TUPLE_UNDERSCORE)
    return false;
  for (int i = 0; i < t->n; i++)
    if (!positive_leaves(t->elem[i]))
      return false;
  return true;
}

/* The coordinate of a runtime index: a tuple like the shape with runtime
   leaves, computed on the GPU. */
static const FlyVal *coord_like(FlyInterp *I, const FlyTuple *shape, const FlyNode *at) {
  if (fly_tuple_is_int(shape))
    return runtime_i32(I, at, "the coordinate of a runtime index");
  const FlyVal **e = fly_alloc(&I->A, sizeof *e * (size_t)(shape->n ? shape->n : 1));
  if (!e)
    return NULL;
  for (int i = 0; i < shape->n; i++)
    if (!(e[i] = coord_like(I, shape->elem[i], at)))
      return NULL;
  return fly_val_tuple(&I->A, shape->n, e);
}

static const FlyVal *b_idx2crd(FlyInterp *I, const FlyArgs *a) {
  FlyTuple *shape;
  if (a->v[1]->kind == FLY_V_LAYOUT)
    shape = a->v[1]->layout->shape;
  else if (!(shape = T_arg(I, a, 1, "a shape")))
    return NULL;
  const FlyVal *x = a->v[0];
  if (x->kind == FLY_V_RUNTIME && fly_type_is_int(x->type)) {
    if (!positive_leaves(shape))
      return fly_err(I, a->node[1], "the extents of a shape must be positive, not %s",
                     fly_tuple_str(&I->A, shape));
    /* The emitter gets the index and the shape's column-major layout, the
       order in which idx2crd reads an index. */
    FlyLayout *L = fly_layout_col_major(&I->A, shape);
    const FlyVal *args[2] = {x, L ? fly_val_layout(&I->A, L) : NULL};
    if (!args[1])
      return fly_err_algebra(I, a->call);
    return fly_emit_value(I, coord_like(I, shape, a->node[0]), "idx2crd", 2, args, a->call);
  }
  if (x->kind == FLY_V_RUNTIME)
    return fly_err(I, a->node[0], "an index is an integer, not %s", fly_type_str(&I->A, x->type));
  int64_t idx;
  if (!fly_arg_int(I, a, 0, "an index", &idx))
    return NULL;
  if (idx < 0)
    return fly_err(I, a->node[0], "an index must not be negative");
  if (!positive_leaves(shape))
    return fly_err(I, a->node[1], "the extents of a shape must be positive, not %s",
                   fly_tuple_str(&I->A, shape));
  FlyTuple *c = fly_tuple_idx2crd(&I->A, idx, shape);
  return c ? fly_tuple_to_val(I, c) : fly_err_algebra(I, a->call);
}

const FlyVal *fly_thread_slice(FlyInterp *I, const FlyArgs *a);

static const FlyVal *b_slice(FlyInterp *I, const FlyArgs *a) {
  /* tiled.slice(thread): the part of a tiled copy or MMA one thread does. */
  if (a->v[0]->kind == FLY_V_OBJECT)
    return fly_thread_slice(I, a);
  if (a->n != 2)
    return fly_err(I, a->call, "slice takes a coordinate and a layout: slice((_, 2), L)");
  FlyTuple *c = T_arg(I, a, 0, "a coordinate");
  const FlyLayout *L = c ? L_arg(I, a, 1) : NULL;
  int64_t offset;
  return L ? layout_result(I, fly_layout_slice(&I->A, c, L, &offset), a) : NULL;
}

static const FlyVal *b_dice(FlyInterp *I, const FlyArgs *a) {
  FlyTuple *c = T_arg(I, a, 0, "a coordinate");
  const FlyLayout *L = c ? L_arg(I, a, 1) : NULL;
  return L ? layout_result(I, fly_layout_dice(&I->A, c, L), a) : NULL;
}

/* ---- the algebra --------------------------------------------------------------------- */

static const FlyVal *b_coalesce(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *L = L_arg(I, a, 0);
  if (!L)
    return NULL;
  if (a->n == 1)
    return layout_result(I, fly_layout_coalesce(&I->A, L), a);
  FlyTuple *p = T_arg(I, a, 1, "a profile");
  return p ? layout_result(I, fly_layout_coalesce_by(&I->A, L, p), a) : NULL;
}

static const FlyVal *b_filter(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *L = L_arg(I, a, 0);
  if (!L)
    return NULL;
  if (a->n == 1)
    return layout_result(I, fly_layout_filter(&I->A, L), a);
  FlyTuple *p = T_arg(I, a, 1, "a profile");
  return p ? layout_result(I, fly_layout_filter_by(&I->A, L, p), a) : NULL;
}

static const FlyVal *b_composition(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *x = a->v[0], *y = a->v[1];
  /* composition(swizzle, L) and composition(swizzle, offset, L): S o off o L. */
  if (x->kind == FLY_V_SWIZZLE) {
    int64_t offset = 0;
    int li = 1;
    if (a->n == 3) {
      if (!fly_arg_int(I, a, 1, "an offset", &offset))
        return NULL;
      li = 2;
    }
    const FlyLayout *L = fly_arg_layout(I, a, li, "the layout of a swizzled layout");
    if (!L)
      return NULL;
    FlyComposed *C = fly_composed_make(&I->A, x->swizzle, offset, (FlyLayout *)L);
    if (!C)
      return fly_err_algebra(I, a->call);
    FlyVal *v = fly_val_new(&I->A, FLY_V_COMPOSED);
    if (v)
      v->composed = C;
    return v;
  }
  if (a->n != 2)
    return fly_err(I, a->call,
                   "composition takes two arguments, or a swizzle, an offset and a "
                   "layout");
  if (x->kind == FLY_V_COMPOSED) {
    const FlyLayout *B = fly_arg_layout(I, a, 1, "the right side of a composition");
    const FlyLayout *R = B ? fly_layout_composition(&I->A, x->composed->layout, B) : NULL;
    if (!R)
      return B ? fly_err_algebra(I, a->call) : NULL;
    FlyComposed *C = fly_composed_with_layout(&I->A, x->composed, (FlyLayout *)R);
    FlyVal *v = C ? fly_val_new(&I->A, FLY_V_COMPOSED) : NULL;
    if (v)
      v->composed = C;
    return v;
  }
  const FlyLayout *L = fly_arg_layout(I, a, 0, "the left side of a composition");
  if (!L)
    return NULL;
  if (y->kind == FLY_V_LAYOUT)
    return layout_result(I, fly_layout_composition(&I->A, L, y->layout), a);
  FlyTiler *T = fly_val_to_tiler(I, y, a->node[1]);
  return T ? layout_result(I, fly_layout_compose_tiler(&I->A, L, T), a) : NULL;
}

static const FlyVal *b_complement(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *L = L_arg(I, a, 0);
  if (!L)
    return NULL;
  FlyTuple *cot;
  if (a->n > 1) {
    if (!(cot = T_arg(I, a, 1, "the cotarget of complement")))
      return NULL;
  } else {
    int64_t c;
    if (!fly_layout_cosize(&I->A, L, &c))
      return fly_err_algebra(I, a->call);
    cot = fly_tuple_int(&I->A, c);
  }
  return layout_result(I, fly_layout_complement(&I->A, L, cot), a);
}

static const FlyVal *b_right_inverse(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *L = L_arg(I, a, 0);
  return L ? layout_result(I, fly_layout_right_inverse(&I->A, L), a) : NULL;
}

static const FlyVal *b_left_inverse(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *L = L_arg(I, a, 0);
  return L ? layout_result(I, fly_layout_left_inverse(&I->A, L), a) : NULL;
}

typedef FlyLayout *(*TilerOp)(FlyAlgebra *, const FlyLayout *, const FlyTiler *);

static const FlyVal *tiler_op(FlyInterp *I, const FlyArgs *a, TilerOp op, const char *name) {
  if (a->v[0]->kind == FLY_V_TENSOR)
    return fly_tensor_divide(I, name, a);
  const FlyLayout *L = fly_arg_layout(I, a, 0, "the layout to divide or repeat");
  FlyTiler *T = L ? fly_val_to_tiler(I, a->v[1], a->node[1]) : NULL;
  return T ? layout_result(I, op(&I->A, L, T), a) : NULL;
}

#define TILER_BUILTIN(name)                                                                        \
  static const FlyVal *b_##name(FlyInterp *I, const FlyArgs *a) {                                  \
    return tiler_op(I, a, fly_layout_##name, #name);                                               \
  }
TILER_BUILTIN(logical_divide)
TILER_BUILTIN(zipped_divide)
TILER_BUILTIN(tiled_divide)
TILER_BUILTIN(flat_divide)
TILER_BUILTIN(logical_product)
TILER_BUILTIN(zipped_product)
TILER_BUILTIN(tiled_product)
TILER_BUILTIN(flat_product)

static const FlyVal *b_blocked_product(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *L = L_arg(I, a, 0), *B = L ? L_arg(I, a, 1) : NULL;
  return B ? layout_result(I, fly_layout_blocked_product(&I->A, L, B), a) : NULL;
}

static const FlyVal *b_raked_product(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *L = L_arg(I, a, 0), *B = L ? L_arg(I, a, 1) : NULL;
  return B ? layout_result(I, fly_layout_raked_product(&I->A, L, B), a) : NULL;
}

/* Element widths for recast: a type (f16) or a number of bits. */
static bool bits_arg(FlyInterp *I, const FlyArgs *a, int i, int *out) {
  int64_t b;
  if (a->v[i]->kind == FLY_V_TYPE) {
    b = fly_type_bits(a->v[i]->type_value);
    if (b < 1) {
      fly_err(I, a->node[i], "%s has no width in bits", fly_val_describe(&I->A, a->v[i]));
      return false;
    }
  } else if (!fly_arg_int(I, a, i, "a width in bits", &b)) {
    return false;
  }
  if (b < 1 || b > 4096) {
    fly_err(I, a->node[i], "a width in bits must be between 1 and 4096, not %" PRId64, b);
    return false;
  }
  *out = (int)b;
  return true;
}

static const FlyVal *b_recast(FlyInterp *I, const FlyArgs *a) {
  int from, to;
  if (!bits_arg(I, a, 1, &from) || !bits_arg(I, a, 2, &to))
    return NULL;
  if (a->v[0]->kind == FLY_V_COMPOSED) {
    FlyComposed *C = fly_composed_recast(&I->A, a->v[0]->composed, from, to);
    FlyVal *v = C ? fly_val_new(&I->A, FLY_V_COMPOSED) : NULL;
    if (!C)
      return fly_err_algebra(I, a->call);
    if (v)
      v->composed = C;
    return v;
  }
  const FlyLayout *L = L_arg(I, a, 0);
  return L ? layout_result(I, fly_layout_recast(&I->A, L, from, to), a) : NULL;
}

static const FlyVal *b_swizzle(FlyInterp *I, const FlyArgs *a) {
  int64_t b, m, s;
  if (!fly_arg_int(I, a, 0, "the bits of a swizzle", &b) ||
      !fly_arg_int(I, a, 1, "the base of a swizzle", &m) ||
      !fly_arg_int(I, a, 2, "the shift of a swizzle", &s))
    return NULL;
  if (b < 0 || b > 62 || m < 0 || m > 62 || s < -62 || s > 62)
    return fly_err(I, a->call, "swizzle(%" PRId64 ", %" PRId64 ", %" PRId64 ") is out of range", b,
                   m, s);
  FlySwizzle sw;
  if (!fly_swizzle_make(&I->A, (int)b, (int)m, (int)s, &sw))
    return fly_err_algebra(I, a->call);
  FlyVal *v = fly_val_new(&I->A, FLY_V_SWIZZLE);
  if (v)
    v->swizzle = sw;
  return v;
}

/* make_layout(shape), make_layout(shape, stride), or make_layout(L0, L1, ...)
   with layouts, each becoming one mode. */
static const FlyVal *b_make_layout(FlyInterp *I, const FlyArgs *a) {
  bool layouts = true;
  for (int i = 0; i < a->n; i++)
    layouts &= a->v[i]->kind == FLY_V_LAYOUT;
  if (layouts && a->n > 0) {
    FlyLayout **modes = fly_alloc(&I->A, sizeof *modes * (size_t)a->n);
    if (!modes)
      return NULL;
    for (int i = 0; i < a->n; i++)
      modes[i] = (FlyLayout *)a->v[i]->layout;
    return layout_result(I, fly_layout_seq(&I->A, a->n, modes), a);
  }
  if (a->n > 2)
    return fly_err(I, a->call, "make_layout takes a shape and a stride, or layouts");
  FlyTuple *shape = T_arg(I, a, 0, "a shape");
  if (!shape)
    return NULL;
  if (a->n == 1)
    return layout_result(I, fly_layout_col_major(&I->A, shape), a);
  FlyTuple *stride = T_arg(I, a, 1, "a stride");
  if (!stride)
    return NULL;
  if (!fly_tuple_congruent(shape, stride))
    return fly_err(I, a->call, "the shape %s and the stride %s must have the same form",
                   fly_tuple_str(&I->A, shape), fly_tuple_str(&I->A, stride));
  return layout_result(I, fly_layout_make(&I->A, shape, stride), a);
}

static const FlyVal *b_make_ordered_layout(FlyInterp *I, const FlyArgs *a) {
  FlyTuple *shape = T_arg(I, a, 0, "a shape");
  FlyTuple *order = shape ? T_arg(I, a, 1, "an order") : NULL;
  return order ? layout_result(I, fly_layout_ordered(&I->A, shape, order), a) : NULL;
}

static const FlyVal *b_row_major(FlyInterp *I, const FlyArgs *a) {
  FlyTuple *shape = T_arg(I, a, 0, "a shape");
  return shape ? layout_result(I, fly_layout_row_major(&I->A, shape), a) : NULL;
}

static const FlyVal *b_max_common_vector(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *x = L_arg(I, a, 0), *y = x ? L_arg(I, a, 1) : NULL;
  int64_t n;
  return y ? INT_RESULT(fly_layout_max_common_vector(&I->A, x, y, &n), n) : NULL;
}

static const FlyVal *b_max_common_layout(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *x = L_arg(I, a, 0), *y = x ? L_arg(I, a, 1) : NULL;
  return y ? layout_result(I, fly_layout_max_common_layout(&I->A, x, y), a) : NULL;
}

/* tv_layout(threads, values): the thread-value layout of a tiled copy, which
   `flyc layout --table` draws by thread and value. */
static const FlyVal *b_tv_layout(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *t = L_arg(I, a, 0), *v = t ? L_arg(I, a, 1) : NULL;
  FlyTvLayout *tv = v ? fly_tv_layout_make(&I->A, t, v) : NULL;
  if (!tv)
    return v ? fly_err_algebra(I, a->call) : NULL;
  /* A tiled copy without an atom: it can be drawn and partitioned by, but
     copy() needs an atom. */
  FlyVal *r = fly_val_new(&I->A, FLY_V_OBJECT);
  if (r) {
    r->object.kind = FLY_OBJ_TILED_COPY;
    r->object.tv = tv;
  }
  return r;
}

const FlyBuiltin fly_algebra_builtins[] = {
    {"size", 1, 1, b_size, "size(x)"},
    {"cosize", 1, 1, b_cosize, "cosize(L)"},
    {"rank", 1, 1, b_rank, "rank(x)"},
    {"depth", 1, 1, b_depth, "depth(x)"},
    {"shape", 1, 1, b_shape, "shape(x)"},
    {"stride", 1, 1, b_stride, "stride(x)"},
    {"get", 2, -1, b_get, "get(x, i, ...)"},
    {"select", 1, -1, b_select, "select(L, i, ...)"},
    {"group", 3, 3, b_group, "group(L, begin, end)"},
    {"append", 1, 2, b_append, "append(L[, X])"},
    {"prepend", 1, 2, b_prepend, "prepend(L[, X])"},
    {"zip", 1, 1, b_zip, "zip(L)"},
    {"flatten", 1, 1, b_flatten, "flatten(x)"},
    {"crd2idx", 2, 2, b_crd2idx, "crd2idx(coord, L)"},
    {"idx2crd", 2, 2, b_idx2crd, "idx2crd(index, shape)"},
    {"slice", 2, 2, b_slice, "slice(coord, L) or tiled.slice(thread)"},
    {"dice", 2, 2, b_dice, "dice(coord, L)"},
    {"coalesce", 1, 2, b_coalesce, "coalesce(L[, profile])"},
    {"filter", 1, 2, b_filter, "filter(L[, profile])"},
    {"composition", 2, 3, b_composition, "composition(A, B)"},
    {"complement", 1, 2, b_complement, "complement(L[, cotarget])"},
    {"right_inverse", 1, 1, b_right_inverse, "right_inverse(L)"},
    {"left_inverse", 1, 1, b_left_inverse, "left_inverse(L)"},
    {"logical_divide", 2, 2, b_logical_divide, "logical_divide(L, tiler)"},
    {"zipped_divide", 2, 2, b_zipped_divide, "zipped_divide(L, tiler)"},
    {"tiled_divide", 2, 2, b_tiled_divide, "tiled_divide(L, tiler)"},
    {"flat_divide", 2, 2, b_flat_divide, "flat_divide(L, tiler)"},
    {"logical_product", 2, 2, b_logical_product, "logical_product(L, tiler)"},
    {"zipped_product", 2, 2, b_zipped_product, "zipped_product(L, tiler)"},
    {"tiled_product", 2, 2, b_tiled_product, "tiled_product(L, tiler)"},
    {"flat_product", 2, 2, b_flat_product, "flat_product(L, tiler)"},
    {"blocked_product", 2, 2, b_blocked_product, "blocked_product(L, B)"},
    {"raked_product", 2, 2, b_raked_product, "raked_product(L, B)"},
    {"recast", 3, 3, b_recast, "recast(L, from, to)"},
    {"swizzle", 3, 3, b_swizzle, "swizzle(bits, base, shift)"},
    {"make_layout", 1, -1, b_make_layout, "make_layout(shape[, stride])"},
    {"make_ordered_layout", 2, 2, b_make_ordered_layout, "make_ordered_layout(shape, order)"},
    {"make_row_major", 1, 1, b_row_major, "make_row_major(shape)"},
    {"max_common_vector", 2, 2, b_max_common_vector, "max_common_vector(A, B)"},
    {"max_common_layout", 2, 2, b_max_common_layout, "max_common_layout(A, B)"},
    {"tv_layout", 2, 2, b_tv_layout, "tv_layout(threads, values)"},
    {NULL, 0, 0, NULL, NULL},
};
