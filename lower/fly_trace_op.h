/* fly_trace_op.h — one traced operation, shared by the files that give the
 * opcodes their code (private to the tracer).
 *
 *   fly_trace_ops.c     dispatch, arithmetic, GPU indices, math, printf
 *   fly_trace_vector.c  vec construction, elements, reductions, bitcast, where
 *   fly_trace_tensor.c  sizes, views, divides, buffers, atoms: partition, gemm, copy
 *   fly_trace_memory.c  loads and stores, atomics, fences, ordered accesses
 *
 * Each function returns false after reporting its error; a value-producing
 * one sets o->result's SSA value. */
#ifndef FLY_TRACE_OP_H
#define FLY_TRACE_OP_H

#include "fly_memory_order.h"
#include "fly_trace_internal.h"
#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"

/* The operation being traced: its result (NULL for an effect), its
   arguments as the interpreter passes them, and where it is written. */
typedef struct FlyTraceOp {
  FlyTrace *t;
  FlyVal *result;
  int n;
  const FlyVal *const *args;
  const FlyNode *at;
} FlyTraceOp;

static inline const FlyType *scalar_of(const FlyType *ty) {
  return ty->kind == FLY_TY_VEC ? ty->elem : ty;
}

static inline MlirValue op1(FlyTraceOp *o, const char *name, MlirType res, int n,
                            const MlirValue *v, int nattr, const MlirNamedAttribute *attr) {
  return fly_mlir_op1(o->t->m, o->t->ip, o->t->loc, name, res, n, v, nattr, attr);
}

static inline bool set_result(FlyTraceOp *o, MlirValue v) {
  if (mlirValueIsNull(v))
    return fly_trace_error(o->t, o->at, "internal error: this operation could not be built");
  o->result->ssa = v.ptr;
  return true;
}

static inline MlirNamedAttribute int_attr(FlyTrace *t, const char *name, int64_t v) {
  return fly_mlir_named(t->m, name, mlirIntegerAttrGet(mlirIntegerTypeGet(t->m->ctx, 64), v));
}

static inline MlirNamedAttribute parsed_attr(FlyTrace *t, const char *name, const char *text) {
  return fly_mlir_named(t->m, name,
                        mlirAttributeParseGet(t->m->ctx, mlirStringRefCreateFromCString(text)));
}

/* ---- fly_trace_vector.c ---- */
bool fly_op_vec(FlyTraceOp *o);
bool fly_op_extract(FlyTraceOp *o);
bool fly_op_insert(FlyTraceOp *o);
bool fly_op_reduction(FlyTraceOp *o, FlyOpcode op);
bool fly_op_bitcast(FlyTraceOp *o);
bool fly_op_where(FlyTraceOp *o);

/* ---- fly_trace_tensor.c ---- */
bool fly_op_size(FlyTraceOp *o);
bool fly_op_slice(FlyTraceOp *o);
bool fly_op_divide(FlyTraceOp *o, const char *name);
/* The length of smem<T>(?): fly.smem_launch_size {elem_bytes}. */
bool fly_op_smem_launch_size(FlyTraceOp *o);
/* A view of a tensor's memory from one compile-time argument (a layout, a
   type), recorded as the attribute `attr`: composition, recast. */
bool fly_op_view(FlyTraceOp *o, const char *name, const char *attr);
bool fly_op_alloc(FlyTraceOp *o, const char *name);
bool fly_op_partition(FlyTraceOp *o, const char *name, bool fragment);
bool fly_op_gemm(FlyTraceOp *o);
bool fly_op_copy(FlyTraceOp *o);

/* ---- fly_trace_tma.c ---- */
/* tensor_map, tma_load (and its multicast), tma_store, tma_store_commit,
   tma_store_wait. */
bool fly_op_tma(FlyTraceOp *o, FlyOpcode op);

/* ---- fly_trace_cluster.c ---- */
/* block_rank, cluster_size, cluster_sync/arrive/arrive_relaxed/wait,
   fence_mbarrier_init. */
bool fly_op_cluster(FlyTraceOp *o, FlyOpcode op);

/* ---- fly_trace_memory.c ---- */
bool fly_op_store(FlyTraceOp *o);
bool fly_op_load(FlyTraceOp *o);
bool fly_op_atomic_rmw(FlyTraceOp *o, FlyAtomicOp kind);
bool fly_op_atomic_cas(FlyTraceOp *o);
bool fly_op_fence(FlyTraceOp *o);
bool fly_op_ordered_load(FlyTraceOp *o, bool is_volatile);
bool fly_op_ordered_store(FlyTraceOp *o, bool is_volatile);

#endif
