/* fly_backend.c — one compile for one target, as libflyc_lower.so does it.
 *
 * The driver (frontend/driver/libflyc.c) has already read the options and the
 * sources and missed its cache; here the unit is checked and traced, and
 * the module goes through the target's pipeline to what was asked for. The
 * MLIR context is made once per process and kept warm: registering every
 * dialect costs more than compiling a small kernel. */
#include "fly_backend.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fly_bundle_write.h"
#include "fly_kernel_info.h"
#include "fly_kernel_spans.h"
#include "fly_pipeline.h"
#include "fly_ptxas.h"
#include "fly_trace.h"
#include "fly_version.h"
#include "mlir-c/BuiltinAttributes.h"

#define EXPORT __attribute__((visibility("default")))

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

typedef struct Job {
  FlyUnit *u;
  const FlyBackendRequest *rq;
  const FlyTarget *target;
  FlyMlir *m;
  bool nvidia;
} Job;

/* What LLVM's code generator said, each message at the kernel it concerns. */
static void report_codegen(Job *j, const FlyPipelineReport *r) {
  for (int i = 0; i < r->count; i++) {
    const FlyPipelineMessage *m = &r->messages[i];
    FlySpan at = m->at.file[0] ? span_at(j->u, &m->at) : fly_no_span();
    if (m->error)
      fly_error(&j->u->diag, at, "%s (compiling for %s)", m->text, j->rq->target);
    else
      fly_warning(&j->u->diag, at, "%s (compiling for %s)", m->text, j->rq->target);
  }
}

/* A failure the code generator did not explain: at the .fly location a
   pass gave, or an internal error. */
static void report_failure(Job *j, const char *why) {
  FlyMlir *m = j->m;
  if (m->err_msg && strncmp(m->err_msg, "internal error", 14) != 0) {
    FlyPendingOp at;
    snprintf(at.file, sizeof at.file, "%s", m->err_file);
    at.line = m->err_line;
    at.col = m->err_col;
    fly_error(&j->u->diag, span_at(j->u, &at), "%s (lowering for %s)", m->err_msg, j->rq->target);
  } else {
    fly_error(&j->u->diag, fly_no_span(),
              "internal error: lowering for %s failed (please report this): %s", j->rq->target,
              why ? why : "no message");
  }
}

/* The module through the target's pipeline: text (LLVM IR, PTX, GCN) or a
   code object; NULL after reporting why. */
static char *lower_module(Job *j, MlirModule module, FlyEmitKind kind, size_t *len,
                          const FlyPipelineInspect *inspect) {
  const char *arch = j->rq->target;
  FlyPendingOp p;
  if (!j->nvidia && fly_pipeline_find_op(module, "gpu.printf", &p)) {
    fly_error(&j->u->diag, span_at(j->u, &p),
              "printf cannot be compiled for %s yet: AMD's device printf needs ROCm's device "
              "library, which flyc does not use",
              arch);
    return NULL;
  }
  char *why = NULL;
  char *dump = dump_dir(j->rq->path, arch);
  FlyPipelineReport codegen;
  char *text = fly_pipeline_compile(j->m, module, j->target, j->rq->opt_level, kind, dump, len,
                                    &why, &codegen, inspect);
  free(dump);
  report_codegen(j, &codegen);
  if (!text && !codegen.errors)
    report_failure(j, why);
  fly_pipeline_report_release(&codegen);
  free(why);
  return text;
}

/* --emit=llvm|ptx|asm|cubin|hsaco. */
static char *write_lowered(Job *j, MlirModule module, size_t *len) {
  const char *arch = j->rq->target, *emit = j->rq->emit;
  if ((strcmp(emit, "ptx") == 0 || strcmp(emit, "cubin") == 0) && !j->nvidia) {
    fly_error(&j->u->diag, fly_no_span(),
              "--emit=%s is for NVIDIA targets, and %s is AMD's (use --emit=asm for GCN "
              "assembly, --emit=hsaco for a code object)",
              emit, arch);
    return NULL;
  }
  if (strcmp(emit, "hsaco") == 0 && j->nvidia) {
    fly_error(&j->u->diag, fly_no_span(),
              "--emit=hsaco is for AMD targets, and %s is NVIDIA's (use --emit=ptx or "
              "--emit=cubin)",
              arch);
    return NULL;
  }
  FlyEmitKind kind = strcmp(emit, "llvm") == 0    ? FLY_EMIT_LLVM
                     : strcmp(emit, "hsaco") == 0 ? FLY_EMIT_BIN
                                                  : FLY_EMIT_ASM;
  char *text = lower_module(j, module, kind, len, NULL);
  if (!text || strcmp(emit, "cubin") != 0)
    return text;
  char *why = NULL;
  char *cubin = fly_ptxas_compile(text, *len, arch, len, &why);
  free(text);
  if (!cubin)
    fly_error(&j->u->diag, fly_no_span(), "%s", why ? why : "ptxas failed");
  free(why);
  return cubin;
}

/* What the passes recorded on a kernel function, copied to its record:
   the bytes each argument must be a multiple of (fly.arg_align, from
   fly_lower_align.c), a pointer's as its parameter's `align` and its
   runtime strides' as `stride_align`; the most bytes its tensors may
   span (read_spans); and the bytes of its shared tiles
   (fly.static_shared, NVIDIA). */
static void read_kernel(MlirOperation op, FlyKernelInfo *k) {
  fly_kernel_spans(op, k);
  MlirAttribute a =
      mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("fly.arg_align"));
  MlirAttribute ss =
      mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("fly.static_shared"));
  /* Rounded up to 16 bytes: a tile sized at launch starts there. */
  if (!mlirAttributeIsNull(ss) && mlirAttributeIsAInteger(ss))
    k->static_shared = (uint32_t)((mlirIntegerAttrGetValueInt(ss) + 15) / 16 * 16);
  if (mlirAttributeIsNull(a) || !mlirAttributeIsADenseI64Array(a))
    return;
  intptr_t n = mlirDenseArrayGetNumElements(a);
  for (int i = 0; i < k->nparams; i++) {
    FlyParamInfo *p = &k->params[i];
    if (p->kind != FLY_PARAM_TENSOR || (intptr_t)p->first_arg >= n)
      continue;
    uint32_t base = (uint32_t)mlirDenseI64ArrayGetElement(a, (intptr_t)p->first_arg);
    if (base > p->align)
      p->align = base;
    for (uint32_t j = 0; j < p->dyn_stride; j++) {
      intptr_t at = (intptr_t)(p->first_arg + 1 + p->dyn_shape + j);
      uint32_t v = at < n ? (uint32_t)mlirDenseI64ArrayGetElement(a, at) : 0;
      if (v > p->stride_align)
        p->stride_align = v;
    }
  }
}

static MlirWalkResult read_kernels(MlirOperation op, void *ctx) {
  const FlyKernelInfoList *kernels = ctx;
  MlirAttribute s = mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("sym_name"));
  if (mlirAttributeIsNull(s) || !mlirAttributeIsAString(s))
    return MlirWalkResultAdvance;
  MlirStringRef sym = mlirStringAttrGetValue(s);
  for (FlyKernelInfo *k = kernels->first; k; k = k->next)
    if (strlen(k->name) == sym.length && memcmp(k->name, sym.data, sym.length) == 0)
      read_kernel(op, k);
  return MlirWalkResultAdvance;
}

static void inspect_kernels(MlirModule module, void *ctx) {
  mlirOperationWalk(mlirModuleGetOperation(module), read_kernels, ctx, MlirWalkPreOrder);
}

/* --emit=bundle: the image (PTX for NVIDIA, a code object for AMD) and the
   kernels' signatures and launch rules. */
static char *write_bundle(Job *j, MlirModule module, const FlyKernelInfoList *kernels,
                          size_t *len) {
  size_t n = 0;
  FlyPipelineInspect inspect = {inspect_kernels, (void *)kernels};
  char *image = lower_module(j, module, j->nvidia ? FLY_EMIT_ASM : FLY_EMIT_BIN, &n, &inspect);
  if (!image)
    return NULL;
  FlyBundleWriter w;
  fly_bundle_writer_init(&w);
  /* PTX is handed to the driver as a C string: keep its NUL. */
  uint32_t im = fly_bundle_writer_image(
      &w, j->rq->target, j->nvidia ? FLY_IMAGE_PTX : FLY_IMAGE_HSACO, image, j->nvidia ? n + 1 : n);
  free(image);
  for (const FlyKernelInfo *k = kernels->first; k; k = k->next)
    fly_bundle_writer_kernel(&w, k, im, k->name);
  char *out = fly_bundle_writer_finish(&w, "flyc " FLY_VERSION, "LLVM " FLY_MLIR_VERSION,
                                       j->rq->source_hash ? j->rq->source_hash : "", len);
  fly_bundle_writer_release(&w);
  if (!out)
    fly_error(&j->u->diag, fly_no_span(), "out of memory writing the bundle");
  return out;
}

/* Checks and traces the unit, then writes what was asked for. */
static char *compile(Job *j, size_t *len) {
  FlyUnit *u = j->u;
  const FlyBackendRequest *rq = j->rq;
  if (rq->text)
    fly_unit_load_text(u, rq->path, rq->text, rq->len);
  else
    fly_unit_load(u, rq->path);
  fly_unit_check_definitions(u);
  if (!fly_unit_ok(u))
    return NULL;
  FlyCheckOptions check = rq->check;
  check.specializations = NULL;
  check.emit = NULL;
  check.kernel_info = NULL;
  check.target = fly_target_find(rq->target);
  FlyKernelInfoList kernels = {NULL, NULL};
  bool bundle = strcmp(rq->emit, "bundle") == 0;
  if (bundle)
    check.kernel_info = &kernels;
  MlirModule module;
  char *out = NULL;
  if (fly_trace_unit(u, &check, j->m, &module)) {
    if (strcmp(rq->emit, "fly") == 0) {
      FILE *f = open_memstream(&out, len);
      if (f) {
        fly_mlir_print(mlirModuleGetOperation(module), f, j->rq->locations);
        fclose(f);
      }
    } else if (bundle) {
      out = write_bundle(j, module, &kernels, len);
    } else {
      out = write_lowered(j, module, len);
    }
    mlirModuleDestroy(module);
  }
  fly_kernel_info_list_release(&kernels);
  if (out && !fly_unit_ok(u)) {
    free(out);
    out = NULL;
  }
  return out;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static FlyMlir warm;
static bool warm_ready;

EXPORT int fly_backend_compile(const FlyBackendRequest *rq, FlyBackendResult *rs) {
  memset(rs, 0, sizeof *rs);
  if (!rq || rq->abi != FLY_BACKEND_ABI) {
    rs->status = 2;
    return rs->status;
  }
  FILE *diag = open_memstream(&rs->diagnostics, &rs->diagnostics_len);
  if (!diag) {
    rs->status = 1;
    return rs->status;
  }
  const FlyTarget *target = fly_target_find(rq->target);
  if (!target) {
    fprintf(diag, "flyc: error: unknown target '%s' (the targets are %s)\n", rq->target,
            fly_target_names());
    rs->status = 2;
  } else if (strcmp(rq->emit, "irdl") == 0) {
    rs->data = strdup(fly_dialect_irdl);
    rs->len = rs->data ? strlen(rs->data) : 0;
    rs->status = rs->data ? 0 : 1;
  } else {
    pthread_mutex_lock(&lock);
    if (!warm_ready)
      warm_ready = fly_mlir_init(&warm);
    FlyUnit u;
    fly_unit_init(&u, diag);
    FlyUnitSettings settings = rq->unit;
    if (settings.color < 0)
      settings.color = 0; /* the text goes to a string, not a terminal */
    fly_unit_apply(&u, &settings);
    if (warm_ready) {
      fly_mlir_reset(&warm);
      Job j = {&u, rq, target, &warm, target->vendor == FLY_VENDOR_NVIDIA};
      rs->data = compile(&j, &rs->len);
    } else {
      fly_error(&u.diag, fly_no_span(), "internal error: the Fly dialect does not load");
    }
    pthread_mutex_unlock(&lock);
    rs->status = rs->data ? 0 : 1;
    fly_unit_release(&u);
  }
  fclose(diag);
  return rs->status;
}
