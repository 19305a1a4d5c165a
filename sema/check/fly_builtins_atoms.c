/* fly_builtins_atoms.c — copy and MMA atoms (checked against the atom
 * table, fly_atom.h), tiled copies and MMAs, a thread's slice of them, the
 * partitions of tensors among threads, copy and gemm. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fly_atom.h"
#include "fly_builtins.h"
#include "fly_layout_text.h"
#include "fly_layout_tv.h"
#include "fly_strbuf.h"

/* ---- atoms ------------------------------------------------------------------------------- */

FlyVal *fly_new_object(FlyInterp *I, FlyObjectKind kind) {
  FlyVal *v = fly_val_new(&I->A, FLY_V_OBJECT);
  if (v)
    v->object.kind = kind;
  return v;
}

/* "8, 16, 32, 64 or 128": the widths a copy atom allows. */
static const char *widths_text(FlyInterp *I, unsigned widths) {
  char buf[64];
  int at = 0, n = __builtin_popcount(widths), k = 0;
  for (int b = 0; b < 32; b++)
    if ((widths >> b) & 1u)
      at += snprintf(buf + at, sizeof buf - (size_t)at, "%s%u",
                     k++ == 0 ? ""
                     : k == n ? " or "
                              : ", ",
                     1u << b);
  char *s = fly_alloc(&I->A, (size_t)at + 1);
  if (s)
    memcpy(s, buf, (size_t)at + 1);
  return s ? s : "";
}

const FlyVal *fly_builtin_universal(FlyInterp *I, const FlyArgs *a) {
  const FlyAtom *atom = fly_atom_find("universal", 9);
  int64_t bits;
  if (!fly_arg_int(I, a, 0, "the width of a copy", &bits))
    return NULL;
  if (bits < 1 || bits > (1 << 30) || (bits & (bits - 1)) ||
      !((atom->widths >> __builtin_ctzll((unsigned long long)bits)) & 1u))
    return fly_err(I, a->node[0], "a universal copy moves %s bits, not %" PRId64,
                   widths_text(I, atom->widths), bits);
  FlyVal *v = fly_new_object(I, FLY_OBJ_UNIVERSAL);
  if (v) {
    v->object.bits = (int)bits;
    v->object.atom = atom;
  }
  return v;
}

/* A copy atom of the table named by op (nv.cp_async_cg): one the target
   has, moving `bits` bits (named), by default the widest it allows. */
static const FlyAtom *named_copy_atom(FlyInterp *I, const FlyArgs *a, const FlyVal *op, int *bits) {
  const FlyAtom *atom = op->object.atom;
  if (atom->kind != FLY_ATOM_COPY) {
    fly_err(I, a->node[0], "%s is an MMA instruction, not a copy; make it with mma_atom",
            atom->name);
    return NULL;
  }
  if (!fly_atom_available(atom, I->target)) {
    fly_err(I, a->node[0], "%s is a %s copy, which %s does not have; it runs on %s", atom->name,
            fly_copy_family_name(atom->copy), I->target->arch, fly_atom_targets(atom));
    return NULL;
  }
  *bits = 1 << (31 - __builtin_clz(atom->widths));
  const FlyNode *at;
  const FlyVal *b = fly_arg_named(a, "bits", &at);
  if (b) {
    if (b->kind != FLY_V_INT || b->i < 1 || b->i > (1 << 30) || (b->i & (b->i - 1)) ||
        !((atom->widths >> __builtin_ctzll((unsigned long long)b->i)) & 1u)) {
      if (b->kind == FLY_V_INT)
        fly_err(I, at, "%s moves %s bits, not %" PRId64, atom->name, widths_text(I, atom->widths),
                b->i);
      else
        fly_err(I, at, "%s moves %s bits, not %s", atom->name, widths_text(I, atom->widths),
                fly_val_describe(&I->A, b));
      return NULL;
    }
    *bits = (int)b->i;
  }
  return atom;
}

FlyVal *fly_copy_atom_value(FlyInterp *I, const FlyAtom *atom, int bits, const FlyType *elem) {
  FlyVal *v = fly_new_object(I, FLY_OBJ_COPY_ATOM);
  if (v) {
    v->object.atom = atom;
    v->object.bits = bits;
    v->object.elem = elem;
  }
  return v;
}

const FlyVal *fly_builtin_copy_atom(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *op = a->v[0];
  bool named = op->kind == FLY_V_OBJECT && op->object.kind == FLY_OBJ_ATOM_NAME;
  if (!named && (op->kind != FLY_V_OBJECT || op->object.kind != FLY_OBJ_UNIVERSAL))
    return fly_err(I, a->node[0],
                   "copy_atom takes a copy operation such as universal(128) or "
                   "nv.cp_async_cg, not %s",
                   fly_val_describe(&I->A, op));
  const FlyNode *bits_at;
  if (!named && fly_arg_named(a, "bits", &bits_at))
    return fly_err(I, bits_at, "universal(bits) gives the width; copy_atom takes no bits here");
  int bits = op->object.bits;
  const FlyAtom *atom = named ? named_copy_atom(I, a, op, &bits) : op->object.atom;
  if (!atom)
    return NULL;
  const FlyType *t = fly_arg_type(I, a, 1, "the element type of a copy atom");
  if (!t)
    return NULL;
  if (t->kind != FLY_TY_SCALAR || t->code == FLY_TYPE_I1)
    return fly_err(I, a->node[1], "a copy atom copies numbers, not %s", fly_type_str(&I->A, t));
  int eb = fly_type_bits(t);
  if (fly_atom_is_matrix(atom) && eb != 16)
    return fly_err(I, a->node[1], "%s moves 16-bit elements (f16, bf16, i16), not %s", atom->name,
                   fly_type_str(&I->A, t));
  if (bits % eb != 0)
    return fly_err(I, a->call, "a copy of %d bits cannot move whole %s elements (%d bits each)",
                   bits, fly_type_str(&I->A, t), eb);
  return fly_copy_atom_value(I, atom, bits, t);
}

/* "a" or "an" before an instruction family's name, spelt out as letters
   ("an mfma", "an mma.sync", "a wgmma"). */
static const char *article(const char *word) {
  return word[0] && strchr("aefhilmnorsx", word[0]) ? "an" : "a";
}

/* The operand and accumulator types of an MMA from arguments first ...:
   (T, acc), A and B of type T, or (TA, TB, acc), the call's last three or
   two. */
static bool mma_types(FlyInterp *I, const FlyArgs *a, int first, const FlyType **ta,
                      const FlyType **tb, const FlyType **acc) {
  bool apart = a->n - first == 3;
  *ta = fly_arg_type(I, a, first, apart ? "A's type in an MMA" : "the operand type of an MMA");
  *tb = *ta && apart ? fly_arg_type(I, a, first + 1, "B's type in an MMA") : *ta;
  *acc = *tb ? fly_arg_type(I, a, a->n - 1, "the accumulator type of an MMA") : NULL;
  return *acc != NULL;
}

static FlyVal *mma_object(FlyInterp *I, const FlyAtom *atom, const FlyType *ta, const FlyType *tb,
                          const FlyType *acc) {
  FlyVal *v = fly_new_object(I, FLY_OBJ_MMA_ATOM);
  if (v) {
    v->object.name = atom->name;
    v->object.atom = atom;
    v->object.elem = ta;
    v->object.elem_b = tb;
    v->object.acc = acc;
  }
  return v;
}

const FlyVal *fly_builtin_mma_atom(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *op = a->v[0];
  if (op->kind != FLY_V_OBJECT || op->object.kind != FLY_OBJ_ATOM_NAME)
    return fly_err(I, a->node[0],
                   "mma_atom takes an MMA instruction such as "
                   "nv.mma_sync_16x8x16, not %s",
                   fly_val_describe(&I->A, op));
  const FlyAtom *atom = op->object.atom;
  if (atom->kind != FLY_ATOM_MMA)
    return fly_err(I, a->node[0], "%s is a copy atom, not an MMA instruction", atom->name);
  FlyVendor vendor = (FlyVendor)fly_atom_vendor(atom);
  if (vendor != I->target->vendor)
    return fly_err(I, a->node[0],
                   "%s is an %s instruction, but the target is %s (%s); choose the atom with "
                   "'if const target.vendor == \"%s\"'",
                   atom->name, fly_vendor_title(vendor), I->target->arch,
                   fly_vendor_title(I->target->vendor), fly_vendor_name(vendor));
  if (!fly_atom_available(atom, I->target)) {
    if (fly_target_has_mma(I->target, atom->mma))
      return fly_err(I, a->node[0], "%s needs %s (%s), which %s does not have; it runs on %s",
                     atom->name, fly_feature_name((FlyFeature)atom->feature),
                     fly_feature_doc((FlyFeature)atom->feature), I->target->arch,
                     fly_atom_targets(atom));
    return fly_err(I, a->node[0], "%s is %s %s instruction, which %s does not have; it runs on %s",
                   atom->name, article(fly_mma_family_name(atom->mma)),
                   fly_mma_family_name(atom->mma), I->target->arch, fly_atom_targets(atom));
  }
  /* mma_atom(atom, T, acc): A and B of type T; mma_atom(atom, TA, TB,
     acc): each its own, where the instruction takes that pair. */
  bool apart = a->n == 4;
  const FlyType *ta, *tb, *acc;
  if (!mma_types(I, a, 1, &ta, &tb, &acc))
    return NULL;
  for (int i = 1; i <= (apart ? 2 : 1); i++) {
    const FlyType *t = i == 1 ? ta : tb;
    if (t->kind != FLY_TY_SCALAR || !fly_atom_takes(atom, t->code))
      return fly_err(I, a->node[i], "%s does not multiply %s", atom->name, fly_type_str(&I->A, t));
  }
  if (apart && !atom->mixes && !fly_type_equal(ta, tb))
    return fly_err(I, a->call,
                   "%s multiplies A and B of one type, not %s by %s; give one operand type: "
                   "mma_atom(%s, T, %s)",
                   atom->name, fly_type_str(&I->A, ta), fly_type_str(&I->A, tb), atom->name,
                   fly_type_code_name(atom->acc));
  if (acc->kind != FLY_TY_SCALAR || acc->code != atom->acc)
    return fly_err(I, a->node[a->n - 1], "%s accumulates in %s, not %s", atom->name,
                   fly_type_code_name(atom->acc), fly_type_str(&I->A, acc));
  return mma_object(I, atom, ta, tb, acc);
}

/* Whether atom multiplies A of type ta by B of type tb into acc. */
static bool multiplies(const FlyAtom *atom, const FlyType *ta, const FlyType *tb,
                       const FlyType *acc) {
  if (ta->kind != FLY_TY_SCALAR || tb->kind != FLY_TY_SCALAR || acc->kind != FLY_TY_SCALAR)
    return false;
  return fly_atom_takes(atom, ta->code) && fly_atom_takes(atom, tb->code) &&
         (atom->mixes || ta->code == tb->code) && acc->code == atom->acc;
}

/* mma_atom_for(M, N, T, acc) and mma_atom_for(M, N, TA, TB, acc): of the
   atom table's MMA rows of an M x N tile that the target has and that
   multiply those types, the deepest (the most work an instruction; the
   table's order among equals), as mma_atom(atom, ...) would make it. So a
   kernel names the tile it is written for and each chip brings its best
   instruction: 16 x 16 bf16 is amd.mfma_16x16x32 on gfx950,
   amd.mfma_16x16x16 on gfx942, amd.wmma_16x16x16 on gfx1201. */
const FlyVal *fly_builtin_mma_atom_for(FlyInterp *I, const FlyArgs *a) {
  int64_t m, n;
  if (!fly_arg_int(I, a, 0, "the M of mma_atom_for", &m) ||
      !fly_arg_int(I, a, 1, "the N of mma_atom_for", &n))
    return NULL;
  const FlyType *ta, *tb, *acc;
  if (!mma_types(I, a, 2, &ta, &tb, &acc))
    return NULL;
  /* max_k: a kernel whose operands hold a lane's values for so deep an
     instruction and no deeper (gemm_preshuffle's 16 bytes a lane). */
  const FlyNode *k_at;
  const FlyVal *kv = fly_arg_named(a, "max_k", &k_at);
  if (kv && kv->kind != FLY_V_INT)
    return fly_err(I, k_at, "max_k is a positive integer, not %s", fly_val_describe(&I->A, kv));
  if (kv && kv->i < 1)
    return fly_err(I, k_at, "max_k is a positive integer, not %" PRId64, kv->i);
  int64_t max_k = kv ? kv->i : INT64_MAX;
  const FlyAtom *best = NULL;
  for (int i = 0; fly_atom_at(i); i++) {
    const FlyAtom *atom = fly_atom_at(i);
    if (atom->kind != FLY_ATOM_MMA || atom->m != m || atom->n != n || atom->k > max_k ||
        !fly_atom_available(atom, I->target) || !multiplies(atom, ta, tb, acc))
      continue;
    if (!best || atom->k > best->k)
      best = atom;
  }
  if (best)
    return mma_object(I, best, ta, tb, acc);
  /* None: the target's atoms of other tiles for those types, for the
     message. */
  FlyStrBuf sb;
  fly_sb_init(&sb, &I->A);
  for (int i = 0; fly_atom_at(i); i++) {
    const FlyAtom *atom = fly_atom_at(i);
    if (atom->kind != FLY_ATOM_MMA || !fly_atom_available(atom, I->target) ||
        !multiplies(atom, ta, tb, acc))
      continue;
    fly_sb_puts(&sb, sb.len ? ", " : "");
    fly_sb_puts(&sb, atom->name);
  }
  const char *atoms = fly_sb_finish(&sb);
  const char *t = fly_type_str(&I->A, ta), *u = fly_type_str(&I->A, tb);
  bool same = fly_type_equal(ta, tb);
  char deep[48] = "";
  if (kv)
    snprintf(deep, sizeof deep, " and at most %" PRId64 " deep", kv->i);
  if (atoms && *atoms)
    return fly_err(I, a->call,
                   "%s has no MMA instruction of a %" PRId64 " x %" PRId64
                   " tile%s that multiplies %s%s%s into %s; those of other tiles%s are %s",
                   I->target->arch, m, n, deep, t, same ? "" : " by ", same ? "" : u,
                   fly_type_str(&I->A, acc), kv ? " or depths" : "", atoms);
  return fly_err(I, a->call,
                 "%s has no MMA instruction that multiplies %s%s%s into %s, of any tile",
                 I->target->arch, t, same ? "" : " by ", same ? "" : u, fly_type_str(&I->A, acc));
}

const FlyVal *fly_err_mma_type(FlyInterp *I, const FlyNode *at, const FlyObject *atom, char operand,
                               const char *holder, const FlyType *got) {
  const FlyType *want = fly_mma_elem(atom, operand);
  if (fly_type_equal(atom->elem, atom->elem_b))
    return fly_err(I, at, "the MMA multiplies %s, but %s %s", fly_type_str(&I->A, want), holder,
                   fly_type_str(&I->A, got));
  return fly_err(I, at, "the MMA takes %s as %c, but %s %s", fly_type_str(&I->A, want), operand,
                 holder, fly_type_str(&I->A, got));
}

const FlyVal *fly_builtin_tiled_copy(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *atom = a->v[0];
  if (atom->kind != FLY_V_OBJECT || atom->object.kind != FLY_OBJ_COPY_ATOM)
    return fly_err(I, a->node[0], "tiled_copy takes a copy atom, not %s",
                   fly_val_describe(&I->A, atom));
  if (fly_atom_is_matrix(atom->object.atom))
    return fly_err(I, a->node[0],
                   "%s is a warp's copy of 8x8 matrices: lay it over an MMA with "
                   "tiled_copy_A/B/C(atom, mma), or let smem_copy_A/B/C(mma, s) choose it",
                   atom->object.atom->name);
  const FlyLayout *thr = fly_arg_layout(I, a, 1, "the thread layout of a tiled copy");
  const FlyLayout *val = thr ? fly_arg_layout(I, a, 2, "the value layout of a tiled copy") : NULL;
  if (!val)
    return NULL;
  int64_t nval;
  if (!fly_layout_size(&I->A, val, &nval))
    return fly_err_algebra(I, a->node[2]);
  int per_copy = atom->object.bits / fly_type_bits(atom->object.elem);
  if (nval % per_copy != 0)
    return fly_err(I, a->node[2],
                   "each thread copies %" PRId64 " values, which is not a multiple "
                   "of the %d the atom moves at once",
                   nval, per_copy);
  FlyTvLayout *tv = fly_tv_layout_make(&I->A, thr, val);
  if (!tv)
    return fly_err_algebra(I, a->call);
  FlyVal *v = fly_new_object(I, FLY_OBJ_TILED_COPY);
  if (v) {
    v->object.base = atom;
    v->object.tv = tv;
  }
  return v;
}

const FlyVal *fly_builtin_tiled_mma(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *atom = a->v[0];
  if (atom->kind != FLY_V_OBJECT || atom->object.kind != FLY_OBJ_MMA_ATOM)
    return fly_err(I, a->node[0], "tiled_mma takes an MMA atom, not %s",
                   fly_val_describe(&I->A, atom));
  const FlyLayout *L =
      a->n > 1 ? fly_arg_layout(I, a, 1, "the layout of the atoms")
               : fly_layout_make(&I->A, fly_tuple_int(&I->A, 1), fly_tuple_int(&I->A, 0));
  if (!L)
    return NULL;
  if (fly_layout_rank(L) > 3)
    return fly_err(I, a->node[1],
                   "the atoms of a tiled MMA are laid out in at most 3 modes "
                   "(M, N, K)");
  FlyVal *v = fly_new_object(I, FLY_OBJ_TILED_MMA);
  if (v) {
    v->object.base = atom;
    v->object.layout = L;
  }
  return v;
}

const FlyVal *fly_thread_slice(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *t = a->v[0];
  bool copy = t->object.kind == FLY_OBJ_TILED_COPY;
  if (!copy && t->object.kind != FLY_OBJ_TILED_MMA)
    return fly_err(I, a->node[0],
                   "slice takes a coordinate and a layout, or a thread of a tiled "
                   "copy or MMA; not %s",
                   fly_val_describe(&I->A, t));
  if (a->n != 2 || !fly_val_is_integer(a->v[1]))
    return fly_err(I, a->call, "tiled.slice(thread) takes one thread index");
  FlyVal *v = fly_new_object(I, copy ? FLY_OBJ_THR_COPY : FLY_OBJ_THR_MMA);
  if (v) {
    v->object.base = t;
    v->object.thread = a->v[1];
  }
  return v;
}

/* ---- partitions ------------------------------------------------------------------------ */

/* (values per thread, tiles...) of tensor t cut by a tile of the given
   shape among `threads` threads. */
static const FlyVal *partition_shape(FlyInterp *I, const FlyVal *t, const FlyTuple *tile,
                                     int64_t threads, const FlyNode *at) {
  int64_t tile_size;
  if (!fly_tuple_product(&I->A, tile, &tile_size))
    return fly_err_algebra(I, at);
  if (tile_size % threads != 0)
    return fly_err(I, at,
                   "a tile of %" PRId64 " elements does not divide among %" PRId64 " threads",
                   tile_size, threads);
  int r = tile->kind == FLY_TUPLE_SEQ ? tile->n : 1;
  if (r > fly_tensor_rank(t))
    return fly_err(I, at, "the tile has %d modes but the tensor only %d", r, fly_tensor_rank(t));
  const FlyVal **e = fly_alloc(&I->A, sizeof *e * (size_t)(fly_tensor_rank(t) + 1));
  if (!e)
    return NULL;
  e[0] = fly_val_int(&I->A, tile_size / threads, NULL);
  for (int i = 0; i < fly_tensor_rank(t); i++) {
    const FlyVal *mode = t->tensor.shape->elems[i];
    if (i >= r) {
      e[i + 1] = mode;
      continue;
    }
    int64_t ti = tile->kind == FLY_TUPLE_SEQ ? tile->elem[i]->value : tile->value;
    if (fly_val_is_static(mode)) {
      const FlyVal *n = fly_shape_size(I, mode, at);
      if (!n)
        return NULL;
      if (n->i % ti != 0)
        return fly_err(I, at,
                       "a mode of size %" PRId64 " is not a whole number of tiles of %" PRId64,
                       n->i, ti);
      e[i + 1] = fly_val_int(&I->A, n->i / ti, NULL);
    } else {
      e[i + 1] = fly_runtime_leaf(I, at,
                                  "the number of tiles of a tensor whose shape is given at "
                                  "launch");
    }
  }
  return fly_val_tuple(&I->A, fly_tensor_rank(t) + 1, e);
}

static const FlyObject *thr_arg(FlyInterp *I, const FlyArgs *a, FlyObjectKind kind,
                                const char *fn) {
  const FlyVal *v = a->v[0];
  if (v->kind == FLY_V_OBJECT && v->object.kind == kind)
    return &v->object;
  fly_err(I, a->node[0], "%s is a method of %s, not of %s", fn,
          kind == FLY_OBJ_THR_COPY ? "a thread's slice of a tiled copy (tc.slice(t))"
                                   : "a thread's slice of a tiled MMA (mma.slice(t))",
          fly_val_describe(&I->A, v));
  return NULL;
}

static const FlyVal *copy_partition(FlyInterp *I, const FlyArgs *a, const char *fn) {
  const FlyObject *thr = thr_arg(I, a, FLY_OBJ_THR_COPY, fn);
  const FlyVal *t = thr ? fly_arg_tensor(I, a, 1, fn) : NULL;
  if (!t)
    return NULL;
  FlyTvLayout side = *thr->base->object.tv;
  /* A warp-wide copy's destination has its own layout (fly_layout_tv.h). */
  if (fn[strlen(fn) - 1] == 'D' && side.dst)
    side.tv = side.dst;
  const FlyTvLayout *tv = &side;
  int64_t threads;
  if (!fly_tuple_product(&I->A, tv->tv->shape->elem[0], &threads))
    return fly_err_algebra(I, a->call);
  FlyProbe p;
  const FlyLayout *L = fly_tensor_probe(I, &t->tensor, &p);
  if (L) {
    /* As CuTe's partition: the tensor in tiles, each tile through the TV
       layout, then this thread's values and every tile. */
    FlyTiler *T = fly_val_to_tiler(I, fly_tuple_to_val(I, tv->tile), a->call);
    FlyLayout *Z = T ? fly_layout_zipped_divide(&I->A, L, T) : NULL;
    FlyLayout *tile = Z ? fly_layout_get(&I->A, Z, 0) : NULL;
    FlyLayout *tvl = tile ? fly_layout_composition(&I->A, tile, tv->tv) : NULL;
    FlyLayout *vals = tvl ? fly_layout_get(&I->A, tvl, 1) : NULL;
    FlyLayout *rest = vals ? fly_layout_get(&I->A, Z, 1) : NULL;
    FlyLayout *R = rest ? fly_layout_prepend(&I->A, rest, vals) : NULL;
    if (R)
      return fly_tensor_unprobe(I, t, R, &p, a->call);
    if (!p.n)
      return fly_err_algebra(I, a->call);
    fly_algebra_clear_error(&I->A);
  }
  const FlyVal *sh = partition_shape(I, t, tv->tile, threads, a->call);
  if (!sh)
    return NULL;
  return fly_tensor_like(I, t, sh, fly_runtime_like(I, sh, a->call, "a stride given at launch"));
}

/* An identity tensor's partition is the same algebra, and its origin moves
   to the thread's first coordinate (a data tensor's pointer moves in the
   lowering). */
static const FlyVal *identity_partition(FlyInterp *I, const FlyArgs *a, const char *fn) {
  const FlyVal *r = copy_partition(I, a, fn);
  return r ? fly_identity_partition(I, a->v[1], r, &a->v[0]->object, a->call) : NULL;
}

const FlyVal *fly_builtin_partition_S(FlyInterp *I, const FlyArgs *a) {
  if (fly_is_identity(a->v[1]))
    return identity_partition(I, a, "partition_S");
  return fly_emit_value(I, copy_partition(I, a, "partition_S"), FLY_OPCODE_PARTITION_S, 2, a->v,
                        a->call);
}
const FlyVal *fly_builtin_partition_D(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *thr = a->v[0];
  if (fly_is_identity(a->v[1]) && thr->kind == FLY_V_OBJECT &&
      thr->object.kind == FLY_OBJ_THR_COPY && thr->object.base->object.tv->dst)
    return fly_err(I, a->node[1],
                   "a warp-wide copy's destination is not partitioned by coordinates; "
                   "partition an identity tensor with its source (partition_S)");
  if (fly_is_identity(a->v[1]))
    return identity_partition(I, a, "partition_D");
  return fly_emit_value(I, copy_partition(I, a, "partition_D"), FLY_OPCODE_PARTITION_D, 2, a->v,
                        a->call);
}

FlyMmaOperand fly_mma_operand(FlyInterp *I, const FlyObject *mma, char operand) {
  const FlyAtom *atom = mma->base->object.atom;
  const FlyTuple *shape = mma->layout->shape;
  int64_t wm = 1, wn = 1;
  if (shape->kind == FLY_TUPLE_SEQ) {
    fly_tuple_product(&I->A, shape->elem[0], &wm);
    if (shape->n > 1)
      fly_tuple_product(&I->A, shape->elem[1], &wn);
  } else {
    wm = shape->value;
  }
  FlyMmaOperand o = {operand == 'B' ? atom->n : atom->m, operand == 'C' ? atom->n : atom->k,
                     operand == 'B' ? wn : wm, operand == 'C' ? wn : 1, atom->tv[operand - 'A']};
  return o;
}

static FlyTiler *tiler2(FlyInterp *I, int64_t a, int64_t b) {
  FlyTiler *e[2] = {fly_tiler_layout(&I->A, fly_layout_make(&I->A, fly_tuple_int(&I->A, a),
                                                            fly_tuple_int(&I->A, 1))),
                    fly_tiler_layout(&I->A, fly_layout_make(&I->A, fly_tuple_int(&I->A, b),
                                                            fly_tuple_int(&I->A, 1)))};
  return fly_tiler_seq(&I->A, 2, e);
}

/* One thread's values of operand A, B or C of a tiled MMA in a tensor of
   layout L, as CuTe's thrfrg_A/B/C and a thread's slice: L in the atom's
   tiles (rows R by columns C), each tile through the atom's TV layout, the
   tiles dealt out to the warps; the result is (the atom's values, tiles
   along R, tiles along C), whichever thread it is. */
static FlyLayout *mma_values(FlyInterp *I, const FlyLayout *L, const FlyObject *mma, char operand) {
  FlyMmaOperand op = fly_mma_operand(I, mma, operand);
  const char *text = op.tv;
  FlyLayout *tv = fly_parse_layout(&I->A, text, strlen(text));
  FlyTiler *T = tv ? tiler2(I, op.rows, op.cols) : NULL;
  FlyLayout *Z = T ? fly_layout_zipped_divide(&I->A, L, T) : NULL;
  FlyLayout *tile = Z ? fly_layout_get(&I->A, Z, 0) : NULL;
  FlyLayout *tvl = tile ? fly_layout_composition(&I->A, tile, tv) : NULL;
  FlyLayout *vals = tvl ? fly_layout_get(&I->A, tvl, 1) : NULL;
  FlyTiler *W = vals ? tiler2(I, op.warp_rows, op.warp_cols) : NULL;
  FlyLayout *rest = W ? fly_layout_get(&I->A, Z, 1) : NULL;
  FlyLayout *Zw = rest ? fly_layout_zipped_divide(&I->A, rest, W) : NULL;
  FlyLayout *tiles = Zw ? fly_layout_get(&I->A, Zw, 1) : NULL;
  return tiles ? fly_layout_prepend(&I->A, tiles, vals) : NULL;
}

/* The shape of mma_values for a tensor of the given shape, where it is
   only known in part: the atom's values, then a tile count per mode. */
static const FlyVal *mma_values_shape(FlyInterp *I, const FlyVal *t, const FlyObject *mma,
                                      char operand, const FlyNode *at) {
  FlyMmaOperand op = fly_mma_operand(I, mma, operand);
  int64_t step[2] = {op.rows * op.warp_rows, op.cols * op.warp_cols};
  const char *text = op.tv;
  FlyLayout *tv = fly_parse_layout(&I->A, text, strlen(text));
  FlyLayout *vals = tv ? fly_layout_get(&I->A, tv, 1) : NULL;
  if (!vals)
    return fly_err_algebra(I, at);
  int r = fly_tensor_rank(t);
  const FlyVal **e = fly_alloc(&I->A, sizeof *e * (size_t)(r + 1));
  if (!e)
    return NULL;
  e[0] = fly_tuple_to_val(I, vals->shape);
  for (int i = 0; i < r; i++) {
    const FlyVal *mode = t->tensor.shape->elems[i];
    if (i >= 2)
      e[i + 1] = mode;
    else if (fly_val_is_static(mode)) {
      const FlyVal *n = fly_shape_size(I, mode, at);
      if (!n)
        return NULL;
      e[i + 1] = fly_val_int(&I->A, n->i / step[i], NULL);
    } else
      e[i + 1] =
          fly_runtime_leaf(I, at, "the number of tiles of a tensor whose shape is given at launch");
  }
  return fly_val_tuple(&I->A, r + 1, e);
}

/* Every mode the MMA tiles must be a whole number of its tiles. */
static bool mma_fits(FlyInterp *I, const FlyVal *t, const FlyObject *mma, char operand,
                     const FlyNode *at) {
  FlyMmaOperand op = fly_mma_operand(I, mma, operand);
  int64_t step[2] = {op.rows * op.warp_rows, op.cols * op.warp_cols};
  const char *dims = operand == 'A' ? "MK" : operand == 'B' ? "NK" : "MN";
  if (fly_tensor_rank(t) < 2) {
    fly_err(I, at, "operand %c of an MMA is a tensor of two modes (%c, %c), not of %d", operand,
            dims[0], dims[1], fly_tensor_rank(t));
    return false;
  }
  for (int i = 0; i < 2; i++) {
    const FlyVal *mode = t->tensor.shape->elems[i];
    if (!fly_val_is_static(mode))
      continue;
    const FlyVal *n = fly_shape_size(I, mode, at);
    if (!n)
      return false;
    if (n->i % step[i] != 0) {
      fly_err(I, at,
              "mode %c of operand %c has %" PRId64 " elements, not a whole number of the MMA's "
              "tiles of %" PRId64,
              dims[i], operand, n->i, step[i]);
      return false;
    }
  }
  return true;
}

static const FlyVal *mma_partition(FlyInterp *I, const FlyArgs *a, char operand, bool fragment) {
  char fn[32];
  snprintf(fn, sizeof fn, "partition_%s%c", fragment ? "fragment_" : "", operand);
  const FlyObject *thr = thr_arg(I, a, FLY_OBJ_THR_MMA, fn);
  const FlyVal *t = thr ? fly_arg_tensor(I, a, 1, fn) : NULL;
  if (!t)
    return NULL;
  const FlyObject *mma = &thr->base->object;
  const FlyObject *atom = &mma->base->object;
  const FlyType *want = fly_mma_elem(atom, operand);
  /* An identity tensor holds coordinates, whatever the MMA multiplies. */
  if (!fragment && !fly_type_equal(t->tensor.elem, want) && operand != 'C' && !fly_is_identity(t))
    return fly_err_mma_type(I, a->node[1], atom, operand, "this tensor holds", t->tensor.elem);
  if (!mma_fits(I, t, mma, operand, a->call))
    return NULL;
  FlyProbe p;
  const FlyLayout *L = fly_tensor_probe(I, &t->tensor, &p);
  FlyLayout *R = L ? mma_values(I, L, mma, operand) : NULL;
  if (L && !R && !p.n)
    return fly_err_algebra(I, a->call);
  fly_algebra_clear_error(&I->A);
  const FlyVal *sh =
      R ? fly_tuple_to_val(I, R->shape) : mma_values_shape(I, t, mma, operand, a->call);
  if (!sh)
    return NULL;
  if (fragment) {
    /* A fragment lives in registers: a compact layout of its shape. */
    if (!fly_val_is_static(sh))
      return fly_err(I, a->node[1], "%s needs a tensor whose shape is known at compile time", fn);
    FlyTuple *s = fly_val_to_tuple(I, sh, a->call, "a shape");
    FlyLayout *F = s ? fly_layout_col_major(&I->A, s) : NULL;
    if (!F)
      return fly_err_algebra(I, a->call);
    return fly_make_tensor(I, fly_mma_elem(atom, operand), FLY_SPACE_REGISTER,
                           fly_tuple_to_val(I, F->shape), fly_tuple_to_val(I, F->stride));
  }
  if (R)
    return fly_tensor_unprobe(I, t, R, &p, a->call);
  return fly_tensor_like(
      I, t, sh, fly_runtime_like(I, sh, a->call, "a stride chosen by the MMA's partition"));
}

/* An identity tensor's partition moves its origin to the thread's first
   coordinate (a data tensor's pointer moves in the lowering). A fragment
   takes only the partition's shape, so a fragment of an identity tensor
   is a register tile of that shape, made as rmem makes one. */
#define MMA_PARTITION(op, frag, name, ID)                                                          \
  const FlyVal *fly_builtin_##name(FlyInterp *I, const FlyArgs *a) {                               \
    if (a->n > 1 && fly_is_identity(a->v[1]))                                                      \
      return (frag) ? fly_emit_value(I, mma_partition(I, a, op, frag), FLY_OPCODE_RMEM, 0, NULL,   \
                                     a->call)                                                      \
                    : fly_identity_mma_partition(I, a->v[1], mma_partition(I, a, op, frag),        \
                                                 &a->v[0]->object, op, a->call);                   \
    return fly_emit_value(I, mma_partition(I, a, op, frag), FLY_OPCODE_##ID, 2, a->v, a->call);    \
  }
MMA_PARTITION('A', false, partition_A, PARTITION_A)
MMA_PARTITION('B', false, partition_B, PARTITION_B)
MMA_PARTITION('C', false, partition_C, PARTITION_C)
MMA_PARTITION('A', true, partition_fragment_A, PARTITION_FRAGMENT_A)
MMA_PARTITION('B', true, partition_fragment_B, PARTITION_FRAGMENT_B)
MMA_PARTITION('C', true, partition_fragment_C, PARTITION_FRAGMENT_C)

const FlyVal *fly_builtin_retile(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *t = fly_arg_tensor(I, a, a->n - 1, "retile");
  return t;
}

/* ---- copy and gemm ----------------------------------------------------------------------- */

/* The values a lane of a warp-wide atom gives (rows: 8 a 16-byte row) or
   holds in registers, per instruction. */
static int64_t matrix_values(FlyInterp *I, const FlyAtom *row, bool registers) {
  bool st = row->copy == FLY_COPY_STMATRIX;
  const char *text = registers == st ? row->src_tv : row->dst_tv;
  FlyLayout *L = fly_parse_layout(&I->A, text, strlen(text));
  FlyLayout *v = L ? fly_layout_get(&I->A, L, 1) : NULL;
  int64_t n = 0;
  return v && fly_layout_size(&I->A, v, &n) ? n : 0;
}

/* copy with ldmatrix or stmatrix: a tiled copy of tiled_copy_A/B/C, one side
   shared memory in whole 16-byte rows, the other registers. */
static const FlyVal *matrix_copy(FlyInterp *I, const FlyArgs *a, const FlyAtom *row,
                                 const FlyTvLayout *tv) {
  if (!tv || !tv->dst)
    return fly_err(I, a->node[0],
                   "%s is a warp's copy of 8x8 matrices: lay it over an MMA with "
                   "tiled_copy_A/B/C(atom, mma), or let smem_copy_A/B/C(mma, s) choose it",
                   row->name);
  bool ld = row->copy == FLY_COPY_LDMATRIX;
  int si = ld ? 1 : 2, ri = ld ? 2 : 1;
  const FlyVal *s = a->v[si], *r = a->v[ri];
  if (s->tensor.space != FLY_SPACE_SHARED)
    return fly_err(I, a->node[si], "%s copies %s shared memory; this %s is %s", row->name,
                   ld ? "from" : "into", ld ? "source" : "destination", fly_val_describe(&I->A, s));
  if (r->tensor.space != FLY_SPACE_REGISTER)
    return fly_err(I, a->node[ri], "%s copies %s registers (an MMA's fragment); this %s is %s",
                   row->name, ld ? "into" : "from", ld ? "destination" : "source",
                   fly_val_describe(&I->A, r));
  if (a->n > 3 || fly_arg_named(a, "fill", NULL))
    return fly_err(I, a->call, "%s is not predicated: a warp copies whole matrices", row->name);
  int64_t ns, nr, rows = matrix_values(I, row, false), regs = matrix_values(I, row, true);
  if (!rows || !regs)
    return fly_err_algebra(I, a->call);
  if (!fly_tensor_static_size(I, s, &ns) || !fly_tensor_static_size(I, r, &nr))
    return fly_err(I, a->call, "%s needs tensors whose sizes are known at compile time", row->name);
  if (ns % rows != 0 || nr != ns / rows * regs)
    return fly_err(I, a->call,
                   "%s moves %" PRId64 " shared elements a lane for every %" PRId64
                   " in registers; this copy has %" PRId64 " and %" PRId64
                   ": pass the tiled copy's partition of the tile and the MMA's fragment",
                   row->name, rows, regs, ns, nr);
  /* Each 8 shared values of a thread one 16-byte row, where the compiler
     sees the layout now (the lowering checks the rest). */
  FlyProbe p;
  const FlyLayout *L = fly_tensor_probe(I, &s->tensor, &p);
  if (L && !p.n) {
    for (int64_t k = 0; k < ns; k++) {
      int64_t x, first;
      if (!fly_layout_eval(&I->A, L, k, &x) || !fly_layout_eval(&I->A, L, k - k % 8, &first))
        return fly_err_algebra(I, a->call);
      if (x != first + k % 8)
        return fly_err(I, a->node[si],
                       "%s %s rows of 8 consecutive 16-bit elements, but elements %" PRId64
                       "..%" PRId64 " of this thread's part of the tile are not consecutive; "
                       "a tile of the other major order needs the _trans atom (smem_copy_A/B/C "
                       "chooses it)",
                       row->name, ld ? "reads" : "writes", k - k % 8, k - k % 8 + 7);
    }
  }
  return fly_emit_effect(I, FLY_OPCODE_COPY, 3, a->v, a->call) ? fly_val_none() : NULL;
}

const FlyVal *fly_builtin_copy(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *atom = a->v[0];
  bool tiled = atom->kind == FLY_V_OBJECT && atom->object.kind == FLY_OBJ_TILED_COPY;
  if (!tiled && !(atom->kind == FLY_V_OBJECT && atom->object.kind == FLY_OBJ_COPY_ATOM))
    return fly_err(I, a->node[0], "copy takes a copy atom or a tiled copy first, not %s",
                   fly_val_describe(&I->A, atom));
  if (I->in_launch)
    return fly_err(I, a->call, "copy runs on the GPU; a launch block runs on the host");
  if (tiled && !atom->object.base)
    return fly_err(I, a->node[0],
                   "this thread-value layout has no copy atom; make it with "
                   "tiled_copy(atom, threads, values)");
  const FlyVal *src = fly_arg_tensor(I, a, 1, "copy");
  const FlyVal *dst = src ? fly_arg_tensor(I, a, 2, "copy") : NULL;
  if (!dst)
    return NULL;
  for (int i = 1; i <= 2; i++)
    if (fly_is_identity(a->v[i]))
      return fly_err(I, a->node[i],
                     "an identity tensor holds coordinates, not memory: load its "
                     "elements' coordinates with c[i].load() instead");
  const FlyType *elem = tiled ? atom->object.base->object.elem : atom->object.elem;
  for (int i = 1; i <= 2; i++)
    if (!fly_type_equal(a->v[i]->tensor.elem, elem))
      return fly_err(I, a->node[i], "the copy atom moves %s, but this tensor holds %s",
                     fly_type_str(&I->A, elem), fly_type_str(&I->A, a->v[i]->tensor.elem));
  const FlyAtom *row = tiled ? atom->object.base->object.atom : atom->object.atom;
  if (fly_atom_is_matrix(row))
    return matrix_copy(I, a, row, tiled ? atom->object.tv : NULL);
  int64_t ns, nd;
  if (fly_tensor_static_size(I, src, &ns) && fly_tensor_static_size(I, dst, &nd) && ns != nd)
    return fly_err(I, a->call, "copy from %" PRId64 " elements to %" PRId64 " elements", ns, nd);
  bool async = row->kind == FLY_ATOM_COPY && row->copy == FLY_COPY_CP_ASYNC;
  if (async && src->tensor.space != FLY_SPACE_GLOBAL)
    return fly_err(I, a->node[1], "%s copies from global memory; this source is %s", row->name,
                   fly_val_describe(&I->A, src));
  if (async && dst->tensor.space != FLY_SPACE_SHARED)
    return fly_err(I, a->node[2], "%s copies into shared memory; this destination is %s", row->name,
                   fly_val_describe(&I->A, dst));
  /* A buffer resource is made from the global side's tensor argument. */
  if (row->kind == FLY_ATOM_COPY && row->copy == FLY_COPY_BUFFER) {
    bool load = row->id == FLY_ATOM_AMD_BUFFER_LOAD;
    const FlyVal *g = load ? src : dst, *o = load ? dst : src;
    if (g->tensor.space != FLY_SPACE_GLOBAL)
      return fly_err(I, a->node[load ? 1 : 2], "%s %s global memory; this %s is %s", row->name,
                     load ? "reads from" : "writes to", load ? "source" : "destination",
                     fly_val_describe(&I->A, g));
    if (o->tensor.space == FLY_SPACE_GLOBAL)
      return fly_err(I, a->node[load ? 2 : 1],
                     "%s moves between global memory and registers or shared memory; this %s "
                     "is global too",
                     row->name, load ? "destination" : "source");
  }
  const FlyNode *fill_at;
  const FlyVal *fill = fly_arg_named(a, "fill", &fill_at);
  if (async && fill &&
      !((fill->kind == FLY_V_INT && fill->i == 0) || (fill->kind == FLY_V_FLOAT && fill->f == 0.0)))
    return fly_err(I, fill_at, "%s zero-fills a masked element: its fill is 0 (or leave fill out)",
                   row->name);
  if (a->n == 3 && !fill)
    return fly_emit_effect(I, FLY_OPCODE_COPY, 3, a->v, a->call) ? fly_val_none() : NULL;
  if (a->n == 3)
    return fly_err(I, fill_at,
                   "fill is what a masked element receives: give the predicate too, "
                   "copy(atom, src, dst, pred, fill = x)");
  /* The predicate: one bool per element of src, in the same order. Where
     it is false the element is neither read nor written (or, with fill,
     dst receives fill). */
  const FlyVal *pred = fly_arg_tensor(I, a, 3, "copy");
  if (!pred)
    return NULL;
  const FlyType *pe = pred->tensor.elem;
  if (pe->kind != FLY_TY_SCALAR || pe->code != FLY_TYPE_I1)
    return fly_err(I, a->node[3], "the predicate of copy is a tensor of i1 (bools), not of %s",
                   fly_type_str(&I->A, pe));
  int64_t np;
  if (!fly_tensor_static_size(I, pred, &np) || !fly_tensor_static_size(I, src, &ns))
    return fly_err(I, a->node[3],
                   "a predicated copy needs a source and a predicate whose sizes are known at "
                   "compile time");
  if (np != ns)
    return fly_err(I, a->node[3],
                   "the predicate has %" PRId64 " elements and the source %" PRId64
                   ": one bool per element",
                   np, ns);
  const FlyVal *args[5] = {a->v[0], a->v[1], a->v[2], a->v[3], NULL};
  if (fill) {
    args[4] = fly_convert(I, fill, elem, fill_at, false);
    if (!args[4])
      return NULL;
  }
  return fly_emit_effect(I, FLY_OPCODE_COPY, fill ? 5 : 4, args, a->call) ? fly_val_none() : NULL;
}

/* The value of an MMA operand: a register fragment or a runtime vector. */
static const FlyType *operand_type(FlyInterp *I, const FlyArgs *a, int i) {
  const FlyVal *v = a->v[i];
  if (v->kind == FLY_V_TENSOR)
    return fly_tensor_value_type(I, v, a->node[i], "gemm");
  if (v->kind == FLY_V_RUNTIME)
    return v->type;
  fly_err(I, a->node[i], "gemm takes fragments or vectors, not %s", fly_val_describe(&I->A, v));
  return NULL;
}

/* gemm with a wgmma atom: A and B are read by the MMA from shared memory
   (their partitions by the tiled MMA, each thread naming its warpgroup's
   whole tile), C is the accumulator's value; with an RS atom A is the
   thread's fragment in registers, as for mma.sync. */
static const FlyVal *wgmma(FlyInterp *I, const FlyArgs *a, const FlyObject *atom) {
  bool rs = fly_wgmma_a_in_registers(atom->atom);
  const FlyVal *args[4] = {a->v[0], a->v[1], a->v[2], a->v[3]};
  if (rs) {
    const FlyVal *v = a->v[1];
    if (v->kind == FLY_V_TENSOR && v->tensor.space != FLY_SPACE_REGISTER)
      return fly_err(I, a->node[1],
                     "%s takes A from registers: pass the thread's fragment "
                     "(thr.partition_fragment_A, filled by a copy or a store) or its values, "
                     "not %s",
                     atom->atom->name, fly_val_describe(&I->A, v));
    const FlyType *t = operand_type(I, a, 1);
    if (!t)
      return NULL;
    const FlyType *e = t->kind == FLY_TY_VEC ? t->elem : t;
    if (!fly_type_equal(e, fly_mma_elem(atom, 'A')))
      return fly_err_mma_type(I, a->node[1], atom, 'A', "this fragment holds", e);
    /* A fragment goes in as its values, as rA.load() would give them. */
    if (v->kind == FLY_V_TENSOR) {
      FlyOrigin o = {a->node[1], "the values of wgmma's A fragment"};
      args[1] =
          fly_emit_value(I, fly_val_runtime(&I->A, t, o), FLY_OPCODE_LOAD, 1, &a->v[1], a->node[1]);
      if (!args[1])
        return NULL;
    }
  }
  for (int i = rs ? 2 : 1; i <= 2; i++) {
    const FlyVal *v = a->v[i];
    if (v->kind != FLY_V_TENSOR || v->tensor.space != FLY_SPACE_SHARED)
      return fly_err(I, a->node[i],
                     "%s reads %c from shared memory: pass the tiled MMA's partition of a "
                     "shared tile (thr.partition_%c(s)), not %s",
                     atom->atom->name, i == 1 ? 'A' : 'B', i == 1 ? 'A' : 'B',
                     fly_val_describe(&I->A, v));
    const FlyType *want = fly_mma_elem(atom, i == 1 ? 'A' : 'B');
    if (!fly_type_equal(v->tensor.elem, want))
      return fly_err_mma_type(I, a->node[i], atom, i == 1 ? 'A' : 'B', "this tensor holds",
                              v->tensor.elem);
  }
  const FlyType *tc = operand_type(I, a, 3);
  if (!tc)
    return NULL;
  const FlyType *e = tc->kind == FLY_TY_VEC ? tc->elem : tc;
  if (!fly_type_equal(e, atom->acc))
    return fly_err(I, a->node[3], "the MMA takes %s here, not %s", fly_type_str(&I->A, atom->acc),
                   fly_type_str(&I->A, e));
  FlyOrigin o = {a->call, "the result of an MMA"};
  return fly_emit_value(I, fly_val_runtime(&I->A, tc, o), FLY_OPCODE_GEMM, 4, args, a->call);
}

const FlyVal *fly_builtin_gemm(FlyInterp *I, const FlyArgs *a) {
  const FlyVal *m = a->v[0];
  const FlyObject *atom = NULL;
  if (m->kind == FLY_V_OBJECT && m->object.kind == FLY_OBJ_MMA_ATOM)
    atom = &m->object;
  else if (m->kind == FLY_V_OBJECT && m->object.kind == FLY_OBJ_TILED_MMA)
    atom = &m->object.base->object;
  else if (m->kind == FLY_V_OBJECT && m->object.kind == FLY_OBJ_THR_MMA)
    atom = &m->object.base->object.base->object;
  else
    return fly_err(I, a->node[0], "gemm takes an MMA atom or a tiled MMA first, not %s",
                   fly_val_describe(&I->A, m));
  if (atom->atom->mma == FLY_MMA_NV_WGMMA)
    return wgmma(I, a, atom);
  const FlyType *ta = operand_type(I, a, 1), *tb = ta ? operand_type(I, a, 2) : NULL;
  const FlyType *tc = tb ? operand_type(I, a, 3) : NULL;
  if (!tc)
    return NULL;
  const FlyType *types[3] = {ta, tb, tc};
  for (int i = 0; i < 3; i++) {
    const FlyType *e = types[i]->kind == FLY_TY_VEC ? types[i]->elem : types[i];
    const FlyType *want = fly_mma_elem(atom, "ABC"[i]);
    if (!fly_type_equal(e, want))
      return fly_err(I, a->node[i + 1], "the MMA takes %s here, not %s", fly_type_str(&I->A, want),
                     fly_type_str(&I->A, e));
  }
  FlyOrigin o = {a->call, "the result of an MMA"};
  return fly_emit_value(I, fly_val_runtime(&I->A, tc, o), FLY_OPCODE_GEMM, 4, a->v, a->call);
}
