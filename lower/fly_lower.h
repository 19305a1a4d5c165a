/* fly_lower.h — the Fly passes, MLIR external passes written in C.
 *
 *   fly-layout-lowering   views (slices, divides, partitions) become a
 *                         pointer moved by their offset, computed with arith
 *                         from the layout and the runtime leaves; shared
 *                         tiles become workgroup globals, register fragments
 *                         private allocas; int tuples and coordinates become
 *                         arith. Afterwards every !fly.memref is made by
 *                         fly.make_memref(pointer, leaves...).
 *   convert-fly-to-nvvm   copies, loads, stores and atomics become LLVM
 *   convert-fly-to-rocdl  loads and stores (vectors where the atom and the
 *                         layouts allow), MMAs become nvgpu.mma.sync or
 *                         amdgpu.mfma, and the Fly atoms disappear.
 *
 * The upstream passes then take the module to NVVM or ROCDL (fly_pipeline.c).
 * Errors are MLIR diagnostics at the Fly operation's location, which is the
 * .fly source line it was traced from. */
#ifndef FLY_LOWER_H
#define FLY_LOWER_H

#include <stdbool.h>

#include "fly_mlir.h"
#include "mlir-c/Pass.h"

/* The Fly passes above, each named once (fly_lower_passes.c). */
typedef enum FlyPassId {
  FLY_PASS_LAYOUTS, /* fly-layout-lowering */
  FLY_PASS_NVVM,    /* convert-fly-to-nvvm */
  FLY_PASS_ROCDL,   /* convert-fly-to-rocdl */
  FLY_PASS_COUNT
} FlyPassId;
const char *fly_pass_name(FlyPassId id);

/* Whether name is one of the Fly passes above. */
bool fly_pass_known(const char *name);
/* A new instance of the Fly pass `name` (null when unknown). */
MlirPass fly_pass_create(const char *name);
/* Adds a comma-separated pipeline of passes to pm, each a Fly pass or an
   upstream one ("fly-layout-lowering,canonicalize,gpu.module(...)"); the
   upstream stretches are parsed by MLIR. False, with the reason written to
   err, when a pass or the text is unknown. */
bool fly_pass_pipeline_add(MlirPassManager pm, const char *pipeline, FILE *err);

/* ---- the passes' bodies (one file each) -------------------------------------------------------
 */
bool fly_lower_layouts(FlyMlir *m, MlirOperation root);
bool fly_lower_to_target(FlyMlir *m, MlirOperation root, bool amd);
/* After the kernels became llvm.funcs: the tensor map arguments their
   `fly.tensor_maps` attribute lists become 128-byte byval grid constants
   (fly_lower_tma.c). */
void fly_lower_tensor_map_args(MlirModule module);

#endif
