/* fly_interp.c — interpreter sessions, messages with call chains, limits and
 * name lookup. */
#include "fly_interp.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nested evaluations allowed at once. The syntax tree is at most 1000 deep
   and calls nest at most depth_limit deep; this bound keeps the product of
   the two off the end of the C stack. */
enum { MAX_CHAIN_NOTES = 4 };

void fly_interp_init(FlyInterp *I, FlyUnit *u, const FlyCheckOptions *o) {
  memset(I, 0, sizeof *I);
  I->unit = u;
  I->diag = &u->diag;
  I->options = *o;
  I->target = o->target;
  I->nfiles = u->trees ? u->sources.count : 0;
  char marker;
  I->stack_base = (uintptr_t)&marker;
  fly_algebra_init(&I->A);
}

void fly_interp_release(FlyInterp *I) {
  free(I->globals);
  fly_algebra_release(&I->A);
}

/* The run of frames from f that repeat f's call (a recursion), and the
   frame after it. */
static int run_length(const FlyFrame *f, const FlyFrame **after) {
  int run = 1;
  const FlyFrame *g = f->parent;
  for (; g && g->call == f->call; g = g->parent)
    run++;
  *after = g;
  return run;
}

static void call_note(FlyInterp *I, const FlyFrame *f, int run) {
  if (run > 1)
    fly_note(I->diag, fly_node_span(f->call), "in the call of '%s' here (%d times, nested)",
             f->fn->str, run);
  else
    fly_note(I->diag, fly_node_span(f->call), "in the call of '%s' here", f->fn->str);
}

/* The calls that led to an error, innermost first. A recursion repeats one
   call many times: a run of the same call is one note with its count. A
   long chain shows its innermost calls, then one note for the rest that
   points at the outermost call, where the chain started. */
static void chain_notes(FlyInterp *I) {
  const FlyFrame *f = I->frame, *next;
  for (int shown = 0; f && shown < MAX_CHAIN_NOTES; shown++, f = next)
    call_note(I, f, run_length(f, &next));
  if (!f)
    return;
  int run = run_length(f, &next);
  if (!next) { /* one note left: show it as it is */
    call_note(I, f, run);
    return;
  }
  int rest = 0;
  const FlyFrame *outermost = f;
  for (; f; f = f->parent) {
    rest++;
    outermost = f;
  }
  fly_note(I->diag, fly_node_span(outermost->call),
           "... and %d more calls, from the call of '%s' here", rest, outermost->fn->str);
}

const FlyVal *fly_err(FlyInterp *I, const FlyNode *at, const char *fmt, ...) {
  if (I->aborted)
    return NULL;
  va_list ap;
  va_start(ap, fmt);
  fly_diag_vreport(I->diag, FLY_ERROR, fly_node_span(at), fmt, ap);
  va_end(ap);
  chain_notes(I);
  if (fly_diag_stopped(I->diag))
    I->aborted = true;
  return NULL;
}

void fly_interp_note(FlyInterp *I, const FlyNode *at, const char *fmt, ...) {
  if (I->aborted)
    return;
  va_list ap;
  va_start(ap, fmt);
  fly_diag_vreport(I->diag, FLY_NOTE, fly_node_span(at), fmt, ap);
  va_end(ap);
}

void fly_interp_note_name(FlyInterp *I, const FlyNode *decl, const char *fmt, ...) {
  if (I->aborted)
    return;
  va_list ap;
  va_start(ap, fmt);
  fly_diag_vreport(I->diag, FLY_NOTE, fly_node_name_span(decl), fmt, ap);
  va_end(ap);
}

const FlyVal *fly_err_algebra(FlyInterp *I, const FlyNode *at) {
  const char *msg = fly_algebra_message(&I->A);
  /* The message is copied before the error is cleared: it lives in A. */
  char copy[FLY_MESSAGE_SIZE];
  snprintf(copy, sizeof copy, "%s", msg[0] ? msg : "the layout algebra refused this input");
  fly_algebra_clear_error(&I->A);
  return fly_err(I, at, "%s", copy);
}

const FlyVal *fly_err_not_static(FlyInterp *I, const FlyNode *at, const FlyVal *v,
                                 const char *what) {
  const FlyVal *r = fly_val_first_runtime(v);
  if (!r || r->kind != FLY_V_RUNTIME || !r->origin.node) {
    const char *desc =
        r && r->kind == FLY_V_TENSOR ? "a tensor, whose data is on the GPU" : "a runtime value";
    return fly_err(I, at, "%s must be known at compile time, but this is %s", what, desc);
  }
  fly_err(I, at,
          "%s must be known at compile time, but this value is known only when the "
          "kernel runs",
          what);
  fly_interp_note(I, r->origin.node, "it depends on %s", r->origin.why);
  return NULL;
}

/* ---- tracing ------------------------------------------------------------------ */

/* Whether op computes with its operands' values (rather than moving them
   or converting them). */
static bool computes(FlyOpcode op) {
  switch (op) {
  case FLY_OPCODE_ADD:
  case FLY_OPCODE_SUB:
  case FLY_OPCODE_MUL:
  case FLY_OPCODE_DIV:
  case FLY_OPCODE_MOD:
  case FLY_OPCODE_EQ:
  case FLY_OPCODE_NE:
  case FLY_OPCODE_LT:
  case FLY_OPCODE_LE:
  case FLY_OPCODE_GT:
  case FLY_OPCODE_GE:
  case FLY_OPCODE_NEG:
  case FLY_OPCODE_EXP:
  case FLY_OPCODE_EXP2:
  case FLY_OPCODE_LOG:
  case FLY_OPCODE_LOG2:
  case FLY_OPCODE_SQRT:
  case FLY_OPCODE_RSQRT:
  case FLY_OPCODE_ABS:
  case FLY_OPCODE_FMA:
  case FLY_OPCODE_FLOOR:
  case FLY_OPCODE_CEIL:
  case FLY_OPCODE_TRUNC:
  case FLY_OPCODE_ROUND:
  case FLY_OPCODE_ROUNDEVEN:
  case FLY_OPCODE_MIN:
  case FLY_OPCODE_MAX:
  case FLY_OPCODE_CLAMP:
  case FLY_OPCODE_SUM:
  case FLY_OPCODE_ATOMIC_ADD:
    return true;
  default:
    return false;
  }
}

/* An 8-bit float among the runtime operands of op, or NULL. */
static const FlyType *f8_operand(int n, const FlyVal *const *args) {
  for (int i = 0; i < n; i++) {
    const FlyVal *a = args[i];
    const FlyType *t = a->kind == FLY_V_RUNTIME  ? a->type
                       : a->kind == FLY_V_TENSOR ? a->tensor.elem
                                                 : NULL;
    t = t && t->kind == FLY_TY_VEC ? t->elem : t;
    if (fly_type_is_f8(t))
      return t;
  }
  return NULL;
}

const FlyVal *fly_emit_value(FlyInterp *I, const FlyVal *v, FlyOpcode op, int n,
                             const FlyVal *const *args, const FlyNode *at) {
  /* The 8-bit floats are for storing and exchanging values: no GPU (and
     no LLVM type) computes with them. */
  const FlyType *f8 = v && computes(op) ? f8_operand(n, args) : NULL;
  if (f8) {
    const char *t = fly_type_str(&I->A, f8);
    return fly_err(I, at,
                   "%s values are stored and converted, not computed with: convert them to "
                   "f32 first (x as f32), and back (y as %s)",
                   t, t);
  }
  if (!I->emit || !v)
    return v;
  /* An identity tensor is the interpreter's alone: its views are algebra,
     and what moves its origin was emitted as integer arithmetic. */
  if (v->kind == FLY_V_TENSOR && v->tensor.space == FLY_SPACE_COORD)
    return v;
  if (!I->emit->value(I->emit->ctx, (FlyVal *)v, op, n, args, at)) {
    I->aborted = true;
    return NULL;
  }
  return v;
}

bool fly_emit_effect(FlyInterp *I, FlyOpcode op, int n, const FlyVal *const *args,
                     const FlyNode *at) {
  if (!I->emit)
    return true;
  if (!I->emit->effect(I->emit->ctx, op, n, args, at)) {
    I->aborted = true;
    return false;
  }
  return true;
}

bool fly_interp_step(FlyInterp *I, const FlyNode *at) {
  if (I->aborted)
    return false;
  if (++I->steps > I->options.step_limit) {
    fly_err(I, at,
            "compile-time evaluation did not finish within %ld steps (the step limit; "
            "raise it with --step-limit=N)",
            I->options.step_limit);
    I->aborted = true;
    return false;
  }
  return true;
}

/* ---- tuples of leaves ------------------------------------------------------------- */

const FlyVal *fly_map_leaves(FlyInterp *I, const FlyVal *t, FlyLeafFn leaf, const void *ctx) {
  if (t->kind != FLY_V_TUPLE)
    return leaf(I, t, ctx);
  const FlyVal **e = fly_alloc(&I->A, sizeof *e * (size_t)(t->n ? t->n : 1));
  if (!e)
    return NULL;
  for (int i = 0; i < t->n; i++)
    if (!(e[i] = fly_map_leaves(I, t->elems[i], leaf, ctx)))
      return NULL;
  return fly_val_tuple(&I->A, t->n, e);
}

const FlyVal *fly_leaf_dynamic(FlyInterp *I, const FlyVal *leaf, const void *ctx) {
  (void)I, (void)leaf, (void)ctx;
  return fly_val_dynamic();
}

const FlyVal *fly_leaf_runtime(FlyInterp *I, const FlyVal *leaf, const void *ctx) {
  (void)leaf;
  return fly_val_runtime(&I->A, fly_type_scalar(FLY_TYPE_I32), *(const FlyOrigin *)ctx);
}

const FlyVal *fly_leaf_runtime_if_dynamic(FlyInterp *I, const FlyVal *leaf, const void *ctx) {
  return leaf->kind == FLY_V_DYNAMIC ? fly_leaf_runtime(I, leaf, ctx) : leaf;
}

/* ---- scopes ------------------------------------------------------------------------ */

FlyScope *fly_scope_new(FlyInterp *I, FlyScope *parent) {
  FlyScope *s = fly_alloc(&I->A, sizeof *s);
  if (s)
    s->parent = parent;
  return s;
}

bool fly_scope_bind(FlyInterp *I, FlyScope *s, const char *name, uint32_t len, const FlyVal *v,
                    const FlyNode *decl) {
  FlyBinding *b = fly_alloc(&I->A, sizeof *b);
  if (!b)
    return false;
  b->name = name;
  b->len = len;
  b->value = v;
  b->decl = decl;
  b->next = s->head;
  s->head = b;
  return true;
}

/* ---- globals ------------------------------------------------------------------------ */

static uint32_t hash_name(const char *s, uint32_t len) {
  uint32_t h = 2166136261u;
  for (uint32_t i = 0; i < len; i++)
    h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

FlyGlobal *fly_global_find(FlyInterp *I, const char *name, uint32_t len) {
  if (!I->nglobals_cap)
    return NULL;
  uint32_t mask = (uint32_t)I->nglobals_cap - 1;
  for (uint32_t i = hash_name(name, len) & mask;; i = (i + 1) & mask) {
    FlyGlobal *g = &I->globals[i];
    if (!g->name)
      return NULL;
    if (g->len == len && memcmp(g->name, name, len) == 0)
      return g;
  }
}

static bool globals_grow(FlyInterp *I) {
  int cap = I->nglobals_cap ? I->nglobals_cap * 2 : 64;
  FlyGlobal *old = I->globals;
  int old_cap = I->nglobals_cap;
  I->globals = calloc((size_t)cap, sizeof *I->globals);
  if (!I->globals) {
    I->globals = old;
    return false;
  }
  I->nglobals_cap = cap;
  for (int i = 0; i < old_cap; i++) {
    if (!old[i].name)
      continue;
    uint32_t mask = (uint32_t)cap - 1;
    uint32_t j = hash_name(old[i].name, old[i].len) & mask;
    while (I->globals[j].name)
      j = (j + 1) & mask;
    I->globals[j] = old[i];
  }
  free(old);
  return true;
}

/* The first definition wins; the front end has already reported the others. */
bool fly_global_add(FlyInterp *I, const char *name, uint32_t len, const FlyNode *decl,
                    const FlyNode *block) {
  if (fly_global_find(I, name, len))
    return true;
  if ((I->nglobals + 1) * 2 > I->nglobals_cap && !globals_grow(I))
    return false;
  uint32_t mask = (uint32_t)I->nglobals_cap - 1;
  uint32_t i = hash_name(name, len) & mask;
  while (I->globals[i].name)
    i = (i + 1) & mask;
  FlyGlobal *g = &I->globals[i];
  g->name = name;
  g->len = len;
  g->decl = decl;
  g->block = block;
  g->state = FLY_GLOBAL_PENDING;
  I->nglobals++;
  return true;
}

static void set_block_state(FlyInterp *I, const FlyNode *block, FlyGlobalState state) {
  for (int i = 0; i < I->nglobals_cap; i++)
    if (I->globals[i].name && I->globals[i].block == block)
      I->globals[i].state = state;
}

/* A top-level const block runs once, when the first of its names is needed;
   its names then all receive their values. While it runs, they are
   EVALUATING: a use of one goes to name_of_running_block. */
static void run_global_const_block(FlyInterp *I, const FlyNode *block) {
  FlyScope *s = fly_scope_new(I, NULL);
  if (!s) {
    set_block_state(I, block, FLY_GLOBAL_FAILED);
    return;
  }
  set_block_state(I, block, FLY_GLOBAL_EVALUATING);
  FlyBlockRun run = {block, s, NULL, I->block_run};
  FlyFrame *saved_frame = I->frame;
  FlyLoop *saved_loop = I->loop;
  int saved_flow = I->runtime_flow;
  I->block_run = &run;
  I->frame = NULL;
  I->loop = NULL;
  I->runtime_flow = 0;
  I->in_const++;
  I->compile_time++;
  const FlyNode *body = block->kid[0];
  bool ok = true;
  for (const FlyNode *st = body ? body->kid[0] : NULL; st && ok; st = st->next) {
    run.stmt = st;
    ok = fly_exec_stmt(I, s, st);
  }
  I->compile_time--;
  I->in_const--;
  I->block_run = run.parent;
  I->frame = saved_frame;
  I->loop = saved_loop;
  I->runtime_flow = saved_flow;
  for (int i = 0; i < I->nglobals_cap; i++) {
    FlyGlobal *g = &I->globals[i];
    if (!g->name || g->block != block)
      continue;
    g->state = FLY_GLOBAL_FAILED;
    for (FlyBinding *b = s->head; b && ok; b = b->next)
      if (b->len == g->len && memcmp(b->name, g->name, g->len) == 0) {
        g->value = b->value;
        g->state = FLY_GLOBAL_DONE;
        break;
      }
  }
}

static bool node_inside(const FlyNode *n, const FlyNode *outer) {
  return n->file == outer->file && n->begin >= outer->begin && n->end <= outer->end;
}

/* A name of a const block that is still running: the value the block has
   bound so far. Not bound yet, the name is used before its definition,
   unless its definition is the statement running (then it needs itself). */
static const FlyVal *name_of_running_block(FlyInterp *I, FlyGlobal *g, const FlyNode *at) {
  FlyBlockRun *run = I->block_run;
  while (run && run->block != g->block)
    run = run->parent;
  if (run)
    for (FlyBinding *b = run->scope->head; b; b = b->next)
      if (b->len == g->len && memcmp(b->name, g->name, g->len) == 0)
        return b->value;
  if (!run || (run->stmt && node_inside(g->decl, run->stmt)))
    fly_err(I, at, "'%s' depends on its own value", g->name);
  else
    fly_err(I, at, "'%s' is used before its definition", g->name);
  fly_interp_note_name(I, g->decl, "'%s' is defined here", g->name);
  return NULL;
}

const FlyVal *fly_global_value(FlyInterp *I, FlyGlobal *g, const FlyNode *at) {
  switch (g->state) {
  case FLY_GLOBAL_DONE:
    return g->value;
  case FLY_GLOBAL_FAILED:
    return NULL;
  case FLY_GLOBAL_EVALUATING:
    if (g->block)
      return name_of_running_block(I, g, at);
    fly_err(I, at, "'%s' depends on its own value", g->name);
    fly_interp_note_name(I, g->decl, "'%s' is defined here", g->name);
    return NULL;
  case FLY_GLOBAL_PENDING:
    break;
  }
  const FlyNode *d = g->decl;
  if (d->kind == FLY_FN || d->kind == FLY_KERNEL) {
    FlyVal *v = fly_val_new(&I->A, d->kind == FLY_FN ? FLY_V_FN : FLY_V_KERNEL);
    if (!v)
      return NULL;
    v->fn = d;
    g->value = v;
    g->state = FLY_GLOBAL_DONE;
    return v;
  }
  if (g->block) {
    run_global_const_block(I, g->block);
    return g->state == FLY_GLOBAL_DONE ? g->value : NULL;
  }
  g->state = FLY_GLOBAL_EVALUATING;
  /* A top-level const is evaluated outside any call or kernel. */
  FlyFrame *saved_frame = I->frame;
  FlyLoop *saved_loop = I->loop;
  int saved_flow = I->runtime_flow;
  I->frame = NULL;
  I->loop = NULL;
  I->runtime_flow = 0;
  I->compile_time++;
  FlyScope *s = fly_scope_new(I, NULL);
  bool ok = s && fly_exec_stmt(I, s, d);
  I->compile_time--;
  I->frame = saved_frame;
  I->loop = saved_loop;
  I->runtime_flow = saved_flow;
  g->value = ok && s->head ? s->head->value : NULL;
  g->state = g->value ? FLY_GLOBAL_DONE : FLY_GLOBAL_FAILED;
  return g->value;
}

const FlyVal *fly_lookup(FlyInterp *I, FlyScope *s, const FlyNode *at, const char *name,
                         uint32_t len, bool *found) {
  *found = true;
  for (; s; s = s->parent)
    for (FlyBinding *b = s->head; b; b = b->next)
      if (b->len == len && memcmp(b->name, name, len) == 0)
        return b->value;
  FlyGlobal *g = fly_global_find(I, name, len);
  if (g)
    return fly_global_value(I, g, at);
  const FlyVal *v = fly_builtin_lookup(I, name, len);
  if (v)
    return v;
  *found = false;
  return NULL;
}
