/* fly_lower_math.c — math, float max/min and casts of the target pass
 * (fly_lower_target.h). Math becomes LLVM intrinsics that both back ends
 * implement (exp via exp2, log via log2), so no device library is needed;
 * the vendor gives log2. */
#include <stdlib.h>
#include <string.h>

#include "fly_lower_target.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

/* ---- math ----------------------------------------------------------------------------------- */

static MlirValue splat(FlyBuild *b, MlirType t, double f) {
  char text[32];
  snprintf(text, sizeof text, "%.17e", f);
  return fly_build_constant(b, t, text);
}

MlirValue fly_build_intrinsic(FlyBuild *b, const char *name, MlirType t, int n,
                              const MlirValue *v) {
  return fly_mlir_intrinsic(b->m, b->ip, b->loc, name, t, n, v);
}

MlirType fly_elem_of(MlirType t) {
  return mlirTypeIsAVector(t) ? mlirShapedTypeGetElementType(t) : t;
}

MlirType fly_vec_type(int n, MlirType elem) {
  int64_t shape[1] = {n};
  return mlirVectorTypeGet(1, shape, elem);
}

/* exp(x) = exp2(x * log2(e)), log(x) = log2(x) * ln(2): the base-2 forms
   are instructions on both vendors. f16 and bf16 are computed in f32. */
static void math(FlyBuild *b, MlirOperation op, const char *name, const FlyTargetHooks *h) {
  static const char *const handled[] = {"exp",  "exp2",  "log",  "log2",
                                        "sqrt", "rsqrt", "absf", "fma"};
  bool known = false;
  for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++)
    known = known || strcmp(name, handled[i]) == 0;
  if (!known)
    return; /* the upstream conversion handles it without a library */
  MlirValue x = mlirOperationGetOperand(op, 0);
  MlirType t = mlirValueGetType(x), e = fly_elem_of(t);
  int nops = (int)mlirOperationGetNumOperands(op);
  if (mlirTypeIsAF64(e) && strcmp(name, "absf") != 0 && strcmp(name, "fma") != 0 &&
      strcmp(name, "sqrt") != 0)
    return fly_build_error(b,
                           "%s of f64 needs a device math library, which Fly does not use; "
                           "compute it in f32",
                           name);
  MlirType ct = t;
  MlirValue in[3];
  /* fma has 16-bit instructions (fma.rn.f16, v_fma_f16 ...): in f32 its
     result would be rounded twice. */
  bool narrow = (mlirTypeIsAF16(e) || mlirTypeIsABF16(e)) && strcmp(name, "fma") != 0;
  if (narrow) {
    MlirType f32 = mlirF32TypeGet(b->m->ctx);
    if (mlirTypeIsAVector(t)) {
      int64_t shape[1] = {mlirShapedTypeGetDimSize(t, 0)};
      ct = mlirVectorTypeGet(1, shape, f32);
    } else {
      ct = f32;
    }
  }
  for (int i = 0; i < nops && i < 3; i++) {
    in[i] = mlirOperationGetOperand(op, i);
    if (narrow)
      in[i] = fly_build_op1(b, "arith.extf", ct, 1, &in[i], 0, NULL);
  }
  MlirValue r;
  if (strcmp(name, "exp") == 0 || strcmp(name, "exp2") == 0) {
    /* The vendor's one instruction for f32 (subnormal results flush to
       zero); f64 was refused above. */
    MlirValue s = in[0];
    if (strcmp(name, "exp") == 0) {
      MlirValue v[2] = {in[0], splat(b, ct, 1.4426950408889634)};
      s = fly_build_op1(b, "arith.mulf", ct, 2, v, 0, NULL);
    }
    r = h->exp2(b, ct, s);
  } else if (strcmp(name, "log") == 0 || strcmp(name, "log2") == 0) {
    /* NVPTX selects no instruction for llvm.log2: each vendor has its own. */
    MlirValue l = h->log2(b, ct, in[0]);
    if (strcmp(name, "log2") == 0) {
      r = l;
      goto done;
    }
    MlirValue v[2] = {l, splat(b, ct, 0.6931471805599453)};
    r = fly_build_op1(b, "arith.mulf", ct, 2, v, 0, NULL);
  } else if (strcmp(name, "rsqrt") == 0) {
    MlirValue s = fly_build_intrinsic(b, "llvm.sqrt", ct, 1, in);
    MlirValue v[2] = {splat(b, ct, 1.0), s};
    r = fly_build_op1(b, "arith.divf", ct, 2, v, 0, NULL);
  } else {
    char full[80];
    snprintf(full, sizeof full, "llvm.%s", strcmp(name, "absf") == 0 ? "fabs" : name);
    r = fly_build_intrinsic(b, full, ct, nops, in);
  }
done:
  if (narrow)
    r = fly_build_op1(b, "arith.truncf", t, 1, &r, 0, NULL);
  mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0), r);
  mlirOperationDestroy(op);
}

/* max and min of floats: the NVVM conversion calls libdevice for them;
   llvm.maxnum is max.f32 on NVIDIA and v_max_f32 on AMD. */
static void min_max(FlyBuild *b, MlirOperation op, bool max) {
  MlirValue v[2] = {mlirOperationGetOperand(op, 0), mlirOperationGetOperand(op, 1)};
  MlirValue r =
      fly_build_intrinsic(b, max ? "llvm.maxnum" : "llvm.minnum", mlirValueGetType(v[0]), 2, v);
  mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0), r);
  mlirOperationDestroy(op);
}

/* Casts: of the 8-bit floats, which LLVM does not have, with the fp8
   instructions (fly_lower_fp8.c); a narrowing with a directed rounding
   (convert(x, T, rounding = ...)) with the vendor's. The others stay for
   the upstream conversion. */
static void float_cast(FlyBuild *b, MlirOperation op, const FlyTargetHooks *h) {
  MlirValue x = mlirOperationGetOperand(op, 0);
  MlirValue r = mlirOperationGetResult(op, 0);
  if (fly_lower_is_f8(mlirValueGetType(x)) || fly_lower_is_f8(mlirValueGetType(r)))
    return fly_lower_fp8(b, op, h);
  int mode = (int)fly_lower_int_attr(op, "roundingmode", 0);
  if (!fly_lower_is(op, "arith.truncf") || mode == 0)
    return;
  if (mode > 3)
    return fly_build_error(b, "internal error: the rounding mode %d of a conversion", mode);
  MlirValue v = h->trunc_rounded(b, x, mlirValueGetType(r), mode);
  if (b->failed)
    return;
  mlirValueReplaceAllUsesOfWith(r, v);
  mlirOperationDestroy(op);
}

bool fly_lower_math_wanted(MlirOperation op) {
  MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
  return (n.length > 5 && memcmp(n.data, "math.", 5) == 0) || fly_lower_is(op, "arith.truncf") ||
         fly_lower_is(op, "arith.extf") || fly_lower_is(op, "arith.maxnumf") ||
         fly_lower_is(op, "arith.minnumf");
}

void fly_lower_math(FlyBuild *b, MlirOperation op, const FlyTargetHooks *h) {
  MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
  char name[64];
  snprintf(name, sizeof name, "%.*s", (int)n.length, n.data);
  if (strncmp(name, "math.", 5) == 0)
    math(b, op, name + 5, h);
  else if (fly_lower_is(op, "arith.maxnumf") || fly_lower_is(op, "arith.minnumf"))
    min_max(b, op, fly_lower_is(op, "arith.maxnumf"));
  else
    float_cast(b, op, h);
}
