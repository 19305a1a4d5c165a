/* fly_kernel_spans.c — how far each tensor of a lowered kernel may span
 * (its parameter's max_span in the bundle, which the runtime checks at
 * launch): Fly computes a view's offsets in 32-bit integers, so a tensor
 * whose elements lie 2^31 or more apart would have its addresses wrap,
 * outside the tensor. Read off the kernel in the LLVM dialect, where every
 * address into an argument is a chain of GEPs from it. */
#include "fly_kernel_spans.h"

#include <stdint.h>

#include "fly_bundle.h"
#include "fly_lower_build.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"
#include "mlir-c/Dialect/LLVM.h"

/* Lowers the limit of the tensor parameter whose pointer is argument
   `arg` (every one: -1) to `bytes`, as its `max_span` in its elements (0:
   none yet). */
static void limit_param(FlyKernelInfo *k, intptr_t arg, int64_t bytes) {
  for (int i = 0; i < k->nparams; i++) {
    FlyParamInfo *p = &k->params[i];
    if (p->kind != FLY_PARAM_TENSOR || (arg >= 0 && (intptr_t)p->first_arg != arg) || bytes <= 0)
      continue;
    uint32_t size = fly_dtype_size(p->dtype);
    int64_t elems = bytes / (size ? size : 1);
    uint32_t e = elems > UINT32_MAX ? UINT32_MAX : (uint32_t)elems;
    if (p->max_span == 0 || e < p->max_span)
      p->max_span = e;
  }
}

/* The function argument a pointer is, through GEPs and address-space
   casts; -1 where it is not one (a loop's phi, a load). */
static intptr_t pointer_arg(MlirValue v, MlirBlock entry) {
  for (int depth = 0; depth < 256; depth++) {
    if (mlirValueIsABlockArgument(v))
      return mlirBlockEqual(mlirBlockArgumentGetOwner(v), entry) ? mlirBlockArgumentGetArgNumber(v)
                                                                 : -1;
    MlirOperation op = mlirOpResultGetOwner(v);
    if (!fly_lower_is(op, "llvm.getelementptr") && !fly_lower_is(op, "llvm.addrspacecast"))
      return -1;
    v = mlirOperationGetOperand(op, 0);
  }
  return -1;
}

/* The bytes of an element of a GEP's type (integers, floats, vectors of
   them; 1 for others, the strictest reading). */
static int64_t elem_bytes(MlirType t) {
  if (mlirTypeIsAVector(t))
    return mlirShapedTypeGetDimSize(t, 0) * elem_bytes(mlirShapedTypeGetElementType(t));
  unsigned bits = mlirTypeIsAInteger(t) ? mlirIntegerTypeGetWidth(t)
                  : mlirTypeIsAFloat(t) ? mlirFloatTypeGetWidth(t)
                                        : 8;
  return bits >= 8 ? bits / 8 : 1;
}

typedef struct SpanWalk {
  FlyKernelInfo *k;
  MlirBlock entry;
} SpanWalk;

/* A GEP into an argument's tensor with a 32-bit index: the index, in its
   elements, is below 2^31, so the tensor may span at most 2^31 of them
   (in the parameter's elements). Fly computes offsets in i32. */
static MlirWalkResult gep_limits(MlirOperation op, void *ctx) {
  SpanWalk *w = ctx;
  if (!fly_lower_is(op, "llvm.getelementptr"))
    return MlirWalkResultAdvance;
  bool narrow = false;
  for (intptr_t i = 1; i < mlirOperationGetNumOperands(op); i++) {
    MlirType t = mlirValueGetType(mlirOperationGetOperand(op, i));
    narrow |= mlirTypeIsAInteger(t) && mlirIntegerTypeGetWidth(t) <= 32;
  }
  if (!narrow)
    return MlirWalkResultAdvance;
  MlirValue base = mlirOperationGetOperand(op, 0);
  intptr_t arg = pointer_arg(base, w->entry);
  MlirAttribute et =
      mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("elem_type"));
  int64_t step = mlirAttributeIsNull(et) ? 1 : elem_bytes(mlirTypeAttrGetValue(et));
  /* Not traced to an argument (through a phi, say): any global pointer
     may be one, so every tensor gets the limit. Shared memory's are the
     kernel's own. */
  unsigned space = mlirLLVMPointerTypeGetAddressSpace(mlirValueGetType(base));
  if (arg >= 0 || space == 0 || space == 1)
    limit_param(w->k, arg, (INT64_C(1) << 31) * step);
  return MlirWalkResultAdvance;
}

/* The most elements the tensor of each parameter may span, as its
   `max_span`: where the kernel reaches it with 32-bit offsets (every view's
   address, gep_limits), and AMD's buffer accesses' own limit (fly.arg_span,
   from fly_lower_buffer.c). A tensor only TMA reads (64-bit) has none. */
void fly_kernel_spans(MlirOperation op, FlyKernelInfo *k) {
  MlirBlock entry = mlirOperationGetNumRegions(op) > 0
                        ? mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0))
                        : (MlirBlock){NULL};
  if (!mlirBlockIsNull(entry)) {
    SpanWalk w = {k, entry};
    mlirOperationWalk(op, gep_limits, &w, MlirWalkPreOrder);
  }
  MlirAttribute a =
      mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("fly.arg_span"));
  if (mlirAttributeIsNull(a) || !mlirAttributeIsADenseI64Array(a))
    return;
  for (intptr_t i = 0; i < mlirDenseArrayGetNumElements(a); i++)
    limit_param(k, i, mlirDenseI64ArrayGetElement(a, i));
}
