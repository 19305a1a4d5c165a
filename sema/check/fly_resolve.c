/* fly_resolve.c — name resolution over every body in the unit.
 *
 * The interpreter meets a name only on the paths it evaluates; this pass
 * visits all of them (both branches of every if const, helpers nobody
 * calls) so that a misspelt name is reported wherever it is. Scopes follow
 * the evaluation rules: a let is visible after its statement, a const
 * block's names after the block, a loop's carried names inside its body and
 * after the loop. Parameters and the names of one pattern must be distinct. */
#include <string.h>

#include "fly_interp.h"

typedef struct Name {
  const char *s;
  uint32_t len;
} Name;

typedef struct Resolver {
  FlyInterp *I;
  Name *names; /* a stack: scopes are marks into it */
  int n, cap;
  bool failed;
} Resolver;

static void push(Resolver *R, const char *s, uint32_t len) {
  if (R->n == R->cap) {
    int cap = R->cap ? R->cap * 2 : 64;
    Name *grown = fly_alloc(&R->I->A, sizeof *grown * (size_t)cap);
    if (!grown) {
      R->failed = true;
      return;
    }
    if (R->n)
      memcpy(grown, R->names, sizeof *grown * (size_t)R->n);
    R->names = grown;
    R->cap = cap;
  }
  R->names[R->n].s = s;
  R->names[R->n].len = len;
  R->n++;
}

static bool known(Resolver *R, const char *s, uint32_t len) {
  for (int i = R->n - 1; i >= 0; i--)
    if (R->names[i].len == len && memcmp(R->names[i].s, s, len) == 0)
      return true;
  return fly_global_find(R->I, s, len) || fly_is_builtin_name(s, len);
}

static void expr(Resolver *R, const FlyNode *e);
static void block(Resolver *R, const FlyNode *b);
static void stmt(Resolver *R, const FlyNode *st);

static void list(Resolver *R, const FlyNode *k) {
  for (; k; k = k->next)
    expr(R, k);
}

static void expr(Resolver *R, const FlyNode *e) {
  if (!e || R->failed)
    return;
  switch (e->kind) {
  case FLY_NAME:
    if (!known(R, e->str, e->len))
      fly_error(R->I->diag, fly_node_span(e), "unknown name '%s'", e->str);
    return;
  case FLY_MEMBER:
    expr(R, e->kid[0]);
    return;
  case FLY_NAMED_ARG:
    expr(R, e->kid[0]);
    return;
  case FLY_TYPE_APPLY:
  case FLY_TUPLE:
    list(R, e->kid[0]);
    return;
  case FLY_CALL:
  case FLY_INDEX:
    expr(R, e->kid[0]);
    list(R, e->kid[1]);
    return;
  case FLY_IF:
    expr(R, e->kid[0]);
    block(R, e->kid[1]);
    if (e->kid[2] && e->kid[2]->kind == FLY_IF)
      expr(R, e->kid[2]);
    else
      block(R, e->kid[2]);
    return;
  case FLY_BLOCK:
    block(R, e);
    return;
  default:
    for (int i = 0; i < 4; i++)
      expr(R, e->kid[i]);
  }
}

/* Binds a pattern's names; a name twice in one pattern is an error. */
static void bind(Resolver *R, const FlyNode *p, int mark) {
  if (!p)
    return;
  if (p->kind == FLY_PAT_NAME) {
    for (int i = mark; i < R->n; i++)
      if (R->names[i].len == p->len && memcmp(R->names[i].s, p->str, p->len) == 0) {
        fly_error(R->I->diag, fly_node_span(p), "'%s' is bound twice in this pattern", p->str);
        return;
      }
    push(R, p->str, p->len);
  } else if (p->kind == FLY_PAT_TUPLE) {
    for (const FlyNode *k = p->kid[0]; k; k = k->next)
      bind(R, k, mark);
  }
}

static void stmts(Resolver *R, const FlyNode *st) {
  for (; st && !R->failed; st = st->next)
    stmt(R, st);
}

static void stmt(Resolver *R, const FlyNode *st) {
  switch (st->kind) {
  case FLY_LET: {
    expr(R, st->kid[1]);
    expr(R, st->kid[2]);
    bind(R, st->kid[0], R->n);
    return;
  }
  case FLY_CONST:
    expr(R, st->kid[1]);
    expr(R, st->kid[2]);
    push(R, st->str, st->len);
    return;
  case FLY_CONST_BLOCK:
    /* Its names stay visible after it: no scope of its own. */
    if (st->kid[0]) {
      stmts(R, st->kid[0]->kid[0]);
      expr(R, st->kid[0]->kid[1]);
    }
    return;
  case FLY_FOR:
  case FLY_WHILE: {
    /* A for loop's range is outside the loop; a while loop's condition
       sees the carried names, as its body does. */
    if (st->kind == FLY_FOR)
      expr(R, st->kid[1]);
    for (const FlyNode *c = st->kid[2]; c; c = c->next)
      expr(R, c->kid[0]);
    int mark = R->n;
    bind(R, st->kid[0], R->n);
    for (const FlyNode *c = st->kid[2]; c; c = c->next)
      push(R, c->str, c->len);
    if (st->kind == FLY_WHILE)
      expr(R, st->kid[1]);
    block(R, st->kid[3]);
    R->n = mark;
    for (const FlyNode *c = st->kid[2]; c; c = c->next)
      push(R, c->str, c->len);
    return;
  }
  default:
    for (int i = 0; i < 4; i++)
      expr(R, st->kid[i]);
  }
}

static void block(Resolver *R, const FlyNode *b) {
  if (!b)
    return;
  if (b->kind != FLY_BLOCK) {
    expr(R, b);
    return;
  }
  int mark = R->n;
  stmts(R, b->kid[0]);
  expr(R, b->kid[1]);
  R->n = mark;
}

/* A kernel's const parameters are bound before its runtime ones (see
   bind_kernel), so a runtime parameter's type sees every const parameter,
   written before it or after. A helper's parameters are bound in order. */
static void params(Resolver *R, const FlyNode *first, bool kernel) {
  int mark = R->n;
  for (const FlyNode *p = first; p; p = p->next) {
    bool late = kernel && !(p->flags & FLY_IS_CONST);
    if (!late)
      expr(R, p->kid[0]);
    expr(R, p->kid[1]);
    for (int i = mark; i < R->n; i++)
      if (R->names[i].len == p->len && memcmp(R->names[i].s, p->str, p->len) == 0)
        fly_error(R->I->diag, fly_node_name_span(p), "duplicate parameter '%s'", p->str);
    push(R, p->str, p->len);
  }
  if (!kernel)
    return;
  /* The runtime parameters' types again, now that every name is known:
     a type that names a const parameter written after it resolves. */
  for (const FlyNode *p = first; p; p = p->next)
    if (!(p->flags & FLY_IS_CONST))
      expr(R, p->kid[0]);
}

void fly_resolve_unit(FlyInterp *I);
void fly_resolve_unit(FlyInterp *I) {
  Resolver R = {.I = I};
  FlyUnit *u = I->unit;
  for (int f = 0; f < I->nfiles; f++) {
    const FlyNode *m = u->trees ? u->trees[f] : NULL;
    for (const FlyNode *it = m ? m->kid[0] : NULL; it && !R.failed; it = it->next) {
      R.n = 0;
      switch (it->kind) {
      case FLY_FN:
      case FLY_KERNEL:
        params(&R, it->kid[0], it->kind == FLY_KERNEL);
        expr(&R, it->kid[1]);
        block(&R, it->kid[2]);
        break;
      case FLY_LAUNCH: {
        FlyGlobal *g = fly_global_find(I, it->str, it->len);
        if (g && g->decl->kind == FLY_KERNEL)
          for (const FlyNode *p = g->decl->kid[0]; p; p = p->next)
            push(&R, p->str, p->len);
        for (const FlyNode *k = it->kid[0]; k; k = k->next) {
          if (k->kind == FLY_LAUNCH_FIELD) {
            expr(&R, k->kid[0]);
          } else if (k->kind == FLY_REQUIRE) {
            expr(&R, k->kid[0]);
            expr(&R, k->kid[1]);
          } else
            stmt(&R, k);
        }
        break;
      }
      case FLY_CONST:
      case FLY_CONST_BLOCK:
      case FLY_STATIC_ASSERT:
        stmt(&R, it);
        break;
      default:
        break;
      }
    }
  }
}
