/* fly_lower_rocdl.c — AMD's part of the target pass, convert-fly-to-rocdl
 * (fly_lower_target.h): MFMA through the upstream amdgpu dialect, log2 as
 * the llvm.log2 intrinsic, block_dim/grid_dim from the dispatch packet, and
 * the memory atomics may touch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_lower_target.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

static MlirValue mma(FlyBuild *b, const FlyMmaCall *c) {
  const FlyAtom *atom = c->atom;
  switch (atom->mma) {
  case FLY_MMA_AMD_MFMA:
    break;
  case FLY_MMA_AMD_WMMA:
  case FLY_MMA_NV_MMA_SYNC:
  case FLY_MMA_NV_WGMMA:
  case FLY_MMA_FAMILY_COUNT:
    fly_build_error(b, "the MMA atom %s is not lowered yet", atom->name);
    return c->z;
  }
  char attrs[256];
  snprintf(attrs, sizeof attrs,
           "{m = %d : i32, n = %d : i32, k = %d : i32, blocks = 1 : i32, cbsz = 0 : "
           "i32, abid = 0 : i32, blgp = #amdgpu<mfma_perm_b none>}",
           atom->m, atom->n, atom->k);
  MlirAttribute dict = fly_build_attr(b, attrs);
  MlirNamedAttribute at[7];
  int na = (int)mlirDictionaryAttrGetNumElements(dict);
  for (int i = 0; i < na && i < 7; i++)
    at[i] = mlirDictionaryAttrGetElement(dict, i);
  MlirValue ops[3] = {c->x, c->y, c->z};
  return fly_build_op1(b, "amdgpu.mfma", fly_vec_type(c->vc, c->tc), 3, ops, na, at);
}

static MlirValue log2_(FlyBuild *b, MlirType t, MlirValue x) {
  return fly_build_intrinsic(b, "llvm.log2", t, 1, &x);
}

/* block_dim and grid_dim on AMD: the ROCDL conversion calls ROCm's device
   library for them; the HSA dispatch packet has both (workgroup sizes as
   u16 at byte 4, grid sizes in work-items as u32 at byte 12). */
static void rewrite(FlyBuild *b, MlirOperation op) {
  char *dim = fly_lower_attr_text(
      mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("dimension")));
  int d = dim && strstr(dim, "y") ? 1 : dim && strstr(dim, "z") ? 2 : 0;
  free(dim);
  MlirType p4 = fly_mlir_type(b->m, "!llvm.ptr<4>");
  MlirNamedAttribute a[3] = {
      fly_mlir_named(b->m, "intrin", fly_mlir_str_attr(b->m, "llvm.amdgcn.dispatch.ptr")),
      fly_mlir_named(b->m, "op_bundle_sizes", fly_build_attr(b, "array<i32>")),
      fly_mlir_named(b->m, "operandSegmentSizes", fly_build_attr(b, "array<i32: 0, 0>"))};
  MlirValue packet = fly_build_op1(b, "llvm.call_intrinsic", p4, 0, NULL, 3, a);
  MlirType i8 = mlirIntegerTypeGet(b->m->ctx, 8), i16 = mlirIntegerTypeGet(b->m->ctx, 16);
  MlirValue wg = fly_build_load(b, i16, fly_build_gep(b, packet, i8, fly_sym_const(4 + 2 * d)), 2);
  MlirValue r = fly_build_op1(b, "arith.extui", b->i32, 1, &wg, 0, NULL);
  if (fly_lower_is(op, "gpu.grid_dim")) {
    MlirValue g =
        fly_build_load(b, b->i32, fly_build_gep(b, packet, i8, fly_sym_const(12 + 4 * d)), 4);
    MlirValue v[2] = {g, r};
    r = fly_build_op1(b, "arith.divui", b->i32, 2, v, 0, NULL);
  }
  MlirValue idx = fly_build_op1(b, "arith.index_castui",
                                mlirValueGetType(mlirOperationGetResult(op, 0)), 1, &r, 0, NULL);
  mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0), idx);
  mlirOperationDestroy(op);
}

static bool wants(MlirOperation op) {
  return fly_lower_is(op, "gpu.block_dim") || fly_lower_is(op, "gpu.grid_dim");
}

/* ---- atomics -------------------------------------------------------------------------------- */

static const char *syncscope(FlyMemScope s) {
  switch (s) {
  case FLY_SCOPE_BLOCK:
    return "workgroup";
  case FLY_SCOPE_GPU:
    return "agent";
  case FLY_SCOPE_SYSTEM:
  case FLY_SCOPE_COUNT:
    break;
  }
  return "";
}

/* Fly's atomics promise what HIP's do by default (clang's
   -fno-atomic-remote-memory -fno-atomic-fine-grained-memory): they touch
   neither fine-grained host memory nor a peer's memory across PCIe, whose
   links cannot do every operation atomically. Said on each atomicrmw, this
   lets LLVM use the GPU's own instructions; without it every float add,
   and at system scope every integer min, max, and, or and xor, is a loop
   of compare-and-swap. gfx90a's global_atomic_add_f32 also flushes
   denormals whatever the mode, which LLVM wants said too (other chips keep
   them, and LLVM ignores the word there). */
static MlirValue atomic_rmw(FlyBuild *b, const FlyAtomicRmw *a) {
  static const char *const words[] = {"rocdl.no_fine_grained_memory", "rocdl.no_remote_memory",
                                      "rocdl.ignore_denormal_mode"};
  MlirNamedAttribute at[3];
  int n = fly_atomic_is_float(a) && a->op == FLY_ATOMIC_ADD ? 3 : 2;
  for (int i = 0; i < n; i++)
    at[i] = fly_mlir_named(b->m, words[i], mlirUnitAttrGet(b->m->ctx));
  return fly_build_atomicrmw(b, a, syncscope(a->scope), n, at);
}

const FlyTargetHooks fly_rocdl_hooks = {FLY_VENDOR_AMD, mma,       log2_,     wants,
                                        rewrite,        syncscope, atomic_rmw};
