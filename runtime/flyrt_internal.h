/* flyrt_internal.h — what libflyrt's files share: the objects behind the
 * handles of fly/runtime.h, the driver interface each back end implements,
 * and the error helpers. */
#ifndef FLYRT_INTERNAL_H
#define FLYRT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "fly/runtime.h"
#include "fly_bundle.h"

/* ---- errors ---- */

/* Sets the calling thread's message and returns s, so that a check can
   `return flyrt_fail(...)`. */
FlyrtStatus flyrt_fail(FlyrtStatus s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Clears the message; returns FLYRT_SUCCESS. */
FlyrtStatus flyrt_ok(void);

/* ---- drivers ---- */

typedef struct Device Device;

/* The arguments of cuTensorMapEncodeTiled for one tensor map, in the
   driver's enumerations (flyrt_tmap.c). */
typedef struct FlyrtTmapEncode {
  int data_type; /* CUtensorMapDataType */
  uint32_t rank;
  void *address;
  uint64_t dims[FLY_TMAP_MAX_RANK];        /* elements, innermost first */
  uint64_t strides[FLY_TMAP_MAX_RANK - 1]; /* bytes, of dimensions 1 .. rank-1 */
  uint32_t box[FLY_TMAP_MAX_RANK];
  uint32_t element_strides[FLY_TMAP_MAX_RANK];
  int interleave, swizzle, l2_promotion, oob_fill;
} FlyrtTmapEncode;

/* One GPU API (the CUDA driver, HIP), loaded with dlopen. Every function
   reports its own failures with flyrt_fail, naming the driver call. */
typedef struct Driver {
  FlyrtBackend backend;
  const char *name; /* "CUDA driver", "HIP" */
  FlyrtStatus (*count)(int *n);
  /* Fills d->name and d->target; d->ordinal is set. */
  FlyrtStatus (*open)(Device *d);
  void (*close)(Device *d);
  /* Makes d current on the calling thread (its context, its device). */
  FlyrtStatus (*bind)(Device *d);
  FlyrtStatus (*load)(Device *d, const void *image, size_t size, uint32_t kind, void **module);
  void (*unload)(Device *d, void *module);
  FlyrtStatus (*function)(Device *d, void *module, const char *symbol, void **fn);
  /* Lets fn use `bytes` of dynamic shared memory (beyond the default). */
  FlyrtStatus (*allow_shared)(Device *d, void *fn, uint32_t bytes);
  /* cluster: the kernel's cluster shape, NULL for a kernel without one
     (CUDA launches it with cuLaunchKernelEx; HIP refuses it). */
  FlyrtStatus (*launch)(Device *d, void *fn, const FlyrtLaunchConfig *c, const uint32_t *cluster,
                        FlyrtStream s, void **params);
  /* Encodes a tensor map into map (128 bytes, 64-aligned); NULL where the
     API has none (HIP). */
  FlyrtStatus (*encode_tmap)(Device *d, const FlyrtTmapEncode *e, void *map);
  /* Whether p, argument `param` of `kernel`, is memory this device's
     kernels can use. */
  FlyrtStatus (*check_pointer)(Device *d, const void *p, const char *kernel, const char *param);
  FlyrtStatus (*malloc_)(Device *d, size_t n, void **p);
  FlyrtStatus (*free_)(Device *d, void *p);
  /* kind: 1 host to device, 2 device to host, 3 device to device. */
  FlyrtStatus (*copy)(Device *d, void *dst, const void *src, size_t n, int kind);
  FlyrtStatus (*memset_)(Device *d, void *p, int byte, size_t n);
  FlyrtStatus (*sync)(Device *d);
  FlyrtStatus (*stream_create)(Device *d, FlyrtStream *s);
  FlyrtStatus (*stream_destroy)(Device *d, FlyrtStream s);
  FlyrtStatus (*stream_sync)(Device *d, FlyrtStream s);
  FlyrtStatus (*event_create)(Device *d, void **e);
  void (*event_destroy)(Device *d, void *e);
  FlyrtStatus (*event_record)(Device *d, void *e, FlyrtStream s);
  FlyrtStatus (*event_sync)(Device *d, void *e);
  FlyrtStatus (*event_elapsed)(Device *d, void *start, void *end, float *ms);
} Driver;

/* The driver named by FLYRT_BACKEND, else the first that loads; NULL with
   the message set (FLYRT_ERROR_NO_DRIVER) when none does. */
const Driver *flyrt_driver(FlyrtStatus *status);
/* NULL, with the reason in *why, when the driver cannot be used. */
const Driver *flyrt_cuda_driver(const char **why); /* libcuda.so.1 */
const Driver *flyrt_hip_driver(const char **why);  /* libamdhip64.so */

struct Device {
  const Driver *driver;
  int ordinal;
  char name[256];
  char target[32];     /* "sm_90", "gfx942"; "" when unknown */
  int multiprocessors; /* SMs (CUs on AMD); 0 when unknown */
  void *context;       /* the driver's (CUDA: the primary context) */
};

typedef struct Event {
  Device *device;
  void *event;
} Event;

/* ---- bundles, modules, kernels ---- */

typedef struct Bundle {
  atomic_int refs; /* the owner's and each module's */
  void *bytes;     /* the whole file, 16-aligned */
  FlyBundle b;
} Bundle;

void flyrt_bundle_retain(Bundle *b);
void flyrt_bundle_release(Bundle *b);

/* A parameter as the launch path needs it. */
typedef struct Param {
  FlyrtParamInfo info;
  uint32_t first_arg; /* in the function's argument list */
  int dyn_shape, dyn_stride;
  /* A tensor's pointer the driver found GPU memory of the kernel's GPU at
     the kernel's last launch (0: none): a launch with the same one does not
     ask again. */
  _Atomic uintptr_t checked;
} Param;

typedef struct Image Image;

typedef struct Kernel {
  struct Module *module;
  uint32_t index; /* in the bundle's kernel table */
  FlyBundleKernel rec;
  const char *name, *spec, *symbol;
  Image *image;
  Param *params;              /* rec.nparams */
  int nuser;                  /* parameters that take an argument (tensors, scalars) */
  FlyBundleTensorMap *tmaps;  /* rec.ntmaps: what it takes beyond its parameters */
  void *fn;                   /* the loaded function; NULL until flyrtModuleGetKernel */
  atomic_uint shared_allowed; /* dynamic shared memory bytes allowed so far */
} Kernel;

struct Image {
  uint32_t index; /* in the bundle's image table */
  void *module;   /* the driver's, once loaded */
};

typedef struct Module {
  Bundle *bundle;
  Device *device; /* NULL: checks and launch rules only */
  char target[32];
  pthread_mutex_t lock; /* loading images and functions */
  Kernel *kernels;      /* those of the chosen target */
  uint32_t nkernels;
  Image *images;
  uint32_t nimages;
} Module;

/* The target of b's images that suits a device of device_target best
   (described as `device` in the message when none does). */
FlyrtStatus flyrt_choose_target(const FlyBundle *b, const char *device_target, const char *device,
                                char *out, size_t n);

/* Parses a tensor's layout text ("(?,?):(?,1)") into p's leaves. */
bool flyrt_parse_layout(const char *text, FlyrtParamInfo *p);

/* k's cluster shape: true and the shape for a kernel compiled for
   clusters, else false and 1, 1, 1. */
bool flyrt_kernel_cluster(const Kernel *k, uint32_t cluster[3]);

/* Checks args for k and fills the function's argument slots (slots[i] is
   argument i's value, in its own type's bytes at the start) and the launch
   configuration from the rule (with override); the grid must be made of
   whole clusters of a kernel's cluster. */
FlyrtStatus flyrt_prepare(const Kernel *k, const FlyrtArg *args, int nargs,
                          const FlyrtLaunchConfig *override, uint64_t *slots,
                          FlyrtLaunchConfig *config);

enum { FLYRT_MAX_ARGS = 256, FLYRT_MAX_TMAPS = 16 };

/* Checks that TMA can map tensor t as k's map m describes and fills e for
   the driver; a refusal names the argument and the rule (flyrt_tmap.c). */
FlyrtStatus flyrt_tmap_prepare(const Kernel *k, const FlyBundleTensorMap *m, const FlyrtTensor *t,
                               FlyrtTmapEncode *e);
/* Encoded maps kept for the next launch (flyrt_tmap_cache.c): get copies
   the 128-byte map encoded before from arguments e, if it is kept; put
   keeps map as the encoding of e. */
bool flyrt_tmap_cache_get(const FlyrtTmapEncode *e, void *map);
void flyrt_tmap_cache_put(const FlyrtTmapEncode *e, const void *map);
/* The tensor argument of parameter `param` among a launch's args (NULL
   when it is none). */
const FlyrtTensor *flyrt_param_tensor(const Kernel *k, const FlyrtArg *args, int nargs,
                                      uint32_t param);

#endif
