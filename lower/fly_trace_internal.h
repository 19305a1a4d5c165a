/* fly_trace_internal.h — the tracer's state, shared by its parts.
 *
 *   fly_trace.c        the module, kernels and their parameters, control flow
 *   fly_trace_values.c types, constants, the handles of values
 *   fly_trace_ops.c    each opcode's dispatch; arithmetic, GPU, math, printf
 *                      (vecs, tensors and atoms, memory: fly_trace_op.h)
 *   fly_trace_warp.c   the warp operations: shuffles, votes, ballots
 *   fly_trace_convert.c conversions: `as` and convert(x, T, rounding, saturate) */
#ifndef FLY_TRACE_INTERNAL_H
#define FLY_TRACE_INTERNAL_H

#include "fly_algebra.h"
#include "fly_emit.h"
#include "fly_tensor_map.h"
#include "fly_trace.h"

/* A runtime leaf of a tensor's layout that has no handle of its own: it is
   read from the tensor's memref (fly.get_leaf) where it is used. */
typedef struct FlyLeafRef {
  const FlyVal *leaf;
  MlirValue memref;
  int part; /* 0 shape, 1 stride */
  int index;
} FlyLeafRef;

typedef struct FlyTrace {
  FlyMlir *m;
  FlyUnit *unit;
  FlyAlgebra A; /* strings and tables of one trace */
  MlirModule module;
  MlirBlock kernels; /* the gpu.module's body */
  FlyInsert ip;      /* where operations go now */
  MlirLocation loc;  /* the location of the node being traced */
  const FlyNode *kernel;
  MlirOperation func;
  MlirOperation last_func; /* the kernel traced last, kept after kernel_end */
  FlyLeafRef *leaves;
  int nleaves, cap;
  const FlyTarget *target;
  /* The kernel's tensor maps: arguments after its parameters' (fly_trace_tma.c). */
  MlirValue tmaps[FLY_TMAP_MAX_MAPS];
  int ntmaps;
  bool failed;
} FlyTrace;

/* ---- fly_trace_values.c ------------------------------------------------------------------ */

MlirLocation fly_trace_loc(FlyTrace *t, const FlyNode *at);
/* The MLIR spelling of a scalar or vec type (f8e4m3 is f8E4M3FN ...). */
struct FlyStrBuf;
void fly_trace_put_type(struct FlyStrBuf *sb, const FlyType *ty);
/* The MLIR type of a Fly type (scalars, vecs, tensors as !fly.memref). */
MlirType fly_trace_type(FlyTrace *t, const FlyType *ty);
/* A tensor's !fly.memref type, from its element, memory and layout. */
MlirType fly_trace_tensor_type(FlyTrace *t, const FlyVal *tensor);
/* A tuple's text, the algebra's pattern of it (fly_val_pattern): integers,
   `_`, and `?` for runtime leaves. */
char *fly_trace_tuple_text(FlyTrace *t, const FlyVal *v);
/* The canonical layout text of a tensor, `?` for runtime leaves. */
char *fly_trace_layout_text(FlyTrace *t, const FlyVal *shape, const FlyVal *stride);
/* The handle of v as a value of type ty: a runtime value's own handle, or
   a constant made now for a static number. Null after an error. */
MlirValue fly_trace_value(FlyTrace *t, const FlyVal *v, const FlyType *ty);
/* The handle of a runtime value or tensor (no conversion). */
MlirValue fly_trace_handle(FlyTrace *t, const FlyVal *v);
MlirValue fly_trace_constant(FlyTrace *t, const FlyType *ty, double f, int64_t i);
MlirValue fly_trace_i32(FlyTrace *t, int64_t i);
/* fly.get_leaf: the index-th `?` leaf of part ("shape", "stride" or
   "value") of src. */
MlirValue fly_trace_get_leaf(FlyTrace *t, MlirValue src, const char *part, int index);
/* Records the runtime leaves of a tensor made by an operation. */
void fly_trace_note_leaves(FlyTrace *t, const FlyVal *tensor, MlirValue memref);
/* Reports an error at a node and marks the trace failed; returns false. */
bool fly_trace_error(FlyTrace *t, const FlyNode *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The runtime leaves of v in order (tuples walked depth first). */
int fly_trace_runtime_leaves(const FlyVal *v, const FlyVal **out, int cap);

/* ---- fly_trace_coords.c ------------------------------------------------------------------ */

/* crd2idx(coord, L) and idx2crd(index, shape) with runtime coordinates or
   indices: fly.crd2idx and fly.idx2crd on int tuples and a static layout. */
bool fly_trace_crd2idx(FlyTrace *t, FlyVal *result, const FlyVal *const *args, const FlyNode *at);
bool fly_trace_idx2crd(FlyTrace *t, FlyVal *result, const FlyVal *const *args, const FlyNode *at);

/* ---- fly_trace_warp.c -------------------------------------------------------------------- */

/* A shuffle (op: FLY_OPCODE_SHUFFLE, _XOR, _UP or _DOWN) of the runtime
   value x by `by` (the lane, mask or delta: a static integer or a runtime
   i32) within segments of w lanes, as the target's instructions: the value
   read. Null after an error. */
MlirValue fly_trace_shuffle(FlyTrace *t, FlyOpcode op, const FlyVal *x, const FlyVal *by, int w);
/* vote_any and vote_all (an i1) and ballot (an integer of warp_size bits)
   of the predicate p, static or runtime. Null after an error. */
MlirValue fly_trace_vote(FlyTrace *t, FlyOpcode op, const FlyVal *p);

/* ---- fly_trace_convert.c ------------------------------------------------------------------ */

/* The CONVERT opcode's value, of type rt: args[0] converted as `as` does
   (n 1), or as convert does with its rounding and saturation (n 3). Null
   after an error. */
MlirValue fly_trace_convert(FlyTrace *t, const FlyType *rt, int n, const FlyVal *const *args);

/* ---- fly_trace_ops.c --------------------------------------------------------------------- */

bool fly_trace_value_op(void *ctx, FlyVal *result, FlyOpcode op, int n, const FlyVal *const *args,
                        const FlyNode *at);
bool fly_trace_effect_op(void *ctx, FlyOpcode op, int n, const FlyVal *const *args,
                         const FlyNode *at);

#endif
