/* fly_builtins_gpu.c — the GPU builtins: barriers and device printf (the
 * warp operations are fly_builtins_warp.c, the atomics fly_builtins_atomic.c). */
#include <inttypes.h>
#include <string.h>

#include "fly_builtins.h"

/* ---- GPU ------------------------------------------------------------------------------- */

const FlyVal *fly_gpu_only(FlyInterp *I, const FlyArgs *a, const char *name) {
  if (I->in_launch)
    return fly_err(I, a->call, "%s runs on the GPU; a launch block runs on the host", name);
  return fly_val_none();
}

const FlyVal *fly_builtin_barrier(FlyInterp *I, const FlyArgs *a) {
  if (!fly_gpu_only(I, a, "barrier()"))
    return NULL;
  return fly_emit_effect(I, FLY_OPCODE_BARRIER, 0, NULL, a->call) ? fly_val_none() : NULL;
}

/* cp.async's groups: on targets with the feature cp_async only. */
static bool has_cp_async(FlyInterp *I, const FlyArgs *a, const char *what) {
  if (!fly_gpu_only(I, a, what))
    return false;
  if (fly_target_has(I->target, FLY_FEATURE_CP_ASYNC))
    return true;
  fly_err(I, a->call, "%s is for cp.async copies, which %s does not have; they run on %s", what,
          I->target->arch, fly_targets_with_feature(FLY_FEATURE_CP_ASYNC));
  return false;
}

const FlyVal *fly_builtin_cp_async_commit(FlyInterp *I, const FlyArgs *a) {
  if (!has_cp_async(I, a, "cp_async_commit()"))
    return NULL;
  return fly_emit_effect(I, FLY_OPCODE_CP_ASYNC_COMMIT, 0, NULL, a->call) ? fly_val_none() : NULL;
}

const FlyVal *fly_builtin_cp_async_wait(FlyInterp *I, const FlyArgs *a) {
  int64_t n;
  if (!has_cp_async(I, a, "cp_async_wait(n)") ||
      !fly_arg_int(I, a, 0, "the groups cp_async_wait leaves in flight", &n))
    return NULL;
  if (n < 0 || n > 255)
    return fly_err(I, a->node[0], "cp_async_wait leaves 0 to 255 groups in flight, not %" PRId64,
                   n);
  return fly_emit_effect(I, FLY_OPCODE_CP_ASYNC_WAIT, 1, a->v, a->call) ? fly_val_none() : NULL;
}

/* mbarriers and the async proxy: the feature tma (sm_90). */
static bool has_tma(FlyInterp *I, const FlyArgs *a, const char *what) {
  if (!fly_gpu_only(I, a, what))
    return false;
  if (fly_target_has(I->target, FLY_FEATURE_TMA))
    return true;
  fly_err(I, a->call,
          "%s needs mbarriers and the async proxy, which %s does not have; they run "
          "on %s",
          what, I->target->arch, fly_targets_with_feature(FLY_FEATURE_TMA));
  return false;
}

/* An mbarrier operation: bar, a single i64 of shared memory, and (for all
   but arrive) an integer operand made an i32. */
static const FlyVal *mbarrier_op(FlyInterp *I, const FlyArgs *a, const char *what, FlyOpcode op) {
  if (!has_tma(I, a, what))
    return NULL;
  const FlyVal *bar = fly_arg_tensor(I, a, 0, what);
  if (!bar)
    return NULL;
  int64_t n;
  if (bar->tensor.space != FLY_SPACE_SHARED || bar->tensor.elem->kind != FLY_TY_SCALAR ||
      bar->tensor.elem->code != FLY_TYPE_I64 || !fly_tensor_static_size(I, bar, &n) || n != 1)
    return fly_err(I, a->node[0],
                   "%s takes an mbarrier: one i64 of shared memory, such as bars[0] of "
                   "smem<i64>(2), not %s",
                   what, fly_val_describe(&I->A, bar));
  const FlyVal *args[2] = {bar, NULL};
  if (a->n == 2) {
    const FlyVal *x = a->v[1];
    bool integer = x->kind == FLY_V_INT || (x->kind == FLY_V_RUNTIME && fly_type_is_int(x->type));
    if (!integer)
      return fly_err(I, a->node[1], "%s takes an integer here, not %s", what,
                     fly_val_describe(&I->A, x));
    if (!(args[1] = fly_convert(I, x, fly_type_scalar(FLY_TYPE_I32), a->node[1], true)))
      return NULL;
  }
  return fly_emit_effect(I, op, a->n, args, a->call) ? fly_val_none() : NULL;
}

const FlyVal *fly_builtin_mbarrier_init(FlyInterp *I, const FlyArgs *a) {
  return mbarrier_op(I, a, "mbarrier_init(bar, count)", FLY_OPCODE_MBARRIER_INIT);
}

/* With a rank, the arrival is on the mbarrier at bar's place in the shared
   memory of block `rank` of the cluster (released to the cluster): how a
   consumer tells each block that multicasts into it that a stage is free. */
const FlyVal *fly_builtin_mbarrier_arrive(FlyInterp *I, const FlyArgs *a) {
  if (a->n == 1)
    return mbarrier_op(I, a, "mbarrier_arrive(bar)", FLY_OPCODE_MBARRIER_ARRIVE);
  static const char what[] = "mbarrier_arrive(bar, rank)";
  if (!fly_gpu_only(I, a, what) || !fly_has_cluster(I, a->call, what))
    return NULL;
  return mbarrier_op(I, a, what, FLY_OPCODE_MBARRIER_ARRIVE_REMOTE);
}

const FlyVal *fly_builtin_mbarrier_arrive_expect_tx(FlyInterp *I, const FlyArgs *a) {
  return mbarrier_op(I, a, "mbarrier_arrive_expect_tx(bar, bytes)",
                     FLY_OPCODE_MBARRIER_ARRIVE_EXPECT_TX);
}

const FlyVal *fly_builtin_mbarrier_wait(FlyInterp *I, const FlyArgs *a) {
  return mbarrier_op(I, a, "mbarrier_wait(bar, phase)", FLY_OPCODE_MBARRIER_WAIT);
}

const FlyVal *fly_builtin_fence_proxy_async(FlyInterp *I, const FlyArgs *a) {
  if (!has_tma(I, a, "fence_proxy_async()"))
    return NULL;
  return fly_emit_effect(I, FLY_OPCODE_FENCE_PROXY_ASYNC, 0, NULL, a->call) ? fly_val_none() : NULL;
}

/* The conversions of a printf format, counted; "%%" is a percent sign. */
static int count_conversions(const char *s, uint32_t len, bool *bad) {
  int n = 0;
  for (uint32_t i = 0; i < len; i++) {
    if (s[i] != '%')
      continue;
    if (i + 1 < len && s[i + 1] == '%') {
      i++;
      continue;
    }
    while (i + 1 < len && strchr("-+ #0123456789.lhz", s[i + 1]))
      i++;
    if (i + 1 >= len || !strchr("diouxXfFeEgGaAcsp", s[i + 1]))
      *bad = true;
    n++;
  }
  return n;
}

const FlyVal *fly_builtin_printf(FlyInterp *I, const FlyArgs *a) {
  if (!fly_gpu_only(I, a, "printf"))
    return NULL;
  const FlyVal *fmt = a->v[0];
  if (fmt->kind != FLY_V_STR)
    return fly_err(I, a->node[0], "the format of printf must be a string, not %s",
                   fly_val_describe(&I->A, fmt));
  bool bad = false;
  int n = count_conversions(fmt->s, fmt->len, &bad);
  if (bad)
    return fly_err(I, a->node[0], "this printf format has an incomplete or unknown conversion");
  if (n != a->n - 1)
    return fly_err(I, a->call, "the format of printf has %d conversion%s but %d value%s follow%s",
                   n, n == 1 ? "" : "s", a->n - 1, a->n == 2 ? "" : "s", a->n == 2 ? "s" : "");
  for (int i = 1; i < a->n; i++) {
    const FlyVal *v = a->v[i];
    bool ok = v->kind == FLY_V_INT || v->kind == FLY_V_FLOAT || v->kind == FLY_V_BOOL ||
              v->kind == FLY_V_STR || (v->kind == FLY_V_RUNTIME && v->type->kind == FLY_TY_SCALAR);
    if (!ok)
      return fly_err(I, a->node[i], "printf prints numbers and strings, not %s",
                     fly_val_describe(&I->A, v));
  }
  return fly_emit_effect(I, FLY_OPCODE_PRINTF, a->n, a->v, a->call) ? fly_val_none() : NULL;
}
