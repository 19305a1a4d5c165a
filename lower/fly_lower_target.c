/* fly_lower_target.c — convert-fly-to-nvvm and convert-fly-to-rocdl
 * (fly_lower.h).
 *
 * After fly-layout-lowering every memref is a pointer and a layout whose
 * strides are numbers or runtime leaves, and data-moving operations see
 * static shapes. So a copy is unrolled here element by element, offsets
 * as c + sum(k * leaf); runs of elements that are contiguous on both sides
 * and as long as the atom's access become one vector load and store (the
 * 128-bit accesses that make copies fast), the rest scalar ones. MMAs
 * split the fragments into the atom's operands and call the matrix
 * instruction once per (m, n, k) tile, through the upstream nvgpu and
 * amdgpu dialects. Math becomes LLVM intrinsics that both back ends
 * implement (exp via exp2, log via log2), so no device library is needed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fly_atom.h"
#include "fly_lower.h"
#include "fly_lower_build.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

enum { MAX_TERMS = 8, MAX_ELEMS = 4096 };

/* An element's offset: c + sum(k[i] * v[i]). */
typedef struct Lin {
  int64_t c;
  int n;
  MlirValue v[MAX_TERMS];
  int64_t k[MAX_TERMS];
} Lin;

static bool lin_add_term(Lin *l, MlirValue v, int64_t k) {
  for (int i = 0; i < l->n; i++)
    if (mlirValueEqual(l->v[i], v)) {
      l->k[i] += k;
      return true;
    }
  if (l->n == MAX_TERMS)
    return false;
  l->v[l->n] = v;
  l->k[l->n++] = k;
  return true;
}

static bool lin_same_terms(const Lin *a, const Lin *b) {
  if (a->n != b->n)
    return false;
  for (int i = 0; i < a->n; i++)
    if (!mlirValueEqual(a->v[i], b->v[i]) || a->k[i] != b->k[i])
      return false;
  return true;
}

/* The offsets of every element of a memref with a static shape, in the
   column-major order of its coordinates. */
typedef struct Elems {
  int n;
  Lin *off;
} Elems;

static bool elems_of(FlyBuild *b, const FlyMemDesc *d, Elems *e) {
  FlyTree *sh[256], *st[256];
  int r = fly_tree_leaves(d->L.shape, sh, 256);
  if (r > 256 || fly_tree_leaves(d->L.stride, st, 256) != r) {
    fly_build_error(b, "internal error: a layout whose shape and stride differ");
    return false;
  }
  int64_t n = 1;
  for (int i = 0; i < r; i++) {
    if (sh[i]->dyn) {
      fly_build_error(b, "this operation needs a tensor whose shape is known at compile time");
      return false;
    }
    n *= sh[i]->leaf.c;
  }
  if (n > MAX_ELEMS) {
    fly_build_error(b,
                    "a copy, load or store of %lld elements is unrolled; at most %d are "
                    "supported",
                    (long long)n, MAX_ELEMS);
    return false;
  }
  e->n = (int)n;
  e->off = calloc((size_t)(n ? n : 1), sizeof *e->off);
  if (!e->off)
    return false;
  for (int64_t i = 0; i < n; i++) {
    int64_t rest = i;
    Lin *l = &e->off[i];
    for (int j = 0; j < r; j++) {
      int64_t c = rest % sh[j]->leaf.c;
      rest /= sh[j]->leaf.c;
      if (!c)
        continue;
      if (!st[j]->dyn)
        l->c += c * st[j]->leaf.c;
      else if (!lin_add_term(l, st[j]->leaf.v, c)) {
        free(e->off);
        fly_build_error(b, "a layout with too many runtime strides to unroll");
        return false;
      }
    }
  }
  return true;
}

/* The pointer to an element; runtime parts are shared through a cache of
   the last few term lists, which is what repeated tiles look like. */
typedef struct Ptrs {
  MlirValue base;
  MlirType elem;
  Lin key[8];
  MlirValue val[8];
  int n, next;
} Ptrs;

static MlirValue ptr_at(FlyBuild *b, Ptrs *p, const Lin *l) {
  MlirValue base = p->base;
  if (l->n) {
    int hit = -1;
    for (int i = 0; i < p->n; i++)
      if (lin_same_terms(&p->key[i], l))
        hit = i;
    if (hit < 0) {
      FlySym s = fly_sym_const(0);
      for (int i = 0; i < l->n; i++) {
        FlySym v = {l->v[i], 0};
        s = fly_sym_add(b, s, fly_sym_mul(b, v, fly_sym_const(l->k[i])));
      }
      hit = p->next;
      p->key[hit] = *l;
      p->val[hit] = fly_build_gep(b, p->base, p->elem, s);
      p->next = (p->next + 1) % 8;
      if (p->n < 8)
        p->n++;
    }
    base = p->val[hit];
  }
  return fly_build_gep(b, base, p->elem, fly_sym_const(l->c));
}

/* Whether elements i .. i+v-1 are consecutive in memory. */
static bool run_of(const Elems *e, int i, int v) {
  if (i + v > e->n)
    return false;
  for (int t = 1; t < v; t++)
    if (!lin_same_terms(&e->off[i], &e->off[i + t]) || e->off[i + t].c != e->off[i].c + t)
      return false;
  return true;
}

static MlirType vec_type(FlyBuild *b, int n, MlirType elem) {
  int64_t shape[1] = {n};
  (void)b;
  return mlirVectorTypeGet(1, shape, elem);
}

/* ---- copies, loads and stores --------------------------------------------------------------- */

static void copy(FlyBuild *b, MlirOperation op) {
  MlirValue av = mlirOperationGetOperand(op, 0);
  const FlyAtom *atom = fly_lower_atom(av);
  if (!atom || atom->kind != FLY_ATOM_COPY)
    return fly_build_error(b, "internal error: a copy whose atom is unknown");
  int bits = (int)fly_lower_int_attr(fly_lower_atom_op(av), "bits", 0);
  if (atom->copy != FLY_COPY_UNIVERSAL || bits <= 0)
    return fly_build_error(b, "the copy atom %s is not lowered yet", atom->name);
  FlyMemDesc s, d;
  if (!fly_memdesc_of(b, mlirOperationGetOperand(op, 1), &s))
    return;
  if (!fly_memdesc_of(b, mlirOperationGetOperand(op, 2), &d)) {
    fly_memdesc_free(&s);
    return;
  }
  Elems es = {0}, ed = {0};
  int bytes = fly_lower_type_bytes(s.type.elem);
  if (elems_of(b, &s, &es) && elems_of(b, &d, &ed)) {
    if (es.n != ed.n) {
      fly_build_error(b, "copy between tensors of %d and %d elements", es.n, ed.n);
    } else {
      int v = bytes ? bits / (8 * bytes) : 1;
      if (v < 1)
        v = 1;
      Ptrs ps = {s.ptr, s.type.elem, {{0}}, {{NULL}}, 0, 0};
      Ptrs pd = {d.ptr, d.type.elem, {{0}}, {{NULL}}, 0, 0};
      for (int i = 0; i < es.n;) {
        int w = v > 1 && i % v == 0 && run_of(&es, i, v) && run_of(&ed, i, v) ? v : 1;
        MlirType t = w > 1 ? vec_type(b, w, s.type.elem) : s.type.elem;
        MlirValue x = fly_build_load(b, t, ptr_at(b, &ps, &es.off[i]), w * bytes);
        fly_build_store(b, x, ptr_at(b, &pd, &ed.off[i]), w * bytes);
        i += w;
      }
    }
  }
  free(es.off);
  free(ed.off);
  fly_memdesc_free(&s);
  fly_memdesc_free(&d);
  if (!b->failed)
    mlirOperationDestroy(op);
}

static bool is_vector(MlirType t) { return mlirTypeIsAVector(t); }

/* A tensor's values as one vector (or the value of its one element). */
static void load(FlyBuild *b, MlirOperation op) {
  FlyMemDesc d;
  if (!fly_memdesc_of(b, mlirOperationGetOperand(op, 0), &d))
    return;
  MlirType rt = mlirValueGetType(mlirOperationGetResult(op, 0));
  Elems e = {0};
  int bytes = fly_lower_type_bytes(d.type.elem);
  MlirValue r = {NULL};
  if (elems_of(b, &d, &e)) {
    Ptrs p = {d.ptr, d.type.elem, {{0}}, {{NULL}}, 0, 0};
    if (!is_vector(rt)) {
      r = fly_build_load(b, rt, ptr_at(b, &p, &e.off[0]), bytes);
    } else if (run_of(&e, 0, e.n)) {
      r = fly_build_load(b, rt, ptr_at(b, &p, &e.off[0]), bytes);
    } else {
      r = fly_build_op1(b, "llvm.mlir.poison", rt, 0, NULL, 0, NULL);
      for (int i = 0; i < e.n; i++)
        r = fly_build_insert(b, r, fly_build_load(b, d.type.elem, ptr_at(b, &p, &e.off[i]), bytes),
                             i);
    }
  }
  free(e.off);
  fly_memdesc_free(&d);
  if (!b->failed) {
    mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0), r);
    mlirOperationDestroy(op);
  }
}

static void store(FlyBuild *b, MlirOperation op) {
  MlirValue x = mlirOperationGetOperand(op, 0);
  FlyMemDesc d;
  if (!fly_memdesc_of(b, mlirOperationGetOperand(op, 1), &d))
    return;
  Elems e = {0};
  int bytes = fly_lower_type_bytes(d.type.elem);
  if (elems_of(b, &d, &e)) {
    Ptrs p = {d.ptr, d.type.elem, {{0}}, {{NULL}}, 0, 0};
    if (!is_vector(mlirValueGetType(x))) {
      for (int i = 0; i < e.n; i++)
        fly_build_store(b, x, ptr_at(b, &p, &e.off[i]), bytes);
    } else if (run_of(&e, 0, e.n)) {
      fly_build_store(b, x, ptr_at(b, &p, &e.off[0]), bytes);
    } else {
      for (int i = 0; i < e.n; i++)
        fly_build_store(b, fly_build_extract(b, x, i, d.type.elem), ptr_at(b, &p, &e.off[i]),
                        bytes);
    }
  }
  free(e.off);
  fly_memdesc_free(&d);
  if (!b->failed)
    mlirOperationDestroy(op);
}

static void atomic_add(FlyBuild *b, MlirOperation op) {
  FlyMemDesc d;
  if (!fly_memdesc_of(b, mlirOperationGetOperand(op, 0), &d))
    return;
  Elems e = {0};
  MlirValue r = {NULL};
  if (elems_of(b, &d, &e)) {
    Ptrs p = {d.ptr, d.type.elem, {{0}}, {{NULL}}, 0, 0};
    bool fl = mlirTypeIsAFloat(d.type.elem);
    /* LLVM's AtomicBinOp: add 1, fadd 11; ordering monotonic 2. */
    MlirType i64 = mlirIntegerTypeGet(b->m->ctx, 64);
    MlirNamedAttribute a[2] = {fly_mlir_named(b->m, "bin_op", mlirIntegerAttrGet(i64, fl ? 11 : 1)),
                               fly_mlir_named(b->m, "ordering", mlirIntegerAttrGet(i64, 2))};
    MlirValue v[2] = {ptr_at(b, &p, &e.off[0]), mlirOperationGetOperand(op, 1)};
    r = fly_build_op1(b, "llvm.atomicrmw", d.type.elem, 2, v, 2, a);
  }
  free(e.off);
  fly_memdesc_free(&d);
  if (!b->failed) {
    mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0), r);
    mlirOperationDestroy(op);
  }
}

/* ---- MMA ------------------------------------------------------------------------------------ */

static MlirValue shuffle(FlyBuild *b, MlirValue v, const int *idx, int n, MlirType elem) {
  if (!mlirTypeIsAVector(mlirValueGetType(v)))
    return v; /* a fragment of one value */
  if (n == 1)
    return fly_build_extract(b, v, idx[0], elem);
  char mask[1024];
  int at = snprintf(mask, sizeof mask, "array<i32: ");
  for (int i = 0; i < n && at < (int)sizeof mask - 16; i++)
    at += snprintf(mask + at, sizeof mask - (size_t)at, "%s%d", i ? ", " : "", idx[i]);
  snprintf(mask + at, sizeof mask - (size_t)at, ">");
  MlirNamedAttribute a = fly_mlir_named(b->m, "mask", fly_build_attr(b, mask));
  MlirValue ops[2] = {v, v};
  return fly_build_op1(b, "llvm.shufflevector", vec_type(b, n, elem), 2, ops, 1, &a);
}

static MlirValue shape_cast(FlyBuild *b, MlirValue v, int rows, int cols, MlirType elem) {
  int64_t shape[2] = {rows, cols};
  MlirType t = cols ? mlirVectorTypeGet(2, shape, elem) : mlirVectorTypeGet(1, shape, elem);
  return fly_build_op1(b, "vector.shape_cast", t, 1, &v, 0, NULL);
}

static int64_t vec_len(MlirValue v) {
  MlirType t = mlirValueGetType(v);
  return mlirTypeIsAVector(t) ? mlirShapedTypeGetDimSize(t, 0) : 1;
}

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
      MlirValue pair = shuffle(b, srcs[s], idx, 2, ta);
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
  MlirValue r = fly_build_op1(b, "llvm.mlir.poison", vec_type(b, vc, tc), 0, NULL, 0, NULL);
  for (int i = 0; i < vc; i++) {
    char pos[32];
    snprintf(pos, sizeof pos, "array<i64: %d>", i);
    MlirNamedAttribute p = fly_mlir_named(b->m, "position", fly_build_attr(b, pos));
    MlirValue e = fly_build_op1(b, "llvm.extractvalue", tc, 1, &res, 1, &p);
    r = fly_build_insert(b, r, e, i);
  }
  return r;
}

static void gemm(FlyBuild *b, MlirOperation op, bool amd) {
  const FlyAtom *atom = fly_lower_atom(mlirOperationGetOperand(op, 0));
  if (!atom || atom->kind != FLY_ATOM_MMA || (fly_atom_vendor(atom) == FLY_VENDOR_AMD) != amd)
    return fly_build_error(b, "internal error: an MMA atom of another target");
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
  MlirType ta = mlirTypeIsAVector(mlirValueGetType(A))
                    ? mlirShapedTypeGetElementType(mlirValueGetType(A))
                    : mlirValueGetType(A);
  MlirType tb = mlirTypeIsAVector(mlirValueGetType(B))
                    ? mlirShapedTypeGetElementType(mlirValueGetType(B))
                    : mlirValueGetType(B);
  MlirType tc = mlirShapedTypeGetElementType(mlirValueGetType(C));
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
        MlirValue x = shuffle(b, A, ia, va, ta), y = shuffle(b, B, ib, vb, tb),
                  z = shuffle(b, acc, ic, vc, tc), r;
        if (!amd && mlirTypeIsABF16(ta)) {
          r = nv_mma_bf16(b, atom, x, y, z, va, vb, vc, ta, tc);
        } else if (!amd) {
          char shape[64];
          snprintf(shape, sizeof shape, "[%d, %d, %d]", atom->m, atom->n, atom->k);
          MlirNamedAttribute at = fly_mlir_named(b->m, "mmaShape", fly_build_attr(b, shape));
          MlirValue ops[3] = {shape_cast(b, x, va / 2, 2, ta), shape_cast(b, y, vb / 2, 2, tb),
                              shape_cast(b, z, vc / 2, 2, tc)};
          int64_t cs[2] = {vc / 2, 2};
          r = fly_build_op1(b, "nvgpu.mma.sync", mlirVectorTypeGet(2, cs, tc), 3, ops, 1, &at);
          r = shape_cast(b, r, vc, 0, tc);
        } else {
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
          MlirValue ops[3] = {x, y, z};
          r = fly_build_op1(b, "amdgpu.mfma", vec_type(b, vc, tc), 3, ops, na, at);
        }
        for (int v = 0; v < vc; v++)
          acc = fly_build_insert(b, acc, fly_build_extract(b, r, v, tc), ic[v]);
      }
  mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0), acc);
  mlirOperationDestroy(op);
}

/* ---- math ----------------------------------------------------------------------------------- */

static MlirValue splat(FlyBuild *b, MlirType t, double f) {
  char text[96];
  if (mlirTypeIsAVector(t)) {
    char *et = fly_lower_type_text(t);
    snprintf(text, sizeof text, "dense<%.17e> : %s", f, et ? et : "f32");
    free(et);
  } else {
    char *et = fly_lower_type_text(t);
    snprintf(text, sizeof text, "%.17e : %s", f, et ? et : "f32");
    free(et);
  }
  MlirNamedAttribute a = fly_mlir_named(b->m, "value", fly_build_attr(b, text));
  return fly_build_op1(b, "arith.constant", t, 0, NULL, 1, &a);
}

/* An LLVM intrinsic by name ("llvm.exp2"), suffixed with its type. The
   NVVM and ROCDL conversions rewrite the math intrinsic operations into
   calls of their device libraries; a named intrinsic call stays as it is,
   and both back ends select the instruction (ex2.approx, v_exp_f32 ...). */
static MlirValue intrinsic(FlyBuild *b, const char *name, MlirType t, int n, const MlirValue *v) {
  char *tt = fly_lower_type_text(t);
  char full[96], segs[64];
  if (tt && strncmp(tt, "vector<", 7) == 0) {
    /* vector<4xf32> is v4f32 in an intrinsic's name. */
    char *x = strchr(tt, 'x');
    char *gt = strrchr(tt, '>');
    if (x && gt)
      *gt = 0;
    snprintf(full, sizeof full, "%s.v%.*s%s", name, x ? (int)(x - tt - 7) : 0, tt + 7,
             x ? x + 1 : "");
  } else {
    snprintf(full, sizeof full, "%s.%s", name, tt ? tt : "f32");
  }
  free(tt);
  snprintf(segs, sizeof segs, "array<i32: %d, 0>", n);
  MlirNamedAttribute a[3] = {
      fly_mlir_named(b->m, "intrin", fly_mlir_str_attr(b->m, full)),
      fly_mlir_named(b->m, "op_bundle_sizes", fly_build_attr(b, "array<i32>")),
      fly_mlir_named(b->m, "operandSegmentSizes", fly_build_attr(b, segs))};
  return fly_build_op1(b, "llvm.call_intrinsic", t, n, v, 3, a);
}

/* lg2.approx.f32, element by element for a vector. */
static MlirValue nv_log2(FlyBuild *b, MlirType t, MlirValue x) {
  MlirType f32 = mlirF32TypeGet(b->m->ctx);
  MlirNamedAttribute a[3] = {
      fly_mlir_named(b->m, "intrin", fly_mlir_str_attr(b->m, "llvm.nvvm.lg2.approx.f")),
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

static MlirType elem_of(MlirType t) {
  return mlirTypeIsAVector(t) ? mlirShapedTypeGetElementType(t) : t;
}

/* exp(x) = exp2(x * log2(e)), log(x) = log2(x) * ln(2): the base-2 forms
   are instructions on both vendors. f16 and bf16 are computed in f32. */
static void math(FlyBuild *b, MlirOperation op, const char *name, bool amd) {
  static const char *const handled[] = {"exp",  "exp2",  "log",  "log2",
                                        "sqrt", "rsqrt", "absf", "fma"};
  bool known = false;
  for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++)
    known = known || strcmp(name, handled[i]) == 0;
  if (!known)
    return; /* the upstream conversion handles it without a library */
  MlirValue x = mlirOperationGetOperand(op, 0);
  MlirType t = mlirValueGetType(x), e = elem_of(t);
  int nops = (int)mlirOperationGetNumOperands(op);
  if (mlirTypeIsAF64(e) && strcmp(name, "absf") != 0 && strcmp(name, "fma") != 0 &&
      strcmp(name, "sqrt") != 0)
    return fly_build_error(b,
                           "%s of f64 needs a device math library, which Fly does not use; "
                           "compute it in f32",
                           name);
  MlirType ct = t;
  MlirValue in[3];
  bool narrow = mlirTypeIsAF16(e) || mlirTypeIsABF16(e);
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
  if (strcmp(name, "exp") == 0) {
    MlirValue v[2] = {in[0], splat(b, ct, 1.4426950408889634)};
    MlirValue s = fly_build_op1(b, "arith.mulf", ct, 2, v, 0, NULL);
    r = intrinsic(b, "llvm.exp2", ct, 1, &s);
  } else if (strcmp(name, "log") == 0 || strcmp(name, "log2") == 0) {
    /* NVPTX selects no instruction for llvm.log2; lg2.approx is its own. */
    MlirValue l = amd ? intrinsic(b, "llvm.log2", ct, 1, in) : nv_log2(b, ct, in[0]);
    if (strcmp(name, "log2") == 0) {
      r = l;
      goto done;
    }
    MlirValue v[2] = {l, splat(b, ct, 0.6931471805599453)};
    r = fly_build_op1(b, "arith.mulf", ct, 2, v, 0, NULL);
  } else if (strcmp(name, "rsqrt") == 0) {
    MlirValue s = intrinsic(b, "llvm.sqrt", ct, 1, in);
    MlirValue v[2] = {splat(b, ct, 1.0), s};
    r = fly_build_op1(b, "arith.divf", ct, 2, v, 0, NULL);
  } else {
    char full[80];
    snprintf(full, sizeof full, "llvm.%s", strcmp(name, "absf") == 0 ? "fabs" : name);
    r = intrinsic(b, full, ct, nops, in);
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
  MlirValue r = intrinsic(b, max ? "llvm.maxnum" : "llvm.minnum", mlirValueGetType(v[0]), 2, v);
  mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0), r);
  mlirOperationDestroy(op);
}

/* ---- casts and launch sizes ---------------------------------------------------------------- */

static bool is_f8(MlirType t) {
  t = elem_of(t);
  return mlirTypeIsAFloat8E4M3FN(t) || mlirTypeIsAFloat8E5M2(t);
}

/* LLVM has no 8-bit float type, so these conversions need code of their
   own (or the cvt instructions of CDNA3 and Hopper); until then they are
   reported where the cast is. */
static void float_cast(FlyBuild *b, MlirOperation op) {
  if (is_f8(mlirValueGetType(mlirOperationGetOperand(op, 0))) ||
      is_f8(mlirValueGetType(mlirOperationGetResult(op, 0))))
    fly_build_error(b, "conversions to and from f8e4m3 and f8e5m2 are not lowered yet");
}

/* block_dim and grid_dim on AMD: the ROCDL conversion calls ROCm's device
   library for them; the HSA dispatch packet has both (workgroup sizes as
   u16 at byte 4, grid sizes in work-items as u32 at byte 12). */
static void launch_dim(FlyBuild *b, MlirOperation op) {
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

/* ---- the pass ------------------------------------------------------------------------------- */

/* What this pass rewrites: Fly operations, math, float max/min and casts
   (f8), and AMD's launch sizes. */
static bool wanted(MlirOperation op) {
  MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
  return (n.length > 4 && memcmp(n.data, "fly.", 4) == 0) ||
         (n.length > 5 && memcmp(n.data, "math.", 5) == 0) || fly_lower_is(op, "gpu.block_dim") ||
         fly_lower_is(op, "gpu.grid_dim") || fly_lower_is(op, "arith.truncf") ||
         fly_lower_is(op, "arith.extf") || fly_lower_is(op, "arith.maxnumf") ||
         fly_lower_is(op, "arith.minnumf");
}

static bool unused(MlirOperation op) {
  for (intptr_t i = 0; i < mlirOperationGetNumResults(op); i++)
    if (!mlirOpOperandIsNull(mlirValueGetFirstUse(mlirOperationGetResult(op, i))))
      return false;
  return true;
}

bool fly_lower_to_target(FlyMlir *m, MlirOperation root, bool amd) {
  FlyOpList o = {NULL, 0, 0, false, wanted};
  fly_lower_collect(root, &o);
  MlirType i32 = mlirIntegerTypeGet(m->ctx, 32);
  bool ok = !o.failed;
  bool *kept = calloc((size_t)(o.n ? o.n : 1), sizeof *kept);
  for (int i = 0; i < o.n && ok; i++) {
    MlirOperation op = o.ops[i];
    FlyBuild b = {m, {mlirOperationGetBlock(op), op}, mlirOperationGetLocation(op), i32, false};
    MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)n.length, n.data);
    if (strncmp(name, "math.", 5) == 0)
      math(&b, op, name + 5, amd);
    else if (strcmp(name, "arith.maxnumf") == 0 || strcmp(name, "arith.minnumf") == 0)
      min_max(&b, op, name[6] == 'm' && name[7] == 'a');
    else if (strncmp(name, "arith.", 6) == 0)
      float_cast(&b, op);
    else if (strncmp(name, "gpu.", 4) == 0)
      amd ? launch_dim(&b, op) : (void)0;
    else if (strcmp(name, "fly.copy") == 0)
      copy(&b, op);
    else if (strcmp(name, "fly.load") == 0)
      load(&b, op);
    else if (strcmp(name, "fly.store") == 0)
      store(&b, op);
    else if (strcmp(name, "fly.atomic_add") == 0)
      atomic_add(&b, op);
    else if (strcmp(name, "fly.gemm") == 0)
      gemm(&b, op, amd);
    else if (strncmp(name, "fly.make_", 9) == 0)
      kept[i] = true; /* dropped below, once nothing uses it */
    else
      fly_build_error(&b, "%s is not lowered yet (run fly-layout-lowering first)", name);
    ok = !b.failed;
  }
  for (int i = o.n - 1; i >= 0 && ok; i--)
    if (kept[i] && unused(o.ops[i]))
      mlirOperationDestroy(o.ops[i]);
  free(kept);
  free(o.ops);
  return ok;
}
