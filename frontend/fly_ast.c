/* fly_ast.c — constructing syntax-tree nodes, and their names. */
#include "fly_ast.h"

#include <stdio.h>
#include <string.h>

static const char *const kind_names[FLY_NODE_KIND_COUNT] = {
    [FLY_INT] = "int",
    [FLY_FLOAT] = "float",
    [FLY_BOOL] = "bool",
    [FLY_STRING] = "string",
    [FLY_NAME] = "name",
    [FLY_UNDERSCORE] = "underscore",
    [FLY_DYNAMIC] = "dynamic",
    [FLY_TYPE] = "type",
    [FLY_TYPE_APPLY] = "type-apply",
    [FLY_TUPLE] = "tuple",
    [FLY_LAYOUT] = "layout",
    [FLY_UNARY] = "unary",
    [FLY_BINARY] = "binary",
    [FLY_CAST] = "cast",
    [FLY_CALL] = "call",
    [FLY_INDEX] = "index",
    [FLY_MEMBER] = "member",
    [FLY_NAMED_ARG] = "named-arg",
    [FLY_IF] = "if",
    [FLY_BLOCK] = "block",
    [FLY_LET] = "let",
    [FLY_CONST] = "const",
    [FLY_CONST_BLOCK] = "const-block",
    [FLY_STATIC_ASSERT] = "static_assert",
    [FLY_REQUIRE] = "require",
    [FLY_EXPR_STMT] = "expr-stmt",
    [FLY_FOR] = "for",
    [FLY_CARRY] = "carry",
    [FLY_YIELD] = "yield",
    [FLY_RETURN] = "return",
    [FLY_WHILE] = "while",
    [FLY_BREAK] = "break",
    [FLY_CONTINUE] = "continue",
    [FLY_PAT_NAME] = "pat-name",
    [FLY_PAT_WILDCARD] = "pat-wildcard",
    [FLY_PAT_TUPLE] = "pat-tuple",
    [FLY_IMPORT] = "import",
    [FLY_PARAM] = "param",
    [FLY_FN] = "fn",
    [FLY_KERNEL] = "kernel",
    [FLY_LAUNCH] = "launch",
    [FLY_LAUNCH_FIELD] = "launch-field",
    [FLY_MODULE] = "module",
};

static const char *const op_spellings[FLY_OP_COUNT] = {
    [FLY_OP_NONE] = "",    [FLY_OP_ADD] = "+",    [FLY_OP_SUB] = "-",    [FLY_OP_MUL] = "*",
    [FLY_OP_DIV] = "/",    [FLY_OP_MOD] = "%",    [FLY_OP_SHL] = "<<",   [FLY_OP_SHR] = ">>",
    [FLY_OP_BITAND] = "&", [FLY_OP_BITOR] = "|",  [FLY_OP_BITXOR] = "^", [FLY_OP_AND] = "&&",
    [FLY_OP_OR] = "||",    [FLY_OP_EQ] = "==",    [FLY_OP_NE] = "!=",    [FLY_OP_LT] = "<",
    [FLY_OP_LE] = "<=",    [FLY_OP_GT] = ">",     [FLY_OP_GE] = ">=",    [FLY_OP_NEG] = "-",
    [FLY_OP_NOT] = "!",    [FLY_OP_BITNOT] = "~",
};

static const char *const type_names[FLY_TYPE_CODE_COUNT] = {
    [FLY_TYPE_NONE] = "",
    [FLY_TYPE_I1] = "i1",
    [FLY_TYPE_I8] = "i8",
    [FLY_TYPE_I16] = "i16",
    [FLY_TYPE_I32] = "i32",
    [FLY_TYPE_I64] = "i64",
    [FLY_TYPE_INDEX] = "index",
    [FLY_TYPE_F16] = "f16",
    [FLY_TYPE_BF16] = "bf16",
    [FLY_TYPE_F32] = "f32",
    [FLY_TYPE_F64] = "f64",
    [FLY_TYPE_F8E4M3] = "f8e4m3",
    [FLY_TYPE_F8E5M2] = "f8e5m2",
    [FLY_TYPE_F8E4M3FNUZ] = "f8e4m3fnuz",
    [FLY_TYPE_F8E5M2FNUZ] = "f8e5m2fnuz",
    [FLY_TYPE_INT] = "int",
    [FLY_TYPE_FLOAT] = "float",
    [FLY_TYPE_BOOL] = "bool",
    [FLY_TYPE_STR] = "str",
    [FLY_TYPE_LAYOUT] = "layout",
    [FLY_TYPE_TUPLE] = "tuple",
    [FLY_TYPE_TYPE] = "type",
    [FLY_TYPE_VEC] = "vec",
    [FLY_TYPE_TENSOR] = "tensor",
    [FLY_TYPE_SMEM] = "smem",
    [FLY_TYPE_RMEM] = "rmem",
};

const char *fly_node_kind_name(FlyNodeKind kind) {
  return kind < FLY_NODE_KIND_COUNT ? kind_names[kind] : "?";
}
const char *fly_op_spelling(FlyOp op) { return op < FLY_OP_COUNT ? op_spellings[op] : "?"; }
const char *fly_type_code_name(FlyTypeCode code) {
  return code < FLY_TYPE_CODE_COUNT ? type_names[code] : "?";
}

static FlyNode *fail(FlyAstBuilder *b, FlyLoc loc, const char *why) {
  if (!b->failed) {
    b->failed = true;
    b->failed_at = loc;
    b->failure = why;
  }
  return NULL;
}

static FlyNode *new_node(FlyAstBuilder *b, FlyNodeKind kind, FlyLoc loc) {
  if (b->failed) /* the parse is being abandoned: build nothing more */
    return NULL;
  FlyNode *n = fly_arena_alloc(b->arena, sizeof *n);
  if (!n)
    return fail(b, loc,
                b->arena->failure == FLY_ARENA_OVER_LIMIT
                    ? "the program is too large: its syntax tree passed the memory limit"
                    : "out of memory");
  n->kind = (uint8_t)kind;
  n->depth = 1;
  n->file = b->file;
  n->begin = loc.begin;
  n->end = loc.end;
  n->name_at = loc.begin;
  return n;
}

FlyNode *fly_ast_leaf(FlyAstBuilder *b, FlyNodeKind kind, FlyLoc loc) {
  return new_node(b, kind, loc);
}

FlyNode *fly_ast_int(FlyAstBuilder *b, FlyLoc loc, uint64_t value) {
  FlyNode *n = new_node(b, FLY_INT, loc);
  if (n)
    n->ival = value;
  return n;
}

FlyNode *fly_ast_float(FlyAstBuilder *b, FlyLoc loc, double value) {
  FlyNode *n = new_node(b, FLY_FLOAT, loc);
  if (n)
    n->fval = value;
  return n;
}

FlyNode *fly_ast_bool(FlyAstBuilder *b, FlyLoc loc, bool value) {
  FlyNode *n = new_node(b, FLY_BOOL, loc);
  if (n)
    n->ival = value;
  return n;
}

static const char *copy_text(FlyAstBuilder *b, FlyLoc loc, const char *str, uint32_t len) {
  char *copy = fly_arena_alloc(b->arena, (size_t)len + 1);
  if (!copy) {
    fail(b, loc, "out of memory");
    return NULL;
  }
  memcpy(copy, str, len);
  copy[len] = '\0';
  return copy;
}

FlyNode *fly_ast_text(FlyAstBuilder *b, FlyNodeKind kind, FlyLoc loc, const char *str,
                      uint32_t len) {
  FlyNode *n = new_node(b, kind, loc);
  if (!n)
    return NULL;
  n->str = copy_text(b, loc, str, len);
  n->len = len;
  return n->str ? n : NULL;
}

FlyNode *fly_ast_type(FlyAstBuilder *b, FlyLoc loc, FlyTypeCode code) {
  FlyNode *n = new_node(b, FLY_TYPE, loc);
  if (n)
    n->op = (uint8_t)code;
  return n;
}

FlyNode *fly_ast_node(FlyAstBuilder *b, FlyNodeKind kind, FlyLoc loc, FlyNode *k0, FlyNode *k1,
                      FlyNode *k2, FlyNode *k3) {
  FlyNode *n = new_node(b, kind, loc);
  if (!n)
    return NULL;
  FlyNode *kids[4] = {k0, k1, k2, k3};
  unsigned depth = 0;
  for (int i = 0; i < 4; i++) {
    n->kid[i] = kids[i];
    for (FlyNode *k = kids[i]; k; k = k->next)
      if (k->depth > depth)
        depth = k->depth;
  }
  if (depth >= FLY_AST_MAX_DEPTH) {
    static char why[64];
    snprintf(why, sizeof why, "nested too deeply (limit is %d levels)", FLY_AST_MAX_DEPTH);
    return fail(b, loc, why);
  }
  n->depth = (uint16_t)(depth + 1);
  return n;
}

FlyNode *fly_ast_op(FlyAstBuilder *b, FlyNodeKind kind, FlyLoc loc, FlyOp op, FlyNode *a,
                    FlyNode *c) {
  FlyNode *n = fly_ast_node(b, kind, loc, a, c, NULL, NULL);
  if (n)
    n->op = (uint8_t)op;
  return n;
}

FlyNode *fly_ast_list(FlyAstBuilder *b, FlyNodeKind kind, FlyLoc loc, FlyList list) {
  return fly_ast_node(b, kind, loc, list.head, NULL, NULL, NULL);
}

FlyNode *fly_ast_named(FlyAstBuilder *b, FlyNode *n, FlyLoc name_loc, const char *name,
                       uint32_t len) {
  if (!n)
    return NULL;
  n->str = copy_text(b, name_loc, name, len);
  n->len = len;
  n->name_at = name_loc.begin;
  return n->str ? n : NULL;
}

FlyNode *fly_ast_flag(FlyNode *n, unsigned flag) {
  if (n)
    n->flags |= (uint8_t)flag;
  return n;
}

FlyList fly_list_empty(void) {
  FlyList l = {NULL, NULL};
  return l;
}

FlyList fly_list_one(FlyNode *n) { return fly_list_append(fly_list_empty(), n); }

FlyList fly_list_append(FlyList list, FlyNode *n) {
  if (!n)
    return list;
  n->next = NULL;
  if (list.tail)
    list.tail->next = n;
  else
    list.head = n;
  list.tail = n;
  return list;
}
