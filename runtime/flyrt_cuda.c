/* flyrt_cuda.c — the CUDA driver back end: libcuda.so.1 opened with
 * dlopen, so the runtime needs no CUDA toolkit to build or to run where
 * there is no GPU. Only the driver's stable C ABI is used; the prototypes
 * below are written from its documentation. Each device uses its primary
 * context, the one the CUDA runtime (and PyTorch) share. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "flyrt_internal.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream, *CUevent;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_NO_DEVICE = 100,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
  CU_MEMORYTYPE_HOST = 1,
  CU_MEMORYTYPE_DEVICE = 2,
  CU_MEMORYTYPE_UNIFIED = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
};

/* cuLaunchKernelEx's configuration (CUDA 12): one attribute is a 4-byte
   id, padding to 8, and a 64-byte union of values, of which the cluster's
   dimensions are three unsigned ints. */
typedef struct CUlaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    struct {
      unsigned x, y, z;
    } cluster_dim;
  } value;
} CUlaunchAttribute;

typedef struct CUlaunchConfig {
  unsigned grid_x, grid_y, grid_z;
  unsigned block_x, block_y, block_z;
  unsigned shared_bytes;
  CUstream stream;
  CUlaunchAttribute *attrs;
  unsigned nattrs;
} CUlaunchConfig;

_Static_assert(sizeof(CUlaunchAttribute) == 72, "CUlaunchAttribute is 72 bytes");

/* The driver's functions this back end calls: the name it is exported
   under, and a slot for it. */
static struct {
  CUresult (*Init)(unsigned);
  CUresult (*GetErrorName)(CUresult, const char **);
  CUresult (*DeviceGetCount)(int *);
  CUresult (*DeviceGet)(int *, int);
  CUresult (*DeviceGetName)(char *, int, int);
  CUresult (*DeviceGetAttribute)(int *, int, int);
  CUresult (*DevicePrimaryCtxRetain)(CUcontext *, int);
  CUresult (*DevicePrimaryCtxRelease)(int);
  CUresult (*CtxGetCurrent)(CUcontext *);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*CtxSynchronize)(void);
  CUresult (*ModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
  CUresult (*ModuleUnload)(CUmodule);
  CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*FuncSetAttribute)(CUfunction, int, int);
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, CUstream, void **, void **);
  CUresult (*PointerGetAttributes)(unsigned, int *, void **, CUdeviceptr);
  CUresult (*MemAlloc)(CUdeviceptr *, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*MemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*StreamCreate)(CUstream *, unsigned);
  CUresult (*StreamDestroy)(CUstream);
  CUresult (*StreamSynchronize)(CUstream);
  CUresult (*EventCreate)(CUevent *, unsigned);
  CUresult (*EventDestroy)(CUevent);
  CUresult (*EventRecord)(CUevent, CUstream);
  CUresult (*EventSynchronize)(CUevent);
  CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
  /* CUDA 12 and later; NULL in an older driver (TMA kernels then refuse). */
  CUresult (*TensorMapEncodeTiled)(void *, int, uint32_t, void *, const uint64_t *,
                                   const uint64_t *, const uint32_t *, const uint32_t *, int, int,
                                   int, int);
  /* CUDA 12 and later; NULL in an older driver (cluster kernels then refuse). */
  CUresult (*LaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);
} cu;

static const struct {
  const char *name, *fallback;
  size_t offset;
} symbols[] = {
#define SYM(field, name, fallback)                                                                 \
  { name, fallback, offsetof(__typeof__(cu), field) }
    SYM(Init, "cuInit", NULL),
    SYM(GetErrorName, "cuGetErrorName", NULL),
    SYM(DeviceGetCount, "cuDeviceGetCount", NULL),
    SYM(DeviceGet, "cuDeviceGet", NULL),
    SYM(DeviceGetName, "cuDeviceGetName", NULL),
    SYM(DeviceGetAttribute, "cuDeviceGetAttribute", NULL),
    SYM(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL),
    SYM(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"),
    SYM(CtxGetCurrent, "cuCtxGetCurrent", NULL),
    SYM(CtxSetCurrent, "cuCtxSetCurrent", NULL),
    SYM(CtxSynchronize, "cuCtxSynchronize", NULL),
    SYM(ModuleLoadDataEx, "cuModuleLoadDataEx", NULL),
    SYM(ModuleUnload, "cuModuleUnload", NULL),
    SYM(ModuleGetFunction, "cuModuleGetFunction", NULL),
    SYM(FuncSetAttribute, "cuFuncSetAttribute", NULL),
    SYM(LaunchKernel, "cuLaunchKernel", NULL),
    SYM(PointerGetAttributes, "cuPointerGetAttributes", NULL),
    SYM(MemAlloc, "cuMemAlloc_v2", NULL),
    SYM(MemFree, "cuMemFree_v2", NULL),
    SYM(MemcpyHtoD, "cuMemcpyHtoD_v2", NULL),
    SYM(MemcpyDtoH, "cuMemcpyDtoH_v2", NULL),
    SYM(MemcpyDtoD, "cuMemcpyDtoD_v2", NULL),
    SYM(MemsetD8, "cuMemsetD8_v2", NULL),
    SYM(StreamCreate, "cuStreamCreate", NULL),
    SYM(StreamDestroy, "cuStreamDestroy_v2", NULL),
    SYM(StreamSynchronize, "cuStreamSynchronize", NULL),
    SYM(EventCreate, "cuEventCreate", NULL),
    SYM(EventDestroy, "cuEventDestroy_v2", NULL),
    SYM(EventRecord, "cuEventRecord", NULL),
    SYM(EventSynchronize, "cuEventSynchronize", NULL),
    SYM(EventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
#undef SYM
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool loaded;
static CUresult init_result;
static char load_error[256];

static void load_driver(void) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(load_error, sizeof load_error, "libcuda.so.1 could not be loaded");
    return;
  }
  for (size_t i = 0; i < sizeof symbols / sizeof *symbols; i++) {
    void *f = dlsym(h, symbols[i].name);
    if (!f && symbols[i].fallback)
      f = dlsym(h, symbols[i].fallback);
    if (!f) {
      snprintf(load_error, sizeof load_error, "libcuda.so.1 has no %s (a driver too old?)",
               symbols[i].name);
      return;
    }
    memcpy((char *)&cu + symbols[i].offset, &f, sizeof f);
  }
  /* Optional: only kernels with tensor maps need it. */
  void *encode = dlsym(h, "cuTensorMapEncodeTiled");
  memcpy(&cu.TensorMapEncodeTiled, &encode, sizeof encode);
  /* Optional: only kernels with clusters need it. */
  void *launch_ex = dlsym(h, "cuLaunchKernelEx");
  memcpy(&cu.LaunchKernelEx, &launch_ex, sizeof launch_ex);
  /* The driver stays loaded: unloading it after cuInit is not supported. */
  init_result = cu.Init(0);
  loaded = true;
}

/* A failed call's message: "cuModuleLoadDataEx failed: CUDA_ERROR_... ". */
static FlyrtStatus check(CUresult r, const char *call) {
  if (r == CUDA_SUCCESS)
    return FLYRT_SUCCESS;
  const char *name = NULL;
  if (cu.GetErrorName(r, &name) != CUDA_SUCCESS || !name)
    name = "an unknown error";
  return flyrt_fail(r == 2 ? FLYRT_ERROR_OUT_OF_MEMORY : FLYRT_ERROR_DRIVER, "%s failed: %s (%d)",
                    call, name, r);
}

static FlyrtStatus count(int *n) {
  *n = 0;
  if (init_result == CUDA_ERROR_NO_DEVICE)
    return FLYRT_SUCCESS;
  if (init_result)
    return check(init_result, "cuInit");
  return check(cu.DeviceGetCount(n), "cuDeviceGetCount");
}

static FlyrtStatus open_device(Device *d) {
  int dev, major, minor;
  FlyrtStatus s = check(cu.DeviceGet(&dev, d->ordinal), "cuDeviceGet");
  if (!s)
    s = check(cu.DeviceGetName(d->name, sizeof d->name, dev), "cuDeviceGetName");
  if (!s)
    s = check(cu.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
              "cuDeviceGetAttribute");
  if (!s)
    s = check(cu.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
              "cuDeviceGetAttribute");
  if (!s)
    s = check(
        cu.DeviceGetAttribute(&d->multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
        "cuDeviceGetAttribute");
  if (!s)
    s = check(cu.DevicePrimaryCtxRetain(&d->context, dev), "cuDevicePrimaryCtxRetain");
  if (s)
    return s;
  snprintf(d->target, sizeof d->target, "sm_%d%d", major, minor);
  return FLYRT_SUCCESS;
}

static void close_device(Device *d) { cu.DevicePrimaryCtxRelease(d->ordinal); }

static FlyrtStatus bind(Device *d) {
  CUcontext cur = NULL;
  if (cu.CtxGetCurrent(&cur) == CUDA_SUCCESS && cur == d->context)
    return FLYRT_SUCCESS;
  return check(cu.CtxSetCurrent(d->context), "cuCtxSetCurrent");
}

static FlyrtStatus load(Device *d, const void *image, size_t size, uint32_t kind, void **module) {
  (void)d, (void)size, (void)kind;
  /* PTX is compiled here: its log says why when it fails. */
  char log[2048] = "";
  int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, (void *)(uintptr_t)sizeof log};
  CUresult r = cu.ModuleLoadDataEx(module, image, 2, options, values);
  if (r == CUDA_SUCCESS)
    return FLYRT_SUCCESS;
  FlyrtStatus s = check(r, "cuModuleLoadDataEx (loading the kernels' image)");
  char msg[256];
  snprintf(msg, sizeof msg, "%s", flyrtLastError());
  return log[0] ? flyrt_fail(s, "%s: %s", msg, log) : s;
}

static void unload(Device *d, void *module) {
  (void)d;
  cu.ModuleUnload(module);
}

static FlyrtStatus function(Device *d, void *module, const char *symbol, void **fn) {
  (void)d;
  CUresult r = cu.ModuleGetFunction((CUfunction *)fn, module, symbol);
  if (r == CUDA_SUCCESS)
    return FLYRT_SUCCESS;
  FlyrtStatus s = check(r, "cuModuleGetFunction");
  char msg[256];
  snprintf(msg, sizeof msg, "%s", flyrtLastError());
  return flyrt_fail(s, "the image has no function '%s' (%s)", symbol, msg);
}

static FlyrtStatus allow_shared(Device *d, void *fn, uint32_t bytes) {
  (void)d;
  return check(cu.FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)bytes),
               "cuFuncSetAttribute (dynamic shared memory)");
}

/* A kernel with a cluster is launched with its shape as an attribute of
   cuLaunchKernelEx (the binary's .reqnctapercluster must agree); the others
   with cuLaunchKernel, as before clusters. */
static FlyrtStatus launch(Device *d, void *fn, const FlyrtLaunchConfig *c, const uint32_t *cluster,
                          FlyrtStream s, void **params) {
  (void)d;
  if (cluster) {
    if (!cu.LaunchKernelEx)
      return flyrt_fail(FLYRT_ERROR_DRIVER,
                        "libcuda.so.1 has no cuLaunchKernelEx (a driver older than CUDA 12?)");
    CUlaunchAttribute a;
    memset(&a, 0, sizeof a);
    a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    a.value.cluster_dim.x = cluster[0];
    a.value.cluster_dim.y = cluster[1];
    a.value.cluster_dim.z = cluster[2];
    CUlaunchConfig lc = {c->grid[0],  c->grid[1],      c->grid[2], c->block[0], c->block[1],
                         c->block[2], c->shared_bytes, s,          &a,          1};
    return check(cu.LaunchKernelEx(&lc, fn, params, NULL), "cuLaunchKernelEx");
  }
  return check(cu.LaunchKernel(fn, c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1],
                               c->block[2], c->shared_bytes, s, params, NULL),
               "cuLaunchKernel");
}

static FlyrtStatus encode_tmap(Device *d, const FlyrtTmapEncode *e, void *map) {
  (void)d;
  if (!cu.TensorMapEncodeTiled)
    return flyrt_fail(FLYRT_ERROR_DRIVER,
                      "libcuda.so.1 has no cuTensorMapEncodeTiled (a driver older than CUDA 12?)");
  return check(cu.TensorMapEncodeTiled(map, e->data_type, e->rank, e->address, e->dims, e->strides,
                                       e->box, e->element_strides, e->interleave, e->swizzle,
                                       e->l2_promotion, e->oob_fill),
               "cuTensorMapEncodeTiled");
}

static FlyrtStatus check_pointer(Device *d, const void *p, const char *kernel, const char *param) {
  unsigned type = 0;
  int ordinal = -1;
  int attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  void *out[] = {&type, &ordinal};
  /* Unlike cuPointerGetAttribute, this call succeeds on any address,
     leaving the type 0 for memory the driver does not know. */
  FlyrtStatus s = check(cu.PointerGetAttributes(2, attrs, out, (CUdeviceptr)(uintptr_t)p),
                        "cuPointerGetAttributes");
  if (s)
    return s;
  if (type != CU_MEMORYTYPE_DEVICE && type != CU_MEMORYTYPE_UNIFIED && type != CU_MEMORYTYPE_HOST)
    return flyrt_fail(FLYRT_ERROR_ARGUMENTS,
                      "%s: argument '%s': %p is not GPU memory (host memory from malloc, or "
                      "freed?)",
                      kernel, param, p);
  if (type == CU_MEMORYTYPE_DEVICE && ordinal != d->ordinal)
    return flyrt_fail(FLYRT_ERROR_ARGUMENTS,
                      "%s: argument '%s': %p is memory of GPU %d, and the kernel runs on GPU %d",
                      kernel, param, p, ordinal, d->ordinal);
  return FLYRT_SUCCESS;
}

static FlyrtStatus malloc_(Device *d, size_t n, void **p) {
  (void)d;
  CUdeviceptr ptr = 0;
  FlyrtStatus s = check(cu.MemAlloc(&ptr, n), "cuMemAlloc");
  *p = (void *)(uintptr_t)ptr;
  return s;
}

static FlyrtStatus free_(Device *d, void *p) {
  (void)d;
  return check(cu.MemFree((CUdeviceptr)(uintptr_t)p), "cuMemFree");
}

static FlyrtStatus copy(Device *d, void *dst, const void *src, size_t n, int kind) {
  (void)d;
  if (kind == 1)
    return check(cu.MemcpyHtoD((CUdeviceptr)(uintptr_t)dst, src, n), "cuMemcpyHtoD");
  if (kind == 2)
    return check(cu.MemcpyDtoH(dst, (CUdeviceptr)(uintptr_t)src, n), "cuMemcpyDtoH");
  return check(cu.MemcpyDtoD((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, n),
               "cuMemcpyDtoD");
}

static FlyrtStatus memset_(Device *d, void *p, int byte, size_t n) {
  (void)d;
  return check(cu.MemsetD8((CUdeviceptr)(uintptr_t)p, (unsigned char)byte, n), "cuMemsetD8");
}

static FlyrtStatus sync(Device *d) {
  (void)d;
  return check(cu.CtxSynchronize(), "cuCtxSynchronize");
}

static FlyrtStatus stream_create(Device *d, FlyrtStream *s) {
  (void)d;
  return check(cu.StreamCreate((CUstream *)s, 0), "cuStreamCreate");
}

static FlyrtStatus stream_destroy(Device *d, FlyrtStream s) {
  (void)d;
  return check(cu.StreamDestroy(s), "cuStreamDestroy");
}

static FlyrtStatus stream_sync(Device *d, FlyrtStream s) {
  (void)d;
  return check(cu.StreamSynchronize(s), "cuStreamSynchronize");
}

static FlyrtStatus event_create(Device *d, void **e) {
  (void)d;
  return check(cu.EventCreate((CUevent *)e, 0), "cuEventCreate");
}

static void event_destroy(Device *d, void *e) {
  (void)d;
  cu.EventDestroy(e);
}

static FlyrtStatus event_record(Device *d, void *e, FlyrtStream s) {
  (void)d;
  return check(cu.EventRecord(e, s), "cuEventRecord");
}

static FlyrtStatus event_sync(Device *d, void *e) {
  (void)d;
  return check(cu.EventSynchronize(e), "cuEventSynchronize");
}

static FlyrtStatus event_elapsed(Device *d, void *a, void *b, float *ms) {
  (void)d;
  return check(cu.EventElapsedTime(ms, a, b), "cuEventElapsedTime");
}

static const Driver cuda = {
    .backend = FLYRT_BACKEND_CUDA,
    .name = "CUDA driver",
    .count = count,
    .open = open_device,
    .close = close_device,
    .bind = bind,
    .load = load,
    .unload = unload,
    .function = function,
    .allow_shared = allow_shared,
    .launch = launch,
    .encode_tmap = encode_tmap,
    .check_pointer = check_pointer,
    .malloc_ = malloc_,
    .free_ = free_,
    .copy = copy,
    .memset_ = memset_,
    .sync = sync,
    .stream_create = stream_create,
    .stream_destroy = stream_destroy,
    .stream_sync = stream_sync,
    .event_create = event_create,
    .event_destroy = event_destroy,
    .event_record = event_record,
    .event_sync = event_sync,
    .event_elapsed = event_elapsed,
};

const Driver *flyrt_cuda_driver(const char **why) {
  pthread_once(&once, load_driver);
  *why = load_error;
  return loaded ? &cuda : NULL;
}
