/* fly_layout_internal.h — helpers shared by the algebra's source files. */
#ifndef FLY_LAYOUT_INTERNAL_H
#define FLY_LAYOUT_INTERNAL_H

#include "fly_layout.h"

/* A layout's leaves in order: the flat (shape, stride) lists most
 * algorithms work on. Arrays live in the arena, cap >= n. */
typedef struct FlyFlat {
  int n, cap;
  int64_t *shape, *stride;
} FlyFlat;

bool fly_flat_init(FlyAlgebra *A, FlyFlat *f, int cap);
bool fly_flat_of(FlyAlgebra *A, const FlyLayout *L, FlyFlat *out);
/* Appends a mode; "too many modes" past FLY_MAX_MODES or cap. */
bool fly_flat_push(FlyAlgebra *A, FlyFlat *f, int64_t shape, int64_t stride);
/* n == 0 gives 1:0, n == 1 a leaf layout, else a flat sequence. */
FlyLayout *fly_flat_layout(FlyAlgebra *A, const FlyFlat *f);

FlyLayout *fly_layout_leaf(FlyAlgebra *A, int64_t shape, int64_t stride);
/* The layout seen as a tuple of modes (a leaf is its own single mode). */
int fly_layout_modes(const FlyLayout *L);
/* Layout from congruent parts without re-validating (internal results). */
FlyLayout *fly_layout_raw(FlyAlgebra *A, FlyTuple *shape, FlyTuple *stride);

/* What a tiler does to one mode: divide it, multiply it, compose it. */
typedef FlyLayout *(*FlyTileOp)(FlyAlgebra *A, const FlyLayout *L, const FlyLayout *tile);
/* Applies op where the tiler holds a layout, leaves modes under `_` alone and
 * recurses through tuples mode by mode. Modes of L past the tiler's rank are
 * kept (keep_rest) or dropped; `name` prefixes the rank error. */
FlyLayout *fly_layout_by_tiler(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *T, FlyTileOp op,
                               bool keep_rest, const char *name);

/* zip2_by: ((A,a),(B,b),c) guided by (X,X) -> ((A,B),(a,b,c)). A `_` in the
 * guide contributes the trivial tile 1:0 and the whole mode to the rest. */
FlyLayout *fly_layout_zip2_by(FlyAlgebra *A, const FlyLayout *L, const FlyTiler *guide);
/* Unpack the modes of mode `which` (0 or 1) of a rank-2 layout into the top. */
FlyLayout *fly_layout_unpack(FlyAlgebra *A, const FlyLayout *L, bool first, bool second);

static inline int64_t fly_ceil_div(int64_t a, int64_t b) {
  return a / b + (a % b != 0 && ((a < 0) == (b < 0)));
}

#endif
