/* examples/c/rms_norm.c — a kernel of the library (kernels/norm/rms_norm.fly)
 * from C, through libflyrt alone: no compiler, no Python.
 *
 *   rms_norm LIBRARY [M N]
 *
 * LIBRARY is the folder `make` fills with the library's bundles
 * (build/kernels): bundles/KERNEL/SPEC.flyb, one per specialisation built
 * ahead of time, SPEC its const bindings in the order of
 * kernels/registry.json ("T=bf16_VEC=8_CAP=512"). The program normalises M
 * rows of N bf16 values with random weights, compares the result with a
 * float64 reference and prints the largest error. Exit status 0 when every
 * element is within bf16's rounding, 1 otherwise, 77 without a GPU.
 *
 * The specialisation for rows of N elements of type T (docs/kernels.md):
 *   VEC  16 bytes of elements (8 for bf16) when N, the row strides and the
 *        pointers allow it, else 1;
 *   CAP  the smallest power of two >= N / VEC (for VEC 8, 1 to 2048; beyond,
 *        1048576, rows streamed from memory), or for VEC 1 the smallest of
 *        8, 64, 512, 4096, 16384, 1048576;
 *   EARLY  true to load the weights with the row, for grids small enough
 *        that every block is resident at once (few rows: latency), false
 *        otherwise (more blocks an SM). Either is correct for any M.
 * The launch checks what it assumes and refuses, with a message, arguments
 * that break it: rows longer than CAP * VEC, a misaligned pointer ... */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fly/runtime.h"

#define CHECK(call)                                                                                \
  do {                                                                                             \
    if ((call) != FLYRT_SUCCESS) {                                                                 \
      fprintf(stderr, "rms_norm: %s\n", flyrtLastError());                                        \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

/* CAP for rows of n elements read VEC at a time (the registry's ladders). */
static int row_cap(int n, int vec) {
  int need = (n + vec - 1) / vec, cap = 1;
  if (vec == 1) {
    static const int ladder[] = {8, 64, 512, 4096, 16384};
    for (int i = 0; i < 5; i++)
      if (need <= ladder[i])
        return ladder[i];
    return 1048576;
  }
  while (cap < need)
    cap *= 2;
  return cap <= 2048 ? cap : 1048576;
}

static double uniform(unsigned long long *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*s >> 11) / (double)(1ull << 53) * 2 - 1;
}

int main(int argc, char **argv) {
  if (argc != 2 && argc != 4) {
    fprintf(stderr, "usage: rms_norm LIBRARY [M N]\n");
    return 2;
  }
  int M = argc == 4 ? atoi(argv[2]) : 1000, N = argc == 4 ? atoi(argv[3]) : 4096;
  if (M <= 0 || N <= 0) {
    fprintf(stderr, "rms_norm: M and N must be positive\n");
    return 2;
  }
  int count = 0;
  if (flyrtDeviceCount(&count) != FLYRT_SUCCESS || count == 0) {
    printf("no GPU: skipped\n");
    return 77;
  }

  /* The bundle of the specialisation, and the kernel in it. Memory from
     flyrtMalloc is aligned, so 16-byte accesses need only N % 8 == 0. */
  int vec = N % 8 == 0 ? 8 : 1, cap = row_cap(N, vec);
  char path[4096];
  const char *early = M < 256 ? "true" : "false";
  snprintf(path, sizeof path, "%s/bundles/rms_norm/T=bf16_VEC=%d_CAP=%d_EARLY=%s.flyb", argv[1],
           vec, cap, early);
  FlyrtDevice dev;
  FlyrtBundle bundle;
  FlyrtModule mod;
  FlyrtKernel k;
  CHECK(flyrtDeviceCreate(0, &dev));
  CHECK(flyrtBundleCreateFromFile(path, &bundle));
  CHECK(flyrtModuleCreate(bundle, dev, NULL, &mod));
  CHECK(flyrtModuleGetKernel(mod, "rms_norm", NULL, &k));

  /* Random bf16 inputs. */
  size_t n = (size_t)M * (size_t)N;
  uint16_t *x = malloc(n * 2), *w = malloc((size_t)N * 2), *y = malloc(n * 2);
  if (!x || !w || !y) {
    fprintf(stderr, "rms_norm: out of memory\n");
    return 1;
  }
  unsigned long long seed = 0x5eed;
  for (size_t i = 0; i < n; i++)
    x[i] = flyrtF32ToBF16((float)uniform(&seed) * 3);
  for (int j = 0; j < N; j++)
    w[j] = flyrtF32ToBF16((float)uniform(&seed));
  void *dx, *dw, *dy;
  CHECK(flyrtMalloc(dev, n * 2, &dx));
  CHECK(flyrtMalloc(dev, (size_t)N * 2, &dw));
  CHECK(flyrtMalloc(dev, n * 2, &dy));
  CHECK(flyrtMemcpyHostToDevice(dev, dx, x, n * 2));
  CHECK(flyrtMemcpyHostToDevice(dev, dw, w, (size_t)N * 2));
  CHECK(flyrtMemset(dev, dy, 0xFF, n * 2)); /* NaN: an element not written shows */

  /* rms_norm(X, W, Y, eps, has_w): tensors, then scalars, in the order of
     the kernel's parameters; grid and block come from its launch block. */
  FlyrtArg args[] = {flyrtTensor2D(dx, FLYRT_BF16, M, N, N), flyrtTensor1D(dw, FLYRT_BF16, N),
                     flyrtTensor2D(dy, FLYRT_BF16, M, N, N), flyrtFloat(1e-6), flyrtInt(1)};
  CHECK(flyrtKernelLaunch(k, args, 5, NULL, NULL));
  CHECK(flyrtDeviceSynchronize(dev));
  CHECK(flyrtMemcpyDeviceToHost(dev, y, dy, n * 2));

  /* float64 reference; bf16 keeps 8 bits: within 2^-7 relative. */
  double worst = 0;
  int bad = 0;
  for (int i = 0; i < M; i++) {
    double ss = 0;
    for (int j = 0; j < N; j++) {
      double v = flyrtBF16ToF32(x[(size_t)i * N + j]);
      ss += v * v;
    }
    double rstd = 1 / sqrt(ss / N + 1e-6);
    for (int j = 0; j < N; j++) {
      double want = flyrtBF16ToF32(x[(size_t)i * N + j]) * rstd * flyrtBF16ToF32(w[j]);
      double got = flyrtBF16ToF32(y[(size_t)i * N + j]);
      double err = fabs(got - want);
      if (!(err <= 1e-2 + 1.0 / 128 * fabs(want)))
        bad++;
      if (err > worst || got != got)
        worst = got != got ? INFINITY : err;
    }
  }
  printf("%s rms_norm %s: %d x %d bf16, largest error %.3g, %d outside bf16's rounding\n",
         bad ? "FAIL" : "ok", flyrtKernelSpec(k), M, N, worst, bad);
  flyrtFree(dev, dx);
  flyrtFree(dev, dw);
  flyrtFree(dev, dy);
  free(x);
  free(w);
  free(y);
  flyrtModuleDestroy(mod);
  flyrtBundleDestroy(bundle);
  flyrtDeviceDestroy(dev);
  return bad ? 1 : 0;
}
