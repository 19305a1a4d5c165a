/* fly_builtins_vector.c — the elements of vectors and the vector builtins:
 * v[i] and v.insert(i, x), the reductions (sum, and min and max of one vec),
 * bitcast and where.
 *
 * A vec lives in registers, so it is a runtime value. One built from
 * constants carries its elements (FlyVal.known), and what these operations
 * compute from known elements, static indices and static operands is
 * computed here, as the math builtins compute on constants: an element or
 * a reduction is a constant, a new vec is known in turn. */
#include <inttypes.h>
#include <string.h>

#include "fly_builtins.h"

static bool is_vec(const FlyVal *v) {
  return v->kind == FLY_V_RUNTIME && v->type->kind == FLY_TY_VEC;
}

static bool is_i1(const FlyType *t) { return t->kind == FLY_TY_SCALAR && t->code == FLY_TYPE_I1; }

static const char *type_str(FlyInterp *I, const FlyType *t) { return fly_type_str(&I->A, t); }

/* A vec of numbers or booleans. Vecs of vecs have no MLIR vector type, so
   no operation takes them. */
static const FlyVal *vec_arg(FlyInterp *I, const FlyVal *v, const FlyNode *at, const char *fn) {
  if (!is_vec(v))
    return fly_err(I, at, "%s takes a vec, not %s", fn, fly_val_describe(&I->A, v));
  if (v->type->elem->kind != FLY_TY_SCALAR)
    return fly_err(I, at, "%s takes a vec of numbers, not %s", fn, type_str(I, v->type));
  return v;
}

/* A copy of a vec's known elements, to change one of them. */
static const FlyVal **known_copy(FlyInterp *I, const FlyVal *known) {
  const FlyVal **e = fly_alloc(&I->A, sizeof *e * (size_t)known->n);
  if (e)
    memcpy(e, known->elems, sizeof *e * (size_t)known->n);
  return e;
}

/* A new runtime value of type t, which op computes from args; known: its
   elements when it is a vec the interpreter knows (a tuple), else NULL. */
static const FlyVal *new_value(FlyInterp *I, const FlyType *t, FlyOrigin o, const FlyVal *known,
                               FlyOpcode op, int n, const FlyVal *const *args, const FlyNode *at) {
  FlyVal *v = (FlyVal *)fly_val_runtime(&I->A, t, o);
  if (!v)
    return NULL;
  v->known = known;
  return fly_emit_value(I, v, op, n, args, at);
}

/* A vec of type t with the known elements `elems`: the constant
   vec<N, T>(e0, e1, ...). */
static const FlyVal *constant_vec(FlyInterp *I, const FlyType *t, const FlyVal **elems,
                                  const FlyNode *at) {
  FlyOrigin o = {at, "a vector, which lives in registers when the kernel runs"};
  const FlyVal *known = fly_val_tuple(&I->A, t->n, elems);
  return known ? new_value(I, t, o, known, FLY_OPCODE_VEC, t->n, elems, at) : NULL;
}

/* ---- elements: v[i] and v.insert(i, x) ------------------------------------------------------- */

/* An index of vec v: a static integer in range, or a runtime integer (then
   0 <= i < N is the caller's promise: the value at another index is not
   defined). */
static bool check_index(FlyInterp *I, const FlyVal *v, const FlyVal *i, const FlyNode *at) {
  if (i->kind == FLY_V_INT) {
    if (i->i >= 0 && i->i < v->type->n)
      return true;
    fly_err(I, at, "index %" PRId64 " is out of range for %s (0 to %d)", i->i, type_str(I, v->type),
            v->type->n - 1);
    return false;
  }
  if (i->kind == FLY_V_RUNTIME && fly_type_is_int(i->type))
    return true;
  fly_err(I, at, "the index of a vec element is an integer, not %s", fly_val_describe(&I->A, i));
  return false;
}

const FlyVal *fly_index_vec(FlyInterp *I, const FlyVal *v, int n, const FlyVal **idx,
                            const FlyNode *at, const FlyNode *index_at) {
  if (n != 1)
    return fly_err(I, at, "a vec takes one index, not %d", n);
  if (!vec_arg(I, v, at, "v[i]") || !check_index(I, v, idx[0], index_at))
    return NULL;
  if (v->known && idx[0]->kind == FLY_V_INT)
    return v->known->elems[idx[0]->i];
  const FlyVal *args[2] = {v, idx[0]};
  return fly_emit_value(I, fly_val_runtime(&I->A, v->type->elem, v->origin), FLY_OPCODE_EXTRACT, 2,
                        args, at);
}

const FlyVal *fly_builtin_insert(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *v = vec_arg(I, a->v[0], a->node[0], "insert");
  if (!v || !check_index(I, v, a->v[1], a->node[1]))
    return NULL;
  const FlyVal *x = fly_convert(I, a->v[2], v->type->elem, a->node[2], false);
  if (!x)
    return NULL;
  const FlyVal *known = NULL;
  if (v->known && a->v[1]->kind == FLY_V_INT && x->kind != FLY_V_RUNTIME) {
    const FlyVal **e = known_copy(I, v->known);
    if (!e)
      return NULL;
    e[a->v[1]->i] = x;
    known = fly_val_tuple(&I->A, v->known->n, e);
  }
  const FlyVal *args[3] = {v, a->v[1], x};
  return new_value(I, v->type, v->origin, known, FLY_OPCODE_INSERT, 3, args, a->call);
}

/* ---- reductions ------------------------------------------------------------------------------ */

/* The reduction of known elements, in order, as the operators compute on
   constants (so an integer sum that overflows its type is an error). */
static const FlyVal *fold_reduction(FlyInterp *I, const FlyVal *known, FlyOpcode op,
                                    const FlyNode *at) {
  const FlyVal *r = known->elems[0];
  for (int k = 1; r && k < known->n; k++) {
    const FlyVal *e = known->elems[k];
    if (op == FLY_OPCODE_SUM) {
      r = fly_binary(I, FLY_OP_ADD, r, e, at);
      continue;
    }
    const FlyVal *better = op == FLY_OPCODE_MIN ? fly_binary(I, FLY_OP_LT, e, r, at)
                                                : fly_binary(I, FLY_OP_LT, r, e, at);
    if (!better)
      return NULL;
    if (better->i)
      r = e;
  }
  return r;
}

const FlyVal *fly_reduce_vec(FlyInterp *I, const FlyArgs *a, FlyOpcode op, const char *fn) {
  const FlyVal *v = vec_arg(I, a->v[0], a->node[0], fn);
  if (!v)
    return NULL;
  const FlyType *e = v->type->elem;
  if (is_i1(e))
    return fly_err(I, a->node[0], "%s takes a vec of numbers, not %s", fn, type_str(I, v->type));
  if (v->known)
    return fold_reduction(I, v->known, op, a->call);
  return fly_emit_value(I, fly_val_runtime(&I->A, e, v->origin), op, 1, &v, a->call);
}

const FlyVal *fly_builtin_sum(FlyInterp *I, const FlyArgs *a) {
  if (!is_vec(a->v[0]))
    return fly_err(I, a->node[0], "sum takes a vec, not %s; add numbers with '+'",
                   fly_val_describe(&I->A, a->v[0]));
  return fly_reduce_vec(I, a, FLY_OPCODE_SUM, "sum");
}

/* ---- bitcast --------------------------------------------------------------------------------- */

/* The scalar or vec type bitcast reads or gives: numbers of a fixed width
   (not i1, whose vecs have no agreed layout in bits, nor index, whose width
   is the target's). */
static bool bitcast_type(FlyInterp *I, const FlyType *t, const FlyNode *at) {
  const FlyType *e = t->kind == FLY_TY_VEC ? t->elem : t;
  if (e->kind == FLY_TY_SCALAR && !is_i1(e) && e->code != FLY_TYPE_INDEX)
    return true;
  if (e->kind == FLY_TY_SCALAR && e->code == FLY_TYPE_INDEX)
    fly_err(I, at, "bitcast takes types of a fixed width, not %s (convert it with 'as i64')",
            type_str(I, t));
  else if (is_i1(e))
    fly_err(I, at, "bitcast takes numbers, not booleans (%s); convert them with 'as' first",
            type_str(I, t));
  else
    fly_err(I, at, "bitcast takes numbers and vecs of numbers, not %s", type_str(I, t));
  return false;
}

/* The static value x (a typed constant, or a known vec) as bytes, element 0
   in the lowest ones: the order LLVM's bitcast gives on both targets,
   which are little-endian. */
static void put_bits(uint8_t *buf, const FlyVal *x, const FlyType *t) {
  int bytes = fly_type_bits(t) / 8;
  uint64_t bits = x->kind == FLY_V_FLOAT ? fly_float_bits(t, x->f) : (uint64_t)x->i;
  for (int k = 0; k < bytes; k++)
    buf[k] = (uint8_t)(bits >> (8 * k));
}

/* The constant of type t that bytes hold; NULL (and no error) for the bits
   of an infinity or a NaN, which no compile-time float holds. */
static const FlyVal *get_bits(FlyInterp *I, const uint8_t *buf, const FlyType *t) {
  int width = fly_type_bits(t);
  uint64_t bits = 0;
  for (int k = 0; k < width / 8; k++)
    bits |= (uint64_t)buf[k] << (8 * k);
  if (fly_type_is_float(t)) {
    double f;
    return fly_float_from_bits(t, bits, &f) ? fly_val_float(&I->A, f, t) : NULL;
  }
  if (width < 64 && (bits >> (width - 1)) & 1) /* sign-extend */
    bits |= ~(uint64_t)0 << width;
  return fly_val_int(&I->A, (int64_t)bits, t);
}

/* bitcast of a static value: x's bytes read as `to`; NULL (no error) when
   an element would be an infinity or a NaN, so the GPU computes it. */
static const FlyVal *fold_bitcast(FlyInterp *I, const FlyVal *x, const FlyType *to,
                                  const FlyNode *at) {
  const FlyType *from = x->type;
  const FlyType *fe = from->kind == FLY_TY_VEC ? from->elem : from;
  const FlyType *te = to->kind == FLY_TY_VEC ? to->elem : to;
  int nfrom = from->kind == FLY_TY_VEC ? from->n : 1, nto = to->kind == FLY_TY_VEC ? to->n : 1;
  uint8_t *buf = fly_alloc(&I->A, (size_t)fly_type_bits(to) / 8);
  const FlyVal **elems = fly_alloc(&I->A, sizeof *elems * (size_t)nto);
  if (!buf || !elems)
    return NULL;
  int fbytes = fly_type_bits(fe) / 8, tbytes = fly_type_bits(te) / 8;
  for (int k = 0; k < nfrom; k++)
    put_bits(buf + k * fbytes, from->kind == FLY_TY_VEC ? x->known->elems[k] : x, fe);
  for (int k = 0; k < nto; k++)
    if (!(elems[k] = get_bits(I, buf + k * tbytes, te)))
      return NULL;
  return to->kind == FLY_TY_VEC ? constant_vec(I, to, elems, at) : elems[0];
}

const FlyVal *fly_builtin_bitcast(FlyInterp *I, const FlyArgs *a) {
  const FlyType *to = fly_arg_type(I, a, 1, "the second argument of bitcast");
  const FlyVal *x = a->v[0];
  if (!to || !bitcast_type(I, to, a->node[1]))
    return NULL;
  bool number = x->kind == FLY_V_INT || x->kind == FLY_V_FLOAT;
  if (!number && x->kind != FLY_V_RUNTIME)
    return fly_err(I, a->node[0], "bitcast takes numbers and vecs of numbers, not %s",
                   fly_val_describe(&I->A, x));
  /* A constant has its own type, or the one it takes where none is
     implied: 1.0 is an f32, 7 an i32. */
  const FlyType *from = number ? fly_default_runtime_type(x) : x->type;
  if (!bitcast_type(I, from, a->node[0]))
    return NULL;
  if (number && !(x = fly_convert(I, x, from, a->node[0], false)))
    return NULL;
  if (fly_type_bits(from) != fly_type_bits(to))
    return fly_err(I, a->call, "bitcast keeps the width: %s is %d bits, %s is %d bits%s",
                   type_str(I, from), fly_type_bits(from), type_str(I, to), fly_type_bits(to),
                   number && !a->v[0]->type ? " (an untyped constant is an i32 or an f32 here; "
                                              "give it a type with 'as')"
                                            : "");
  if (fly_type_equal(from, to))
    return x;
  if (number || x->known) {
    const FlyVal *r = fold_bitcast(I, x, to, a->call);
    if (r || I->aborted)
      return r;
  }
  FlyOrigin o = x->kind == FLY_V_RUNTIME
                    ? x->origin
                    : (FlyOrigin){a->call, "the bits of an infinity or a NaN, which compile-time "
                                           "floats do not hold"};
  return fly_emit_value(I, fly_val_runtime(&I->A, to, o), FLY_OPCODE_BITCAST, 1, &x, a->call);
}

/* ---- where ----------------------------------------------------------------------------------- */

static bool is_value(const FlyVal *v) {
  return v->kind == FLY_V_INT || v->kind == FLY_V_FLOAT || v->kind == FLY_V_BOOL ||
         v->kind == FLY_V_RUNTIME;
}

/* The type where(c, a, b) gives its values: the type an operator on them
   would take, or for two untyped constants the one they take where none is
   implied (a float if either is one). NULL after an error. */
static const FlyType *where_values_type(FlyInterp *I, const FlyVal *x, const FlyVal *y,
                                        const FlyNode *at) {
  if (x->type || y->type)
    return fly_operand_type(I, x, y, at);
  return fly_default_runtime_type(x->kind == FLY_V_FLOAT ? x : y);
}

/* The elements of where(mask, x, y) when the mask is known and x and y are
   constants or known vecs. */
static const FlyVal *where_known(FlyInterp *I, const FlyVal *c, const FlyVal *x, const FlyVal *y,
                                 int n) {
  const FlyVal **e = fly_alloc(&I->A, sizeof *e * (size_t)n);
  if (!e)
    return NULL;
  for (int k = 0; k < n; k++) {
    const FlyVal *pick = c->known->elems[k]->i ? x : y;
    e[k] = pick->kind == FLY_V_RUNTIME ? pick->known->elems[k] : pick;
  }
  return fly_val_tuple(&I->A, n, e);
}

static bool known_or_static(const FlyVal *v) { return v->kind != FLY_V_RUNTIME || v->known; }

/* where with a static condition: the chosen value, a scalar splatted when
   the other value is a vec (rt). */
static const FlyVal *where_static(FlyInterp *I, const FlyVal *pick, const FlyType *rt,
                                  const FlyNode *at) {
  if (rt->kind != FLY_TY_VEC || (pick->kind == FLY_V_RUNTIME && pick->type->kind == FLY_TY_VEC))
    return pick;
  if (pick->kind == FLY_V_RUNTIME)
    return new_value(I, rt, pick->origin, NULL, FLY_OPCODE_VEC, 1, &pick, at);
  const FlyVal **e = fly_alloc(&I->A, sizeof *e * (size_t)rt->n);
  if (!e)
    return NULL;
  for (int k = 0; k < rt->n; k++)
    e[k] = pick;
  return constant_vec(I, rt, e, at);
}

const FlyVal *fly_builtin_where(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *c = a->v[0];
  bool is_static = c->kind == FLY_V_BOOL;
  bool mask = is_vec(c) && is_i1(c->type->elem);
  if (!is_static && !mask && !(c->kind == FLY_V_RUNTIME && is_i1(c->type)))
    return fly_err(I, a->node[0],
                   "where chooses by a boolean (i1) or a mask (vec<N, i1>), not %s; a "
                   "comparison gives one: where(x > 0.0, x, 0.0)",
                   fly_val_describe(&I->A, c));
  for (int k = 1; k < 3; k++)
    if (!is_value(a->v[k]))
      return fly_err(I, a->node[k], "where chooses between numbers or vecs, not %s",
                     fly_val_describe(&I->A, a->v[k]));
  /* A static choice between constants is the chosen constant, as an if's. */
  if (is_static && a->v[1]->kind != FLY_V_RUNTIME && a->v[2]->kind != FLY_V_RUNTIME)
    return c->i ? a->v[1] : a->v[2];
  const FlyType *t = where_values_type(I, a->v[1], a->v[2], a->call);
  if (!t)
    return NULL;
  if (mask && t->kind == FLY_TY_VEC && t->n != c->type->n)
    return fly_err(I, a->call, "the mask of where has %d elements, but its values are %s",
                   c->type->n, type_str(I, t));
  /* A mask chooses element by element: scalar values are splatted. */
  const FlyType *rt = mask && t->kind != FLY_TY_VEC ? fly_type_vec(&I->A, c->type->n, t) : t;
  const FlyType *e = t->kind == FLY_TY_VEC ? t->elem : t;
  const FlyVal *args[3] = {c, a->v[1], a->v[2]};
  for (int k = 1; k < 3; k++)
    if (args[k]->kind != FLY_V_RUNTIME &&
        !(args[k] = fly_convert(I, args[k], e, a->node[k], false)))
      return NULL;
  if (is_static)
    return where_static(I, c->i ? args[1] : args[2], rt, a->call);
  const FlyVal *known = NULL;
  if (mask && c->known && known_or_static(args[1]) && known_or_static(args[2]) &&
      !(known = where_known(I, c, args[1], args[2], rt->n)))
    return NULL;
  return new_value(I, rt, c->origin, known, FLY_OPCODE_WHERE, 3, args, a->call);
}
