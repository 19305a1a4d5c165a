/* fly_layout_internal.h — helpers shared by the algebra's source files. */
#ifndef FLY_LAYOUT_INTERNAL_H
#define FLY_LAYOUT_INTERNAL_H

#include "fly_layout.h"

/* A layout's leaves in order: the flat (shape, stride) lists most
 * algorithms work on. Arrays live in the arena, cap >= n. A stride that is
 * a basis element has its scale in stride[i] and the element (whose own
 * scale does not count) in basis[i]; basis[i] is NULL for an integer. */
typedef struct FlyFlat {
  int n, cap;
  int64_t *shape, *stride;
  const FlyTuple **basis;
} FlyFlat;

bool fly_flat_init(FlyAlgebra *A, FlyFlat *f, int cap);
bool fly_flat_of(FlyAlgebra *A, const FlyLayout *L, FlyFlat *out);
/* Appends a mode; "too many modes" past FLY_MAX_MODES or cap. */
bool fly_flat_push(FlyAlgebra *A, FlyFlat *f, int64_t shape, int64_t stride);
/* Appends a mode whose stride is stride@(the path of basis), or the integer
 * stride when basis is NULL. */
bool fly_flat_push_basis(FlyAlgebra *A, FlyFlat *f, int64_t shape, int64_t stride,
                         const FlyTuple *basis);
/* Whether two modes' strides point the same way: both integers, or basis
 * elements of one path. */
bool fly_flat_same_direction(const FlyFlat *f, int i, const FlyFlat *g, int j);
/* n == 0 gives 1:0, n == 1 a leaf layout, else a flat sequence. */
FlyLayout *fly_flat_layout(FlyAlgebra *A, const FlyFlat *f);

/* ---- basis strides (fly_layout_basis.c) ---- */

/* The coprofile of a stride (fly_layout_coprofile): 0 for integers. An
 * error when its basis elements do not add up, or stand beside a nonzero
 * integer. */
FlyTuple *fly_stride_coprofile(FlyAlgebra *A, const FlyTuple *stride);
/* The leaf of profile (in order) where basis element lands, -1 if none. */
int fly_coprofile_slot(const FlyTuple *profile, const FlyTuple *basis);
/* profile with its leaves replaced by v[0], v[1], ... */
FlyTuple *fly_coprofile_fill(FlyAlgebra *A, const FlyTuple *profile, const int64_t *v);
/* True for a layout of integer strides; else an error saying that op needs
 * one (false without one for a NULL L). */
bool fly_layout_needs_integers(FlyAlgebra *A, const char *op, const FlyLayout *L);

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
