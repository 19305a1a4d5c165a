/* fly_opcode.c — the opcodes of runtime work (fly_emit.h), from fly_ops.def. */
#include "fly_emit.h"

static const char *const names[] = {
#define FLY_BUILTIN_OP(id, name, ...) #name,
#define FLY_OPCODE(id, doc) #id,
#define FLY_OPERATOR(id, op) #id,
#include "fly_ops.def"
};

static const FlyOpcode of_operator[FLY_OP_COUNT] = {
#define FLY_OPERATOR(id, op) [op] = FLY_OPCODE_##id,
#include "fly_ops.def"
};

/* The operator of each opcode (FLY_OP_NONE for the others). */
static const FlyOp operator_of[FLY_OPCODE_COUNT] = {
#define FLY_OPERATOR(id, op) [FLY_OPCODE_##id] = op,
#include "fly_ops.def"
};

const char *fly_opcode_name(FlyOpcode op) {
  if (op < 0 || op >= FLY_OPCODE_COUNT)
    return "?";
  return operator_of[op] != FLY_OP_NONE ? fly_op_spelling(operator_of[op]) : names[op];
}

FlyOpcode fly_opcode_of_operator(FlyOp op) { return of_operator[op]; }
