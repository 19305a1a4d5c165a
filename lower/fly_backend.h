/* fly_backend.h — the compiler's back end as the driver loads it.
 *
 * Everything that needs MLIR (tracing, the passes, the target pipelines)
 * is in one shared library, libflyc_lower.so, that the driver opens with
 * dlopen only when it has to compile: a cache hit, `flyc check` and
 * everything else in the driver never load MLIR and LLVM (about 30 ms).
 * The library exports the one function below; requests and results are
 * plain data, so the two sides share no state. This header includes no
 * MLIR. */
#ifndef FLY_BACKEND_H
#define FLY_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "fly_check.h"
#include "fly_unit.h"

/* Bumped whenever the structures below change. */
enum { FLY_BACKEND_ABI = 2 };

/* The options arrive as the driver read them, as data: nothing is printed
   and parsed again on the way. */
typedef struct FlyBackendRequest {
  int abi;          /* FLY_BACKEND_ABI */
  const char *path; /* the root file, as diagnostics name it */
  const char *text; /* its text (NULL: read path) */
  size_t len;
  FlyUnitSettings unit;    /* diagnostics and --stdlib (color -1 is taken as 0) */
  FlyCheckOptions check;   /* -D, limits and --kernel; its target, specialisation */
                           /* list, emitter and kernel records are the back end's */
  const char *target;      /* one target: sm_90, gfx942 ... */
  const char *emit;        /* fly, irdl, llvm, ptx, asm, cubin, hsaco or bundle */
  int opt_level;           /* -O0..-O3 */
  bool locations;          /* --locations */
  const char *source_hash; /* for a bundle's header: the sources' SHA-256 */
} FlyBackendRequest;

typedef struct FlyBackendResult {
  int status; /* 0 done, 1 errors (see diagnostics), 2 bad options */
  char *data; /* the output (malloc'd), when status is 0 */
  size_t len;
  char *diagnostics; /* what was reported, as text or JSON lines (malloc'd, may be NULL) */
  size_t diagnostics_len;
} FlyBackendResult;

/* The function libflyc_lower.so exports under this name. Thread-safe: calls
   are serialised, and each reuses the same warm MLIR context. */
#define FLY_BACKEND_SYMBOL "fly_backend_compile"
typedef int (*FlyBackendCompileFn)(const FlyBackendRequest *rq, FlyBackendResult *rs);
int fly_backend_compile(const FlyBackendRequest *rq, FlyBackendResult *rs);

#endif
