/* test_source.c — the source manager (fly_source.h): adding and loading
 * files, the size limit, finding a file by its canonical path, and mapping
 * byte offsets to 1-based lines and columns and to the text of their line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fly_source.h"

static FlySourceManager sm;

static int setup(void **state) {
  (void)state;
  fly_sources_init(&sm);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  fly_sources_release(&sm);
  return 0;
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* Adds text (a C string) under a name and returns its index. */
static int add(const char *text) {
  char err[128] = "";
  int file = fly_sources_add(&sm, "test.fly", text, strlen(text), err, sizeof err);
  if (file < 0)
    fail_msg("fly_sources_add: %s", err);
  return file;
}

/* offset maps to line:col. */
#define assert_line_col(file, offset, want_line, want_col)                                         \
  do {                                                                                             \
    uint32_t line_ = 99, col_ = 99;                                                                \
    fly_source_line_col(&sm, (file), (offset), &line_, &col_);                                     \
    if (line_ != (want_line) || col_ != (want_col))                                                \
      fail_msg("offset %u: want %u:%u, got %u:%u", (unsigned)(offset), (unsigned)(want_line),      \
               (unsigned)(want_col), line_, col_);                                                 \
  } while (0)

/* The line holding offset reads want (without its line ending). */
#define assert_line_text(file, offset, want)                                                       \
  do {                                                                                             \
    const char *text_ = NULL;                                                                      \
    uint32_t len_ = 99;                                                                            \
    fly_source_line_text(&sm, (file), (offset), &text_, &len_);                                    \
    if (len_ != strlen(want) || memcmp(text_, (want), len_) != 0)                                  \
      fail_msg("offset %u: want line \"%s\", got \"%.*s\"", (unsigned)(offset), (want), (int)len_, \
               text_);                                                                             \
  } while (0)

/* ---- adding text -------------------------------------------------------- */

static void add_copies_and_terminates(void **state) {
  (void)state;
  char text[] = "abc";
  int file = add(text);
  text[0] = 'X'; /* the manager holds its own copy */
  const FlySource *f = fly_source(&sm, file);
  assert_non_null(f);
  assert_int_equal(f->len, 3);
  assert_string_equal(f->text, "abc"); /* NUL-terminated: the lexer's sentinel */
  assert_string_equal(f->path, "test.fly");
  assert_null(f->real); /* memory has no canonical path */
}

static void add_keeps_embedded_nul(void **state) {
  (void)state;
  char err[64];
  int file = fly_sources_add(&sm, "nul.fly", "a\0b", 3, err, sizeof err);
  assert_int_equal(file, 0);
  const FlySource *f = fly_source(&sm, file);
  assert_int_equal(f->len, 3);
  assert_memory_equal(f->text, "a\0b\0", 4);
}

static void indices_count_up(void **state) {
  (void)state;
  for (int i = 0; i < 20; i++) /* past the first growth of the table */
    assert_int_equal(add("x"), i);
  assert_int_equal(sm.count, 20);
  assert_null(fly_source(&sm, 20));
  assert_null(fly_source(&sm, -1));
  assert_non_null(fly_source(&sm, 19));
}

static void add_over_the_size_limit(void **state) {
  (void)state;
  /* Refused before a byte is read, so the buffer need not be filled. */
  char *big = malloc(FLY_SOURCE_MAX_BYTES + 1);
  assert_non_null(big);
  char err[128] = "";
  assert_int_equal(fly_sources_add(&sm, "big.fly", big, FLY_SOURCE_MAX_BYTES + 1, err, sizeof err),
                   -1);
  assert_string_equal(err, "file is too large (limit is 64 MiB)");
  assert_int_equal(sm.count, 0);
  /* Exactly the limit is accepted. */
  memset(big, 'x', FLY_SOURCE_MAX_BYTES);
  assert_int_equal(fly_sources_add(&sm, "max.fly", big, FLY_SOURCE_MAX_BYTES, err, sizeof err), 0);
  assert_int_equal(fly_source(&sm, 0)->len, FLY_SOURCE_MAX_BYTES);
  free(big);
}

static void error_buffer_is_optional_and_bounded(void **state) {
  (void)state;
  char *big = malloc(FLY_SOURCE_MAX_BYTES + 1);
  assert_non_null(big);
  char small[8];
  memset(small, '#', sizeof small);
  assert_int_equal(fly_sources_add(&sm, "big.fly", big, FLY_SOURCE_MAX_BYTES + 1, small, 8), -1);
  assert_string_equal(small, "file is"); /* truncated, still terminated */
  assert_int_equal(fly_sources_add(&sm, "big.fly", big, FLY_SOURCE_MAX_BYTES + 1, NULL, 0), -1);
  assert_int_equal(sm.count, 0);
  free(big);
}

/* ---- loading files ------------------------------------------------------ */

/* A temporary file holding text; its path goes in path (size PATH_SIZE). */
enum { PATH_SIZE = 64 };
static void temp_file(char *path, const char *text) {
  snprintf(path, PATH_SIZE, "/tmp/fly-test-source-XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  size_t len = strlen(text);
  assert_int_equal(write(fd, text, len), (ssize_t)len);
  close(fd);
}

static void load_and_find_real(void **state) {
  (void)state;
  char a[PATH_SIZE], b[PATH_SIZE], err[128];
  temp_file(a, "const A = 1;\n");
  temp_file(b, "const B = 2;\n");
  add("memory");
  int fa = fly_sources_load(&sm, a, err, sizeof err);
  int fb = fly_sources_load(&sm, b, err, sizeof err);
  assert_int_equal(fa, 1);
  assert_int_equal(fb, 2);
  const FlySource *src = fly_source(&sm, fa);
  assert_string_equal(src->path, a);
  assert_string_equal(src->text, "const A = 1;\n");
  assert_int_equal(src->len, 13);
  assert_non_null(src->real);

  char *real_a = realpath(a, NULL), *real_b = realpath(b, NULL);
  assert_int_equal(fly_sources_find_real(&sm, real_a), fa);
  assert_int_equal(fly_sources_find_real(&sm, real_b), fb);
  assert_int_equal(fly_sources_find_real(&sm, "/no/such/file.fly"), -1);
  /* Text added from memory has no canonical path and is never found. */
  assert_int_equal(fly_sources_find_real(&sm, "test.fly"), -1);
  assert_int_equal(fly_sources_find_real(&sm, ""), -1);
  free(real_a);
  free(real_b);
  unlink(a);
  unlink(b);
}

static void find_real_in_empty_manager(void **state) {
  (void)state;
  assert_int_equal(fly_sources_find_real(&sm, "/tmp/x.fly"), -1);
}

static void load_missing_file(void **state) {
  (void)state;
  char err[128] = "";
  assert_int_equal(fly_sources_load(&sm, "/no/such/dir/file.fly", err, sizeof err), -1);
  assert_string_equal(err, "No such file or directory");
  assert_int_equal(sm.count, 0);
}

static void load_directory(void **state) {
  (void)state;
  char err[128] = "";
  assert_int_equal(fly_sources_load(&sm, "/tmp", err, sizeof err), -1);
  assert_string_equal(err, "Is a directory");
}

static void load_over_the_size_limit(void **state) {
  (void)state;
  char path[PATH_SIZE], err[128] = "";
  temp_file(path, "");
  assert_int_equal(truncate(path, (off_t)FLY_SOURCE_MAX_BYTES + 1), 0); /* sparse */
  assert_int_equal(fly_sources_load(&sm, path, err, sizeof err), -1);
  assert_string_equal(err, "file is too large (limit is 64 MiB)");
  assert_int_equal(sm.count, 0);
  unlink(path);
}

/* ---- lines and columns -------------------------------------------------- */

static void line_col_of_every_byte(void **state) {
  (void)state;
  int f = add("ab\ncd\n\nxyz");
  assert_line_col(f, 0, 1, 1); /* the first byte */
  assert_line_col(f, 1, 1, 2);
  assert_line_col(f, 2, 1, 3); /* a newline belongs to the line it ends */
  assert_line_col(f, 3, 2, 1);
  assert_line_col(f, 5, 2, 3);
  assert_line_col(f, 6, 3, 1); /* an empty line */
  assert_line_col(f, 7, 4, 1);
  assert_line_col(f, 9, 4, 3);  /* the last byte */
  assert_line_col(f, 10, 4, 4); /* the end of the file */
}

static void offset_past_end_maps_to_end(void **state) {
  (void)state;
  int f = add("ab\ncd");
  assert_line_col(f, 5, 2, 3);
  assert_line_col(f, 6, 2, 3);
  assert_line_col(f, 1000, 2, 3);
  assert_line_col(f, UINT32_MAX, 2, 3);
  assert_line_text(f, 1000, "cd");
}

static void trailing_newline_starts_an_empty_line(void **state) {
  (void)state;
  int f = add("ab\n");
  assert_line_col(f, 2, 1, 3);
  assert_line_col(f, 3, 2, 1);
  assert_line_col(f, 100, 2, 1);
  assert_line_text(f, 3, "");
  assert_line_text(f, 2, "ab");
}

static void no_trailing_newline(void **state) {
  (void)state;
  int f = add("first\nlast");
  assert_line_col(f, 9, 2, 4);
  assert_line_col(f, 10, 2, 5);
  assert_line_text(f, 6, "last");
  assert_line_text(f, 10, "last");
}

static void empty_file(void **state) {
  (void)state;
  int f = add("");
  assert_line_col(f, 0, 1, 1);
  assert_line_col(f, 5, 1, 1);
  assert_line_text(f, 0, "");
  assert_line_text(f, 3, "");
}

static void crlf_line_endings(void **state) {
  (void)state;
  int f = add("ab\r\ncd\r\n\r\nef");
  assert_line_col(f, 0, 1, 1);
  assert_line_col(f, 2, 1, 3); /* the '\r' */
  assert_line_col(f, 3, 1, 4); /* the '\n' */
  assert_line_col(f, 4, 2, 1);
  assert_line_col(f, 8, 3, 1);
  assert_line_col(f, 10, 4, 1);
  assert_line_col(f, 12, 4, 3);
  /* A line's text ends before its '\r\n'. */
  assert_line_text(f, 0, "ab");
  assert_line_text(f, 3, "ab");
  assert_line_text(f, 5, "cd");
  assert_line_text(f, 8, "");
  assert_line_text(f, 11, "ef");
}

static void lone_carriage_return_is_not_a_line_break(void **state) {
  (void)state;
  int f = add("a\rb\nc\r");
  assert_line_col(f, 2, 1, 3);
  assert_line_text(f, 0, "a\rb");
  assert_line_text(f, 4, "c"); /* a '\r' at the end of the file ends the line */
}

static void line_text_of_each_line(void **state) {
  (void)state;
  int f = add("one\ntwo two\n\nfour");
  assert_line_text(f, 0, "one");
  assert_line_text(f, 3, "one");
  assert_line_text(f, 4, "two two");
  assert_line_text(f, 10, "two two");
  assert_line_text(f, 12, "");
  assert_line_text(f, 13, "four");
  const char *text;
  uint32_t len;
  fly_source_line_text(&sm, f, 6, &text, &len);
  assert_ptr_equal(text, fly_source(&sm, f)->text + 4); /* points into the file */
}

static void many_lines(void **state) {
  (void)state;
  enum { LINES = 10000 };
  char *text = malloc(LINES * 4 + 1);
  assert_non_null(text);
  for (int i = 0; i < LINES; i++)
    memcpy(text + 4 * i, "abc\n", 4);
  text[LINES * 4] = '\0';
  int f = add(text);
  free(text);
  for (uint32_t line = 1; line <= LINES; line += 777) {
    assert_line_col(f, 4 * (line - 1), line, 1);
    assert_line_col(f, 4 * (line - 1) + 3, line, 4);
  }
  assert_line_col(f, 4 * LINES, LINES + 1, 1);
}

static void files_have_their_own_lines(void **state) {
  (void)state;
  int a = add("a\nb\nc");
  int b = add("xyz");
  assert_line_col(a, 4, 3, 1);
  assert_line_col(b, 2, 1, 3);
  assert_line_text(b, 0, "xyz");
}

static void invalid_file_index(void **state) {
  (void)state;
  add("abc");
  assert_line_col(-1, 0, 0, 0);
  assert_line_col(1, 0, 0, 0);
  assert_line_text(-1, 0, "");
  assert_line_text(7, 2, "");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      TEST(add_copies_and_terminates),
      TEST(add_keeps_embedded_nul),
      TEST(indices_count_up),
      TEST(add_over_the_size_limit),
      TEST(error_buffer_is_optional_and_bounded),
      TEST(load_and_find_real),
      TEST(find_real_in_empty_manager),
      TEST(load_missing_file),
      TEST(load_directory),
      TEST(load_over_the_size_limit),
      TEST(line_col_of_every_byte),
      TEST(offset_past_end_maps_to_end),
      TEST(trailing_newline_starts_an_empty_line),
      TEST(no_trailing_newline),
      TEST(empty_file),
      TEST(crlf_line_endings),
      TEST(lone_carriage_return_is_not_a_line_break),
      TEST(line_text_of_each_line),
      TEST(many_lines),
      TEST(files_have_their_own_lines),
      TEST(invalid_file_index),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
