/* flyc_compile.c — `flyc compile`: the command line over libflyc (libflyc.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fly_output.h"
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
    "                           replaced only when compiling and writing all of\n"
    "                           it succeed, never left partly written\n"
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

/* Writes what was compiled to path (NULL or "-": standard output). A file
   is replaced only when everything compiled (ok) and every byte reached it;
   standard output gets what there is, as each part of a split file comes
   out on its own. False after saying why. */
static bool write_output(const char *path, const char *data, size_t len, bool ok) {
  bool to_stdout = !path || strcmp(path, "-") == 0;
  if (!ok && !to_stdout)
    return false;
  FlyOutput out;
  char why[1200];
  bool written = fly_output_open(&out, path, why, sizeof why);
  if (written) {
    fly_output_write(&out, data, len);
    written = fly_output_close(&out, true, why, sizeof why);
  }
  if (!written)
    fprintf(stderr, "flyc compile: error: %s\n", why);
  return written && ok;
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
  /* The output is collected in memory and written when the compile is
     over: a file is then made whole (fly_output.h), and none exists while
     the compile runs, whatever becomes of it. */
  char *data = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&data, &len);
  if (!mem) {
    fputs("flyc compile: error: out of memory\n", stderr);
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
    status = compile_split(&lib, mem);
  else
    status = compile_unit(&lib, NULL, 0, mem);
  bool held = !ferror(mem);
  if (fclose(mem) != 0 || !held) {
    fputs("flyc compile: error: out of memory\n", stderr);
    status = FLYC_ERRORS;
  } else if (!write_output(o.output, data, len, status == FLYC_OK) && status == FLYC_OK) {
    status = FLYC_ERRORS;
  }
  free(data);
  flyc_free_options(&o);
  return status;
}
