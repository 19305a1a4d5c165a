/* fly_algebra.h — the session every layout-algebra computation runs in.
 *
 * A FlyAlgebra owns an arena (every tuple, layout and string an operation
 * returns lives there until fly_algebra_release) and the first error that
 * happened. Operations never assert on bad input: they record a message,
 * return NULL (or false) and keep returning NULL while any input is NULL, so
 * derived operations chain without checking each step. Pure C, no MLIR. */
#ifndef FLY_ALGEBRA_H
#define FLY_ALGEBRA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fly_arena.h"

/* Limits that keep hostile input (fuzzers, typos) from exhausting the stack
 * or memory. Each is reported as "too many X (limit is N)". */
enum {
  FLY_MAX_DEPTH = 32,   /* nesting depth of a tuple */
  FLY_MAX_MODES = 1024, /* elements of one tuple, leaves of a flattened one */
  FLY_MESSAGE_SIZE = 256,
};
#define FLY_ARENA_LIMIT ((size_t)256 << 20) /* bytes one session may allocate */

typedef struct FlyAlgebra {
  FlyArena arena; /* limit FLY_ARENA_LIMIT; arena.fail_at is the OOM test hook */
  bool failed;
  long error_pos; /* byte offset in the text being parsed, -1 if none */
  char message[FLY_MESSAGE_SIZE];
} FlyAlgebra;

void fly_algebra_init(FlyAlgebra *A);
/* Frees everything the session allocated; A may be initialised again. */
void fly_algebra_release(FlyAlgebra *A);

bool fly_algebra_failed(const FlyAlgebra *A);
/* The first error's message ("" when none). */
const char *fly_algebra_message(const FlyAlgebra *A);
/* Byte offset of the offending character for text errors, else -1. */
long fly_algebra_error_pos(const FlyAlgebra *A);
/* Forget the error so the session can go on (results stay valid). */
void fly_algebra_clear_error(FlyAlgebra *A);

/* Records the first error (later ones are dropped: the first is the cause).
 * Always returns NULL so callers can `return fly_fail(...)`. */
void *fly_fail(FlyAlgebra *A, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void *fly_fail_at(FlyAlgebra *A, long pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Zeroed memory from the arena; NULL with "out of memory" on failure. */
void *fly_alloc(FlyAlgebra *A, size_t size);
char *fly_strdup(FlyAlgebra *A, const char *s);

/* Checked 64-bit arithmetic: false (and an error naming the operands) on
 * overflow, so sizes and indices are never silently wrapped. */
bool fly_add(FlyAlgebra *A, int64_t x, int64_t y, int64_t *out);
bool fly_mul(FlyAlgebra *A, int64_t x, int64_t y, int64_t *out);

#endif
