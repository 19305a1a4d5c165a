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
