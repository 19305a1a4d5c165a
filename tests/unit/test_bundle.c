/* test_bundle.c — the bundle format (fly_bundle.h): bundles written with
 * fly_bundle_write from hand-made kernel records read back field for field;
 * the checksum; every flipped byte, every truncation and every broken
 * reference refused with its message (references are broken and the
 * checksum recomputed, so that the checks behind the checksum run); newer,
 * larger records read by their prefix; merging; and the launch rule run
 * for given arguments, with its overflow and range errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_bundle.h"
#include "fly_bundle_write.h"

/* ---- kernel records ------------------------------------------------------ */

static FlyBundleOperand cst(int64_t v) { return (FlyBundleOperand){FLY_LAUNCH_CONST, 0, v}; }
static FlyBundleOperand scalar(uint32_t param) {
  return (FlyBundleOperand){FLY_LAUNCH_SCALAR, param, 0};
}
static FlyBundleOperand shape(uint32_t param, int64_t leaf) {
  return (FlyBundleOperand){FLY_LAUNCH_SHAPE, param, leaf};
}
static FlyBundleOperand stride(uint32_t param, int64_t leaf) {
  return (FlyBundleOperand){FLY_LAUNCH_STRIDE, param, leaf};
}
static FlyBundleOperand temp(uint32_t insn) { return (FlyBundleOperand){FLY_LAUNCH_TEMP, insn, 0}; }
static FlyBundleInsn insn(uint32_t op, FlyBundleOperand a, FlyBundleOperand b) {
  return (FlyBundleInsn){op, 0, a, b};
}

/* Grid, block and shared of a record: what a launch block that sets
   nothing gives, before a test sets its own. */
static void default_rule(FlyKernelInfo *k) {
  for (int i = 0; i < 6; i++)
    k->rule[i] = cst(1);
  k->rule[6] = cst(0);
}

/* kernel vector_add(A, B, C: tensor<f32, ?:1>, const BLOCK = 256)
     launch { grid = (size(A) + 1023) / 1024; block = 256; } */
static FlyParamInfo vector_add_params[] = {
    {"A", FLY_PARAM_TENSOR, FLY_DTYPE_F32, "f32", "?:1", 1, 0, 0, 16, 0, 0},
    {"B", FLY_PARAM_TENSOR, FLY_DTYPE_F32, "f32", "?:1", 1, 0, 2, 16, 0, 0},
    {"C", FLY_PARAM_TENSOR, FLY_DTYPE_F32, "f32", "?:1", 1, 0, 4, 16, 0, 0},
    {"BLOCK", FLY_PARAM_CONST, FLY_DTYPE_NONE, "int", "256", 0, 0, UINT32_MAX, 0, 0, 0},
};
static FlyBundleInsn vector_add_code[2];

static FlyKernelInfo vector_add(const char *target) {
  vector_add_code[0] = insn(FLY_LAUNCH_ADD, shape(0, 0), cst(1023));
  vector_add_code[1] = insn(FLY_LAUNCH_DIV, temp(0), cst(1024));
  FlyKernelInfo k = {0};
  k.name = "vector_add";
  k.spec = "BLOCK=256";
  k.target = (char *)target;
  k.nparams = 4;
  k.params = vector_add_params;
  k.nargs = 6;
  k.has_launch = true;
  k.ninsns = 2;
  k.code = vector_add_code;
  default_rule(&k);
  k.rule[0] = temp(1);
  k.rule[3] = cst(256);
  return k;
}

/* kernel scale(X: tensor<f16, (?,?):(?,1)>, n: i64, alpha: f32)
     grid = X.shape[0] * X.shape[1] / n, block = (64, 2),
     shared = X.stride[0] * 4 */
static FlyParamInfo scale_params[] = {
    {"X", FLY_PARAM_TENSOR, FLY_DTYPE_F16, "f16", "(?,?):(?,1)", 2, 1, 0, 8, 8, 2147483648u},
    {"n", FLY_PARAM_SCALAR, FLY_DTYPE_I64, "i64", "", 0, 0, 4, 0, 0, 0},
    {"alpha", FLY_PARAM_SCALAR, FLY_DTYPE_F32, "f32", "", 0, 0, 5, 0, 0, 0},
};
static FlyBundleInsn scale_code[3];

static FlyKernelInfo scale(void) {
  scale_code[0] = insn(FLY_LAUNCH_MUL, shape(0, 0), shape(0, 1));
  scale_code[1] = insn(FLY_LAUNCH_DIV, temp(0), scalar(1));
  scale_code[2] = insn(FLY_LAUNCH_MUL, stride(0, 0), cst(4));
  FlyKernelInfo k = {0};
  k.name = "scale";
  k.spec = "";
  k.target = "gfx942";
  k.nparams = 3;
  k.params = scale_params;
  k.nargs = 6;
  k.has_launch = true;
  k.ninsns = 3;
  k.code = scale_code;
  default_rule(&k);
  k.rule[0] = temp(1);
  k.rule[3] = cst(64);
  k.rule[4] = cst(2);
  k.rule[6] = temp(2);
  return k;
}

/* kernel copy(src, dst: tensor<i8, 16:1>), without a launch block. */
static FlyParamInfo copy_params[] = {
    {"src", FLY_PARAM_TENSOR, FLY_DTYPE_I8, "i8", "16:1", 0, 0, 0, 1, 0, 0},
    {"dst", FLY_PARAM_TENSOR, FLY_DTYPE_I8, "i8", "16:1", 0, 0, 1, 1, 0, 0},
};

static FlyKernelInfo copy(void) {
  FlyKernelInfo k = {0};
  k.name = "copy";
  k.spec = "";
  k.target = "gfx942";
  k.nparams = 2;
  k.params = copy_params;
  k.nargs = 2;
  default_rule(&k);
  return k;
}

static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                          ".visible .entry vector_add() { ret; }\n";
/* An odd size, so that the image after it needs padding to stay aligned. */
static const unsigned char hsaco[41] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0x40, 3, 0, 0, 0, 0, 0, 0};

static const char source_hash[] =
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

/* The finished bundle of writer w (released), or a failed test. */
static unsigned char *finish(FlyBundleWriter *w, size_t *size) {
  unsigned char *p = fly_bundle_writer_finish(w, "flyc 0.1.0", "LLVM 22.1.0", source_hash, size);
  fly_bundle_writer_release(w);
  if (!p)
    fail_msg("fly_bundle_writer_finish failed");
  return p;
}

/* The bundle most tests use. Kernels: 0 vector_add on sm_90 (image 0,
   params 0-3, code 0-1), 1 vector_add on gfx942 (image 1, params 4-7, code
   2-3), 2 scale (image 1, params 8-10, code 4-6), 3 copy (image 1, params
   11-12). Images: 0 PTX for sm_90, 1 HSACO for gfx942. */
static unsigned char *two_targets(size_t *size) {
  FlyBundleWriter w;
  fly_bundle_writer_init(&w);
  uint32_t nv = fly_bundle_writer_image(&w, "sm_90", FLY_IMAGE_PTX, ptx, sizeof ptx);
  uint32_t amd = fly_bundle_writer_image(&w, "gfx942", FLY_IMAGE_HSACO, hsaco, sizeof hsaco);
  FlyKernelInfo k = vector_add("sm_90");
  fly_bundle_writer_kernel(&w, &k, nv, "vector_add");
  k = vector_add("gfx942");
  fly_bundle_writer_kernel(&w, &k, amd, "vector_add_gfx942");
  k = scale();
  fly_bundle_writer_kernel(&w, &k, amd, "scale");
  k = copy();
  fly_bundle_writer_kernel(&w, &k, amd, "copy");
  return finish(&w, size);
}

/* A bundle of one kernel on one target, as one compilation writes it. */
static unsigned char *one_target(bool amd, size_t *size) {
  FlyBundleWriter w;
  fly_bundle_writer_init(&w);
  FlyKernelInfo k;
  if (amd) {
    uint32_t im = fly_bundle_writer_image(&w, "gfx942", FLY_IMAGE_HSACO, hsaco, sizeof hsaco);
    k = vector_add("gfx942");
    fly_bundle_writer_kernel(&w, &k, im, "vector_add_gfx942");
    k = scale();
    fly_bundle_writer_kernel(&w, &k, im, "scale");
  } else {
    uint32_t im = fly_bundle_writer_image(&w, "sm_90", FLY_IMAGE_PTX, ptx, sizeof ptx);
    k = vector_add("sm_90");
    fly_bundle_writer_kernel(&w, &k, im, "vector_add");
  }
  return finish(&w, size);
}

static FlyBundle open_ok(const unsigned char *p, size_t size) {
  FlyBundle b;
  char why[256] = "";
  if (!fly_bundle_open(&b, p, size, why, sizeof why))
    fail_msg("fly_bundle_open: %s", why);
  return b;
}

/* The bundle is refused with a message containing want. */
static void assert_refused(const unsigned char *p, size_t size, const char *want) {
  FlyBundle b;
  char why[256] = "";
  if (fly_bundle_open(&b, p, size, why, sizeof why))
    fail_msg("accepted; want \"%s\"", want);
  if (!strstr(why, want))
    fail_msg("want \"%s\" in \"%s\"", want, why);
}

/* ---- reading back -------------------------------------------------------- */

static void assert_operand_equal(FlyBundleOperand got, FlyBundleOperand want) {
  assert_int_equal(got.kind, want.kind);
  assert_int_equal(got.index, want.index);
  assert_int_equal(got.value, want.value);
}

/* Kernel record r of b is info, found in image `image` under `symbol`. */
static void assert_kernel(const FlyBundle *b, uint32_t r, const FlyKernelInfo *info, uint32_t image,
                          const char *symbol) {
  FlyBundleKernel k = fly_bundle_kernel(b, r);
  assert_string_equal(fly_bundle_string(b, k.name), info->name);
  assert_string_equal(fly_bundle_string(b, k.spec), info->spec);
  assert_string_equal(fly_bundle_string(b, k.target), info->target);
  assert_string_equal(fly_bundle_string(b, k.symbol), symbol);
  assert_int_equal(k.image, image);
  assert_int_equal(k.flags, info->has_launch ? FLY_BUNDLE_KERNEL_HAS_LAUNCH : 0);
  assert_int_equal(k.nparams, info->nparams);
  assert_int_equal(k.nargs, info->nargs);
  assert_int_equal(k.ninsns, info->has_launch ? info->ninsns : 0);
  assert_int_equal(k.static_shared, info->static_shared);
  for (int i = 0; i < info->nparams; i++) {
    const FlyParamInfo *want = &info->params[i];
    FlyBundleParam p = fly_bundle_param(b, k.first_param + (uint32_t)i);
    assert_string_equal(fly_bundle_string(b, p.name), want->name);
    assert_int_equal(p.kind, want->kind);
    assert_int_equal(p.dtype, want->dtype);
    assert_string_equal(fly_bundle_string(b, p.type), want->type);
    assert_string_equal(fly_bundle_string(b, p.layout), want->layout);
    assert_int_equal(p.dyn_shape, want->dyn_shape);
    assert_int_equal(p.dyn_stride, want->dyn_stride);
    assert_int_equal(p.first_arg, want->first_arg);
    assert_int_equal(p.align, want->align);
    assert_int_equal(p.stride_align, want->stride_align);
    assert_int_equal(p.max_span, want->max_span);
    assert_int_equal(p.reserved, 0);
  }
  for (uint32_t i = 0; i < k.ninsns; i++) {
    FlyBundleInsn in = fly_bundle_insn(b, k.first_insn + i);
    assert_int_equal(in.op, info->code[i].op);
    assert_int_equal(in.where, 0);
    assert_operand_equal(in.a, info->code[i].a);
    assert_operand_equal(in.b, info->code[i].b);
  }
  const FlyBundleOperand rule[7] = {k.grid[0],  k.grid[1],  k.grid[2], k.block[0],
                                    k.block[1], k.block[2], k.shared};
  for (int i = 0; i < 7; i++)
    assert_operand_equal(rule[i], info->rule[i]);
}

/* Image i of b: its target, kind and bytes, 16-aligned in the file. */
static void assert_image(const FlyBundle *b, uint32_t i, const char *target, uint32_t kind,
                         const void *bytes, size_t size) {
  FlyBundleImage im = fly_bundle_image(b, i);
  assert_string_equal(fly_bundle_string(b, im.target), target);
  assert_int_equal(im.kind, kind);
  assert_int_equal(im.size, size);
  assert_int_equal(im.offset % 16, 0);
  const unsigned char *at = fly_bundle_image_bytes(b, &im);
  assert_int_equal((size_t)(at - b->base) % 16, 0);
  assert_memory_equal(at, bytes, size);
}

static void round_trip(void **state) {
  (void)state;
  size_t size;
  unsigned char *p = two_targets(&size);
  FlyBundle b = open_ok(p, size);
  const FlyBundleHeader *h = &b.header;
  assert_memory_equal(h->magic, "FLYBNDL\n", 8);
  assert_int_equal(h->version, 1);
  assert_int_equal(h->header_size, 160);
  assert_int_equal(h->file_size, size);
  assert_int_equal(h->flags, 0);
  assert_int_equal(h->reserved, 0);
  assert_string_equal(fly_bundle_string(&b, h->compiler), "flyc 0.1.0");
  assert_string_equal(fly_bundle_string(&b, h->toolchain), "LLVM 22.1.0");
  assert_string_equal(fly_bundle_string(&b, h->source_hash), source_hash);
  static const uint32_t record_size[FLY_BUNDLE_NTABLES] = {184, 48, 40, 24, 72};
  for (int t = 0; t < FLY_BUNDLE_NTABLES; t++) {
    assert_int_equal(h->tables[t].offset % 8, 0);
    assert_int_equal(h->tables[t].record_size, record_size[t]);
  }
  assert_int_equal(h->data % 16, 0);
  assert_int_equal(b.nkernels, 4);
  assert_int_equal(b.nparams, 4 + 4 + 3 + 2);
  assert_int_equal(b.ninsns, 2 + 2 + 3);
  assert_int_equal(b.nimages, 2);

  FlyKernelInfo k = vector_add("sm_90");
  assert_kernel(&b, 0, &k, 0, "vector_add");
  k = vector_add("gfx942");
  assert_kernel(&b, 1, &k, 1, "vector_add_gfx942");
  k = scale();
  assert_kernel(&b, 2, &k, 1, "scale");
  k = copy();
  assert_kernel(&b, 3, &k, 1, "copy");
  assert_image(&b, 0, "sm_90", FLY_IMAGE_PTX, ptx, sizeof ptx);
  assert_image(&b, 1, "gfx942", FLY_IMAGE_HSACO, hsaco, sizeof hsaco);
  free(p);
}

/* Nothing to hold is still a valid bundle. */
static void empty_bundle(void **state) {
  (void)state;
  FlyBundleWriter w;
  fly_bundle_writer_init(&w);
  size_t size;
  unsigned char *p = finish(&w, &size);
  FlyBundle b = open_ok(p, size);
  assert_int_equal(b.nkernels + b.nparams + b.ninsns + b.nimages, 0);
  assert_string_equal(fly_bundle_string(&b, b.header.compiler), "flyc 0.1.0");
  free(p);
}

/* ---- the checksum -------------------------------------------------------- */

static void crc32_known_values(void **state) {
  (void)state;
  assert_int_equal(fly_crc32(0, "123456789", 9), 0xCBF43926u);
  assert_int_equal(fly_crc32(0, "", 0), 0);
  assert_int_equal(fly_crc32(0, "The quick brown fox jumps over the lazy dog", 43), 0x414FA339u);
  /* Continued from an earlier value, as zlib's crc32 is. */
  assert_int_equal(fly_crc32(fly_crc32(0, "1234", 4), "56789", 5), 0xCBF43926u);
}

enum { CHECKSUM_AT = offsetof(FlyBundleHeader, checksum) };

/* The checksum of the bundle at p, with its own four bytes read as zero. */
static uint32_t checksum_of(const unsigned char *p, size_t size) {
  static const unsigned char zero[4];
  uint32_t crc = fly_crc32(0, p, CHECKSUM_AT);
  crc = fly_crc32(crc, zero, 4);
  return fly_crc32(crc, p + CHECKSUM_AT + 4, size - CHECKSUM_AT - 4);
}

/* Writes the checksum after a patch, so that the checks behind it run. */
static void reseal(unsigned char *p, size_t size) {
  uint32_t crc = checksum_of(p, size);
  memcpy(p + CHECKSUM_AT, &crc, 4);
}

static void checksum_covers_the_whole_file(void **state) {
  (void)state;
  size_t size;
  unsigned char *p = two_targets(&size);
  uint32_t stored;
  memcpy(&stored, p + CHECKSUM_AT, 4);
  assert_int_equal(checksum_of(p, size), stored);
  memset(p + CHECKSUM_AT, 0, 4);
  assert_int_equal(fly_crc32(0, p, size), stored);
  free(p);
}

/* CRC-32 catches every error within 32 bits, so no changed byte passes. */
static void every_byte_flip_is_refused(void **state) {
  (void)state;
  size_t size;
  unsigned char *p = two_targets(&size);
  static const unsigned char masks[] = {0x01, 0x80, 0xFF};
  for (size_t i = 0; i < size; i++)
    for (size_t m = 0; m < sizeof masks; m++) {
      FlyBundle b;
      char why[256] = "";
      p[i] ^= masks[m];
      if (fly_bundle_open(&b, p, size, why, sizeof why))
        fail_msg("byte %zu flipped by 0x%02x: accepted", i, masks[m]);
      if (why[0] == '\0')
        fail_msg("byte %zu flipped by 0x%02x: refused without a message", i, masks[m]);
      p[i] ^= masks[m];
    }
  open_ok(p, size);
  free(p);
}

static void every_truncation_is_refused(void **state) {
  (void)state;
  size_t size;
  unsigned char *p = two_targets(&size);
  for (size_t n = 0; n < size; n++) {
    /* A copy of just n bytes, so that the sanitizers see any read past. */
    unsigned char *cut = malloc(n ? n : 1);
    assert_non_null(cut);
    memcpy(cut, p, n);
    assert_refused(cut, n, n < 8 ? "not a Fly bundle" : "truncated bundle");
    free(cut);
  }
  unsigned char *longer = calloc(1, size + 1);
  assert_non_null(longer);
  memcpy(longer, p, size);
  assert_refused(longer, size + 1, "bytes after its end");
  free(longer);
  free(p);
}

static void header_errors(void **state) {
  (void)state;
  size_t size;
  unsigned char *p = two_targets(&size);
  char why[256] = "";
  FlyBundle b;
  assert_false(fly_bundle_open(&b, NULL, 0, why, sizeof why));
  assert_non_null(strstr(why, "null pointer"));

  p[0] = 'G';
  assert_refused(p, size, "not a Fly bundle");
  p[0] = 'F';
  p[7] = '\r';
  assert_refused(p, size, "not a Fly bundle");
  p[7] = '\n';

  uint32_t v = 2;
  memcpy(p + offsetof(FlyBundleHeader, version), &v, 4);
  assert_refused(p, size, "format version 2, and this reader reads version 1");
  v = 1;
  memcpy(p + offsetof(FlyBundleHeader, version), &v, 4);

  v = 100;
  memcpy(p + offsetof(FlyBundleHeader, header_size), &v, 4);
  reseal(p, size);
  assert_refused(p, size, "the header is 100 bytes");
  v = (uint32_t)size + 1;
  memcpy(p + offsetof(FlyBundleHeader, header_size), &v, 4);
  reseal(p, size);
  assert_refused(p, size, "truncated bundle");
  v = 144;
  memcpy(p + offsetof(FlyBundleHeader, header_size), &v, 4);

  uint64_t file_size = size + 1;
  memcpy(p + offsetof(FlyBundleHeader, file_size), &file_size, 8);
  assert_refused(p, size, "truncated bundle: it says");
  file_size = size - 1;
  memcpy(p + offsetof(FlyBundleHeader, file_size), &file_size, 8);
  assert_refused(p, size, "bytes after its end");
  free(p);
}

/* ---- broken references, behind a valid checksum ---------------------------- */

enum { HEADER = -1, STRINGS = -2, DATA = -3 };
#define PAST ((uint64_t)1 << 31) /* past any string */
#define FAR ((uint64_t)1 << 40)  /* past the end of any test bundle */
#define OPERAND(rec, op, field) (offsetof(rec, op) + offsetof(FlyBundleOperand, field))
#define TABLE(t, field)                                                                            \
  (offsetof(FlyBundleHeader, tables) + (t) * sizeof(FlyBundleTable) +                              \
   offsetof(FlyBundleTable, field))

/* Sets a field of a record of the two_targets bundle: `width` bytes at
   `at` within record `record` of table `table` (or of the header, or
   bytes `at` of the string or data area). */
typedef struct Patch {
  int table;
  uint32_t record;
  size_t at;
  int width;
  uint64_t value;
  const char *want;
} Patch;

static const Patch patches[] = {
    /* The header. */
    {HEADER, 0, offsetof(FlyBundleHeader, flags), 4, 1, "reserved header fields are set"},
    {HEADER, 0, offsetof(FlyBundleHeader, reserved), 4, 1, "reserved header fields are set"},
    {HEADER, 0, offsetof(FlyBundleHeader, strings_size), 8, 0,
     "the string area is out of range or unterminated"},
    {HEADER, 0, offsetof(FlyBundleHeader, strings), 8, FAR, "the string area is out of range"},
    {HEADER, 0, offsetof(FlyBundleHeader, strings_size), 8, UINT64_MAX,
     "the string area is out of range"},
    {HEADER, 0, offsetof(FlyBundleHeader, data), 8, FAR, "the data area is out of range"},
    {HEADER, 0, offsetof(FlyBundleHeader, data), 8, 8,
     "the data area is out of range or misaligned"},
    {HEADER, 0, offsetof(FlyBundleHeader, data_size), 8, UINT64_MAX,
     "the data area is out of range"},
    {HEADER, 0, TABLE(FLY_BUNDLE_T_KERNELS, record_size), 4, 100,
     "the kernel table is out of range"},
    {HEADER, 0, TABLE(FLY_BUNDLE_T_PARAMS, offset), 8, 4, "the parameter table is out of range"},
    {HEADER, 0, TABLE(FLY_BUNDLE_T_CODE, count), 4, 1 << 30,
     "the instruction table is out of range"},
    {HEADER, 0, TABLE(FLY_BUNDLE_T_IMAGES, offset), 8, FAR, "the image table is out of range"},
    {HEADER, 0, TABLE(FLY_BUNDLE_T_IMAGES, record_size), 4, UINT32_MAX,
     "the image table is out of range"},
    {HEADER, 0, offsetof(FlyBundleHeader, compiler), 4, PAST,
     "the compiler's name refers past the string area"},
    {HEADER, 0, offsetof(FlyBundleHeader, toolchain), 4, PAST, "the toolchain version refers past"},
    {HEADER, 0, offsetof(FlyBundleHeader, source_hash), 4, PAST, "the source hash refers past"},
    /* The areas. */
    {DATA, 0, sizeof ptx - 1, 1, 'x', "a PTX image does not end with a NUL"},
    /* Images. */
    {FLY_BUNDLE_T_IMAGES, 0, offsetof(FlyBundleImage, target), 4, PAST,
     "an image's target refers past the string area"},
    {FLY_BUNDLE_T_IMAGES, 1, offsetof(FlyBundleImage, kind), 4, 0, "an image is of unknown kind 0"},
    {FLY_BUNDLE_T_IMAGES, 1, offsetof(FlyBundleImage, kind), 4, 4, "an image is of unknown kind 4"},
    {FLY_BUNDLE_T_IMAGES, 1, offsetof(FlyBundleImage, offset), 8, 8,
     "an image lies outside the data area"},
    {FLY_BUNDLE_T_IMAGES, 1, offsetof(FlyBundleImage, size), 8, FAR,
     "an image lies outside the data area"},
    {FLY_BUNDLE_T_IMAGES, 1, offsetof(FlyBundleImage, offset), 8, UINT64_MAX - 15,
     "an image lies outside the data area"},
    {FLY_BUNDLE_T_IMAGES, 0, offsetof(FlyBundleImage, size), 8, 0,
     "a PTX image does not end with a NUL"},
    {FLY_BUNDLE_T_IMAGES, 0, offsetof(FlyBundleImage, size), 8, 5,
     "a PTX image does not end with a NUL"},
    /* Kernels. */
    {FLY_BUNDLE_T_KERNELS, 0, offsetof(FlyBundleKernel, name), 4, PAST,
     "a kernel's name refers past the string area"},
    {FLY_BUNDLE_T_KERNELS, 0, offsetof(FlyBundleKernel, spec), 4, PAST,
     "a kernel's specialisation refers past"},
    {FLY_BUNDLE_T_KERNELS, 0, offsetof(FlyBundleKernel, target), 4, PAST,
     "a kernel's target refers past"},
    {FLY_BUNDLE_T_KERNELS, 0, offsetof(FlyBundleKernel, symbol), 4, PAST,
     "a kernel's symbol refers past"},
    {FLY_BUNDLE_T_KERNELS, 0, offsetof(FlyBundleKernel, image), 4, 5,
     "kernel 'vector_add' names image 5 of 2"},
    {FLY_BUNDLE_T_KERNELS, 0, offsetof(FlyBundleKernel, flags), 4, 5,
     "kernel 'vector_add' has unknown flags 0x5"},
    {FLY_BUNDLE_T_KERNELS, 0, offsetof(FlyBundleKernel, ntmaps), 4, 1,
     "kernel 'vector_add' has tensor maps but not the flag"},
    {FLY_BUNDLE_T_KERNELS, 0, offsetof(FlyBundleKernel, first_tmap), 4, 1,
     "the tensor maps of kernel 'vector_add' are out of range"},
    {FLY_BUNDLE_T_KERNELS, 0, offsetof(FlyBundleKernel, cluster) + 4, 4, 3,
     "kernel 'vector_add' has a cluster of 0 x 3 x 0 blocks (1 to 8 in all)"},
    {FLY_BUNDLE_T_KERNELS, 0, offsetof(FlyBundleKernel, nparams), 4, 100,
     "the parameters of kernel 'vector_add' are out of range"},
    {FLY_BUNDLE_T_KERNELS, 0, offsetof(FlyBundleKernel, first_param), 4, UINT32_MAX,
     "the parameters of kernel 'vector_add' are out of range"},
    {FLY_BUNDLE_T_KERNELS, 0, offsetof(FlyBundleKernel, ninsns), 4, 100,
     "the launch program of kernel 'vector_add' is out of range"},
    {FLY_BUNDLE_T_KERNELS, 2, offsetof(FlyBundleKernel, first_insn), 4, 5,
     "the launch program of kernel 'scale' is out of range"},
    {FLY_BUNDLE_T_KERNELS, 0, offsetof(FlyBundleKernel, nargs), 4, 5,
     "the arguments of parameter 'C' are out of range"},
    {FLY_BUNDLE_T_KERNELS, 0, OPERAND(FlyBundleKernel, grid, kind), 4, 9,
     "the launch rule of kernel 'vector_add' has an operand of unknown kind 9"},
    {FLY_BUNDLE_T_KERNELS, 0, OPERAND(FlyBundleKernel, grid, index), 4, 2,
     "the launch rule of kernel 'vector_add' uses an instruction that does not come before it"},
    {FLY_BUNDLE_T_KERNELS, 0, OPERAND(FlyBundleKernel, block, kind), 4, FLY_LAUNCH_SCALAR,
     "the launch rule of kernel 'vector_add' reads a value parameter 'A' does not have"},
    {FLY_BUNDLE_T_KERNELS, 0, OPERAND(FlyBundleKernel, shared, kind), 4, FLY_LAUNCH_STRIDE,
     "reads a value parameter 'A' does not have"},
    {FLY_BUNDLE_T_KERNELS, 2, OPERAND(FlyBundleKernel, shared, kind), 4, FLY_LAUNCH_SHAPE,
     "the launch rule of kernel 'scale' reads a value parameter 'alpha' does not have"},
    {FLY_BUNDLE_T_KERNELS, 2, OPERAND(FlyBundleKernel, shared, index), 4, 7,
     "the launch rule of kernel 'scale' uses an instruction that does not come before it"},
    /* Parameters. */
    {FLY_BUNDLE_T_PARAMS, 0, offsetof(FlyBundleParam, name), 4, PAST,
     "a parameter's name refers past the string area"},
    {FLY_BUNDLE_T_PARAMS, 0, offsetof(FlyBundleParam, type), 4, PAST,
     "a parameter's type refers past"},
    {FLY_BUNDLE_T_PARAMS, 0, offsetof(FlyBundleParam, layout), 4, PAST,
     "a parameter's layout refers past"},
    {FLY_BUNDLE_T_PARAMS, 0, offsetof(FlyBundleParam, kind), 4, 0,
     "parameter 'A' is of unknown kind 0"},
    {FLY_BUNDLE_T_PARAMS, 3, offsetof(FlyBundleParam, kind), 4, 4,
     "parameter 'BLOCK' is of unknown kind 4"},
    {FLY_BUNDLE_T_PARAMS, 0, offsetof(FlyBundleParam, dtype), 4, 15,
     "parameter 'A' has unknown type 15"},
    {FLY_BUNDLE_T_PARAMS, 2, offsetof(FlyBundleParam, first_arg), 4, 5,
     "the arguments of parameter 'C' are out of range"},
    {FLY_BUNDLE_T_PARAMS, 0, offsetof(FlyBundleParam, dyn_stride), 4, UINT32_MAX,
     "the arguments of parameter 'A' are out of range"},
    {FLY_BUNDLE_T_PARAMS, 9, offsetof(FlyBundleParam, first_arg), 4, UINT32_MAX,
     "the arguments of parameter 'n' are out of range"},
    /* A scalar turned tensor has no `?` leaves for the program's SCALAR. */
    {FLY_BUNDLE_T_PARAMS, 9, offsetof(FlyBundleParam, kind), 4, FLY_PARAM_TENSOR,
     "kernel 'scale' reads a value parameter 'n' does not have"},
    /* Instructions. */
    {FLY_BUNDLE_T_CODE, 0, offsetof(FlyBundleInsn, op), 4, 0,
     "the launch program of kernel 'vector_add' has an instruction of unknown kind 0"},
    {FLY_BUNDLE_T_CODE, 1, offsetof(FlyBundleInsn, op), 4, FLY_LAUNCH_NOPS,
     "has an instruction of unknown kind 20"},
    {FLY_BUNDLE_T_CODE, 0, OPERAND(FlyBundleInsn, a, kind), 4, FLY_LAUNCH_TEMP,
     "the launch program of kernel 'vector_add' uses an instruction that does not come before it"},
    {FLY_BUNDLE_T_CODE, 1, OPERAND(FlyBundleInsn, a, index), 4, 1,
     "uses an instruction that does not come before it"},
    {FLY_BUNDLE_T_CODE, 0, OPERAND(FlyBundleInsn, a, value), 8, 1,
     "the launch program of kernel 'vector_add' reads a value parameter 'A' does not have"},
    {FLY_BUNDLE_T_CODE, 0, OPERAND(FlyBundleInsn, a, value), 8, UINT64_MAX,
     "reads a value parameter 'A' does not have"},
    {FLY_BUNDLE_T_CODE, 0, OPERAND(FlyBundleInsn, a, index), 4, 3,
     "reads a value parameter 'BLOCK' does not have"},
    {FLY_BUNDLE_T_CODE, 0, OPERAND(FlyBundleInsn, a, index), 4, 4,
     "the launch program of kernel 'vector_add' names parameter 4 of 4"},
    {FLY_BUNDLE_T_CODE, 0, OPERAND(FlyBundleInsn, b, kind), 4, 7,
     "has an operand of unknown kind 7"},
    {FLY_BUNDLE_T_CODE, 5, OPERAND(FlyBundleInsn, b, index), 4, 0,
     "kernel 'scale' reads a value parameter 'X' does not have"},
    {FLY_BUNDLE_T_CODE, 6, OPERAND(FlyBundleInsn, a, value), 8, 1,
     "kernel 'scale' reads a value parameter 'X' does not have"},
};

/* Where patch x goes in the bundle at p. */
static uint64_t patch_offset(const unsigned char *p, const Patch *x) {
  FlyBundleHeader h;
  memcpy(&h, p, sizeof h);
  if (x->table == HEADER)
    return x->at;
  if (x->table == STRINGS)
    return h.strings + x->at;
  if (x->table == DATA)
    return h.data + x->at;
  const FlyBundleTable *t = &h.tables[x->table];
  return t->offset + (uint64_t)x->record * t->record_size + x->at;
}

static void broken_references_are_refused(void **state) {
  (void)state;
  size_t size;
  unsigned char *clean = two_targets(&size);
  unsigned char *p = malloc(size);
  assert_non_null(p);
  for (size_t i = 0; i < sizeof patches / sizeof patches[0]; i++) {
    const Patch *x = &patches[i];
    memcpy(p, clean, size);
    uint64_t at = patch_offset(p, x);
    assert_true(at + (uint64_t)x->width <= size);
    uint8_t b8 = (uint8_t)x->value;
    uint32_t b32 = (uint32_t)x->value;
    memcpy(p + at,
           x->width == 1   ? (const void *)&b8
           : x->width == 4 ? (const void *)&b32
                           : (const void *)&x->value,
           (size_t)x->width);
    reseal(p, size);
    FlyBundle b;
    char why[256] = "";
    if (fly_bundle_open(&b, p, size, why, sizeof why))
      fail_msg("patch %zu: accepted; want \"%s\"", i, x->want);
    if (!strstr(why, x->want))
      fail_msg("patch %zu: want \"%s\" in \"%s\"", i, x->want, why);
    if (strncmp(why, "corrupt bundle: ", 16) != 0)
      fail_msg("patch %zu: \"%s\" does not start with \"corrupt bundle: \"", i, why);
  }
  free(p);
  free(clean);
}

/* The string area must end with a NUL, or the last string would run on. */
/* Kernels' parameter ranges may not overlap: checking stays linear. */
static void overlapping_kernels_are_refused(void **state) {
  (void)state;
  size_t size;
  unsigned char *p = two_targets(&size);
  FlyBundle b = open_ok(p, size);
  assert_true(b.nkernels >= 2);
  FlyBundleKernel k;
  uint64_t at = b.header.tables[FLY_BUNDLE_T_KERNELS].offset +
                b.header.tables[FLY_BUNDLE_T_KERNELS].record_size;
  memcpy(&k, p + at, sizeof k);
  k.first_param = 0; /* kernel 1 reuses kernel 0's parameters */
  memcpy(p + at, &k, sizeof k);
  reseal(p, size);
  assert_refused(p, size, "kernel 1's parameters or program overlap the previous kernel's");
  free(p);
}

static void unterminated_strings_are_refused(void **state) {
  (void)state;
  size_t size;
  unsigned char *p = two_targets(&size);
  FlyBundleHeader h;
  memcpy(&h, p, sizeof h);
  p[h.strings + h.strings_size - 1] = 'x';
  reseal(p, size);
  assert_refused(p, size, "corrupt bundle: the string area is out of range or unterminated");
  free(p);
}

/* Sets a 32-bit field of record i of table t and reseals the bundle. */
static void set32(unsigned char *p, size_t size, int t, uint32_t i, size_t at, uint32_t v) {
  const Patch x = {t, i, at, 4, v, ""};
  memcpy(p + patch_offset(p, &x), &v, 4);
  reseal(p, size);
}

/* Records no kernel refers to can still be read, so they are checked too. */
static void records_of_no_kernel_are_checked(void **state) {
  (void)state;
  size_t size;
  unsigned char *p = two_targets(&size);
  /* copy keeps its first parameter; the second, dst, belongs to no kernel. */
  set32(p, size, FLY_BUNDLE_T_KERNELS, 3, offsetof(FlyBundleKernel, nparams), 1);
  open_ok(p, size);
  set32(p, size, FLY_BUNDLE_T_PARAMS, 12, offsetof(FlyBundleParam, name), (uint32_t)PAST);
  assert_refused(p, size, "corrupt bundle: a parameter's name refers past the string area");
  free(p);

  p = two_targets(&size);
  /* scale keeps its first two instructions and no longer uses the third. */
  set32(p, size, FLY_BUNDLE_T_KERNELS, 2, offsetof(FlyBundleKernel, ninsns), 2);
  set32(p, size, FLY_BUNDLE_T_KERNELS, 2, OPERAND(FlyBundleKernel, shared, kind), FLY_LAUNCH_CONST);
  open_ok(p, size);
  set32(p, size, FLY_BUNDLE_T_CODE, 6, offsetof(FlyBundleInsn, op), 99);
  assert_refused(p, size, "corrupt bundle: instruction 6 is of unknown kind 99");
  free(p);
}

/* ---- records of a later version ------------------------------------------ */

/* A copy of the bundle with table t moved to its end, each record followed
   by `extra` bytes of 0xAB, as a later version with a larger record would
   write it. */
static unsigned char *widen(const unsigned char *p, size_t size, int t, uint32_t extra,
                            size_t *out_size) {
  FlyBundleHeader h;
  memcpy(&h, p, sizeof h);
  FlyBundleTable *tab = &h.tables[t];
  size_t at = (size + 7) / 8 * 8;
  size_t wide = tab->record_size + extra;
  size_t n = at + tab->count * wide;
  unsigned char *q = calloc(1, n);
  assert_non_null(q);
  memcpy(q, p, size);
  for (uint32_t i = 0; i < tab->count; i++) {
    memcpy(q + at + i * wide, p + tab->offset + (size_t)i * tab->record_size, tab->record_size);
    memset(q + at + i * wide + tab->record_size, 0xAB, extra);
  }
  tab->offset = at;
  tab->record_size = (uint32_t)wide;
  h.file_size = n;
  memcpy(q, &h, sizeof h);
  reseal(q, n);
  *out_size = n;
  return q;
}

static void larger_records_are_read_by_their_prefix(void **state) {
  (void)state;
  size_t size;
  unsigned char *p = two_targets(&size);
  for (int t = 0; t < FLY_BUNDLE_NTABLES; t++) {
    size_t n;
    unsigned char *q = widen(p, size, t, 24, &n);
    FlyBundle b = open_ok(q, n);
    assert_int_equal(b.header.tables[t].record_size % 8, 0);
    FlyKernelInfo k = vector_add("gfx942");
    assert_kernel(&b, 1, &k, 1, "vector_add_gfx942");
    k = scale();
    assert_kernel(&b, 2, &k, 1, "scale");
    assert_image(&b, 0, "sm_90", FLY_IMAGE_PTX, ptx, sizeof ptx);
    assert_image(&b, 1, "gfx942", FLY_IMAGE_HSACO, hsaco, sizeof hsaco);
    free(q);
  }
  free(p);
}

/* ---- clusters ------------------------------------------------------------ */

/* A copy of the bundle whose table t holds records of `size` bytes, each
   cut from the bundle's own, as an earlier version wrote them. */
static unsigned char *narrow(const unsigned char *p, size_t n, int t, uint32_t size,
                             size_t *out_size) {
  FlyBundleHeader h;
  memcpy(&h, p, sizeof h);
  FlyBundleTable *tab = &h.tables[t];
  size_t at = (n + 7) / 8 * 8;
  size_t total = at + tab->count * size;
  unsigned char *q = calloc(1, total);
  assert_non_null(q);
  memcpy(q, p, n);
  for (uint32_t i = 0; i < tab->count; i++)
    memcpy(q + at + i * size, p + tab->offset + (size_t)i * tab->record_size, size);
  tab->offset = at;
  tab->record_size = size;
  h.file_size = total;
  memcpy(q, &h, sizeof h);
  reseal(q, total);
  *out_size = total;
  return q;
}

/* A kernel's cluster shape goes into its record and comes back; a record
   of 168 bytes, written before clusters, reads as a kernel without one; a
   shape of more than 8 blocks, or with a dimension of 0, is refused. */
static void cluster_shapes(void **state) {
  (void)state;
  FlyBundleWriter w;
  fly_bundle_writer_init(&w);
  uint32_t nv = fly_bundle_writer_image(&w, "sm_90", FLY_IMAGE_PTX, ptx, sizeof ptx);
  FlyKernelInfo k = vector_add("sm_90");
  k.cluster[0] = 2;
  k.cluster[1] = 1;
  k.cluster[2] = 1;
  fly_bundle_writer_kernel(&w, &k, nv, "vector_add");
  k = vector_add("sm_90");
  k.spec = "B=1";
  fly_bundle_writer_kernel(&w, &k, nv, "vector_add");
  size_t size;
  unsigned char *p = finish(&w, &size);
  FlyBundle b = open_ok(p, size);
  FlyBundleKernel r = fly_bundle_kernel(&b, 0);
  assert_int_equal(r.cluster[0], 2);
  assert_int_equal(r.cluster[1], 1);
  assert_int_equal(r.cluster[2], 1);
  assert_int_equal(r.reserved2, 0);
  assert_int_equal(r.flags, FLY_BUNDLE_KERNEL_HAS_LAUNCH);
  r = fly_bundle_kernel(&b, 1);
  assert_int_equal(r.cluster[0] | r.cluster[1] | r.cluster[2], 0);

  size_t n;
  unsigned char *old = narrow(p, size, FLY_BUNDLE_T_KERNELS, 168, &n);
  FlyBundle o = open_ok(old, n);
  r = fly_bundle_kernel(&o, 0);
  assert_int_equal(r.cluster[0] | r.cluster[1] | r.cluster[2], 0);
  k = vector_add("sm_90");
  assert_kernel(&o, 0, &k, 0, "vector_add");
  free(old);

  const size_t at = offsetof(FlyBundleKernel, cluster);
  set32(p, size, FLY_BUNDLE_T_KERNELS, 0, at + 4, 4);
  open_ok(p, size); /* 2 x 4 x 1 */
  set32(p, size, FLY_BUNDLE_T_KERNELS, 0, at + 8, 2);
  assert_refused(p, size, "kernel 'vector_add' has a cluster of 2 x 4 x 2 blocks (1 to 8 in all)");
  set32(p, size, FLY_BUNDLE_T_KERNELS, 0, at + 8, 0);
  assert_refused(p, size, "kernel 'vector_add' has a cluster of 2 x 4 x 0 blocks");
  free(p);
}

/* A parameter record of the first bundles (40 bytes, before max_span)
   reads as spanning any size; a shorter one is refused. */
static void first_parameter_records(void **state) {
  (void)state;
  size_t size, n;
  unsigned char *p = two_targets(&size);
  FlyBundle b = open_ok(p, size);
  assert_int_equal(fly_bundle_param(&b, 4 + 4).max_span, 2147483648u); /* scale's X */
  unsigned char *old = narrow(p, size, FLY_BUNDLE_T_PARAMS, 40, &n);
  FlyBundle o = open_ok(old, n);
  assert_int_equal(fly_bundle_param(&o, 4 + 4).max_span, 0);
  FlyKernelInfo k = vector_add("gfx942");
  assert_kernel(&o, 1, &k, 1, "vector_add_gfx942");
  free(old);
  old = narrow(p, size, FLY_BUNDLE_T_PARAMS, 36, &n);
  assert_refused(old, n, "parameter");
  free(old);
  free(p);
}

/* ---- merging ------------------------------------------------------------- */

static void merge_two_single_target_bundles(void **state) {
  (void)state;
  size_t nv_size, amd_size, size;
  unsigned char *nv = one_target(false, &nv_size);
  unsigned char *amd = one_target(true, &amd_size);
  FlyBundle a = open_ok(nv, nv_size), b = open_ok(amd, amd_size);
  FlyBundleWriter w;
  fly_bundle_writer_init(&w);
  fly_bundle_writer_merge(&w, &a);
  fly_bundle_writer_merge(&w, &b);
  unsigned char *p = finish(&w, &size);
  FlyBundle m = open_ok(p, size);
  assert_int_equal(m.nkernels, 3);
  assert_int_equal(m.nimages, 2);
  assert_int_equal(m.nparams, 4 + 4 + 3);
  assert_int_equal(m.ninsns, 2 + 2 + 3);
  FlyKernelInfo k = vector_add("sm_90");
  assert_kernel(&m, 0, &k, 0, "vector_add");
  k = vector_add("gfx942");
  assert_kernel(&m, 1, &k, 1, "vector_add_gfx942");
  k = scale();
  assert_kernel(&m, 2, &k, 1, "scale");
  assert_image(&m, 0, "sm_90", FLY_IMAGE_PTX, ptx, sizeof ptx);
  assert_image(&m, 1, "gfx942", FLY_IMAGE_HSACO, hsaco, sizeof hsaco);

  /* Merging the merged bundle again renumbers the images it brings. */
  fly_bundle_writer_init(&w);
  fly_bundle_writer_merge(&w, &m);
  fly_bundle_writer_merge(&w, &m);
  size_t twice_size;
  unsigned char *twice = finish(&w, &twice_size);
  FlyBundle t = open_ok(twice, twice_size);
  assert_int_equal(t.nkernels, 6);
  assert_int_equal(t.nimages, 4);
  k = scale();
  assert_kernel(&t, 5, &k, 3, "scale");
  k = vector_add("sm_90");
  assert_kernel(&t, 3, &k, 2, "vector_add");
  assert_image(&t, 2, "sm_90", FLY_IMAGE_PTX, ptx, sizeof ptx);
  free(twice);
  free(p);
  free(amd);
  free(nv);
}

/* ---- the launch rule ----------------------------------------------------- */

/* Runs kernel r of b: out[7], or NULL and the message in why. */
static bool launch(const FlyBundle *b, uint32_t r, const int64_t *scalars,
                   const int64_t *const *shapes, const int64_t *const *strides, int64_t out[7],
                   char why[256]) {
  FlyBundleKernel k = fly_bundle_kernel(b, r);
  why[0] = '\0';
  return fly_bundle_launch_eval(b, &k, scalars, shapes, strides, out, why, 256);
}

static void assert_launch_fails(const FlyBundle *b, uint32_t r, const int64_t *scalars,
                                const int64_t *const *shapes, const int64_t *const *strides,
                                const char *want) {
  int64_t out[7];
  char why[256];
  if (launch(b, r, scalars, shapes, strides, out, why))
    fail_msg("launch succeeded; want \"%s\"", want);
  if (!strstr(why, want))
    fail_msg("want \"%s\" in \"%s\"", want, why);
}

/* vector_add over n elements: grid.x = ceil(n / 1024), block.x = 256. */
static void vector_add_grid(const FlyBundle *b, int64_t n, int64_t want_grid) {
  const int64_t leaves[1] = {n};
  const int64_t *const shapes[4] = {leaves, leaves, leaves, NULL};
  int64_t out[7];
  char why[256];
  if (!launch(b, 0, NULL, shapes, NULL, out, why))
    fail_msg("n = %lld: %s", (long long)n, why);
  const int64_t want[7] = {want_grid, 1, 1, 256, 1, 1, 0};
  for (int i = 0; i < 7; i++)
    if (out[i] != want[i])
      fail_msg("n = %lld: out[%d] is %lld, want %lld", (long long)n, i, (long long)out[i],
               (long long)want[i]);
}

static void launch_rule_of_vector_add(void **state) {
  (void)state;
  size_t size;
  unsigned char *p = two_targets(&size);
  FlyBundle b = open_ok(p, size);
  vector_add_grid(&b, 1, 1);
  vector_add_grid(&b, 1000, 1);
  vector_add_grid(&b, 1024, 1);
  vector_add_grid(&b, 1025, 2);
  vector_add_grid(&b, 1 << 20, 1024);
  vector_add_grid(&b, (int64_t)INT32_MAX * 1024, INT32_MAX);

  /* An empty tensor gives no blocks: a launch that does nothing. */
  vector_add_grid(&b, 0, 0);
  const int64_t zero[1] = {0}, huge[1] = {(int64_t)INT32_MAX * 1024 + 1};
  const int64_t *const too_big[4] = {huge, huge, huge, NULL};
  assert_launch_fails(&b, 0, NULL, too_big, NULL, "grid.x is 2147483648");
  const int64_t max[1] = {INT64_MAX};
  const int64_t *const overflow[4] = {max, max, max, NULL};
  assert_launch_fails(&b, 0, NULL, overflow, NULL, "overflows 64 bits");
  assert_launch_fails(&b, 0, NULL, NULL, NULL, "needs the shape of 'A'");
  const int64_t *const missing[4] = {NULL, zero, zero, NULL};
  assert_launch_fails(&b, 0, NULL, missing, NULL, "needs the shape of 'A'");
  assert_launch_fails(&b, 3, NULL, NULL, NULL,
                      "kernel 'copy' has no launch block: give the grid and block");
  free(p);
}

static void launch_rule_of_scale(void **state) {
  (void)state;
  size_t size;
  unsigned char *p = two_targets(&size);
  FlyBundle b = open_ok(p, size);
  const int64_t x_shape[2] = {100, 50}, x_stride[1] = {64};
  const int64_t *const shapes[3] = {x_shape, NULL, NULL};
  const int64_t *const strides[3] = {x_stride, NULL, NULL};
  const int64_t scalars[3] = {0, 10, 0};
  int64_t out[7];
  char why[256];
  if (!launch(&b, 2, scalars, shapes, strides, out, why))
    fail_msg("%s", why);
  const int64_t want[7] = {500, 1, 1, 64, 2, 1, 256};
  assert_memory_equal(out, want, sizeof want);

  const int64_t by_zero[3] = {0, 0, 0};
  assert_launch_fails(&b, 2, by_zero, shapes, strides, "divides 5000 by zero");
  const int64_t big_shape[2] = {(int64_t)1 << 40, (int64_t)1 << 40};
  const int64_t *const big[3] = {big_shape, NULL, NULL};
  assert_launch_fails(&b, 2, scalars, big, strides, "overflows 64 bits");
  assert_launch_fails(&b, 2, NULL, shapes, strides, "needs the value of 'n'");
  assert_launch_fails(&b, 2, scalars, shapes, NULL, "needs the strides of 'X'");
  const int64_t negative_stride[1] = {-1};
  const int64_t *const negative[3] = {negative_stride, NULL, NULL};
  assert_launch_fails(&b, 2, scalars, shapes, negative, "kernel 'scale': shared is -4");
  free(p);
}

/* A one-kernel bundle computing t0 = op(x, y), t1 = t0 + 1000, with t1 in
   rule slot `slot` (grid.x ... shared) and the rest as a launch block that
   sets nothing gives them. */
static unsigned char *calc(uint32_t op, int slot, size_t *size) {
  static FlyParamInfo params[] = {
      {"x", FLY_PARAM_SCALAR, FLY_DTYPE_I64, "i64", "", 0, 0, 0, 0, 0, 0},
      {"y", FLY_PARAM_SCALAR, FLY_DTYPE_I64, "i64", "", 0, 0, 1, 0, 0, 0},
  };
  FlyBundleInsn code[2] = {insn(op, scalar(0), scalar(1)),
                           insn(FLY_LAUNCH_ADD, temp(0), cst(1000))};
  FlyKernelInfo k = {0};
  k.name = "calc";
  k.spec = "";
  k.target = "sm_90";
  k.nparams = 2;
  k.params = params;
  k.nargs = 2;
  k.has_launch = true;
  k.ninsns = 2;
  k.code = code;
  default_rule(&k);
  k.rule[slot] = temp(1);
  FlyBundleWriter w;
  fly_bundle_writer_init(&w);
  uint32_t im = fly_bundle_writer_image(&w, "sm_90", FLY_IMAGE_PTX, ptx, sizeof ptx);
  fly_bundle_writer_kernel(&w, &k, im, "calc");
  return finish(&w, size);
}

/* op(x, y) as the launch rule computes it, or false and why. */
static bool run_op(uint32_t op, int slot, int64_t x, int64_t y, int64_t *result, char why[256]) {
  size_t size;
  unsigned char *p = calc(op, slot, &size);
  FlyBundle b = open_ok(p, size);
  const int64_t scalars[2] = {x, y};
  int64_t out[7];
  bool ok = launch(&b, 0, scalars, NULL, NULL, out, why);
  if (ok)
    *result = out[slot] - 1000;
  free(p);
  return ok;
}

static void assert_op(uint32_t op, int64_t x, int64_t y, int64_t want) {
  int64_t got;
  char why[256];
  if (!run_op(op, 6, x, y, &got, why))
    fail_msg("op %u (%lld, %lld): %s", op, (long long)x, (long long)y, why);
  if (got != want)
    fail_msg("op %u (%lld, %lld) is %lld, want %lld", op, (long long)x, (long long)y,
             (long long)got, (long long)want);
}

static void assert_op_fails(uint32_t op, int64_t x, int64_t y, const char *want) {
  int64_t got;
  char why[256];
  if (run_op(op, 6, x, y, &got, why))
    fail_msg("op %u (%lld, %lld) gave %lld; want \"%s\"", op, (long long)x, (long long)y,
             (long long)got, want);
  if (!strstr(why, want))
    fail_msg("want \"%s\" in \"%s\"", want, why);
}

static void launch_instructions(void **state) {
  (void)state;
  assert_op(FLY_LAUNCH_ADD, 40, 2, 42);
  assert_op(FLY_LAUNCH_SUB, 2, 40, -38);
  assert_op(FLY_LAUNCH_MUL, -6, 7, -42);
  /* Division and remainder truncate toward zero. */
  assert_op(FLY_LAUNCH_DIV, 7, 2, 3);
  assert_op(FLY_LAUNCH_DIV, -7, 2, -3);
  assert_op(FLY_LAUNCH_DIV, 7, -2, -3);
  assert_op(FLY_LAUNCH_REM, -7, 2, -1);
  assert_op(FLY_LAUNCH_REM, 7, -2, 1);
  assert_op(FLY_LAUNCH_MIN, -5, 3, -5);
  assert_op(FLY_LAUNCH_MAX, -5, 3, 3);
  assert_op(FLY_LAUNCH_SHL, 3, 4, 48);
  assert_op(FLY_LAUNCH_SHL, 5, 0, 5);
  assert_op(FLY_LAUNCH_SHR, 100, 2, 25);
  assert_op(FLY_LAUNCH_SHR, -16, 2, -4); /* arithmetic: the sign is kept */
  assert_op(FLY_LAUNCH_AND, 12, 10, 8);
  assert_op(FLY_LAUNCH_OR, 12, 10, 14);
  assert_op(FLY_LAUNCH_XOR, 12, 10, 6);
  assert_op(FLY_LAUNCH_EQ, 3, 3, 1);
  assert_op(FLY_LAUNCH_EQ, 3, -3, 0);
  assert_op(FLY_LAUNCH_NE, 3, -3, 1);
  assert_op(FLY_LAUNCH_NE, 3, 3, 0);
  assert_op(FLY_LAUNCH_LT, -4, 3, 1); /* signed */
  assert_op(FLY_LAUNCH_LT, 3, 3, 0);
  assert_op(FLY_LAUNCH_LE, 3, 3, 1);
  assert_op(FLY_LAUNCH_LE, 4, 3, 0);
  assert_op(FLY_LAUNCH_GT, 3, -4, 1);
  assert_op(FLY_LAUNCH_GT, 3, 3, 0);
  assert_op(FLY_LAUNCH_GE, 3, 3, 1);
  assert_op(FLY_LAUNCH_GE, INT64_MIN, 3, 0);

  assert_op_fails(FLY_LAUNCH_DIV, 5, 0, "the launch rule divides 5 by zero");
  assert_op_fails(FLY_LAUNCH_REM, 5, 0, "divides 5 by zero");
  assert_op_fails(FLY_LAUNCH_DIV, INT64_MIN, -1, "overflows 64 bits");
  assert_op_fails(FLY_LAUNCH_REM, INT64_MIN, -1, "overflows 64 bits");
  assert_op_fails(FLY_LAUNCH_MUL, (int64_t)1 << 32, (int64_t)1 << 31, "overflows 64 bits");
  assert_op_fails(FLY_LAUNCH_MUL, INT64_MIN, -1, "overflows 64 bits");
  assert_op_fails(FLY_LAUNCH_ADD, INT64_MAX, 1, "overflows 64 bits");
  assert_op_fails(FLY_LAUNCH_SUB, INT64_MIN, 1, "overflows 64 bits");
  assert_op_fails(FLY_LAUNCH_SHL, 1, 63, "overflows 64 bits");
  assert_op_fails(FLY_LAUNCH_SHL, 1, 64, "shifts by 64 (0 to 63 allowed)");
  assert_op_fails(FLY_LAUNCH_SHR, 1, -1, "shifts by -1");
  /* The sum t0 + 1000 is itself checked. */
  assert_op_fails(FLY_LAUNCH_ADD, INT64_MAX - 500, 0, "overflows 64 bits");
}

/* kernel rows(X: tensor<f32, (?,?):(?,1)>) with
     require size(X) % 4 == 0, "X holds whole vectors";
     require shape(X)[0] > 0;   (no message: the condition is the message)
     grid = shape(X)[0]; block = 32; */
static unsigned char *required(size_t *size, bool merged) {
  static FlyParamInfo params[] = {
      {"X", FLY_PARAM_TENSOR, FLY_DTYPE_F32, "f32", "(?,?):(?,1)", 2, 1, 0, 16, 16, 0},
  };
  FlyBundleInsn code[5] = {
      insn(FLY_LAUNCH_MUL, shape(0, 0), shape(0, 1)), insn(FLY_LAUNCH_REM, temp(0), cst(4)),
      insn(FLY_LAUNCH_EQ, temp(1), cst(0)), insn(FLY_LAUNCH_REQUIRE, temp(2), cst(0)),
      insn(FLY_LAUNCH_GT, shape(0, 0), cst(0))};
  FlyBundleInsn all[6];
  memcpy(all, code, sizeof code);
  all[5] = insn(FLY_LAUNCH_REQUIRE, temp(4), cst(1));
  FlyRequireInfo req[2] = {{3, "X holds whole vectors", "rows.fly:3:13: require size(X) % 4 == 0"},
                           {5, "shape(X)[0] > 0", "rows.fly:4:13: require shape(X)[0] > 0"}};
  FlyKernelInfo k = {0};
  k.name = "rows";
  k.spec = "";
  k.target = "sm_90";
  k.nparams = 1;
  k.params = params;
  k.nargs = 4;
  k.has_launch = true;
  k.ninsns = 6;
  k.code = all;
  k.nrequires = 2;
  k.requires = req;
  default_rule(&k);
  k.rule[0] = shape(0, 0);
  k.rule[3] = cst(32);
  FlyBundleWriter w;
  fly_bundle_writer_init(&w);
  uint32_t im = fly_bundle_writer_image(&w, "sm_90", FLY_IMAGE_PTX, ptx, sizeof ptx);
  fly_bundle_writer_kernel(&w, &k, im, "rows");
  unsigned char *p = finish(&w, size);
  if (!merged)
    return p;
  /* Through a merge, after another bundle's strings, which moves them. */
  size_t other_size;
  unsigned char *other = two_targets(&other_size);
  FlyBundle a = open_ok(other, other_size), b = open_ok(p, *size);
  fly_bundle_writer_init(&w);
  fly_bundle_writer_merge(&w, &a);
  fly_bundle_writer_merge(&w, &b);
  unsigned char *m = finish(&w, size);
  free(other);
  free(p);
  return m;
}

static void launch_requirements(void **state) {
  (void)state;
  for (int merged = 0; merged < 2; merged++) {
    size_t size;
    unsigned char *p = required(&size, merged);
    FlyBundle b = open_ok(p, size);
    uint32_t r = b.nkernels - 1;
    const int64_t good[2] = {3, 8}, ragged[2] = {3, 7}, none[2] = {0, 8}, stride[1] = {8};
    const int64_t *const shapes_good[1] = {good}, *const shapes_ragged[1] = {ragged},
                         *const shapes_none[1] = {none}, *const strides[1] = {stride};
    int64_t out[7];
    char why[256];
    if (!launch(&b, r, NULL, shapes_good, strides, out, why))
      fail_msg("%s", why);
    assert_int_equal(out[0], 3);
    assert_launch_fails(&b, r, NULL, shapes_ragged, strides,
                        "launch refused: X holds whole vectors "
                        "(rows.fly:3:13: require size(X) % 4 == 0)");
    assert_launch_fails(&b, r, NULL, shapes_none, strides,
                        "launch refused: shape(X)[0] > 0 (rows.fly:4:13: require shape(X)[0] > 0)");
    /* Only the program: the requirements, not the settings. */
    FlyBundleKernel k = fly_bundle_kernel(&b, r);
    assert_true(fly_bundle_launch_eval(&b, &k, NULL, shapes_good, strides, NULL, why, 256));
    assert_false(fly_bundle_launch_eval(&b, &k, NULL, shapes_ragged, strides, NULL, why, 256));
    assert_non_null(strstr(why, "X holds whole vectors"));
    FlyBundleParam x = fly_bundle_param(&b, k.first_param);
    assert_int_equal(x.align, 16);
    assert_int_equal(x.stride_align, 16);
    free(p);
  }
}

/* A requirement whose message is not a string of the bundle is refused when
   the bundle is opened. */
static void corrupt_requirement(void **state) {
  (void)state;
  size_t size;
  unsigned char *p = required(&size, false);
  FlyBundle b = open_ok(p, size);
  FlyBundleKernel k = fly_bundle_kernel(&b, 0);
  uint64_t at = b.header.tables[FLY_BUNDLE_T_CODE].offset +
                (uint64_t)(k.first_insn + 3) * b.header.tables[FLY_BUNDLE_T_CODE].record_size;
  FlyBundleInsn in;
  memcpy(&in, p + at, sizeof in);
  in.b.kind = FLY_LAUNCH_TEMP;
  in.b.index = 0;
  memcpy(p + at, &in, sizeof in);
  reseal(p, size);
  char why[256];
  FlyBundle bad;
  assert_false(fly_bundle_open(&bad, p, size, why, sizeof why));
  assert_non_null(strstr(why, "has a requirement without its message"));
  free(p);
}

/* Every slot of the rule is range-checked: grid and shared from 0, block
   from 1, all up to 2^31-1. */
static void launch_ranges(void **state) {
  (void)state;
  static const char *const slot[7] = {"grid.x",  "grid.y",  "grid.z", "block.x",
                                      "block.y", "block.z", "shared"};
  for (int s = 0; s < 7; s++) {
    int64_t got;
    char why[256], want[64];
    int64_t lo = s < 3 || s == 6 ? 0 : 1;
    if (!run_op(FLY_LAUNCH_ADD, s, lo - 1000, 0, &got, why) || got != lo - 1000)
      fail_msg("%s = %lld: %s", slot[s], (long long)lo, why);
    if (!run_op(FLY_LAUNCH_ADD, s, INT32_MAX - 1000, 0, &got, why))
      fail_msg("%s = 2^31-1: %s", slot[s], why);
    snprintf(want, sizeof want, "%s is %lld, outside %lld to 2^31-1", slot[s], (long long)lo - 1,
             (long long)lo);
    if (run_op(FLY_LAUNCH_ADD, s, lo - 1001, 0, &got, why) || !strstr(why, want))
      fail_msg("%s = %lld: want \"%s\" in \"%s\"", slot[s], (long long)lo - 1, want, why);
    snprintf(want, sizeof want, "%s is 2147483648", slot[s]);
    if (run_op(FLY_LAUNCH_ADD, s, INT32_MAX - 999, 0, &got, why) || !strstr(why, want))
      fail_msg("%s = 2^31: want \"%s\" in \"%s\"", slot[s], want, why);
  }
}

/* A program of n instructions counting up from 0; its result is grid.x. */
static unsigned char *counter(uint32_t n, size_t *size) {
  FlyBundleInsn *code = calloc(n, sizeof *code);
  assert_non_null(code);
  code[0] = insn(FLY_LAUNCH_ADD, cst(0), cst(1));
  for (uint32_t i = 1; i < n; i++)
    code[i] = insn(FLY_LAUNCH_ADD, temp(i - 1), cst(1));
  FlyKernelInfo k = {0};
  k.name = "counter";
  k.spec = "";
  k.target = "sm_90";
  k.has_launch = true;
  k.ninsns = n;
  k.code = code;
  default_rule(&k);
  k.rule[0] = temp(n - 1);
  FlyBundleWriter w;
  fly_bundle_writer_init(&w);
  uint32_t im = fly_bundle_writer_image(&w, "sm_90", FLY_IMAGE_PTX, ptx, sizeof ptx);
  fly_bundle_writer_kernel(&w, &k, im, "counter");
  free(code);
  return finish(&w, size);
}

/* The compiler records at most 4096 instructions, and the evaluator runs
   no more. */
static void launch_program_length(void **state) {
  (void)state;
  size_t size;
  unsigned char *p = counter(4096, &size);
  FlyBundle b = open_ok(p, size);
  int64_t out[7];
  char why[256];
  if (!launch(&b, 0, NULL, NULL, NULL, out, why))
    fail_msg("%s", why);
  assert_int_equal(out[0], 4096);
  free(p);
  p = counter(4097, &size);
  b = open_ok(p, size);
  assert_launch_fails(&b, 0, NULL, NULL, NULL,
                      "the launch rule of kernel 'counter' is too long (4097 instructions)");
  free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(round_trip),
      cmocka_unit_test(empty_bundle),
      cmocka_unit_test(crc32_known_values),
      cmocka_unit_test(checksum_covers_the_whole_file),
      cmocka_unit_test(every_byte_flip_is_refused),
      cmocka_unit_test(every_truncation_is_refused),
      cmocka_unit_test(header_errors),
      cmocka_unit_test(broken_references_are_refused),
      cmocka_unit_test(unterminated_strings_are_refused),
      cmocka_unit_test(overlapping_kernels_are_refused),
      cmocka_unit_test(records_of_no_kernel_are_checked),
      cmocka_unit_test(larger_records_are_read_by_their_prefix),
      cmocka_unit_test(cluster_shapes),
      cmocka_unit_test(first_parameter_records),
      cmocka_unit_test(merge_two_single_target_bundles),
      cmocka_unit_test(launch_rule_of_vector_add),
      cmocka_unit_test(launch_rule_of_scale),
      cmocka_unit_test(launch_instructions),
      cmocka_unit_test(launch_ranges),
      cmocka_unit_test(launch_requirements),
      cmocka_unit_test(corrupt_requirement),
      cmocka_unit_test(launch_program_length),
  };
  return cmocka_run_group_tests_name("bundle", tests, NULL, NULL);
}
