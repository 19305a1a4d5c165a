/* test_diag.c — the diagnostics engine (fly_diag.h): the text form with its
 * source line and caret (ranges, tabs, UTF-8, control characters, windows
 * on long lines, colour), the JSON form (notes nested in their diagnostic,
 * escaping), the error limit, warnings as errors, and the summary line. Each
 * test prints into a memory stream and compares the whole output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_diag.h"

static FlySourceManager sm;
static FlyDiag d;
static FILE *out;
static char *buf;
static size_t buf_len;
static bool finished;

static int setup(void **state) {
  (void)state;
  fly_sources_init(&sm);
  buf = NULL;
  buf_len = 0;
  out = open_memstream(&buf, &buf_len);
  if (!out)
    return -1;
  fly_diag_init(&d, &sm, out);
  finished = false;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  if (!finished)
    fly_diag_finish(&d); /* frees the JSON buffer */
  fclose(out);
  free(buf);
  fly_sources_release(&sm);
  return 0;
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* Adds text as "t.fly" (or under name) and returns its index. */
static int add_named(const char *name, const char *text) {
  char err[128];
  int file = fly_sources_add(&sm, name, text, strlen(text), err, sizeof err);
  if (file < 0)
    fail_msg("fly_sources_add: %s", err);
  return file;
}

static int add(const char *text) { return add_named("t.fly", text); }

/* Everything printed so far. */
static const char *output(void) {
  fflush(out);
  return buf ? buf : "";
}

/* Finishes the engine (summary, pending JSON) and returns the whole output. */
static const char *finish(void) {
  fly_diag_finish(&d);
  finished = true;
  return output();
}

/* The first byte of needle in the file's text, as an offset. */
static uint32_t at(int file, const char *needle) {
  const char *text = fly_source(&sm, file)->text;
  const char *p = strstr(text, needle);
  if (!p)
    fail_msg("'%s' is not in the source", needle);
  return (uint32_t)(p - text);
}

/* A span over the first occurrence of needle. */
static FlySpan over(int file, const char *needle) {
  uint32_t begin = at(file, needle);
  return fly_span(file, begin, begin + (uint32_t)strlen(needle));
}

/* ---- text: the caret line ------------------------------------------------ */

static void text_error_with_caret(void **state) {
  (void)state;
  int f = add("let x = 1 +;\n");
  fly_error(&d, fly_span(f, 11, 12), "expected an expression, found '%s'", ";");
  assert_string_equal(finish(), "t.fly:1:12: error: expected an expression, found ';'\n"
                                "let x = 1 +;\n"
                                "           ^\n"
                                "1 error generated.\n");
  assert_int_equal(d.errors, 1);
  assert_int_equal(d.warnings, 0);
}

static void text_range_is_underlined(void **state) {
  (void)state;
  int f = add("fn f() {\n  let total = alpha + beta;\n}\n");
  fly_error(&d, over(f, "alpha + beta"), "mismatched types");
  assert_string_equal(output(), "t.fly:2:15: error: mismatched types\n"
                                "  let total = alpha + beta;\n"
                                "              ^~~~~~~~~~~~\n");
}

static void text_empty_range_is_one_caret(void **state) {
  (void)state;
  int f = add("a b\n");
  fly_error(&d, fly_span(f, 2, 2), "here");
  fly_error(&d, fly_span(f, 2, 1), "reversed");
  assert_string_equal(output(), "t.fly:1:3: error: here\n"
                                "a b\n"
                                "  ^\n"
                                "t.fly:1:3: error: reversed\n"
                                "a b\n"
                                "  ^\n");
}

static void text_underline_stops_at_end_of_line(void **state) {
  (void)state;
  int f = add("x = call(\n  1, 2);\n");
  fly_error(&d, fly_span(f, at(f, "call"), at(f, ";")), "spans two lines");
  assert_string_equal(output(), "t.fly:1:5: error: spans two lines\n"
                                "x = call(\n"
                                "    ^~~~~\n");
}

static void text_caret_at_end_of_file(void **state) {
  (void)state;
  int f = add("const A = 1 +");
  fly_error(&d, fly_span(f, 13, 13), "expected an expression, found the end of the file");
  assert_string_equal(output(), "t.fly:1:14: error: expected an expression, found the end of the "
                                "file\n"
                                "const A = 1 +\n"
                                "             ^\n");
}

static void text_caret_after_trailing_newline(void **state) {
  (void)state;
  int f = add("a\n");
  fly_error(&d, fly_span(f, 2, 2), "at the end");
  assert_string_equal(output(), "t.fly:2:1: error: at the end\n"
                                "\n"
                                "^\n");
}

static void text_empty_file(void **state) {
  (void)state;
  int f = add("");
  fly_error(&d, fly_span(f, 0, 0), "empty");
  assert_string_equal(output(), "t.fly:1:1: error: empty\n"
                                "\n"
                                "^\n");
}

static void text_crlf_line(void **state) {
  (void)state;
  int f = add("a = 1;\r\nb = @;\r\n");
  fly_error(&d, over(f, "@"), "stray '@'");
  assert_string_equal(output(), "t.fly:2:5: error: stray '@'\n"
                                "b = @;\n"
                                "    ^\n");
}

static void text_tabs_are_kept_in_caret_line(void **state) {
  (void)state;
  int f = add("\tlet x =\t@;\n");
  fly_error(&d, over(f, "@"), "stray '@'");
  assert_string_equal(output(), "t.fly:1:10: error: stray '@'\n"
                                "\tlet x =\t@;\n"
                                "\t       \t^\n");
}

static void text_utf8_before_caret_is_one_column(void **state) {
  (void)state;
  /* é is two bytes, € three, 😀 four: each is one column on the terminal. */
  int f = add("s = \"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\" @;\n");
  fly_error(&d, over(f, "@"), "stray '@'");
  /* The column in the header counts bytes; the caret counts characters. */
  assert_string_equal(output(), "t.fly:1:17: error: stray '@'\n"
                                "s = \"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\" @;\n"
                                "          ^\n");
}

static void text_utf8_under_underline(void **state) {
  (void)state;
  int f = add("let \xc3\xa9t\xc3\xa9 = 1;\n");
  fly_error(&d, over(f, "\xc3\xa9"), "one character");
  fly_error(&d, over(f, "\xc3\xa9t\xc3\xa9"), "three characters");
  assert_string_equal(output(), "t.fly:1:5: error: one character\n"
                                "let \xc3\xa9t\xc3\xa9 = 1;\n"
                                "    ^\n"
                                "t.fly:1:5: error: three characters\n"
                                "let \xc3\xa9t\xc3\xa9 = 1;\n"
                                "    ^~~\n");
}

static void text_control_characters_and_bad_bytes(void **state) {
  (void)state;
  /* A control character shows as a space, a byte that is not UTF-8 as '?';
     each takes one column. */
  int f = add("a\x01z \xff\x7f @;\n");
  fly_error(&d, over(f, "@"), "stray '@'");
  assert_string_equal(output(), "t.fly:1:8: error: stray '@'\n"
                                "a z ?  @;\n"
                                "       ^\n");
}

/* A line of n bytes: 'a's, with '@' at offset mark. */
static char *long_line(size_t n, size_t mark) {
  char *s = malloc(n + 2);
  assert_non_null(s);
  memset(s, 'a', n);
  s[mark] = '@';
  s[n] = '\n';
  s[n + 1] = '\0';
  return s;
}

static void text_long_line_window_in_the_middle(void **state) {
  (void)state;
  char *line = long_line(300, 200);
  int f = add(line);
  fly_error(&d, fly_span(f, 200, 201), "stray '@'");
  /* 50 bytes before the caret and 120 in all, with "..." for what is cut. */
  char want[512];
  snprintf(want, sizeof want, "t.fly:1:201: error: stray '@'\n...%.120s...\n   %50s^\n", line + 150,
           "");
  assert_string_equal(output(), want);
  free(line);
}

static void text_long_line_window_at_the_start(void **state) {
  (void)state;
  char *line = long_line(300, 10);
  int f = add(line);
  fly_error(&d, fly_span(f, 10, 11), "stray '@'");
  char want[512];
  snprintf(want, sizeof want, "t.fly:1:11: error: stray '@'\n%.120s...\n%10s^\n", line, "");
  assert_string_equal(output(), want);
  free(line);
}

static void text_long_line_window_at_the_end(void **state) {
  (void)state;
  char *line = long_line(300, 290);
  int f = add(line);
  fly_error(&d, fly_span(f, 290, 300), "to the end");
  char want[512];
  snprintf(want, sizeof want, "t.fly:1:291: error: to the end\n...%.60s\n   %50s^~~~~~~~~~\n",
           line + 240, "");
  assert_string_equal(output(), want);
  free(line);
}

static void text_long_line_underline_is_cut_at_window(void **state) {
  (void)state;
  char *line = long_line(400, 100);
  int f = add(line);
  fly_error(&d, fly_span(f, 100, 400), "long range");
  /* The window is [50, 170): the underline stops at its end. */
  char want[512], tildes[80];
  memset(tildes, '~', 69);
  tildes[69] = '\0';
  snprintf(want, sizeof want, "t.fly:1:101: error: long range\n...%.120s...\n   %50s^%s\n",
           line + 50, "", tildes);
  assert_string_equal(output(), want);
  free(line);
}

static void text_long_line_window_keeps_utf8_whole(void **state) {
  (void)state;
  /* 60 three-byte characters, '@' at byte 180, 60 more: the window's first
     byte (130) and its end (250) fall inside characters, and both move so
     that every character is printed whole. */
  char text[512];
  size_t n = 0;
  for (int i = 0; i < 60; i++)
    n += (size_t)snprintf(text + n, sizeof text - n, "\xe2\x82\xac");
  n += (size_t)snprintf(text + n, sizeof text - n, "@");
  for (int i = 0; i < 60; i++)
    n += (size_t)snprintf(text + n, sizeof text - n, "\xe2\x82\xac");
  snprintf(text + n, sizeof text - n, "\n");
  int f = add(text);
  fly_error(&d, fly_span(f, 180, 181), "stray '@'");
  /* Bytes [129, 250): 17 characters before the caret. */
  char want[512];
  snprintf(want, sizeof want, "t.fly:1:181: error: stray '@'\n...%.121s...\n   %17s^\n", text + 129,
           "");
  assert_string_equal(output(), want);
}

/* ---- text: headers, notes, colour ---------------------------------------- */

static void text_without_location(void **state) {
  (void)state;
  fly_error(&d, fly_no_span(), "cannot read '%s': %s", "x.fly", "No such file or directory");
  assert_string_equal(output(), "flyc: error: cannot read 'x.fly': No such file or directory\n");
}

static void text_note_follows_its_error(void **state) {
  (void)state;
  int f = add("fn f(a {\n}\n");
  fly_error(&d, over(f, "{"), "expected ')'");
  fly_note(&d, over(f, "("), "to match this '('");
  fly_note(&d, fly_no_span(), "a note without a place");
  assert_string_equal(finish(), "t.fly:1:8: error: expected ')'\n"
                                "fn f(a {\n"
                                "       ^\n"
                                "t.fly:1:5: note: to match this '('\n"
                                "fn f(a {\n"
                                "    ^\n"
                                "flyc: note: a note without a place\n"
                                "1 error generated.\n");
}

static void text_warning(void **state) {
  (void)state;
  int f = add("let unused = 1;\n");
  fly_warning(&d, over(f, "unused"), "'%s' is never used", "unused");
  assert_string_equal(finish(), "t.fly:1:5: warning: 'unused' is never used\n"
                                "let unused = 1;\n"
                                "    ^~~~~~\n"
                                "1 warning generated.\n");
  assert_int_equal(d.warnings, 1);
  assert_int_equal(d.errors, 0);
}

static void text_colour(void **state) {
  (void)state;
  d.color = true;
  int f = add("a @\n");
  fly_error(&d, over(f, "@"), "stray '@'");
  fly_warning(&d, over(f, "a"), "w");
  fly_note(&d, fly_no_span(), "n");
  assert_string_equal(output(),
                      "\033[1mt.fly:1:3: \033[1;31merror: \033[0m\033[1mstray '@'\033[0m\n"
                      "a @\n"
                      "  \033[1;32m^\033[0m\n"
                      "\033[1mt.fly:1:1: \033[1;35mwarning: \033[0m\033[1mw\033[0m\n"
                      "a @\n"
                      "\033[1;32m^\033[0m\n"
                      "\033[1mflyc: \033[1;36mnote: \033[0m\033[1mn\033[0m\n");
}

static void text_path_is_shown_as_given(void **state) {
  (void)state;
  int f = add_named("dir/sub file.fly", "x\n");
  fly_error(&d, fly_span(f, 0, 1), "e");
  assert_string_equal(output(), "dir/sub file.fly:1:1: error: e\nx\n^\n");
}

/* ---- summary line -------------------------------------------------------- */

static void summary_when_clean(void **state) {
  (void)state;
  add("fine\n");
  assert_string_equal(finish(), "");
}

static void summary_counts_errors(void **state) {
  (void)state;
  fly_error(&d, fly_no_span(), "one");
  fly_error(&d, fly_no_span(), "two");
  fly_note(&d, fly_no_span(), "notes are not counted");
  assert_string_equal(finish(), "flyc: error: one\nflyc: error: two\n"
                                "flyc: note: notes are not counted\n"
                                "2 errors generated.\n");
}

static void summary_counts_warnings(void **state) {
  (void)state;
  fly_warning(&d, fly_no_span(), "one");
  fly_warning(&d, fly_no_span(), "two");
  assert_string_equal(finish(), "flyc: warning: one\nflyc: warning: two\n"
                                "2 warnings generated.\n");
}

static void summary_counts_both(void **state) {
  (void)state;
  fly_warning(&d, fly_no_span(), "w");
  fly_error(&d, fly_no_span(), "e1");
  fly_error(&d, fly_no_span(), "e2");
  assert_string_equal(finish(), "flyc: warning: w\nflyc: error: e1\nflyc: error: e2\n"
                                "1 warning and 2 errors generated.\n");
}

static void summary_singular_and_plural(void **state) {
  (void)state;
  fly_warning(&d, fly_no_span(), "w1");
  fly_warning(&d, fly_no_span(), "w2");
  fly_error(&d, fly_no_span(), "e");
  assert_string_equal(finish(), "flyc: warning: w1\nflyc: warning: w2\nflyc: error: e\n"
                                "2 warnings and 1 error generated.\n");
}

/* ---- warnings as errors -------------------------------------------------- */

static void warnings_as_errors(void **state) {
  (void)state;
  d.warnings_as_errors = true;
  int f = add("x\n");
  fly_warning(&d, fly_span(f, 0, 1), "was a warning");
  fly_note(&d, fly_no_span(), "notes stay notes");
  assert_string_equal(finish(), "t.fly:1:1: error: was a warning\n"
                                "x\n"
                                "^\n"
                                "flyc: note: notes stay notes\n"
                                "1 error generated.\n");
  assert_int_equal(d.errors, 1);
  assert_int_equal(d.warnings, 0);
}

/* ---- the error limit ----------------------------------------------------- */

static void error_limit_default(void **state) {
  (void)state;
  assert_int_equal(d.error_limit, FLY_DEFAULT_ERROR_LIMIT);
  for (int i = 0; i < 25; i++)
    fly_error(&d, fly_no_span(), "error %d", i + 1);
  assert_int_equal(d.errors, FLY_DEFAULT_ERROR_LIMIT);
  assert_true(fly_diag_stopped(&d)); /* the 21st error was dropped */
}

static void error_limit_stops_reporting(void **state) {
  (void)state;
  d.error_limit = 2;
  fly_warning(&d, fly_no_span(), "w1");
  fly_error(&d, fly_no_span(), "e1");
  fly_note(&d, fly_no_span(), "note of e1");
  assert_false(fly_diag_stopped(&d));
  fly_error(&d, fly_no_span(), "e2");
  assert_false(fly_diag_stopped(&d)); /* nothing dropped yet */
  /* From the next error on, nothing more is printed or counted. */
  fly_error(&d, fly_no_span(), "e3");
  assert_true(fly_diag_stopped(&d));
  fly_note(&d, fly_no_span(), "note of e3");
  fly_warning(&d, fly_no_span(), "w2");
  assert_int_equal(d.errors, 2);
  assert_int_equal(d.warnings, 1);
  const char *got = finish();
  assert_non_null(strstr(got, "flyc: warning: w1\n"
                              "flyc: error: e1\n"
                              "flyc: note: note of e1\n"
                              "flyc: error: e2\n"));
  assert_non_null(strstr(got, "flyc: note: too many errors (limit is 2), stopping now; "
                              "--error-limit=N changes the limit\n"));
  assert_null(strstr(got, "e3"));
  assert_null(strstr(got, "w2"));
  /* The summary comes last. */
  const char *summary = "1 warning and 2 errors generated.\n";
  size_t n = strlen(got), m = strlen(summary);
  assert_true(n >= m);
  assert_string_equal(got + n - m, summary);
}

static void error_limit_counts_warnings_as_errors(void **state) {
  (void)state;
  d.error_limit = 1;
  d.warnings_as_errors = true;
  fly_warning(&d, fly_no_span(), "w");
  fly_warning(&d, fly_no_span(), "dropped");
  assert_true(fly_diag_stopped(&d));
  assert_int_equal(d.errors, 1);
}

static void error_limit_zero_is_no_limit(void **state) {
  (void)state;
  d.error_limit = 0;
  for (int i = 0; i < 1000; i++)
    fly_error(&d, fly_no_span(), "e");
  assert_false(fly_diag_stopped(&d));
  assert_int_equal(d.errors, 1000);
  assert_null(strstr(output(), "too many errors"));
}

static void error_limit_of_one(void **state) {
  (void)state;
  d.error_limit = 1;
  fly_error(&d, fly_no_span(), "first");
  fly_error(&d, fly_no_span(), "second");
  assert_string_equal(finish(), "flyc: error: first\n"
                                "flyc: note: too many errors (limit is 1), stopping now; "
                                "--error-limit=N changes the limit\n"
                                "1 error generated.\n");
}

static void error_limit_keeps_notes_of_last_error(void **state) {
  (void)state;
  d.error_limit = 1;
  int f = add("f(1;\n");
  fly_error(&d, over(f, ";"), "expected ')'");
  fly_note(&d, over(f, "("), "to match this '('"); /* the notes of the last error print */
  fly_error(&d, fly_no_span(), "not shown");
  assert_true(fly_diag_stopped(&d));
  fly_note(&d, fly_no_span(), "nor its note");
  assert_string_equal(finish(), "t.fly:1:4: error: expected ')'\n"
                                "f(1;\n"
                                "   ^\n"
                                "t.fly:1:2: note: to match this '('\n"
                                "f(1;\n"
                                " ^\n"
                                "flyc: note: too many errors (limit is 1), stopping now; "
                                "--error-limit=N changes the limit\n"
                                "1 error generated.\n");
}

/* Exactly as many errors as the limit: nothing was dropped, so no note. */
static void error_limit_not_announced_when_nothing_dropped(void **state) {
  (void)state;
  d.error_limit = 1;
  fly_error(&d, fly_no_span(), "only");
  assert_false(fly_diag_stopped(&d));
  assert_string_equal(finish(), "flyc: error: only\n"
                                "1 error generated.\n");
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_error_with_nested_notes(void **state) {
  (void)state;
  d.format = FLY_DIAG_JSON;
  int f = add("fn f(a {\n}\n");
  fly_error(&d, over(f, "{"), "expected ')'");
  fly_note(&d, over(f, "("), "to match this '('");
  fly_note(&d, fly_no_span(), "no place");
  fly_warning(&d, fly_span(f, 9, 10), "second");
  assert_string_equal(
      finish(),
      "{\"severity\":\"error\",\"message\":\"expected ')'\",\"file\":\"t.fly\",\"range\":"
      "{\"start\":{\"line\":1,\"column\":8,\"offset\":7},\"end\":{\"line\":1,\"column\":9,"
      "\"offset\":8}},\"notes\":[{\"severity\":\"note\",\"message\":\"to match this '('\","
      "\"file\":\"t.fly\",\"range\":{\"start\":{\"line\":1,\"column\":5,\"offset\":4},"
      "\"end\":{\"line\":1,\"column\":6,\"offset\":5}}},{\"severity\":\"note\","
      "\"message\":\"no place\"}]}\n"
      "{\"severity\":\"warning\",\"message\":\"second\",\"file\":\"t.fly\",\"range\":"
      "{\"start\":{\"line\":2,\"column\":1,\"offset\":9},\"end\":{\"line\":2,\"column\":2,"
      "\"offset\":10}},\"notes\":[]}\n");
  /* No summary line in JSON. */
  assert_int_equal(d.errors, 1);
  assert_int_equal(d.warnings, 1);
}

static void json_is_written_when_complete(void **state) {
  (void)state;
  d.format = FLY_DIAG_JSON;
  fly_error(&d, fly_no_span(), "first");
  /* Its notes may still come: nothing is written yet. */
  assert_string_equal(output(), "");
  fly_error(&d, fly_no_span(), "second");
  assert_string_equal(output(), "{\"severity\":\"error\",\"message\":\"first\",\"notes\":[]}\n");
  assert_string_equal(finish(), "{\"severity\":\"error\",\"message\":\"first\",\"notes\":[]}\n"
                                "{\"severity\":\"error\",\"message\":\"second\",\"notes\":[]}\n");
}

static void json_escapes_strings(void **state) {
  (void)state;
  d.format = FLY_DIAG_JSON;
  int f = add_named("dir/\"q\"\\.fly", "x\n");
  fly_error(&d, fly_span(f, 0, 1), "say \"hi\"\nnext\tline \\ \x01\x1f \xc3\xa9 /");
  assert_string_equal(finish(),
                      "{\"severity\":\"error\",\"message\":\"say \\\"hi\\\"\\u000anext\\u0009line "
                      "\\\\ \\u0001\\u001f \xc3\xa9 /\",\"file\":\"dir/\\\"q\\\"\\\\.fly\","
                      "\"range\":{\"start\":{\"line\":1,\"column\":1,\"offset\":0},\"end\":"
                      "{\"line\":1,\"column\":2,\"offset\":1}},\"notes\":[]}\n");
}

static void json_empty_range_ends_where_it_begins(void **state) {
  (void)state;
  d.format = FLY_DIAG_JSON;
  int f = add("ab\ncd");
  fly_error(&d, fly_span(f, 4, 4), "empty");
  fly_error(&d, fly_span(f, 4, 2), "reversed");
  fly_error(&d, fly_span(f, 1, 4), "two lines");
  assert_string_equal(
      finish(),
      "{\"severity\":\"error\",\"message\":\"empty\",\"file\":\"t.fly\",\"range\":{\"start\":"
      "{\"line\":2,\"column\":2,\"offset\":4},\"end\":{\"line\":2,\"column\":2,\"offset\":4}},"
      "\"notes\":[]}\n"
      "{\"severity\":\"error\",\"message\":\"reversed\",\"file\":\"t.fly\",\"range\":{\"start\":"
      "{\"line\":2,\"column\":2,\"offset\":4},\"end\":{\"line\":2,\"column\":2,\"offset\":4}},"
      "\"notes\":[]}\n"
      "{\"severity\":\"error\",\"message\":\"two lines\",\"file\":\"t.fly\",\"range\":{\"start\":"
      "{\"line\":1,\"column\":2,\"offset\":1},\"end\":{\"line\":2,\"column\":2,\"offset\":4}},"
      "\"notes\":[]}\n");
}

static void json_note_alone(void **state) {
  (void)state;
  d.format = FLY_DIAG_JSON;
  fly_note(&d, fly_no_span(), "alone");
  fly_note(&d, fly_no_span(), "and another");
  assert_string_equal(finish(), "{\"severity\":\"note\",\"message\":\"\",\"notes\":["
                                "{\"severity\":\"note\",\"message\":\"alone\"},"
                                "{\"severity\":\"note\",\"message\":\"and another\"}]}\n");
}

static void json_warnings_as_errors(void **state) {
  (void)state;
  d.format = FLY_DIAG_JSON;
  d.warnings_as_errors = true;
  fly_warning(&d, fly_no_span(), "w");
  assert_string_equal(finish(), "{\"severity\":\"error\",\"message\":\"w\",\"notes\":[]}\n");
}

static void json_error_limit_note_is_nested(void **state) {
  (void)state;
  d.format = FLY_DIAG_JSON;
  d.error_limit = 1;
  fly_error(&d, fly_no_span(), "e1");
  fly_error(&d, fly_no_span(), "e2");
  assert_string_equal(finish(), "{\"severity\":\"error\",\"message\":\"e1\",\"notes\":["
                                "{\"severity\":\"note\",\"message\":\"too many errors (limit is "
                                "1), stopping now; --error-limit=N changes the limit\"}]}\n");
}

static void json_long_message_is_cut_not_broken(void **state) {
  (void)state;
  d.format = FLY_DIAG_JSON;
  char *msg = malloc(5001);
  assert_non_null(msg);
  memset(msg, '"', 5000);
  msg[5000] = '\0';
  fly_error(&d, fly_no_span(), "%s", msg);
  const char *got = finish();
  /* Every quote escaped, the object closed. */
  const char *end = "\",\"notes\":[]}\n";
  size_t n = strlen(got);
  assert_true(n > strlen(end));
  assert_string_equal(got + n - strlen(end), end);
  const char *body = got + strlen("{\"severity\":\"error\",\"message\":\"");
  for (const char *p = body; p < got + n - strlen(end); p += 2)
    assert_memory_equal(p, "\\\"", 2);
  free(msg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      TEST(text_error_with_caret),
      TEST(text_range_is_underlined),
      TEST(text_empty_range_is_one_caret),
      TEST(text_underline_stops_at_end_of_line),
      TEST(text_caret_at_end_of_file),
      TEST(text_caret_after_trailing_newline),
      TEST(text_empty_file),
      TEST(text_crlf_line),
      TEST(text_tabs_are_kept_in_caret_line),
      TEST(text_utf8_before_caret_is_one_column),
      TEST(text_utf8_under_underline),
      TEST(text_control_characters_and_bad_bytes),
      TEST(text_long_line_window_in_the_middle),
      TEST(text_long_line_window_at_the_start),
      TEST(text_long_line_window_at_the_end),
      TEST(text_long_line_underline_is_cut_at_window),
      TEST(text_long_line_window_keeps_utf8_whole),
      TEST(text_without_location),
      TEST(text_note_follows_its_error),
      TEST(text_warning),
      TEST(text_colour),
      TEST(text_path_is_shown_as_given),
      TEST(summary_when_clean),
      TEST(summary_counts_errors),
      TEST(summary_counts_warnings),
      TEST(summary_counts_both),
      TEST(summary_singular_and_plural),
      TEST(warnings_as_errors),
      TEST(error_limit_default),
      TEST(error_limit_stops_reporting),
      TEST(error_limit_counts_warnings_as_errors),
      TEST(error_limit_zero_is_no_limit),
      TEST(error_limit_of_one),
      TEST(error_limit_keeps_notes_of_last_error),
      TEST(error_limit_not_announced_when_nothing_dropped),
      TEST(json_error_with_nested_notes),
      TEST(json_is_written_when_complete),
      TEST(json_escapes_strings),
      TEST(json_empty_range_ends_where_it_begins),
      TEST(json_note_alone),
      TEST(json_warnings_as_errors),
      TEST(json_error_limit_note_is_nested),
      TEST(json_long_message_is_cut_not_broken),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
