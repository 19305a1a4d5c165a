/* fly_algebra.c — the session: an arena that lives as long as the
 * computation, the first error, and checked integer arithmetic. */
#include "fly_algebra.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Blocks are at least this big; larger requests get a block of their own. */
enum { BLOCK_MIN = 16 * 1024 };

struct FlyArenaBlock {
  FlyArenaBlock *next;
  size_t size, used;
  max_align_t data[];
};

void fly_algebra_init(FlyAlgebra *A) {
  memset(A, 0, sizeof *A);
  A->error_pos = -1;
}

void fly_algebra_release(FlyAlgebra *A) {
  FlyArenaBlock *b = A->blocks;
  while (b) {
    FlyArenaBlock *next = b->next;
    free(b);
    b = next;
  }
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

static FlyArenaBlock *new_block(FlyAlgebra *A, size_t need) {
  size_t size = need > BLOCK_MIN ? need : BLOCK_MIN;
  if (A->bytes + size > FLY_ARENA_LIMIT)
    return fly_fail(A, "too much memory (limit is %zu MiB)", FLY_ARENA_LIMIT >> 20);
  FlyArenaBlock *b = malloc(sizeof *b + size);
  if (!b)
    return fly_fail(A, "out of memory");
  b->size = size;
  b->used = 0;
  b->next = A->blocks;
  A->blocks = b;
  A->bytes += size;
  return b;
}

void *fly_alloc(FlyAlgebra *A, size_t size) {
  if (A->fail_at > 0 && A->allocations + 1 >= A->fail_at)
    return fly_fail(A, "out of memory");
  if (size > FLY_ARENA_LIMIT)
    return fly_fail(A, "too much memory (limit is %zu MiB)", FLY_ARENA_LIMIT >> 20);
  size_t align = sizeof(max_align_t);
  size = (size + align - 1) / align * align;
  if (size == 0)
    size = align;
  FlyArenaBlock *b = A->blocks;
  if (!b || b->size - b->used < size) {
    b = new_block(A, size);
    if (!b)
      return NULL;
  }
  void *p = (char *)b->data + b->used;
  b->used += size;
  A->allocations++;
  memset(p, 0, size);
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
