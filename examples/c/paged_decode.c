/* examples/c/paged_decode.c — the library's paged-attention decode
 * (kernels/attention/paged_decode.fly) from C, through libflyrt alone: the
 * step a serving engine written in C would call once per generated token.
 *
 *   paged_decode LIBRARY [B HQ HK CTX]
 *
 * LIBRARY is the folder `make` fills with the library's bundles
 * (build/kernels). The program makes a bf16 KV cache of blocks of 16
 * tokens, D 128, whose blocks are handed out to B sequences in a shuffled
 * order (sequence b holds CTX - 97 b tokens, at least 1), one bf16 query
 * token a sequence of HQ heads over the cache's HK, runs the decode and
 * compares each output with a float64 reference. Exit status 0 when every
 * element is within 2e-2 (the probabilities are rounded to bf16 before
 * they weigh V, whose values are below 1), 1 otherwise, 77 without a GPU.
 *
 * The specialisation: one split (SPLIT false: the whole context in one
 * block a group of query heads, no second launch), so the partial outputs
 * Opart and Lpart are not read and the output stands in for them. A split
 * is a whole number of the block's 64-token steps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly/runtime.h"

#define CHECK(call)                                                                                \
  do {                                                                                             \
    if ((call) != FLYRT_SUCCESS) {                                                                 \
      fprintf(stderr, "paged_decode: %s\n", flyrtLastError());                                    \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

enum { D = 128, BS = 16 };

static double uniform(unsigned long long *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*s >> 11) / (double)(1ull << 53) * 2 - 1;
}

/* A row-major tensor of rank dimensions (strides from the shape). */
static FlyrtArg tensor(void *data, FlyrtDtype dtype, int rank, const int64_t *shape) {
  FlyrtArg a = {.kind = FLYRT_ARG_TENSOR};
  a.u.tensor.data = data;
  a.u.tensor.dtype = dtype;
  a.u.tensor.rank = rank;
  int64_t stride = 1;
  for (int i = rank - 1; i >= 0; i--) {
    a.u.tensor.shape[i] = shape[i];
    a.u.tensor.stride[i] = stride;
    stride *= shape[i];
  }
  return a;
}

int main(int argc, char **argv) {
  if (argc != 2 && argc != 6) {
    fprintf(stderr, "usage: paged_decode LIBRARY [B HQ HK CTX]\n");
    return 2;
  }
  int B = argc == 6 ? atoi(argv[2]) : 3, HQ = argc == 6 ? atoi(argv[3]) : 32,
      HK = argc == 6 ? atoi(argv[4]) : 8, CTX = argc == 6 ? atoi(argv[5]) : 1000;
  if (B <= 0 || HK <= 0 || HQ <= 0 || HQ % HK || CTX <= 0) {
    fprintf(stderr, "paged_decode: B, HQ, HK and CTX positive, HQ a multiple of HK\n");
    return 2;
  }
  int count = 0;
  if (flyrtDeviceCount(&count) != FLYRT_SUCCESS || count == 0) {
    printf("no GPU: skipped\n");
    return 77;
  }
  FlyrtDevice dev;
  CHECK(flyrtDeviceCreate(0, &dev));
  char path[4096];
  snprintf(path, sizeof path,
           "%s/bundles/paged_decode/T=bf16_KT=bf16_D=128_BS=16_WARPS=4_STAGES=3_SPLIT=false.flyb",
           argv[1]);
  FlyrtBundle bundle;
  FlyrtModule mod;
  FlyrtKernel k;
  CHECK(flyrtBundleCreateFromFile(path, &bundle));
  CHECK(flyrtModuleCreate(bundle, dev, NULL, &mod));
  CHECK(flyrtModuleGetKernel(mod, "paged_decode", NULL, &k));

  /* The sequences' lengths and blocks: the cache's NB blocks (3 spare) in a
     shuffled order, sequence b taking the next ceil(ctx / BS). */
  int *ctx = malloc(B * sizeof *ctx), maxb = 0, used = 0, longest = 0;
  if (!ctx)
    return 1;
  for (int b = 0; b < B; b++) {
    ctx[b] = CTX - 97 * b > 0 ? CTX - 97 * b : 1;
    int blocks = (ctx[b] + BS - 1) / BS;
    maxb = blocks > maxb ? blocks : maxb;
    longest = ctx[b] > longest ? ctx[b] : longest;
    used += blocks;
  }
  int NB = used + 3;
  int *order = malloc(NB * sizeof *order), *table = calloc((size_t)B * maxb, sizeof *table);
  size_t nq = (size_t)B * HQ * D, nc = (size_t)NB * BS * HK * D;
  uint16_t *q = malloc(nq * 2), *kc = malloc(nc * 2), *vc = malloc(nc * 2), *o = malloc(nq * 2);
  if (!order || !table || !q || !kc || !vc || !o) {
    fprintf(stderr, "paged_decode: out of memory\n");
    return 1;
  }
  unsigned long long seed = 0x7a11;
  for (int i = 0; i < NB; i++)
    order[i] = i;
  for (int i = NB - 1; i > 0; i--) {
    int j = (int)((uniform(&seed) + 1) / 2 * (i + 1)) % (i + 1), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  for (int b = 0, next = 0; b < B; b++)
    for (int j = 0; j < (ctx[b] + BS - 1) / BS; j++)
      table[(size_t)b * maxb + j] = order[next++];
  for (size_t i = 0; i < nq; i++)
    q[i] = flyrtF32ToBF16((float)uniform(&seed));
  for (size_t i = 0; i < nc; i++) {
    kc[i] = flyrtF32ToBF16((float)uniform(&seed));
    vc[i] = flyrtF32ToBF16((float)uniform(&seed));
  }

  void *dq, *dk, *dv, *dt, *dl, *dout;
  CHECK(flyrtMalloc(dev, nq * 2, &dq));
  CHECK(flyrtMalloc(dev, nc * 2, &dk));
  CHECK(flyrtMalloc(dev, nc * 2, &dv));
  CHECK(flyrtMalloc(dev, (size_t)B * maxb * 4, &dt));
  CHECK(flyrtMalloc(dev, (size_t)B * 4, &dl));
  CHECK(flyrtMalloc(dev, nq * 2, &dout));
  CHECK(flyrtMemcpyHostToDevice(dev, dq, q, nq * 2));
  CHECK(flyrtMemcpyHostToDevice(dev, dk, kc, nc * 2));
  CHECK(flyrtMemcpyHostToDevice(dev, dv, vc, nc * 2));
  CHECK(flyrtMemcpyHostToDevice(dev, dt, table, (size_t)B * maxb * 4));
  CHECK(flyrtMemcpyHostToDevice(dev, dl, ctx, (size_t)B * 4));
  CHECK(flyrtMemset(dev, dout, 0xFF, nq * 2)); /* NaN: an element not written shows */

  /* paged_decode(Q, K_cache, V_cache, block_tables, context_lens, O, Opart,
     Lpart, group, split_tokens, splits, scale_log2, k_scale, v_scale). */
  int64_t qs[3] = {B, HQ, D}, cs[4] = {NB, BS, HK, D}, ts[2] = {B, maxb}, ls[1] = {B};
  int64_t one[2] = {1, D}, one1[2] = {1, 1};
  int split = (longest + 63) / 64 * 64;
  double scale = 1 / sqrt((double)D);
  FlyrtArg args[] = {tensor(dq, FLYRT_BF16, 3, qs),   tensor(dk, FLYRT_BF16, 4, cs),
                     tensor(dv, FLYRT_BF16, 4, cs),   tensor(dt, FLYRT_I32, 2, ts),
                     tensor(dl, FLYRT_I32, 1, ls),    tensor(dout, FLYRT_BF16, 3, qs),
                     tensor(dout, FLYRT_F32, 2, one), tensor(dout, FLYRT_F32, 2, one1),
                     flyrtInt(HQ / HK),               flyrtInt(split),
                     flyrtInt(1),                     flyrtFloat(scale * 1.4426950408889634),
                     flyrtFloat(1.0),                 flyrtFloat(1.0)};
  CHECK(flyrtKernelLaunch(k, args, 14, NULL, NULL));
  CHECK(flyrtDeviceSynchronize(dev));
  CHECK(flyrtMemcpyDeviceToHost(dev, o, dout, nq * 2));

  /* float64 reference: each head's softmax over its sequence's tokens. */
  double worst = 0, *s = malloc((size_t)longest * sizeof *s);
  int bad = 0;
  if (!s)
    return 1;
  for (int b = 0; b < B; b++)
    for (int h = 0; h < HQ; h++) {
      int hk = h / (HQ / HK);
      double m = -INFINITY, l = 0;
      for (int t = 0; t < ctx[b]; t++) {
        size_t row = (((size_t)table[(size_t)b * maxb + t / BS] * BS + t % BS) * HK + hk) * D;
        double dot = 0;
        for (int e = 0; e < D; e++)
          dot += flyrtBF16ToF32(q[((size_t)b * HQ + h) * D + e]) * flyrtBF16ToF32(kc[row + e]);
        s[t] = dot * scale;
        m = s[t] > m ? s[t] : m;
      }
      for (int t = 0; t < ctx[b]; t++)
        l += exp(s[t] - m);
      for (int e = 0; e < D; e++) {
        double want = 0;
        for (int t = 0; t < ctx[b]; t++) {
          size_t row = (((size_t)table[(size_t)b * maxb + t / BS] * BS + t % BS) * HK + hk) * D;
          want += exp(s[t] - m) / l * flyrtBF16ToF32(vc[row + e]);
        }
        double got = flyrtBF16ToF32(o[((size_t)b * HQ + h) * D + e]);
        double err = fabs(got - want);
        if (!(err <= 2e-2))
          bad++;
        if (err > worst || got != got)
          worst = got != got ? INFINITY : err;
      }
    }
  printf("%s paged_decode %s: %d sequences of up to %d tokens, %d/%d heads, largest error %.3g, "
         "%d beyond 2e-2\n",
         bad ? "FAIL" : "ok", flyrtKernelSpec(k), B, longest, HQ, HK, worst, bad);
  flyrtFree(dev, dq);
  flyrtFree(dev, dk);
  flyrtFree(dev, dv);
  flyrtFree(dev, dt);
  flyrtFree(dev, dl);
  flyrtFree(dev, dout);
  free(s);
  free(ctx);
  free(order);
  free(table);
  free(q);
  free(kc);
  free(vc);
  free(o);
  flyrtModuleDestroy(mod);
  flyrtBundleDestroy(bundle);
  flyrtDeviceDestroy(dev);
  return bad ? 1 : 0;
}
