/* fly_interp_types.c — type annotations, conversions (implicit and `as`)
 * and constructors such as vec<4, f32>(0.0) and smem<f16>((64, 32):(32, 1)). */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "fly_interp.h"
#include "fly_tensor_map.h"

enum { MAX_VEC = 4096 };

/* ---- the layout of a tensor type: numbers where static, ? where given at launch ---- */

static const FlyVal *eval_pattern(FlyInterp *I, FlyScope *s, const FlyNode *e) {
  if (e->kind == FLY_DYNAMIC)
    return fly_val_dynamic();
  if (e->kind == FLY_TUPLE) {
    int n = 0;
    for (const FlyNode *k = e->kid[0]; k; k = k->next)
      n++;
    const FlyVal **v = fly_alloc(&I->A, sizeof *v * (size_t)(n ? n : 1));
    if (!v)
      return NULL;
    int i = 0;
    for (const FlyNode *k = e->kid[0]; k; k = k->next)
      if (!(v[i++] = eval_pattern(I, s, k)))
        return NULL;
    return fly_val_tuple(&I->A, n, v);
  }
  const FlyVal *v = fly_eval_static(I, s, e, "a number in the layout of a type");
  if (v && !fly_val_is_int_tuple(v))
    return fly_err(I, e, "the layout of a type holds integers and '?', not %s",
                   fly_val_describe(&I->A, v));
  return v;
}

static bool congruent_pattern(const FlyVal *a, const FlyVal *b) {
  bool sa = a->kind == FLY_V_TUPLE, sb = b->kind == FLY_V_TUPLE;
  if (sa != sb)
    return false;
  if (!sa)
    return true;
  if (a->n != b->n)
    return false;
  for (int i = 0; i < a->n; i++)
    if (!congruent_pattern(a->elems[i], b->elems[i]))
      return false;
  return true;
}

static bool eval_layout_pattern(FlyInterp *I, FlyScope *s, const FlyNode *e, FlyType *t) {
  if (e->kind == FLY_LAYOUT) {
    t->shape = eval_pattern(I, s, e->kid[0]);
    t->stride = t->shape ? eval_pattern(I, s, e->kid[1]) : NULL;
    if (!t->stride)
      return false;
    if (!congruent_pattern(t->shape, t->stride)) {
      fly_err(I, e, "the shape and the stride of a layout must have the same form");
      return false;
    }
    return true;
  }
  if (e->kind != FLY_TUPLE && e->kind != FLY_DYNAMIC) {
    const FlyVal *v = fly_eval_static(I, s, e, "the layout of a type");
    if (!v)
      return false;
    if (v->kind == FLY_V_LAYOUT) {
      t->shape = fly_tuple_to_val(I, v->layout->shape);
      t->stride = fly_tuple_to_val(I, v->layout->stride);
      return t->shape && t->stride;
    }
  }
  t->shape = eval_pattern(I, s, e);
  /* A type that gives only a shape leaves every stride to the launch. */
  t->stride = t->shape ? fly_map_leaves(I, t->shape, fly_leaf_dynamic, NULL) : NULL;
  return t->stride != NULL;
}

/* ---- annotations ------------------------------------------------------------------ */

static int count_list(const FlyNode *k) {
  int n = 0;
  for (; k; k = k->next)
    n++;
  return n;
}

static const FlyType *vec_type(FlyInterp *I, FlyScope *s, const FlyNode *e) {
  const FlyNode *a = e->kid[0];
  if (count_list(a) != 2 || a->kind == FLY_NAMED_ARG || a->next->kind == FLY_NAMED_ARG) {
    fly_err(I, e, "vec takes a length and an element type: vec<4, f32>");
    return NULL;
  }
  const FlyVal *n = fly_eval_static(I, s, a, "the length of a vec");
  int64_t len;
  if (!n || !fly_val_to_int(I, n, a, "the length of a vec", &len))
    return NULL;
  if (len < 1 || len > MAX_VEC) {
    fly_err(I, a, "the length of a vec must be between 1 and %d, not %" PRId64, MAX_VEC, len);
    return NULL;
  }
  const FlyType *elem = fly_eval_type(I, s, a->next);
  if (!elem)
    return NULL;
  if (elem->kind != FLY_TY_SCALAR && elem->kind != FLY_TY_VEC) {
    fly_err(I, a->next, "the elements of a vec are numbers or vecs, not %s",
            fly_type_str(&I->A, elem));
    return NULL;
  }
  return fly_type_vec(&I->A, (int)len, elem);
}

static const FlyType *memory_type(FlyInterp *I, FlyScope *s, const FlyNode *e) {
  FlyType *t = fly_alloc(&I->A, sizeof *t);
  if (!t)
    return NULL;
  t->kind = FLY_TY_TENSOR;
  t->space = e->op == FLY_TYPE_SMEM   ? FLY_SPACE_SHARED
             : e->op == FLY_TYPE_RMEM ? FLY_SPACE_REGISTER
                                      : FLY_SPACE_GLOBAL;
  const char *ctor = fly_type_code_name((FlyTypeCode)e->op);
  int positional = 0;
  for (const FlyNode *a = e->kid[0]; a; a = a->next) {
    if (a->kind == FLY_NAMED_ARG) {
      if (strcmp(a->str, "align") != 0 || t->space != FLY_SPACE_GLOBAL) {
        fly_err(I, a, "%s<...> has no argument named '%s'%s", ctor, a->str,
                t->space == FLY_SPACE_GLOBAL ? " (only 'align')" : "");
        return NULL;
      }
      int64_t align;
      const FlyVal *v = fly_eval_static(I, s, a->kid[0], "the alignment of a tensor");
      if (!v || !fly_val_to_int(I, v, a->kid[0], "the alignment", &align))
        return NULL;
      if (align < 1 || align > 4096 || (align & (align - 1))) {
        fly_err(I, a->kid[0], "an alignment is a power of two from 1 to 4096 bytes, not %" PRId64,
                align);
        return NULL;
      }
      t->align = (int)align;
      continue;
    }
    if (positional == 0) {
      t->elem = fly_eval_type(I, s, a);
      if (!t->elem)
        return NULL;
      if (t->elem->kind != FLY_TY_SCALAR) {
        fly_err(I, a, "the elements of a %s are numbers, not %s", ctor,
                fly_type_str(&I->A, t->elem));
        return NULL;
      }
    } else if (positional == 1) {
      if (!eval_layout_pattern(I, s, a, t))
        return NULL;
    } else {
      fly_err(I, a, "%s takes an element type and a layout: %s<f32, (?, ?):(?, 1)>", ctor, ctor);
      return NULL;
    }
    positional++;
  }
  if (positional == 0) {
    fly_err(I, e, "%s needs an element type: %s<f32>", ctor, ctor);
    return NULL;
  }
  return t;
}

static const FlyType *tuple_type(FlyInterp *I, FlyScope *s, const FlyNode *e) {
  int n = count_list(e->kid[0]);
  const FlyType **elems = fly_alloc(&I->A, sizeof *elems * (size_t)(n ? n : 1));
  if (!elems)
    return NULL;
  int i = 0;
  for (const FlyNode *k = e->kid[0]; k; k = k->next)
    if (!(elems[i++] = fly_eval_type(I, s, k)))
      return NULL;
  return fly_type_tuple(&I->A, n, elems);
}

const FlyType *fly_eval_type(FlyInterp *I, FlyScope *s, const FlyNode *t) {
  if (!t)
    return NULL;
  switch (t->kind) {
  case FLY_TYPE:
    return fly_type_scalar((FlyTypeCode)t->op);
  case FLY_TYPE_APPLY:
    return t->op == FLY_TYPE_VEC ? vec_type(I, s, t) : memory_type(I, s, t);
  case FLY_TUPLE:
    return tuple_type(I, s, t);
  default: {
    const FlyVal *v = fly_eval(I, s, t);
    if (!v)
      return NULL;
    if (v->kind != FLY_V_TYPE) {
      fly_err(I, t, "expected a type, but this is %s", fly_val_describe(&I->A, v));
      return NULL;
    }
    return v->type_value;
  }
  }
}

/* ---- conversions ------------------------------------------------------------------ */

const FlyType *fly_default_runtime_type(const FlyVal *v) {
  if (v->type)
    return v->type;
  switch (v->kind) {
  case FLY_V_FLOAT:
    return fly_type_scalar(FLY_TYPE_F32);
  case FLY_V_BOOL:
    return fly_type_scalar(FLY_TYPE_I1);
  default:
    return fly_type_scalar(FLY_TYPE_I32);
  }
}

/* Two's complement wrap of v to a type's width (an explicit cast). */
static int64_t wrap(int64_t v, int bits) {
  if (bits >= 64)
    return v;
  uint64_t m = ((uint64_t)1 << bits) - 1, u = (uint64_t)v & m;
  uint64_t sign = (uint64_t)1 << (bits - 1);
  return (int64_t)((u ^ sign) - sign);
}

const FlyVal *fly_float_const(FlyInterp *I, const FlyVal *v, const FlyType *t, const FlyNode *at) {
  double x = v->kind == FLY_V_FLOAT ? v->f : (double)v->i, r;
  if (fly_float_round(t, x, &r))
    return fly_val_float(&I->A, r, t);
  const char *name = fly_type_str(&I->A, t);
  if (v->kind == FLY_V_FLOAT)
    return fly_err(I, at, "the float %g does not fit in %s (the largest finite %s is %g)", x, name,
                   name, fly_float_max(t));
  return fly_err(I, at, "the constant %" PRId64 " does not fit in %s (the largest finite %s is %g)",
                 v->i, name, name, fly_float_max(t));
}

static const FlyVal *mismatch(FlyInterp *I, const FlyVal *v, const FlyType *t, const FlyNode *at) {
  const char *have = fly_val_describe(&I->A, v);
  const char *want = fly_type_str(&I->A, t);
  bool numeric_static =
      t->kind == FLY_TY_STATIC && (t->code == FLY_TYPE_INT || t->code == FLY_TYPE_FLOAT);
  bool scalars = (t->kind == FLY_TY_SCALAR || numeric_static) &&
                 (v->kind == FLY_V_INT || v->kind == FLY_V_FLOAT ||
                  (v->kind == FLY_V_RUNTIME && v->type->kind == FLY_TY_SCALAR));
  bool vecs = t->kind == FLY_TY_VEC && v->kind == FLY_V_RUNTIME && v->type->kind == FLY_TY_VEC;
  if (scalars || vecs)
    return fly_err(I, at, "expected %s, but this is %s (convert it with 'as %s')", want, have,
                   want);
  return fly_err(I, at, "expected %s, but this is %s", want, have);
}

static const FlyVal *to_scalar(FlyInterp *I, const FlyVal *v, const FlyType *t, const FlyNode *at,
                               bool explicit_cast) {
  bool to_int = fly_type_is_int(t), to_float = fly_type_is_float(t);
  bool to_i1 = t->code == FLY_TYPE_I1;
  if (v->kind == FLY_V_RUNTIME) {
    if (fly_type_equal(v->type, t))
      return v;
    if (!explicit_cast || v->type->kind != FLY_TY_SCALAR)
      return mismatch(I, v, t, at);
    return fly_emit_convert(I, v, t, NULL, at);
  }
  switch (v->kind) {
  case FLY_V_BOOL:
    if (to_i1)
      return v;
    if (explicit_cast && to_int)
      return fly_val_int(&I->A, v->i, t);
    if (explicit_cast && to_float)
      return fly_float_const(I, v, t, at);
    return mismatch(I, v, t, at);
  case FLY_V_INT:
    if (to_int) {
      if (explicit_cast)
        return fly_val_int(&I->A, wrap(v->i, fly_type_bits(t)), t);
      if (!fly_int_fits(t, v->i))
        return fly_err(I, at,
                       "the constant %" PRId64 " does not fit in %s (cast it with 'as' to "
                       "wrap it)",
                       v->i, fly_type_str(&I->A, t));
      return fly_val_int(&I->A, v->i, t);
    }
    if (to_float && (explicit_cast || !v->type))
      return fly_float_const(I, v, t, at);
    if (to_i1 && explicit_cast)
      return fly_val_bool(v->i != 0);
    return mismatch(I, v, t, at);
  case FLY_V_FLOAT:
    /* Implicitly, a typed float only widens (every narrower format's
       values are exact in a wider one; f16 and bf16 are not). */
    if (to_float && (explicit_cast || !v->type || fly_type_equal(v->type, t) ||
                     fly_type_bits(v->type) < fly_type_bits(t)))
      return fly_float_const(I, v, t, at);
    if (to_int && explicit_cast) {
      double f = trunc(v->f);
      if (!(f >= -9223372036854775808.0 && f < 9223372036854775808.0))
        return fly_err(I, at, "the float %g does not fit in an integer", v->f);
      return fly_val_int(&I->A, wrap((int64_t)f, fly_type_bits(t)), t);
    }
    return mismatch(I, v, t, at);
  default:
    return mismatch(I, v, t, at);
  }
}

static const FlyVal *to_static(FlyInterp *I, const FlyVal *v, const FlyType *t, const FlyNode *at,
                               bool explicit_cast) {
  const char *name = fly_type_code_name(t->code);
  if (!fly_val_is_static(v)) {
    char what[64];
    snprintf(what, sizeof what, "a value of type %s", name);
    return fly_err_not_static(I, at, v, what);
  }
  switch (t->code) {
  case FLY_TYPE_INT:
    if (v->kind == FLY_V_INT)
      return v->type ? fly_val_int(&I->A, v->i, NULL) : v;
    if (v->kind == FLY_V_FLOAT && explicit_cast) {
      const FlyVal *i = to_scalar(I, v, fly_type_scalar(FLY_TYPE_I64), at, true);
      return i ? fly_val_int(&I->A, i->i, NULL) : NULL;
    }
    if (v->kind == FLY_V_BOOL && explicit_cast)
      return fly_val_int(&I->A, v->i, NULL);
    break;
  case FLY_TYPE_FLOAT:
    if (v->kind == FLY_V_FLOAT)
      return v->type ? fly_val_float(&I->A, v->f, NULL) : v;
    if (v->kind == FLY_V_INT && (explicit_cast || !v->type))
      return fly_val_float(&I->A, (double)v->i, NULL);
    break;
  case FLY_TYPE_BOOL:
    if (v->kind == FLY_V_BOOL)
      return fly_val_bool(v->i != 0);
    break;
  case FLY_TYPE_STR:
    if (v->kind == FLY_V_STR)
      return v;
    break;
  case FLY_TYPE_LAYOUT:
    if (v->kind == FLY_V_LAYOUT || v->kind == FLY_V_COMPOSED)
      return v;
    break;
  case FLY_TYPE_TUPLE:
    if (v->kind == FLY_V_TUPLE)
      return v;
    break;
  case FLY_TYPE_TYPE:
    if (v->kind == FLY_V_TYPE)
      return v;
    break;
  default:
    break;
  }
  return mismatch(I, v, t, at);
}

static bool pattern_matches(const FlyVal *want, const FlyVal *have) {
  if (!want || want->kind == FLY_V_DYNAMIC)
    return true;
  if (want->kind == FLY_V_INT)
    return have->kind != FLY_V_INT || have->i == want->i;
  if (have->kind != FLY_V_TUPLE || have->n != want->n)
    return false;
  for (int i = 0; i < want->n; i++)
    if (!pattern_matches(want->elems[i], have->elems[i]))
      return false;
  return true;
}

static const FlyVal *to_tensor(FlyInterp *I, const FlyVal *v, const FlyType *t, const FlyNode *at) {
  if (v->kind != FLY_V_TENSOR || v->tensor.space != t->space ||
      !fly_type_equal(v->tensor.elem, t->elem))
    return mismatch(I, v, t, at);
  if (t->shape && (!pattern_matches(t->shape, v->tensor.shape) ||
                   (t->stride && !pattern_matches(t->stride, v->tensor.stride))))
    return fly_err(I, at, "expected %s, but the layout of this tensor is %s",
                   fly_type_str(&I->A, t), fly_val_str_canonical(&I->A, v));
  return v;
}

const FlyVal *fly_convert(FlyInterp *I, const FlyVal *v, const FlyType *t, const FlyNode *at,
                          bool explicit_cast) {
  if (!v)
    return NULL;
  if (!t) /* a static boolean typed i1 back to bool */
    return fly_val_bool(v->i != 0);
  switch (t->kind) {
  case FLY_TY_SCALAR:
    if (t->code == FLY_TYPE_I1 && v->kind == FLY_V_BOOL) {
      FlyVal *b = fly_val_new(&I->A, FLY_V_BOOL);
      if (b) {
        b->i = v->i;
        b->type = t;
      }
      return b;
    }
    return to_scalar(I, v, t, at, explicit_cast);
  case FLY_TY_STATIC:
    return to_static(I, v, t, at, explicit_cast);
  case FLY_TY_VEC:
    if (v->kind == FLY_V_RUNTIME && v->type->kind == FLY_TY_VEC) {
      if (fly_type_equal(v->type, t) && v->type->n >= 0)
        return v;
      if (fly_type_equal(v->type, t)) {
        /* The same vector, seen with its length known: the same code. */
        FlyVal *same = (FlyVal *)fly_val_runtime(&I->A, t, v->origin);
        if (same)
          same->ssa = v->ssa;
        return same;
      }
      if (explicit_cast && (v->type->n == t->n || v->type->n < 0))
        return fly_emit_convert(I, v, t, NULL, at);
    }
    return mismatch(I, v, t, at);
  case FLY_TY_TUPLE: {
    if (v->kind != FLY_V_TUPLE || v->n != t->n)
      return mismatch(I, v, t, at);
    const FlyVal **e = fly_alloc(&I->A, sizeof *e * (size_t)(v->n ? v->n : 1));
    if (!e)
      return NULL;
    for (int i = 0; i < v->n; i++)
      if (!(e[i] = fly_convert(I, v->elems[i], t->elems[i], at, explicit_cast)))
        return NULL;
    return fly_val_tuple(&I->A, v->n, e);
  }
  case FLY_TY_TENSOR:
    return to_tensor(I, v, t, at);
  }
  return mismatch(I, v, t, at);
}

/* ---- constructors ------------------------------------------------------------------- */

static const FlyVal *construct_vec(FlyInterp *I, const FlyType *t, const FlyArgs *a) {
  const FlyType *e = t->elem;
  if (a->n != 1 && a->n != t->n)
    return fly_err(I, a->call, "%s takes one value (for every element) or %d (one each), not %d",
                   fly_type_str(&I->A, t), t->n, a->n);
  /* One number fills every element, of nested vecs too. */
  if (a->n == 1 && a->v[0]->kind != FLY_V_RUNTIME)
    while (e->kind == FLY_TY_VEC)
      e = e->elem;
  /* Built from constants, its elements are known (FlyVal.known). */
  const FlyVal **known =
      t->elem->kind == FLY_TY_SCALAR ? fly_alloc(&I->A, sizeof *known * (size_t)t->n) : NULL;
  for (int i = 0; i < a->n; i++) {
    const FlyVal *v = a->v[i], *c = NULL;
    if (v->kind == FLY_V_RUNTIME ? !fly_type_equal(v->type, e)
                                 : !(c = fly_convert(I, v, e, a->node[i], false)))
      return v->kind == FLY_V_RUNTIME ? mismatch(I, v, e, a->node[i]) : NULL;
    for (int k = i; known && k < t->n; k += a->n)
      known[k] = c;
    if (!c)
      known = NULL;
  }
  FlyOrigin o = {a->call, "a vector, which lives in registers when the kernel runs"};
  FlyVal *v = (FlyVal *)fly_val_runtime(&I->A, t, o);
  if (v && known)
    v->known = fly_val_tuple(&I->A, t->n, known);
  return fly_emit_value(I, v, FLY_OPCODE_VEC, a->n, a->v, a->call);
}

/* ---- shared memory ---------------------------------------------------------------- */

/* The bytes an element of a tile takes in memory, as LLVM allocates the
   lowered type: an i1 takes a byte, a vector a power of two. */
static int64_t elem_bytes(const FlyType *t) {
  int64_t bytes = (fly_type_bits(t) + 7) / 8, p = 1;
  if (t->kind != FLY_TY_VEC)
    return bytes ? bytes : 1;
  while (p < bytes)
    p *= 2;
  return p;
}

/* The kernel's static shared memory with one more tile of `bytes`: the
   lowering gives each tile an array of its own, aligned to `align` bytes
   (16, a swizzled tile's fly_swizzle_tile_align, at least
   fly_smem_tile_align's for TMA; fly_lower_views.c), as ptxas and LLVM's
   LDS layout then place them. INT64_MAX when the sum does not fit. */
static int64_t add_tile(int64_t total, int64_t bytes, int64_t align) {
  int64_t start;
  if (__builtin_add_overflow(total, align - 1, &start) ||
      __builtin_add_overflow(start & ~(align - 1), bytes, &total))
    return INT64_MAX;
  return total;
}

/* Counts a shared tile of layout L (it spans L's cosize in elements, and
   fly_swizzle_span of that when swizzled) into
   the kernel's static shared memory. The tile that takes the total past what the target gives a
   block is an error where it is made; false then. The tracer makes one array per tile the
   interpreter makes here (a helper called twice makes two, an unrolled loop one per iteration, both
   branches of a runtime if theirs), so the sum is what the kernel will declare. */
static bool count_shared_tile(FlyInterp *I, const FlyNode *at, const FlyType *elem,
                              const FlyLayout *L, const FlySwizzle *swizzle) {
  int64_t cosize;
  if (!fly_layout_cosize(&I->A, L, &cosize)) {
    fly_err_algebra(I, at);
    return false;
  }
  int64_t align = 16;
  if (swizzle) {
    cosize = fly_swizzle_span(*swizzle, cosize);
    align = fly_swizzle_tile_align(*swizzle, (int)elem_bytes(elem));
  }
  if (!I->target || !I->kernel)
    return true;
  int64_t bytes, before = I->smem_bytes;
  if (__builtin_mul_overflow(cosize, elem_bytes(elem), &bytes))
    bytes = INT64_MAX;
  int64_t tma_align = fly_smem_tile_align(bytes, fly_target_has(I->target, FLY_FEATURE_TMA));
  I->smem_bytes = add_tile(before, bytes, align > tma_align ? align : tma_align);
  /* The whole of a block's shared memory: on NVIDIA the tiles live in the
     dynamic shared memory (lower/fly_lower_views.c), which reaches it. */
  int64_t limit = I->target->smem_per_block;
  if (before > limit || I->smem_bytes <= limit)
    return true;
  fly_err(I, at,
          "this shared tile of %" PRId64
          " bytes brings the kernel's static shared memory to %" PRId64 " bytes, over the %" PRId64
          " bytes (%" PRId64 " KiB) a block has on %s",
          bytes, I->smem_bytes, limit, limit / 1024, I->target->arch);
  return false;
}

/* smem<T>(?): a tile of T in the dynamic shared memory the launch gives
   (its `shared` setting), after the kernel's other tiles; its length, the
   bytes given over T's size, is known when the kernel runs. One a kernel. */
static const FlyVal *smem_at_launch(FlyInterp *I, const FlyType *t, const FlyArgs *a) {
  if (I->smem_at_launch && I->smem_at_launch != a->call) {
    fly_err(I, a->call, "a kernel has one shared tile sized at launch");
    fly_interp_note(I, I->smem_at_launch, "it is made here");
    return NULL;
  }
  I->smem_at_launch = a->call;
  int bytes = fly_type_bits(t->elem) / 8;
  if (bytes < 1)
    return fly_err(I, a->call, "smem<T>(?) holds whole bytes; %s is narrower",
                   fly_type_str(&I->A, t->elem));
  const FlyVal *size_args[1] = {fly_val_int(&I->A, bytes, NULL)};
  FlyOrigin o = {a->call, "the length of the shared tile sized at launch"};
  const FlyVal *n = fly_emit_value(I, fly_val_runtime(&I->A, fly_type_scalar(FLY_TYPE_I32), o),
                                   FLY_OPCODE_SMEM_LAUNCH_SIZE, 1, size_args, a->call);
  if (!n)
    return NULL;
  const FlyVal *sh[1] = {n}, *st[1] = {fly_val_int(&I->A, 1, NULL)};
  const FlyVal *tile = fly_make_tensor(I, t->elem, FLY_SPACE_SHARED, fly_val_tuple(&I->A, 1, sh),
                                       fly_val_tuple(&I->A, 1, st));
  return fly_emit_value(I, tile, FLY_OPCODE_SMEM, 0, NULL, a->call);
}

static const FlyVal *construct_memory(FlyInterp *I, const FlyType *t, const FlyArgs *a) {
  const char *ctor = t->space == FLY_SPACE_SHARED ? "smem" : "rmem";
  if (t->space == FLY_SPACE_GLOBAL)
    return fly_err(I, a->call,
                   "tensors in global memory are kernel parameters; they cannot be "
                   "made in code (use smem<T>(...) or rmem<T>(...))");
  if (a->nnamed)
    return fly_err(I, a->named[0], "%s<T>(...) takes no named arguments", ctor);
  if (a->n == 1 && !t->shape && a->v[0]->kind == FLY_V_DYNAMIC) {
    if (t->space != FLY_SPACE_SHARED)
      return fly_err(I, a->node[0],
                     "a register fragment's size is known at compile time; only a "
                     "shared tile, smem<T>(?), takes its size from the launch");
    return smem_at_launch(I, t, a);
  }
  const FlyLayout *L = NULL;
  const FlyComposed *swizzled = NULL;
  if (a->n == 0 && t->shape && fly_val_is_int_tuple(t->shape) && t->stride &&
      fly_val_is_int_tuple(t->stride)) {
    FlyTuple *sh = fly_val_to_tuple(I, t->shape, a->call, "a shape");
    FlyTuple *st = sh ? fly_val_to_tuple(I, t->stride, a->call, "a stride") : NULL;
    L = st ? fly_layout_make(&I->A, sh, st) : NULL;
  } else if (a->n == 1 && !t->shape) {
    const FlyVal *v = a->v[0];
    if (!fly_val_is_static(v))
      return fly_err_not_static(I, a->node[0], v, "the layout of a shared or register tile");
    if (v->kind == FLY_V_LAYOUT)
      L = v->layout;
    else if (v->kind == FLY_V_COMPOSED && t->space == FLY_SPACE_SHARED) {
      /* A swizzled tile: the swizzle applies to offsets from the tile's
         base, so the composed layout's own offset must be 0. */
      swizzled = v->composed;
      if (swizzled->inner)
        return fly_err(I, a->node[0],
                       "a shared tile is swizzled by a swizzle; the inner part of %s "
                       "is a layout",
                       fly_composed_str(&I->A, swizzled));
      if (swizzled->offset != 0)
        return fly_err(I, a->node[0],
                       "a swizzled shared tile starts at offset 0 of its swizzle, not %" PRId64,
                       swizzled->offset);
      L = swizzled->layout;
    } else if (v->kind == FLY_V_COMPOSED) {
      return fly_err(I, a->node[0],
                     "a register fragment cannot be swizzled; swizzles are for shared tiles "
                     "(smem<T>(...))");
    } else if (fly_val_is_int_tuple(v)) {
      FlyTuple *sh = fly_val_to_tuple(I, v, a->node[0], "a shape");
      L = sh ? fly_layout_col_major(&I->A, sh) : NULL;
    } else
      return fly_err(I, a->node[0], "%s<T>(...) takes a layout or a shape, not %s", ctor,
                     fly_val_describe(&I->A, v));
  } else {
    return fly_err(I, a->call, "%s<T>(L) takes one layout or shape: %s<f32>((8, 8):(8, 1))", ctor,
                   ctor);
  }
  if (!L)
    return fly_err_algebra(I, a->call);
  if (fly_layout_has_basis(L))
    return fly_err(I, a->call,
                   "the layout of a tile gives offsets in memory; %s has basis "
                   "strides, so its values are coordinates",
                   fly_layout_str(&I->A, L));
  int64_t size;
  if (!fly_layout_size(&I->A, L, &size))
    return fly_err_algebra(I, a->call);
  if (t->space == FLY_SPACE_SHARED &&
      !count_shared_tile(I, a->call, t->elem, L, swizzled ? &swizzled->swizzle : NULL))
    return NULL;
  FlyVal *tile = (FlyVal *)fly_make_tensor(I, t->elem, t->space, fly_tuple_to_val(I, L->shape),
                                           fly_tuple_to_val(I, L->stride));
  if (tile && swizzled) {
    tile->tensor.swizzled = true;
    tile->tensor.swizzle = swizzled->swizzle;
  }
  return fly_emit_value(I, tile, t->space == FLY_SPACE_SHARED ? FLY_OPCODE_SMEM : FLY_OPCODE_RMEM,
                        0, NULL, a->call);
}

const FlyVal *fly_construct(FlyInterp *I, const FlyType *t, const FlyArgs *a) {
  switch (t->kind) {
  case FLY_TY_SCALAR:
    if (a->n != 1 || a->nnamed)
      return fly_err(I, a->call, "%s(x) converts one value", fly_type_str(&I->A, t));
    return fly_convert(I, a->v[0], t, a->node[0], true);
  case FLY_TY_VEC:
    return construct_vec(I, t, a);
  case FLY_TY_TENSOR:
    return construct_memory(I, t, a);
  default:
    return fly_err(I, a->call, "the type %s cannot be called", fly_type_str(&I->A, t));
  }
}
