/* fly_source.h — the source files of one compilation, addressed by byte offset.
 *
 * Every location in the compiler is a (file, byte offset) pair; lines and
 * columns exist only in messages, and are computed from a line table built the
 * first time a file's lines are asked for. Files are read whole, checked
 * against a size limit, and kept NUL-terminated (the lexer's sentinel). */
#ifndef FLY_SOURCE_H
#define FLY_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest source file accepted; larger ones are refused with a message, so a
 * stray multi-gigabyte file cannot exhaust memory. */
#define FLY_SOURCE_MAX_BYTES ((size_t)64 << 20)

typedef struct FlySource {
  char *path; /* as given (for messages) */
  char *real; /* canonical path, or NULL for standard input and memory */
  char *text; /* the bytes, plus a NUL one past the end */
  uint32_t len;
  uint32_t *line_starts; /* offsets where each line begins; built on demand */
  uint32_t line_count;
} FlySource;

typedef struct FlySourceManager {
  FlySource *files;
  int count, cap;
} FlySourceManager;

/* A location: file index plus a half-open byte range [begin, end). */
typedef struct FlySpan {
  int32_t file; /* -1: no location */
  uint32_t begin, end;
} FlySpan;

static inline FlySpan fly_span(int file, uint32_t begin, uint32_t end) {
  FlySpan s = {file, begin, end};
  return s;
}
static inline FlySpan fly_no_span(void) { return fly_span(-1, 0, 0); }

void fly_sources_init(FlySourceManager *sm);
void fly_sources_release(FlySourceManager *sm);

/* The whole of a file ("-" is standard input), NUL-terminated after len
 * bytes (malloc'd), up to FLY_SOURCE_MAX_BYTES; NULL with the reason in
 * *why (errno's text, or the size limit). Binary files are fine. */
char *fly_read_file(const char *path, size_t *len, const char **why);

/* Loads a file ("-" is standard input). Returns its index, or -1 with a
 * message in err (errno's text, or the size limit). */
int fly_sources_load(FlySourceManager *sm, const char *path, char *err, size_t errlen);
/* Adds text held in memory under a display name; returns its index or -1. */
int fly_sources_add(FlySourceManager *sm, const char *name, const char *text, size_t len, char *err,
                    size_t errlen);
/* The index of an already-loaded file with this canonical path, or -1. */
int fly_sources_find_real(const FlySourceManager *sm, const char *real);

const FlySource *fly_source(const FlySourceManager *sm, int file);

/* 1-based line and byte column of an offset (an offset at or past the end
 * maps to the end). */
void fly_source_line_col(const FlySourceManager *sm, int file, uint32_t offset, uint32_t *line,
                         uint32_t *col);
/* The offset of a 1-based line and byte column; false outside the file. */
bool fly_source_offset(const FlySourceManager *sm, int file, uint32_t line, uint32_t col,
                       uint32_t *offset);
/* The line holding offset: its first byte and length without the newline. */
void fly_source_line_text(const FlySourceManager *sm, int file, uint32_t offset, const char **text,
                          uint32_t *len);

#endif
