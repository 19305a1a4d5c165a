/* fly_interp_expr.c — evaluating expressions. */
#include <inttypes.h>
#include <string.h>

#include "fly_interp.h"

enum { MAX_EVAL_DEPTH = 6000 };

/* An integer literal above the largest int is allowed only where it means
   a bit pattern or the smallest int: `-9223372036854775808`, `x as i64`. */
static const FlyVal *int_literal(FlyInterp *I, const FlyNode *e) {
  if (e->ival > (uint64_t)INT64_MAX)
    return fly_err(I, e,
                   "integer literal %" PRIu64 " does not fit in int (the largest is %" PRId64
                   "); for a bit pattern, cast it: %" PRIu64 " as i64",
                   e->ival, INT64_MAX, e->ival);
  return fly_val_int(&I->A, (int64_t)e->ival, NULL);
}

static const FlyVal *eval_list(FlyInterp *I, FlyScope *s, const FlyNode *list, int *n,
                               const FlyVal ***out) {
  int count = 0;
  for (const FlyNode *k = list; k; k = k->next)
    count++;
  const FlyVal **v = fly_alloc(&I->A, sizeof *v * (size_t)(count ? count : 1));
  if (!v)
    return NULL;
  int i = 0;
  for (const FlyNode *k = list; k; k = k->next) {
    v[i] = fly_eval(I, s, k);
    if (!v[i])
      return NULL;
    i++;
  }
  *n = count;
  *out = v;
  return fly_val_none();
}

static const FlyVal *eval_tuple(FlyInterp *I, FlyScope *s, const FlyNode *e) {
  int n;
  const FlyVal **v;
  if (!eval_list(I, s, e->kid[0], &n, &v))
    return NULL;
  return fly_val_tuple(&I->A, n, v);
}

/* shape:stride, both static integer tuples of the same form. */
static const FlyVal *eval_layout(FlyInterp *I, FlyScope *s, const FlyNode *e) {
  const FlyVal *shape = fly_eval(I, s, e->kid[0]);
  const FlyVal *stride = shape ? fly_eval(I, s, e->kid[1]) : NULL;
  if (!stride)
    return NULL;
  if (!fly_val_is_static(shape))
    return fly_err_not_static(I, e->kid[0], shape, "the shape of a layout");
  if (!fly_val_is_static(stride))
    return fly_err_not_static(I, e->kid[1], stride, "the stride of a layout");
  FlyTuple *sh = fly_val_to_tuple(I, shape, e->kid[0], "the shape of a layout");
  FlyTuple *st = sh ? fly_val_to_tuple(I, stride, e->kid[1], "the stride of a layout") : NULL;
  if (!st)
    return NULL;
  if (!fly_tuple_congruent(sh, st))
    return fly_err(I, e, "the shape %s and the stride %s of a layout must have the same form",
                   fly_tuple_str(&I->A, sh), fly_tuple_str(&I->A, st));
  FlyLayout *L = fly_layout_make(&I->A, sh, st);
  return L ? fly_val_layout(&I->A, L) : fly_err_algebra(I, e);
}

/* Coordinates of an index: one value, or a tuple of several. */
static const FlyVal *coordinate(FlyInterp *I, int n, const FlyVal **idx) {
  return n == 1 ? idx[0] : fly_val_tuple(&I->A, n, idx);
}

static bool has_underscore(const FlyVal *v) {
  if (v->kind == FLY_V_UNDERSCORE)
    return true;
  if (v->kind == FLY_V_TUPLE)
    for (int i = 0; i < v->n; i++)
      if (has_underscore(v->elems[i]))
        return true;
  return false;
}

static const FlyVal *index_layout(FlyInterp *I, const FlyVal *base, const FlyVal *crd,
                                  const FlyNode *e) {
  if (!fly_val_is_static(crd))
    return fly_err_not_static(I, e->kid[1], crd, "a coordinate of a layout");
  FlyTuple *c = fly_val_to_tuple(I, crd, e->kid[1], "a coordinate");
  if (!c)
    return NULL;
  if (base->kind == FLY_V_COMPOSED) {
    if (has_underscore(crd)) {
      FlyComposed *C = fly_composed_slice(&I->A, c, base->composed);
      if (!C)
        return fly_err_algebra(I, e);
      FlyVal *v = fly_val_new(&I->A, FLY_V_COMPOSED);
      if (v)
        v->composed = C;
      return v;
    }
    FlyTuple *v = fly_composed_value(&I->A, c, base->composed);
    return v ? fly_tuple_to_val(I, v) : fly_err_algebra(I, e);
  }
  if (has_underscore(crd)) {
    FlyLayout *L = fly_layout_slice(&I->A, c, base->layout, NULL);
    return L ? fly_val_layout(&I->A, L) : fly_err_algebra(I, e);
  }
  /* An index, or the coordinate of a layout of basis strides. */
  FlyTuple *v = fly_layout_value(&I->A, c, base->layout);
  return v ? fly_tuple_to_val(I, v) : fly_err_algebra(I, e);
}

static const FlyVal *eval_index(FlyInterp *I, FlyScope *s, const FlyNode *e) {
  const FlyVal *base = fly_eval(I, s, e->kid[0]);
  int n;
  const FlyVal **idx;
  if (!base || !eval_list(I, s, e->kid[1], &n, &idx))
    return NULL;
  if (n == 0)
    return fly_err(I, e, "an index needs at least one coordinate");
  switch (base->kind) {
  case FLY_V_TENSOR:
    return fly_index_tensor(I, base, n, idx, e);
  case FLY_V_LAYOUT:
  case FLY_V_COMPOSED:
    return index_layout(I, base, coordinate(I, n, idx), e);
  case FLY_V_RUNTIME:
    if (base->type->kind == FLY_TY_VEC)
      return fly_index_vec(I, base, n, idx, e, e->kid[1]);
    return fly_err(I, e->kid[0], "%s cannot be indexed", fly_val_describe(&I->A, base));
  case FLY_V_TUPLE: {
    int64_t i;
    if (n != 1)
      return fly_err(I, e, "a tuple takes one index, not %d", n);
    if (!fly_val_is_static(idx[0]))
      return fly_err_not_static(I, e->kid[1], idx[0], "the index of a tuple element");
    if (idx[0]->kind == FLY_V_UNDERSCORE)
      return fly_err(I, e->kid[1],
                     "a tuple element is chosen by an integer index; '_' keeps a whole mode of "
                     "a layout or a tensor, not of a tuple");
    if (!fly_val_to_int(I, idx[0], e->kid[1], "the index of a tuple element", &i))
      return NULL;
    if (i < 0 || i >= base->n)
      return fly_err(I, e->kid[1], "index %" PRId64 " is out of range for a tuple of %d elements",
                     i, base->n);
    return base->elems[i];
  }
  default:
    return fly_err(I, e->kid[0], "%s cannot be indexed", fly_val_describe(&I->A, base));
  }
}

static const FlyVal *eval_call(FlyInterp *I, FlyScope *s, const FlyNode *e) {
  const FlyVal *callee = fly_eval(I, s, e->kid[0]);
  if (!callee)
    return NULL;
  FlyArgs a = {.call = e};
  int count = 0;
  for (const FlyNode *k = e->kid[1]; k; k = k->next)
    count++;
  size_t cap = (size_t)(count ? count : 1);
  a.v = fly_alloc(&I->A, sizeof *a.v * cap);
  a.node = fly_alloc(&I->A, sizeof *a.node * cap);
  a.named = fly_alloc(&I->A, sizeof *a.named * cap);
  a.named_v = fly_alloc(&I->A, sizeof *a.named_v * cap);
  if (!a.v || !a.node || !a.named || !a.named_v)
    return NULL;
  for (const FlyNode *k = e->kid[1]; k; k = k->next) {
    if (k->kind == FLY_NAMED_ARG) {
      const FlyVal *v = fly_eval(I, s, k->kid[0]);
      if (!v)
        return NULL;
      a.named[a.nnamed] = k;
      a.named_v[a.nnamed++] = v;
      continue;
    }
    if (a.nnamed > 0)
      return fly_err(I, k, "positional arguments come before named ones");
    /* smem<T>(?): a shared tile the launch sizes, the one place `?` is an
       argument. */
    bool sized_at_launch = k->kind == FLY_DYNAMIC && callee->kind == FLY_V_TYPE &&
                           callee->type_value->kind == FLY_TY_TENSOR &&
                           callee->type_value->space == FLY_SPACE_SHARED;
    const FlyVal *v = sized_at_launch ? fly_val_dynamic() : fly_eval(I, s, k);
    if (!v)
      return NULL;
    a.node[a.n] = k;
    a.v[a.n++] = v;
  }
  return fly_call_value(I, callee, &a);
}

static const FlyVal *eval_name(FlyInterp *I, FlyScope *s, const FlyNode *e) {
  bool found;
  const FlyVal *v = fly_lookup(I, s, e, e->str, e->len, &found);
  if (!found)
    return fly_err(I, e, "unknown name '%s'", e->str);
  if (v == fly_val_poison())
    return NULL;
  if (v && v->kind == FLY_V_RUNTIME && !v->origin.node) {
    if (I->in_launch)
      return fly_err(I, e, "'%s' is known only on the GPU; a launch block runs on the host",
                     e->str);
    /* A builtin runtime value (lane) comes from where it is named. */
    FlyOrigin o = {e, v->origin.why};
    FlyVal *named = (FlyVal *)fly_val_runtime(&I->A, v->type, o);
    if (named)
      named->ssa = v->ssa;
    return named;
  }
  return v;
}

static const FlyVal *eval_unary(FlyInterp *I, FlyScope *s, const FlyNode *e) {
  const FlyNode *k = e->kid[0];
  /* -9223372036854775808: the one literal above the largest int that has a
     meaning of its own. */
  if (e->op == FLY_OP_NEG && k && k->kind == FLY_INT && k->ival == (uint64_t)INT64_MAX + 1)
    return fly_val_int(&I->A, INT64_MIN, NULL);
  return fly_unary(I, (FlyOp)e->op, fly_eval(I, s, k), e);
}

/* Whether evaluating e can neither fault nor touch memory: names,
   literals, members (thread_idx.x) and operators other than / and %, which
   computing where the left side of && or || has decided costs nothing but
   an instruction. Calls and indexing (a load, an atomic, a helper) and
   divisions are not. */
static bool harmless(const FlyNode *e) {
  switch (e->kind) {
  case FLY_INT:
  case FLY_FLOAT:
  case FLY_BOOL:
  case FLY_STRING:
  case FLY_NAME:
    return true;
  case FLY_UNARY:
  case FLY_CAST:
  case FLY_MEMBER:
    return harmless(e->kid[0]);
  case FLY_BINARY:
    return e->op != FLY_OP_DIV && e->op != FLY_OP_MOD && harmless(e->kid[0]) && harmless(e->kid[1]);
  case FLY_TUPLE:
    for (const FlyNode *k = e->kid[0]; k; k = k->next)
      if (!harmless(k))
        return false;
    return true;
  default:
    return false;
  }
}

/* `a && b` or `a || b` with a runtime a, b computed only where a has not
   decided: the branch where it decides gives its value, the other a op b
   (= b there). */
typedef struct RightSide {
  FlyScope *s;
  const FlyNode *e;
  const FlyVal *a;
} RightSide;

static bool right_side(FlyInterp *I, void *arg, FlyOutcome *o) {
  const RightSide *r = arg;
  const FlyVal *b = fly_eval(I, r->s, r->e->kid[1]);
  const FlyVal *v = b ? fly_binary(I, (FlyOp)r->e->op, r->a, b, r->e) : NULL;
  fly_take_outcome(I, v, o);
  return v != NULL;
}

static bool decided(FlyInterp *I, void *arg, FlyOutcome *o) {
  const RightSide *r = arg;
  fly_take_outcome(I, fly_val_bool(r->e->op == FLY_OP_OR), o);
  return true;
}

static const FlyVal *short_circuit(FlyInterp *I, FlyScope *s, const FlyNode *e, const FlyVal *a) {
  if (!fly_runtime_condition(I, a, e->kid[0]))
    return NULL;
  RightSide r = {s, e, a};
  bool is_and = e->op == FLY_OP_AND;
  FlyChoice ch = {
      .cond = a,
      .at = e,
      .meeting = {e, {e->kid[0], is_and ? "the left side of &&" : "the left side of ||"}, NULL},
      .loop = NULL,
      .then_branch = is_and ? right_side : decided,
      .else_branch = is_and ? decided : right_side,
      .arg = &r};
  FlyOutcome out;
  return fly_choose(I, &ch, &out) ? out.value : NULL;
}

static const FlyVal *eval_binary(FlyInterp *I, FlyScope *s, const FlyNode *e) {
  const FlyVal *a = fly_eval(I, s, e->kid[0]);
  if (!a)
    return NULL;
  /* && and || skip their right side when the left decides, as in C: a
     compile-time guard such as `N > 0 && M % N == 0` then never divides by
     zero, and `i < n && X[i].load() > 0` never reads X[n]. A runtime left
     side makes a branch (scf.if) around a right side that could fault or
     touch memory; a harmless one is computed either way. A launch block's
     program computes both (docs: require). */
  bool logical = e->op == FLY_OP_AND || e->op == FLY_OP_OR;
  if (logical && a->kind == FLY_V_BOOL && a->i == (e->op == FLY_OP_OR))
    return a;
  if (logical && a->kind == FLY_V_RUNTIME && !I->in_launch && !harmless(e->kid[1]))
    return short_circuit(I, s, e, a);
  const FlyVal *b = fly_eval(I, s, e->kid[1]);
  return fly_binary(I, (FlyOp)e->op, a, b, e);
}

static const FlyVal *eval_cast(FlyInterp *I, FlyScope *s, const FlyNode *e) {
  const FlyType *t = fly_eval_type(I, s, e->kid[1]);
  if (!t)
    return NULL;
  const FlyNode *k = e->kid[0];
  /* A literal above the largest int cast to an integer type is a bit
     pattern: 18446744073709551615 as i64 is -1. */
  if (k && k->kind == FLY_INT && k->ival > (uint64_t)INT64_MAX && fly_type_is_int(t))
    return fly_convert(I, fly_val_int(&I->A, (int64_t)k->ival, fly_type_scalar(FLY_TYPE_I64)), t, e,
                       true);
  const FlyVal *v = fly_eval(I, s, k);
  return v ? fly_convert(I, v, t, e, true) : NULL;
}

static const FlyVal *dispatch(FlyInterp *I, FlyScope *s, const FlyNode *e) {
  switch ((FlyNodeKind)e->kind) {
  case FLY_INT:
    return int_literal(I, e);
  case FLY_FLOAT:
    return fly_val_float(&I->A, e->fval, NULL);
  case FLY_BOOL:
    return fly_val_bool(e->ival != 0);
  case FLY_STRING:
    return fly_val_str(&I->A, e->str, e->len);
  case FLY_NAME:
    return eval_name(I, s, e);
  case FLY_UNDERSCORE:
    return fly_val_underscore();
  case FLY_DYNAMIC:
    return fly_err(I, e,
                   "'?' stands for a value given at launch and is allowed only in the "
                   "layout of a tensor type, such as tensor<f32, (?, ?):(?, 1)>, and as "
                   "the size of a shared tile, smem<f32>(?)");
  case FLY_TYPE:
  case FLY_TYPE_APPLY:
    return fly_val_type(&I->A, fly_eval_type(I, s, e));
  case FLY_TUPLE:
    return eval_tuple(I, s, e);
  case FLY_LAYOUT:
    return eval_layout(I, s, e);
  case FLY_UNARY:
    return eval_unary(I, s, e);
  case FLY_BINARY:
    return eval_binary(I, s, e);
  case FLY_CAST:
    return eval_cast(I, s, e);
  case FLY_CALL:
    return eval_call(I, s, e);
  case FLY_INDEX:
    return eval_index(I, s, e);
  case FLY_MEMBER: {
    const FlyVal *base = fly_eval(I, s, e->kid[0]);
    return base ? fly_member(I, base, e) : NULL;
  }
  case FLY_NAMED_ARG:
    return fly_err(I, e, "a named argument is allowed only in a call");
  case FLY_IF:
    return fly_eval_if(I, s, e);
  case FLY_BLOCK:
    return fly_eval_block(I, s, e);
  default:
    return fly_err(I, e, "this is a statement, not a value");
  }
}

const FlyVal *fly_eval(FlyInterp *I, FlyScope *s, const FlyNode *e) {
  if (!e || !fly_interp_step(I, e))
    return NULL;
  /* Nesting of calls, loops and expressions together is bounded by the C
     stack it uses (3 MiB of the usual 8). */
  char here;
  uintptr_t used = I->stack_base > (uintptr_t)&here ? I->stack_base - (uintptr_t)&here : 0;
  if (I->eval_depth >= MAX_EVAL_DEPTH || used > ((uintptr_t)3 << 20)) {
    fly_err(I, e, "compile-time evaluation nested too deeply (limit is %d levels)", MAX_EVAL_DEPTH);
    I->aborted = true;
    return NULL;
  }
  I->eval_depth++;
  const FlyVal *v = dispatch(I, s, e);
  I->eval_depth--;
  /* A break, continue or return inside (in the branch of a static if)
     leaves the statement: the value is not used. */
  if (I->aborted || fly_unwinding(I))
    return NULL;
  /* An algebra error that no caller turned into a message is a bug; make
     sure it is seen rather than silently dropped. */
  if (!v && fly_algebra_failed(&I->A))
    fly_err_algebra(I, e);
  return v;
}

const FlyVal *fly_eval_static(FlyInterp *I, FlyScope *s, const FlyNode *e, const char *what) {
  I->compile_time++;
  const FlyVal *v = fly_eval(I, s, e);
  I->compile_time--;
  if (v && !fly_val_is_static(v))
    return fly_err_not_static(I, e, v, what);
  return v;
}
