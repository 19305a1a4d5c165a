/* compile_bench.c — compile time inside libflyc, as a program that embeds
 * the compiler sees it (a JIT, a Python binding).
 *
 *   fly-compile-bench FILE [RUNS] [OPTION ...]
 *
 * Prints, for FILE compiled with the options (--target=..., -D...):
 *   first    the first compile in the process: loading the back end and
 *            making the MLIR context, then compiling (cache off);
 *   cold     each later compile with the cache off, the context warm
 *            (median and minimum of RUNS);
 *   hit      a compile found in the disk cache (median and minimum of RUNS),
 *            in a cache directory of its own.
 * Not a test: ctest does not run it (see tests/bench/README.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libflyc.h"

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* One compile; exits on failure (a benchmark of a failing compile means
   nothing). */
static double compile_once(const char *file, int argc, char **argv, bool cache) {
  FlycCompileOptions o = flycCompileOptionsCreate();
  for (int i = 0; i < argc; i++)
    flycCompileOptionsAdd(o, argv[i]);
  if (!cache)
    flycCompileOptionsAdd(o, "--no-cache");
  double t0 = now_ms();
  FlycCompileResult r = flycCompile(file, NULL, 0, o);
  double t = now_ms() - t0;
  if (!flycCompileResultSucceeded(r)) {
    fprintf(stderr, "fly-compile-bench: compiling %s failed:\n%s", file,
            flycCompileResultDiagnostics(r));
    exit(1);
  }
  if (cache && flycCompileResultCacheHits(r) == 0 && getenv("FLY_BENCH_EXPECT_HIT")) {
    fprintf(stderr, "fly-compile-bench: expected a cache hit\n");
    exit(1);
  }
  flycCompileResultDestroy(r);
  flycCompileOptionsDestroy(o);
  return t;
}

static void report(const char *what, double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmp);
  printf("%-6s median %8.3f ms   min %8.3f ms   (%d runs)\n", what, t[n / 2], t[0], n);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs("usage: fly-compile-bench FILE [RUNS] [OPTION ...]\n", stderr);
    return 2;
  }
  const char *file = argv[1];
  int runs = argc > 2 ? atoi(argv[2]) : 20;
  if (runs < 1 || runs > 10000)
    runs = 20;
  int nopt = argc > 3 ? argc - 3 : 0;
  char **opts = argv + 3;
  double *t = calloc((size_t)runs, sizeof *t);
  char dir[] = "/tmp/fly-compile-bench-XXXXXX";
  if (!t || !mkdtemp(dir)) {
    perror("fly-compile-bench");
    return 1;
  }
  setenv("FLYC_CACHE_DIR", dir, 1);
  unsetenv("FLYC_CACHE");
  printf("%s", file);
  for (int i = 0; i < nopt; i++)
    printf(" %s", opts[i]);
  printf(" (libflyc %s)\n", flycVersion());
  double first = compile_once(file, nopt, opts, false);
  printf("first  %8.3f ms   (loads the back end, makes the MLIR context)\n", first);
  for (int i = 0; i < runs; i++)
    t[i] = compile_once(file, nopt, opts, false);
  report("cold", t, runs);
  compile_once(file, nopt, opts, true); /* stores the entry */
  setenv("FLY_BENCH_EXPECT_HIT", "1", 1);
  for (int i = 0; i < runs; i++)
    t[i] = compile_once(file, nopt, opts, true);
  report("hit", t, runs);
  FlycCacheStats s;
  flycCacheClear(&s);
  rmdir(dir);
  free(t);
  return 0;
}
