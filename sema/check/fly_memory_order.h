/* fly_memory_order.h — atomics and memory order as data: the operations of
 * the read-modify-write atomics (atomic_add ... atomic_exch), the scopes and
 * the orders the named arguments `scope =` and `order =` take. The semantic
 * pass checks calls against it, the tracer writes the names into the Fly
 * dialect's attributes and the lowering reads them back, so each name is
 * written here once. Plain C: no MLIR.
 *
 * A scope is the set of threads an atomic or a fence synchronises with:
 * those of the block, of the GPU, or of the whole system (the host and
 * other GPUs). An order is the C++ memory order of the operation; there is
 * no seq_cst. */
#ifndef FLY_MEMORY_ORDER_H
#define FLY_MEMORY_ORDER_H

#include <stdbool.h>

/* The read-modify-write atomics: atomic_<name>, and which element types
   each takes besides i32 and i64: f32 (floats), and a pair of f16 or bf16
   added at once (packed). umin and umax compare integers as unsigned. */
#define FLY_ATOMIC_OPS(X)                                                                          \
  X(ADD, "add", true, true)                                                                        \
  X(MIN, "min", true, false)                                                                       \
  X(MAX, "max", true, false)                                                                       \
  X(UMIN, "umin", false, false)                                                                    \
  X(UMAX, "umax", false, false)                                                                    \
  X(AND, "and", false, false)                                                                      \
  X(OR, "or", false, false)                                                                        \
  X(XOR, "xor", false, false)                                                                      \
  X(EXCH, "exch", true, false)

typedef enum FlyAtomicOp {
#define X(id, name, floats, packed) FLY_ATOMIC_##id,
  FLY_ATOMIC_OPS(X)
#undef X
      FLY_ATOMIC_OP_COUNT
} FlyAtomicOp;

#define FLY_MEM_SCOPES(X)                                                                          \
  X(BLOCK, "block")                                                                                \
  X(GPU, "gpu")                                                                                    \
  X(SYSTEM, "system")

typedef enum FlyMemScope {
#define X(id, name) FLY_SCOPE_##id,
  FLY_MEM_SCOPES(X)
#undef X
      FLY_SCOPE_COUNT
} FlyMemScope;

#define FLY_MEM_ORDERS(X)                                                                          \
  X(RELAXED, "relaxed")                                                                            \
  X(ACQUIRE, "acquire")                                                                            \
  X(RELEASE, "release")                                                                            \
  X(ACQ_REL, "acq_rel")

typedef enum FlyMemOrder {
#define X(id, name) FLY_ORDER_##id,
  FLY_MEM_ORDERS(X)
#undef X
      FLY_ORDER_COUNT
} FlyMemOrder;

/* What a call takes when it leaves them out: the GPU, relaxed (a fence:
   acq_rel). */
#define FLY_SCOPE_DEFAULT FLY_SCOPE_GPU
#define FLY_ORDER_DEFAULT FLY_ORDER_RELAXED
#define FLY_FENCE_ORDER_DEFAULT FLY_ORDER_ACQ_REL

const char *fly_atomic_op_name(FlyAtomicOp op);
bool fly_atomic_op_takes_float(FlyAtomicOp op);
bool fly_atomic_op_takes_packed(FlyAtomicOp op);
const char *fly_mem_scope_name(FlyMemScope s);
const char *fly_mem_order_name(FlyMemOrder o);
/* The names as NULL-ended lists, in enum order (for fly_arg_choice). */
extern const char *const fly_mem_scope_names[];
extern const char *const fly_mem_order_names[];
/* The operation, scope or order named `name`; -1 when none is. */
int fly_atomic_op_find(const char *name);
int fly_mem_scope_find(const char *name);
int fly_mem_order_find(const char *name);

#endif
