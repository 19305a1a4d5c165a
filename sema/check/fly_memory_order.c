/* fly_memory_order.c — the tables of fly_memory_order.h. */
#include "fly_memory_order.h"

#include <string.h>

static const struct {
  const char *name;
  bool floats, packed;
} atomic_ops[] = {
#define X(id, name, floats, packed) {name, floats, packed},
    FLY_ATOMIC_OPS(X)
#undef X
};

const char *const fly_mem_scope_names[] = {
#define X(id, name) name,
    FLY_MEM_SCOPES(X)
#undef X
        NULL};

const char *const fly_mem_order_names[] = {
#define X(id, name) name,
    FLY_MEM_ORDERS(X)
#undef X
        NULL};

const char *fly_atomic_op_name(FlyAtomicOp op) { return atomic_ops[op].name; }
bool fly_atomic_op_takes_float(FlyAtomicOp op) { return atomic_ops[op].floats; }
bool fly_atomic_op_takes_packed(FlyAtomicOp op) { return atomic_ops[op].packed; }
const char *fly_mem_scope_name(FlyMemScope s) { return fly_mem_scope_names[s]; }
const char *fly_mem_order_name(FlyMemOrder o) { return fly_mem_order_names[o]; }

static int find_in(const char *const *names, const char *name) {
  for (int i = 0; names[i]; i++)
    if (strcmp(names[i], name) == 0)
      return i;
  return -1;
}

int fly_atomic_op_find(const char *name) {
  for (int i = 0; i < FLY_ATOMIC_OP_COUNT; i++)
    if (strcmp(atomic_ops[i].name, name) == 0)
      return i;
  return -1;
}

int fly_mem_scope_find(const char *name) { return find_in(fly_mem_scope_names, name); }
int fly_mem_order_find(const char *name) { return find_in(fly_mem_order_names, name); }
