/* test_output.c — files written whole or not at all (fly_output.h): every
 * write, the flush and the close checked, the destination replaced only by
 * a complete file, the temporary file removed on every failure, and the
 * cause named. A file system that fills up is stood for by /dev/full and by
 * a file size limit (RLIMIT_FSIZE), which needs no privileges. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fly_output.h"

static const char *scratch(const char *name) {
  static char path[256];
  snprintf(path, sizeof path, "%s/fly-test-output-%ld-%s", P_tmpdir, (long)getpid(), name);
  return path;
}

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

static void assert_holds(const char *path, const char *text) {
  char buf[64] = "";
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  assert_string_equal(buf, text);
}

static void assert_no_temporary(const char *path) {
  char tmp[300];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  assert_int_not_equal(access(tmp, F_OK), 0);
}

static void replaces_when_complete(void **state) {
  (void)state;
  const char *path = scratch("whole");
  put(path, "old");
  char why[512];
  assert_true(fly_output_file(path, "new", 3, why, sizeof why));
  assert_holds(path, "new");
  assert_no_temporary(path);
  remove(path);
}

/* A caller that fails keeps the old file; the temporary one goes. */
static void abandoned_output_leaves_the_old_file(void **state) {
  (void)state;
  const char *path = scratch("abandoned");
  put(path, "old");
  FlyOutput o;
  char why[512] = "";
  assert_true(fly_output_open(&o, path, why, sizeof why));
  assert_true(fly_output_write(&o, "half", 4));
  assert_false(fly_output_close(&o, false, why, sizeof why));
  assert_string_equal(why, "");
  assert_holds(path, "old");
  assert_no_temporary(path);
  remove(path);
}

/* A device is written in place, and what it refuses is an error. */
static void full_device(void **state) {
  (void)state;
  char why[512];
  assert_true(fly_output_file("/dev/null", "x", 1, why, sizeof why));
  assert_false(fly_output_file("/dev/full", "x", 1, why, sizeof why));
  assert_string_equal(why, "cannot write '/dev/full': No space left on device");
  /* More than a stdio buffer: the write itself fails, the cause is kept. */
  size_t n = 1 << 20;
  char *big = calloc(n, 1);
  assert_non_null(big);
  assert_false(fly_output_file("/dev/full", big, n, why, sizeof why));
  assert_string_equal(why, "cannot write '/dev/full': No space left on device");
  free(big);
}

/* A file system too small for the output: writes past a file size limit
   fail (with SIGXFSZ ignored, as EFBIG). The old file stays whole. */
static void file_system_too_small(void **state) {
  (void)state;
  const char *path = scratch("small");
  put(path, "old");
  struct rlimit saved, small;
  assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
  small = saved;
  small.rlim_cur = 4096;
  void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
  size_t n = 3 * 4096;
  char *big = calloc(n, 1);
  char why[512];
  bool ok = big && fly_output_file(path, big, n, why, sizeof why);
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, was);
  free(big);
  assert_false(ok);
  char want[600];
  snprintf(want, sizeof want, "cannot write '%s': File too large", path);
  assert_string_equal(why, want);
  assert_holds(path, "old");
  assert_no_temporary(path);
  remove(path);
}

static void cannot_open(void **state) {
  (void)state;
  char why[512], path[300];
  snprintf(path, sizeof path, "%s/no-such-dir/x", scratch("d"));
  assert_false(fly_output_file(path, "x", 1, why, sizeof why));
  assert_non_null(strstr(why, "No such file or directory"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(replaces_when_complete),
      cmocka_unit_test(abandoned_output_leaves_the_old_file),
      cmocka_unit_test(full_device),
      cmocka_unit_test(file_system_too_small),
      cmocka_unit_test(cannot_open),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
