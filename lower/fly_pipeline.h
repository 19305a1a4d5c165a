/* fly_pipeline.h — from Fly IR to what a GPU loads: the upstream stages per
 * target (attach the target, gpu to NVVM or ROCDL, gpu to LLVM), then LLVM's
 * optimiser and code generator on the gpu.module (fly_codegen.h), ending in
 * PTX for NVIDIA and GCN assembly or a code object for AMD.
 *
 * The Fly passes (fly_lower.h) run first, after the target is attached. */
#ifndef FLY_PIPELINE_H
#define FLY_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>

#include "fly_mlir.h"
#include "fly_target.h"

/* The first operation whose name starts with prefix ("fly." for the Fly
   dialect), if any: its name and the .fly location it was traced from
   (file "" when it has none). */
typedef struct FlyPendingOp {
  char name[64];
  char file[512];
  unsigned line, col;
} FlyPendingOp;
bool fly_pipeline_find_op(MlirModule module, const char *prefix, FlyPendingOp *out);

/* What fly_pipeline_compile gives: the LLVM IR of the gpu.module (text),
   its assembly (PTX or GCN), or its binary (AMD: an HSACO code object; for
   NVIDIA the caller runs ptxas on the PTX). */
typedef enum FlyEmitKind { FLY_EMIT_LLVM, FLY_EMIT_ASM, FLY_EMIT_BIN } FlyEmitKind;

/* What LLVM's code generator reported (fly_codegen.h), each message at the
   kernel it concerns: the one it names, else the module's first; `at` has
   file "" when no kernel has a location. */
typedef struct FlyPipelineMessage {
  bool error; /* else a warning */
  char *text; /* malloc'd */
  FlyPendingOp at;
} FlyPipelineMessage;

typedef struct FlyPipelineReport {
  FlyPipelineMessage messages[8];
  int count;
  int errors;
} FlyPipelineReport;
void fly_pipeline_report_release(FlyPipelineReport *r);

/* Lowers the module in place for a target (a row of fly_targets.def), with
   LLVM at opt_level (0 to 3), and returns what kind asks for, malloc'd,
   with its length in *len. NULL after an error: the code generator's
   errors are in *report (with its warnings, which a success may have too:
   release it in every case), any other failure's reason in *why (malloc'd,
   MLIR's messages; may be NULL). With dump a directory, every stage's module
   is written there, numbered (00_origin.mlir, 01_nvvm-attach-target.mlir
   ...), then the LLVM IR and the assembly. inspect, when given, is called
   with the module in the LLVM dialect, before it is translated: to read what
   the passes recorded (fly_lower_align.c). */
typedef struct FlyPipelineInspect {
  void (*fn)(MlirModule module, void *ctx);
  void *ctx;
} FlyPipelineInspect;

char *fly_pipeline_compile(FlyMlir *m, MlirModule module, const FlyTarget *target, int opt_level,
                           FlyEmitKind kind, const char *dump, size_t *len, char **why,
                           FlyPipelineReport *report, const FlyPipelineInspect *inspect);

#endif
