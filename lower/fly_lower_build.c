/* fly_lower_build.c — layouts with runtime leaves, folded arithmetic and the
 * LLVM operations the Fly passes emit (fly_lower_build.h). */
#include "fly_lower_build.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_atom.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"
#include "mlir-c/Diagnostics.h"

/* ---- text ----------------------------------------------------------------------------------- */

static void append_text(MlirStringRef s, void *user) { fwrite(s.data, 1, s.length, user); }

/* Printed through a memory stream: MLIR prints in pieces. */
static char *print_text(MlirType t, MlirAttribute a) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return NULL;
  if (!mlirTypeIsNull(t))
    mlirTypePrint(t, append_text, f);
  else
    mlirAttributePrint(a, append_text, f);
  fclose(f);
  return buf;
}

char *fly_lower_type_text(MlirType t) {
  MlirAttribute none = {NULL};
  return print_text(t, none);
}

char *fly_lower_attr_text(MlirAttribute a) {
  MlirType none = {NULL};
  return print_text(none, a);
}

char *fly_lower_quoted(const char *s, int index) {
  for (int i = 0; (s = strchr(s, '"')); i++) {
    const char *end = strchr(s + 1, '"');
    if (!end)
      return NULL;
    if (i == index) {
      size_t n = (size_t)(end - s - 1);
      char *r = malloc(n + 1);
      if (r) {
        memcpy(r, s + 1, n);
        r[n] = 0;
      }
      return r;
    }
    s = end + 1;
  }
  return NULL;
}

static void skip_space(const char **s) {
  while (isspace((unsigned char)**s))
    (*s)++;
}

FlyTree *fly_tree_parse(const char **s, const MlirValue *vals, int nvals, int *next) {
  skip_space(s);
  FlyTree *t = calloc(1, sizeof *t);
  if (!t)
    return NULL;
  t->n = -1;
  if (**s == '(') {
    (*s)++;
    t->n = 0;
    skip_space(s);
    if (**s == ')') {
      (*s)++;
      return t;
    }
    for (;;) {
      FlyTree *e = fly_tree_parse(s, vals, nvals, next);
      FlyTree **grown = e ? realloc(t->e, sizeof *grown * (size_t)(t->n + 1)) : NULL;
      if (!grown) {
        fly_tree_free(e);
        fly_tree_free(t);
        return NULL;
      }
      t->e = grown;
      t->e[t->n++] = e;
      skip_space(s);
      if (**s == ',') {
        (*s)++;
        continue;
      }
      if (**s == ')') {
        (*s)++;
        return t;
      }
      fly_tree_free(t);
      return NULL;
    }
  }
  if (**s == '?') {
    (*s)++;
    t->dyn = true;
    if (vals) {
      if (*next >= nvals) {
        free(t);
        return NULL;
      }
      t->leaf.v = vals[(*next)++];
    } else {
      (*next)++;
    }
    return t;
  }
  if (**s == '_') {
    (*s)++;
    t->under = true;
    return t;
  }
  char *end;
  long long v = strtoll(*s, &end, 10);
  if (end == *s) {
    free(t);
    return NULL;
  }
  *s = end;
  t->leaf.c = v;
  return t;
}

void fly_tree_free(FlyTree *t) {
  if (!t)
    return;
  for (int i = 0; i < t->n; i++)
    fly_tree_free(t->e[i]);
  free(t->e);
  free(t);
}

int fly_tree_leaves(FlyTree *t, FlyTree **out, int cap) {
  if (t->n < 0) {
    if (cap > 0)
      out[0] = t;
    return 1;
  }
  int n = 0;
  for (int i = 0; i < t->n; i++)
    n += fly_tree_leaves(t->e[i], out + (n < cap ? n : cap), n < cap ? cap - n : 0);
  return n;
}

int fly_lower_count_dyn(const char *text) {
  int n = 0;
  for (; *text; text++)
    n += *text == '?';
  return n;
}

bool fly_layout_tree_parse(const char *text, const MlirValue *vals, int nvals, FlyLayoutTree *out) {
  out->shape = out->stride = NULL;
  const char *colon = strchr(text, ':');
  if (!colon)
    return false;
  int next = 0;
  const char *s = text;
  /* Shape leaves come first in vals, then stride leaves. */
  out->shape = fly_tree_parse(&s, vals, nvals, &next);
  skip_space(&s);
  if (!out->shape || *s != ':')
    goto bad;
  s++;
  out->stride = fly_tree_parse(&s, vals, nvals, &next);
  skip_space(&s);
  if (!out->stride || *s || (vals && next != nvals))
    goto bad;
  return true;
bad:
  fly_layout_tree_free(out);
  return false;
}

void fly_layout_tree_free(FlyLayoutTree *l) {
  fly_tree_free(l->shape);
  fly_tree_free(l->stride);
  l->shape = l->stride = NULL;
}

/* ---- arithmetic ----------------------------------------------------------------------------- */

FlySym fly_sym_const(int64_t c) {
  FlySym s = {{NULL}, c};
  return s;
}

bool fly_sym_is_const(FlySym a) { return mlirValueIsNull(a.v); }

static FlySym sym_of(MlirValue v) {
  FlySym s = {v, 0};
  return s;
}

MlirValue fly_build_i32(FlyBuild *b, int64_t c) {
  MlirNamedAttribute a = fly_mlir_named(b->m, "value", mlirIntegerAttrGet(b->i32, c));
  return fly_mlir_op1(b->m, b->ip, b->loc, "arith.constant", b->i32, 0, NULL, 1, &a);
}

MlirValue fly_sym_value(FlyBuild *b, FlySym x) {
  return fly_sym_is_const(x) ? fly_build_i32(b, x.c) : x.v;
}

static FlySym arith(FlyBuild *b, const char *op, FlySym x, FlySym y) {
  MlirValue v[2] = {fly_sym_value(b, x), fly_sym_value(b, y)};
  return sym_of(fly_mlir_op1(b->m, b->ip, b->loc, op, b->i32, 2, v, 0, NULL));
}

FlySym fly_sym_add(FlyBuild *b, FlySym x, FlySym y) {
  if (fly_sym_is_const(x) && fly_sym_is_const(y))
    return fly_sym_const(x.c + y.c);
  if (fly_sym_is_const(x) && x.c == 0)
    return y;
  if (fly_sym_is_const(y) && y.c == 0)
    return x;
  return arith(b, "arith.addi", x, y);
}

FlySym fly_sym_mul(FlyBuild *b, FlySym x, FlySym y) {
  if (fly_sym_is_const(x) && fly_sym_is_const(y))
    return fly_sym_const(x.c * y.c);
  if ((fly_sym_is_const(x) && x.c == 0) || (fly_sym_is_const(y) && y.c == 0))
    return fly_sym_const(0);
  if (fly_sym_is_const(x) && x.c == 1)
    return y;
  if (fly_sym_is_const(y) && y.c == 1)
    return x;
  return arith(b, "arith.muli", x, y);
}

FlySym fly_sym_div(FlyBuild *b, FlySym x, FlySym y) {
  if (fly_sym_is_const(x) && fly_sym_is_const(y) && y.c)
    return fly_sym_const(x.c / y.c);
  if (fly_sym_is_const(y) && y.c == 1)
    return x;
  if (fly_sym_is_const(x) && x.c == 0)
    return x;
  return arith(b, "arith.divui", x, y);
}

FlySym fly_sym_rem(FlyBuild *b, FlySym x, FlySym y) {
  if (fly_sym_is_const(x) && fly_sym_is_const(y) && y.c)
    return fly_sym_const(x.c % y.c);
  if ((fly_sym_is_const(y) && y.c == 1) || (fly_sym_is_const(x) && x.c == 0))
    return fly_sym_const(0);
  return arith(b, "arith.remui", x, y);
}

FlySym fly_tree_size(FlyBuild *b, const FlyTree *shape) {
  if (shape->n < 0)
    return shape->leaf;
  FlySym s = fly_sym_const(1);
  for (int i = 0; i < shape->n; i++)
    s = fly_sym_mul(b, s, fly_tree_size(b, shape->e[i]));
  return s;
}

FlySym fly_tree_crd2idx(FlyBuild *b, FlySym idx, const FlyTree *shape, const FlyTree *stride) {
  if (shape->n < 0 || stride->n < 0)
    return fly_sym_mul(b, idx, stride->n < 0 ? stride->leaf : fly_sym_const(0));
  /* An index for a whole mode: its coordinate in each sub-mode,
     column-major, the last sub-mode taking what remains. */
  FlySym off = fly_sym_const(0);
  for (int i = 0; i < shape->n && i < stride->n; i++) {
    FlySym c = idx;
    if (i + 1 < shape->n) {
      FlySym s = fly_tree_size(b, shape->e[i]);
      c = fly_sym_rem(b, idx, s);
      idx = fly_sym_div(b, idx, s);
    }
    off = fly_sym_add(b, off, fly_tree_crd2idx(b, c, shape->e[i], stride->e[i]));
  }
  return off;
}

void fly_tree_idx2crd(FlyBuild *b, FlySym idx, const FlyTree *shape, FlySym *out, int *n) {
  if (shape->n < 0) {
    out[(*n)++] = idx;
    return;
  }
  for (int i = 0; i < shape->n; i++) {
    FlySym c = idx;
    if (i + 1 < shape->n) {
      FlySym s = fly_tree_size(b, shape->e[i]);
      c = fly_sym_rem(b, idx, s);
      idx = fly_sym_div(b, idx, s);
    }
    fly_tree_idx2crd(b, c, shape->e[i], out, n);
  }
}

/* ---- operations ----------------------------------------------------------------------------- */

MlirValue fly_build_op1(FlyBuild *b, const char *name, MlirType res, int n, const MlirValue *v,
                        int nattr, const MlirNamedAttribute *attr) {
  return fly_mlir_op1(b->m, b->ip, b->loc, name, res, n, v, nattr, attr);
}

MlirAttribute fly_build_attr(FlyBuild *b, const char *text) {
  return mlirAttributeParseGet(b->m->ctx, mlirStringRefCreateFromCString(text));
}

MlirValue fly_build_gep(FlyBuild *b, MlirValue ptr, MlirType elem, FlySym off) {
  if (fly_sym_is_const(off) && off.c == 0)
    return ptr;
  char raw[64];
  MlirValue v[2] = {ptr, off.v};
  int n = 1;
  if (fly_sym_is_const(off) && off.c > INT32_MIN && off.c <= INT32_MAX) {
    snprintf(raw, sizeof raw, "array<i32: %lld>", (long long)off.c);
  } else {
    v[1] = fly_sym_value(b, off);
    n = 2;
    snprintf(raw, sizeof raw, "array<i32: %d>", INT32_MIN);
  }
  MlirNamedAttribute a[2] = {fly_mlir_named(b->m, "elem_type", mlirTypeAttrGet(elem)),
                             fly_mlir_named(b->m, "rawConstantIndices", fly_build_attr(b, raw))};
  return fly_build_op1(b, "llvm.getelementptr", mlirValueGetType(ptr), n, v, 2, a);
}

MlirValue fly_build_load(FlyBuild *b, MlirType t, MlirValue ptr, int align) {
  MlirNamedAttribute a = fly_mlir_named(
      b->m, "alignment", mlirIntegerAttrGet(mlirIntegerTypeGet(b->m->ctx, 64), align));
  return fly_build_op1(b, "llvm.load", t, 1, &ptr, 1, &a);
}

void fly_build_store(FlyBuild *b, MlirValue v, MlirValue ptr, int align) {
  MlirNamedAttribute a = fly_mlir_named(
      b->m, "alignment", mlirIntegerAttrGet(mlirIntegerTypeGet(b->m->ctx, 64), align));
  MlirValue ops[2] = {v, ptr};
  fly_mlir_op(b->m, b->ip, b->loc, "llvm.store", 0, NULL, 2, ops, 1, &a, 0, NULL);
}

MlirValue fly_build_extract(FlyBuild *b, MlirValue vec, int64_t i, MlirType elem) {
  MlirValue v[2] = {vec, fly_build_i32(b, i)};
  return fly_build_op1(b, "llvm.extractelement", elem, 2, v, 0, NULL);
}

MlirValue fly_build_insert(FlyBuild *b, MlirValue vec, MlirValue x, int64_t i) {
  MlirValue v[3] = {vec, x, fly_build_i32(b, i)};
  return fly_build_op1(b, "llvm.insertelement", mlirValueGetType(vec), 3, v, 0, NULL);
}

void fly_build_error(FlyBuild *b, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  mlirEmitError(b->loc, msg);
  b->failed = true;
}

int fly_lower_type_bytes(MlirType t) {
  if (mlirTypeIsAInteger(t))
    return (int)((mlirIntegerTypeGetWidth(t) + 7) / 8);
  if (mlirTypeIsAFloat(t))
    return (int)((mlirFloatTypeGetWidth(t) + 7) / 8);
  return 0;
}

/* ---- memrefs -------------------------------------------------------------------------------- */

bool fly_memtype_read(FlyMlir *m, MlirType t, FlyMemType *out) {
  memset(out, 0, sizeof *out);
  char *text = fly_lower_type_text(t);
  bool ok = false;
  if (text && strncmp(text, "!fly.memref<", 12) == 0) {
    const char *comma = strchr(text, ',');
    char *space = fly_lower_quoted(text, 0);
    out->layout = fly_lower_quoted(text, 1);
    if (comma && space && out->layout) {
      out->elem =
          mlirTypeParseGet(m->ctx, mlirStringRefCreate(text + 12, (size_t)(comma - (text + 12))));
      snprintf(out->space, sizeof out->space, "%s", space);
      out->swizzled = strncmp(out->layout, "S<", 2) == 0;
      ok = !mlirTypeIsNull(out->elem);
    }
    free(space);
  }
  free(text);
  if (!ok)
    fly_memtype_free(out);
  return ok;
}

void fly_memtype_free(FlyMemType *t) {
  free(t->layout);
  t->layout = NULL;
}

bool fly_lower_is(MlirOperation op, const char *name) {
  MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
  return n.length == strlen(name) && memcmp(n.data, name, n.length) == 0;
}

static MlirWalkResult collect_one(MlirOperation op, void *user) {
  FlyOpList *l = user;
  if (!l->want(op))
    return MlirWalkResultAdvance;
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 64;
    MlirOperation *p = realloc(l->ops, sizeof *p * (size_t)cap);
    if (!p) {
      l->failed = true;
      return MlirWalkResultInterrupt;
    }
    l->ops = p;
    l->cap = cap;
  }
  l->ops[l->n++] = op;
  return MlirWalkResultAdvance;
}

void fly_lower_collect(MlirOperation root, FlyOpList *list) {
  mlirOperationWalk(root, collect_one, list, MlirWalkPreOrder);
}

char *fly_lower_str_attr(MlirOperation op, const char *name) {
  MlirAttribute a = mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString(name));
  if (mlirAttributeIsNull(a) || !mlirAttributeIsAString(a))
    return NULL;
  MlirStringRef s = mlirStringAttrGetValue(a);
  char *r = malloc(s.length + 1);
  if (r) {
    memcpy(r, s.data, s.length);
    r[s.length] = 0;
  }
  return r;
}

bool fly_memdesc_of(FlyBuild *b, MlirValue v, FlyMemDesc *d) {
  memset(d, 0, sizeof *d);
  if (!mlirValueIsAOpResult(v) || !fly_lower_is(mlirOpResultGetOwner(v), "fly.make_memref")) {
    fly_build_error(b, "internal error: a memref the Fly lowering cannot trace to its pointer "
                       "(run fly-layout-lowering first)");
    return false;
  }
  MlirOperation def = mlirOpResultGetOwner(v);
  if (!fly_memtype_read(b->m, mlirValueGetType(v), &d->type)) {
    fly_build_error(b, "internal error: a malformed !fly.memref type");
    return false;
  }
  if (d->type.swizzled) {
    fly_build_error(b, "swizzled shared memory is not lowered yet");
    fly_memdesc_free(d);
    return false;
  }
  int n = (int)mlirOperationGetNumOperands(def);
  MlirValue vals[256];
  for (int i = 1; i < n && i <= 256; i++)
    vals[i - 1] = mlirOperationGetOperand(def, i);
  d->ptr = mlirOperationGetOperand(def, 0);
  if (n - 1 > 256 || !fly_layout_tree_parse(d->type.layout, vals, n - 1, &d->L)) {
    fly_build_error(b, "internal error: the leaves of a memref do not match its layout '%s'",
                    d->type.layout);
    fly_memdesc_free(d);
    return false;
  }
  return true;
}

void fly_memdesc_free(FlyMemDesc *d) {
  fly_memtype_free(&d->type);
  fly_layout_tree_free(&d->L);
}

int fly_lower_addr_space(const char *space, int priv) {
  if (strcmp(space, "global") == 0)
    return 1;
  if (strcmp(space, "shared") == 0)
    return 3;
  return priv;
}

MlirOperation fly_lower_atom_op(MlirValue atom) {
  MlirOperation none = {NULL};
  if (!mlirValueIsAOpResult(atom))
    return none;
  MlirOperation def = mlirOpResultGetOwner(atom);
  MlirAttribute a = mlirOperationGetAttributeByName(def, mlirStringRefCreateFromCString("atom"));
  return mlirAttributeIsNull(a) || !mlirAttributeIsAString(a) ? none : def;
}

const FlyAtom *fly_lower_atom(MlirValue atom) {
  MlirOperation def = fly_lower_atom_op(atom);
  if (mlirOperationIsNull(def))
    return NULL;
  MlirStringRef name = mlirStringAttrGetValue(
      mlirOperationGetAttributeByName(def, mlirStringRefCreateFromCString("atom")));
  return fly_atom_find(name.data, name.length);
}

int64_t fly_lower_int_attr(MlirOperation op, const char *name, int64_t missing) {
  MlirAttribute a = mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString(name));
  return mlirAttributeIsNull(a) || !mlirAttributeIsAInteger(a) ? missing
                                                               : mlirIntegerAttrGetValueInt(a);
}
