/* fly_lower_gemm.c — fly.gemm: an MMA of register fragments as the atom's
 * instructions (fly_lower_target.h).
 *
 * The fragments are the thread's values of A (Mt x Kt tiles of the atom),
 * B (Nt x Kt) and C (Mt x Nt), each tile's values together, as the
 * partitions lay them out. The instruction runs once per (m, n, k) tile on
 * its slices of the fragments; the vendor's hook emits it. */
#include <math.h>
#include <stdio.h>

#include "fly_lower_target.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

MlirValue fly_build_pick(FlyBuild *b, MlirValue v, const int *idx, int n, MlirType elem) {
  if (!mlirTypeIsAVector(mlirValueGetType(v)))
    return v; /* a fragment of one value */
  if (n == 1)
    return fly_build_extract(b, v, idx[0], elem);
  /* LLVM has no 8-bit floats: their vectors (fp8 MFMA operands) are
     vector.shuffle's, which the conversion to LLVM retypes as i8. */
  bool f8 = fly_lower_is_f8(elem);
  char mask[1024];
  int at = snprintf(mask, sizeof mask, f8 ? "array<i64: " : "array<i32: ");
  for (int i = 0; i < n && at < (int)sizeof mask - 16; i++)
    at += snprintf(mask + at, sizeof mask - (size_t)at, "%s%d", i ? ", " : "", idx[i]);
  snprintf(mask + at, sizeof mask - (size_t)at, ">");
  MlirNamedAttribute a = fly_mlir_named(b->m, "mask", fly_build_attr(b, mask));
  MlirValue ops[2] = {v, v};
  return fly_build_op1(b, f8 ? "vector.shuffle" : "llvm.shufflevector", fly_vec_type(n, elem), 2,
                       ops, 1, &a);
}

static int64_t vec_len(MlirValue v) {
  MlirType t = mlirValueGetType(v);
  return mlirTypeIsAVector(t) ? mlirShapedTypeGetDimSize(t, 0) : 1;
}

void fly_lower_gemm(FlyBuild *b, MlirOperation op, const FlyTargetHooks *h) {
  const FlyAtom *atom = fly_lower_atom(mlirOperationGetOperand(op, 0));
  if (!atom || atom->kind != FLY_ATOM_MMA || (FlyVendor)fly_atom_vendor(atom) != h->vendor)
    return fly_build_error(b, "internal error: an MMA atom of another target");
  if (atom->mma == FLY_MMA_NV_WGMMA)
    return fly_lower_wgmma(b, op, atom);
  MlirValue A = mlirOperationGetOperand(op, 1), B = mlirOperationGetOperand(op, 2),
            C = mlirOperationGetOperand(op, 3);
  int va = atom->m * atom->k / atom->threads, vb = atom->n * atom->k / atom->threads,
      vc = atom->m * atom->n / atom->threads;
  int64_t a = vec_len(A) / va, bn = vec_len(B) / vb, c = vec_len(C) / vc;
  /* a = Mt*Kt, b = Nt*Kt, c = Mt*Nt. */
  int64_t kt = (int64_t)llround(sqrt((double)a * (double)bn / (double)(c ? c : 1)));
  if (kt < 1 || a % kt || bn % kt || (a / kt) * (bn / kt) != c)
    return fly_build_error(b, "internal error: MMA fragments of sizes %lld, %lld, %lld",
                           (long long)vec_len(A), (long long)vec_len(B), (long long)vec_len(C));
  int64_t mt = a / kt, nt = bn / kt;
  MlirType ta = fly_elem_of(mlirValueGetType(A)), tb = fly_elem_of(mlirValueGetType(B));
  MlirType tc = fly_elem_of(mlirValueGetType(C));
  MlirValue acc = C;
  for (int64_t k = 0; k < kt; k++)
    for (int64_t n = 0; n < nt; n++)
      for (int64_t m = 0; m < mt; m++) {
        int ia[64], ib[64], ic[64];
        for (int v = 0; v < va; v++)
          ia[v] = (int)(v + va * (m + mt * k));
        for (int v = 0; v < vb; v++)
          ib[v] = (int)(v + vb * (n + nt * k));
        for (int v = 0; v < vc; v++)
          ic[v] = (int)(v + vc * (m + mt * n));
        FlyMmaCall call = {atom,
                           fly_build_pick(b, A, ia, va, ta),
                           fly_build_pick(b, B, ib, vb, tb),
                           fly_build_pick(b, acc, ic, vc, tc),
                           va,
                           vb,
                           vc,
                           ta,
                           tb,
                           tc};
        MlirValue r = h->mma(b, &call);
        for (int v = 0; v < vc; v++)
          acc = fly_build_insert(b, acc, fly_build_extract(b, r, v, tc), ic[v]);
      }
  mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0), acc);
  mlirOperationDestroy(op);
}
