/* fly_strbuf.h — a growable string in a FlyAlgebra arena, for printers. */
#ifndef FLY_STRBUF_H
#define FLY_STRBUF_H

#include "fly_algebra.h"

typedef struct FlyStrBuf {
  FlyAlgebra *A;
  char *data;
  size_t len, cap;
  bool broken; /* an allocation failed; the error is in A */
} FlyStrBuf;

void fly_sb_init(FlyStrBuf *sb, FlyAlgebra *A);
void fly_sb_puts(FlyStrBuf *sb, const char *s);
void fly_sb_putc(FlyStrBuf *sb, char c);
void fly_sb_int(FlyStrBuf *sb, int64_t v);
/* The finished string, or NULL when an allocation failed. */
char *fly_sb_finish(FlyStrBuf *sb);

#endif
