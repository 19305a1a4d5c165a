/* test_libflyc.c — the compiler as a library (libflyc.h): compiling from
 * memory to a bundle the runtime's reader accepts, diagnostics with their
 * locations, option errors, several targets, and the disk cache. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fly_bundle.h"
#include "fly_version.h"
#include "libflyc.h"

static char cache_dir[] = "/tmp/fly-test-libflyc-XXXXXX";

static const char kernel_text[] = "kernel scale(X: tensor<f32>, n: i32, const BLOCK: int = 64) {\n"
                                  "}\n"
                                  "launch scale { grid = ceil_div(n, BLOCK); block = BLOCK; }\n";

/* Compiles text with the options (NULL-terminated). */
static FlycCompileResult compile(const char *text, const char *const *options) {
  FlycCompileOptions o = flycCompileOptionsCreate();
  for (; options && *options; options++)
    flycCompileOptionsAdd(o, *options);
  FlycCompileResult r = flycCompile("mem.fly", text, strlen(text), o);
  flycCompileOptionsDestroy(o);
  return r;
}

static void bundle_from_memory(void **state) {
  (void)state;
  const char *opts[] = {"--target=sm_90", NULL};
  FlycCompileResult r = compile(kernel_text, opts);
  assert_true(flycCompileResultSucceeded(r));
  assert_int_equal(flycCompileResultStatus(r), 0);
  assert_string_equal(flycCompileResultDiagnostics(r), "");
  size_t n;
  const void *data = flycCompileResultData(r, &n);
  assert_non_null(data);
  FlyBundle b;
  char why[256];
  assert_true(fly_bundle_open(&b, data, n, why, sizeof why));
  assert_int_equal(b.nkernels, 1);
  FlyBundleKernel k = fly_bundle_kernel(&b, 0);
  assert_string_equal(fly_bundle_string(&b, k.name), "scale");
  assert_string_equal(fly_bundle_string(&b, k.spec), "BLOCK=64");
  assert_string_equal(fly_bundle_string(&b, k.target), "sm_90");
  assert_int_equal(k.nargs, 3);
  /* The launch rule for n = 1000: ceil(1000 / 64) blocks of 64. */
  int64_t scalars[3] = {0, 1000, 0}, out[7];
  assert_true(fly_bundle_launch_eval(&b, &k, scalars, NULL, NULL, out, why, sizeof why));
  assert_int_equal(out[0], 16);
  assert_int_equal(out[3], 64);
  flycCompileResultDestroy(r);
}

static void cache_hit_is_identical(void **state) {
  (void)state;
  const char *opts[] = {"--target=gfx942", "-DBLOCK=128", NULL};
  FlycCompileResult a = compile(kernel_text, opts);
  FlycCompileResult b = compile(kernel_text, opts);
  assert_true(flycCompileResultSucceeded(a) && flycCompileResultSucceeded(b));
  assert_int_equal(flycCompileResultCacheHits(a), 0);
  assert_int_equal(flycCompileResultCacheHits(b), 1);
  size_t na, nb;
  const void *da = flycCompileResultData(a, &na), *db = flycCompileResultData(b, &nb);
  assert_int_equal(na, nb);
  assert_memory_equal(da, db, na);
  FlycCacheStats s;
  assert_true(flycCacheStats(&s));
  assert_true(s.entries >= 1);
  assert_true(flycCacheClear(&s));
  assert_true(s.entries >= 1);
  assert_true(flycCacheStats(&s));
  assert_int_equal(s.entries, 0);
  flycCompileResultDestroy(a);
  flycCompileResultDestroy(b);
}

static void several_targets_make_one_bundle(void **state) {
  (void)state;
  const char *opts[] = {"--target=sm_80,gfx950", "--no-cache", NULL};
  FlycCompileResult r = compile(kernel_text, opts);
  assert_true(flycCompileResultSucceeded(r));
  size_t n;
  const void *data = flycCompileResultData(r, &n);
  FlyBundle b;
  char why[256];
  assert_true(fly_bundle_open(&b, data, n, why, sizeof why));
  assert_int_equal(b.nkernels, 2);
  assert_int_equal(b.nimages, 2);
  FlyBundleImage im = fly_bundle_image(&b, 1);
  assert_string_equal(fly_bundle_string(&b, im.target), "gfx950");
  assert_int_equal(im.kind, FLY_IMAGE_HSACO);
  flycCompileResultDestroy(r);
}

static void errors_are_diagnostics(void **state) {
  (void)state;
  FlycCompileResult r = compile("kernel k() {\n  let x = nope;\n}\n", NULL);
  assert_false(flycCompileResultSucceeded(r));
  assert_int_equal(flycCompileResultStatus(r), 1);
  assert_null(flycCompileResultData(r, NULL));
  const char *d = flycCompileResultDiagnostics(r);
  assert_non_null(strstr(d, "mem.fly:2:11: error:"));
  assert_non_null(strstr(d, "nope"));
  flycCompileResultDestroy(r);
}

static void bad_options(void **state) {
  (void)state;
  static const char *const cases[][3] = {
      {"--frobnicate", "unknown option '--frobnicate'", NULL},
      {"-o", "x.flyb", "-o is an option of the command line only"},
      {"--target=sm_70", "unknown target 'sm_70'", NULL},
      {"--emit=ptx", "--target=sm_80,sm_90", "several targets make one bundle"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *opts[3] = {cases[i][0], cases[i][2] ? cases[i][1] : NULL, NULL};
    const char *want = cases[i][2] ? cases[i][2] : cases[i][1];
    FlycCompileResult r = compile(kernel_text, opts);
    assert_int_equal(flycCompileResultStatus(r), 2);
    const char *d = flycCompileResultDiagnostics(r);
    if (!strstr(d, want))
      fail_msg("case %zu: expected '%s' in:\n%s", i, want, d);
    flycCompileResultDestroy(r);
  }
}

static void handles(void **state) {
  (void)state;
  assert_string_equal(flycVersion(), FLY_VERSION);
  FlycCompileResult none = {NULL};
  flycCompileResultDestroy(none);
  assert_false(flycCompileResultSucceeded(none));
  FlycCompileOptions o = {NULL};
  flycCompileOptionsAdd(o, "--emit=ptx");
  flycCompileOptionsDestroy(o);
}

static int setup(void **state) {
  (void)state;
  if (!mkdtemp(cache_dir))
    return -1;
  setenv("FLYC_CACHE_DIR", cache_dir, 1);
  setenv("FLYC_CACHE", "1", 1);
  unsetenv("FLYC_TARGET");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  FlycCacheStats s;
  flycCacheClear(&s);
  rmdir(cache_dir);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bundle_from_memory),
      cmocka_unit_test(cache_hit_is_identical),
      cmocka_unit_test(several_targets_make_one_bundle),
      cmocka_unit_test(errors_are_diagnostics),
      cmocka_unit_test(bad_options),
      cmocka_unit_test(handles),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
