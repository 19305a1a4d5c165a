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
#include "fly_lower_build.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

typedef struct Tuple {
  MlirValue v;
  FlyTree *tree;                 /* int tuples */
  const FlyTree *shape, *stride; /* layouts: the trees of their two tuples */
} Tuple;

typedef struct Views {
  FlyMlir *m;
  int priv_as;
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

/* The elements a static layout spans: 1 + the largest offset. */
static int64_t cosize(const FlyLayoutTree *L) {
  FlyTree *sh[1024], *st[1024];
  int n = fly_tree_leaves(L->shape, sh, 1024), m = fly_tree_leaves(L->stride, st, 1024);
  if (n != m || n > 1024)
    return -1;
  int64_t hi = 0;
  for (int i = 0; i < n; i++) {
    if (sh[i]->dyn || st[i]->dyn || st[i]->leaf.c < 0)
      return -1;
    hi += (sh[i]->leaf.c - 1) * st[i]->leaf.c;
  }
  return hi + 1;
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

static MlirType ptr_type(FlyBuild *b, int as) {
  char text[32];
  snprintf(text, sizeof text, "!llvm.ptr<%d>", as);
  return fly_mlir_type(b->m, text);
}

/* ---- allocations ------------------------------------------------------------------------- */

static void alloc_smem(Views *w, FlyBuild *b, MlirOperation op) {
  MlirType rt = mlirValueGetType(mlirOperationGetResult(op, 0));
  FlyMemType mt;
  if (!fly_memtype_read(w->m, rt, &mt))
    return fly_build_error(b, "internal error: a malformed !fly.memref type");
  FlyLayoutTree L;
  if (mt.swizzled || !fly_layout_tree_parse(mt.layout, NULL, 0, &L)) {
    fly_build_error(b, mt.swizzled ? "swizzled shared memory is not lowered yet"
                                   : "internal error: a malformed shared layout");
    fly_memtype_free(&mt);
    return;
  }
  int64_t n = cosize(&L);
  fly_layout_tree_free(&L);
  MlirOperation gm = ancestor(op, "gpu.module");
  if (n <= 0 || mlirOperationIsNull(gm)) {
    fly_memtype_free(&mt);
    return fly_build_error(b, "internal error: a shared tile outside a gpu.module");
  }
  char name[32], text[128];
  snprintf(name, sizeof name, "__fly_smem_%d", w->smem++);
  char *et = fly_lower_type_text(mt.elem);
  snprintf(text, sizeof text, "!llvm.array<%lld x %s>", (long long)n, et ? et : "i8");
  free(et);
  fly_memtype_free(&mt);
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(gm, 0));
  FlyInsert top = {body, mlirBlockGetFirstOperation(body)};
  MlirContext ctx = w->m->ctx;
  MlirNamedAttribute ga[5] = {
      fly_mlir_named(w->m, "addr_space", mlirIntegerAttrGet(mlirIntegerTypeGet(ctx, 32), 3)),
      fly_mlir_named(w->m, "alignment", mlirIntegerAttrGet(mlirIntegerTypeGet(ctx, 64), 16)),
      fly_mlir_named(w->m, "global_type", mlirTypeAttrGet(fly_mlir_type(w->m, text))),
      fly_mlir_named(w->m, "linkage", fly_build_attr(b, "#llvm.linkage<internal>")),
      fly_mlir_named(w->m, "sym_name", fly_mlir_str_attr(w->m, name))};
  MlirRegion init = mlirRegionCreate();
  fly_mlir_op(w->m, top, b->loc, "llvm.mlir.global", 0, NULL, 0, NULL, 5, ga, 1, &init);
  MlirNamedAttribute at = fly_mlir_named(
      w->m, "global_name", mlirFlatSymbolRefAttrGet(ctx, mlirStringRefCreateFromCString(name)));
  MlirValue p = fly_build_op1(b, "llvm.mlir.addressof", ptr_type(b, 3), 0, NULL, 1, &at);
  replace(op, make_memref(b, rt, p, 0, NULL));
}

static void alloc_reg(Views *w, FlyBuild *b, MlirOperation op) {
  MlirType rt = mlirValueGetType(mlirOperationGetResult(op, 0));
  FlyMemType mt;
  if (!fly_memtype_read(w->m, rt, &mt))
    return fly_build_error(b, "internal error: a malformed !fly.memref type");
  FlyLayoutTree L;
  int64_t n = fly_layout_tree_parse(mt.layout, NULL, 0, &L) ? cosize(&L) : -1;
  fly_layout_tree_free(&L);
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
      fly_mlir_named(w->m, "elem_type", mlirTypeAttrGet(mt.elem))};
  fly_memtype_free(&mt);
  MlirValue p = fly_build_op1(&top, "llvm.alloca", ptr_type(b, w->priv_as), 1, &count, 2, a);
  replace(op, make_memref(b, rt, p, 0, NULL));
}

/* ---- views ---------------------------------------------------------------------------------- */

/* The offset of a coordinate (a tree of `_`, numbers and values, or one
   index for a whole mode) in a layout. */
static FlySym coord_offset(FlyBuild *b, const FlyTree *crd, const FlyTree *shape,
                           const FlyTree *stride) {
  if (crd->n < 0)
    return crd->under ? fly_sym_const(0) : fly_tree_crd2idx(b, crd->leaf, shape, stride);
  FlySym off = fly_sym_const(0);
  if (shape->n < crd->n || stride->n < crd->n) {
    fly_build_error(b, "internal error: a coordinate with more modes than its layout");
    return off;
  }
  for (int i = 0; i < crd->n; i++)
    off = fly_sym_add(b, off, coord_offset(b, crd->e[i], shape->e[i], stride->e[i]));
  return off;
}

/* Mode i of a layout, or the layout itself when it is a leaf and i is 0. */
static const FlyTree *mode(const FlyTree *t, int i) {
  if (t->n < 0)
    return i == 0 ? t : NULL;
  return i < t->n ? t->e[i] : NULL;
}

/* The offset of tile coordinate crd[0..r) in the source: each coordinate is
   an index into the source's mode of the same position. */
static FlySym tile_offset(FlyBuild *b, const FlySym *crd, int r, const FlyLayoutTree *src) {
  FlySym off = fly_sym_const(0);
  for (int i = 0; i < r; i++) {
    const FlyTree *s = mode(src->shape, i), *d = mode(src->stride, i);
    if (!s || !d) {
      fly_build_error(b, "internal error: a tile with more modes than its tensor");
      break;
    }
    off = fly_sym_add(b, off, fly_tree_crd2idx(b, crd[i], s, d));
  }
  return off;
}

/* A tiled copy's thread starts at the element its first value takes: the
   TV layout's thread mode gives an index in the tile, column-major. */
static FlySym copy_offset(FlyBuild *b, MlirOperation op, const FlyLayoutTree *src) {
  MlirOperation def = fly_lower_atom_op(mlirOperationGetOperand(op, 0));
  char *tv = mlirOperationIsNull(def) ? NULL : fly_lower_str_attr(def, "tv");
  char *tile = mlirOperationIsNull(def) ? NULL : fly_lower_str_attr(def, "tile");
  FlyLayoutTree T = {0};
  const char *s = tile;
  int next = 0;
  FlyTree *tt = tile ? fly_tree_parse(&s, NULL, 0, &next) : NULL;
  FlySym off = fly_sym_const(0);
  if (!tt || !tv || !fly_layout_tree_parse(tv, NULL, 0, &T) || T.shape->n < 1) {
    fly_build_error(b, "internal error: a malformed tiled copy type");
  } else {
    FlySym thr = {mlirOperationGetOperand(op, 1), 0};
    FlySym k = fly_tree_crd2idx(b, thr, T.shape->e[0], T.stride->e[0]);
    FlySym crd[64];
    int r = 0;
    if (tt->n < 0)
      crd[r++] = k;
    else if (tt->n <= 64)
      fly_tree_idx2crd(b, k, tt, crd, &r);
    off = tile_offset(b, crd, r, src);
  }
  fly_layout_tree_free(&T);
  fly_tree_free(tt);
  free(tv);
  free(tile);
  return off;
}

/* A tiled MMA's thread: its lane's first value in the atom's tile of the
   operand, plus its warp's tile (the warps laid out by the tiled MMA's
   layout, column-major). */
static FlySym mma_offset(FlyBuild *b, MlirOperation op, char operand, const FlyLayoutTree *src) {
  MlirValue mma = mlirOperationGetOperand(op, 0);
  const FlyAtom *atom = fly_lower_atom(mma);
  char *warps = atom ? fly_lower_str_attr(fly_lower_atom_op(mma), "atoms") : NULL;
  FlyLayoutTree T = {0}, W = {0};
  FlySym off = fly_sym_const(0);
  if (!atom || !warps || !fly_layout_tree_parse(atom->tv[operand - 'A'], NULL, 0, &T) ||
      !fly_layout_tree_parse(warps, NULL, 0, &W)) {
    fly_build_error(b, "internal error: a malformed tiled MMA type");
    goto done;
  }
  /* The warps' layout must be compact and column-major, as tiled_mma makes it. */
  FlyTree *ws[3], *wd[3];
  int nw = fly_tree_leaves(W.shape, ws, 3);
  if (nw > 3 || fly_tree_leaves(W.stride, wd, 3) != nw) {
    fly_build_error(b, "internal error: a malformed tiled MMA layout");
    goto done;
  }
  int64_t expect = 1;
  for (int i = 0; i < nw; i++) {
    if (ws[i]->leaf.c != 1 && wd[i]->leaf.c != expect) {
      fly_build_error(b, "a tiled MMA whose warps are not laid out column-major is not "
                         "lowered yet");
      goto done;
    }
    expect *= ws[i]->leaf.c;
  }
  int64_t wm = nw > 0 ? ws[0]->leaf.c : 1;
  FlySym thr = {mlirOperationGetOperand(op, 1), 0};
  FlySym lane = fly_sym_rem(b, thr, fly_sym_const(atom->threads));
  FlySym warp = fly_sym_div(b, thr, fly_sym_const(atom->threads));
  FlySym warp_m = fly_sym_rem(b, warp, fly_sym_const(wm));
  FlySym warp_n = fly_sym_rem(b, fly_sym_div(b, warp, fly_sym_const(wm)),
                              fly_sym_const(nw > 1 ? ws[1]->leaf.c : 1));
  int64_t rows = operand == 'B' ? atom->n : atom->m, cols = operand == 'C' ? atom->n : atom->k;
  FlySym k = fly_tree_crd2idx(b, lane, T.shape->e[0], T.stride->e[0]);
  FlySym crd[2] = {fly_sym_rem(b, k, fly_sym_const(rows)), fly_sym_div(b, k, fly_sym_const(rows))};
  FlySym wr = operand == 'B' ? warp_n : warp_m;
  crd[0] = fly_sym_add(b, crd[0], fly_sym_mul(b, wr, fly_sym_const(rows)));
  if (operand == 'C')
    crd[1] = fly_sym_add(b, crd[1], fly_sym_mul(b, warp_n, fly_sym_const(cols)));
  off = tile_offset(b, crd, 2, src);
done:
  fly_layout_tree_free(&T);
  fly_layout_tree_free(&W);
  free(warps);
  return off;
}

static void view(Views *w, FlyBuild *b, MlirOperation op, const char *name) {
  MlirValue res = mlirOperationGetResult(op, 0);
  MlirType rt = mlirValueGetType(res);
  FlyMemType mt;
  if (!fly_memtype_read(w->m, rt, &mt))
    return fly_build_error(b, "internal error: a malformed !fly.memref type");
  int want = mt.swizzled ? -1 : fly_lower_count_dyn(mt.layout);
  fly_memtype_free(&mt);
  bool slice = strcmp(name, "slice") == 0, part = strncmp(name, "partition_", 10) == 0;
  int src_at = part ? 2 : 0;
  int n = (int)mlirOperationGetNumOperands(op);
  int first = src_at + 1; /* the result's leaves, after the operands proper */
  char *coord = slice ? fly_lower_str_attr(op, "coord") : NULL;
  if (slice)
    first += coord ? fly_lower_count_dyn(coord) : 0;
  if (want < 0 || n - first != want) {
    free(coord);
    return fly_build_error(b,
                           "the layout of this %s has strides or sizes given at launch "
                           "that the compiler does not follow (they are not a number "
                           "times one runtime value); a tensor with more static modes "
                           "avoids this",
                           name);
  }
  FlyMemDesc src;
  if (!fly_memdesc_of(b, mlirOperationGetOperand(op, src_at), &src)) {
    free(coord);
    return;
  }
  FlySym off = fly_sym_const(0);
  if (slice) {
    MlirValue vals[64];
    int k = first - 1, next = 0;
    for (int i = 0; i < k && i < 64; i++)
      vals[i] = mlirOperationGetOperand(op, 1 + i);
    const char *s = coord ? coord : "";
    FlyTree *c = k <= 64 ? fly_tree_parse(&s, vals, k, &next) : NULL;
    if (!c)
      fly_build_error(b, "internal error: a malformed slice coordinate");
    else
      off = coord_offset(b, c, src.L.shape, src.L.stride);
    fly_tree_free(c);
  } else if (part && (name[10] == 's' || name[10] == 'd') && name[11] == 0) {
    off = copy_offset(b, op, &src.L);
  } else if (part) {
    off = mma_offset(b, op, (char)(name[10] - 'a' + 'A'), &src.L);
  }
  free(coord);
  if (!b->failed) {
    MlirValue leaves[256];
    for (int i = first; i < n && i - first < 256; i++)
      leaves[i - first] = mlirOperationGetOperand(op, i);
    MlirValue p = fly_build_gep(b, src.ptr, src.type.elem, off);
    replace(op, make_memref(b, rt, p, n - first, leaves));
  }
  fly_memdesc_free(&src);
}

/* ---- int tuples and leaves ------------------------------------------------------------------ */

static void make_int_tuple(Views *w, FlyBuild *b, MlirOperation op) {
  char *text = fly_lower_str_attr(op, "value");
  int n = (int)mlirOperationGetNumOperands(op), next = 0;
  MlirValue vals[64];
  for (int i = 0; i < n && i < 64; i++)
    vals[i] = mlirOperationGetOperand(op, i);
  const char *s = text ? text : "";
  Tuple *t = new_tuple(w, mlirOperationGetResult(op, 0));
  if (!t || n > 64 || !(t->tree = fly_tree_parse(&s, vals, n, &next)))
    fly_build_error(b, "internal error: a malformed int tuple");
  free(text);
}

static void make_layout(Views *w, FlyBuild *b, MlirOperation op) {
  Tuple *s = tuple_of(w, mlirOperationGetOperand(op, 0));
  Tuple *d = tuple_of(w, mlirOperationGetOperand(op, 1));
  Tuple *t = s && d ? new_tuple(w, mlirOperationGetResult(op, 0)) : NULL;
  if (!t)
    return fly_build_error(b, "internal error: a layout of unknown tuples");
  t->shape = s->tree;
  t->stride = d->tree;
}

static void crd2idx(Views *w, FlyBuild *b, MlirOperation op) {
  Tuple *c = tuple_of(w, mlirOperationGetOperand(op, 0));
  Tuple *l = tuple_of(w, mlirOperationGetOperand(op, 1));
  if (!c || !c->tree || !l || !l->shape)
    return fly_build_error(b, "internal error: crd2idx of unknown tuples");
  FlySym off = coord_offset(b, c->tree, l->shape, l->stride);
  if (!b->failed)
    mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0), fly_sym_value(b, off));
}

static void idx2crd(Views *w, FlyBuild *b, MlirOperation op) {
  Tuple *l = tuple_of(w, mlirOperationGetOperand(op, 1));
  if (!l || !l->shape)
    return fly_build_error(b, "internal error: idx2crd in an unknown layout");
  MlirValue res = mlirOperationGetResult(op, 0);
  char *text = fly_lower_type_text(mlirValueGetType(res));
  char *crd = text ? fly_lower_quoted(text, 0) : NULL;
  free(text);
  const char *s = crd ? crd : "";
  int next = 0;
  Tuple *t = new_tuple(w, res);
  FlySym leaves[256];
  int n = 0;
  FlySym idx = {mlirOperationGetOperand(op, 0), 0};
  if (t && (t->tree = fly_tree_parse(&s, NULL, 0, &next))) {
    fly_tree_idx2crd(b, idx, l->shape, leaves, &n);
    FlyTree *out[256];
    int m = fly_tree_leaves(t->tree, out, 256);
    if (m != n || m > 256)
      fly_build_error(b, "internal error: idx2crd's coordinate does not match its shape");
    for (int i = 0; i < m && i < n; i++)
      out[i]->leaf = leaves[i];
  } else {
    fly_build_error(b, "internal error: a malformed coordinate type");
  }
  free(crd);
}

/* The index-th `?` leaf of a tree. */
static FlySym dyn_leaf(FlyTree *t, int index, bool *found) {
  FlyTree *out[1024];
  int n = fly_tree_leaves(t, out, 1024);
  for (int i = 0, k = 0; i < n && i < 1024; i++)
    if (out[i]->dyn && k++ == index) {
      *found = true;
      return out[i]->leaf;
    }
  *found = false;
  return fly_sym_const(0);
}

static void get_leaf(Views *w, FlyBuild *b, MlirOperation op) {
  char *part = fly_lower_str_attr(op, "part");
  MlirAttribute ia = mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("index"));
  int index = mlirAttributeIsNull(ia) ? -1 : (int)mlirIntegerAttrGetValueInt(ia);
  MlirValue src = mlirOperationGetOperand(op, 0);
  FlySym leaf = fly_sym_const(0);
  bool found = false;
  if (part && strcmp(part, "value") == 0) {
    Tuple *t = tuple_of(w, src);
    if (t && t->tree)
      leaf = dyn_leaf(t->tree, index, &found);
  } else if (part) {
    FlyMemDesc d;
    if (fly_memdesc_of(b, src, &d)) {
      leaf = dyn_leaf(strcmp(part, "shape") == 0 ? d.L.shape : d.L.stride, index, &found);
      fly_memdesc_free(&d);
    }
  }
  free(part);
  if (!found) {
    if (!b->failed)
      fly_build_error(b, "internal error: fly.get_leaf of a leaf that does not exist");
    return;
  }
  replace(op, fly_sym_value(b, leaf));
}

/* ---- the pass ------------------------------------------------------------------------------- */

static bool is_tuple_op(MlirOperation op) {
  return fly_lower_is(op, "fly.make_int_tuple") || fly_lower_is(op, "fly.make_layout") ||
         fly_lower_is(op, "fly.crd2idx") || fly_lower_is(op, "fly.idx2crd");
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
  Views w = {m, targets_amd(root) ? 5 : 0, NULL, 0, 0, 0};
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
    FlyBuild b = {m, {mlirOperationGetBlock(op), op}, mlirOperationGetLocation(op), i32, false};
    MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(op));
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)n.length - 4, n.data + 4);
    if (strcmp(name, "alloc_smem") == 0)
      alloc_smem(&w, &b, op);
    else if (strcmp(name, "alloc_reg") == 0 || strncmp(name, "partition_fragment_", 19) == 0)
      alloc_reg(&w, &b, op);
    else if (strcmp(name, "slice") == 0 || strstr(name, "_divide") ||
             strncmp(name, "partition_", 10) == 0)
      view(&w, &b, op, name);
    else if (strcmp(name, "make_int_tuple") == 0)
      make_int_tuple(&w, &b, op);
    else if (strcmp(name, "make_layout") == 0)
      make_layout(&w, &b, op);
    else if (strcmp(name, "crd2idx") == 0)
      crd2idx(&w, &b, op);
    else if (strcmp(name, "idx2crd") == 0)
      idx2crd(&w, &b, op);
    else if (strcmp(name, "get_leaf") == 0)
      get_leaf(&w, &b, op);
    ok = !b.failed;
  }
  /* The tuple operations go last, users first. */
  for (int i = list.n - 1; i >= 0 && ok; i--)
    if (tuple_op[i])
      mlirOperationDestroy(list.ops[i]);
  free(tuple_op);
  for (int i = 0; i < w.ntuples; i++)
    fly_tree_free(w.tuples[i].tree);
  free(w.tuples);
  free(list.ops);
  return ok;
}
