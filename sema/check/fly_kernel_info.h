/* fly_kernel_info.h — what a host needs to know to launch a kernel
 * specialisation: its parameters as arguments, and its launch rule.
 *
 * When FlyCheckOptions.kernel_info is set, the semantic pass records one
 * FlyKernelInfo for each kernel specialisation it checks: the signature
 * (names, kinds, types, layouts with their `?` leaves, where each
 * parameter's arguments start) and the kernel's `launch` block, run with a
 * recording emitter so that what it computes from runtime arguments
 * becomes a launch program in the bundle's instruction set (fly_bundle.h).
 * The bundle writer copies both into the bundle. Plain C, no MLIR. */
#ifndef FLY_KERNEL_INFO_H
#define FLY_KERNEL_INFO_H

#include <stdbool.h>
#include <stdint.h>

#include "fly_bundle.h"

typedef struct FlyParamInfo {
  char *name;
  uint32_t kind;  /* FLY_PARAM_* */
  uint32_t dtype; /* FLY_DTYPE_* */
  char *type;     /* the (element) type as Fly writes it */
  char *layout;   /* a tensor's "shape:stride" with `?` leaves; a const's value */
  uint32_t dyn_shape, dyn_stride, first_arg;
  uint32_t align, stride_align; /* FlyBundleParam's: what the kernel's accesses assume */
  uint32_t max_span;            /* FlyBundleParam's: the most bytes a tensor may span */
} FlyParamInfo;

/* A `require` of the launch block: instruction `insn` of the program. */
typedef struct FlyRequireInfo {
  uint32_t insn;
  char *message; /* the kernel's message (the condition's text when it gives none) */
  char *where;   /* "file.fly:LINE:COL: CONDITION" */
} FlyRequireInfo;

typedef struct FlyKernelInfo {
  char *name, *spec, *target; /* "gemm", "BM=64 BN=64", "sm_90" */
  int nparams;
  FlyParamInfo *params;
  uint32_t nargs;
  bool has_launch;
  uint32_t ninsns, cap;
  FlyBundleInsn *code;
  FlyBundleOperand rule[7]; /* grid x y z, block x y z, shared */
  uint32_t nrequires;
  FlyRequireInfo *requires;
  uint32_t static_shared; /* FlyBundleKernel's: set by the back end */
  uint32_t cluster[3];    /* the launch block's cluster shape; 0s without one */
  /* Its tensor maps (tensor_map in the body), each an argument after the
     parameters' (nargs counts them). */
  uint32_t ntmaps;
  FlyBundleTensorMap *tmaps;
  struct FlyKernelInfo *next;
} FlyKernelInfo;

typedef struct FlyKernelInfoList {
  FlyKernelInfo *first, *last;
} FlyKernelInfoList;

void fly_kernel_info_list_release(FlyKernelInfoList *l);
/* Frees what one record holds (not the record). */
void fly_kernel_info_clear(FlyKernelInfo *k);

#endif
