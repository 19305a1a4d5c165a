/* fly_builtins_algebra.c — the layout algebra as builtin functions.
 *
 * Each builtin converts its arguments to algebra values, calls the operation
 * of fly_layout.h and converts the result back; the algebra's own messages
 * become errors at the call. The divides accept a tensor as well as a
 * layout (fly_builtins_tensor.c does the tensor part). */
#include <inttypes.h>
#include <string.h>

#include "fly_atom.h"
#include "fly_builtins.h"
#include "fly_layout_tv.h"

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

const FlyVal *fly_builtin_size(FlyInterp *I, const FlyArgs *a) {
  if (is_tensorish(a->v[0]))
    return fly_tensor_query(I, FLY_BUILTIN_SIZE, a);
  int64_t n;
  if (a->v[0]->kind == FLY_V_TUPLE || a->v[0]->kind == FLY_V_INT) {
    FlyTuple *t = T_arg(I, a, 0, "the argument of size");
    return t ? INT_RESULT(fly_tuple_product(&I->A, t, &n), n) : NULL;
  }
  const FlyLayout *L = L_arg(I, a, 0);
  return L ? INT_RESULT(fly_layout_size(&I->A, L, &n), n) : NULL;
}

const FlyVal *fly_builtin_cosize(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *L = L_arg(I, a, 0);
  int64_t n;
  return L ? INT_RESULT(fly_layout_cosize(&I->A, L, &n), n) : NULL;
}

const FlyVal *fly_builtin_rank(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *v = a->v[0];
  if (v->kind == FLY_V_TENSOR)
    return fly_tensor_query(I, FLY_BUILTIN_RANK, a);
  if (v->kind == FLY_V_TUPLE)
    return fly_val_int(&I->A, v->n, NULL);
  if (v->kind == FLY_V_INT)
    return fly_val_int(&I->A, 1, NULL);
  const FlyLayout *L = L_arg(I, a, 0);
  return L ? fly_val_int(&I->A, fly_layout_rank(L), NULL) : NULL;
}

const FlyVal *fly_builtin_depth(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *v = a->v[0];
  if (v->kind == FLY_V_TUPLE || v->kind == FLY_V_INT) {
    FlyTuple *t = T_arg(I, a, 0, "the argument of depth");
    return t ? fly_val_int(&I->A, fly_tuple_depth(t), NULL) : NULL;
  }
  const FlyLayout *L = L_arg(I, a, 0);
  return L ? fly_val_int(&I->A, fly_layout_depth(L), NULL) : NULL;
}

const FlyVal *fly_builtin_shape(FlyInterp *I, const FlyArgs *a) {
  if (is_tensorish(a->v[0]))
    return fly_tensor_query(I, FLY_BUILTIN_SHAPE, a);
  const FlyVal *v = a->v[0];
  if (v->kind == FLY_V_OBJECT && v->object.kind == FLY_OBJ_MMA_ATOM) {
    /* An MMA atom's tile, (M, N, K): what mma_atom_for chose. */
    const FlyAtom *atom = v->object.atom;
    const FlyVal *mnk[3] = {fly_val_int(&I->A, atom->m, NULL), fly_val_int(&I->A, atom->n, NULL),
                            fly_val_int(&I->A, atom->k, NULL)};
    return fly_val_tuple(&I->A, 3, mnk);
  }
  const FlyLayout *L = L_arg(I, a, 0);
  return L ? fly_tuple_to_val(I, L->shape) : NULL;
}

const FlyVal *fly_builtin_stride(FlyInterp *I, const FlyArgs *a) {
  if (is_tensorish(a->v[0]))
    return fly_tensor_query(I, FLY_BUILTIN_STRIDE, a);
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
const FlyVal *fly_builtin_get(FlyInterp *I, const FlyArgs *a) {
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

/* Whether v is a condition: a boolean, or a runtime i1 or mask. */
static bool is_condition(const FlyVal *v) {
  const FlyType *t = v->kind == FLY_V_RUNTIME ? v->type : NULL;
  if (t && t->kind == FLY_TY_VEC)
    t = t->elem;
  return v->kind == FLY_V_BOOL || (t && t->kind == FLY_TY_SCALAR && t->code == FLY_TYPE_I1);
}

const FlyVal *fly_builtin_select(FlyInterp *I, const FlyArgs *a) {
  /* select is CuTe's, of modes; a condition first means the choice
     between values, which is where's. */
  if (is_condition(a->v[0]))
    return fly_err(I, a->node[0],
                   "select(L, i, ...) takes the modes i of a layout L, not %s; to choose "
                   "between values by a condition, use where(c, a, b)",
                   fly_val_describe(&I->A, a->v[0]));
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

const FlyVal *fly_builtin_group(FlyInterp *I, const FlyArgs *a) {
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
const FlyVal *fly_builtin_append(FlyInterp *I, const FlyArgs *a) {
  return append_or_prepend(I, a, true);
}
const FlyVal *fly_builtin_prepend(FlyInterp *I, const FlyArgs *a) {
  return append_or_prepend(I, a, false);
}

const FlyVal *fly_builtin_zip(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *L = L_arg(I, a, 0);
  return L ? layout_result(I, fly_layout_zip(&I->A, L), a) : NULL;
}

const FlyVal *fly_builtin_flatten(FlyInterp *I, const FlyArgs *a) {
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

const FlyVal *fly_builtin_crd2idx(FlyInterp *I, const FlyArgs *a) {
  if (!fly_val_is_static(a->v[0]) && a->v[1]->kind == FLY_V_LAYOUT) {
    /* A runtime coordinate in a static layout: computed on the GPU. */
    if (fly_layout_has_basis(a->v[1]->layout))
      return fly_err(I, a->node[1],
                     "crd2idx of a runtime coordinate takes a layout of integer strides; %s "
                     "gives coordinates",
                     fly_layout_str(&I->A, a->v[1]->layout));
    if (!runtime_coord_fits(I, a->v[0], a->v[1]->layout->shape, a->node[0]))
      return NULL;
    return fly_emit_value(I, runtime_i32(I, a->node[0], "a runtime coordinate"), FLY_OPCODE_CRD2IDX,
                          2, a->v, a->call);
  }
  FlyTuple *c = T_arg(I, a, 0, "a coordinate");
  if (c && a->v[1]->kind == FLY_V_COMPOSED) {
    FlyTuple *v = fly_composed_value(&I->A, c, a->v[1]->composed);
    return v ? fly_tuple_to_val(I, v) : fly_err_algebra(I, a->call);
  }
  const FlyLayout *L = c ? L_arg(I, a, 1) : NULL;
  if (!L)
    return NULL;
  /* An integer, or the coordinate of a layout of basis strides. */
  FlyTuple *v = fly_layout_value(&I->A, c, L);
  return v ? fly_tuple_to_val(I, v) : fly_err_algebra(I, a->call);
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

const FlyVal *fly_builtin_idx2crd(FlyInterp *I, const FlyArgs *a) {
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
    return fly_emit_value(I, coord_like(I, shape, a->node[0]), FLY_OPCODE_IDX2CRD, 2, args,
                          a->call);
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

const FlyVal *fly_builtin_slice(FlyInterp *I, const FlyArgs *a) {
  /* tiled.slice(thread): the part of a tiled copy or MMA one thread does. */
  if (a->v[0]->kind == FLY_V_OBJECT)
    return fly_thread_slice(I, a);
  if (a->n != 2)
    return fly_err(I, a->call, "slice takes a coordinate and a layout: slice((_, 2), L)");
  FlyTuple *c = T_arg(I, a, 0, "a coordinate");
  const FlyLayout *L = c ? L_arg(I, a, 1) : NULL;
  return L ? layout_result(I, fly_layout_slice(&I->A, c, L, NULL), a) : NULL;
}

const FlyVal *fly_builtin_dice(FlyInterp *I, const FlyArgs *a) {
  FlyTuple *c = T_arg(I, a, 0, "a coordinate");
  const FlyLayout *L = c ? L_arg(I, a, 1) : NULL;
  return L ? layout_result(I, fly_layout_dice(&I->A, c, L), a) : NULL;
}

/* ---- the algebra --------------------------------------------------------------------- */

const FlyVal *fly_builtin_coalesce(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *L = L_arg(I, a, 0);
  if (!L)
    return NULL;
  if (a->n == 1)
    return layout_result(I, fly_layout_coalesce(&I->A, L), a);
  FlyTuple *p = T_arg(I, a, 1, "a profile");
  return p ? layout_result(I, fly_layout_coalesce_by(&I->A, L, p), a) : NULL;
}

const FlyVal *fly_builtin_filter(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *L = L_arg(I, a, 0);
  if (!L)
    return NULL;
  if (a->n == 1)
    return layout_result(I, fly_layout_filter(&I->A, L), a);
  FlyTuple *p = T_arg(I, a, 1, "a profile");
  return p ? layout_result(I, fly_layout_filter_by(&I->A, L, p), a) : NULL;
}

/* A composed layout as a value; the algebra's error when C is NULL. */
static const FlyVal *composed_val(FlyInterp *I, const FlyComposed *C, const FlyArgs *a) {
  if (!C)
    return fly_err_algebra(I, a->call);
  FlyVal *v = fly_val_new(&I->A, FLY_V_COMPOSED);
  if (v)
    v->composed = C;
  return v;
}

const FlyVal *fly_builtin_composition(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *x = a->v[0], *y = a->v[1];
  if (x->kind == FLY_V_TENSOR)
    return fly_tensor_compose(I, a);
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
    return composed_val(I, fly_composed_make(&I->A, x->swizzle, offset, (FlyLayout *)L), a);
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
    return composed_val(I, fly_composed_with_layout(&I->A, x->composed, (FlyLayout *)R), a);
  }
  const FlyLayout *L = fly_arg_layout(I, a, 0, "the left side of a composition");
  if (!L)
    return NULL;
  if (y->kind == FLY_V_LAYOUT)
    return layout_result(I, fly_layout_composition(&I->A, L, y->layout), a);
  FlyTiler *T = fly_val_to_tiler(I, y, a->node[1]);
  return T ? layout_result(I, fly_layout_compose_tiler(&I->A, L, T), a) : NULL;
}

const FlyVal *fly_builtin_complement(FlyInterp *I, const FlyArgs *a) {
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

const FlyVal *fly_builtin_right_inverse(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *L = L_arg(I, a, 0);
  return L ? layout_result(I, fly_layout_right_inverse(&I->A, L), a) : NULL;
}

const FlyVal *fly_builtin_left_inverse(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *L = L_arg(I, a, 0);
  return L ? layout_result(I, fly_layout_left_inverse(&I->A, L), a) : NULL;
}

typedef FlyLayout *(*TilerOp)(FlyAlgebra *, const FlyLayout *, const FlyTiler *);

static const FlyVal *tiler_op(FlyInterp *I, const FlyArgs *a, TilerOp op, FlyBuiltinId which) {
  if (a->v[0]->kind == FLY_V_TENSOR)
    return fly_tensor_divide(I, which, a);
  const FlyLayout *L = fly_arg_layout(I, a, 0, "the layout to divide or repeat");
  FlyTiler *T = L ? fly_val_to_tiler(I, a->v[1], a->node[1]) : NULL;
  return T ? layout_result(I, op(&I->A, L, T), a) : NULL;
}

#define TILER_BUILTIN(name, ID)                                                                    \
  const FlyVal *fly_builtin_##name(FlyInterp *I, const FlyArgs *a) {                               \
    return tiler_op(I, a, fly_layout_##name, FLY_BUILTIN_##ID);                                    \
  }
TILER_BUILTIN(logical_divide, LOGICAL_DIVIDE)
TILER_BUILTIN(zipped_divide, ZIPPED_DIVIDE)
TILER_BUILTIN(tiled_divide, TILED_DIVIDE)
TILER_BUILTIN(flat_divide, FLAT_DIVIDE)
TILER_BUILTIN(logical_product, LOGICAL_PRODUCT)
TILER_BUILTIN(zipped_product, ZIPPED_PRODUCT)
TILER_BUILTIN(tiled_product, TILED_PRODUCT)
TILER_BUILTIN(flat_product, FLAT_PRODUCT)

const FlyVal *fly_builtin_blocked_product(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *L = L_arg(I, a, 0), *B = L ? L_arg(I, a, 1) : NULL;
  return B ? layout_result(I, fly_layout_blocked_product(&I->A, L, B), a) : NULL;
}

const FlyVal *fly_builtin_raked_product(FlyInterp *I, const FlyArgs *a) {
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

const FlyVal *fly_builtin_recast(FlyInterp *I, const FlyArgs *a) {
  if (a->v[0]->kind == FLY_V_TENSOR)
    return fly_tensor_recast(I, a);
  if (a->n != 3)
    return fly_err(I, a->call,
                   "recast takes a layout and two widths, recast(L, from, to), or a "
                   "tensor and an element type, recast(t, T)");
  int from, to;
  if (!bits_arg(I, a, 1, &from) || !bits_arg(I, a, 2, &to))
    return NULL;
  if (a->v[0]->kind == FLY_V_COMPOSED) {
    return composed_val(I, fly_composed_recast(&I->A, a->v[0]->composed, from, to), a);
  }
  const FlyLayout *L = L_arg(I, a, 0);
  return L ? layout_result(I, fly_layout_recast(&I->A, L, from, to), a) : NULL;
}

const FlyVal *fly_builtin_swizzle(FlyInterp *I, const FlyArgs *a) {
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
const FlyVal *fly_builtin_make_layout(FlyInterp *I, const FlyArgs *a) {
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

const FlyVal *fly_builtin_make_ordered_layout(FlyInterp *I, const FlyArgs *a) {
  FlyTuple *shape = T_arg(I, a, 0, "a shape");
  FlyTuple *order = shape ? T_arg(I, a, 1, "an order") : NULL;
  return order ? layout_result(I, fly_layout_ordered(&I->A, shape, order), a) : NULL;
}

const FlyVal *fly_builtin_make_row_major(FlyInterp *I, const FlyArgs *a) {
  FlyTuple *shape = T_arg(I, a, 0, "a shape");
  return shape ? layout_result(I, fly_layout_row_major(&I->A, shape), a) : NULL;
}

const FlyVal *fly_builtin_max_common_vector(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *x = L_arg(I, a, 0), *y = x ? L_arg(I, a, 1) : NULL;
  int64_t n;
  return y ? INT_RESULT(fly_layout_max_common_vector(&I->A, x, y, &n), n) : NULL;
}

const FlyVal *fly_builtin_max_common_layout(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *x = L_arg(I, a, 0), *y = x ? L_arg(I, a, 1) : NULL;
  return y ? layout_result(I, fly_layout_max_common_layout(&I->A, x, y), a) : NULL;
}

/* tv_layout(threads, values): the thread-value layout of a tiled copy, which
   `flyc layout --table` draws by thread and value. */
const FlyVal *fly_builtin_tv_layout(FlyInterp *I, const FlyArgs *a) {
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

/* ---- tuple arithmetic ------------------------------------------------------------------ */

static bool is_sum(FlyOp op) { return op == FLY_OP_ADD || op == FLY_OP_SUB; }

/* CuTe's as_arithmetic_tuple: each basis element as the coordinate it is. */
static const FlyVal *as_coords(FlyInterp *I, const FlyVal *v) {
  if (v->kind == FLY_V_BASIS)
    return fly_tuple_to_val(I, fly_tuple_as_coord(&I->A, v->basis));
  if (v->kind != FLY_V_TUPLE)
    return v;
  const FlyVal **e = fly_alloc(&I->A, sizeof *e * (size_t)(v->n ? v->n : 1));
  if (!e)
    return NULL;
  for (int i = 0; i < v->n; i++)
    if (!(e[i] = as_coords(I, v->elems[i])))
      return NULL;
  return fly_val_tuple(&I->A, v->n, e);
}

/* a op b between leaves: numbers by the operator, a basis element scaled
 * by a static integer. */
static const FlyVal *leaf_op(FlyInterp *I, FlyOp op, const FlyVal *a, const FlyVal *b,
                             const FlyNode *at) {
  if (a->kind != FLY_V_BASIS && b->kind != FLY_V_BASIS)
    return fly_binary(I, op, a, b, at);
  const FlyVal *e = a->kind == FLY_V_BASIS ? a : b, *k = e == a ? b : a;
  bool scale = op == FLY_OP_MUL || (op == FLY_OP_DIV && e == a);
  if (!scale || k->kind != FLY_V_INT)
    return fly_err(I, at,
                   "'%s' of %s and %s: a basis element is scaled by an integer (* or /) or added "
                   "to coordinates (+, -), nothing else",
                   fly_op_spelling(op), fly_val_str_canonical(&I->A, a),
                   fly_val_str_canonical(&I->A, b));
  FlyTuple *x = fly_val_to_tuple(I, a, at, "an operand"),
           *y = fly_val_to_tuple(I, b, at, "an operand");
  FlyTuple *r = x && y
                    ? fly_tuple_arith(&I->A, op == FLY_OP_MUL ? FLY_ARITH_MUL : FLY_ARITH_DIV, x, y)
                    : NULL;
  return r ? fly_tuple_to_val(I, r) : x && y ? fly_err_algebra(I, at) : NULL;
}

/* Leaf by leaf: tuples of the same modes (for + and -, missing modes are
   0); an operand that is not a tuple applies to every leaf (`spread`), but
   inside two tuples a leaf meets only a leaf. */
static const FlyVal *leafwise(FlyInterp *I, FlyOp op, const FlyVal *a, const FlyVal *b,
                              const FlyNode *at, bool spread) {
  bool ta = a->kind == FLY_V_TUPLE, tb = b->kind == FLY_V_TUPLE;
  if (!ta && !tb)
    return leaf_op(I, op, a, b, at);
  const FlyVal *leaf = ta ? b : a;
  if (ta != tb && !spread && !(is_sum(op) && leaf->kind == FLY_V_INT && leaf->i == 0))
    return fly_err(I, at, "'%s' of %s and %s: a number where the other has a tuple",
                   fly_op_spelling(op), fly_val_str_canonical(&I->A, a),
                   fly_val_str_canonical(&I->A, b));
  int n = ta ? a->n : b->n;
  if (ta && tb && a->n != b->n) {
    if (!is_sum(op))
      return fly_err(I, at, "'%s' of %s and %s: the tuples do not have the same modes",
                     fly_op_spelling(op), fly_val_str_canonical(&I->A, a),
                     fly_val_str_canonical(&I->A, b));
    n = a->n > b->n ? a->n : b->n;
  }
  const FlyVal **e = fly_alloc(&I->A, sizeof *e * (size_t)(n ? n : 1));
  const FlyVal *zero = fly_val_int(&I->A, 0, NULL);
  if (!e || !zero)
    return NULL;
  for (int i = 0; i < n; i++) {
    const FlyVal *x = !ta ? a : i < a->n ? a->elems[i] : zero;
    const FlyVal *y = !tb ? b : i < b->n ? b->elems[i] : zero;
    if (!(e[i] = leafwise(I, op, x, y, at, spread || ta != tb)))
      return NULL;
  }
  return fly_val_tuple(&I->A, n, e);
}

const FlyVal *fly_tuple_binary(FlyInterp *I, FlyOp op, const FlyVal *a, const FlyVal *b,
                               const FlyNode *at) {
  if (op >= FLY_OP_LT && op <= FLY_OP_GE)
    return fly_err(I, at, "'%s' compares numbers; compare tuples leaf by leaf with elem_less(a, b)",
                   fly_op_spelling(op));
  if (op != FLY_OP_ADD && op != FLY_OP_SUB && op != FLY_OP_MUL && op != FLY_OP_DIV &&
      op != FLY_OP_MOD)
    return fly_err(
        I, at, "'%s' takes numbers, not %s", fly_op_spelling(op),
        fly_val_describe(&I->A, a->kind == FLY_V_TUPLE || a->kind == FLY_V_BASIS ? a : b));
  if (is_sum(op) && (!(a = as_coords(I, a)) || !(b = as_coords(I, b))))
    return NULL;
  return leafwise(I, op, a, b, at, a->kind != FLY_V_TUPLE || b->kind != FLY_V_TUPLE);
}

typedef FlyTuple *(*TupleFn)(FlyAlgebra *, const FlyTuple *, const FlyTuple *);

static const FlyVal *tuple_fn(FlyInterp *I, const FlyArgs *a, TupleFn f, const char *what) {
  FlyTuple *x = T_arg(I, a, 0, what), *y = x ? T_arg(I, a, 1, what) : NULL;
  FlyTuple *r = y ? f(&I->A, x, y) : NULL;
  if (!r)
    return y ? fly_err_algebra(I, a->call) : NULL;
  return fly_tuple_to_val(I, r);
}

const FlyVal *fly_ceil_div_tuples(FlyInterp *I, const FlyArgs *a) {
  return tuple_fn(I, a, fly_tuple_ceil_div_tuple, "an argument of ceil_div");
}

const FlyVal *fly_builtin_shape_div(FlyInterp *I, const FlyArgs *a) {
  return tuple_fn(I, a, fly_tuple_shape_div, "an argument of shape_div");
}

const FlyVal *fly_builtin_elem_less(FlyInterp *I, const FlyArgs *a) {
  if (!fly_val_is_static(a->v[0]) || !fly_val_is_static(a->v[1]))
    return fly_elem_less_runtime(I, a->v[0], a->v[1], a->call);
  FlyTuple *x = T_arg(I, a, 0, "a coordinate"), *y = x ? T_arg(I, a, 1, "a shape") : NULL;
  bool less;
  if (!y)
    return NULL;
  return fly_tuple_elem_less(&I->A, x, y, &less) ? fly_val_bool(less) : fly_err_algebra(I, a->call);
}

const FlyVal *fly_builtin_product_each(FlyInterp *I, const FlyArgs *a) {
  FlyTuple *t = T_arg(I, a, 0, "the argument of product_each");
  FlyTuple *r = t ? fly_tuple_product_each(&I->A, t) : NULL;
  return r ? fly_tuple_to_val(I, r) : t ? fly_err_algebra(I, a->call) : NULL;
}

/* take(x, begin, end): the modes [begin, end) of a tuple or a layout. */
const FlyVal *fly_builtin_take(FlyInterp *I, const FlyArgs *a) {
  int64_t b, e;
  if (!fly_arg_int(I, a, 1, "the first mode", &b) || !fly_arg_int(I, a, 2, "the end mode", &e))
    return NULL;
  if (b < 0 || e > FLY_MAX_MODES || b >= e)
    return fly_err(I, a->call, "take(x, %" PRId64 ", %" PRId64 ") needs 0 <= begin < end", b, e);
  if (a->v[0]->kind == FLY_V_TUPLE || a->v[0]->kind == FLY_V_INT) {
    FlyTuple *t = T_arg(I, a, 0, "the argument of take");
    FlyTuple *r = t ? fly_tuple_take(&I->A, t, (int)b, (int)e) : NULL;
    return r ? fly_tuple_to_val(I, r) : t ? fly_err_algebra(I, a->call) : NULL;
  }
  const FlyLayout *L = L_arg(I, a, 0);
  FlyLayout *R = L ? fly_layout_take(&I->A, L, (int)b, (int)e) : NULL;
  if (L && a->v[0]->kind == FLY_V_COMPOSED)
    return composed_val(I, fly_composed_with_layout(&I->A, a->v[0]->composed, R), a);
  return L ? layout_result(I, R, a) : NULL;
}

/* ---- basis elements, identity layouts, compact layouts after others -------------------- */

/* basis(i, j, ...): CuTe's E<i,j,...>, the basis element 1@...@j@i. */
const FlyVal *fly_builtin_basis(FlyInterp *I, const FlyArgs *a) {
  int modes[FLY_MAX_DEPTH];
  if (a->n > FLY_MAX_DEPTH)
    return fly_err(I, a->call, "a basis element has at most %d modes", FLY_MAX_DEPTH);
  for (int i = 0; i < a->n; i++) {
    int64_t m;
    if (!fly_arg_int(I, a, i, "a mode", &m))
      return NULL;
    if (m < 0 || m >= FLY_MAX_MODES)
      return fly_err(I, a->node[i], "a basis mode is a number from 0 to %d, not %" PRId64,
                     FLY_MAX_MODES - 1, m);
    modes[i] = (int)m;
  }
  FlyTuple *e = fly_tuple_basis(&I->A, 1, a->n, modes);
  return e ? fly_tuple_to_val(I, e) : fly_err_algebra(I, a->call);
}

const FlyVal *fly_builtin_make_basis_like(FlyInterp *I, const FlyArgs *a) {
  FlyTuple *shape = T_arg(I, a, 0, "a shape");
  FlyTuple *r = shape ? fly_tuple_basis_like(&I->A, shape) : NULL;
  return r ? fly_tuple_to_val(I, r) : shape ? fly_err_algebra(I, a->call) : NULL;
}

const FlyVal *fly_builtin_make_identity_layout(FlyInterp *I, const FlyArgs *a) {
  FlyTuple *shape = T_arg(I, a, 0, "a shape");
  return shape ? layout_result(I, fly_layout_identity(&I->A, shape), a) : NULL;
}

const FlyVal *fly_builtin_coshape(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *L = L_arg(I, a, 0);
  FlyTuple *r = L ? fly_layout_coshape(&I->A, L) : NULL;
  return r ? fly_tuple_to_val(I, r) : L ? fly_err_algebra(I, a->call) : NULL;
}

const FlyVal *fly_builtin_make_layout_like(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *L = fly_arg_layout(I, a, 0, "the argument of make_layout_like");
  return L ? layout_result(I, fly_layout_like(&I->A, L), a) : NULL;
}

const FlyVal *fly_builtin_make_fragment_like(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *L = fly_arg_layout(I, a, 0, "the argument of make_fragment_like");
  return L ? layout_result(I, fly_layout_fragment_like(&I->A, L), a) : NULL;
}

const FlyVal *fly_builtin_tile_to_shape(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *L = L_arg(I, a, 0);
  FlyTuple *shape = L ? T_arg(I, a, 1, "a target shape") : NULL, *order = NULL;
  if (!shape || (a->n > 2 && !(order = T_arg(I, a, 2, "an order"))))
    return NULL;
  FlyLayout *R = fly_layout_tile_to_shape(&I->A, L, shape, order);
  if (R && a->v[0]->kind == FLY_V_COMPOSED)
    return composed_val(I, fly_composed_with_layout(&I->A, a->v[0]->composed, R), a);
  return layout_result(I, R, a);
}

typedef FlyTuple *(*IndexFn)(FlyAlgebra *, const FlyLayout *, int64_t);

static const FlyVal *coord_of(FlyInterp *I, const FlyArgs *a, IndexFn f) {
  const FlyLayout *L = fly_arg_layout(I, a, 0, "a compact layout");
  int64_t i;
  if (!L || !fly_arg_int(I, a, 1, "an index", &i))
    return NULL;
  FlyTuple *r = f(&I->A, L, i);
  return r ? fly_tuple_to_val(I, r) : fly_err_algebra(I, a->call);
}

const FlyVal *fly_builtin_get_hier_coord(FlyInterp *I, const FlyArgs *a) {
  return coord_of(I, a, fly_layout_hier_coord);
}

const FlyVal *fly_builtin_get_flat_coord(FlyInterp *I, const FlyArgs *a) {
  return coord_of(I, a, fly_layout_flat_coord);
}

const FlyVal *fly_builtin_get_1d_coord(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *L = fly_arg_layout(I, a, 0, "a compact layout");
  int64_t i, v;
  if (!L || !fly_arg_int(I, a, 1, "an index", &i))
    return NULL;
  return INT_RESULT(fly_layout_1d_coord(&I->A, L, i, &v), v);
}

/* ---- composed layouts ------------------------------------------------------------------ */

/* make_composed_layout(inner, offset, outer): c -> inner(offset + outer(c)),
   inner a swizzle or a layout. */
const FlyVal *fly_builtin_make_composed_layout(FlyInterp *I, const FlyArgs *a) {
  const FlyLayout *outer = fly_arg_layout(I, a, 2, "the outer layout");
  if (!outer)
    return NULL;
  if (a->v[0]->kind == FLY_V_SWIZZLE) {
    int64_t offset;
    if (!fly_arg_int(I, a, 1, "the offset of a swizzled layout", &offset))
      return NULL;
    return composed_val(I, fly_composed_make(&I->A, a->v[0]->swizzle, offset, (FlyLayout *)outer),
                        a);
  }
  if (a->v[0]->kind != FLY_V_LAYOUT)
    return fly_err(I, a->node[0],
                   "the inner part of a composed layout is a swizzle or a layout, "
                   "not %s",
                   fly_val_describe(&I->A, a->v[0]));
  FlyTuple *offset = T_arg(I, a, 1, "the offset of a composed layout");
  if (!offset)
    return NULL;
  return composed_val(
      I, fly_composed_make_layout(&I->A, (FlyLayout *)a->v[0]->layout, offset, (FlyLayout *)outer),
      a);
}

static const FlyComposed *composed_arg(FlyInterp *I, const FlyArgs *a, const char *fn) {
  if (a->v[0]->kind == FLY_V_COMPOSED)
    return a->v[0]->composed;
  fly_err(I, a->node[0], "%s takes a composed layout (inner o offset o outer), not %s", fn,
          fly_val_describe(&I->A, a->v[0]));
  return NULL;
}

const FlyVal *fly_builtin_composed_inner(FlyInterp *I, const FlyArgs *a) {
  const FlyComposed *C = composed_arg(I, a, "composed_inner");
  if (!C)
    return NULL;
  if (C->inner)
    return fly_val_layout(&I->A, C->inner);
  FlyVal *v = fly_val_new(&I->A, FLY_V_SWIZZLE);
  if (v)
    v->swizzle = C->swizzle;
  return v;
}

/* The bytes of the hardware swizzle s of elements of T (wgmma's and TMA's
   32, 64 and 128-byte swizzles xor byte-address bits [4, 4+B) with
   [7, 7+B): S<B, 4 - log2(bytes of T), 3> on elements), 0 for a swizzle of
   no bits; -1 after an error at `at`. */
static int64_t hardware_swizzle_bytes(FlyInterp *I, const FlyNode *at, FlySwizzle s,
                                      const FlyType *T) {
  if (s.bits == 0)
    return 0;
  int bits = fly_type_bits(T), lb = 0;
  while (lb < 4 && (8 << lb) < bits)
    lb++;
  if (bits >= 8 && (8 << lb) == bits && s.base + lb == 4 && s.shift == 3 && s.bits <= 3)
    return 16 << s.bits;
  fly_err(I, at,
          "%s on %s is not one of the hardware's swizzles (32, 64 or 128 bytes: S<1, 2 or 3, "
          "%d, 3> on %d-bit elements)",
          fly_swizzle_str(&I->A, s), fly_type_str(&I->A, T), 4 - lb, bits);
  return -1;
}

/* swizzle_bytes(t) of a shared tile, swizzle_bytes(L, T) of a layout (or a
   swizzle) of elements of T: what a TMA map or a wgmma descriptor of it
   says; 0 when it is not swizzled. */
const FlyVal *fly_builtin_swizzle_bytes(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *x = a->v[0];
  if (x->kind == FLY_V_TENSOR) {
    if (a->n != 1)
      return fly_err(I, a->call, "swizzle_bytes(t) of a tensor takes no element type");
    if (!x->tensor.swizzled)
      return fly_val_int(&I->A, 0, NULL);
    int64_t n = hardware_swizzle_bytes(I, a->node[0], x->tensor.swizzle, x->tensor.elem);
    return n < 0 ? NULL : fly_val_int(&I->A, n, NULL);
  }
  if (a->n != 2 || a->v[1]->kind != FLY_V_TYPE || a->v[1]->type_value->kind != FLY_TY_SCALAR)
    return fly_err(I, a->n == 2 ? a->node[1] : a->call,
                   "swizzle_bytes(L, T) takes a layout and its element type, such as "
                   "swizzle_bytes(L, bf16)");
  const FlyType *T = a->v[1]->type_value;
  if (x->kind == FLY_V_LAYOUT)
    return fly_val_int(&I->A, 0, NULL);
  FlySwizzle s;
  if (x->kind == FLY_V_COMPOSED && !x->composed->inner)
    s = x->composed->swizzle;
  else if (x->kind == FLY_V_SWIZZLE)
    s = x->swizzle;
  else
    return fly_err(I, a->node[0],
                   "swizzle_bytes takes a layout (swizzled or not), a swizzle or a shared "
                   "tile, not %s",
                   fly_val_describe(&I->A, x));
  int64_t n = hardware_swizzle_bytes(I, a->node[0], s, T);
  return n < 0 ? NULL : fly_val_int(&I->A, n, NULL);
}

const FlyVal *fly_builtin_composed_offset(FlyInterp *I, const FlyArgs *a) {
  const FlyComposed *C = composed_arg(I, a, "composed_offset");
  return C ? fly_tuple_to_val(I, fly_composed_offset(&I->A, C)) : NULL;
}

const FlyVal *fly_builtin_composed_outer(FlyInterp *I, const FlyArgs *a) {
  const FlyComposed *C = composed_arg(I, a, "composed_outer");
  return C ? fly_val_layout(&I->A, C->layout) : NULL;
}
