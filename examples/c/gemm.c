/* examples/c/gemm.c — the library's GEMM (kernels/gemm/gemm.fly) from C,
 * through libflyrt alone: no compiler, no Python.
 *
 *   gemm LIBRARY [M N K]
 *
 * LIBRARY is the folder `make` fills with the library's bundles
 * (build/kernels). The program multiplies random bf16 matrices, D = A Bᵀ
 * with A M x K and B N x K (both rows of K), into bf16 D, compares D with a
 * float64 reference and prints the largest error. Exit status 0 when every
 * element is within bf16's rounding of the sum of |a b|, 1 otherwise, 77
 * without a GPU (or with one that is not a Hopper: the kernel is sm_90a).
 *
 * The specialisation (docs/kernels.md): a 128 x 256 tile, 4 stages, no
 * split K; the scales SA and SB are 1. Where D's rows start at 16-byte
 * boundaries (N a multiple of 8) TMA stores its tiles (TMA_STORE, pairs of
 * C's values read at once: PAIR), else the tiles go out from the registers
 * one output a store. The kernel is persistent: its grid is at most
 * `blocks` blocks, the device's multiprocessors. TMA reads A and B, so
 * their rows must start at 16-byte boundaries: K a multiple of 8 here, as
 * flyrtMalloc's memory is aligned. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly/runtime.h"

#define CHECK(call)                                                                                \
  do {                                                                                             \
    if ((call) != FLYRT_SUCCESS) {                                                                 \
      fprintf(stderr, "gemm: %s\n", flyrtLastError());                                            \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

static double uniform(unsigned long long *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*s >> 11) / (double)(1ull << 53) * 2 - 1;
}

int main(int argc, char **argv) {
  if (argc != 2 && argc != 5) {
    fprintf(stderr, "usage: gemm LIBRARY [M N K]\n");
    return 2;
  }
  int M = argc == 5 ? atoi(argv[2]) : 500, N = argc == 5 ? atoi(argv[3]) : 1030,
      K = argc == 5 ? atoi(argv[4]) : 1000;
  if (M <= 0 || N <= 0 || K <= 0 || K % 8) {
    fprintf(stderr, "gemm: M, N and K positive, K a multiple of 8\n");
    return 2;
  }
  int count = 0;
  if (flyrtDeviceCount(&count) != FLYRT_SUCCESS || count == 0) {
    printf("no GPU: skipped\n");
    return 77;
  }
  FlyrtDevice dev;
  CHECK(flyrtDeviceCreate(0, &dev));
  if (strcmp(flyrtDeviceTarget(dev), "sm_90") != 0) {
    printf("gemm: a %s, not a Hopper: skipped\n", flyrtDeviceTarget(dev));
    flyrtDeviceDestroy(dev);
    return 77;
  }
  char path[4096];
  const char *tma = N % 8 == 0 ? "true" : "false";
  snprintf(path, sizeof path,
           "%s/bundles/gemm/T=bf16_TD=bf16_BM=128_BN=256_BK=64_STAGES=4_PAIR=%s_SPLIT=1_BIAS=false_ACT=0_RES=false_CLUSTER=1_PINGPONG=false_TMA_STORE=%s.flyb",
           argv[1], tma, tma);
  FlyrtBundle bundle;
  FlyrtModule mod;
  FlyrtKernel k;
  CHECK(flyrtBundleCreateFromFile(path, &bundle));
  CHECK(flyrtModuleCreate(bundle, dev, NULL, &mod));
  CHECK(flyrtModuleGetKernel(mod, "gemm_tn", NULL, &k));

  /* Random bf16 inputs, scales of 1. */
  size_t na = (size_t)M * K, nb = (size_t)N * K, nd = (size_t)M * N;
  uint16_t *a = malloc(na * 2), *b = malloc(nb * 2), *d = malloc(nd * 2);
  if (!a || !b || !d) {
    fprintf(stderr, "gemm: out of memory\n");
    return 1;
  }
  unsigned long long seed = 0x6e33;
  for (size_t i = 0; i < na; i++)
    a[i] = flyrtF32ToBF16((float)uniform(&seed));
  for (size_t i = 0; i < nb; i++)
    b[i] = flyrtF32ToBF16((float)uniform(&seed));
  float one = 1.0f;
  void *da, *db, *dd, *ds;
  CHECK(flyrtMalloc(dev, na * 2, &da));
  CHECK(flyrtMalloc(dev, nb * 2, &db));
  CHECK(flyrtMalloc(dev, nd * 2, &dd));
  CHECK(flyrtMalloc(dev, sizeof one, &ds));
  CHECK(flyrtMemcpyHostToDevice(dev, da, a, na * 2));
  CHECK(flyrtMemcpyHostToDevice(dev, db, b, nb * 2));
  CHECK(flyrtMemcpyHostToDevice(dev, ds, &one, sizeof one));
  CHECK(flyrtMemset(dev, dd, 0xFF, nd * 2)); /* NaN: an element not written shows */

  /* gemm_tn(A, B, D, SA, SB, blocks, alpha, Bias, C, beta, Work, Count): the
     tensor maps of A and B (and of D) are built by libflyrt at the launch,
     from these shapes and strides. This specialisation has no fused
     epilogue (its BIAS and RES are false) and no split K (SPLIT 1), so Bias,
     C, Work and Count are not read: D and the scale stand in for them. */
  int blocks = flyrtDeviceMultiprocessors(dev);
  FlyrtArg args[] = {flyrtTensor2D(da, FLYRT_BF16, M, K, K),
                     flyrtTensor2D(db, FLYRT_BF16, N, K, K),
                     flyrtTensor2D(dd, FLYRT_BF16, M, N, N),
                     flyrtTensor1D(ds, FLYRT_F32, 1),
                     flyrtTensor1D(ds, FLYRT_F32, 1),
                     flyrtInt(blocks > 0 ? blocks : 132),
                     flyrtFloat(1.0),
                     flyrtTensor1D(dd, FLYRT_BF16, N),
                     flyrtTensor2D(dd, FLYRT_BF16, M, N, N),
                     flyrtFloat(0.0),
                     flyrtTensor1D(ds, FLYRT_F32, 1),
                     flyrtTensor1D(ds, FLYRT_I32, 1)};
  CHECK(flyrtKernelLaunch(k, args, 12, NULL, NULL));
  CHECK(flyrtDeviceSynchronize(dev));
  CHECK(flyrtMemcpyDeviceToHost(dev, d, dd, nd * 2));

  /* float64 reference; D is rounded once to bf16 (2^-8 relative), the f32
     sums' order adds at most K 2^-24 of sum |a b|. */
  double worst = 0;
  int bad = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double want = 0, mag = 0;
      for (int l = 0; l < K; l++) {
        double x = flyrtBF16ToF32(a[(size_t)i * K + l]), y = flyrtBF16ToF32(b[(size_t)j * K + l]);
        want += x * y;
        mag += fabs(x * y);
      }
      double got = flyrtBF16ToF32(d[(size_t)i * N + j]);
      double err = fabs(got - want);
      if (!(err <= fabs(want) / 128 + 1e-5 * mag))
        bad++;
      if (err > worst || got != got)
        worst = got != got ? INFINITY : err;
    }
  printf("%s gemm %s: %d x %d x %d bf16 on %d blocks, largest error %.3g, %d outside bf16's "
         "rounding\n",
         bad ? "FAIL" : "ok", flyrtKernelSpec(k), M, N, K, blocks, worst, bad);
  flyrtFree(dev, da);
  flyrtFree(dev, db);
  flyrtFree(dev, dd);
  flyrtFree(dev, ds);
  free(a);
  free(b);
  free(d);
  flyrtModuleDestroy(mod);
  flyrtBundleDestroy(bundle);
  flyrtDeviceDestroy(dev);
  return bad ? 1 : 0;
}
