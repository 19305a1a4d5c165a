/* fly_interp_stmt.c — statements and blocks: let and patterns, const and
 * const blocks, static_assert, if (at compile time or at run time), for
 * loops (unrolled or at run time) with carried state, return and yield. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fly_interp.h"

/* ---- patterns ------------------------------------------------------------------------ */

bool fly_bind_pattern(FlyInterp *I, FlyScope *s, const FlyNode *pat, const FlyVal *v,
                      const FlyNode *value_node) {
  if (!pat || !v)
    return false;
  switch (pat->kind) {
  case FLY_PAT_NAME:
    return fly_scope_bind(I, s, pat->str, pat->len, v, pat);
  case FLY_PAT_WILDCARD:
    return true;
  case FLY_PAT_TUPLE: {
    int n = 0;
    for (const FlyNode *k = pat->kid[0]; k; k = k->next)
      n++;
    if (v->kind != FLY_V_TUPLE || v->n != n) {
      fly_err(I, pat, "this pattern takes a tuple of %d element%s, but the value is %s", n,
              n == 1 ? "" : "s",
              v->kind == FLY_V_TUPLE ? fly_val_str_canonical(&I->A, v)
                                     : fly_val_describe(&I->A, v));
      if (value_node)
        fly_interp_note(I, value_node, "the value comes from here");
      return false;
    }
    int i = 0;
    for (const FlyNode *k = pat->kid[0]; k; k = k->next, i++)
      if (!fly_bind_pattern(I, s, k, v->elems[i], value_node))
        return false;
    return true;
  }
  default:
    fly_err(I, pat, "this is not a pattern");
    return false;
  }
}

/* ---- merging the values of runtime branches ---------------------------------------- */

static bool is_number(const FlyVal *v) {
  return v->kind == FLY_V_INT || v->kind == FLY_V_FLOAT || v->kind == FLY_V_BOOL ||
         v->kind == FLY_V_RUNTIME;
}

/* Where two values meet after a runtime choice: the branches of an if, or a
   loop's carried value and what its body yields. Messages name the two. */
typedef struct Meeting {
  const FlyNode *at;
  FlyOrigin origin;     /* of the runtime value they make */
  const FlyNode *carry; /* a loop's FLY_CARRY; NULL for an if */
} Meeting;

static const FlyVal *differ(FlyInterp *I, const Meeting *m, const char *a, const char *b,
                            const char *why) {
  if (m->carry)
    return fly_err(I, m->at, "'%s' is carried as %s but the loop yields %s%s", m->carry->str, a, b,
                   why);
  return fly_err(I, m->at, "the branches of this if give %s and %s%s", a, b, why);
}

/* A number for messages: its type when it has one (i32, f16), else what it
   is (an integer, a float, a boolean). */
static const char *number_kind(FlyInterp *I, const FlyVal *v) {
  return v->type ? fly_type_str(&I->A, v->type) : fly_val_describe(&I->A, v);
}

/* The type of two numbers after a runtime choice. Typed ones must have one
   type; an untyped constant takes the other's type if it fits there; two
   untyped constants take their default runtime type. NULL after an error. */
static const FlyType *merged_type(FlyInterp *I, const FlyVal *a, const FlyVal *b,
                                  const Meeting *m) {
  if (a->type && b->type) {
    if (fly_type_equal(a->type, b->type))
      return a->type->kind == FLY_TY_VEC && a->type->n < 0 ? b->type : a->type;
    char hint[96] = "";
    bool scalars = a->type->kind == FLY_TY_SCALAR && b->type->kind == FLY_TY_SCALAR;
    if (scalars && m->carry)
      snprintf(hint, sizeof hint, " (convert it with 'as %s')", fly_type_str(&I->A, a->type));
    else if (scalars)
      snprintf(hint, sizeof hint, " (convert one with 'as')");
    differ(I, m, number_kind(I, a), number_kind(I, b), hint);
    return NULL;
  }
  const FlyVal *typed = a->type ? a : b->type ? b : NULL;
  if (typed) {
    const FlyVal *c = typed == a ? b : a;
    if (fly_const_fits(c, typed->type))
      return typed->type;
    /* A number of the right kind but out of range: name its value. */
    const FlyType *e = typed->type->kind == FLY_TY_VEC ? typed->type->elem : typed->type;
    const char *other = number_kind(I, c);
    char constant[96], why[96] = "";
    if ((c->kind == FLY_V_INT && fly_type_is_int(e)) ||
        (c->kind != FLY_V_BOOL && fly_type_is_float(e))) {
      snprintf(constant, sizeof constant, "the constant %s", fly_val_str_canonical(&I->A, c));
      other = constant;
      if (typed == a)
        snprintf(why, sizeof why, ", which does not fit in %s", fly_type_str(&I->A, e));
      else
        snprintf(why, sizeof why, ", in which it does not fit");
    }
    if (typed == a)
      differ(I, m, number_kind(I, a), other, why);
    else
      differ(I, m, other, number_kind(I, b), why);
    return NULL;
  }
  if ((a->kind == FLY_V_BOOL) != (b->kind == FLY_V_BOOL)) {
    differ(I, m, number_kind(I, a), number_kind(I, b), "");
    return NULL;
  }
  bool fl = a->kind == FLY_V_FLOAT || b->kind == FLY_V_FLOAT;
  return fly_type_scalar(a->kind == FLY_V_BOOL ? FLY_TYPE_I1 : fl ? FLY_TYPE_F32 : FLY_TYPE_I32);
}

/* The value after a runtime choice between a and b: equal static values
   stay static; numbers become a runtime value of their common type. */
static const FlyVal *merge(FlyInterp *I, const FlyVal *a, const FlyVal *b, const Meeting *m) {
  if (a->kind == FLY_V_NONE || b->kind == FLY_V_NONE)
    return fly_val_none();
  if (a->kind != FLY_V_RUNTIME && b->kind != FLY_V_RUNTIME && a->kind != FLY_V_TENSOR &&
      b->kind != FLY_V_TENSOR && a->kind == b->kind && fly_val_equal(a, b) &&
      fly_type_equal(a->type, b->type))
    return a;
  if (is_number(a) && is_number(b)) {
    const FlyType *t = merged_type(I, a, b, m);
    return t ? fly_val_runtime(&I->A, t, m->origin) : NULL;
  }
  if (a->kind == FLY_V_TUPLE && b->kind == FLY_V_TUPLE && a->n == b->n) {
    const FlyVal **e = fly_alloc(&I->A, sizeof *e * (size_t)(a->n ? a->n : 1));
    if (!e)
      return NULL;
    for (int i = 0; i < a->n; i++)
      if (!(e[i] = merge(I, a->elems[i], b->elems[i], m)))
        return NULL;
    return fly_val_tuple(&I->A, a->n, e);
  }
  if (a->kind == FLY_V_TENSOR && b->kind == FLY_V_TENSOR && m->carry)
    return fly_err(I, m->at,
                   "'%s' holds a tensor; a runtime loop cannot carry a tensor (carry an index "
                   "into it instead)",
                   m->carry->str);
  if (a->kind == FLY_V_TENSOR && b->kind == FLY_V_TENSOR)
    return fly_err(I, m->at,
                   "the branches of this if give two tensors; a runtime choice between tensors "
                   "is not supported (choose with 'if const', or choose an index)");
  const char *da = fly_val_describe(&I->A, a), *db = fly_val_describe(&I->A, b);
  if (m->carry)
    return differ(I, m, da, db,
                  ", a different value (only numbers change from one iteration "
                  "of a runtime loop to the next)");
  return fly_err(I, m->at, "the branches of this if give different values: %s and %s", da, db);
}

/* ---- if ---------------------------------------------------------------------------- */

static const FlyVal *eval_branch(FlyInterp *I, FlyScope *s, const FlyNode *b) {
  if (!b)
    return fly_val_none();
  return b->kind == FLY_IF ? fly_eval_if(I, s, b) : fly_eval_block(I, s, b);
}

static bool static_condition(FlyInterp *I, const FlyVal *c, const FlyNode *at, bool *out) {
  if (c->kind != FLY_V_BOOL) {
    fly_err(I, at, "a condition must be a boolean, not %s", fly_val_describe(&I->A, c));
    return false;
  }
  *out = c->i != 0;
  return true;
}

const FlyVal *fly_eval_if(FlyInterp *I, FlyScope *s, const FlyNode *e) {
  bool is_const = e->flags & FLY_IS_CONST;
  const FlyVal *c = is_const ? fly_eval_static(I, s, e->kid[0], "the condition of 'if const'")
                             : fly_eval(I, s, e->kid[0]);
  if (!c)
    return NULL;
  /* A condition known at compile time chooses, whether or not the if is
     marked const: only the chosen branch is evaluated. */
  if (c->kind != FLY_V_RUNTIME) {
    bool taken;
    if (!static_condition(I, c, e->kid[0], &taken))
      return NULL;
    return eval_branch(I, s, taken ? e->kid[1] : e->kid[2]);
  }
  const FlyType *t = c->type;
  if (t->kind != FLY_TY_SCALAR || t->code != FLY_TYPE_I1)
    return fly_err(I, e->kid[0], "a condition must be a boolean (i1), not %s",
                   fly_type_str(&I->A, t));
  void *region = I->emit ? I->emit->if_begin(I->emit->ctx, c, e) : NULL;
  if (I->emit && !region) {
    I->aborted = true;
    return NULL;
  }
  I->runtime_flow++;
  const FlyVal *a = eval_branch(I, s, e->kid[1]);
  if (a && region && !I->emit->if_else(I->emit->ctx, region, a))
    a = NULL;
  const FlyVal *b = a ? eval_branch(I, s, e->kid[2]) : NULL;
  I->runtime_flow--;
  Meeting m = {e, {e->kid[0], "the condition of a runtime if"}, NULL};
  const FlyVal *v = a && b ? merge(I, a, b, &m) : NULL;
  if (region && !I->emit->if_end(I->emit->ctx, region, v ? b : NULL, v)) {
    I->aborted = true;
    return NULL;
  }
  return v;
}

/* ---- blocks ------------------------------------------------------------------------ */

static bool is_final_if(const FlyNode *st) {
  return st->kind == FLY_EXPR_STMT && st->kid[0] && st->kid[0]->kind == FLY_IF &&
         st->kid[0]->kid[2];
}

/* After a statement failed, the names it would have bound are poisoned, so
   that the rest of the block is still checked without follow-on errors. */
static void poison_pattern(FlyInterp *I, FlyScope *s, const FlyNode *p) {
  if (!p)
    return;
  if (p->kind == FLY_PAT_NAME)
    fly_scope_bind(I, s, p->str, p->len, fly_val_poison(), p);
  else if (p->kind == FLY_PAT_TUPLE)
    for (const FlyNode *k = p->kid[0]; k; k = k->next)
      poison_pattern(I, s, k);
}

static void poison_stmt(FlyInterp *I, FlyScope *s, const FlyNode *st) {
  switch (st->kind) {
  case FLY_LET:
    poison_pattern(I, s, st->kid[0]);
    break;
  case FLY_CONST:
    fly_scope_bind(I, s, st->str, st->len, fly_val_poison(), st);
    break;
  case FLY_CONST_BLOCK:
    for (const FlyNode *k = st->kid[0] ? st->kid[0]->kid[0] : NULL; k; k = k->next)
      poison_stmt(I, s, k);
    break;
  case FLY_FOR:
    for (const FlyNode *c = st->kid[2]; c; c = c->next)
      fly_scope_bind(I, s, c->str, c->len, fly_val_poison(), c);
    break;
  default:
    break;
  }
}

const FlyVal *fly_eval_block(FlyInterp *I, FlyScope *s, const FlyNode *block) {
  FlyScope *inner = fly_scope_new(I, s);
  if (!inner)
    return NULL;
  bool failed = false;
  for (const FlyNode *st = block->kid[0]; st; st = st->next) {
    /* A block that ends with an if/else statement has that if's value. */
    if (!st->next && !block->kid[1] && is_final_if(st)) {
      const FlyVal *v = fly_eval_if(I, inner, st->kid[0]);
      return I->returning ? fly_val_none() : failed ? NULL : v;
    }
    if (fly_exec_stmt(I, inner, st))
      continue;
    if (I->returning)
      return fly_val_none();
    if (I->aborted)
      return NULL;
    failed = true;
    poison_stmt(I, inner, st);
  }
  if (!block->kid[1])
    return failed ? NULL : fly_val_none();
  const FlyVal *v = fly_eval(I, inner, block->kid[1]);
  return failed ? NULL : v;
}

/* ---- let, const, static_assert --------------------------------------------------------- */

static bool exec_let(FlyInterp *I, FlyScope *s, const FlyNode *st) {
  const FlyVal *v = fly_eval(I, s, st->kid[2]);
  if (!v)
    return false;
  if (v->kind == FLY_V_NONE) {
    fly_err(I, st->kid[2], "this has no value to bind");
    return false;
  }
  if (I->in_const && !fly_val_is_static(v)) {
    fly_err_not_static(I, st->kid[2], v, "a value in a const block");
    return false;
  }
  if (st->kid[1]) {
    const FlyType *t = fly_eval_type(I, s, st->kid[1]);
    v = t ? fly_convert(I, v, t, st->kid[2], false) : NULL;
  }
  return fly_bind_pattern(I, s, st->kid[0], v, st->kid[2]);
}

static bool exec_const(FlyInterp *I, FlyScope *s, const FlyNode *st) {
  const FlyVal *v = fly_eval_static(I, s, st->kid[2], "the value of a const");
  if (!v)
    return false;
  if (v->kind == FLY_V_NONE) {
    fly_err(I, st->kid[2], "this has no value to bind");
    return false;
  }
  if (st->kid[1]) {
    const FlyType *t = fly_eval_type(I, s, st->kid[1]);
    v = t ? fly_convert(I, v, t, st->kid[2], false) : NULL;
    if (!v)
      return false;
  }
  return fly_scope_bind(I, s, st->str, st->len, v, st);
}

/* The statements of a const block run at compile time; the names they bind
   become constants of the enclosing scope. */
static bool exec_const_block(FlyInterp *I, FlyScope *s, const FlyNode *st) {
  const FlyNode *block = st->kid[0];
  FlyScope *inner = fly_scope_new(I, s);
  if (!inner || !block)
    return false;
  I->in_const++;
  bool ok = true;
  for (const FlyNode *k = block->kid[0]; k && ok; k = k->next)
    ok = fly_exec_stmt(I, inner, k);
  I->in_const--;
  if (!ok)
    return false;
  /* Bindings are a chain newest first; re-bind oldest first so that a later
     binding of the same name still wins. */
  int n = 0;
  for (FlyBinding *b = inner->head; b; b = b->next)
    n++;
  FlyBinding **order = fly_alloc(&I->A, sizeof *order * (size_t)(n ? n : 1));
  if (!order)
    return false;
  int i = n;
  for (FlyBinding *b = inner->head; b; b = b->next)
    order[--i] = b;
  for (i = 0; i < n; i++)
    if (!fly_scope_bind(I, s, order[i]->name, order[i]->len, order[i]->value, order[i]->decl))
      return false;
  return true;
}

static bool exec_static_assert(FlyInterp *I, FlyScope *s, const FlyNode *st) {
  const FlyVal *c = fly_eval_static(I, s, st->kid[0], "the condition of static_assert");
  if (!c)
    return false;
  bool holds;
  if (!static_condition(I, c, st->kid[0], &holds))
    return false;
  const FlyVal *msg = NULL;
  if (st->kid[1]) {
    msg = fly_eval_static(I, s, st->kid[1], "the message of static_assert");
    if (!msg)
      return false;
    if (msg->kind != FLY_V_STR) {
      fly_err(I, st->kid[1], "the message of static_assert must be a string, not %s",
              fly_val_describe(&I->A, msg));
      return false;
    }
  }
  if (holds)
    return true;
  if (msg)
    fly_err(I, st->kid[0], "static assertion failed: %.*s", (int)msg->len, msg->s);
  else
    fly_err(I, st->kid[0], "static assertion failed");
  return false;
}

/* ---- loops -------------------------------------------------------------------------- */

typedef struct Carries {
  int n;
  const FlyNode **node; /* FLY_CARRY */
  const FlyVal **value;
} Carries;

static bool eval_carries(FlyInterp *I, FlyScope *s, const FlyNode *list, Carries *c) {
  c->n = 0;
  for (const FlyNode *k = list; k; k = k->next)
    c->n++;
  size_t cap = (size_t)(c->n ? c->n : 1);
  c->node = fly_alloc(&I->A, sizeof *c->node * cap);
  c->value = fly_alloc(&I->A, sizeof *c->value * cap);
  if (!c->node || !c->value)
    return false;
  int i = 0;
  for (const FlyNode *k = list; k; k = k->next, i++) {
    c->node[i] = k;
    c->value[i] = fly_eval(I, s, k->kid[0]);
    if (!c->value[i])
      return false;
    if (c->value[i]->kind == FLY_V_NONE) {
      fly_err(I, k->kid[0], "this has no value to carry");
      return false;
    }
  }
  return true;
}

/* Runs one iteration of a loop body with the loop variable and the carried
   values bound; returns the values yielded (one per carry) in next. */
static bool run_body(FlyInterp *I, FlyScope *s, const FlyNode *loop, const FlyVal *var, Carries *c,
                     const FlyVal **next) {
  FlyScope *inner = fly_scope_new(I, s);
  if (!inner || !fly_bind_pattern(I, inner, loop->kid[0], var, loop->kid[1]))
    return false;
  for (int i = 0; i < c->n; i++)
    if (!fly_scope_bind(I, inner, c->node[i]->str, c->node[i]->len, c->value[i], c->node[i]))
      return false;
  const FlyNode *body = loop->kid[3];
  const FlyVal *saved = I->yielded;
  I->yielded = NULL;
  I->loop_body++;
  bool ok = true;
  const FlyNode *last = NULL;
  for (const FlyNode *st = body ? body->kid[0] : NULL; st && ok; st = st->next) {
    last = st;
    if (st->kind == FLY_YIELD && st->next) {
      fly_err(I, st, "'yield' must be the last statement of a loop body");
      ok = false;
      break;
    }
    ok = fly_exec_stmt(I, inner, st);
  }
  if (ok && body && body->kid[1]) {
    ok = false;
    fly_err(I, body->kid[1],
            "a loop body has no value: end it with 'yield' to carry values, or add ';'");
  }
  I->loop_body--;
  const FlyVal *y = I->yielded;
  I->yielded = saved;
  if (!ok)
    return false;
  if (c->n == 0) {
    if (y) {
      fly_err(I, last, "this loop carries no values, so there is nothing to yield");
      return false;
    }
    return true;
  }
  if (!y) {
    fly_err(I, body ? body : loop,
            "the loop carries %d value%s, so its body must end with "
            "'yield' giving %s",
            c->n, c->n == 1 ? "" : "s", c->n == 1 ? "it" : "them");
    return false;
  }
  if (c->n == 1) {
    next[0] = y;
    return true;
  }
  if (y->kind != FLY_V_TUPLE || y->n != c->n) {
    fly_err(I, last, "the loop carries %d values, so 'yield' must give a tuple of %d, not %s", c->n,
            c->n, fly_val_describe(&I->A, y));
    return false;
  }
  for (int i = 0; i < c->n; i++)
    next[i] = y->elems[i];
  return true;
}

static bool unrolled_loop(FlyInterp *I, FlyScope *s, const FlyNode *st, const FlyObject *r,
                          Carries *c) {
  const FlyVal **next = fly_alloc(&I->A, sizeof *next * (size_t)(c->n ? c->n : 1));
  if (!next)
    return false;
  /* By count, so that the last step cannot overflow past the bound. */
  int64_t lo = r->lo->i, hi = r->hi->i, step = r->step->i;
  int64_t count = hi > lo ? (int64_t)(((uint64_t)hi - (uint64_t)lo - 1) / (uint64_t)step) + 1 : 0;
  for (int64_t k = 0; k < count; k++) {
    int64_t i = lo + k * step;
    if (!fly_interp_step(I, st))
      return false;
    if (!run_body(I, s, st, fly_val_int(&I->A, i, NULL), c, next))
      return false;
    if (I->returning)
      return false;
    memcpy(c->value, next, sizeof *next * (size_t)c->n);
  }
  return true;
}

/* A copy of v whose runtime leaves are fresh values of the same types: what
   a loop's body or results are bound to while tracing, each leaf to get its
   own handle (a block argument, a result of the loop). */
static const FlyVal *fresh_leaf(FlyInterp *I, const FlyVal *leaf, const void *ctx) {
  (void)ctx;
  return leaf->kind == FLY_V_RUNTIME ? fly_val_runtime(&I->A, leaf->type, leaf->origin) : leaf;
}

static bool fresh_values(FlyInterp *I, int n, const FlyVal **v) {
  for (int i = 0; i < n; i++)
    if (!(v[i] = fly_map_leaves(I, v[i], fresh_leaf, NULL)))
      return false;
  return true;
}

/* Tracing: the loop begins; var and the carried values become the body's
   arguments. NULL after an error. */
static void *loop_begin(FlyInterp *I, const FlyObject *r, const FlyVal **var, Carries *c,
                        const FlyVal **init, const FlyNode *st) {
  *var = fresh_leaf(I, *var, NULL);
  if (!*var || !fresh_values(I, c->n, c->value))
    return NULL;
  void *region = I->emit->for_begin(I->emit->ctx, r->lo, r->hi, r->step, (FlyVal *)*var, c->n, init,
                                    (FlyVal *const *)c->value, st);
  if (!region)
    I->aborted = true;
  return region;
}

/* Tracing: the loop ends; the carried names hold its results. */
static bool loop_end(FlyInterp *I, void *region, Carries *c, const FlyVal **next) {
  if (!fresh_values(I, c->n, c->value))
    return false;
  if (!I->emit->for_end(I->emit->ctx, region, c->n, next, (FlyVal *const *)c->value)) {
    I->aborted = true;
    return false;
  }
  return true;
}

typedef enum { YIELDS_BAD, YIELDS_OK, YIELDS_RETRY } YieldCheck;

/* Whether what the body yields fits what it carries. A carried number that
   started as a constant takes the type of the yield, once (the body is run
   again with it). */
static YieldCheck check_yields(FlyInterp *I, Carries *c, const FlyVal **init, const FlyVal **next,
                               bool first) {
  YieldCheck result = YIELDS_OK;
  for (int i = 0; i < c->n; i++) {
    const FlyVal *have = c->value[i], *got = next[i];
    /* An untyped constant start takes the type yielded, if it could have
       been written in that type: 0.0 becomes an f16, never an i32. */
    if (have->kind == FLY_V_RUNTIME && got->kind == FLY_V_RUNTIME &&
        !fly_type_equal(have->type, got->type) && init[i]->kind != FLY_V_RUNTIME &&
        !init[i]->type && fly_const_fits(init[i], got->type) && first) {
      c->value[i] = fly_val_runtime(&I->A, got->type, have->origin);
      result = YIELDS_RETRY;
      continue;
    }
    Meeting m = {c->node[i], {c->node[i], "a value carried by a runtime loop"}, c->node[i]};
    if (!merge(I, have, got, &m))
      return YIELDS_BAD;
  }
  return result;
}

/* The body of a runtime loop is checked once with the carried values as
   runtime values of their types. A carried number that starts as an
   untyped constant takes the type of what the body yields where the
   constant fits in it, so `carry (acc = 0.0)` yielding f16 values carries
   an f16. */
static bool runtime_loop(FlyInterp *I, FlyScope *s, const FlyNode *st, const FlyObject *r,
                         Carries *c) {
  /* A const block runs at compile time; a runtime loop there would make
     its carried names runtime values. */
  if (I->in_const) {
    fly_err(I, st->kid[1],
            "a loop in a const block runs at compile time: write range_const(...), not "
            "range(...)");
    return false;
  }
  FlyOrigin origin = {st->kid[0], "the variable of a runtime loop"};
  const FlyVal *a = r->lo, *b = r->hi;
  const FlyType *t = fly_operand_type(I, a, b, st->kid[1]);
  if (!t)
    t = fly_type_scalar(FLY_TYPE_I32);
  if (t->kind != FLY_TY_SCALAR || !fly_type_is_int(t)) {
    fly_err(I, st->kid[1], "the bounds of a loop must be integers, not %s", fly_type_str(&I->A, t));
    return false;
  }
  const FlyVal *var = fly_val_runtime(&I->A, t, origin);
  const FlyVal **init = fly_alloc(&I->A, sizeof *init * (size_t)(c->n ? c->n : 1));
  const FlyVal **next = fly_alloc(&I->A, sizeof *next * (size_t)(c->n ? c->n : 1));
  if (!init || !next || !var)
    return false;
  memcpy(init, c->value, sizeof *init * (size_t)c->n);
  for (int i = 0; i < c->n; i++) {
    const FlyVal *v = c->value[i];
    if (v->kind == FLY_V_INT || v->kind == FLY_V_FLOAT || v->kind == FLY_V_BOOL) {
      FlyOrigin o = {c->node[i], "a value carried by a runtime loop"};
      c->value[i] = fly_val_runtime(&I->A, fly_default_runtime_type(v), o);
    }
  }
  for (int attempt = 0; attempt < 2; attempt++) {
    void *region = NULL;
    if (I->emit && !(region = loop_begin(I, r, &var, c, init, st)))
      return false;
    I->runtime_flow++;
    bool ok = run_body(I, s, st, var, c, next);
    I->runtime_flow--;
    YieldCheck y = ok ? check_yields(I, c, init, next, attempt == 0) : YIELDS_BAD;
    if (y != YIELDS_OK) {
      if (region)
        I->emit->for_abandon(I->emit->ctx, region);
      if (y == YIELDS_BAD)
        return false;
      continue;
    }
    return region ? loop_end(I, region, c, next) : true;
  }
  return true;
}

static bool exec_for(FlyInterp *I, FlyScope *s, const FlyNode *st) {
  const FlyVal *range = fly_eval(I, s, st->kid[1]);
  if (!range)
    return false;
  if (range->kind != FLY_V_OBJECT || range->object.kind != FLY_OBJ_RANGE) {
    fly_err(I, st->kid[1], "a for loop runs over range(...) or range_const(...), not %s",
            fly_val_describe(&I->A, range));
    return false;
  }
  Carries c;
  if (!eval_carries(I, s, st->kid[2], &c))
    return false;
  bool ok = range->object.unrolled ? unrolled_loop(I, s, st, &range->object, &c)
                                   : runtime_loop(I, s, st, &range->object, &c);
  if (!ok)
    return false;
  /* After the loop, the carried names hold their final values. */
  for (int i = 0; i < c.n; i++)
    if (!fly_scope_bind(I, s, c.node[i]->str, c.node[i]->len, c.value[i], c.node[i]))
      return false;
  return true;
}

/* ---- return and yield ----------------------------------------------------------------- */

static bool exec_return(FlyInterp *I, FlyScope *s, const FlyNode *st) {
  /* A helper called from a launch block returns as anywhere else. */
  if ((I->in_launch && !I->frame) || I->in_const || (!I->frame && !I->kernel)) {
    fly_err(I, st, "'return' is allowed only in a function or a kernel, not in %s",
            I->in_launch ? "a launch block" : "a const block or at the top level");
    return false;
  }
  if (!I->frame && st->kid[0]) {
    fly_err(I, st->kid[0], "a kernel returns no value: write 'return;'");
    return false;
  }
  const FlyVal *v = st->kid[0] ? fly_eval(I, s, st->kid[0]) : fly_val_none();
  if (!v)
    return false;
  if (I->runtime_flow > 0) {
    /* A kernel may stop early under a runtime condition; the rest of its
       body is still checked. A helper's result cannot depend on it. */
    if (!I->frame && v->kind == FLY_V_NONE && I->emit) {
      fly_err(I, st,
              "flyc compile cannot yet end a kernel early under a runtime condition; "
              "put the rest of the kernel in the else branch");
      return false;
    }
    if (!I->frame && v->kind == FLY_V_NONE)
      return true;
    fly_err(I, st,
            "a helper function cannot return from inside a runtime if or loop; make "
            "the if the function's value instead (if c { a } else { b })");
    return false;
  }
  I->returning = true;
  I->returned = v;
  return false;
}

static bool exec_yield(FlyInterp *I, FlyScope *s, const FlyNode *st) {
  if (I->loop_body == 0) {
    fly_err(I, st, "'yield' is allowed only as the last statement of a loop body");
    return false;
  }
  const FlyVal *v = fly_eval(I, s, st->kid[0]);
  if (!v)
    return false;
  I->yielded = v;
  return true;
}

static bool exec(FlyInterp *I, FlyScope *s, const FlyNode *st) {
  switch ((FlyNodeKind)st->kind) {
  case FLY_LET:
    return exec_let(I, s, st);
  case FLY_CONST:
    return exec_const(I, s, st);
  case FLY_CONST_BLOCK:
    return exec_const_block(I, s, st);
  case FLY_STATIC_ASSERT:
    return exec_static_assert(I, s, st);
  case FLY_FOR:
    return exec_for(I, s, st);
  case FLY_RETURN:
    return exec_return(I, s, st);
  case FLY_YIELD:
    return exec_yield(I, s, st);
  case FLY_EXPR_STMT: {
    const FlyVal *v = fly_eval(I, s, st->kid[0]);
    return v != NULL && !I->returning;
  }
  default:
    fly_err(I, st, "this statement is not allowed here");
    return false;
  }
}

bool fly_exec_stmt(FlyInterp *I, FlyScope *s, const FlyNode *st) {
  if (!st || I->aborted)
    return false;
  bool ok = exec(I, s, st);
  return ok && !I->returning && !I->aborted;
}
