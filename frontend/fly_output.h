/* fly_output.h — writing a file whole or not at all.
 *
 * Every file the tools write (a compiled kernel, an .npy array, a layout's
 * picture) goes through here, so that none is ever left half written: the
 * bytes go to a temporary file beside the destination, PATH.tmp.PID, which
 * is renamed over it only once every write, the flush and the close have
 * succeeded; on any failure it is removed and the destination is as it
 * was. A destination that exists and is not a regular file (a device such
 * as /dev/null, a pipe) is written directly: renaming over it would replace
 * it. "-" (or no path) is standard output, which is flushed, not closed.
 * The first failure's errno is kept, so the message names its cause ("No
 * space left on device") however many writes come after it. */
#ifndef FLY_OUTPUT_H
#define FLY_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct FlyOutput {
  const char *path; /* NULL: standard output */
  char *tmp;        /* the temporary file, or NULL when writing directly */
  FILE *f;
  int err; /* errno of the first failure, 0 while none */
} FlyOutput;

/* Starts writing to path (NULL or "-": standard output). False with the
   reason in why ("cannot write 'PATH': ..."). */
bool fly_output_open(FlyOutput *o, const char *path, char *why, size_t why_size);
/* Writes n bytes; false (remembered for fly_output_close) when they were
   not all written. */
bool fly_output_write(FlyOutput *o, const void *data, size_t n);
/* Ends the output. With keep, the file is completed and renamed into place;
   without it (the caller failed), it is removed. True when the file is
   complete; false with the reason in why (left alone when keep was false). */
bool fly_output_close(FlyOutput *o, bool keep, char *why, size_t why_size);

/* What the file is called in messages: 'PATH', or standard output. */
const char *fly_output_name(const FlyOutput *o, char *buf, size_t n);

/* At the end of a program: flushes standard output, false (with the reason
   in why) when that or an earlier write to it failed. For a failure on the
   way, errno as the program left it is the best account of the cause there
   is (EIO where it says nothing). Output that did not arrive must not pass
   for success. */
bool fly_output_flush_stdout(char *why, size_t why_size);

/* The whole of data to path, as open, write and close do. */
bool fly_output_file(const char *path, const void *data, size_t n, char *why, size_t why_size);

#endif
