/* fuzz_bundle_repair.h — what the bundle fuzz targets share: a random
 * change almost never survives a bundle's checksum, so each input is also
 * tried with its file size and checksum set to what they should be, which
 * lets mutations reach the checks behind the checksum. */
#ifndef FUZZ_BUNDLE_REPAIR_H
#define FUZZ_BUNDLE_REPAIR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fly_bundle.h"

/* Sets the header's size and checksum of the size bytes at p (at least a
   header's worth) to match them. */
static inline void fuzz_repair_bundle(unsigned char *p, size_t size) {
  uint64_t file_size = size;
  memcpy(p + offsetof(FlyBundleHeader, file_size), &file_size, 8);
  memset(p + offsetof(FlyBundleHeader, checksum), 0, 4);
  uint32_t crc = fly_crc32(0, p, size);
  memcpy(p + offsetof(FlyBundleHeader, checksum), &crc, 4);
}

#endif
