/* fly_unit.c — a compilation unit: sources, trees, and parsing them. */
#include "fly_unit.h"

#include <stdlib.h>
#include <string.h>

#include "fly_parse.h"

#ifndef FLY_STDLIB_DIR
#define FLY_STDLIB_DIR "stdlib"
#endif

void fly_unit_init(FlyUnit *u, FILE *diag_out) {
  memset(u, 0, sizeof *u);
  fly_sources_init(&u->sources);
  fly_diag_init(&u->diag, &u->sources, diag_out);
  fly_arena_init(&u->arena, FLY_UNIT_ARENA_LIMIT);
  u->stdlib_dir = fly_default_stdlib_dir();
  u->root = -1;
}

void fly_unit_apply(FlyUnit *u, const FlyUnitSettings *s) {
  u->diag.format = s->format;
  u->diag.color =
      s->format == FLY_DIAG_TEXT && (s->color < 0 ? fly_diag_color_default(stderr) : s->color == 1);
  u->diag.error_limit = s->error_limit;
  u->diag.warnings_as_errors = s->werror;
  if (s->stdlib_dir)
    u->stdlib_dir = s->stdlib_dir;
}

void fly_unit_release(FlyUnit *u) {
  fly_diag_finish(&u->diag);
  fly_arena_release(&u->arena);
  fly_sources_release(&u->sources);
  free(u->trees);
  free(u->state);
  free(u->rank);
  u->trees = NULL;
  u->state = NULL;
  u->rank = NULL;
}

const char *fly_default_stdlib_dir(void) {
  const char *env = getenv("FLY_STDLIB");
  return env && env[0] ? env : FLY_STDLIB_DIR;
}

bool fly_unit_reserve(FlyUnit *u) {
  int count = u->sources.count;
  if (count <= u->cap)
    return true;
  int cap = u->cap ? u->cap * 2 : 16;
  while (cap < count)
    cap *= 2;
  FlyNode **trees = realloc(u->trees, (size_t)cap * sizeof *trees);
  if (!trees)
    return false;
  u->trees = trees;
  unsigned char *state = realloc(u->state, (size_t)cap);
  if (!state)
    return false;
  u->state = state;
  int *rank = realloc(u->rank, (size_t)cap * sizeof *rank);
  if (!rank)
    return false;
  u->rank = rank;
  for (int i = u->cap; i < cap; i++)
    rank[i] = i;
  memset(u->trees + u->cap, 0, (size_t)(cap - u->cap) * sizeof *trees);
  memset(u->state + u->cap, 0, (size_t)(cap - u->cap));
  u->cap = cap;
  return true;
}

int fly_unit_parse_file(FlyUnit *u, const char *path) {
  char why[256];
  int file = fly_sources_load(&u->sources, path, why, sizeof why);
  if (file < 0) {
    fly_error(&u->diag, fly_no_span(), "cannot read '%s': %s", path, why);
    return -1;
  }
  if (!fly_unit_reserve(u)) {
    fly_error(&u->diag, fly_no_span(), "out of memory");
    return -1;
  }
  u->trees[file] = fly_parse(&u->arena, &u->diag, file);
  return file;
}
