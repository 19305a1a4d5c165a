/* flyrt_check.c — the kernels through libflyrt's C API on a real GPU.
 *
 *   flyrt_check ARTIFACTS [--bench]
 *
 * ARTIFACTS holds the bundles tests/gpu/run.py lists (01-vector-add.flyb
 * ... empty.flyb, compiled for the GPU's target). Each example runs on
 * fresh random inputs, its output poisoned (all bits set: NaN) before the
 * launch, and is compared with a float64 reference computed here. Then:
 * the errors a bad launch gives on a device, concurrent launches from
 * several threads, and with --bench the launch overhead of an empty kernel
 * and the vector add's bandwidth against a device-to-device copy. Prints
 * one line per check ("ok ..." or "FAIL ...") and per figure ("bench
 * NAME VALUE UNIT"); exits 0 when all pass, 1 on a failure, 77 when there
 * is no GPU. */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fly/runtime.h"
#include "fly_bundle.h"

static FlyrtDevice dev;
static const char *dir;
static int failures;

#define CHECK(call)                                                                                \
  do {                                                                                             \
    FlyrtStatus s_ = (call);                                                                       \
    if (s_) {                                                                                      \
      printf("FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #call, flyrtLastError());                 \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

/* ---- host data ---- */

static uint64_t rng_state;

static double uniform(void) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(rng_state >> 11) / (double)(1ull << 53);
}

static double normal(void) {
  double u = uniform(), v = uniform();
  return sqrt(-2 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}

static float *randn_f32(size_t n, float scale) {
  float *p = malloc(n * sizeof *p);
  for (size_t i = 0; i < n; i++)
    p[i] = (float)normal() * scale;
  return p;
}

static void *upload(const void *host, size_t bytes) {
  void *d;
  CHECK(flyrtMalloc(dev, bytes, &d));
  CHECK(flyrtMemcpyHostToDevice(dev, d, host, bytes));
  return d;
}

/* Device memory with every bit set: a float NaN, so a skipped element shows. */
static void *poisoned(size_t bytes) {
  void *d;
  CHECK(flyrtMalloc(dev, bytes, &d));
  CHECK(flyrtMemset(dev, d, 0xff, bytes));
  return d;
}

static float *download(const void *d, size_t n) {
  float *h = malloc(n * sizeof *h);
  CHECK(flyrtMemcpyDeviceToHost(dev, h, d, n * sizeof *h));
  return h;
}

/* Max |got - want| / max |want|; NaN anywhere fails. */
static void compare(const char *name, const float *got, const double *want, size_t n, double tol) {
  double err = 0, scale = 0;
  bool nan = false;
  for (size_t i = 0; i < n; i++) {
    nan = nan || isnan(got[i]);
    err = fmax(err, fabs(got[i] - want[i]));
    scale = fmax(scale, fabs(want[i]));
  }
  double rel = err / (scale > 0 ? scale : 1);
  bool ok = !nan && rel <= tol;
  failures += !ok;
  printf("%s C %-28s max relative error %.2e (tolerance %.0e)%s\n", ok ? "ok  " : "FAIL", name, rel,
         tol, nan ? ", NaN in the output" : "");
}

static FlyrtModule load(const char *file) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  FlyrtBundle b;
  FlyrtModule m;
  CHECK(flyrtBundleCreateFromFile(path, &b));
  CHECK(flyrtModuleCreate(b, dev, NULL, &m));
  flyrtBundleDestroy(b); /* the module keeps it */
  return m;
}

static FlyrtKernel kernel(FlyrtModule m, const char *name) {
  FlyrtKernel k;
  CHECK(flyrtModuleGetKernel(m, name, NULL, &k));
  return k;
}

/* ---- the examples ---- */

static void vector_add(void) {
  size_t n = 1 << 22;
  float *a = randn_f32(n, 1), *b = randn_f32(n, 1);
  void *A = upload(a, n * 4), *B = upload(b, n * 4), *C = poisoned(n * 4);
  FlyrtModule m = load("01-vector-add.flyb");
  FlyrtArg args[] = {flyrtTensor1D(A, FLYRT_F32, n), flyrtTensor1D(B, FLYRT_F32, n),
                     flyrtTensor1D(C, FLYRT_F32, n)};
  CHECK(flyrtKernelLaunch(kernel(m, "vector_add"), args, 3, NULL, NULL));
  CHECK(flyrtDeviceSynchronize(dev));
  float *c = download(C, n);
  double *want = malloc(n * sizeof *want);
  for (size_t i = 0; i < n; i++)
    want[i] = (double)a[i] + b[i];
  compare("vector_add 2^22", c, want, n, 1e-6);
  free(a), free(b), free(c), free(want);
  flyrtFree(dev, A), flyrtFree(dev, B), flyrtFree(dev, C);
  flyrtModuleDestroy(m);
}

static void tiled_copy(void) {
  int64_t M = 512, N = 768;
  float *s = randn_f32(M * N, 1);
  void *S = upload(s, M * N * 4), *D = poisoned(M * N * 4);
  FlyrtModule m = load("02-tiled-copy.flyb");
  /* D is (M, N) stored column-major. */
  FlyrtArg dst = flyrtTensor2D(D, FLYRT_F32, M, N, 1);
  dst.u.tensor.stride[1] = M;
  FlyrtArg args[] = {flyrtTensor2D(S, FLYRT_F32, M, N, N), dst};
  CHECK(flyrtKernelLaunch(kernel(m, "tiled_copy_2d"), args, 2, NULL, NULL));
  CHECK(flyrtDeviceSynchronize(dev));
  float *d = download(D, M * N);
  double *want = malloc(M * N * sizeof *want);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++)
      want[j * M + i] = s[i * N + j];
  compare("tiled_copy_2d 512x768", d, want, M * N, 0);
  free(s), free(d), free(want);
  flyrtFree(dev, S), flyrtFree(dev, D);
  flyrtModuleDestroy(m);
}

static void tiled_mma(void) {
  int64_t M = 256, N = 384, K = 512;
  uint16_t *a = malloc(M * K * 2), *b = malloc(N * K * 2);
  for (int64_t i = 0; i < M * K; i++)
    a[i] = flyrtF32ToF16((float)normal());
  for (int64_t i = 0; i < N * K; i++)
    b[i] = flyrtF32ToF16((float)normal());
  void *A = upload(a, M * K * 2), *B = upload(b, N * K * 2), *C = poisoned(M * N * 4);
  FlyrtModule m = load("03-tiled-mma.flyb");
  FlyrtArg args[] = {flyrtTensor2D(A, FLYRT_F16, M, K, K), flyrtTensor2D(B, FLYRT_F16, N, K, K),
                     flyrtTensor2D(C, FLYRT_F32, M, N, N)};
  CHECK(flyrtKernelLaunch(kernel(m, "gemm_tile"), args, 3, NULL, NULL));
  CHECK(flyrtDeviceSynchronize(dev));
  float *c = download(C, M * N);
  double *want = calloc(M * N, sizeof *want);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double acc = 0;
      for (int64_t k = 0; k < K; k++)
        acc += (double)flyrtF16ToF32(a[i * K + k]) * flyrtF16ToF32(b[j * K + k]);
      want[i * N + j] = acc;
    }
  compare("gemm_tile mma.sync 256x384x512", c, want, M * N, 1e-5);
  free(a), free(b), free(c), free(want);
  flyrtFree(dev, A), flyrtFree(dev, B), flyrtFree(dev, C);
  flyrtModuleDestroy(m);
}

static void row_softmax(void) {
  int64_t M = 300, N = 1000;
  float *x = randn_f32(M * N, 4);
  void *X = upload(x, M * N * 4), *Y = poisoned(M * N * 4);
  FlyrtModule m = load("05-row-softmax.flyb");
  FlyrtArg args[] = {flyrtTensor2D(X, FLYRT_F32, M, N, N), flyrtTensor2D(Y, FLYRT_F32, M, N, N)};
  CHECK(flyrtKernelLaunch(kernel(m, "row_softmax"), args, 2, NULL, NULL));
  CHECK(flyrtDeviceSynchronize(dev));
  float *y = download(Y, M * N);
  double *want = malloc(M * N * sizeof *want);
  for (int64_t i = 0; i < M; i++) {
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < N; j++)
      mx = fmax(mx, x[i * N + j]);
    for (int64_t j = 0; j < N; j++)
      sum += exp(x[i * N + j] - mx);
    for (int64_t j = 0; j < N; j++)
      want[i * N + j] = exp(x[i * N + j] - mx) / sum;
  }
  compare("row_softmax 300x1000", y, want, M * N, 1e-5);
  free(x), free(y), free(want);
  flyrtFree(dev, X), flyrtFree(dev, Y);
  flyrtModuleDestroy(m);
}

static void carried(void) {
  int64_t n = 1000;
  int iters = 10 + (int)(uniform() * 10);
  double scale = 0.5 + uniform();
  void *out = poisoned(n * 4);
  FlyrtModule m = load("carried.flyb");
  FlyrtArg args[] = {flyrtInt(iters), flyrtFloat(scale), flyrtTensor1D(out, FLYRT_F32, n)};
  CHECK(flyrtKernelLaunch(kernel(m, "carried"), args, 3, NULL, NULL));
  CHECK(flyrtDeviceSynchronize(dev));
  float *got = download(out, n);
  double *want = malloc(n * sizeof *want);
  for (int64_t t = 0; t < n; t++)
    want[t] = (float)scale * (ldexp(1, iters) + iters * (iters - 1) / 2 + t);
  compare("carried loop, scalars", got, want, n, 1e-6);
  free(got), free(want);
  flyrtFree(dev, out);
  flyrtModuleDestroy(m);
}

/* ---- errors on a device ---- */

static void expect_error(const char *what, FlyrtStatus got, FlyrtStatus want, const char *text) {
  bool ok = got == want && strstr(flyrtLastError(), text);
  failures += !ok;
  printf("%s C error: %-22s %s: %s\n", ok ? "ok  " : "FAIL", what, flyrtStatusName(got),
         flyrtLastError());
}

static void errors(void) {
  FlyrtModule m = load("01-vector-add.flyb");
  FlyrtKernel k = kernel(m, "vector_add");
  size_t n = 1 << 20;
  void *A = poisoned(n * 4);
  float *host = malloc(n * 4);
  FlyrtArg args[] = {flyrtTensor1D(A, FLYRT_F32, n), flyrtTensor1D(host, FLYRT_F32, n),
                     flyrtTensor1D(A, FLYRT_F32, n)};
  expect_error("host pointer", flyrtKernelLaunch(k, args, 3, NULL, NULL), FLYRT_ERROR_ARGUMENTS,
               "is not GPU memory");
  /* Refused again: a pointer is kept as checked only once it passes. */
  expect_error("host pointer again", flyrtKernelLaunch(k, args, 3, NULL, NULL),
               FLYRT_ERROR_ARGUMENTS, "is not GPU memory");
  expect_error("argument count", flyrtKernelLaunch(k, args, 2, NULL, NULL), FLYRT_ERROR_ARGUMENTS,
               "takes 3 arguments, 2 given");
  FlyrtKernel missing;
  expect_error("missing kernel", flyrtModuleGetKernel(m, "nope", NULL, &missing),
               FLYRT_ERROR_NOT_FOUND, "no kernel 'nope'");
  FlyrtModule amd;
  char path[4096];
  snprintf(path, sizeof path, "%s/amd-only.flyb", dir);
  FlyrtBundle b;
  CHECK(flyrtBundleCreateFromFile(path, &b));
  expect_error("no image for the GPU", flyrtModuleCreate(b, dev, NULL, &amd), FLYRT_ERROR_NO_IMAGE,
               "has no image that runs on GPU");
  flyrtBundleDestroy(b);
  free(host);
  flyrtFree(dev, A);
  flyrtModuleDestroy(m);
}

/* ---- threads ---- */

enum { THREADS = 8, LAUNCHES = 200 };

typedef struct Work {
  FlyrtKernel k;
  int id;
  bool ok;
} Work;

/* Each thread: its own stream and buffers, LAUNCHES launches of the vector
   add with the same kernel handle, then a check of its result. */
static void *worker(void *arg) {
  Work *w = arg;
  size_t n = 1 << 16;
  float *a = malloc(n * 4);
  for (size_t i = 0; i < n; i++)
    a[i] = (float)(w->id * 1000 + i % 1000);
  void *A = NULL, *C = NULL;
  FlyrtStream s = NULL;
  w->ok = !flyrtStreamCreate(dev, &s) && !flyrtMalloc(dev, n * 4, &A) &&
          !flyrtMalloc(dev, n * 4, &C) && !flyrtMemcpyHostToDevice(dev, A, a, n * 4) &&
          !flyrtMemset(dev, C, 0xff, n * 4);
  FlyrtArg args[] = {flyrtTensor1D(A, FLYRT_F32, n), flyrtTensor1D(A, FLYRT_F32, n),
                     flyrtTensor1D(C, FLYRT_F32, n)};
  for (int i = 0; w->ok && i < LAUNCHES; i++)
    w->ok = !flyrtKernelLaunch(w->k, args, 3, s, NULL);
  w->ok = w->ok && !flyrtStreamSynchronize(dev, s) && !flyrtMemcpyDeviceToHost(dev, a, C, n * 4);
  for (size_t i = 0; w->ok && i < n; i++)
    w->ok = a[i] == 2 * (float)(w->id * 1000 + i % 1000);
  if (!w->ok)
    printf("     thread %d: %s\n", w->id, flyrtLastError());
  flyrtFree(dev, A), flyrtFree(dev, C), flyrtStreamDestroy(dev, s);
  free(a);
  return NULL;
}

static void threads(void) {
  FlyrtModule m = load("01-vector-add.flyb");
  pthread_t t[THREADS];
  Work w[THREADS];
  for (int i = 0; i < THREADS; i++) {
    w[i] = (Work){kernel(m, "vector_add"), i, false};
    pthread_create(&t[i], NULL, worker, &w[i]);
  }
  bool ok = true;
  for (int i = 0; i < THREADS; i++) {
    pthread_join(t[i], NULL);
    ok = ok && w[i].ok;
  }
  failures += !ok;
  printf("%s C %d threads x %d launches of vector_add, each on its own stream\n",
         ok ? "ok  " : "FAIL", THREADS, LAUNCHES);
  flyrtModuleDestroy(m);
}

/* ---- benchmarks ---- */

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, n, sizeof *v, cmp_double);
  return v[n / 2];
}

typedef int (*LaunchFn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, void *, void **, void **);

/* Host time per launch: `batch` launches queued back to back, the median
   over repeats of the mean of a batch. */
static double time_launches(FlyrtKernel k, LaunchFn raw, void *fn, int batch) {
  enum { REPEATS = 15 };
  double t[REPEATS];
  for (int r = 0; r < REPEATS; r++) {
    CHECK(flyrtDeviceSynchronize(dev));
    double t0 = now_us();
    for (int i = 0; i < batch; i++) {
      if (raw) {
        if (raw(fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL))
          CHECK(FLYRT_ERROR_DRIVER);
      } else {
        CHECK(flyrtKernelLaunch(k, NULL, 0, NULL, NULL));
      }
    }
    t[r] = (now_us() - t0) / batch;
  }
  CHECK(flyrtDeviceSynchronize(dev));
  return median(t, REPEATS);
}

/* The empty kernel through libflyrt, and the same PTX launched with the
   CUDA driver's own cuLaunchKernel, the floor any runtime stands on: in
   long batches (the launch queue fills, so the GPU's pace shows) and in
   short ones (the host's cost alone). */
static void bench_launch(void) {
  FlyrtModule m = load("empty.flyb");
  FlyrtKernel k = kernel(m, "empty");
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  int (*load_data)(void **, const void *) =
      (int (*)(void **, const void *))dlsym(cuda, "cuModuleLoadData");
  int (*get_fn)(void **, void *, const char *) =
      (int (*)(void **, void *, const char *))dlsym(cuda, "cuModuleGetFunction");
  LaunchFn raw = (LaunchFn)dlsym(cuda, "cuLaunchKernel");
  /* The PTX of the bundle, read with the format's own reader. */
  char path[4096];
  snprintf(path, sizeof path, "%s/empty.flyb", dir);
  FILE *f = fopen(path, "rb");
  static unsigned char bytes[1 << 16];
  size_t size = f ? fread(bytes, 1, sizeof bytes, f) : 0;
  if (f)
    fclose(f);
  FlyBundle b;
  char why[256];
  void *mod = NULL, *fn = NULL;
  if (!load_data || !get_fn || !raw || !fly_bundle_open(&b, bytes, size, why, sizeof why))
    CHECK(FLYRT_ERROR_DRIVER);
  FlyBundleImage im = fly_bundle_image(&b, 0);
  if (load_data(&mod, fly_bundle_image_bytes(&b, &im)) || get_fn(&fn, mod, "empty"))
    CHECK(FLYRT_ERROR_DRIVER);
  printf("bench c_launch_us %.3f us\n", time_launches(k, NULL, NULL, 20000));
  printf("bench driver_launch_us %.3f us\n", time_launches(k, raw, fn, 20000));
  printf("bench c_launch_short_us %.3f us\n", time_launches(k, NULL, NULL, 200));
  printf("bench driver_launch_short_us %.3f us\n", time_launches(k, raw, fn, 200));
  flyrtModuleDestroy(m);
}

/* The vector add at 2^28 f32 elements against a copy of the same bytes,
   both timed with events: median of repeats. */
static void bench_bandwidth(void) {
  size_t n = (size_t)1 << 28, bytes = n * 4;
  void *A, *B, *C;
  CHECK(flyrtMalloc(dev, bytes, &A));
  CHECK(flyrtMalloc(dev, bytes, &B));
  CHECK(flyrtMalloc(dev, bytes, &C));
  CHECK(flyrtMemset(dev, A, 0, bytes));
  CHECK(flyrtMemset(dev, B, 0, bytes));
  FlyrtModule m = load("01-vector-add.flyb");
  FlyrtKernel k = kernel(m, "vector_add");
  FlyrtArg args[] = {flyrtTensor1D(A, FLYRT_F32, n), flyrtTensor1D(B, FLYRT_F32, n),
                     flyrtTensor1D(C, FLYRT_F32, n)};
  FlyrtEvent e0, e1;
  CHECK(flyrtEventCreate(dev, &e0));
  CHECK(flyrtEventCreate(dev, &e1));
  enum { REPEATS = 30 };
  double add[REPEATS], copy[REPEATS];
  for (int r = -3; r < REPEATS; r++) {
    float ms;
    CHECK(flyrtEventRecord(e0, NULL));
    CHECK(flyrtKernelLaunch(k, args, 3, NULL, NULL));
    CHECK(flyrtEventRecord(e1, NULL));
    CHECK(flyrtEventSynchronize(e1));
    CHECK(flyrtEventElapsed(e0, e1, &ms));
    if (r >= 0)
      add[r] = ms;
    CHECK(flyrtEventRecord(e0, NULL));
    CHECK(flyrtMemcpyDeviceToDevice(dev, C, A, bytes));
    CHECK(flyrtEventRecord(e1, NULL));
    CHECK(flyrtEventSynchronize(e1));
    CHECK(flyrtEventElapsed(e0, e1, &ms));
    if (r >= 0)
      copy[r] = ms;
  }
  double t_add = median(add, REPEATS), t_copy = median(copy, REPEATS);
  double bw_add = 3.0 * bytes / (t_add * 1e-3) / 1e9, bw_copy = 2.0 * bytes / (t_copy * 1e-3) / 1e9;
  printf("bench c_vadd_ms %.4f ms\n", t_add);
  printf("bench c_vadd_gbs %.1f GB/s\n", bw_add);
  printf("bench c_copy_gbs %.1f GB/s\n", bw_copy);
  printf("bench c_vadd_over_copy %.3f ratio\n", bw_add / bw_copy);
  flyrtEventDestroy(e0), flyrtEventDestroy(e1);
  flyrtFree(dev, A), flyrtFree(dev, B), flyrtFree(dev, C);
  flyrtModuleDestroy(m);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: flyrt_check ARTIFACTS [--bench]\n");
    return 2;
  }
  dir = argv[1];
  bool bench = argc > 2 && strcmp(argv[2], "--bench") == 0;
  int count = 0;
  if (flyrtDeviceCount(&count) || count == 0) {
    printf("no GPU: %s\n", flyrtLastError());
    return 77;
  }
  CHECK(flyrtDeviceCreate(0, &dev));
  rng_state = (uint64_t)time(NULL) ^ (uint64_t)now_us();
  printf("device: %s (%s), libflyrt %s\n", flyrtDeviceName(dev), flyrtDeviceTarget(dev),
         flyrtVersion());
  vector_add();
  tiled_copy();
  tiled_mma();
  row_softmax();
  carried();
  errors();
  threads();
  if (bench) {
    bench_launch();
    bench_bandwidth();
  }
  flyrtDeviceDestroy(dev);
  return failures ? 1 : 0;
}
