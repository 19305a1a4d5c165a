/* fly-opt: runs a pass pipeline on an MLIR file with the Fly dialect and the
 * Fly passes registered, as mlir-opt does for upstream dialects.
 *
 *   fly-opt FILE [--pass-pipeline=PIPELINE] [-o OUT]
 *
 * PIPELINE mixes Fly passes (fly-layout-lowering, convert-fly-to-nvvm,
 * convert-fly-to-rocdl) with any upstream ones, comma-separated, optionally
 * inside builtin.module(...). FILE "-" reads standard input. The result is
 * printed (generic form for Fly operations) to standard output or OUT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_lower.h"
#include "fly_mlir.h"
#include "fly_output.h"
#include "fly_source.h"
#include "mlir-c/RegisterEverything.h"

static const char usage[] =
    "usage: fly-opt FILE [--pass-pipeline=PIPELINE] [-o OUT] [--mlir-print-debuginfo]\n"
    "\n"
    "Runs PIPELINE (Fly passes and upstream ones, comma-separated) on the MLIR\n"
    "module in FILE ('-': standard input) and prints the result.\n";

/* The usage, with the Fly passes' names. */
static void print_usage(FILE *out) {
  fputs(usage, out);
  fputs("Fly passes:", out);
  for (int i = 0; i < FLY_PASS_COUNT; i++)
    fprintf(out, "%s %s", i ? "," : "", fly_pass_name((FlyPassId)i));
  fputs(".\n", out);
}

int main(int argc, char **argv) {
  const char *file = NULL, *pipeline = NULL, *out_path = NULL;
  bool debuginfo = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      print_usage(stdout);
      return 0;
    } else if (strncmp(argv[i], "--pass-pipeline=", 16) == 0) {
      pipeline = argv[i] + 16;
    } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
      out_path = argv[++i];
    } else if (strcmp(argv[i], "--mlir-print-debuginfo") == 0) {
      debuginfo = true;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "fly-opt: error: unknown option '%s'\n", argv[i]);
      print_usage(stderr);
      return 2;
    } else if (file) {
      fprintf(stderr, "fly-opt: error: more than one input ('%s')\n", argv[i]);
      return 2;
    } else {
      file = argv[i];
    }
  }
  if (!file) {
    fprintf(stderr, "fly-opt: error: no input file\n");
    print_usage(stderr);
    return 2;
  }
  size_t len;
  const char *why_read = NULL;
  char *text = fly_read_file(file, &len, &why_read);
  if (!text) {
    fprintf(stderr, "fly-opt: error: cannot read '%s': %s\n", file, why_read);
    return 1;
  }
  FlyMlir m;
  if (!fly_mlir_init(&m)) {
    free(text);
    return 1;
  }
  mlirRegisterAllPasses();
  mlirRegisterAllLLVMTranslations(m.ctx);
  int status = 1;
  /* Parsed under the file's name, so that diagnostics say where. */
  MlirOperation parsed = mlirOperationCreateParse(
      m.ctx, mlirStringRefCreate(text, len),
      mlirStringRefCreateFromCString(strcmp(file, "-") ? file : "<stdin>"));
  MlirModule module = {NULL};
  if (!mlirOperationIsNull(parsed))
    module = mlirModuleFromOperation(parsed);
  if (!mlirOperationIsNull(parsed) && mlirModuleIsNull(module)) {
    /* One top-level operation other than a module goes into one. */
    module = mlirModuleCreateEmpty(mlirOperationGetLocation(parsed));
    mlirBlockAppendOwnedOperation(mlirModuleGetBody(module), parsed);
  } else if (mlirOperationIsNull(parsed)) {
    /* Several top-level operations: the module parser wraps them, as
       mlir-opt does (its locations then name no file). */
    char *first = fly_mlir_take_messages(&m);
    module = mlirModuleCreateParse(m.ctx, mlirStringRefCreate(text, len));
    if (mlirModuleIsNull(module)) {
      free(fly_mlir_take_messages(&m));
      fputs(first ? first : "", stderr);
    }
    free(first);
  }
  if (mlirModuleIsNull(module)) {
    fprintf(stderr, "fly-opt: error: '%s' is not an MLIR module\n", file);
  } else {
    bool ok = true;
    if (pipeline) {
      MlirPassManager pm = mlirPassManagerCreate(m.ctx);
      ok = fly_pass_pipeline_add(pm, pipeline, stderr);
      if (!ok)
        fprintf(stderr, "\nfly-opt: error: cannot parse the pipeline '%s'\n", pipeline);
      else
        ok = mlirLogicalResultIsSuccess(mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module)));
      mlirPassManagerDestroy(pm);
    }
    char *why = fly_mlir_take_messages(&m);
    if (why)
      fprintf(stderr, "%s", why);
    free(why);
    if (ok) {
      FlyOutput out;
      char err[1200];
      bool written = fly_output_open(&out, out_path, err, sizeof err);
      if (written) {
        fly_mlir_print(mlirModuleGetOperation(module), out.f, debuginfo);
        written = fly_output_close(&out, true, err, sizeof err);
      }
      if (written)
        status = 0;
      else
        fprintf(stderr, "fly-opt: error: %s\n", err);
    }
    mlirModuleDestroy(module);
  }
  fly_mlir_release(&m);
  free(text);
  return status;
}
