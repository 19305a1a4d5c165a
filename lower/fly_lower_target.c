/* fly_lower_target.c — convert-fly-to-nvvm and convert-fly-to-rocdl, one
 * pass with the vendor's hooks (fly_lower_target.h): each Fly data
 * operation, math operation and vendor-specific one is rewritten by the part
 * that owns it; the atoms disappear once nothing uses them. */
#include <stdlib.h>
#include <string.h>

#include "fly_lower.h"
#include "fly_lower_target.h"
#include "mlir-c/BuiltinTypes.h"

typedef void (*Rewrite)(FlyBuild *b, MlirOperation op);

static void launch_smem(FlyBuild *b, MlirOperation op);

/* The Fly operations this pass rewrites; the ones that make values (memrefs
   and atoms), which it keeps until their users are gone. */
static const struct {
  const char *name;
  Rewrite rewrite;
} fly_ops[] = {
    {"fly.copy", fly_lower_copy},
    {"fly.copy_if", fly_lower_copy},
    {"fly.smem_launch_base", launch_smem},
    {"fly.smem_launch_size", launch_smem},
    {"fly.load", fly_lower_load},
    {"fly.store", fly_lower_store},
    {"fly.mbarrier", fly_lower_mbarrier},
    {"fly.tma_load", fly_lower_tma_load},
    {"fly.tma_store", fly_lower_tma_store},
    {"fly.tma_load_multicast", fly_lower_tma_load_multicast},
};
static const char *const makers[] = {"fly.make_memref", "fly.make_copy_atom", "fly.make_mma_atom",
                                     "fly.make_tiled_copy", "fly.make_tiled_mma"};

static const FlyTargetHooks *hooks;

const FlyTarget *fly_lower_target_of(MlirOperation op) {
  while (!mlirOperationIsNull(op) && !fly_lower_is(op, "gpu.module"))
    op = mlirOperationGetParentOperation(op);
  if (mlirOperationIsNull(op))
    return NULL;
  char *text = fly_lower_attr_text(
      mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("targets")));
  const char *chip = text ? strstr(text, "chip = \"") : NULL;
  const FlyTarget *t = NULL;
  if (chip) {
    chip += 8;
    size_t n = strcspn(chip, "\"");
    for (int i = 0; !t && fly_target_at(i); i++)
      if (strlen(fly_target_at(i)->arch) == n && strncmp(fly_target_at(i)->arch, chip, n) == 0)
        t = fly_target_at(i);
  }
  free(text);
  return t;
}

static bool is_fly(MlirOperation op) {
  MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
  return n.length > 4 && memcmp(n.data, "fly.", 4) == 0;
}

/* What this pass rewrites: Fly operations, math, float max/min and casts
   (f8), and the vendor's own. */
static bool wanted(MlirOperation op) {
  return is_fly(op) || fly_lower_math_wanted(op) || hooks->wants(op);
}

static bool is_maker(MlirOperation op) {
  for (size_t i = 0; i < sizeof makers / sizeof makers[0]; i++)
    if (fly_lower_is(op, makers[i]))
      return true;
  return false;
}

static bool unused(MlirOperation op) {
  for (intptr_t i = 0; i < mlirOperationGetNumResults(op); i++)
    if (!mlirOpOperandIsNull(mlirValueGetFirstUse(mlirOperationGetResult(op, i))))
      return false;
  return true;
}

MlirValue fly_build_intrinsic0(FlyBuild *b, const char *name, MlirType t) {
  MlirNamedAttribute a[3] = {
      fly_mlir_named(b->m, "intrin", fly_mlir_str_attr(b->m, name)),
      fly_mlir_named(b->m, "op_bundle_sizes", fly_build_attr(b, "array<i32>")),
      fly_mlir_named(b->m, "operandSegmentSizes", fly_build_attr(b, "array<i32: 0, 0>"))};
  return fly_build_op1(b, "llvm.call_intrinsic", t, 0, NULL, 3, a);
}

/* smem<T>(?): fly.smem_launch_base, its start, and fly.smem_launch_size, its
   elements (the bytes the launch gives over T's size). */
static void launch_smem(FlyBuild *b, MlirOperation op) {
  MlirOperation fn = mlirOperationGetParentOperation(op);
  while (!mlirOperationIsNull(fn) && !fly_lower_is(fn, "gpu.func"))
    fn = mlirOperationGetParentOperation(fn);
  if (mlirOperationIsNull(fn))
    return fly_build_error(b, "internal error: shared memory outside a kernel");
  bool size = fly_lower_is(op, "fly.smem_launch_size");
  MlirValue bytes = {NULL};
  MlirValue r = hooks->launch_smem(b, fn, size ? &bytes : NULL);
  if (size) {
    int64_t eb = fly_lower_int_attr(op, "elem_bytes", 1);
    MlirValue v[2] = {bytes, fly_build_i32(b, eb > 0 ? eb : 1)};
    r = fly_build_op1(b, "arith.divui", b->i32, 2, v, 0, NULL);
  }
  mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0), r);
  mlirOperationDestroy(op);
}

static void rewrite(FlyBuild *b, MlirOperation op, bool *kept) {
  for (size_t i = 0; i < sizeof fly_ops / sizeof fly_ops[0]; i++)
    if (fly_lower_is(op, fly_ops[i].name))
      return fly_ops[i].rewrite(b, op);
  if (fly_lower_is(op, "fly.gemm"))
    return fly_lower_gemm(b, op, hooks);
  if (fly_lower_atomic_wanted(op))
    return fly_lower_atomic(b, op, hooks);
  if (is_maker(op)) {
    *kept = true; /* dropped below, once nothing uses it */
    return;
  }
  if (fly_lower_math_wanted(op))
    return fly_lower_math(b, op, hooks);
  if (hooks->wants(op))
    return hooks->rewrite(b, op);
  MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
  fly_build_error(b, "%.*s is not lowered yet (run fly-layout-lowering first)", (int)n.length,
                  n.data);
}

bool fly_lower_to_target(FlyMlir *m, MlirOperation root, bool amd) {
  hooks = amd ? &fly_rocdl_hooks : &fly_nvvm_hooks;
  FlyOpList o = {NULL, 0, 0, false, wanted};
  fly_lower_collect(root, &o);
  MlirType i32 = mlirIntegerTypeGet(m->ctx, 32);
  FlyAlgebra A;
  fly_algebra_init(&A);
  bool ok = !o.failed;
  bool *kept = calloc((size_t)(o.n ? o.n : 1), sizeof *kept);
  ok = ok && kept;
  for (int i = 0; i < o.n && ok; i++) {
    MlirOperation op = o.ops[i];
    FlyBuild b = {m, {mlirOperationGetBlock(op), op}, mlirOperationGetLocation(op), i32, false, &A};
    rewrite(&b, op, &kept[i]);
    ok = !b.failed;
  }
  for (int i = o.n - 1; i >= 0 && ok; i--)
    if (kept[i] && unused(o.ops[i]))
      mlirOperationDestroy(o.ops[i]);
  ok = ok && fly_lower_carry(m, root);
  free(kept);
  free(o.ops);
  fly_algebra_release(&A);
  return ok;
}
