/* fly_symbolic.h — the coordinate functions of the algebra (size, crd2idx,
 * idx2crd) on layouts and coordinates whose leaves may be known only when a
 * kernel runs.
 *
 * A runtime leaf is a `?` of a pattern (fly_parse_layout_pattern) whose
 * handle (FlyTuple.sym) its user set: lower/ stores an MLIR value there.
 * The functions here decide what to compute, in the algebra's own order
 * (CuTe's: a whole mode's index is split column-major, the last sub-mode
 * taking what is left), fold everything known at compile time, and ask the
 * caller's FlySymOps to make the rest. So a static layout costs nothing at
 * run time, and the code generator writes no algebra of its own. */
#ifndef FLY_SYMBOLIC_H
#define FLY_SYMBOLIC_H

#include "fly_tuple.h"

/* A number (v NULL: the constant c) or the handle of a runtime value. */
typedef struct FlySym {
  const void *v;
  int64_t c;
} FlySym;

/* The caller's arithmetic on handles of non-negative 32-bit integers. */
typedef struct FlySymOps {
  void *ctx;
  const void *(*constant)(void *ctx, int64_t c);
  const void *(*add)(void *ctx, const void *x, const void *y);
  const void *(*mul)(void *ctx, const void *x, const void *y);
  const void *(*div)(void *ctx, const void *x, const void *y); /* unsigned */
  const void *(*rem)(void *ctx, const void *x, const void *y); /* unsigned */
} FlySymOps;

static inline FlySym fly_sym_const(int64_t c) { return (FlySym){NULL, c}; }
static inline FlySym fly_sym_handle(const void *v) { return (FlySym){v, 0}; }
static inline bool fly_sym_is_const(FlySym x) { return x.v == NULL; }
/* A leaf of a pattern: its integer, or its handle (a `?` must have one). */
FlySym fly_sym_leaf(const FlyTuple *leaf);
/* The handle of x (a constant made now for a number). */
const void *fly_sym_value(const FlySymOps *o, FlySym x);

/* x + y, x * y, x / y, x % y, folded where they are known. */
FlySym fly_sym_add(const FlySymOps *o, FlySym x, FlySym y);
FlySym fly_sym_mul(const FlySymOps *o, FlySym x, FlySym y);
FlySym fly_sym_div(const FlySymOps *o, FlySym x, FlySym y);
FlySym fly_sym_rem(const FlySymOps *o, FlySym x, FlySym y);

/* The number of elements of a shape. */
FlySym fly_sym_size(const FlySymOps *o, const FlyTuple *shape);
/* Where a 1-D index into a whole mode lands: shape and stride are one
   mode's (congruent), the stride's leaves integers or `?`. */
FlySym fly_sym_index(const FlySymOps *o, FlySym idx, const FlyTuple *shape, const FlyTuple *stride);
/* Where coordinate crd lands: a tuple congruent to a prefix of shape whose
   leaves are integers, `?` (with handles), `_` (contributing nothing) or a
   1-D index for a whole mode; CuTe's crd2idx. False when crd has more
   modes than shape, or when a stride is a basis element (use
   fly_sym_crd2coord). */
bool fly_sym_crd2idx(const FlySymOps *o, const FlyTuple *crd, const FlyTuple *shape,
                     const FlyTuple *stride, FlySym *out);
/* The same for a layout whose strides may be basis elements (fly_tuple.h),
   whose value is a coordinate: profile is the layout's coprofile
   (fly_layout_coprofile, e.g. (0,0) for (?,?):(1@0,1@1)), and out[k]
   receives the k-th leaf of the coordinate, one per leaf of profile (at most
   cap are stored). Beside basis elements integer strides are 0; with an
   integer profile (0) this is fly_sym_crd2idx, its one value in out[0].
   Returns the number of leaves of profile, or -1 when crd has more modes
   than shape or a stride has no place in profile (a `?` stride beside basis
   elements included). So the identity tensor's element at a runtime
   coordinate c is the coordinate c itself, c's leaves in out. */
int fly_sym_crd2coord(const FlySymOps *o, const FlyTuple *crd, const FlyTuple *shape,
                      const FlyTuple *stride, const FlyTuple *profile, FlySym *out, int cap);
/* The column-major coordinate of index idx in shape, as its leaves in order
   (out[cap]); returns the number of leaves. */
int fly_sym_idx2crd(const FlySymOps *o, FlySym idx, const FlyTuple *shape, FlySym *out, int cap);

#endif
