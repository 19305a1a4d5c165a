/* fly_definitions.c — one definition per top-level name across a unit.
 *
 * Every loaded file shares one top-level namespace (an import brings in all
 * of a module's names), so fn, kernel and const names must not collide, in
 * one file or across files. A launch block belongs to one kernel, once. */
#include <stdlib.h>
#include <string.h>

#include "fly_unit.h"

typedef struct Definition {
  const FlyNode *node;
  bool is_launch;
  int rank; /* the file's place in import order: what a file imports ranks first */
} Definition;

/* A redefinition to report: the later definition and the one it repeats. */
typedef struct Clash {
  const Definition *again, *first;
} Clash;

static bool defines_name(const FlyNode *item) {
  return item->kind == FLY_FN || item->kind == FLY_KERNEL || item->kind == FLY_CONST ||
         item->kind == FLY_LAUNCH;
}

static int by_name(const void *a, const void *b) {
  const Definition *x = a, *y = b;
  if (x->is_launch != y->is_launch)
    return x->is_launch - y->is_launch;
  int c = strcmp(x->node->str, y->node->str);
  if (c)
    return c;
  /* Equal names: a definition in an imported file is the original, so the
     error lands in the file that imports it; within a file, the earlier. */
  if (x->rank != y->rank)
    return x->rank - y->rank;
  return (x->node->begin > y->node->begin) - (x->node->begin < y->node->begin);
}

/* Reports come out in source order: by file rank, then offset. */
static int by_position(const void *a, const void *b) {
  const Clash *x = a, *y = b;
  if (x->again->rank != y->again->rank)
    return x->again->rank - y->again->rank;
  return (x->again->node->begin > y->again->node->begin) -
         (x->again->node->begin < y->again->node->begin);
}

static const char *what(const FlyNode *n) {
  return n->kind == FLY_FN ? "function" : n->kind == FLY_KERNEL ? "kernel" : "constant";
}

void fly_unit_check_definitions(FlyUnit *u) {
  size_t count = 0;
  for (int f = 0; f < u->sources.count && f < u->cap; f++)
    for (const FlyNode *i = u->trees[f] ? u->trees[f]->kid[0] : NULL; i; i = i->next)
      count += defines_name(i) && i->str;
  if (count < 2)
    return;
  Definition *defs = malloc(count * sizeof *defs);
  Clash *clashes = defs ? malloc(count * sizeof *clashes) : NULL;
  if (!clashes) {
    free(defs);
    fly_error(&u->diag, fly_no_span(), "out of memory");
    return;
  }
  size_t n = 0;
  for (int f = 0; f < u->sources.count && f < u->cap; f++)
    for (const FlyNode *i = u->trees[f] ? u->trees[f]->kid[0] : NULL; i; i = i->next)
      if (defines_name(i) && i->str)
        defs[n++] = (Definition){i, i->kind == FLY_LAUNCH, u->rank ? u->rank[f] : f};
  qsort(defs, n, sizeof *defs, by_name);
  size_t nclash = 0;
  for (size_t i = 1; i < n; i++) {
    const Definition *first = &defs[i - 1], *again = &defs[i];
    while (first > defs && first[-1].is_launch == again->is_launch &&
           strcmp(first[-1].node->str, again->node->str) == 0)
      first--;
    if (first->is_launch == again->is_launch && strcmp(first->node->str, again->node->str) == 0)
      clashes[nclash++] = (Clash){again, first};
  }
  qsort(clashes, nclash, sizeof *clashes, by_position);
  for (size_t i = 0; i < nclash; i++) {
    const Definition *first = clashes[i].first, *again = clashes[i].again;
    if (again->is_launch) {
      fly_error(&u->diag, fly_node_name_span(again->node), "kernel '%s' already has a launch block",
                again->node->str);
      fly_note(&u->diag, fly_node_name_span(first->node), "the first launch block is here");
    } else {
      fly_error(&u->diag, fly_node_name_span(again->node), "redefinition of '%s'",
                again->node->str);
      fly_note(&u->diag, fly_node_name_span(first->node), "previous definition is here (a %s)",
               what(first->node));
    }
  }
  free(clashes);
  free(defs);
}
