/* fly_lower_buffer.c — AMD's buffer loads and stores, the copy atoms
 * amd.buffer_load and amd.buffer_store (fly_lower_target.h).
 *
 * A buffer access names a resource (base, extent in bytes, a flag word)
 * and a 32-bit byte offset; the hardware checks the offset against the
 * extent, reads 0 outside it and drops a store. The resource here is the
 * kernel's tensor argument the view belongs to: its pointer is found by
 * following the view's address back through the GEPs the views made to the
 * block argument, and its extent is the argument's layout's span, read from
 * the fly.make_memref the tracer marked `fly.param` (fly_trace.c). So every
 * access stays inside the tensor whatever its offset, and a masked element
 * is an offset past the end instead of a branch (CK's and FlyDSL's way of
 * masking partial tiles).
 *
 * Offsets are 32-bit and a masked one is 2^31: the extent is capped at
 * 2^31 bytes, so a tensor read through buffers may span at most 2 GiB
 * (docs/language.md). The function records that of the argument,
 * `fly.arg_span` (the most bytes each argument's tensor may span, 0 for
 * any), which becomes the parameter's max_span in the bundle, in elements
 * (fly_kernel_spans.c), and the runtime refuses a larger tensor. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_lower_target.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

static const int64_t MASKED_OFFSET = INT64_C(1) << 31; /* past every extent */

/* An i64 known at compile time (v null) or a value. */
typedef struct I64 {
  MlirValue v;
  int64_t c;
} I64;

static I64 known(int64_t c) { return (I64){{NULL}, c}; }

static MlirValue value64(FlyBuild *b, I64 x) {
  if (!mlirValueIsNull(x.v))
    return x.v;
  char text[32];
  snprintf(text, sizeof text, "%lld", (long long)x.c);
  return fly_build_constant(b, mlirIntegerTypeGet(b->m->ctx, 64), text);
}

static I64 arith64(FlyBuild *b, const char *op, I64 x, I64 y) {
  if (mlirValueIsNull(x.v) && mlirValueIsNull(y.v)) {
    if (strcmp(op, "arith.addi") == 0)
      return known(x.c + y.c);
    if (strcmp(op, "arith.subi") == 0)
      return known(x.c - y.c);
    if (strcmp(op, "arith.muli") == 0)
      return known(x.c * y.c);
    if (strcmp(op, "arith.minsi") == 0)
      return known(x.c < y.c ? x.c : y.c);
    if (strcmp(op, "arith.maxsi") == 0)
      return known(x.c > y.c ? x.c : y.c);
    return known((uint64_t)x.c < (uint64_t)y.c ? x.c : y.c); /* arith.minui */
  }
  MlirValue v[2] = {value64(b, x), value64(b, y)};
  return (I64){fly_build_op1(b, op, mlirIntegerTypeGet(b->m->ctx, 64), 2, v, 0, NULL), 0};
}

/* A layout leaf as an i64. */
static I64 leaf64(FlyBuild *b, const FlyTuple *t) {
  if (t->kind != FLY_TUPLE_DYNAMIC)
    return known(t->value);
  MlirValue x = {t->sym};
  return (I64){fly_build_op1(b, "arith.extsi", mlirIntegerTypeGet(b->m->ctx, 64), 1, &x, 0, NULL),
               0};
}

/* The kernel argument ptr is an address in: its GEPs followed back. */
static MlirValue root_of(MlirValue ptr) {
  while (mlirValueIsAOpResult(ptr) && fly_lower_is(mlirOpResultGetOwner(ptr), "llvm.getelementptr"))
    ptr = mlirOperationGetOperand(mlirOpResultGetOwner(ptr), 0);
  return ptr;
}

/* The argument's fly.make_memref, which the tracer marked fly.param. */
static MlirOperation param_of(MlirValue arg) {
  for (MlirOpOperand u = mlirValueGetFirstUse(arg); !mlirOpOperandIsNull(u);
       u = mlirOpOperandGetNextUse(u)) {
    MlirOperation op = mlirOpOperandGetOwner(u);
    if (fly_lower_is(op, "fly.make_memref") &&
        !mlirAttributeIsNull(
            mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("fly.param"))))
      return op;
  }
  return (MlirOperation){NULL};
}

/* The resource's flag word (dword 3) for t's generation: the data format
   must be non-zero before gfx1250 (7 float, 4 32-bit; the raw intrinsics
   ignore it); RDNA sets its reserved bit 24 and the range check against
   the offset (bits 28-29: 3); gfx1250 checks offset + size by default. */
static int64_t flag_word(const FlyTarget *t) {
  if (t && t->device >= 120500)
    return 0;
  int64_t f = (7 << 12) | (4 << 15);
  if (t && t->device >= 100000)
    f |= (1 << 24) | (3LL << 28);
  return f;
}

/* Records on the kernel function that the tensor of its argument `arg`
   may span at most `bytes` bytes (fly.arg_span: one number an argument,
   0 for no limit). */
static void limit_span(FlyBuild *b, MlirValue arg, int64_t bytes) {
  MlirOperation fn = mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(arg));
  MlirBlock entry = mlirRegionGetFirstBlock(mlirOperationGetRegion(fn, 0));
  intptr_t n, at = mlirBlockArgumentGetArgNumber(arg);
  if (!mlirBlockEqual(entry, mlirBlockArgumentGetOwner(arg)))
    return;
  int64_t *span = fly_lower_arg_numbers(b, fn, "fly.arg_span", &n);
  if (!span || at >= n) {
    free(span);
    return;
  }
  if (span[at] == 0 || span[at] > bytes)
    span[at] = bytes;
  fly_lower_set_arg_numbers(fn, "fly.arg_span", n, span);
  free(span);
}

bool fly_lower_buffer_rsrc(FlyBuild *b, const struct FlyAtom *atom, MlirValue ptr,
                           FlyBufferRsrc *r) {
  MlirValue arg = root_of(ptr);
  MlirOperation param = mlirValueIsABlockArgument(arg) ? param_of(arg) : (MlirOperation){NULL};
  if (mlirOperationIsNull(param)) {
    fly_build_error(b,
                    "%s needs a view of one of the kernel's tensor arguments (its buffer is "
                    "made from the argument's base and extent)",
                    atom->name);
    return false;
  }
  FlyMemDesc d;
  if (!fly_memdesc_of(b, mlirOperationGetResult(param, 0), &d))
    return false;
  limit_span(b, arg, MASKED_OFFSET);
  /* At the argument's fly.make_memref: the kernel's entry, where its
     leaves are defined, so that one resource serves the whole kernel. */
  FlyBuild at = *b;
  at.ip = (FlyInsert){mlirOperationGetBlock(param), mlirOperationGetNextInBlock(param)};
  FlyTuple *sh[256], *st[256];
  int n = fly_tuple_leaves(d.L->shape, sh, 256);
  if (n > 256 || fly_tuple_leaves(d.L->stride, st, 256) != n) {
    fly_memdesc_free(&d);
    fly_build_error(b, "internal error: a layout whose shape and stride differ");
    return false;
  }
  /* The span: the lowest and highest element offsets, (s - 1) d a mode
     (strides may be negative), and nothing where a mode is empty. */
  I64 lo = known(0), hi = known(0), empty = known(1);
  for (int i = 0; i < n; i++) {
    I64 s = leaf64(&at, sh[i]);
    I64 ext =
        arith64(&at, "arith.muli", arith64(&at, "arith.subi", s, known(1)), leaf64(&at, st[i]));
    lo = arith64(&at, "arith.addi", lo, arith64(&at, "arith.minsi", ext, known(0)));
    hi = arith64(&at, "arith.addi", hi, arith64(&at, "arith.maxsi", ext, known(0)));
    empty = arith64(&at, "arith.minui", empty, s); /* 0 when some mode is */
  }
  int bytes = fly_lower_type_bytes(d.type.elem);
  I64 span = arith64(&at, "arith.muli", arith64(&at, "arith.subi", hi, lo), known(bytes));
  span = arith64(&at, "arith.addi", span, known(bytes));
  span = arith64(&at, "arith.muli", span, empty);
  span = arith64(&at, "arith.minui", span, known(MASKED_OFFSET));
  MlirType i8 = mlirIntegerTypeGet(b->m->ctx, 8);
  MlirValue base = arg;
  if (!mlirValueIsNull(lo.v) || lo.c) {
    MlirValue off = value64(&at, arith64(&at, "arith.muli", lo, known(bytes)));
    MlirAttribute raw = fly_build_attr(&at, "array<i32: -2147483648>");
    MlirNamedAttribute a[2] = {fly_mlir_named(b->m, "rawConstantIndices", raw),
                               fly_mlir_named(b->m, "elem_type", mlirTypeAttrGet(i8))};
    MlirValue ops[2] = {arg, off};
    base = fly_build_op1(&at, "llvm.getelementptr", mlirValueGetType(arg), 2, ops, 2, a);
  }
  MlirValue ops[4] = {base,
                      fly_build_constant(&at, mlirIntegerTypeGet(b->m->ctx, 16), "0"),
                      value64(&at, span),
                      {NULL}};
  char word[32];
  snprintf(word, sizeof word, "%lld", (long long)flag_word(fly_lower_target_of(param)));
  ops[3] = fly_build_constant(&at, b->i32, word);
  r->rsrc = fly_build_op1(&at, "rocdl.make.buffer.rsrc", fly_mlir_type(b->m, "!llvm.ptr<8>"), 4,
                          ops, 0, NULL);
  r->base = base;
  fly_memdesc_free(&d);
  b->failed |= at.failed;
  return !at.failed;
}

/* The byte offset of ptr from the resource's base, or the masked offset
   where pred (an i1, or null) is false. Offsets of 2^32 bytes and more
   wrap, but stay inside the resource: never outside the tensor. */
static MlirValue voffset(FlyBuild *b, const FlyBufferRsrc *r, MlirValue ptr, MlirValue pred) {
  MlirType i64 = mlirIntegerTypeGet(b->m->ctx, 64);
  MlirValue p = fly_build_op1(b, "llvm.ptrtoint", i64, 1, &ptr, 0, NULL);
  MlirValue q = fly_build_op1(b, "llvm.ptrtoint", i64, 1, &r->base, 0, NULL);
  MlirValue v[3] = {p, q};
  MlirValue diff = fly_build_op1(b, "arith.subi", i64, 2, v, 0, NULL);
  MlirValue off = fly_build_op1(b, "arith.trunci", b->i32, 1, &diff, 0, NULL);
  if (mlirValueIsNull(pred))
    return off;
  v[0] = pred;
  v[1] = off;
  v[2] = fly_build_i32(b, MASKED_OFFSET);
  return fly_build_op1(b, "arith.select", b->i32, 3, v, 0, NULL);
}

/* The type a buffer intrinsic moves `bytes` as: i8, i16, i32 or dwords. */
static MlirType raw_type(FlyBuild *b, int bytes) {
  if (bytes <= 4)
    return mlirIntegerTypeGet(b->m->ctx, (unsigned)bytes * 8);
  return fly_vec_type(bytes / 4, b->i32);
}

MlirValue fly_lower_buffer_load(FlyBuild *b, const FlyBufferRsrc *r, MlirValue ptr, MlirType t,
                                int bytes, MlirValue pred) {
  MlirValue ops[4] = {r->rsrc, voffset(b, r, ptr, pred), fly_build_i32(b, 0), fly_build_i32(b, 0)};
  MlirValue x = fly_build_op1(b, "rocdl.raw.ptr.buffer.load", raw_type(b, bytes), 4, ops, 0, NULL);
  return fly_build_op1(b, "llvm.bitcast", t, 1, &x, 0, NULL);
}

void fly_lower_buffer_store(FlyBuild *b, const FlyBufferRsrc *r, MlirValue ptr, MlirValue x,
                            int bytes, MlirValue pred) {
  MlirValue ops[5] = {fly_build_op1(b, "llvm.bitcast", raw_type(b, bytes), 1, &x, 0, NULL), r->rsrc,
                      voffset(b, r, ptr, pred), fly_build_i32(b, 0), fly_build_i32(b, 0)};
  fly_mlir_op(b->m, b->ip, b->loc, "rocdl.raw.ptr.buffer.store", 0, NULL, 5, ops, 0, NULL, 0, NULL);
}
