/* test_sha256.c — SHA-256 (fly_sha256.h) against the FIPS 180-4 example
 * messages, and the streaming interface: the digest does not depend on how
 * the message is cut into updates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fly_sha256.h"

/* The hex digest of size bytes at data, hashed in one update. */
static void hash_whole(const void *data, size_t size, char hex[65]) {
  FlySha256 s;
  unsigned char digest[32];
  fly_sha256_init(&s);
  fly_sha256_update(&s, data, size);
  fly_sha256_final(&s, digest);
  fly_sha256_hex(digest, hex);
}

static void assert_digest(const char *message, const char *want) {
  char hex[65];
  hash_whole(message, strlen(message), hex);
  assert_string_equal(hex, want);
}

static void empty_message(void **state) {
  (void)state;
  assert_digest("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void abc(void **state) {
  (void)state;
  assert_digest("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

/* 448 bits: the padding no longer fits in the block, so it takes a second. */
static void two_block_message(void **state) {
  (void)state;
  assert_digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

/* 55 and 56 bytes: the last length whose padding fits one block, and the
   first that needs two (checked against an independent implementation). */
static void padding_boundary(void **state) {
  (void)state;
  char text[65];
  memset(text, 'a', 64);
  text[55] = '\0';
  assert_digest(text, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  text[55] = 'a';
  text[56] = '\0';
  assert_digest(text, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  text[56] = 'a';
  text[64] = '\0';
  assert_digest(text, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

/* One million 'a's, fed in pieces of 1 to 997 bytes so that updates start
   and end at every position within a block. */
static void million_a_in_uneven_chunks(void **state) {
  (void)state;
  enum { TOTAL = 1000000 };
  static unsigned char chunk[997];
  memset(chunk, 'a', sizeof chunk);
  FlySha256 s;
  fly_sha256_init(&s);
  size_t done = 0;
  for (size_t piece = 1; done < TOTAL; piece = piece % sizeof chunk + 1) {
    size_t n = TOTAL - done < piece ? TOTAL - done : piece;
    fly_sha256_update(&s, chunk, n);
    done += n;
  }
  unsigned char digest[32];
  char hex[65];
  fly_sha256_final(&s, digest);
  fly_sha256_hex(digest, hex);
  assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* A small deterministic generator, so that a failure can be replayed. */
static uint64_t next_random(uint64_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

/* Random messages of up to 600 bytes, each cut at random points (empty
   pieces included), hash as they do whole. */
static void chunked_equals_whole(void **state) {
  (void)state;
  uint64_t seed = 0x9E3779B97F4A7C15u;
  unsigned char message[600];
  for (int round = 0; round < 500; round++) {
    size_t size = next_random(&seed) % (sizeof message + 1);
    for (size_t i = 0; i < size; i++)
      message[i] = (unsigned char)next_random(&seed);
    char whole[65], pieces[65];
    hash_whole(message, size, whole);
    FlySha256 s;
    unsigned char digest[32];
    fly_sha256_init(&s);
    for (size_t at = 0; at < size;) {
      size_t n = next_random(&seed) % (size - at + 1);
      if (next_random(&seed) % 4 == 0) /* many tiny and empty updates */
        n = next_random(&seed) % (size - at < 3 ? size - at + 1 : 3);
      fly_sha256_update(&s, message + at, n);
      at += n;
    }
    fly_sha256_update(&s, message, 0);
    fly_sha256_final(&s, digest);
    fly_sha256_hex(digest, pieces);
    if (strcmp(whole, pieces) != 0)
      fail_msg("round %d, %zu bytes: whole %s, in pieces %s", round, size, whole, pieces);
  }
}

/* The state is reusable after final and init. */
static void init_again_after_final(void **state) {
  (void)state;
  FlySha256 s;
  unsigned char digest[32];
  char hex[65];
  fly_sha256_init(&s);
  fly_sha256_update(&s, "something else", 14);
  fly_sha256_final(&s, digest);
  fly_sha256_init(&s);
  fly_sha256_update(&s, "abc", 3);
  fly_sha256_final(&s, digest);
  fly_sha256_hex(digest, hex);
  assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(empty_message),
      cmocka_unit_test(abc),
      cmocka_unit_test(two_block_message),
      cmocka_unit_test(padding_boundary),
      cmocka_unit_test(million_a_in_uneven_chunks),
      cmocka_unit_test(chunked_equals_whole),
      cmocka_unit_test(init_again_after_final),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
