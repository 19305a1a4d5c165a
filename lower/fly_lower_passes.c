/* fly_lower_passes.c — the Fly passes as MLIR external passes, and pipelines
 * that mix them with upstream ones (fly_lower.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_lower.h"
#include "mlir-c/Support.h"

typedef struct PassInfo {
  const char *name, *description;
  FlyPassId id;
} PassInfo;

/* Indexed by FlyPassId. */
static const PassInfo passes[FLY_PASS_COUNT] = {
    {"fly-layout-lowering", "Fly views, allocations and coordinates to pointers and arith",
     FLY_PASS_LAYOUTS},
    {"convert-fly-to-nvvm", "Fly copies, loads, stores, MMAs and math for NVIDIA", FLY_PASS_NVVM},
    {"convert-fly-to-rocdl", "Fly copies, loads, stores, MMAs and math for AMD", FLY_PASS_ROCDL},
};

const char *fly_pass_name(FlyPassId id) { return passes[id].name; }

static const PassInfo *find(const char *name, size_t len) {
  for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++)
    if (strlen(passes[i].name) == len && memcmp(passes[i].name, name, len) == 0)
      return &passes[i];
  return NULL;
}

bool fly_pass_known(const char *name) { return find(name, strlen(name)) != NULL; }

static void construct(void *user) { (void)user; }
static void destruct(void *user) { (void)user; }
static void *clone(void *user) { return user; }

static void run(MlirOperation op, MlirExternalPass pass, void *user) {
  const PassInfo *p = user;
  FlyMlir m;
  memset(&m, 0, sizeof m);
  m.ctx = mlirOperationGetContext(op);
  bool ok = p->id == FLY_PASS_LAYOUTS ? fly_lower_layouts(&m, op)
                                      : fly_lower_to_target(&m, op, p->id == FLY_PASS_ROCDL);
  if (!ok)
    mlirExternalPassSignalFailure(pass);
}

MlirPass fly_pass_create(const char *name) {
  const PassInfo *p = find(name, strlen(name));
  MlirPass none = {NULL};
  if (!p)
    return none;
  static MlirTypeIDAllocator alloc;
  static MlirTypeID ids[sizeof passes / sizeof passes[0]];
  if (!alloc.ptr)
    alloc = mlirTypeIDAllocatorCreate();
  size_t i = (size_t)(p - passes);
  if (!ids[i].ptr)
    ids[i] = mlirTypeIDAllocatorAllocateTypeID(alloc);
  MlirExternalPassCallbacks cb = {construct, destruct, NULL, clone, run};
  return mlirCreateExternalPass(ids[i], mlirStringRefCreateFromCString(p->name),
                                mlirStringRefCreateFromCString(p->name),
                                mlirStringRefCreateFromCString(p->description),
                                mlirStringRefCreate(NULL, 0), 0, NULL, cb, (void *)p);
}

static void write_to(MlirStringRef s, void *user) { fwrite(s.data, 1, s.length, user); }

/* Adds the upstream elements text[0..len) to pm. */
static bool add_upstream(MlirOpPassManager opm, const char *text, size_t len, FILE *err) {
  if (!len)
    return true;
  return mlirLogicalResultIsSuccess(
      mlirOpPassManagerAddPipeline(opm, mlirStringRefCreate(text, len), write_to, err));
}

bool fly_pass_pipeline_add(MlirPassManager pm, const char *pipeline, FILE *err) {
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  const char *s = pipeline;
  /* "builtin.module(...)" around the whole pipeline is accepted too. */
  size_t total = strlen(s);
  if (strncmp(s, "builtin.module(", 15) == 0 && total > 16 && s[total - 1] == ')') {
    s += 15;
    total -= 16;
  }
  const char *end = s + total, *run_start = s;
  while (s < end) {
    const char *e = s;
    int depth = 0;
    while (e < end && (depth > 0 || *e != ',')) {
      depth += *e == '(' || *e == '{';
      depth -= *e == ')' || *e == '}';
      e++;
    }
    const PassInfo *p = find(s, (size_t)(e - s));
    if (p) {
      size_t n = (size_t)(s - run_start);
      if (n && run_start[n - 1] == ',')
        n--;
      if (!add_upstream(opm, run_start, n, err))
        return false;
      mlirPassManagerAddOwnedPass(pm, fly_pass_create(p->name));
      run_start = e < end ? e + 1 : e;
    }
    s = e < end ? e + 1 : e;
  }
  return add_upstream(opm, run_start, (size_t)(end - run_start), err);
}
