/* fly_value.c — constructing, comparing and printing interpreter values. */
#include "fly_value.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_layout_tv.h"
#include "fly_strbuf.h"

/* ---- types ----------------------------------------------------------------- */

/* Scalar and compile-time types are interned: one object per code, so that
   they can be compared by pointer and need no arena. */
static FlyType scalar_types[FLY_TYPE_CODE_COUNT];
static FlyType static_types[FLY_TYPE_CODE_COUNT];

const FlyType *fly_type_scalar(FlyTypeCode code) {
  FlyType *t = &scalar_types[code];
  t->kind = FLY_TY_SCALAR;
  t->code = code;
  return t;
}

const FlyType *fly_type_static(FlyTypeCode code) {
  FlyType *t = &static_types[code];
  t->kind = FLY_TY_STATIC;
  t->code = code;
  return t;
}

const FlyType *fly_type_vec(FlyAlgebra *A, int n, const FlyType *elem) {
  FlyType *t = fly_alloc(A, sizeof *t);
  if (!t)
    return NULL;
  t->kind = FLY_TY_VEC;
  t->n = n;
  t->elem = elem;
  return t;
}

const FlyType *fly_type_tuple(FlyAlgebra *A, int n, const FlyType **elems) {
  FlyType *t = fly_alloc(A, sizeof *t);
  const FlyType **copy = fly_alloc(A, sizeof *copy * (size_t)(n ? n : 1));
  if (!t || !copy)
    return NULL;
  if (n > 0)
    memcpy(copy, elems, sizeof *copy * (size_t)n);
  t->kind = FLY_TY_TUPLE;
  t->n = n;
  t->elems = copy;
  return t;
}

bool fly_type_is_int(const FlyType *t) {
  return t && t->kind == FLY_TY_SCALAR && t->code >= FLY_TYPE_I8 && t->code <= FLY_TYPE_INDEX;
}

bool fly_type_is_float(const FlyType *t) {
  return t && t->kind == FLY_TY_SCALAR && t->code >= FLY_TYPE_F16 && t->code <= FLY_TYPE_F8E5M2FNUZ;
}

bool fly_type_is_f8(const FlyType *t) {
  return t && t->kind == FLY_TY_SCALAR && t->code >= FLY_TYPE_F8E4M3 &&
         t->code <= FLY_TYPE_F8E5M2FNUZ;
}

bool fly_type_is_fnuz(const FlyType *t) {
  return t && t->kind == FLY_TY_SCALAR &&
         (t->code == FLY_TYPE_F8E4M3FNUZ || t->code == FLY_TYPE_F8E5M2FNUZ);
}

int fly_type_bits(const FlyType *t) {
  if (!t)
    return 0;
  if (t->kind == FLY_TY_VEC)
    return t->n < 0 ? 0 : t->n * fly_type_bits(t->elem);
  if (t->kind != FLY_TY_SCALAR)
    return 0;
  switch (t->code) {
  case FLY_TYPE_I1:
    return 1;
  case FLY_TYPE_I8:
  case FLY_TYPE_F8E4M3:
  case FLY_TYPE_F8E5M2:
  case FLY_TYPE_F8E4M3FNUZ:
  case FLY_TYPE_F8E5M2FNUZ:
    return 8;
  case FLY_TYPE_I16:
  case FLY_TYPE_F16:
  case FLY_TYPE_BF16:
    return 16;
  case FLY_TYPE_I32:
  case FLY_TYPE_F32:
    return 32;
  default:
    return 64;
  }
}

/* The float formats: fraction bits, smallest normal exponent, largest
   finite value, whether the largest exponent holds numbers, and whether
   the format is FNUZ. f8e4m3 is the FN variant (no infinity: only 1.111 x
   2^8 is NaN, so 448 is its largest value). The FNUZ formats (finite,
   unsigned zero: CDNA3's fp8) have no infinity and no -0: the code of -0,
   0x80, is their only NaN, and every other code is a number; their
   exponent bias is one more than the OCP formats' (8 and 16). */
typedef struct FloatFormat {
  int fraction, emin;
  double max;
  bool finite_only, fnuz;
} FloatFormat;

static bool float_format(FlyTypeCode code, FloatFormat *f) {
  switch (code) {
  case FLY_TYPE_F16:
    *f = (FloatFormat){10, -14, 65504.0, false, false};
    return true;
  case FLY_TYPE_BF16:
    *f = (FloatFormat){7, -126, 0x1.fep127, false, false};
    return true;
  case FLY_TYPE_F32:
    *f = (FloatFormat){23, -126, FLT_MAX, false, false};
    return true;
  case FLY_TYPE_F64:
    *f = (FloatFormat){52, -1022, DBL_MAX, false, false};
    return true;
  case FLY_TYPE_F8E4M3:
    *f = (FloatFormat){3, -6, 448.0, true, false};
    return true;
  case FLY_TYPE_F8E5M2:
    *f = (FloatFormat){2, -14, 57344.0, false, false};
    return true;
  case FLY_TYPE_F8E4M3FNUZ:
    *f = (FloatFormat){3, -7, 240.0, true, true};
    return true;
  case FLY_TYPE_F8E5M2FNUZ:
    *f = (FloatFormat){2, -15, 57344.0, true, true};
    return true;
  default:
    return false;
  }
}

double fly_float_max(const FlyType *t) {
  FloatFormat f;
  if (t && t->kind == FLY_TY_SCALAR && float_format(t->code, &f))
    return f.max;
  return DBL_MAX;
}

/* The multiple of q that rounding a (>= 0, a multiple's scale of q) in
   the direction r gives; negative values (neg) round down and up the other
   way. */
static double round_scaled(double a, bool neg, FlyRounding r) {
  switch (r) {
  case FLY_ROUND_NEAREST:
    return nearbyint(a); /* the default mode: ties to even */
  case FLY_ROUND_ZERO:
    return trunc(a);
  case FLY_ROUND_DOWN:
    return neg ? ceil(a) : floor(a);
  case FLY_ROUND_UP:
    return neg ? floor(a) : ceil(a);
  }
  return a;
}

bool fly_float_round_to(const FlyType *t, double x, FlyRounding r, double *out) {
  *out = x;
  if (!fly_type_is_float(t) || !isfinite(x) || x == 0 || t->code == FLY_TYPE_F64)
    return true; /* f64: a double already */
  if (t->code == FLY_TYPE_F32 && r == FLY_ROUND_NEAREST) {
    float f = (float)x; /* the C conversion rounds to nearest, ties to even */
    *out = f;
    return isfinite(f);
  }
  FloatFormat f;
  float_format(t->code, &f);
  /* The spacing of the format's values near x (below the normal range, the
     fixed spacing of its subnormals); x / q and v * q only move the
     exponent, so they are exact. */
  double a = fabs(x);
  int e;
  frexp(a, &e);
  int exponent = e - 1 < f.emin ? f.emin : e - 1;
  double q = ldexp(1.0, exponent - f.fraction);
  double v = round_scaled(a / q, x < 0, r) * q;
  if (v > f.max) {
    bool to_max =
        r == FLY_ROUND_ZERO || (r == FLY_ROUND_DOWN && x > 0) || (r == FLY_ROUND_UP && x < 0);
    if (!to_max)
      return false;
    v = f.max;
  }
  *out = copysign(v, x);
  return true;
}

bool fly_float_round(const FlyType *t, double x, double *out) {
  return fly_float_round_to(t, x, FLY_ROUND_NEAREST, out);
}

bool fly_int_range(const FlyType *t, int64_t *lo, int64_t *hi) {
  int bits = fly_type_bits(t);
  if (!fly_type_is_int(t) || bits >= 64) {
    *lo = INT64_MIN;
    *hi = INT64_MAX;
    return false;
  }
  *lo = -((int64_t)1 << (bits - 1));
  *hi = ((int64_t)1 << (bits - 1)) - 1;
  return true;
}

double fly_float_overflow_bound(const FlyType *t, bool *inclusive) {
  FloatFormat f;
  *inclusive = false;
  if (!t || t->kind != FLY_TY_SCALAR || !float_format(t->code, &f))
    return INFINITY;
  int e;
  double m = frexp(f.max, &e); /* max = m * 2^e, 0.5 <= m < 1 */
  double half = ldexp(1.0, e - 1 - f.fraction - 1);
  /* The last fraction bit of the largest value: odd means the halfway
     value rounds away from it, to the next binade. */
  *inclusive = fmod(ldexp(m, f.fraction + 1), 2.0) == 1.0;
  return f.max + half;
}

/* Every format is sign, exponent field, fraction: the field holds the
   exponent plus 1 - emin, and 0 for zeros and subnormals. Scaling by powers
   of two is exact, so the fraction comes out as a whole number. */
uint64_t fly_float_bits(const FlyType *t, double x) {
  FloatFormat f;
  if (!fly_type_is_float(t) || !float_format(t->code, &f))
    return 0;
  uint64_t sign = signbit(x) ? (uint64_t)1 << (fly_type_bits(t) - 1) : 0;
  double a = fabs(x);
  if (f.fnuz && (a == 0 || isnan(x)))
    return isnan(x) ? (uint64_t)1 << (fly_type_bits(t) - 1) : 0;
  if (a == 0)
    return sign;
  int e;
  frexp(a, &e);
  uint64_t field = 0;
  if (e - 1 >= f.emin) {
    field = (uint64_t)(e - 1 - f.emin + 1);
    a = ldexp(a, -(e - 1)) - 1.0;
  } else {
    a = ldexp(a, -f.emin);
  }
  return sign | field << f.fraction | (uint64_t)ldexp(a, f.fraction);
}

bool fly_float_from_bits(const FlyType *t, uint64_t bits, double *out) {
  FloatFormat f;
  if (!fly_type_is_float(t) || !float_format(t->code, &f))
    return false;
  int width = fly_type_bits(t);
  uint64_t fraction_mask = ((uint64_t)1 << f.fraction) - 1;
  uint64_t field_max = ((uint64_t)1 << (width - 1 - f.fraction)) - 1;
  uint64_t field = (bits >> f.fraction) & field_max, fraction = bits & fraction_mask;
  if (f.fnuz && (bits & (((uint64_t)1 << width) - 1)) == (uint64_t)1 << (width - 1))
    return false;
  if (!f.fnuz && field == field_max && (!f.finite_only || fraction == fraction_mask))
    return false;
  double v = field == 0 ? ldexp((double)fraction, f.emin - f.fraction)
                        : ldexp((double)(fraction | ((uint64_t)1 << f.fraction)),
                                (int)field - 1 + f.emin - f.fraction);
  *out = (bits >> (width - 1)) & 1 ? -v : v;
  return true;
}

static bool val_equal_or_both_null(const FlyVal *a, const FlyVal *b) {
  if (!a || !b)
    return a == b;
  return fly_val_equal(a, b);
}

bool fly_type_equal(const FlyType *a, const FlyType *b) {
  if (a == b)
    return true;
  if (!a || !b || a->kind != b->kind)
    return false;
  switch (a->kind) {
  case FLY_TY_SCALAR:
  case FLY_TY_STATIC:
    return a->code == b->code;
  case FLY_TY_VEC:
    return (a->n == b->n || a->n < 0 || b->n < 0) && fly_type_equal(a->elem, b->elem);
  case FLY_TY_TENSOR:
    return a->code == b->code && fly_type_equal(a->elem, b->elem) &&
           val_equal_or_both_null(a->shape, b->shape) &&
           val_equal_or_both_null(a->stride, b->stride) && a->align == b->align;
  case FLY_TY_TUPLE:
    if (a->n != b->n)
      return false;
    for (int i = 0; i < a->n; i++)
      if (!fly_type_equal(a->elems[i], b->elems[i]))
        return false;
    return true;
  }
  return false;
}

/* ---- values ---------------------------------------------------------------- */

static FlyVal none_value = {.kind = FLY_V_NONE};
static FlyVal underscore_value = {.kind = FLY_V_UNDERSCORE};
static FlyVal dynamic_value = {.kind = FLY_V_DYNAMIC};
static FlyVal bool_values[2] = {{.kind = FLY_V_BOOL, .i = 0}, {.kind = FLY_V_BOOL, .i = 1}};

static FlyVal poison_value = {.kind = FLY_V_NONE};

const FlyVal *fly_val_none(void) { return &none_value; }
const FlyVal *fly_val_poison(void) { return &poison_value; }
const FlyVal *fly_val_underscore(void) { return &underscore_value; }
const FlyVal *fly_val_dynamic(void) { return &dynamic_value; }
const FlyVal *fly_val_bool(bool b) { return &bool_values[b]; }

FlyVal *fly_val_new(FlyAlgebra *A, FlyValKind kind) {
  FlyVal *v = fly_alloc(A, sizeof *v);
  if (v)
    v->kind = kind;
  return v;
}

const FlyVal *fly_val_int(FlyAlgebra *A, int64_t i, const FlyType *type) {
  FlyVal *v = fly_val_new(A, FLY_V_INT);
  if (v) {
    v->i = i;
    v->type = type;
  }
  return v;
}

const FlyVal *fly_val_float(FlyAlgebra *A, double f, const FlyType *type) {
  FlyVal *v = fly_val_new(A, FLY_V_FLOAT);
  if (v) {
    v->f = f;
    v->type = type;
  }
  return v;
}

const FlyVal *fly_val_str(FlyAlgebra *A, const char *s, uint32_t len) {
  FlyVal *v = fly_val_new(A, FLY_V_STR);
  char *copy = fly_alloc(A, (size_t)len + 1);
  if (!v || !copy)
    return NULL;
  if (len)
    memcpy(copy, s, len);
  v->s = copy;
  v->len = len;
  return v;
}

const FlyVal *fly_val_tuple(FlyAlgebra *A, int n, const FlyVal **elems) {
  FlyVal *v = fly_val_new(A, FLY_V_TUPLE);
  const FlyVal **copy = fly_alloc(A, sizeof *copy * (size_t)(n ? n : 1));
  if (!v || !copy)
    return NULL;
  if (n > 0)
    memcpy(copy, elems, sizeof *copy * (size_t)n);
  v->n = n;
  v->elems = copy;
  return v;
}

const FlyVal *fly_val_layout(FlyAlgebra *A, const FlyLayout *L) {
  if (!L)
    return NULL;
  FlyVal *v = fly_val_new(A, FLY_V_LAYOUT);
  if (v)
    v->layout = L;
  return v;
}

const FlyVal *fly_val_type(FlyAlgebra *A, const FlyType *t) {
  if (!t)
    return NULL;
  FlyVal *v = fly_val_new(A, FLY_V_TYPE);
  if (v)
    v->type_value = t;
  return v;
}

const FlyVal *fly_val_runtime(FlyAlgebra *A, const FlyType *type, FlyOrigin origin) {
  FlyVal *v = fly_val_new(A, FLY_V_RUNTIME);
  if (v) {
    v->type = type;
    v->origin = origin;
  }
  return v;
}

const FlyVal *fly_val_first_runtime(const FlyVal *v) {
  if (!v)
    return NULL;
  switch (v->kind) {
  case FLY_V_RUNTIME:
  case FLY_V_TENSOR:
    return v;
  case FLY_V_TUPLE:
    for (int i = 0; i < v->n; i++) {
      const FlyVal *r = fly_val_first_runtime(v->elems[i]);
      if (r)
        return r;
    }
    return NULL;
  case FLY_V_OBJECT:
    if (v->object.kind == FLY_OBJ_THR_COPY || v->object.kind == FLY_OBJ_THR_MMA)
      return fly_val_first_runtime(v->object.thread);
    if (v->object.kind == FLY_OBJ_RANGE) {
      const FlyVal *r = fly_val_first_runtime(v->object.lo);
      r = r ? r : fly_val_first_runtime(v->object.hi);
      return r ? r : fly_val_first_runtime(v->object.step);
    }
    return NULL;
  default:
    return NULL;
  }
}

bool fly_val_is_static(const FlyVal *v) { return v && !fly_val_first_runtime(v); }

bool fly_val_is_int_tuple(const FlyVal *v) {
  if (!v)
    return false;
  if (v->kind == FLY_V_INT)
    return true;
  if (v->kind != FLY_V_TUPLE)
    return false;
  for (int i = 0; i < v->n; i++)
    if (!fly_val_is_int_tuple(v->elems[i]))
      return false;
  return true;
}

bool fly_val_equal(const FlyVal *a, const FlyVal *b) {
  if (a == b)
    return true;
  if (!a || !b)
    return false;
  /* Numbers compare by value whatever their types: 1 == 1 as i8. */
  if ((a->kind == FLY_V_INT || a->kind == FLY_V_FLOAT) &&
      (b->kind == FLY_V_INT || b->kind == FLY_V_FLOAT)) {
    if (a->kind == FLY_V_INT && b->kind == FLY_V_INT)
      return a->i == b->i;
    double x = a->kind == FLY_V_INT ? (double)a->i : a->f;
    double y = b->kind == FLY_V_INT ? (double)b->i : b->f;
    return x == y;
  }
  if (a->kind != b->kind)
    return false;
  switch (a->kind) {
  case FLY_V_NONE:
  case FLY_V_UNDERSCORE:
  case FLY_V_DYNAMIC:
    return true;
  case FLY_V_BOOL:
    return a->i == b->i;
  case FLY_V_STR:
    return a->len == b->len && memcmp(a->s, b->s, a->len) == 0;
  case FLY_V_TUPLE:
    if (a->n != b->n)
      return false;
    for (int i = 0; i < a->n; i++)
      if (!fly_val_equal(a->elems[i], b->elems[i]))
        return false;
    return true;
  case FLY_V_LAYOUT:
    return fly_layout_equal(a->layout, b->layout);
  case FLY_V_COMPOSED:
    return fly_composed_equal(a->composed, b->composed);
  case FLY_V_SWIZZLE:
    return fly_swizzle_equal(a->swizzle, b->swizzle);
  case FLY_V_BASIS:
    return fly_tuple_equal(a->basis, b->basis);
  case FLY_V_TYPE:
    return fly_type_equal(a->type_value, b->type_value);
  case FLY_V_FN:
  case FLY_V_KERNEL:
    return a->fn == b->fn;
  case FLY_V_BUILTIN:
    return a->builtin == b->builtin && a->self == b->self;
  case FLY_V_OBJECT:
    return a->object.kind == b->object.kind && a->object.name == b->object.name &&
           a->object.atom == b->object.atom && a->object.bits == b->object.bits &&
           fly_type_equal(a->object.elem, b->object.elem) &&
           fly_type_equal(a->object.elem_b, b->object.elem_b) &&
           fly_type_equal(a->object.acc, b->object.acc);
  default:
    return false; /* runtime values and tensors are never equal statically */
  }
}

/* ---- text -------------------------------------------------------------------- */

static void put_type(FlyStrBuf *sb, const FlyType *t);
static void put_val(FlyStrBuf *sb, const FlyVal *v);

/* The shortest decimal text that reads back as the same double, always with
   a '.' or an exponent so that it reads back as a float. */
static void put_float(FlyStrBuf *sb, double f) {
  char buf[64];
  for (int precision = 1; precision <= 17; precision++) {
    snprintf(buf, sizeof buf, "%.*g", precision, f);
    if (strtod(buf, NULL) == f)
      break;
  }
  /* %g switches to an exponent early (1e+02 for 100); numbers of ordinary
     size read better with a point: 100.0, 0.001. */
  double m = fabs(f);
  if (strpbrk(buf, "eE") && m >= 1e-4 && m < 1e16) {
    for (int decimals = 1; decimals <= 20; decimals++) {
      char fixed[64];
      snprintf(fixed, sizeof fixed, "%.*f", decimals, f);
      if (strtod(fixed, NULL) == f) {
        memcpy(buf, fixed, sizeof buf);
        break;
      }
    }
  }
  fly_sb_puts(sb, buf);
  if (!strpbrk(buf, ".eEn"))
    fly_sb_puts(sb, ".0");
}

static void put_string(FlyStrBuf *sb, const char *s, uint32_t len) {
  fly_sb_putc(sb, '"');
  for (uint32_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    switch (c) {
    case '\n':
      fly_sb_puts(sb, "\\n");
      break;
    case '\t':
      fly_sb_puts(sb, "\\t");
      break;
    case '\r':
      fly_sb_puts(sb, "\\r");
      break;
    case '\0':
      fly_sb_puts(sb, "\\0");
      break;
    case '"':
      fly_sb_puts(sb, "\\\"");
      break;
    case '\\':
      fly_sb_puts(sb, "\\\\");
      break;
    default:
      if (c < 0x20 || c == 0x7f) {
        char buf[8];
        snprintf(buf, sizeof buf, "\\x%02X", c);
        fly_sb_puts(sb, buf);
      } else {
        fly_sb_putc(sb, (char)c);
      }
    }
  }
  fly_sb_putc(sb, '"');
}

/* Layout-like text of a tensor's shape:stride, with '?' for runtime leaves. */
static void put_pattern(FlyStrBuf *sb, const FlyVal *v) {
  if (!v) {
    fly_sb_putc(sb, '?');
    return;
  }
  switch (v->kind) {
  case FLY_V_INT:
    fly_sb_int(sb, v->i);
    return;
  case FLY_V_TUPLE:
    fly_sb_putc(sb, '(');
    for (int i = 0; i < v->n; i++) {
      if (i)
        fly_sb_putc(sb, ',');
      put_pattern(sb, v->elems[i]);
    }
    fly_sb_putc(sb, ')');
    return;
  default:
    fly_sb_putc(sb, '?');
  }
}

static void put_layout_pattern(FlyStrBuf *sb, const FlyVal *shape, const FlyVal *stride) {
  /* Unwrap a rank-1 top level as layouts print: (8):(1) is 8:1. */
  while (shape && stride && shape->kind == FLY_V_TUPLE && shape->n == 1 &&
         stride->kind == FLY_V_TUPLE && stride->n == 1) {
    shape = shape->elems[0];
    stride = stride->elems[0];
  }
  put_pattern(sb, shape);
  fly_sb_putc(sb, ':');
  put_pattern(sb, stride);
}

static const char *space_ctor(FlySpace s) {
  return s == FLY_SPACE_SHARED     ? "smem"
         : s == FLY_SPACE_REGISTER ? "rmem"
         : s == FLY_SPACE_COORD    ? "coords"
                                   : "tensor";
}

static void put_type(FlyStrBuf *sb, const FlyType *t) {
  if (!t) {
    fly_sb_puts(sb, "?");
    return;
  }
  switch (t->kind) {
  case FLY_TY_SCALAR:
  case FLY_TY_STATIC:
    fly_sb_puts(sb, fly_type_code_name(t->code));
    return;
  case FLY_TY_VEC:
    fly_sb_puts(sb, "vec<");
    if (t->n < 0)
      fly_sb_putc(sb, '?');
    else
      fly_sb_int(sb, t->n);
    fly_sb_puts(sb, ", ");
    put_type(sb, t->elem);
    fly_sb_putc(sb, '>');
    return;
  case FLY_TY_TENSOR:
    fly_sb_puts(sb, space_ctor(t->space));
    fly_sb_putc(sb, '<');
    put_type(sb, t->elem);
    if (t->shape) {
      fly_sb_puts(sb, ", ");
      if (t->stride)
        put_layout_pattern(sb, t->shape, t->stride);
      else
        put_pattern(sb, t->shape);
    }
    if (t->align) {
      fly_sb_puts(sb, ", align = ");
      fly_sb_int(sb, t->align);
    }
    fly_sb_putc(sb, '>');
    return;
  case FLY_TY_TUPLE:
    fly_sb_putc(sb, '(');
    for (int i = 0; i < t->n; i++) {
      if (i)
        fly_sb_puts(sb, ", ");
      put_type(sb, t->elems[i]);
    }
    fly_sb_puts(sb, t->n == 1 ? ",)" : ")");
    return;
  }
}

static void put_object(FlyStrBuf *sb, const FlyObject *o) {
  switch (o->kind) {
  case FLY_OBJ_TARGET:
    fly_sb_puts(sb, "target");
    return;
  case FLY_OBJ_INDEX3:
  case FLY_OBJ_NAMESPACE:
  case FLY_OBJ_ATOM_NAME:
    fly_sb_puts(sb, o->name);
    return;
  case FLY_OBJ_UNIVERSAL:
    fly_sb_puts(sb, "universal(");
    fly_sb_int(sb, o->bits);
    fly_sb_putc(sb, ')');
    return;
  case FLY_OBJ_COPY_ATOM:
    fly_sb_puts(sb, "copy_atom(universal(");
    fly_sb_int(sb, o->bits);
    fly_sb_puts(sb, "), ");
    put_type(sb, o->elem);
    fly_sb_putc(sb, ')');
    return;
  case FLY_OBJ_MMA_ATOM:
    fly_sb_puts(sb, "mma_atom(");
    fly_sb_puts(sb, o->name);
    fly_sb_puts(sb, ", ");
    put_type(sb, o->elem);
    if (!fly_type_equal(o->elem, o->elem_b)) { /* A's and B's types apart */
      fly_sb_puts(sb, ", ");
      put_type(sb, o->elem_b);
    }
    fly_sb_puts(sb, ", ");
    put_type(sb, o->acc);
    fly_sb_putc(sb, ')');
    return;
  case FLY_OBJ_TILED_COPY:
    fly_sb_puts(sb, o->base ? "tiled_copy(" : "tv_layout(");
    if (o->base) {
      put_val(sb, o->base);
      fly_sb_puts(sb, ", ");
    }
    fly_sb_puts(sb, "tv = ");
    fly_sb_puts(sb, fly_layout_str(sb->A, o->tv->tv));
    if (o->tv->dst) {
      fly_sb_puts(sb, ", dst = ");
      fly_sb_puts(sb, fly_layout_str(sb->A, o->tv->dst));
    }
    fly_sb_puts(sb, ", tile = ");
    fly_sb_puts(sb, fly_tuple_str(sb->A, o->tv->tile));
    fly_sb_putc(sb, ')');
    return;
  case FLY_OBJ_TILED_MMA:
    fly_sb_puts(sb, "tiled_mma(");
    put_val(sb, o->base);
    fly_sb_puts(sb, ", ");
    fly_sb_puts(sb, fly_layout_str(sb->A, o->layout));
    fly_sb_putc(sb, ')');
    return;
  case FLY_OBJ_THR_COPY:
  case FLY_OBJ_THR_MMA:
    put_val(sb, o->base);
    fly_sb_puts(sb, ".slice(");
    put_val(sb, o->thread);
    fly_sb_putc(sb, ')');
    return;
  case FLY_OBJ_RANGE:
    fly_sb_puts(sb, o->unrolled ? "range_const(" : "range(");
    put_val(sb, o->lo);
    fly_sb_puts(sb, ", ");
    put_val(sb, o->hi);
    fly_sb_puts(sb, ", ");
    put_val(sb, o->step);
    fly_sb_putc(sb, ')');
    return;
  case FLY_OBJ_TENSOR_MAP:
    fly_sb_puts(sb, "tensor_map(");
    fly_sb_puts(sb, o->name);
    fly_sb_puts(sb, ", ...)");
    return;
  }
}

static void put_val(FlyStrBuf *sb, const FlyVal *v) {
  if (!v) {
    fly_sb_puts(sb, "?");
    return;
  }
  switch (v->kind) {
  case FLY_V_NONE:
    fly_sb_puts(sb, "(no value)");
    return;
  case FLY_V_INT:
    fly_sb_int(sb, v->i);
    break;
  case FLY_V_FLOAT:
    put_float(sb, v->f);
    break;
  case FLY_V_BOOL:
    fly_sb_puts(sb, v->i ? "true" : "false");
    break;
  case FLY_V_STR:
    put_string(sb, v->s, v->len);
    return;
  case FLY_V_TUPLE:
    fly_sb_putc(sb, '(');
    for (int i = 0; i < v->n; i++) {
      if (i)
        fly_sb_putc(sb, ',');
      put_val(sb, v->elems[i]);
    }
    fly_sb_puts(sb, v->n == 1 ? ",)" : ")");
    return;
  case FLY_V_LAYOUT:
    fly_sb_puts(sb, fly_layout_str(sb->A, v->layout));
    return;
  case FLY_V_COMPOSED:
    fly_sb_puts(sb, fly_composed_str(sb->A, v->composed));
    return;
  case FLY_V_SWIZZLE:
    fly_sb_puts(sb, fly_swizzle_str(sb->A, v->swizzle));
    return;
  case FLY_V_BASIS:
    fly_sb_puts(sb, fly_tuple_str(sb->A, v->basis));
    return;
  case FLY_V_TYPE:
    put_type(sb, v->type_value);
    return;
  case FLY_V_UNDERSCORE:
    fly_sb_putc(sb, '_');
    return;
  case FLY_V_DYNAMIC:
    fly_sb_putc(sb, '?');
    return;
  case FLY_V_RUNTIME:
    fly_sb_putc(sb, '?'); /* known when the kernel runs */
    return;
  case FLY_V_TENSOR:
    fly_sb_puts(sb, space_ctor(v->tensor.space));
    fly_sb_putc(sb, '<');
    put_type(sb, v->tensor.elem);
    fly_sb_puts(sb, ", ");
    if (v->tensor.swizzled) {
      fly_sb_puts(sb, fly_swizzle_str(sb->A, v->tensor.swizzle));
      fly_sb_puts(sb, " o ");
    }
    put_layout_pattern(sb, v->tensor.shape, v->tensor.stride);
    fly_sb_putc(sb, '>');
    return;
  case FLY_V_FN:
  case FLY_V_KERNEL:
    fly_sb_puts(sb, v->kind == FLY_V_FN ? "fn " : "kernel ");
    fly_sb_puts(sb, v->fn->str);
    return;
  case FLY_V_BUILTIN:
    fly_sb_puts(sb, "(builtin)");
    return;
  case FLY_V_OBJECT:
    put_object(sb, &v->object);
    return;
  }
  /* A number or boolean with a type other than its default says so. */
  if (v->type && v->type->kind == FLY_TY_SCALAR) {
    fly_sb_puts(sb, " as ");
    put_type(sb, v->type);
  }
}

char *fly_val_str_canonical(FlyAlgebra *A, const FlyVal *v) {
  FlyStrBuf sb;
  fly_sb_init(&sb, A);
  put_val(&sb, v);
  return fly_sb_finish(&sb);
}

char *fly_type_str(FlyAlgebra *A, const FlyType *t) {
  FlyStrBuf sb;
  fly_sb_init(&sb, A);
  put_type(&sb, t);
  return fly_sb_finish(&sb);
}

static const char *object_description(FlyObjectKind k) {
  switch (k) {
  case FLY_OBJ_TARGET:
    return "the target";
  case FLY_OBJ_INDEX3:
    return "a GPU index";
  case FLY_OBJ_NAMESPACE:
    return "a namespace of atoms";
  case FLY_OBJ_ATOM_NAME:
    return "an atom name";
  case FLY_OBJ_UNIVERSAL:
    return "a copy operation";
  case FLY_OBJ_COPY_ATOM:
    return "a copy atom";
  case FLY_OBJ_MMA_ATOM:
    return "an MMA atom";
  case FLY_OBJ_TILED_COPY:
    return "a tiled copy";
  case FLY_OBJ_TILED_MMA:
    return "a tiled MMA";
  case FLY_OBJ_THR_COPY:
    return "a thread's slice of a tiled copy";
  case FLY_OBJ_THR_MMA:
    return "a thread's slice of a tiled MMA";
  case FLY_OBJ_RANGE:
    return "a range";
  case FLY_OBJ_TENSOR_MAP:
    return "a tensor map";
  }
  return "an object";
}

char *fly_val_describe(FlyAlgebra *A, const FlyVal *v) {
  FlyStrBuf sb;
  fly_sb_init(&sb, A);
  switch (v->kind) {
  case FLY_V_NONE:
    fly_sb_puts(&sb, "nothing (no value)");
    break;
  case FLY_V_INT:
  case FLY_V_FLOAT:
  case FLY_V_BOOL:
    if (v->type) {
      fly_sb_puts(&sb, "a constant ");
      put_type(&sb, v->type);
    } else {
      fly_sb_puts(&sb, v->kind == FLY_V_INT     ? "an integer"
                       : v->kind == FLY_V_FLOAT ? "a float"
                                                : "a boolean");
    }
    break;
  case FLY_V_STR:
    fly_sb_puts(&sb, "a string");
    break;
  case FLY_V_TUPLE:
    fly_sb_puts(&sb, "a tuple");
    break;
  case FLY_V_LAYOUT:
    fly_sb_puts(&sb, "a layout");
    break;
  case FLY_V_COMPOSED:
    fly_sb_puts(&sb, v->composed->inner ? "a composed layout" : "a swizzled layout");
    break;
  case FLY_V_BASIS:
    fly_sb_puts(&sb, "a basis element");
    break;
  case FLY_V_SWIZZLE:
    fly_sb_puts(&sb, "a swizzle");
    break;
  case FLY_V_TYPE:
    fly_sb_puts(&sb, "the type ");
    put_type(&sb, v->type_value);
    break;
  case FLY_V_UNDERSCORE:
    fly_sb_puts(&sb, "'_'");
    break;
  case FLY_V_DYNAMIC:
    fly_sb_puts(&sb, "'?'");
    break;
  case FLY_V_RUNTIME:
    fly_sb_puts(&sb, "a runtime ");
    put_type(&sb, v->type);
    break;
  case FLY_V_TENSOR:
    fly_sb_puts(&sb, v->tensor.space == FLY_SPACE_SHARED     ? "a tensor in shared memory"
                     : v->tensor.space == FLY_SPACE_REGISTER ? "a register fragment"
                     : v->tensor.space == FLY_SPACE_COORD    ? "an identity tensor (coordinates)"
                                                             : "a tensor in global memory");
    break;
  case FLY_V_FN:
    fly_sb_puts(&sb, "the function ");
    fly_sb_puts(&sb, v->fn->str);
    break;
  case FLY_V_KERNEL:
    fly_sb_puts(&sb, "the kernel ");
    fly_sb_puts(&sb, v->fn->str);
    break;
  case FLY_V_BUILTIN:
    fly_sb_puts(&sb, "a builtin function");
    break;
  case FLY_V_OBJECT:
    fly_sb_puts(&sb, object_description(v->object.kind));
    break;
  }
  return fly_sb_finish(&sb);
}

FlyTuple *fly_val_pattern(FlyAlgebra *A, const FlyVal *v) {
  switch (v->kind) {
  case FLY_V_INT:
    return fly_tuple_int(A, v->i);
  case FLY_V_UNDERSCORE:
    return fly_tuple_underscore(A);
  case FLY_V_TUPLE: {
    FlyTuple **e = fly_alloc(A, sizeof *e * (size_t)(v->n ? v->n : 1));
    if (!e)
      return NULL;
    for (int i = 0; i < v->n; i++)
      if (!(e[i] = fly_val_pattern(A, v->elems[i])))
        return NULL;
    return fly_tuple_seq(A, v->n, e);
  }
  default:
    return fly_tuple_dynamic(A, v);
  }
}
