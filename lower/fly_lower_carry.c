/* fly_lower_carry.c — wgmma accumulators carried through loops as the
 * structs wgmma takes and gives.
 *
 * fly.gemm's accumulator is a vector of floats, a wgmma's the struct of
 * one m x n tile's floats. Converting at each fly.gemm put a chain of
 * element moves on both sides of every group of MMAs: in a K loop that
 * carries the vector, 2 x 128 extracts and inserts a step for a 64 x 256
 * tile, which LLVM's combiner and vectoriser spent a seventh of a 128 x 256
 * GEMM's compile time going over. The wgmma lowering marks the conversions
 * it makes (fly_acc_cast); here a loop whose yielded value comes from one
 * carries the struct instead of the vector, conversions that undo each
 * other are dropped, and those left become element moves. (The code
 * generator then splits the loop's struct phi into a phi per float:
 * fly_codegen_phis.c.) */
#include <stdio.h>
#include <stdlib.h>

#include "fly_lower_target.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/Dialect/LLVM.h"

static const char mark[] = "fly.acc";

static bool is_acc_cast(MlirOperation op) {
  return fly_lower_is(op, "builtin.unrealized_conversion_cast") &&
         !mlirAttributeIsNull(
             mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString(mark)));
}

static MlirValue cast_at(FlyMlir *m, FlyInsert ip, MlirLocation loc, MlirValue v, MlirType to) {
  MlirNamedAttribute a = fly_mlir_named(m, mark, mlirUnitAttrGet(m->ctx));
  return fly_mlir_op1(m, ip, loc, "builtin.unrealized_conversion_cast", to, 1, &v, 1, &a);
}

MlirValue fly_acc_cast(FlyBuild *b, MlirValue v, MlirType to) {
  return cast_at(b->m, b->ip, b->loc, v, to);
}

bool fly_acc_cast_input(MlirValue v, MlirValue *from) {
  if (!mlirValueIsAOpResult(v) || !is_acc_cast(mlirOpResultGetOwner(v)))
    return false;
  *from = mlirOperationGetOperand(mlirOpResultGetOwner(v), 0);
  return true;
}

/* The f32 leaves of a struct (of structs) in order, as position paths. */
typedef struct Leaf {
  int64_t path[2];
  int depth;
} Leaf;

static int count_leaves(MlirType t) {
  int n = 0;
  intptr_t k = mlirLLVMStructTypeGetNumElementTypes(t);
  for (intptr_t i = 0; i < k; i++) {
    MlirType e = mlirLLVMStructTypeGetElementType(t, i);
    n += mlirTypeIsALLVMStructType(e) ? (int)mlirLLVMStructTypeGetNumElementTypes(e) : 1;
  }
  return n;
}

/* The leaves of t, allocated; NULL when out of memory. */
static Leaf *leaves(MlirType t, int *n) {
  *n = count_leaves(t);
  Leaf *out = malloc((size_t)(*n ? *n : 1) * sizeof *out);
  if (!out)
    return NULL;
  int at = 0;
  intptr_t k = mlirLLVMStructTypeGetNumElementTypes(t);
  for (intptr_t i = 0; i < k; i++) {
    MlirType e = mlirLLVMStructTypeGetElementType(t, i);
    if (mlirTypeIsALLVMStructType(e)) {
      intptr_t kk = mlirLLVMStructTypeGetNumElementTypes(e);
      for (intptr_t v = 0; v < kk; v++)
        out[at++] = (Leaf){{i, v}, 2};
    } else {
      out[at++] = (Leaf){{i, 0}, 1};
    }
  }
  return out;
}

static MlirNamedAttribute position(FlyMlir *m, const Leaf *l) {
  char pos[64];
  if (l->depth == 2)
    snprintf(pos, sizeof pos, "array<i64: %lld, %lld>", (long long)l->path[0],
             (long long)l->path[1]);
  else
    snprintf(pos, sizeof pos, "array<i64: %lld>", (long long)l->path[0]);
  return fly_mlir_named(m, "position",
                        mlirAttributeParseGet(m->ctx, mlirStringRefCreateFromCString(pos)));
}

/* Iter_arg j of the scf.for `loop` carries the struct its yielded value was
   converted from, when that value is one of the marked conversions. */
static void carry(FlyMlir *m, MlirOperation loop, intptr_t j) {
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(loop, 0));
  MlirOperation yield = mlirBlockGetTerminator(body);
  MlirValue s;
  if (!fly_acc_cast_input(mlirOperationGetOperand(yield, j), &s))
    return;
  MlirType st = mlirValueGetType(s);
  MlirLocation loc = mlirOperationGetLocation(loop);
  MlirValue init = mlirOperationGetOperand(loop, 3 + j), from;
  MlirType vt = mlirValueGetType(init);
  if (!fly_acc_cast_input(init, &from) || !mlirTypeEqual(mlirValueGetType(from), st))
    from = cast_at(m, (FlyInsert){mlirOperationGetBlock(loop), loop}, loc, init, st);
  mlirOperationSetOperand(loop, 3 + j, from);
  mlirOperationSetOperand(yield, j, s);

  MlirValue arg = mlirBlockGetArgument(body, 1 + j);
  mlirBlockArgumentSetType(arg, st);
  MlirValue in = cast_at(m, (FlyInsert){body, mlirBlockGetFirstOperation(body)}, loc, arg, vt);
  MlirOperation in_op = mlirOpResultGetOwner(in);
  mlirValueReplaceAllUsesExcept(arg, in, 1, &in_op);

  MlirValue res = mlirOperationGetResult(loop, j);
  mlirValueSetType(res, st);
  MlirValue out = cast_at(
      m, (FlyInsert){mlirOperationGetBlock(loop), mlirOperationGetNextInBlock(loop)}, loc, res, vt);
  MlirOperation out_op = mlirOpResultGetOwner(out);
  mlirValueReplaceAllUsesExcept(res, out, 1, &out_op);
}

static bool is_for(MlirOperation op) { return fly_lower_is(op, "scf.for"); }

/* A conversion left over, as element moves between the struct and the
   vector (their elements in the same order). */
static bool write_out(FlyMlir *m, MlirOperation op, MlirType i32) {
  MlirValue x = mlirOperationGetOperand(op, 0);
  MlirType from = mlirValueGetType(x), to = mlirValueGetType(mlirOperationGetResult(op, 0));
  bool to_vector = mlirTypeIsAVector(to);
  MlirType st = to_vector ? from : to, vt = to_vector ? to : from;
  MlirType f32 = mlirShapedTypeGetElementType(vt);
  int64_t n = mlirShapedTypeGetDimSize(vt, 0);
  int have;
  Leaf *path = leaves(st, &have);
  MlirLocation loc = mlirOperationGetLocation(op);
  if (!path || have != n) {
    mlirEmitError(loc, path ? "internal error: an accumulator's struct and vector differ in size"
                            : "out of memory");
    free(path);
    return false;
  }
  FlyBuild b = {m, {mlirOperationGetBlock(op), op}, loc, i32, false, NULL};
  MlirValue acc = fly_build_op1(&b, "llvm.mlir.poison", to, 0, NULL, 0, NULL);
  for (int64_t i = 0; i < n; i++) {
    MlirNamedAttribute p = position(m, &path[i]);
    if (to_vector) {
      MlirValue e = fly_build_op1(&b, "llvm.extractvalue", f32, 1, &x, 1, &p);
      acc = fly_build_insert(&b, acc, e, i);
    } else {
      MlirValue w[2] = {acc, fly_build_extract(&b, x, i, f32)};
      acc = fly_build_op1(&b, "llvm.insertvalue", to, 2, w, 1, &p);
    }
  }
  free(path);
  mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0), acc);
  mlirOperationDestroy(op);
  return true;
}

bool fly_lower_carry(FlyMlir *m, MlirOperation root) {
  FlyOpList loops = {NULL, 0, 0, false, is_for};
  fly_lower_collect(root, &loops);
  /* Inner loops first: a rewritten inner loop's result is a conversion an
     outer loop may then yield. */
  for (int i = loops.n - 1; i >= 0; i--)
    for (intptr_t j = 0; j < mlirOperationGetNumResults(loops.ops[i]); j++)
      carry(m, loops.ops[i], j);
  free(loops.ops);
  if (loops.failed) {
    mlirEmitError(mlirOperationGetLocation(root), "out of memory");
    return false;
  }

  FlyOpList casts = {NULL, 0, 0, false, is_acc_cast};
  fly_lower_collect(root, &casts);
  bool *gone = calloc((size_t)(casts.n ? casts.n : 1), sizeof *gone);
  bool ok = !casts.failed && gone;
  if (!ok)
    mlirEmitError(mlirOperationGetLocation(root), "out of memory");
  /* A conversion of a conversion back to its input's type is that input. */
  for (int i = 0; i < casts.n && ok; i++) {
    MlirValue r = mlirOperationGetResult(casts.ops[i], 0), x;
    if (fly_acc_cast_input(mlirOperationGetOperand(casts.ops[i], 0), &x) &&
        mlirTypeEqual(mlirValueGetType(x), mlirValueGetType(r)))
      mlirValueReplaceAllUsesOfWith(r, x);
  }
  /* Drop those no longer used, until none is left to drop: dropping one
     may leave the conversion it read unused. */
  for (bool more = ok; more;) {
    more = false;
    for (int i = casts.n - 1; i >= 0; i--)
      if (!gone[i] &&
          mlirOpOperandIsNull(mlirValueGetFirstUse(mlirOperationGetResult(casts.ops[i], 0)))) {
        mlirOperationDestroy(casts.ops[i]);
        gone[i] = more = true;
      }
  }
  MlirType i32 = mlirIntegerTypeGet(m->ctx, 32);
  for (int i = 0; i < casts.n && ok; i++)
    if (!gone[i])
      ok = write_out(m, casts.ops[i], i32);
  free(gone);
  free(casts.ops);
  return ok;
}
