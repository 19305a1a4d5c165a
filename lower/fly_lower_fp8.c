/* fly_lower_fp8.c — conversions to and from the 8-bit floats f8E4M3FN and
 * f8E5M2 (Fly's f8e4m3 and f8e5m2, the OCP formats), f8E4M3FNUZ and
 * f8E5M2FNUZ (f8e4m3fnuz and f8e5m2fnuz, CDNA3's) in the target pass
 * (fly_lower_target.h).
 *
 * arith.truncf to an 8-bit float rounds to nearest even and saturates: a
 * value beyond the largest finite one (448, 57344), an infinity included,
 * gives that value of its sign, and NaN gives NaN (the tracer adds the
 * non-saturating overflow where convert asks for it). arith.extf from one
 * is exact. The instructions are packed, two values at a time (NVIDIA's
 * cvt.rn.satfinite.e4m3x2.f32, AMD's v_cvt_pk_fp8_f32), so values go to the
 * vendor's hooks in pairs, an odd last one with a zero; f16 stays f16
 * (NVIDIA converts it directly), bf16 and f64 go through f32, exactly; f64
 * to fp8 is refused by the semantic pass (through f32 it would round
 * twice). Nothing is emitted for a target without the instructions, where
 * the back end would abort: the semantic pass refuses those conversions,
 * and this pass checks again. */
#include <stdlib.h>

#include "fly_lower_target.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

const FlyType *fly_lower_f8_type(MlirType t) {
  if (mlirTypeIsAFloat8E4M3FN(t))
    return fly_type_scalar(FLY_TYPE_F8E4M3);
  if (mlirTypeIsAFloat8E5M2(t))
    return fly_type_scalar(FLY_TYPE_F8E5M2);
  if (mlirTypeIsAFloat8E4M3FNUZ(t))
    return fly_type_scalar(FLY_TYPE_F8E4M3FNUZ);
  if (mlirTypeIsAFloat8E5M2FNUZ(t))
    return fly_type_scalar(FLY_TYPE_F8E5M2FNUZ);
  return NULL;
}

/* v (a float of two lanes or one) as the float type e, exactly: every value
   of an 8-bit float is one of f16, bf16 and f32, so each step is exact. */
static MlirValue float_as(FlyBuild *b, MlirValue v, MlirType e) {
  MlirType t = mlirValueGetType(v), from = fly_elem_of(t);
  MlirType to = mlirTypeIsAVector(t) ? fly_vec_type((int)mlirShapedTypeGetDimSize(t, 0), e) : e;
  if (mlirTypeEqual(from, e))
    return v;
  unsigned fw = mlirFloatTypeGetWidth(from), tw = mlirFloatTypeGetWidth(e);
  if (fw == tw) /* f16 <-> bf16 */
    return float_as(b, float_as(b, v, mlirF32TypeGet(b->m->ctx)), e);
  return fly_build_op1(b, fw < tw ? "arith.extf" : "arith.truncf", to, 1, &v, 0, NULL);
}

/* Element i of v (n lanes), or a zero of type e past its end; a scalar
   (n 0) is v itself, in both halves of its pair (the second is unused). */
static MlirValue lane(FlyBuild *b, MlirValue v, int n, int i, MlirType e) {
  if (n == 0)
    return v;
  if (i < n)
    return fly_build_extract(b, v, i, e);
  MlirAttribute zero =
      mlirTypeIsAInteger(e) ? mlirIntegerAttrGet(e, 0) : mlirFloatAttrDoubleGet(b->m->ctx, e, 0.0);
  MlirNamedAttribute a = fly_mlir_named(b->m, "value", zero);
  return fly_build_op1(b, "arith.constant", e, 0, NULL, 1, &a);
}

static MlirValue pair_of(FlyBuild *b, MlirValue x, MlirValue y) {
  MlirType t = fly_vec_type(2, mlirValueGetType(x));
  MlirValue p = fly_build_op1(b, "llvm.mlir.poison", t, 0, NULL, 0, NULL);
  return fly_build_insert(b, fly_build_insert(b, p, x, 0), y, 1);
}

/* The n values of v (floats of type src, f32 or f16; n 0: a scalar) as
   bytes of f8: i8 or vector<n x i8>. */
static MlirValue pack(FlyBuild *b, const FlyTargetHooks *h, const FlyTarget *t, MlirValue v, int n,
                      MlirType src, MlirType f8) {
  MlirType i8 = mlirIntegerTypeGet(b->m->ctx, 8);
  MlirValue r = {NULL};
  if (n)
    r = fly_build_op1(b, "llvm.mlir.poison", fly_vec_type(n, i8), 0, NULL, 0, NULL);
  for (int i = 0; i < (n ? n : 1); i += 2) {
    MlirValue p = pair_of(b, lane(b, v, n, i, src), lane(b, v, n, i + 1, src));
    MlirValue w = h->fp8_pack(b, t, p, f8);
    if (b->failed)
      return w;
    if (!n)
      return fly_build_op1(b, "llvm.trunc", i8, 1, &w, 0, NULL);
    MlirValue two = fly_build_op1(b, "llvm.bitcast", fly_vec_type(2, i8), 1, &w, 0, NULL);
    for (int k = 0; k < 2 && i + k < n; k++)
      r = fly_build_insert(b, r, fly_build_extract(b, two, k, i8), i + k);
  }
  return r;
}

/* The n bytes (i8 or vector<n x i8>) of f8 values as floats of type dst. */
static MlirValue unpack(FlyBuild *b, const FlyTargetHooks *h, const FlyTarget *t, MlirValue v,
                        int n, MlirType f8, MlirType dst) {
  MlirContext ctx = b->m->ctx;
  MlirType i8 = mlirIntegerTypeGet(ctx, 8), i16 = mlirIntegerTypeGet(ctx, 16);
  MlirValue r = {NULL};
  if (n)
    r = fly_build_op1(b, "llvm.mlir.poison", fly_vec_type(n, dst), 0, NULL, 0, NULL);
  for (int i = 0; i < (n ? n : 1); i += 2) {
    MlirValue two = pair_of(b, lane(b, v, n, i, i8), lane(b, v, n, i + 1, i8));
    MlirValue w = fly_build_op1(b, "llvm.bitcast", i16, 1, &two, 0, NULL);
    MlirValue p = h->fp8_unpack(b, t, w, f8);
    if (b->failed)
      return p;
    p = float_as(b, p, dst);
    if (!n)
      return fly_build_extract(b, p, 0, dst);
    for (int k = 0; k < 2 && i + k < n; k++)
      r = fly_build_insert(b, r, fly_build_extract(b, p, k, dst), i + k);
  }
  return r;
}

void fly_lower_fp8(FlyBuild *b, MlirOperation op, const FlyTargetHooks *h) {
  const FlyTarget *t = fly_lower_target_of(op);
  if (!t)
    return fly_build_error(b, "a conversion to or from an 8-bit float needs the target's chip: "
                              "attach a target first (nvvm-attach-target, rocdl-attach-target)");
  if (!fly_target_has(t, FLY_FEATURE_FP8) && !fly_target_has(t, FLY_FEATURE_FP8_FNUZ))
    return fly_build_error(b, "%s has no fp8 conversion instructions", t->arch);
  MlirValue x = mlirOperationGetOperand(op, 0), res = mlirOperationGetResult(op, 0);
  MlirType in = mlirValueGetType(x), out = mlirValueGetType(res);
  int n = mlirTypeIsAVector(in) ? (int)mlirShapedTypeGetDimSize(in, 0) : 0;
  MlirType from = fly_elem_of(in), to = fly_elem_of(out), f32 = mlirF32TypeGet(b->m->ctx);
  bool narrows = fly_lower_is(op, "arith.truncf");
  if (fly_type_is_fnuz(fly_lower_f8_type(narrows ? to : from)) &&
      !fly_target_has(t, FLY_FEATURE_FP8_FNUZ))
    return fly_build_error(b,
                           "%s has no conversions of the FNUZ 8-bit floats (f8e4m3fnuz, "
                           "f8e5m2fnuz): CDNA3's (gfx942) only",
                           t->arch);
  MlirValue r;
  if (narrows) {
    if (mlirTypeIsAF64(from))
      return fly_build_error(b, "f64 converts to an 8-bit float through f32 only (x as f32 as "
                                "f8e4m3), which rounds twice");
    MlirType src = mlirTypeIsAF16(from) ? from : f32;
    MlirValue bytes = pack(b, h, t, float_as(b, x, src), n, src, to);
    if (b->failed)
      return;
    r = fly_build_bitcast(b, bytes, out);
  } else {
    MlirValue bytes = fly_build_bitcast(b, x, fly_lower_storage_type(in));
    r = unpack(b, h, t, bytes, n, from, to);
    if (b->failed)
      return;
  }
  mlirValueReplaceAllUsesOfWith(res, r);
  mlirOperationDestroy(op);
}
