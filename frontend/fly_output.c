/* fly_output.c — writing a file whole or not at all (fly_output.h). */
#include "fly_output.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fly_diag.h"

const char *fly_output_name(const FlyOutput *o, char *buf, size_t n) {
  if (!o->path)
    return "standard output";
  snprintf(buf, n, "'%s'", o->path);
  return buf;
}

static bool cannot_write(const FlyOutput *o, int err, char *why, size_t why_size) {
  char name[1100];
  return fly_why(why, why_size, "cannot write %s: %s", fly_output_name(o, name, sizeof name),
                 strerror(err ? err : EIO));
}

/* Remembers the first failure's errno. */
static bool failed(FlyOutput *o) {
  if (!o->err)
    o->err = errno ? errno : EIO;
  return false;
}

bool fly_output_open(FlyOutput *o, const char *path, char *why, size_t why_size) {
  memset(o, 0, sizeof *o);
  o->path = path && strcmp(path, "-") != 0 ? path : NULL;
  if (!o->path) {
    o->f = stdout;
    return true;
  }
  struct stat st;
  bool direct = stat(path, &st) == 0 && !S_ISREG(st.st_mode);
  if (!direct) {
    size_t n = strlen(path) + 32;
    if (!(o->tmp = malloc(n)))
      return fly_why(why, why_size, "out of memory");
    snprintf(o->tmp, n, "%s.tmp.%ld", path, (long)getpid());
  }
  o->f = fopen(direct ? path : o->tmp, "wb");
  if (!o->f) {
    int err = errno;
    free(o->tmp);
    o->tmp = NULL;
    return cannot_write(o, err, why, why_size);
  }
  return true;
}

bool fly_output_write(FlyOutput *o, const void *data, size_t n) {
  if (o->err)
    return false;
  errno = 0;
  return n == 0 || fwrite(data, 1, n, o->f) == n || failed(o);
}

/* Flushes and closes (standard output: flushes), checking each step. */
static void finish(FlyOutput *o) {
  errno = 0;
  if (!o->path) {
    if (fflush(stdout) != 0 || ferror(stdout))
      failed(o);
    clearerr(stdout); /* the failure is the caller's to report, once */
    return;
  }
  if (fflush(o->f) != 0 || ferror(o->f))
    failed(o);
  errno = 0;
  if (fclose(o->f) != 0)
    failed(o);
  o->f = NULL;
}

bool fly_output_close(FlyOutput *o, bool keep, char *why, size_t why_size) {
  finish(o);
  bool ok = keep && !o->err;
  if (ok && o->tmp && rename(o->tmp, o->path) != 0)
    ok = failed(o);
  if (!ok && keep)
    cannot_write(o, o->err, why, why_size);
  if (!ok && o->tmp)
    remove(o->tmp);
  free(o->tmp);
  o->tmp = NULL;
  return ok;
}

bool fly_output_file(const char *path, const void *data, size_t n, char *why, size_t why_size) {
  FlyOutput o;
  if (!fly_output_open(&o, path, why, why_size))
    return false;
  fly_output_write(&o, data, n);
  return fly_output_close(&o, true, why, why_size);
}

bool fly_output_flush_stdout(char *why, size_t why_size) {
  int err = errno;
  bool failed = ferror(stdout);
  errno = 0;
  if (fflush(stdout) != 0) {
    failed = true;
    err = errno;
  }
  return !failed ||
         fly_why(why, why_size, "cannot write standard output: %s", strerror(err ? err : EIO));
}
