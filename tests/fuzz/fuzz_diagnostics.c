/* fuzz_diagnostics.c — libFuzzer entry for the diagnostics engine, driven by
 * the front end.
 *
 * Each input is parsed twice with no error limit, so every error the lexer
 * and parser can find is reported: once with JSON diagnostics and once with
 * coloured text. Beyond not crashing or leaking, the output must keep the
 * engine's promises:
 *   - JSON: every line is one well-formed JSON object, in valid UTF-8;
 *   - text: valid UTF-8 with no control characters but newline, tab and the
 *     colour escapes, and each located message followed by its source line
 *     and a caret line whose '^' and '~' lie under that line, with a tab
 *     under every tab;
 *   - both forms count the same errors. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_parse.h"
#include "fly_unit.h"

#define FILE_NAME "fuzz.fly"

/* The checks below walk every byte of the output, which is long with no
 * error limit; coverage of the checks themselves tells the fuzzer nothing
 * about the front end, so they are left uninstrumented. */
#if defined(__clang__) && __clang_major__ >= 13
#define CHECKER __attribute__((no_sanitize("coverage"), noinline))
#else
#define CHECKER
#endif

/* A promise was broken: say which before libFuzzer saves the input. */
static void broken(const char *why) __attribute__((noreturn));
static void broken(const char *why) {
  fprintf(stderr, "fuzz_diagnostics: %s\n", why);
  abort();
}

/* ---- UTF-8 and JSON checks ---------------------------------------------- */

/* Length of the well-formed UTF-8 sequence at p (n bytes available), or 0. */
CHECKER static size_t utf8_length(const unsigned char *p, size_t n) {
  unsigned char c = p[0];
  size_t len;
  unsigned char lo = 0x80, hi = 0xbf; /* range of the second byte */
  if (c < 0x80)
    return 1;
  if (c >= 0xc2 && c <= 0xdf)
    len = 2;
  else if (c >= 0xe0 && c <= 0xef)
    len = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
  else if (c >= 0xf0 && c <= 0xf4)
    len = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
  else
    return 0;
  if (len > n || p[1] < lo || p[1] > hi)
    return 0;
  for (size_t i = 2; i < len; i++)
    if ((p[i] & 0xc0) != 0x80)
      return 0;
  return len;
}

typedef struct Json {
  const unsigned char *p, *end;
  int depth;
} Json;

static bool json_value(Json *j);

CHECKER static void json_space(Json *j) {
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\t'))
    j->p++;
}

CHECKER static bool json_literal(Json *j, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
    return false;
  j->p += n;
  return true;
}

CHECKER static bool json_string(Json *j) {
  if (j->p == j->end || *j->p != '"')
    return false;
  j->p++;
  while (j->p < j->end && *j->p != '"') {
    if (*j->p < 0x20)
      return false; /* control characters must be escaped */
    if (*j->p == '\\') {
      j->p++;
      if (j->p == j->end)
        return false;
      if (*j->p == 'u') {
        if (j->end - j->p < 5)
          return false;
        for (int i = 1; i <= 4; i++)
          if (!strchr("0123456789abcdefABCDEF", j->p[i]) || j->p[i] == '\0')
            return false;
        j->p += 5;
        continue;
      }
      if (!strchr("\"\\/bfnrt", *j->p) || *j->p == '\0')
        return false;
      j->p++;
      continue;
    }
    size_t n = utf8_length(j->p, (size_t)(j->end - j->p));
    if (n == 0)
      return false;
    j->p += n;
  }
  if (j->p == j->end)
    return false;
  j->p++;
  return true;
}

CHECKER static bool json_number(Json *j) {
  const unsigned char *start = j->p;
  if (j->p < j->end && *j->p == '-')
    j->p++;
  if (j->p == j->end || *j->p < '0' || *j->p > '9')
    return false;
  if (*j->p == '0')
    j->p++;
  else
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
      j->p++;
  return j->p > start; /* the engine writes integers only */
}

/* A sequence of items between open and close; members when object. */
CHECKER static bool json_items(Json *j, char close, bool object) {
  j->p++;
  json_space(j);
  if (j->p < j->end && *j->p == close) {
    j->p++;
    return true;
  }
  for (;;) {
    json_space(j);
    if (object) {
      if (!json_string(j))
        return false;
      json_space(j);
      if (j->p == j->end || *j->p != ':')
        return false;
      j->p++;
      json_space(j);
    }
    if (!json_value(j))
      return false;
    json_space(j);
    if (j->p == j->end)
      return false;
    if (*j->p == close) {
      j->p++;
      return true;
    }
    if (*j->p != ',')
      return false;
    j->p++;
  }
}

CHECKER static bool json_value(Json *j) {
  if (j->p == j->end || ++j->depth > 64)
    return false;
  bool ok;
  switch (*j->p) {
  case '{':
    ok = json_items(j, '}', true);
    break;
  case '[':
    ok = json_items(j, ']', false);
    break;
  case '"':
    ok = json_string(j);
    break;
  case 't':
    ok = json_literal(j, "true");
    break;
  case 'f':
    ok = json_literal(j, "false");
    break;
  case 'n':
    ok = json_literal(j, "null");
    break;
  default:
    ok = json_number(j);
  }
  j->depth--;
  return ok;
}

/* Every line of out is exactly one JSON object. */
CHECKER static void check_json(const char *out, size_t len) {
  const char *p = out, *end = out + len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl)
      broken("json: output does not end with a newline");
    Json j = {(const unsigned char *)p, (const unsigned char *)nl, 0};
    if (j.p == j.end || *j.p != '{' || !json_value(&j) || j.p != j.end)
      broken("json: a line is not one well-formed JSON object in UTF-8");
    p = nl + 1;
  }
}

/* ---- text checks -------------------------------------------------------- */

/* Removes the colour escapes ESC [ digits ; m in place; returns the length. */
CHECKER static size_t strip_colour(char *s, size_t len) {
  size_t out = 0;
  for (size_t i = 0; i < len;) {
    if (s[i] == '\033') {
      size_t k = i + 1;
      if (k < len && s[k] == '[') {
        k++;
        while (k < len && ((s[k] >= '0' && s[k] <= '9') || s[k] == ';'))
          k++;
        if (k < len && s[k] == 'm') {
          i = k + 1;
          continue;
        }
      }
      broken("text: an escape sequence that is not a colour");
    }
    s[out++] = s[i++];
  }
  return out;
}

/* The characters of a line: counts UTF-8 sequences, and when tabs is not
 * NULL marks there which characters are tabs. */
CHECKER static size_t characters(const char *s, size_t len, bool *tabs) {
  size_t n = 0;
  for (size_t i = 0; i < len; n++) {
    size_t k = utf8_length((const unsigned char *)s + i, len - i);
    if (k == 0)
      broken("text: output is not valid UTF-8");
    if (tabs)
      tabs[n] = s[i] == '\t';
    i += k;
  }
  return n;
}

/* A source line and the caret line under it. */
CHECKER static void check_excerpt(const char *line, size_t len, const char *caret,
                                  size_t caret_len) {
  bool *tabs = malloc(len + 1);
  if (!tabs)
    abort();
  size_t width = characters(line, len, tabs);
  size_t i = 0;
  for (; i < caret_len && (caret[i] == ' ' || caret[i] == '\t'); i++)
    if ((caret[i] == '\t') != (i < width && tabs[i]))
      broken("text: the caret line's indentation does not copy the tabs above it");
  free(tabs);
  size_t column = i;
  if (i == caret_len || caret[i] != '^')
    broken("text: no '^' after the caret line's indentation");
  i++;
  while (i < caret_len && caret[i] == '~')
    i++;
  if (i != caret_len)
    broken("text: something other than '~' after the caret");
  /* The caret may sit just after the end of the line, no further. */
  if (column > width)
    broken("text: the caret stands past the end of the source line");
  if (caret_len - column > 1 && caret_len > width)
    broken("text: the underline runs past the end of the source line");
}

CHECKER static bool starts_with(const char *s, size_t len, const char *prefix) {
  size_t n = strlen(prefix);
  return len >= n && memcmp(s, prefix, n) == 0;
}

CHECKER static void check_text(char *out, size_t len) {
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)out[i];
    if ((c < 0x20 && c != '\n' && c != '\t' && c != '\033') || c == 0x7f)
      broken("text: a control character reached the terminal");
  }
  len = strip_colour(out, len);
  const char *p = out, *end = out + len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl)
      broken("text: output does not end with a newline");
    size_t n = (size_t)(nl - p);
    characters(p, n, NULL);
    if (starts_with(p, n, FILE_NAME ":")) {
      /* file:line:col: severity: message, then the excerpt and the caret. */
      const char *line = nl + 1;
      const char *line_end = line < end ? memchr(line, '\n', (size_t)(end - line)) : NULL;
      if (!line_end)
        broken("text: a located message without its source line");
      const char *caret = line_end + 1;
      const char *caret_end = caret < end ? memchr(caret, '\n', (size_t)(end - caret)) : NULL;
      if (!caret_end)
        broken("text: a located message without its caret line");
      check_excerpt(line, (size_t)(line_end - line), caret, (size_t)(caret_end - caret));
      p = caret_end + 1;
    } else if (starts_with(p, n, "flyc: ") || (n > 0 && p[0] >= '1' && p[0] <= '9')) {
      p = nl + 1; /* a message without a location, or the summary */
    } else {
      broken("text: a line that belongs to no message");
    }
  }
}

/* ---- the target --------------------------------------------------------- */

/* Parses data with the given diagnostics settings into a memory stream and
 * returns the error count; the output is left in *out (malloc'd). */
static int parse(const unsigned char *data, size_t size, FlyDiagFormat format, bool color,
                 bool werror, char **out, size_t *out_len) {
  FILE *stream = open_memstream(out, out_len);
  if (!stream)
    abort();
  FlySourceManager sources;
  FlyDiag diag;
  FlyArena arena;
  fly_sources_init(&sources);
  fly_diag_init(&diag, &sources, stream);
  diag.format = format;
  diag.color = color;
  diag.error_limit = 0;
  diag.warnings_as_errors = werror;
  fly_arena_init(&arena, FLY_UNIT_ARENA_LIMIT);
  char why[128];
  int file = fly_sources_add(&sources, FILE_NAME, (const char *)data, size, why, sizeof why);
  if (file < 0)
    abort();
  fly_parse(&arena, &diag, file);
  int errors = diag.errors;
  if (diag.stopped)
    broken("the engine stopped with no error limit");
  fly_diag_finish(&diag);
  fly_arena_release(&arena);
  fly_sources_release(&sources);
  if (fclose(stream) != 0)
    abort();
  return errors;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  char *json = NULL, *text = NULL;
  size_t json_len = 0, text_len = 0;
  int json_errors = parse(data, size, FLY_DIAG_JSON, false, false, &json, &json_len);
  check_json(json, json_len);
  int text_errors = parse(data, size, FLY_DIAG_TEXT, true, true, &text, &text_len);
  check_text(text, text_len);
  if (json_errors != text_errors)
    broken("JSON and text diagnostics count different numbers of errors");
  free(json);
  free(text);
  return 0;
}
