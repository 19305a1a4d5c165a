/* fly_lower_align.c — whether a vector access's address is aligned, and
 * what the kernel then requires of its arguments (fly_lower_target.h).
 *
 * A 128-bit load needs a 16-byte aligned address, or the GPU faults. The
 * address is a kernel argument's pointer moved by offsets the views and the
 * copy computed: sums and products of constants, thread and block indices,
 * loop counters and the tensors' runtime strides. So the proof walks the
 * address back to where it starts: constants are known, an offset times a
 * constant is a multiple of it, an index is any number; a pointer argument
 * and a runtime stride argument are assumed to be multiples of 16 bytes
 * *if that is needed*, and the assumption is then written down for the
 * runtime to check before each launch. An address this cannot prove
 * aligned gets narrower accesses: never a fault, and never a requirement
 * the kernel does not need.
 *
 * The requirements are kept on the gpu.func: `fly.arg_align`, one number of
 * bytes per argument (0: none), read by the bundle writer, and LLVM's
 * `llvm.align` on pointer arguments, which PTX states as `.ptr .align N`. */
#include <stdlib.h>
#include <string.h>

#include "fly_lower_target.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

/* The most a kernel assumes of an argument: what the widest access needs. */
enum { ASSUMED = 16, MAX_VISITS = 512 };

typedef struct Proof {
  FlyBuild *b;
  bool mark; /* the second walk, after the first proved it: write the requirements */
  int visits;
  bool fixed; /* assume nothing of the kernel's arguments */
} Proof;

static bool named(MlirOperation op, const char *name) {
  MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
  return n.length == strlen(name) && memcmp(n.data, name, n.length) == 0;
}

static bool constant_of(MlirValue v, int64_t *out) {
  if (!mlirValueIsAOpResult(v))
    return false;
  MlirOperation op = mlirOpResultGetOwner(v);
  if (!named(op, "arith.constant"))
    return false;
  MlirAttribute a = mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("value"));
  if (mlirAttributeIsNull(a) || !mlirAttributeIsAInteger(a))
    return false;
  *out = mlirIntegerAttrGetValueInt(a);
  return true;
}

/* The kernel whose argument v is, and which argument; null otherwise. */
static MlirOperation kernel_arg(MlirValue v, intptr_t *argno) {
  MlirOperation none = {NULL};
  if (!mlirValueIsABlockArgument(v))
    return none;
  MlirBlock block = mlirBlockArgumentGetOwner(v);
  MlirOperation fn = mlirBlockGetParentOperation(block);
  if (mlirOperationIsNull(fn) || !named(fn, "gpu.func"))
    return none;
  MlirBlock entry = mlirRegionGetFirstBlock(mlirOperationGetRegion(fn, 0));
  if (!mlirBlockEqual(entry, block))
    return none;
  *argno = mlirBlockArgumentGetArgNumber(v);
  return fn;
}

/* A kernel's arguments are numbers or LLVM pointers. */
static bool is_pointer(MlirType t) {
  MlirStringRef ns = mlirDialectGetNamespace(mlirTypeGetDialect(t));
  return ns.length == 4 && memcmp(ns.data, "llvm", 4) == 0;
}

/* Records that argument `arg` of fn must be a multiple of `bytes` (its
   pointer, or the stride it holds times its element size). */
static void require_arg(FlyBuild *b, MlirOperation fn, intptr_t arg, int64_t bytes) {
  MlirContext ctx = mlirOperationGetContext(fn);
  MlirBlock entry = mlirRegionGetFirstBlock(mlirOperationGetRegion(fn, 0));
  intptr_t n;
  int64_t *req = fly_lower_arg_numbers(b, fn, "fly.arg_align", &n);
  if (!req)
    return;
  if (req[arg] < bytes)
    req[arg] = bytes;
  fly_lower_set_arg_numbers(fn, "fly.arg_align", n, req);
  /* llvm.align on the pointers, for LLVM and PTX's .align. */
  MlirAttribute *dicts = calloc((size_t)(n ? n : 1), sizeof *dicts);
  if (!dicts) {
    free(req);
    return fly_build_error(b, "out of memory");
  }
  for (intptr_t i = 0; i < n; i++) {
    bool ptr = is_pointer(mlirValueGetType(mlirBlockGetArgument(entry, i)));
    MlirNamedAttribute a =
        mlirNamedAttributeGet(mlirIdentifierGet(ctx, mlirStringRefCreateFromCString("llvm.align")),
                              mlirIntegerAttrGet(mlirIntegerTypeGet(ctx, 64), req[i]));
    dicts[i] = mlirDictionaryAttrGet(ctx, ptr && req[i] ? 1 : 0, &a);
  }
  mlirOperationSetAttributeByName(fn, mlirStringRefCreateFromCString("arg_attrs"),
                                  mlirArrayAttrGet(ctx, n, dicts));
  free(dicts);
  free(req);
}

static int64_t gcd(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a < 0 ? -a : a;
}

/* Whether v (a count of `unit`-byte things) is a multiple of k. */
static bool divisible(Proof *p, MlirValue v, int64_t k, int64_t unit);

/* Whether either operand of op is a multiple of k: each tried first
   without writing anything down, then the one that is, for real. */
static bool either_divisible(Proof *p, MlirOperation op, int64_t k, int64_t unit) {
  for (int i = 0; i < 2; i++) {
    Proof q = {p->b, false, p->visits, p->fixed};
    if (divisible(&q, mlirOperationGetOperand(op, i), k, unit)) {
      p->visits = q.visits;
      return divisible(p, mlirOperationGetOperand(op, i), k, unit);
    }
    p->visits = q.visits;
  }
  return false;
}

static bool divisible(Proof *p, MlirValue v, int64_t k, int64_t unit) {
  if (k <= 1)
    return true;
  if (++p->visits > MAX_VISITS)
    return false;
  int64_t c;
  if (constant_of(v, &c))
    return c % k == 0;
  intptr_t arg;
  MlirOperation fn = kernel_arg(v, &arg);
  if (!mlirOperationIsNull(fn)) {
    /* A runtime stride (an i32 argument): assumed a multiple of what the
       widest access needs, and required of the caller when it is used. */
    if (p->fixed || k * unit > ASSUMED || (ASSUMED % (k * unit)) != 0 ||
        !mlirTypeIsAInteger(mlirValueGetType(v)))
      return false;
    if (p->mark)
      require_arg(p->b, fn, arg, k * unit);
    return true;
  }
  if (mlirValueIsABlockArgument(v)) {
    /* A loop counter: lower bound + i * step. */
    MlirOperation loop = mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(v));
    if (!mlirOperationIsNull(loop) && named(loop, "scf.for") &&
        mlirBlockArgumentGetArgNumber(v) == 0)
      return divisible(p, mlirOperationGetOperand(loop, 0), k, unit) &&
             divisible(p, mlirOperationGetOperand(loop, 2), k, unit);
    return false;
  }
  MlirOperation op = mlirOpResultGetOwner(v);
  if (named(op, "arith.addi") || named(op, "arith.subi"))
    return divisible(p, mlirOperationGetOperand(op, 0), k, unit) &&
           divisible(p, mlirOperationGetOperand(op, 1), k, unit);
  if (named(op, "arith.muli")) {
    for (int i = 0; i < 2; i++)
      if (constant_of(mlirOperationGetOperand(op, i), &c))
        return c == 0 ||
               divisible(p, mlirOperationGetOperand(op, 1 - i), k / gcd(k, c), unit * gcd(k, c));
    /* A product is a multiple of k when either factor is. */
    return either_divisible(p, op, k, unit);
  }
  if (named(op, "arith.shli") && constant_of(mlirOperationGetOperand(op, 1), &c) && c >= 0 &&
      c < 62) {
    int64_t s = (int64_t)1 << c;
    return divisible(p, mlirOperationGetOperand(op, 0), k / gcd(k, s), unit * gcd(k, s));
  }
  /* a % m, m a multiple of k: a less a multiple of m. */
  if (named(op, "arith.remui") && constant_of(mlirOperationGetOperand(op, 1), &c) && c > 0 &&
      c % k == 0)
    return divisible(p, mlirOperationGetOperand(op, 0), k, unit);
  /* The bit operations of a swizzle (fly_lower_swizzle.c), for a power of
     two k: x ^ y and x | y keep what both are multiples of, x & y what
     either is, x >> c what x is over 2^c. */
  bool pow2 = (k & (k - 1)) == 0;
  if (pow2 && (named(op, "arith.xori") || named(op, "arith.ori")))
    return divisible(p, mlirOperationGetOperand(op, 0), k, unit) &&
           divisible(p, mlirOperationGetOperand(op, 1), k, unit);
  if (pow2 && named(op, "arith.andi")) {
    for (int i = 0; i < 2; i++)
      if (constant_of(mlirOperationGetOperand(op, i), &c) && c % k == 0)
        return true;
    return either_divisible(p, op, k, unit);
  }
  if (pow2 && named(op, "arith.shrui") && constant_of(mlirOperationGetOperand(op, 1), &c) &&
      c >= 0 && c < 32 && k <= ((int64_t)1 << 30))
    return divisible(p, mlirOperationGetOperand(op, 0), k << c, unit);
  if (named(op, "arith.index_cast") || named(op, "arith.extsi") || named(op, "arith.extui") ||
      named(op, "arith.trunci"))
    return divisible(p, mlirOperationGetOperand(op, 0), k, unit);
  return false;
}

/* The alignment of the global an llvm.mlir.addressof takes the address
   of, as its gpu.module declares it (16 when it cannot be found). */
static int64_t global_alignment(MlirOperation addressof) {
  MlirAttribute name =
      mlirOperationGetAttributeByName(addressof, mlirStringRefCreateFromCString("global_name"));
  MlirOperation gm = mlirOperationGetParentOperation(addressof);
  while (!mlirOperationIsNull(gm) && !named(gm, "gpu.module"))
    gm = mlirOperationGetParentOperation(gm);
  if (mlirAttributeIsNull(name) || mlirOperationIsNull(gm))
    return 16;
  MlirStringRef want = mlirFlatSymbolRefAttrGetValue(name);
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(gm, 0));
  for (MlirOperation o = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(o);
       o = mlirOperationGetNextInBlock(o)) {
    MlirAttribute n =
        mlirOperationGetAttributeByName(o, mlirStringRefCreateFromCString("sym_name"));
    if (named(o, "llvm.mlir.global") && !mlirAttributeIsNull(n) && mlirAttributeIsAString(n) &&
        mlirStringRefEqual(mlirStringAttrGetValue(n), want)) {
      int64_t a = fly_lower_int_attr(o, "alignment", 16);
      return a > 16 ? a : 16;
    }
  }
  return 16;
}

static bool aligned(Proof *p, MlirValue ptr, int64_t bytes) {
  if (bytes <= 1)
    return true;
  if (++p->visits > MAX_VISITS)
    return false;
  intptr_t arg;
  MlirOperation fn = kernel_arg(ptr, &arg);
  if (!mlirOperationIsNull(fn)) {
    if (bytes > ASSUMED)
      return false;
    if (p->mark)
      require_arg(p->b, fn, arg, bytes);
    return true;
  }
  if (!mlirValueIsAOpResult(ptr))
    return false;
  MlirOperation op = mlirOpResultGetOwner(ptr);
  /* Register fragments are placed 16-aligned, shared tiles as their
     global says (16, more for a swizzled tile). */
  if (named(op, "llvm.mlir.addressof"))
    return bytes <= global_alignment(op);
  if (named(op, "llvm.alloca"))
    return bytes <= 16;
  if (!named(op, "llvm.getelementptr"))
    return false;
  MlirAttribute et =
      mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("elem_type"));
  MlirAttribute raw =
      mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("rawConstantIndices"));
  if (mlirAttributeIsNull(et) || mlirAttributeIsNull(raw) || !mlirAttributeIsADenseI32Array(raw) ||
      mlirDenseArrayGetNumElements(raw) != 1)
    return false;
  int64_t unit = fly_lower_type_bytes(mlirTypeAttrGetValue(et));
  if (unit <= 0)
    return false;
  int32_t idx = mlirDenseI32ArrayGetElement(raw, 0);
  bool offset_ok;
  if (idx != INT32_MIN) {
    offset_ok = ((int64_t)idx * unit) % bytes == 0;
  } else {
    int64_t g = gcd(bytes, unit);
    offset_ok = divisible(p, mlirOperationGetOperand(op, 1), bytes / g, g);
  }
  return offset_ok && aligned(p, mlirOperationGetOperand(op, 0), bytes);
}

bool fly_lower_aligned(FlyBuild *b, MlirValue ptr, int64_t bytes) {
  Proof p = {b, false, 0, false};
  if (!aligned(&p, ptr, bytes))
    return false;
  p = (Proof){b, true, 0, false};
  aligned(&p, ptr, bytes);
  return true;
}

bool fly_lower_multiple(FlyBuild *b, MlirValue v, int64_t k) {
  Proof p = {b, false, 0, true};
  return divisible(&p, v, k, 1);
}
