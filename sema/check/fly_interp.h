/* fly_interp.h — the compile-time interpreter's state, shared by its parts.
 *
 *   fly_interp.c         sessions, diagnostics with call chains, limits, names
 *   fly_interp_expr.c    expressions: literals, operators, casts, indexing, members
 *   fly_interp_stmt.c    blocks, let and patterns, const, static_assert, if, return,
 *                        break and continue (and the guards they put after them)
 *   fly_interp_loop.c    for and while loops: unrolled or at compile time, or at run time
 *   fly_interp_call.c    calls of helper functions: arguments, defaults, const
 *   fly_interp_types.c   type annotations and conversions between values and types
 *   fly_builtins*.c      the builtin names
 *
 * Evaluation returns a value, or NULL once an error has been reported; NULL
 * then travels up silently, so one mistake gives one message. */
#ifndef FLY_INTERP_H
#define FLY_INTERP_H

#include "fly_check.h"
#include "fly_emit.h"
#include "fly_layout.h"

/* A name bound in a scope. Scopes are chains of bindings; a block or call
   starts a new scope whose parent is the enclosing one (NULL: the globals). */
typedef struct FlyBinding FlyBinding;
struct FlyBinding {
  const char *name;
  uint32_t len;
  const FlyVal *value;
  const FlyNode *decl;
  FlyBinding *next;
};

typedef struct FlyScope FlyScope;
struct FlyScope {
  FlyBinding *head;
  FlyScope *parent;
};

/* A top-level name: a function, kernel or constant (including the names a
   top-level const block declares). Constants are evaluated on first use. */
typedef enum FlyGlobalState {
  FLY_GLOBAL_PENDING,
  FLY_GLOBAL_EVALUATING,
  FLY_GLOBAL_DONE,
  FLY_GLOBAL_FAILED,
} FlyGlobalState;

typedef struct FlyGlobal {
  const char *name;
  uint32_t len;
  const FlyNode *decl;  /* FLY_FN, FLY_KERNEL, FLY_CONST, or the name's node in a const block */
  const FlyNode *block; /* FLY_CONST_BLOCK that declares it, else NULL */
  const FlyVal *value;
  FlyGlobalState state;
} FlyGlobal;

/* A top-level const block that is running: its names are needed by the
   block itself or by what it calls before it ends. */
typedef struct FlyBlockRun FlyBlockRun;
struct FlyBlockRun {
  const FlyNode *block; /* FLY_CONST_BLOCK */
  FlyScope *scope;      /* the names it has bound so far */
  const FlyNode *stmt;  /* the statement running */
  FlyBlockRun *parent;
};

/* One call of a helper function in progress, for the call chain of messages. */
typedef struct FlyFrame FlyFrame;
struct FlyFrame {
  const FlyNode *fn;   /* the function's declaration */
  const FlyNode *call; /* the call expression */
  FlyFrame *parent;
};

/* The ways a statement leaves the statements after it: break and continue
   end the body of their loop (break ends the loop too), return ends the
   kernel or function. */
typedef enum FlyExit {
  FLY_EXIT_NONE,
  FLY_EXIT_BREAK,
  FLY_EXIT_CONTINUE,
  FLY_EXIT_RETURN,
  FLY_EXIT_COUNT
} FlyExit;

/* The loop whose body is running, for break, continue and yield. A call,
   a const block and a global constant start with none. */
typedef struct FlyLoop {
  int n;                      /* carried values */
  const FlyNode *const *node; /* their FLY_CARRY nodes */
  const FlyVal *const *value; /* their values in this iteration */
  /* The first run of a runtime loop's body, where an untyped constant
     start (init[i]) may still take the type the body yields; NULL else. */
  const FlyVal *const *init;
} FlyLoop;

typedef struct FlyInterp {
  FlyUnit *unit;
  FlyDiag *diag;
  FlyAlgebra A; /* every value, type and layout of the session */
  FlyCheckOptions options;
  const FlyTarget *target;
  int nfiles;         /* files of the unit with syntax trees (-D values add more sources) */
  FlyGlobal *globals; /* open addressing, nglobals_cap a power of two */
  int nglobals, nglobals_cap;
  long steps;
  int depth;            /* calls in progress */
  int eval_depth;       /* nested evaluations, to keep the C stack bounded */
  uintptr_t stack_base; /* the C stack where evaluation began */
  FlyFrame *frame;
  FlyBlockRun *block_run;        /* the innermost top-level const block running */
  int runtime_flow;              /* > 0 inside a runtime if or loop */
  bool aborted;                  /* a limit was hit: unwind without more messages */
  bool returning;                /* a `return` is unwinding the current call */
  const FlyVal *returned;        /* its value */
  const FlyNode *kernel;         /* the kernel being checked, if any */
  int64_t smem_bytes;            /* its static shared memory so far: its smem<T>(...) tiles */
  const FlyNode *smem_at_launch; /* its smem<T>(?), the tile the launch sizes, if made */
  bool in_launch;                /* evaluating a launch block */
  int32_t static_block[3];       /* the launch block's block, when known at compile time */
  bool has_static_block;
  /* The most threads a static barrier(id, threads) of the kernel waits for,
     and where: checked against its block once the launch block has run. */
  int64_t named_barrier_threads;
  const FlyNode *named_barrier_at;
  int32_t cluster[3];      /* the launch block's cluster shape; 0s without one */
  int in_const;            /* > 0 inside a const block: every let must be static */
  int compile_time;        /* > 0 while a value must be static (const, static_assert ...):
                              while loops run at compile time, in calls too */
  FlyLoop *loop;           /* the loop whose body runs (NULL: none of this function) */
  const FlyVal *yielded;   /* the value of the body's yield */
  FlyExit jumping;         /* a break or continue unwinding to the end of its loop body */
  const FlyVal *jump_next; /* the carried values it gives (NULL: as they are) */
  /* Exits taken under a runtime condition by the statement that just ran:
     an i1 runtime flag per kind, NULL where none was. The statements after
     it run only where none was taken (fly_interp_stmt.c). */
  const FlyVal *exits[FLY_EXIT_COUNT];
  const FlyVal *exit_next; /* the carried values where they were taken, in a loop that has some */
  const FlyNode *exit_at;  /* the last break, continue or return taken, for messages */
  FlyEmitter *emit;        /* tracing: where runtime work goes (NULL when checking) */
  /* The kernel's parameters (tensor_map takes one of its tensors), the
     record of its signature when one is made, and its tensor maps so far
     (fly_builtins_tma.c). */
  FlyVal *const *kernel_params;
  int nkernel_params;
  struct FlyKernelInfo *kernel_info;
  const FlyTensorMap **tmaps;
  int ntmaps;
  /* smem_copy_A/B/C's choices so far, by what they depend on
     (fly_builtins_matrix.c): a choice checks every value of the tile, and
     an epilogue asks again for each chunk it stores. */
  struct FlySmemCopyChoice *smem_copies;
} FlyInterp;

/* ---- sessions and messages (fly_interp.c) ------------------------------------ */

void fly_interp_init(FlyInterp *I, FlyUnit *u, const FlyCheckOptions *o);
void fly_interp_release(FlyInterp *I);

/* An error at a node, followed by the call chain ("in the call of 'f'
 * here"). Always returns NULL. */
const FlyVal *fly_err(FlyInterp *I, const FlyNode *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void fly_interp_note(FlyInterp *I, const FlyNode *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A note at the name of a declaration (its name_at span). */
void fly_interp_note_name(FlyInterp *I, const FlyNode *decl, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* After a layout-algebra operation failed: its message as an error. */
const FlyVal *fly_err_algebra(FlyInterp *I, const FlyNode *at);
/* The error for a runtime value where a static one is needed: what needed
 * it, and a note at the value's origin saying why it is not static. */
const FlyVal *fly_err_not_static(FlyInterp *I, const FlyNode *at, const FlyVal *v,
                                 const char *what);
/* Tracing (fly_emit.h). v, a runtime value or tensor just made (so not yet
 * shared), is op applied to args: the emitter gives it its handle. Returns v,
 * or NULL after an error; without an emitter, v unchanged. */
const FlyVal *fly_emit_value(FlyInterp *I, const FlyVal *v, FlyOpcode op, int n,
                             const FlyVal *const *args, const FlyNode *at);
/* An effect (store, barrier, copy ...); true without an emitter. */
bool fly_emit_effect(FlyInterp *I, FlyOpcode op, int n, const FlyVal *const *args,
                     const FlyNode *at);
/* Counts one step; false (after reporting, once) when a limit is hit. */
bool fly_interp_step(FlyInterp *I, const FlyNode *at);

/* ---- names ------------------------------------------------------------------- */

FlyScope *fly_scope_new(FlyInterp *I, FlyScope *parent);
bool fly_scope_bind(FlyInterp *I, FlyScope *s, const char *name, uint32_t len, const FlyVal *v,
                    const FlyNode *decl);
FlyGlobal *fly_global_find(FlyInterp *I, const char *name, uint32_t len);
bool fly_global_add(FlyInterp *I, const char *name, uint32_t len, const FlyNode *decl,
                    const FlyNode *block);
/* The value of a name: locals, then globals (evaluated on demand), then
 * builtins. NULL after an error; *found false when the name is unknown. */
const FlyVal *fly_lookup(FlyInterp *I, FlyScope *s, const FlyNode *at, const char *name,
                         uint32_t len, bool *found);
const FlyVal *fly_global_value(FlyInterp *I, FlyGlobal *g, const FlyNode *at);

/* ---- evaluation ----------------------------------------------------------------- */

const FlyVal *fly_eval(FlyInterp *I, FlyScope *s, const FlyNode *e);
/* Evaluates and requires a static value; `what` says what needs it. */
const FlyVal *fly_eval_static(FlyInterp *I, FlyScope *s, const FlyNode *e, const char *what);
/* A block's statements in scope s (a new scope is made for it); the value of
 * its tail expression or final if/else, or the none value. */
const FlyVal *fly_eval_block(FlyInterp *I, FlyScope *s, const FlyNode *block);
/* Statements of one list in scope s; false after an error or a return. */
bool fly_exec_stmt(FlyInterp *I, FlyScope *s, const FlyNode *st);
bool fly_bind_pattern(FlyInterp *I, FlyScope *s, const FlyNode *pat, const FlyVal *v,
                      const FlyNode *value_node);

/* Operators, shared with the builtins (min, max, math). */
const FlyVal *fly_binary(FlyInterp *I, FlyOp op, const FlyVal *a, const FlyVal *b,
                         const FlyNode *at);
/* An arithmetic operator of which a side is a tuple or a basis element:
 * leaf by leaf, as the algebra's fly_tuple_arith (fly_builtins_algebra.c). */
const FlyVal *fly_tuple_binary(FlyInterp *I, FlyOp op, const FlyVal *a, const FlyVal *b,
                               const FlyNode *at);
/* The common type of two operands where one may be static: numbers take the
 * runtime side's type. NULL after an error. */
const FlyType *fly_operand_type(FlyInterp *I, const FlyVal *a, const FlyVal *b, const FlyNode *at);

const FlyVal *fly_unary(FlyInterp *I, FlyOp op, const FlyVal *a, const FlyNode *at);
bool fly_int_fits(const FlyType *t, int64_t v);
/* Can the untyped static number v take type t (or, for a vec, its element
   type) without a cast? Integers and floats must be in range. No message. */
bool fly_const_fits(const FlyVal *v, const FlyType *t);
/* if, runtime or static, as a value or a statement. */
const FlyVal *fly_eval_if(FlyInterp *I, FlyScope *s, const FlyNode *e);

/* ---- control flow (fly_interp_stmt.c, used by fly_interp_loop.c) ------------------ */

/* Where two values meet after a runtime choice: the branches of an if, or a
   loop's carried value and what its body yields. Messages name the two. */
typedef struct FlyMeeting {
  const FlyNode *at;
  FlyOrigin origin;     /* of the runtime value they make */
  const FlyNode *carry; /* a loop's FLY_CARRY; NULL for an if */
} FlyMeeting;

/* The value after a runtime choice between a and b: equal static values
   stay static; numbers become a runtime value of their common type. NULL
   after an error. */
const FlyVal *fly_merge(FlyInterp *I, const FlyVal *a, const FlyVal *b, const FlyMeeting *m);
/* A static boolean condition's value; false after an error at `at`. */
bool fly_static_condition(FlyInterp *I, const FlyVal *c, const FlyNode *at, bool *out);
/* A runtime condition must be an i1; false after an error at `at`. */
bool fly_runtime_condition(FlyInterp *I, const FlyVal *c, const FlyNode *at);

/* How a run of statements ended: its value, the exits it took (NULL: none;
   a static true: taken on every path; a runtime i1: where it is true), and,
   in a loop that carries values, the values the loop goes on with where it
   took them (or, for the top level of the body, where it ends). */
typedef struct FlyOutcome {
  const FlyVal *value;
  const FlyVal *exit[FLY_EXIT_COUNT];
  const FlyVal *yielded;
} FlyOutcome;

/* Is a break, continue or return unwinding (statically taken)? */
FlyExit fly_unwinding(const FlyInterp *I);
/* The exits of what just ran, with v its value, moved from the interpreter
   into o: an unwinding break, continue or return stops here. */
void fly_take_outcome(FlyInterp *I, const FlyVal *v, FlyOutcome *o);
/* Puts o's exits back: a static one unwinds on, a runtime one is pending. */
void fly_put_exits(FlyInterp *I, const FlyOutcome *o);
/* Whether the exits of the kinds in `kinds` (bits 1 << FlyExit) were
   taken: a static bool, or an i1 computed at run time. */
const FlyVal *fly_exit_flag(FlyInterp *I, const FlyOutcome *o, unsigned kinds, const FlyNode *at);
/* A value that is taken: static true or runtime. */
bool fly_flag_taken(const FlyVal *flag);
bool fly_flag_surely(const FlyVal *flag);

/* A choice at run time (MLIR scf.if) between two runs of statements, each
   filling its outcome; they are merged (values by `meeting`, yields as the
   carried values of `loop`) into *out. False after an error. */
typedef bool (*FlyBranchFn)(FlyInterp *I, void *arg, FlyOutcome *o);
typedef struct FlyChoice {
  const FlyVal *cond;     /* a runtime i1 */
  const FlyVal *not_cond; /* its negation where one is at hand, else NULL */
  const FlyNode *at;
  FlyMeeting meeting;
  const FlyLoop *loop; /* whose carried values the yields are, or NULL */
  FlyBranchFn then_branch, else_branch;
  void *arg;
} FlyChoice;
bool fly_choose(FlyInterp *I, const FlyChoice *ch, FlyOutcome *out);

/* The statements from `first` on, in scope s, then the tail of `block`
   (its final expression, or for a block that is not a loop body its final
   if/else). Once a statement leaves exits pending, the rest runs only where
   none was taken. The value of the tail, or none; NULL after an error. A
   loop body stops at its first error, must end with its yield (if any) and
   has no tail. */
const FlyVal *fly_run_stmts(FlyInterp *I, FlyScope *s, const FlyNode *first, const FlyNode *block,
                            bool loop_body);
/* The carried values of the running loop as they are (one value, or a
   tuple of them): what it goes on with after a break, continue or return
   that gives none. */
const FlyVal *fly_loop_current(FlyInterp *I);
/* Two of what a loop's body gives the next iteration (one value or a
   tuple, as `loop` carries), meeting after a runtime choice, each pair where
   it is carried. */
const FlyVal *fly_merge_next(FlyInterp *I, const FlyVal *a, const FlyVal *b, const FlyLoop *loop);

/* for and while (fly_interp_loop.c). */
bool fly_exec_for(FlyInterp *I, FlyScope *s, const FlyNode *st);
bool fly_exec_while(FlyInterp *I, FlyScope *s, const FlyNode *st);

/* ---- calls ------------------------------------------------------------------------ */

typedef struct FlyArgs {
  int n; /* positional */
  const FlyVal **v;
  const FlyNode **node; /* for messages; the call node when there is none */
  int nnamed;
  const FlyNode **named; /* FLY_NAMED_ARG nodes */
  const FlyVal **named_v;
  const FlyNode *call;
} FlyArgs;

const FlyVal *fly_call_fn(FlyInterp *I, const FlyNode *fn, const FlyArgs *args);
const FlyVal *fly_call_value(FlyInterp *I, const FlyVal *callee, const FlyArgs *args);

/* A copy of tuple t with each leaf (anything but a tuple) replaced by
 * leaf(I, that leaf, ctx): the shapes and strides of tensors, where `?` or
 * unfollowed strides become runtime values. NULL after an error. */
typedef const FlyVal *(*FlyLeafFn)(FlyInterp *I, const FlyVal *leaf, const void *ctx);
const FlyVal *fly_map_leaves(FlyInterp *I, const FlyVal *t, FlyLeafFn leaf, const void *ctx);
/* Leaves for fly_map_leaves: `?` for every leaf; a runtime i32 from the
 * FlyOrigin ctx for every leaf, or only for `?` leaves. */
const FlyVal *fly_leaf_dynamic(FlyInterp *I, const FlyVal *leaf, const void *ctx);
const FlyVal *fly_leaf_runtime(FlyInterp *I, const FlyVal *leaf, const void *ctx);
const FlyVal *fly_leaf_runtime_if_dynamic(FlyInterp *I, const FlyVal *leaf, const void *ctx);

/* ---- types (fly_interp_types.c) ---------------------------------------------------- */

/* The type an annotation names. NULL after an error. */
const FlyType *fly_eval_type(FlyInterp *I, FlyScope *s, const FlyNode *t);
/* A type value applied to arguments: vec<4, f32>(0.0), rmem<f32>(8) ... */
const FlyVal *fly_construct(FlyInterp *I, const FlyType *t, const FlyArgs *args);
/* v converted to type t: `as` (explicit: may wrap and truncate) or an
 * annotation, argument or operand (implicit: values that fit only, though
 * an untyped float is rounded to a float type). A float type always rounds
 * to nearest and refuses what is beyond its range. */
const FlyVal *fly_convert(FlyInterp *I, const FlyVal *v, const FlyType *t, const FlyNode *at,
                          bool explicit_cast);
/* The runtime conversion of v to t (a scalar type, or a vec of v's
 * length): the CONVERT opcode, with convert's two options (its rounding as
 * an integer, a FlyRounding, and whether it saturates) or, for `as`,
 * options NULL. Conversions no target of the session can make (fp8 ones
 * without fp8 instructions, f64 to fp8) are an error at `at`. */
const FlyVal *fly_emit_convert(FlyInterp *I, const FlyVal *v, const FlyType *t,
                               const FlyVal *const *options, const FlyNode *at);
/* The static number v as a constant of float type t: rounded to the nearest
 * value of t (ties to even); beyond t's largest finite value, an error at
 * `at`, explicit cast or not. */
const FlyVal *fly_float_const(FlyInterp *I, const FlyVal *v, const FlyType *t, const FlyNode *at);

/* ---- builtins (fly_builtins.c) ------------------------------------------------------ */

/* The builtin value of a name, or NULL when there is none. */
const FlyVal *fly_builtin_lookup(FlyInterp *I, const char *name, uint32_t len);
bool fly_is_builtin_name(const char *name, uint32_t len);
const FlyVal *fly_call_builtin(FlyInterp *I, const FlyVal *b, const FlyArgs *args);
/* After the launch block has run: an error where a static barrier(id, threads)
   of the kernel waits for more threads than its block has (fly_builtins_gpu.c). */
void fly_check_named_barriers(FlyInterp *I);
/* A member of a value: fields of target and the GPU indices, atom names of
   nv and amd, and methods (x.f is the builtin f with x as its first argument). */
const FlyVal *fly_member(FlyInterp *I, const FlyVal *base, const FlyNode *member);
/* Tensor indexing and slicing (fly_builtins_tensor.c). */
const FlyVal *fly_index_tensor(FlyInterp *I, const FlyVal *t, int n, const FlyVal **idx,
                               const FlyNode *at);
/* Vec indexing, v[i] (fly_builtins_vector.c): i static, in range, or
   runtime (index_at: i's node). */
const FlyVal *fly_index_vec(FlyInterp *I, const FlyVal *v, int n, const FlyVal **idx,
                            const FlyNode *at, const FlyNode *index_at);
/* The layout a static tensor pattern describes, or NULL when a leaf is
   runtime (no error reported). */
const FlyLayout *fly_tensor_static_layout(FlyInterp *I, const FlyTensor *t);
const FlyVal *fly_make_tensor(FlyInterp *I, const FlyType *elem, FlySpace space,
                              const FlyVal *shape, const FlyVal *stride);
/* A tensor cut from `like`: its element type, memory and swizzle. */
const FlyVal *fly_tensor_like(FlyInterp *I, const FlyVal *like, const FlyVal *shape,
                              const FlyVal *stride);

/* Values as algebra inputs; each reports its own error at `at`. */
FlyTuple *fly_val_to_tuple(FlyInterp *I, const FlyVal *v, const FlyNode *at, const char *what);
const FlyVal *fly_tuple_to_val(FlyInterp *I, const FlyTuple *t);
FlyTiler *fly_val_to_tiler(FlyInterp *I, const FlyVal *v, const FlyNode *at);
const FlyLayout *fly_val_to_layout(FlyInterp *I, const FlyVal *v, const FlyNode *at,
                                   const char *what);
bool fly_val_to_int(FlyInterp *I, const FlyVal *v, const FlyNode *at, const char *what,
                    int64_t *out);

#endif
