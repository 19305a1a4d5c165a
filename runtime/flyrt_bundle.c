/* flyrt_bundle.c — bundles as the runtime holds them: the file's bytes,
 * checked once by the format's reader, shared by the modules made from
 * them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "flyrt_internal.h"

static Bundle *bundle_of(FlyrtBundle h) { return (Bundle *)h.ptr; }

/* Takes ownership of bytes (16-aligned, size long). */
static FlyrtStatus adopt(void *bytes, size_t size, const char *what, FlyrtBundle *out) {
  char why[512];
  FlyBundle fb;
  if (!fly_bundle_open(&fb, bytes, size, why, sizeof why)) {
    uint32_t version = 0;
    bool magic = size >= 12 && memcmp(bytes, FLY_BUNDLE_MAGIC, 8) == 0;
    if (magic)
      memcpy(&version, (char *)bytes + 8, 4);
    free(bytes);
    return flyrt_fail(magic && version != FLY_BUNDLE_VERSION ? FLYRT_ERROR_VERSION
                                                             : FLYRT_ERROR_BAD_BUNDLE,
                      "%s: %s", what, why);
  }
  Bundle *b = calloc(1, sizeof *b);
  if (!b) {
    free(bytes);
    return flyrt_fail(FLYRT_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  atomic_init(&b->refs, 1);
  b->bytes = bytes;
  b->b = fb;
  out->ptr = b;
  return flyrt_ok();
}

/* Bytes the driver may take as they are: images are 16-aligned in the
   bundle, so the copy is too. */
static void *aligned_copy(size_t size) { return aligned_alloc(16, (size + 15) & ~(size_t)15); }

FlyrtStatus flyrtBundleCreateFromMemory(const void *data, size_t size, FlyrtBundle *out) {
  if (!out || (!data && size))
    return flyrt_fail(FLYRT_ERROR_INVALID_VALUE, "flyrtBundleCreateFromMemory: null argument");
  out->ptr = NULL;
  void *bytes = aligned_copy(size ? size : 1);
  if (!bytes)
    return flyrt_fail(FLYRT_ERROR_OUT_OF_MEMORY, "out of memory reading a bundle of %zu bytes",
                      size);
  if (size)
    memcpy(bytes, data, size);
  return adopt(bytes, size, "bundle in memory", out);
}

FlyrtStatus flyrtBundleCreateFromFile(const char *path, FlyrtBundle *out) {
  if (!path || !out)
    return flyrt_fail(FLYRT_ERROR_INVALID_VALUE, "flyrtBundleCreateFromFile: null argument");
  out->ptr = NULL;
  FILE *f = fopen(path, "rb");
  if (!f)
    return flyrt_fail(FLYRT_ERROR_IO, "cannot open '%s': %s", path, strerror(errno));
  struct stat st = {0};
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    int e = errno;
    fclose(f);
    return flyrt_fail(FLYRT_ERROR_IO, "cannot read '%s': %s", path,
                      S_ISDIR(st.st_mode) ? "it is a directory" : strerror(e));
  }
  off_t size = st.st_size;
  if ((uint64_t)size > FLY_BUNDLE_MAX_SIZE) {
    fclose(f);
    return flyrt_fail(FLYRT_ERROR_BAD_BUNDLE, "%s: too large for a bundle (%lld bytes)", path,
                      (long long)size);
  }
  void *bytes = aligned_copy(size ? (size_t)size : 1);
  if (!bytes) {
    fclose(f);
    return flyrt_fail(FLYRT_ERROR_OUT_OF_MEMORY, "out of memory reading '%s'", path);
  }
  size_t got = fread(bytes, 1, (size_t)size, f);
  int e = ferror(f) ? errno : 0;
  fclose(f);
  if (got != (size_t)size) {
    free(bytes);
    return flyrt_fail(FLYRT_ERROR_IO, "cannot read '%s': %s", path,
                      e ? strerror(e) : "it changed while being read");
  }
  return adopt(bytes, (size_t)size, path, out);
}

void flyrt_bundle_retain(Bundle *b) { atomic_fetch_add(&b->refs, 1); }

void flyrt_bundle_release(Bundle *b) {
  if (b && atomic_fetch_sub(&b->refs, 1) == 1) {
    free(b->bytes);
    free(b);
  }
}

void flyrtBundleDestroy(FlyrtBundle b) { flyrt_bundle_release(bundle_of(b)); }

uint32_t flyrtBundleKernelCount(FlyrtBundle h) {
  Bundle *b = bundle_of(h);
  return b ? b->b.nkernels : 0;
}

static const char *image_kind_name(uint32_t kind) {
  switch (kind) {
  case FLY_IMAGE_PTX:
    return "ptx";
  case FLY_IMAGE_CUBIN:
    return "cubin";
  case FLY_IMAGE_HSACO:
    return "hsaco";
  }
  return "unknown";
}

FlyrtStatus flyrtBundleKernelEntry(FlyrtBundle h, uint32_t i, FlyrtKernelEntry *out) {
  Bundle *b = bundle_of(h);
  if (!b || !out)
    return flyrt_fail(FLYRT_ERROR_INVALID_VALUE, "flyrtBundleKernelEntry: null argument");
  if (i >= b->b.nkernels)
    return flyrt_fail(FLYRT_ERROR_INVALID_VALUE,
                      "flyrtBundleKernelEntry: kernel %u of a bundle of %u", i, b->b.nkernels);
  FlyBundleKernel k = fly_bundle_kernel(&b->b, i);
  FlyBundleImage im = fly_bundle_image(&b->b, k.image);
  out->name = fly_bundle_string(&b->b, k.name);
  out->spec = fly_bundle_string(&b->b, k.spec);
  out->target = fly_bundle_string(&b->b, k.target);
  out->image_kind = image_kind_name(im.kind);
  return flyrt_ok();
}

const char *flyrtBundleCompiler(FlyrtBundle h) {
  Bundle *b = bundle_of(h);
  return b ? fly_bundle_string(&b->b, b->b.header.compiler) : "";
}

const char *flyrtBundleSourceHash(FlyrtBundle h) {
  Bundle *b = bundle_of(h);
  return b ? fly_bundle_string(&b->b, b->b.header.source_hash) : "";
}
