/* fly/runtime.h — libflyrt: load Fly bundles (.flyb) and launch their
 * kernels on a GPU, through the CUDA driver or HIP, without the compiler.
 *
 *   FlyrtDevice dev;   FlyrtBundle b;   FlyrtModule m;   FlyrtKernel k;
 *   if (flyrtDeviceCreate(0, &dev) ||
 *       flyrtBundleCreateFromFile("vadd.flyb", &b) ||
 *       flyrtModuleCreate(b, dev, NULL, &m) ||
 *       flyrtModuleGetKernel(m, "vector_add", NULL, &k))
 *     fprintf(stderr, "%s\n", flyrtLastError());
 *   int64_t n = 1 << 20;
 *   FlyrtArg args[3] = {flyrtTensor1D(A, FLYRT_F32, n), flyrtTensor1D(B, FLYRT_F32, n),
 *                       flyrtTensor1D(C, FLYRT_F32, n)};
 *   flyrtKernelLaunch(k, args, 3, NULL, NULL);   // grid and block from the launch rule
 *   ...
 *   flyrtModuleDestroy(m); flyrtBundleDestroy(b); flyrtDeviceDestroy(dev);
 *
 * Ownership is in the names: what a ...Create function
 * makes, the caller releases with the matching ...Destroy; what a ...Get
 * function returns belongs to the object it came from (a kernel lives as
 * long as its module).
 *
 * Every function that can fail returns a FlyrtStatus; on failure the
 * calling thread's flyrtLastError() says what went wrong in a sentence (a
 * driver failure names the call and the driver's own error name). No
 * input, however malformed, makes the library crash or abort.
 *
 * Threads: all functions may be called from any thread. Objects may be
 * shared between threads once created; launching kernels of one module from
 * several threads at once is supported. Destroying an object while another
 * thread uses it is not.
 *
 * Drivers are found at run time with dlopen: libcuda.so.1 (NVIDIA: images
 * of kind PTX or CUBIN) and libamdhip64.so (AMD: HSACO). FLYRT_BACKEND=cuda
 * or =hip picks one; otherwise CUDA is tried first. The library needs only
 * libc (and libdl, which is part of it on current systems). */
#ifndef FLY_RUNTIME_H
#define FLY_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FLYRT_API __attribute__((visibility("default")))

/* The runtime's version, "0.1.0", and the newest bundle format it reads. */
FLYRT_API const char *flyrtVersion(void);
FLYRT_API uint32_t flyrtBundleFormatVersion(void);

/* ---- errors ----------------------------------------------------------------- */

typedef enum FlyrtStatus {
  FLYRT_SUCCESS = 0,
  FLYRT_ERROR_INVALID_VALUE = 1, /* a null handle or pointer, a bad setting */
  FLYRT_ERROR_IO = 2,            /* a file cannot be read */
  FLYRT_ERROR_BAD_BUNDLE = 3,    /* not a bundle, truncated, corrupted */
  FLYRT_ERROR_VERSION = 4,       /* a bundle of a format version this runtime does not read */
  FLYRT_ERROR_NOT_FOUND = 5,     /* no such kernel or specialisation */
  FLYRT_ERROR_NO_IMAGE = 6,      /* the bundle has no binary this device runs */
  FLYRT_ERROR_ARGUMENTS = 7,     /* wrong number, kind, type, shape or stride of arguments */
  FLYRT_ERROR_LAUNCH_RULE = 8,   /* the launch rule failed (overflow, out of range), or none */
  FLYRT_ERROR_NO_DRIVER = 9,     /* neither libcuda.so.1 nor libamdhip64.so could be loaded */
  FLYRT_ERROR_NO_DEVICE = 10,    /* no GPU with that ordinal; or a module made without one */
  FLYRT_ERROR_DRIVER = 11,       /* a driver call failed: the message names it */
  FLYRT_ERROR_OUT_OF_MEMORY = 12,
  FLYRT_ERROR_LAUNCH_REFUSED = 13, /* a `require` of the kernel's launch block does not hold */
} FlyrtStatus;

/* The message of the calling thread's last failure ("" when none); valid
   until that thread's next call into the library. */
FLYRT_API const char *flyrtLastError(void);
/* The status's name, "FLYRT_ERROR_NOT_FOUND". */
FLYRT_API const char *flyrtStatusName(FlyrtStatus s);

/* ---- devices ---------------------------------------------------------------- */

typedef struct FlyrtDevice {
  void *ptr;
} FlyrtDevice;

typedef enum FlyrtBackend { FLYRT_BACKEND_CUDA = 1, FLYRT_BACKEND_HIP = 2 } FlyrtBackend;

/* How many GPUs the driver sees (0 with FLYRT_ERROR_NO_DRIVER when there is
   no driver). */
FLYRT_API FlyrtStatus flyrtDeviceCount(int *count);
/* Opens GPU `ordinal` (its primary context, shared with other users of the
   driver in this process, PyTorch included). */
FLYRT_API FlyrtStatus flyrtDeviceCreate(int ordinal, FlyrtDevice *out);
FLYRT_API void flyrtDeviceDestroy(FlyrtDevice d);
/* What it is: the target Fly compiles for ("sm_90", "gfx942"), the product
   name, the backend. Strings are owned by the device. */
FLYRT_API const char *flyrtDeviceTarget(FlyrtDevice d);
FLYRT_API const char *flyrtDeviceName(FlyrtDevice d);
FLYRT_API FlyrtBackend flyrtDeviceBackend(FlyrtDevice d);
FLYRT_API int flyrtDeviceOrdinal(FlyrtDevice d);
/* Its multiprocessors (NVIDIA's SMs), the size of a persistent kernel's
   grid; 0 when the driver does not say (AMD, for now) or d is NULL. */
FLYRT_API int flyrtDeviceMultiprocessors(FlyrtDevice d);
FLYRT_API FlyrtStatus flyrtDeviceSynchronize(FlyrtDevice d);

/* Device memory. */
FLYRT_API FlyrtStatus flyrtMalloc(FlyrtDevice d, size_t bytes, void **ptr);
FLYRT_API FlyrtStatus flyrtFree(FlyrtDevice d, void *ptr);
FLYRT_API FlyrtStatus flyrtMemcpyHostToDevice(FlyrtDevice d, void *dst, const void *src,
                                              size_t bytes);
FLYRT_API FlyrtStatus flyrtMemcpyDeviceToHost(FlyrtDevice d, void *dst, const void *src,
                                              size_t bytes);
FLYRT_API FlyrtStatus flyrtMemcpyDeviceToDevice(FlyrtDevice d, void *dst, const void *src,
                                                size_t bytes);
FLYRT_API FlyrtStatus flyrtMemset(FlyrtDevice d, void *ptr, int byte, size_t bytes);

/* Streams are the driver's own (CUstream, hipStream_t), so a stream made
   elsewhere (PyTorch's) is used as it is. NULL is the default stream. */
typedef void *FlyrtStream;
FLYRT_API FlyrtStatus flyrtStreamCreate(FlyrtDevice d, FlyrtStream *out);
FLYRT_API FlyrtStatus flyrtStreamDestroy(FlyrtDevice d, FlyrtStream s);
FLYRT_API FlyrtStatus flyrtStreamSynchronize(FlyrtDevice d, FlyrtStream s);

/* Events, for timing work on a stream. */
typedef struct FlyrtEvent {
  void *ptr;
} FlyrtEvent;
FLYRT_API FlyrtStatus flyrtEventCreate(FlyrtDevice d, FlyrtEvent *out);
FLYRT_API void flyrtEventDestroy(FlyrtEvent e);
FLYRT_API FlyrtStatus flyrtEventRecord(FlyrtEvent e, FlyrtStream s);
FLYRT_API FlyrtStatus flyrtEventSynchronize(FlyrtEvent e);
/* Milliseconds from start to end, both recorded and complete. */
FLYRT_API FlyrtStatus flyrtEventElapsed(FlyrtEvent start, FlyrtEvent end, float *ms);

/* ---- bundles ---------------------------------------------------------------- */

typedef struct FlyrtBundle {
  void *ptr;
} FlyrtBundle;

/* Reads and checks a bundle (every offset, reference and the checksum)
   before anything of it is used; no device is involved. */
FLYRT_API FlyrtStatus flyrtBundleCreateFromFile(const char *path, FlyrtBundle *out);
/* The same from size bytes at data, which are copied. */
FLYRT_API FlyrtStatus flyrtBundleCreateFromMemory(const void *data, size_t size, FlyrtBundle *out);
FLYRT_API void flyrtBundleDestroy(FlyrtBundle b);

/* The kernel specialisations it holds, each on one target. */
typedef struct FlyrtKernelEntry {
  const char *name;       /* "vector_add" */
  const char *spec;       /* its const bindings, "BLOCK=256 VEC=4" ("" when none) */
  const char *target;     /* "sm_90" */
  const char *image_kind; /* "ptx", "cubin", "hsaco" */
} FlyrtKernelEntry;
FLYRT_API uint32_t flyrtBundleKernelCount(FlyrtBundle b);
/* Entry i (below the count); its strings belong to the bundle. */
FLYRT_API FlyrtStatus flyrtBundleKernelEntry(FlyrtBundle b, uint32_t i, FlyrtKernelEntry *out);
/* The compiler that wrote it and the hash of its sources. */
FLYRT_API const char *flyrtBundleCompiler(FlyrtBundle b);
FLYRT_API const char *flyrtBundleSourceHash(FlyrtBundle b);

/* ---- modules and kernels ---------------------------------------------------- */

typedef struct FlyrtModule {
  void *ptr;
} FlyrtModule;
typedef struct FlyrtKernel {
  void *ptr;
} FlyrtKernel;

/* The kernels of bundle b for one device. The module keeps b alive (b may
   be destroyed first). target NULL: the device's; otherwise the target
   whose images to use ("sm_90"). With a null device (d.ptr NULL) and a
   target, the module can find kernels, check arguments and compute launch
   configurations, but not launch (FLYRT_ERROR_NO_DEVICE): for tools and
   tests on machines without a GPU.

   NVIDIA images are chosen in this order: a cubin for the device's exact
   architecture, PTX for it, then PTX for the newest older architecture
   (PTX is compiled forward by the driver; sm_90a is never used on
   another chip). AMD images must match the chip exactly. No image for the
   device is FLYRT_ERROR_NO_IMAGE, naming the device and the targets the
   bundle has. */
FLYRT_API FlyrtStatus flyrtModuleCreate(FlyrtBundle b, FlyrtDevice d, const char *target,
                                        FlyrtModule *out);
FLYRT_API void flyrtModuleDestroy(FlyrtModule m);
/* The target whose images the module uses. */
FLYRT_API const char *flyrtModuleTarget(FlyrtModule m);

/* Finds kernel `name`. spec NULL or "": its only specialisation for the
   module's target; otherwise bindings "BLOCK=128 VEC=4" (any order, a
   subset is enough) that pick exactly one. The binary is loaded into the
   device here, once per image (the driver compiles PTX then), so a first
   launch is not slow and no module is loaded during graph capture. The
   kernel belongs to the module. */
FLYRT_API FlyrtStatus flyrtModuleGetKernel(FlyrtModule m, const char *name, const char *spec,
                                           FlyrtKernel *out);

/* ---- the kernel's signature ------------------------------------------------- */

/* Element types (numbered as in the bundle format). */
typedef enum FlyrtDtype {
  FLYRT_DTYPE_NONE = 0,
  FLYRT_I1,
  FLYRT_I8,
  FLYRT_I16,
  FLYRT_I32,
  FLYRT_I64,
  FLYRT_F16,
  FLYRT_BF16,
  FLYRT_F32,
  FLYRT_F64,
  FLYRT_F8E4M3,
  FLYRT_F8E5M2,
  FLYRT_DTYPE_OTHER,
  FLYRT_F8E4M3FNUZ, /* after OTHER: the numbers above stay */
  FLYRT_F8E5M2FNUZ,
} FlyrtDtype;
/* Its name ("f32") and size in bytes (0 for NONE and OTHER). */
FLYRT_API const char *flyrtDtypeName(FlyrtDtype t);
FLYRT_API size_t flyrtDtypeSize(FlyrtDtype t);

/* 16-bit floats on the host (bits as the GPU stores them), rounding to
   nearest even: for making inputs and reading results. */
FLYRT_API uint16_t flyrtF32ToF16(float f);
FLYRT_API float flyrtF16ToF32(uint16_t h);
FLYRT_API uint16_t flyrtF32ToBF16(float f);
FLYRT_API float flyrtBF16ToF32(uint16_t h);

typedef enum FlyrtParamKind {
  FLYRT_PARAM_TENSOR = 1, /* takes a FlyrtTensor argument */
  FLYRT_PARAM_SCALAR = 2, /* takes a number */
  FLYRT_PARAM_CONST = 3,  /* compiled in: takes no argument */
} FlyrtParamKind;

enum { FLYRT_MAX_RANK = 16 };
/* A leaf of a layout that is known only at run time. */
#define FLYRT_DYNAMIC INT64_MIN

typedef struct FlyrtParamInfo {
  const char *name;
  FlyrtParamKind kind;
  FlyrtDtype dtype;   /* a tensor's element type or a scalar's type */
  const char *type;   /* as Fly writes it: "f32", "vec<f16, 8>" */
  const char *layout; /* a tensor's layout "(?,?):(?,1)"; a const's value; "" */
  /* Tensors: the layout's leaves, flattened left to right, rank of them;
     FLYRT_DYNAMIC where the layout has `?`. */
  int rank;
  int64_t shape[FLYRT_MAX_RANK];
  int64_t stride[FLYRT_MAX_RANK];
  uint32_t align; /* bytes the kernel assumes of the pointer (0: none) */
  /* Bytes each `?` stride times the element size must be a multiple of, for
     the kernel's vector accesses (0: any). */
  uint32_t stride_align;
  /* The most bytes the tensor may span (0: any): a tensor the kernel reads
     or writes through AMD's buffer accesses, whose offsets are 32-bit,
     spans at most 2^31 bytes. */
  uint32_t max_span;
} FlyrtParamInfo;

FLYRT_API const char *flyrtKernelName(FlyrtKernel k);
FLYRT_API const char *flyrtKernelSpec(FlyrtKernel k);
/* Every parameter, consts included; arguments go to the others in order. */
FLYRT_API int flyrtKernelParamCount(FlyrtKernel k);
/* How many arguments a launch takes: the tensor and scalar parameters. */
FLYRT_API int flyrtKernelArgCount(FlyrtKernel k);
FLYRT_API FlyrtStatus flyrtKernelParam(FlyrtKernel k, int i, FlyrtParamInfo *out);

/* ---- arguments and launching ------------------------------------------------ */

/* A tensor in device memory: rank extents and strides, counted in
   elements, as the kernel's layout flattens them (a row-major 2-D array of
   M x N floats is shape {M, N}, stride {N, 1}). */
typedef struct FlyrtTensor {
  void *data;
  FlyrtDtype dtype;
  int rank;
  int64_t shape[FLYRT_MAX_RANK];
  int64_t stride[FLYRT_MAX_RANK];
} FlyrtTensor;

typedef enum FlyrtArgKind {
  FLYRT_ARG_TENSOR = 1,
  FLYRT_ARG_INT = 2,   /* a scalar given as an integer (converted to the parameter's type) */
  FLYRT_ARG_FLOAT = 3, /* a scalar given as a floating number (float parameters only) */
} FlyrtArgKind;

typedef struct FlyrtArg {
  FlyrtArgKind kind;
  union {
    FlyrtTensor tensor;
    int64_t i;
    double f;
  } u;
} FlyrtArg;

/* Helpers for the common shapes. */
FLYRT_API FlyrtArg flyrtTensor1D(void *data, FlyrtDtype dtype, int64_t n);
/* Row-major rows x cols with leading dimension ld (elements between rows). */
FLYRT_API FlyrtArg flyrtTensor2D(void *data, FlyrtDtype dtype, int64_t rows, int64_t cols,
                                 int64_t ld);
FLYRT_API FlyrtArg flyrtInt(int64_t v);
FLYRT_API FlyrtArg flyrtFloat(double v);

typedef struct FlyrtLaunchConfig {
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t shared_bytes; /* dynamic shared memory */
} FlyrtLaunchConfig;

/* Checks args against the kernel's signature — their number; each
   tensor's dtype, rank, the layout's static leaves and the alignment of
   its pointer; that each `?` leaf fits the 32-bit integer the kernel takes;
   each scalar's range for its type — and runs the launch rule. On failure
   FLYRT_ERROR_ARGUMENTS naming the parameter, or FLYRT_ERROR_LAUNCH_RULE. */
FLYRT_API FlyrtStatus flyrtKernelLaunchConfigFor(FlyrtKernel k, const FlyrtArg *args, int nargs,
                                                 FlyrtLaunchConfig *out);

/* Whether k has a launch rule (its Fly source a `launch` block). */
FLYRT_API bool flyrtKernelHasLaunchRule(FlyrtKernel k);

/* k's thread-block cluster (its launch block's `cluster`, fixed when it was
   compiled): true and the blocks along x, y and z in out; false and 1, 1, 1
   for a kernel without one (or a null kernel). A launch of a kernel with a
   cluster goes through cuLaunchKernelEx with that shape, and its grid must
   be made of whole clusters (FLYRT_ERROR_LAUNCH_RULE otherwise). */
FLYRT_API bool flyrtKernelCluster(FlyrtKernel k, uint32_t out[3]);

/* Launches k on stream s after the same checks. override NULL: grid,
   block and shared memory from the launch rule; otherwise each of its
   fields that is not 0 replaces the rule's. An override that gives all of
   grid and block replaces the rule entirely: the rule is not run, and the
   shared memory is the override's, 0 included (a kernel without a launch
   block needs this). Returns once the launch is queued. */
FLYRT_API FlyrtStatus flyrtKernelLaunch(FlyrtKernel k, const FlyrtArg *args, int nargs,
                                        FlyrtStream s, const FlyrtLaunchConfig *override);

#ifdef __cplusplus
}
#endif

#endif
