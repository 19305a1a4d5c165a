/* fly_arena.h — memory that lives as long as one phase of the compiler.
 *
 * Every phase (a layout-algebra session, a compilation unit's syntax trees)
 * allocates from its own arena and frees it all at once, so an error in the
 * middle of a phase leaks nothing. An arena has a byte limit, so hostile input
 * can exhaust the limit but never the machine, and a test hook that fails the
 * N-th allocation, so out-of-memory paths can be tested one by one. */
#ifndef FLY_ARENA_H
#define FLY_ARENA_H

#include <stdbool.h>
#include <stddef.h>

typedef struct FlyArenaBlock FlyArenaBlock;

typedef enum FlyArenaFailure {
  FLY_ARENA_OK,
  FLY_ARENA_OUT_OF_MEMORY, /* malloc failed, or the test hook fired */
  FLY_ARENA_OVER_LIMIT,    /* the request would pass the arena's limit */
} FlyArenaFailure;

typedef struct FlyArena {
  FlyArenaBlock *blocks;   /* newest first */
  size_t bytes;            /* taken from malloc so far */
  size_t limit;            /* most bytes the arena may take */
  long allocations;        /* successful allocations so far */
  long fail_at;            /* test hook: the fail_at-th allocation fails (0: never) */
  FlyArenaFailure failure; /* why the last failed allocation failed */
} FlyArena;

void fly_arena_init(FlyArena *arena, size_t limit);
/* Frees every block; the arena is empty again, with the same limit. */
void fly_arena_release(FlyArena *arena);

/* Zeroed, max_align_t-aligned memory, or NULL with arena->failure set. */
void *fly_arena_alloc(FlyArena *arena, size_t size);

/* Grows an array of *cap elements of elem_size to at least need elements by
 * doubling, copying the old contents. The old array stays in the arena (it is
 * freed with it). Returns the new array, or NULL with arena->failure set. */
void *fly_arena_grow(FlyArena *arena, void *old, size_t elem_size, size_t *cap, size_t need);

#endif
