/* fly_diag.h — the diagnostics engine every stage of the compiler reports to.
 *
 * A diagnostic is a severity, a source span and a message; notes attach to
 * the diagnostic before them. In text form (for people) each one prints as
 *
 *     file.fly:3:13: error: expected an expression, found ';'
 *     let x = 1 +;
 *                ^
 *
 * with colour only when asked for (normally: when stderr is a terminal). In
 * JSON form (for editors) each error or warning is one line holding an object
 * with its range, severity, message and notes. After error_limit errors the
 * engine stops reporting and says so; fly_diag_stopped lets a stage give up
 * early instead of producing errors nobody will see. */
#ifndef FLY_DIAG_H
#define FLY_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "fly_source.h"

typedef enum FlySeverity {
  FLY_NOTE,
  FLY_WARNING,
  FLY_ERROR,
} FlySeverity;

typedef enum FlyDiagFormat {
  FLY_DIAG_TEXT,
  FLY_DIAG_JSON,
} FlyDiagFormat;

enum { FLY_DEFAULT_ERROR_LIMIT = 20 };

typedef struct FlyDiag {
  const FlySourceManager *sources;
  FILE *out;
  FlyDiagFormat format;
  bool color;
  bool warnings_as_errors;
  int error_limit; /* 0: no limit */
  int errors, warnings;
  bool limit_reached; /* the last error reached the limit; its notes may follow */
  bool stopped;       /* the limit was reached and announced: nothing more */
  /* JSON: the open object of the last error or warning, closed when the next
     one arrives (its notes go inside it) or at fly_diag_finish. */
  char *pending;
  size_t pending_len, pending_cap;
  bool pending_broken;
} FlyDiag;

void fly_diag_init(FlyDiag *d, const FlySourceManager *sources, FILE *out);
/* Colour when out is a terminal and NO_COLOR is not set. */
bool fly_diag_color_default(FILE *out);

void fly_diag_report(FlyDiag *d, FlySeverity severity, FlySpan span, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void fly_diag_vreport(FlyDiag *d, FlySeverity severity, FlySpan span, const char *fmt, va_list ap);

#define fly_error(d, span, ...) fly_diag_report((d), FLY_ERROR, (span), __VA_ARGS__)
#define fly_warning(d, span, ...) fly_diag_report((d), FLY_WARNING, (span), __VA_ARGS__)
#define fly_note(d, span, ...) fly_diag_report((d), FLY_NOTE, (span), __VA_ARGS__)

/* True once an error past the limit was dropped (and the limit announced):
 * stages should stop. */
static inline bool fly_diag_stopped(const FlyDiag *d) { return d->stopped; }

/* Flushes what is pending and, in text form, prints "N errors generated."
 * when there were any. Frees the engine's buffers. */
void fly_diag_finish(FlyDiag *d);

/* Writes the message to why (why_size bytes) and returns false, so that a
   check reporting into a caller's buffer can `return fly_why(...)`. */
bool fly_why(char *why, size_t why_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
