/* fuzz_bundle.c — libFuzzer entry for the bundle reader and the launch-rule
 * evaluator (runtime/fly_bundle.h).
 *
 * Any bytes must be opened or refused with a message, never crash or read
 * outside the input. A random change almost never survives the checksum,
 * so each input is also tried with its file size and checksum set to what
 * they should be: that copy reaches the checks of the tables and their
 * references. What opens is used as the runtime would use it: every
 * record, string and image is read, and each kernel's launch rule is run
 * for a few sets of arguments, which must give results in range or a
 * message. A bundle that opens also merges (fly_bundle_writer_merge) into
 * a bundle that opens, with the same kernels. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_bundle.h"
#include "fuzz_bundle_repair.h"
#include "fly_bundle_write.h"

/* The `?` leaves given to one tensor parameter at most; a parameter with
   more gets none, and its launch rule is refused for want of them. */
enum { MAX_LEAVES = 64 };

/* A promise was broken: say which before libFuzzer saves the input. */
static void broken(const char *why) __attribute__((noreturn));
static void broken(const char *why) {
  fprintf(stderr, "fuzz_bundle: %s\n", why);
  abort();
}

/* Touches every byte of a string, so that the sanitizers see a read past
   the string area. */
static size_t string_length(const FlyBundle *b, uint32_t s) {
  return strlen(fly_bundle_string(b, s));
}

static uint64_t read_records(const FlyBundle *b) {
  uint64_t sum = string_length(b, b->header.compiler) + string_length(b, b->header.toolchain) +
                 string_length(b, b->header.source_hash);
  for (uint32_t i = 0; i < b->nimages; i++) {
    FlyBundleImage im = fly_bundle_image(b, i);
    const unsigned char *bytes = fly_bundle_image_bytes(b, &im);
    if (im.offset % 16)
      broken("an image is not 16-aligned");
    for (uint64_t j = 0; j < im.size; j++)
      sum += bytes[j];
    sum += string_length(b, im.target);
  }
  for (uint32_t i = 0; i < b->nparams; i++) {
    FlyBundleParam p = fly_bundle_param(b, i);
    sum += string_length(b, p.name) + string_length(b, p.type) + string_length(b, p.layout);
  }
  for (uint32_t i = 0; i < b->ninsns; i++)
    sum += fly_bundle_insn(b, i).op;
  for (uint32_t i = 0; i < b->nkernels; i++) {
    FlyBundleKernel k = fly_bundle_kernel(b, i);
    sum += string_length(b, k.name) + string_length(b, k.spec) + string_length(b, k.target) +
           string_length(b, k.symbol);
  }
  return sum;
}

/* Runs kernel k's launch rule with every scalar and `?` leaf set to
   `value` (leaf j of a tensor to value + j). */
static void launch(const FlyBundle *b, const FlyBundleKernel *k, int64_t value) {
  uint32_t n = k->nparams;
  int64_t *scalars = calloc(n ? n : 1, sizeof *scalars);
  int64_t **shapes = calloc(n ? n : 1, sizeof *shapes);
  int64_t **strides = calloc(n ? n : 1, sizeof *strides);
  if (!scalars || !shapes || !strides)
    broken("out of memory");
  for (uint32_t i = 0; i < n; i++) {
    FlyBundleParam p = fly_bundle_param(b, k->first_param + i);
    scalars[i] = value;
    if (p.kind != FLY_PARAM_TENSOR)
      continue;
    if (p.dyn_shape <= MAX_LEAVES && p.dyn_stride <= MAX_LEAVES) {
      shapes[i] = calloc(MAX_LEAVES, sizeof **shapes);
      strides[i] = calloc(MAX_LEAVES, sizeof **strides);
      if (!shapes[i] || !strides[i])
        broken("out of memory");
      for (int j = 0; j < MAX_LEAVES; j++)
        shapes[i][j] = strides[i][j] = value < INT64_MAX - j ? value + j : value;
    }
  }
  int64_t out[7];
  char why[256] = "";
  if (fly_bundle_launch_eval(b, k, scalars, (const int64_t *const *)shapes,
                             (const int64_t *const *)strides, out, why, sizeof why)) {
    for (int i = 0; i < 7; i++)
      if (out[i] < (i >= 3 && i < 6 ? 1 : 0) || out[i] > INT32_MAX) /* grid 0: no work */
        broken("a launch setting is out of range");
  } else if (why[0] == '\0') {
    broken("a launch rule failed without a message");
  }
  for (uint32_t i = 0; i < n; i++) {
    free(shapes[i]);
    free(strides[i]);
  }
  free(scalars);
  free(shapes);
  free(strides);
}

static void launch_all(const FlyBundle *b) {
  static const int64_t values[] = {1, 0, -3, 1000, (int64_t)1 << 40, INT64_MAX, INT64_MIN};
  for (uint32_t i = 0; i < b->nkernels; i++) {
    FlyBundleKernel k = fly_bundle_kernel(b, i);
    for (size_t v = 0; v < sizeof values / sizeof values[0]; v++)
      launch(b, &k, values[v]);
  }
}

/* A bundle the reader accepts merges into one it accepts again. */
static void merge(const FlyBundle *b) {
  FlyBundleWriter w;
  fly_bundle_writer_init(&w);
  fly_bundle_writer_merge(&w, b);
  size_t size;
  void *out = fly_bundle_writer_finish(&w, "flyc", "", "", &size);
  fly_bundle_writer_release(&w);
  if (!out)
    broken("a bundle that opens does not merge");
  FlyBundle m;
  char why[256];
  if (!fly_bundle_open(&m, out, size, why, sizeof why)) {
    fprintf(stderr, "fuzz_bundle: %s\n", why);
    broken("a merged bundle does not open");
  }
  if (m.nkernels != b->nkernels || m.nimages != b->nimages)
    broken("a merged bundle lost kernels or images");
  for (uint32_t i = 0; i < m.nkernels; i++) {
    FlyBundleKernel x = fly_bundle_kernel(b, i), y = fly_bundle_kernel(&m, i);
    if (strcmp(fly_bundle_string(b, x.name), fly_bundle_string(&m, y.name)) != 0 ||
        x.nparams != y.nparams || x.ninsns != y.ninsns || x.image != y.image)
      broken("a merged kernel differs");
  }
  free(out);
}

/* Opens size bytes at data; what opens is read, launched and merged. */
static void try_open(const unsigned char *data, size_t size) {
  FlyBundle b;
  char why[256] = "";
  if (!fly_bundle_open(&b, data, size, why, sizeof why)) {
    if (why[0] == '\0')
      broken("a bundle was refused without a message");
    return;
  }
  read_records(&b);
  launch_all(&b);
  merge(&b);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  /* A copy of exactly size bytes, so that a read past the end is seen. */
  unsigned char *copy = malloc(size ? size : 1);
  if (!copy)
    return 0;
  if (size)
    memcpy(copy, data, size);
  try_open(copy, size);
  if (size >= sizeof(FlyBundleHeader)) {
    fuzz_repair_bundle(copy, size);
    try_open(copy, size);
  }
  free(copy);
  return 0;
}
