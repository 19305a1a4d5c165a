/* flyrt_layout.c — a tensor parameter's layout text, "(?,(4,?)):(?,(1,?))",
 * read into its leaves. The bundle's reader has checked that the text is a
 * string, not that it is a layout: anything else is refused here. */
#include <ctype.h>
#include <stdlib.h>

#include "flyrt_internal.h"

typedef struct Leaves {
  int64_t *out;
  int n;
} Leaves;

/* leaf   ::= '?' | integer
   tuple  ::= '(' [ item { ',' item } [','] ] ')'
   item   ::= leaf | tuple */
static bool item(const char **p, Leaves *l, int depth);

static bool leaf(const char **p, Leaves *l) {
  if (l->n == FLYRT_MAX_RANK)
    return false;
  if (**p == '?') {
    ++*p;
    l->out[l->n++] = FLYRT_DYNAMIC;
    return true;
  }
  if (!isdigit((unsigned char)**p) && **p != '-')
    return false;
  char *end;
  long long v = strtoll(*p, &end, 10);
  if (end == *p)
    return false;
  *p = end;
  l->out[l->n++] = v;
  return true;
}

static bool tuple(const char **p, Leaves *l, int depth) {
  ++*p; /* '(' */
  while (**p != ')') {
    if (!item(p, l, depth + 1))
      return false;
    if (**p == ',')
      ++*p;
    else if (**p != ')')
      return false;
  }
  ++*p;
  return true;
}

static bool item(const char **p, Leaves *l, int depth) {
  while (**p == ' ')
    ++*p;
  bool ok = **p == '(' ? depth < 16 && tuple(p, l, depth) : leaf(p, l);
  while (**p == ' ')
    ++*p;
  return ok;
}

bool flyrt_parse_layout(const char *text, FlyrtParamInfo *pi) {
  const char *p = text;
  Leaves shape = {pi->shape, 0}, stride = {pi->stride, 0};
  if (!item(&p, &shape, 0) || *p++ != ':' || !item(&p, &stride, 0) || *p)
    return false;
  if (shape.n != stride.n || shape.n == 0)
    return false;
  pi->rank = shape.n;
  return true;
}
