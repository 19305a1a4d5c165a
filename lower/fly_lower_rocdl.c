/* fly_lower_rocdl.c — AMD's part of the target pass, convert-fly-to-rocdl
 * (fly_lower_target.h): MFMA and WMMA through the upstream amdgpu dialect,
 * log2 as the llvm.log2 intrinsic and exp2 as v_exp_f32 (llvm.amdgcn.exp2),
 * block_dim/grid_dim from the dispatch packet,
 * conversions with a directed rounding, the fp8 conversions (OCP on gfx950
 * and gfx1201; FNUZ, and OCP on top of FNUZ, on gfx942), and the memory atomics may
 * touch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_lower_target.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

/* amdgpu.wmma, which picks the instruction of the chip by shape and
   types (v_wmma_f32_16x16x16_f16 ...). */
static MlirValue wmma(FlyBuild *b, const FlyMmaCall *c) {
  char attrs[128];
  snprintf(attrs, sizeof attrs, "{m = %d : i32, n = %d : i32, k = %d : i32}", c->atom->m,
           c->atom->n, c->atom->k);
  MlirAttribute dict = fly_build_attr(b, attrs);
  MlirNamedAttribute at[3];
  for (int i = 0; i < 3; i++)
    at[i] = mlirDictionaryAttrGetElement(dict, i);
  MlirValue ops[3] = {c->x, c->y, c->z};
  return fly_build_op1(b, "amdgpu.wmma", fly_vec_type(c->vc, c->tc), 3, ops, 3, at);
}

static MlirValue mma(FlyBuild *b, const FlyMmaCall *c) {
  const FlyAtom *atom = c->atom;
  switch (atom->mma) {
  case FLY_MMA_AMD_MFMA:
    break;
  case FLY_MMA_AMD_WMMA:
    return wmma(b, c);
  case FLY_MMA_NV_MMA_SYNC:
  case FLY_MMA_NV_WGMMA:
  case FLY_MMA_FAMILY_COUNT:
    fly_build_error(b, "the MMA atom %s is not lowered yet", atom->name);
    return c->z;
  }
  char attrs[256];
  snprintf(attrs, sizeof attrs,
           "{m = %d : i32, n = %d : i32, k = %d : i32, blocks = 1 : i32, cbsz = 0 : "
           "i32, abid = 0 : i32, blgp = #amdgpu<mfma_perm_b none>}",
           atom->m, atom->n, atom->k);
  MlirAttribute dict = fly_build_attr(b, attrs);
  MlirNamedAttribute at[7];
  int na = (int)mlirDictionaryAttrGetNumElements(dict);
  for (int i = 0; i < na && i < 7; i++)
    at[i] = mlirDictionaryAttrGetElement(dict, i);
  MlirValue ops[3] = {c->x, c->y, c->z};
  return fly_build_op1(b, "amdgpu.mfma", fly_vec_type(c->vc, c->tc), 3, ops, na, at);
}

static MlirValue log2_(FlyBuild *b, MlirType t, MlirValue x) {
  return fly_build_intrinsic(b, "llvm.log2", t, 1, &x);
}

/* v_exp_f32 alone (llvm.amdgcn.exp2; llvm.exp2 adds a compare, two
   selects, an add and a v_ldexp an element to keep subnormal results),
   element by element for a vector. */
static MlirValue exp2_(FlyBuild *b, MlirType t, MlirValue x) {
  MlirType f32 = mlirF32TypeGet(b->m->ctx);
  if (!mlirTypeIsAVector(t))
    return fly_build_intrinsic(b, "llvm.amdgcn.exp2", f32, 1, &x);
  MlirValue r = fly_build_op1(b, "llvm.mlir.poison", t, 0, NULL, 0, NULL);
  for (int64_t i = 0; i < mlirShapedTypeGetDimSize(t, 0); i++) {
    MlirValue e = fly_build_extract(b, x, i, f32);
    r = fly_build_insert(b, r, fly_build_intrinsic(b, "llvm.amdgcn.exp2", f32, 1, &e), i);
  }
  return r;
}

/* ---- conversions ---------------------------------------------------------------------------- */

static MlirValue op2(FlyBuild *b, const char *name, MlirType t, MlirValue x, MlirValue y) {
  MlirValue v[2] = {x, y};
  return fly_build_op1(b, name, t, 2, v, 0, NULL);
}
static MlirValue cmp(FlyBuild *b, const char *name, int predicate, MlirValue x, MlirValue y) {
  MlirType t = mlirValueGetType(x);
  MlirType i1 = mlirIntegerTypeGet(b->m->ctx, 1);
  MlirType rt = mlirTypeIsAVector(t) ? fly_vec_type((int)mlirShapedTypeGetDimSize(t, 0), i1) : i1;
  MlirValue v[2] = {x, y};
  MlirNamedAttribute p = fly_mlir_named(
      b->m, "predicate", mlirIntegerAttrGet(mlirIntegerTypeGet(b->m->ctx, 64), predicate));
  return fly_build_op1(b, name, rt, 2, v, 1, &p);
}
static MlirValue pick(FlyBuild *b, MlirValue c, MlirValue x, MlirValue y) {
  MlirValue v[3] = {c, x, y};
  return fly_build_op1(b, "arith.select", mlirValueGetType(x), 3, v, 0, NULL);
}
/* t with its element replaced by e. */
static MlirType with_elem(MlirType t, MlirType e) {
  return mlirTypeIsAVector(t) ? fly_vec_type((int)mlirShapedTypeGetDimSize(t, 0), e) : e;
}

/* A narrowing with a directed rounding. CDNA rounds as its mode register
   says, but LLVM's way to ask for that (llvm.fptrunc.round) takes a
   metadata argument that MLIR 22 cannot pass. So the value is rounded to
   nearest (v_cvt_f16_f32, v_cvt_f32_f64 ...), and where that went the other
   way than asked (widened back, it is above x rounding down, below rounding
   up, larger in magnitude rounding toward zero), moved one step back: one
   more or one less in the bits of its magnitude, the next value of the
   format (from the largest finite one to infinity and back, from zero to
   the smallest subnormal). Exact, as the nearest value and the asked one
   are the two neighbours of x. A NaN compares false and stays. */
static MlirValue amd_trunc_rounded(FlyBuild *b, MlirValue x, MlirType to, int mode) {
  MlirType t = mlirValueGetType(x);
  unsigned bits = mlirFloatTypeGetWidth(fly_elem_of(to));
  MlirType it = with_elem(t, mlirIntegerTypeGet(b->m->ctx, bits)),
           bt = with_elem(to, fly_elem_of(it));
  MlirValue r = fly_build_op1(b, "arith.truncf", to, 1, &x, 0, NULL);
  MlirValue back = fly_build_op1(b, "arith.extf", t, 1, &r, 0, NULL);
  MlirValue rb = fly_build_op1(b, "arith.bitcast", bt, 1, &r, 0, NULL);
  MlirValue neg = cmp(b, "arith.cmpi", 2 /* slt */, rb, fly_build_constant(b, bt, "0"));
  MlirValue one = fly_build_constant(b, bt, "1"), minus = fly_build_constant(b, bt, "-1");
  MlirValue wrong, delta;
  if (mode == 3) { /* toward zero: |back| > |x| */
    MlirValue ab = fly_build_intrinsic(b, "llvm.fabs", t, 1, &back);
    MlirValue ax = fly_build_intrinsic(b, "llvm.fabs", t, 1, &x);
    wrong = cmp(b, "arith.cmpf", 2 /* ogt */, ab, ax);
    delta = minus;
  } else if (mode == 1) { /* downward: back > x */
    wrong = cmp(b, "arith.cmpf", 2 /* ogt */, back, x);
    delta = pick(b, neg, one, minus);
  } else { /* upward: back < x */
    wrong = cmp(b, "arith.cmpf", 4 /* olt */, back, x);
    delta = pick(b, neg, minus, one);
  }
  MlirValue moved = op2(b, "arith.addi", bt, rb, delta);
  MlirValue fixed = pick(b, wrong, moved, rb);
  return fly_build_op1(b, "arith.bitcast", to, 1, &fixed, 0, NULL);
}

/* The OCP format's largest finite value (448, 57344). */
static double f8_max(MlirType f8) { return fly_float_max(fly_lower_f8_type(f8)); }

/* gfx942 converts the FNUZ formats only, whose bytes mean half what they
   mean in OCP's (exponent bias 8 and 16, not 7 and 15) where both are
   finite; OCP's 0x80 is -0 (FNUZ's NaN), its 0x7F and 0xFF are NaN in
   E4M3 (FNUZ: ±240), its 0x7C and 0xFC ±infinity and 0x7D-0x7F, 0xFD-0xFF
   NaN in E5M2 (FNUZ: finite). tests/unit/test_fp8.c checks the fix-ups
   below on every byte. Packing: x / 2 in FNUZ is x in OCP once x is within
   OCP's range (which the clamp before makes it); then NaN is OCP's 0x7F,
   and a zero keeps x's sign (FNUZ has no -0). */
static MlirValue fnuz_pack_fix(FlyBuild *b, MlirValue pair, MlirValue bytes) {
  MlirType i8 = mlirIntegerTypeGet(b->m->ctx, 8), i32 = mlirIntegerTypeGet(b->m->ctx, 32);
  MlirType b2 = fly_vec_type(2, i8);
  MlirValue nan = cmp(b, "arith.cmpf", 14 /* uno */, pair, pair);
  MlirValue xi = fly_build_op1(b, "arith.bitcast", fly_vec_type(2, i32), 1, &pair, 0, NULL);
  MlirValue neg =
      cmp(b, "arith.cmpi", 2 /* slt */, xi, fly_build_constant(b, fly_vec_type(2, i32), "0"));
  MlirValue low = op2(b, "arith.andi", b2, bytes, fly_build_constant(b, b2, "127"));
  MlirValue zero = cmp(b, "arith.cmpi", 0 /* eq */, low, fly_build_constant(b, b2, "0"));
  MlirValue signed_zero =
      pick(b, neg, fly_build_constant(b, b2, "-128"), fly_build_constant(b, b2, "0"));
  MlirValue r = pick(b, zero, signed_zero, bytes);
  return pick(b, nan, fly_build_constant(b, b2, "127"), r);
}

/* Unpacking on gfx942: twice the FNUZ value, then OCP's own codes. */
static MlirValue fnuz_unpack_fix(FlyBuild *b, MlirValue bytes, MlirValue v, bool e5m2) {
  MlirType i8 = mlirIntegerTypeGet(b->m->ctx, 8), f32 = mlirF32TypeGet(b->m->ctx);
  MlirType b2 = fly_vec_type(2, i8), v2 = fly_vec_type(2, f32);
  MlirValue r = op2(b, "arith.mulf", v2, v, fly_build_constant(b, v2, "2.0"));
  MlirValue low = op2(b, "arith.andi", b2, bytes, fly_build_constant(b, b2, "127"));
  MlirValue minus_zero = cmp(b, "arith.cmpi", 0 /* eq */, bytes, fly_build_constant(b, b2, "-128"));
  r = pick(b, minus_zero, fly_build_constant(b, v2, "-0.0"), r);
  MlirValue nan = fly_build_constant(b, v2, "0x7FC00000");
  if (!e5m2)
    return pick(b, cmp(b, "arith.cmpi", 0 /* eq */, low, fly_build_constant(b, b2, "127")), nan, r);
  MlirValue neg = cmp(b, "arith.cmpi", 2 /* slt */, bytes, fly_build_constant(b, b2, "0"));
  MlirValue inf = pick(b, neg, fly_build_constant(b, v2, "0xFF800000"),
                       fly_build_constant(b, v2, "0x7F800000"));
  r = pick(b, cmp(b, "arith.cmpi", 0 /* eq */, low, fly_build_constant(b, b2, "124")), inf, r);
  return pick(b, cmp(b, "arith.cmpi", 8 /* ugt */, low, fly_build_constant(b, b2, "124")), nan, r);
}

/* Whether converting f8 on target t is OCP's on top of FNUZ
   instructions (gfx942, an OCP format): f8 an FNUZ format converts
   directly. */
static bool ocp_on_fnuz(const FlyTarget *t, MlirType f8) {
  return !fly_type_is_fnuz(fly_lower_f8_type(f8)) && !fly_target_has(t, FLY_FEATURE_FP8) &&
         fly_target_has(t, FLY_FEATURE_FP8_FNUZ);
}

static bool is_e5m2(MlirType f8) {
  return mlirTypeIsAFloat8E5M2(f8) || mlirTypeIsAFloat8E5M2FNUZ(f8);
}

/* v_cvt_pk_fp8_f32 and v_cvt_pk_bf8_f32 (two f32 into bytes 0 and 1 of a
   word) round to nearest even but do not saturate: the values are clamped
   to the format's finite range first (the NaN-propagating maximum and
   minimum: an infinity becomes the largest value, a NaN stays). */
static MlirValue amd_fp8_pack(FlyBuild *b, const FlyTarget *t, MlirValue pair, MlirType f8) {
  MlirContext ctx = b->m->ctx;
  MlirType f32 = mlirF32TypeGet(ctx), i32 = mlirIntegerTypeGet(ctx, 32);
  MlirType v2 = fly_vec_type(2, f32);
  if (!mlirTypeIsAF32(fly_elem_of(mlirValueGetType(pair))))
    pair = fly_build_op1(b, "arith.extf", v2, 1, &pair, 0, NULL);
  char max[32], min[32];
  snprintf(max, sizeof max, "%.1f", f8_max(f8));
  snprintf(min, sizeof min, "-%.1f", f8_max(f8));
  MlirValue lo[2] = {pair, fly_build_constant(b, v2, min)};
  MlirValue hi[2] = {fly_build_intrinsic(b, "llvm.maximum", v2, 2, lo),
                     fly_build_constant(b, v2, max)};
  MlirValue x = fly_build_intrinsic(b, "llvm.minimum", v2, 2, hi);
  bool fnuz = ocp_on_fnuz(t, f8);
  if (fnuz)
    x = op2(b, "arith.mulf", v2, x, fly_build_constant(b, v2, "0.5"));
  MlirValue ops[3] = {fly_build_extract(b, x, 0, f32), fly_build_extract(b, x, 1, f32),
                      fly_build_op1(b, "llvm.mlir.poison", i32, 0, NULL, 0, NULL)};
  MlirNamedAttribute word = fly_mlir_named(b->m, "wordSel", mlirBoolAttrGet(ctx, 0));
  const char *cvt = is_e5m2(f8) ? "rocdl.cvt.pk.bf8.f32" : "rocdl.cvt.pk.fp8.f32";
  MlirValue w = fly_build_op1(b, cvt, i32, 3, ops, 1, &word);
  MlirType i16 = mlirIntegerTypeGet(ctx, 16);
  w = fly_build_op1(b, "llvm.trunc", i16, 1, &w, 0, NULL);
  if (!fnuz)
    return w;
  MlirType b2 = fly_vec_type(2, mlirIntegerTypeGet(ctx, 8));
  MlirValue bytes = fly_build_op1(b, "llvm.bitcast", b2, 1, &w, 0, NULL);
  bytes = fnuz_pack_fix(b, pair, bytes);
  return fly_build_op1(b, "llvm.bitcast", i16, 1, &bytes, 0, NULL);
}

/* v_cvt_pk_f32_fp8 and v_cvt_pk_f32_bf8: bytes 0 and 1 of a word to two
   f32, exactly. */
static MlirValue amd_fp8_unpack(FlyBuild *b, const FlyTarget *t, MlirValue bytes, MlirType f8) {
  MlirContext ctx = b->m->ctx;
  MlirType i32 = mlirIntegerTypeGet(ctx, 32), v2 = fly_vec_type(2, mlirF32TypeGet(ctx));
  MlirValue w = fly_build_op1(b, "llvm.zext", i32, 1, &bytes, 0, NULL);
  MlirNamedAttribute word = fly_mlir_named(b->m, "wordSel", mlirBoolAttrGet(ctx, 0));
  bool e5m2 = is_e5m2(f8);
  MlirValue v =
      fly_build_op1(b, e5m2 ? "rocdl.cvt.pk.f32.bf8" : "rocdl.cvt.pk.f32.fp8", v2, 1, &w, 1, &word);
  if (!ocp_on_fnuz(t, f8))
    return v;
  MlirType b2 = fly_vec_type(2, mlirIntegerTypeGet(ctx, 8));
  return fnuz_unpack_fix(b, fly_build_op1(b, "llvm.bitcast", b2, 1, &bytes, 0, NULL), v, e5m2);
}

/* block_dim and grid_dim on AMD: the ROCDL conversion calls ROCm's device
   library for them; the HSA dispatch packet has both (workgroup sizes as
   u16 at byte 4, grid sizes in work-items as u32 at byte 12). */
static void rewrite(FlyBuild *b, MlirOperation op) {
  char *dim = fly_lower_attr_text(
      mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("dimension")));
  int d = dim && strstr(dim, "y") ? 1 : dim && strstr(dim, "z") ? 2 : 0;
  free(dim);
  MlirType p4 = fly_mlir_type(b->m, "!llvm.ptr<4>");
  MlirNamedAttribute a[3] = {
      fly_mlir_named(b->m, "intrin", fly_mlir_str_attr(b->m, "llvm.amdgcn.dispatch.ptr")),
      fly_mlir_named(b->m, "op_bundle_sizes", fly_build_attr(b, "array<i32>")),
      fly_mlir_named(b->m, "operandSegmentSizes", fly_build_attr(b, "array<i32: 0, 0>"))};
  MlirValue packet = fly_build_op1(b, "llvm.call_intrinsic", p4, 0, NULL, 3, a);
  MlirType i8 = mlirIntegerTypeGet(b->m->ctx, 8), i16 = mlirIntegerTypeGet(b->m->ctx, 16);
  MlirValue wg = fly_build_load(b, i16, fly_build_gep(b, packet, i8, fly_sym_const(4 + 2 * d)), 2);
  MlirValue r = fly_build_op1(b, "arith.extui", b->i32, 1, &wg, 0, NULL);
  if (fly_lower_is(op, "gpu.grid_dim")) {
    MlirValue g =
        fly_build_load(b, b->i32, fly_build_gep(b, packet, i8, fly_sym_const(12 + 4 * d)), 4);
    MlirValue v[2] = {g, r};
    r = fly_build_op1(b, "arith.divui", b->i32, 2, v, 0, NULL);
  }
  MlirValue idx = fly_build_op1(b, "arith.index_castui",
                                mlirValueGetType(mlirOperationGetResult(op, 0)), 1, &r, 0, NULL);
  mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0), idx);
  mlirOperationDestroy(op);
}

static bool wants(MlirOperation op) {
  return fly_lower_is(op, "gpu.block_dim") || fly_lower_is(op, "gpu.grid_dim");
}

/* ---- atomics -------------------------------------------------------------------------------- */

static const char *syncscope(FlyMemScope s) {
  switch (s) {
  case FLY_SCOPE_BLOCK:
    return "workgroup";
  case FLY_SCOPE_GPU:
    return "agent";
  case FLY_SCOPE_SYSTEM:
  case FLY_SCOPE_COUNT:
    break;
  }
  return "";
}

/* Fly's atomics promise what HIP's do by default (clang's
   -fno-atomic-remote-memory -fno-atomic-fine-grained-memory): they touch
   neither fine-grained host memory nor a peer's memory across PCIe, whose
   links cannot do every operation atomically. Said on each atomicrmw, this
   lets LLVM use the GPU's own instructions; without it every float add,
   and at system scope every integer min, max, and, or and xor, is a loop
   of compare-and-swap. gfx90a's global_atomic_add_f32 also flushes
   denormals whatever the mode, which LLVM wants said too (other chips keep
   them, and LLVM ignores the word there). */
static MlirValue atomic_rmw(FlyBuild *b, const FlyAtomicRmw *a) {
  static const char *const words[] = {"rocdl.no_fine_grained_memory", "rocdl.no_remote_memory",
                                      "rocdl.ignore_denormal_mode"};
  MlirNamedAttribute at[3];
  int n = fly_atomic_is_float(a) && a->op == FLY_ATOMIC_ADD ? 3 : 2;
  for (int i = 0; i < n; i++)
    at[i] = fly_mlir_named(b->m, words[i], mlirUnitAttrGet(b->m->ctx));
  return fly_build_atomicrmw(b, a, syncscope(a->scope), n, at);
}

/* The launch's LDS past the kernel's tiles: LLVM places an external LDS
   array of no size after every static one, and the dispatch packet's
   group_segment_size (u32 at byte 24) is the whole, static included. */
static MlirValue launch_smem(FlyBuild *b, MlirOperation fn, MlirValue *bytes) {
  static const char sym[] = "__fly_launch_lds";
  fly_build_extern_shared(b, mlirOperationGetParentOperation(fn), sym, 16);
  if (bytes) {
    MlirType i8 = mlirIntegerTypeGet(b->m->ctx, 8);
    MlirValue packet =
        fly_build_intrinsic0(b, "llvm.amdgcn.dispatch.ptr", fly_mlir_type(b->m, "!llvm.ptr<4>"));
    MlirValue total = fly_build_load(b, b->i32, fly_build_gep(b, packet, i8, fly_sym_const(24)), 4);
    /* The array starts 16-aligned after the static LDS: rounding up never
       counts bytes past the end. */
    MlirValue fixed = fly_build_intrinsic0(b, "llvm.amdgcn.groupstaticsize", b->i32);
    MlirValue up[2] = {fixed, fly_build_i32(b, 15)};
    fixed = fly_build_op1(b, "arith.addi", b->i32, 2, up, 0, NULL);
    MlirValue mask[2] = {fixed, fly_build_i32(b, -16)};
    fixed = fly_build_op1(b, "arith.andi", b->i32, 2, mask, 0, NULL);
    MlirValue v[2] = {total, fixed};
    *bytes = fly_build_op1(b, "arith.subi", b->i32, 2, v, 0, NULL);
  }
  return fly_build_addressof(b, sym, 3);
}

const FlyTargetHooks fly_rocdl_hooks = {.vendor = FLY_VENDOR_AMD,
                                        .mma = mma,
                                        .log2 = log2_,
                                        .exp2 = exp2_,
                                        .trunc_rounded = amd_trunc_rounded,
                                        .fp8_pack = amd_fp8_pack,
                                        .fp8_unpack = amd_fp8_unpack,
                                        .wants = wants,
                                        .rewrite = rewrite,
                                        .syncscope = syncscope,
                                        .atomic_rmw = atomic_rmw,
                                        .launch_smem = launch_smem};
