/* fly_diag.c — printing diagnostics as text with a caret, or as JSON lines. */
#include "fly_diag.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Lines longer than this are shown as a window around the caret. */
enum { LINE_WINDOW = 120, WINDOW_BEFORE = 50 };

#define BOLD "\033[1m"
#define RED "\033[1;31m"
#define MAGENTA "\033[1;35m"
#define CYAN "\033[1;36m"
#define GREEN "\033[1;32m"
#define RESET "\033[0m"

void fly_diag_init(FlyDiag *d, const FlySourceManager *sources, FILE *out) {
  memset(d, 0, sizeof *d);
  d->sources = sources;
  d->out = out;
  d->error_limit = FLY_DEFAULT_ERROR_LIMIT;
}

bool fly_diag_color_default(FILE *out) {
  const char *no_color = getenv("NO_COLOR");
  if (no_color && no_color[0])
    return false;
  return isatty(fileno(out));
}

static const char *severity_name(FlySeverity s) {
  return s == FLY_ERROR ? "error" : s == FLY_WARNING ? "warning" : "note";
}

static const char *severity_color(FlySeverity s) {
  return s == FLY_ERROR ? RED : s == FLY_WARNING ? MAGENTA : CYAN;
}

/* ---- text -------------------------------------------------------------- */

static bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

/* Length of the well-formed UTF-8 sequence at p (at most n bytes), or 0. */
static int utf8_length(const unsigned char *p, uint32_t n) {
  int len = p[0] < 0x80                    ? 1
            : p[0] >= 0xC2 && p[0] <= 0xDF ? 2
            : p[0] >= 0xE0 && p[0] <= 0xEF ? 3
            : p[0] >= 0xF0 && p[0] <= 0xF4 ? 4
                                           : 0;
  if (len == 0 || (uint32_t)len > n)
    return 0;
  for (int i = 1; i < len; i++)
    if (!is_continuation(p[i]))
      return 0;
  /* No overlong forms, surrogates or values past U+10FFFF, as in the lexer. */
  if ((p[0] == 0xE0 && p[1] < 0xA0) || (p[0] == 0xED && p[1] > 0x9F) ||
      (p[0] == 0xF0 && p[1] < 0x90) || (p[0] == 0xF4 && p[1] > 0x8F))
    return 0;
  return len;
}

/* Prints line[from, to) and under it a caret at col0 (0-based byte column)
 * followed by '~' up to col1. Tabs are echoed in the caret line so the caret
 * stays aligned; UTF-8 continuation bytes take no column. */
static void print_excerpt(FlyDiag *d, const char *line, uint32_t len, uint32_t col0,
                          uint32_t col1) {
  uint32_t from = 0, to = len;
  if (len > LINE_WINDOW) {
    from = col0 > WINDOW_BEFORE ? col0 - WINDOW_BEFORE : 0;
    while (from > 0 && is_continuation((unsigned char)line[from]))
      from--;
    to = from + LINE_WINDOW < len ? from + LINE_WINDOW : len;
    while (to < len && is_continuation((unsigned char)line[to]))
      to++;
  }
  const char *dots = "...";
  if (from > 0)
    fputs(dots, d->out);
  for (uint32_t i = from; i < to;) {
    const unsigned char *p = (const unsigned char *)line + i;
    int n = utf8_length(p, to - i);
    /* Control characters and broken UTF-8 would garble the terminal: a
       control character shows as a space, a bad byte as '?'. */
    if (n > 1)
      fwrite(p, 1, (size_t)n, d->out);
    else
      fputc(n == 0 ? '?' : *p == '\t' || (*p >= 0x20 && *p != 0x7f) ? *p : ' ', d->out);
    i += n ? (uint32_t)n : 1;
  }
  if (to < len)
    fputs(dots, d->out);
  fputc('\n', d->out);

  if (from > 0)
    fputs("   ", d->out);
  /* One column per character as printed above: a whole UTF-8 sequence or a
     single bad byte. */
  for (uint32_t i = from; i < col0 && i < to;) {
    int n = utf8_length((const unsigned char *)line + i, to - i);
    fputc(line[i] == '\t' ? '\t' : ' ', d->out);
    i += n ? (uint32_t)n : 1;
  }
  if (d->color)
    fputs(GREEN, d->out);
  fputc('^', d->out);
  uint32_t i = col0;
  if (i < to) {
    int n = utf8_length((const unsigned char *)line + i, to - i);
    i += n ? (uint32_t)n : 1;
  }
  while (i < col1 && i < to) {
    int n = utf8_length((const unsigned char *)line + i, to - i);
    fputc('~', d->out);
    i += n ? (uint32_t)n : 1;
  }
  if (d->color)
    fputs(RESET, d->out);
  fputc('\n', d->out);
}

static void print_text(FlyDiag *d, FlySeverity severity, FlySpan span, const char *msg) {
  const FlySource *src = fly_source(d->sources, span.file);
  if (d->color)
    fputs(BOLD, d->out);
  uint32_t line = 0, col = 0;
  if (src) {
    fly_source_line_col(d->sources, span.file, span.begin, &line, &col);
    fprintf(d->out, "%s:%u:%u: ", src->path, line, col);
  } else {
    fputs("flyc: ", d->out);
  }
  if (d->color)
    fprintf(d->out, "%s%s: " RESET BOLD "%s" RESET "\n", severity_color(severity),
            severity_name(severity), msg);
  else
    fprintf(d->out, "%s: %s\n", severity_name(severity), msg);
  if (!src)
    return;
  const char *text;
  uint32_t len;
  fly_source_line_text(d->sources, span.file, span.begin, &text, &len);
  uint32_t col0 = col - 1;
  /* The underline stops at the end of the first line of a multi-line span. */
  uint32_t col1 = span.end > span.begin ? col0 + (span.end - span.begin) : col0 + 1;
  if (col1 > len)
    col1 = len > col0 ? len : col0 + 1;
  print_excerpt(d, text, len, col0, col1);
}

/* ---- JSON -------------------------------------------------------------- */

static void pending_put(FlyDiag *d, const char *s, size_t n) {
  if (d->pending_broken)
    return;
  if (d->pending_len + n + 1 > d->pending_cap) {
    size_t cap = d->pending_cap ? d->pending_cap : 256;
    while (cap < d->pending_len + n + 1)
      cap *= 2;
    char *p = realloc(d->pending, cap);
    if (!p) {
      d->pending_broken = true;
      return;
    }
    d->pending = p;
    d->pending_cap = cap;
  }
  memcpy(d->pending + d->pending_len, s, n);
  d->pending_len += n;
  d->pending[d->pending_len] = '\0';
}

static void pending_puts(FlyDiag *d, const char *s) { pending_put(d, s, strlen(s)); }

/* A JSON string: quotes, backslashes and control bytes escaped; other bytes
 * pass through (sources are checked to be UTF-8 before they get here). */
static void pending_string(FlyDiag *d, const char *s) {
  pending_puts(d, "\"");
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    char esc[8];
    if (c == '"' || c == '\\') {
      esc[0] = '\\', esc[1] = (char)c, esc[2] = '\0';
      pending_puts(d, esc);
    } else if (c < 0x20) {
      snprintf(esc, sizeof esc, "\\u%04x", c);
      pending_puts(d, esc);
    } else {
      pending_put(d, (const char *)&c, 1);
    }
  }
  pending_puts(d, "\"");
}

static void pending_position(FlyDiag *d, int file, uint32_t offset) {
  uint32_t line, col;
  fly_source_line_col(d->sources, file, offset, &line, &col);
  char buf[96];
  snprintf(buf, sizeof buf, "{\"line\":%u,\"column\":%u,\"offset\":%u}", line, col, offset);
  pending_puts(d, buf);
}

static void pending_object(FlyDiag *d, FlySeverity severity, FlySpan span, const char *msg) {
  pending_puts(d, "{\"severity\":");
  pending_string(d, severity_name(severity));
  pending_puts(d, ",\"message\":");
  pending_string(d, msg);
  const FlySource *src = fly_source(d->sources, span.file);
  if (src) {
    pending_puts(d, ",\"file\":");
    pending_string(d, src->path);
    pending_puts(d, ",\"range\":{\"start\":");
    pending_position(d, span.file, span.begin);
    pending_puts(d, ",\"end\":");
    pending_position(d, span.file, span.end > span.begin ? span.end : span.begin);
    pending_puts(d, "}");
  }
}

static void flush_pending(FlyDiag *d) {
  if (d->pending_len == 0)
    return;
  pending_puts(d, "]}\n");
  if (!d->pending_broken)
    fputs(d->pending, d->out);
  d->pending_len = 0;
  d->pending_broken = false;
}

static void print_json(FlyDiag *d, FlySeverity severity, FlySpan span, const char *msg) {
  if (severity == FLY_NOTE) {
    if (d->pending_len == 0) /* a note with nothing to attach to stands alone */
      pending_puts(d, "{\"severity\":\"note\",\"message\":\"\",\"notes\":[");
    else if (d->pending[d->pending_len - 1] != '[')
      pending_puts(d, ",");
    pending_object(d, severity, span, msg);
    pending_puts(d, "}");
    return;
  }
  flush_pending(d);
  pending_object(d, severity, span, msg);
  pending_puts(d, ",\"notes\":[");
}

/* ---- the engine -------------------------------------------------------- */

static void emit(FlyDiag *d, FlySeverity severity, FlySpan span, const char *msg) {
  if (d->format == FLY_DIAG_JSON)
    print_json(d, severity, span, msg);
  else
    print_text(d, severity, span, msg);
}

/* Says the limit was reached; the error that reached it has had its notes. */
static void stop(FlyDiag *d) {
  d->limit_reached = false;
  d->stopped = true;
  char limit[160];
  snprintf(limit, sizeof limit,
           "too many errors (limit is %d), stopping now; --error-limit=N changes the limit",
           d->error_limit);
  emit(d, FLY_NOTE, fly_no_span(), limit);
}

void fly_diag_vreport(FlyDiag *d, FlySeverity severity, FlySpan span, const char *fmt, va_list ap) {
  if (d->stopped)
    return;
  if (severity != FLY_NOTE && d->limit_reached) {
    stop(d); /* announced only when something is actually dropped */
    return;
  }
  if (severity == FLY_WARNING && d->warnings_as_errors)
    severity = FLY_ERROR;
  char msg[1024];
  vsnprintf(msg, sizeof msg, fmt, ap);
  emit(d, severity, span, msg);
  if (severity == FLY_WARNING)
    d->warnings++;
  if (severity != FLY_ERROR)
    return;
  d->errors++;
  /* The notes of this error still come; the limit is announced after them. */
  if (d->error_limit > 0 && d->errors >= d->error_limit)
    d->limit_reached = true;
}

void fly_diag_report(FlyDiag *d, FlySeverity severity, FlySpan span, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fly_diag_vreport(d, severity, span, fmt, ap);
  va_end(ap);
}

void fly_diag_finish(FlyDiag *d) {
  flush_pending(d);
  if (d->format == FLY_DIAG_TEXT && (d->errors || d->warnings)) {
    if (d->errors && d->warnings)
      fprintf(d->out, "%d %s and %d %s generated.\n", d->warnings,
              d->warnings == 1 ? "warning" : "warnings", d->errors,
              d->errors == 1 ? "error" : "errors");
    else if (d->errors)
      fprintf(d->out, "%d %s generated.\n", d->errors, d->errors == 1 ? "error" : "errors");
    else
      fprintf(d->out, "%d %s generated.\n", d->warnings, d->warnings == 1 ? "warning" : "warnings");
  }
  free(d->pending);
  d->pending = NULL;
  d->pending_len = d->pending_cap = 0;
}

bool fly_why(char *why, size_t why_size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, why_size, fmt, ap);
  va_end(ap);
  return false;
}
