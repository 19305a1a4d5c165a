/* fly_builtins_matrix.c — copies between shared memory and the fragments
 * of a tiled MMA, as CuTe's make_tiled_copy_A/B/C: tiled_copy_A/B/C(atom,
 * mma) lay a copy atom over the tile one step of the MMA covers, so that
 * the MMA's fragment (partition_fragment_A/B/C) is the copy's destination
 * (or source) as it is, and smem_copy_A/B/C(mma, s) choose the atom for a
 * shared tile: the widest ldmatrix (stmatrix for C) whose rows the tile
 * holds, transposed when the tile is MN-major, else a plain copy.
 *
 * The register side of such a copy is the MMA's TV layout: thread t holds
 * the MMA's values, in the MMA's order. A warp-wide atom (ldmatrix) maps
 * its registers' (lane, value) and its rows' (lane, value) to the elements
 * of its matrices (fly_atoms.def); CuTe's right_inverse(ref) o src, with
 * the registers as the reference: the shared side's (lane, value) goes to
 * the element, the element to the register (lane', value') holding it,
 * and that to the tile through the MMA's layout. Both sides are written
 * out as functions and fitted to layouts, one stride per prime factor of
 * the thread and value counts, every point checked: a pairing of atom and
 * MMA that no layout describes is refused. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_atom.h"
#include "fly_builtins.h"
#include "fly_layout_text.h"
#include "fly_layout_tv.h"

enum { MAX_LEAVES = 40 };

/* ---- the MMA's side ---------------------------------------------------------------------- */

/* Operand X of a tiled MMA, one step of it: the atom's tile (rows x cols)
   repeated by the warps (wr x wc), and again f times along the rows so a
   wide copy atom finds enough values in a thread (an mma.sync's B holds 4
   halves, ldmatrix x4 gives 8: two tiles of N). */
typedef struct Step {
  FlyMmaOperand op;
  FlyLayout *atom_tv;   /* the MMA atom's (thread, value) -> index in its tile */
  int64_t atom_threads; /* its threads */
  int64_t values;       /* its values per thread */
  int64_t wm, wn;       /* the tiled MMA's warps (atoms) along M and N */
  int64_t f;            /* tiles along the rows per copy tile */
  char operand;
} Step;

/* The index in the copy's tile (rows, cols; column-major) of value v of
   thread t, or -1 when the algebra fails. */
static int64_t step_index(FlyAlgebra *A, const Step *s, int64_t t, int64_t v) {
  int64_t ta = t % s->atom_threads, g = t / s->atom_threads;
  int64_t gm = g % s->wm, gn = (g / s->wm) % s->wn;
  int64_t j = v % s->values, jf = v / s->values, i;
  if (!fly_layout_eval(A, s->atom_tv, ta + s->atom_threads * j, &i))
    return -1;
  int64_t rows = s->op.rows, cols = s->op.cols;
  int64_t wr = s->operand == 'B' ? gn : gm, wc = s->operand == 'C' ? gn : 0;
  int64_t r = i % rows + rows * wr + rows * s->op.warp_rows * jf;
  int64_t c = i / rows + cols * wc;
  return r + rows * s->op.warp_rows * s->f * c;
}

static int64_t step_threads(const Step *s) { return s->atom_threads * s->wm * s->wn; }

/* ---- fitting a function to a layout ------------------------------------------------------ */

/* A function of (thread, value) to fit. */
typedef struct Fn {
  const Step *s;
  const FlyAtom *atom; /* a warp-wide atom, or NULL: the registers' side */
  FlyLayout *row;      /* its shared side: (lane, e) -> element of its matrices */
  int64_t *owner;      /* element of its matrices -> lane + 32 * register value */
  int64_t reg_values;  /* register values a lane of the atom holds */
  int64_t row_values;  /* shared values a lane gives: 8 */
} Fn;

static int64_t fn_eval(FlyAlgebra *A, const Fn *fn, int64_t t, int64_t v) {
  if (!fn->atom)
    return step_index(A, fn->s, t, v);
  int64_t lane = t % 32, warp = t / 32, e = v % fn->row_values, rv = v / fn->row_values, x;
  if (!fly_layout_eval(A, fn->row, lane + 32 * e, &x) || x < 0 || fn->owner[x] < 0)
    return -1;
  int64_t l2 = fn->owner[x] % 32, q = fn->owner[x] / 32;
  return step_index(A, fn->s, l2 + 32 * warp, q + fn->reg_values * rv);
}

/* n's prime factors, smallest first, appended to sizes. */
static int factors(int64_t n, int64_t *sizes, int at) {
  for (int64_t p = 2; n > 1 && at < MAX_LEAVES; p++)
    while (n % p == 0 && at < MAX_LEAVES) {
      sizes[at++] = p;
      n /= p;
    }
  return at;
}

/* One mode of the fitted layout, its leaves merged where they run on. */
static FlyLayout *mode_of(FlyAlgebra *A, const int64_t *size, const int64_t *stride, int n) {
  int64_t s[MAX_LEAVES], d[MAX_LEAVES];
  int m = 0;
  for (int i = 0; i < n; i++) {
    if (m && d[m - 1] * s[m - 1] == stride[i]) {
      s[m - 1] *= size[i];
      continue;
    }
    s[m] = size[i];
    d[m++] = stride[i];
  }
  if (m == 1)
    return fly_layout_make(A, fly_tuple_int(A, s[0]), fly_tuple_int(A, d[0]));
  FlyTuple *ss[MAX_LEAVES], *dd[MAX_LEAVES];
  for (int i = 0; i < m; i++) {
    ss[i] = fly_tuple_int(A, s[i]);
    dd[i] = fly_tuple_int(A, d[i]);
  }
  return fly_layout_make(A, fly_tuple_seq(A, m, ss), fly_tuple_seq(A, m, dd));
}

/* The layout (threads, values) -> index that is fn, or NULL when no
   layout is (a stride per prime factor, checked at every point). */
static FlyLayout *fit(FlyAlgebra *A, const Fn *fn, int64_t threads, int64_t values) {
  int64_t size[MAX_LEAVES], stride[MAX_LEAVES];
  int nt = factors(threads, size, 0), n = factors(values, size, nt);
  if (n >= MAX_LEAVES || fn_eval(A, fn, 0, 0) != 0)
    return NULL;
  for (int i = 0, unit = 1; i < n; i++) {
    if (i == nt)
      unit = 1;
    stride[i] = i < nt ? fn_eval(A, fn, unit, 0) : fn_eval(A, fn, 0, unit);
    if (stride[i] < 0)
      return NULL;
    unit *= (int)size[i];
  }
  for (int64_t t = 0; t < threads; t++)
    for (int64_t v = 0; v < values; v++) {
      int64_t want = 0, rest = t;
      for (int i = 0; i < n; i++) {
        if (i == nt)
          rest = v;
        want += rest % size[i] * stride[i];
        rest /= size[i];
      }
      if (fn_eval(A, fn, t, v) != want)
        return NULL;
    }
  FlyLayout *T = mode_of(A, size, stride, nt), *V = mode_of(A, size + nt, stride + nt, n - nt);
  return T && V ? fly_layout_pair(A, T, V) : NULL;
}

/* ---- the tiled copy ---------------------------------------------------------------------- */

/* The register side of atom: src for stmatrix, dst for ldmatrix. */
static const char *reg_text(const FlyAtom *atom) {
  return atom->copy == FLY_COPY_STMATRIX ? atom->src_tv : atom->dst_tv;
}
static const char *row_text(const FlyAtom *atom) {
  return atom->copy == FLY_COPY_STMATRIX ? atom->dst_tv : atom->src_tv;
}

/* Why a copy atom cannot serve the MMA's operand, or NULL when the copy
   was made: the tiled copy's layouts in *out. */
static const char *lay_over(FlyInterp *I, const FlyAtom *atom, const FlyObject *mma, char operand,
                            FlyTvLayout **out) {
  FlyAlgebra *A = &I->A;
  const FlyAtom *ma = mma->base->object.atom;
  Step s = {fly_mma_operand(I, mma, operand), NULL, ma->threads, 0, 1, 1, 1, operand};
  s.atom_tv = fly_parse_layout(A, s.op.tv, strlen(s.op.tv));
  FlyLayout *vals = s.atom_tv ? fly_layout_get(A, s.atom_tv, 1) : NULL;
  const FlyTuple *shape = mma->layout->shape;
  int64_t warps;
  if (!vals || !fly_layout_size(A, vals, &s.values) || !fly_layout_size(A, mma->layout, &warps))
    return "the algebra failed";
  if (shape->kind == FLY_TUPLE_SEQ) {
    fly_tuple_product(A, shape->elem[0], &s.wm);
    if (shape->n > 1)
      fly_tuple_product(A, shape->elem[1], &s.wn);
  } else {
    s.wm = shape->value;
  }
  if (s.wm * s.wn != warps)
    return "its atoms are laid out along K too; a copy follows atoms along M and N only";
  FlyLayout *reg = NULL, *row = NULL;
  int64_t reg_values = s.values, row_values = 1;
  if (fly_atom_is_matrix(atom)) {
    const char *rt = reg_text(atom), *wt = row_text(atom);
    reg = fly_parse_layout(A, rt, strlen(rt));
    row = fly_parse_layout(A, wt, strlen(wt));
    FlyLayout *rv = reg ? fly_layout_get(A, reg, 1) : NULL;
    FlyLayout *wv = row ? fly_layout_get(A, row, 1) : NULL;
    if (!rv || !wv || !fly_layout_size(A, rv, &reg_values) || !fly_layout_size(A, wv, &row_values))
      return "the algebra failed";
    if (ma->threads % 32 != 0)
      return "its threads are not whole warps";
    if (reg_values > s.values) {
      if (reg_values % s.values != 0)
        return "the atom's registers do not hold a whole number of the MMA's values";
      s.f = reg_values / s.values;
    } else if (s.values % reg_values != 0) {
      return "the MMA's values are not a whole number of the atom's registers";
    }
  }
  int64_t threads = step_threads(&s), values = s.values * s.f;
  Fn regs = {&s, NULL, NULL, NULL, 0, 0};
  FlyLayout *reg_tv = fit(A, &regs, threads, values);
  if (!reg_tv)
    return "the MMA's layout of this operand is not one a copy can follow";
  FlyLayout *row_tv = NULL;
  if (row) {
    /* Who holds each element of the atom's matrices in registers. */
    int64_t elems = 32 * reg_values;
    int64_t *owner = malloc(sizeof *owner * (size_t)elems);
    if (!owner)
      return "out of memory";
    for (int64_t i = 0; i < elems; i++)
      owner[i] = -1;
    for (int64_t i = 0, x; i < elems; i++)
      if (fly_layout_eval(A, reg, i, &x) && x >= 0 && x < elems)
        owner[x] = i;
    Fn rows = {&s, atom, row, owner, reg_values, 8};
    row_tv = fit(A, &rows, threads, values / reg_values * 8);
    free(owner);
    if (!row_tv)
      return "its rows do not follow the MMA's layout of this operand";
  }
  FlyTuple *dims[2] = {fly_tuple_int(A, s.op.rows * s.op.warp_rows * s.f),
                       fly_tuple_int(A, s.op.cols * s.op.warp_cols)};
  FlyTvLayout *tv = fly_alloc(A, sizeof *tv);
  if (!tv)
    return "out of memory";
  bool st = atom->copy == FLY_COPY_STMATRIX;
  tv->tv = row_tv && !st ? row_tv : reg_tv;
  tv->dst = row_tv ? (st ? row_tv : reg_tv) : NULL;
  tv->tile = fly_tuple_seq(A, 2, dims);
  *out = tv;
  return NULL;
}

static FlyVal *new_tiled(FlyInterp *I, const FlyVal *atom, FlyTvLayout *tv) {
  FlyVal *v = fly_new_object(I, FLY_OBJ_TILED_COPY);
  if (v) {
    v->object.base = atom;
    v->object.tv = tv;
  }
  return v;
}

/* The tiled MMA of argument i. */
static const FlyObject *mma_arg(FlyInterp *I, const FlyArgs *a, int i, const char *fn) {
  const FlyVal *m = a->v[i];
  if (m->kind == FLY_V_OBJECT && m->object.kind == FLY_OBJ_TILED_MMA) {
    if (m->object.base->object.atom->mma == FLY_MMA_NV_WGMMA && fn[strlen(fn) - 1] != 'C') {
      fly_err(I, a->node[i],
              "%s: wgmma reads A and B from shared memory itself; only its C "
              "comes through registers",
              fn);
      return NULL;
    }
    return &m->object;
  }
  fly_err(I, a->node[i], "%s takes a tiled MMA (tiled_mma(atom, warps)), not %s", fn,
          fly_val_describe(&I->A, m));
  return NULL;
}

static const FlyVal *tiled_copy_operand(FlyInterp *I, const FlyArgs *a, char operand) {
  char fn[16];
  snprintf(fn, sizeof fn, "tiled_copy_%c", operand);
  const FlyVal *atom = a->v[0];
  if (atom->kind != FLY_V_OBJECT || atom->object.kind != FLY_OBJ_COPY_ATOM)
    return fly_err(I, a->node[0], "%s takes a copy atom first, not %s", fn,
                   fly_val_describe(&I->A, atom));
  const FlyObject *mma = mma_arg(I, a, 1, fn);
  if (!mma)
    return NULL;
  const FlyObject *ma = &mma->base->object;
  if (operand != 'C' && !fly_type_equal(atom->object.elem, fly_mma_elem(ma, operand)))
    return fly_err_mma_type(I, a->node[0], ma, operand, "this copy atom moves", atom->object.elem);
  const FlyAtom *row = atom->object.atom;
  if (row->copy == FLY_COPY_CP_ASYNC)
    return fly_err(I, a->node[0],
                   "%s copies from global to shared memory, not into an MMA's "
                   "registers",
                   row->name);
  FlyTvLayout *tv = NULL;
  const char *why = lay_over(I, row, mma, operand, &tv);
  if (why)
    return fly_err(I, a->call, "%s cannot be laid over operand %c of this MMA: %s", row->name,
                   operand, why);
  return new_tiled(I, atom, tv);
}

const FlyVal *fly_builtin_tiled_copy_A(FlyInterp *I, const FlyArgs *a) {
  return tiled_copy_operand(I, a, 'A');
}
const FlyVal *fly_builtin_tiled_copy_B(FlyInterp *I, const FlyArgs *a) {
  return tiled_copy_operand(I, a, 'B');
}
const FlyVal *fly_builtin_tiled_copy_C(FlyInterp *I, const FlyArgs *a) {
  return tiled_copy_operand(I, a, 'C');
}

/* ---- choosing the atom ------------------------------------------------------------------- */

/* Whether the shared tile L (swizzled in runs of `run` elements, or 0)
   gives every lane of the tiled copy whole, aligned 16-byte rows: each 8
   values of a thread's shared side consecutive from a multiple of 8, in
   every tile of the copy. */
bool fly_matrix_rows_fit(FlyInterp *I, const FlyLayout *L, int run, const FlyTvLayout *tv,
                         bool rows_are_dst) {
  FlyAlgebra *A = &I->A;
  const FlyLayout *side = rows_are_dst ? tv->dst : tv->tv;
  if (run && run < 8)
    return false;
  /* The copy's tiles cover the tile exactly (two of N for an x4 on B). */
  if (fly_layout_rank(L) < 2)
    return false;
  for (int i = 0; i < 2; i++) {
    int64_t n;
    FlyLayout *m = fly_layout_get(A, L, i);
    if (!m || !fly_layout_size(A, m, &n) || n % tv->tile->elem[i]->value != 0) {
      fly_algebra_clear_error(A);
      return false;
    }
  }
  FlyTiler *e[2];
  for (int i = 0; i < 2; i++)
    e[i] = fly_tiler_layout(
        A, fly_layout_make(A, fly_tuple_int(A, tv->tile->elem[i]->value), fly_tuple_int(A, 1)));
  FlyLayout *Z = fly_layout_zipped_divide(A, L, fly_tiler_seq(A, 2, e));
  FlyLayout *tile = Z ? fly_layout_get(A, Z, 0) : NULL;
  FlyLayout *rest = tile ? fly_layout_get(A, Z, 1) : NULL;
  int64_t threads, values, n;
  FlyLayout *tm = side ? fly_layout_get(A, side, 0) : NULL;
  FlyLayout *vm = side ? fly_layout_get(A, side, 1) : NULL;
  if (!rest || !tm || !vm || !fly_layout_size(A, tm, &threads) ||
      !fly_layout_size(A, vm, &values) || !fly_layout_size(A, rest, &n)) {
    fly_algebra_clear_error(A);
    return false;
  }
  for (int64_t k = 0, x; k < n; k++)
    if (!fly_layout_eval(A, rest, k, &x) || x % 8 != 0) {
      fly_algebra_clear_error(A);
      return false;
    }
  for (int64_t t = 0; t < threads; t++)
    for (int64_t v = 0; v < values; v++) {
      int64_t i, x, first;
      if (!fly_layout_eval(A, side, t + threads * v, &i) || !fly_layout_eval(A, tile, i, &x) ||
          !fly_layout_eval(A, side, t + threads * (v - v % 8), &i) ||
          !fly_layout_eval(A, tile, i, &first) || first % 8 != 0 || x != first + v % 8) {
        fly_algebra_clear_error(A);
        return false;
      }
    }
  return true;
}

/* The atoms smem_copy_X tries, widest first, each before its transpose. */
static const FlyAtomId loads[] = {FLY_ATOM_NV_LDMATRIX_X4, FLY_ATOM_NV_LDMATRIX_X4_TRANS,
                                  FLY_ATOM_NV_LDMATRIX_X2, FLY_ATOM_NV_LDMATRIX_X2_TRANS,
                                  FLY_ATOM_NV_LDMATRIX_X1, FLY_ATOM_NV_LDMATRIX_X1_TRANS};
static const FlyAtomId stores[] = {FLY_ATOM_NV_STMATRIX_X4, FLY_ATOM_NV_STMATRIX_X4_TRANS,
                                   FLY_ATOM_NV_STMATRIX_X2, FLY_ATOM_NV_STMATRIX_X2_TRANS,
                                   FLY_ATOM_NV_STMATRIX_X1, FLY_ATOM_NV_STMATRIX_X1_TRANS};

/* A choice of smem_copy_X made before: the copy depends only on the
   operand, the MMA's atom and warps, the tile's layout, swizzle and
   element type (the target is the session's), so `key` spells those. */
typedef struct FlySmemCopyChoice {
  struct FlySmemCopyChoice *next;
  const char *key;
  const FlyVal *value;
} FlySmemCopyChoice;

static const char *choice_key(FlyInterp *I, char operand, const FlyObject *mma, const FlyLayout *L,
                              int run, const FlyType *elem) {
  FlyAlgebra *A = &I->A;
  char *warps = fly_layout_str(A, mma->layout), *tile = fly_layout_str(A, L);
  char *type = fly_type_str(A, elem);
  if (!warps || !tile || !type)
    return NULL;
  size_t n = strlen(warps) + strlen(tile) + strlen(type) + 64;
  char *key = fly_alloc(A, n);
  if (key)
    snprintf(key, n, "%c %p %s %s %d %s", operand, (const void *)mma->base->object.atom, warps,
             tile, run, type);
  return key;
}

static const FlyVal *remember(FlyInterp *I, const char *key, const FlyVal *v) {
  FlySmemCopyChoice *c = key && v ? fly_alloc(&I->A, sizeof *c) : NULL;
  if (c) {
    *c = (FlySmemCopyChoice){I->smem_copies, key, v};
    I->smem_copies = c;
  }
  return v;
}

static const FlyVal *smem_copy_operand(FlyInterp *I, const FlyArgs *a, char operand) {
  char fn[16];
  snprintf(fn, sizeof fn, "smem_copy_%c", operand);
  const FlyObject *mma = mma_arg(I, a, 0, fn);
  const FlyVal *s = mma ? fly_arg_tensor(I, a, 1, fn) : NULL;
  if (!s)
    return NULL;
  if (s->tensor.space != FLY_SPACE_SHARED)
    return fly_err(I, a->node[1], "%s chooses a copy for a shared tile; this is %s", fn,
                   fly_val_describe(&I->A, s));
  const FlyType *elem = s->tensor.elem;
  const FlyObject *ma = &mma->base->object;
  if (operand != 'C' && !fly_type_equal(elem, fly_mma_elem(ma, operand)))
    return fly_err_mma_type(I, a->node[1], ma, operand, "this tensor holds", elem);
  FlyProbe p;
  const FlyLayout *L = fly_tensor_probe(I, &s->tensor, &p);
  if (!L || p.n)
    return fly_err(I, a->node[1], "%s needs a shared tile whose layout is known at compile time",
                   fn);
  int run = s->tensor.swizzled && s->tensor.swizzle.bits > 0 ? 1 << s->tensor.swizzle.base : 0;
  const char *key = choice_key(I, operand, mma, L, run, elem);
  for (const FlySmemCopyChoice *c = key ? I->smem_copies : NULL; c; c = c->next)
    if (strcmp(c->key, key) == 0)
      return c->value;
  const FlyAtomId *ids = operand == 'C' ? stores : loads;
  if (fly_type_bits(elem) == 16 && elem->kind == FLY_TY_SCALAR)
    for (int k = 0; k < 6; k++) {
      const FlyAtom *atom = fly_atom_at(ids[k]);
      FlyTvLayout *tv = NULL;
      if (!fly_atom_available(atom, I->target) || lay_over(I, atom, mma, operand, &tv))
        continue;
      if (fly_matrix_rows_fit(I, L, run, tv, operand == 'C'))
        return remember(I, key, new_tiled(I, fly_copy_atom_value(I, atom, 128, elem), tv));
    }
  fly_algebra_clear_error(&I->A);
  /* No warp-wide atom fits: each thread copies its own values, pairs of
     16-bit values (or single others) together where they are contiguous. */
  int bits = fly_type_bits(elem) <= 16 ? 2 * fly_type_bits(elem) : fly_type_bits(elem);
  const FlyAtom *universal = fly_atom_find("universal", 9);
  FlyTvLayout *tv = NULL;
  const char *why = lay_over(I, universal, mma, operand, &tv);
  if (why)
    return fly_err(I, a->call, "%s: no copy can be laid over operand %c of this MMA: %s", fn,
                   operand, why);
  return remember(I, key, new_tiled(I, fly_copy_atom_value(I, universal, bits, elem), tv));
}

const FlyVal *fly_builtin_smem_copy_A(FlyInterp *I, const FlyArgs *a) {
  return smem_copy_operand(I, a, 'A');
}
const FlyVal *fly_builtin_smem_copy_B(FlyInterp *I, const FlyArgs *a) {
  return smem_copy_operand(I, a, 'B');
}
const FlyVal *fly_builtin_smem_copy_C(FlyInterp *I, const FlyArgs *a) {
  return smem_copy_operand(I, a, 'C');
}
