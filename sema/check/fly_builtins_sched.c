/* fly_builtins_sched.c — AMD's scheduling hints (the feature sched_hints):
 * where the compiler's scheduler may place instructions of which classes
 * (sched_barrier, sched_group_barrier), the wave's issue priority
 * (set_prio), and the kernel's occupancy (waves_per_eu). A hot loop ordered
 * by hand interleaves its MFMAs with its LDS reads and global loads, which
 * the scheduler alone does not do as well. */
#include <inttypes.h>
#include <string.h>

#include "fly_builtins.h"

/* The instruction classes of LLVM's AMDGPU scheduling barriers, by the
   names Fly gives them: a class mask is an integer of these bits or a
   string of names joined by '|' ("mfma|ds_read"). */
static const struct {
  const char *name;
  unsigned bit;
} classes[] = {
    {"alu", 0x1},       {"valu", 0x2},       {"salu", 0x4},        {"mfma", 0x8},
    {"vmem", 0x10},     {"vmem_read", 0x20}, {"vmem_write", 0x40}, {"ds", 0x80},
    {"ds_read", 0x100}, {"ds_write", 0x200}, {"trans", 0x400},
};
#define ALL_CLASSES 0x7FFu

static bool sched_feature(FlyInterp *I, const FlyArgs *a, const char *what) {
  return fly_gpu_feature(I, a, what, FLY_FEATURE_SCHED_HINTS, "is one of AMD's scheduling hints",
                         "they run");
}

/* Argument i as a class mask (an i32 value for the tracer), or NULL. */
static const FlyVal *class_mask(FlyInterp *I, const FlyArgs *a, int i, const char *what) {
  const FlyVal *v = a->v[i];
  if (v->kind == FLY_V_STR) {
    unsigned mask = 0;
    const char *s = v->s, *end = v->s + v->len;
    while (s < end) {
      const char *bar = memchr(s, '|', (size_t)(end - s));
      size_t n = (size_t)((bar ? bar : end) - s);
      unsigned bit = 0;
      for (size_t c = 0; c < sizeof classes / sizeof classes[0]; c++)
        if (strlen(classes[c].name) == n && memcmp(classes[c].name, s, n) == 0)
          bit = classes[c].bit;
      if (!bit)
        return fly_err(I, a->node[i],
                       "'%.*s' is not an instruction class of %s; the classes are alu, valu, "
                       "salu, mfma, vmem, vmem_read, vmem_write, ds, ds_read, ds_write and trans",
                       (int)n, s, what);
      mask |= bit;
      s = bar ? bar + 1 : end;
    }
    return fly_val_int(&I->A, mask, fly_type_scalar(FLY_TYPE_I32));
  }
  int64_t m;
  if (!fly_arg_int(I, a, i, "an instruction class mask", &m))
    return NULL;
  if (m < 0 || (uint64_t)m > ALL_CLASSES)
    return fly_err(I, a->node[i], "a class mask of %s is 0 to 0x7ff, not %" PRId64, what, m);
  return fly_val_int(&I->A, m, fly_type_scalar(FLY_TYPE_I32));
}

/* sched_barrier([classes]): no instruction crosses this point in the
   schedule, except those of the classes given (none by default). */
const FlyVal *fly_builtin_sched_barrier(FlyInterp *I, const FlyArgs *a) {
  const char *what = "sched_barrier";
  if (!sched_feature(I, a, what))
    return NULL;
  const FlyVal *mask =
      a->n == 1 ? class_mask(I, a, 0, what) : fly_val_int(&I->A, 0, fly_type_scalar(FLY_TYPE_I32));
  if (!mask)
    return NULL;
  return fly_emit_effect(I, FLY_OPCODE_SCHED_BARRIER, 1, &mask, a->call) ? fly_val_none() : NULL;
}

/* sched_group_barrier(classes, n, group): the next n instructions of the
   classes in the schedule come here, in order with the other barriers of
   the same group (0 to 15) in the same block. */
const FlyVal *fly_builtin_sched_group_barrier(FlyInterp *I, const FlyArgs *a) {
  const char *what = "sched_group_barrier";
  if (!sched_feature(I, a, what))
    return NULL;
  const FlyVal *v[3] = {class_mask(I, a, 0, what), NULL, NULL};
  if (!v[0])
    return NULL;
  int64_t n, group;
  if (!fly_arg_int(I, a, 1, "the instructions of a scheduling group", &n) ||
      !fly_arg_int(I, a, 2, "a scheduling group's number", &group))
    return NULL;
  if (n < 1 || n > 1024)
    return fly_err(I, a->node[1], "a scheduling group holds 1 to 1024 instructions, not %" PRId64,
                   n);
  if (group < 0 || group > 15)
    return fly_err(I, a->node[2], "a scheduling group's number is 0 to 15, not %" PRId64, group);
  v[1] = fly_val_int(&I->A, n, fly_type_scalar(FLY_TYPE_I32));
  v[2] = fly_val_int(&I->A, group, fly_type_scalar(FLY_TYPE_I32));
  return fly_emit_effect(I, FLY_OPCODE_SCHED_GROUP_BARRIER, 3, v, a->call) ? fly_val_none() : NULL;
}

/* set_prio(n): the wave's priority in instruction issue, 0 (the default)
   to 3 (s_setprio), e.g. raised around a burst of MFMAs. */
const FlyVal *fly_builtin_set_prio(FlyInterp *I, const FlyArgs *a) {
  if (!sched_feature(I, a, "set_prio"))
    return NULL;
  int64_t n;
  if (!fly_arg_int(I, a, 0, "a wave's priority", &n))
    return NULL;
  if (n < 0 || n > 3)
    return fly_err(I, a->node[0], "a wave's priority is 0 to 3, not %" PRId64, n);
  const FlyVal *v = fly_val_int(&I->A, n, fly_type_scalar(FLY_TYPE_I16));
  return fly_emit_effect(I, FLY_OPCODE_SET_PRIO, 1, &v, a->call) ? fly_val_none() : NULL;
}

/* waves_per_eu(n): the kernel's occupancy, at least n waves a SIMD (1 to
   8 on CDNA, 16 on RDNA): the register allocator keeps each wave's
   registers within what n waves leave it (the function attribute
   amdgpu-waves-per-eu). */
const FlyVal *fly_builtin_waves_per_eu(FlyInterp *I, const FlyArgs *a) {
  if (!sched_feature(I, a, "waves_per_eu"))
    return NULL;
  int most = I->target->warp_size == 64 ? 8 : 16;
  int64_t n;
  if (!fly_arg_int(I, a, 0, "the waves a SIMD", &n))
    return NULL;
  if (n < 1 || n > most)
    return fly_err(I, a->node[0], "%s runs 1 to %d waves a SIMD, not %" PRId64, I->target->arch,
                   most, n);
  const FlyVal *v = fly_val_int(&I->A, n, NULL);
  return fly_emit_effect(I, FLY_OPCODE_WAVES_PER_EU, 1, &v, a->call) ? fly_val_none() : NULL;
}
