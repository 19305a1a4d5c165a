/* fly_sha256.c — SHA-256 as FIPS 180-4 specifies it (sections 4.1.2, 4.2.2,
 * 5.1.1, 5.3.3 and 6.2): 64-byte blocks, big-endian words, a length in bits
 * at the end of the padding. */
#include "fly_sha256.h"

#include <string.h>

/* The first 32 bits of the fractional parts of the cube roots of the first
   64 primes (4.2.2). */
static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

/* The functions of 4.1.2. */
static uint32_t ch(uint32_t x, uint32_t y, uint32_t z) { return (x & y) ^ (~x & z); }
static uint32_t maj(uint32_t x, uint32_t y, uint32_t z) { return (x & y) ^ (x & z) ^ (y & z); }
static uint32_t big_sigma0(uint32_t x) { return rotr(x, 2) ^ rotr(x, 13) ^ rotr(x, 22); }
static uint32_t big_sigma1(uint32_t x) { return rotr(x, 6) ^ rotr(x, 11) ^ rotr(x, 25); }
static uint32_t small_sigma0(uint32_t x) { return rotr(x, 7) ^ rotr(x, 18) ^ (x >> 3); }
static uint32_t small_sigma1(uint32_t x) { return rotr(x, 17) ^ rotr(x, 19) ^ (x >> 10); }

static uint32_t load_be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void store_be32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)(v >> 24);
  p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8);
  p[3] = (unsigned char)v;
}

/* One block of the hash computation (6.2.2). */
static void compress(uint32_t H[8], const unsigned char block[64]) {
  uint32_t W[64];
  for (int t = 0; t < 16; t++)
    W[t] = load_be32(block + 4 * t);
  for (int t = 16; t < 64; t++)
    W[t] = small_sigma1(W[t - 2]) + W[t - 7] + small_sigma0(W[t - 15]) + W[t - 16];
  uint32_t a = H[0], b = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7];
  for (int t = 0; t < 64; t++) {
    uint32_t t1 = h + big_sigma1(e) + ch(e, f, g) + K[t] + W[t];
    uint32_t t2 = big_sigma0(a) + maj(a, b, c);
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  H[0] += a;
  H[1] += b;
  H[2] += c;
  H[3] += d;
  H[4] += e;
  H[5] += f;
  H[6] += g;
  H[7] += h;
}

void fly_sha256_init(FlySha256 *s) {
  /* The initial hash value (5.3.3): the first 32 bits of the fractional
     parts of the square roots of the first 8 primes. */
  static const uint32_t H0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(s->state, H0, sizeof H0);
  s->length = 0;
  s->used = 0;
}

void fly_sha256_update(FlySha256 *s, const void *data, size_t size) {
  const unsigned char *p = data;
  s->length += size;
  /* Top up a partial block first, then hash whole blocks straight from the
     input, and keep what is left for the next call. */
  if (s->used) {
    size_t take = 64 - s->used < size ? 64 - s->used : size;
    memcpy(s->block + s->used, p, take);
    s->used += take;
    p += take;
    size -= take;
    if (s->used < 64)
      return;
    compress(s->state, s->block);
    s->used = 0;
  }
  for (; size >= 64; p += 64, size -= 64)
    compress(s->state, p);
  memcpy(s->block, p, size);
  s->used = size;
}

void fly_sha256_final(FlySha256 *s, unsigned char out[32]) {
  /* Padding (5.1.1): a 1 bit, zeros up to 56 bytes into a block, then the
     message length in bits as a 64-bit big-endian number. */
  uint64_t bits = s->length * 8;
  s->block[s->used++] = 0x80;
  if (s->used > 56) {
    memset(s->block + s->used, 0, 64 - s->used);
    compress(s->state, s->block);
    s->used = 0;
  }
  memset(s->block + s->used, 0, 56 - s->used);
  store_be32(s->block + 56, (uint32_t)(bits >> 32));
  store_be32(s->block + 60, (uint32_t)bits);
  compress(s->state, s->block);
  for (int i = 0; i < 8; i++)
    store_be32(out + 4 * i, s->state[i]);
  memset(s, 0, sizeof *s); /* nothing of the message stays behind */
}

void fly_sha256_hex(const unsigned char digest[32], char out[65]) {
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < 32; i++) {
    out[2 * i] = digits[digest[i] >> 4];
    out[2 * i + 1] = digits[digest[i] & 15];
  }
  out[64] = '\0';
}
