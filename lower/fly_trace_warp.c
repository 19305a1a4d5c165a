/* fly_trace_warp.c — the warp operations as each vendor's instructions.
 *
 * Fly's shuffles mean what CUDA's __shfl_sync, __shfl_xor_sync,
 * __shfl_up_sync and __shfl_down_sync mean with a full mask, on every
 * target: the warp is cut into segments of `width` lanes, and each lane
 * reads the lane source_lane() names, or keeps its own value where that
 * lane is not one it may read. gpu.shuffle cannot say this on both vendors
 * (its NVIDIA lowering lets only the lanes below `width` take part, its AMD
 * one cuts segments but lets shuffle_up read across them), so the vendors'
 * own operations are emitted:
 *
 *   NVIDIA  nvvm.shfl.sync: its operand c holds the segment mask, and the
 *           hardware applies the rule itself. Votes and ballots are
 *           nvvm.vote.sync.
 *   AMD     a shuffle by a static lane, mask or delta is a fixed
 *           permutation of the lanes, made by the cheapest instruction that
 *           makes it: a DPP move (quad_perm, row_mirror, row_half_mirror,
 *           row_shr, row_shl), gfx950's permlane swaps, readlane for a
 *           broadcast, ds_swizzle within 32 lanes; any other shuffle is
 *           ds_bpermute from the source lane computed here. Votes and
 *           ballots are rocdl.ballot.
 *
 * Values of 8 to 64 bits move as one or two 32-bit words. */
#include "fly_trace_internal.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

enum { MAX_WARP = 64 };

/* arith.cmpi's predicates. */
enum { CMP_EQ = 0, CMP_NE = 1, CMP_SGE = 5, CMP_ULT = 6 };

static MlirType int_type(FlyTrace *t, int bits) {
  return mlirIntegerTypeGet(t->m->ctx, (unsigned)bits);
}

static MlirValue op1(FlyTrace *t, const char *name, MlirType res, int n, const MlirValue *v,
                     int nattr, const MlirNamedAttribute *attr) {
  return fly_mlir_op1(t->m, t->ip, t->loc, name, res, n, v, nattr, attr);
}

/* An operation of one operand, or of two of a's type. */
static MlirValue unop(FlyTrace *t, const char *name, MlirType res, MlirValue a) {
  return op1(t, name, res, 1, &a, 0, NULL);
}
static MlirValue binop(FlyTrace *t, const char *name, MlirValue a, MlirValue b) {
  MlirValue v[2] = {a, b};
  return op1(t, name, mlirValueGetType(a), 2, v, 0, NULL);
}

static MlirValue cmpi(FlyTrace *t, int predicate, MlirValue a, MlirValue b) {
  MlirValue v[2] = {a, b};
  MlirNamedAttribute p =
      fly_mlir_named(t->m, "predicate", mlirIntegerAttrGet(int_type(t, 64), predicate));
  return op1(t, "arith.cmpi", int_type(t, 1), 2, v, 1, &p);
}

static MlirNamedAttribute parsed(FlyTrace *t, const char *name, const char *text) {
  return fly_mlir_named(t->m, name,
                        mlirAttributeParseGet(t->m->ctx, mlirStringRefCreateFromCString(text)));
}

static MlirNamedAttribute i32_attr(FlyTrace *t, const char *name, int v) {
  return fly_mlir_named(t->m, name, mlirIntegerAttrGet(int_type(t, 32), v));
}

/* This thread's lane, as i32. */
static MlirValue lane_id(FlyTrace *t) {
  MlirValue id = op1(t, "gpu.lane_id", mlirIndexTypeGet(t->m->ctx), 0, NULL, 0, NULL);
  return unop(t, "arith.index_cast", int_type(t, 32), id);
}

/* ---- the rule -------------------------------------------------------------------------------- */

/* The lane that `lane` reads in a shuffle `op` by k within segments of w
   lanes, in a warp of `warp` lanes: CUDA's rule. The segment of a lane is
   the w lanes from lane & -w. shuffle reads lane k % w of the segment;
   shuffle_xor lane ^ k, shuffle_down lane + k, while that is not past the
   segment; shuffle_up lane - k, while that is not before it (k taken
   modulo warp). Otherwise a lane reads itself. A mask of w or more can
   reach back into an earlier segment, as in CUDA. */
static int source_lane(FlyOpcode op, int lane, int64_t k, int w, int warp) {
  int base = lane & -w, by = (int)(k & (warp - 1)), j;
  switch (op) {
  case FLY_OPCODE_SHUFFLE_XOR:
    j = lane ^ by;
    return j < base + w ? j : lane;
  case FLY_OPCODE_SHUFFLE_DOWN:
    j = lane + by;
    return j < base + w ? j : lane;
  case FLY_OPCODE_SHUFFLE_UP:
    j = lane - by;
    return j >= base ? j : lane;
  default:
    return base | (int)(k & (w - 1));
  }
}

/* A static shuffle: the lane each lane reads. */
typedef struct Perm {
  int n;
  int src[MAX_WARP];
} Perm;

/* Whether every lane reads f(lane, arg). */
static bool perm_is(const Perm *p, int (*f)(int, int), int arg) {
  for (int l = 0; l < p->n; l++)
    if (p->src[l] != f(l, arg))
      return false;
  return true;
}

static int lane_xor(int l, int k) { return l ^ k; }

/* ---- values as 32-bit words ------------------------------------------------------------------ */

static int value_bits(const FlyType *ty) {
  return ty->kind == FLY_TY_VEC ? ty->n * fly_type_bits(ty->elem) : fly_type_bits(ty);
}

/* x of type ty as the integer of its bits, and back. */
static MlirValue to_bits(FlyTrace *t, MlirValue x, const FlyType *ty) {
  MlirType bits = int_type(t, value_bits(ty));
  if (ty->kind == FLY_TY_VEC) {
    int64_t one = 1, zero = 0;
    MlirValue v = unop(t, "vector.bitcast", mlirVectorTypeGet(1, &one, bits), x);
    MlirNamedAttribute at =
        fly_mlir_named(t->m, "static_position", mlirDenseI64ArrayGet(t->m->ctx, 1, &zero));
    return op1(t, "vector.extract", bits, 1, &v, 1, &at);
  }
  return fly_type_is_float(ty) ? unop(t, "arith.bitcast", bits, x) : x;
}

static MlirValue from_bits(FlyTrace *t, MlirValue x, const FlyType *ty) {
  MlirType rt = fly_trace_type(t, ty);
  if (ty->kind == FLY_TY_VEC) {
    int64_t one = 1;
    MlirValue v = unop(t, "vector.broadcast", mlirVectorTypeGet(1, &one, mlirValueGetType(x)), x);
    return unop(t, "vector.bitcast", rt, v);
  }
  return fly_type_is_float(ty) ? unop(t, "arith.bitcast", rt, x) : x;
}

/* The words of x (its low word first); how many. An i32 or f32 is its own
   word: every instruction here moves either. */
static int split(FlyTrace *t, MlirValue x, const FlyType *ty, MlirValue *word) {
  int bits = value_bits(ty);
  if (bits == 32 && ty->kind == FLY_TY_SCALAR) {
    word[0] = x;
    return 1;
  }
  MlirValue v = to_bits(t, x, ty);
  if (bits < 32) {
    word[0] = unop(t, "arith.extui", int_type(t, 32), v);
    return 1;
  }
  if (bits == 32) {
    word[0] = v;
    return 1;
  }
  word[0] = unop(t, "arith.trunci", int_type(t, 32), v);
  MlirValue high =
      binop(t, "arith.shrui", v, fly_trace_constant(t, fly_type_scalar(FLY_TYPE_I64), 0, 32));
  word[1] = unop(t, "arith.trunci", int_type(t, 32), high);
  return 2;
}

static MlirValue join(FlyTrace *t, const MlirValue *word, const FlyType *ty) {
  int bits = value_bits(ty);
  MlirValue v = word[0];
  if (bits == 32 && ty->kind == FLY_TY_SCALAR)
    return v;
  if (bits < 32) {
    v = unop(t, "arith.trunci", int_type(t, bits), v);
  } else if (bits == 64) {
    MlirType i64 = int_type(t, 64);
    MlirValue low = unop(t, "arith.extui", i64, word[0]);
    MlirValue high = unop(t, "arith.extui", i64, word[1]);
    high =
        binop(t, "arith.shli", high, fly_trace_constant(t, fly_type_scalar(FLY_TYPE_I64), 0, 32));
    v = binop(t, "arith.ori", low, high);
  }
  return from_bits(t, v, ty);
}

/* ---- NVIDIA ---------------------------------------------------------------------------------- */

/* shfl.sync of a word by b, with the full mask. Its operand c is the
   segment mask, (32 - w) << 8 (the bits of a lane that name its segment),
   and the clamp in its low bits: 31 for the modes that read upwards, whose
   last lane is then the segment's last, 0 for up, whose first lane is the
   segment's first. */
static MlirValue nv_shuffle(FlyTrace *t, FlyOpcode op, MlirValue word, MlirValue b, int w) {
  const char *kind = op == FLY_OPCODE_SHUFFLE_XOR    ? "#nvvm<shfl_kind bfly>"
                     : op == FLY_OPCODE_SHUFFLE_UP   ? "#nvvm<shfl_kind up>"
                     : op == FLY_OPCODE_SHUFFLE_DOWN ? "#nvvm<shfl_kind down>"
                                                     : "#nvvm<shfl_kind idx>";
  int c = (32 - w) << 8 | (op == FLY_OPCODE_SHUFFLE_UP ? 0 : 31);
  MlirValue v[4] = {fly_trace_i32(t, -1), word, b, fly_trace_i32(t, c)};
  MlirNamedAttribute k = parsed(t, "kind", kind);
  return op1(t, "nvvm.shfl.sync", mlirValueGetType(word), 4, v, 1, &k);
}

/* ---- AMD ------------------------------------------------------------------------------------- */

static int lane_from(int l, int k) {
  (void)l;
  return k;
}
/* DPP row_shr / row_shl by d within rows of 16 lanes: a lane whose source
   is outside its row keeps its own value (bound_ctrl off, old = src). */
static int row_shr(int l, int d) { return (l & 15) >= d ? l - d : l; }
static int row_shl(int l, int d) { return (l & 15) + d < 16 ? l + d : l; }

/* A permutation within each quad, the same in every quad: its four source
   positions in q. */
static bool quad_perm(const Perm *p, int q[4]) {
  for (int l = 0; l < p->n; l++) {
    if ((p->src[l] & ~3) != (l & ~3))
      return false;
    if (l < 4)
      q[l] = p->src[l] & 3;
    else if ((p->src[l] & 3) != q[l & 3])
      return false;
  }
  return true;
}

/* ds_swizzle's bit mode, within each 32 lanes: lane reads
   ((lane & and) | or) ^ xor of its 32. The masks follow from lanes 0 and
   1 << i: a bit of lane that changes the source passes through `and`. */
static bool swizzle_masks(const Perm *p, int m[3]) {
  int at0 = p->src[0] & 31, and_mask = 0;
  for (int i = 0; i < 5; i++)
    if (((p->src[1 << i] ^ at0) >> i & 1) != 0)
      and_mask |= 1 << i;
  m[0] = and_mask;
  m[1] = at0 & ~and_mask;
  m[2] = at0 & and_mask;
  for (int l = 0; l < p->n; l++)
    if (p->src[l] != ((l & ~31) | ((((l & m[0]) | m[1]) ^ m[2]) & 31)))
      return false;
  return true;
}

static MlirValue amd_dpp(FlyTrace *t, MlirValue word, const char *kind, MlirAttribute arg) {
  MlirValue v[2] = {word, word};
  MlirNamedAttribute a[2] = {parsed(t, "kind", kind)};
  int n = 1;
  if (!mlirAttributeIsNull(arg))
    a[n++] = fly_mlir_named(t->m, "permArgument", arg);
  return op1(t, "amdgpu.dpp", mlirValueGetType(word), 2, v, n, a);
}

/* How an AMD target makes a static permutation: the operation, and what it
   needs. */
typedef enum AmdMove {
  AMD_READLANE,      /* every lane reads lane arg */
  AMD_QUAD_PERM,     /* DPP quad_perm(q) */
  AMD_ROW_MIRROR,    /* DPP row_mirror: lane ^ 15 */
  AMD_ROW_HALF,      /* DPP row_half_mirror: lane ^ 7 */
  AMD_ROW_SHR,       /* DPP row_shr(arg) */
  AMD_ROW_SHL,       /* DPP row_shl(arg) */
  AMD_PERMLANE_SWAP, /* lane ^ arg, arg 16 or 32 */
  AMD_SWIZZLE,       /* ds_swizzle bit mode (q: and, or, xor) */
  AMD_BPERMUTE,      /* ds_bpermute from a computed lane */
} AmdMove;

typedef struct AmdPlan {
  AmdMove move;
  int arg;
  int q[4];          /* AMD_QUAD_PERM: the sources; AMD_SWIZZLE: the masks */
  MlirValue address; /* AMD_BPERMUTE: 4 * the source lane */
} AmdPlan;

/* The cheapest move that makes the static permutation p. */
static AmdMove amd_static_move(FlyTrace *t, const Perm *p, AmdPlan *plan) {
  bool dpp = fly_target_has(t->target, FLY_FEATURE_DPP);
  if (perm_is(p, lane_from, p->src[0]))
    return plan->arg = p->src[0], AMD_READLANE;
  if (dpp && quad_perm(p, plan->q))
    return AMD_QUAD_PERM;
  if (dpp && perm_is(p, lane_xor, 15))
    return AMD_ROW_MIRROR;
  if (dpp && perm_is(p, lane_xor, 7))
    return AMD_ROW_HALF;
  for (int d = 1; dpp && d < 16; d++) {
    if (perm_is(p, row_shr, d))
      return plan->arg = d, AMD_ROW_SHR;
    if (perm_is(p, row_shl, d))
      return plan->arg = d, AMD_ROW_SHL;
  }
  for (int r = 16; r <= 32 && fly_target_has(t->target, FLY_FEATURE_PERMLANE_SWAP); r *= 2)
    if (r < p->n && perm_is(p, lane_xor, r))
      return plan->arg = r, AMD_PERMLANE_SWAP;
  if (swizzle_masks(p, plan->q))
    return AMD_SWIZZLE;
  return AMD_BPERMUTE;
}

/* k & mask as an i32, folded when k is static. */
static MlirValue low_bits(FlyTrace *t, const FlyVal *k, int64_t mask) {
  if (k->kind == FLY_V_INT)
    return fly_trace_i32(t, k->i & mask);
  return binop(t, "arith.andi", fly_trace_value(t, k, NULL), fly_trace_i32(t, mask));
}

/* The source lane of a shuffle by k within segments of w lanes, as
   source_lane() says, computed at run time: j where a lane may read it,
   the lane itself where not. */
static MlirValue amd_source_lane(FlyTrace *t, FlyOpcode op, const FlyVal *k, int w) {
  int warp = t->target->warp_size;
  bool whole = w == warp; /* one segment, from lane 0 */
  if (op == FLY_OPCODE_SHUFFLE && whole)
    return low_bits(t, k, w - 1);
  MlirValue lane = lane_id(t), base = {NULL};
  if (!whole)
    base = binop(t, "arith.andi", lane, fly_trace_i32(t, -w));
  if (op == FLY_OPCODE_SHUFFLE)
    return binop(t, "arith.ori", base, low_bits(t, k, w - 1));
  MlirValue by = low_bits(t, k, warp - 1), j, ok;
  if (op == FLY_OPCODE_SHUFFLE_UP) {
    j = binop(t, "arith.subi", lane, by);
    ok = cmpi(t, CMP_SGE, j, whole ? fly_trace_i32(t, 0) : base);
  } else {
    j = binop(t, op == FLY_OPCODE_SHUFFLE_XOR ? "arith.xori" : "arith.addi", lane, by);
    if (whole && op == FLY_OPCODE_SHUFFLE_XOR) /* lane ^ by is a lane of the warp */
      return j;
    MlirValue end =
        whole ? fly_trace_i32(t, warp) : binop(t, "arith.addi", base, fly_trace_i32(t, w));
    ok = cmpi(t, CMP_ULT, j, end);
  }
  MlirValue v[3] = {ok, j, lane};
  return op1(t, "arith.select", int_type(t, 32), 3, v, 0, NULL);
}

/* How an AMD target makes a shuffle by `by` within segments of w lanes: a
   static one (p: its permutation) as the cheapest move that makes p, any
   other through ds_bpermute. */
static AmdPlan amd_plan(FlyTrace *t, FlyOpcode op, const Perm *p, const FlyVal *by, int w) {
  AmdPlan plan = {AMD_BPERMUTE, 0, {0, 0, 0, 0}, {NULL}};
  if (p && (plan.move = amd_static_move(t, p, &plan)) != AMD_BPERMUTE)
    return plan;
  MlirValue src = amd_source_lane(t, op, by, w);
  /* ds_bpermute addresses lanes in bytes, 4 a lane. */
  plan.address = binop(t, "arith.shli", src, fly_trace_i32(t, 2));
  return plan;
}

/* ds_bpermute of a word, which it takes as an i32. */
static MlirValue amd_bpermute(FlyTrace *t, MlirValue address, MlirValue word) {
  MlirType type = mlirValueGetType(word), i32 = int_type(t, 32);
  bool cast = !mlirTypeEqual(type, i32);
  MlirValue v[2] = {address, cast ? unop(t, "arith.bitcast", i32, word) : word};
  MlirValue r = op1(t, "rocdl.ds_bpermute", i32, 2, v, 0, NULL);
  return cast ? unop(t, "arith.bitcast", type, r) : r;
}

static MlirValue amd_move(FlyTrace *t, const AmdPlan *plan, MlirValue word) {
  MlirType type = mlirValueGetType(word);
  switch (plan->move) {
  case AMD_READLANE: {
    MlirValue v[2] = {word, fly_trace_i32(t, plan->arg)};
    return op1(t, "rocdl.readlane", type, 2, v, 0, NULL);
  }
  case AMD_QUAD_PERM: {
    char text[96];
    snprintf(text, sizeof text, "[%d : i32, %d : i32, %d : i32, %d : i32]", plan->q[0], plan->q[1],
             plan->q[2], plan->q[3]);
    return amd_dpp(t, word, "#amdgpu<dpp_perm quad_perm>",
                   mlirAttributeParseGet(t->m->ctx, mlirStringRefCreateFromCString(text)));
  }
  case AMD_ROW_MIRROR:
    return amd_dpp(t, word, "#amdgpu<dpp_perm row_mirror>", (MlirAttribute){NULL});
  case AMD_ROW_HALF:
    return amd_dpp(t, word, "#amdgpu<dpp_perm row_half_mirror>", (MlirAttribute){NULL});
  case AMD_ROW_SHR:
  case AMD_ROW_SHL:
    return amd_dpp(t, word,
                   plan->move == AMD_ROW_SHR ? "#amdgpu<dpp_perm row_shr>"
                                             : "#amdgpu<dpp_perm row_shl>",
                   mlirIntegerAttrGet(int_type(t, 32), plan->arg));
  case AMD_PERMLANE_SWAP: {
    MlirNamedAttribute a = i32_attr(t, "row_length", plan->arg);
    return op1(t, "amdgpu.permlane_swap", type, 1, &word, 1, &a);
  }
  case AMD_SWIZZLE: {
    MlirNamedAttribute a[3] = {i32_attr(t, "and_mask", plan->q[0]),
                               i32_attr(t, "or_mask", plan->q[1]),
                               i32_attr(t, "xor_mask", plan->q[2])};
    return op1(t, "amdgpu.swizzle_bitmode", type, 1, &word, 3, a);
  }
  case AMD_BPERMUTE:
    return amd_bpermute(t, plan->address, word);
  }
  return word;
}

/* ---- the operations -------------------------------------------------------------------------- */

MlirValue fly_trace_shuffle(FlyTrace *t, FlyOpcode op, const FlyVal *x, const FlyVal *by, int w) {
  int warp = t->target->warp_size;
  Perm perm = {warp, {0}};
  for (int l = 0; by->kind == FLY_V_INT && l < warp; l++)
    perm.src[l] = source_lane(op, l, by->i, w, warp);
  const Perm *p = by->kind == FLY_V_INT ? &perm : NULL;
  MlirValue v = fly_trace_handle(t, x);
  if (mlirValueIsNull(v) || (p && perm_is(p, lane_xor, 0))) /* every lane reads itself */
    return v;
  if (!p && mlirValueIsNull(fly_trace_handle(t, by)))
    return (MlirValue){NULL};
  MlirValue word[2];
  int n = split(t, v, x->type, word);
  if (t->target->vendor == FLY_VENDOR_NVIDIA) {
    /* A static operand is given modulo what the hardware reads of it. */
    int64_t mod = op == FLY_OPCODE_SHUFFLE ? w : warp;
    MlirValue b = p ? fly_trace_i32(t, by->i & (mod - 1)) : fly_trace_value(t, by, NULL);
    for (int i = 0; i < n; i++)
      word[i] = nv_shuffle(t, op, word[i], b, w);
  } else {
    AmdPlan plan = amd_plan(t, op, p, by, w);
    for (int i = 0; i < n; i++)
      word[i] = amd_move(t, &plan, word[i]);
  }
  return join(t, word, x->type);
}

/* A ballot on AMD: one bit per lane of the wavefront, 0 for the lanes
   that do not run. */
static MlirValue amd_ballot(FlyTrace *t, MlirValue p) {
  return op1(t, "rocdl.ballot", int_type(t, t->target->warp_size), 1, &p, 0, NULL);
}

static MlirValue nv_vote(FlyTrace *t, FlyOpcode op, MlirValue p) {
  const char *kind = op == FLY_OPCODE_VOTE_ANY   ? "#nvvm<vote_sync_kind any>"
                     : op == FLY_OPCODE_VOTE_ALL ? "#nvvm<vote_sync_kind all>"
                                                 : "#nvvm<vote_sync_kind ballot>";
  MlirValue v[2] = {fly_trace_i32(t, -1), p};
  MlirNamedAttribute k = parsed(t, "kind", kind);
  return op1(t, "nvvm.vote.sync", int_type(t, op == FLY_OPCODE_BALLOT ? 32 : 1), 2, v, 1, &k);
}

/* vote_any is a ballot that is not 0; vote_all one that has every lane
   that runs (the ballot of true). */
static MlirValue amd_vote(FlyTrace *t, FlyOpcode op, MlirValue p) {
  MlirValue mask = amd_ballot(t, p);
  if (op == FLY_OPCODE_BALLOT)
    return mask;
  if (op == FLY_OPCODE_VOTE_ANY) {
    MlirNamedAttribute zero =
        fly_mlir_named(t->m, "value", mlirIntegerAttrGet(mlirValueGetType(mask), 0));
    return cmpi(t, CMP_NE, mask,
                op1(t, "arith.constant", mlirValueGetType(mask), 0, NULL, 1, &zero));
  }
  MlirValue running = amd_ballot(t, fly_trace_constant(t, fly_type_scalar(FLY_TYPE_I1), 0, 1));
  return cmpi(t, CMP_EQ, mask, running);
}

MlirValue fly_trace_vote(FlyTrace *t, FlyOpcode op, const FlyVal *pred) {
  MlirValue p = fly_trace_value(t, pred, fly_type_scalar(FLY_TYPE_I1));
  if (mlirValueIsNull(p))
    return p;
  return t->target->vendor == FLY_VENDOR_NVIDIA ? nv_vote(t, op, p) : amd_vote(t, op, p);
}
