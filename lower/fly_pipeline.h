/* fly_pipeline.h — from Fly IR to what a GPU loads: the upstream stages per
 * target (attach the target, gpu to NVVM or ROCDL, gpu to LLVM, serialise
 * the gpu.module), ending in PTX for NVIDIA and GCN assembly for AMD.
 *
 * First step of the lowering: kernels made only of upstream operations
 * (numbers, control flow, GPU indices, printf) lower end to end; the Fly
 * lowering passes that remove Fly operations come next, and until then a
 * Fly operation is reported at its location. */
#ifndef FLY_PIPELINE_H
#define FLY_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>

#include "fly_mlir.h"

/* The first operation whose name starts with prefix ("fly." for the Fly
   dialect), if any: its name and the .fly location it was traced from
   (file "" when it has none). */
typedef struct FlyPendingOp {
  char name[64];
  char file[512];
  unsigned line, col;
} FlyPendingOp;
bool fly_pipeline_find_op(MlirModule module, const char *prefix, FlyPendingOp *out);

/* Lowers the module in place for arch (sm_80, sm_90, sm_90a, gfx90a,
   gfx942, gfx950, gfx1201) and returns the text of its serialised
   gpu.module (PTX or GCN assembly), malloc'd, with its length in *len. NULL
   after an error, with MLIR's messages in *why (malloc'd, may be NULL). */
char *fly_pipeline_assembly(FlyMlir *m, MlirModule module, const char *arch, size_t *len,
                            char **why);

#endif
