/* fly_codegen.c — a gpu.module through LLVM, with Fly's diagnostic handler
 * (fly_codegen.h). */
#include "fly_codegen.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llvm-c/Core.h"
#include "llvm-c/Error.h"
#include "llvm-c/Target.h"
#include "llvm-c/TargetMachine.h"
#include "llvm-c/Transforms/PassBuilder.h"
#include "mlir-c/Target/LLVMIR.h"

/* The two back ends Fly compiles for. */
static void init_targets(void) {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
  LLVMInitializeAMDGPUTargetInfo();
  LLVMInitializeAMDGPUTarget();
  LLVMInitializeAMDGPUTargetMC();
  LLVMInitializeAMDGPUAsmPrinter();
}

/* ---- messages ------------------------------------------------------------------------- */

/* "... in function 'name'": the name, the function the message is about. */
static void function_named(const char *text, char *out, size_t n) {
  static const char mark[] = "in function '";
  const char *at = NULL;
  for (const char *p = strstr(text, mark); p; p = strstr(p + 1, mark))
    at = p + sizeof mark - 1;
  const char *end = at ? strchr(at, '\'') : NULL;
  out[0] = '\0';
  if (end)
    snprintf(out, n, "%.*s", (int)(end - at), at);
}

static void keep(FlyCodegenReport *r, bool error, const char *text) {
  static const char unknown[] = "<unknown>:0:0: ";
  if (strncmp(text, unknown, sizeof unknown - 1) == 0)
    text += sizeof unknown - 1;
  FlyCodegenMessage *m = &r->messages[r->count];
  if (!(m->text = strdup(text)))
    return;
  m->error = error;
  function_named(m->text, m->function, sizeof m->function);
  r->count++;
}

/* LLVM calls this for every diagnostic of our context, instead of printing
   it (and exiting, for an error). Remarks and notes are not reported. */
static void on_diagnostic(LLVMDiagnosticInfoRef d, void *user) {
  FlyCodegenReport *r = user;
  LLVMDiagnosticSeverity s = LLVMGetDiagInfoSeverity(d);
  if (s != LLVMDSError && s != LLVMDSWarning)
    return;
  r->errors += s == LLVMDSError;
  if (r->count == FLY_CODEGEN_MAX_MESSAGES)
    return;
  char *text = LLVMGetDiagInfoDescription(d);
  if (text)
    keep(r, s == LLVMDSError, text);
  LLVMDisposeMessage(text);
}

static bool failure(FlyCodegenReport *r, const char *what, const char *detail) {
  size_t n = strlen(what) + (detail ? strlen(detail) : 0) + 3;
  free(r->failure);
  if ((r->failure = malloc(n)))
    snprintf(r->failure, n, "%s%s%s", what, detail ? ": " : "", detail ? detail : "");
  return false;
}

/* An LLVMErrorRef as a failure (consuming it); true when there was none. */
static bool check(FlyCodegenReport *r, const char *what, LLVMErrorRef e) {
  if (!e)
    return true;
  char *msg = LLVMGetErrorMessage(e);
  failure(r, what, msg);
  LLVMDisposeErrorMessage(msg);
  return false;
}

/* ---- the steps -------------------------------------------------------------------------- */

/* A target machine as MLIR's serialiser makes one: default options
   (t->opt_level is 0 to 3). */
static LLVMTargetMachineRef target_machine(const FlyCodegenTarget *t, FlyCodegenReport *r) {
  LLVMTargetRef target;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(t->triple, &target, &err)) {
    failure(r, "LLVM has no target for the triple", err);
    LLVMDisposeMessage(err);
    return NULL;
  }
  static const LLVMCodeGenOptLevel levels[] = {LLVMCodeGenLevelNone, LLVMCodeGenLevelLess,
                                               LLVMCodeGenLevelDefault, LLVMCodeGenLevelAggressive};
  LLVMTargetMachineRef tm =
      LLVMCreateTargetMachine(target, t->triple, t->chip, t->features, levels[t->opt_level],
                              LLVMRelocDefault, LLVMCodeModelDefault);
  if (!tm)
    failure(r, "LLVM cannot make a target machine for", t->chip);
  return tm;
}

/* The triple and data layout of the target machine, as the serialiser sets
   them before anything else. */
static void set_layout(LLVMModuleRef mod, LLVMTargetMachineRef tm) {
  char *triple = LLVMGetTargetMachineTriple(tm);
  LLVMSetTarget(mod, triple);
  LLVMDisposeMessage(triple);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(mod, dl);
  LLVMDisposeTargetData(dl);
}

/* LLVM's default pipeline at opt_level, with the tuning of MLIR's
   makeOptimizingTransformer (every loop and vector transformation on). */
static bool optimise(LLVMModuleRef mod, LLVMTargetMachineRef tm, int opt_level,
                     FlyCodegenReport *r) {
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  LLVMPassBuilderOptionsSetLoopUnrolling(po, 1);
  LLVMPassBuilderOptionsSetLoopInterleaving(po, 1);
  LLVMPassBuilderOptionsSetLoopVectorization(po, 1);
  LLVMPassBuilderOptionsSetSLPVectorization(po, 1);
  char pipeline[16];
  snprintf(pipeline, sizeof pipeline, "default<O%d>", opt_level);
  bool ok = check(r, "LLVM's optimiser failed", LLVMRunPasses(mod, pipeline, tm, po));
  LLVMDisposePassBuilderOptions(po);
  return ok;
}

static char *copy_buffer(LLVMMemoryBufferRef b, size_t *len) {
  size_t n = LLVMGetBufferSize(b);
  char *out = malloc(n + 1);
  if (!out)
    return NULL;
  memcpy(out, LLVMGetBufferStart(b), n);
  out[n] = '\0';
  *len = n;
  return out;
}

static char *emit(LLVMModuleRef mod, LLVMTargetMachineRef tm, FlyCodegenKind kind, size_t *len,
                  FlyCodegenReport *r) {
  LLVMMemoryBufferRef buf = NULL;
  char *err = NULL, *out = NULL;
  LLVMCodeGenFileType type = kind == FLY_CODEGEN_ASM ? LLVMAssemblyFile : LLVMObjectFile;
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, type, &err, &buf)) {
    failure(r, "LLVM's code generator failed", err);
    LLVMDisposeMessage(err);
  } else if (r->errors == 0 && !(out = copy_buffer(buf, len))) {
    failure(r, "out of memory", NULL);
  }
  if (buf)
    LLVMDisposeMemoryBuffer(buf);
  return out;
}

char *fly_codegen(MlirOperation gpu_module, const FlyCodegenTarget *target, FlyCodegenKind kind,
                  size_t *len, FlyCodegenReport *report) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  memset(report, 0, sizeof *report);
  FlyCodegenTarget clamped = *target;
  clamped.opt_level = target->opt_level < 0 ? 0 : target->opt_level > 3 ? 3 : target->opt_level;
  const FlyCodegenTarget *t = &clamped;
  pthread_once(&once, init_targets);
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMContextSetDiagnosticHandler(ctx, on_diagnostic, report);
  LLVMModuleRef mod = mlirTranslateModuleToLLVMIR(gpu_module, ctx);
  LLVMTargetMachineRef tm = mod ? target_machine(t, report) : NULL;
  char *out = NULL;
  if (!mod) {
    failure(report, "the module does not translate to LLVM IR", NULL);
  } else if (tm) {
    set_layout(mod, tm);
    if (optimise(mod, tm, t->opt_level, report) && report->errors == 0) {
      if (fly_codegen_split_phis(mod))
        out = emit(mod, tm, kind, len, report);
      else
        failure(report, "out of memory", NULL);
    }
  }
  if (tm)
    LLVMDisposeTargetMachine(tm);
  if (mod)
    LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  return out;
}

void fly_codegen_report_release(FlyCodegenReport *r) {
  for (int i = 0; i < r->count; i++)
    free(r->messages[i].text);
  free(r->failure);
  memset(r, 0, sizeof *r);
}
