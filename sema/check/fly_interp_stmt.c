/* fly_interp_stmt.c — statements and blocks: let and patterns, const and
 * const blocks, static_assert, if (at compile time or at run time), return,
 * yield, break and continue.
 *
 * A break, continue or return taken where every path takes it unwinds: the
 * statements after it are skipped up to what it leaves (a loop body, the
 * kernel, the function). One taken under a runtime condition cannot: the
 * runtime if around it gives, besides its value, an i1 flag per kind of exit
 * taken in it, and the statements after that if run under a guard, an
 * scf.if on "no exit was taken", which gives the flags on. The loop around
 * them ends its iteration, or stops, by the flags. */
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

static const FlyVal *differ(FlyInterp *I, const FlyMeeting *m, const char *a, const char *b,
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
                                  const FlyMeeting *m) {
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

const FlyVal *fly_merge(FlyInterp *I, const FlyVal *a, const FlyVal *b, const FlyMeeting *m) {
  /* One runtime number on both sides (made before the choice) is that
     number. */
  if (a == b && a->kind == FLY_V_RUNTIME)
    return a;
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
      if (!(e[i] = fly_merge(I, a->elems[i], b->elems[i], m)))
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

/* ---- conditions -------------------------------------------------------------------- */

bool fly_static_condition(FlyInterp *I, const FlyVal *c, const FlyNode *at, bool *out) {
  if (c->kind != FLY_V_BOOL) {
    fly_err(I, at, "a condition must be a boolean, not %s", fly_val_describe(&I->A, c));
    return false;
  }
  *out = c->i != 0;
  return true;
}

bool fly_runtime_condition(FlyInterp *I, const FlyVal *c, const FlyNode *at) {
  const FlyType *t = c->type;
  if (t->kind == FLY_TY_SCALAR && t->code == FLY_TYPE_I1)
    return true;
  fly_err(I, at, "a condition must be a boolean (i1), not %s", fly_type_str(&I->A, t));
  return false;
}

/* ---- exits ------------------------------------------------------------------------- */

FlyExit fly_unwinding(const FlyInterp *I) { return I->returning ? FLY_EXIT_RETURN : I->jumping; }

bool fly_flag_taken(const FlyVal *flag) {
  return flag && !(flag->kind == FLY_V_BOOL && flag->i == 0);
}

bool fly_flag_surely(const FlyVal *flag) {
  return flag && flag->kind == FLY_V_BOOL && flag->i != 0;
}

static bool exits_pending(const FlyInterp *I) {
  for (int k = 1; k < FLY_EXIT_COUNT; k++)
    if (I->exits[k])
      return true;
  return false;
}

void fly_take_outcome(FlyInterp *I, const FlyVal *v, FlyOutcome *o) {
  FlyExit unwound = fly_unwinding(I);
  o->value = unwound ? fly_val_none() : v;
  o->yielded = NULL;
  /* Where the loop goes on from: the values the break or continue gave, or
     the carried values as they are; for exits taken further in, the values
     they left with them. */
  if (I->loop && I->loop->n > 0)
    o->yielded = unwound == FLY_EXIT_NONE                     ? I->exit_next
                 : unwound != FLY_EXIT_RETURN && I->jump_next ? I->jump_next
                                                              : fly_loop_current(I);
  for (int k = 1; k < FLY_EXIT_COUNT; k++) {
    o->exit[k] = k == (int)unwound ? fly_val_bool(true) : I->exits[k];
    I->exits[k] = NULL;
  }
  o->exit[FLY_EXIT_NONE] = NULL;
  /* I->returned stays: a function's return taken in an unrolled loop is
     put back, value and all, when the loop stops. */
  I->jumping = FLY_EXIT_NONE;
  I->returning = false;
  I->jump_next = I->exit_next = NULL;
}

void fly_put_exits(FlyInterp *I, const FlyOutcome *o) {
  for (int k = 1; k < FLY_EXIT_COUNT; k++) {
    const FlyVal *f = o->exit[k];
    if (fly_flag_surely(f) && k == FLY_EXIT_RETURN) {
      I->returning = true;
    } else if (fly_flag_surely(f)) {
      I->jumping = (FlyExit)k;
      I->jump_next = o->yielded;
    } else if (fly_flag_taken(f)) {
      I->exits[k] = f;
      I->exit_next = o->yielded;
    }
  }
}

const FlyVal *fly_exit_flag(FlyInterp *I, const FlyOutcome *o, unsigned kinds, const FlyNode *at) {
  const FlyVal *flag = fly_val_bool(false);
  for (int k = 1; k < FLY_EXIT_COUNT; k++) {
    const FlyVal *f = o->exit[k];
    if (!(kinds & 1u << k) || !fly_flag_taken(f))
      continue;
    if (fly_flag_surely(f))
      return f;
    flag = fly_flag_taken(flag) ? fly_binary(I, FLY_OP_OR, flag, f, at) : f;
    if (!flag)
      return NULL;
  }
  return flag;
}

/* ---- runtime choices ----------------------------------------------------------------- */

/* An outcome as one value for the emitter: (value, break, continue, return,
   yielded), whose runtime leaves become the results of the scf.if. */
static const FlyVal *pack_outcome(FlyInterp *I, const FlyOutcome *o) {
  const FlyVal **e = fly_alloc(&I->A, sizeof *e * (FLY_EXIT_COUNT + 1));
  if (!e)
    return NULL;
  e[0] = o->value ? o->value : fly_val_none();
  for (int k = 1; k < FLY_EXIT_COUNT; k++)
    e[k] = o->exit[k] ? o->exit[k] : fly_val_bool(false);
  e[FLY_EXIT_COUNT] = o->yielded ? o->yielded : fly_val_none();
  return fly_val_tuple(&I->A, FLY_EXIT_COUNT + 1, e);
}

static void unpack_outcome(const FlyVal *v, FlyOutcome *o) {
  o->value = v->elems[0];
  o->exit[FLY_EXIT_NONE] = NULL;
  for (int k = 1; k < FLY_EXIT_COUNT; k++)
    o->exit[k] = fly_flag_taken(v->elems[k]) ? v->elems[k] : NULL;
  o->yielded = v->elems[FLY_EXIT_COUNT]->kind == FLY_V_NONE ? NULL : v->elems[FLY_EXIT_COUNT];
}

static const FlyVal *merge_outcomes(FlyInterp *I, const FlyVal *a, const FlyVal *b,
                                    const FlyChoice *ch) {
  const FlyVal **e = fly_alloc(&I->A, sizeof *e * (FLY_EXIT_COUNT + 1));
  if (!e || !(e[0] = fly_merge(I, a->elems[0], b->elems[0], &ch->meeting)))
    return NULL;
  FlyMeeting flags = {
      ch->at, {ch->at, "a break, continue or return under a runtime condition"}, NULL};
  for (int k = 1; k < FLY_EXIT_COUNT; k++)
    if (!(e[k] = fly_merge(I, a->elems[k], b->elems[k], &flags)))
      return NULL;
  const FlyVal *ya = a->elems[FLY_EXIT_COUNT], *yb = b->elems[FLY_EXIT_COUNT];
  e[FLY_EXIT_COUNT] = ya->kind == FLY_V_NONE || yb->kind == FLY_V_NONE || !ch->loop
                          ? fly_val_none()
                          : fly_merge_next(I, ya, yb, ch->loop);
  if (!e[FLY_EXIT_COUNT])
    return NULL;
  return fly_val_tuple(&I->A, FLY_EXIT_COUNT + 1, e);
}

/* An exit taken in one branch and not in the other, both statically (as
   `if c { return; }`), is taken where the condition is true, or false: no
   result of the scf.if needs to carry it. */
typedef enum { FLAG_OWN, FLAG_COND, FLAG_NOT_COND } FlagSource;

static FlagSource flag_source(const FlyOutcome *a, const FlyOutcome *b, int k) {
  bool ta = fly_flag_taken(a->exit[k]), tb = fly_flag_taken(b->exit[k]);
  if (ta == tb || (ta && !fly_flag_surely(a->exit[k])) || (tb && !fly_flag_surely(b->exit[k])))
    return FLAG_OWN;
  return ta ? FLAG_COND : FLAG_NOT_COND;
}

bool fly_choose(FlyInterp *I, const FlyChoice *ch, FlyOutcome *out) {
  void *region = I->emit ? I->emit->if_begin(I->emit->ctx, ch->cond, ch->at) : NULL;
  if (I->emit && !region) {
    I->aborted = true;
    return false;
  }
  I->runtime_flow++;
  FlyOutcome a = {0}, b = {0};
  bool ok = ch->then_branch(I, ch->arg, &a);
  if (ok && region && !I->emit->if_else(I->emit->ctx, region))
    ok = false;
  ok = ok && ch->else_branch(I, ch->arg, &b);
  I->runtime_flow--;
  /* Where one branch says what the running loop goes on with and the other
     took no exit, the other goes on with the carried values as they are. */
  if (ok && ch->loop && ch->loop == I->loop && (!a.yielded) != (!b.yielded))
    ok = (a.yielded || (a.yielded = fly_loop_current(I))) &&
         (b.yielded || (b.yielded = fly_loop_current(I)));
  FlagSource source[FLY_EXIT_COUNT] = {FLAG_OWN};
  for (int k = 1; ok && k < FLY_EXIT_COUNT; k++)
    if ((source[k] = flag_source(&a, &b, k)) != FLAG_OWN)
      a.exit[k] = b.exit[k] = NULL;
  const FlyVal *pa = ok ? pack_outcome(I, &a) : NULL, *pb = ok ? pack_outcome(I, &b) : NULL;
  const FlyVal *v = pa && pb ? merge_outcomes(I, pa, pb, ch) : NULL;
  if (region && !I->emit->if_end(I->emit->ctx, region, pa, pb, v)) {
    I->aborted = true;
    return false;
  }
  if (!v)
    return false;
  unpack_outcome(v, out);
  for (int k = 1; k < FLY_EXIT_COUNT; k++)
    if (source[k] != FLAG_OWN &&
        !(out->exit[k] = source[k] == FLAG_COND ? ch->cond
                         : ch->not_cond         ? ch->not_cond
                                                : fly_unary(I, FLY_OP_NOT, ch->cond, ch->at)))
      return false;
  return true;
}

/* ---- if ---------------------------------------------------------------------------- */

static const FlyVal *eval_if(FlyInterp *I, FlyScope *s, const FlyNode *e, bool value);

/* A branch: a block, or the if of `else if` (`value`: the whole if gives
   a value). */
static const FlyVal *eval_branch(FlyInterp *I, FlyScope *s, const FlyNode *b, bool value) {
  if (!b)
    return fly_val_none();
  return b->kind == FLY_IF ? eval_if(I, s, b, value) : fly_eval_block(I, s, b);
}

typedef struct IfRun {
  FlyScope *s;
  const FlyNode *e;
  bool value;
} IfRun;

static bool run_branch(FlyInterp *I, const IfRun *r, int kid, FlyOutcome *o) {
  const FlyVal *v = eval_branch(I, r->s, r->e->kid[kid], r->value);
  bool ok = v || fly_unwinding(I);
  fly_take_outcome(I, v, o);
  return ok;
}

static bool then_branch(FlyInterp *I, void *arg, FlyOutcome *o) { return run_branch(I, arg, 1, o); }
static bool else_branch(FlyInterp *I, void *arg, FlyOutcome *o) { return run_branch(I, arg, 2, o); }

static const char *exit_word(const FlyNode *st) {
  return !st                        ? "return"
         : st->kind == FLY_BREAK    ? "break"
         : st->kind == FLY_CONTINUE ? "continue"
                                    : "return";
}

/* An if whose value is used is part of a larger expression or statement,
   and what follows it there cannot be skipped: its branches may not exit
   under a runtime condition. */
static bool check_value_if_exits(FlyInterp *I, const FlyNode *e, const FlyOutcome *o) {
  for (int k = 1; k < FLY_EXIT_COUNT; k++)
    if (o->exit[k]) {
      const FlyNode *at = I->exit_at ? I->exit_at : e;
      fly_err(I, at,
              "'%s' under a runtime condition cannot leave an if that gives a value; make "
              "that if a statement of its own",
              exit_word(I->exit_at));
      fly_interp_note(I, e, "this if gives a value");
      return false;
    }
  return true;
}

static const FlyVal *eval_if(FlyInterp *I, FlyScope *s, const FlyNode *e, bool value) {
  bool is_const = e->flags & FLY_IS_CONST;
  const FlyVal *c = is_const ? fly_eval_static(I, s, e->kid[0], "the condition of 'if const'")
                             : fly_eval(I, s, e->kid[0]);
  if (!c)
    return NULL;
  /* A condition known at compile time chooses, whether or not the if is
     marked const: only the chosen branch is evaluated. */
  if (c->kind != FLY_V_RUNTIME) {
    bool taken;
    if (!fly_static_condition(I, c, e->kid[0], &taken))
      return NULL;
    return eval_branch(I, s, taken ? e->kid[1] : e->kid[2], value);
  }
  if (!fly_runtime_condition(I, c, e->kid[0]))
    return NULL;
  IfRun run = {s, e, value};
  FlyChoice ch = {.cond = c,
                  .at = e,
                  .meeting = {e, {e->kid[0], "the condition of a runtime if"}, NULL},
                  .loop = I->loop,
                  .then_branch = then_branch,
                  .else_branch = else_branch,
                  .arg = &run};
  FlyOutcome out;
  if (!fly_choose(I, &ch, &out))
    return NULL;
  if (value && !check_value_if_exits(I, e, &out))
    return NULL;
  fly_put_exits(I, &out);
  return out.value;
}

const FlyVal *fly_eval_if(FlyInterp *I, FlyScope *s, const FlyNode *e) {
  return eval_if(I, s, e, true);
}

/* ---- blocks ------------------------------------------------------------------------ */

static bool yield(FlyInterp *I, FlyScope *s, const FlyNode *st);

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
  case FLY_WHILE:
    for (const FlyNode *c = st->kid[2]; c; c = c->next)
      fly_scope_bind(I, s, c->str, c->len, fly_val_poison(), c);
    break;
  default:
    break;
  }
}

/* The statements after one that left exits pending, under a guard: they
   run where no exit was taken. */
typedef struct Rest {
  FlyScope *s;
  const FlyNode *first, *block;
  bool loop_body;
  FlyOutcome pending; /* the exits taken before them */
  bool ends_body;     /* the rest ended the loop body: yielded, or exited */
  bool ends_kernel;   /* it ends the kernel: nothing after it reads the exits */
} Rest;

static void forget_exits(FlyOutcome *o) {
  for (int k = 1; k < FLY_EXIT_COUNT; k++)
    o->exit[k] = NULL;
}

/* Where the rest runs. At the top of a loop body it ends with the body's
   yield, or with an exit. */
static bool rest_runs(FlyInterp *I, void *arg, FlyOutcome *o) {
  Rest *r = arg;
  const FlyVal *saved = I->yielded;
  I->yielded = NULL;
  const FlyVal *v = fly_run_stmts(I, r->s, r->first, r->block, r->loop_body);
  const FlyVal *y = I->yielded;
  I->yielded = saved;
  bool unwound = fly_unwinding(I) != FLY_EXIT_NONE;
  fly_take_outcome(I, v, o);
  if (!v && !unwound)
    return false;
  r->ends_body = r->loop_body && (y || unwound);
  if (y)
    o->yielded = y;
  if (r->ends_kernel)
    forget_exits(o);
  return true;
}

/* Where it does not: the exits taken before it stand, surely the one if
   there was one kind. */
static bool rest_skipped(FlyInterp *I, void *arg, FlyOutcome *o) {
  (void)I;
  Rest *r = arg;
  *o = r->pending;
  int kinds = 0, last = 0;
  for (int k = 1; k < FLY_EXIT_COUNT; k++)
    if (fly_flag_taken(o->exit[k]))
      kinds++, last = k;
  if (kinds == 1)
    o->exit[last] = fly_val_bool(true);
  o->value = fly_val_none();
  if (r->ends_kernel)
    forget_exits(o);
  return true;
}

static const FlyVal *guard_rest(FlyInterp *I, FlyScope *s, const FlyNode *first,
                                const FlyNode *block, bool loop_body) {
  const FlyNode *at = first ? first : block->kid[1];
  Rest r = {s, first, block, loop_body, {0}, false, I->kernel && block == I->kernel->kid[2]};
  fly_take_outcome(I, fly_val_none(), &r.pending);
  const FlyVal *exited = fly_exit_flag(I, &r.pending, ~0u, at);
  const FlyVal *go = exited ? fly_unary(I, FLY_OP_NOT, exited, at) : NULL;
  if (!go)
    return NULL;
  FlyChoice ch = {.cond = go,
                  .not_cond = exited,
                  .at = at,
                  .meeting = {at, {at, "a statement after a break, continue or return"}, NULL},
                  .loop = I->loop,
                  .then_branch = rest_runs,
                  .else_branch = rest_skipped,
                  .arg = &r};
  FlyOutcome out;
  if (!fly_choose(I, &ch, &out))
    return NULL;
  /* The values the rest yields, or where it or what came before exited. */
  if (r.ends_body)
    I->yielded = out.yielded;
  fly_put_exits(I, &out);
  return out.value;
}

const FlyVal *fly_run_stmts(FlyInterp *I, FlyScope *s, const FlyNode *first, const FlyNode *block,
                            bool loop_body) {
  bool failed = false;
  for (const FlyNode *st = first; st; st = st->next) {
    /* A block that ends with an if/else statement has that if's value. */
    if (!loop_body && !st->next && !block->kid[1] && is_final_if(st)) {
      const FlyVal *v = eval_if(I, s, st->kid[0], false);
      return fly_unwinding(I) ? fly_val_none() : failed ? NULL : v;
    }
    if (loop_body && st->kind == FLY_YIELD) {
      if (st->next) {
        fly_err(I, st, "'yield' must be the last statement of a loop body");
        return NULL;
      }
      return yield(I, s, st) ? fly_val_none() : NULL;
    }
    if (fly_exec_stmt(I, s, st)) {
      if (exits_pending(I) && (st->next || block->kid[1])) {
        const FlyVal *v = guard_rest(I, s, st->next, block, loop_body);
        return failed ? NULL : v;
      }
      continue;
    }
    if (fly_unwinding(I))
      return fly_val_none();
    if (I->aborted || loop_body)
      return NULL;
    failed = true;
    poison_stmt(I, s, st);
  }
  if (!block->kid[1])
    return failed ? NULL : fly_val_none();
  if (loop_body) {
    fly_err(I, block->kid[1],
            "a loop body has no value: end it with 'yield' to carry values, or add ';'");
    return NULL;
  }
  const FlyVal *v = fly_eval(I, s, block->kid[1]);
  return failed ? NULL : v;
}

const FlyVal *fly_eval_block(FlyInterp *I, FlyScope *s, const FlyNode *block) {
  FlyScope *inner = fly_scope_new(I, s);
  if (!inner)
    return NULL;
  return fly_run_stmts(I, inner, block->kid[0], block, false);
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
  /* It runs at compile time, apart from any loop around it. */
  FlyLoop *loop = I->loop;
  I->loop = NULL;
  I->in_const++;
  I->compile_time++;
  bool ok = true;
  for (const FlyNode *k = block->kid[0]; k && ok; k = k->next)
    ok = fly_exec_stmt(I, inner, k);
  I->compile_time--;
  I->in_const--;
  I->loop = loop;
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
  if (!fly_static_condition(I, c, st->kid[0], &holds))
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

/* ---- return, yield, break and continue ------------------------------------------------ */

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
  /* A kernel may end early under a runtime condition: the runtime ifs and
     loops around the return turn it into a flag, and the rest of the
     kernel runs where it is false. A helper's result cannot depend on it. */
  if (I->runtime_flow > 0 && I->frame) {
    fly_err(I, st,
            "a helper function cannot return from inside a runtime if or loop; make "
            "the if the function's value instead (if c { a } else { b })");
    return false;
  }
  I->returning = true;
  I->returned = v;
  I->exit_at = st;
  return false;
}

/* The value of a loop body's final yield: one value per carried name. */
/* What a yield, break or continue gives the next iteration of the running
   loop: one value per carried name. NULL after an error. */
static const FlyVal *next_values(FlyInterp *I, FlyScope *s, const FlyNode *st, const char *word) {
  const FlyLoop *loop = I->loop;
  if (loop->n == 0) {
    if (st->kind == FLY_YIELD)
      return fly_err(I, st, "this loop carries no values, so there is nothing to yield");
    return fly_err(I, st->kid[0], "this loop carries no values, so '%s' gives none", word);
  }
  const FlyVal *v = fly_eval(I, s, st->kid[0]);
  if (v && loop->n > 1 && (v->kind != FLY_V_TUPLE || v->n != loop->n))
    return fly_err(I, st, "the loop carries %d values, so '%s' must give a tuple of %d, not %s",
                   loop->n, word, loop->n, fly_val_describe(&I->A, v));
  return v;
}

static bool yield(FlyInterp *I, FlyScope *s, const FlyNode *st) {
  return (I->yielded = next_values(I, s, st, "yield")) != NULL;
}

/* break and continue end the body of the innermost loop of the function
   they are in (they do not leave a const block or a function), with the
   carried values they give or, without any, as they are. */
static bool exec_jump(FlyInterp *I, FlyScope *s, const FlyNode *st, FlyExit kind) {
  const char *word = kind == FLY_EXIT_BREAK ? "break" : "continue";
  if (!I->loop) {
    if (I->in_const)
      fly_err(I, st, "'%s' cannot leave a const block", word);
    else
      fly_err(I, st, "'%s' is allowed only in the body of a loop", word);
    return false;
  }
  const FlyVal *next = st->kid[0] ? next_values(I, s, st, word) : NULL;
  if (st->kid[0] && !next)
    return false;
  I->jumping = kind;
  I->jump_next = next;
  I->exit_at = st;
  return false;
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
    return fly_exec_for(I, s, st);
  case FLY_WHILE:
    return fly_exec_while(I, s, st);
  case FLY_RETURN:
    return exec_return(I, s, st);
  case FLY_BREAK:
    return exec_jump(I, s, st, FLY_EXIT_BREAK);
  case FLY_CONTINUE:
    return exec_jump(I, s, st, FLY_EXIT_CONTINUE);
  case FLY_YIELD:
    fly_err(I, st, "'yield' is allowed only as the last statement of a loop body");
    return false;
  case FLY_EXPR_STMT: {
    /* An if statement's value is not used, so its branches may exit. */
    const FlyNode *e = st->kid[0];
    const FlyVal *v = e && e->kind == FLY_IF ? eval_if(I, s, e, false) : fly_eval(I, s, e);
    return v != NULL && !fly_unwinding(I);
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
  return ok && !fly_unwinding(I) && !I->aborted;
}
