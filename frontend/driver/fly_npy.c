/* fly_npy.c — reading and writing NumPy's .npy files (fly_npy.h). */
#include "fly_npy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "fly_diag.h"
#include "fly_output.h"

static const char magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

uint64_t fly_npy_count(const FlyNpyArray *a) {
  uint64_t n = 1;
  for (int i = 0; i < a->ndim; i++)
    n *= (uint64_t)a->shape[i];
  return n;
}

const char *fly_npy_descr(char kind, unsigned itemsize) {
  static const struct {
    char kind;
    unsigned size;
    const char *descr;
  } known[] = {{'b', 1, "|b1"}, {'i', 1, "|i1"}, {'i', 2, "<i2"}, {'i', 4, "<i4"},
               {'i', 8, "<i8"}, {'u', 1, "|u1"}, {'u', 2, "<u2"}, {'u', 4, "<u4"},
               {'u', 8, "<u8"}, {'f', 2, "<f2"}, {'f', 4, "<f4"}, {'f', 8, "<f8"}};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (known[i].kind == kind && known[i].size == itemsize)
      return known[i].descr;
  return NULL;
}

/* ---- the header's dict --------------------------------------------------- */

/* The header text, with the file offset of its first byte for messages. */
typedef struct Reader {
  const char *start, *p, *end;
  size_t offset;
  char *why;
  size_t why_size;
} Reader;

static void skip_space(Reader *r) {
  while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
    r->p++;
}

/* "malformed .npy header: expected X at byte N, found 'c'". */
static bool malformed(Reader *r, const char *expected) {
  size_t at = r->offset + (size_t)(r->p - r->start);
  if (r->p == r->end)
    return fly_why(r->why, r->why_size,
                   "malformed .npy header: expected %s at byte %zu, found the end of the header",
                   expected, at);
  unsigned char c = (unsigned char)*r->p;
  if (c < 0x20 || c >= 0x7f)
    return fly_why(r->why, r->why_size,
                   "malformed .npy header: expected %s at byte %zu, found byte 0x%02x", expected,
                   at, c);
  return fly_why(r->why, r->why_size, "malformed .npy header: expected %s at byte %zu, found '%c'",
                 expected, at, c);
}

/* Skips blanks, then takes c if it is next. */
static bool accept(Reader *r, char c) {
  skip_space(r);
  if (r->p < r->end && *r->p == c) {
    r->p++;
    return true;
  }
  return false;
}

static bool expect(Reader *r, char c, const char *expected) {
  return accept(r, c) || malformed(r, expected);
}

/* string ::= "'" chars "'" | '"' chars '"'   (no escapes: NumPy writes none) */
static bool string(Reader *r, const char **s, size_t *len) {
  skip_space(r);
  if (r->p == r->end || (*r->p != '\'' && *r->p != '"'))
    return malformed(r, "a quoted string");
  char quote = *r->p++;
  const char *begin = r->p;
  while (r->p < r->end && *r->p != quote && *r->p != '\\' && *r->p != '\n')
    r->p++;
  if (r->p == r->end || *r->p != quote)
    return malformed(r, "the end of the string");
  *s = begin;
  *len = (size_t)(r->p - begin);
  r->p++;
  return true;
}

static bool starts_with_word(const Reader *r, const char *word) {
  size_t n = strlen(word);
  return (size_t)(r->end - r->p) >= n && memcmp(r->p, word, n) == 0;
}

/* True | False */
static bool boolean(Reader *r, bool *v) {
  skip_space(r);
  if (starts_with_word(r, "True")) {
    r->p += 4;
    *v = true;
    return true;
  }
  if (starts_with_word(r, "False")) {
    r->p += 5;
    *v = false;
    return true;
  }
  return fly_why(r->why, r->why_size, "the .npy header's 'fortran_order' is not True or False");
}

static bool bad_shape(Reader *r) {
  return fly_why(r->why, r->why_size,
                 "the .npy header's 'shape' is not a tuple of non-negative integers, such as "
                 "(3, 4) or (3,)");
}

/* A dimension: decimal digits, below 2^63. */
static bool dimension(Reader *r, int64_t *v) {
  skip_space(r);
  if (r->p == r->end || *r->p < '0' || *r->p > '9')
    return bad_shape(r);
  uint64_t n = 0;
  while (r->p < r->end && *r->p >= '0' && *r->p <= '9') {
    if (n > (uint64_t)INT64_MAX / 10)
      return bad_shape(r);
    n = n * 10 + (uint64_t)(*r->p++ - '0');
    if (n > (uint64_t)INT64_MAX)
      return bad_shape(r);
  }
  *v = (int64_t)n;
  return true;
}

/* shape ::= '(' ')' | '(' dim ',' [ dim { ',' dim } [','] ] ')'
   As in Python, "(3)" is a number, not a tuple. */
static bool shape(Reader *r, FlyNpyArray *a) {
  if (!accept(r, '('))
    return bad_shape(r);
  a->ndim = 0;
  if (accept(r, ')'))
    return true;
  for (;;) {
    if (a->ndim == FLY_NPY_MAX_DIMS)
      return fly_why(r->why, r->why_size, "the .npy array has more than %d dimensions",
                     FLY_NPY_MAX_DIMS);
    if (!dimension(r, &a->shape[a->ndim++]))
      return false;
    bool comma = accept(r, ',');
    if (accept(r, ')'))
      return comma || a->ndim > 1 || bad_shape(r);
    if (!comma)
      return bad_shape(r);
  }
}

/* The dtype: an optional byte order ('<' little, '|' not applicable, '='
   native, which is little on the machines Fly runs on), a kind and a size. */
static bool descr(Reader *r, const char *s, size_t n, FlyNpyArray *a) {
  char text[32];
  snprintf(text, sizeof text, "%.*s", (int)(n < sizeof text - 1 ? n : sizeof text - 1), s);
  const char *p = text;
  if (*p == '>')
    return fly_why(r->why, r->why_size,
                   "the .npy data is big-endian ('%s'): save it little-endian, "
                   "with arr.astype(arr.dtype.newbyteorder('<'))",
                   text);
  if (*p == '<' || *p == '|' || *p == '=')
    p++;
  char kind = *p;
  unsigned size = 0;
  if (kind && p[1] >= '1' && p[1] <= '8' && !p[2])
    size = (unsigned)(p[1] - '0');
  if (n >= sizeof text || !fly_npy_descr(kind, size))
    return fly_why(r->why, r->why_size,
                   "the .npy dtype '%s' is not supported (bool, integers and floats are: "
                   "b1, i1 to i8, u1 to u8, f2, f4, f8)",
                   text);
  a->kind = kind;
  a->itemsize = size;
  return true;
}

enum { KEY_DESCR = 1, KEY_FORTRAN = 2, KEY_SHAPE = 4 };

/* entry ::= string ':' value, for one of the three keys NumPy writes. */
static bool entry(Reader *r, FlyNpyArray *a, unsigned *seen) {
  static const char *const names[] = {"descr", "fortran_order", "shape"};
  const char *key, *s;
  size_t klen, slen;
  if (!string(r, &key, &klen) || !expect(r, ':', "':'"))
    return false;
  int which = -1;
  for (int i = 0; i < 3; i++)
    if (strlen(names[i]) == klen && memcmp(key, names[i], klen) == 0)
      which = i;
  if (which < 0)
    return fly_why(r->why, r->why_size,
                   "the .npy header has the key '%.*s' (it takes 'descr', 'fortran_order' and "
                   "'shape')",
                   (int)(klen > 64 ? 64 : klen), key);
  if (*seen & (1u << which))
    return fly_why(r->why, r->why_size, "the .npy header gives '%s' twice", names[which]);
  *seen |= 1u << which;
  bool fortran = false;
  switch (which) {
  case 0:
    skip_space(r);
    if (r->p < r->end && *r->p != '\'' && *r->p != '"')
      return fly_why(r->why, r->why_size,
                     "the .npy header's 'descr' is not a string such as '<f4' (structured "
                     "dtypes are not supported)");
    return string(r, &s, &slen) && descr(r, s, slen, a);
  case 1:
    if (!boolean(r, &fortran))
      return false;
    if (fortran)
      return fly_why(r->why, r->why_size,
                     "the .npy array is in Fortran order (fortran_order is True): save it in C "
                     "order, with np.ascontiguousarray(arr)");
    return true;
  default:
    return shape(r, a);
  }
}

/* dict ::= '{' [ entry { ',' entry } [','] ] '}' */
static bool dict(Reader *r, FlyNpyArray *a) {
  unsigned seen = 0;
  if (!expect(r, '{', "'{'"))
    return false;
  while (!accept(r, '}')) {
    if (!entry(r, a, &seen))
      return false;
    if (!accept(r, ',') && (skip_space(r), r->p == r->end || *r->p != '}'))
      return malformed(r, "',' or '}'");
  }
  skip_space(r);
  if (r->p != r->end)
    return malformed(r, "the end of the header after its '}'");
  static const char *const names[] = {"descr", "fortran_order", "shape"};
  for (int i = 0; i < 3; i++)
    if (!(seen & (1u << i)))
      return fly_why(r->why, r->why_size, "the .npy header has no '%s'", names[i]);
  return true;
}

/* ---- the header ---------------------------------------------------------- */

static bool truncated_header(size_t want, size_t n, size_t *need, char *why, size_t why_size) {
  *need = want;
  return fly_why(why, why_size, "truncated .npy file: its header needs %zu bytes, and it has %zu",
                 want, n);
}

/* The bytes count * itemsize, refusing shapes whose size cannot be held. */
static bool data_bytes(const FlyNpyArray *a, uint64_t *bytes, char *why, size_t why_size) {
  uint64_t n = a->itemsize;
  for (int i = 0; i < a->ndim; i++)
    if (__builtin_mul_overflow(n, (uint64_t)a->shape[i], &n) || n > (uint64_t)SIZE_MAX / 2)
      return fly_why(why, why_size,
                     "the .npy array's shape holds more bytes than can be addressed");
  *bytes = n;
  return true;
}

bool fly_npy_parse_header(const void *bytes, size_t n, FlyNpyArray *a, size_t *data_offset,
                          size_t *need, char *why, size_t why_size) {
  const unsigned char *b = bytes;
  *need = 0;
  memset(a, 0, sizeof *a);
  if (n == 0)
    return fly_why(why, why_size, "not a .npy file: it is empty");
  if (memcmp(b, magic, n < 6 ? n : 6) != 0)
    return fly_why(why, why_size, "not a .npy file (it does not start with \\x93NUMPY)");
  if (n < 8)
    return truncated_header(10, n, need, why, why_size);
  unsigned major = b[6], minor = b[7];
  if (!(major >= 1 && major <= 3 && minor == 0))
    return fly_why(why, why_size,
                   "the .npy file is of format version %u.%u (versions 1.0, 2.0 and 3.0 are read)",
                   major, minor);
  size_t prefix = major == 1 ? 10 : 12;
  if (n < prefix)
    return truncated_header(prefix, n, need, why, why_size);
  uint64_t len = (uint64_t)b[8] | (uint64_t)b[9] << 8;
  if (major > 1)
    len |= (uint64_t)b[10] << 16 | (uint64_t)b[11] << 24;
  if (len > n - prefix)
    return truncated_header(prefix + (size_t)len, n, need, why, why_size);
  Reader r = {(const char *)b + prefix,
              (const char *)b + prefix,
              (const char *)b + prefix + len,
              prefix,
              why,
              why_size};
  uint64_t size;
  if (!dict(&r, a) || !data_bytes(a, &size, why, why_size))
    return false;
  *data_offset = prefix + (size_t)len;
  return true;
}

/* "3x4 of <f4", for messages. */
static void describe(const FlyNpyArray *a, char *buf, size_t size) {
  size_t used = (size_t)snprintf(buf, size, "%s", a->ndim ? "" : "scalar");
  for (int i = 0; i < a->ndim && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%" PRId64, i ? "x" : "", a->shape[i]);
  if (used < size)
    snprintf(buf + used, size - used, " of %s", fly_npy_descr(a->kind, a->itemsize));
}

static bool wrong_length(const FlyNpyArray *a, uint64_t want, uint64_t have, char *why,
                         size_t why_size) {
  char shape_text[600];
  describe(a, shape_text, sizeof shape_text);
  if (have < want)
    return fly_why(why, why_size,
                   "truncated .npy data: the header says %" PRIu64
                   " bytes (%s), and the file has %" PRIu64,
                   want, shape_text, have);
  return fly_why(why, why_size,
                 "the .npy file has %" PRIu64 " bytes after the %" PRIu64 " of its data (%s)",
                 have - want, want, shape_text);
}

bool fly_npy_decode(const void *bytes, size_t n, FlyNpyArray *a, char *why, size_t why_size) {
  size_t offset, need;
  if (!fly_npy_parse_header(bytes, n, a, &offset, &need, why, why_size))
    return false;
  uint64_t size = fly_npy_count(a) * a->itemsize; /* checked by the parse */
  if (n - offset != size)
    return wrong_length(a, size, n - offset, why, why_size);
  a->data = malloc(size ? size : 1);
  if (!a->data)
    return fly_why(why, why_size, "out of memory");
  memcpy(a->data, (const char *)bytes + offset, size);
  return true;
}

/* ---- files ---------------------------------------------------------------- */

/* Reads until buf holds want bytes or the file ends; the bytes now held. */
static size_t fill(FILE *f, unsigned char *buf, size_t have, size_t want) {
  if (want > have)
    have += fread(buf + have, 1, want - have, f);
  return have;
}

/* start (n bytes, which may be none) followed by what f holds, up to size
   bytes in all, in a buffer that grows only as the bytes come: what is
   allocated is bounded by what the stream holds, not by the size a header
   claims. The bytes held are in *got; NULL when out of memory. */
static unsigned char *read_up_to(FILE *f, const void *start, size_t n, uint64_t size,
                                 uint64_t *got) {
  size_t cap = size < (1 << 16) ? (size_t)size : 1 << 16;
  cap = cap > n ? cap : n;
  unsigned char *buf = malloc(cap ? cap : 1);
  if (buf && n)
    memcpy(buf, start, n);
  *got = n;
  while (buf && *got < size) {
    if (*got == cap) {
      size_t more = cap > size - cap ? (size_t)size : 2 * cap;
      unsigned char *p = realloc(buf, more);
      if (!p) {
        free(buf);
        return NULL;
      }
      buf = p;
      cap = more;
    }
    size_t r = fread(buf + *got, 1, cap - (size_t)*got, f);
    if (r == 0)
      break;
    *got += r;
  }
  return buf;
}

/* The header, read in two steps: the fixed prefix, then as many bytes as
   it says (a length of up to 4 GiB, read as it comes). */
static bool read_header(FILE *f, FlyNpyArray *a, size_t *offset, char *why, size_t why_size) {
  unsigned char prefix[12];
  size_t have = fill(f, prefix, 0, sizeof prefix), need;
  if (fly_npy_parse_header(prefix, have, a, offset, &need, why, why_size))
    return true;
  if (have < sizeof prefix || need <= have)
    return false; /* malformed, or too short to say its length */
  uint64_t got;
  unsigned char *buf = read_up_to(f, prefix, have, need, &got);
  if (!buf)
    return fly_why(why, why_size, "out of memory");
  bool ok = fly_npy_parse_header(buf, (size_t)got, a, offset, &need, why, why_size);
  free(buf);
  return ok;
}

/* The bytes left in f (read to its end). */
static uint64_t count_rest(FILE *f) {
  char chunk[1 << 16];
  uint64_t n = 0;
  for (size_t got; (got = fread(chunk, 1, sizeof chunk, f)) > 0;)
    n += got;
  return n;
}

/* The bytes that follow the header: the rest of a regular file, from its
   size; -1 for a stream (a pipe), whose length only reading tells. */
static int64_t bytes_after(FILE *f, size_t offset) {
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
    return -1;
  return st.st_size > (off_t)offset ? (int64_t)(st.st_size - (off_t)offset) : 0;
}

/* The data: a file's length is compared with the header before anything
   is allocated for it (a header may claim any shape), and a stream is read
   into a buffer that grows with what arrives. */
static bool read_data(FILE *f, size_t offset, FlyNpyArray *a, char *why, size_t why_size) {
  uint64_t size = fly_npy_count(a) * a->itemsize; /* checked by the parse */
  int64_t have = bytes_after(f, offset);
  if (have >= 0 && (uint64_t)have != size)
    return wrong_length(a, size, (uint64_t)have, why, why_size);
  uint64_t got;
  errno = 0;
  a->data = read_up_to(f, NULL, 0, size, &got);
  if (!a->data)
    return fly_why(why, why_size, "out of memory (%" PRIu64 " bytes of .npy data)", size);
  if (ferror(f))
    return fly_why(why, why_size, "%s", strerror(errno ? errno : EIO));
  uint64_t extra = got == size ? count_rest(f) : 0;
  if (got != size || extra)
    return wrong_length(a, size, got + extra, why, why_size);
  return true;
}

bool fly_npy_read_stream(FILE *f, FlyNpyArray *a, char *why, size_t why_size) {
  memset(a, 0, sizeof *a);
  size_t offset;
  bool ok = read_header(f, a, &offset, why, why_size) && read_data(f, offset, a, why, why_size);
  if (!ok)
    fly_npy_release(a);
  return ok;
}

bool fly_npy_read(const char *path, FlyNpyArray *a, char *why, size_t why_size) {
  memset(a, 0, sizeof *a);
  FILE *f = fopen(path, "rb");
  if (!f)
    return fly_why(why, why_size, "%s", strerror(errno));
  bool ok = fly_npy_read_stream(f, a, why, why_size);
  fclose(f);
  return ok;
}

/* The header NumPy writes: the dict, padded with spaces so that the data
   starts at a multiple of 64 bytes, and '\n'. Version 1.0 always: its
   2-byte length holds any header of at most 32 dimensions. */
static size_t format_header(const FlyNpyArray *a, const char *descr_text, char *buf, size_t size) {
  char dims[FLY_NPY_MAX_DIMS * 24 + 4];
  size_t used = (size_t)snprintf(dims, sizeof dims, "(");
  for (int i = 0; i < a->ndim; i++)
    used +=
        (size_t)snprintf(dims + used, sizeof dims - used, "%s%" PRId64, i ? ", " : "", a->shape[i]);
  snprintf(dims + used, sizeof dims - used, "%s)", a->ndim == 1 ? "," : "");
  int len = snprintf(buf + 10, size - 10, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     descr_text, dims);
  size_t total = 10 + (size_t)len + 1;
  size_t padded = (total + 63) / 64 * 64;
  memset(buf + 10 + len, ' ', padded - total);
  buf[padded - 1] = '\n';
  memcpy(buf, magic, 6);
  buf[6] = 1;
  buf[7] = 0;
  buf[8] = (char)((padded - 10) & 0xff);
  buf[9] = (char)((padded - 10) >> 8);
  return padded;
}

bool fly_npy_write(const char *path, const FlyNpyArray *a, char *why, size_t why_size) {
  const char *d = fly_npy_descr(a->kind, a->itemsize);
  if (!d || a->ndim < 0 || a->ndim > FLY_NPY_MAX_DIMS)
    return fly_why(why, why_size, "cannot write '%s': not an array of a .npy dtype", path);
  char header[64 + FLY_NPY_MAX_DIMS * 24 + 128];
  size_t hlen = format_header(a, d, header, sizeof header);
  FlyOutput out;
  if (!fly_output_open(&out, path, why, why_size))
    return false;
  fly_output_write(&out, header, hlen);
  fly_output_write(&out, a->data, (size_t)(fly_npy_count(a) * a->itemsize));
  return fly_output_close(&out, true, why, why_size);
}

void fly_npy_release(FlyNpyArray *a) {
  free(a->data);
  a->data = NULL;
}
