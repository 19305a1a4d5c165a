/* fly_builtins.h — the builtin functions and values of the interpreter:
 * their ids and bodies, made from the rows of fly_ops.def, and the helpers
 * the bodies share (fly_builtins_*.c). */
#ifndef FLY_BUILTINS_H
#define FLY_BUILTINS_H

#include "fly_builtin_info.h"
#include "fly_interp.h"

/* A builtin receives its arguments with a method's receiver first: x.f(a)
   calls f with (x, a). */
typedef const FlyVal *(*FlyBuiltinFn)(FlyInterp *I, const FlyArgs *a);

/* The builtin functions: FLY_BUILTIN_<ID>, the id a FLY_V_BUILTIN holds. */
typedef enum FlyBuiltinId {
#define FLY_BUILTIN(id, ...) FLY_BUILTIN_##id,
#define FLY_BUILTIN_OP(id, ...) FLY_BUILTIN_##id,
#include "fly_ops.def"
  FLY_BUILTIN_COUNT
} FlyBuiltinId;

/* The builtin values: FLY_VALUE_<ID>. */
typedef enum FlyValueId {
#define FLY_VALUE(id, ...) FLY_VALUE_##id,
#include "fly_ops.def"
  FLY_VALUE_COUNT
} FlyValueId;

/* Each function's body: fly_builtin_<name>. */
#define FLY_BUILTIN(id, name, ...) const FlyVal *fly_builtin_##name(FlyInterp *I, const FlyArgs *a);
#define FLY_BUILTIN_OP FLY_BUILTIN
#include "fly_ops.def"

/* The row of a builtin function. */
const FlyBuiltinInfo *fly_builtin_function(FlyBuiltinId id);

/* Argument helpers: each reports its own error (fn: the builtin, for it). */
bool fly_arg_int(FlyInterp *I, const FlyArgs *a, int i, const char *what, int64_t *out);
const FlyLayout *fly_arg_layout(FlyInterp *I, const FlyArgs *a, int i, const char *what);
const FlyType *fly_arg_type(FlyInterp *I, const FlyArgs *a, int i, const char *what);
/* Named arguments (fly_ops.def's FLY_BUILTIN_NAMED rows; the call has
   checked their names): the value of `name`, NULL when it is not given (at:
   its node, for messages); a string one of `choices` (NULL-ended), as its
   index, `missing` when not given, -1 after an error. */
const FlyVal *fly_arg_named(const FlyArgs *a, const char *name, const FlyNode **at);
int fly_arg_choice(FlyInterp *I, const FlyArgs *a, const char *name, const char *const *choices,
                   int missing);
/* A number, static or runtime (not a boolean). */
const FlyVal *fly_arg_number(FlyInterp *I, const FlyArgs *a, int i, const char *fn);
/* A tensor. */
const FlyVal *fly_arg_tensor(FlyInterp *I, const FlyArgs *a, int i, const char *fn);

/* None, or an error naming `name` when the call is in a launch block,
   which runs on the host (the GPU builtins). */
const FlyVal *fly_gpu_only(FlyInterp *I, const FlyArgs *a, const char *name);
/* True when the call is in a kernel and the target has feature f; otherwise
   false after an error: "<what> <needs>, which <arch> does not have;
   <runs> on <the targets with f>" (needs "needs TMA", runs "it runs"). */
bool fly_gpu_feature(FlyInterp *I, const FlyArgs *a, const char *what, FlyFeature f,
                     const char *needs, const char *runs);
/* True when the target has thread-block clusters (the feature cluster);
   otherwise false after an error at `at` naming `what` (fly_builtins_cluster.c). */
bool fly_has_cluster(FlyInterp *I, const FlyNode *at, const char *what);
/* Whether v is an integer, static or runtime. */
bool fly_val_is_integer(const FlyVal *v);
/* A new object value of that kind. */
FlyVal *fly_new_object(FlyInterp *I, FlyObjectKind kind);

/* The algebra on tensors whose strides are given at launch
   (fly_tensor_probe.c). fly_tensor_probe gives the tensor's layout: exact
   when static, with probes for its runtime strides when only the shape is
   static, NULL (no error) otherwise. fly_tensor_unprobe makes the tensor of
   a result R of the algebra on that layout, each stride static or a runtime
   value. */
#define FLY_PROBE_MAX 16
typedef struct FlyProbe {
  int n;
  const FlyVal *leaf[FLY_PROBE_MAX]; /* the runtime strides probed, in order */
} FlyProbe;
const FlyLayout *fly_tensor_probe(FlyInterp *I, const FlyTensor *t, FlyProbe *p);
const FlyVal *fly_tensor_unprobe(FlyInterp *I, const FlyVal *like, const FlyLayout *R,
                                 const FlyProbe *p, const FlyNode *at);

/* What a tiled MMA does with one operand ('A', 'B' or 'C'): the atom's
   tile of it (rows by columns: M x K for A, N x K for B, M x N for C), how
   many warps repeat that tile along each, and the atom's TV layout for it
   (fly_builtins_atoms.c). */
typedef struct FlyMmaOperand {
  int64_t rows, cols, warp_rows, warp_cols;
  const char *tv;
} FlyMmaOperand;
FlyMmaOperand fly_mma_operand(FlyInterp *I, const FlyObject *mma, char operand);
/* The error for operand ('A' or 'B') of MMA atom `atom` given in type got
   (`holder`: "this tensor holds", "this copy atom moves"): "the MMA
   multiplies T", or, where A's and B's types differ, "takes T as A". */
const FlyVal *fly_err_mma_type(FlyInterp *I, const FlyNode *at, const FlyObject *atom, char operand,
                               const char *holder, const FlyType *got);
/* A copy atom value: atom moving `bits` a copy of elements of type elem
   (the result of copy_atom, made also by smem_copy_A/B/C). */
FlyVal *fly_copy_atom_value(FlyInterp *I, const FlyAtom *atom, int bits, const FlyType *elem);

/* Whether a shared tile of layout L (swizzled in runs of `run` elements,
   or 0) gives each lane of a warp-wide tiled copy (ldmatrix) whole 16-byte
   rows, aligned: its shared side (the source, or the destination when
   rows_are_dst) in 8 consecutive elements from a multiple of 8
   (fly_builtins_matrix.c). */
bool fly_matrix_rows_fit(FlyInterp *I, const FlyLayout *L, int run, const FlyTvLayout *tv,
                         bool rows_are_dst);

/* ceil_div(a, b) of tuples, CuTe's (fly_builtins_algebra.c). */
const FlyVal *fly_ceil_div_tuples(FlyInterp *I, const FlyArgs *a);

/* ---- tensors (fly_builtins_tensor.c) ---- */

/* Identity tensors (fly_identity.c): whether v is one; the view `result`
   of t sliced at crd, or partitioned for thread thr, with its origin moved
   to match; an element's coordinate; elem_less of runtime leaves. */
bool fly_is_identity(const FlyVal *v);
const FlyVal *fly_identity_index(FlyInterp *I, const FlyVal *t, const FlyVal *result,
                                 const FlyVal *crd, const FlyNode *at);
const FlyVal *fly_identity_partition(FlyInterp *I, const FlyVal *t, const FlyVal *result,
                                     const FlyObject *thr, const FlyNode *at);
/* The same for a thread of a tiled MMA partitioning operand A, B or C. */
const FlyVal *fly_identity_mma_partition(FlyInterp *I, const FlyVal *t, const FlyVal *result,
                                         const FlyObject *thr, char operand, const FlyNode *at);
const FlyVal *fly_identity_load(FlyInterp *I, const FlyVal *t, const FlyNode *at);
const FlyVal *fly_elem_less_runtime(FlyInterp *I, const FlyVal *c, const FlyVal *s,
                                    const FlyNode *at);

/* composition(t, L) and recast(t, T): views of a tensor's memory. */
const FlyVal *fly_tensor_compose(FlyInterp *I, const FlyArgs *a);
const FlyVal *fly_tensor_recast(FlyInterp *I, const FlyArgs *a);

/* A tensor's modes, and whether it is one element (no modes). */
int fly_tensor_rank(const FlyVal *t);
bool fly_tensor_is_element(const FlyVal *t);
/* The product of a shape's leaves: static, or a runtime i32 (emitted). */
const FlyVal *fly_shape_size(FlyInterp *I, const FlyVal *shape, const FlyNode *at);
/* A tensor's number of elements, when it is static. */
bool fly_tensor_static_size(FlyInterp *I, const FlyVal *t, int64_t *n);
/* The type a whole tensor loads as (its element, or a vec of its size); fn
   names the operation for messages. NULL after an error. */
const FlyType *fly_tensor_value_type(FlyInterp *I, const FlyVal *t, const FlyNode *at,
                                     const char *fn);
/* A runtime i32 leaf, with `why` as its origin; a tuple congruent to p of
   such leaves (strides the checker does not follow). */
const FlyVal *fly_runtime_leaf(FlyInterp *I, const FlyNode *at, const char *why);
const FlyVal *fly_runtime_like(FlyInterp *I, const FlyVal *p, const FlyNode *at, const char *why);

/* What the algebra builtins do with a tensor or a tiled operation in place
   of a layout: */
/* size, rank, shape or stride of a tensor; size of a tiled copy or MMA. */
const FlyVal *fly_tensor_query(FlyInterp *I, FlyBuiltinId which, const FlyArgs *a);
/* One of the four divides of a tensor (the products refuse tensors). */
const FlyVal *fly_tensor_divide(FlyInterp *I, FlyBuiltinId which, const FlyArgs *a);

/* ---- vectors (fly_builtins_vector.c) ---- */

/* op (SUM, MIN or MAX) of the elements of the vec a->v[0]; fn names it. */
const FlyVal *fly_reduce_vec(FlyInterp *I, const FlyArgs *a, FlyOpcode op, const char *fn);

/* ---- loads and stores with an order, a scope or volatile (fly_builtins_atomic.c) ---- */

/* Whether a load's or store's named arguments leave it a plain access (none
   given, or volatile = false). */
bool fly_access_is_plain(const FlyArgs *a);
/* t.load(order =, scope =, volatile =) and t.store(x, ...) of one element. */
const FlyVal *fly_ordered_load(FlyInterp *I, const FlyArgs *a);
bool fly_ordered_store(FlyInterp *I, const FlyArgs *a);
/* The value a->v[1] as t.store stores it into t, whose values are of type
   vt: a runtime vt, or a static value converted (fly_builtins_tensor.c).
   NULL after an error. */
const FlyVal *fly_store_value(FlyInterp *I, const FlyArgs *a, const FlyVal *t, const FlyType *vt);

/* ---- atoms (fly_builtins_atoms.c) ---- */

/* tiled.slice(thread): a thread's slice of a tiled copy or MMA. */
const FlyVal *fly_thread_slice(FlyInterp *I, const FlyArgs *a);

#endif
