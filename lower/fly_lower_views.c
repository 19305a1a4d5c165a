/* fly_lower_views.c — the fly-layout-lowering pass (fly_lower.h).
 *
 * A view does not move data: it is the same memory seen through another
 * layout, starting at an offset. So each view becomes its source's pointer
 * moved by that offset (llvm.getelementptr) and a fly.make_memref of the
 * result's type with the result's runtime leaves, which the tracer lists
 * after the view's operands. The offset is the layout applied to the
 * view's coordinate: for a slice, the coordinate given; for a partition,
 * the first value of the thread's share, from the TV layout of the tiled
 * copy or MMA. Static parts fold, so a static layout costs nothing at run
 * time. Allocations get their memory here too: a workgroup global for a
 * shared tile, a private alloca for a register fragment (which LLVM's SROA
 * keeps in registers as long as it is indexed statically). */
#include <stdlib.h>
#include <string.h>

#include "fly_atom.h"
#include "fly_lower.h"
#include "fly_tensor_map.h"
#include "fly_layout_text.h"
#include "fly_lower_build.h"
#include "fly_lower_target.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

typedef struct Tuple {
  MlirValue v;
  FlyTuple *tuple;                /* int tuples */
  const FlyTuple *shape, *stride; /* layouts: their two tuples */
} Tuple;

typedef struct Views {
  FlyMlir *m;
  FlyAlgebra A; /* the layouts read in this run of the pass */
  int priv_as;
  MlirOperation tiles_fn; /* the kernel tiles_dynamic last decided for, and what */
  bool tiles_dynamic;
  Tuple *tuples;
  int ntuples, cap;
  int smem;
} Views;

static bool is_fly(MlirOperation op) {
  MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
  return n.length > 4 && memcmp(n.data, "fly.", 4) == 0;
}

static Tuple *tuple_of(Views *w, MlirValue v) {
  for (int i = w->ntuples - 1; i >= 0; i--)
    if (mlirValueEqual(w->tuples[i].v, v))
      return &w->tuples[i];
  return NULL;
}

static Tuple *new_tuple(Views *w, MlirValue v) {
  if (w->ntuples == w->cap) {
    int cap = w->cap ? w->cap * 2 : 16;
    Tuple *p = realloc(w->tuples, sizeof *p * (size_t)cap);
    if (!p)
      return NULL;
    w->tuples = p;
    w->cap = cap;
  }
  Tuple *t = &w->tuples[w->ntuples++];
  memset(t, 0, sizeof *t);
  t->v = v;
  return t;
}

static MlirOperation ancestor(MlirOperation op, const char *name) {
  for (MlirOperation p = mlirOperationGetParentOperation(op); !mlirOperationIsNull(p);
       p = mlirOperationGetParentOperation(p))
    if (fly_lower_is(p, name))
      return p;
  MlirOperation none = {NULL};
  return none;
}

/* The elements a static layout spans (the algebra's cosize), or -1. */
static int64_t cosize(FlyBuild *b, const FlyLayout *L) {
  int64_t n;
  if (!L || !fly_tuple_is_static(L->shape) || !fly_tuple_is_static(L->stride) ||
      !fly_layout_cosize(b->A, L, &n)) {
    fly_algebra_clear_error(b->A);
    return -1;
  }
  return n;
}

/* Replaces op's only result by v and drops op. */
static void replace(MlirOperation op, MlirValue v) {
  mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0), v);
  mlirOperationDestroy(op);
}

static MlirValue make_memref(FlyBuild *b, MlirType type, MlirValue ptr, int n,
                             const MlirValue *leaves) {
  MlirValue v[257] = {ptr};
  for (int i = 0; i < n && i < 256; i++)
    v[1 + i] = leaves[i];
  return fly_build_op1(b, "fly.make_memref", type, 1 + n, v, 0, NULL);
}

/* A swizzled view: its tile's base, its offset from it (an i32), its
   leaves (fly_lower_build.h). */
static MlirValue make_swizzled_memref(FlyBuild *b, MlirType type, MlirValue base, FlySym offset,
                                      int n, const MlirValue *leaves) {
  MlirValue v[257] = {base, fly_build_sym(b, offset)};
  for (int i = 0; i < n && i < 255; i++)
    v[2 + i] = leaves[i];
  return fly_build_op1(b, "fly.make_memref", type, 2 + n, v, 0, NULL);
}

/* A new tile's memref: the view of all of it, at offset 0 of its swizzle
   when it has one. */
static MlirValue make_tile(FlyBuild *b, const FlyMemType *mt, MlirType type, MlirValue p) {
  if (mt->swizzled)
    return make_swizzled_memref(b, type, p, fly_sym_const(0), 0, NULL);
  return make_memref(b, type, p, 0, NULL);
}

/* The elements a tile spans: its layout's cosize, swizzled (-1 when it is
   not static). */
static int64_t tile_elems(FlyBuild *b, const FlyMemType *mt) {
  int64_t n = cosize(b, fly_build_layout(b, mt->layout, NULL, 0));
  return n > 0 && mt->swizzled ? fly_swizzle_span(mt->swizzle, n) : n;
}

/* The bytes a shared tile is aligned to: 16, or more for a swizzled tile
   (fly_swizzle_tile_align, which sema counts with too). */
/* Where a tile of `bytes` starts: at its swizzle's period when swizzled,
   and at least where fly_smem_tile_align puts it (128 bytes for TMA). */
static int64_t tile_align(const FlyMemType *mt, int64_t bytes, bool tma) {
  int64_t a = fly_smem_tile_align(bytes, tma);
  int64_t s =
      mt->swizzled ? fly_swizzle_tile_align(mt->swizzle, fly_lower_type_bytes(mt->elem)) : 16;
  return s > a ? s : a;
}

static MlirType ptr_type(FlyBuild *b, int as) {
  char text[32];
  snprintf(text, sizeof text, "!llvm.ptr<%d>", as);
  return fly_mlir_type(b->m, text);
}

/* Whether op's target has TMA, which wants its tiles 128-byte aligned. */
static bool has_tma(MlirOperation op) {
  const FlyTarget *t = fly_lower_target_of(op);
  return t && fly_target_has(t, FLY_FEATURE_TMA);
}

/* ---- allocations ------------------------------------------------------------------------- */

/* On NVIDIA the shared tiles of a kernel that needs more than 48 KiB are
   placed in its dynamic shared memory: one `.extern .shared` array, each
   tile at an offset aligned as tile_align says (a swizzled tile at its
   swizzle's period, the array then aligned to it too; a TMA tile at 128
   bytes), the kernel's total in its `fly.static_shared` attribute (bytes),
   which
   the bundle records and the runtime adds to the launch's dynamic bytes.
   Static `.shared` arrays stop at 48 KiB; dynamic shared memory goes to
   what the chip has (227 KiB on sm_90) once the runtime asks for it. */
static void alloc_smem_dynamic(Views *w, FlyBuild *b, MlirOperation op, MlirOperation gm,
                               const FlyMemType *mt, int64_t bytes) {
  MlirContext ctx = w->m->ctx;
  MlirOperation fn = ancestor(op, "gpu.func");
  if (mlirOperationIsNull(fn))
    return fly_build_error(b, "internal error: a shared tile outside a kernel");
  static const char sym[] = "__fly_dynamic_smem";
  int64_t align = tile_align(mt, bytes, has_tma(op));
  fly_build_extern_shared(b, gm, sym, align);
  MlirStringRef key = mlirStringRefCreateFromCString("fly.static_shared");
  MlirAttribute used = mlirOperationGetAttributeByName(fn, key);
  int64_t at = mlirAttributeIsNull(used) ? 0 : mlirIntegerAttrGetValueInt(used);
  at = (at + align - 1) / align * align;
  mlirOperationSetAttributeByName(fn, key,
                                  mlirIntegerAttrGet(mlirIntegerTypeGet(ctx, 64), at + bytes));
  MlirNamedAttribute gn = fly_mlir_named(
      w->m, "global_name", mlirFlatSymbolRefAttrGet(ctx, mlirStringRefCreateFromCString(sym)));
  MlirValue base = fly_build_op1(b, "llvm.mlir.addressof", ptr_type(b, 3), 0, NULL, 1, &gn);
  MlirType i8 = mlirIntegerTypeGet(ctx, 8);
  MlirValue p = fly_build_gep(b, base, i8, fly_sym_const(at));
  replace(op, make_tile(b, mt, mlirValueGetType(mlirOperationGetResult(op, 0)), p));
}

/* The bytes of a kernel's static shared tiles, each aligned as
   alloc_smem_dynamic would place them. */
typedef struct TileBytes {
  Views *w;
  FlyBuild *b;
  int64_t total;
} TileBytes;

static MlirWalkResult add_tile_bytes(MlirOperation op, void *user) {
  TileBytes *t = user;
  if (!fly_lower_is(op, "fly.alloc_smem") || mlirOperationGetNumOperands(op) != 0)
    return MlirWalkResultAdvance;
  FlyMemType mt;
  if (fly_memtype_read(t->w->m, mlirValueGetType(mlirOperationGetResult(op, 0)), &mt)) {
    int64_t n = tile_elems(t->b, &mt);
    int64_t bytes = (n > 0 ? n : 0) * fly_lower_type_bytes(mt.elem);
    int64_t a = tile_align(&mt, bytes, has_tma(op));
    t->total = (t->total + a - 1) / a * a + bytes;
    fly_memtype_free(&mt);
  }
  return MlirWalkResultAdvance;
}

/* Whether kernel fn's tiles go to the dynamic shared memory (NVIDIA, beyond
   the 48 KiB of static `.shared` arrays). Below that each tile stays a
   static array of its own, which LLVM's alias analysis tells apart at no
   cost; offsets into one array cost it about 15% of a compile. */
static bool tiles_dynamic(Views *w, FlyBuild *b, MlirOperation fn) {
  enum { STATIC_SHARED_MAX = 48 * 1024 };
  if (w->priv_as == 5)
    return false;
  if (!mlirOperationEqual(fn, w->tiles_fn)) {
    TileBytes t = {w, b, 0};
    mlirOperationWalk(fn, add_tile_bytes, &t, MlirWalkPreOrder);
    w->tiles_fn = fn;
    w->tiles_dynamic = t.total > STATIC_SHARED_MAX;
  }
  return w->tiles_dynamic;
}

static void alloc_smem(Views *w, FlyBuild *b, MlirOperation op) {
  MlirType rt = mlirValueGetType(mlirOperationGetResult(op, 0));
  /* smem<T>(?): its start comes from the target pass, which knows where
     the kernel's own tiles end (fly.smem_launch_base); its length is the
     operand. */
  if (mlirOperationGetNumOperands(op) == 1) {
    MlirValue n = mlirOperationGetOperand(op, 0);
    MlirValue p = fly_build_op1(b, "fly.smem_launch_base", ptr_type(b, 3), 0, NULL, 0, NULL);
    return replace(op, make_memref(b, rt, p, 1, &n));
  }
  FlyMemType mt;
  if (!fly_memtype_read(w->m, rt, &mt))
    return fly_build_error(b, "internal error: a malformed !fly.memref type");
  int64_t n = tile_elems(b, &mt);
  MlirOperation gm = ancestor(op, "gpu.module");
  if (n <= 0 || mlirOperationIsNull(gm)) {
    fly_memtype_free(&mt);
    return fly_build_error(b, "internal error: a shared tile outside a gpu.module");
  }
  if (tiles_dynamic(w, b, ancestor(op, "gpu.func"))) {
    alloc_smem_dynamic(w, b, op, gm, &mt, n * fly_lower_type_bytes(mt.elem));
    fly_memtype_free(&mt);
    return;
  }
  int64_t align = tile_align(&mt, n * fly_lower_type_bytes(mt.elem), has_tma(op));
  char name[32], text[128];
  snprintf(name, sizeof name, "__fly_smem_%d", w->smem++);
  /* An 8-bit float tile is an array of i8: LLVM has no such float type. */
  char *et = fly_lower_type_text(fly_lower_storage_type(mt.elem));
  snprintf(text, sizeof text, "!llvm.array<%lld x %s>", (long long)n, et ? et : "i8");
  free(et);
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(gm, 0));
  FlyInsert top = {body, mlirBlockGetFirstOperation(body)};
  MlirContext ctx = w->m->ctx;
  MlirNamedAttribute ga[5] = {
      fly_mlir_named(w->m, "addr_space", mlirIntegerAttrGet(mlirIntegerTypeGet(ctx, 32), 3)),
      fly_mlir_named(w->m, "alignment", mlirIntegerAttrGet(mlirIntegerTypeGet(ctx, 64), align)),
      fly_mlir_named(w->m, "global_type", mlirTypeAttrGet(fly_mlir_type(w->m, text))),
      fly_mlir_named(w->m, "linkage", fly_build_attr(b, "#llvm.linkage<internal>")),
      fly_mlir_named(w->m, "sym_name", fly_mlir_str_attr(w->m, name))};
  MlirRegion init = mlirRegionCreate();
  fly_mlir_op(w->m, top, b->loc, "llvm.mlir.global", 0, NULL, 0, NULL, 5, ga, 1, &init);
  MlirNamedAttribute at = fly_mlir_named(
      w->m, "global_name", mlirFlatSymbolRefAttrGet(ctx, mlirStringRefCreateFromCString(name)));
  MlirValue p = fly_build_op1(b, "llvm.mlir.addressof", ptr_type(b, 3), 0, NULL, 1, &at);
  replace(op, make_tile(b, &mt, rt, p));
  fly_memtype_free(&mt);
}

static void alloc_reg(Views *w, FlyBuild *b, MlirOperation op) {
  MlirType rt = mlirValueGetType(mlirOperationGetResult(op, 0));
  FlyMemType mt;
  if (!fly_memtype_read(w->m, rt, &mt))
    return fly_build_error(b, "internal error: a malformed !fly.memref type");
  int64_t n = cosize(b, fly_build_layout(b, mt.layout, NULL, 0));
  MlirOperation fn = ancestor(op, "gpu.func");
  if (n <= 0 || mlirOperationIsNull(fn)) {
    fly_memtype_free(&mt);
    return fly_build_error(b, "internal error: a register fragment without a static size");
  }
  /* At the top of the kernel, where LLVM promotes allocas to registers. */
  MlirBlock entry = mlirRegionGetFirstBlock(mlirOperationGetRegion(fn, 0));
  FlyBuild top = *b;
  top.ip.block = entry;
  top.ip.before = mlirBlockGetFirstOperation(entry);
  MlirValue count = fly_build_i32(&top, n);
  MlirNamedAttribute a[2] = {
      fly_mlir_named(w->m, "alignment", mlirIntegerAttrGet(mlirIntegerTypeGet(w->m->ctx, 64), 16)),
      fly_mlir_named(w->m, "elem_type", mlirTypeAttrGet(fly_lower_storage_type(mt.elem)))};
  fly_memtype_free(&mt);
  MlirValue p = fly_build_op1(&top, "llvm.alloca", ptr_type(b, w->priv_as), 1, &count, 2, a);
  replace(op, make_memref(b, rt, p, 0, NULL));
}

/* ---- views ---------------------------------------------------------------------------------- */

/* The offset of tile coordinate crd[0..r) in the source: each coordinate is
   an index into the source's mode of the same position. */
static FlySym tile_offset(FlyBuild *b, const FlySym *crd, int r, const FlyLayout *src) {
  FlySymOps o = fly_build_ops(b);
  FlySym off = fly_sym_const(0);
  for (int i = 0; i < r; i++) {
    if (i >= fly_tuple_rank(src->shape)) {
      fly_build_error(b, "internal error: a tile with more modes than its tensor");
      break;
    }
    const FlyTuple *s = src->shape->kind == FLY_TUPLE_SEQ ? src->shape->elem[i] : src->shape;
    const FlyTuple *d = src->stride->kind == FLY_TUPLE_SEQ ? src->stride->elem[i] : src->stride;
    off = fly_sym_add(&o, off, fly_sym_index(&o, crd[i], s, d));
  }
  return off;
}

/* The first mode of a TV layout: where each thread starts. */
static const FlyTuple *mode0(const FlyTuple *t) {
  return t->kind == FLY_TUPLE_SEQ && t->n > 0 ? t->elem[0] : t;
}

/* g[j]: the greatest common divisor of coordinate leaf j of every thread's
   first value in the tile (0 when every thread's is 0). False when the
   layouts are too large to walk. */
static bool common_multiples(FlyBuild *b, const FlyLayout *T, FlyTuple *tile, int64_t *g, int r) {
  FlyLayout *thr = fly_layout_make(b->A, (FlyTuple *)mode0(T->shape), (FlyTuple *)mode0(T->stride));
  int64_t n;
  if (!thr || !fly_layout_size(b->A, thr, &n) || n > 4096) {
    fly_algebra_clear_error(b->A);
    return false;
  }
  for (int j = 0; j < r; j++)
    g[j] = 0;
  for (int64_t t = 0; t < n; t++) {
    int64_t k;
    FlyTuple *c = fly_layout_eval(b->A, thr, t, &k) ? fly_tuple_idx2crd(b->A, k, tile) : NULL;
    FlyTuple *leaves[64];
    if (!c || fly_tuple_leaves(c, leaves, 64) != r) {
      fly_algebra_clear_error(b->A);
      return false;
    }
    for (int j = 0; j < r; j++) {
      int64_t x = leaves[j]->value, y = g[j];
      while (y) {
        int64_t m = x % y;
        x = y;
        y = m;
      }
      g[j] = x < 0 ? -x : x;
    }
  }
  return true;
}

/* A tiled copy's thread starts at the element its first value takes: the
   TV layout's thread mode gives an index in the tile, column-major. A
   warp-wide copy's destination has its own TV layout, tv_d. */
static FlySym copy_offset(FlyBuild *b, MlirOperation op, const FlyLayout *src) {
  MlirOperation def = fly_lower_atom_op(mlirOperationGetOperand(op, 0));
  bool dst = fly_lower_is(op, "fly.partition_d") && !mlirOperationIsNull(def) &&
             !mlirAttributeIsNull(
                 mlirOperationGetAttributeByName(def, mlirStringRefCreateFromCString("tv_d")));
  char *tv = mlirOperationIsNull(def) ? NULL : fly_lower_str_attr(def, dst ? "tv_d" : "tv");
  char *tile = mlirOperationIsNull(def) ? NULL : fly_lower_str_attr(def, "tile");
  FlyLayout *T = tv ? fly_build_layout(b, tv, NULL, 0) : NULL;
  FlyTuple *tt = tile ? fly_build_tuple(b, tile, NULL, 0) : NULL;
  free(tv);
  free(tile);
  FlySymOps o = fly_build_ops(b);
  if (!T || !tt) {
    if (!b->failed)
      fly_build_error(b, "internal error: a tiled copy without its layouts");
    return fly_sym_const(0);
  }
  FlySym thr = fly_sym_of(mlirOperationGetOperand(op, 1));
  FlySym k = fly_sym_index(&o, thr, mode0(T->shape), mode0(T->stride));
  FlySym crd[64];
  int r = fly_sym_idx2crd(&o, k, tt, crd, 64);
  if (r > 64)
    return fly_sym_const(0);
  /* Every thread's start coordinate is, mode by mode, a multiple of what
     all threads' have in common (a tiled copy of 8-element vectors starts
     each thread at a multiple of 8). Written as (c / g) * g, which is c, the
     multiple is plain to see for the proof that a vector access is aligned
     (fly_lower_align.c); a power of two costs one `and`. */
  int64_t g[64];
  if (common_multiples(b, T, tt, g, r)) {
    for (int j = 0; j < r; j++) {
      if (g[j] == 0) /* every thread starts at 0 there (a warp-wide copy's rows) */
        crd[j] = fly_sym_const(0);
      else if (g[j] > 1)
        crd[j] = fly_sym_mul(&o, fly_sym_div(&o, crd[j], fly_sym_const(g[j])), fly_sym_const(g[j]));
    }
  }
  return tile_offset(b, crd, r, src);
}

/* A tiled MMA's thread: its lane's first value in the atom's tile of the
   operand, plus its warp's tile (the warps laid out by the tiled MMA's
   layout, column-major). */
static FlySym mma_offset(FlyBuild *b, MlirOperation op, char operand, const FlyLayout *src) {
  MlirValue mma = mlirOperationGetOperand(op, 0);
  const FlyAtom *atom = fly_lower_atom(mma);
  char *warps = atom ? fly_lower_str_attr(fly_lower_atom_op(mma), "atoms") : NULL;
  const char *tv = atom ? atom->tv[operand - 'A'] : NULL;
  FlyLayout *T = tv ? fly_build_layout(b, tv, NULL, 0) : NULL;
  FlyLayout *W = warps ? fly_build_layout(b, warps, NULL, 0) : NULL;
  free(warps);
  FlySymOps o = fly_build_ops(b);
  if (!T || !W) {
    if (!b->failed)
      fly_build_error(b, "internal error: a tiled MMA without its atom or layout");
    return fly_sym_const(0);
  }
  /* The warps' layout must be compact and column-major, as tiled_mma makes it. */
  FlyTuple *ws[3], *wd[3];
  int nw = fly_tuple_leaves(W->shape, ws, 3);
  if (nw > 3 || fly_tuple_leaves(W->stride, wd, 3) != nw) {
    fly_build_error(b, "internal error: a malformed tiled MMA layout");
    return fly_sym_const(0);
  }
  int64_t expect = 1;
  for (int i = 0; i < nw; i++) {
    if (ws[i]->value != 1 && wd[i]->value != expect) {
      fly_build_error(b, "a tiled MMA whose warps are not laid out column-major is not "
                         "lowered yet");
      return fly_sym_const(0);
    }
    expect *= ws[i]->value;
  }
  int64_t wm = nw > 0 ? ws[0]->value : 1;
  FlySym thr = fly_sym_of(mlirOperationGetOperand(op, 1));
  FlySym lane = fly_sym_rem(&o, thr, fly_sym_const(atom->threads));
  FlySym warp = fly_sym_div(&o, thr, fly_sym_const(atom->threads));
  FlySym warp_m = fly_sym_rem(&o, warp, fly_sym_const(wm));
  FlySym warp_n = fly_sym_rem(&o, fly_sym_div(&o, warp, fly_sym_const(wm)),
                              fly_sym_const(nw > 1 ? ws[1]->value : 1));
  int64_t rows = operand == 'B' ? atom->n : atom->m, cols = operand == 'C' ? atom->n : atom->k;
  FlySym k = fly_sym_index(&o, lane, mode0(T->shape), mode0(T->stride));
  FlySym crd[2] = {fly_sym_rem(&o, k, fly_sym_const(rows)),
                   fly_sym_div(&o, k, fly_sym_const(rows))};
  /* The lanes' common multiples made plain, as for tiled copies. */
  FlyTuple *dims[2] = {fly_tuple_int(b->A, rows), fly_tuple_int(b->A, cols)};
  FlyTuple *rc = fly_tuple_seq(b->A, 2, dims);
  int64_t g[2];
  if (rc && common_multiples(b, T, rc, g, 2))
    for (int j = 0; j < 2; j++)
      if (g[j] > 1)
        crd[j] = fly_sym_mul(&o, fly_sym_div(&o, crd[j], fly_sym_const(g[j])), fly_sym_const(g[j]));
  FlySym wr = operand == 'B' ? warp_n : warp_m;
  crd[0] = fly_sym_add(&o, crd[0], fly_sym_mul(&o, wr, fly_sym_const(rows)));
  if (operand == 'C')
    crd[1] = fly_sym_add(&o, crd[1], fly_sym_mul(&o, warp_n, fly_sym_const(cols)));
  return tile_offset(b, crd, 2, src);
}

/* What each Fly operation of this pass is. */
typedef enum Kind {
  ALLOC_SMEM,
  ALLOC_REG, /* rmem<T>(L) and the fragments of a partition */
  SLICE,
  DIVIDE,
  COPY_PARTITION, /* partition_S/D */
  MMA_PARTITION,  /* partition_A/B/C: operand says which */
  INT_TUPLE,
  LAYOUT,
  CRD2IDX,
  IDX2CRD,
  GET_LEAF,
} Kind;

typedef struct Row {
  const char *op;
  Kind kind;
  const char *what; /* views: the operation's name in messages */
  char operand;     /* MMA_PARTITION: 'A', 'B' or 'C' */
} Row;

static const Row rows[] = {
    {"fly.alloc_smem", ALLOC_SMEM, NULL, 0},
    {"fly.alloc_reg", ALLOC_REG, NULL, 0},
    {"fly.partition_fragment_a", ALLOC_REG, NULL, 0},
    {"fly.partition_fragment_b", ALLOC_REG, NULL, 0},
    {"fly.partition_fragment_c", ALLOC_REG, NULL, 0},
    {"fly.slice", SLICE, "slice", 0},
    {"fly.logical_divide", DIVIDE, "logical_divide", 0},
    {"fly.composition", DIVIDE, "composition", 0},
    {"fly.recast", DIVIDE, "recast", 0},
    {"fly.zipped_divide", DIVIDE, "zipped_divide", 0},
    {"fly.tiled_divide", DIVIDE, "tiled_divide", 0},
    {"fly.flat_divide", DIVIDE, "flat_divide", 0},
    {"fly.partition_s", COPY_PARTITION, "partition_S", 0},
    {"fly.partition_d", COPY_PARTITION, "partition_D", 0},
    {"fly.partition_a", MMA_PARTITION, "partition_A", 'A'},
    {"fly.partition_b", MMA_PARTITION, "partition_B", 'B'},
    {"fly.partition_c", MMA_PARTITION, "partition_C", 'C'},
    {"fly.make_int_tuple", INT_TUPLE, NULL, 0},
    {"fly.make_layout", LAYOUT, NULL, 0},
    {"fly.crd2idx", CRD2IDX, NULL, 0},
    {"fly.idx2crd", IDX2CRD, NULL, 0},
    {"fly.get_leaf", GET_LEAF, NULL, 0},
};

static const Row *row_of(MlirOperation op) {
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    if (fly_lower_is(op, rows[i].op))
      return &rows[i];
  return NULL;
}

/* A view of memory that is not swizzled: the source's pointer moved by
   the view's offset. */
static void plain_view(Views *w, FlyBuild *b, MlirOperation op, const FlyMemDesc *src, FlySym off,
                       int n, const MlirValue *leaves) {
  MlirType rt = mlirValueGetType(mlirOperationGetResult(op, 0));
  MlirValue p = fly_build_gep(b, src->ptr, src->type.elem, off);
  /* A recast to a wider element needs its start aligned to it: proven,
     and required of the kernel's argument, or refused. */
  if (fly_lower_is(op, "fly.recast")) {
    FlyMemType to;
    if (fly_memtype_read(w->m, rt, &to)) {
      int nb = fly_lower_type_bytes(to.elem), ob = fly_lower_type_bytes(src->type.elem);
      if (nb > ob && !fly_lower_aligned(b, p, nb))
        fly_build_error(b,
                        "recast to %d-byte elements needs the tensor to start at a multiple "
                        "of %d bytes, which the compiler cannot show here",
                        nb, nb);
      fly_memtype_free(&to);
    }
  }
  if (!b->failed)
    replace(op, make_memref(b, rt, p, n, leaves));
}

/* A view of a swizzled tile keeps the tile's base and moves its offset,
   as the swizzle applies to offsets from the base (fly_lower_build.h). A
   recast counts the offset in the new elements. */
static void swizzled_view(FlyBuild *b, MlirOperation op, const FlyMemDesc *src, FlySym off, int n,
                          const MlirValue *leaves) {
  MlirType rt = mlirValueGetType(mlirOperationGetResult(op, 0));
  FlySymOps o = fly_build_ops(b);
  FlySym at = fly_sym_add(&o, src->offset, off);
  FlyMemType to;
  if (fly_lower_is(op, "fly.recast") && fly_memtype_read(b->m, rt, &to)) {
    int nb = fly_lower_type_bytes(to.elem), ob = fly_lower_type_bytes(src->type.elem);
    fly_memtype_free(&to);
    if (nb < ob) {
      at = fly_sym_mul(&o, at, fly_sym_const(ob / nb));
    } else if (nb > ob) {
      bool whole = fly_sym_is_const(at) ? at.c % (nb / ob) == 0
                                        : fly_lower_multiple(b, fly_build_sym(b, at), nb / ob);
      if (!whole)
        return fly_build_error(b,
                               "recast to %d-byte elements needs the view to start at a "
                               "multiple of %d bytes of its swizzled tile, which the compiler "
                               "cannot show here",
                               nb, nb);
      at = fly_sym_div(&o, at, fly_sym_const(nb / ob));
    }
  }
  if (!b->failed)
    replace(op, make_swizzled_memref(b, rt, src->ptr, at, n, leaves));
}

static void view(Views *w, FlyBuild *b, MlirOperation op, const Row *row) {
  MlirValue res = mlirOperationGetResult(op, 0);
  MlirType rt = mlirValueGetType(res);
  FlyMemType mt;
  if (!fly_memtype_read(w->m, rt, &mt))
    return fly_build_error(b, "internal error: a malformed !fly.memref type");
  FlyLayout *RL = fly_build_layout(b, mt.layout, NULL, 0);
  int want = RL ? fly_layout_dynamic_count(RL) : -1;
  bool swizzled = mt.swizzled;
  fly_memtype_free(&mt);
  if (b->failed)
    return;
  bool slice = row->kind == SLICE, part = row->kind == COPY_PARTITION || row->kind == MMA_PARTITION;
  int src_at = part ? 2 : 0;
  int n = (int)mlirOperationGetNumOperands(op);
  int first = src_at + 1; /* the result's leaves, after the operands proper */
  char *coord = slice ? fly_lower_str_attr(op, "coord") : NULL;
  FlyTuple *crd = coord ? fly_build_tuple(b, coord, NULL, 0) : NULL;
  if (slice && !crd) {
    free(coord);
    if (!b->failed)
      fly_build_error(b, "internal error: a slice without its coordinate");
    return;
  }
  if (slice)
    first += fly_tuple_dynamic_count(crd);
  if (want < 0 || n - first != want) {
    free(coord);
    return fly_build_error(b,
                           "the layout of this %s has strides or sizes given at launch "
                           "that the compiler does not follow (they are not a number "
                           "times one runtime value); a tensor with more static modes "
                           "avoids this",
                           row->what);
  }
  FlyMemDesc src;
  if (!fly_memdesc_of(b, mlirOperationGetOperand(op, src_at), &src)) {
    free(coord);
    return;
  }
  FlySym off = fly_sym_const(0);
  if (slice) {
    MlirValue vals[64];
    int k = first - 1;
    for (int i = 0; i < k && i < 64; i++)
      vals[i] = mlirOperationGetOperand(op, 1 + i);
    FlySymOps o = fly_build_ops(b);
    FlyTuple *c = k <= 64 ? fly_build_tuple(b, coord, vals, k) : NULL;
    if (c && !fly_sym_crd2idx(&o, c, src.L->shape, src.L->stride, &off))
      fly_build_error(b, "internal error: a coordinate with more modes than its layout");
  } else if (row->kind == COPY_PARTITION) {
    off = copy_offset(b, op, src.L);
  } else if (row->kind == MMA_PARTITION) {
    off = mma_offset(b, op, row->operand, src.L);
  }
  free(coord);
  if (!b->failed) {
    MlirValue leaves[256];
    for (int i = first; i < n && i - first < 256; i++)
      leaves[i - first] = mlirOperationGetOperand(op, i);
    if (src.type.swizzled != swizzled)
      fly_build_error(b, "internal error: a view of a swizzled tile without its swizzle");
    else if (swizzled)
      swizzled_view(b, op, &src, off, n - first, leaves);
    else
      plain_view(w, b, op, &src, off, n - first, leaves);
  }
  fly_memdesc_free(&src);
}

/* ---- int tuples and leaves ------------------------------------------------------------------ */

static void make_int_tuple(Views *w, FlyBuild *b, MlirOperation op) {
  char *text = fly_lower_str_attr(op, "value");
  int n = (int)mlirOperationGetNumOperands(op);
  MlirValue vals[64];
  for (int i = 0; i < n && i < 64; i++)
    vals[i] = mlirOperationGetOperand(op, i);
  Tuple *t = new_tuple(w, mlirOperationGetResult(op, 0));
  if (!t || n > 64 || !(t->tuple = fly_build_tuple(b, text, vals, n)))
    if (!b->failed)
      fly_build_error(b, "internal error: a malformed int tuple");
  free(text);
}

static void make_layout(Views *w, FlyBuild *b, MlirOperation op) {
  Tuple *s = tuple_of(w, mlirOperationGetOperand(op, 0));
  Tuple *d = tuple_of(w, mlirOperationGetOperand(op, 1));
  Tuple *t = s && d ? new_tuple(w, mlirOperationGetResult(op, 0)) : NULL;
  if (!t)
    return fly_build_error(b, "internal error: a layout of unknown tuples");
  t->shape = s->tuple;
  t->stride = d->tuple;
}

static void crd2idx(Views *w, FlyBuild *b, MlirOperation op) {
  Tuple *c = tuple_of(w, mlirOperationGetOperand(op, 0));
  Tuple *l = tuple_of(w, mlirOperationGetOperand(op, 1));
  if (!c || !c->tuple || !l || !l->shape)
    return fly_build_error(b, "internal error: crd2idx of unknown tuples");
  FlySymOps o = fly_build_ops(b);
  FlySym off;
  if (!fly_sym_crd2idx(&o, c->tuple, l->shape, l->stride, &off))
    return fly_build_error(b, "internal error: a coordinate with more modes than its layout");
  mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0), fly_build_sym(b, off));
}

/* The int tuple text of a type !fly.int_tuple<"TEXT"> (malloc'd). */
static char *int_tuple_text(MlirType t) {
  char *text = fly_lower_type_text(t);
  char *open = text ? strchr(text, '"') : NULL, *close = open ? strrchr(text, '"') : NULL;
  char *r = NULL;
  if (close && close > open) {
    *close = 0;
    r = strdup(open + 1);
  }
  free(text);
  return r;
}

static void idx2crd(Views *w, FlyBuild *b, MlirOperation op) {
  Tuple *l = tuple_of(w, mlirOperationGetOperand(op, 1));
  if (!l || !l->shape)
    return fly_build_error(b, "internal error: idx2crd in an unknown layout");
  MlirValue res = mlirOperationGetResult(op, 0);
  char *crd = int_tuple_text(mlirValueGetType(res));
  Tuple *t = new_tuple(w, res);
  if (!t || !(t->tuple = fly_build_tuple(b, crd, NULL, 0))) {
    free(crd);
    if (!b->failed)
      fly_build_error(b, "internal error: a malformed coordinate type");
    return;
  }
  free(crd);
  FlySymOps o = fly_build_ops(b);
  FlySym leaves[256];
  int n = fly_sym_idx2crd(&o, fly_sym_of(mlirOperationGetOperand(op, 0)), l->shape, leaves, 256);
  FlyTuple *out[256];
  int m = fly_tuple_leaves(t->tuple, out, 256);
  if (m != n || m > 256)
    return fly_build_error(b, "internal error: idx2crd's coordinate does not match its shape");
  /* Each leaf takes its value: a `?` its handle, a number stays. */
  for (int i = 0; i < m; i++)
    if (out[i]->kind == FLY_TUPLE_DYNAMIC)
      out[i]->sym = fly_build_sym(b, leaves[i]).ptr;
}

/* The index-th `?` leaf of a tuple. */
static FlySym dyn_leaf(FlyTuple *t, int index, bool *found) {
  FlyTuple *out[1024];
  int n = fly_tuple_leaves(t, out, 1024);
  for (int i = 0, k = 0; i < n && i < 1024; i++)
    if (out[i]->kind == FLY_TUPLE_DYNAMIC && k++ == index) {
      *found = true;
      return fly_sym_leaf(out[i]);
    }
  *found = false;
  return fly_sym_const(0);
}

static void get_leaf(Views *w, FlyBuild *b, MlirOperation op) {
  char *part = fly_lower_str_attr(op, "part");
  int index = (int)fly_lower_int_attr(op, "index", -1);
  MlirValue src = mlirOperationGetOperand(op, 0);
  FlySym leaf = fly_sym_const(0);
  bool found = false;
  if (part && strcmp(part, "value") == 0) {
    Tuple *t = tuple_of(w, src);
    if (t && t->tuple)
      leaf = dyn_leaf(t->tuple, index, &found);
  } else if (part) {
    FlyMemDesc d;
    if (fly_memdesc_of(b, src, &d)) {
      leaf = dyn_leaf(strcmp(part, "shape") == 0 ? d.L->shape : d.L->stride, index, &found);
      fly_memdesc_free(&d);
    }
  }
  free(part);
  if (!found) {
    if (!b->failed)
      fly_build_error(b, "internal error: fly.get_leaf of a leaf that does not exist");
    return;
  }
  replace(op, fly_build_sym(b, leaf));
}

/* ---- the pass ------------------------------------------------------------------------------- */

static bool is_tuple_op(MlirOperation op) {
  const Row *r = row_of(op);
  return r &&
         (r->kind == INT_TUPLE || r->kind == LAYOUT || r->kind == CRD2IDX || r->kind == IDX2CRD);
}

static void rewrite(Views *w, FlyBuild *b, MlirOperation op) {
  const Row *r = row_of(op);
  if (!r)
    return; /* not this pass's: copies, loads, MMAs ... */
  switch (r->kind) {
  case ALLOC_SMEM:
    return alloc_smem(w, b, op);
  case ALLOC_REG:
    return alloc_reg(w, b, op);
  case SLICE:
  case DIVIDE:
  case COPY_PARTITION:
  case MMA_PARTITION:
    return view(w, b, op, r);
  case INT_TUPLE:
    return make_int_tuple(w, b, op);
  case LAYOUT:
    return make_layout(w, b, op);
  case CRD2IDX:
    return crd2idx(w, b, op);
  case IDX2CRD:
    return idx2crd(w, b, op);
  case GET_LEAF:
    return get_leaf(w, b, op);
  }
}

/* Whether the kernels are for AMD, whose private memory is address space 5:
   the gpu.module's target once attached, else the target the tracer wrote
   in each kernel's fly.specialization ("k BLOCK=256 @gfx942"). */
static MlirWalkResult find_amd(MlirOperation op, void *user) {
  bool *amd = user;
  MlirStringRef key = mlirStringRefCreateFromCString(
      fly_lower_is(op, "gpu.module") ? "targets" : "fly.specialization");
  MlirAttribute a = mlirOperationGetAttributeByName(op, key);
  if (mlirAttributeIsNull(a))
    return MlirWalkResultAdvance;
  char *text = fly_lower_attr_text(a);
  *amd = text && (strstr(text, "#rocdl.target") || strstr(text, "@gfx"));
  free(text);
  return MlirWalkResultInterrupt;
}

static bool targets_amd(MlirOperation root) {
  bool amd = false;
  mlirOperationWalk(root, find_amd, &amd, MlirWalkPreOrder);
  return amd;
}

bool fly_lower_layouts(FlyMlir *m, MlirOperation root) {
  Views w = {.m = m, .priv_as = targets_amd(root) ? 5 : 0};
  fly_algebra_init(&w.A);
  FlyOpList list = {NULL, 0, 0, false, is_fly};
  fly_lower_collect(root, &list);
  MlirType i32 = mlirIntegerTypeGet(m->ctx, 32);
  bool ok = !list.failed;
  /* Noted before the rewrites, which destroy the other operations. */
  bool *tuple_op = calloc((size_t)(list.n ? list.n : 1), sizeof *tuple_op);
  for (int i = 0; i < list.n && tuple_op; i++)
    tuple_op[i] = is_tuple_op(list.ops[i]);
  ok = ok && tuple_op;
  for (int i = 0; i < list.n && ok; i++) {
    MlirOperation op = list.ops[i];
    FlyBuild b = {m,   {mlirOperationGetBlock(op), op}, mlirOperationGetLocation(op), i32, false,
                  &w.A};
    rewrite(&w, &b, op);
    ok = !b.failed;
  }
  /* The tuple operations go last, users first. */
  for (int i = list.n - 1; i >= 0 && ok; i--)
    if (tuple_op[i])
      mlirOperationDestroy(list.ops[i]);
  free(tuple_op);
  free(w.tuples);
  fly_algebra_release(&w.A);
  free(list.ops);
  return ok;
}
