/* flyc_run_args.c — `flyc run`'s arguments: NAME=VALUE read, .npy files
 * loaded, host data generated, outputs written (flyc_run_args.h). */
#include "flyc_run_args.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_diag.h"
#include "flyc_options.h"

/* ---- random numbers ---- */

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

/* xoshiro256** needs a state that is not all zeros: splitmix64 of any seed
   gives one. */
void flyc_rng_seed(FlycRng *rng, uint64_t seed) {
  for (int i = 0; i < 4; i++)
    rng->s[i] = splitmix64(&seed);
  rng->has_spare = false;
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t next_u64(FlycRng *r) {
  uint64_t *s = r->s, result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

/* Uniform in [0, 1), 53 random bits. */
static double uniform(FlycRng *r) { return (double)(next_u64(r) >> 11) * 0x1.0p-53; }

/* Normal(0, 1) by Box-Muller, which gives two per pair of uniforms. */
static double normal(FlycRng *r) {
  if (r->has_spare) {
    r->has_spare = false;
    return r->spare;
  }
  double u = 1.0 - uniform(r), v = uniform(r); /* u in (0, 1]: log(u) is finite */
  double radius = sqrt(-2.0 * log(u)), angle = 6.283185307179586 * v;
  r->spare = radius * sin(angle);
  r->has_spare = true;
  return radius * cos(angle);
}

/* ---- element types ---- */

static const struct {
  const char *name;
  FlyrtDtype dtype;
} dtype_names[] = {{"f16", FLYRT_F16}, {"bf16", FLYRT_BF16}, {"f32", FLYRT_F32},
                   {"f64", FLYRT_F64}, {"i8", FLYRT_I8},     {"i16", FLYRT_I16},
                   {"i32", FLYRT_I32}, {"i64", FLYRT_I64}};

FlyrtDtype flyc_run_dtype(const char *name, size_t len) {
  for (size_t i = 0; i < sizeof dtype_names / sizeof dtype_names[0]; i++)
    if (strlen(dtype_names[i].name) == len && memcmp(dtype_names[i].name, name, len) == 0)
      return dtype_names[i].dtype;
  return FLYRT_DTYPE_NONE;
}

/* The .npy kind and size of each element type a file can hold; bf16 has
   none (it is written as float32). */
static const struct {
  FlyrtDtype dtype;
  char kind;
  unsigned size;
} npy_types[] = {{FLYRT_I1, 'b', 1},  {FLYRT_I8, 'i', 1},  {FLYRT_I16, 'i', 2},
                 {FLYRT_I32, 'i', 4}, {FLYRT_I64, 'i', 8}, {FLYRT_F16, 'f', 2},
                 {FLYRT_F32, 'f', 4}, {FLYRT_F64, 'f', 8}};

static FlyrtDtype dtype_of_npy(char kind, unsigned size) {
  for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
    if (npy_types[i].kind == kind && npy_types[i].size == size)
      return npy_types[i].dtype;
  return FLYRT_DTYPE_NONE;
}

static bool npy_of_dtype(FlyrtDtype t, char *kind, unsigned *size) {
  for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
    if (npy_types[i].dtype == t) {
      *kind = npy_types[i].kind;
      *size = npy_types[i].size;
      return true;
    }
  return false;
}

static bool is_float(FlyrtDtype t) {
  return t == FLYRT_F16 || t == FLYRT_BF16 || t == FLYRT_F32 || t == FLYRT_F64;
}

/* IEEE half from float, rounding to nearest even; in integers, so that the
   result does not depend on the compiler's _Float16 support. */
static uint16_t f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  uint32_t a = x & 0x7fffffff;
  if (a > 0x7f800000) /* NaN: stays a (quiet) NaN */
    return sign | 0x7e00;
  if (a >= 0x477ff000) /* 65520 and above round to infinity */
    return sign | 0x7c00;
  if (a >= 0x38800000) /* normal in half: rebias the exponent, round 13 bits away */
    return sign | (uint16_t)((a + 0xfff + ((a >> 13) & 1) - 0x38000000) >> 13);
  uint32_t e = a >> 23;
  if (e < 102) /* below half of the smallest subnormal: zero */
    return sign;
  uint32_t mant = (a & 0x7fffff) | 0x800000, shift = 126 - e;
  return sign | (uint16_t)((mant + (1u << (shift - 1)) - 1 + ((mant >> shift) & 1)) >> shift);
}

static uint16_t f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  if (isnan(f))
    return 0x7fc0;
  return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

static float bf16_to_f32(uint16_t h) {
  uint32_t x = (uint32_t)h << 16;
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}

static double clamp(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Stores v as one element of type t at dst. Integers come rounded. */
static void store(FlyrtDtype t, unsigned char *dst, double v) {
  float f = (float)v;
  uint16_t h;
  int8_t i8;
  int16_t i16;
  int32_t i32;
  int64_t i64;
  switch (t) {
  case FLYRT_F64:
    memcpy(dst, &v, 8);
    break;
  case FLYRT_F32:
    memcpy(dst, &f, 4);
    break;
  case FLYRT_F16:
  case FLYRT_BF16:
    h = t == FLYRT_F16 ? f32_to_f16(f) : f32_to_bf16(f);
    memcpy(dst, &h, 2);
    break;
  case FLYRT_I8:
    i8 = (int8_t)clamp(v, INT8_MIN, INT8_MAX);
    memcpy(dst, &i8, 1);
    break;
  case FLYRT_I16:
    i16 = (int16_t)clamp(v, INT16_MIN, INT16_MAX);
    memcpy(dst, &i16, 2);
    break;
  case FLYRT_I32:
    i32 = (int32_t)clamp(v, INT32_MIN, INT32_MAX);
    memcpy(dst, &i32, 4);
    break;
  default: /* i64: |v| stays small, round(4 * normal) or 0 to 15 */
    i64 = (int64_t)v;
    memcpy(dst, &i64, 8);
  }
}

/* One element of a generated tensor. */
static double draw(FlycRunValue v, bool integer, FlycRng *r) {
  switch (v) {
  case FLYC_RUN_RANDN:
    return integer ? round(4.0 * normal(r)) : normal(r);
  case FLYC_RUN_RAND:
    return integer ? (double)(next_u64(r) >> 60) : uniform(r);
  case FLYC_RUN_ONES:
    return 1.0;
  default:
    return 0.0;
  }
}

/* ---- NAME=VALUE ---- */

static const char kinds_help[] = "randn, rand, zeros or ones, as KIND:DTYPE:DIMS; or @FILE.npy";
static const char dtypes_help[] = "f16, bf16, f32, f64, i8, i16, i32 or i64";

/* DIMS ::= extent { 'x' extent }, each a positive decimal number; the whole
   tensor must fit in memory's addresses (checked with dtype's size). */
static bool parse_dims(const char *s, FlycRunArg *a, char *why, size_t why_size) {
  a->rank = 0;
  uint64_t bytes = flyrtDtypeSize(a->dtype);
  for (const char *p = s;; p++) {
    char *end;
    if (!isdigit((unsigned char)*p))
      break;
    errno = 0;
    long long n = strtoll(p, &end, 10);
    if (errno || n < 1 || a->rank == FLYRT_MAX_RANK)
      break;
    a->shape[a->rank++] = n;
    if (__builtin_mul_overflow(bytes, (uint64_t)n, &bytes) || bytes > (uint64_t)SIZE_MAX / 2)
      return fly_why(why, why_size, "'%s': the tensor %s is too large to allocate", a->text, s);
    p = end;
    if (*p == '\0')
      return true;
    if (*p != 'x')
      break;
  }
  return fly_why(why, why_size,
                 "'%s': the dims '%s' are not extents from 1 up separated by 'x' (at most %d of "
                 "them), such as 1048576 or 4096x4096",
                 a->text, s, FLYRT_MAX_RANK);
}

static const struct {
  const char *name;
  FlycRunValue value;
} kinds[] = {{"randn", FLYC_RUN_RANDN},
             {"rand", FLYC_RUN_RAND},
             {"zeros", FLYC_RUN_ZEROS},
             {"ones", FLYC_RUN_ONES}};

static bool is_kind(const char *v) {
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (strcmp(kinds[i].name, v) == 0)
      return true;
  return false;
}

/* KIND:DTYPE:DIMS */
static bool parse_generated(const char *v, FlycRunArg *a, char *why, size_t why_size) {
  size_t klen = strcspn(v, ":");
  a->value = 0;
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (strlen(kinds[i].name) == klen && strncmp(kinds[i].name, v, klen) == 0)
      a->value = kinds[i].value;
  if (!a->value)
    return fly_why(why, why_size, "'%s': unknown kind of tensor '%.*s' (the kinds are %s)", a->text,
                   (int)klen, v, kinds_help);
  const char *dt = v + klen;
  size_t dlen = *dt ? strcspn(dt + 1, ":") : 0;
  if (!*dt || !dt[1 + dlen] || !dt[2 + dlen])
    return fly_why(why, why_size,
                   "'%s': a tensor is written %.*s:DTYPE:DIMS, such as %.*s:f32:1024", a->text,
                   (int)klen, v, (int)klen, v);
  a->dtype = flyc_run_dtype(dt + 1, dlen);
  if (!a->dtype)
    return fly_why(why, why_size, "'%s': unknown dtype '%.*s' (the dtypes are %s)", a->text,
                   (int)dlen, dt + 1, dtypes_help);
  return parse_dims(dt + 2 + dlen, a, why, why_size);
}

/* A decimal integer, else a floating literal as strtod reads it (1.5,
   1e-3, inf). */
static bool parse_scalar(const char *v, FlycRunArg *a, char *why, size_t why_size) {
  char *end;
  if (!*v || isspace((unsigned char)*v))
    return fly_why(why, why_size, "'%s': no value after '='", a->text);
  errno = 0;
  long long i = strtoll(v, &end, 10);
  if (!*end) {
    if (errno)
      return fly_why(why, why_size, "'%s': %s does not fit a 64-bit integer", a->text, v);
    a->value = FLYC_RUN_INT;
    a->i = i;
    return true;
  }
  double f = strtod(v, &end);
  if (!*end) {
    a->value = FLYC_RUN_FLOAT;
    a->f = f;
    return true;
  }
  return fly_why(why, why_size, "'%s': '%s' is neither a number nor a tensor (%s)", a->text, v,
                 kinds_help);
}

bool flyc_run_arg_parse(const char *text, FlycRunArg *a, char *why, size_t why_size) {
  memset(a, 0, sizeof *a);
  a->text = text;
  const char *eq = strchr(text, '=');
  size_t n = eq ? (size_t)(eq - text) : 0;
  if (!eq || !flyc_is_identifier(text, n) || n >= FLYC_RUN_NAME_MAX)
    return fly_why(
        why, why_size,
        "'%s' is not an argument NAME=VALUE, such as A=randn:f32:1024, A=@a.npy or n=1024", text);
  memcpy(a->name, text, n);
  a->name[n] = '\0';
  const char *v = a->value_text = eq + 1;
  if (v[0] == '@') {
    if (!v[1])
      return fly_why(why, why_size, "'%s': @ takes a file name, such as %s=@a.npy", text, a->name);
    a->value = FLYC_RUN_FILE;
    a->path = v + 1;
    return true;
  }
  if (strchr(v, ':') || is_kind(v))
    return parse_generated(v, a, why, why_size);
  return parse_scalar(v, a, why, why_size);
}

/* ---- data ---- */

uint64_t flyc_run_arg_count(const FlycRunArg *a) {
  uint64_t n = 1;
  for (int i = 0; i < a->rank; i++)
    n *= (uint64_t)a->shape[i];
  return n;
}

uint64_t flyc_run_arg_bytes(const FlycRunArg *a) {
  return flyc_run_arg_count(a) * flyrtDtypeSize(a->dtype);
}

/* The file's float32 data rounded to bf16, replacing it. */
static bool npy_to_bf16(FlyNpyArray *npy) {
  uint64_t n = fly_npy_count(npy);
  uint16_t *out = malloc(n ? n * 2 : 1);
  if (!out)
    return false;
  const unsigned char *in = npy->data;
  for (uint64_t i = 0; i < n; i++) {
    float f;
    memcpy(&f, in + 4 * i, 4);
    out[i] = f32_to_bf16(f);
  }
  free(npy->data);
  npy->data = out;
  npy->itemsize = 2;
  return true;
}

bool flyc_run_arg_load(FlycRunArg *a, FlyrtDtype want, char *why, size_t why_size) {
  char reason[512];
  if (!fly_npy_read(a->path, &a->npy, reason, sizeof reason))
    return fly_why(why, why_size, "cannot read '%s': %s", a->path, reason);
  if (a->npy.ndim > FLYRT_MAX_RANK)
    return fly_why(why, why_size, "'%s' has %d dimensions (a tensor has at most %d)", a->path,
                   a->npy.ndim, FLYRT_MAX_RANK);
  a->dtype = dtype_of_npy(a->npy.kind, a->npy.itemsize);
  if (!a->dtype)
    return fly_why(
        why, why_size,
        "'%s' holds %s elements, and Fly's tensors take b1, i1, i2, i4, i8, f2, f4 or f8 "
        "(as .npy names them)",
        a->path, fly_npy_descr(a->npy.kind, a->npy.itemsize));
  if (want == FLYRT_BF16 && a->dtype == FLYRT_F32) {
    if (!npy_to_bf16(&a->npy))
      return fly_why(why, why_size, "out of memory");
    a->dtype = FLYRT_BF16;
  }
  a->rank = a->npy.ndim;
  memcpy(a->shape, a->npy.shape, sizeof(int64_t) * (size_t)a->rank);
  return true;
}

const void *flyc_run_arg_host_data(FlycRunArg *a, FlycRng *rng, bool *oom) {
  *oom = false;
  if (a->value == FLYC_RUN_FILE)
    return a->npy.data;
  if (a->value == FLYC_RUN_ZEROS)
    return NULL;
  uint64_t n = flyc_run_arg_count(a);
  size_t size = flyrtDtypeSize(a->dtype);
  size_t bytes = (size_t)(n * size);
  unsigned char *p = malloc(bytes ? bytes : 1);
  if (!p) {
    *oom = true;
    return NULL;
  }
  bool integer = !is_float(a->dtype);
  for (uint64_t i = 0; i < n; i++)
    store(a->dtype, p + i * size, draw(a->value, integer, rng));
  free(a->host);
  a->host = p;
  return p;
}

bool flyc_run_write_npy(const char *path, FlyrtDtype dtype, int rank, const int64_t *shape,
                        const void *data, char *why, size_t why_size) {
  FlyNpyArray arr = {.ndim = rank};
  memcpy(arr.shape, shape, sizeof(int64_t) * (size_t)rank);
  float *wide = NULL;
  if (dtype == FLYRT_BF16) {
    uint64_t n = fly_npy_count(&arr);
    wide = malloc(n ? n * sizeof(float) : 1);
    if (!wide)
      return fly_why(why, why_size, "out of memory");
    for (uint64_t i = 0; i < n; i++) {
      uint16_t h;
      memcpy(&h, (const unsigned char *)data + 2 * i, 2);
      wide[i] = bf16_to_f32(h);
    }
    dtype = FLYRT_F32;
  }
  if (!npy_of_dtype(dtype, &arr.kind, &arr.itemsize)) {
    free(wide);
    return fly_why(why, why_size, "cannot write '%s': %s elements have no .npy type", path,
                   flyrtDtypeName(dtype));
  }
  arr.data = wide ? (void *)wide : (void *)data;
  bool ok = fly_npy_write(path, &arr, why, why_size);
  free(wide);
  return ok;
}

void flyc_run_arg_release(FlycRunArg *a) {
  fly_npy_release(&a->npy);
  free(a->host);
  a->host = NULL;
}
