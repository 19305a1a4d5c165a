/* fuzz_flyrt.c — libFuzzer entry for libflyrt's handling of bundles
 * without a GPU: opening (flyrtBundleCreateFromMemory), making a module for
 * each target the bundle names, reading every kernel's signature (the
 * layout texts included) and checking arguments and the launch rule for
 * arguments made to fit the signature. Any bytes must give a status and a
 * message, never a crash; a success must leave no message behind. As in
 * fuzz_bundle.c, each input is also tried with its size and checksum
 * repaired, so that mutations reach past the checksum. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly/runtime.h"
#include "fly_bundle.h"
#include "fuzz_bundle_repair.h"

static void broken(const char *why) __attribute__((noreturn));
static void broken(const char *why) {
  fprintf(stderr, "fuzz_flyrt: %s (%s)\n", why, flyrtLastError());
  abort();
}

static void expect(FlyrtStatus s) {
  if (s == FLYRT_SUCCESS && flyrtLastError()[0])
    broken("a success left a message");
  if (s != FLYRT_SUCCESS && !flyrtLastError()[0])
    broken("a failure without a message");
}

/* Arguments that fit k's signature: aligned fake pointers (never used),
   the static leaves as the layout has them, `?` leaves from seed. */
static void check_arguments(FlyrtKernel k, uint64_t seed) {
  enum { MAX = 64 };
  FlyrtArg args[MAX];
  int n = 0;
  for (int i = 0; i < flyrtKernelParamCount(k) && n < MAX; i++) {
    FlyrtParamInfo p;
    expect(flyrtKernelParam(k, i, &p));
    if (p.kind == FLYRT_PARAM_CONST)
      continue;
    if (p.kind == FLYRT_PARAM_SCALAR) {
      args[n++] = flyrtInt((int64_t)(seed % 4096));
      continue;
    }
    args[n] = flyrtTensor1D((void *)(uintptr_t)0x100000, p.dtype, 1);
    args[n].u.tensor.rank = p.rank;
    for (int j = 0; j < p.rank; j++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      args[n].u.tensor.shape[j] = p.shape[j] == FLYRT_DYNAMIC ? (int64_t)(seed >> 48) : p.shape[j];
      args[n].u.tensor.stride[j] = p.stride[j] == FLYRT_DYNAMIC ? 1 : p.stride[j];
    }
    n++;
  }
  FlyrtLaunchConfig c;
  FlyrtStatus s = flyrtKernelLaunchConfigFor(k, args, n, &c);
  expect(s);
  if (s == FLYRT_SUCCESS)
    for (int i = 0; i < 3; i++)
      if (!c.block[i] || c.grid[i] > INT32_MAX || c.block[i] > INT32_MAX) /* grid 0: no work */
        broken("a launch configuration out of range");
  expect(flyrtKernelLaunch(k, args, n, NULL, NULL)); /* no device: refused */
}

static void try_open(const unsigned char *data, size_t size) {
  FlyrtBundle b;
  FlyrtStatus s = flyrtBundleCreateFromMemory(data, size, &b);
  expect(s);
  if (s)
    return;
  for (uint32_t i = 0; i < flyrtBundleKernelCount(b); i++) {
    FlyrtKernelEntry e;
    expect(flyrtBundleKernelEntry(b, i, &e));
    FlyrtModule m;
    s = flyrtModuleCreate(b, (FlyrtDevice){NULL}, e.target, &m);
    expect(s);
    if (s)
      continue;
    FlyrtKernel k;
    s = flyrtModuleGetKernel(m, e.name, e.spec, &k);
    expect(s);
    if (!s) {
      check_arguments(k, i);
      check_arguments(k, i * 7919u + 1);
    }
    flyrtModuleDestroy(m);
  }
  flyrtBundleDestroy(b);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  try_open(data, size);
  if (size >= sizeof(FlyBundleHeader)) {
    unsigned char *copy = malloc(size);
    if (!copy)
      return 0;
    memcpy(copy, data, size);
    fuzz_repair_bundle(copy, size);
    try_open(copy, size);
    free(copy);
  }
  return 0;
}
