/* fly_trace_ops.c — the operations: each opcode's code (the dispatch), and
 * the arithmetic, GPU indices, math and printf.
 *
 * The interpreter names each runtime operation (fly_emit.h) and passes its
 * own values; here each name becomes MLIR. Numbers use arith, math and
 * vector; GPU indices, barriers and printf use gpu. Vecs, tensors and
 * atoms, and memory have files of their own (fly_trace_op.h lists them);
 * the warp operations, each vendor's own, are fly_trace_warp.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_strbuf.h"
#include "fly_trace_op.h"

/* The type both operands of a binary operator take: the runtime one's. */
static const FlyType *operand_type(const FlyVal *a, const FlyVal *b, const FlyType *result) {
  const FlyType *ta = a->kind == FLY_V_RUNTIME ? a->type : NULL;
  const FlyType *tb = b->kind == FLY_V_RUNTIME ? b->type : NULL;
  if (ta && tb)
    return ta->kind == FLY_TY_VEC ? ta : tb;
  if (ta || tb)
    return ta ? ta : tb;
  return result;
}

/* ---- arithmetic ---------------------------------------------------------------------------- */

/* arith's predicate for a comparison opcode, or -1. */
static int cmp_predicate(FlyOpcode op, bool is_float) {
  /* eq ne slt sle sgt sge; oeq une olt ole ogt oge */
  static const struct {
    FlyOpcode op;
    int ipred, fpred;
  } table[] = {{FLY_OPCODE_EQ, 0, 1}, {FLY_OPCODE_NE, 1, 13}, {FLY_OPCODE_LT, 2, 4},
               {FLY_OPCODE_LE, 3, 5}, {FLY_OPCODE_GT, 4, 2},  {FLY_OPCODE_GE, 5, 3}};
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (table[i].op == op)
      return is_float ? table[i].fpred : table[i].ipred;
  return -1;
}

static bool binary(FlyTraceOp *o, FlyOpcode op) {
  FlyTrace *t = o->t;
  const FlyVal *a = o->args[0], *b = o->args[1];
  const FlyType *ty = operand_type(a, b, o->result->type);
  bool fl = fly_type_is_float(scalar_of(ty));
  MlirValue v[2] = {fly_trace_value(t, a, ty), fly_trace_value(t, b, ty)};
  if (mlirValueIsNull(v[0]) || mlirValueIsNull(v[1]))
    return false;
  MlirType rt = fly_trace_type(t, o->result->type);
  int pred = cmp_predicate(op, fl);
  if (pred >= 0) {
    MlirNamedAttribute p = int_attr(t, "predicate", pred);
    return set_result(o, op1(o, fl ? "arith.cmpf" : "arith.cmpi", rt, 2, v, 1, &p));
  }
  static const struct {
    FlyOpcode op;
    const char *i, *f;
  } table[] = {
      {FLY_OPCODE_ADD, "arith.addi", "arith.addf"},  {FLY_OPCODE_SUB, "arith.subi", "arith.subf"},
      {FLY_OPCODE_MUL, "arith.muli", "arith.mulf"},  {FLY_OPCODE_DIV, "arith.divsi", "arith.divf"},
      {FLY_OPCODE_MOD, "arith.remsi", "arith.remf"}, {FLY_OPCODE_SHL, "arith.shli", NULL},
      {FLY_OPCODE_SHR, "arith.shrsi", NULL},         {FLY_OPCODE_BITAND, "arith.andi", NULL},
      {FLY_OPCODE_BITOR, "arith.ori", NULL},         {FLY_OPCODE_BITXOR, "arith.xori", NULL},
      {FLY_OPCODE_AND, "arith.andi", NULL},          {FLY_OPCODE_OR, "arith.ori", NULL},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (table[i].op == op) {
      const char *name = fl ? table[i].f : table[i].i;
      if (!name)
        break;
      return set_result(o, op1(o, name, rt, 2, v, 0, NULL));
    }
  return fly_trace_error(t, o->at, "internal error: no code for the operator '%s'",
                         fly_opcode_name(op));
}

static bool unary(FlyTraceOp *o, FlyOpcode op) {
  FlyTrace *t = o->t;
  const FlyType *ty = o->result->type;
  MlirValue x = fly_trace_value(t, o->args[0], ty);
  if (mlirValueIsNull(x))
    return false;
  MlirType rt = fly_trace_type(t, ty);
  if (op == FLY_OPCODE_NEG && fly_type_is_float(scalar_of(ty)))
    return set_result(o, op1(o, "arith.negf", rt, 1, &x, 0, NULL));
  if (op == FLY_OPCODE_NEG) {
    MlirValue v[2] = {fly_trace_constant(t, ty, 0, 0), x};
    return set_result(o, op1(o, "arith.subi", rt, 2, v, 0, NULL));
  }
  /* ! and ~ flip every bit: xor with all ones (true for i1). */
  MlirValue v[2] = {x, fly_trace_constant(t, ty, 0, -1)};
  return set_result(o, op1(o, "arith.xori", rt, 2, v, 0, NULL));
}

/* setmaxnreg.inc/dec. It only takes effect in a kernel whose register
   count is capped at entry, so the kernel asks ptxas for one block per
   multiprocessor (.minnctapersm 1), which caps it at the registers of its
   block size. */
static bool setmaxnreg(FlyTraceOp *o, bool inc) {
  FlyTrace *t = o->t;
  MlirContext ctx = t->m->ctx;
  if (!mlirOperationIsNull(t->func))
    mlirOperationSetDiscardableAttributeByName(t->func,
                                               mlirStringRefCreateFromCString("nvvm.minctasm"),
                                               mlirIntegerAttrGet(mlirIntegerTypeGet(ctx, 32), 1));
  MlirNamedAttribute a[2] = {
      fly_mlir_named(t->m, "regCount",
                     mlirIntegerAttrGet(mlirIntegerTypeGet(ctx, 32), (int64_t)o->args[0]->i)),
      fly_mlir_named(t->m, "action",
                     mlirAttributeParseGet(
                         ctx, mlirStringRefCreateFromCString(inc ? "#nvvm<action increase>"
                                                                 : "#nvvm<action decrease>")))};
  fly_mlir_op(t->m, t->ip, t->loc, "nvvm.setmaxregister", 0, NULL, 0, NULL, 2, a, 0, NULL);
  return true;
}

/* AMD's scheduling hints (sema/check/fly_builtins_sched.c): calls of
   llvm.amdgcn.sched.barrier, .sched.group.barrier and .s.setprio on
   constants (their immediate operands), and waves_per_eu the kernel's
   rocdl.waves_per_eu. */
static bool sched_hint(FlyTraceOp *o, FlyOpcode op) {
  FlyTrace *t = o->t;
  if (op == FLY_OPCODE_WAVES_PER_EU) {
    if (!mlirOperationIsNull(t->func))
      mlirOperationSetDiscardableAttributeByName(
          t->func, mlirStringRefCreateFromCString("rocdl.waves_per_eu"),
          mlirIntegerAttrGet(mlirIntegerTypeGet(t->m->ctx, 32), (int64_t)o->args[0]->i));
    return true;
  }
  const char *name = op == FLY_OPCODE_SCHED_BARRIER         ? "llvm.amdgcn.sched.barrier"
                     : op == FLY_OPCODE_SCHED_GROUP_BARRIER ? "llvm.amdgcn.sched.group.barrier"
                                                            : "llvm.amdgcn.s.setprio";
  MlirValue v[3];
  for (int i = 0; i < o->n; i++)
    if (mlirValueIsNull(v[i] = fly_trace_value(t, o->args[i], o->args[i]->type)))
      return false;
  char segments[48];
  snprintf(segments, sizeof segments, "array<i32: %d, 0>", o->n);
  MlirNamedAttribute a[3] = {fly_mlir_named(t->m, "intrin", fly_mlir_str_attr(t->m, name)),
                             parsed_attr(t, "op_bundle_sizes", "array<i32>"),
                             parsed_attr(t, "operandSegmentSizes", segments)};
  fly_mlir_op(t->m, t->ip, t->loc, "llvm.call_intrinsic", 0, NULL, o->n, v, 3, a, 0, NULL);
  return !t->failed;
}

/* ---- GPU ----------------------------------------------------------------------------------- */

/* barrier(id, threads) and barrier_arrive(id, threads): named barrier id
   for `threads` threads (i32s, static or not): barrier.sync.aligned id,
   threads and barrier.arrive.aligned id, threads (bar.sync, bar.arrive). The
   aligned forms are what Fly promises: whole warps reach them together.
   Both are convergent calls in LLVM, which no pass moves across a branch. */
static bool named_barrier(FlyTraceOp *o, bool arrive) {
  FlyTrace *t = o->t;
  MlirValue v[2];
  for (int i = 0; i < 2; i++)
    if (mlirValueIsNull(v[i] = fly_trace_value(t, o->args[i], fly_type_scalar(FLY_TYPE_I32))))
      return false;
  if (arrive) {
    /* The intrinsic, not nvvm.barrier.arrive: that one is inline PTX, which
       LLVM does not know to be convergent. */
    MlirNamedAttribute a[3] = {
        fly_mlir_named(t->m, "intrin",
                       fly_mlir_str_attr(t->m, "llvm.nvvm.barrier.cta.arrive.aligned.count")),
        parsed_attr(t, "op_bundle_sizes", "array<i32>"),
        parsed_attr(t, "operandSegmentSizes", "array<i32: 2, 0>")};
    fly_mlir_op(t->m, t->ip, t->loc, "llvm.call_intrinsic", 0, NULL, 2, v, 3, a, 0, NULL);
    return !t->failed;
  }
  /* id, threads, and no reduction predicate */
  MlirNamedAttribute segments = parsed_attr(t, "operandSegmentSizes", "array<i32: 1, 1, 0>");
  fly_mlir_op(t->m, t->ip, t->loc, "nvvm.barrier", 0, NULL, 2, v, 1, &segments, 0, NULL);
  return !t->failed;
}

/* thread_idx, block_idx, block_dim and grid_dim (their argument is the
   dimension, 0 to 2) and lane. */
static bool gpu_index(FlyTraceOp *o, FlyOpcode op) {
  FlyTrace *t = o->t;
  MlirType index = mlirIndexTypeGet(t->m->ctx);
  MlirValue id;
  if (op == FLY_OPCODE_LANE) {
    id = op1(o, "gpu.lane_id", index, 0, NULL, 0, NULL);
  } else {
    const char *name = op == FLY_OPCODE_THREAD_IDX    ? "gpu.thread_id"
                       : op == FLY_OPCODE_BLOCK_IDX   ? "gpu.block_id"
                       : op == FLY_OPCODE_BLOCK_DIM   ? "gpu.block_dim"
                       : op == FLY_OPCODE_CLUSTER_IDX ? "gpu.cluster_id"
                       : op == FLY_OPCODE_CLUSTER_DIM ? "gpu.cluster_dim"
                                                      : "gpu.grid_dim";
    char dim[32];
    snprintf(dim, sizeof dim, "#gpu<dim %c>", (char)('x' + o->args[0]->i));
    MlirNamedAttribute a = parsed_attr(t, "dimension", dim);
    id = op1(o, name, index, 0, NULL, 1, &a);
  }
  return set_result(o,
                    op1(o, "arith.index_cast", mlirIntegerTypeGet(t->m->ctx, 32), 1, &id, 0, NULL));
}

/* ---- math ---------------------------------------------------------------------------------- */

static bool math(FlyTraceOp *o, FlyOpcode op) {
  FlyTrace *t = o->t;
  const FlyType *ty = o->result->type;
  bool fl = fly_type_is_float(scalar_of(ty));
  static const struct {
    FlyOpcode op;
    const char *f, *i;
  } table[] = {
      {FLY_OPCODE_EXP, "math.exp", NULL},
      {FLY_OPCODE_EXP2, "math.exp2", NULL},
      {FLY_OPCODE_LOG, "math.log", NULL},
      {FLY_OPCODE_LOG2, "math.log2", NULL},
      {FLY_OPCODE_SQRT, "math.sqrt", NULL},
      {FLY_OPCODE_RSQRT, "math.rsqrt", NULL},
      {FLY_OPCODE_ABS, "math.absf", "math.absi"},
      {FLY_OPCODE_FMA, "math.fma", NULL},
      {FLY_OPCODE_MAX, "arith.maxnumf", "arith.maxsi"},
      {FLY_OPCODE_MIN, "arith.minnumf", "arith.minsi"},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    if (table[i].op != op)
      continue;
    const char *name = fl ? table[i].f : table[i].i;
    if (!name)
      break;
    MlirValue v[3];
    for (int k = 0; k < o->n && k < 3; k++)
      if (mlirValueIsNull(v[k] = fly_trace_value(t, o->args[k], ty)))
        return false;
    return set_result(o, op1(o, name, fly_trace_type(t, ty), o->n, v, 0, NULL));
  }
  return fly_trace_error(t, o->at, "internal error: no code for '%s' of %s", fly_opcode_name(op),
                         fly_type_str(&t->A, ty));
}

/* An LLVM intrinsic of one float (a scalar or a vector): the instruction
   both back ends select, where the math dialect would call a device
   library. */
/* fly.mbarrier of `kind` on the one-element shared tensor args[0], with the
   i32 args[1] where there is one (a count, bytes, a parity or a block's
   rank in the cluster). */
static bool mbarrier(FlyTraceOp *o, const char *kind) {
  FlyTrace *t = o->t;
  MlirValue v[2] = {fly_trace_handle(t, o->args[0]), {NULL}};
  int n = 1;
  if (o->n > 1 && o->args[1])
    v[n++] = fly_trace_value(t, o->args[1], fly_type_scalar(FLY_TYPE_I32));
  for (int i = 0; i < n; i++)
    if (mlirValueIsNull(v[i]))
      return false;
  MlirNamedAttribute a = fly_mlir_named(t->m, "kind", fly_mlir_str_attr(t->m, kind));
  fly_mlir_op(t->m, t->ip, t->loc, "fly.mbarrier", 0, NULL, n, v, 1, &a, 0, NULL);
  return !t->failed;
}

static bool intrinsic(FlyTraceOp *o, const char *name) {
  FlyTrace *t = o->t;
  const FlyType *ty = o->result->type;
  MlirValue x = fly_trace_value(t, o->args[0], ty);
  if (mlirValueIsNull(x))
    return false;
  return set_result(o, fly_mlir_intrinsic(t->m, t->ip, t->loc, name, fly_trace_type(t, ty), 1, &x));
}

/* clamp(x, lo, hi) as max, then min: for floats the NaN-propagating
   llvm.maximum and llvm.minimum (max.NaN.f32 on NVIDIA; on AMD v_max_f32
   with a NaN select, or v_maximum3_f32 on gfx950), for integers arith's
   signed max and min. */
static bool clamp(FlyTraceOp *o) {
  FlyTrace *t = o->t;
  const FlyType *ty = o->result->type;
  MlirValue v[3];
  for (int k = 0; k < 3; k++)
    if (mlirValueIsNull(v[k] = fly_trace_value(t, o->args[k], ty)))
      return false;
  MlirType rt = fly_trace_type(t, ty);
  bool fl = fly_type_is_float(scalar_of(ty));
  MlirValue at_least[2] = {v[0], v[1]};
  MlirValue m = fl ? fly_mlir_intrinsic(t->m, t->ip, t->loc, "llvm.maximum", rt, 2, at_least)
                   : op1(o, "arith.maxsi", rt, 2, at_least, 0, NULL);
  MlirValue at_most[2] = {m, v[2]};
  return set_result(o, fl ? fly_mlir_intrinsic(t->m, t->ip, t->loc, "llvm.minimum", rt, 2, at_most)
                          : op1(o, "arith.minsi", rt, 2, at_most, 0, NULL));
}

static bool printf_op(FlyTraceOp *o) {
  FlyTrace *t = o->t;
  const FlyVal *fmt = o->args[0];
  /* Static strings are spliced into the format; numbers are arguments. */
  FlyStrBuf sb;
  fly_sb_init(&sb, &t->A);
  MlirValue v[64];
  int nv = 0, arg = 1;
  for (uint32_t i = 0; i < fmt->len; i++) {
    char c = fmt->s[i];
    if (c != '%' || (i + 1 < fmt->len && fmt->s[i + 1] == '%')) {
      fly_sb_putc(&sb, c);
      if (c == '%')
        fly_sb_putc(&sb, fmt->s[++i]);
      continue;
    }
    uint32_t j = i;
    while (j + 1 < fmt->len && strchr("-+ #0123456789.lhz", fmt->s[j + 1]))
      j++;
    const FlyVal *a = arg < o->n ? o->args[arg++] : NULL;
    if (a && a->kind == FLY_V_STR) {
      for (uint32_t k = 0; k < a->len; k++) {
        if (a->s[k] == '%')
          fly_sb_putc(&sb, '%');
        fly_sb_putc(&sb, a->s[k]);
      }
    } else {
      for (uint32_t k = i; k <= j + 1; k++)
        fly_sb_putc(&sb, fmt->s[k]);
      if (a && nv < 64 && mlirValueIsNull(v[nv++] = fly_trace_value(t, a, NULL)))
        return false;
    }
    i = j + 1;
  }
  MlirNamedAttribute f =
      fly_mlir_named(t->m, "format", fly_mlir_str_attr(t->m, fly_sb_finish(&sb)));
  fly_mlir_op(t->m, t->ip, t->loc, "gpu.printf", 0, NULL, nv, v, 1, &f, 0, NULL);
  return true;
}

/* ---- dispatch ---------------------------------------------------------------------------------
 */

/* Every opcode of fly_ops.def has its case: a new one fails the build
   here (-Wswitch) until it is given its code. */
static bool trace(FlyTraceOp *o, FlyOpcode op) {
  FlyTrace *t = o->t;
  switch (op) {
  case FLY_OPCODE_ADD:
  case FLY_OPCODE_SUB:
  case FLY_OPCODE_MUL:
  case FLY_OPCODE_DIV:
  case FLY_OPCODE_MOD:
  case FLY_OPCODE_SHL:
  case FLY_OPCODE_SHR:
  case FLY_OPCODE_BITAND:
  case FLY_OPCODE_BITOR:
  case FLY_OPCODE_BITXOR:
  case FLY_OPCODE_AND:
  case FLY_OPCODE_OR:
  case FLY_OPCODE_EQ:
  case FLY_OPCODE_NE:
  case FLY_OPCODE_LT:
  case FLY_OPCODE_LE:
  case FLY_OPCODE_GT:
  case FLY_OPCODE_GE:
    return binary(o, op);
  case FLY_OPCODE_NEG:
  case FLY_OPCODE_NOT:
  case FLY_OPCODE_BITNOT:
    return unary(o, op);
  case FLY_OPCODE_CONVERT:
    return set_result(o, fly_trace_convert(t, o->result->type, o->n, o->args));
  case FLY_OPCODE_VEC:
    return fly_op_vec(o);
  case FLY_OPCODE_THREAD_IDX:
  case FLY_OPCODE_BLOCK_IDX:
  case FLY_OPCODE_BLOCK_DIM:
  case FLY_OPCODE_GRID_DIM:
  case FLY_OPCODE_CLUSTER_IDX:
  case FLY_OPCODE_CLUSTER_DIM:
  case FLY_OPCODE_LANE:
    return gpu_index(o, op);
  case FLY_OPCODE_BLOCK_RANK:
  case FLY_OPCODE_CLUSTER_SIZE:
  case FLY_OPCODE_CLUSTER_SYNC:
  case FLY_OPCODE_CLUSTER_ARRIVE:
  case FLY_OPCODE_CLUSTER_ARRIVE_RELAXED:
  case FLY_OPCODE_CLUSTER_WAIT:
  case FLY_OPCODE_FENCE_MBARRIER_INIT:
    return fly_op_cluster(o, op);
  case FLY_OPCODE_SHUFFLE:
  case FLY_OPCODE_SHUFFLE_XOR:
  case FLY_OPCODE_SHUFFLE_UP:
  case FLY_OPCODE_SHUFFLE_DOWN:
    return set_result(o, fly_trace_shuffle(t, op, o->args[0], o->args[1], (int)o->args[2]->i));
  case FLY_OPCODE_VOTE_ANY:
  case FLY_OPCODE_VOTE_ALL:
  case FLY_OPCODE_BALLOT:
    return set_result(o, fly_trace_vote(t, op, o->args[0]));
  case FLY_OPCODE_SIZE:
    return fly_op_size(o);
  case FLY_OPCODE_ZEROS_LIKE:
    return set_result(o, fly_trace_constant(t, o->result->type, 0, 0));
  case FLY_OPCODE_INDEX:
    return fly_op_slice(o);
  case FLY_OPCODE_LOGICAL_DIVIDE:
    return fly_op_divide(o, "fly.logical_divide");
  case FLY_OPCODE_TENSOR_COMPOSITION:
    return fly_op_view(o, "fly.composition", "layout");
  case FLY_OPCODE_TENSOR_RECAST:
    return fly_op_view(o, "fly.recast", "to");
  case FLY_OPCODE_ZIPPED_DIVIDE:
    return fly_op_divide(o, "fly.zipped_divide");
  case FLY_OPCODE_TILED_DIVIDE:
    return fly_op_divide(o, "fly.tiled_divide");
  case FLY_OPCODE_FLAT_DIVIDE:
    return fly_op_divide(o, "fly.flat_divide");
  case FLY_OPCODE_SMEM:
    return fly_op_alloc(o, "fly.alloc_smem");
  case FLY_OPCODE_SMEM_LAUNCH_SIZE:
    return fly_op_smem_launch_size(o);
  case FLY_OPCODE_RMEM:
    return fly_op_alloc(o, "fly.alloc_reg");
  case FLY_OPCODE_PARTITION_S:
    return fly_op_partition(o, "fly.partition_s", false);
  case FLY_OPCODE_PARTITION_D:
    return fly_op_partition(o, "fly.partition_d", false);
  case FLY_OPCODE_PARTITION_A:
    return fly_op_partition(o, "fly.partition_a", false);
  case FLY_OPCODE_PARTITION_B:
    return fly_op_partition(o, "fly.partition_b", false);
  case FLY_OPCODE_PARTITION_C:
    return fly_op_partition(o, "fly.partition_c", false);
  case FLY_OPCODE_PARTITION_FRAGMENT_A:
    return fly_op_partition(o, "fly.partition_fragment_a", true);
  case FLY_OPCODE_PARTITION_FRAGMENT_B:
    return fly_op_partition(o, "fly.partition_fragment_b", true);
  case FLY_OPCODE_PARTITION_FRAGMENT_C:
    return fly_op_partition(o, "fly.partition_fragment_c", true);
  case FLY_OPCODE_LOAD:
    return fly_op_load(o);
  case FLY_OPCODE_ATOMIC_ADD:
    return fly_op_atomic_rmw(o, FLY_ATOMIC_ADD);
  case FLY_OPCODE_ATOMIC_MIN:
    return fly_op_atomic_rmw(o, FLY_ATOMIC_MIN);
  case FLY_OPCODE_ATOMIC_MAX:
    return fly_op_atomic_rmw(o, FLY_ATOMIC_MAX);
  case FLY_OPCODE_ATOMIC_UMIN:
    return fly_op_atomic_rmw(o, FLY_ATOMIC_UMIN);
  case FLY_OPCODE_ATOMIC_UMAX:
    return fly_op_atomic_rmw(o, FLY_ATOMIC_UMAX);
  case FLY_OPCODE_ATOMIC_AND:
    return fly_op_atomic_rmw(o, FLY_ATOMIC_AND);
  case FLY_OPCODE_ATOMIC_OR:
    return fly_op_atomic_rmw(o, FLY_ATOMIC_OR);
  case FLY_OPCODE_ATOMIC_XOR:
    return fly_op_atomic_rmw(o, FLY_ATOMIC_XOR);
  case FLY_OPCODE_ATOMIC_EXCH:
    return fly_op_atomic_rmw(o, FLY_ATOMIC_EXCH);
  case FLY_OPCODE_ATOMIC_CAS:
    return fly_op_atomic_cas(o);
  case FLY_OPCODE_FENCE:
    return fly_op_fence(o);
  case FLY_OPCODE_ATOMIC_LOAD:
    return fly_op_ordered_load(o, false);
  case FLY_OPCODE_VOLATILE_LOAD:
    return fly_op_ordered_load(o, true);
  case FLY_OPCODE_ATOMIC_STORE:
    return fly_op_ordered_store(o, false);
  case FLY_OPCODE_VOLATILE_STORE:
    return fly_op_ordered_store(o, true);
  case FLY_OPCODE_GEMM:
    return fly_op_gemm(o);
  case FLY_OPCODE_CRD2IDX:
    return fly_trace_crd2idx(t, o->result, o->args, o->at);
  case FLY_OPCODE_IDX2CRD:
    return fly_trace_idx2crd(t, o->result, o->args, o->at);
  case FLY_OPCODE_EXP:
  case FLY_OPCODE_EXP2:
  case FLY_OPCODE_LOG:
  case FLY_OPCODE_LOG2:
  case FLY_OPCODE_SQRT:
  case FLY_OPCODE_RSQRT:
  case FLY_OPCODE_ABS:
  case FLY_OPCODE_FMA:
    return math(o, op);
  case FLY_OPCODE_MIN:
  case FLY_OPCODE_MAX:
    /* Of one vec, they reduce it. */
    return o->n == 1 ? fly_op_reduction(o, op) : math(o, op);
  case FLY_OPCODE_SUM:
    return fly_op_reduction(o, op);
  case FLY_OPCODE_EXTRACT:
    return fly_op_extract(o);
  case FLY_OPCODE_INSERT:
    return fly_op_insert(o);
  case FLY_OPCODE_BITCAST:
    return fly_op_bitcast(o);
  case FLY_OPCODE_WHERE:
    return fly_op_where(o);
  case FLY_OPCODE_CLAMP:
    return clamp(o);
  case FLY_OPCODE_FLOOR:
    return intrinsic(o, "llvm.floor");
  case FLY_OPCODE_CEIL:
    return intrinsic(o, "llvm.ceil");
  case FLY_OPCODE_TRUNC:
    return intrinsic(o, "llvm.trunc");
  case FLY_OPCODE_ROUND:
    return intrinsic(o, "llvm.round");
  case FLY_OPCODE_ROUNDEVEN:
    return intrinsic(o, "llvm.roundeven");
  case FLY_OPCODE_BARRIER:
    fly_mlir_op(t->m, t->ip, t->loc, "gpu.barrier", 0, NULL, 0, NULL, 0, NULL, 0, NULL);
    return true;
  case FLY_OPCODE_BARRIER_NAMED:
  case FLY_OPCODE_BARRIER_ARRIVE:
    return named_barrier(o, op == FLY_OPCODE_BARRIER_ARRIVE);
  case FLY_OPCODE_TENSOR_MAP:
  case FLY_OPCODE_TMA_LOAD:
  case FLY_OPCODE_TMA_LOAD_MULTICAST:
  case FLY_OPCODE_TMA_STORE:
  case FLY_OPCODE_TMA_STORE_COMMIT:
  case FLY_OPCODE_TMA_STORE_WAIT:
    return fly_op_tma(o, op);
  case FLY_OPCODE_CP_ASYNC_COMMIT:
    fly_mlir_op(t->m, t->ip, t->loc, "nvvm.cp.async.commit.group", 0, NULL, 0, NULL, 0, NULL, 0,
                NULL);
    return true;
  case FLY_OPCODE_MBARRIER_INIT:
    return mbarrier(o, "init");
  case FLY_OPCODE_MBARRIER_ARRIVE:
    return mbarrier(o, "arrive");
  case FLY_OPCODE_MBARRIER_ARRIVE_REMOTE:
    return mbarrier(o, "arrive_remote");
  case FLY_OPCODE_MBARRIER_ARRIVE_EXPECT_TX:
    return mbarrier(o, "arrive_expect_tx");
  case FLY_OPCODE_MBARRIER_WAIT:
    return mbarrier(o, "wait");
  case FLY_OPCODE_FENCE_PROXY_ASYNC: {
    MlirNamedAttribute a[2] = {
        fly_mlir_named(t->m, "kind",
                       mlirAttributeParseGet(t->m->ctx, mlirStringRefCreateFromCString(
                                                            "#nvvm.proxy_kind<async.shared>"))),
        fly_mlir_named(t->m, "space",
                       mlirAttributeParseGet(
                           t->m->ctx, mlirStringRefCreateFromCString("#nvvm.shared_space<cta>")))};
    fly_mlir_op(t->m, t->ip, t->loc, "nvvm.fence.proxy", 0, NULL, 0, NULL, 2, a, 0, NULL);
    return true;
  }
  case FLY_OPCODE_WGMMA_FENCE:
    fly_mlir_op(t->m, t->ip, t->loc, "nvvm.wgmma.fence.aligned", 0, NULL, 0, NULL, 0, NULL, 0,
                NULL);
    return true;
  case FLY_OPCODE_WGMMA_COMMIT:
    fly_mlir_op(t->m, t->ip, t->loc, "nvvm.wgmma.commit.group.sync.aligned", 0, NULL, 0, NULL, 0,
                NULL, 0, NULL);
    return true;
  case FLY_OPCODE_WGMMA_WAIT: {
    MlirNamedAttribute n = fly_mlir_named(
        t->m, "group",
        mlirIntegerAttrGet(mlirIntegerTypeGet(t->m->ctx, 64), (int64_t)o->args[0]->i));
    fly_mlir_op(t->m, t->ip, t->loc, "nvvm.wgmma.wait.group.sync.aligned", 0, NULL, 0, NULL, 1, &n,
                0, NULL);
    return true;
  }
  case FLY_OPCODE_SETMAXNREG_INC:
  case FLY_OPCODE_SETMAXNREG_DEC:
    return setmaxnreg(o, op == FLY_OPCODE_SETMAXNREG_INC);
  case FLY_OPCODE_SCHED_BARRIER:
  case FLY_OPCODE_SCHED_GROUP_BARRIER:
  case FLY_OPCODE_SET_PRIO:
  case FLY_OPCODE_WAVES_PER_EU:
    return sched_hint(o, op);
  case FLY_OPCODE_CP_ASYNC_WAIT: {
    MlirNamedAttribute n = fly_mlir_named(
        t->m, "n", mlirIntegerAttrGet(mlirIntegerTypeGet(t->m->ctx, 32), (int64_t)o->args[0]->i));
    fly_mlir_op(t->m, t->ip, t->loc, "nvvm.cp.async.wait.group", 0, NULL, 0, NULL, 1, &n, 0, NULL);
    return true;
  }
  case FLY_OPCODE_STORE:
    return fly_op_store(o);
  case FLY_OPCODE_COPY:
    return fly_op_copy(o);
  case FLY_OPCODE_PRINTF:
    return printf_op(o);
  case FLY_OPCODE_COUNT:
    break;
  }
  return fly_trace_error(t, o->at, "internal error: no code for '%s'", fly_opcode_name(op));
}

bool fly_trace_value_op(void *ctx, FlyVal *result, FlyOpcode op, int n, const FlyVal *const *args,
                        const FlyNode *at) {
  FlyTrace *t = ctx;
  if (at)
    fly_trace_loc(t, at);
  FlyTraceOp o = {t, result, n, args, at};
  return trace(&o, op);
}

bool fly_trace_effect_op(void *ctx, FlyOpcode op, int n, const FlyVal *const *args,
                         const FlyNode *at) {
  FlyTrace *t = ctx;
  if (at)
    fly_trace_loc(t, at);
  FlyTraceOp o = {t, NULL, n, args, at};
  return trace(&o, op);
}
