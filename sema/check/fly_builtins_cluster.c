/* fly_builtins_cluster.c — thread-block clusters (NVIDIA sm_90, the feature
 * cluster): the block's rank and the cluster's size, the cluster's barrier,
 * and the fence that publishes mbarrier_init to the cluster's other blocks.
 * cluster_idx and cluster_dim are values like block_idx (fly_builtins.c);
 * the remote mbarrier arrival is mbarrier_arrive(bar, rank)
 * (fly_builtins_gpu.c) and the multicast copy tma_load's fifth argument
 * (fly_builtins_tma.c). The launch block's `cluster = ...` is fly_check.c's. */
#include "fly_builtins.h"

bool fly_has_cluster(FlyInterp *I, const FlyNode *at, const char *what) {
  if (fly_target_has(I->target, FLY_FEATURE_CLUSTER))
    return true;
  fly_err(I, at, "%s needs thread-block clusters, which %s does not have; they run on %s", what,
          I->target->arch, fly_targets_with_feature(FLY_FEATURE_CLUSTER));
  return false;
}

static bool cluster_only(FlyInterp *I, const FlyArgs *a, const char *what) {
  return fly_gpu_only(I, a, what) && fly_has_cluster(I, a->call, what);
}

static const FlyVal *effect(FlyInterp *I, const FlyArgs *a, const char *what, FlyOpcode op) {
  if (!cluster_only(I, a, what))
    return NULL;
  return fly_emit_effect(I, op, 0, NULL, a->call) ? fly_val_none() : NULL;
}

static const FlyVal *index(FlyInterp *I, const FlyArgs *a, const char *what, FlyOpcode op,
                           const char *origin) {
  if (!cluster_only(I, a, what))
    return NULL;
  FlyOrigin o = {a->call, origin};
  return fly_emit_value(I, fly_val_runtime(&I->A, fly_type_scalar(FLY_TYPE_I32), o), op, 0, NULL,
                        a->call);
}

const FlyVal *fly_builtin_block_rank(FlyInterp *I, const FlyArgs *a) {
  return index(I, a, "block_rank()", FLY_OPCODE_BLOCK_RANK, "the block's rank in its cluster");
}

const FlyVal *fly_builtin_cluster_size(FlyInterp *I, const FlyArgs *a) {
  return index(I, a, "cluster_size()", FLY_OPCODE_CLUSTER_SIZE, "the blocks of the cluster");
}

/* barrier.cluster.arrive then barrier.cluster.wait, by every thread of
   every block of the cluster (not .aligned: a branch may hold it). */
const FlyVal *fly_builtin_cluster_sync(FlyInterp *I, const FlyArgs *a) {
  return effect(I, a, "cluster_sync()", FLY_OPCODE_CLUSTER_SYNC);
}

const FlyVal *fly_builtin_cluster_arrive(FlyInterp *I, const FlyArgs *a) {
  return effect(I, a, "cluster_arrive()", FLY_OPCODE_CLUSTER_ARRIVE);
}

const FlyVal *fly_builtin_cluster_arrive_relaxed(FlyInterp *I, const FlyArgs *a) {
  return effect(I, a, "cluster_arrive_relaxed()", FLY_OPCODE_CLUSTER_ARRIVE_RELAXED);
}

const FlyVal *fly_builtin_cluster_wait(FlyInterp *I, const FlyArgs *a) {
  return effect(I, a, "cluster_wait()", FLY_OPCODE_CLUSTER_WAIT);
}

const FlyVal *fly_builtin_fence_mbarrier_init(FlyInterp *I, const FlyArgs *a) {
  return effect(I, a, "fence_mbarrier_init()", FLY_OPCODE_FENCE_MBARRIER_INIT);
}
