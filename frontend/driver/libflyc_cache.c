/* libflyc_cache.c — the disk cache of compiled specialisations.
 *
 * An entry is one compile of the sources for one target with one set of
 * options; its key is a SHA-256 over everything that can change the
 * output (libflyc.c says what). Entries live in DIR/v1/KK/REST, the key's
 * first two hex digits naming a subdirectory so that no directory grows
 * huge. An entry file is:
 *
 *   "FLYCACHE"  u32 version 1  u32 CRC-32 of what follows
 *   u64 output bytes  u64 diagnostics bytes  output  diagnostics
 *
 * Writers write a temporary file in the same directory and rename it over
 * the entry: rename is atomic, so readers see the old entry, the new one or
 * none, and two processes compiling the same thing at once both succeed.
 * The CRC catches what a crash between write and rename can leave. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fly_bundle.h"
#include "libflyc.h"
#include "libflyc_internal.h"

enum { HEADER = 32, VERSION = 1 };
#define MAGIC "FLYCACHE"

bool fly_cache_enabled(void) {
  const char *v = getenv("FLYC_CACHE");
  return !v || !(strcmp(v, "0") == 0 || strcmp(v, "off") == 0 || strcmp(v, "no") == 0 ||
                 strcmp(v, "false") == 0);
}

FLYC_API bool flycCacheDirectory(char *buf, size_t n) {
  const char *dir = getenv("FLYC_CACHE_DIR");
  if (dir && *dir)
    return (size_t)snprintf(buf, n, "%s", dir) < n;
  const char *xdg = getenv("XDG_CACHE_HOME");
  if (xdg && *xdg == '/')
    return (size_t)snprintf(buf, n, "%s/fly", xdg) < n;
  const char *home = getenv("HOME");
  if (home && *home)
    return (size_t)snprintf(buf, n, "%s/.cache/fly", home) < n;
  return false;
}

/* DIR/v1/KK and DIR/v1/KK/REST for a key. */
static bool entry_path(const char *key, char *dir, char *file, size_t n) {
  char root[PATH_MAX];
  if (!flycCacheDirectory(root, sizeof root) || strlen(key) != 64)
    return false;
  if ((size_t)snprintf(dir, n, "%s/v%d/%.2s", root, VERSION, key) >= n)
    return false;
  return (size_t)snprintf(file, n, "%s/%s", dir, key + 2) < n;
}

static uint64_t get64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

/* The entry file, opened for reading only if it is a regular file. The
   cache directory is shared and anything can be put there: a FIFO would
   block open() (O_NONBLOCK returns at once), a symbolic link could lead
   anywhere (O_NOFOLLOW refuses it), and neither is an entry. Such a file is
   a miss; storing the entry renames a regular file over it. */
static int open_entry(const char *file, struct stat *st) {
  int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0)
    return -1;
  if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
    close(fd);
    return -1;
  }
  return fd;
}

/* The whole entry, or NULL when it cannot be read or is of an impossible
   size. */
static unsigned char *read_entry(const char *file, size_t *size) {
  struct stat st;
  int fd = open_entry(file, &st);
  if (fd < 0)
    return NULL;
  unsigned char *buf = NULL;
  bool ok = st.st_size >= HEADER && st.st_size < ((off_t)1 << 34) &&
            (buf = malloc((size_t)st.st_size + 1));
  size_t n = ok ? (size_t)st.st_size : 0, got = 0;
  while (ok && got < n) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r <= 0)
      ok = false;
    else
      got += (size_t)r;
  }
  close(fd);
  if (!ok) {
    free(buf);
    return NULL;
  }
  *size = n;
  return buf;
}

bool fly_cache_get(const char *key, char **data, size_t *len, char **diag, size_t *diag_len) {
  char dir[PATH_MAX], file[PATH_MAX];
  if (!entry_path(key, dir, file, sizeof file))
    return false;
  size_t size = 0;
  unsigned char *buf = read_entry(file, &size);
  if (!buf)
    return false;
  uint32_t version, crc;
  memcpy(&version, buf + 8, 4);
  memcpy(&crc, buf + 12, 4);
  uint64_t n1 = get64(buf + 16), n2 = get64(buf + 24);
  bool ok = memcmp(buf, MAGIC, 8) == 0 && version == VERSION && n1 <= size - HEADER &&
            n2 == size - HEADER - n1 && fly_crc32(0, buf + 16, size - 16) == crc;
  if (!ok)
    unlink(file); /* damaged: compile it again */
  char *out = ok ? malloc(n1 + 1) : NULL, *d = ok ? malloc(n2 + 1) : NULL;
  if (!out || !d) {
    free(buf);
    free(out);
    free(d);
    return false;
  }
  memcpy(out, buf + HEADER, n1);
  out[n1] = '\0';
  memcpy(d, buf + HEADER + n1, n2);
  d[n2] = '\0';
  free(buf);
  *data = out;
  *len = n1;
  *diag = d;
  *diag_len = n2;
  return true;
}

void fly_cache_drop(const char *key) {
  char dir[PATH_MAX], file[PATH_MAX];
  if (entry_path(key, dir, file, sizeof file))
    unlink(file);
}

/* mkdir -p of dir. */
static bool make_dirs(char *dir) {
  for (char *p = dir + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    bool ok = mkdir(dir, 0777) == 0 || errno == EEXIST;
    *p = '/';
    if (!ok)
      return false;
  }
  return mkdir(dir, 0777) == 0 || errno == EEXIST;
}

static bool write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n) {
    ssize_t w = write(fd, c, n);
    if (w <= 0)
      return false;
    c += w;
    n -= (size_t)w;
  }
  return true;
}

void fly_cache_put(const char *key, const void *data, size_t len, const char *diag,
                   size_t diag_len) {
  char dir[PATH_MAX], file[PATH_MAX], tmp[PATH_MAX + 64];
  if (!entry_path(key, dir, file, sizeof file) || !make_dirs(dir))
    return;
  static _Thread_local unsigned counter;
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", file, (long)getpid(), counter++);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0)
    return;
  unsigned char head[HEADER];
  uint32_t version = VERSION;
  uint64_t n1 = len, n2 = diag_len;
  memcpy(head, MAGIC, 8);
  memcpy(head + 8, &version, 4);
  memcpy(head + 16, &n1, 8);
  memcpy(head + 24, &n2, 8);
  uint32_t crc = fly_crc32(0, head + 16, 16);
  crc = fly_crc32(crc, data, len);
  crc = fly_crc32(crc, diag, diag_len);
  memcpy(head + 12, &crc, 4);
  bool ok =
      write_all(fd, head, HEADER) && write_all(fd, data, len) && write_all(fd, diag, diag_len);
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp, file) != 0)
    unlink(tmp);
}

/* ---- stats and clear ---- */

/* Visits each file of DIR/v1/KK/ (remove: deletes them, and the emptied
   subdirectories). */
static bool walk(FlycCacheStats *s, bool remove) {
  char root[PATH_MAX], sub[PATH_MAX + 16], path[2 * PATH_MAX + 300];
  memset(s, 0, sizeof *s);
  if (!flycCacheDirectory(root, sizeof root)) {
    errno = ENOENT;
    return false;
  }
  char top[PATH_MAX + 8];
  snprintf(top, sizeof top, "%s/v%d", root, VERSION);
  DIR *d = opendir(top);
  if (!d)
    return errno == ENOENT;
  bool ok = true;
  for (struct dirent *e; (e = readdir(d));) {
    if (strlen(e->d_name) != 2 || e->d_name[0] == '.')
      continue;
    snprintf(sub, sizeof sub, "%s/%.2s", top, e->d_name);
    DIR *d2 = opendir(sub);
    if (!d2)
      continue;
    for (struct dirent *f; (f = readdir(d2));) {
      if (f->d_name[0] == '.')
        continue;
      snprintf(path, sizeof path, "%s/%s", sub, f->d_name);
      /* Only regular files are entries; clearing removes whatever else
         is there too (a FIFO, a link: never followed), but no directory. */
      struct stat st;
      if (lstat(path, &st) != 0 || S_ISDIR(st.st_mode) || (!remove && !S_ISREG(st.st_mode)))
        continue;
      bool entry = S_ISREG(st.st_mode) && !strstr(f->d_name, ".tmp.");
      if (remove && unlink(path) != 0) {
        ok = false;
        continue;
      }
      if (entry) {
        s->entries++;
        s->bytes += (uint64_t)st.st_size;
      }
    }
    closedir(d2);
    if (remove)
      rmdir(sub);
  }
  closedir(d);
  if (remove)
    rmdir(top);
  return ok;
}

FLYC_API bool flycCacheStats(FlycCacheStats *stats) { return walk(stats, false); }
FLYC_API bool flycCacheClear(FlycCacheStats *removed) { return walk(removed, true); }
