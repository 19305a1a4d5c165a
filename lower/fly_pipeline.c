/* fly_pipeline.c — the upstream lowering stages per target (fly_pipeline.h). */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "fly_pipeline.h"

#include "llvm-c/BitWriter.h"
#include "llvm-c/Core.h"

#include "fly_lower.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/Dialect/GPU.h"
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
   then to LLVM. Serialisation comes after (fly_pipeline_compile). */
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

static char *dup_ref(MlirStringRef s) {
  char *r = malloc(s.length + 1);
  if (r) {
    memcpy(r, s.data, s.length);
    r[s.length] = 0;
  }
  return r;
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

/* The object of the gpu.binary the serialisation left in the module. */
static char *binary_text(MlirModule module, size_t *len) {
  MlirOperation op = first_named(module, "gpu.binary");
  if (mlirOperationIsNull(op))
    return NULL;
  MlirAttribute objects = mlirOperationGetAttributeByName(op, ref("objects"));
  if (mlirAttributeIsNull(objects) || mlirArrayAttrGetNumElements(objects) < 1)
    return NULL;
  MlirAttribute obj = mlirArrayAttrGetElement(objects, 0);
  if (!mlirAttributeIsAGPUObjectAttr(obj))
    return NULL;
  MlirStringRef text = mlirGPUObjectAttrGetObject(obj);
  *len = text.length;
  return dup_ref(text);
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

/* Runs a pipeline text on the module; false with the reason in *why. */
static bool run_text(FlyMlir *m, MlirModule module, const char *text, char **why) {
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
  char path[1024];
  snprintf(path, sizeof path, "%s/%02d_%s", dir, (*n)++, name);
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "flyc: warning: cannot write the dump %s\n", path);
    return;
  }
  fwrite(text, 1, len, f);
  fclose(f);
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
  if (!dump)
    return run_text(m, module, text, why);
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
    if (!run_text(m, module, stage, why))
      return false;
    dump_module(dump, n, name, module);
    s = *e ? e + 1 : e;
  }
  return true;
}

/* ---- the private toolkit directory ----------------------------------------------------
 *
 * gpu-module-to-binary finds its tools under a "toolkit" directory. One
 * private directory per process serves both vendors:
 *   llvm/bin/ld.lld              a link to the ld.lld found here, which the
 *                                ROCDL serialiser runs to make a code object;
 *   nvvm/libdevice/libdevice.10.bc  an empty module. The NVVM serialiser
 *                                links CUDA's libdevice whenever it finds a
 *                                CUDA install, and reading it costs about
 *                                4 ms a compile; Fly's math needs none of it.
 * It is made on first use and removed when the process exits. */

static char toolkit_dir[1024];
static char toolkit_lld[1024];

static void remove_toolkit(void) {
  static const char *const parts[] = {
      "llvm/bin/ld.lld", "llvm/bin", "llvm", "nvvm/libdevice/libdevice.10.bc",
      "nvvm/libdevice",  "nvvm",     ""};
  char p[1200];
  for (size_t i = 0; toolkit_dir[0] && i < sizeof parts / sizeof parts[0]; i++) {
    snprintf(p, sizeof p, "%s/%s", toolkit_dir, parts[i]);
    if (unlink(p) != 0)
      rmdir(p);
  }
}

/* An empty NVPTX module as bitcode, with the data layout the NVVM
   serialiser's own module has (else the linker warns). */
static bool write_stub_libdevice(const char *path) {
  LLVMContextRef c = LLVMContextCreate();
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("libdevice", c);
  LLVMSetTarget(mod, "nvptx64-nvidia-cuda");
  LLVMSetDataLayout(mod, "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64");
  bool ok = LLVMWriteBitcodeToFile(mod, path) == 0;
  LLVMDisposeModule(mod);
  LLVMContextDispose(c);
  return ok;
}

static const char *toolkit(char **why) {
  if (toolkit_dir[0])
    return toolkit_dir;
  const char *tmp = getenv("TMPDIR");
  snprintf(toolkit_dir, sizeof toolkit_dir, "%s/flyc-toolkit-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  char sub[1200];
  bool ok = mkdtemp(toolkit_dir) != NULL;
  if (ok)
    atexit(remove_toolkit);
  static const char *const dirs[] = {"llvm", "llvm/bin", "nvvm", "nvvm/libdevice"};
  for (size_t i = 0; ok && i < sizeof dirs / sizeof dirs[0]; i++) {
    snprintf(sub, sizeof sub, "%s/%s", toolkit_dir, dirs[i]);
    ok = mkdir(sub, 0700) == 0;
  }
  snprintf(sub, sizeof sub, "%s/nvvm/libdevice/libdevice.10.bc", toolkit_dir);
  ok = ok && write_stub_libdevice(sub);
  if (!ok) {
    remove_toolkit();
    toolkit_dir[0] = '\0';
    *why = strdup("cannot make a temporary directory for the compiler's tools");
    return NULL;
  }
  return toolkit_dir;
}

/* ld.lld, as the ROCDL serialiser looks for it: TOOLKIT/llvm/bin/ld.lld. */
static const char *lld_toolkit(char **why) {
  const char *cands[] = {"/usr/lib/llvm-22/bin/ld.lld", "/usr/bin/ld.lld-22", "/usr/bin/ld.lld"};
  const char *lld = NULL, *env = getenv("FLYC_LLD");
  if (env && *env)
    lld = access(env, X_OK) == 0 ? env : NULL; /* only the one named */
  else
    for (size_t i = 0; i < sizeof cands / sizeof cands[0] && !lld; i++)
      if (access(cands[i], X_OK) == 0)
        lld = cands[i];
  if (!lld) {
    *why = strdup("an AMD code object needs ld.lld from lld-22 (set FLYC_LLD to its path)");
    return NULL;
  }
  const char *dir = toolkit(why);
  if (!dir)
    return NULL;
  if (strcmp(toolkit_lld, lld) == 0)
    return dir;
  char sub[1200];
  snprintf(sub, sizeof sub, "%s/llvm/bin/ld.lld", dir);
  unlink(sub);
  if (symlink(lld, sub) != 0) {
    *why = strdup("cannot make a temporary directory for ld.lld");
    return NULL;
  }
  snprintf(toolkit_lld, sizeof toolkit_lld, "%s", lld);
  return dir;
}

char *fly_pipeline_compile(FlyMlir *m, MlirModule module, const FlyTarget *target, int opt_level,
                           FlyEmitKind kind, const char *dump, size_t *len, char **why,
                           const FlyPipelineInspect *inspect) {
  *why = NULL;
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
  if (inspect && inspect->fn)
    inspect->fn(module, inspect->ctx);
  bool amd = target->vendor == FLY_VENDOR_AMD;
  if (kind == FLY_EMIT_LLVM || dump) {
    MlirOperation gm = first_named(module, "gpu.module");
    char *ir = mlirOperationIsNull(gm) ? NULL : mlirTranslateModuleToLLVMIRToString(gm);
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
  const char *kit = kind == FLY_EMIT_BIN && amd ? lld_toolkit(why) : toolkit(why);
  if (!kit)
    return NULL;
  if (dump && kind == FLY_EMIT_BIN) {
    /* The assembly too, from a copy of the module (serialising consumes the
       gpu.module). */
    MlirModule copy = mlirModuleFromOperation(mlirOperationClone(mlirModuleGetOperation(module)));
    char *why2 = NULL;
    size_t alen = 0;
    char *asm_text = NULL;
    char isa[1200];
    snprintf(isa, sizeof isa, "gpu-module-to-binary{format=isa toolkit=%s}", kit);
    if (run_text(m, copy, isa, &why2))
      asm_text = binary_text(copy, &alen);
    if (asm_text)
      dump_text(dump, &n, amd ? "gcn.s" : "ptx.ptx", asm_text, alen);
    free(asm_text);
    free(why2);
    mlirModuleDestroy(copy);
  }
  char serialise[1200];
  snprintf(serialise, sizeof serialise, "gpu-module-to-binary{format=%s toolkit=%s}",
           kind == FLY_EMIT_BIN && amd ? "bin" : "isa", kit);
  char *out = run_text(m, module, serialise, why) ? binary_text(module, len) : NULL;
  if (out && dump && kind != FLY_EMIT_BIN)
    dump_text(dump, &n, amd ? "gcn.s" : "ptx.ptx", out, *len);
  if (!out && !*why)
    *why = fly_mlir_take_messages(m);
  return out;
}
