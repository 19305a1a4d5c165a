/* fuzz_npy.c — libFuzzer entry for the .npy reader of `flyc run`
 * (frontend/driver/fly_npy.h).
 *
 * Any bytes must be read or refused with a message, never crash, leak or
 * allocate what the file does not hold: a header may claim any shape, and
 * libFuzzer's malloc limit turns an allocation of the claimed size into a
 * failure. Each input is read three ways: decoded in memory, from a file
 * (whose size is checked against the header) and from a stream (read as it
 * comes). The three agree, and an array that reads writes back and reads
 * again to the same array. */
#define _GNU_SOURCE /* memfd_create */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fly_npy.h"

static void broken(const char *why) __attribute__((noreturn));
static void broken(const char *why) {
  fprintf(stderr, "fuzz_npy: %s\n", why);
  abort();
}

/* The input as a file of its own (an anonymous one, in memory). */
static FILE *as_file(const unsigned char *data, size_t size) {
  int fd = memfd_create("fuzz.npy", MFD_CLOEXEC);
  if (fd < 0)
    return NULL;
  if ((size && write(fd, data, size) != (ssize_t)size) || lseek(fd, 0, SEEK_SET) != 0) {
    close(fd);
    return NULL;
  }
  FILE *f = fdopen(fd, "rb");
  if (!f)
    close(fd);
  return f;
}

static bool read_from(FILE *f, FlyNpyArray *a, char *why, size_t n) {
  if (!f)
    broken("cannot make a stream of the input");
  bool ok = fly_npy_read_stream(f, a, why, n);
  fclose(f);
  if (!ok && !why[0])
    broken("a refusal without a message");
  return ok;
}

static bool same(const FlyNpyArray *a, const FlyNpyArray *b) {
  return a->kind == b->kind && a->itemsize == b->itemsize && a->ndim == b->ndim &&
         memcmp(a->shape, b->shape, sizeof a->shape[0] * (size_t)a->ndim) == 0 &&
         memcmp(a->data, b->data, (size_t)(fly_npy_count(a) * a->itemsize)) == 0;
}

/* Written back through a file and read again: the same array. */
static void round_trip(const FlyNpyArray *a) {
  char path[64], why[512];
  snprintf(path, sizeof path, "/tmp/fuzz-npy-%ld.npy", (long)getpid());
  FlyNpyArray b;
  if (!fly_npy_write(path, a, why, sizeof why) || !fly_npy_read(path, &b, why, sizeof why))
    broken(why);
  if (!same(a, &b))
    broken("an array written and read back differs");
  fly_npy_release(&b);
  remove(path);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  FlyNpyArray m, f, s;
  char why[512] = "", why_f[512] = "", why_s[512] = "";
  bool ok = fly_npy_decode(data, size, &m, why, sizeof why);
  if (!ok && !why[0])
    broken("a refusal without a message");
  bool ok_f = read_from(as_file(data, size), &f, why_f, sizeof why_f);
  /* (fmemopen refuses an empty buffer; /dev/null is an empty stream.) */
  FILE *stream = size ? fmemopen((void *)data, size, "rb") : fopen("/dev/null", "rb");
  bool ok_s = read_from(stream, &s, why_s, sizeof why_s);
  if (ok != ok_f || ok != ok_s)
    broken("memory, file and stream disagree on whether the input is an array");
  if (ok && !(same(&m, &f) && same(&m, &s)))
    broken("memory, file and stream read different arrays");
  if (!ok && (strcmp(why, why_f) != 0 || strcmp(why, why_s) != 0))
    broken("memory, file and stream refuse the input for different reasons");
  if (ok && fly_npy_count(&m) < 4096)
    round_trip(&m);
  if (ok) {
    fly_npy_release(&m);
    fly_npy_release(&f);
    fly_npy_release(&s);
  }
  return 0;
}
