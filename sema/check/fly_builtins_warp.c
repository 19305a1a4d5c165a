/* fly_builtins_warp.c — the warp operations: shuffles within segments of a
 * warp, votes and ballots.
 *
 * Every lane of a warp runs them together: each gives its value and reads
 * another lane's (docs/language.md, "Warp operations", says exactly which).
 * What every lane holds alike is folded here: a static value shuffled is
 * itself, a static vote is its predicate. The tracer gives the rest each
 * vendor's instructions (lower/fly_trace_warp.c). */
#include <inttypes.h>
#include <stdio.h>

#include "fly_builtins.h"

/* ---- shuffles ------------------------------------------------------------------------------ */

/* The four shuffles differ in which lane they read, named by their second
   argument. */
typedef struct Shuffle {
  const char *name;
  FlyOpcode op;
  const char *operand; /* what the second argument is, for messages */
  const char *why;     /* the origin of the value read, for notes */
} Shuffle;

static const Shuffle SHUFFLE = {"shuffle", FLY_OPCODE_SHUFFLE, "lane",
                                "a value read from another lane (shuffle)"};
static const Shuffle SHUFFLE_XOR = {"shuffle_xor", FLY_OPCODE_SHUFFLE_XOR, "mask",
                                    "a value read from another lane (shuffle_xor)"};
static const Shuffle SHUFFLE_UP = {"shuffle_up", FLY_OPCODE_SHUFFLE_UP, "delta",
                                   "a value read from another lane (shuffle_up)"};
static const Shuffle SHUFFLE_DOWN = {"shuffle_down", FLY_OPCODE_SHUFFLE_DOWN, "delta",
                                     "a value read from another lane (shuffle_down)"};

static bool is_boolean(const FlyVal *v) {
  if (v->kind == FLY_V_BOOL)
    return true;
  if (v->kind != FLY_V_RUNTIME)
    return false;
  const FlyType *t = v->type->kind == FLY_TY_VEC ? v->type->elem : v->type;
  return t->kind == FLY_TY_SCALAR && t->code == FLY_TYPE_I1;
}

/* The value a shuffle moves: a number, or a vec, of at most 64 bits (one
   or two 32-bit words to the hardware). Booleans are refused: a ballot
   gives every lane's at once. NULL after an error. */
static const FlyVal *shuffle_value(FlyInterp *I, const FlyArgs *a, const Shuffle *s) {
  const FlyVal *x = a->v[0];
  if (is_boolean(x))
    return fly_err(I, a->node[0],
                   "%s moves numbers, not %s: ballot(p) gives every lane's p at once, or shuffle "
                   "p as i32",
                   s->name, fly_val_describe(&I->A, x));
  if (x->kind == FLY_V_INT || x->kind == FLY_V_FLOAT)
    return x;
  const FlyType *t = x->kind == FLY_V_RUNTIME ? x->type : NULL;
  if (!t || (t->kind != FLY_TY_SCALAR && t->kind != FLY_TY_VEC))
    return fly_err(I, a->node[0], "%s moves numbers and vecs, not %s", s->name,
                   fly_val_describe(&I->A, x));
  const FlyType *elem = t->kind == FLY_TY_VEC ? t->elem : t;
  if (elem->code == FLY_TYPE_INDEX)
    return fly_err(I, a->node[0], "%s does not move an index; convert it first (x as i32)",
                   s->name);
  int bits = fly_type_bits(elem) * (t->kind == FLY_TY_VEC ? t->n : 1);
  if (bits < 1 || bits > 64)
    return fly_err(I, a->node[0],
                   "%s moves values of at most 64 bits, not %s; shuffle its parts one by one",
                   s->name, fly_type_str(&I->A, t));
  return x;
}

/* The lane, mask or delta: an integer, static or a runtime one (as i32).
   NULL after an error. */
static const FlyVal *shuffle_operand(FlyInterp *I, const FlyArgs *a, const Shuffle *s) {
  const FlyVal *v = a->v[1];
  if (v->kind == FLY_V_INT)
    return v;
  if (v->kind == FLY_V_RUNTIME && v->type->kind == FLY_TY_SCALAR && fly_type_is_int(v->type))
    return fly_convert(I, v, fly_type_scalar(FLY_TYPE_I32), a->node[1], true);
  return fly_err(I, a->node[1], "the %s of %s is an integer, not %s", s->operand, s->name,
                 fly_val_describe(&I->A, v));
}

/* The width: the named argument, a static power of two from 1 to the
   target's warp_size, which it is when not given. 0 after an error. */
static int64_t shuffle_width(FlyInterp *I, const FlyArgs *a, const Shuffle *s) {
  int warp = I->target->warp_size;
  const FlyNode *at;
  const FlyVal *w = fly_arg_named(a, "width", &at);
  if (!w)
    return warp;
  at = at->kid[0];
  if (!fly_val_is_static(w)) {
    char what[64];
    snprintf(what, sizeof what, "the width of %s", s->name);
    fly_err_not_static(I, at, w, what);
    return 0;
  }
  if (w->kind != FLY_V_INT) {
    fly_err(I, at, "the width of %s is an integer, not %s", s->name, fly_val_describe(&I->A, w));
    return 0;
  }
  if (w->i < 1 || w->i > warp || (w->i & (w->i - 1)) != 0) {
    fly_err(I, at,
            "the width of %s is a power of two from 1 to %d (the warp_size of %s), not %" PRId64,
            s->name, warp, I->target->arch, w->i);
    return 0;
  }
  return w->i;
}

/* A shuffle: a static value is the same in every lane, so reading it from
   any lane gives itself; a runtime one is read by the hardware. */
static const FlyVal *shuffle(FlyInterp *I, const FlyArgs *a, const Shuffle *s) {
  if (!fly_gpu_only(I, a, s->name))
    return NULL;
  const FlyVal *x = shuffle_value(I, a, s);
  const FlyVal *by = x ? shuffle_operand(I, a, s) : NULL;
  int64_t width = by ? shuffle_width(I, a, s) : 0;
  if (!width)
    return NULL;
  if (x->kind != FLY_V_RUNTIME)
    return x;
  const FlyVal *args[3] = {x, by, fly_val_int(&I->A, width, NULL)};
  FlyOrigin o = {a->call, s->why};
  return fly_emit_value(I, fly_val_runtime(&I->A, x->type, o), s->op, 3, args, a->call);
}

const FlyVal *fly_builtin_shuffle(FlyInterp *I, const FlyArgs *a) {
  return shuffle(I, a, &SHUFFLE);
}

const FlyVal *fly_builtin_shuffle_xor(FlyInterp *I, const FlyArgs *a) {
  return shuffle(I, a, &SHUFFLE_XOR);
}

const FlyVal *fly_builtin_shuffle_up(FlyInterp *I, const FlyArgs *a) {
  return shuffle(I, a, &SHUFFLE_UP);
}

const FlyVal *fly_builtin_shuffle_down(FlyInterp *I, const FlyArgs *a) {
  return shuffle(I, a, &SHUFFLE_DOWN);
}

/* ---- votes and ballots ------------------------------------------------------------------- */

/* The predicate of a vote or ballot: a boolean, static or a runtime i1.
   NULL after an error. */
static const FlyVal *predicate(FlyInterp *I, const FlyArgs *a, const char *fn) {
  const FlyVal *p = a->v[0];
  if (p->kind == FLY_V_BOOL ||
      (p->kind == FLY_V_RUNTIME && p->type->kind == FLY_TY_SCALAR && p->type->code == FLY_TYPE_I1))
    return p;
  bool number = p->kind == FLY_V_INT || p->kind == FLY_V_FLOAT ||
                (p->kind == FLY_V_RUNTIME && p->type->kind == FLY_TY_SCALAR);
  return fly_err(I, a->node[0], "%s takes a boolean, not %s%s", fn, fly_val_describe(&I->A, p),
                 number ? "; compare it, as in x != 0" : "");
}

/* vote_any and vote_all: a static predicate holds in every lane or in
   none, so either vote is the predicate itself. */
static const FlyVal *vote(FlyInterp *I, const FlyArgs *a, const char *fn, FlyOpcode op) {
  if (!fly_gpu_only(I, a, fn))
    return NULL;
  const FlyVal *p = predicate(I, a, fn);
  if (!p || p->kind != FLY_V_RUNTIME)
    return p;
  FlyOrigin o = {a->call, "a vote of the lanes of a warp"};
  return fly_emit_value(I, fly_val_runtime(&I->A, p->type, o), op, 1, &p, a->call);
}

const FlyVal *fly_builtin_vote_any(FlyInterp *I, const FlyArgs *a) {
  return vote(I, a, "vote_any", FLY_OPCODE_VOTE_ANY);
}

const FlyVal *fly_builtin_vote_all(FlyInterp *I, const FlyArgs *a) {
  return vote(I, a, "vote_all", FLY_OPCODE_VOTE_ALL);
}

/* A ballot: one bit per lane of the warp, so an i32 or an i64 as the
   target's warp_size is 32 or 64. ballot(false) is 0; ballot(true) is the
   mask of the lanes that exist, known only when the kernel runs (a block
   may end in a partial warp). */
const FlyVal *fly_builtin_ballot(FlyInterp *I, const FlyArgs *a) {
  if (!fly_gpu_only(I, a, "ballot"))
    return NULL;
  const FlyVal *p = predicate(I, a, "ballot");
  if (!p)
    return NULL;
  const FlyType *mask = fly_type_scalar(I->target->warp_size == 64 ? FLY_TYPE_I64 : FLY_TYPE_I32);
  if (p->kind == FLY_V_BOOL && !p->i)
    return fly_val_int(&I->A, 0, mask);
  FlyOrigin o = {a->call, "the lanes of a warp where a predicate holds (ballot)"};
  return fly_emit_value(I, fly_val_runtime(&I->A, mask, o), FLY_OPCODE_BALLOT, 1, &p, a->call);
}
