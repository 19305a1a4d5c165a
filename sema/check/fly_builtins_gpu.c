/* fly_builtins_gpu.c — the GPU builtins: barriers and device printf (the
 * warp operations are fly_builtins_warp.c, the atomics fly_builtins_atomic.c). */
#include <inttypes.h>
#include <string.h>

#include "fly_builtins.h"
#include "fly_strbuf.h"

/* ---- GPU ------------------------------------------------------------------------------- */

const FlyVal *fly_gpu_only(FlyInterp *I, const FlyArgs *a, const char *name) {
  if (I->in_launch)
    return fly_err(I, a->call, "%s runs on the GPU; a launch block runs on the host", name);
  return fly_val_none();
}

bool fly_gpu_feature(FlyInterp *I, const FlyArgs *a, const char *what, FlyFeature f,
                     const char *needs, const char *runs) {
  if (!fly_gpu_only(I, a, what))
    return false;
  if (fly_target_has(I->target, f))
    return true;
  fly_err(I, a->call, "%s %s, which %s does not have; %s on %s", what, needs, I->target->arch, runs,
          fly_targets_with_feature(f));
  return false;
}

/* Named barriers (the feature named_barrier). The block has sixteen
   barriers; barrier() is number 0 and waits for every thread, and
   barrier(id, threads) waits on barrier id (1 to 15) until `threads` threads
   have arrived there, barrier_arrive(id, threads) counting towards it
   without waiting. The hardware counts arrivals by warp, so `threads` is
   whole warps: a multiple of the warp size, at most the block's threads.
   Static ids and counts are checked here, the count against the launch's
   block once it has run (fly_check_named_barriers); runtime ones go to the
   hardware as they are. */
#define FLY_NAMED_BARRIERS 16
#define FLY_MAX_BLOCK_THREADS 1024

static bool has_named_barrier(FlyInterp *I, const FlyArgs *a, const char *what) {
  return fly_gpu_feature(I, a, what, FLY_FEATURE_NAMED_BARRIER,
                         "needs named barriers (barriers of some of the block's threads; the "
                         "whole block's is barrier())",
                         "they run");
}

/* Argument i, an integer made an i32; role names it in messages. */
static const FlyVal *barrier_operand(FlyInterp *I, const FlyArgs *a, int i, const char *what,
                                     const char *role) {
  const FlyVal *x = a->v[i];
  if (!fly_val_is_integer(x))
    return fly_err(I, a->node[i], "the %s of %s is an integer, not %s", role, what,
                   fly_val_describe(&I->A, x));
  return fly_convert(I, x, fly_type_scalar(FLY_TYPE_I32), a->node[i], true);
}

static const FlyVal *named_barrier(FlyInterp *I, const FlyArgs *a, const char *what, FlyOpcode op) {
  if (!has_named_barrier(I, a, what))
    return NULL;
  const FlyVal *id = a->v[0], *threads = a->v[1];
  if (id->kind == FLY_V_INT && (id->i < 1 || id->i >= FLY_NAMED_BARRIERS))
    return fly_err(I, a->node[0], "the id of %s is a named barrier, 1 to %d, not %" PRId64 "%s",
                   what, FLY_NAMED_BARRIERS - 1, id->i,
                   id->i == 0 ? " (barrier 0 is the whole block's: barrier())" : "");
  int warp = I->target->warp_size;
  if (threads->kind == FLY_V_INT) {
    int64_t n = threads->i;
    if (n < warp || n % warp != 0 || n > FLY_MAX_BLOCK_THREADS)
      return fly_err(I, a->node[1],
                     "the thread count of %s is whole warps: a multiple of %d from %d to %d, "
                     "not %" PRId64,
                     what, warp, warp, FLY_MAX_BLOCK_THREADS, n);
    if (n > I->named_barrier_threads) {
      I->named_barrier_threads = n;
      I->named_barrier_at = a->node[1];
    }
  }
  const FlyVal *args[2];
  if (!(args[0] = barrier_operand(I, a, 0, what, "id")) ||
      !(args[1] = barrier_operand(I, a, 1, what, "thread count")))
    return NULL;
  return fly_emit_effect(I, op, 2, args, a->call) ? fly_val_none() : NULL;
}

const FlyVal *fly_builtin_barrier(FlyInterp *I, const FlyArgs *a) {
  if (a->n == 2)
    return named_barrier(I, a, "barrier(id, threads)", FLY_OPCODE_BARRIER_NAMED);
  if (a->n == 1) /* none or both, as for any builtin's arity */
    return fly_err(I, a->call,
                   "wrong number of arguments (1) for barrier; usage: barrier([id, threads])");
  if (!fly_gpu_only(I, a, "barrier()"))
    return NULL;
  return fly_emit_effect(I, FLY_OPCODE_BARRIER, 0, NULL, a->call) ? fly_val_none() : NULL;
}

const FlyVal *fly_builtin_barrier_arrive(FlyInterp *I, const FlyArgs *a) {
  return named_barrier(I, a, "barrier_arrive(id, threads)", FLY_OPCODE_BARRIER_ARRIVE);
}

void fly_check_named_barriers(FlyInterp *I) {
  if (!I->named_barrier_at || !I->has_static_block)
    return;
  int64_t block = (int64_t)I->static_block[0] * I->static_block[1] * I->static_block[2];
  if (I->named_barrier_threads > block)
    fly_err(I, I->named_barrier_at,
            "this barrier waits for %" PRId64 " threads, but the block of '%s' has %" PRId64
            "; it would never complete",
            I->named_barrier_threads, I->kernel->str, block);
}

/* cp.async's groups: on targets with the feature cp_async only. */
static bool has_cp_async(FlyInterp *I, const FlyArgs *a, const char *what) {
  return fly_gpu_feature(I, a, what, FLY_FEATURE_CP_ASYNC, "is for cp.async copies", "they run");
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
  return fly_gpu_feature(I, a, what, FLY_FEATURE_TMA, "needs mbarriers and the async proxy",
                         "they run");
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

/* target.has(name): a feature (fly_target.h's FLY_FEATURES) or an MMA
   family of the target, at compile time, so that a kernel chooses its
   fast paths with `if const` by what they need rather than by chip. */
const FlyVal *fly_builtin_has(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *t = a->v[0], *name = a->v[1];
  if (t->kind != FLY_V_OBJECT || t->object.kind != FLY_OBJ_TARGET)
    return fly_err(I, a->node[0], "has asks the target: target.has(\"tma\"), not %s",
                   fly_val_describe(&I->A, t));
  if (name->kind != FLY_V_STR)
    return fly_err(I, a->node[1], "target.has takes a feature's name as a string, not %s",
                   fly_val_describe(&I->A, name));
  int f = fly_feature_find(name->s, name->len);
  if (f >= 0)
    return fly_val_bool(fly_target_has(I->target, (FlyFeature)f));
  for (int m = 0; m < FLY_MMA_FAMILY_COUNT; m++) {
    const char *mn = fly_mma_family_name((FlyMmaFamily)m);
    if (strlen(mn) == name->len && memcmp(mn, name->s, name->len) == 0)
      return fly_val_bool(fly_target_has_mma(I->target, (FlyMmaFamily)m));
  }
  FlyStrBuf sb;
  fly_sb_init(&sb, &I->A);
  for (int i = 0; i < FLY_FEATURE_COUNT; i++) {
    fly_sb_puts(&sb, i ? ", " : "");
    fly_sb_puts(&sb, fly_feature_name((FlyFeature)i));
  }
  for (int m = 0; m < FLY_MMA_FAMILY_COUNT; m++) {
    fly_sb_puts(&sb, ", ");
    fly_sb_puts(&sb, fly_mma_family_name((FlyMmaFamily)m));
  }
  const char *all = fly_sb_finish(&sb);
  return fly_err(I, a->node[1], "'%.*s' is not a feature or MMA family; they are %s",
                 (int)name->len, name->s, all ? all : "...");
}
