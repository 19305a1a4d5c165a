/* libflyc_internal.h — the parts of libflyc the driver's files share: the
 * disk cache, the back end's loader and the default target. */
#ifndef LIBFLYC_INTERNAL_H
#define LIBFLYC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "fly_backend.h"
#include "fly_check.h"
#include "flyc_options.h"
#include "libflyc.h"

/* ---- compiling ---- */

/* flycCompile with its options already read, as the flyc commands have
   them: the path, the source (NULL: read the path) and o, which may be
   completed (default targets, emit). */
FlycCompileResult flyc_compile_parsed(const char *path, const char *source, size_t len,
                                      FlycOptions *o);

/* ---- the cache (libflyc_cache.c) ---- */

/* False when FLYC_CACHE=0 (or off, no, false). */
bool fly_cache_enabled(void);
/* The entry of key (64 hex digits): its output and diagnostics, malloc'd.
   False on a miss; a damaged entry is a miss, and is removed. Only a
   regular file is read: anything else at the entry's path (a FIFO, a
   symbolic link) is a miss, never followed or waited on. */
bool fly_cache_get(const char *key, char **data, size_t *len, char **diag, size_t *diag_len);
/* Removes the entry of key: the caller found what it holds unusable. */
void fly_cache_drop(const char *key);
/* Stores an entry atomically (a temporary file renamed into place), so a
   reader never sees half of one and concurrent writers of the same key
   leave one whole entry. Failing to store is not an error. */
void fly_cache_put(const char *key, const void *data, size_t len, const char *diag,
                   size_t diag_len);

/* ---- the back end (libflyc_backend.c) ---- */

/* fly_backend_compile from libflyc_lower.so, loaded on first use; NULL with
   the reason in why. FLYC_BACKEND names the library to use instead. */
FlyBackendCompileFn fly_backend_load(char *why, size_t why_size);
/* What tells this build of the back end from another (its library's size
   and modification time), found without loading it; "" when it cannot be
   found. Part of the cache key: a rebuilt compiler misses the entries of
   the old one. */
const char *fly_backend_identity(void);

/* ---- targets (libflyc_target.c) ---- */

/* The default targets, as a --target value: FLYC_TARGET, else the GPU of
   this machine (CUDA driver or AMD's KFD), else FLY_DEFAULT_TARGET. `from`
   says which ("FLYC_TARGET", "the GPU found", "the default"). */
const char *fly_default_targets(const char **from);

#endif
