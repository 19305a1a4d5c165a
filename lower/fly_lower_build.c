/* fly_lower_build.c — layouts with runtime leaves, folded arithmetic and the
 * LLVM operations the Fly passes emit (fly_lower_build.h). */
#include "fly_lower_build.h"

#include "fly_lower_target.h"
#include "fly_tensor_map.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_atom.h"
#include "fly_layout_text.h"
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

/* ---- layouts and arithmetic ------------------------------------------------------------------ */

static const void *emit2(FlyBuild *b, const char *op, const void *x, const void *y) {
  MlirValue v[2] = {{x}, {y}};
  return fly_mlir_op1(b->m, b->ip, b->loc, op, b->i32, 2, v, 0, NULL).ptr;
}
static const void *sym_constant(void *b, int64_t c) { return fly_build_i32(b, c).ptr; }
static const void *sym_add(void *b, const void *x, const void *y) {
  return emit2(b, "arith.addi", x, y);
}
static const void *sym_mul(void *b, const void *x, const void *y) {
  return emit2(b, "arith.muli", x, y);
}
static const void *sym_div(void *b, const void *x, const void *y) {
  return emit2(b, "arith.divui", x, y);
}
static const void *sym_rem(void *b, const void *x, const void *y) {
  return emit2(b, "arith.remui", x, y);
}

FlySymOps fly_build_ops(FlyBuild *b) {
  FlySymOps o = {b, sym_constant, sym_add, sym_mul, sym_div, sym_rem};
  return o;
}

MlirValue fly_build_sym(FlyBuild *b, FlySym x) {
  return fly_sym_is_const(x) ? fly_build_i32(b, x.c) : (MlirValue){x.v};
}

/* Gives the `?` leaves of t the values vals[*next], vals[*next + 1] ...;
   false when there are too few. */
static bool bind(FlyTuple *t, const MlirValue *vals, int nvals, int *next) {
  if (t->kind == FLY_TUPLE_DYNAMIC) {
    if (*next >= nvals)
      return false;
    t->sym = vals[(*next)++].ptr;
    return true;
  }
  for (int i = 0; t->kind == FLY_TUPLE_SEQ && i < t->n; i++)
    if (!bind(t->elem[i], vals, nvals, next))
      return false;
  return true;
}

int fly_tuple_dynamic_count(FlyTuple *t) {
  FlyTuple *leaves[1024];
  int n = fly_tuple_leaves(t, leaves, 1024), k = 0;
  for (int i = 0; i < n && i < 1024; i++)
    k += leaves[i]->kind == FLY_TUPLE_DYNAMIC;
  return k;
}

int fly_layout_dynamic_count(const FlyLayout *L) {
  return fly_tuple_dynamic_count(L->shape) + fly_tuple_dynamic_count(L->stride);
}

FlyTuple *fly_build_tuple(FlyBuild *b, const char *text, const MlirValue *vals, int nvals) {
  FlyTuple *t = text ? fly_parse_tuple_pattern(b->A, text, strlen(text)) : NULL;
  int next = 0;
  if (!t || (vals && (!bind(t, vals, nvals, &next) || next != nvals))) {
    fly_build_error(b, "internal error: the tuple '%s' does not match its %d values",
                    text ? text : "", nvals);
    fly_algebra_clear_error(b->A);
    return NULL;
  }
  return t;
}

FlyLayout *fly_build_layout(FlyBuild *b, const char *text, const MlirValue *vals, int nvals) {
  FlyLayout *L = text ? fly_parse_layout_pattern(b->A, text, strlen(text)) : NULL;
  int next = 0;
  if (!L || (vals && (!bind(L->shape, vals, nvals, &next) || !bind(L->stride, vals, nvals, &next) ||
                      next != nvals))) {
    fly_build_error(b, "internal error: the layout '%s' does not match its %d values",
                    text ? text : "", nvals);
    fly_algebra_clear_error(b->A);
    return NULL;
  }
  return L;
}

MlirValue fly_build_i32(FlyBuild *b, int64_t c) {
  MlirNamedAttribute a = fly_mlir_named(b->m, "value", mlirIntegerAttrGet(b->i32, c));
  return fly_mlir_op1(b->m, b->ip, b->loc, "arith.constant", b->i32, 0, NULL, 1, &a);
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
  MlirValue v[2] = {ptr, {off.v}};
  int n = 1;
  if (fly_sym_is_const(off) && off.c > INT32_MIN && off.c <= INT32_MAX) {
    snprintf(raw, sizeof raw, "array<i32: %lld>", (long long)off.c);
  } else {
    v[1] = fly_build_sym(b, off);
    n = 2;
    snprintf(raw, sizeof raw, "array<i32: %d>", INT32_MIN);
  }
  MlirNamedAttribute a[2] = {
      fly_mlir_named(b->m, "elem_type", mlirTypeAttrGet(fly_lower_storage_type(elem))),
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

bool fly_lower_is_f8(MlirType t) {
  MlirType e = mlirTypeIsAVector(t) ? mlirShapedTypeGetElementType(t) : t;
  return mlirTypeIsAFloat8E4M3FN(e) || mlirTypeIsAFloat8E5M2(e) || mlirTypeIsAFloat8E4M3FNUZ(e) ||
         mlirTypeIsAFloat8E5M2FNUZ(e);
}

MlirType fly_lower_storage_type(MlirType t) {
  if (!fly_lower_is_f8(t))
    return t;
  MlirType i8 = mlirIntegerTypeGet(mlirTypeGetContext(t), 8);
  if (!mlirTypeIsAVector(t))
    return i8;
  int64_t n = mlirShapedTypeGetDimSize(t, 0);
  return mlirVectorTypeGet(1, &n, i8);
}

MlirValue fly_build_constant(FlyBuild *b, MlirType t, const char *value) {
  char *et = fly_lower_type_text(mlirTypeIsAVector(t) ? mlirShapedTypeGetElementType(t) : t);
  char *vt = fly_lower_type_text(t), text[128];
  if (mlirTypeIsAVector(t))
    snprintf(text, sizeof text, "dense<%s> : %s", value, vt ? vt : "");
  else
    snprintf(text, sizeof text, "%s : %s", value, et ? et : "");
  free(et);
  free(vt);
  MlirNamedAttribute a = fly_mlir_named(b->m, "value", fly_build_attr(b, text));
  return fly_build_op1(b, "arith.constant", t, 0, NULL, 1, &a);
}

MlirValue fly_build_bitcast(FlyBuild *b, MlirValue v, MlirType t) {
  if (mlirTypeEqual(mlirValueGetType(v), t))
    return v;
  return fly_build_op1(b, "arith.bitcast", t, 1, &v, 0, NULL);
}

int fly_lower_type_bytes(MlirType t) {
  if (mlirTypeIsAInteger(t))
    return (int)((mlirIntegerTypeGetWidth(t) + 7) / 8);
  if (mlirTypeIsAFloat(t))
    return (int)((mlirFloatTypeGetWidth(t) + 7) / 8);
  return 0;
}

/* ---- memrefs -------------------------------------------------------------------------------- */

/* The index-th quoted parameter of a type's text (malloc'd), or NULL. */
static char *quoted(const char *s, int index) {
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

/* "S<B,M,S> o L": the swizzle into t->swizzle, and L left in t->layout. */
static bool read_swizzle(FlyMemType *t) {
  int bits, base, shift, n = -1;
  if (strncmp(t->layout, "S<", 2) != 0)
    return true;
  if (sscanf(t->layout, "S<%d,%d,%d> o %n", &bits, &base, &shift, &n) != 3 || n < 0)
    return false;
  memmove(t->layout, t->layout + n, strlen(t->layout + n) + 1);
  t->swizzled = true;
  t->swizzle = (FlySwizzle){bits, base, shift};
  return true;
}

bool fly_memtype_read(FlyMlir *m, MlirType t, FlyMemType *out) {
  memset(out, 0, sizeof *out);
  char *text = fly_lower_type_text(t);
  bool ok = false;
  if (text && strncmp(text, "!fly.memref<", 12) == 0) {
    const char *comma = strchr(text, ',');
    char *space = quoted(text, 0);
    out->layout = quoted(text, 1);
    if (comma && space && out->layout) {
      out->elem =
          mlirTypeParseGet(m->ctx, mlirStringRefCreate(text + 12, (size_t)(comma - (text + 12))));
      snprintf(out->space, sizeof out->space, "%s", space);
      ok = !mlirTypeIsNull(out->elem) && read_swizzle(out);
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

int64_t *fly_lower_arg_numbers(FlyBuild *b, MlirOperation fn, const char *name, intptr_t *n) {
  *n = mlirBlockGetNumArguments(mlirRegionGetFirstBlock(mlirOperationGetRegion(fn, 0)));
  MlirAttribute old = mlirOperationGetAttributeByName(fn, mlirStringRefCreateFromCString(name));
  int64_t *v = calloc((size_t)(*n ? *n : 1), sizeof *v);
  if (!v) {
    fly_build_error(b, "out of memory");
    return NULL;
  }
  if (!mlirAttributeIsNull(old) && mlirAttributeIsADenseI64Array(old) &&
      mlirDenseArrayGetNumElements(old) == *n)
    for (intptr_t i = 0; i < *n; i++)
      v[i] = mlirDenseI64ArrayGetElement(old, i);
  return v;
}

void fly_lower_set_arg_numbers(MlirOperation fn, const char *name, intptr_t n,
                               const int64_t *numbers) {
  mlirOperationSetAttributeByName(fn, mlirStringRefCreateFromCString(name),
                                  mlirDenseI64ArrayGet(mlirOperationGetContext(fn), n, numbers));
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
  int n = (int)mlirOperationGetNumOperands(def);
  /* A swizzled view's offset comes first, then the layout's leaves. */
  int first = d->type.swizzled ? 2 : 1;
  d->offset = fly_sym_const(0);
  if (d->type.swizzled) {
    if (n < 2) {
      fly_build_error(b, "internal error: a swizzled memref without its offset");
      fly_memdesc_free(d);
      return false;
    }
    d->offset_value = mlirOperationGetOperand(def, 1);
    int64_t c;
    d->offset =
        fly_lower_constant_of(d->offset_value, &c) ? fly_sym_const(c) : fly_sym_of(d->offset_value);
  }
  MlirValue vals[256];
  for (int i = first; i < n && i - first < 256; i++)
    vals[i - first] = mlirOperationGetOperand(def, i);
  d->ptr = mlirOperationGetOperand(def, 0);
  if (n - first > 256 || !(d->L = fly_build_layout(b, d->type.layout, vals, n - first))) {
    fly_memdesc_free(d);
    return false;
  }
  return true;
}

MlirValue fly_memdesc_start(FlyBuild *b, const FlyMemDesc *d) {
  if (!d->type.swizzled || mlirValueIsNull(d->offset_value))
    return d->ptr;
  return fly_build_gep(b, d->ptr, fly_lower_storage_type(d->type.elem),
                       fly_sym_of(d->offset_value));
}

void fly_memdesc_free(FlyMemDesc *d) {
  fly_memtype_free(&d->type);
  d->L = NULL; /* in the pass's algebra session */
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

bool fly_lower_constant_of(MlirValue v, int64_t *out) {
  if (!mlirValueIsAOpResult(v) || !fly_lower_is(mlirOpResultGetOwner(v), "arith.constant"))
    return false;
  MlirAttribute a = mlirOperationGetAttributeByName(mlirOpResultGetOwner(v),
                                                    mlirStringRefCreateFromCString("value"));
  if (mlirAttributeIsNull(a) || !mlirAttributeIsAInteger(a))
    return false;
  *out = mlirIntegerAttrGetValueInt(a);
  return true;
}

int64_t fly_lower_int_attr(MlirOperation op, const char *name, int64_t missing) {
  MlirAttribute a = mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString(name));
  return mlirAttributeIsNull(a) || !mlirAttributeIsAInteger(a) ? missing
                                                               : mlirIntegerAttrGetValueInt(a);
}

void fly_build_extern_shared(FlyBuild *b, MlirOperation gm, const char *sym, int64_t align) {
  MlirContext ctx = b->m->ctx;
  MlirType i64 = mlirIntegerTypeGet(ctx, 64);
  MlirStringRef align_key = mlirStringRefCreateFromCString("alignment");
  if (align < 16)
    align = 16;
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(gm, 0));
  for (MlirOperation o = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(o);
       o = mlirOperationGetNextInBlock(o)) {
    MlirAttribute n =
        mlirOperationGetAttributeByName(o, mlirStringRefCreateFromCString("sym_name"));
    if (fly_lower_is(o, "llvm.mlir.global") && !mlirAttributeIsNull(n) &&
        mlirAttributeIsAString(n) &&
        mlirStringRefEqual(mlirStringAttrGetValue(n), mlirStringRefCreateFromCString(sym))) {
      if (fly_lower_int_attr(o, "alignment", 16) < align)
        mlirOperationSetAttributeByName(o, align_key, mlirIntegerAttrGet(i64, align));
      return;
    }
  }
  FlyInsert top = {body, mlirBlockGetFirstOperation(body)};
  /* At least as a tile of TMA's wants it (fly_smem_tile_align). */
  const FlyTarget *t = fly_lower_target_of(gm);
  int64_t tma = fly_smem_tile_align(INT64_MAX, t && fly_target_has(t, FLY_FEATURE_TMA));
  if (tma > align)
    align = tma;
  MlirNamedAttribute ga[5] = {
      fly_mlir_named(b->m, "addr_space", mlirIntegerAttrGet(mlirIntegerTypeGet(ctx, 32), 3)),
      fly_mlir_named(b->m, "alignment", mlirIntegerAttrGet(i64, align)),
      fly_mlir_named(b->m, "global_type",
                     mlirTypeAttrGet(fly_mlir_type(b->m, "!llvm.array<0 x i8>"))),
      fly_mlir_named(b->m, "linkage", fly_build_attr(b, "#llvm.linkage<external>")),
      fly_mlir_named(b->m, "sym_name", fly_mlir_str_attr(b->m, sym))};
  MlirRegion init = mlirRegionCreate();
  fly_mlir_op(b->m, top, b->loc, "llvm.mlir.global", 0, NULL, 0, NULL, 5, ga, 1, &init);
}

MlirValue fly_build_addressof(FlyBuild *b, const char *sym, int addr_space) {
  char text[32];
  snprintf(text, sizeof text, "!llvm.ptr<%d>", addr_space);
  MlirNamedAttribute gn =
      fly_mlir_named(b->m, "global_name",
                     mlirFlatSymbolRefAttrGet(b->m->ctx, mlirStringRefCreateFromCString(sym)));
  return fly_build_op1(b, "llvm.mlir.addressof", fly_mlir_type(b->m, text), 0, NULL, 1, &gn);
}
