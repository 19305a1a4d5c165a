/* flyc_compile.c — `flyc compile`: the command line over libflyc (libflyc.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flyc_commands.h"
#include "flyc_options.h"
#include "libflyc.h"
#include "libflyc_internal.h"

static const char compile_usage[] =
    "usage: flyc compile FILE --emit=KIND [-o OUT] [--target=ARCH[,ARCH...]]\n"
    "                    [--kernel NAME] [-D NAME=VALUE ...] [options]\n"
    "\n"
    "Checks FILE as 'flyc check' does, traces each kernel (or only NAME) for its\n"
    "specialisation, and lowers it for the target. Compiled results are kept in\n"
    "a disk cache: compiling the same sources with the same options again reads\n"
    "them back without loading MLIR.\n"
    "\n"
    "Options:\n"
    "  --emit=bundle            a bundle (.flyb) for the runtime: each kernel's\n"
    "                           binary per target, its parameters and launch rule\n"
    "  --emit=fly               the Fly-level MLIR module (Fly dialect with gpu,\n"
    "                           arith, math, scf and vector), verified\n"
    "  --emit=irdl              the Fly dialect itself, in IRDL (FILE is not read)\n"
    "  --emit=llvm              the LLVM IR of the kernels, after the Fly passes and\n"
    "                           the conversion to NVVM or ROCDL\n"
    "  --emit=ptx               PTX (NVIDIA targets), through NVVM\n"
    "  --emit=asm               the target's assembly: PTX, or GCN through ROCDL\n"
    "  --emit=cubin             an NVIDIA cubin (needs CUDA's ptxas)\n"
    "  --emit=hsaco             an AMD code object (needs ld.lld from lld-22)\n"
    "  -o OUT                   write to OUT instead of standard output; OUT is\n"
    "                           replaced only when compiling succeeds\n"
    "  --target=ARCH[,ARCH...]  the target, or several (listed, or --target\n"
    "                           repeated) for one bundle, of\n"
    "                           {targets}\n"
    "                           Default: $FLYC_TARGET, else the GPU of this\n"
    "                           machine, else {default}\n"
    "  -O0 | -O1 | -O2 | -O3    LLVM's optimisation level for the device code\n"
    "                           (default -O3)\n"
    "  --kernel=NAME            trace only the kernel NAME (all are checked)\n"
    "  -D NAME=VALUE            bind the const parameter NAME of the kernels\n"
    "  --no-cache               neither read nor write the disk cache\n"
    "  --split-input-file       compile each part of FILE between '// -----' lines\n"
    "                           on its own; print the outputs with the same marks\n"
    "  --locations              print each operation's .fly source location\n"
    "{checking}\n"
    "\n"
    "Environment:\n"
    "  FLYC_CACHE=0             turn the disk cache off\n"
    "  FLYC_CACHE_DIR=DIR       where it is (default $XDG_CACHE_HOME/fly or\n"
    "                           ~/.cache/fly); see 'flyc cache'\n"
    "  FLYC_TARGET=ARCH[,...]   the targets when --target is not given\n"
    "  FLYC_DUMP_IR=1           write the module after every stage, the LLVM IR and\n"
    "                           the assembly to FLYC_DUMP_DIR (default ./flyc-dump)\n"
    "                           /FILE.ARCH/, numbered (the cache is not used then)\n"
    "  FLYC_PTXAS, FLYC_LLD     the ptxas and ld.lld to use\n"
    "  FLYC_BACKEND             the path of libflyc_lower.so, if not beside flyc\n";

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
  /* A device or a pipe (-o /dev/null) is written directly: renaming over
     it would replace it. */
  struct stat st;
  if (stat(out->path, &st) == 0 && !S_ISREG(st.st_mode)) {
    out->f = fopen(out->path, "wb");
    if (!out->f) {
      fprintf(stderr, "flyc compile: error: cannot write '%s': ", out->path);
      perror(NULL);
      return false;
    }
    return true;
  }
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
  if (!out->tmp)
    return ok;
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

/* Compiles one unit (the file, or one part of it given as text) and writes
   the output to out. Returns the exit status. */
static int compile_unit(FlycOptions *lib, const char *text, size_t len, FILE *out) {
  FlycCompileResult r = flyc_compile_parsed(lib->file, text, len, lib);
  fputs(flycCompileResultDiagnostics(r), stderr);
  size_t n;
  const void *data = flycCompileResultData(r, &n);
  if (data)
    fwrite(data, 1, n, out);
  int status = flycCompileResultStatus(r);
  flycCompileResultDestroy(r);
  return status;
}

/* A line `// -----` ends one part of a split file. */
static bool is_split_line(const char *p, const char *end) {
  static const char mark[] = "// -----";
  size_t n = sizeof mark - 1;
  if ((size_t)(end - p) < n || memcmp(p, mark, n) != 0)
    return false;
  for (p += n; p < end && *p != '\n'; p++)
    if (*p != ' ' && *p != '\t' && *p != '\r')
      return false;
  return true;
}

/* --split-input-file: each part between `// -----` lines is compiled on its
   own, as mlir-opt does, and the modules are printed with the same marks
   between them. A part is preceded by as many empty lines as come before it
   in the file, so its diagnostics give the file's own line numbers. */
static int compile_split(FlycOptions *o, FILE *out) {
  char why[256];
  FlySourceManager sm;
  fly_sources_init(&sm);
  int file = fly_sources_load(&sm, o->file, why, sizeof why);
  if (file < 0) {
    fprintf(stderr, "flyc compile: error: cannot read '%s': %s\n", o->file, why);
    fly_sources_release(&sm);
    return FLYC_ERRORS;
  }
  const FlySource *src = fly_source(&sm, file);
  const char *text = src->text, *end = src->text + src->len;
  char *buf = malloc(src->len + 1);
  int status = buf ? FLYC_OK : FLYC_ERRORS;
  size_t lines = 0; /* lines before the current part */
  bool first = true;
  for (const char *part = text; buf && part <= end;) {
    /* The part runs to the next mark at the start of a line, or the end. */
    const char *p = part;
    size_t part_lines = 0;
    while (p < end && !(is_split_line(p, end) && (p == text || p[-1] == '\n'))) {
      const char *nl = memchr(p, '\n', (size_t)(end - p));
      p = nl ? nl + 1 : end;
      part_lines++;
    }
    memset(buf, '\n', lines);
    memcpy(buf + lines, part, (size_t)(p - part));
    if (!first)
      fputs("// -----\n", out);
    first = false;
    if (compile_unit(o, buf, lines + (size_t)(p - part), out) != FLYC_OK)
      status = FLYC_ERRORS;
    lines += part_lines;
    if (p == end)
      break;
    /* Past the mark's line. */
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    part = nl ? nl + 1 : end;
    lines++;
  }
  free(buf);
  fly_sources_release(&sm);
  return status;
}

int flyc_compile_command(int argc, char **argv) {
  FlycOptions o;
  bool help;
  unsigned accepted = FLYC_OPT_STDLIB | FLYC_OPT_SEMA | FLYC_OPT_COMPILE;
  int status = flyc_parse_options("compile", compile_usage, accepted, argc, argv, &o, &help);
  if (status == FLYC_OK && !help && !o.emit) {
    fputs("flyc compile: error: say what to write: --emit=bundle, --emit=ptx ...\n"
          "run 'flyc compile --help' for usage\n",
          stderr);
    status = FLYC_USAGE;
  }
  if (status != FLYC_OK || help) {
    flyc_free_options(&o);
    return status;
  }
  Output out;
  if (!open_output(&out, o.output)) {
    flyc_free_options(&o);
    return FLYC_ERRORS;
  }
  /* libflyc's options: the command line's, less what only the command does
     (-o, --split-input-file), with the colour decided here, where the
     diagnostics are printed. */
  FlycOptions lib = o;
  lib.output = NULL;
  lib.split = false;
  if (lib.unit.color < 0)
    lib.unit.color = fly_diag_color_default(stderr);
  if (o.split)
    status = compile_split(&lib, out.f);
  else
    status = compile_unit(&lib, NULL, 0, out.f);
  if (!close_output(&out, status == FLYC_OK) && status == FLYC_OK)
    status = FLYC_ERRORS;
  flyc_free_options(&o);
  return status;
}
