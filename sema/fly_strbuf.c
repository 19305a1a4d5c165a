/* fly_strbuf.c — growable arena strings. Old buffers stay in the arena until
 * the session ends; printing is rare enough that this costs nothing. */
#include "fly_strbuf.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void fly_sb_init(FlyStrBuf *sb, FlyAlgebra *A) {
  sb->A = A;
  sb->data = NULL;
  sb->len = sb->cap = 0;
  sb->broken = false;
}

static bool reserve(FlyStrBuf *sb, size_t extra) {
  if (sb->broken)
    return false;
  if (sb->len + extra + 1 <= sb->cap)
    return true;
  size_t cap = sb->cap ? sb->cap : 64;
  while (cap < sb->len + extra + 1) {
    if (cap > FLY_ARENA_LIMIT) {
      fly_fail(sb->A, "text too long (limit is %zu MiB)", FLY_ARENA_LIMIT >> 20);
      sb->broken = true;
      return false;
    }
    cap *= 2;
  }
  char *p = fly_alloc(sb->A, cap);
  if (!p) {
    sb->broken = true;
    return false;
  }
  if (sb->len)
    memcpy(p, sb->data, sb->len);
  sb->data = p;
  sb->cap = cap;
  return true;
}

void fly_sb_puts(FlyStrBuf *sb, const char *s) {
  size_t n = strlen(s);
  if (!reserve(sb, n))
    return;
  memcpy(sb->data + sb->len, s, n);
  sb->len += n;
  sb->data[sb->len] = '\0';
}

void fly_sb_putc(FlyStrBuf *sb, char c) {
  if (!reserve(sb, 1))
    return;
  sb->data[sb->len++] = c;
  sb->data[sb->len] = '\0';
}

void fly_sb_int(FlyStrBuf *sb, int64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%" PRId64, v);
  fly_sb_puts(sb, buf);
}

char *fly_sb_finish(FlyStrBuf *sb) {
  if (!reserve(sb, 0))
    return NULL;
  return sb->data;
}
