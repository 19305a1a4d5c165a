/* fly_atom.h — copy and MMA atoms: one table (fly_atoms.def) that the
 * semantic pass checks kernels against, the tracer names in the IR and the
 * lowering dispatches on, by family.
 *
 * A copy atom moves a number of bits per thread in one access; an MMA atom
 * is one matrix instruction, with the shape it multiplies and the register
 * layout (TV layout) of each operand. Whether a target can use an atom is
 * the target table's answer (fly_target.h): its MMA families and features.
 * Plain C: no MLIR. */
#ifndef FLY_ATOM_H
#define FLY_ATOM_H

#include <stdbool.h>
#include <stddef.h>

#include "fly_target.h"
#include "fly_value.h"

/* How a copy atom is lowered. */
#define FLY_COPY_FAMILIES(X)                                                                       \
  X(UNIVERSAL, "universal", "plain loads and stores, vectorised up to the atom's width")           \
  X(CP_ASYNC, "cp.async",                                                                          \
    "asynchronous copies from global to shared memory, 4, 8 or 16 bytes each; masked "             \
    "elements are zero-filled")                                                                    \
  X(LDMATRIX, "ldmatrix",                                                                          \
    "a warp's 8x8 matrices of 16-bit elements from shared memory into MMA fragments; each lane "   \
    "gives the address of one 16-byte row")                                                        \
  X(STMATRIX, "stmatrix",                                                                          \
    "a warp's 8x8 matrices of 16-bit elements from MMA fragments into shared memory; each lane "   \
    "gives the address of one 16-byte row")                                                        \
  X(BUFFER, "buffer",                                                                              \
    "AMD's buffer loads and stores: global memory through a resource made from the kernel's "      \
    "tensor argument, whose range the hardware checks (a load outside it reads 0, a store is "     \
    "dropped), so masked elements need no branch")

typedef enum FlyCopyFamily {
#define X(id, name, doc) FLY_COPY_##id,
  FLY_COPY_FAMILIES(X)
#undef X
      FLY_COPY_FAMILY_COUNT
} FlyCopyFamily;

typedef enum FlyAtomId {
#define FLY_COPY_ATOM(id, ...) FLY_ATOM_##id,
#define FLY_MMA_ATOM(id, ...) FLY_ATOM_##id,
#include "fly_atoms.def"
#undef FLY_COPY_ATOM
#undef FLY_MMA_ATOM
  FLY_ATOM_COUNT
} FlyAtomId;

typedef enum FlyAtomKind {
  FLY_ATOM_COPY,
  FLY_ATOM_MMA,
} FlyAtomKind;

typedef struct FlyAtom {
  FlyAtomId id;
  const char *name; /* as written: "universal", "nv.mma_sync_16x8x16" */
  FlyAtomKind kind;
  /* Copy atoms. */
  FlyCopyFamily copy;
  int feature;     /* a FlyFeature the target needs (MMA atoms: besides the
                      family), or -1 */
  unsigned widths; /* bit b: a copy of 2^b bits is allowed */
  /* Warp-wide copies (ldmatrix, stmatrix): (lane, value) -> the element of
     the atom's matrices the lane gives or takes, on the source and on the
     destination side (layout text); NULL for a copy each thread does alone. */
  const char *src_tv, *dst_tv;
  /* MMA atoms. */
  FlyMmaFamily mma;
  int m, n, k;
  int threads;
  unsigned inputs; /* bit c: operands of FlyTypeCode c */
  bool mixes;      /* A and B may be of different inputs (pairs ANY) */
  FlyTypeCode acc;
  const char *tv[3]; /* A, B, C: layout text of the algebra (fly_layout_text.h) */
} FlyAtom;

/* The atom of that name ("nv.mma_sync_16x8x16"), or NULL. */
const FlyAtom *fly_atom_find(const char *name, size_t len);
/* The atom ns.name ("nv", "mma_sync_16x8x16"), or NULL. */
const FlyAtom *fly_atom_find_in(const char *ns, const char *name, size_t len);
/* Every atom, in the table's order: i from 0 while the result is not NULL. */
const FlyAtom *fly_atom_at(int i);

/* The vendor whose GPUs have it (copy atoms of no family of one vendor:
   both, and this is -1). */
int fly_atom_vendor(const FlyAtom *a);
/* Whether target t can use atom a. */
bool fly_atom_available(const FlyAtom *a, const FlyTarget *t);
/* The targets that can use it, "sm_80, sm_90, sm_90a", for messages. */
const char *fly_atom_targets(const FlyAtom *a);
/* Whether an MMA atom multiplies operands of type code c (as A, as B, or
   both: whether they may differ is `mixes`). */
static inline bool fly_atom_takes(const FlyAtom *a, FlyTypeCode c) { return (a->inputs >> c) & 1u; }

/* Whether a wgmma atom takes A from registers (its A layout gives each
   thread values of its own: the "RS" atoms) rather than from shared memory
   through a descriptor (every thread names the whole slice: its A layout's
   thread mode is the warpgroup's 128 threads at stride 0). */
static inline bool fly_wgmma_a_in_registers(const FlyAtom *a) {
  return a->kind == FLY_ATOM_MMA && a->mma == FLY_MMA_NV_WGMMA && a->tv[0][0] == '(' &&
         a->tv[0][1] == '(';
}

/* Whether a copy atom moves a warp's 8x8 matrices (ldmatrix, stmatrix). */
static inline bool fly_atom_is_matrix(const FlyAtom *a) {
  return a->kind == FLY_ATOM_COPY && (a->copy == FLY_COPY_LDMATRIX || a->copy == FLY_COPY_STMATRIX);
}

const char *fly_copy_family_name(FlyCopyFamily f);
const char *fly_copy_family_doc(FlyCopyFamily f);

#endif
