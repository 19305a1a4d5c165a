/* fly_pipeline.c — the upstream lowering stages per target (fly_pipeline.h). */
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "fly_pipeline.h"

#include "fly_codegen.h"
#include "fly_output.h"
#include "fly_tool.h"

#include "fly_lower.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/Pass.h"
#include "mlir-c/RegisterEverything.h"
#include "mlir-c/Target/LLVMIR.h"

static MlirStringRef ref(const char *s) { return mlirStringRefCreateFromCString(s); }

typedef struct Finder {
  const char *prefix;
  FlyPendingOp *out;
  bool found;
} Finder;

static MlirWalkResult find_fly(MlirOperation op, void *user) {
  Finder *f = user;
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  size_t n = strlen(f->prefix);
  if (name.length < n || memcmp(name.data, f->prefix, n) != 0)
    return MlirWalkResultAdvance;
  FlyPendingOp *p = f->out;
  snprintf(p->name, sizeof p->name, "%.*s", (int)name.length, name.data);
  p->file[0] = 0;
  p->line = p->col = 0;
  MlirLocation loc = mlirOperationGetLocation(op);
  if (mlirLocationIsAFileLineColRange(loc)) {
    MlirStringRef file = mlirIdentifierStr(mlirLocationFileLineColRangeGetFilename(loc));
    snprintf(p->file, sizeof p->file, "%.*s", (int)file.length, file.data);
    p->line = (unsigned)mlirLocationFileLineColRangeGetStartLine(loc);
    p->col = (unsigned)mlirLocationFileLineColRangeGetStartColumn(loc);
  }
  f->found = true;
  return MlirWalkResultInterrupt;
}

bool fly_pipeline_find_op(MlirModule module, const char *prefix, FlyPendingOp *out) {
  Finder f = {prefix, out, false};
  mlirOperationWalk(mlirModuleGetOperation(module), find_fly, &f, MlirWalkPreOrder);
  return f.found;
}

/* The stages for one target, as mlir-opt would take them: attach the
   target, the Fly passes, the upstream conversions inside the gpu.module,
   then to LLVM. Code generation comes after (fly_pipeline_compile). */
static bool pipeline_for(const FlyTarget *t, int opt_level, char *buf, size_t n) {
  const char *layouts = fly_pass_name(FLY_PASS_LAYOUTS);
  if (t->vendor == FLY_VENDOR_NVIDIA)
    return snprintf(buf, n,
                    "nvvm-attach-target{chip=%s features=%s O=%d},%s,%s,canonicalize,cse,"
                    "gpu.module(convert-nvgpu-to-nvvm,convert-vector-to-llvm,convert-scf-to-cf,"
                    "convert-gpu-to-nvvm),gpu-to-llvm,reconcile-unrealized-casts",
                    t->arch, t->isa, opt_level, layouts, fly_pass_name(FLY_PASS_NVVM)) < (int)n;
  return snprintf(buf, n,
                  "rocdl-attach-target{chip=%s O=%d},%s,%s,"
                  "canonicalize,cse,gpu.module(convert-amdgpu-to-rocdl{chipset=%s},"
                  "convert-vector-to-llvm,convert-scf-to-cf,convert-gpu-to-rocdl{chipset=%s "
                  "runtime=HIP}),gpu-to-llvm,reconcile-unrealized-casts",
                  t->arch, opt_level, layouts, fly_pass_name(FLY_PASS_ROCDL), t->isa,
                  t->isa) < (int)n;
}

static MlirOperation first_named(MlirModule module, const char *name) {
  MlirBlock body = mlirModuleGetBody(module);
  MlirOperation op;
  for (op = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op)) {
    MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
    if (n.length == strlen(name) && memcmp(n.data, name, n.length) == 0)
      break;
  }
  return op;
}

/* A pass manager for a pipeline text, made once per context and kept: a
   pass manager can run again, and building one (parsing the pipeline,
   freezing each pass's patterns) costs as much as running it on a small
   kernel. NULL: make one for this run only. */
static MlirPassManager *cached_pm(FlyMlir *m, const char *text) {
  for (int i = 0; i < m->npms; i++)
    if (strcmp(m->pm_text[i], text) == 0)
      return &m->pms[i];
  return NULL;
}

/* Whether the pass managers verify the module after each pass (FLYC_VERIFY_EACH,
   or dumping each stage): a debugging aid. Otherwise the traced kernels are
   verified as they are made (fly_trace) and the lowered module once, after
   the last pass (fly_pipeline_compile); verifying after each of the dozen
   passes cost a twentieth of a large kernel's compile. */
static bool verify_each(const char *dump) { return dump || getenv("FLYC_VERIFY_EACH") != NULL; }

/* Runs a pipeline text on the module; false with the reason in *why. */
static bool run_text(FlyMlir *m, MlirModule module, const char *text, bool verify, char **why) {
  bool timing = getenv("FLYC_PASS_TIMING") != NULL;
  MlirPassManager *kept = timing ? NULL : cached_pm(m, text);
  if (kept) {
    bool ok =
        mlirLogicalResultIsSuccess(mlirPassManagerRunOnOp(*kept, mlirModuleGetOperation(module)));
    if (!ok)
      *why = fly_mlir_take_messages(m);
    return ok;
  }
  MlirPassManager pm = mlirPassManagerCreate(m->ctx);
  char *err_text = NULL;
  size_t err_len = 0;
  FILE *err = open_memstream(&err_text, &err_len);
  if (!err) {
    mlirPassManagerDestroy(pm);
    return false;
  }
  bool ok = fly_pass_pipeline_add(pm, text, err);
  fclose(err);
  if (!ok) {
    *why = err_text;
    mlirPassManagerDestroy(pm);
    return false;
  }
  free(err_text);
  mlirPassManagerEnableVerifier(pm, verify);
  if (timing)
    mlirPassManagerEnableTiming(pm);
  ok = mlirLogicalResultIsSuccess(mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module)));
  char *copy = NULL;
  if (!timing && m->npms < FLY_MLIR_MAX_PMS && (copy = strdup(text))) {
    m->pm_text[m->npms] = copy;
    m->pms[m->npms++] = pm;
  } else {
    mlirPassManagerDestroy(pm);
  }
  if (!ok)
    *why = fly_mlir_take_messages(m);
  return ok;
}

/* Writes text to DIR/NN_name; dumps are a debugging aid, so a failure to
   write one is reported but does not stop the compile. */
static void dump_text(const char *dir, int *n, const char *name, const char *text, size_t len) {
  char path[1024], why[1200];
  snprintf(path, sizeof path, "%s/%02d_%s", dir, (*n)++, name);
  if (!fly_output_file(path, text, len, why, sizeof why))
    fprintf(stderr, "flyc: warning: a dump is missing: %s\n", why);
}

static void print_to(MlirStringRef s, void *user) { fwrite(s.data, 1, s.length, user); }

static void dump_module(const char *dir, int *n, const char *name, MlirModule module) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f)
    return;
  MlirOpPrintingFlags flags = mlirOpPrintingFlagsCreate();
  mlirOpPrintingFlagsEnableDebugInfo(flags, true, false);
  mlirOperationPrintWithFlags(mlirModuleGetOperation(module), flags, print_to, f);
  mlirOpPrintingFlagsDestroy(flags);
  fclose(f);
  char file[160];
  snprintf(file, sizeof file, "%s.mlir", name);
  dump_text(dir, n, file, text, len);
  free(text);
}

/* The pipeline, one stage at a time with a dump after each, or at once. */
static bool run_stages(FlyMlir *m, MlirModule module, const char *text, const char *dump, int *n,
                       char **why) {
  bool verify = verify_each(dump);
  if (!dump)
    return run_text(m, module, text, verify, why);
  dump_module(dump, n, "origin", module);
  const char *s = text;
  while (*s) {
    const char *e = s;
    int depth = 0;
    while (*e && (depth > 0 || *e != ',')) {
      depth += *e == '(' || *e == '{';
      depth -= *e == ')' || *e == '}';
      e++;
    }
    char stage[512], name[128];
    snprintf(stage, sizeof stage, "%.*s", (int)(e - s), s);
    size_t k = strcspn(stage, "{(");
    snprintf(name, sizeof name, "%.*s", (int)(k < 100 ? k : 100), stage);
    if (!run_text(m, module, stage, verify, why))
      return false;
    dump_module(dump, n, name, module);
    s = *e ? e + 1 : e;
  }
  return true;
}

/* ---- code generation ------------------------------------------------------------------ */

/* ld.lld, which links AMD's code objects: FLYC_LLD, else lld-22's. */
static const char *find_lld(char **why) {
  static const char *const cands[] = {"/usr/lib/llvm-22/bin/ld.lld", "/usr/bin/ld.lld-22",
                                      "/usr/bin/ld.lld"};
  const char *env = getenv("FLYC_LLD");
  const char *lld = NULL;
  if (env && *env)
    lld = access(env, X_OK) == 0 ? env : NULL; /* only the one named */
  else
    for (size_t i = 0; i < sizeof cands / sizeof cands[0] && !lld; i++)
      if (access(cands[i], X_OK) == 0)
        lld = cands[i];
  if (!lld)
    *why = strdup("an AMD code object needs ld.lld from lld-22 (set FLYC_LLD to its path)");
  return lld;
}

/* The kernels of the gpu.module and their .fly locations, so that what LLVM
   reports about one of them is shown at its source. */
typedef struct Kernels {
  FlyPendingOp *at;
  int n, cap;
} Kernels;

static MlirWalkResult add_kernel(MlirOperation op, void *user) {
  Kernels *k = user;
  MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
  MlirAttribute sym = mlirOperationGetAttributeByName(op, ref("sym_name"));
  MlirLocation loc = mlirOperationGetLocation(op);
  if (name.length != 9 || memcmp(name.data, "llvm.func", 9) != 0 || mlirAttributeIsNull(sym) ||
      !mlirAttributeIsAString(sym) || !mlirLocationIsAFileLineColRange(loc))
    return MlirWalkResultAdvance;
  if (k->n == k->cap) {
    int cap = k->cap ? k->cap * 2 : 8;
    FlyPendingOp *p = realloc(k->at, sizeof *p * (size_t)cap);
    if (!p)
      return MlirWalkResultInterrupt;
    k->at = p;
    k->cap = cap;
  }
  FlyPendingOp *p = &k->at[k->n++];
  MlirStringRef s = mlirStringAttrGetValue(sym);
  MlirStringRef file = mlirIdentifierStr(mlirLocationFileLineColRangeGetFilename(loc));
  snprintf(p->name, sizeof p->name, "%.*s", (int)s.length, s.data);
  snprintf(p->file, sizeof p->file, "%.*s", (int)file.length, file.data);
  p->line = (unsigned)mlirLocationFileLineColRangeGetStartLine(loc);
  p->col = (unsigned)mlirLocationFileLineColRangeGetStartColumn(loc);
  return MlirWalkResultAdvance;
}

/* Where a message about `function` belongs: that kernel, else the first. */
static FlyPendingOp kernel_at(const Kernels *k, const char *function) {
  FlyPendingOp none = {.name = ""};
  for (int i = 0; i < k->n; i++)
    if (strcmp(k->at[i].name, function) == 0)
      return k->at[i];
  return k->n ? k->at[0] : none;
}

typedef struct Codegen {
  FlyMlir *m;
  MlirOperation gpu_module;
  FlyCodegenTarget target;
  Kernels kernels;
  FlyPipelineReport *report;
  char **why;
} Codegen;

/* LLVM's messages, each at its kernel. A failure without an error of
   LLVM's is the caller's why, with MLIR's messages when it has some (a
   module that does not translate). */
static void take_report(Codegen *g, FlyCodegenReport *cg) {
  FlyPipelineReport *out = g->report;
  int room = (int)(sizeof out->messages / sizeof out->messages[0]);
  for (int i = 0; i < cg->count && out->count < room; i++) {
    FlyPipelineMessage *m = &out->messages[out->count++];
    m->error = cg->messages[i].error;
    m->text = cg->messages[i].text;
    m->at = kernel_at(&g->kernels, cg->messages[i].function);
    cg->messages[i].text = NULL;
  }
  out->errors += cg->errors;
  if (!cg->errors && cg->failure && !*g->why) {
    char *mlir = fly_mlir_take_messages(g->m);
    *g->why = mlir ? mlir : cg->failure;
    if (!mlir)
      cg->failure = NULL;
  }
  fly_codegen_report_release(cg);
}

static char *generate(Codegen *g, FlyCodegenKind kind, size_t *len) {
  FlyCodegenReport cg;
  char *out = fly_codegen(g->gpu_module, &g->target, kind, len, &cg);
  take_report(g, &cg);
  return out;
}

/* An AMD code object: the object code linked by ld.lld into a shared
   object, as the ROCDL serialiser links it. */
static char *link_hsaco(const char *lld, const char *obj, size_t n, size_t *len, char **why) {
  static const char *const opts[] = {"-shared", NULL};
  FlyToolRun run = {.tool = lld,
                    .opts = opts,
                    .in_name = "kernels.o",
                    .in = obj,
                    .in_len = n,
                    .out_name = "kernels.hsaco",
                    .failure = "ld.lld could not link the code object"};
  return fly_tool_run(&run, len, why);
}

/* The code object, and with dumps on its assembly beside it (what that
   reports, the object's generation repeats). */
static char *generate_hsaco(Codegen *g, const char *lld, const char *dump, int *n, size_t *len) {
  if (dump) {
    FlyPipelineReport ignored = {0};
    char *ignored_why = NULL;
    Codegen quiet = *g;
    quiet.report = &ignored;
    quiet.why = &ignored_why;
    size_t alen = 0;
    char *asm_text = generate(&quiet, FLY_CODEGEN_ASM, &alen);
    if (asm_text)
      dump_text(dump, n, "gcn.s", asm_text, alen);
    free(asm_text);
    free(ignored_why);
    fly_pipeline_report_release(&ignored);
  }
  size_t olen = 0;
  char *obj = generate(g, FLY_CODEGEN_OBJECT, &olen);
  char *out = obj ? link_hsaco(lld, obj, olen, len, g->why) : NULL;
  free(obj);
  return out;
}

char *fly_pipeline_compile(FlyMlir *m, MlirModule module, const FlyTarget *target, int opt_level,
                           FlyEmitKind kind, const char *dump, size_t *len, char **why,
                           FlyPipelineReport *report, const FlyPipelineInspect *inspect) {
  *why = NULL;
  memset(report, 0, sizeof *report);
  static bool registered;
  if (!registered) {
    mlirRegisterAllPasses();
    registered = true;
  }
  if (!m->translations) {
    mlirRegisterAllLLVMTranslations(m->ctx);
    m->translations = true;
  }
  char text[1024];
  if (!pipeline_for(target, opt_level, text, sizeof text))
    return NULL;
  int n = 0;
  if (!run_stages(m, module, text, dump, &n, why))
    return NULL;
  if (!mlirOperationVerify(mlirModuleGetOperation(module))) {
    /* A pass's bug: the verifier's messages say what is wrong. */
    *why = fly_mlir_take_messages(m);
    if (!*why)
      *why = strdup("the lowered module does not verify");
    return NULL;
  }
  fly_lower_tensor_map_args(module);
  if (inspect && inspect->fn)
    inspect->fn(module, inspect->ctx);
  bool amd = target->vendor == FLY_VENDOR_AMD;
  MlirOperation gm = first_named(module, "gpu.module");
  if (mlirOperationIsNull(gm)) {
    *why = strdup("the lowered module has no gpu.module");
    return NULL;
  }
  if (kind == FLY_EMIT_LLVM || dump) {
    char *ir = mlirTranslateModuleToLLVMIRToString(gm);
    if (!ir) {
      *why = fly_mlir_take_messages(m);
      return NULL;
    }
    if (dump)
      dump_text(dump, &n, "llvm.ll", ir, strlen(ir));
    if (kind == FLY_EMIT_LLVM) {
      *len = strlen(ir);
      return ir;
    }
    free(ir);
  }
  const char *lld = kind == FLY_EMIT_BIN && amd ? find_lld(why) : NULL;
  if (kind == FLY_EMIT_BIN && amd && !lld)
    return NULL;
  Codegen g = {m,
               gm,
               {amd ? "amdgcn-amd-amdhsa" : "nvptx64-nvidia-cuda", target->arch,
                amd ? "" : target->isa, opt_level},
               {NULL, 0, 0},
               report,
               why};
  mlirOperationWalk(gm, add_kernel, &g.kernels, MlirWalkPreOrder);
  char *out;
  if (kind == FLY_EMIT_BIN && amd) {
    out = generate_hsaco(&g, lld, dump, &n, len);
  } else {
    out = generate(&g, FLY_CODEGEN_ASM, len);
    if (out && dump)
      dump_text(dump, &n, amd ? "gcn.s" : "ptx.ptx", out, *len);
  }
  free(g.kernels.at);
  return out;
}

void fly_pipeline_report_release(FlyPipelineReport *r) {
  for (int i = 0; i < r->count; i++)
    free(r->messages[i].text);
  memset(r, 0, sizeof *r);
}
