/* flyc_compile.c — `flyc compile`: check the kernels and trace them to MLIR. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fly_pipeline.h"
#include "fly_ptxas.h"
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
    "  --emit=llvm              the LLVM IR of the kernels, after the Fly passes and\n"
    "                           the conversion to NVVM or ROCDL\n"
    "  --emit=ptx               PTX (NVIDIA targets), through NVVM\n"
    "  --emit=asm               the target's assembly: PTX, or GCN through ROCDL\n"
    "  --emit=cubin             an NVIDIA cubin (needs CUDA's ptxas)\n"
    "  --emit=hsaco             an AMD code object (needs ld.lld from lld-22)\n"
    "  -o OUT                   write to OUT instead of standard output; OUT is\n"
    "                           replaced only when compiling succeeds\n"
    "  --kernel=NAME            trace only the kernel NAME (all are checked)\n"
    "  --split-input-file       compile each part of FILE between '// -----' lines\n"
    "                           on its own; print the modules with the same marks\n"
    "  --locations              print each operation's .fly source location\n"
    "  -D NAME=VALUE            bind the const parameter NAME of the kernels\n"
    "  --target=ARCH            sm_80, sm_90 (the default), sm_90a, gfx90a, gfx942,\n"
    "                           gfx950 or gfx1201\n"
    "  --step-limit=N           compile-time steps allowed (default 1000000)\n"
    "  --depth-limit=N          nested helper calls allowed (default 200)\n"
    "  --stdlib=DIR             where 'import std.x;' looks\n"
    "  --diagnostics=text|json  how to print diagnostics\n"
    "  --color=auto|always|never\n"
    "  --error-limit=N          stop after N errors (default 20, 0: no limit)\n"
    "  -Werror                  treat warnings as errors\n"
    "\n"
    "Environment: FLYC_DUMP_IR=1 writes the module after every stage, the LLVM IR\n"
    "and the assembly to FLYC_DUMP_DIR (default ./flyc-dump)/FILE.ARCH/, numbered.\n"
    "FLYC_PTXAS and FLYC_LLD name ptxas and ld.lld.\n";

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

/* The span of a location the tracer gave an operation (file:line:col). */
static FlySpan span_at(const FlyUnit *u, const FlyPendingOp *p) {
  uint32_t off;
  for (int f = 0; f < u->sources.count; f++)
    if (strcmp(u->sources.files[f].path, p->file) == 0 &&
        fly_source_offset(&u->sources, f, p->line, p->col, &off))
      return fly_span(f, off, off + 1);
  return fly_no_span();
}

/* FLYC_DUMP_IR=1: FLYC_DUMP_DIR (or ./flyc-dump)/FILE.ARCH, made if needed;
   NULL when dumps are off. */
static char *dump_dir(const char *file, const char *arch) {
  const char *on = getenv("FLYC_DUMP_IR");
  if (!on || !*on || strcmp(on, "0") == 0)
    return NULL;
  const char *root = getenv("FLYC_DUMP_DIR");
  if (!root || !*root)
    root = "flyc-dump";
  const char *base = strrchr(file, '/');
  base = base ? base + 1 : file;
  size_t stem = strlen(base);
  if (stem > 4 && strcmp(base + stem - 4, ".fly") == 0)
    stem -= 4;
  char *dir = malloc(strlen(root) + stem + strlen(arch) + 8);
  if (!dir)
    return NULL;
  sprintf(dir, "%s/%.*s.%s", root, (int)stem, base, arch);
  mkdir(root, 0777);
  mkdir(dir, 0777);
  return dir;
}

/* --emit=llvm|ptx|asm|cubin|hsaco: the module through the target's pipeline. */
static void write_lowered(FlyUnit *u, const FlycOptions *o, FlyMlir *m, MlirModule module,
                          FILE *out) {
  const char *arch = o->check.target.arch, *emit = o->emit;
  bool nvidia = strcmp(o->check.target.vendor, "nvidia") == 0;
  if ((strcmp(emit, "ptx") == 0 || strcmp(emit, "cubin") == 0) && !nvidia) {
    fly_error(&u->diag, fly_no_span(),
              "--emit=%s is for NVIDIA targets, and %s is AMD's (use --emit=asm for GCN "
              "assembly, --emit=hsaco for a code object)",
              emit, arch);
    return;
  }
  if (strcmp(emit, "hsaco") == 0 && nvidia) {
    fly_error(&u->diag, fly_no_span(),
              "--emit=hsaco is for AMD targets, and %s is NVIDIA's (use --emit=ptx or "
              "--emit=cubin)",
              arch);
    return;
  }
  FlyPendingOp p;
  if (!nvidia && fly_pipeline_find_op(module, "gpu.printf", &p)) {
    fly_error(&u->diag, span_at(u, &p),
              "printf cannot be compiled for %s yet: AMD's device printf needs ROCm's device "
              "library, which flyc does not use",
              arch);
    return;
  }
  FlyEmitKind kind = strcmp(emit, "llvm") == 0    ? FLY_EMIT_LLVM
                     : strcmp(emit, "hsaco") == 0 ? FLY_EMIT_BIN
                                                  : FLY_EMIT_ASM;
  size_t len = 0;
  char *why = NULL;
  char *dump = dump_dir(o->file, arch);
  char *text = fly_pipeline_compile(m, module, arch, kind, dump, &len, &why);
  free(dump);
  if (!text && m->err_msg && strncmp(m->err_msg, "internal error", 14) != 0) {
    /* A pass reported a problem at a .fly location: shown there. */
    FlyPendingOp at;
    snprintf(at.file, sizeof at.file, "%s", m->err_file);
    at.line = m->err_line;
    at.col = m->err_col;
    fly_error(&u->diag, span_at(u, &at), "%s (lowering for %s)", m->err_msg, arch);
    free(why);
    return;
  }
  if (!text) {
    fly_error(&u->diag, fly_no_span(),
              "internal error: lowering for %s failed (please report this): %s", arch,
              why ? why : "no message");
    free(why);
    return;
  }
  if (strcmp(emit, "cubin") == 0) {
    char *cubin = fly_ptxas_compile(text, len, arch, &len, &why);
    free(text);
    if (!cubin) {
      fly_error(&u->diag, fly_no_span(), "%s", why ? why : "ptxas failed");
      free(why);
      return;
    }
    text = cubin;
  }
  fwrite(text, 1, len, out);
  free(text);
}

/* Checks and traces one unit (the file, or one part of it given as text)
   and prints its module to out. Returns the exit status. */
static int compile_unit(const FlycOptions *o, const char *text, size_t len, FILE *out) {
  FlyUnit u;
  fly_unit_init(&u, stderr);
  flyc_apply_options(&u, o);
  if (text)
    fly_unit_load_text(&u, o->file, text, len);
  else
    fly_unit_load(&u, o->file);
  fly_unit_check_definitions(&u);
  FlyMlir m;
  if (fly_unit_ok(&u) && fly_mlir_init(&m)) {
    MlirModule module;
    if (fly_trace_unit(&u, &o->check, &m, &module)) {
      if (strcmp(o->emit, "fly") == 0)
        fly_mlir_print(mlirModuleGetOperation(module), out, o->locations);
      else
        write_lowered(&u, o, &m, module, out);
      mlirModuleDestroy(module);
    }
    fly_mlir_release(&m);
  } else if (fly_unit_ok(&u)) {
    u.diag.errors++;
  }
  return flyc_finish(&u);
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
static int compile_split(const FlycOptions *o, FILE *out) {
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
  if (!open_output(&out, o.output)) {
    flyc_free_options(&o);
    return FLYC_ERRORS;
  }
  if (strcmp(o.emit, "irdl") == 0)
    fputs(fly_dialect_irdl, out.f);
  else if (o.split)
    status = compile_split(&o, out.f);
  else
    status = compile_unit(&o, NULL, 0, out.f);
  if (!close_output(&out, status == FLYC_OK) && status == FLYC_OK)
    status = FLYC_ERRORS;
  flyc_free_options(&o);
  return status;
}
