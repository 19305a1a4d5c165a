/* libflyc.h — the Fly compiler as a C library.
 *
 *   FlycCompileOptions o = flycCompileOptionsCreate();
 *   flycCompileOptionsAdd(o, "--target=sm_90,gfx942");
 *   flycCompileOptionsAdd(o, "-DBLOCK=128");
 *   FlycCompileResult r = flycCompile("vadd.fly", NULL, 0, o);
 *   if (flycCompileResultSucceeded(r)) { size_t n; const void *b = flycCompileResultData(r, &n); }
 *   fputs(flycCompileResultDiagnostics(r), stderr);
 *   flycCompileResultDestroy(r);
 *   flycCompileOptionsDestroy(o);
 *
 * flycCompile reads the sources and looks the compile up in the disk cache
 * (FLYC_CACHE_DIR, FLYC_CACHE=0); only on a miss does it load the back end
 * (libflyc_lower.so, with MLIR and LLVM) and compile. Results and options
 * are handles owned by the caller, released with their Destroy function;
 * nothing else needs freeing. Functions are thread-safe; compiles are
 * serialised inside the back end. */
#ifndef LIBFLYC_H
#define LIBFLYC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FLYC_API __attribute__((visibility("default")))

typedef struct FlycCompileOptions {
  void *ptr;
} FlycCompileOptions;
typedef struct FlycCompileResult {
  void *ptr;
} FlycCompileResult;

/* The compiler's version, "0.1.0". */
FLYC_API const char *flycVersion(void);

FLYC_API FlycCompileOptions flycCompileOptionsCreate(void);
FLYC_API void flycCompileOptionsDestroy(FlycCompileOptions o);
/* Adds one option, written as `flyc compile` takes it on its command line,
   in one string: "--emit=ptx", "--target=gfx942", "-DBLOCK=128",
   "--kernel=vector_add", "-Werror", "--no-cache" ... (see `flyc compile
   --help`; -o and --split-input-file are the command's alone). The options
   are read when compiling: a bad one makes the compile fail with a message
   in the diagnostics. The default emit is "bundle". */
FLYC_API void flycCompileOptionsAdd(FlycCompileOptions o, const char *option);

/* Compiles the file at path; when source is not NULL, its len bytes are
   the file's text instead (path still names it in messages and places its
   relative imports). Never returns a null result. */
FLYC_API FlycCompileResult flycCompile(const char *path, const char *source, size_t len,
                                       FlycCompileOptions o);

FLYC_API bool flycCompileResultSucceeded(FlycCompileResult r);
/* 0 done, 1 errors in the source, 2 bad options (as flyc's exit status). */
FLYC_API int flycCompileResultStatus(FlycCompileResult r);
/* The output (a bundle by default), owned by r; NULL when the compile
   failed. */
FLYC_API const void *flycCompileResultData(FlycCompileResult r, size_t *len);
/* Everything reported, warnings included, as text ("" when nothing); owned
   by r. */
FLYC_API const char *flycCompileResultDiagnostics(FlycCompileResult r);
/* How many of the targets came from the cache. */
FLYC_API int flycCompileResultCacheHits(FlycCompileResult r);
FLYC_API void flycCompileResultDestroy(FlycCompileResult r);

/* ---- the disk cache -------------------------------------------------------- */

/* The cache directory in use (FLYC_CACHE_DIR, else $XDG_CACHE_HOME/fly,
   else ~/.cache/fly), in buf; false when there is none to use. */
FLYC_API bool flycCacheDirectory(char *buf, size_t size);
typedef struct FlycCacheStats {
  uint64_t entries; /* compiled specialisations */
  uint64_t bytes;   /* their size on disk */
} FlycCacheStats;
/* False (with errno) when the directory cannot be read; a missing one is
   an empty cache. */
FLYC_API bool flycCacheStats(FlycCacheStats *stats);
/* Removes every entry; true when all are gone. */
FLYC_API bool flycCacheClear(FlycCacheStats *removed);

#ifdef __cplusplus
}
#endif

#endif
