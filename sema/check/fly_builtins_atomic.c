/* fly_builtins_atomic.c — atomics and memory order: the read-modify-write
 * atomics (atomic_add ... atomic_exch), atomic_cas, fence, and the loads and
 * stores of one element with an order, a scope or volatile. Their
 * operations, scopes and orders are the tables of fly_memory_order.h; what
 * each target does with them is the lowering's (lower/fly_lower_atomic.c). */
#include <stdio.h>

#include "fly_builtins.h"
#include "fly_memory_order.h"

/* ---- scopes and orders ---------------------------------------------------------------------- */

/* The named arguments scope and order, as static integers for the
   emitter (args[0], args[1]); order_default when order is left out. False
   after an error. */
static bool scope_and_order(FlyInterp *I, const FlyArgs *a, FlyMemOrder order_default,
                            const FlyVal **args) {
  int scope = fly_arg_choice(I, a, "scope", fly_mem_scope_names, FLY_SCOPE_DEFAULT);
  int order = fly_arg_choice(I, a, "order", fly_mem_order_names, (int)order_default);
  if (scope < 0 || order < 0)
    return false;
  args[0] = fly_val_int(&I->A, scope, NULL);
  args[1] = fly_val_int(&I->A, order, NULL);
  return true;
}

/* Refuses the orders a load or a store does not have: `refused` (a load
   cannot release, a store cannot acquire) and so acq_rel. `what` is "a
   load" or "a store". */
static bool order_fits(FlyInterp *I, const FlyArgs *a, const FlyVal *order, FlyMemOrder refused,
                       const char *what, const char *allowed) {
  FlyMemOrder o = (FlyMemOrder)order->i;
  if (o != refused && o != FLY_ORDER_ACQ_REL)
    return true;
  const FlyNode *at = a->call;
  fly_arg_named(a, "order", &at);
  fly_err(I, at, "%s's order is %s, not \"%s\"", what, allowed, fly_mem_order_name(o));
  return false;
}

/* ---- the element an atomic works on ------------------------------------------------------- */

/* t[i]: one element of global or shared memory (registers belong to one
   thread, so an atomic there means nothing). `what` names the operation. */
static const FlyVal *memory_element(FlyInterp *I, const FlyArgs *a, const char *what,
                                    const char *verb) {
  const FlyVal *t = fly_arg_tensor(I, a, 0, what);
  if (!t)
    return NULL;
  if (!fly_tensor_is_element(t))
    return fly_err(I, a->node[0], "%s %s one element: index the tensor, t[i]", what, verb);
  if (t->tensor.space == FLY_SPACE_REGISTER)
    return fly_err(I, a->node[0], "%s needs global or shared memory, not registers", what);
  return t;
}

static bool is_code(const FlyType *t, FlyTypeCode c) {
  return t->kind == FLY_TY_SCALAR && t->code == c;
}

/* The elements every atomic takes, i32 and i64, and f32 where `floats`. */
static bool atomic_scalar(const FlyType *t, bool floats) {
  return is_code(t, FLY_TYPE_I32) || is_code(t, FLY_TYPE_I64) ||
         (floats && is_code(t, FLY_TYPE_F32));
}

/* The operand x of an atomic on elements of type e: a runtime e, or a
   static number that converts to e. NULL after an error. */
static const FlyVal *operand(FlyInterp *I, const FlyArgs *a, int i, const FlyType *e,
                             const char *what) {
  const FlyVal *v = a->v[i];
  if (v->kind != FLY_V_RUNTIME)
    return fly_convert(I, v, e, a->node[i], false);
  if (!fly_type_equal(v->type, e))
    return fly_err(I, a->node[i], "%s of %s to a tensor of %s", what, fly_type_str(&I->A, v->type),
                   fly_type_str(&I->A, e));
  return v;
}

/* ---- packed pairs -----------------------------------------------------------------------------
 */

/* Whether x is a pair of the tensor's f16 or bf16 elements (vec<2, f16>
   added to t[i] and t[i+1]). */
static bool is_pair(const FlyVal *x, const FlyType *e) {
  return x->kind == FLY_V_RUNTIME && x->type->kind == FLY_TY_VEC && x->type->n == 2 &&
         fly_type_equal(x->type->elem, e) &&
         (is_code(e, FLY_TYPE_F16) || is_code(e, FLY_TYPE_BF16));
}

/* A packed add needs the target's instruction (fly_targets.def); the
   message names the targets that have one. */
static bool pair_on_target(FlyInterp *I, const FlyArgs *a, const FlyType *e) {
  FlyFeature f = is_code(e, FLY_TYPE_F16) ? FLY_FEATURE_ATOMIC_PK_F16 : FLY_FEATURE_ATOMIC_PK_BF16;
  if (fly_target_has(I->target, f))
    return true;
  const char *e_name = fly_type_str(&I->A, e);
  fly_err(I, a->node[1], "%s has no packed atomic add of %s pairs (vec<2, %s>); %s have one",
          I->target->arch, e_name, e_name, fly_targets_with_feature(f));
  return false;
}

/* ---- the read-modify-write atomics ------------------------------------------------------------
 */

/* Why op refuses elements of type e (op's name in `name`). */
static const FlyVal *refuse_element(FlyInterp *I, const FlyArgs *a, FlyAtomicOp op,
                                    const char *name, const FlyType *e) {
  const char *es = fly_type_str(&I->A, e);
  if (!fly_atomic_op_takes_float(op) && fly_type_is_float(e))
    return fly_err(I, a->node[0], "%s is for integers (i32, i64), not %s", name, es);
  if (is_pair(a->v[1], e))
    return fly_err(I, a->node[1], "%s of a pair (vec<2, %s>): only atomic_add adds pairs", name,
                   es);
  if (fly_atomic_op_takes_packed(op) && (is_code(e, FLY_TYPE_F16) || is_code(e, FLY_TYPE_BF16)))
    return fly_err(I, a->node[0],
                   "%s of one %s: it adds %s in pairs, a vec<2, %s> to t[i] and t[i+1]", name, es,
                   es, es);
  return fly_err(I, a->node[0], "%s takes elements of %s, not %s", name,
                 fly_atomic_op_takes_float(op) ? "i32, i64 or f32" : "i32 or i64", es);
}

/* atomic_<op>(t[i], x, scope =, order =): emitted with (t, x, scope, order). */
static const FlyVal *atomic_rmw(FlyInterp *I, const FlyArgs *a, FlyAtomicOp op, FlyOpcode code) {
  char name[32];
  snprintf(name, sizeof name, "atomic_%s", fly_atomic_op_name(op));
  if (!fly_gpu_only(I, a, name))
    return NULL;
  const FlyVal *t = memory_element(I, a, name, "updates");
  if (!t)
    return NULL;
  const FlyType *e = t->tensor.elem, *result = e;
  const FlyVal *args[4] = {t, a->v[1]};
  if (fly_atomic_op_takes_packed(op) && is_pair(a->v[1], e)) {
    if (!pair_on_target(I, a, e))
      return NULL;
    result = a->v[1]->type;
  } else if (!atomic_scalar(e, fly_atomic_op_takes_float(op))) {
    return refuse_element(I, a, op, name, e);
  } else if (!(args[1] = operand(I, a, 1, e, name))) {
    return NULL;
  }
  if (!scope_and_order(I, a, FLY_ORDER_DEFAULT, args + 2))
    return NULL;
  char why[64];
  snprintf(why, sizeof why, "the value before an %s", name);
  FlyOrigin o = {a->call, fly_strdup(&I->A, why)};
  return fly_emit_value(I, fly_val_runtime(&I->A, result, o), code, 4, args, a->call);
}

#define RMW(op) const FlyVal *fly_builtin_atomic_##op(FlyInterp *I, const FlyArgs *a)
RMW(add) { return atomic_rmw(I, a, FLY_ATOMIC_ADD, FLY_OPCODE_ATOMIC_ADD); }
RMW(min) { return atomic_rmw(I, a, FLY_ATOMIC_MIN, FLY_OPCODE_ATOMIC_MIN); }
RMW(max) { return atomic_rmw(I, a, FLY_ATOMIC_MAX, FLY_OPCODE_ATOMIC_MAX); }
RMW(umin) { return atomic_rmw(I, a, FLY_ATOMIC_UMIN, FLY_OPCODE_ATOMIC_UMIN); }
RMW(umax) { return atomic_rmw(I, a, FLY_ATOMIC_UMAX, FLY_OPCODE_ATOMIC_UMAX); }
RMW(and) { return atomic_rmw(I, a, FLY_ATOMIC_AND, FLY_OPCODE_ATOMIC_AND); }
RMW(or) { return atomic_rmw(I, a, FLY_ATOMIC_OR, FLY_OPCODE_ATOMIC_OR); }
RMW(xor) { return atomic_rmw(I, a, FLY_ATOMIC_XOR, FLY_OPCODE_ATOMIC_XOR); }
RMW(exch) { return atomic_rmw(I, a, FLY_ATOMIC_EXCH, FLY_OPCODE_ATOMIC_EXCH); }
#undef RMW

/* atomic_cas(t[i], expected, desired): emitted with (t, expected, desired,
   scope, order). */
const FlyVal *fly_builtin_atomic_cas(FlyInterp *I, const FlyArgs *a) {
  if (!fly_gpu_only(I, a, "atomic_cas"))
    return NULL;
  const FlyVal *t = memory_element(I, a, "atomic_cas", "updates");
  if (!t)
    return NULL;
  const FlyType *e = t->tensor.elem;
  if (!atomic_scalar(e, true))
    return fly_err(I, a->node[0], "atomic_cas takes elements of i32, i64 or f32, not %s",
                   fly_type_str(&I->A, e));
  const FlyVal *args[5] = {t};
  for (int i = 1; i < 3; i++)
    if (!(args[i] = operand(I, a, i, e, "atomic_cas")))
      return NULL;
  if (!scope_and_order(I, a, FLY_ORDER_DEFAULT, args + 3))
    return NULL;
  FlyOrigin o = {a->call, "the value before an atomic_cas"};
  return fly_emit_value(I, fly_val_runtime(&I->A, e, o), FLY_OPCODE_ATOMIC_CAS, 5, args, a->call);
}

/* fence(scope =, order =): emitted with (scope, order). A relaxed fence
   would order nothing. */
const FlyVal *fly_builtin_fence(FlyInterp *I, const FlyArgs *a) {
  if (!fly_gpu_only(I, a, "fence"))
    return NULL;
  const FlyVal *args[2];
  if (!scope_and_order(I, a, FLY_FENCE_ORDER_DEFAULT, args))
    return NULL;
  if (args[1]->i == FLY_ORDER_RELAXED) {
    const FlyNode *at = a->call;
    fly_arg_named(a, "order", &at);
    return fly_err(I, at,
                   "a fence's order is \"acquire\", \"release\" or \"acq_rel\": a relaxed one "
                   "orders nothing");
  }
  return fly_emit_effect(I, FLY_OPCODE_FENCE, 2, args, a->call) ? fly_val_none() : NULL;
}

/* ---- loads and stores with an order, a scope or volatile ---------------------------------- */

/* How a load or store with named arguments reaches memory. */
typedef enum Access { ACCESS_PLAIN, ACCESS_VOLATILE, ACCESS_ATOMIC, ACCESS_ERROR } Access;

static Access access_of(FlyInterp *I, const FlyArgs *a, const char *what) {
  const FlyNode *at = a->call;
  const FlyVal *v = fly_arg_named(a, "volatile", &at);
  bool ordered = fly_arg_named(a, "order", NULL) || fly_arg_named(a, "scope", NULL);
  if (v && v->kind != FLY_V_BOOL) {
    fly_err(I, at, "volatile is true or false, known at compile time, not %s",
            fly_val_describe(&I->A, v));
    return ACCESS_ERROR;
  }
  if (v && v->i && ordered) {
    fly_err(I, at, "%s is either volatile or atomic (with an order and a scope), not both", what);
    return ACCESS_ERROR;
  }
  return v && v->i ? ACCESS_VOLATILE : ordered ? ACCESS_ATOMIC : ACCESS_PLAIN;
}

bool fly_access_is_plain(const FlyArgs *a) {
  const FlyVal *v = fly_arg_named(a, "volatile", NULL);
  return !fly_arg_named(a, "order", NULL) && !fly_arg_named(a, "scope", NULL) &&
         (!v || (v->kind == FLY_V_BOOL && !v->i));
}

/* The element an ordered or volatile access reads or writes: a whole
   byte of at most 64 bits (i1 has no atomic access). */
static const FlyVal *access_element(FlyInterp *I, const FlyArgs *a, const char *what,
                                    const char *verb) {
  const FlyVal *t = memory_element(I, a, what, verb);
  if (!t)
    return NULL;
  int bits = fly_type_bits(t->tensor.elem);
  if (bits % 8 || bits > 64)
    return fly_err(I, a->node[0], "%s %s elements of 8 to 64 bits, not %s", what, verb,
                   fly_type_str(&I->A, t->tensor.elem));
  return t;
}

const FlyVal *fly_ordered_load(FlyInterp *I, const FlyArgs *a) {
  const char *what = "a load with an order, a scope or volatile";
  Access k = access_of(I, a, "a load");
  const FlyVal *t = k == ACCESS_ERROR ? NULL : access_element(I, a, what, "reads");
  if (!t)
    return NULL;
  FlyOrigin o = {a->call, "a value loaded from memory"};
  const FlyVal *r = fly_val_runtime(&I->A, t->tensor.elem, o);
  if (k == ACCESS_VOLATILE)
    return fly_emit_value(I, r, FLY_OPCODE_VOLATILE_LOAD, 1, &t, a->call);
  const FlyVal *args[3] = {t};
  if (!scope_and_order(I, a, FLY_ORDER_DEFAULT, args + 1) ||
      !order_fits(I, a, args[2], FLY_ORDER_RELEASE, "a load", "\"relaxed\" or \"acquire\""))
    return NULL;
  return fly_emit_value(I, r, FLY_OPCODE_ATOMIC_LOAD, 3, args, a->call);
}

bool fly_ordered_store(FlyInterp *I, const FlyArgs *a) {
  const char *what = "a store with an order, a scope or volatile";
  Access k = access_of(I, a, "a store");
  const FlyVal *t = k == ACCESS_ERROR ? NULL : access_element(I, a, what, "writes");
  const FlyVal *x = t ? fly_store_value(I, a, t, t->tensor.elem) : NULL;
  if (!x)
    return false;
  const FlyVal *args[4] = {t, x};
  if (k == ACCESS_VOLATILE)
    return fly_emit_effect(I, FLY_OPCODE_VOLATILE_STORE, 2, args, a->call);
  if (!scope_and_order(I, a, FLY_ORDER_DEFAULT, args + 2) ||
      !order_fits(I, a, args[3], FLY_ORDER_ACQUIRE, "a store", "\"relaxed\" or \"release\""))
    return false;
  return fly_emit_effect(I, FLY_OPCODE_ATOMIC_STORE, 4, args, a->call);
}
