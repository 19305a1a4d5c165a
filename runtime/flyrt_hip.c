/* flyrt_hip.c — the HIP back end for AMD GPUs: libamdhip64.so opened with
 * dlopen, loading HSACO code objects with hipModuleLoadData. Prototypes
 * are written from HIP's documentation; only its C ABI is used. HIP keeps
 * a current device per thread, which bind sets. */
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flyrt_internal.h"

typedef int hipError_t;
typedef void *hipModule_t, *hipFunction_t, *hipStream_t, *hipEvent_t;

enum {
  hipSuccess = 0,
  hipErrorOutOfMemory = 2,
  hipErrorNoDevice = 100,
  hipMemcpyHostToDevice = 1,
  hipMemcpyDeviceToHost = 2,
  hipMemcpyDeviceToDevice = 3,
  HIP_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
  hipMemoryTypeUnregistered = 0,
};

static struct {
  hipError_t (*Init)(unsigned);
  const char *(*GetErrorName)(hipError_t);
  hipError_t (*GetDeviceCount)(int *);
  hipError_t (*SetDevice)(int);
  hipError_t (*GetDevice)(int *);
  hipError_t (*DeviceGet)(int *, int);
  hipError_t (*DeviceGetName)(char *, int, int);
  hipError_t (*DeviceSynchronize)(void);
  hipError_t (*ModuleLoadData)(hipModule_t *, const void *);
  hipError_t (*ModuleUnload)(hipModule_t);
  hipError_t (*ModuleGetFunction)(hipFunction_t *, hipModule_t, const char *);
  hipError_t (*ModuleLaunchKernel)(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   unsigned, unsigned, hipStream_t, void **, void **);
  hipError_t (*PointerGetAttribute)(void *, int, void *);
  hipError_t (*Malloc)(void **, size_t);
  hipError_t (*Free)(void *);
  hipError_t (*Memcpy)(void *, const void *, size_t, int);
  hipError_t (*Memset)(void *, int, size_t);
  hipError_t (*StreamCreate)(hipStream_t *);
  hipError_t (*StreamDestroy)(hipStream_t);
  hipError_t (*StreamSynchronize)(hipStream_t);
  hipError_t (*EventCreate)(hipEvent_t *);
  hipError_t (*EventDestroy)(hipEvent_t);
  hipError_t (*EventRecord)(hipEvent_t, hipStream_t);
  hipError_t (*EventSynchronize)(hipEvent_t);
  hipError_t (*EventElapsedTime)(float *, hipEvent_t, hipEvent_t);
} hip;

static const struct {
  const char *name;
  size_t offset;
} symbols[] = {
#define SYM(field, name)                                                                           \
  { name, offsetof(__typeof__(hip), field) }
    SYM(Init, "hipInit"),
    SYM(GetErrorName, "hipGetErrorName"),
    SYM(GetDeviceCount, "hipGetDeviceCount"),
    SYM(SetDevice, "hipSetDevice"),
    SYM(GetDevice, "hipGetDevice"),
    SYM(DeviceGet, "hipDeviceGet"),
    SYM(DeviceGetName, "hipDeviceGetName"),
    SYM(DeviceSynchronize, "hipDeviceSynchronize"),
    SYM(ModuleLoadData, "hipModuleLoadData"),
    SYM(ModuleUnload, "hipModuleUnload"),
    SYM(ModuleGetFunction, "hipModuleGetFunction"),
    SYM(ModuleLaunchKernel, "hipModuleLaunchKernel"),
    SYM(PointerGetAttribute, "hipPointerGetAttribute"),
    SYM(Malloc, "hipMalloc"),
    SYM(Free, "hipFree"),
    SYM(Memcpy, "hipMemcpy"),
    SYM(Memset, "hipMemset"),
    SYM(StreamCreate, "hipStreamCreate"),
    SYM(StreamDestroy, "hipStreamDestroy"),
    SYM(StreamSynchronize, "hipStreamSynchronize"),
    SYM(EventCreate, "hipEventCreate"),
    SYM(EventDestroy, "hipEventDestroy"),
    SYM(EventRecord, "hipEventRecord"),
    SYM(EventSynchronize, "hipEventSynchronize"),
    SYM(EventElapsedTime, "hipEventElapsedTime"),
#undef SYM
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool loaded;
static hipError_t init_result;
static char load_error[256];

static void load_driver(void) {
  void *h = dlopen("libamdhip64.so", RTLD_NOW | RTLD_LOCAL);
  if (!h)
    h = dlopen("/opt/rocm/lib/libamdhip64.so", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(load_error, sizeof load_error, "libamdhip64.so could not be loaded");
    return;
  }
  for (size_t i = 0; i < sizeof symbols / sizeof *symbols; i++) {
    void *f = dlsym(h, symbols[i].name);
    if (!f) {
      snprintf(load_error, sizeof load_error, "libamdhip64.so has no %s (a HIP too old?)",
               symbols[i].name);
      return;
    }
    memcpy((char *)&hip + symbols[i].offset, &f, sizeof f);
  }
  init_result = hip.Init(0);
  loaded = true;
}

static FlyrtStatus check(hipError_t r, const char *call) {
  if (r == hipSuccess)
    return FLYRT_SUCCESS;
  const char *name = hip.GetErrorName(r);
  return flyrt_fail(r == hipErrorOutOfMemory ? FLYRT_ERROR_OUT_OF_MEMORY : FLYRT_ERROR_DRIVER,
                    "%s failed: %s (%d)", call, name ? name : "an unknown error", r);
}

static FlyrtStatus count(int *n) {
  *n = 0;
  if (init_result == hipErrorNoDevice)
    return FLYRT_SUCCESS;
  if (init_result)
    return check(init_result, "hipInit");
  hipError_t r = hip.GetDeviceCount(n);
  return r == hipErrorNoDevice ? FLYRT_SUCCESS : check(r, "hipGetDeviceCount");
}

/* The chip of GPU `ordinal`, from the kernel driver's topology in sysfs
   (HIP's C ABI has no call for it that is stable across versions): the
   GPU nodes in order, each with its gfx_target_version, 90402 for gfx942.
   Devices hidden by HIP_VISIBLE_DEVICES are not accounted for: then, or
   when it fails, the target stays unknown and a module needs one named. */
static void chip_of(int ordinal, char *out, size_t n) {
  const char *root = "/sys/class/kfd/kfd/topology/nodes";
  out[0] = '\0';
  if (getenv("HIP_VISIBLE_DEVICES") || getenv("ROCR_VISIBLE_DEVICES"))
    return;
  int gpu = 0;
  for (int node = 0; node < 256; node++) {
    char path[128], line[256];
    snprintf(path, sizeof path, "%s/%d/properties", root, node);
    FILE *f = fopen(path, "r");
    if (!f)
      break;
    unsigned long v = 0;
    while (fgets(line, sizeof line, f))
      if (sscanf(line, "gfx_target_version %lu", &v) == 1)
        break;
    fclose(f);
    if (v == 0)
      continue; /* a CPU */
    if (gpu++ == ordinal) {
      snprintf(out, n, "gfx%lu%lu%lx", v / 10000, v / 100 % 100, v % 100);
      return;
    }
  }
}

static FlyrtStatus open_device(Device *d) {
  int dev;
  FlyrtStatus s = check(hip.DeviceGet(&dev, d->ordinal), "hipDeviceGet");
  if (!s)
    s = check(hip.DeviceGetName(d->name, sizeof d->name, dev), "hipDeviceGetName");
  if (s)
    return s;
  chip_of(d->ordinal, d->target, sizeof d->target);
  return FLYRT_SUCCESS;
}

static void close_device(Device *d) { (void)d; }

static FlyrtStatus bind(Device *d) {
  int cur = -1;
  if (hip.GetDevice(&cur) == hipSuccess && cur == d->ordinal)
    return FLYRT_SUCCESS;
  return check(hip.SetDevice(d->ordinal), "hipSetDevice");
}

static FlyrtStatus load(Device *d, const void *image, size_t size, uint32_t kind, void **module) {
  (void)d, (void)size, (void)kind;
  return check(hip.ModuleLoadData(module, image), "hipModuleLoadData (loading the kernels' code)");
}

static void unload(Device *d, void *module) {
  (void)d;
  hip.ModuleUnload(module);
}

static FlyrtStatus function(Device *d, void *module, const char *symbol, void **fn) {
  (void)d;
  hipError_t r = hip.ModuleGetFunction(fn, module, symbol);
  if (r == hipSuccess)
    return FLYRT_SUCCESS;
  FlyrtStatus s = check(r, "hipModuleGetFunction");
  char msg[256];
  snprintf(msg, sizeof msg, "%s", flyrtLastError());
  return flyrt_fail(s, "the code object has no function '%s' (%s)", symbol, msg);
}

/* AMD GPUs give a kernel all of the workgroup's LDS without asking. */
static FlyrtStatus allow_shared(Device *d, void *fn, uint32_t bytes) {
  (void)d, (void)fn, (void)bytes;
  return FLYRT_SUCCESS;
}

static FlyrtStatus launch(Device *d, void *fn, const FlyrtLaunchConfig *c, const uint32_t *cluster,
                          FlyrtStream s, void **params) {
  (void)d;
  /* AMD targets have no clusters: no bundle for them asks for one. */
  if (cluster)
    return flyrt_fail(FLYRT_ERROR_NO_IMAGE, "HIP has no thread-block clusters");
  return check(hip.ModuleLaunchKernel(fn, c->grid[0], c->grid[1], c->grid[2], c->block[0],
                                      c->block[1], c->block[2], c->shared_bytes, s, params, NULL),
               "hipModuleLaunchKernel");
}

/* Only a pointer HIP positively knows as unregistered host memory is
   refused: versions differ in what they say of the others. */
static FlyrtStatus check_pointer(Device *d, const void *p, const char *kernel, const char *param) {
  (void)d;
  unsigned type = 1u << 31;
  if (hip.PointerGetAttribute(&type, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, (void *)p) == hipSuccess &&
      type == hipMemoryTypeUnregistered)
    return flyrt_fail(FLYRT_ERROR_ARGUMENTS, "%s: argument '%s': %p is not GPU memory", kernel,
                      param, p);
  return FLYRT_SUCCESS;
}

static FlyrtStatus malloc_(Device *d, size_t n, void **p) {
  (void)d;
  return check(hip.Malloc(p, n), "hipMalloc");
}

static FlyrtStatus free_(Device *d, void *p) {
  (void)d;
  return check(hip.Free(p), "hipFree");
}

static FlyrtStatus copy(Device *d, void *dst, const void *src, size_t n, int kind) {
  (void)d;
  int k = kind == 1   ? hipMemcpyHostToDevice
          : kind == 2 ? hipMemcpyDeviceToHost
                      : hipMemcpyDeviceToDevice;
  return check(hip.Memcpy(dst, src, n, k), "hipMemcpy");
}

static FlyrtStatus memset_(Device *d, void *p, int byte, size_t n) {
  (void)d;
  return check(hip.Memset(p, byte, n), "hipMemset");
}

static FlyrtStatus sync(Device *d) {
  (void)d;
  return check(hip.DeviceSynchronize(), "hipDeviceSynchronize");
}

static FlyrtStatus stream_create(Device *d, FlyrtStream *s) {
  (void)d;
  return check(hip.StreamCreate(s), "hipStreamCreate");
}

static FlyrtStatus stream_destroy(Device *d, FlyrtStream s) {
  (void)d;
  return check(hip.StreamDestroy(s), "hipStreamDestroy");
}

static FlyrtStatus stream_sync(Device *d, FlyrtStream s) {
  (void)d;
  return check(hip.StreamSynchronize(s), "hipStreamSynchronize");
}

static FlyrtStatus event_create(Device *d, void **e) {
  (void)d;
  return check(hip.EventCreate(e), "hipEventCreate");
}

static void event_destroy(Device *d, void *e) {
  (void)d;
  hip.EventDestroy(e);
}

static FlyrtStatus event_record(Device *d, void *e, FlyrtStream s) {
  (void)d;
  return check(hip.EventRecord(e, s), "hipEventRecord");
}

static FlyrtStatus event_sync(Device *d, void *e) {
  (void)d;
  return check(hip.EventSynchronize(e), "hipEventSynchronize");
}

static FlyrtStatus event_elapsed(Device *d, void *a, void *b, float *ms) {
  (void)d;
  return check(hip.EventElapsedTime(ms, a, b), "hipEventElapsedTime");
}

static const Driver hip_driver = {
    .backend = FLYRT_BACKEND_HIP,
    .name = "HIP runtime",
    .count = count,
    .open = open_device,
    .close = close_device,
    .bind = bind,
    .load = load,
    .unload = unload,
    .function = function,
    .allow_shared = allow_shared,
    .launch = launch,
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

const Driver *flyrt_hip_driver(const char **why) {
  pthread_once(&once, load_driver);
  *why = load_error;
  return loaded ? &hip_driver : NULL;
}
