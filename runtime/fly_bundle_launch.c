/* fly_bundle_launch.c — evaluating a kernel's launch rule for its arguments.
 *
 * The launch block of a kernel is written in Fly and runs on the host: the
 * compiler records what it computes from the runtime arguments as a short
 * program of 64-bit integer instructions (fly_bundle.h), which this file
 * runs. Every overflow, division by zero and out-of-range result is a
 * message, as the compiler's own arithmetic on constants would give. */
#include <inttypes.h>
#include <stdio.h>

#include "fly_bundle.h"
#include "fly_bundle_internal.h"

enum { MAX_PROGRAM = 4096 };

typedef struct Eval {
  const FlyBundle *b;
  const FlyBundleKernel *k;
  const int64_t *scalars;
  const int64_t *const *shapes, *const *strides;
  const int64_t *temps;
} Eval;

static bool operand(const Eval *e, const FlyBundleOperand *o, int64_t *v, char *why, size_t n) {
  const char *name = "";
  if (o->kind == FLY_LAUNCH_SCALAR || o->kind == FLY_LAUNCH_SHAPE || o->kind == FLY_LAUNCH_STRIDE) {
    FlyBundleParam p = fly_bundle_param(e->b, e->k->first_param + o->index);
    name = fly_bundle_string(e->b, p.name);
  }
  switch (o->kind) {
  case FLY_LAUNCH_CONST:
    *v = o->value;
    return true;
  case FLY_LAUNCH_TEMP:
    *v = e->temps[o->index];
    return true;
  case FLY_LAUNCH_SCALAR:
    if (!e->scalars)
      return fly_bundle_fail(why, n, "the launch rule needs the value of '%s'", name);
    *v = e->scalars[o->index];
    return true;
  case FLY_LAUNCH_SHAPE:
  case FLY_LAUNCH_STRIDE: {
    const int64_t *const *leaves = o->kind == FLY_LAUNCH_SHAPE ? e->shapes : e->strides;
    if (!leaves || !leaves[o->index])
      return fly_bundle_fail(why, n, "the launch rule needs the %s of '%s'",
                             o->kind == FLY_LAUNCH_SHAPE ? "shape" : "strides", name);
    *v = leaves[o->index][o->value];
    return true;
  }
  }
  return fly_bundle_fail(why, n, "corrupt launch rule");
}

const char *fly_bundle_op_symbol(uint32_t op) {
  static const char *const symbols[FLY_LAUNCH_NOPS] = {
      [FLY_LAUNCH_ADD] = "+",          [FLY_LAUNCH_SUB] = "-",  [FLY_LAUNCH_MUL] = "*",
      [FLY_LAUNCH_DIV] = "/",          [FLY_LAUNCH_REM] = "%",  [FLY_LAUNCH_MIN] = "min",
      [FLY_LAUNCH_MAX] = "max",        [FLY_LAUNCH_SHL] = "<<", [FLY_LAUNCH_SHR] = ">>",
      [FLY_LAUNCH_AND] = "&",          [FLY_LAUNCH_OR] = "|",   [FLY_LAUNCH_XOR] = "^",
      [FLY_LAUNCH_EQ] = "==",          [FLY_LAUNCH_NE] = "!=",  [FLY_LAUNCH_LT] = "<",
      [FLY_LAUNCH_LE] = "<=",          [FLY_LAUNCH_GT] = ">",   [FLY_LAUNCH_GE] = ">=",
      [FLY_LAUNCH_REQUIRE] = "require"};
  return op < FLY_LAUNCH_NOPS && symbols[op] ? symbols[op] : "?";
}

static bool apply(uint32_t op, int64_t x, int64_t y, int64_t *r, char *why, size_t n) {
  bool overflow = false;
  switch (op) {
  case FLY_LAUNCH_ADD:
    overflow = __builtin_add_overflow(x, y, r);
    break;
  case FLY_LAUNCH_SUB:
    overflow = __builtin_sub_overflow(x, y, r);
    break;
  case FLY_LAUNCH_MUL:
    overflow = __builtin_mul_overflow(x, y, r);
    break;
  case FLY_LAUNCH_DIV:
  case FLY_LAUNCH_REM:
    if (y == 0)
      return fly_bundle_fail(why, n, "the launch rule divides %" PRId64 " by zero", x);
    overflow = x == INT64_MIN && y == -1;
    if (!overflow)
      *r = op == FLY_LAUNCH_DIV ? x / y : x % y;
    break;
  case FLY_LAUNCH_MIN:
    *r = x < y ? x : y;
    break;
  case FLY_LAUNCH_MAX:
    *r = x > y ? x : y;
    break;
  case FLY_LAUNCH_SHL:
  case FLY_LAUNCH_SHR:
    if (y < 0 || y > 63)
      return fly_bundle_fail(why, n, "the launch rule shifts by %" PRId64 " (0 to 63 allowed)", y);
    if (op == FLY_LAUNCH_SHR) {
      *r = x >> y;
    } else {
      overflow = x < 0 || (y > 0 && x > (INT64_MAX >> y));
      if (!overflow)
        *r = x << y;
    }
    break;
  case FLY_LAUNCH_AND:
    *r = x & y;
    break;
  case FLY_LAUNCH_OR:
    *r = x | y;
    break;
  case FLY_LAUNCH_XOR:
    *r = x ^ y;
    break;
  case FLY_LAUNCH_EQ:
    *r = x == y;
    break;
  case FLY_LAUNCH_NE:
    *r = x != y;
    break;
  case FLY_LAUNCH_LT:
    *r = x < y;
    break;
  case FLY_LAUNCH_LE:
    *r = x <= y;
    break;
  case FLY_LAUNCH_GT:
    *r = x > y;
    break;
  case FLY_LAUNCH_GE:
    *r = x >= y;
    break;
  default:
    return fly_bundle_fail(why, n, "corrupt launch rule");
  }
  if (overflow)
    return fly_bundle_fail(why, n,
                           "the launch rule overflows 64 bits (%" PRId64 " and %" PRId64 ")", x, y);
  return true;
}

bool fly_bundle_launch_eval(const FlyBundle *b, const FlyBundleKernel *k, const int64_t *scalars,
                            const int64_t *const *shapes, const int64_t *const *strides,
                            int64_t out[7], char *why, size_t n) {
  const char *name = fly_bundle_string(b, k->name);
  if (!(k->flags & FLY_BUNDLE_KERNEL_HAS_LAUNCH))
    return fly_bundle_fail(why, n, "kernel '%s' has no launch block: give the grid and block",
                           name);
  if (k->ninsns > MAX_PROGRAM)
    return fly_bundle_fail(why, n, "the launch rule of kernel '%s' is too long (%u instructions)",
                           name, k->ninsns);
  int64_t temps[MAX_PROGRAM];
  Eval e = {b, k, scalars, shapes, strides, temps};
  for (uint32_t i = 0; i < k->ninsns; i++) {
    FlyBundleInsn in = fly_bundle_insn(b, k->first_insn + i);
    int64_t x, y;
    if (!operand(&e, &in.a, &x, why, n))
      return false;
    if (in.op == FLY_LAUNCH_REQUIRE) {
      /* The message and the place were checked by fly_bundle_open. */
      if (!x)
        return fly_bundle_fail(why, n, "launch refused: %s (%s)",
                               fly_bundle_string(b, (uint32_t)in.b.value),
                               fly_bundle_string(b, in.where));
      temps[i] = 0;
      continue;
    }
    if (!operand(&e, &in.b, &y, why, n) || !apply(in.op, x, y, &temps[i], why, n))
      return false;
  }
  if (!out)
    return true;
  const FlyBundleOperand *rule[7] = {&k->grid[0],  &k->grid[1],  &k->grid[2], &k->block[0],
                                     &k->block[1], &k->block[2], &k->shared};
  static const char *const what[7] = {"grid.x",  "grid.y",  "grid.z", "block.x",
                                      "block.y", "block.z", "shared"};
  for (int i = 0; i < 7; i++) {
    if (!operand(&e, rule[i], &out[i], why, n))
      return false;
    /* No blocks is no work (an empty tensor); no threads is a mistake. */
    int64_t lo = i < 3 || i == 6 ? 0 : 1;
    if (out[i] < lo || out[i] > INT32_MAX)
      return fly_bundle_fail(why, n,
                             "kernel '%s': %s is %" PRId64 ", outside %" PRId64 " to 2^31-1", name,
                             what[i], out[i], lo);
  }
  return true;
}
