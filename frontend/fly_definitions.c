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
} Definition;

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
  /* Equal names: the first in file order, then in the file, is the original. */
  if (x->node->file != y->node->file)
    return x->node->file - y->node->file;
  return (x->node->begin > y->node->begin) - (x->node->begin < y->node->begin);
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
  if (!defs) {
    fly_error(&u->diag, fly_no_span(), "out of memory");
    return;
  }
  size_t n = 0;
  for (int f = 0; f < u->sources.count && f < u->cap; f++)
    for (const FlyNode *i = u->trees[f] ? u->trees[f]->kid[0] : NULL; i; i = i->next)
      if (defines_name(i) && i->str)
        defs[n++] = (Definition){i, i->kind == FLY_LAUNCH};
  qsort(defs, n, sizeof *defs, by_name);
  for (size_t i = 1; i < n; i++) {
    const Definition *first = &defs[i - 1], *again = &defs[i];
    while (first > defs && first[-1].is_launch == again->is_launch &&
           strcmp(first[-1].node->str, again->node->str) == 0)
      first--;
    if (first->is_launch != again->is_launch || strcmp(first->node->str, again->node->str))
      continue;
    if (again->is_launch)
      fly_error(&u->diag, fly_node_name_span(again->node), "kernel '%s' already has a launch block",
                again->node->str);
    else
      fly_error(&u->diag, fly_node_name_span(again->node), "redefinition of '%s'",
                again->node->str);
    if (again->is_launch)
      fly_note(&u->diag, fly_node_name_span(first->node), "the first launch block is here");
    else
      fly_note(&u->diag, fly_node_name_span(first->node), "previous definition is here (a %s)",
               what(first->node));
  }
  free(defs);
}
