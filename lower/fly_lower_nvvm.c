/* fly_lower_nvvm.c — NVIDIA's part of the target pass, convert-fly-to-nvvm
 * (fly_lower_target.h): mma.sync through the upstream nvgpu dialect (NVVM
 * directly for bf16), log2 as lg2.approx, conversions with a directed
 * rounding as cvt.rz/rm/rp, the fp8 conversions of sm_89 and later, and
 * atomics as PTX where LLVM 22 loses their scope or order. */
#include <stdio.h>
#include <string.h>

#include "fly_lower_target.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

/* mma.sync on bf16 through NVVM directly (nvgpu.mma.sync takes f16 only):
   A and B in 32-bit registers of two values, C and D as scalars. */
static MlirValue nv_mma_bf16(FlyBuild *b, const FlyAtom *atom, MlirValue x, MlirValue y,
                             MlirValue z, int va, int vb, int vc, MlirType ta, MlirType tc) {
  MlirValue ops[32];
  int n = 0;
  MlirType i32 = b->i32;
  MlirValue srcs[2] = {x, y};
  int lens[2] = {va, vb};
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < lens[s]; i += 2) {
      int idx[2] = {i, i + 1};
      MlirValue pair = fly_build_pick(b, srcs[s], idx, 2, ta);
      ops[n++] = fly_build_op1(b, "llvm.bitcast", i32, 1, &pair, 0, NULL);
    }
  for (int i = 0; i < vc; i++)
    ops[n++] = fly_build_extract(b, z, i, tc);
  char attrs[512], st[128];
  int at = snprintf(st, sizeof st, "!llvm.struct<(");
  for (int i = 0; i < vc; i++)
    at += snprintf(st + at, sizeof st - (size_t)at, "%sf32", i ? ", " : "");
  snprintf(st + at, sizeof st - (size_t)at, ")>");
  snprintf(attrs, sizeof attrs,
           "{layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, "
           "multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = "
           "#nvvm.mma_type<bf16>, operandSegmentSizes = array<i32: %d, %d, %d>, shape = "
           "#nvvm.shape<m = %d, n = %d, k = %d>}",
           va / 2, vb / 2, vc, atom->m, atom->n, atom->k);
  MlirAttribute dict = fly_build_attr(b, attrs);
  MlirNamedAttribute a[8];
  int na = (int)mlirDictionaryAttrGetNumElements(dict);
  for (int i = 0; i < na && i < 8; i++)
    a[i] = mlirDictionaryAttrGetElement(dict, i);
  MlirValue res = fly_build_op1(b, "nvvm.mma.sync", fly_mlir_type(b->m, st), n, ops, na, a);
  MlirValue r = fly_build_op1(b, "llvm.mlir.poison", fly_vec_type(vc, tc), 0, NULL, 0, NULL);
  for (int i = 0; i < vc; i++) {
    char pos[32];
    snprintf(pos, sizeof pos, "array<i64: %d>", i);
    MlirNamedAttribute p = fly_mlir_named(b->m, "position", fly_build_attr(b, pos));
    MlirValue e = fly_build_op1(b, "llvm.extractvalue", tc, 1, &res, 1, &p);
    r = fly_build_insert(b, r, e, i);
  }
  return r;
}

static MlirValue shape_cast(FlyBuild *b, MlirValue v, int rows, int cols, MlirType elem) {
  int64_t shape[2] = {rows, cols};
  MlirType t = cols ? mlirVectorTypeGet(2, shape, elem) : mlirVectorTypeGet(1, shape, elem);
  return fly_build_op1(b, "vector.shape_cast", t, 1, &v, 0, NULL);
}

/* mma.sync m16n8k16 / m16n8k8: nvgpu.mma.sync takes A, B and C as rows of
   two values. */
static MlirValue mma(FlyBuild *b, const FlyMmaCall *c) {
  const FlyAtom *atom = c->atom;
  switch (atom->mma) {
  case FLY_MMA_NV_MMA_SYNC:
    break;
  case FLY_MMA_NV_WGMMA:
  case FLY_MMA_AMD_MFMA:
  case FLY_MMA_AMD_WMMA:
  case FLY_MMA_FAMILY_COUNT:
    fly_build_error(b, "the MMA atom %s is not lowered yet", atom->name);
    return c->z;
  }
  if (mlirTypeIsABF16(c->ta))
    return nv_mma_bf16(b, atom, c->x, c->y, c->z, c->va, c->vb, c->vc, c->ta, c->tc);
  char shape[64];
  snprintf(shape, sizeof shape, "[%d, %d, %d]", atom->m, atom->n, atom->k);
  MlirNamedAttribute at = fly_mlir_named(b->m, "mmaShape", fly_build_attr(b, shape));
  MlirValue ops[3] = {shape_cast(b, c->x, c->va / 2, 2, c->ta),
                      shape_cast(b, c->y, c->vb / 2, 2, c->tb),
                      shape_cast(b, c->z, c->vc / 2, 2, c->tc)};
  int64_t cs[2] = {c->vc / 2, 2};
  MlirValue r = fly_build_op1(b, "nvgpu.mma.sync", mlirVectorTypeGet(2, cs, c->tc), 3, ops, 1, &at);
  return shape_cast(b, r, c->vc, 0, c->tc);
}

/* The f32 intrinsic `intrin` of one operand, element by element for a
   vector. */
static MlirValue nv_each(FlyBuild *b, const char *intrin, MlirType t, MlirValue x) {
  MlirType f32 = mlirF32TypeGet(b->m->ctx);
  MlirNamedAttribute a[3] = {
      fly_mlir_named(b->m, "intrin", fly_mlir_str_attr(b->m, intrin)),
      fly_mlir_named(b->m, "op_bundle_sizes", fly_build_attr(b, "array<i32>")),
      fly_mlir_named(b->m, "operandSegmentSizes", fly_build_attr(b, "array<i32: 1, 0>"))};
  if (!mlirTypeIsAVector(t))
    return fly_build_op1(b, "llvm.call_intrinsic", f32, 1, &x, 3, a);
  MlirValue r = fly_build_op1(b, "llvm.mlir.poison", t, 0, NULL, 0, NULL);
  for (int64_t i = 0; i < mlirShapedTypeGetDimSize(t, 0); i++) {
    MlirValue e = fly_build_extract(b, x, i, f32);
    r = fly_build_insert(b, r, fly_build_op1(b, "llvm.call_intrinsic", f32, 1, &e, 3, a), i);
  }
  return r;
}

/* lg2.approx.f32. */
static MlirValue nv_log2(FlyBuild *b, MlirType t, MlirValue x) {
  return nv_each(b, "llvm.nvvm.lg2.approx.f", t, x);
}

/* ex2.approx.ftz.f32: one MUFU.EX2 (ex2.approx.f32 is four SASS
   instructions: a compare and two multiplies keep subnormal results). */
static MlirValue nv_exp2(FlyBuild *b, MlirType t, MlirValue x) {
  return nv_each(b, "llvm.nvvm.ex2.approx.ftz.f", t, x);
}

/* ---- atomics -------------------------------------------------------------------------------- */

static const char *syncscope(FlyMemScope s) {
  switch (s) {
  case FLY_SCOPE_BLOCK:
    return "block";
  case FLY_SCOPE_GPU:
    return "device";
  case FLY_SCOPE_SYSTEM:
  case FLY_SCOPE_COUNT:
    break;
  }
  return "";
}

/* PTX's names for the scopes and orders (.cta .gpu .sys; .relaxed ...). */
static const char *ptx_scope(FlyMemScope s) {
  return s == FLY_SCOPE_BLOCK ? "cta" : s == FLY_SCOPE_GPU ? "gpu" : "sys";
}

static const char *ptx_sem(FlyMemOrder o) {
  switch (o) {
  case FLY_ORDER_RELAXED:
    return "relaxed";
  case FLY_ORDER_ACQUIRE:
    return "acquire";
  case FLY_ORDER_RELEASE:
    return "release";
  case FLY_ORDER_ACQ_REL:
  case FLY_ORDER_COUNT:
    break;
  }
  return "acq_rel";
}

/* The operation and type of PTX's atom for a ("add.u32", "min.s64",
   "add.noftz.f16x2" ...); false where PTX has none (min and max of f32). */
static bool ptx_atom_op(const FlyAtomicRmw *a, char *out, size_t n) {
  MlirType e = fly_elem_of(a->type);
  if (mlirTypeIsAVector(a->type)) {
    snprintf(out, n, "add.noftz.%sx2", mlirTypeIsABF16(e) ? "bf16" : "f16");
    return true;
  }
  int bits = 8 * fly_lower_type_bytes(e);
  bool fl = mlirTypeIsAFloat(e);
  switch (a->op) {
  case FLY_ATOMIC_ADD:
    snprintf(out, n, "add.%c%d", fl ? 'f' : 'u', bits);
    return true;
  case FLY_ATOMIC_MIN:
  case FLY_ATOMIC_MAX:
    snprintf(out, n, "%s.s%d", a->op == FLY_ATOMIC_MIN ? "min" : "max", bits);
    return !fl;
  case FLY_ATOMIC_UMIN:
  case FLY_ATOMIC_UMAX:
    snprintf(out, n, "%s.u%d", a->op == FLY_ATOMIC_UMIN ? "min" : "max", bits);
    return true;
  case FLY_ATOMIC_AND:
  case FLY_ATOMIC_OR:
  case FLY_ATOMIC_XOR:
  case FLY_ATOMIC_EXCH:
    snprintf(out, n, "%s.b%d", fly_atomic_op_name(a->op), bits);
    return true;
  case FLY_ATOMIC_OP_COUNT:
    break;
  }
  return false;
}

/* atom.<sem>.<scope>.<space>.<op> as inline PTX: a pair travels as the
   32 bits it is, in an "r" register. */
static MlirValue ptx_atom(FlyBuild *b, const FlyAtomicRmw *a, const char *op) {
  bool pair = mlirTypeIsAVector(a->type);
  MlirType t = pair ? b->i32 : a->type;
  MlirValue v[2] = {a->ptr, a->x};
  if (pair)
    v[1] = fly_build_op1(b, "llvm.bitcast", t, 1, &v[1], 0, NULL);
  char reg = mlirTypeIsAF32(t) ? 'f' : fly_lower_type_bytes(t) == 8 ? 'l' : 'r';
  char text[128], cons[32];
  snprintf(text, sizeof text, "atom.%s.%s.%s.%s $0, [$1], $2;", ptx_sem(a->order),
           ptx_scope(a->scope), a->shared ? "shared" : "global", op);
  snprintf(cons, sizeof cons, "=%c,l,%c,~{memory}", reg, reg);
  MlirNamedAttribute at[3] = {fly_mlir_named(b->m, "asm_string", fly_mlir_str_attr(b->m, text)),
                              fly_mlir_named(b->m, "constraints", fly_mlir_str_attr(b->m, cons)),
                              fly_mlir_named(b->m, "has_side_effects", mlirUnitAttrGet(b->m->ctx))};
  MlirValue r = fly_build_op1(b, "llvm.inline_asm", t, 2, v, 3, at);
  return pair ? fly_build_op1(b, "llvm.bitcast", a->type, 1, &r, 0, NULL) : r;
}

/* LLVM 22's NVPTX back end drops the syncscope and the ordering of an
   atomicrmw (each becomes atom's default, relaxed at GPU scope: seen on
   this toolchain, fixed after 22 by llvm-project#176015, relanded as
   #179553) and makes a packed f16 or bf16 add a loop of compare-and-swap.
   So every RMW that PTX has is written as PTX here, with its order and
   scope, except the one LLVM gets right, relaxed at GPU scope. min and max
   of f32, which PTX lacks, stay LLVM's: a loop of cmpxchg, whose order and
   scope it keeps (its first, plain load is only a guess the cmpxchg
   checks). */
static MlirValue atomic_rmw(FlyBuild *b, const FlyAtomicRmw *a) {
  char op[32];
  bool llvm_right =
      a->order == FLY_ORDER_RELAXED && a->scope == FLY_SCOPE_GPU && !mlirTypeIsAVector(a->type);
  if (llvm_right || !ptx_atom_op(a, op, sizeof op))
    return fly_build_atomicrmw(b, a, syncscope(a->scope), 0, NULL);
  return ptx_atom(b, a, op);
}

/* A narrowing with a directed rounding: PTX's cvt has each one
   (cvt.rz.f16.f32, cvt.rm.bf16.f32, cvt.rp.f32.f64 ...), of which LLVM
   reaches a few through intrinsics; inline PTX says each directly, element
   by element. 16-bit results come back in 16-bit integer registers. */
static MlirValue nv_trunc_rounded(FlyBuild *b, MlirValue x, MlirType to, int mode) {
  static const char *const rnd[] = {"rn", "rm", "rp", "rz"};
  MlirType t = mlirValueGetType(x), from = fly_elem_of(t), e = fly_elem_of(to);
  bool wide = mlirTypeIsAF32(e), f64 = mlirTypeIsAF64(from);
  char text[48], constraints[8];
  snprintf(text, sizeof text, "cvt.%s.%s.%s $0, $1;", rnd[mode],
           wide                 ? "f32"
           : mlirTypeIsABF16(e) ? "bf16"
                                : "f16",
           f64 ? "f64" : "f32");
  snprintf(constraints, sizeof constraints, "=%c,%c", wide ? 'f' : 'h', f64 ? 'd' : 'f');
  MlirType asm_type = wide ? e : mlirIntegerTypeGet(b->m->ctx, 16);
  MlirNamedAttribute a[2] = {
      fly_mlir_named(b->m, "asm_string", fly_mlir_str_attr(b->m, text)),
      fly_mlir_named(b->m, "constraints", fly_mlir_str_attr(b->m, constraints))};
  int n = mlirTypeIsAVector(t) ? (int)mlirShapedTypeGetDimSize(t, 0) : 0;
  MlirValue r = fly_build_op1(b, "llvm.mlir.poison", to, 0, NULL, 0, NULL);
  for (int i = 0; i < (n ? n : 1); i++) {
    MlirValue v = n ? fly_build_extract(b, x, i, from) : x;
    MlirValue c = fly_build_op1(b, "llvm.inline_asm", asm_type, 1, &v, 2, a);
    if (!wide)
      c = fly_build_op1(b, "llvm.bitcast", e, 1, &c, 0, NULL);
    if (!n)
      return c;
    r = fly_build_insert(b, r, c, i);
  }
  return r;
}

/* The fp8 cvt of sm_89 and later (the semantic pass keeps the others from
   here): two f32 (cvt.rn.satfinite.e4m3x2.f32, the first operand into the
   high byte) or an f16x2 (cvt.rn.satfinite.e4m3x2.f16x2) to two bytes, and
   two bytes to an f16x2 (cvt.rn.f16x2.e4m3x2); the same for e5m2. */
static MlirValue nv_fp8_pack(FlyBuild *b, const FlyTarget *t, MlirValue pair, MlirType f8) {
  (void)t;
  MlirType i16 = mlirIntegerTypeGet(b->m->ctx, 16), e = fly_elem_of(mlirValueGetType(pair));
  MlirNamedAttribute a[4] = {
      fly_mlir_named(b->m, "dstTy", mlirTypeAttrGet(f8)),
      fly_mlir_named(b->m, "relu", mlirBoolAttrGet(b->m->ctx, 0)),
      fly_mlir_named(b->m, "rnd", fly_build_attr(b, "#nvvm.fp_rnd_mode<rn>")),
      fly_mlir_named(b->m, "sat", fly_build_attr(b, "#nvvm.sat_mode<satfinite>"))};
  if (mlirTypeIsAF16(e))
    return fly_build_op1(b, "nvvm.convert.f16x2.to.f8x2", i16, 1, &pair, 2, a);
  MlirValue v[2] = {fly_build_extract(b, pair, 1, e), fly_build_extract(b, pair, 0, e)};
  return fly_build_op1(b, "nvvm.convert.f32x2.to.f8x2", i16, 2, v, 4, a);
}

static MlirValue nv_fp8_unpack(FlyBuild *b, const FlyTarget *t, MlirValue bytes, MlirType f8) {
  (void)t;
  MlirType i8 = mlirIntegerTypeGet(b->m->ctx, 8), f16 = mlirF16TypeGet(b->m->ctx);
  MlirValue q = fly_build_op1(b, "llvm.bitcast", fly_vec_type(2, i8), 1, &bytes, 0, NULL);
  MlirNamedAttribute a[2] = {fly_mlir_named(b->m, "relu", mlirBoolAttrGet(b->m->ctx, 0)),
                             fly_mlir_named(b->m, "srcType", mlirTypeAttrGet(f8))};
  return fly_build_op1(b, "nvvm.convert.f8x2.to.f16x2", fly_vec_type(2, f16), 1, &q, 2, a);
}

static bool wants(MlirOperation op) {
  (void)op;
  return false;
}

static void rewrite(FlyBuild *b, MlirOperation op) {
  (void)b;
  (void)op;
}

/* The launch's shared memory past the kernel's tiles: the dynamic shared
   memory holds the tiles first (fly.static_shared bytes, 16-aligned), then
   what the launch's rule asked for; %dynamic_smem_size is the whole. */
static MlirValue launch_smem(FlyBuild *b, MlirOperation fn, MlirValue *bytes) {
  static const char sym[] = "__fly_dynamic_smem";
  MlirOperation gm = mlirOperationGetParentOperation(fn);
  fly_build_extern_shared(b, gm, sym, 16);
  MlirAttribute used =
      mlirOperationGetAttributeByName(fn, mlirStringRefCreateFromCString("fly.static_shared"));
  int64_t at = mlirAttributeIsNull(used) ? 0 : mlirIntegerAttrGetValueInt(used);
  at = (at + 15) / 16 * 16;
  MlirValue base = fly_build_addressof(b, sym, 3);
  if (bytes) {
    MlirValue total = fly_build_intrinsic0(b, "llvm.nvvm.read.ptx.sreg.dynamic_smem_size", b->i32);
    MlirValue v[2] = {total, fly_build_i32(b, at)};
    *bytes = fly_build_op1(b, "arith.subi", b->i32, 2, v, 0, NULL);
  }
  return fly_build_gep(b, base, mlirIntegerTypeGet(b->m->ctx, 8), fly_sym_const(at));
}

const FlyTargetHooks fly_nvvm_hooks = {.vendor = FLY_VENDOR_NVIDIA,
                                       .mma = mma,
                                       .log2 = nv_log2,
                                       .exp2 = nv_exp2,
                                       .trunc_rounded = nv_trunc_rounded,
                                       .fp8_pack = nv_fp8_pack,
                                       .fp8_unpack = nv_fp8_unpack,
                                       .wants = wants,
                                       .rewrite = rewrite,
                                       .syncscope = syncscope,
                                       .atomic_rmw = atomic_rmw,
                                       .launch_smem = launch_smem};
