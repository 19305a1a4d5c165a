/* fly_source.c — loading files and mapping offsets to lines. */
#include "fly_source.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fly_sources_init(FlySourceManager *sm) { memset(sm, 0, sizeof *sm); }

void fly_sources_release(FlySourceManager *sm) {
  for (int i = 0; i < sm->count; i++) {
    free(sm->files[i].path);
    free(sm->files[i].real);
    free(sm->files[i].text);
    free(sm->files[i].line_starts);
  }
  free(sm->files);
  fly_sources_init(sm);
}

static void set_err(char *err, size_t errlen, const char *fmt, const char *arg) {
  if (err && errlen)
    snprintf(err, errlen, fmt, arg);
}

/* Takes ownership of text (len bytes plus a NUL) and real. */
static int add_owned(FlySourceManager *sm, const char *path, char *real, char *text, size_t len,
                     char *err, size_t errlen) {
  char *name = strdup(path);
  if (sm->count == sm->cap) {
    int cap = sm->cap ? sm->cap * 2 : 8;
    FlySource *files = name ? realloc(sm->files, (size_t)cap * sizeof *files) : NULL;
    if (!files) {
      free(name), free(real), free(text);
      set_err(err, errlen, "%s", "out of memory");
      return -1;
    }
    sm->files = files;
    sm->cap = cap;
  }
  if (!name) {
    free(real), free(text);
    set_err(err, errlen, "%s", "out of memory");
    return -1;
  }
  FlySource *f = &sm->files[sm->count];
  memset(f, 0, sizeof *f);
  f->path = name;
  f->real = real;
  f->text = text;
  f->len = (uint32_t)len;
  return sm->count++;
}

static const char *too_large(void) {
  static char msg[64];
  snprintf(msg, sizeof msg, "file is too large (limit is %zu MiB)", FLY_SOURCE_MAX_BYTES >> 20);
  return msg;
}

/* Reads a stream to its end, stopping one byte past the limit so a huge input
 * costs no more than the limit. */
static char *read_all(FILE *in, size_t *len, const char **why) {
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap + 1);
  if (!buf) {
    *why = "out of memory";
    return NULL;
  }
  for (;;) {
    if (n == cap) {
      if (cap > FLY_SOURCE_MAX_BYTES) {
        free(buf);
        *why = too_large();
        return NULL;
      }
      cap *= 2;
      char *bigger = realloc(buf, cap + 1);
      if (!bigger) {
        free(buf);
        *why = "out of memory";
        return NULL;
      }
      buf = bigger;
    }
    size_t got = fread(buf + n, 1, cap - n, in);
    n += got;
    if (got == 0)
      break;
  }
  if (ferror(in)) {
    free(buf);
    *why = strerror(errno ? errno : EIO);
    return NULL;
  }
  if (n > FLY_SOURCE_MAX_BYTES) {
    free(buf);
    *why = too_large();
    return NULL;
  }
  buf[n] = '\0';
  *len = n;
  return buf;
}

char *fly_read_file(const char *path, size_t *len, const char **why) {
  bool is_stdin = strcmp(path, "-") == 0;
  FILE *in = is_stdin ? stdin : fopen(path, "rb");
  if (!in) {
    *why = strerror(errno);
    return NULL;
  }
  errno = 0;
  char *text = read_all(in, len, why);
  /* A directory opens but cannot be read: fread sets EISDIR. */
  if (!is_stdin)
    fclose(in);
  return text;
}

int fly_sources_load(FlySourceManager *sm, const char *path, char *err, size_t errlen) {
  bool is_stdin = strcmp(path, "-") == 0;
  size_t len = 0;
  const char *why = NULL;
  char *text = fly_read_file(path, &len, &why);
  if (!text) {
    set_err(err, errlen, "%s", why);
    return -1;
  }
  char *real = is_stdin ? NULL : realpath(path, NULL);
  return add_owned(sm, is_stdin ? "<stdin>" : path, real, text, len, err, errlen);
}

int fly_sources_add(FlySourceManager *sm, const char *name, const char *text, size_t len, char *err,
                    size_t errlen) {
  if (len > FLY_SOURCE_MAX_BYTES) {
    set_err(err, errlen, "%s", too_large());
    return -1;
  }
  char *copy = malloc(len + 1);
  if (!copy) {
    set_err(err, errlen, "%s", "out of memory");
    return -1;
  }
  memcpy(copy, text, len);
  copy[len] = '\0';
  return add_owned(sm, name, NULL, copy, len, err, errlen);
}

int fly_sources_find_real(const FlySourceManager *sm, const char *real) {
  for (int i = 0; i < sm->count; i++)
    if (sm->files[i].real && strcmp(sm->files[i].real, real) == 0)
      return i;
  return -1;
}

const FlySource *fly_source(const FlySourceManager *sm, int file) {
  return file >= 0 && file < sm->count ? &sm->files[file] : NULL;
}

/* Builds the line table once. On allocation failure the file is treated as
 * one line (line_count stays 0), which only makes messages less precise. */
static void build_lines(FlySource *f) {
  if (f->line_starts || f->line_count)
    return;
  uint32_t n = 1;
  for (uint32_t i = 0; i < f->len; i++)
    n += f->text[i] == '\n';
  f->line_starts = malloc((size_t)n * sizeof *f->line_starts);
  if (!f->line_starts)
    return;
  f->line_starts[0] = 0;
  uint32_t k = 1;
  for (uint32_t i = 0; i < f->len; i++)
    if (f->text[i] == '\n')
      f->line_starts[k++] = i + 1;
  f->line_count = n;
}

/* Index of the line holding offset: the last line start <= offset. */
static uint32_t line_index(FlySource *f, uint32_t offset) {
  build_lines(f);
  if (!f->line_starts)
    return 0;
  uint32_t lo = 0, hi = f->line_count;
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (f->line_starts[mid] <= offset)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

static uint32_t line_start(const FlySource *f, uint32_t index) {
  return f->line_starts ? f->line_starts[index] : 0;
}

void fly_source_line_col(const FlySourceManager *sm, int file, uint32_t offset, uint32_t *line,
                         uint32_t *col) {
  FlySource *f = (FlySource *)fly_source(sm, file);
  if (!f) {
    *line = *col = 0;
    return;
  }
  if (offset > f->len)
    offset = f->len;
  uint32_t i = line_index(f, offset);
  *line = i + 1;
  *col = offset - line_start(f, i) + 1;
}

bool fly_source_offset(const FlySourceManager *sm, int file, uint32_t line, uint32_t col,
                       uint32_t *offset) {
  FlySource *f = (FlySource *)fly_source(sm, file);
  if (!f || line < 1 || col < 1)
    return false;
  build_lines(f);
  if (!f->line_starts || line > f->line_count)
    return false;
  uint32_t at = f->line_starts[line - 1] + (col - 1);
  if (at > f->len)
    return false;
  *offset = at;
  return true;
}

void fly_source_line_text(const FlySourceManager *sm, int file, uint32_t offset, const char **text,
                          uint32_t *len) {
  FlySource *f = (FlySource *)fly_source(sm, file);
  if (!f) {
    *text = "";
    *len = 0;
    return;
  }
  if (offset > f->len)
    offset = f->len;
  uint32_t i = line_index(f, offset);
  uint32_t start = line_start(f, i);
  /* The next line's start bounds this one, so a long line is not rescanned
     for each of its diagnostics. */
  uint32_t end = start;
  if (f->line_starts && i + 1 < f->line_count)
    end = f->line_starts[i + 1] - 1; /* the '\n' that ends this line */
  else
    while (end < f->len && f->text[end] != '\n')
      end++;
  if (end > start && f->text[end - 1] == '\r')
    end--;
  *text = f->text + start;
  *len = end - start;
}
