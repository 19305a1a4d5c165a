/* flyc_cache.c — `flyc cache stats|clear|dir`: the disk cache of compiled
 * specialisations (frontend/driver/libflyc_cache.c). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "flyc_commands.h"
#include "flyc_options.h"
#include "libflyc.h"

static const char cache_usage[] =
    "usage: flyc cache stats|clear|dir\n"
    "\n"
    "  stats   how many compiled specialisations the cache holds, and their size\n"
    "  clear   remove them all\n"
    "  dir     print where the cache is\n"
    "\n"
    "The cache is FLYC_CACHE_DIR, else $XDG_CACHE_HOME/fly, else ~/.cache/fly.\n"
    "FLYC_CACHE=0 (or --no-cache) stops flyc compile from using it.\n";

static int usage(const char *fmt, const char *arg) {
  fputs("flyc cache: error: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\nrun 'flyc cache --help' for usage\n", stderr);
  return FLYC_USAGE;
}

int flyc_cache_command(int argc, char **argv) {
  if (argc == 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
    fputs(cache_usage, stdout);
    return FLYC_OK;
  }
  if (argc != 1)
    return usage("%s",
                 argc ? "give one action: stats, clear or dir" : "no action: stats, clear or dir");
  const char *action = argv[0];
  char dir[PATH_MAX];
  if (!flycCacheDirectory(dir, sizeof dir)) {
    fputs("flyc cache: error: there is no cache directory: set FLYC_CACHE_DIR or HOME\n", stderr);
    return FLYC_ERRORS;
  }
  FlycCacheStats s;
  if (strcmp(action, "dir") == 0) {
    puts(dir);
  } else if (strcmp(action, "stats") == 0) {
    if (!flycCacheStats(&s)) {
      fprintf(stderr, "flyc cache: error: cannot read '%s': %s\n", dir, strerror(errno));
      return FLYC_ERRORS;
    }
    printf("cache directory: %s\n", dir);
    printf("entries:         %" PRIu64 "\n", s.entries);
    printf("size:            %" PRIu64 " bytes (%.1f MiB)\n", s.bytes,
           (double)s.bytes / (1024.0 * 1024.0));
  } else if (strcmp(action, "clear") == 0) {
    if (!flycCacheClear(&s)) {
      fprintf(stderr, "flyc cache: error: cannot clear '%s': %s\n", dir, strerror(errno));
      return FLYC_ERRORS;
    }
    printf("removed %" PRIu64 " %s (%" PRIu64 " bytes) from %s\n", s.entries,
           s.entries == 1 ? "entry" : "entries", s.bytes, dir);
  } else {
    return usage("unknown action '%s' (the actions are stats, clear and dir)", action);
  }
  return fflush(stdout) == 0 ? FLYC_OK : FLYC_ERRORS;
}
