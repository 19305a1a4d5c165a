/* fly_lower_atomic.c — atomics and memory order in the target pass
 * (fly_lower_target.h): fly.atomic_rmw, fly.atomic_cas, fly.fence and the
 * atomic and volatile loads and stores of one element become LLVM's atomic
 * operations, each Fly scope the vendor's syncscope. The read-modify-write
 * goes through the vendor's hook, since LLVM 22 gets it wrong on NVIDIA
 * (fly_lower_nvvm.c) and needs to be told what memory it may touch on AMD
 * (fly_lower_rocdl.c); cmpxchg, fences and atomic loads and stores say what
 * they mean on both. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_lower_target.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

static const char *const atomic_ops[] = {
    "fly.atomic_rmw",   "fly.atomic_cas",    "fly.fence",         "fly.atomic_load",
    "fly.atomic_store", "fly.volatile_load", "fly.volatile_store"};

bool fly_lower_atomic_wanted(MlirOperation op) {
  for (size_t i = 0; i < sizeof atomic_ops / sizeof atomic_ops[0]; i++)
    if (fly_lower_is(op, atomic_ops[i]))
      return true;
  return false;
}

/* ---- LLVM's atomics ------------------------------------------------------------------------- */

/* LLVM's AtomicOrdering (monotonic 2, acquire 4, release 5, acq_rel 6). */
static int64_t llvm_ordering(FlyMemOrder o) {
  switch (o) {
  case FLY_ORDER_RELAXED:
    return 2;
  case FLY_ORDER_ACQUIRE:
    return 4;
  case FLY_ORDER_RELEASE:
    return 5;
  case FLY_ORDER_ACQ_REL:
  case FLY_ORDER_COUNT:
    break;
  }
  return 6;
}

/* A compare-and-swap that fails writes nothing, so it cannot release. */
static FlyMemOrder failure_order(FlyMemOrder o) {
  return o == FLY_ORDER_ACQ_REL   ? FLY_ORDER_ACQUIRE
         : o == FLY_ORDER_RELEASE ? FLY_ORDER_RELAXED
                                  : o;
}

/* LLVM's AtomicBinOp of an operation on integers or floats (xchg 0, add 1,
   and 3, or 5, xor 6, max 7, min 8, umax 9, umin 10, fadd 11, fmax 13,
   fmin 14). */
static int64_t llvm_bin_op(FlyAtomicOp op, bool is_float) {
  switch (op) {
  case FLY_ATOMIC_ADD:
    return is_float ? 11 : 1;
  case FLY_ATOMIC_MIN:
    return is_float ? 14 : 8;
  case FLY_ATOMIC_MAX:
    return is_float ? 13 : 7;
  case FLY_ATOMIC_UMIN:
    return 10;
  case FLY_ATOMIC_UMAX:
    return 9;
  case FLY_ATOMIC_AND:
    return 3;
  case FLY_ATOMIC_OR:
    return 5;
  case FLY_ATOMIC_XOR:
    return 6;
  case FLY_ATOMIC_EXCH:
  case FLY_ATOMIC_OP_COUNT:
    break;
  }
  return 0;
}

static MlirNamedAttribute i64_attr(FlyBuild *b, const char *name, int64_t v) {
  return fly_mlir_named(b->m, name, mlirIntegerAttrGet(mlirIntegerTypeGet(b->m->ctx, 64), v));
}

/* The ordering and syncscope attributes (none for LLVM's default scope,
   the system); their number. */
static int order_attrs(FlyBuild *b, const char *ordering, FlyMemOrder o, const char *syncscope,
                       MlirNamedAttribute *a) {
  a[0] = i64_attr(b, ordering, llvm_ordering(o));
  if (!*syncscope)
    return 1;
  a[1] = fly_mlir_named(b->m, "syncscope", fly_mlir_str_attr(b->m, syncscope));
  return 2;
}

bool fly_atomic_is_float(const FlyAtomicRmw *a) { return mlirTypeIsAFloat(fly_elem_of(a->type)); }

MlirValue fly_build_atomicrmw(FlyBuild *b, const FlyAtomicRmw *a, const char *syncscope, int nattr,
                              const MlirNamedAttribute *attr) {
  MlirNamedAttribute at[8];
  at[0] = i64_attr(b, "bin_op", llvm_bin_op(a->op, fly_atomic_is_float(a)));
  int n = 1 + order_attrs(b, "ordering", a->order, syncscope, at + 1);
  for (int i = 0; i < nattr && n < 8; i++)
    at[n++] = attr[i];
  MlirValue v[2] = {a->ptr, a->x};
  return fly_build_op1(b, "llvm.atomicrmw", a->type, 2, v, n, at);
}

/* ---- reading the Fly operations ------------------------------------------------------------ */

/* The `scope` and `order` attributes. False after an error. */
static bool scope_and_order(FlyBuild *b, MlirOperation op, FlyMemScope *s, FlyMemOrder *o) {
  char *scope = fly_lower_str_attr(op, "scope"), *order = fly_lower_str_attr(op, "order");
  int si = scope ? fly_mem_scope_find(scope) : -1, oi = order ? fly_mem_order_find(order) : -1;
  free(scope);
  free(order);
  if (si < 0 || oi < 0) {
    fly_build_error(b, "internal error: an atomic without a known scope and order");
    return false;
  }
  *s = (FlyMemScope)si;
  *o = (FlyMemOrder)oi;
  return true;
}

/* The pointer to the one element memref v stands for; whether it is in
   shared memory. Null after an error. */
static MlirValue element(FlyBuild *b, MlirValue v, bool *shared) {
  FlyMemDesc d;
  if (!fly_memdesc_of(b, v, &d))
    return (MlirValue){NULL};
  MlirValue p = fly_lower_element_ptr(b, &d);
  if (shared)
    *shared = strcmp(d.type.space, "shared") == 0;
  fly_memdesc_free(&d);
  return p;
}

/* op's result is r from now on, and op is gone. */
static void replace(FlyBuild *b, MlirOperation op, MlirValue r) {
  if (b->failed || mlirValueIsNull(r))
    return;
  mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0), r);
  mlirOperationDestroy(op);
}

/* op, which has no result, is done. */
static void erase(FlyBuild *b, MlirOperation op) {
  if (!b->failed)
    mlirOperationDestroy(op);
}

static int type_bytes(MlirType t) {
  if (mlirTypeIsAVector(t))
    return (int)mlirShapedTypeGetDimSize(t, 0) * fly_lower_type_bytes(fly_elem_of(t));
  return fly_lower_type_bytes(t);
}

/* ---- the operations ------------------------------------------------------------------------ */

static void lower_rmw(FlyBuild *b, MlirOperation op, const FlyTargetHooks *h) {
  FlyAtomicRmw a = {0};
  char *kind = fly_lower_str_attr(op, "kind");
  int k = kind ? fly_atomic_op_find(kind) : -1;
  free(kind);
  if (k < 0)
    return fly_build_error(b, "internal error: an atomic_rmw of no known kind");
  a.op = (FlyAtomicOp)k;
  if (!scope_and_order(b, op, &a.scope, &a.order))
    return;
  a.ptr = element(b, mlirOperationGetOperand(op, 0), &a.shared);
  a.x = mlirOperationGetOperand(op, 1);
  a.type = mlirValueGetType(a.x);
  if (!b->failed)
    replace(b, op, h->atomic_rmw(b, &a));
}

/* cmpxchg compares integers: a float is compared (and swapped) as its bits. */
static void lower_cas(FlyBuild *b, MlirOperation op, const FlyTargetHooks *h) {
  FlyMemScope s;
  FlyMemOrder o;
  if (!scope_and_order(b, op, &s, &o))
    return;
  MlirValue v[3] = {element(b, mlirOperationGetOperand(op, 0), NULL),
                    mlirOperationGetOperand(op, 1), mlirOperationGetOperand(op, 2)};
  if (b->failed)
    return;
  MlirType t = mlirValueGetType(v[1]), it = t;
  if (mlirTypeIsAFloat(t)) {
    it = mlirIntegerTypeGet(b->m->ctx, 8 * fly_lower_type_bytes(t));
    for (int i = 1; i < 3; i++)
      v[i] = fly_build_op1(b, "llvm.bitcast", it, 1, &v[i], 0, NULL);
  }
  MlirNamedAttribute a[3];
  int n = order_attrs(b, "success_ordering", o, h->syncscope(s), a);
  a[n++] = i64_attr(b, "failure_ordering", llvm_ordering(failure_order(o)));
  char *its = fly_lower_type_text(it), st[64];
  snprintf(st, sizeof st, "!llvm.struct<(%s, i1)>", its ? its : "i32");
  free(its);
  MlirValue r = fly_build_op1(b, "llvm.cmpxchg", fly_mlir_type(b->m, st), 3, v, n, a);
  MlirNamedAttribute pos = fly_mlir_named(b->m, "position", fly_build_attr(b, "array<i64: 0>"));
  r = fly_build_op1(b, "llvm.extractvalue", it, 1, &r, 1, &pos);
  if (mlirTypeIsAFloat(t))
    r = fly_build_op1(b, "llvm.bitcast", t, 1, &r, 0, NULL);
  replace(b, op, r);
}

static void lower_fence(FlyBuild *b, MlirOperation op, const FlyTargetHooks *h) {
  FlyMemScope s;
  FlyMemOrder o;
  if (!scope_and_order(b, op, &s, &o))
    return;
  MlirNamedAttribute a[2];
  int n = order_attrs(b, "ordering", o, h->syncscope(s), a);
  fly_mlir_op(b->m, b->ip, b->loc, "llvm.fence", 0, NULL, 0, NULL, n, a, 0, NULL);
  erase(b, op);
}

/* An atomic (scope and order) or volatile load or store of one element:
   a plain llvm.load or llvm.store with those attributes. */
static void lower_access(FlyBuild *b, MlirOperation op, const FlyTargetHooks *h, bool is_load,
                         bool is_volatile) {
  MlirNamedAttribute a[3];
  int n = 0;
  if (is_volatile) {
    a[n++] = fly_mlir_named(b->m, "volatile_", mlirUnitAttrGet(b->m->ctx));
  } else {
    FlyMemScope s;
    FlyMemOrder o;
    if (!scope_and_order(b, op, &s, &o))
      return;
    n = order_attrs(b, "ordering", o, h->syncscope(s), a);
  }
  MlirValue p = element(b, mlirOperationGetOperand(op, is_load ? 0 : 1), NULL);
  if (b->failed)
    return;
  MlirType t = is_load ? mlirValueGetType(mlirOperationGetResult(op, 0))
                       : mlirValueGetType(mlirOperationGetOperand(op, 0));
  a[n++] = i64_attr(b, "alignment", type_bytes(t));
  if (is_load)
    return replace(b, op, fly_build_op1(b, "llvm.load", t, 1, &p, n, a));
  MlirValue v[2] = {mlirOperationGetOperand(op, 0), p};
  fly_mlir_op(b->m, b->ip, b->loc, "llvm.store", 0, NULL, 2, v, n, a, 0, NULL);
  erase(b, op);
}

void fly_lower_atomic(FlyBuild *b, MlirOperation op, const FlyTargetHooks *h) {
  if (fly_lower_is(op, "fly.atomic_rmw"))
    return lower_rmw(b, op, h);
  if (fly_lower_is(op, "fly.atomic_cas"))
    return lower_cas(b, op, h);
  if (fly_lower_is(op, "fly.fence"))
    return lower_fence(b, op, h);
  bool is_load = fly_lower_is(op, "fly.atomic_load") || fly_lower_is(op, "fly.volatile_load");
  bool is_volatile =
      fly_lower_is(op, "fly.volatile_load") || fly_lower_is(op, "fly.volatile_store");
  lower_access(b, op, h, is_load, is_volatile);
}
