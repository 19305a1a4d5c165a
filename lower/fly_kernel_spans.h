/* fly_kernel_spans.h — how far each tensor of a lowered kernel may span. */
#ifndef FLY_KERNEL_SPANS_H
#define FLY_KERNEL_SPANS_H

#include "fly_kernel_info.h"
#include "mlir-c/IR.h"

/* Sets the max_span (elements; FlyBundleParam's) of k's tensor parameters
   from its function op in the LLVM dialect: 2^31 of a GEP's elements where
   the kernel addresses a tensor with 32-bit offsets, and what the passes
   recorded in fly.arg_span (AMD's buffer accesses). */
void fly_kernel_spans(MlirOperation op, FlyKernelInfo *k);

#endif
