/* fly_lower_wgmma.c — fly.gemm with a wgmma atom: Hopper's warpgroup MMA,
 * wgmma.mma_async, reading A and B from shared memory through matrix
 * descriptors.
 *
 * A descriptor tells the hardware where a 64 x K slice of A (or N x K of
 * B) starts and how its 8 x 16-byte "core matrices" are laid out: one of
 * the canonical layouts of the PTX ISA (K-major or MN-major; unswizzled or
 * swizzled by 32, 64 or 128 bytes), each with two byte strides, the
 * leading (LBO) and the stride (SBO) dimension offsets. Rather than trust
 * the kernel to have built such a layout, the descriptor is derived from
 * the tile's own layout: read its strides, then check every element of the
 * slice lands where the canonical layout with those strides puts it, so a
 * layout wgmma cannot read is an error at compile time, not wrong sums.
 *
 * The operands are the tiled MMA's partitions: ((rows, K), Mt, Kt) of A,
 * ((N, K), Nt, Kt) of B, each tile the slice one instruction reads, and the
 * accumulator ((2, 2, N/8), Mt, Nt) in registers. Each (m, n, k) tile is one
 * instruction; the accumulator of a tile goes in and out as the struct of
 * N/2 floats the instruction's inline PTX binds to registers. The RS atoms
 * take A from registers instead: the thread's fragment ((2, 2, 2), Mt, Kt),
 * four 32-bit registers a tile (issue_rs). */
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fly_lower_target.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"
#include "mlir-c/Dialect/LLVM.h"

/* A canonical layout's parameters, in bytes. */
typedef struct Canonical {
  bool mn_major;
  int swizzle; /* bytes: 0, 32, 64 or 128 */
  int64_t lbo; /* leading dimension byte offset */
  int64_t sbo; /* stride dimension byte offset */
} Canonical;

/* f(i, j): the element offset of row i, column (K) j of a rows x K tile. */
static bool at(FlyBuild *b, const FlyLayout *T, int rows, int i, int j, int64_t *out) {
  return fly_layout_eval(b->A, T, (int64_t)i + (int64_t)rows * j, out);
}

/* The offset the canonical layout puts (i, j) at, in elements of e bytes. */
static int64_t predicted(const Canonical *c, int e, int i, int j) {
  int64_t t = 16 / e; /* elements of a core matrix's 16-byte row */
  int64_t lbo = c->lbo / e, sbo = c->sbo / e;
  if (!c->mn_major) {
    /* ((8, m), (T, 2k)): rows of 8 at the swizzle's width (16 bytes
       unswizzled), groups of 8 rows at SBO; 16-byte columns contiguous
       within a swizzled row, at LBO unswizzled. */
    int64_t row = c->swizzle ? c->swizzle / e : t;
    int64_t col = c->swizzle ? j : j % t + (j / t) * lbo;
    return (i % 8) * row + (i / 8) * sbo + col;
  }
  if (!c->swizzle) /* ((T, m), (8, k)): MN runs of T at SBO, K rows of T, 8 of them at LBO */
    return i % t + (i / t) * sbo + (j % 8) * t + (j / 8) * lbo;
  /* ((W/e, m), (8, k)): MN runs of the swizzle's width at LBO, K rows of it,
     8 rows at SBO. */
  int64_t w = c->swizzle / e;
  return i % w + (i / w) * lbo + (j % 8) * w + (j / 8) * sbo;
}

/* The canonical layout of the rows x K tile T of elements of e bytes whose
   memory is swizzled by `swizzle` bytes; false after an error naming the
   operand when there is none. */
static bool canonical(FlyBuild *b, const FlyLayout *T, int rows, int K, int e, int swizzle,
                      char operand, bool transposable, Canonical *c) {
  memset(c, 0, sizeof *c);
  c->swizzle = swizzle;
  int64_t f01 = -1, f10 = -1, x;
  if (!at(b, T, rows, 0, 1, &f01) || !at(b, T, rows, 1, 0, &f10))
    goto bad;
  c->mn_major = f01 != 1 && f10 == 1;
  if (c->mn_major && !transposable) {
    fly_build_error(b,
                    "wgmma reads %s operands K-major only: operand %c's shared tile must have "
                    "K contiguous",
                    e == 1 ? "8-bit" : "these", operand);
    return false;
  }
  int64_t t = 16 / e, w = swizzle / e;
  if (!c->mn_major) {
    if (swizzle && K > w) {
      fly_build_error(b, "operand %c's K extent of %d bytes is wider than its %d-byte swizzle",
                      operand, K * e, swizzle);
      return false;
    }
    if (rows > 8 && !at(b, T, rows, 8, 0, &x))
      goto bad;
    c->sbo = rows > 8 ? x * e : 0;
    if (!swizzle && K > t) {
      if (!at(b, T, rows, 0, (int)t, &x))
        goto bad;
      c->lbo = x * e;
    } else {
      c->lbo = 16; /* unused; the hardware assumes 1 (16 bytes) */
    }
  } else {
    int64_t run = swizzle ? w : t;
    if (rows > run && !at(b, T, rows, (int)run, 0, &x))
      goto bad;
    int64_t mn = rows > run ? x * e : 0;
    if (K > 8 && !at(b, T, rows, 0, 8, &x))
      goto bad;
    int64_t kk = K > 8 ? x * e : 0;
    c->lbo = swizzle ? mn : kk;
    c->sbo = swizzle ? kk : mn;
  }
  for (int j = 0; j < K; j++)
    for (int i = 0; i < rows; i++) {
      if (!at(b, T, rows, i, j, &x))
        goto bad;
      if (x != predicted(c, e, i, j)) {
        fly_build_error(b,
                        "operand %c's shared tile is not a layout wgmma can read: element (%d, "
                        "%d) of an instruction's %d x %d slice is at %lld, where the canonical "
                        "%s%s layout with its strides puts %lld (build the tile with "
                        "std.smem_layout)",
                        operand, i, j, rows, K, (long long)x, c->mn_major ? "MN-major" : "K-major",
                        swizzle == 128  ? ", 128-byte swizzled"
                        : swizzle == 64 ? ", 64-byte swizzled"
                        : swizzle == 32 ? ", 32-byte swizzled"
                                        : ", unswizzled",
                        (long long)predicted(c, e, i, j));
        return false;
      }
    }
  if (c->lbo % 16 || c->sbo % 16 || c->lbo >= (1 << 18) || c->sbo >= (1 << 18)) {
    fly_build_error(b,
                    "operand %c's shared tile has strides wgmma cannot encode (%lld and %lld "
                    "bytes: multiples of 16 below 256 KiB)",
                    operand, (long long)c->lbo, (long long)c->sbo);
    return false;
  }
  return true;
bad:
  fly_build_error(b, "internal error: operand %c's layout cannot be evaluated", operand);
  return false;
}

/* The descriptor's fields other than the start address. */
static uint64_t desc_bits(const Canonical *c) {
  uint64_t mode = c->swizzle == 128 ? 1 : c->swizzle == 64 ? 2 : c->swizzle == 32 ? 3 : 0;
  return ((uint64_t)(c->lbo >> 4) & 0x3FFF) << 16 | ((uint64_t)(c->sbo >> 4) & 0x3FFF) << 32 |
         mode << 62;
}

/* An operand: its tile's first element's address (>> 4, as the descriptor
   holds it), its canonical layout, and its tile offsets. */
typedef struct Operand {
  MlirValue start; /* i32: the low word of the descriptor of tile (0, 0) */
  Canonical c;
  FlyLayout *tiles, *ks; /* Mt (or Nt) and Kt modes */
  int ntiles, nks;
} Operand;

/* The bytes of the hardware swizzle S is over elements of e bytes: 16 << B
   for S<B, 4 - log2(e), 3> (XOR of byte-address bits 4.. with those 3
   above the width), B from 1 to 3; 0 for a swizzle of no bits; -1 for any
   other. */
static int hardware_swizzle(FlySwizzle s, int e) {
  int m = 4 - (e == 1 ? 0 : e == 2 ? 1 : e == 4 ? 2 : 9);
  if (s.bits == 0)
    return 0; /* no bits: an unswizzled layout */
  if (s.base != m || s.shift != 3 || s.bits < 1 || s.bits > 3)
    return -1;
  return 16 << s.bits;
}

static MlirValue i64_const(FlyBuild *b, uint64_t v) {
  char text[32];
  snprintf(text, sizeof text, "%lld", (long long)v);
  return fly_build_constant(b, mlirIntegerTypeGet(b->m->ctx, 64), text);
}

static MlirValue i32_const(FlyBuild *b, uint32_t v) {
  char text[32];
  snprintf(text, sizeof text, "%d", (int)(int32_t)v);
  return fly_build_constant(b, mlirIntegerTypeGet(b->m->ctx, 32), text);
}

static bool operand(FlyBuild *b, MlirValue v, int rows, int K, char name, bool transposable,
                    Operand *o) {
  FlyMemDesc d;
  if (!fly_memdesc_of(b, v, &d))
    return false;
  int e = fly_lower_type_bytes(d.type.elem);
  FlyLayout *L = d.L;
  if (fly_layout_rank(L) != 3 || fly_layout_dynamic_count(L) != 0) {
    fly_memdesc_free(&d);
    fly_build_error(b, "wgmma's operand %c is the tiled MMA's static partition of a shared tile",
                    name);
    return false;
  }
  FlyLayout *T = fly_layout_get(b->A, L, 0);
  o->tiles = fly_layout_get(b->A, L, 1);
  o->ks = fly_layout_get(b->A, L, 2);
  int64_t nt = 0, nk = 0, tsize = 0;
  if (!T || !o->tiles || !o->ks || !fly_layout_size(b->A, o->tiles, &nt) ||
      !fly_layout_size(b->A, o->ks, &nk) || !fly_layout_size(b->A, T, &tsize) ||
      tsize != (int64_t)rows * K) {
    fly_memdesc_free(&d);
    fly_build_error(b, "internal error: wgmma's operand %c is not a partition of its tiles", name);
    return false;
  }
  o->ntiles = (int)nt;
  o->nks = (int)nk;
  int swizzle = 0;
  if (d.type.swizzled && (swizzle = hardware_swizzle(d.type.swizzle, e)) < 0) {
    fly_memdesc_free(&d);
    fly_build_error(b,
                    "operand %c's shared tile is swizzled by S<%d,%d,%d>, which is not one of "
                    "the 32-, 64- or 128-byte swizzles wgmma reads (std.smem_layout's)",
                    name, d.type.swizzle.bits, d.type.swizzle.base, d.type.swizzle.shift);
    return false;
  }
  bool ok = canonical(b, T, rows, K, e, swizzle, name, transposable && e == 2, &o->c);
  MlirValue ptr = ok ? fly_memdesc_start(b, &d) : (MlirValue){NULL};
  fly_memdesc_free(&d);
  if (!ok)
    return false;
  /* Shared addresses are below 2^18: the start field holds bits 4..17.
     The descriptor's low word (start and leading offset) is computed in 32
     bits and its high word is a constant: built in 64 bits, each tile's
     descriptor took a 64-bit add (two instructions and a carry) and ptxas
     moved both words to uniform registers for every MMA. */
  MlirType i32 = mlirIntegerTypeGet(b->m->ctx, 32);
  MlirValue a = fly_build_op1(b, "llvm.ptrtoint", i32, 1, &ptr, 0, NULL);
  MlirValue ops[2] = {a, i32_const(b, 4)};
  a = fly_build_op1(b, "arith.shrui", i32, 2, ops, 0, NULL);
  ops[0] = a;
  ops[1] = i32_const(b, 0x3FFF);
  a = fly_build_op1(b, "arith.andi", i32, 2, ops, 0, NULL);
  ops[0] = a;
  ops[1] = i32_const(b, (uint32_t)desc_bits(&o->c));
  o->start = fly_build_op1(b, "arith.ori", i32, 2, ops, 0, NULL);
  return true;
}

/* The 64-bit descriptor of an operand's tile whose low word is lo. */
static MlirValue whole_descriptor(FlyBuild *b, const Operand *o, MlirValue lo) {
  MlirType i64 = mlirIntegerTypeGet(b->m->ctx, 64);
  MlirValue ops[2] = {fly_build_op1(b, "arith.extui", i64, 1, &lo, 0, NULL),
                      i64_const(b, desc_bits(&o->c) & ~(uint64_t)0xFFFFFFFF)};
  return fly_build_op1(b, "arith.ori", i64, 2, ops, 0, NULL);
}

/* The descriptor of tile (t, k) of an operand of e-byte elements. */
static MlirValue descriptor(FlyBuild *b, const Operand *o, int t, int k, int e) {
  int64_t ot = 0, ok = 0;
  if (!fly_layout_eval(b->A, o->tiles, t, &ot) || !fly_layout_eval(b->A, o->ks, k, &ok)) {
    fly_build_error(b, "internal error: a wgmma tile offset cannot be evaluated");
    return whole_descriptor(b, o, o->start);
  }
  int64_t bytes = (ot + ok) * e;
  if (bytes == 0)
    return whole_descriptor(b, o, o->start);
  if (bytes % 16) {
    fly_build_error(b, "a wgmma tile starts %lld bytes into its operand: not a multiple of 16",
                    (long long)bytes);
    return whole_descriptor(b, o, o->start);
  }
  MlirValue ops[2] = {o->start, i32_const(b, (uint32_t)(bytes >> 4))};
  MlirValue lo = fly_build_op1(b, "arith.addi", mlirIntegerTypeGet(b->m->ctx, 32), 2, ops, 0, NULL);
  return whole_descriptor(b, o, lo);
}

static const char *wgmma_type(MlirType t) {
  if (mlirTypeIsABF16(t))
    return "bf16";
  if (mlirTypeIsAF16(t))
    return "f16";
  if (mlirTypeIsAFloat8E4M3FN(t))
    return "e4m3";
  if (mlirTypeIsAFloat8E5M2(t))
    return "e5m2";
  return NULL;
}

/* The struct of n floats a wgmma of n accumulator values takes and gives. */
static MlirType acc_struct(FlyBuild *b, int n) {
  char st[4096];
  int at = snprintf(st, sizeof st, "!llvm.struct<(");
  for (int i = 0; i < n && at < (int)sizeof st - 8; i++)
    at += snprintf(st + at, sizeof st - (size_t)at, "%sf32", i ? ", " : "");
  snprintf(st + at, sizeof st - (size_t)at, ")>");
  return fly_mlir_type(b->m, st);
}

static MlirNamedAttribute position(FlyBuild *b, int i) {
  char pos[32];
  snprintf(pos, sizeof pos, "array<i64: %d>", i);
  return fly_mlir_named(b->m, "position", fly_build_attr(b, pos));
}

/* One wgmma.mma_async on an accumulator struct `in` of n values (NULL
   with `zero`: not read), giving the struct of its results. */
static MlirValue issue(FlyBuild *b, const FlyAtom *atom, MlirValue da, MlirValue db, MlirValue in,
                       int n, MlirType ta, MlirType tb, const Operand *A, const Operand *B,
                       bool zero) {
  MlirType stype = acc_struct(b, n);
  if (zero)
    in = fly_build_op1(b, "llvm.mlir.poison", stype, 0, NULL, 0, NULL);
  char attrs[1024];
  snprintf(attrs, sizeof attrs,
           "{shape = #nvvm.shape<m = %d, n = %d, k = %d>, typeA = #nvvm.wgmma_type<%s>, typeB = "
           "#nvvm.wgmma_type<%s>, typeD = #nvvm.wgmma_type<f32>, scaleD = "
           "#nvvm.wgmma_scale_out<%s>, scaleA = #nvvm.wgmma_scale_in<one>, scaleB = "
           "#nvvm.wgmma_scale_in<one>, layoutA = #nvvm.mma_layout<%s>, layoutB = "
           "#nvvm.mma_layout<%s>}",
           atom->m, atom->n, atom->k, wgmma_type(ta), wgmma_type(tb), zero ? "zero" : "one",
           A->c.mn_major ? "col" : "row", B->c.mn_major ? "row" : "col");
  MlirAttribute dict = fly_build_attr(b, attrs);
  MlirNamedAttribute a[12];
  int na = (int)mlirDictionaryAttrGetNumElements(dict);
  for (int i = 0; i < na && i < 12; i++)
    a[i] = mlirDictionaryAttrGetElement(dict, i);
  MlirValue ops[3] = {in, da, db};
  return fly_build_op1(b, "nvvm.wgmma.mma_async", stype, 3, ops, na, a);
}

/* One wgmma.mma_async with A from registers (an RS atom), as inline PTX:
   MLIR's nvvm.wgmma.mma_async takes descriptors only. `a` holds the
   fragment's values, 8 a thread for each (m, k) tile in the fragment's
   order ((2, 2, 2) values, then the tiles), and the 8 of this tile from
   `first` on go two to a 32-bit register, a0..a3 of the PTX ISA's
   fragment. The accumulator's n floats are outputs tied to inputs (none
   with `zero`: scale-d false, not read). */
static MlirValue issue_rs(FlyBuild *b, const FlyAtom *atom, MlirValue a, int first, MlirValue db,
                          MlirValue in, int n, MlirType ta, const Operand *B, bool zero) {
  MlirType stype = acc_struct(b, n);
  MlirType pair = mlirVectorTypeGet(1, (int64_t[]){2}, ta);
  MlirValue ops[4 + 1 + 1];
  for (int j = 0; j < 4; j++) {
    MlirValue v = fly_build_op1(b, "llvm.mlir.poison", pair, 0, NULL, 0, NULL);
    for (int h = 0; h < 2; h++)
      v = fly_build_insert(b, v, fly_build_extract(b, a, first + 2 * j + h, ta), h);
    ops[j] = fly_build_op1(b, "llvm.bitcast", b->i32, 1, &v, 0, NULL);
  }
  ops[4] = db;
  int nops = 5;
  if (!zero)
    ops[nops++] = in;
  /* The text: {$0..$n-1} the accumulator, then A's registers and B's
     descriptor; tied inputs (the accumulator's, one operand a float of the
     struct) come last. */
  size_t cap = 64 * (size_t)n + 512;
  char *text = malloc(cap), *cons = malloc(cap);
  if (!text || !cons) {
    free(text);
    free(cons);
    fly_build_error(b, "out of memory");
    return in;
  }
  int at = snprintf(text, cap,
                    "{\n.reg .pred p;\nsetp.ne.b32 p, %d, 0;\n"
                    "wgmma.mma_async.sync.aligned.m%dn%dk%d.f32.%s.%s {",
                    zero ? 0 : 1, atom->m, atom->n, atom->k, wgmma_type(ta), wgmma_type(ta));
  int ct = 0;
  for (int i = 0; i < n; i++) {
    at += snprintf(text + at, cap - (size_t)at, "%s$%d", i ? ", " : "", i);
    ct += snprintf(cons + ct, cap - (size_t)ct, "%s=f", i ? "," : "");
  }
  at += snprintf(text + at, cap - (size_t)at, "}, {$%d, $%d, $%d, $%d}, $%d, p, 1, 1, %d;\n}", n,
                 n + 1, n + 2, n + 3, n + 4, B->c.mn_major ? 1 : 0);
  ct += snprintf(cons + ct, cap - (size_t)ct, ",r,r,r,r,l");
  for (int i = 0; !zero && i < n; i++)
    ct += snprintf(cons + ct, cap - (size_t)ct, ",%d", i);
  MlirNamedAttribute attrs[3] = {
      fly_mlir_named(b->m, "asm_string", fly_mlir_str_attr(b->m, text)),
      fly_mlir_named(b->m, "constraints", fly_mlir_str_attr(b->m, cons)),
      fly_mlir_named(b->m, "has_side_effects", mlirUnitAttrGet(b->m->ctx))};
  free(text);
  free(cons);
  /* A struct input is passed as its n floats. */
  MlirValue *args = malloc(sizeof *args * (size_t)(5 + (zero ? 0 : n)));
  if (!args) {
    fly_build_error(b, "out of memory");
    return in;
  }
  for (int i = 0; i < 5; i++)
    args[i] = ops[i];
  for (int i = 0; !zero && i < n; i++) {
    MlirNamedAttribute pos = position(b, i);
    args[5 + i] = fly_build_op1(b, "llvm.extractvalue", mlirF32TypeGet(b->m->ctx), 1, &in, 1, &pos);
  }
  MlirValue r = fly_build_op1(b, "llvm.inline_asm", stype, 5 + (zero ? 0 : n), args, 3, attrs);
  free(args);
  return r;
}

/* Whether v is a constant vector of zeros (+0.0: what zeros_like makes):
   the result of an operation of no operands whose `value` is a splat of
   +0.0, whichever dialect's constant it is. */
static bool zero_constant(MlirValue v) {
  if (!mlirValueIsAOpResult(v))
    return false;
  MlirOperation def = mlirOpResultGetOwner(v);
  if (mlirOperationGetNumOperands(def) != 0)
    return false;
  MlirAttribute a = mlirOperationGetAttributeByName(def, mlirStringRefCreateFromCString("value"));
  if (mlirAttributeIsNull(a) || !mlirAttributeIsADenseElements(a) ||
      !mlirDenseElementsAttrIsSplat(a))
    return false;
  MlirAttribute x = mlirDenseElementsAttrGetSplatValue(a);
  if (!mlirAttributeIsAFloat(x))
    return false;
  double d = mlirFloatAttrGetValueDouble(x);
  return d == 0.0 && !signbit(d);
}

void fly_lower_wgmma(FlyBuild *b, MlirOperation op, const FlyAtom *atom) {
  MlirValue C = mlirOperationGetOperand(op, 3), Ain = mlirOperationGetOperand(op, 1);
  /* An RS atom's A: the thread's fragment, a vector of 8 values for each
     of its (m, k) tiles. */
  bool rs = fly_wgmma_a_in_registers(atom);
  MlirType ta = fly_elem_of(mlirValueGetType(Ain));
  MlirType tb = fly_elem_of(mlirValueGetType(mlirOperationGetOperand(op, 2)));
  FlyMemType mta, mtb;
  if (!rs && !fly_memtype_read(b->m, mlirValueGetType(Ain), &mta))
    return fly_build_error(b, "internal error: wgmma's A is not a memref");
  if (rs && !mlirTypeIsAVector(mlirValueGetType(Ain)))
    return fly_build_error(b, "internal error: an RS wgmma's A is not a vector");
  if (!fly_memtype_read(b->m, mlirValueGetType(mlirOperationGetOperand(op, 2)), &mtb)) {
    if (!rs)
      fly_memtype_free(&mta);
    return fly_build_error(b, "internal error: wgmma's B is not a memref");
  }
  if (!rs) {
    ta = mta.elem;
    fly_memtype_free(&mta);
  }
  tb = mtb.elem;
  fly_memtype_free(&mtb);
  int e = fly_lower_type_bytes(ta);
  Operand A = {0}, B;
  if (!wgmma_type(ta) || !wgmma_type(tb) ||
      (!rs && !operand(b, Ain, atom->m, atom->k, 'A', true, &A)) ||
      !operand(b, mlirOperationGetOperand(op, 2), atom->n, atom->k, 'B', true, &B)) {
    if (!b->failed)
      fly_build_error(b, "internal error: wgmma operands of unexpected types");
    return;
  }
  if (rs) {
    /* The fragment's tiles: 8 values each, B's K tiles by as many M tiles
       as that leaves. */
    int64_t na = mlirShapedTypeGetDimSize(mlirValueGetType(Ain), 0);
    if (na % (8 * B.nks) != 0)
      return fly_build_error(b,
                             "wgmma's A fragment has %lld values, not 8 for each of B's %d K "
                             "tiles and some M tiles",
                             (long long)na, B.nks);
    A.ntiles = (int)(na / (8 * B.nks));
    A.nks = B.nks;
  }
  int vc = atom->m * atom->n / atom->threads;
  MlirType tc = mlirValueGetType(C);
  int64_t have = mlirTypeIsAVector(tc) ? mlirShapedTypeGetDimSize(tc, 0) : 1;
  if (A.nks != B.nks || have != (int64_t)vc * A.ntiles * B.ntiles)
    return fly_build_error(b,
                           "wgmma's operands do not match: A has %d x %d tiles, B %d x %d, "
                           "and the accumulator %lld values for %d each",
                           A.ntiles, A.nks, B.ntiles, B.nks, (long long)have, vc);
  /* An accumulator of zeros (a constant) is not read: its first MMA of
     each tile scales it by zero. The accumulator's registers are then
     written by wgmma alone, so a loop that carries them with MMAs in
     flight does not make ptxas wait for all of them at every iteration
     (it does when its first values come from moves of zeros). */
  bool zero = zero_constant(C);
  /* Each (m, n) tile's values go from one MMA to the next as the struct
     wgmma gives and takes. The accumulator's vector is converted to the
     tiles' structs (a struct of them for more than one) and back by marked
     conversions, which a loop carrying it and the next fly.gemm undo
     (fly_lower_carry.c): a vector rebuilt after each MMA made chains of
     element inserts and extracts that LLVM's passes spent much of a
     GEMM's compile time on. */
  int tiles = A.ntiles * B.ntiles;
  MlirType stype = acc_struct(b, vc), ptype = stype;
  if (tiles > 1) {
    MlirType *each = malloc((size_t)tiles * sizeof *each);
    if (!each)
      return fly_build_error(b, "out of memory");
    for (int t = 0; t < tiles; t++)
      each[t] = stype;
    ptype = mlirLLVMStructTypeLiteralGet(b->m->ctx, tiles, each, false);
    free(each);
  }
  MlirValue *held = calloc((size_t)tiles, sizeof *held);
  if (!held)
    return fly_build_error(b, "out of memory");
  if (!zero) {
    MlirValue p;
    if (!fly_acc_cast_input(C, &p) || !mlirTypeEqual(mlirValueGetType(p), ptype))
      p = fly_acc_cast(b, C, ptype);
    for (int t = 0; t < tiles; t++) {
      MlirNamedAttribute at = position(b, t);
      held[t] = tiles == 1 ? p : fly_build_op1(b, "llvm.extractvalue", stype, 1, &p, 1, &at);
    }
  }
  for (int k = 0; k < A.nks && !b->failed; k++)
    for (int n = 0; n < B.ntiles && !b->failed; n++) {
      MlirValue db = descriptor(b, &B, n, k, e);
      for (int m = 0; m < A.ntiles && !b->failed; m++) {
        int t = m + A.ntiles * n;
        held[t] = rs ? issue_rs(b, atom, Ain, 8 * (m + A.ntiles * k), db, held[t], vc, ta, &B,
                                zero && k == 0)
                     : issue(b, atom, descriptor(b, &A, m, k, e), db, held[t], vc, ta, tb, &A, &B,
                             zero && k == 0);
      }
    }
  MlirValue out = held[0];
  if (tiles > 1 && !b->failed) {
    out = fly_build_op1(b, "llvm.mlir.poison", ptype, 0, NULL, 0, NULL);
    for (int t = 0; t < tiles; t++) {
      MlirNamedAttribute at = position(b, t);
      MlirValue v[2] = {out, held[t]};
      out = fly_build_op1(b, "llvm.insertvalue", ptype, 2, v, 1, &at);
    }
  }
  MlirValue acc = b->failed ? C : fly_acc_cast(b, out, tc);
  free(held);
  if (b->failed)
    return;
  mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0), acc);
  mlirOperationDestroy(op);
}
