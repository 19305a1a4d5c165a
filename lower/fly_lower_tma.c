/* fly_lower_tma.c — TMA for NVIDIA (sm_90): fly.tma_load (and its multicast)
 * and fly.tma_store
 * as NVVM's bulk tensor copies in the target pass, and, once the kernels
 * are llvm.funcs, their tensor map arguments made 128-byte grid constants.
 *
 * A map argument arrives as a pointer in the traced IR; the CUDA ABI passes
 * a CUtensorMap by value in the kernel's parameter space, so the argument
 * becomes `byval` of a 128-byte array, 64-byte aligned, marked
 * nvvm.grid_constant: PTX then declares `.param .align 64 .b8 name[128]`
 * and TMA reads the map in place through its generic address. (The
 * attributes are set after convert-gpu-to-nvvm, which drops a gpu.func's
 * argument attributes.) */
#include <string.h>

#include "fly_lower.h"
#include "fly_lower_target.h"
#include "mlir-c/BuiltinAttributes.h"

static MlirStringRef ref(const char *s) { return mlirStringRefCreateFromCString(s); }

/* The address of a memref operand: its first element (a tile's start),
   unswizzled. */
static MlirValue start_of(FlyBuild *b, MlirValue v) {
  FlyMemDesc d;
  if (!fly_memdesc_of(b, v, &d))
    return (MlirValue){NULL};
  MlirValue p = fly_memdesc_start(b, &d);
  fly_memdesc_free(&d);
  return p;
}

static MlirValue element_of(FlyBuild *b, MlirValue v) {
  FlyMemDesc d;
  if (!fly_memdesc_of(b, v, &d))
    return (MlirValue){NULL};
  MlirValue p = fly_lower_element_ptr(b, &d);
  fly_memdesc_free(&d);
  return p;
}

static MlirAttribute segments(FlyBuild *b, int n, const int32_t *sizes) {
  return mlirDenseI32ArrayGet(b->m->ctx, n, sizes);
}

/* cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes:
   the box lands in this block's tile (a shared::cta address is one of the
   cluster's) and its bytes complete on the mbarrier. fly.tma_load_multicast
   adds .multicast::cluster with its mask (operand 3): the box lands in the
   tile at the same shared-memory offset in each block of the mask, and its
   bytes complete on the mbarrier at the same offset there. */
static void tma_load(FlyBuild *b, MlirOperation op, bool multicast) {
  int n = (int)mlirOperationGetNumOperands(op);
  int first = multicast ? 4 : 3; /* the coordinate's first operand */
  MlirValue map = mlirOperationGetOperand(op, 0);
  MlirValue bar = element_of(b, mlirOperationGetOperand(op, 1));
  MlirValue tile = start_of(b, mlirOperationGetOperand(op, 2));
  if (mlirValueIsNull(bar) || mlirValueIsNull(tile))
    return;
  MlirValue dst = fly_build_op1(b, "llvm.addrspacecast", fly_mlir_type(b->m, "!llvm.ptr<7>"), 1,
                                &tile, 0, NULL);
  MlirValue v[4 + 5];
  int k = 0;
  v[k++] = dst;
  v[k++] = map;
  for (int i = first; i < n; i++)
    v[k++] = mlirOperationGetOperand(op, i);
  v[k++] = bar;
  if (multicast)
    v[k++] = mlirOperationGetOperand(op, 3);
  int32_t seg[8] = {1, 1, n - first, 1, 0, multicast ? 1 : 0, 0, 0};
  MlirNamedAttribute a[3] = {
      fly_mlir_named(b->m, "operandSegmentSizes", segments(b, 8, seg)),
      fly_mlir_named(b->m, "mode", fly_build_attr(b, "#nvvm.tma_load_mode<tile>")),
      fly_mlir_named(b->m, "isCTAOnly", mlirBoolAttrGet(b->m->ctx, 0))};
  fly_mlir_op(b->m, b->ip, b->loc, "nvvm.cp.async.bulk.tensor.shared.cluster.global", 0, NULL, k, v,
              3, a, 0, NULL);
  if (!b->failed)
    mlirOperationDestroy(op);
}

void fly_lower_tma_load(FlyBuild *b, MlirOperation op) { tma_load(b, op, false); }

void fly_lower_tma_load_multicast(FlyBuild *b, MlirOperation op) { tma_load(b, op, true); }

/* cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group: the hardware
   writes only the box's elements inside the tensor. */
void fly_lower_tma_store(FlyBuild *b, MlirOperation op) {
  int n = (int)mlirOperationGetNumOperands(op);
  MlirValue tile = start_of(b, mlirOperationGetOperand(op, 1));
  if (mlirValueIsNull(tile))
    return;
  MlirValue v[2 + 5];
  int k = 0;
  v[k++] = mlirOperationGetOperand(op, 0);
  v[k++] = tile;
  for (int i = 2; i < n; i++)
    v[k++] = mlirOperationGetOperand(op, i);
  int32_t seg[5] = {1, 1, n - 2, 0, 0};
  MlirNamedAttribute a[2] = {
      fly_mlir_named(b->m, "operandSegmentSizes", segments(b, 5, seg)),
      fly_mlir_named(b->m, "mode", fly_build_attr(b, "#nvvm.tma_store_mode<tile>"))};
  fly_mlir_op(b->m, b->ip, b->loc, "nvvm.cp.async.bulk.tensor.global.shared.cta", 0, NULL, k, v, 2,
              a, 0, NULL);
  if (!b->failed)
    mlirOperationDestroy(op);
}

/* ---- the arguments -------------------------------------------------------------------------- */

static MlirWalkResult mark_args(MlirOperation op, void *user) {
  (void)user;
  if (!fly_lower_is(op, "llvm.func"))
    return MlirWalkResultAdvance;
  MlirAttribute maps = mlirOperationGetAttributeByName(op, ref("fly.tensor_maps"));
  if (mlirAttributeIsNull(maps))
    return MlirWalkResultSkip;
  MlirContext ctx = mlirOperationGetContext(op);
  MlirBlock entry = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
  intptr_t nargs = mlirBlockIsNull(entry) ? 0 : mlirBlockGetNumArguments(entry);
  MlirAttribute old = mlirOperationGetAttributeByName(op, ref("arg_attrs"));
  MlirAttribute empty = mlirDictionaryAttrGet(ctx, 0, NULL);
  MlirAttribute map = mlirAttributeParseGet(
      ctx, ref("{llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}"));
  MlirAttribute attrs[512];
  if (nargs > (intptr_t)(sizeof attrs / sizeof *attrs))
    return MlirWalkResultSkip;
  for (intptr_t i = 0; i < nargs; i++)
    attrs[i] = !mlirAttributeIsNull(old) && i < mlirArrayAttrGetNumElements(old)
                   ? mlirArrayAttrGetElement(old, i)
                   : empty;
  for (intptr_t i = 0; i < mlirDenseArrayGetNumElements(maps); i++) {
    int32_t a = mlirDenseI32ArrayGetElement(maps, i);
    if (a >= 0 && a < nargs)
      attrs[a] = map;
  }
  mlirOperationSetInherentAttributeByName(op, ref("arg_attrs"),
                                          mlirArrayAttrGet(ctx, nargs, attrs));
  mlirOperationRemoveDiscardableAttributeByName(op, ref("fly.tensor_maps"));
  return MlirWalkResultSkip;
}

void fly_lower_tensor_map_args(MlirModule module) {
  mlirOperationWalk(mlirModuleGetOperation(module), mark_args, NULL, MlirWalkPreOrder);
}
