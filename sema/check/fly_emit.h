/* fly_emit.h — how the interpreter hands runtime work to a code generator.
 *
 * The semantic pass runs a kernel's body once per specialisation. Checking
 * needs only the types of runtime values; tracing (lower/) needs the code
 * that computes them. So the interpreter calls an emitter, when one is
 * installed, at each point where it makes a runtime value, performs an
 * effect (a store, a barrier, a copy), or enters runtime control flow. The
 * emitter gives each runtime value (and each tensor, whose data pointer and
 * runtime layout leaves are runtime too) an opaque handle, FlyVal.ssa, that
 * only the emitter reads. With no emitter installed nothing changes.
 *
 * The interface is deliberately narrow: operations are opcodes, one per
 * row of fly_ops.def (a builtin that makes runtime work, an operator, an
 * index, a conversion ...), and receive the interpreter's own values,
 * static ones included, so that what to emit for each is decided in one
 * place on the emitter's side, a switch over FlyOpcode. Like the rest of
 * sema/, this header knows nothing of MLIR. */
#ifndef FLY_EMIT_H
#define FLY_EMIT_H

#include "fly_value.h"

typedef enum FlyOpcode {
#define FLY_BUILTIN_OP(id, ...) FLY_OPCODE_##id,
#define FLY_OPCODE(id, doc) FLY_OPCODE_##id,
#define FLY_OPERATOR(id, op) FLY_OPCODE_##id,
#include "fly_ops.def"
  FLY_OPCODE_COUNT
} FlyOpcode;

/* The opcode's name for messages ("exp", "INDEX", an operator's "+"). */
const char *fly_opcode_name(FlyOpcode op);
/* The opcode of an operator of the language. */
FlyOpcode fly_opcode_of_operator(FlyOp op);

typedef struct FlyEmitter FlyEmitter;
struct FlyEmitter {
  void *ctx;
  /* A kernel specialisation begins: params[i] are the values its
     parameters are bound to (static values for const parameters), in the
     order they are declared; the emitter gives the runtime ones (and the
     runtime leaves of tensors) their handles. `spec` is its canonical
     description, "k BLOCK=256 @sm_90". */
  bool (*kernel_begin)(void *ctx, const FlyNode *kernel, int n, const FlyNode *const *decls,
                       FlyVal *const *params, const char *spec);
  /* The body ended (ok false after errors: drop what was built). */
  bool (*kernel_end)(void *ctx, const FlyNode *kernel, bool ok);
  /* After kernel_end (ok): the launch block gives the kernel a block size
     known at compile time, so the code may be compiled for exactly that
     many threads (registers shared out for them). May be NULL. */
  bool (*kernel_block_size)(void *ctx, const FlyNode *kernel, const int32_t dims[3]);
  /* After kernel_end (ok): the launch block's cluster shape, blocks of a
     thread-block cluster (each at least 1). May be NULL. */
  bool (*kernel_cluster_size)(void *ctx, const FlyNode *kernel, const int32_t dims[3]);
  /* result, a fresh runtime value or tensor, is op applied to args; sets
     result->ssa. False after reporting an error. */
  bool (*value)(void *ctx, FlyVal *result, FlyOpcode op, int n, const FlyVal *const *args,
                const FlyNode *at);
  /* An operation done for its effect: store, barrier, copy, printf ... */
  bool (*effect)(void *ctx, FlyOpcode op, int n, const FlyVal *const *args, const FlyNode *at);
  /* A runtime if: begin (the then branch follows), otherwise (the else
     branch follows), end: then_value and else_value are what the branches
     gave, result the merged value, whose runtime leaves receive the if's
     results (result NULL: the branches did not check, drop them). Values
     are NONE for an if without values. */
  void *(*if_begin)(void *ctx, const FlyVal *cond, const FlyNode *at);
  bool (*if_else)(void *ctx, void *region);
  bool (*if_end)(void *ctx, void *region, const FlyVal *then_value, const FlyVal *else_value,
                 const FlyVal *result);
  /* A runtime loop `for var in range(lo, hi, step) carry (...)` whose body
     cannot stop it early (no break or return). begin
     gives var and each carried[i] (fresh runtime values, typed) their
     handles inside the body, the initial values being init[i]. end takes
     what the body yields and gives the results (fresh values) their
     handles after the loop. abandon drops a body that will be run again
     (the carried types changed). */
  void *(*for_begin)(void *ctx, const FlyVal *lo, const FlyVal *hi, const FlyVal *step, FlyVal *var,
                     int n, const FlyVal *const *init, FlyVal *const *carried, const FlyNode *at);
  bool (*for_end)(void *ctx, void *region, int n, const FlyVal *const *yielded,
                  FlyVal *const *results);
  void (*for_abandon)(void *ctx, void *region);
  /* A runtime loop that tests a condition before each iteration: `while
     cond carry (...)`, or a for loop whose body can break or return (its
     variable and the flags of those exits are then carried too). begin
     gives each carried[i] (fresh runtime values, typed) its handle where
     the condition is computed, the initial values being init[i]; body
     takes the condition (a static bool or a runtime i1) and gives each
     carried[i] (fresh again) its handle inside the body; end takes what
     the body yields and gives the results (fresh) their handles after the
     loop: the carried values where the condition was false. abandon drops
     a loop that will be run again (the carried types changed). */
  void *(*while_begin)(void *ctx, int n, const FlyVal *const *init, FlyVal *const *carried,
                       const FlyNode *at);
  bool (*while_body)(void *ctx, void *region, const FlyVal *cond, int n, FlyVal *const *carried);
  bool (*while_end)(void *ctx, void *region, int n, const FlyVal *const *yielded,
                    FlyVal *const *results);
  void (*while_abandon)(void *ctx, void *region);
};

#endif
