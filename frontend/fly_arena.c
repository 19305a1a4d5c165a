/* fly_arena.c — blocks from malloc, handed out front to back. */
#include "fly_arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Block sizes grow with the arena, from BLOCK_MIN to BLOCK_MAX, so a small
   session stays small and a big one (a large file's syntax tree) takes few
   mallocs; a request larger than that gets a block of its own. */
enum { BLOCK_MIN = 16 * 1024, BLOCK_MAX = 1024 * 1024 };

struct FlyArenaBlock {
  FlyArenaBlock *next;
  size_t size, used;
  max_align_t data[];
};

void fly_arena_init(FlyArena *arena, size_t limit) {
  memset(arena, 0, sizeof *arena);
  arena->limit = limit;
}

void fly_arena_release(FlyArena *arena) {
  FlyArenaBlock *b = arena->blocks;
  while (b) {
    FlyArenaBlock *next = b->next;
    free(b);
    b = next;
  }
  size_t limit = arena->limit;
  long fail_at = arena->fail_at;
  fly_arena_init(arena, limit);
  arena->fail_at = fail_at;
}

static void *fail(FlyArena *arena, FlyArenaFailure why) {
  arena->failure = why;
  return NULL;
}

static FlyArenaBlock *new_block(FlyArena *arena, size_t need) {
  size_t grow = arena->bytes < BLOCK_MIN   ? BLOCK_MIN
                : arena->bytes > BLOCK_MAX ? BLOCK_MAX
                                           : arena->bytes;
  size_t size = need > grow ? need : grow;
  size_t left = arena->limit - arena->bytes;
  if (size > left && need <= left) /* near the limit: use what is left */
    size = left;
  if (size > left)
    return fail(arena, FLY_ARENA_OVER_LIMIT);
  FlyArenaBlock *b = malloc(sizeof *b + size);
  if (!b)
    return fail(arena, FLY_ARENA_OUT_OF_MEMORY);
  b->size = size;
  b->used = 0;
  b->next = arena->blocks;
  arena->blocks = b;
  arena->bytes += size;
  return b;
}

void *fly_arena_alloc(FlyArena *arena, size_t size) {
  if (arena->fail_at > 0 && arena->allocations + 1 >= arena->fail_at)
    return fail(arena, FLY_ARENA_OUT_OF_MEMORY);
  if (size > arena->limit)
    return fail(arena, FLY_ARENA_OVER_LIMIT);
  size_t align = sizeof(max_align_t);
  size = (size + align - 1) / align * align;
  if (size == 0)
    size = align;
  FlyArenaBlock *b = arena->blocks;
  if (!b || b->size - b->used < size) {
    b = new_block(arena, size);
    if (!b)
      return NULL;
  }
  void *p = (char *)b->data + b->used;
  b->used += size;
  arena->allocations++;
  memset(p, 0, size);
  return p;
}

void *fly_arena_grow(FlyArena *arena, void *old, size_t elem_size, size_t *cap, size_t need) {
  if (need <= *cap)
    return old;
  size_t n = *cap ? *cap : 8;
  while (n < need) {
    if (n > SIZE_MAX / 2)
      return fail(arena, FLY_ARENA_OVER_LIMIT);
    n *= 2;
  }
  if (n > SIZE_MAX / elem_size)
    return fail(arena, FLY_ARENA_OVER_LIMIT);
  void *p = fly_arena_alloc(arena, n * elem_size);
  if (!p)
    return NULL;
  if (old)
    memcpy(p, old, *cap * elem_size);
  *cap = n;
  return p;
}
