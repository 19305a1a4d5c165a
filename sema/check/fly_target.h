/* fly_target.h — the GPUs Fly compiles for: one table (fly_targets.def)
 * that every layer reads.
 *
 * A target is a row: its name, vendor, family, warp size, shared memory,
 * what its driver reports, the ISA string the back end is given, its
 * matrix-instruction families and its fast-path features. The semantic
 * pass reads `target` and `warp_size` from it, the driver its names and
 * the choice of a target for the GPU found, the lowering its pipeline
 * strings, and `flyc vocabulary --table=targets` prints it for the docs.
 * Plain C: no MLIR. */
#ifndef FLY_TARGET_H
#define FLY_TARGET_H

#include <stdbool.h>

typedef enum FlyVendor {
  FLY_VENDOR_NVIDIA,
  FLY_VENDOR_AMD,
} FlyVendor;

/* The families of matrix instructions (an MMA atom belongs to one). */
#define FLY_MMA_FAMILIES(X)                                                                        \
  X(NV_MMA_SYNC, NVIDIA, "mma.sync", "warp-level mma.sync (Ampere and later)")                     \
  X(NV_WGMMA, NVIDIA, "wgmma", "warpgroup wgmma.mma_async (sm_90a)")                               \
  X(AMD_MFMA, AMD, "mfma", "matrix fused multiply-add (CDNA)")                                     \
  X(AMD_WMMA, AMD, "wmma", "wave matrix multiply-accumulate (RDNA)")

typedef enum FlyMmaFamily {
#define X(id, vendor, name, doc) FLY_MMA_##id,
  FLY_MMA_FAMILIES(X)
#undef X
      FLY_MMA_FAMILY_COUNT
} FlyMmaFamily;

/* The fast paths a kernel may ask for (`target.has("tma")`). */
#define FLY_FEATURES(X)                                                                            \
  X(CP_ASYNC, "cp_async", "asynchronous copies from global to shared memory (cp.async)")           \
  X(LDMATRIX, "ldmatrix", "matrix loads from shared memory into MMA fragments (ldmatrix)")         \
  X(STMATRIX, "stmatrix", "matrix stores from MMA fragments into shared memory (stmatrix)")        \
  X(TMA, "tma", "the tensor memory accelerator (cp.async.bulk.tensor) and mbarrier")               \
  X(CLUSTER, "cluster", "thread-block clusters and distributed shared memory")                     \
  X(SETMAXNREG, "setmaxnreg", "moving registers between warpgroups (setmaxnreg)")                  \
  X(FP8, "fp8", "hardware conversions to and from f8e4m3 and f8e5m2 (OCP formats)")                \
  X(FP8_FNUZ, "fp8_fnuz", "hardware conversions of the FNUZ 8-bit formats only")                   \
  X(BUFFER_LOAD, "buffer_load", "buffer loads and stores with a range check in hardware")          \
  X(DPP, "dpp", "data-parallel primitives: lane permutations within a row of 16")                  \
  X(PERMLANE_SWAP, "permlane_swap",                                                                \
    "exchanging lanes 16 or 32 apart in one instruction (v_permlane16/32_swap)")                   \
  X(REDUX, "redux", "warp-wide integer reductions in one instruction (redux.sync)")                \
  X(NAMED_BARRIER, "named_barrier",                                                                \
    "barriers 1 to 15 for some of the block's warps: barrier(id, threads), barrier_arrive")        \
  X(ATOMIC_PK_F16, "atomic_pk_f16",                                                                \
    "atomic_add of a vec<2, f16> pair, one instruction in global memory")                          \
  X(ATOMIC_PK_BF16, "atomic_pk_bf16",                                                              \
    "atomic_add of a vec<2, bf16> pair, one instruction in global memory")                         \
  X(MFMA_CDNA3, "mfma_cdna3", "CDNA3's MFMA additions: 8-bit integers at k 32")                    \
  X(MFMA_CDNA4, "mfma_cdna4", "CDNA4's MFMA additions: 16-bit inputs at k 32, OCP 8-bit floats")   \
  X(WMMA_GFX12, "wmma_gfx12", "RDNA4's WMMA: 16x16x16 of 16-bit inputs, 8 values a lane")          \
  X(SCHED_HINTS, "sched_hints",                                                                    \
    "scheduling hints: sched_barrier, sched_group_barrier, set_prio, waves_per_eu")

typedef enum FlyFeature {
#define X(id, name, doc) FLY_FEATURE_##id,
  FLY_FEATURES(X)
#undef X
      FLY_FEATURE_COUNT
} FlyFeature;

typedef enum FlyTargetId {
#define FLY_TARGET(id, ...) FLY_TARGET_##id,
#include "fly_targets.def"
#undef FLY_TARGET
  FLY_TARGET_COUNT
} FlyTargetId;

typedef struct FlyTarget {
  FlyTargetId id;
  const char *arch; /* sm_90, gfx942 ... */
  FlyVendor vendor;
  const char *family; /* hopper, cdna3 ... */
  int warp_size;      /* 32 or 64 */
  int smem_per_block; /* bytes */
  int device;         /* compute capability, or gfx_target_version */
  const char *isa;    /* NVIDIA: PTX features ("+ptx80"); AMD: the chipset */
  unsigned mma;       /* 1 << FlyMmaFamily */
  unsigned features;  /* 1 << FlyFeature */
} FlyTarget;

#define FLY_DEFAULT_TARGET "sm_90"

/* The target named arch, or NULL. */
const FlyTarget *fly_target_find(const char *arch);
/* Every target, in the table's order: i from 0 while the result is not NULL. */
const FlyTarget *fly_target_at(int i);
/* "sm_80, sm_90, ..., gfx1201", for messages and help texts. */
const char *fly_target_names(void);
/* The target for a GPU that reports `device` (fly_targets.def): AMD's own
   chip; for NVIDIA the newest target of a compute capability at most the
   GPU's (PTX runs on later GPUs), never one whose arch ends in `a`. NULL
   when there is none. */
const FlyTarget *fly_target_for_device(FlyVendor vendor, int device);

static inline bool fly_target_has(const FlyTarget *t, FlyFeature f) {
  return (t->features >> f) & 1u;
}
static inline bool fly_target_has_mma(const FlyTarget *t, FlyMmaFamily f) {
  return (t->mma >> f) & 1u;
}
/* "nvidia" or "amd", as target.vendor reads; "NVIDIA" or "AMD" for messages. */
const char *fly_vendor_name(FlyVendor v);
const char *fly_vendor_title(FlyVendor v);
/* The names and descriptions of features and MMA families; the feature
   named `name` (-1 when none is). */
const char *fly_feature_name(FlyFeature f);
const char *fly_feature_doc(FlyFeature f);
int fly_feature_find(const char *name, unsigned len);
const char *fly_mma_family_name(FlyMmaFamily f);
const char *fly_mma_family_doc(FlyMmaFamily f);
FlyVendor fly_mma_family_vendor(FlyMmaFamily f);
/* The targets that have feature f (or MMA family m), "sm_90, sm_90a", for
   messages that say what would work; "" when none. */
const char *fly_targets_with_feature(FlyFeature f);
const char *fly_targets_with_mma(FlyMmaFamily m);

#endif
