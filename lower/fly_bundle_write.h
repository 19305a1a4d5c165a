/* fly_bundle_write.h — writing a bundle (runtime/fly_bundle.h).
 *
 * A writer collects images, kernel records (from the semantic pass's
 * FlyKernelInfo) and whole bundles to merge, then lays them out as the
 * format says and seals the result with its checksum. Plain C: the driver
 * uses it to merge bundles without loading the compiler's back end. */
#ifndef FLY_BUNDLE_WRITE_H
#define FLY_BUNDLE_WRITE_H

#include <stdbool.h>
#include <stddef.h>

#include "fly_bundle.h"
#include "fly_kernel_info.h"

typedef struct FlyBundleWriter {
  FlyBundleKernel *kernels;
  FlyBundleParam *params;
  FlyBundleTensorMap *tmaps;
  FlyBundleInsn *code;
  FlyBundleImage *images;
  uint32_t nkernels, nparams, ninsns, nimages, ntmaps;
  uint32_t kernels_cap, params_cap, code_cap, images_cap, tmaps_cap;
  char *strings;
  size_t strings_len, strings_cap;
  unsigned char *data;
  size_t data_len, data_cap;
  bool failed; /* out of memory, or a limit of the format */
} FlyBundleWriter;

void fly_bundle_writer_init(FlyBundleWriter *w);
void fly_bundle_writer_release(FlyBundleWriter *w);

/* Adds an image; returns its index. */
uint32_t fly_bundle_writer_image(FlyBundleWriter *w, const char *target, uint32_t kind,
                                 const void *bytes, size_t size);
/* Adds a kernel specialisation found in image `image` under `symbol`. */
void fly_bundle_writer_kernel(FlyBundleWriter *w, const FlyKernelInfo *k, uint32_t image,
                              const char *symbol);
/* Adds every image and kernel of a checked bundle. */
void fly_bundle_writer_merge(FlyBundleWriter *w, const FlyBundle *b);

/* The finished bundle (malloc'd; *size its length), or NULL when out of
   memory. compiler, toolchain and source_hash fill the header's strings. */
void *fly_bundle_writer_finish(FlyBundleWriter *w, const char *compiler, const char *toolchain,
                               const char *source_hash, size_t *size);

#endif
