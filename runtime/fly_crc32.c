/* fly_crc32.c — CRC-32 of the bundle checksum, the same as zlib's crc32(),
 * so any tool (Python's zlib.crc32) can check a bundle. */
#include "fly_bundle.h"

/* The table of the reflected polynomial 0xEDB88320, built at compile time
   by the usual eight shifts per byte. */
#define FLY_CRC_STEP(c) (((c)&1) ? 0xEDB88320u ^ ((c) >> 1) : (c) >> 1)
#define FLY_CRC_8(c)                                                                               \
  FLY_CRC_STEP(FLY_CRC_STEP(FLY_CRC_STEP(                                                          \
      FLY_CRC_STEP(FLY_CRC_STEP(FLY_CRC_STEP(FLY_CRC_STEP(FLY_CRC_STEP((uint32_t)(c)))))))))
#define FLY_CRC_4(n) FLY_CRC_8(n), FLY_CRC_8(n + 1), FLY_CRC_8(n + 2), FLY_CRC_8(n + 3)
#define FLY_CRC_16(n) FLY_CRC_4(n), FLY_CRC_4(n + 4), FLY_CRC_4(n + 8), FLY_CRC_4(n + 12)
#define FLY_CRC_64(n) FLY_CRC_16(n), FLY_CRC_16(n + 16), FLY_CRC_16(n + 32), FLY_CRC_16(n + 48)

static const uint32_t crc_table[256] = {FLY_CRC_64(0), FLY_CRC_64(64), FLY_CRC_64(128),
                                        FLY_CRC_64(192)};

uint32_t fly_crc32(uint32_t crc, const void *data, size_t size) {
  const unsigned char *p = data;
  crc = ~crc;
  for (size_t i = 0; i < size; i++)
    crc = crc_table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}
