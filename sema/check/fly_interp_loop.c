/* fly_interp_loop.c — loops with carried state: `for` over range_const or
 * range, and `while`.
 *
 * A loop over range_const is unrolled, and a while loop runs at compile
 * time where a value must be static (a const block, a const, static_assert,
 * the top level): the body runs once per iteration, with static values
 * where they are. A loop over range, and a while loop elsewhere, runs at
 * run time: its body is checked (and traced) once, with the carried values
 * as runtime values of their types. Such a for loop is an scf.for, unless
 * its body can break or return; then it is, as a while loop is, an
 * scf.while, which also carries the flags of those exits and stops where
 * one is set.
 *
 * A break, continue or return taken in the body under a runtime condition
 * leaves its flags in the body's outcome (fly_interp_stmt.c); a loop at
 * compile time runs its remaining iterations under a guard on them. */
#include <string.h>

#include "fly_interp.h"

enum { STOPS = 1u << FLY_EXIT_BREAK | 1u << FLY_EXIT_RETURN };

/* ---- carried values ------------------------------------------------------------------ */

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

/* The carried values as one value: itself for one, else a tuple. */
static const FlyVal *pack_carried(FlyInterp *I, int n, const FlyVal *const *v) {
  return n == 1 ? v[0] : fly_val_tuple(&I->A, n, (const FlyVal **)v);
}

static void unpack_carried(int n, const FlyVal *packed, const FlyVal **v) {
  for (int i = 0; i < n; i++)
    v[i] = n == 1 ? packed : packed->elems[i];
}

static const FlyVal **copy_values(FlyInterp *I, int n, const FlyVal *const *v) {
  const FlyVal **copy = fly_alloc(&I->A, sizeof *copy * (size_t)(n ? n : 1));
  if (copy && n)
    memcpy(copy, v, sizeof *copy * (size_t)n);
  return copy;
}

/* A carried number that started as an untyped constant takes the type of
   what the body yields, if the constant could have been written in that
   type: 0.0 becomes an f16, never an i32. */
static bool takes_yielded_type(const FlyVal *init, const FlyVal *have, const FlyVal *got) {
  return init && have->kind == FLY_V_RUNTIME && got->kind == FLY_V_RUNTIME &&
         !fly_type_equal(have->type, got->type) && init->kind != FLY_V_RUNTIME && !init->type &&
         fly_const_fits(init, got->type);
}

const FlyVal *fly_loop_current(FlyInterp *I) {
  const FlyLoop *L = I->loop;
  return pack_carried(I, L->n, L->value);
}

/* Each of the two must fit the value carried (messages name that first).
   Where one is of a new type that the loop will take (it then runs again,
   with that type), the meeting is not checked: it is dropped with this run. */
static const FlyVal *next_meets(FlyInterp *I, const FlyLoop *loop, int i, const FlyVal *a,
                                const FlyVal *b) {
  const FlyNode *at = loop->node[i];
  const FlyVal *have = loop->value[i];
  if (loop->init && takes_yielded_type(loop->init[i], have, a))
    return fly_val_runtime(&I->A, a->type, a->origin);
  if (loop->init && takes_yielded_type(loop->init[i], have, b))
    return fly_val_runtime(&I->A, b->type, b->origin);
  FlyMeeting m = {at, {at, "a value carried by a loop"}, at};
  if ((have != a && !fly_merge(I, have, a, &m)) || (have != b && !fly_merge(I, have, b, &m)))
    return NULL;
  return fly_merge(I, a, b, &m);
}

const FlyVal *fly_merge_next(FlyInterp *I, const FlyVal *a, const FlyVal *b, const FlyLoop *loop) {
  const FlyVal **v = fly_alloc(&I->A, sizeof *v * (size_t)(loop->n ? loop->n : 1));
  if (!v)
    return NULL;
  for (int i = 0; i < loop->n; i++)
    if (!(v[i] = next_meets(I, loop, i, loop->n == 1 ? a : a->elems[i],
                            loop->n == 1 ? b : b->elems[i])))
      return NULL;
  return pack_carried(I, loop->n, v);
}

/* A loop that may have returned under a runtime condition: the statements
   after it run where it did not. */
static void pending_return(FlyInterp *I, const FlyVal *returned) {
  FlyOutcome o = {0};
  o.exit[FLY_EXIT_RETURN] = returned;
  o.yielded = I->loop && I->loop->n > 0 ? fly_loop_current(I) : NULL;
  fly_put_exits(I, &o);
}

/* ---- one iteration ----------------------------------------------------------------- */

/* Runs the body once, with the variable of a for loop and the carried
   values bound: next gets what the next iteration starts with (one value
   per carried name: the yield's, the values a break or continue gave, or
   the carried values as they are where it ended early without any), o the
   exits it took. init: as FlyLoop's. */
static bool run_body(FlyInterp *I, FlyScope *s, const FlyNode *loop, const FlyVal *var,
                     const Carries *c, const FlyVal *const *init, const FlyVal **next,
                     FlyOutcome *o) {
  memset(o, 0, sizeof *o);
  FlyScope *inner = fly_scope_new(I, s);
  if (!inner ||
      (loop->kind == FLY_FOR && !fly_bind_pattern(I, inner, loop->kid[0], var, loop->kid[1])))
    return false;
  for (int i = 0; i < c->n; i++)
    if (!fly_scope_bind(I, inner, c->node[i]->str, c->node[i]->len, c->value[i], c->node[i]))
      return false;
  const FlyNode *body = loop->kid[3];
  FlyLoop frame = {c->n, c->node, c->value, init};
  FlyLoop *saved_loop = I->loop;
  const FlyVal *saved_yield = I->yielded;
  I->loop = &frame;
  I->yielded = NULL;
  const FlyVal *v = body ? fly_run_stmts(I, inner, body->kid[0], body, true) : fly_val_none();
  bool unwound = fly_unwinding(I) != FLY_EXIT_NONE;
  fly_take_outcome(I, v, o);
  /* The values of its yield, or of the break or continue that ended it. */
  const FlyVal *y = I->yielded ? I->yielded : unwound ? o->yielded : NULL;
  I->loop = saved_loop;
  I->yielded = saved_yield;
  if (!v && !unwound)
    return false;
  if (c->n == 0)
    return true;
  if (!y) {
    fly_err(I, body ? body : loop,
            "the loop carries %d value%s, so its body must end with 'yield' giving %s", c->n,
            c->n == 1 ? "" : "s", c->n == 1 ? "it" : "them");
    return false;
  }
  unpack_carried(c->n, y, next);
  return true;
}

/* A while loop's condition, with the carried names bound. A break in it
   would leave no loop body. */
static const FlyVal *while_condition(FlyInterp *I, FlyScope *s, const FlyNode *st,
                                     const Carries *c) {
  FlyScope *scope = fly_scope_new(I, s);
  if (!scope)
    return NULL;
  for (int i = 0; i < c->n; i++)
    if (!fly_scope_bind(I, scope, c->node[i]->str, c->node[i]->len, c->value[i], c->node[i]))
      return NULL;
  FlyLoop *loop = I->loop;
  I->loop = NULL;
  const FlyVal *v = fly_eval(I, scope, st->kid[1]);
  I->loop = loop;
  return v;
}

/* ---- loops at compile time ------------------------------------------------------------ */

typedef struct StaticLoop {
  FlyScope *s;
  const FlyNode *st; /* FLY_FOR over range_const, or FLY_WHILE */
  Carries *c;
  int64_t lo, step, count; /* range_const */
} StaticLoop;

/* Whether iteration k runs, and the variable of a for loop. */
static bool static_next(FlyInterp *I, const StaticLoop *L, int64_t k, bool *more,
                        const FlyVal **var) {
  if (L->st->kind == FLY_FOR) {
    *more = k < L->count;
    /* Past the last iteration the next value may not fit in 64 bits. */
    *var = *more ? fly_val_int(&I->A, L->lo + k * L->step, NULL) : NULL;
    return *var != NULL || !*more;
  }
  const FlyNode *cond = L->st->kid[1];
  const FlyVal *c = while_condition(I, L->s, L->st, L->c);
  if (!c)
    return false;
  if (!fly_val_is_static(c)) {
    fly_err_not_static(I, cond, c, "the condition of a while loop run at compile time");
    return false;
  }
  return fly_static_condition(I, c, cond, more);
}

static bool static_iterations(FlyInterp *I, StaticLoop *L, int64_t k);

/* The iterations after one that broke or returned under a runtime
   condition, under a guard on those flags. */
typedef struct Remaining {
  StaticLoop *L;
  int64_t k;
  const FlyVal **before; /* the carried values where they do not run */
  const FlyVal *returned;
} Remaining;

static bool remaining_run(FlyInterp *I, void *arg, FlyOutcome *o) {
  Remaining *r = arg;
  Carries *c = r->L->c;
  bool ok = static_iterations(I, r->L, r->k) || fly_unwinding(I);
  fly_take_outcome(I, fly_val_none(), o);
  o->exit[FLY_EXIT_BREAK] = o->exit[FLY_EXIT_CONTINUE] = NULL;
  o->yielded = c->n ? pack_carried(I, c->n, c->value) : NULL;
  return ok && (o->yielded || !c->n);
}

static bool remaining_skipped(FlyInterp *I, void *arg, FlyOutcome *o) {
  Remaining *r = arg;
  Carries *c = r->L->c;
  memset(o, 0, sizeof *o);
  o->value = fly_val_none();
  o->exit[FLY_EXIT_RETURN] = r->returned;
  o->yielded = c->n ? pack_carried(I, c->n, r->before) : NULL;
  return o->yielded || !c->n;
}

static bool guard_remaining(FlyInterp *I, StaticLoop *L, int64_t k, const FlyOutcome *o) {
  Carries *c = L->c;
  const FlyVal *stop = fly_exit_flag(I, o, STOPS, L->st);
  const FlyVal *go = stop ? fly_unary(I, FLY_OP_NOT, stop, L->st) : NULL;
  Remaining r = {L, k, copy_values(I, c->n, c->value), o->exit[FLY_EXIT_RETURN]};
  if (!go || !r.before)
    return false;
  FlyLoop carried = {c->n, c->node, r.before, NULL};
  FlyChoice ch = {.cond = go,
                  .not_cond = stop,
                  .at = L->st,
                  .meeting = {L->st, {L->st, "a loop that stops under a runtime condition"}, NULL},
                  .loop = &carried,
                  .then_branch = remaining_run,
                  .else_branch = remaining_skipped,
                  .arg = &r};
  FlyOutcome out;
  if (!fly_choose(I, &ch, &out))
    return false;
  if (c->n)
    unpack_carried(c->n, out.yielded, c->value);
  pending_return(I, out.exit[FLY_EXIT_RETURN]);
  return true;
}

/* Iterations k, k+1 ... of a loop at compile time, until its condition or
   range ends or it breaks. A return taken on every path unwinds on. */
static bool static_iterations(FlyInterp *I, StaticLoop *L, int64_t k) {
  Carries *c = L->c;
  const FlyVal **next = fly_alloc(&I->A, sizeof *next * (size_t)(c->n ? c->n : 1));
  if (!next)
    return false;
  for (;; k++) {
    bool more;
    const FlyVal *var = NULL;
    if (!static_next(I, L, k, &more, &var))
      return false;
    if (!more)
      return true;
    if (!fly_interp_step(I, L->st))
      return false;
    FlyOutcome o;
    if (!run_body(I, L->s, L->st, var, c, NULL, next, &o))
      return false;
    memcpy(c->value, next, sizeof *next * (size_t)c->n);
    if (fly_flag_surely(o.exit[FLY_EXIT_RETURN])) {
      I->returning = true;
      return false;
    }
    if (fly_flag_surely(o.exit[FLY_EXIT_BREAK]))
      return true;
    bool last = L->st->kind == FLY_FOR && k + 1 >= L->count;
    if (!last &&
        (fly_flag_taken(o.exit[FLY_EXIT_BREAK]) || fly_flag_taken(o.exit[FLY_EXIT_RETURN])))
      return guard_remaining(I, L, k + 1, &o);
    if (fly_flag_taken(o.exit[FLY_EXIT_RETURN]))
      pending_return(I, o.exit[FLY_EXIT_RETURN]);
  }
}

/* ---- loops at run time --------------------------------------------------------------- */

/* Whether n, or a node inside it, is a break of the loop n is in (not of a
   loop inside it) or a return. */
static bool can_exit(const FlyNode *n, FlyNodeKind kind) {
  if (n->kind == kind)
    return true;
  bool loop = n->kind == FLY_FOR || n->kind == FLY_WHILE;
  for (int i = 0; i < 4; i++) {
    /* An inner loop's body and condition have breaks of their own. */
    if (kind == FLY_BREAK && loop && (i == 3 || (i == 1 && n->kind == FLY_WHILE)))
      continue;
    for (const FlyNode *k = n->kid[i]; k; k = k->next)
      if (can_exit(k, kind))
        return true;
  }
  return false;
}

typedef struct RuntimeLoop {
  FlyScope *s;
  const FlyNode *st;
  Carries *c;
  const FlyVal **init;           /* the carried values before the loop */
  const FlyObject *range;        /* a for loop's */
  const FlyVal *var;             /* a for loop's variable (a runtime value) */
  bool stops;                    /* the body can break or return */
  bool returns;                  /* it can return */
  const FlyVal *stop, *returned; /* their flags, carried by an scf.while */
} RuntimeLoop;

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

typedef enum { YIELDS_BAD, YIELDS_OK, YIELDS_RETRY } YieldCheck;

/* Whether what the body yields fits what it carries. A carried number that
   started as an untyped constant takes the type of the yield, once (the
   body is run again with it). */
static YieldCheck check_yields(FlyInterp *I, Carries *c, const FlyVal *const *init,
                               const FlyVal **next, bool first) {
  YieldCheck result = YIELDS_OK;
  for (int i = 0; i < c->n; i++) {
    const FlyVal *have = c->value[i], *got = next[i];
    if (first && takes_yielded_type(init[i], have, got)) {
      c->value[i] = fly_val_runtime(&I->A, got->type, have->origin);
      result = YIELDS_RETRY;
      continue;
    }
    FlyMeeting m = {c->node[i], {c->node[i], "a value carried by a runtime loop"}, c->node[i]};
    if (!fly_merge(I, have, got, &m))
      return YIELDS_BAD;
  }
  return result;
}

/* The values an scf.while carries: a for loop's variable, the carried
   values, then the stop and returned flags, as far as the loop has them. */
enum { MAX_HIDDEN = 3 };

static int gather(const RuntimeLoop *R, const FlyVal **all) {
  int n = 0;
  if (R->var)
    all[n++] = R->var;
  for (int i = 0; i < R->c->n; i++)
    all[n++] = R->c->value[i];
  if (R->stops)
    all[n++] = R->stop;
  if (R->returns)
    all[n++] = R->returned;
  return n;
}

static void scatter(RuntimeLoop *R, const FlyVal *const *all) {
  int n = 0;
  if (R->var)
    R->var = all[n++];
  for (int i = 0; i < R->c->n; i++)
    R->c->value[i] = all[n++];
  if (R->stops)
    R->stop = all[n++];
  if (R->returns)
    R->returned = all[n++];
}

/* Gives the carried values fresh leaves, for the handles of the next
   region (tracing only). */
static bool refresh(FlyInterp *I, RuntimeLoop *R, const FlyVal **all) {
  int n = gather(R, all);
  if (I->emit && !fresh_values(I, n, all))
    return false;
  scatter(R, all);
  return true;
}

/* Whether the loop goes on: the condition of a while loop, or i < hi, and
   not stopped. A while loop's condition is not evaluated once it stopped
   (it may read memory that the break was to keep it from). */
static bool condition_evaluated(FlyInterp *I, void *arg, FlyOutcome *o) {
  RuntimeLoop *R = arg;
  const FlyVal *c = while_condition(I, R->s, R->st, R->c);
  fly_take_outcome(I, c, o);
  if (!c)
    return false;
  const FlyNode *at = R->st->kid[1];
  bool b;
  return c->kind == FLY_V_RUNTIME ? fly_runtime_condition(I, c, at)
                                  : fly_static_condition(I, c, at, &b);
}

static bool condition_skipped(FlyInterp *I, void *arg, FlyOutcome *o) {
  (void)I;
  (void)arg;
  memset(o, 0, sizeof *o);
  o->value = fly_val_bool(false);
  return true;
}

static const FlyVal *goes_on(FlyInterp *I, RuntimeLoop *R) {
  const FlyNode *at = R->st->kid[1];
  const FlyVal *not_stopped = R->stops ? fly_unary(I, FLY_OP_NOT, R->stop, at) : NULL;
  if (R->stops && !not_stopped)
    return NULL;
  if (R->st->kind == FLY_FOR) {
    const FlyVal *in_range = fly_binary(I, FLY_OP_LT, R->var, R->range->hi, at);
    return in_range && not_stopped ? fly_binary(I, FLY_OP_AND, not_stopped, in_range, at)
                                   : in_range;
  }
  FlyOutcome o;
  if (!R->stops)
    return condition_evaluated(I, R, &o) ? o.value : NULL;
  FlyChoice ch = {.cond = not_stopped,
                  .not_cond = R->stop,
                  .at = R->st,
                  .meeting = {at, {at, "the condition of a while loop"}, NULL},
                  .then_branch = condition_evaluated,
                  .else_branch = condition_skipped,
                  .arg = R};
  return fly_choose(I, &ch, &o) ? o.value : NULL;
}

/* The values of `all` before the loop: the variable starts at lo, the
   carried values at their initial values, the flags false. */
static void initial_values(const RuntimeLoop *R, const FlyVal **init) {
  int n = 0;
  if (R->var)
    init[n++] = R->range->lo;
  for (int i = 0; i < R->c->n; i++)
    init[n++] = R->init[i];
  if (R->stops)
    init[n++] = fly_val_bool(false);
  if (R->returns)
    init[n++] = fly_val_bool(false);
}

/* What the body gives the next iteration, in the order of `all`. */
static bool next_values(FlyInterp *I, const RuntimeLoop *R, const FlyVal *const *next,
                        const FlyOutcome *o, const FlyVal **out) {
  int n = 0;
  if (R->var && !(out[n++] = fly_binary(I, FLY_OP_ADD, R->var, R->range->step, R->st)))
    return false;
  for (int i = 0; i < R->c->n; i++)
    out[n++] = next[i];
  if (R->stops && !(out[n++] = fly_exit_flag(I, o, STOPS, R->st)))
    return false;
  if (R->returns && !(out[n++] = fly_exit_flag(I, o, 1u << FLY_EXIT_RETURN, R->st)))
    return false;
  return true;
}

/* One attempt at a loop lowered to scf.while. next: the body's yields. */
static YieldCheck while_attempt(FlyInterp *I, RuntimeLoop *R, bool first, const FlyVal **next) {
  Carries *c = R->c;
  size_t cap = sizeof(const FlyVal *) * (size_t)(MAX_HIDDEN + c->n);
  const FlyVal **all = fly_alloc(&I->A, cap), **init = fly_alloc(&I->A, cap);
  const FlyVal **yielded = fly_alloc(&I->A, cap);
  if (!all || !init || !yielded || !refresh(I, R, all))
    return YIELDS_BAD;
  initial_values(R, init);
  int n = gather(R, all);
  FlyEmitter *em = I->emit;
  void *region = em ? em->while_begin(em->ctx, n, init, (FlyVal *const *)all, R->st) : NULL;
  if (em && !region) {
    I->aborted = true;
    return YIELDS_BAD;
  }
  const FlyVal *go = goes_on(I, R);
  bool ok = go && refresh(I, R, all);
  if (ok && region && !em->while_body(em->ctx, region, go, n, (FlyVal *const *)all))
    ok = false;
  FlyOutcome o;
  I->runtime_flow++;
  ok = ok && run_body(I, R->s, R->st, R->var, c, first ? R->init : NULL, next, &o);
  I->runtime_flow--;
  YieldCheck y = ok ? check_yields(I, c, R->init, next, first) : YIELDS_BAD;
  if (y == YIELDS_OK && !(next_values(I, R, next, &o, yielded) && refresh(I, R, all)))
    y = YIELDS_BAD;
  if (y != YIELDS_OK) {
    if (region)
      em->while_abandon(em->ctx, region);
    return y;
  }
  if (region && !em->while_end(em->ctx, region, n, yielded, (FlyVal *const *)all)) {
    I->aborted = true;
    return YIELDS_BAD;
  }
  return YIELDS_OK;
}

/* One attempt at a for loop lowered to scf.for (its body cannot stop it). */
static YieldCheck for_attempt(FlyInterp *I, RuntimeLoop *R, bool first, const FlyVal **next) {
  Carries *c = R->c;
  void *region = NULL;
  if (I->emit) {
    R->var = fresh_leaf(I, R->var, NULL);
    if (!R->var || !fresh_values(I, c->n, c->value))
      return YIELDS_BAD;
    region = I->emit->for_begin(I->emit->ctx, R->range->lo, R->range->hi, R->range->step,
                                (FlyVal *)R->var, c->n, R->init, (FlyVal *const *)c->value, R->st);
    if (!region) {
      I->aborted = true;
      return YIELDS_BAD;
    }
  }
  FlyOutcome o;
  I->runtime_flow++;
  bool ok = run_body(I, R->s, R->st, R->var, c, first ? R->init : NULL, next, &o);
  I->runtime_flow--;
  YieldCheck y = ok ? check_yields(I, c, R->init, next, first) : YIELDS_BAD;
  if (y != YIELDS_OK) {
    if (region)
      I->emit->for_abandon(I->emit->ctx, region);
    return y;
  }
  if (region) {
    if (!fresh_values(I, c->n, c->value))
      return YIELDS_BAD;
    if (!I->emit->for_end(I->emit->ctx, region, c->n, next, (FlyVal *const *)c->value)) {
      I->aborted = true;
      return YIELDS_BAD;
    }
  }
  return YIELDS_OK;
}

/* The body of a runtime loop is checked once with the carried values as
   runtime values of their types: a carried number that starts as a
   constant becomes one of its default type, or, where it was untyped and
   fits, of the type the body yields (then the body runs again), so
   `carry (acc = 0.0)` yielding f16 values carries an f16. */
static bool runtime_loop(FlyInterp *I, RuntimeLoop *R) {
  Carries *c = R->c;
  const FlyNode *body = R->st->kid[3];
  R->returns = body && can_exit(body, FLY_RETURN);
  R->stops = R->returns || (body && can_exit(body, FLY_BREAK));
  R->init = copy_values(I, c->n, c->value);
  const FlyVal **next = fly_alloc(&I->A, sizeof *next * (size_t)(c->n ? c->n : 1));
  if (!R->init || !next)
    return false;
  for (int i = 0; i < c->n; i++) {
    const FlyVal *v = c->value[i];
    if (v->kind == FLY_V_INT || v->kind == FLY_V_FLOAT || v->kind == FLY_V_BOOL) {
      FlyOrigin o = {c->node[i], "a value carried by a runtime loop"};
      c->value[i] = fly_val_runtime(&I->A, fly_default_runtime_type(v), o);
    }
  }
  FlyOrigin flag = {R->st, "whether a runtime loop stopped"};
  R->stop = R->returned = fly_val_runtime(&I->A, fly_type_scalar(FLY_TYPE_I1), flag);
  bool as_while = R->st->kind == FLY_WHILE || R->stops;
  int64_t smem = I->smem_bytes; /* an abandoned attempt's tiles are not made */
  for (int attempt = 0; attempt < 2; attempt++) {
    I->smem_bytes = smem;
    YieldCheck y =
        as_while ? while_attempt(I, R, attempt == 0, next) : for_attempt(I, R, attempt == 0, next);
    if (y == YIELDS_BAD)
      return false;
    if (y == YIELDS_OK)
      break;
  }
  /* Where the loop returned, the rest of the kernel does not run. */
  if (R->returns)
    pending_return(I, R->returned);
  return true;
}

/* ---- for and while ------------------------------------------------------------------- */

/* After the loop, the carried names hold their final values. */
static bool bind_results(FlyInterp *I, FlyScope *s, const Carries *c) {
  for (int i = 0; i < c->n; i++)
    if (!fly_scope_bind(I, s, c->node[i]->str, c->node[i]->len, c->value[i], c->node[i]))
      return false;
  return true;
}

static bool runtime_for(FlyInterp *I, FlyScope *s, const FlyNode *st, const FlyObject *r,
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
  const FlyType *t = fly_operand_type(I, r->lo, r->hi, st->kid[1]);
  if (!t)
    t = fly_type_scalar(FLY_TYPE_I32);
  if (t->kind != FLY_TY_SCALAR || !fly_type_is_int(t)) {
    fly_err(I, st->kid[1], "the bounds of a loop must be integers, not %s", fly_type_str(&I->A, t));
    return false;
  }
  RuntimeLoop R = {s, st, c, NULL, r, fly_val_runtime(&I->A, t, origin), false, false, NULL, NULL};
  return R.var && runtime_loop(I, &R);
}

bool fly_exec_for(FlyInterp *I, FlyScope *s, const FlyNode *st) {
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
  const FlyObject *r = &range->object;
  bool ok;
  if (r->unrolled) {
    /* By count, so that the last step cannot overflow past the bound. */
    int64_t lo = r->lo->i, hi = r->hi->i, step = r->step->i;
    int64_t count = hi > lo ? (int64_t)(((uint64_t)hi - (uint64_t)lo - 1) / (uint64_t)step) + 1 : 0;
    StaticLoop L = {s, st, &c, lo, step, count};
    ok = static_iterations(I, &L, 0);
  } else {
    ok = runtime_for(I, s, st, r, &c);
  }
  return ok && bind_results(I, s, &c);
}

/* Where a value must be static, a while loop runs at compile time. */
static bool at_compile_time(const FlyInterp *I) { return I->compile_time > 0 || !I->kernel; }

bool fly_exec_while(FlyInterp *I, FlyScope *s, const FlyNode *st) {
  Carries c;
  if (!eval_carries(I, s, st->kid[2], &c))
    return false;
  bool ok;
  if (at_compile_time(I)) {
    StaticLoop L = {s, st, &c, 0, 0, 0};
    ok = static_iterations(I, &L, 0);
  } else {
    RuntimeLoop R = {s, st, &c, NULL, NULL, NULL, false, false, NULL, NULL};
    ok = runtime_loop(I, &R);
  }
  return ok && bind_results(I, s, &c);
}
