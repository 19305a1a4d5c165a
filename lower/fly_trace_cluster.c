/* fly_trace_cluster.c — thread-block clusters (sema/check/fly_builtins_cluster.c):
 * the block's rank and the cluster's size from PTX's special registers, the
 * cluster's barrier, and the fence after mbarrier_init, as NVVM operations
 * (the feature cluster keeps every other target from reaching here).
 * cluster_idx and cluster_dim are gpu.cluster_id and gpu.cluster_dim
 * (fly_trace_ops.c's GPU indices), the remote arrival a fly.mbarrier and
 * the multicast copy fly.tma_load_multicast, lowered by the target pass. */
#include "fly_trace_op.h"

static bool nvvm0(FlyTrace *t, const char *name) {
  fly_mlir_op(t->m, t->ip, t->loc, name, 0, NULL, 0, NULL, 0, NULL, 0, NULL);
  return !t->failed;
}

bool fly_op_cluster(FlyTraceOp *o, FlyOpcode op) {
  FlyTrace *t = o->t;
  MlirType i32 = mlirIntegerTypeGet(t->m->ctx, 32);
  switch (op) {
  case FLY_OPCODE_BLOCK_RANK:
    return set_result(o, op1(o, "nvvm.read.ptx.sreg.cluster.ctarank", i32, 0, NULL, 0, NULL));
  case FLY_OPCODE_CLUSTER_SIZE:
    return set_result(o, op1(o, "nvvm.read.ptx.sreg.cluster.nctarank", i32, 0, NULL, 0, NULL));
  /* barrier.cluster.arrive is .release and barrier.cluster.wait .acquire
     by default; neither is .aligned, so a branch may hold them. */
  case FLY_OPCODE_CLUSTER_SYNC:
    return nvvm0(t, "nvvm.cluster.arrive") && nvvm0(t, "nvvm.cluster.wait");
  case FLY_OPCODE_CLUSTER_ARRIVE:
    return nvvm0(t, "nvvm.cluster.arrive");
  case FLY_OPCODE_CLUSTER_ARRIVE_RELAXED:
    return nvvm0(t, "nvvm.cluster.arrive.relaxed");
  case FLY_OPCODE_CLUSTER_WAIT:
    return nvvm0(t, "nvvm.cluster.wait");
  /* fence.mbarrier_init.release.cluster */
  case FLY_OPCODE_FENCE_MBARRIER_INIT:
    return nvvm0(t, "nvvm.fence.mbarrier.init");
  default:
    return fly_trace_error(t, o->at, "internal error: opcode %d is not a cluster operation",
                           (int)op);
  }
}
