/* fly_codegen.h — a gpu.module to PTX, GCN or object code, with LLVM's
 * errors coming back to the caller.
 *
 * MLIR's gpu-module-to-binary does this in an LLVM context it makes itself,
 * with no diagnostic handler. An error LLVM finds while generating code (an
 * AMD kernel over the LDS limit, an operation the target cannot select) is
 * then printed as "error: <unknown>:0:0: ..." and ends the process with
 * exit(1): flyc dies with no location, and so does a Python program that
 * compiles through libflyc. So the steps of that serialiser are taken here
 * instead, in an LLVM context of ours whose handler keeps each message for
 * the caller to report at the kernel it concerns: the module is translated
 * to LLVM IR, given the target machine's triple and data layout, optimised
 * by LLVM's default pipeline with the tuning MLIR uses, and compiled by the
 * same target machine, so the output is the serialiser's. (Its other steps
 * do nothing for Fly: it links no device library, and ROCm's control
 * variables only steer those libraries.) */
#ifndef FLY_CODEGEN_H
#define FLY_CODEGEN_H

#include <stdbool.h>
#include <stddef.h>

#include "mlir-c/IR.h"

/* What LLVM reported: its errors and warnings in its own words, without the
   "<unknown>:0:0: " it writes where it has no debug location. */
enum { FLY_CODEGEN_MAX_MESSAGES = 8 };
typedef struct FlyCodegenMessage {
  bool error;         /* else a warning */
  char *text;         /* malloc'd */
  char function[256]; /* the function it names ("... in function 'k'"), or "" */
} FlyCodegenMessage;

typedef struct FlyCodegenReport {
  FlyCodegenMessage messages[FLY_CODEGEN_MAX_MESSAGES];
  int count;
  int errors;    /* every error, including those past the ones kept */
  char *failure; /* why nothing was made when LLVM reported no error (malloc'd) */
} FlyCodegenReport;

typedef struct FlyCodegenTarget {
  const char *triple;   /* nvptx64-nvidia-cuda, amdgcn-amd-amdhsa */
  const char *chip;     /* sm_90, gfx942 ... */
  const char *features; /* "+ptx80", "" */
  int opt_level;        /* LLVM's, 0 to 3, for the optimiser and the code generator */
} FlyCodegenTarget;

typedef enum FlyCodegenKind { FLY_CODEGEN_ASM, FLY_CODEGEN_OBJECT } FlyCodegenKind;

/* The assembly or object code of gpu_module (a gpu.module whose contents
   are in the LLVM dialect), malloc'd with its length in *len. NULL when
   LLVM reported an error or the module did not translate (MLIR then says
   why through its context's diagnostics); the report says why and holds
   the warnings either way: release it. */
char *fly_codegen(MlirOperation gpu_module, const FlyCodegenTarget *target, FlyCodegenKind kind,
                  size_t *len, FlyCodegenReport *report);
void fly_codegen_report_release(FlyCodegenReport *report);

/* fly_codegen_phis.c: each phi of a struct (of structs) of scalars split
   into a phi per field, after the optimiser, for the instruction selector.
   False when out of memory. */
struct LLVMOpaqueModule;
bool fly_codegen_split_phis(struct LLVMOpaqueModule *mod);

#endif
