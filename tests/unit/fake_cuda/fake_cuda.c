/* fake_cuda.c — a stand-in for the CUDA driver (libcuda.so.1) for
 * unit.flyrt_cuda: one device of compute capability 9.0 whose calls all
 * succeed and do nothing, except that each launch is recorded for the test
 * to read back through fake_cuda_last_launch, and tensor maps encoded and
 * pointers asked about are counted. Only what libflyrt's CUDA
 * back end calls is here, with the prototypes it declares. */
#include <stdint.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream, *CUevent;

/* What the test reads: which entry point launched, with what shape. */
typedef struct FakeLaunch {
  int calls; /* launches so far */
  int ex;    /* 1: cuLaunchKernelEx, 0: cuLaunchKernel */
  unsigned grid[3], block[3], shared, cluster[3];
  int nattrs;
  int encodes; /* cuTensorMapEncodeTiled calls so far */
  int checks;  /* cuPointerGetAttributes calls so far */
} FakeLaunch;

static FakeLaunch last;
static char context_slot, module_slot, function_slot;

const FakeLaunch *fake_cuda_last_launch(void) { return &last; }

CUresult cuInit(unsigned flags) { return flags ? 1 : 0; }
CUresult cuGetErrorName(CUresult r, const char **s) {
  *s = r ? "CUDA_ERROR_FAKE" : "CUDA_SUCCESS";
  return 0;
}
CUresult cuDeviceGetCount(int *n) { return *n = 1, 0; }
CUresult cuDeviceGet(int *d, int ordinal) { return *d = ordinal, 0; }
CUresult cuDeviceGetName(char *name, int n, int d) {
  (void)d;
  strncpy(name, "Fake H100", (size_t)n);
  return 0;
}
CUresult cuDeviceGetAttribute(int *v, int attr, int d) {
  (void)d;
  *v = attr == 75 ? 9 : attr == 76 ? 0 : attr == 16 ? 132 : 0;
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, int d) {
  (void)d;
  return *c = &context_slot, 0;
}
CUresult cuDevicePrimaryCtxRelease_v2(int d) { return (void)d, 0; }
CUresult cuCtxGetCurrent(CUcontext *c) { return *c = &context_slot, 0; }
CUresult cuCtxSetCurrent(CUcontext c) { return (void)c, 0; }
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, int *o, void **v) {
  (void)image, (void)n, (void)o, (void)v;
  return *m = &module_slot, 0;
}
CUresult cuModuleUnload(CUmodule m) { return (void)m, 0; }
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  (void)m, (void)name;
  return *f = &function_slot, 0;
}
CUresult cuFuncSetAttribute(CUfunction f, int attr, int v) {
  return (void)f, (void)attr, (void)v, 0;
}

static void record(int ex, const unsigned g[3], const unsigned b[3], unsigned shared) {
  last.calls++;
  last.ex = ex;
  memcpy(last.grid, g, sizeof last.grid);
  memcpy(last.block, b, sizeof last.block);
  last.shared = shared;
  memset(last.cluster, 0, sizeof last.cluster);
  last.nattrs = 0;
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, CUstream s, void **p, void **e) {
  (void)f, (void)s, (void)p, (void)e;
  const unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
  record(0, g, b, shared);
  return 0;
}

/* CUlaunchConfig and CUlaunchAttribute as cuda.h lays them out. */
typedef struct {
  int id;
  char pad[4];
  union {
    char bytes[64];
    struct {
      unsigned x, y, z;
    } cluster_dim;
  } value;
} Attr;
typedef struct {
  unsigned grid[3], block[3], shared;
  CUstream stream;
  Attr *attrs;
  unsigned nattrs;
} Config;

CUresult cuLaunchKernelEx(const Config *c, CUfunction f, void **p, void **e) {
  (void)f, (void)p, (void)e;
  record(1, c->grid, c->block, c->shared);
  last.nattrs = (int)c->nattrs;
  for (unsigned i = 0; i < c->nattrs; i++)
    if (c->attrs[i].id == 4) { /* CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION */
      last.cluster[0] = c->attrs[i].value.cluster_dim.x;
      last.cluster[1] = c->attrs[i].value.cluster_dim.y;
      last.cluster[2] = c->attrs[i].value.cluster_dim.z;
    }
  return 0;
}

/* Every pointer is memory of device 0 (CU_MEMORYTYPE_DEVICE). */
CUresult cuPointerGetAttributes(unsigned n, int *attrs, void **out, CUdeviceptr p) {
  (void)p;
  last.checks++;
  for (unsigned i = 0; i < n; i++) {
    if (attrs[i] == 2)
      *(unsigned *)out[i] = 2;
    else
      *(int *)out[i] = 0;
  }
  return 0;
}
CUresult cuTensorMapEncodeTiled(void *map, int type, uint32_t rank, void *address,
                                const uint64_t *dims, const uint64_t *strides, const uint32_t *box,
                                const uint32_t *es, int il, int sw, int l2, int oob) {
  (void)type, (void)rank, (void)address, (void)dims, (void)strides, (void)box, (void)es, (void)il,
      (void)sw, (void)l2, (void)oob;
  memset(map, 0, 128);
  last.encodes++;
  return 0;
}

/* Memory, streams and events: never called by the test, present because
   the back end loads them all. */
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) { return (void)n, *p = 0, 1; }
CUresult cuMemFree_v2(CUdeviceptr p) { return (void)p, 0; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) {
  return (void)d, (void)s, (void)n, 0;
}
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { return (void)d, (void)s, (void)n, 0; }
CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) {
  return (void)d, (void)s, (void)n, 0;
}
CUresult cuMemsetD8_v2(CUdeviceptr p, unsigned char v, size_t n) {
  return (void)p, (void)v, (void)n, 0;
}
CUresult cuStreamCreate(CUstream *s, unsigned f) { return (void)f, *s = NULL, 0; }
CUresult cuStreamDestroy_v2(CUstream s) { return (void)s, 0; }
CUresult cuStreamSynchronize(CUstream s) { return (void)s, 0; }
CUresult cuEventCreate(CUevent *e, unsigned f) { return (void)f, *e = NULL, 0; }
CUresult cuEventDestroy_v2(CUevent e) { return (void)e, 0; }
CUresult cuEventRecord(CUevent e, CUstream s) { return (void)e, (void)s, 0; }
CUresult cuEventSynchronize(CUevent e) { return (void)e, 0; }
CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b) {
  return (void)a, (void)b, *ms = 0, 0;
}
