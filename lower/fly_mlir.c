/* fly_mlir.c — the MLIR context, the Fly dialect, generic operations. */
#include "fly_mlir.h"

#include <stdlib.h>
#include <string.h>

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/Dialect/IRDL.h"
#include "mlir-c/RegisterEverything.h"

static MlirStringRef str_ref(const char *s) { return mlirStringRefCreateFromCString(s); }

static void append(FlyMlir *m, const char *s, size_t n) {
  if (m->len + n + 2 > m->cap) {
    size_t cap = (m->cap ? m->cap * 2 : 256) + n;
    char *p = realloc(m->messages, cap);
    if (!p)
      return;
    m->messages = p;
    m->cap = cap;
  }
  memcpy(m->messages + m->len, s, n);
  m->len += n;
  m->messages[m->len] = 0;
}

static void append_ref(MlirStringRef s, void *user) { append(user, s.data, s.length); }
static void print_to_file(MlirStringRef s, void *user) { fwrite(s.data, 1, s.length, user); }

/* MLIR reports verifier and parser problems here; they are kept for the
   caller, who knows which kernel and which source line they concern. */
static void note_first_error(FlyMlir *m, MlirDiagnostic d) {
  MlirLocation loc = mlirDiagnosticGetLocation(d);
  if (m->err_msg || mlirDiagnosticGetSeverity(d) != MlirDiagnosticError ||
      !mlirLocationIsAFileLineColRange(loc))
    return;
  MlirStringRef file = mlirIdentifierStr(mlirLocationFileLineColRangeGetFilename(loc));
  snprintf(m->err_file, sizeof m->err_file, "%.*s", (int)file.length, file.data);
  m->err_line = (unsigned)mlirLocationFileLineColRangeGetStartLine(loc);
  m->err_col = (unsigned)mlirLocationFileLineColRangeGetStartColumn(loc);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f)
    return;
  mlirDiagnosticPrint(d, print_to_file, f);
  fclose(f);
  m->err_msg = text;
}

static MlirLogicalResult on_diagnostic(MlirDiagnostic d, void *user) {
  FlyMlir *m = user;
  note_first_error(m, d);
  mlirLocationPrint(mlirDiagnosticGetLocation(d), append_ref, m);
  append(m, ": ", 2);
  mlirDiagnosticPrint(d, append_ref, m);
  append(m, "\n", 1);
  for (intptr_t i = 0; i < mlirDiagnosticGetNumNotes(d); i++) {
    MlirDiagnostic n = mlirDiagnosticGetNote(d, i);
    append(m, "  note: ", 8);
    mlirDiagnosticPrint(n, append_ref, m);
    append(m, "\n", 1);
  }
  return mlirLogicalResultSuccess();
}

bool fly_mlir_init(FlyMlir *m) {
  memset(m, 0, sizeof *m);
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(registry);
  /* One thread: a kernel's module is small, and a context kept warm for a
     whole process must not leave a thread pool running at exit. */
  m->ctx = mlirContextCreateWithRegistry(registry, false);
  mlirContextEnableMultithreading(m->ctx, false);
  mlirDialectRegistryDestroy(registry);
  /* The dialects the tracer builds operations of (an operation of a dialect
     not loaded would be unregistered); the passes load those they produce
     themselves. Loading all the registered ones cost a thirtieth of a
     large kernel's compile. */
  static const char *const used[] = {"builtin", "func",   "arith", "math", "scf",  "cf",
                                     "vector",  "memref", "gpu",   "llvm", "nvvm", "nvgpu",
                                     "rocdl",   "amdgpu", "index", "ub",   "irdl"};
  for (size_t i = 0; i < sizeof used / sizeof used[0]; i++)
    mlirContextGetOrLoadDialect(m->ctx, mlirStringRefCreateFromCString(used[i]));
  mlirContextAttachDiagnosticHandler(m->ctx, on_diagnostic, m, NULL);
  MlirModule dialect = mlirModuleCreateParse(m->ctx, str_ref(fly_dialect_irdl));
  bool ok = !mlirModuleIsNull(dialect) && mlirLogicalResultIsSuccess(mlirLoadIRDLDialects(dialect));
  if (!mlirModuleIsNull(dialect))
    mlirModuleDestroy(dialect);
  if (!ok) {
    char *why = fly_mlir_take_messages(m);
    fprintf(stderr, "flyc: internal error: the Fly dialect does not load\n%s", why ? why : "");
    free(why);
    fly_mlir_release(m);
  }
  return ok;
}

void fly_mlir_release(FlyMlir *m) {
  for (int i = 0; i < m->npms; i++) {
    mlirPassManagerDestroy(m->pms[i]);
    free(m->pm_text[i]);
  }
  m->npms = 0;
  if (!mlirContextIsNull(m->ctx))
    mlirContextDestroy(m->ctx);
  m->ctx.ptr = NULL;
  free(m->messages);
  m->messages = NULL;
  free(m->err_msg);
  m->err_msg = NULL;
  m->len = m->cap = 0;
}

void fly_mlir_reset(FlyMlir *m) {
  free(m->messages);
  m->messages = NULL;
  free(m->err_msg);
  m->err_msg = NULL;
  m->len = m->cap = 0;
}

char *fly_mlir_take_messages(FlyMlir *m) {
  char *s = m->len ? m->messages : NULL;
  if (!s)
    return NULL;
  m->messages = NULL;
  m->len = m->cap = 0;
  return s;
}

MlirType fly_mlir_type(FlyMlir *m, const char *text) {
  return mlirTypeParseGet(m->ctx, str_ref(text));
}

MlirAttribute fly_mlir_str_attr(FlyMlir *m, const char *s) {
  return mlirStringAttrGet(m->ctx, str_ref(s));
}

MlirNamedAttribute fly_mlir_named(FlyMlir *m, const char *name, MlirAttribute a) {
  return mlirNamedAttributeGet(mlirIdentifierGet(m->ctx, str_ref(name)), a);
}

MlirOperation fly_mlir_op(FlyMlir *m, FlyInsert ip, MlirLocation loc, const char *name, int nres,
                          const MlirType *res, int nopd, const MlirValue *opd, int nattr,
                          const MlirNamedAttribute *attr, int nregion, MlirRegion *regions) {
  (void)m;
  MlirOperationState st = mlirOperationStateGet(str_ref(name), loc);
  if (nres)
    mlirOperationStateAddResults(&st, nres, res);
  if (nopd)
    mlirOperationStateAddOperands(&st, nopd, opd);
  if (nattr)
    mlirOperationStateAddAttributes(&st, nattr, attr);
  if (nregion)
    mlirOperationStateAddOwnedRegions(&st, nregion, regions);
  MlirOperation op = mlirOperationCreate(&st);
  if (mlirOperationIsNull(op))
    return op;
  if (!mlirOperationIsNull(ip.before))
    mlirBlockInsertOwnedOperationBefore(ip.block, ip.before, op);
  else
    mlirBlockAppendOwnedOperation(ip.block, op);
  return op;
}

MlirValue fly_mlir_op1(FlyMlir *m, FlyInsert ip, MlirLocation loc, const char *name, MlirType res,
                       int nopd, const MlirValue *opd, int nattr, const MlirNamedAttribute *attr) {
  MlirOperation op = fly_mlir_op(m, ip, loc, name, 1, &res, nopd, opd, nattr, attr, 0, NULL);
  MlirValue none = {NULL};
  return mlirOperationIsNull(op) ? none : mlirOperationGetResult(op, 0);
}

static void print_to(MlirStringRef s, void *user) { fwrite(s.data, 1, s.length, user); }

void fly_mlir_print(MlirOperation op, FILE *out, bool locations) {
  MlirOpPrintingFlags flags = mlirOpPrintingFlagsCreate();
  /* loc(...) after each op, in the form mlir-opt reads back. */
  if (locations)
    mlirOpPrintingFlagsEnableDebugInfo(flags, true, false);
  mlirOperationPrintWithFlags(op, flags, print_to, out);
  mlirOpPrintingFlagsDestroy(flags);
  fputc('\n', out);
}

static void put_text(MlirStringRef s, void *user) {
  FILE *f = user;
  fwrite(s.data, 1, s.length, f);
}

void fly_mlir_intrinsic_suffix(MlirType t, char *buf, size_t n) {
  char tt[64] = "";
  FILE *f = fmemopen(tt, sizeof tt - 1, "w");
  if (f) {
    mlirTypePrint(t, put_text, f);
    fclose(f);
  }
  if (strncmp(tt, "vector<", 7) == 0) {
    /* vector<4xf32> is v4f32 in an intrinsic's name. */
    char *x = strchr(tt, 'x'), *gt = strrchr(tt, '>');
    if (x && gt)
      *gt = 0;
    snprintf(buf, n, ".v%.*s%s", x ? (int)(x - tt - 7) : 0, tt + 7, x ? x + 1 : "");
  } else {
    snprintf(buf, n, ".%s", tt);
  }
}

MlirValue fly_mlir_call_intrinsic(FlyMlir *m, FlyInsert ip, MlirLocation loc, const char *full,
                                  MlirType t, int n, const MlirValue *v) {
  char segs[64];
  snprintf(segs, sizeof segs, "array<i32: %d, 0>", n);
  MlirNamedAttribute a[3] = {
      fly_mlir_named(m, "intrin", fly_mlir_str_attr(m, full)),
      fly_mlir_named(m, "op_bundle_sizes",
                     mlirAttributeParseGet(m->ctx, mlirStringRefCreateFromCString("array<i32>"))),
      fly_mlir_named(m, "operandSegmentSizes",
                     mlirAttributeParseGet(m->ctx, mlirStringRefCreateFromCString(segs)))};
  return fly_mlir_op1(m, ip, loc, "llvm.call_intrinsic", t, n, v, 3, a);
}

MlirValue fly_mlir_intrinsic(FlyMlir *m, FlyInsert ip, MlirLocation loc, const char *name,
                             MlirType t, int n, const MlirValue *v) {
  char suffix[64], full[128];
  fly_mlir_intrinsic_suffix(t, suffix, sizeof suffix);
  snprintf(full, sizeof full, "%s%s", name, suffix);
  return fly_mlir_call_intrinsic(m, ip, loc, full, t, n, v);
}
