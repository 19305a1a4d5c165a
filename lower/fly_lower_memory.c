/* fly_lower_memory.c — copies, loads and stores of the target pass
 * (fly_lower_target.h).
 *
 * After fly-layout-lowering every memref is a pointer and a layout whose
 * strides are numbers or runtime leaves, and data-moving operations see
 * static shapes. So a copy is unrolled here element by element, offsets
 * as c + sum(k * leaf); runs of elements that are contiguous on both sides
 * and as long as the atom's access become one vector load and store (the
 * 128-bit accesses that make copies fast), the rest scalar ones. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fly_lower_target.h"
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
  FlyTuple *sh[256], *st[256];
  int r = fly_tuple_leaves(d->L->shape, sh, 256);
  if (r > 256 || fly_tuple_leaves(d->L->stride, st, 256) != r) {
    fly_build_error(b, "internal error: a layout whose shape and stride differ");
    return false;
  }
  int64_t n = 1;
  for (int i = 0; i < r; i++) {
    if (sh[i]->kind == FLY_TUPLE_DYNAMIC) {
      fly_build_error(b, "this operation needs a tensor whose shape is known at compile time");
      return false;
    }
    n *= sh[i]->value;
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
      int64_t c = rest % sh[j]->value;
      rest /= sh[j]->value;
      if (!c)
        continue;
      if (st[j]->kind != FLY_TUPLE_DYNAMIC)
        l->c += c * st[j]->value;
      else if (!lin_add_term(l, (MlirValue){st[j]->sym}, c)) {
        free(e->off);
        fly_build_error(b, "a layout with too many runtime strides to unroll");
        return false;
      }
    }
  }
  return true;
}

/* The pointer to an element; runtime parts are shared through a cache of
   the last few term lists, which is what repeated tiles look like. In a
   swizzled tile the cache keeps the offsets before the swizzle, and
   fly_lower_swizzle.c makes the address. */
typedef struct Ptrs {
  MlirValue base;
  MlirType elem;
  Lin key[8];
  MlirValue val[8];
  int n, next;
  bool swizzled;
  FlySym origin; /* a swizzled view's offset in its tile */
  FlySwizzledPtrs sw;
} Ptrs;

static void ptrs_init(Ptrs *p, const FlyMemDesc *d, MlirType elem) {
  memset(p, 0, sizeof *p);
  p->base = d->ptr;
  p->elem = elem;
  p->swizzled = d->type.swizzled;
  p->origin = d->offset;
  p->sw.base = d->ptr;
  p->sw.elem = elem;
  p->sw.s = d->type.swizzle;
}

static MlirValue ptr_at(FlyBuild *b, Ptrs *p, const Lin *l) {
  MlirValue base = p->base;
  FlySym x = p->origin;
  if (l->n) {
    int hit = -1;
    for (int i = 0; i < p->n; i++)
      if (lin_same_terms(&p->key[i], l))
        hit = i;
    if (hit < 0) {
      FlySymOps o = fly_build_ops(b);
      FlySym s = fly_sym_const(0);
      for (int i = 0; i < l->n; i++)
        s = fly_sym_add(&o, s, fly_sym_mul(&o, fly_sym_of(l->v[i]), fly_sym_const(l->k[i])));
      hit = p->next;
      p->key[hit] = *l;
      p->val[hit] = p->swizzled ? fly_build_sym(b, fly_sym_add(&o, p->origin, s))
                                : fly_build_gep(b, p->base, p->elem, s);
      p->next = (p->next + 1) % 8;
      if (p->n < 8)
        p->n++;
    }
    base = p->val[hit];
    x = fly_sym_of(base);
  }
  if (p->swizzled)
    return fly_build_swizzled_ptr(b, &p->sw, x, l->c);
  return fly_build_gep(b, base, p->elem, fly_sym_const(l->c));
}

/* The most elements one access of p may take: a swizzle keeps runs of
   2^M consecutive (fly_swizzle_run). */
static int run_cap(const Ptrs *p, int v) {
  int cap = p->swizzled ? fly_swizzle_run(p->sw.s) : v;
  return cap < v ? cap : v;
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

/* ---- copies, loads and stores
 * --------------------------------------------------------------- */

/* Whether elements i .. i+w-1 share one predicate (the predicate's layout
   gives them one element, as a predicate per vector does). */
static bool one_pred(const Elems *p, int i, int w) {
  for (int t = 1; t < w; t++)
    if (!lin_same_terms(&p->off[i], &p->off[i + t]) || p->off[i + t].c != p->off[i].c)
      return false;
  return true;
}

/* w copies of x, as a vector (x itself when w is 1). */
static MlirValue splat(FlyBuild *b, MlirValue x, int w, MlirType elem) {
  if (w == 1)
    return x;
  MlirValue v = fly_build_op1(b, "llvm.mlir.poison", fly_vec_type(w, elem), 0, NULL, 0, NULL);
  for (int i = 0; i < w; i++)
    v = fly_build_insert(b, v, x, i);
  return v;
}

/* `if (p) { *to = *from } else { *to = fill }` for one access of type t
   (no else without a fill): scf.if, made into branches later, so a masked
   element's address is never touched. */
static void masked_move(FlyBuild *b, MlirValue p, MlirType t, MlirValue from, MlirValue to,
                        int align, MlirValue fill) {
  MlirRegion r[2] = {mlirRegionCreate(), mlirRegionCreate()};
  for (int k = 0; k < (mlirValueIsNull(fill) ? 1 : 2); k++) {
    MlirBlock blk = mlirBlockCreate(0, NULL, NULL);
    mlirRegionAppendOwnedBlock(r[k], blk);
    FlyBuild in = *b;
    in.ip = (FlyInsert){blk, {NULL}};
    MlirValue x = k == 0 ? fly_build_load(&in, t, from, align) : fill;
    fly_build_store(&in, x, to, align);
    fly_mlir_op(b->m, in.ip, b->loc, "scf.yield", 0, NULL, 0, NULL, 0, NULL, 0, NULL);
  }
  fly_mlir_op(b->m, b->ip, b->loc, "scf.if", 0, NULL, 1, &p, 0, NULL, 2, r);
}

/* Whether v is a constant 0 (of any type; +0.0 for a float). */
static bool is_zero(MlirValue v) {
  while (mlirValueIsAOpResult(v) && (fly_lower_is(mlirOpResultGetOwner(v), "arith.bitcast") ||
                                     fly_lower_is(mlirOpResultGetOwner(v), "llvm.bitcast")))
    v = mlirOperationGetOperand(mlirOpResultGetOwner(v), 0);
  if (!mlirValueIsAOpResult(v) || !fly_lower_is(mlirOpResultGetOwner(v), "arith.constant"))
    return false;
  MlirAttribute a = mlirOperationGetAttributeByName(mlirOpResultGetOwner(v),
                                                    mlirStringRefCreateFromCString("value"));
  if (mlirAttributeIsAInteger(a))
    return mlirIntegerAttrGetValueInt(a) == 0;
  if (mlirAttributeIsAFloat(a)) {
    double x = mlirFloatAttrGetValueDouble(a);
    return x == 0.0 && !signbit(x);
  }
  return false;
}

/* One access of w elements through AMD's buffer resource r: a load from
   global `from` into `to`, or a store of `from` into global `to`. A masked
   element (p false) is an offset past the tensor, which loads 0 and drops
   the store; so a load with fill 0 needs nothing more, another fill is
   selected in, and without fill the destination keeps its value. */
static void buffer_move(FlyBuild *b, const FlyBufferRsrc *r, bool load, MlirType t, MlirValue from,
                        MlirValue to, int w, int bytes, MlirValue p, MlirValue fill) {
  MlirType elem = fly_elem_of(t);
  MlirValue keep = {NULL};
  if (!mlirValueIsNull(p) && !mlirValueIsNull(fill))
    keep = is_zero(fill) && load ? keep : splat(b, fill, w, elem);
  else if (!mlirValueIsNull(p) && load)
    keep = fly_build_load(b, t, to, w * bytes);
  if (load) {
    MlirValue x = fly_lower_buffer_load(b, r, from, t, w * bytes, p);
    if (!mlirValueIsNull(keep)) {
      MlirValue v[3] = {p, x, keep};
      x = fly_build_op1(b, "arith.select", t, 3, v, 0, NULL);
    }
    fly_build_store(b, x, to, w * bytes);
    return;
  }
  MlirValue x = fly_build_load(b, t, from, w * bytes);
  if (!mlirValueIsNull(keep)) { /* a fill is stored where p is false */
    MlirValue v[3] = {p, x, keep};
    x = fly_build_op1(b, "arith.select", t, 3, v, 0, NULL);
    p = (MlirValue){NULL};
  }
  fly_lower_buffer_store(b, r, to, x, w * bytes, p);
}

/* ---- warp-wide matrix copies ---- */

/* Register elements i and i+1 as one i32 (ldmatrix's and stmatrix's unit). */
static MlirValue reg_pair_load(FlyBuild *b, Ptrs *p, const Elems *e, int i, int bytes) {
  MlirType pair = fly_vec_type(2, p->elem);
  MlirValue v;
  if (run_of(e, i, 2)) {
    v = fly_build_load(b, pair, ptr_at(b, p, &e->off[i]), 2 * bytes);
  } else {
    v = fly_build_op1(b, "llvm.mlir.poison", pair, 0, NULL, 0, NULL);
    for (int t = 0; t < 2; t++)
      v = fly_build_insert(b, v, fly_build_load(b, p->elem, ptr_at(b, p, &e->off[i + t]), bytes),
                           t);
  }
  return fly_build_op1(b, "llvm.bitcast", b->i32, 1, &v, 0, NULL);
}

static void reg_pair_store(FlyBuild *b, Ptrs *p, const Elems *e, int i, int bytes, MlirValue x) {
  MlirValue v = fly_build_op1(b, "llvm.bitcast", fly_vec_type(2, p->elem), 1, &x, 0, NULL);
  if (run_of(e, i, 2)) {
    fly_build_store(b, v, ptr_at(b, p, &e->off[i]), 2 * bytes);
    return;
  }
  for (int t = 0; t < 2; t++)
    fly_build_store(b, fly_build_extract(b, v, t, p->elem), ptr_at(b, p, &e->off[i + t]), bytes);
}

/* ldmatrix or stmatrix over a thread's partitions: instruction k takes
   the 16-byte row of shared elements 8k..8k+7 (this lane's address) and
   register elements 2*matrices*k.. (two a matrix), as the tiled copy laid
   them out. */
static void matrix_copy(FlyBuild *b, const FlyAtom *atom, const FlyMemDesc *s, const FlyMemDesc *d,
                        const Elems *es, const Elems *ed, MlirType elem, int bytes) {
  int matrices;
  bool trans, ld = atom->copy == FLY_COPY_LDMATRIX;
  if (!fly_lower_matrix_shape(b, atom, &matrices, &trans))
    return;
  const FlyMemDesc *sm = ld ? s : d, *rm = ld ? d : s;
  const Elems *erow = ld ? es : ed, *ereg = ld ? ed : es;
  int per = 2 * matrices;
  if (erow->n % 8 || ereg->n != erow->n / 8 * per)
    return fly_build_error(b,
                           "%s moves 8 shared elements a lane for every %d in registers, but "
                           "this copy has %d and %d",
                           atom->name, per, erow->n, ereg->n);
  Ptrs prow, preg;
  ptrs_init(&prow, sm, elem);
  ptrs_init(&preg, rm, elem);
  for (int k = 0; k < erow->n / 8 && !b->failed; k++) {
    if (!run_of(erow, 8 * k, 8) || run_cap(&prow, 8) < 8)
      return fly_build_error(b,
                             "%s needs rows of 8 consecutive 16-bit elements in shared memory, "
                             "but elements %d..%d of this thread's part are not%s",
                             atom->name, 8 * k, 8 * k + 7,
                             prow.swizzled ? " (or the swizzle breaks them)" : "");
    MlirValue row = ptr_at(b, &prow, &erow->off[8 * k]);
    if (!fly_lower_aligned(b, row, 16))
      return fly_build_error(b,
                             "%s needs each row at a multiple of 16 bytes, which the compiler "
                             "cannot show for elements %d..%d of this thread's part",
                             atom->name, 8 * k, 8 * k + 7);
    MlirValue r[4];
    if (ld) {
      if (!fly_lower_ldmatrix(b, row, matrices, trans, r))
        return;
      for (int q = 0; q < matrices; q++)
        reg_pair_store(b, &preg, ereg, per * k + 2 * q, bytes, r[q]);
    } else {
      for (int q = 0; q < matrices; q++)
        r[q] = reg_pair_load(b, &preg, ereg, per * k + 2 * q, bytes);
      fly_lower_stmatrix(b, row, matrices, trans, r);
    }
  }
}

void fly_lower_copy(FlyBuild *b, MlirOperation op) {
  MlirValue av = mlirOperationGetOperand(op, 0);
  const FlyAtom *atom = fly_lower_atom(av);
  if (!atom || atom->kind != FLY_ATOM_COPY)
    return fly_build_error(b, "internal error: a copy whose atom is unknown");
  int bits = (int)fly_lower_int_attr(fly_lower_atom_op(av), "bits", 0);
  bool async = atom->copy == FLY_COPY_CP_ASYNC, matrix = fly_atom_is_matrix(atom);
  bool buffer = atom->copy == FLY_COPY_BUFFER;
  if ((atom->copy != FLY_COPY_UNIVERSAL && !async && !matrix && !buffer) || bits <= 0)
    return fly_build_error(b, "the copy atom %s is not lowered yet", atom->name);
  intptr_t nops = mlirOperationGetNumOperands(op);
  bool predicated = nops >= 4;
  FlyMemDesc s, d, pd = {0};
  if (!fly_memdesc_of(b, mlirOperationGetOperand(op, 1), &s))
    return;
  if (!fly_memdesc_of(b, mlirOperationGetOperand(op, 2), &d)) {
    fly_memdesc_free(&s);
    return;
  }
  if (predicated && !fly_memdesc_of(b, mlirOperationGetOperand(op, 3), &pd)) {
    fly_memdesc_free(&s);
    fly_memdesc_free(&d);
    return;
  }
  Elems es = {0}, ed = {0}, ep = {0};
  int bytes = fly_lower_type_bytes(s.type.elem);
  MlirType elem = fly_lower_storage_type(s.type.elem); /* bytes are bytes */
  MlirValue fill = {NULL};
  if (nops >= 5)
    fill = fly_build_bitcast(b, mlirOperationGetOperand(op, 4), elem);
  if (elems_of(b, &s, &es) && elems_of(b, &d, &ed) && (!predicated || elems_of(b, &pd, &ep))) {
    if (matrix) {
      matrix_copy(b, atom, &s, &d, &es, &ed, elem, bytes);
    } else if (es.n != ed.n || (predicated && ep.n != es.n)) {
      fly_build_error(b, "copy between tensors of %d and %d elements", es.n, ed.n);
    } else {
      int v = bytes ? bits / (8 * bytes) : 1;
      if (v < 1)
        v = 1;
      Ptrs ps, pdst, pp;
      ptrs_init(&ps, &s, elem);
      ptrs_init(&pdst, &d, elem);
      ptrs_init(&pp, &pd, predicated ? fly_lower_storage_type(pd.type.elem) : elem);
      v = run_cap(&pdst, run_cap(&ps, v));
      FlyBufferRsrc rs;
      bool load = atom->id == FLY_ATOM_AMD_BUFFER_LOAD;
      if (buffer && !fly_lower_buffer_rsrc(b, atom, load ? s.ptr : d.ptr, &rs))
        es.n = 0;
      for (int i = 0; i < es.n;) {
        int w = v > 1 && i % v == 0 && run_of(&es, i, v) && run_of(&ed, i, v) ? v : 1;
        /* A predicate per element splits a vector; one per vector keeps it. */
        if (predicated && !one_pred(&ep, i, w))
          w = 1;
        MlirValue from = ptr_at(b, &ps, &es.off[i]), to = ptr_at(b, &pdst, &ed.off[i]);
        /* As wide as both addresses are provably aligned for (the proof
           records what it assumes of the kernel's arguments). */
        while (w > 1 &&
               !(fly_lower_aligned(b, from, (int64_t)w * bytes) &&
                 fly_lower_aligned(b, to, (int64_t)w * bytes) &&
                 (!async || ((atom->widths >> __builtin_ctz((unsigned)(w * bytes * 8))) & 1u))))
          w /= 2;
        MlirType t = w > 1 ? fly_vec_type(w, elem) : elem;
        if (buffer) {
          MlirValue p = {NULL};
          if (predicated)
            p = fly_build_load(b, pp.elem, ptr_at(b, &pp, &ep.off[i]), 1);
          buffer_move(b, &rs, load, t, from, to, w, bytes, p, fill);
        } else if (async) {
          MlirValue p = {NULL};
          if (predicated)
            p = fly_build_load(b, pp.elem, ptr_at(b, &pp, &ep.off[i]), 1);
          if (!fly_lower_cp_async(b, atom, to, from, w * bytes, p, !mlirValueIsNull(fill)))
            break;
        } else if (predicated) {
          MlirValue p = fly_build_load(b, pp.elem, ptr_at(b, &pp, &ep.off[i]), 1);
          MlirValue f = mlirValueIsNull(fill) ? fill : splat(b, fill, w, elem);
          masked_move(b, p, t, from, to, w * bytes, f);
        } else {
          MlirValue x = fly_build_load(b, t, from, w * bytes);
          fly_build_store(b, x, to, w * bytes);
        }
        i += w;
      }
    }
  }
  free(es.off);
  free(ed.off);
  free(ep.off);
  fly_memdesc_free(&s);
  fly_memdesc_free(&d);
  if (predicated)
    fly_memdesc_free(&pd);
  if (!b->failed)
    mlirOperationDestroy(op);
}

static bool is_vector(MlirType t) { return mlirTypeIsAVector(t); }

/* In a swizzled tile, one access from element i on: the pointer, and the
   elements it takes, as many as are consecutive, kept so by the swizzle
   and provably aligned for. */
static int swizzled_access(FlyBuild *b, Ptrs *p, const Elems *e, int i, int bytes, MlirValue *ptr) {
  int w = 1;
  while (w * 2 <= run_cap(p, e->n - i) && w * 2 <= 64)
    w *= 2;
  while (w > 1 && (i % w || !run_of(e, i, w)))
    w /= 2;
  *ptr = ptr_at(b, p, &e->off[i]);
  while (w > 1 && !fly_lower_aligned(b, *ptr, (int64_t)w * bytes))
    w /= 2;
  return w;
}

/* load() of a swizzled tile of e.n > 1 elements: one access per run. */
static MlirValue swizzled_load(FlyBuild *b, Ptrs *p, const Elems *e, MlirType rt, MlirType elem,
                               int bytes) {
  MlirValue r = fly_build_op1(b, "llvm.mlir.poison", rt, 0, NULL, 0, NULL), ptr;
  for (int i = 0, w; i < e->n; i += w) {
    w = swizzled_access(b, p, e, i, bytes, &ptr);
    if (w == e->n)
      return fly_build_load(b, rt, ptr, w * bytes);
    MlirValue v = fly_build_load(b, w > 1 ? fly_vec_type(w, elem) : elem, ptr, w * bytes);
    for (int t = 0; t < w; t++)
      r = fly_build_insert(b, r, w > 1 ? fly_build_extract(b, v, t, elem) : v, i + t);
  }
  return r;
}

static void swizzled_store(FlyBuild *b, Ptrs *p, const Elems *e, MlirValue x, MlirType elem,
                           int bytes) {
  MlirValue ptr;
  for (int i = 0, w; i < e->n; i += w) {
    w = swizzled_access(b, p, e, i, bytes, &ptr);
    int idx[64];
    for (int t = 0; t < w && t < 64; t++)
      idx[t] = i + t;
    fly_build_store(b, fly_build_pick(b, x, idx, w, elem), ptr, w * bytes);
  }
}

/* A tensor's values as one vector (or the value of its one element). */
void fly_lower_load(FlyBuild *b, MlirOperation op) {
  FlyMemDesc d;
  if (!fly_memdesc_of(b, mlirOperationGetOperand(op, 0), &d))
    return;
  MlirType result = mlirValueGetType(mlirOperationGetResult(op, 0));
  MlirType rt = fly_lower_storage_type(result), elem = fly_lower_storage_type(d.type.elem);
  Elems e = {0};
  int bytes = fly_lower_type_bytes(d.type.elem);
  MlirValue r = {NULL};
  if (elems_of(b, &d, &e)) {
    Ptrs p;
    ptrs_init(&p, &d, elem);
    if (!is_vector(rt)) {
      r = fly_build_load(b, rt, ptr_at(b, &p, &e.off[0]), bytes);
    } else if (p.swizzled) {
      r = swizzled_load(b, &p, &e, rt, elem, bytes);
    } else if (run_of(&e, 0, e.n)) {
      r = fly_build_load(b, rt, ptr_at(b, &p, &e.off[0]), bytes);
    } else {
      r = fly_build_op1(b, "llvm.mlir.poison", rt, 0, NULL, 0, NULL);
      for (int i = 0; i < e.n; i++)
        r = fly_build_insert(b, r, fly_build_load(b, elem, ptr_at(b, &p, &e.off[i]), bytes), i);
    }
    r = fly_build_bitcast(b, r, result);
  }
  free(e.off);
  fly_memdesc_free(&d);
  if (!b->failed) {
    mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0), r);
    mlirOperationDestroy(op);
  }
}

void fly_lower_store(FlyBuild *b, MlirOperation op) {
  MlirValue x = mlirOperationGetOperand(op, 0);
  FlyMemDesc d;
  if (!fly_memdesc_of(b, mlirOperationGetOperand(op, 1), &d))
    return;
  Elems e = {0};
  int bytes = fly_lower_type_bytes(d.type.elem);
  if (elems_of(b, &d, &e)) {
    MlirType elem = fly_lower_storage_type(d.type.elem);
    Ptrs p;
    ptrs_init(&p, &d, elem);
    x = fly_build_bitcast(b, x, fly_lower_storage_type(mlirValueGetType(x)));
    if (!is_vector(mlirValueGetType(x))) {
      for (int i = 0; i < e.n; i++)
        fly_build_store(b, x, ptr_at(b, &p, &e.off[i]), bytes);
    } else if (p.swizzled) {
      swizzled_store(b, &p, &e, x, elem, bytes);
    } else if (run_of(&e, 0, e.n)) {
      fly_build_store(b, x, ptr_at(b, &p, &e.off[0]), bytes);
    } else {
      for (int i = 0; i < e.n; i++)
        fly_build_store(b, fly_build_extract(b, x, i, elem), ptr_at(b, &p, &e.off[i]), bytes);
    }
  }
  free(e.off);
  fly_memdesc_free(&d);
  if (!b->failed)
    mlirOperationDestroy(op);
}

MlirValue fly_lower_element_ptr(FlyBuild *b, const FlyMemDesc *d) {
  Elems e = {0};
  MlirValue r = {NULL};
  if (elems_of(b, d, &e)) {
    Ptrs p;
    ptrs_init(&p, d, d->type.elem);
    r = ptr_at(b, &p, &e.off[0]);
  }
  free(e.off);
  return r;
}
