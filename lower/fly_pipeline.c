/* fly_pipeline.c — the upstream lowering stages per target (fly_pipeline.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_pipeline.h"

#include "fly_lower.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/Dialect/GPU.h"
#include "mlir-c/Pass.h"
#include "mlir-c/RegisterEverything.h"

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

/* The pass pipeline for one target: attach the target, the Fly passes, then
   the upstream conversions inside the gpu.module and the serialisation. */
static bool pipeline_for(const char *arch, char *buf, size_t n) {
  bool nvidia = strncmp(arch, "sm_", 3) == 0;
  if (nvidia)
    return snprintf(buf, n,
                    "nvvm-attach-target{chip=%s O=3},fly-layout-lowering,convert-fly-to-nvvm,"
                    "canonicalize,cse,gpu.module(convert-nvgpu-to-nvvm,convert-vector-to-llvm,"
                    "convert-scf-to-cf,convert-gpu-to-nvvm),gpu-to-llvm,"
                    "reconcile-unrealized-casts,gpu-module-to-binary{format=isa}",
                    arch) < (int)n;
  return snprintf(buf, n,
                  "rocdl-attach-target{chip=%s O=3},fly-layout-lowering,convert-fly-to-rocdl,"
                  "canonicalize,cse,gpu.module(convert-amdgpu-to-rocdl{chipset=%s},"
                  "convert-vector-to-llvm,convert-scf-to-cf,convert-gpu-to-rocdl{chipset=%s "
                  "runtime=HIP}),gpu-to-llvm,"
                  "reconcile-unrealized-casts,gpu-module-to-binary{format=isa}",
                  arch, arch, arch) < (int)n;
}

static char *dup_ref(MlirStringRef s) {
  char *r = malloc(s.length + 1);
  if (r) {
    memcpy(r, s.data, s.length);
    r[s.length] = 0;
  }
  return r;
}

/* The object of the gpu.binary the serialisation left in the module. */
static char *binary_text(MlirModule module, size_t *len) {
  MlirBlock body = mlirModuleGetBody(module);
  for (MlirOperation op = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op)) {
    MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
    if (name.length != 10 || memcmp(name.data, "gpu.binary", 10) != 0)
      continue;
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
  return NULL;
}

char *fly_pipeline_assembly(FlyMlir *m, MlirModule module, const char *arch, size_t *len,
                            char **why) {
  *why = NULL;
  static bool registered;
  if (!registered) {
    mlirRegisterAllPasses();
    registered = true;
  }
  mlirRegisterAllLLVMTranslations(m->ctx);
  char text[1024];
  if (!pipeline_for(arch, text, sizeof text))
    return NULL;
  MlirPassManager pm = mlirPassManagerCreate(m->ctx);
  char *out = NULL;
  FILE *err = NULL;
  char *err_text = NULL;
  size_t err_len = 0;
  err = open_memstream(&err_text, &err_len);
  if (!err) {
    mlirPassManagerDestroy(pm);
    return NULL;
  }
  if (!fly_pass_pipeline_add(pm, text, err)) {
    fclose(err);
    *why = err_text;
    mlirPassManagerDestroy(pm);
    return NULL;
  }
  fclose(err);
  free(err_text);
  if (mlirLogicalResultIsSuccess(mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module))))
    out = binary_text(module, len);
  mlirPassManagerDestroy(pm);
  if (!out)
    *why = fly_mlir_take_messages(m);
  return out;
}
