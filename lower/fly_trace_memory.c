/* fly_trace_memory.c — memory: loads and stores of tensors, the atomics
 * and fences with their scope and order as attributes (only the target
 * pass can turn them into a vendor's syncscope), ordered and volatile
 * accesses. */
#include "fly_trace_op.h"

bool fly_op_store(FlyTraceOp *o) {
  FlyTrace *t = o->t;
  const FlyVal *dst = o->args[0], *x = o->args[1];
  MlirValue v[2] = {fly_trace_value(t, x, x->kind == FLY_V_RUNTIME ? NULL : dst->tensor.elem),
                    fly_trace_handle(t, dst)};
  if (mlirValueIsNull(v[0]) || mlirValueIsNull(v[1]))
    return false;
  fly_mlir_op(t->m, t->ip, t->loc, "fly.store", 0, NULL, 2, v, 0, NULL, 0, NULL);
  return true;
}

bool fly_op_load(FlyTraceOp *o) {
  FlyTrace *t = o->t;
  MlirValue src = fly_trace_handle(t, o->args[0]);
  return set_result(o, op1(o, "fly.load", fly_trace_type(t, o->result->type), 1, &src, 0, NULL));
}

/* ---- atomics and memory order (fly_memory_order.h) ------------------------------------------ */

/* The scope and order the semantic pass passes as static integers, from
   args[i] on, as the attributes `scope` and `order`. */
static void scope_order_attrs(FlyTraceOp *o, int i, MlirNamedAttribute *a) {
  FlyTrace *t = o->t;
  a[0] = fly_mlir_named(t->m, "scope",
                        fly_mlir_str_attr(t->m, fly_mem_scope_name((FlyMemScope)o->args[i]->i)));
  a[1] = fly_mlir_named(
      t->m, "order", fly_mlir_str_attr(t->m, fly_mem_order_name((FlyMemOrder)o->args[i + 1]->i)));
}

/* An operand of an atomic on a tensor's elements: a static number made a
   constant of the element type; a runtime one (a packed pair too) as it is. */
static MlirValue atomic_operand(FlyTraceOp *o, int i) {
  const FlyVal *x = o->args[i];
  return fly_trace_value(o->t, x, x->kind == FLY_V_RUNTIME ? NULL : o->args[0]->tensor.elem);
}

/* (t, x, scope, order) */
bool fly_op_atomic_rmw(FlyTraceOp *o, FlyAtomicOp kind) {
  FlyTrace *t = o->t;
  MlirValue v[2] = {fly_trace_handle(t, o->args[0]), atomic_operand(o, 1)};
  if (mlirValueIsNull(v[0]) || mlirValueIsNull(v[1]))
    return false;
  MlirNamedAttribute a[3] = {
      fly_mlir_named(t->m, "kind", fly_mlir_str_attr(t->m, fly_atomic_op_name(kind)))};
  scope_order_attrs(o, 2, a + 1);
  return set_result(o, op1(o, "fly.atomic_rmw", fly_trace_type(t, o->result->type), 2, v, 3, a));
}

/* (t, expected, desired, scope, order) */
bool fly_op_atomic_cas(FlyTraceOp *o) {
  FlyTrace *t = o->t;
  MlirValue v[3] = {fly_trace_handle(t, o->args[0]), atomic_operand(o, 1), atomic_operand(o, 2)};
  if (mlirValueIsNull(v[0]) || mlirValueIsNull(v[1]) || mlirValueIsNull(v[2]))
    return false;
  MlirNamedAttribute a[2];
  scope_order_attrs(o, 3, a);
  return set_result(o, op1(o, "fly.atomic_cas", fly_trace_type(t, o->result->type), 3, v, 2, a));
}

/* (scope, order) */
bool fly_op_fence(FlyTraceOp *o) {
  MlirNamedAttribute a[2];
  scope_order_attrs(o, 0, a);
  fly_mlir_op(o->t->m, o->t->ip, o->t->loc, "fly.fence", 0, NULL, 0, NULL, 2, a, 0, NULL);
  return true;
}

/* An element loaded atomically (t, scope, order) or as volatile (t). */
bool fly_op_ordered_load(FlyTraceOp *o, bool is_volatile) {
  FlyTrace *t = o->t;
  MlirValue src = fly_trace_handle(t, o->args[0]);
  if (mlirValueIsNull(src))
    return false;
  MlirNamedAttribute a[2];
  if (!is_volatile)
    scope_order_attrs(o, 1, a);
  const char *name = is_volatile ? "fly.volatile_load" : "fly.atomic_load";
  return set_result(
      o, op1(o, name, fly_trace_type(t, o->result->type), 1, &src, is_volatile ? 0 : 2, a));
}

/* An element stored atomically (t, x, scope, order) or as volatile (t, x). */
bool fly_op_ordered_store(FlyTraceOp *o, bool is_volatile) {
  FlyTrace *t = o->t;
  MlirValue v[2] = {atomic_operand(o, 1), fly_trace_handle(t, o->args[0])};
  if (mlirValueIsNull(v[0]) || mlirValueIsNull(v[1]))
    return false;
  MlirNamedAttribute a[2];
  if (!is_volatile)
    scope_order_attrs(o, 2, a);
  const char *name = is_volatile ? "fly.volatile_store" : "fly.atomic_store";
  fly_mlir_op(t->m, t->ip, t->loc, name, 0, NULL, 2, v, is_volatile ? 0 : 2, a, 0, NULL);
  return true;
}
