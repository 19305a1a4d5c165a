/* fly_algebra.c — the session: an arena that lives as long as the
 * computation, the first error, and checked integer arithmetic. */
#include "fly_algebra.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fly_algebra_init(FlyAlgebra *A) {
  memset(A, 0, sizeof *A);
  fly_arena_init(&A->arena, FLY_ARENA_LIMIT);
  A->error_pos = -1;
}

void fly_algebra_release(FlyAlgebra *A) {
  fly_arena_release(&A->arena);
  fly_algebra_init(A);
}

bool fly_algebra_failed(const FlyAlgebra *A) { return A->failed; }
const char *fly_algebra_message(const FlyAlgebra *A) { return A->message; }
long fly_algebra_error_pos(const FlyAlgebra *A) { return A->error_pos; }

void fly_algebra_clear_error(FlyAlgebra *A) {
  A->failed = false;
  A->error_pos = -1;
  A->message[0] = '\0';
}

static void record(FlyAlgebra *A, long pos, const char *fmt, va_list ap) {
  if (A->failed) /* keep the first: later errors are usually its echoes */
    return;
  A->failed = true;
  A->error_pos = pos;
  vsnprintf(A->message, sizeof A->message, fmt, ap);
}

void *fly_fail(FlyAlgebra *A, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  record(A, -1, fmt, ap);
  va_end(ap);
  return NULL;
}

void *fly_fail_at(FlyAlgebra *A, long pos, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  record(A, pos, fmt, ap);
  va_end(ap);
  return NULL;
}

void *fly_alloc(FlyAlgebra *A, size_t size) {
  void *p = fly_arena_alloc(&A->arena, size);
  if (!p && A->arena.failure == FLY_ARENA_OVER_LIMIT)
    return fly_fail(A, "too much memory (limit is %zu MiB)", FLY_ARENA_LIMIT >> 20);
  if (!p)
    return fly_fail(A, "out of memory");
  return p;
}

char *fly_strdup(FlyAlgebra *A, const char *s) {
  size_t n = strlen(s) + 1;
  char *p = fly_alloc(A, n);
  if (p)
    memcpy(p, s, n);
  return p;
}

bool fly_add(FlyAlgebra *A, int64_t x, int64_t y, int64_t *out) {
  if (__builtin_add_overflow(x, y, out)) {
    fly_fail(A, "integer overflow: %lld + %lld does not fit in 64 bits", (long long)x,
             (long long)y);
    return false;
  }
  return true;
}

bool fly_mul(FlyAlgebra *A, int64_t x, int64_t y, int64_t *out) {
  if (__builtin_mul_overflow(x, y, out)) {
    fly_fail(A, "integer overflow: %lld * %lld does not fit in 64 bits", (long long)x,
             (long long)y);
    return false;
  }
  return true;
}
