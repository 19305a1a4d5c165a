/* flyc_compile.c — `flyc compile`: check the kernels and trace them to MLIR. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fly_trace.h"
#include "flyc_commands.h"
#include "flyc_options.h"

static const char compile_usage[] =
    "usage: flyc compile FILE --emit=fly [-o OUT] [--kernel NAME] [-D NAME=VALUE ...]\n"
    "                    [--target=ARCH] [options]\n"
    "\n"
    "Checks FILE as 'flyc check' does, then traces each kernel (or only NAME)\n"
    "for its specialisation and writes the module.\n"
    "\n"
    "Options:\n"
    "  --emit=fly               the Fly-level MLIR module (Fly dialect with gpu,\n"
    "                           arith, math, scf and vector), verified\n"
    "  --emit=irdl              the Fly dialect itself, in IRDL (FILE is not read)\n"
    "  -o OUT                   write to OUT instead of standard output; OUT is\n"
    "                           replaced only when compiling succeeds\n"
    "  --kernel=NAME            trace only the kernel NAME (all are checked)\n"
    "  -D NAME=VALUE            bind the const parameter NAME of the kernels\n"
    "  --target=ARCH            sm_80, sm_90 (the default), sm_90a, gfx90a, gfx942,\n"
    "                           gfx950 or gfx1201\n"
    "  --step-limit=N           compile-time steps allowed (default 1000000)\n"
    "  --depth-limit=N          nested helper calls allowed (default 200)\n"
    "  --stdlib=DIR             where 'import std.x;' looks\n"
    "  --diagnostics=text|json  how to print diagnostics\n"
    "  --color=auto|always|never\n"
    "  --error-limit=N          stop after N errors (default 20, 0: no limit)\n"
    "  -Werror                  treat warnings as errors\n";

typedef struct Output {
  const char *path; /* NULL: standard output */
  char *tmp;
  FILE *f;
} Output;

/* Output goes to a temporary file beside OUT, renamed over it at the end,
   so that a failed compile leaves no partial file. */
static bool open_output(Output *out, const char *path) {
  out->path = path && strcmp(path, "-") != 0 ? path : NULL;
  out->tmp = NULL;
  out->f = stdout;
  if (!out->path)
    return true;
  size_t n = strlen(out->path) + 32;
  out->tmp = malloc(n);
  if (!out->tmp)
    return false;
  snprintf(out->tmp, n, "%s.tmp.%ld", out->path, (long)getpid());
  out->f = fopen(out->tmp, "wb");
  if (!out->f) {
    fprintf(stderr, "flyc compile: error: cannot write '%s': ", out->path);
    perror(NULL);
    free(out->tmp);
    out->tmp = NULL;
    return false;
  }
  return true;
}

static bool close_output(Output *out, bool ok) {
  if (!out->path)
    return fflush(stdout) == 0 && ok;
  ok = fclose(out->f) == 0 && ok;
  if (ok && rename(out->tmp, out->path) != 0) {
    fprintf(stderr, "flyc compile: error: cannot write '%s': ", out->path);
    perror(NULL);
    ok = false;
  }
  if (!ok)
    remove(out->tmp);
  free(out->tmp);
  return ok;
}

int flyc_compile_command(int argc, char **argv) {
  FlycOptions o;
  bool help;
  unsigned accepted = FLYC_OPT_STDLIB | FLYC_OPT_SEMA | FLYC_OPT_COMPILE;
  int status = flyc_parse_options("compile", compile_usage, accepted, argc, argv, &o, &help);
  if (status == FLYC_OK && !help && !o.emit) {
    fputs("flyc compile: error: say what to write: --emit=fly\n"
          "run 'flyc compile --help' for usage\n",
          stderr);
    status = FLYC_USAGE;
  }
  if (status != FLYC_OK || help) {
    flyc_free_options(&o);
    return status;
  }
  Output out;
  if (strcmp(o.emit, "irdl") == 0) {
    bool ok = open_output(&out, o.output);
    if (ok)
      fputs(fly_dialect_irdl, out.f);
    flyc_free_options(&o);
    return ok && close_output(&out, true) ? FLYC_OK : FLYC_ERRORS;
  }
  FlyUnit u;
  fly_unit_init(&u, stderr);
  flyc_apply_options(&u, &o);
  fly_unit_load(&u, o.file);
  fly_unit_check_definitions(&u);
  FlyMlir m;
  if (fly_unit_ok(&u) && fly_mlir_init(&m)) {
    MlirModule module;
    if (fly_trace_unit(&u, &o.check, &m, &module)) {
      bool ok = open_output(&out, o.output);
      if (ok) {
        fly_mlir_print(mlirModuleGetOperation(module), out.f);
        ok = close_output(&out, true);
      }
      if (!ok)
        u.diag.errors++;
      mlirModuleDestroy(module);
    }
    fly_mlir_release(&m);
  } else if (fly_unit_ok(&u)) {
    u.diag.errors++;
  }
  flyc_free_options(&o);
  return flyc_finish(&u);
}
