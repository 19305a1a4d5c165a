/* fly_builtins_wgmma.c — the warpgroup builtins of Hopper's fast path:
 * ordering and waiting for wgmma MMAs (the MMAs themselves are gemm with a
 * wgmma atom, fly_builtins_atoms.c) and moving registers between
 * warpgroups with setmaxnreg. All need sm_90a. */
#include <inttypes.h>

#include "fly_builtins.h"
#include "fly_target.h"

/* wgmma's ordering operations: on targets with the MMA family wgmma. */
static bool has_wgmma(FlyInterp *I, const FlyArgs *a, const char *what) {
  if (!fly_gpu_only(I, a, what))
    return false;
  if (fly_target_has_mma(I->target, FLY_MMA_NV_WGMMA))
    return true;
  fly_err(I, a->call, "%s orders wgmma MMAs, which %s does not have; they run on %s", what,
          I->target->arch, fly_targets_with_mma(FLY_MMA_NV_WGMMA));
  return false;
}

const FlyVal *fly_builtin_wgmma_fence(FlyInterp *I, const FlyArgs *a) {
  if (!has_wgmma(I, a, "wgmma_fence()"))
    return NULL;
  return fly_emit_effect(I, FLY_OPCODE_WGMMA_FENCE, 0, NULL, a->call) ? fly_val_none() : NULL;
}

const FlyVal *fly_builtin_wgmma_commit(FlyInterp *I, const FlyArgs *a) {
  if (!has_wgmma(I, a, "wgmma_commit()"))
    return NULL;
  return fly_emit_effect(I, FLY_OPCODE_WGMMA_COMMIT, 0, NULL, a->call) ? fly_val_none() : NULL;
}

const FlyVal *fly_builtin_wgmma_wait(FlyInterp *I, const FlyArgs *a) {
  int64_t n;
  if (!has_wgmma(I, a, "wgmma_wait(n)") ||
      !fly_arg_int(I, a, 0, "the groups wgmma_wait leaves in flight", &n))
    return NULL;
  if (n < 0 || n > 7)
    return fly_err(I, a->node[0], "wgmma_wait leaves 0 to 7 groups in flight, not %" PRId64, n);
  return fly_emit_effect(I, FLY_OPCODE_WGMMA_WAIT, 1, a->v, a->call) ? fly_val_none() : NULL;
}

/* setmaxnreg.inc/dec: a static count, a multiple of 8 from 24 to 256. */
static const FlyVal *setmaxnreg(FlyInterp *I, const FlyArgs *a, const char *what, FlyOpcode op) {
  if (!fly_gpu_feature(I, a, what, FLY_FEATURE_SETMAXNREG, "needs setmaxnreg", "it runs"))
    return NULL;
  int64_t n;
  if (!fly_arg_int(I, a, 0, "a register count", &n))
    return NULL;
  if (n < 24 || n > 256 || n % 8 != 0)
    return fly_err(I, a->node[0],
                   "a warp's register count is a multiple of 8 from 24 to 256, not %" PRId64, n);
  return fly_emit_effect(I, op, 1, a->v, a->call) ? fly_val_none() : NULL;
}

const FlyVal *fly_builtin_setmaxnreg_inc(FlyInterp *I, const FlyArgs *a) {
  return setmaxnreg(I, a, "setmaxnreg_inc(n)", FLY_OPCODE_SETMAXNREG_INC);
}

const FlyVal *fly_builtin_setmaxnreg_dec(FlyInterp *I, const FlyArgs *a) {
  return setmaxnreg(I, a, "setmaxnreg_dec(n)", FLY_OPCODE_SETMAXNREG_DEC);
}
