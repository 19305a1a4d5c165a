/* test_flyrt_cuda.c — libflyrt's CUDA back end against a stand-in driver
 * (fake_cuda/fake_cuda.c, loaded as libcuda.so.1): a kernel compiled for
 * clusters launches through cuLaunchKernelEx with its cluster shape as an
 * attribute, one without through cuLaunchKernel as before, and a grid that
 * is not made of whole clusters is refused before the driver sees it. A
 * tensor map is encoded once for the same arguments, launch after launch,
 * and a pointer is checked once (GPU memory of the kernel's GPU) while its
 * parameter holds it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fly/runtime.h"
#include "libflyc.h"

typedef struct FakeLaunch {
  int calls;
  int ex;
  unsigned grid[3], block[3], shared, cluster[3];
  int nattrs;
  int encodes;
  int checks;
} FakeLaunch;
const FakeLaunch *fake_cuda_last_launch(void);

static FlyrtDevice device;

/* The golden file compiled for target and loaded on the fake device. */
static FlyrtModule module_of(const char *file, const char *target) {
  char path[1024], opt[64];
  snprintf(path, sizeof path, "%s/%s", FLY_SOURCE_DIR, file);
  snprintf(opt, sizeof opt, "--target=%s", target);
  FlycCompileOptions o = flycCompileOptionsCreate();
  flycCompileOptionsAdd(o, opt);
  FlycCompileResult r = flycCompile(path, NULL, 0, o);
  flycCompileOptionsDestroy(o);
  if (!flycCompileResultSucceeded(r))
    fail_msg("%s: %s", file, flycCompileResultDiagnostics(r));
  size_t size;
  const void *data = flycCompileResultData(r, &size);
  FlyrtBundle b;
  if (flyrtBundleCreateFromMemory(data, size, &b))
    fail_msg("%s", flyrtLastError());
  flycCompileResultDestroy(r);
  FlyrtModule m;
  if (flyrtModuleCreate(b, device, NULL, &m))
    fail_msg("%s", flyrtLastError());
  flyrtBundleDestroy(b);
  return m;
}

static FlyrtKernel kernel_of(FlyrtModule m, const char *name) {
  FlyrtKernel k;
  if (flyrtModuleGetKernel(m, name, NULL, &k))
    fail_msg("%s", flyrtLastError());
  return k;
}

static void *fake(uintptr_t p) { return (void *)p; }

static void cluster_launch(void **state) {
  (void)state;
  FlyrtModule m = module_of("tests/cli/compile/golden/cluster.fly", "sm_90a");
  FlyrtKernel k = kernel_of(m, "ranks");
  uint32_t shape[3];
  assert_true(flyrtKernelCluster(k, shape));
  assert_int_equal(shape[0], 2);
  assert_int_equal(shape[1], 2);
  assert_int_equal(shape[2], 1);
  FlyrtArg r = flyrtTensor1D(fake(0x10000), FLYRT_I32, 32);
  int before = fake_cuda_last_launch()->calls;
  assert_int_equal(flyrtKernelLaunch(k, &r, 1, NULL, NULL), FLYRT_SUCCESS);
  const FakeLaunch *l = fake_cuda_last_launch();
  assert_int_equal(l->calls, before + 1);
  assert_int_equal(l->ex, 1);
  assert_int_equal(l->nattrs, 1);
  assert_int_equal(l->grid[0], 4);
  assert_int_equal(l->grid[1], 2);
  assert_int_equal(l->block[0], 32);
  assert_int_equal(l->cluster[0], 2);
  assert_int_equal(l->cluster[1], 2);
  assert_int_equal(l->cluster[2], 1);

  /* With tensor maps too: the multicast kernel, in clusters of 2. */
  k = kernel_of(m, "multicast");
  FlyrtArg args[2] = {flyrtTensor2D(fake(0x20000), FLYRT_F32, 29, 52, 52),
                      flyrtTensor2D(fake(0x30000), FLYRT_F32, 64, 64, 64)};
  assert_int_equal(flyrtKernelLaunch(k, args, 2, NULL, NULL), FLYRT_SUCCESS);
  assert_int_equal(l->ex, 1);
  assert_int_equal(l->grid[0], 4);
  assert_int_equal(l->cluster[0], 2);
  assert_int_equal(l->cluster[1], 1);
  assert_int_equal(l->cluster[2], 1);

  /* A grid of 3 x 2 blocks is no whole number of clusters of 2 x 2. */
  k = kernel_of(m, "ranks");
  FlyrtLaunchConfig c = {{3, 2, 1}, {32, 1, 1}, 0};
  before = l->calls;
  assert_int_equal(flyrtKernelLaunch(k, &r, 1, NULL, &c), FLYRT_ERROR_LAUNCH_RULE);
  assert_string_equal(flyrtLastError(), "ranks: a grid of 3 x 2 x 1 blocks is not made of whole "
                                        "clusters of 2 x 2 x 1 blocks (the kernel's cluster)");
  assert_int_equal(l->calls, before);
  c.grid[0] = 6;
  assert_int_equal(flyrtKernelLaunch(k, &r, 1, NULL, &c), FLYRT_SUCCESS);
  assert_int_equal(l->grid[0], 6);
  assert_int_equal(l->cluster[0], 2);
  flyrtModuleDestroy(m);
}

/* The maps of a launch are kept for the next with the same arguments; a
   tensor at another address, or of another shape, is encoded anew. */
static void tensor_maps_kept(void **state) {
  (void)state;
  FlyrtModule m = module_of("tests/cli/compile/golden/cluster.fly", "sm_90a");
  FlyrtKernel k = kernel_of(m, "multicast");
  const FakeLaunch *l = fake_cuda_last_launch();
  FlyrtArg args[2] = {flyrtTensor2D(fake(0x120000), FLYRT_F32, 29, 52, 52),
                      flyrtTensor2D(fake(0x130000), FLYRT_F32, 64, 64, 64)};
  int before = l->encodes;
  assert_int_equal(flyrtKernelLaunch(k, args, 2, NULL, NULL), FLYRT_SUCCESS);
  int per_launch = l->encodes - before;
  assert_true(per_launch >= 1);
  assert_int_equal(flyrtKernelLaunch(k, args, 2, NULL, NULL), FLYRT_SUCCESS);
  assert_int_equal(l->encodes - before, per_launch);
  args[0] = flyrtTensor2D(fake(0x140000), FLYRT_F32, 29, 52, 52);
  assert_int_equal(flyrtKernelLaunch(k, args, 2, NULL, NULL), FLYRT_SUCCESS);
  assert_true(l->encodes - before > per_launch);
  int after_address = l->encodes;
  args[0] = flyrtTensor2D(fake(0x140000), FLYRT_F32, 30, 52, 52);
  assert_int_equal(flyrtKernelLaunch(k, args, 2, NULL, NULL), FLYRT_SUCCESS);
  assert_true(l->encodes > after_address);
  flyrtModuleDestroy(m);
}

/* The driver is asked about a pointer once while a parameter keeps it from
   launch to launch, and once a launch however many parameters hold it; a
   new pointer is asked about. */
static void pointers_checked_once(void **state) {
  (void)state;
  FlyrtModule m = module_of("tests/cli/compile/golden/mbarrier.fly", "sm_90");
  FlyrtKernel k = kernel_of(m, "exchange");
  const FakeLaunch *l = fake_cuda_last_launch();
  FlyrtLaunchConfig c = {{1, 1, 1}, {128, 1, 1}, 0};
  FlyrtArg args[2] = {flyrtTensor1D(fake(0x210000), FLYRT_F32, 128),
                      flyrtTensor1D(fake(0x220000), FLYRT_F32, 128)};
  int before = l->checks;
  assert_int_equal(flyrtKernelLaunch(k, args, 2, NULL, &c), FLYRT_SUCCESS);
  assert_int_equal(l->checks - before, 2);
  assert_int_equal(flyrtKernelLaunch(k, args, 2, NULL, &c), FLYRT_SUCCESS);
  assert_int_equal(l->checks - before, 2);
  args[1] = flyrtTensor1D(fake(0x230000), FLYRT_F32, 128);
  assert_int_equal(flyrtKernelLaunch(k, args, 2, NULL, &c), FLYRT_SUCCESS);
  assert_int_equal(l->checks - before, 3);
  /* One new pointer in both parameters: one question. */
  args[0] = args[1] = flyrtTensor1D(fake(0x240000), FLYRT_F32, 128);
  assert_int_equal(flyrtKernelLaunch(k, args, 2, NULL, &c), FLYRT_SUCCESS);
  assert_int_equal(l->checks - before, 4);
  flyrtModuleDestroy(m);
}

static void plain_launch(void **state) {
  (void)state;
  FlyrtModule m = module_of("tests/cli/compile/golden/mbarrier.fly", "sm_90");
  FlyrtKernel k = kernel_of(m, "exchange");
  uint32_t shape[3] = {0, 0, 0};
  assert_false(flyrtKernelCluster(k, shape));
  assert_int_equal(shape[0] * shape[1] * shape[2], 1);
  FlyrtArg args[2] = {flyrtTensor1D(fake(0x10000), FLYRT_F32, 128),
                      flyrtTensor1D(fake(0x20000), FLYRT_F32, 128)};
  /* Any grid: there is no cluster to divide it. */
  FlyrtLaunchConfig c = {{3, 1, 1}, {128, 1, 1}, 0};
  assert_int_equal(flyrtKernelLaunch(k, args, 2, NULL, &c), FLYRT_SUCCESS);
  const FakeLaunch *l = fake_cuda_last_launch();
  assert_int_equal(l->ex, 0);
  assert_int_equal(l->grid[0], 3);
  assert_int_equal(l->block[0], 128);
  assert_false(flyrtKernelCluster((FlyrtKernel){NULL}, shape));
  flyrtModuleDestroy(m);
}

int main(void) {
  char dir[] = "/tmp/fly-test-flyrt-cuda-cache-XXXXXX";
  if (!mkdtemp(dir))
    return 1;
  setenv("FLYC_CACHE_DIR", dir, 1);
  setenv("FLYRT_BACKEND", "cuda", 1);
  if (flyrtDeviceCreate(0, &device)) {
    fprintf(stderr, "the fake driver did not load: %s\n", flyrtLastError());
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cluster_launch),
      cmocka_unit_test(plain_launch),
      cmocka_unit_test(tensor_maps_kept),
      cmocka_unit_test(pointers_checked_once),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  flyrtDeviceDestroy(device);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0)
    return 1;
  return failed;
}
