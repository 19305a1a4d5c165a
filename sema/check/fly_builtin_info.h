/* fly_builtin_info.h — the builtin names of the language as data, for the
 * tools that list or document them: `flyc vocabulary` (and through it the
 * editors' word lists) and the reference table of docs/language.md. The
 * rows are those of fly_ops.def; this header is all of it a tool needs, and
 * includes nothing of the interpreter. */
#ifndef FLY_BUILTIN_INFO_H
#define FLY_BUILTIN_INFO_H

#include <stdbool.h>

/* The groups of the reference table, in its order. */
#define FLY_GROUPS(X)                                                                              \
  X(ALGEBRA, "layout algebra")                                                                     \
  X(ITERATION, "iteration and arithmetic")                                                         \
  X(MATH, "math")                                                                                  \
  X(VECTOR, "vectors")                                                                             \
  X(GPU, "the GPU")                                                                                \
  X(WARP, "warp operations")                                                                       \
  X(ATOMIC, "atomics and memory order")                                                            \
  X(DATA, "data movement and MMA")                                                                 \
  X(TYPES, "types")

typedef enum FlyGroup {
#define X(id, title) FLY_GROUP_##id,
  FLY_GROUPS(X)
#undef X
      FLY_GROUP_COUNT
} FlyGroup;

typedef enum FlyWordKind {
  FLY_WORD_FUNCTION, /* size, exp, copy ... */
  FLY_WORD_VALUE,    /* thread_idx, warp_size, target ... */
  FLY_WORD_TYPE,     /* int, float, layout ... */
} FlyWordKind;

typedef struct FlyBuiltinInfo {
  const char *name;
  FlyWordKind kind;
  FlyGroup group;
  const char *usage; /* functions: "exp(x)"; others: the name */
  const char *doc;
  bool runtime; /* functions: it can make runtime work (it has an opcode) */
} FlyBuiltinInfo;

/* Every builtin name, functions first, then values, then types, each in
   the order of fly_ops.def: i from 0 while the result is not NULL. */
const FlyBuiltinInfo *fly_builtin_info_at(int i);
const char *fly_group_title(FlyGroup g);

#endif
