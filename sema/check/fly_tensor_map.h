/* fly_tensor_map.h — a TMA tensor map as the semantic pass knows it: what
 * tensor_map(A, box) describes (fly_builtins_tma.c), which the tracer turns
 * into a kernel argument and the bundle into a FlyBundleTensorMap that the
 * runtime encodes at launch. Plain C, no MLIR. */
#ifndef FLY_TENSOR_MAP_H
#define FLY_TENSOR_MAP_H

#include "fly_bundle.h"
#include "fly_layout.h"
#include "fly_swizzle.h"
#include "fly_value.h"

/* A kernel's maps take 128 bytes of its 4 KiB of parameters each. */
enum { FLY_TMAP_MAX_MAPS = 16 };

struct FlyTensorMap {
  int index; /* among the kernel's maps, in the order they are made */
  int param; /* the tensor parameter it describes, among the kernel's */
  int rank;  /* the tensor's modes: 1 to FLY_TMAP_MAX_RANK */
  /* Hardware dimension i, innermost first, is the tensor's mode dims[i]:
     dims[0] is its mode of stride 1, then the others from the last. */
  int dims[FLY_TMAP_MAX_RANK];
  int64_t box[FLY_TMAP_MAX_RANK]; /* the box, in the tensor's mode order */
  const FlyType *elem;
  const FlyLayout *tile; /* the shared tile one box fills (without its swizzle) */
  bool swizzled;
  FlySwizzle swizzle;
  int swizzle_bytes; /* the hardware's: 0, 32, 64 or 128 */
  int64_t bytes;     /* of one box */
  const char *name;  /* the parameter's, for messages */
};

/* Where a shared tile of `bytes` starts: on a target with TMA (`tma`), a
   multiple of 128 bytes when it can hold a TMA box (TMA reads and writes
   shared memory at 128-byte boundaries; so does a stage cut from such a
   tile when the box's bytes are a multiple of 128), else of 16. Sema counts
   tiles by it and the lowering places them by it. */
static inline int64_t fly_smem_tile_align(int64_t bytes, bool tma) {
  return tma && bytes >= 128 ? 128 : 16;
}

#endif
