/* fly_interp_call.c — calls of helper functions.
 *
 * A helper is inlined: each call evaluates its body with the parameters
 * bound to the arguments, so a helper may take and return any value. The
 * arguments are matched to parameters by position, then by name; a missing
 * one takes its default. A const parameter needs a static argument. Calls
 * nest at most depth_limit deep. */
#include <stdio.h>
#include <string.h>

#include "fly_interp.h"

static const FlyNode *find_param(const FlyNode *fn, const char *name, uint32_t len, int *index) {
  int i = 0;
  for (const FlyNode *p = fn->kid[0]; p; p = p->next, i++)
    if (p->len == len && memcmp(p->str, name, len) == 0) {
      *index = i;
      return p;
    }
  return NULL;
}

static bool depth_exceeded(FlyInterp *I, const FlyNode *fn, const FlyArgs *args) {
  if (I->depth < I->options.depth_limit)
    return false;
  /* Only a function already in the chain may be recursing without end. */
  const FlyFrame *f = I->frame;
  while (f && f->fn != fn)
    f = f->parent;
  if (f)
    fly_err(I, args->call,
            "calls nested too deeply at compile time (the limit is %d); is '%s' recursive "
            "without end?",
            I->options.depth_limit, fn->str);
  else
    fly_err(I, args->call,
            "calls nested too deeply at compile time (the limit is %d; raise it with "
            "--depth-limit=N)",
            I->options.depth_limit);
  I->aborted = true;
  return true;
}

/* A message about an argument given in the call is at the call itself, so
   it leaves out the call's own frame, whose chain note would point at the
   same call again; one about a default (in the definition) keeps it. The
   result is the frame to restore. */
static FlyFrame *report_at_call(FlyInterp *I, bool at_call) {
  FlyFrame *self = I->frame;
  if (at_call)
    I->frame = self->parent;
  return self;
}

/* Binds the parameters of fn in scope s from the arguments. Runs in the
   call's frame (I->frame). */
static bool bind_params(FlyInterp *I, FlyScope *s, const FlyNode *fn, const FlyArgs *args) {
  int nparams = 0;
  for (const FlyNode *p = fn->kid[0]; p; p = p->next)
    nparams++;
  const FlyVal **given = fly_alloc(&I->A, sizeof *given * (size_t)(nparams ? nparams : 1));
  const FlyNode **where = fly_alloc(&I->A, sizeof *where * (size_t)(nparams ? nparams : 1));
  if (!given || !where)
    return false;
  if (args->n > nparams) {
    FlyFrame *self = report_at_call(I, true);
    fly_err(I, args->node[nparams], "'%s' takes %d argument%s, but this call gives %d", fn->str,
            nparams, nparams == 1 ? "" : "s", args->n);
    fly_interp_note_name(I, fn, "'%s' is defined here", fn->str);
    I->frame = self;
    return false;
  }
  for (int i = 0; i < args->n; i++) {
    given[i] = args->v[i];
    where[i] = args->node[i];
  }
  for (int i = 0; i < args->nnamed; i++) {
    const FlyNode *na = args->named[i];
    int index;
    if (!find_param(fn, na->str, na->len, &index)) {
      FlyFrame *self = report_at_call(I, true);
      fly_err(I, na, "'%s' has no parameter named '%s'", fn->str, na->str);
      fly_interp_note_name(I, fn, "'%s' is defined here", fn->str);
      I->frame = self;
      return false;
    }
    if (given[index]) {
      FlyFrame *self = report_at_call(I, true);
      fly_err(I, na, "the parameter '%s' is given twice", na->str);
      I->frame = self;
      return false;
    }
    given[index] = args->named_v[i];
    where[index] = na->kid[0];
  }
  int i = 0;
  for (const FlyNode *p = fn->kid[0]; p; p = p->next, i++) {
    const FlyVal *v = given[i];
    const FlyNode *at = where[i];
    if (!v) {
      if (!p->kid[1]) {
        FlyFrame *self = report_at_call(I, true);
        fly_err(I, args->call, "missing argument for the parameter '%s' of '%s'", p->str, fn->str);
        fly_interp_note_name(I, p, "'%s' is declared here", p->str);
        I->frame = self;
        return false;
      }
      /* A default is evaluated where the function is defined, with the
         parameters before it in scope. */
      v = fly_eval(I, s, p->kid[1]);
      at = p->kid[1];
      if (!v)
        return false;
    }
    if ((p->flags & FLY_IS_CONST) && !fly_val_is_static(v)) {
      char what[160];
      snprintf(what, sizeof what, "the argument for the const parameter '%s' of '%s'", p->str,
               fn->str);
      FlyFrame *self = report_at_call(I, given[i] != NULL);
      fly_err_not_static(I, at, v, what);
      I->frame = self;
      return false;
    }
    if (p->kid[0]) {
      const FlyType *t = fly_eval_type(I, s, p->kid[0]);
      if (!t)
        return false;
      FlyFrame *self = report_at_call(I, given[i] != NULL);
      v = fly_convert(I, v, t, at, false);
      I->frame = self;
      if (!v)
        return false;
    }
    if (!fly_scope_bind(I, s, p->str, p->len, v, p))
      return false;
  }
  return true;
}

const FlyVal *fly_call_fn(FlyInterp *I, const FlyNode *fn, const FlyArgs *args) {
  if (depth_exceeded(I, fn, args))
    return NULL;
  FlyScope *s = fly_scope_new(I, NULL);
  if (!s)
    return NULL;
  FlyFrame frame = {fn, args->call, I->frame};
  /* Arguments are checked in the callee's frame so that a message about a
     default names the call (report_at_call leaves it for the others). */
  I->frame = &frame;
  I->depth++;
  /* The body of a helper runs as its own flow: a runtime if around the
     call does not make the helper's own returns conditional. */
  int saved_flow = I->runtime_flow;
  FlyLoop *saved_loop = I->loop;
  int saved_const = I->in_const;
  const FlyVal *saved_exits[FLY_EXIT_COUNT], *saved_next = I->exit_next;
  memcpy(saved_exits, I->exits, sizeof saved_exits);
  memset(I->exits, 0, sizeof I->exits);
  I->exit_next = NULL;
  I->runtime_flow = 0;
  I->loop = NULL;
  I->in_const = 0;
  const FlyVal *v = NULL;
  if (bind_params(I, s, fn, args)) {
    v = fly_eval_block(I, s, fn->kid[2]);
    if (I->returning) {
      v = I->returned;
      I->returning = false;
      I->returned = NULL;
    }
    if (v && fn->kid[1]) {
      const FlyType *t = fly_eval_type(I, s, fn->kid[1]);
      const FlyNode *at = fn->kid[2]->kid[1] ? fn->kid[2]->kid[1] : fn->kid[1];
      if (v->kind == FLY_V_NONE)
        v = fly_err(I, at, "'%s' must give a value of type %s, but it ends without one", fn->str,
                    t ? fly_type_str(&I->A, t) : "?");
      else
        v = t ? fly_convert(I, v, t, at, false) : NULL;
    }
  }
  I->runtime_flow = saved_flow;
  I->loop = saved_loop;
  I->in_const = saved_const;
  memcpy(I->exits, saved_exits, sizeof saved_exits);
  I->exit_next = saved_next;
  I->depth--;
  I->frame = frame.parent;
  return v;
}

const FlyVal *fly_call_value(FlyInterp *I, const FlyVal *callee, const FlyArgs *args) {
  switch (callee->kind) {
  case FLY_V_FN:
    return fly_call_fn(I, callee->fn, args);
  case FLY_V_BUILTIN:
    return fly_call_builtin(I, callee, args);
  case FLY_V_TYPE:
    return fly_construct(I, callee->type_value, args);
  case FLY_V_KERNEL:
    return fly_err(I, args->call->kid[0],
                   "'%s' is a kernel: the host launches it, code cannot call it", callee->fn->str);
  default:
    return fly_err(I, args->call->kid[0], "%s cannot be called", fly_val_describe(&I->A, callee));
  }
}
