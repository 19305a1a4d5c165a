/* fuzz_sema.c — libFuzzer entry for the semantic pass and the compile-time
 * interpreter (sema/check).
 *
 * The input is one .fly file, held in memory (imports are not followed, so
 * an imported name is simply unknown). When it parses and its top-level
 * definitions are sound, fly_check_unit runs over it with small limits, so
 * that a runaway recursion or loop ends quickly with its diagnostic: any
 * input must be checked or refused with a message, never crash, hang or
 * leak. The target (sm_90 or gfx942, warp size 32 or 64) is chosen from a
 * hash of the input, so both widths are explored and a reproducer stays
 * deterministic. Diagnostics go in text form to /dev/null with the default
 * error limit, as `flyc check` reports them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fly_check.h"
#include "fly_parse.h"
#include "fly_unit.h"

enum {
  FUZZ_STEP_LIMIT = 20000, /* compile-time steps: a few milliseconds */
  FUZZ_DEPTH_LIMIT = 50,   /* nested helper calls */
};

/* A promise was broken: say which before libFuzzer saves the input. */
static void broken(const char *why) __attribute__((noreturn));
static void broken(const char *why) {
  fprintf(stderr, "fuzz_sema: %s\n", why);
  abort();
}

static FILE *devnull(void) {
  static FILE *null;
  if (!null)
    null = fopen("/dev/null", "w");
  if (!null)
    abort();
  return null;
}

static uint32_t hash(const unsigned char *data, size_t size) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; i++)
    h = (h ^ data[i]) * 16777619u;
  return h;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  FlyUnit u;
  fly_unit_init(&u, devnull());

  /* What fly_unit_load does for a file on disk, without the imports. */
  char why[128];
  int file = fly_sources_add(&u.sources, "fuzz.fly", (const char *)data, size, why, sizeof why);
  if (file < 0)
    broken("fly_sources_add refused an input far below the size limit");
  if (!fly_unit_reserve(&u))
    broken("out of memory reserving the unit's tables");
  u.trees[file] = fly_parse(&u.arena, &u.diag, file);
  u.state[file] = 2; /* done */
  u.rank[file] = u.ranked++;
  u.root = file;

  /* As `flyc check` does: the semantic pass sees only whole trees. */
  if (fly_unit_ok(&u)) {
    if (!u.trees[file] || u.trees[file]->kind != FLY_MODULE)
      broken("a parse without errors gave no module");
    fly_unit_check_definitions(&u);
  }
  if (fly_unit_ok(&u)) {
    FlyCheckOptions o;
    fly_check_options_init(&o);
    if (!(o.target = fly_target_find(hash(data, size) & 1 ? "gfx942" : "sm_90")))
      broken("a known target was not found");
    o.step_limit = FUZZ_STEP_LIMIT;
    o.depth_limit = FUZZ_DEPTH_LIMIT;
    int before = u.diag.errors;
    bool ok = fly_check_unit(&u, &o);
    if (ok != (u.diag.errors == before))
      broken("fly_check_unit's result disagrees with the errors it reported");
  }

  fly_unit_release(&u);
  return 0;
}
