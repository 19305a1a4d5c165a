/* test_npy.c — NumPy's .npy files (fly_npy.h): arrays written and read back
 * through files; headers as NumPy writes them in versions 1.0, 2.0 and 3.0;
 * every way a header can be malformed, each with its message; and files
 * cut short or carrying extra bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fly_npy.h"

/* A .npy file of the given version around dict text, without padding
   unless the caller pads, followed by data. */
static size_t make_file(unsigned char *buf, unsigned major, const char *dict, const void *data,
                        size_t data_len) {
  size_t len = strlen(dict), prefix = major == 1 ? 10 : 12;
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (unsigned char)major;
  buf[7] = 0;
  buf[8] = (unsigned char)(len & 0xff);
  buf[9] = (unsigned char)(len >> 8);
  if (major > 1)
    buf[10] = buf[11] = 0;
  memcpy(buf + prefix, dict, len);
  memcpy(buf + prefix + len, data, data_len);
  return prefix + len + data_len;
}

/* A scratch file name of this process. */
static const char *scratch(const char *name) {
  static char path[256];
  snprintf(path, sizeof path, "%s/fly-test-npy-%ld-%s", P_tmpdir, (long)getpid(), name);
  return path;
}

static unsigned char *read_whole(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  static unsigned char buf[1 << 16];
  *n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  return buf;
}

/* ---- round trips ---- */

static void round_trip(const FlyNpyArray *a) {
  char why[512];
  const char *path = scratch("round.npy");
  assert_true(fly_npy_write(path, a, why, sizeof why));
  FlyNpyArray b;
  if (!fly_npy_read(path, &b, why, sizeof why))
    fail_msg("%s", why);
  assert_int_equal(b.kind, a->kind);
  assert_int_equal(b.itemsize, a->itemsize);
  assert_int_equal(b.ndim, a->ndim);
  for (int i = 0; i < a->ndim; i++)
    assert_int_equal(b.shape[i], a->shape[i]);
  assert_memory_equal(b.data, a->data, fly_npy_count(a) * a->itemsize);
  fly_npy_release(&b);
  remove(path);
}

static void round_trip_each_dtype(void **state) {
  (void)state;
  static const struct {
    char kind;
    unsigned size;
  } types[] = {{'b', 1}, {'i', 1}, {'i', 2}, {'i', 4}, {'i', 8}, {'u', 1},
               {'u', 2}, {'u', 4}, {'u', 8}, {'f', 2}, {'f', 4}, {'f', 8}};
  unsigned char data[6 * 8];
  for (size_t i = 0; i < sizeof data; i++)
    data[i] = (unsigned char)(i * 37 + 1);
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    FlyNpyArray a = {.kind = types[t].kind, .itemsize = types[t].size, .ndim = 2, .data = data};
    a.shape[0] = 2;
    a.shape[1] = 3;
    if (a.kind == 'b')
      memset(data, 1, 6);
    round_trip(&a);
  }
}

/* 0-D, 1-D (written "(5,)"), an empty array, and NumPy's 32 dimensions. */
static void round_trip_shapes(void **state) {
  (void)state;
  float v[5] = {1.5f, -2, 0, 3.25f, 1e30f};
  FlyNpyArray a = {.kind = 'f', .itemsize = 4, .ndim = 0, .data = v};
  round_trip(&a);
  a.ndim = 1;
  a.shape[0] = 5;
  round_trip(&a);
  a.ndim = 2;
  a.shape[0] = 0;
  a.shape[1] = 7;
  round_trip(&a);
  a.ndim = FLY_NPY_MAX_DIMS;
  for (int i = 0; i < a.ndim; i++)
    a.shape[i] = 1;
  a.shape[3] = 5;
  round_trip(&a);
}

/* The header is NumPy's, byte for byte, and the data starts at a multiple
   of 64. */
static void writes_numpy_header(void **state) {
  (void)state;
  int32_t v[12] = {0};
  FlyNpyArray a = {.kind = 'i', .itemsize = 4, .ndim = 2, .data = v};
  a.shape[0] = 3;
  a.shape[1] = 4;
  const char *path = scratch("header.npy");
  char why[256];
  assert_true(fly_npy_write(path, &a, why, sizeof why));
  size_t n;
  unsigned char *bytes = read_whole(path, &n);
  const char want[] = "{'descr': '<i4', 'fortran_order': False, 'shape': (3, 4), }";
  assert_int_equal(n, 128 + sizeof v);
  assert_memory_equal(bytes, "\x93NUMPY\x01\x00\x76\x00", 10);
  assert_memory_equal(bytes + 10, want, sizeof want - 1);
  for (size_t i = 10 + sizeof want - 1; i < 127; i++)
    assert_int_equal(bytes[i], ' ');
  assert_int_equal(bytes[127], '\n');
  a.ndim = 1;
  assert_true(fly_npy_write(path, &a, why, sizeof why));
  bytes = read_whole(path, &n);
  assert_true(n > 70 &&
              memcmp(bytes + 10, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", 57) ==
                  0);
  remove(path);
}

/* Versions 2.0 and 3.0 (4-byte length, UTF-8 allowed) and the freedoms of
   the dict: any key order, double quotes, blanks, no trailing comma. */
static void reads_versions_and_spellings(void **state) {
  (void)state;
  static const char *const dicts[] = {
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }    \n",
      "{\"shape\":(2,),\"fortran_order\":False,\"descr\":\"<f4\"}",
      "{ 'fortran_order' : False , 'shape' : ( 2 , ) , 'descr' : '=f4' }\n",
  };
  float v[2] = {1, 2};
  unsigned char buf[512];
  char why[256];
  for (unsigned major = 1; major <= 3; major++)
    for (size_t d = 0; d < sizeof dicts / sizeof dicts[0]; d++) {
      size_t n = make_file(buf, major, dicts[d], v, sizeof v);
      FlyNpyArray a;
      if (!fly_npy_decode(buf, n, &a, why, sizeof why))
        fail_msg("version %u, dict %zu: %s", major, d, why);
      assert_int_equal(a.kind, 'f');
      assert_int_equal(a.ndim, 1);
      assert_int_equal(a.shape[0], 2);
      assert_memory_equal(a.data, v, sizeof v);
      fly_npy_release(&a);
    }
}

/* ---- malformed headers ---- */

static void assert_refused(const char *dict, const char *message) {
  unsigned char buf[1024];
  char why[512];
  size_t n = make_file(buf, 1, dict, "", 0);
  FlyNpyArray a;
  assert_false(fly_npy_decode(buf, n, &a, why, sizeof why));
  assert_string_equal(why, message);
  assert_null(a.data);
}

static void refuses_malformed_dicts(void **state) {
  (void)state;
  assert_refused("", "malformed .npy header: expected '{' at byte 10, found the end of the header");
  assert_refused("['descr']", "malformed .npy header: expected '{' at byte 10, found '['");
  assert_refused("{'descr': '<f4' 'shape': (1,)}",
                 "malformed .npy header: expected ',' or '}' at byte 26, found '''");
  assert_refused("{'descr' '<f4'}", "malformed .npy header: expected ':' at byte 19, found '''");
  assert_refused("{descr: '<f4'}",
                 "malformed .npy header: expected a quoted string at byte 11, found 'd'");
  assert_refused("{'descr: '<f4'}", "malformed .npy header: expected ':' at byte 20, found '<'");
  assert_refused("{'descr", "malformed .npy header: expected the end of the string at byte 17, "
                            "found the end of the header");
  assert_refused("{'de\\'scr': 1}",
                 "malformed .npy header: expected the end of the string at byte 14, found '\\'");
  assert_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x",
                 "malformed .npy header: expected the end of the header after its '}' at byte "
                 "66, found 'x'");
  assert_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)",
                 "malformed .npy header: expected ',' or '}' at byte 64, found the end of the "
                 "header");
  assert_refused("{\x01}", "malformed .npy header: expected a quoted string at byte 11, found "
                           "byte 0x01");
}

static void refuses_bad_keys(void **state) {
  (void)state;
  assert_refused("{'descr': '<f4', 'shape': (1,)}", "the .npy header has no 'fortran_order'");
  assert_refused("{'fortran_order': False, 'shape': (1,)}", "the .npy header has no 'descr'");
  assert_refused("{'descr': '<f4', 'fortran_order': False}", "the .npy header has no 'shape'");
  assert_refused("{}", "the .npy header has no 'descr'");
  assert_refused("{'descr': '<f4', 'descr': '<f4'}", "the .npy header gives 'descr' twice");
  assert_refused("{'descr': '<f4', 'order': 'C'}",
                 "the .npy header has the key 'order' (it takes 'descr', 'fortran_order' and "
                 "'shape')");
}

static void refuses_bad_values(void **state) {
  (void)state;
  const char *bad_shape = "the .npy header's 'shape' is not a tuple of non-negative integers, "
                          "such as (3, 4) or (3,)";
  assert_refused("{'shape': (3)}", bad_shape); /* a number in Python, not a tuple */
  assert_refused("{'shape': 3}", bad_shape);
  assert_refused("{'shape': [3]}", bad_shape);
  assert_refused("{'shape': (-1,)}", bad_shape);
  assert_refused("{'shape': (3, 'a')}", bad_shape);
  assert_refused("{'shape': (3 4)}", bad_shape);
  assert_refused("{'shape': (99999999999999999999,)}", bad_shape);
  assert_refused("{'shape': (,)}", bad_shape);
  assert_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4)}",
                 "the .npy array's shape holds more bytes than can be addressed");
  assert_refused("{'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)}",
                 "the .npy array has more than 32 dimensions");
  assert_refused("{'fortran_order': 0}", "the .npy header's 'fortran_order' is not True or False");
  assert_refused("{'fortran_order': True}",
                 "the .npy array is in Fortran order (fortran_order is True): save it in C "
                 "order, with np.ascontiguousarray(arr)");
  assert_refused("{'descr': [('x', '<f4')]}",
                 "the .npy header's 'descr' is not a string such as '<f4' (structured dtypes "
                 "are not supported)");
  assert_refused("{'descr': '>f4'}", "the .npy data is big-endian ('>f4'): save it "
                                     "little-endian, with arr.astype(arr.dtype.newbyteorder('<'))");
  const char *kinds = "(bool, integers and floats are: b1, i1 to i8, u1 to u8, f2, f4, f8)";
  char message[256];
  static const char *const unsupported[] = {"<c8", "<f16", "<U3", "|O",
                                            "<V2", "<i3",  "",    "<M8[ns]"};
  for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++) {
    char dict[64];
    snprintf(dict, sizeof dict, "{'descr': '%s'}", unsupported[i]);
    snprintf(message, sizeof message, "the .npy dtype '%s' is not supported %s", unsupported[i],
             kinds);
    assert_refused(dict, message);
  }
}

/* ---- the prefix, truncation, extra bytes ---- */

static void assert_decode_fails(const void *bytes, size_t n, const char *message) {
  char why[512];
  FlyNpyArray a;
  assert_false(fly_npy_decode(bytes, n, &a, why, sizeof why));
  assert_string_equal(why, message);
}

static void refuses_bad_prefix(void **state) {
  (void)state;
  assert_decode_fails("", 0, "not a .npy file: it is empty");
  assert_decode_fails("PK\x03\x04", 4, "not a .npy file (it does not start with \\x93NUMPY)");
  assert_decode_fails("\x93NUMPX\x01\x00", 8,
                      "not a .npy file (it does not start with \\x93NUMPY)");
  assert_decode_fails("\x93NUM", 4, "truncated .npy file: its header needs 10 bytes, and it has 4");
  assert_decode_fails("\x93NUMPY\x01\x00\x10", 9,
                      "truncated .npy file: its header needs 10 bytes, and it has 9");
  assert_decode_fails("\x93NUMPY\x02\x00\x10\x00", 10,
                      "truncated .npy file: its header needs 12 bytes, and it has 10");
  assert_decode_fails("\x93NUMPY\x01\x00\x10\x00{}", 12,
                      "truncated .npy file: its header needs 26 bytes, and it has 12");
  assert_decode_fails("\x93NUMPY\x04\x00\x10\x00", 10,
                      "the .npy file is of format version 4.0 (versions 1.0, 2.0 and 3.0 are "
                      "read)");
  assert_decode_fails("\x93NUMPY\x01\x01\x10\x00", 10,
                      "the .npy file is of format version 1.1 (versions 1.0, 2.0 and 3.0 are "
                      "read)");
}

/* Data shorter or longer than the header says, in memory and in files
   (which are read in two steps: the header, then the data). */
static void refuses_wrong_data_length(void **state) {
  (void)state;
  unsigned char buf[512];
  const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }\n";
  float v[13] = {0};
  size_t full = make_file(buf, 1, dict, v, 48);
  FlyNpyArray a;
  char why[512];
  assert_true(fly_npy_decode(buf, full, &a, why, sizeof why));
  fly_npy_release(&a);
  assert_decode_fails(buf, full - 1,
                      "truncated .npy data: the header says 48 bytes (3x4 of <f4), and the file "
                      "has 47");
  size_t longer = make_file(buf, 1, dict, v, 52);
  assert_decode_fails(buf, longer,
                      "the .npy file has 4 bytes after the 48 of its data (3x4 of <f4)");
  const char *path = scratch("cut.npy");
  for (size_t cut = 0; cut < full; cut += 7) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fwrite(buf, 1, cut, f);
    fclose(f);
    assert_false(fly_npy_read(path, &a, why, sizeof why));
    assert_null(a.data);
  }
  FILE *f = fopen(path, "wb");
  fwrite(buf, 1, longer, f);
  fclose(f);
  assert_false(fly_npy_read(path, &a, why, sizeof why));
  assert_string_equal(why, "the .npy file has 4 bytes after the 48 of its data (3x4 of <f4)");
  f = fopen(path, "wb");
  fwrite(buf, 1, full - 10, f);
  fclose(f);
  assert_false(fly_npy_read(path, &a, why, sizeof why));
  assert_string_equal(why, "truncated .npy data: the header says 48 bytes (3x4 of <f4), and the "
                           "file has 38");
  f = fopen(path, "wb");
  fwrite(buf, 1, 40, f);
  fclose(f);
  assert_false(fly_npy_read(path, &a, why, sizeof why));
  assert_string_equal(why, "truncated .npy file: its header needs 70 bytes, and it has 40");
  remove(path);
}

/* A header may claim any size: nothing is allocated for what the file does
   not hold. (Before, the claimed size was allocated first: an ASan
   allocation-size-too-big, or "out of memory" for a file of 128 bytes.) */
static void claims_more_than_the_file_holds(void **state) {
  (void)state;
  unsigned char buf[512];
  const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999,), }\n";
  float v[2] = {1, 2};
  size_t n = make_file(buf, 1, dict, v, sizeof v);
  const char *want = "truncated .npy data: the header says 399999999999996 bytes (99999999999999 "
                     "of <f4), and the file has 8";
  const char *path = scratch("huge.npy");
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fwrite(buf, 1, n, f);
  fclose(f);
  FlyNpyArray a;
  char why[512];
  assert_false(fly_npy_read(path, &a, why, sizeof why));
  assert_string_equal(why, want);
  assert_null(a.data);
  /* A stream's length is known only by reading it: the same message. */
  f = fmemopen(buf, n, "rb");
  assert_non_null(f);
  assert_false(fly_npy_read_stream(f, &a, why, sizeof why));
  fclose(f);
  assert_string_equal(why, want);
  remove(path);
}

/* A version 2.0 header's 4-byte length may claim 4 GiB of header. */
static void header_claims_more_than_the_file_holds(void **state) {
  (void)state;
  unsigned char buf[64] = "\x93NUMPY\x02\x00\xf0\xff\xff\xff{'descr': '<f4'";
  size_t n = 12 + strlen("{'descr': '<f4'");
  FlyNpyArray a;
  char why[512];
  FILE *f = fmemopen(buf, n, "rb");
  assert_non_null(f);
  assert_false(fly_npy_read_stream(f, &a, why, sizeof why));
  fclose(f);
  assert_string_equal(why, "truncated .npy file: its header needs 4294967292 bytes, and it has 27");
}

/* ---- files ---- */

static void file_errors(void **state) {
  (void)state;
  char why[512];
  FlyNpyArray a;
  assert_false(fly_npy_read(scratch("missing.npy"), &a, why, sizeof why));
  assert_string_equal(why, "No such file or directory");
  float v = 1;
  FlyNpyArray b = {.kind = 'f', .itemsize = 4, .ndim = 0, .data = &v};
  char path[300];
  snprintf(path, sizeof path, "%s/no-such-dir/x.npy", scratch("d"));
  assert_false(fly_npy_write(path, &b, why, sizeof why));
  assert_non_null(strstr(why, "No such file or directory"));
  b.kind = 'c';
  assert_false(fly_npy_write(scratch("c.npy"), &b, why, sizeof why));
  assert_non_null(strstr(why, "not an array of a .npy dtype"));
}

/* A failed write leaves the old file as it was, and no temporary file. */
static void write_is_atomic(void **state) {
  (void)state;
  const char *path = scratch("keep.npy");
  FILE *f = fopen(path, "wb");
  fputs("old", f);
  fclose(f);
  FlyNpyArray bad = {.kind = 'x', .itemsize = 4};
  char why[256];
  assert_false(fly_npy_write(path, &bad, why, sizeof why));
  size_t n;
  unsigned char *bytes = read_whole(path, &n);
  assert_int_equal(n, 3);
  assert_memory_equal(bytes, "old", 3);
  char tmp[300];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  assert_int_not_equal(access(tmp, F_OK), 0);
  /* /dev/null is written in place, not replaced. */
  float v = 1;
  FlyNpyArray a = {.kind = 'f', .itemsize = 4, .ndim = 0, .data = &v};
  assert_true(fly_npy_write("/dev/null", &a, why, sizeof why));
  remove(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(round_trip_each_dtype),
      cmocka_unit_test(round_trip_shapes),
      cmocka_unit_test(writes_numpy_header),
      cmocka_unit_test(reads_versions_and_spellings),
      cmocka_unit_test(refuses_malformed_dicts),
      cmocka_unit_test(refuses_bad_keys),
      cmocka_unit_test(refuses_bad_values),
      cmocka_unit_test(refuses_bad_prefix),
      cmocka_unit_test(refuses_wrong_data_length),
      cmocka_unit_test(file_errors),
      cmocka_unit_test(write_is_atomic),
      cmocka_unit_test(claims_more_than_the_file_holds),
      cmocka_unit_test(header_claims_more_than_the_file_holds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
