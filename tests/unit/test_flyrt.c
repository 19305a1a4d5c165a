/* test_flyrt.c — libflyrt without a GPU: bundles from files and memory and
 * every way they are refused, the choice of image for a device, finding
 * kernels and specialisations, the signature, the checks of arguments and
 * the launch rule, thread-local errors under concurrent use, and the
 * answers of the device functions when no driver is installed. Bundles are
 * compiled here from the examples through libflyc. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fly/runtime.h"
#include "fly_bundle_write.h"
#include "flyrt_internal.h"
#include "libflyc.h"

/* ---- bundles to test with ---- */

typedef struct Bytes {
  unsigned char *data;
  size_t size;
} Bytes;

/* The file (relative to the source tree) compiled with the options,
   NULL-terminated; the test fails when it does not compile. */
static Bytes compile(const char *file, const char *const *options) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", FLY_SOURCE_DIR, file);
  FlycCompileOptions o = flycCompileOptionsCreate();
  for (; options && *options; options++)
    flycCompileOptionsAdd(o, *options);
  FlycCompileResult r = flycCompile(path, NULL, 0, o);
  flycCompileOptionsDestroy(o);
  if (!flycCompileResultSucceeded(r))
    fail_msg("%s: %s", file, flycCompileResultDiagnostics(r));
  Bytes b;
  const void *data = flycCompileResultData(r, &b.size);
  b.data = malloc(b.size);
  memcpy(b.data, data, b.size);
  flycCompileResultDestroy(r);
  return b;
}

static const char *const sm90[] = {"--target=sm_90", NULL};
static const char *const two_targets[] = {"--target=sm_90,gfx942", NULL};

static FlyrtBundle bundle_of(Bytes bytes) {
  FlyrtBundle b;
  if (flyrtBundleCreateFromMemory(bytes.data, bytes.size, &b))
    fail_msg("%s", flyrtLastError());
  return b;
}

/* A module without a device, for target. */
static FlyrtModule module_of(Bytes bytes, const char *target) {
  FlyrtBundle b = bundle_of(bytes);
  FlyrtModule m;
  FlyrtStatus s = flyrtModuleCreate(b, (FlyrtDevice){NULL}, target, &m);
  flyrtBundleDestroy(b);
  if (s)
    fail_msg("%s", flyrtLastError());
  return m;
}

static FlyrtKernel kernel_of(FlyrtModule m, const char *name, const char *spec) {
  FlyrtKernel k;
  if (flyrtModuleGetKernel(m, name, spec, &k))
    fail_msg("%s", flyrtLastError());
  return k;
}

/* Asserts that status and the message are as expected. */
static void assert_error(FlyrtStatus got, FlyrtStatus want, const char *text) {
  if (got != want || !strstr(flyrtLastError(), text))
    fail_msg("got %s \"%s\", wanted %s with \"%s\"", flyrtStatusName(got), flyrtLastError(),
             flyrtStatusName(want), text);
}

/* Recomputes the checksum after bytes were changed on purpose. */
static void reseal(unsigned char *p, size_t size) {
  memset(p + 24, 0, 4);
  uint32_t crc = fly_crc32(0, p, size);
  memcpy(p + 24, &crc, 4);
}

/* ---- bundles ---- */

static void bundle_from_file_and_memory(void **state) {
  (void)state;
  Bytes v = compile("examples/01-vector-add.fly", two_targets);
  char path[] = "/tmp/fly-test-flyrt-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, v.data, v.size), (ssize_t)v.size);
  close(fd);
  FlyrtBundle a, b;
  assert_int_equal(flyrtBundleCreateFromFile(path, &a), FLYRT_SUCCESS);
  assert_string_equal(flyrtLastError(), "");
  assert_int_equal(flyrtBundleCreateFromMemory(v.data, v.size, &b), FLYRT_SUCCESS);
  unlink(path);
  assert_int_equal(flyrtBundleKernelCount(a), 2);
  FlyrtKernelEntry e;
  assert_int_equal(flyrtBundleKernelEntry(b, 1, &e), FLYRT_SUCCESS);
  assert_string_equal(e.name, "vector_add");
  assert_string_equal(e.spec, "BLOCK=256 VEC=4");
  assert_string_equal(e.target, "gfx942");
  assert_string_equal(e.image_kind, "hsaco");
  assert_string_equal(flyrtBundleCompiler(a), "flyc 0.1.0");
  assert_int_equal(strlen(flyrtBundleSourceHash(a)), 64);
  assert_error(flyrtBundleKernelEntry(b, 2, &e), FLYRT_ERROR_INVALID_VALUE, "kernel 2 of");
  flyrtBundleDestroy(a);
  flyrtBundleDestroy(b);
  free(v.data);
}

static void bundle_refused(void **state) {
  (void)state;
  Bytes v = compile("examples/01-vector-add.fly", sm90);
  FlyrtBundle b;
  assert_error(flyrtBundleCreateFromFile("/nonexistent/x.flyb", &b), FLYRT_ERROR_IO,
               "cannot open '/nonexistent/x.flyb'");
  assert_null(b.ptr);
  assert_error(flyrtBundleCreateFromFile("/tmp", &b), FLYRT_ERROR_IO, "/tmp");
  assert_error(flyrtBundleCreateFromMemory("hello", 5, &b), FLYRT_ERROR_BAD_BUNDLE,
               "bundle in memory: ");
  assert_error(flyrtBundleCreateFromMemory(v.data, 0, &b), FLYRT_ERROR_BAD_BUNDLE, "");
  assert_error(flyrtBundleCreateFromMemory(v.data, v.size - 1, &b), FLYRT_ERROR_BAD_BUNDLE, "");
  for (size_t i = 0; i < v.size; i += 7) {
    v.data[i] ^= 0x20;
    assert_int_not_equal(flyrtBundleCreateFromMemory(v.data, v.size, &b), FLYRT_SUCCESS);
    v.data[i] ^= 0x20;
  }
  /* Another version, otherwise intact: its own status. */
  v.data[8] = 2;
  reseal(v.data, v.size);
  assert_error(flyrtBundleCreateFromMemory(v.data, v.size, &b), FLYRT_ERROR_VERSION,
               "format version 2");
  assert_error(flyrtBundleCreateFromMemory(NULL, 4, &b), FLYRT_ERROR_INVALID_VALUE, "null");
  assert_error(flyrtBundleCreateFromFile(NULL, &b), FLYRT_ERROR_INVALID_VALUE, "null");
  free(v.data);
}

/* ---- modules and the choice of image ---- */

static void module_for_target(void **state) {
  (void)state;
  /* What a null device reports: nothing, not a crash. */
  assert_int_equal(flyrtDeviceMultiprocessors((FlyrtDevice){NULL}), 0);
  assert_int_equal(flyrtDeviceOrdinal((FlyrtDevice){NULL}), -1);
  Bytes v = compile("examples/01-vector-add.fly", two_targets);
  FlyrtBundle b = bundle_of(v);
  FlyrtModule m;
  assert_int_equal(flyrtModuleCreate(b, (FlyrtDevice){NULL}, "gfx942", &m), FLYRT_SUCCESS);
  assert_string_equal(flyrtModuleTarget(m), "gfx942");
  flyrtModuleDestroy(m);
  assert_error(flyrtModuleCreate(b, (FlyrtDevice){NULL}, "sm_80", &m), FLYRT_ERROR_NO_IMAGE,
               "the bundle has no image for sm_80 (it has: sm_90 ptx, gfx942 hsaco)");
  assert_error(flyrtModuleCreate(b, (FlyrtDevice){NULL}, NULL, &m), FLYRT_ERROR_INVALID_VALUE,
               "a device or a target");
  /* The module keeps the bundle alive. */
  assert_int_equal(flyrtModuleCreate(b, (FlyrtDevice){NULL}, "sm_90", &m), FLYRT_SUCCESS);
  flyrtBundleDestroy(b);
  kernel_of(m, "vector_add", NULL);
  flyrtModuleDestroy(m);
  free(v.data);
}

static void image_choice(void **state) {
  (void)state;
  const char *const targets[] = {"--target=sm_80,sm_90a,gfx942", NULL};
  Bytes v = compile("examples/01-vector-add.fly", targets);
  FlyBundle b;
  char why[256], out[32];
  assert_true(fly_bundle_open(&b, v.data, v.size, why, sizeof why));
  static const struct {
    const char *device, *want;
  } cases[] = {
      {"sm_90", "sm_90a"}, /* its own chip's `a` variant */
      {"sm_100", "sm_80"}, /* PTX compiled forward; sm_90a is only for 9.0 */
      {"sm_86", "sm_80"},  {"gfx942", "gfx942"},
      {"sm_75", NULL},     {"gfx950", NULL}, /* AMD: the same chip only */
      {"", NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    FlyrtStatus s = flyrt_choose_target(&b, cases[i].device, "GPU 0, Test", out, sizeof out);
    if (cases[i].want) {
      assert_int_equal(s, FLYRT_SUCCESS);
      assert_string_equal(out, cases[i].want);
    } else {
      assert_error(s, FLYRT_ERROR_NO_IMAGE, "the bundle has no image that runs on GPU 0, Test");
      assert_non_null(strstr(flyrtLastError(), "it has sm_80 ptx, sm_90a ptx, gfx942 hsaco"));
    }
  }
  free(v.data);
}

/* ---- kernels and specialisations ---- */

static void kernel_lookup(void **state) {
  (void)state;
  const char *const o128[] = {"--target=sm_90", "-DBLOCK=128", NULL};
  Bytes a = compile("examples/01-vector-add.fly", sm90),
        b = compile("examples/01-vector-add.fly", o128);
  /* One bundle with both specialisations. */
  FlyBundleWriter w;
  fly_bundle_writer_init(&w);
  FlyBundle fa, fb;
  char why[256];
  assert_true(fly_bundle_open(&fa, a.data, a.size, why, sizeof why));
  assert_true(fly_bundle_open(&fb, b.data, b.size, why, sizeof why));
  fly_bundle_writer_merge(&w, &fa);
  fly_bundle_writer_merge(&w, &fb);
  Bytes both;
  both.data = fly_bundle_writer_finish(&w, "flyc 0.1.0", "LLVM", "", &both.size);
  fly_bundle_writer_release(&w);
  FlyrtModule m = module_of(both, "sm_90");
  FlyrtKernel k;
  assert_error(flyrtModuleGetKernel(m, "vector_add", NULL, &k), FLYRT_ERROR_NOT_FOUND,
               "kernel 'vector_add' has 2 specialisations for sm_90: name the const bindings of "
               "one ('BLOCK=256 VEC=4', 'BLOCK=128 VEC=4')");
  assert_error(flyrtModuleGetKernel(m, "vector_add", "VEC=4", &k), FLYRT_ERROR_NOT_FOUND,
               "has 2 specialisations matching 'VEC=4'");
  assert_error(flyrtModuleGetKernel(m, "vector_add", "BLOCK=64", &k), FLYRT_ERROR_NOT_FOUND,
               "kernel 'vector_add' has no specialisation 'BLOCK=64' for sm_90 (it has: "
               "'BLOCK=256 VEC=4', 'BLOCK=128 VEC=4')");
  assert_error(flyrtModuleGetKernel(m, "vector_sub", NULL, &k), FLYRT_ERROR_NOT_FOUND,
               "no kernel 'vector_sub' in the bundle for sm_90 (it has: vector_add)");
  k = kernel_of(m, "vector_add", "BLOCK=128");
  assert_string_equal(flyrtKernelSpec(k), "BLOCK=128 VEC=4");
  k = kernel_of(m, "vector_add", "  VEC=4   BLOCK=256 ");
  assert_string_equal(flyrtKernelSpec(k), "BLOCK=256 VEC=4");
  assert_string_equal(flyrtKernelName(k), "vector_add");
  assert_error(flyrtModuleGetKernel(m, NULL, NULL, &k), FLYRT_ERROR_INVALID_VALUE, "null");
  flyrtModuleDestroy(m);
  free(a.data), free(b.data), free(both.data);
}

static void signature(void **state) {
  (void)state;
  Bytes v = compile("examples/03-tiled-mma.fly", sm90);
  FlyrtModule m = module_of(v, "sm_90");
  FlyrtKernel k = kernel_of(m, "gemm_tile", NULL);
  assert_int_equal(flyrtKernelParamCount(k), 8);
  assert_int_equal(flyrtKernelArgCount(k), 3);
  FlyrtParamInfo p;
  assert_int_equal(flyrtKernelParam(k, 0, &p), FLYRT_SUCCESS);
  assert_string_equal(p.name, "A");
  assert_int_equal(p.kind, FLYRT_PARAM_TENSOR);
  assert_int_equal(p.dtype, FLYRT_F16);
  assert_string_equal(p.type, "f16");
  assert_string_equal(p.layout, "(?,?):(?,1)");
  assert_int_equal(p.rank, 2);
  assert_true(p.shape[0] == FLYRT_DYNAMIC && p.shape[1] == FLYRT_DYNAMIC);
  assert_true(p.stride[0] == FLYRT_DYNAMIC && p.stride[1] == 1);
  assert_int_equal(flyrtKernelParam(k, 3, &p), FLYRT_SUCCESS);
  assert_string_equal(p.name, "BM");
  assert_int_equal(p.kind, FLYRT_PARAM_CONST);
  assert_string_equal(p.layout, "64");
  assert_error(flyrtKernelParam(k, 8, &p), FLYRT_ERROR_INVALID_VALUE,
               "kernel 'gemm_tile' has 8 parameters, not 9");
  flyrtModuleDestroy(m);
  free(v.data);
}

static void layout_text(void **state) {
  (void)state;
  FlyrtParamInfo p;
  assert_true(flyrt_parse_layout("(?,(4,?)):(?,(1,?))", &p));
  assert_int_equal(p.rank, 3);
  assert_true(p.shape[1] == 4 && p.stride[1] == 1 && p.stride[2] == FLYRT_DYNAMIC);
  assert_true(flyrt_parse_layout("(?,):(1,)", &p));
  assert_int_equal(p.rank, 1);
  assert_true(flyrt_parse_layout("8:-1", &p));
  assert_int_equal(p.stride[0], -1);
  static const char *const bad[] = {"",
                                    "?",
                                    "(?,?):(1)",
                                    "(?,):(1,)x",
                                    "(?;?):(1,1)",
                                    "(:)",
                                    "():()",
                                    "((((((((((((((((("
                                    "?))))))))))))))))):1",
                                    "(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17):"
                                    "(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17)"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    assert_false(flyrt_parse_layout(bad[i], &p));
}

/* ---- arguments and the launch rule ---- */

static char *fake(uintptr_t p) { return (char *)p; }

/* A tensor read through AMD's buffer accesses spans at most 2^31 bytes
   (their offsets are 32-bit): the compiler records it (max_span, in
   elements: 2^30 of bf16), and a larger tensor is refused, whatever its
   strides' signs; one of no elements spans nothing. */
static void buffer_span_is_checked(void **state) {
  (void)state;
  static const char *const gfx942[] = {"--target=gfx942", NULL};
  Bytes v = compile("tests/cli/compile/golden/buffer.fly", gfx942);
  FlyrtModule m = module_of(v, "gfx942");
  FlyrtKernel k = kernel_of(m, "buffer_rows", NULL);
  FlyrtParamInfo info;
  assert_int_equal(flyrtKernelParam(k, 0, &info), FLYRT_SUCCESS);
  assert_int_equal(info.max_span, 1u << 30);
  /* 32768 rows of 32768 bf16: exactly 2 GiB. */
  int64_t rows = 32768, cols = 32768;
  FlyrtArg args[2] = {flyrtTensor2D(fake(0x10000), FLYRT_BF16, rows, cols, cols),
                      flyrtTensor2D(fake(0x20000), FLYRT_BF16, rows, cols, cols)};
  FlyrtLaunchConfig c;
  if (flyrtKernelLaunchConfigFor(k, args, 2, &c) != FLYRT_SUCCESS)
    fail_msg("%s", flyrtLastError());
  args[1].u.tensor.stride[0] = cols + 8; /* padded rows: past 2 GiB */
  assert_error(flyrtKernelLaunchConfigFor(k, args, 2, &c), FLYRT_ERROR_ARGUMENTS,
               "buffer_rows: argument 'B': the kernel's offsets into it are 32-bit and reach "
               "1073741824 elements, and the tensor spans more (shape 32768x32768)");
  args[1].u.tensor.stride[0] = -(cols + 8); /* rows upward in memory: the same span */
  assert_error(flyrtKernelLaunchConfigFor(k, args, 2, &c), FLYRT_ERROR_ARGUMENTS,
               "argument 'B': the kernel's offsets into it are 32-bit");
  args[0].u.tensor.shape[0] = 0;
  args[1] = args[0];
  args[1].u.tensor.data = fake(0x20000);
  args[1].u.tensor.stride[0] = INT64_C(1) << 30; /* no rows: nothing spanned */
  assert_int_equal(flyrtKernelLaunchConfigFor(k, args, 2, &c), FLYRT_SUCCESS);
  flyrtModuleDestroy(m);
  free(v.data);
}

static void argument_checks(void **state) {
  (void)state;
  Bytes v = compile("examples/03-tiled-mma.fly", sm90);
  FlyrtModule m = module_of(v, "sm_90");
  FlyrtKernel k = kernel_of(m, "gemm_tile", NULL);
  int64_t M = 256, N = 384, K = 512;
  FlyrtArg args[3] = {flyrtTensor2D(fake(0x10000), FLYRT_F16, M, K, K),
                      flyrtTensor2D(fake(0x20000), FLYRT_F16, N, K, K),
                      flyrtTensor2D(fake(0x30000), FLYRT_F32, M, N, N)};
  FlyrtLaunchConfig c;
  assert_int_equal(flyrtKernelLaunchConfigFor(k, args, 3, &c), FLYRT_SUCCESS);
  assert_int_equal(c.grid[0], N / 64);
  assert_int_equal(c.grid[1], M / 64);
  assert_int_equal(c.grid[2], 1);
  assert_int_equal(c.block[0], 128);
  assert_int_equal(c.shared_bytes, 0);

  assert_error(flyrtKernelLaunchConfigFor(k, args, 2, &c), FLYRT_ERROR_ARGUMENTS,
               "gemm_tile: takes 3 arguments, 2 given");
  FlyrtArg a = args[1];
  args[1].u.tensor.dtype = FLYRT_F32;
  assert_error(flyrtKernelLaunchConfigFor(k, args, 3, &c), FLYRT_ERROR_ARGUMENTS,
               "gemm_tile: argument 'B': the kernel takes f16 elements, not f32");
  args[1] = flyrtTensor1D(fake(0x20000), FLYRT_F16, N * K);
  assert_error(flyrtKernelLaunchConfigFor(k, args, 3, &c), FLYRT_ERROR_ARGUMENTS,
               "argument 'B': the kernel's layout (?,?):(?,1) has 2 modes (flattened), and the "
               "tensor 1 (196608)");
  args[1] = a;
  args[1].u.tensor.stride[1] = 2; /* the layout's stride 1 is static */
  assert_error(flyrtKernelLaunchConfigFor(k, args, 3, &c), FLYRT_ERROR_ARGUMENTS,
               "argument 'B': the kernel's layout is (?,?):(?,1), and its stride is ?x1; the "
               "tensor's is 512x2");
  args[1] = a;
  args[1].u.tensor.shape[0] = (int64_t)1 << 31;
  assert_error(flyrtKernelLaunchConfigFor(k, args, 3, &c), FLYRT_ERROR_ARGUMENTS,
               "argument 'B': shape leaf does not fit the 32-bit integer the kernel takes");
  args[1] = a;
  args[1].u.tensor.data = fake(0x20001);
  assert_error(flyrtKernelLaunchConfigFor(k, args, 3, &c), FLYRT_ERROR_ARGUMENTS,
               "argument 'B': the pointer 0x20001 is not aligned to its 2-byte elements");
  args[1].u.tensor.data = NULL;
  assert_error(flyrtKernelLaunchConfigFor(k, args, 3, &c), FLYRT_ERROR_ARGUMENTS,
               "argument 'B': a null pointer");
  args[1] = flyrtInt(3);
  assert_error(flyrtKernelLaunchConfigFor(k, args, 3, &c), FLYRT_ERROR_ARGUMENTS,
               "argument 'B': the kernel takes a tensor, not an integer");
  args[1] = a;
  args[1].u.tensor.shape[0] = -5;
  assert_error(flyrtKernelLaunchConfigFor(k, args, 3, &c), FLYRT_ERROR_ARGUMENTS,
               "negative extent in shape -5x512");
  /* What the 128-bit copies of A and B assume: 16-byte aligned pointers
     and row strides (the compiler recorded it in the bundle). */
  args[1] = a;
  args[0].u.tensor.data = fake(0x10008);
  assert_error(flyrtKernelLaunchConfigFor(k, args, 3, &c), FLYRT_ERROR_ARGUMENTS,
               "gemm_tile: argument 'A': the kernel's vector accesses need 16-byte alignment, and "
               "the pointer 0x10008 is not aligned so");
  args[0].u.tensor.data = fake(0x10000);
  args[0].u.tensor.stride[0] = K + 4;
  assert_error(flyrtKernelLaunchConfigFor(k, args, 3, &c), FLYRT_ERROR_ARGUMENTS,
               "gemm_tile: argument 'A': the kernel's vector accesses need every runtime stride "
               "to be a multiple of 16 bytes, and the strides are 516x1 elements");
  args[0].u.tensor.stride[0] = K + 8; /* a padded row: allowed */
  if (flyrtKernelLaunchConfigFor(k, args, 3, &c) != FLYRT_SUCCESS)
    fail_msg("%s", flyrtLastError());
  /* Rows 2^24 elements apart: 256 of them span past the 2^31 elements the
     kernel's 32-bit offsets reach (its bundle says so: max_span). */
  args[0].u.tensor.stride[0] = INT64_C(1) << 24;
  assert_error(flyrtKernelLaunchConfigFor(k, args, 3, &c), FLYRT_ERROR_ARGUMENTS,
               "gemm_tile: argument 'A': the kernel's offsets into it are 32-bit and reach "
               "2147483648 elements, and the tensor spans more (shape 256x512)");
  args[0].u.tensor.stride[0] = K;
  FlyrtParamInfo info;
  assert_int_equal(flyrtKernelParam(k, 0, &info), FLYRT_SUCCESS);
  assert_int_equal(info.align, 16);
  assert_int_equal(info.stride_align, 16);
  assert_int_equal(flyrtKernelParam(k, 2, &info), FLYRT_SUCCESS);
  assert_int_equal(info.align, 0); /* C is written 4 bytes at a time */
  /* Shapes the launch block's requirements refuse, with its messages. */
  args[1] = a;
  args[1].u.tensor.shape[0] = 32;
  args[2].u.tensor.shape[1] = 32;
  assert_error(flyrtKernelLaunchConfigFor(k, args, 3, &c), FLYRT_ERROR_LAUNCH_REFUSED,
               "gemm_tile: launch refused: M, N and K are multiples of BM, BN, BK "
               "(03-tiled-mma.fly:");
  args[2].u.tensor.shape[1] = N;
  args[1].u.tensor.shape[0] = N;
  args[1].u.tensor.shape[1] = K / 2;
  assert_error(flyrtKernelLaunchConfigFor(k, args, 3, &c), FLYRT_ERROR_LAUNCH_REFUSED,
               "launch refused: A is M x K, B is N x K and C is M x N");
  /* A whole grid and block given: the rule's settings are not used, but its
     requirements are checked all the same. */
  FlyrtLaunchConfig whole = {{2, 2, 1}, {128, 1, 1}, 0};
  assert_error(flyrtKernelLaunch(k, args, 3, NULL, &whole), FLYRT_ERROR_LAUNCH_REFUSED,
               "launch refused: A is M x K");
  args[1] = a;
  assert_error(flyrtKernelLaunch(k, args, 3, NULL, &whole), FLYRT_ERROR_NO_DEVICE, "gemm_tile");
  FlyrtLaunchConfig part = {{2, 2, 1}, {0, 0, 0}, 0};
  args[1].u.tensor.shape[0] = 32;
  assert_error(flyrtKernelLaunch(k, args, 3, NULL, &part), FLYRT_ERROR_LAUNCH_REFUSED,
               "launch refused");
  /* Launching a module without a device: the arguments are checked first. */
  args[1] = a;
  assert_error(flyrtKernelLaunch(k, args, 3, NULL, NULL), FLYRT_ERROR_NO_DEVICE,
               "gemm_tile: its module was made for target sm_90 without a device");
  assert_error(flyrtKernelLaunch((FlyrtKernel){NULL}, args, 3, NULL, NULL),
               FLYRT_ERROR_INVALID_VALUE, "null kernel");
  flyrtModuleDestroy(m);
  free(v.data);
}

static void scalars_and_overrides(void **state) {
  (void)state;
  Bytes v = compile("tests/gpu/kernels/carried.fly", sm90);
  FlyrtModule m = module_of(v, "sm_90");
  FlyrtKernel k = kernel_of(m, "carried", NULL);
  assert_true(flyrtKernelHasLaunchRule(k));
  FlyrtArg args[3] = {flyrtInt(10), flyrtFloat(0.5), flyrtTensor1D(fake(0x1000), FLYRT_F32, 1000)};
  FlyrtLaunchConfig c;
  assert_int_equal(flyrtKernelLaunchConfigFor(k, args, 3, &c), FLYRT_SUCCESS);
  assert_int_equal(c.grid[0], 8);
  assert_int_equal(c.block[0], 128);
  args[1] = flyrtInt(2); /* an integer for a float: converted */
  assert_int_equal(flyrtKernelLaunchConfigFor(k, args, 3, &c), FLYRT_SUCCESS);
  args[1] = flyrtFloat(1e39);
  assert_error(flyrtKernelLaunchConfigFor(k, args, 3, &c), FLYRT_ERROR_ARGUMENTS,
               "carried: argument 'scale': 1e+39 does not fit f32");
  args[1] = flyrtFloat(INFINITY); /* infinity itself is a float */
  assert_int_equal(flyrtKernelLaunchConfigFor(k, args, 3, &c), FLYRT_SUCCESS);
  args[1] = flyrtFloat(0.5);
  args[0] = flyrtInt((int64_t)1 << 40);
  assert_error(flyrtKernelLaunchConfigFor(k, args, 3, &c), FLYRT_ERROR_ARGUMENTS,
               "carried: argument 'n': 1099511627776 does not fit i32");
  args[0] = flyrtFloat(1.5);
  assert_error(flyrtKernelLaunchConfigFor(k, args, 3, &c), FLYRT_ERROR_ARGUMENTS,
               "argument 'n': the kernel takes i32, not a floating number (1.5)");
  args[0] = args[2];
  assert_error(flyrtKernelLaunchConfigFor(k, args, 3, &c), FLYRT_ERROR_ARGUMENTS,
               "argument 'n': the kernel takes a number (i32), not a tensor");
  flyrtModuleDestroy(m);
  free(v.data);

  /* A kernel without a launch block needs grid and block given. */
  static const char text[] = "kernel fill(out: tensor<f32>) { out[thread_idx.x].store(1.0); }\n";
  FlycCompileOptions o = flycCompileOptionsCreate();
  flycCompileOptionsAdd(o, "--target=sm_90");
  FlycCompileResult r = flycCompile("fill.fly", text, strlen(text), o);
  flycCompileOptionsDestroy(o);
  assert_true(flycCompileResultSucceeded(r));
  Bytes f;
  const void *data = flycCompileResultData(r, &f.size);
  f.data = (unsigned char *)data;
  m = module_of(f, "sm_90");
  flycCompileResultDestroy(r);
  k = kernel_of(m, "fill", NULL);
  assert_false(flyrtKernelHasLaunchRule(k));
  FlyrtArg out = flyrtTensor1D(fake(0x1000), FLYRT_F32, 64);
  assert_error(flyrtKernelLaunchConfigFor(k, &out, 1, &c), FLYRT_ERROR_LAUNCH_RULE,
               "fill: the kernel has no launch block: give grid and block explicitly");
  FlyrtLaunchConfig given = {{1, 1, 1}, {64, 1, 1}, 0};
  assert_error(flyrtKernelLaunch(k, &out, 1, NULL, &given), FLYRT_ERROR_NO_DEVICE, "fill");
  flyrtModuleDestroy(m);
}

/* ---- threads ---- */

typedef struct Work {
  FlyrtModule m;
  int id;
  int failures;
} Work;

/* Lookups, checks and failures in a loop: each thread's message stays its
   own, and shared objects are only read. */
static void *worker(void *arg) {
  Work *w = arg;
  char want[64];
  snprintf(want, sizeof want, "no kernel 'k%d'", w->id);
  for (int i = 0; i < 2000; i++) {
    FlyrtKernel k;
    FlyrtLaunchConfig c;
    int64_t n = 1024 * (w->id + 1 + i % 5);
    FlyrtArg args[3] = {flyrtTensor1D(fake(0x1000), FLYRT_F32, n),
                        flyrtTensor1D(fake(0x2000), FLYRT_F32, n),
                        flyrtTensor1D(fake(0x3000), FLYRT_F32, n)};
    char name[16];
    snprintf(name, sizeof name, "k%d", w->id);
    w->failures += flyrtModuleGetKernel(w->m, "vector_add", NULL, &k) != FLYRT_SUCCESS;
    w->failures += flyrtKernelLaunchConfigFor(k, args, 3, &c) != FLYRT_SUCCESS;
    w->failures += c.grid[0] != (uint32_t)(n / 1024);
    w->failures += flyrtModuleGetKernel(w->m, name, NULL, &k) != FLYRT_ERROR_NOT_FOUND;
    w->failures += strstr(flyrtLastError(), want) == NULL;
  }
  return NULL;
}

static void concurrent_use(void **state) {
  (void)state;
  Bytes v = compile("examples/01-vector-add.fly", sm90);
  FlyrtModule m = module_of(v, "sm_90");
  enum { N = 8 };
  pthread_t t[N];
  Work w[N];
  for (int i = 0; i < N; i++) {
    w[i] = (Work){m, i, 0};
    assert_int_equal(pthread_create(&t[i], NULL, worker, &w[i]), 0);
  }
  for (int i = 0; i < N; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(w[i].failures, 0);
  }
  flyrtModuleDestroy(m);
  free(v.data);
}

/* ---- without a driver ---- */

static void no_driver(void **state) {
  (void)state;
  int n = -1;
  FlyrtStatus s = flyrtDeviceCount(&n);
  if (s == FLYRT_SUCCESS && n > 0)
    skip(); /* a GPU machine: tests/gpu covers it */
  FlyrtDevice d;
  s = flyrtDeviceCreate(0, &d);
  assert_true(s == FLYRT_ERROR_NO_DRIVER || s == FLYRT_ERROR_NO_DEVICE);
  assert_null(d.ptr);
  if (s == FLYRT_ERROR_NO_DRIVER)
    assert_non_null(strstr(flyrtLastError(), "no GPU driver: libcuda.so.1 could not be loaded"));
  setenv("FLYRT_BACKEND", "opencl", 1);
  assert_error(flyrtDeviceCreate(0, &d), FLYRT_ERROR_INVALID_VALUE,
               "FLYRT_BACKEND is 'opencl': it takes 'cuda' or 'hip'");
  unsetenv("FLYRT_BACKEND");
  void *p;
  assert_error(flyrtMalloc((FlyrtDevice){NULL}, 16, &p), FLYRT_ERROR_INVALID_VALUE,
               "flyrtMalloc: null device");
  FlyrtEvent e;
  assert_error(flyrtEventCreate((FlyrtDevice){NULL}, &e), FLYRT_ERROR_INVALID_VALUE, "null device");
  float ms;
  assert_error(flyrtEventElapsed((FlyrtEvent){NULL}, (FlyrtEvent){NULL}, &ms),
               FLYRT_ERROR_INVALID_VALUE, "null event");
  flyrtDeviceDestroy((FlyrtDevice){NULL});
  flyrtEventDestroy((FlyrtEvent){NULL});
}

static void half_floats(void **state) {
  (void)state;
  /* Every f16 survives the way to float and back (NaNs stay NaNs). */
  for (uint32_t h = 0; h < 0x10000; h++) {
    float f = flyrtF16ToF32((uint16_t)h);
    if (isnan(f))
      assert_true((h & 0x7c00) == 0x7c00 && (h & 0x3ff));
    else
      assert_int_equal(flyrtF32ToF16(f), h);
  }
  assert_int_equal(flyrtF32ToF16(1.0f), 0x3c00);
  assert_int_equal(flyrtF32ToF16(0.1f), 0x2e66);
  assert_int_equal(flyrtF32ToF16(65504.0f), 0x7bff);
  assert_int_equal(flyrtF32ToF16(65520.0f), 0x7c00); /* rounds up to infinity */
  assert_int_equal(flyrtF32ToF16(0x1p-24f), 0x0001);
  assert_int_equal(flyrtF32ToF16(0x1p-26f), 0x0000); /* below half the least: zero */
  assert_int_equal(flyrtF32ToF16(-2.0f), 0xc000);
  assert_int_equal(flyrtF32ToF16(1.0f + 0x1p-11f), 0x3c00); /* a tie, to even */
  assert_int_equal(flyrtF32ToF16(1.0f + 0x1p-10f + 0x1p-11f), 0x3c02);
  assert_true(isnan(flyrtF16ToF32(flyrtF32ToF16(NAN))));
  assert_int_equal(flyrtF32ToBF16(1.0f), 0x3f80);
  assert_int_equal(flyrtF32ToBF16(1.0f + 0x1p-8f), 0x3f80); /* a tie, to even */
  assert_int_equal(flyrtF32ToBF16(1.0f + 0x1p-7f + 0x1p-8f), 0x3f82);
  assert_true(flyrtBF16ToF32(0xc040) == -3.0f);
  assert_true(isnan(flyrtBF16ToF32(flyrtF32ToBF16(NAN))));
}

static void names(void **state) {
  (void)state;
  assert_string_equal(flyrtVersion(), "0.1.0");
  assert_int_equal(flyrtBundleFormatVersion(), 1);
  assert_string_equal(flyrtStatusName(FLYRT_ERROR_NO_IMAGE), "FLYRT_ERROR_NO_IMAGE");
  assert_string_equal(flyrtStatusName((FlyrtStatus)99), "FLYRT_ERROR_UNKNOWN");
  assert_string_equal(flyrtDtypeName(FLYRT_BF16), "bf16");
  assert_int_equal(flyrtDtypeSize(FLYRT_BF16), 2);
  assert_int_equal(flyrtDtypeSize(FLYRT_F64), 8);
  assert_int_equal(flyrtDtypeSize(FLYRT_DTYPE_OTHER), 0);
  /* The FNUZ formats come after OTHER, which keeps its number. */
  assert_int_equal(FLYRT_DTYPE_OTHER, 12);
  assert_string_equal(flyrtDtypeName(FLYRT_F8E4M3FNUZ), "f8e4m3fnuz");
  assert_string_equal(flyrtDtypeName(FLYRT_F8E5M2FNUZ), "f8e5m2fnuz");
  assert_int_equal(flyrtDtypeSize(FLYRT_F8E5M2FNUZ), 1);
  assert_string_equal(flyrtDtypeName((FlyrtDtype)42), "unknown");
}

/* ---- tensor maps ---- */

/* What a launch of a kernel with tensor maps refuses before the driver is
   needed: tensors TMA cannot map, each named. */
static void tensor_map_refusals(void **state) {
  (void)state;
  Bytes v = compile("tests/cli/compile/golden/tma.fly", sm90);
  FlyrtModule m = module_of(v, "sm_90");
  FlyrtKernel k = kernel_of(m, "tile_store", NULL);
  FlyrtArg args[2] = {flyrtTensor2D(fake(0x10000), FLYRT_F32, 37, 52, 52),
                      flyrtTensor2D(fake(0x20000), FLYRT_F32, 37, 52, 52)};
  FlyrtLaunchConfig c;
  assert_int_equal(flyrtKernelLaunchConfigFor(k, args, 2, &c), FLYRT_SUCCESS);
  assert_int_equal(c.grid[0], 2);
  assert_int_equal(c.grid[1], 3);
  args[1].u.tensor.data = fake(0x20004);
  assert_error(flyrtKernelLaunchConfigFor(k, args, 2, &c), FLYRT_ERROR_ARGUMENTS,
               "tile_store: argument 'B': TMA cannot map it: its address is not a multiple of 16 "
               "bytes (it is 4 past one)");
  args[1] = flyrtTensor2D(fake(0x20000), FLYRT_F32, 37, 52, 53);
  assert_error(flyrtKernelLaunchConfigFor(k, args, 2, &c), FLYRT_ERROR_ARGUMENTS,
               "argument 'B': TMA cannot map it: mode 0 has a stride of 212 bytes; TMA's strides "
               "are multiples of 16 bytes below 2^40");
  args[1] = flyrtTensor2D(fake(0x20000), FLYRT_F32, 37, 52, -52);
  assert_error(flyrtKernelLaunchConfigFor(k, args, 2, &c), FLYRT_ERROR_ARGUMENTS,
               "argument 'B': TMA cannot map it: mode 0 has a stride of -208 bytes");
  args[0] = flyrtTensor2D(fake(0x10000), FLYRT_F32, 0, 52, 52);
  args[1] = flyrtTensor2D(fake(0x20000), FLYRT_F32, 0, 52, 52);
  assert_error(flyrtKernelLaunchConfigFor(k, args, 2, &c), FLYRT_ERROR_ARGUMENTS,
               "argument 'A': TMA cannot map it: mode 0 has 0 elements; TMA maps 1 to 2^32");
  flyrtModuleDestroy(m);
  free(v.data);
}

/* The driver's arguments from a map and a tensor, and the box's rules
   (which the compiler checks too, and a bundle could break). */
static void tensor_map_encoding(void **state) {
  (void)state;
  Param param = {.info = {.name = "X"}};
  Kernel k = {.name = "k", .params = &param};
  FlyBundleTensorMap map = {.param = 0,
                            .arg = 3,
                            .dtype = FLY_DTYPE_BF16,
                            .rank = 3,
                            .dims = {2, 1, 0},
                            .box = {64, 8, 1},
                            .swizzle = 128,
                            .l2_promotion = 256};
  FlyrtTensor t = {.data = fake(0x40000),
                   .dtype = FLYRT_BF16,
                   .rank = 3,
                   .shape = {5, 100, 200},
                   .stride = {100 * 256, 256, 1}};
  FlyrtTmapEncode e;
  assert_int_equal(flyrt_tmap_prepare(&k, &map, &t, &e), FLYRT_SUCCESS);
  assert_int_equal(e.data_type, 9); /* BFLOAT16 */
  assert_int_equal(e.rank, 3);
  assert_ptr_equal(e.address, fake(0x40000));
  assert_int_equal(e.dims[0], 200);
  assert_int_equal(e.dims[1], 100);
  assert_int_equal(e.dims[2], 5);
  assert_int_equal(e.strides[0], 512);
  assert_int_equal(e.strides[1], 100 * 512);
  assert_int_equal(e.box[0], 64);
  assert_int_equal(e.box[2], 1);
  assert_int_equal(e.element_strides[1], 1);
  assert_int_equal(e.swizzle, 3);      /* 128B */
  assert_int_equal(e.l2_promotion, 3); /* 256B */
  assert_int_equal(e.interleave, 0);
  assert_int_equal(e.oob_fill, 0);
  map.box[0] = 128; /* 256 bytes: more than the swizzle */
  assert_error(flyrt_tmap_prepare(&k, &map, &t, &e), FLYRT_ERROR_ARGUMENTS,
               "k: argument 'X': TMA cannot map it: the box's innermost dimension is 256 bytes, "
               "more than its swizzle of 128");
  map.box[0] = 4; /* 8 bytes */
  assert_error(flyrt_tmap_prepare(&k, &map, &t, &e), FLYRT_ERROR_ARGUMENTS,
               "the box's innermost dimension is 8 bytes, not a multiple of 16");
  map.box[0] = 64;
  t.stride[2] = 2;
  assert_error(flyrt_tmap_prepare(&k, &map, &t, &e), FLYRT_ERROR_ARGUMENTS,
               "its innermost mode 2 has stride 2; TMA reads rows of stride 1");
  t.stride[2] = 1;
  t.rank = 2;
  assert_error(flyrt_tmap_prepare(&k, &map, &t, &e), FLYRT_ERROR_ARGUMENTS, "its map is malformed");
}

int main(void) {
  /* Compiles here go through a cache of their own. */
  char dir[] = "/tmp/fly-test-flyrt-cache-XXXXXX";
  if (!mkdtemp(dir))
    return 1;
  setenv("FLYC_CACHE_DIR", dir, 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bundle_from_file_and_memory),
      cmocka_unit_test(bundle_refused),
      cmocka_unit_test(module_for_target),
      cmocka_unit_test(image_choice),
      cmocka_unit_test(kernel_lookup),
      cmocka_unit_test(signature),
      cmocka_unit_test(layout_text),
      cmocka_unit_test(argument_checks),
      cmocka_unit_test(buffer_span_is_checked),
      cmocka_unit_test(scalars_and_overrides),
      cmocka_unit_test(concurrent_use),
      cmocka_unit_test(no_driver),
      cmocka_unit_test(half_floats),
      cmocka_unit_test(names),
      cmocka_unit_test(tensor_map_refusals),
      cmocka_unit_test(tensor_map_encoding),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0)
    return 1;
  return failed;
}
