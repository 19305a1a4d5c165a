/* fly_sha256.h — SHA-256 (FIPS 180-4), for the source hash a bundle records.
 *
 * Streaming: init, any number of updates with pieces of the message, then
 * final. The digest is the same however the message is cut into pieces. */
#ifndef FLY_SHA256_H
#define FLY_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct FlySha256 {
  uint32_t state[8];       /* H0..H7, the running hash value */
  uint64_t length;         /* message bytes seen so far */
  unsigned char block[64]; /* a partial block, waiting for more input */
  size_t used;             /* its bytes */
} FlySha256;

void fly_sha256_init(FlySha256 *s);
void fly_sha256_update(FlySha256 *s, const void *data, size_t size);
/* Pads the message, writes the 32-byte digest and clears s; s must be
   initialised again before it hashes another message. */
void fly_sha256_final(FlySha256 *s, unsigned char out[32]);
/* The digest as 64 lower-case hex digits and a NUL. */
void fly_sha256_hex(const unsigned char digest[32], char out[65]);

#endif
