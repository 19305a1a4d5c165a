/* fly_ast.h — the syntax tree of a .fly file.
 *
 * One node type for every construct, sized to stay small: a kind, an operator
 * or type code, flags, the node's depth, its source span, up to four children
 * and one payload (a name, a literal's value or a string). Lists are chains
 * through `next`. Which child means what is listed per kind below and in the
 * table of fly_ast.c, which the printer and later stages read.
 *
 * Nodes live in the compilation unit's arena and are never freed one by one.
 * The grammar builds them only through the constructors declared here. */
#ifndef FLY_AST_H
#define FLY_AST_H

#include <stdbool.h>
#include <stdint.h>

#include "fly_arena.h"
#include "fly_source.h"

/* Deepest tree the front end builds. Every later stage walks trees
 * recursively; this bound is what keeps those walks off the end of the stack.
 * Reported as "nested too deeply (limit is N)". */
enum { FLY_AST_MAX_DEPTH = 1000 };

typedef enum FlyNodeKind {
  /* expressions */
  FLY_INT,        /* ival */
  FLY_FLOAT,      /* fval */
  FLY_BOOL,       /* ival: 0 or 1 */
  FLY_STRING,     /* str, len: the decoded bytes */
  FLY_NAME,       /* str */
  FLY_UNDERSCORE, /* `_`: a whole mode in a slice */
  FLY_DYNAMIC,    /* `?`: a value known only at run time, in types */
  FLY_TYPE,       /* op: FlyTypeCode of a scalar or builtin type */
  FLY_TYPE_APPLY, /* op: FlyTypeCode of vec/tensor/smem/rmem; kid[0]: arguments */
  FLY_TUPLE,      /* kid[0]: elements */
  FLY_LAYOUT,     /* kid[0]: shape, kid[1]: stride (shape:stride) */
  FLY_UNARY,      /* op; kid[0] */
  FLY_BINARY,     /* op; kid[0], kid[1] */
  FLY_CAST,       /* kid[0]: value, kid[1]: type */
  FLY_CALL,       /* kid[0]: callee, kid[1]: arguments */
  FLY_INDEX,      /* kid[0]: base, kid[1]: indices */
  FLY_MEMBER,     /* kid[0]: base; str: member name */
  FLY_NAMED_ARG,  /* str: name; kid[0]: value */
  FLY_IF,         /* kid[0]: condition, kid[1]: then block, kid[2]: else (block, if) */
  FLY_BLOCK,      /* kid[0]: statements, kid[1]: value (tail expression) */
  /* statements */
  FLY_LET,           /* kid[0]: pattern, kid[1]: type, kid[2]: value */
  FLY_CONST,         /* str: name; kid[1]: type, kid[2]: value */
  FLY_CONST_BLOCK,   /* kid[0]: block */
  FLY_STATIC_ASSERT, /* kid[0]: condition, kid[1]: message */
  FLY_REQUIRE,       /* in a launch block: kid[0]: condition, kid[1]: message */
  FLY_EXPR_STMT,     /* kid[0]: expression */
  FLY_FOR,           /* kid[0]: variable, kid[1]: range, kid[2]: carries, kid[3]: body */
  FLY_CARRY,         /* str: name; kid[0]: initial value */
  FLY_YIELD,         /* kid[0]: value */
  FLY_RETURN,        /* kid[0]: value or NULL */
  FLY_WHILE,         /* kid[1]: condition, kid[2]: carries, kid[3]: body (kid[0] unused, as
                        FLY_FOR's variable, so that loops share their child slots) */
  FLY_BREAK,         /* kid[0]: the carried values it ends the loop with, or NULL */
  FLY_CONTINUE,      /* kid[0]: the carried values of the next iteration, or NULL */
  FLY_PAT_NAME,      /* str */
  FLY_PAT_WILDCARD,  /* `_` */
  FLY_PAT_TUPLE,     /* kid[0]: patterns */
  /* declarations */
  FLY_IMPORT,       /* str: module (std.x) or path ("x.fly"); flag FLY_IMPORT_PATH */
  FLY_PARAM,        /* str: name; kid[0]: type, kid[1]: default; flag FLY_IS_CONST */
  FLY_FN,           /* str: name; kid[0]: params, kid[1]: result type, kid[2]: body */
  FLY_KERNEL,       /* str: name; kid[0]: params, kid[2]: body */
  FLY_LAUNCH,       /* str: kernel name; kid[0]: items (fields and lets) */
  FLY_LAUNCH_FIELD, /* str: grid, block or shared; kid[0]: value */
  FLY_MODULE,       /* kid[0]: items */
  FLY_NODE_KIND_COUNT
} FlyNodeKind;

/* Node flags. */
enum {
  FLY_IS_CONST = 1,    /* const parameter; `if const` */
  FLY_IMPORT_PATH = 2, /* import "path.fly" rather than a module name */
};

typedef enum FlyOp {
  FLY_OP_NONE,
  FLY_OP_ADD,
  FLY_OP_SUB,
  FLY_OP_MUL,
  FLY_OP_DIV,
  FLY_OP_MOD,
  FLY_OP_SHL,
  FLY_OP_SHR,
  FLY_OP_BITAND,
  FLY_OP_BITOR,
  FLY_OP_BITXOR,
  FLY_OP_AND,
  FLY_OP_OR,
  FLY_OP_EQ,
  FLY_OP_NE,
  FLY_OP_LT,
  FLY_OP_LE,
  FLY_OP_GT,
  FLY_OP_GE,
  FLY_OP_NEG,
  FLY_OP_NOT,
  FLY_OP_BITNOT,
  FLY_OP_COUNT
} FlyOp;

/* Type names: the scalar types and the parametric type constructors, which
 * are keywords, and the compile-time types (int ... type), which are builtin
 * names the semantic pass resolves and which the lexer never produces. */
typedef enum FlyTypeCode {
  FLY_TYPE_NONE,
  FLY_TYPE_I1,
  FLY_TYPE_I8,
  FLY_TYPE_I16,
  FLY_TYPE_I32,
  FLY_TYPE_I64,
  FLY_TYPE_INDEX,
  FLY_TYPE_F16,
  FLY_TYPE_BF16,
  FLY_TYPE_F32,
  FLY_TYPE_F64,
  FLY_TYPE_F8E4M3,
  FLY_TYPE_F8E5M2,
  FLY_TYPE_F8E4M3FNUZ, /* the FNUZ formats (CDNA3): the 8-bit floats end here */
  FLY_TYPE_F8E5M2FNUZ,
  FLY_TYPE_INT,
  FLY_TYPE_FLOAT,
  FLY_TYPE_BOOL,
  FLY_TYPE_STR,
  FLY_TYPE_LAYOUT,
  FLY_TYPE_TUPLE,
  FLY_TYPE_TYPE,
  FLY_TYPE_VEC,
  FLY_TYPE_TENSOR,
  FLY_TYPE_SMEM,
  FLY_TYPE_RMEM, /* take <arguments> */
  FLY_TYPE_CODE_COUNT
} FlyTypeCode;

typedef struct FlyNode FlyNode;
struct FlyNode {
  uint8_t kind;   /* FlyNodeKind */
  uint8_t op;     /* FlyOp or FlyTypeCode */
  uint8_t flags;  /* FLY_IS_CONST, ... */
  uint16_t depth; /* 1 + the deepest child's depth */
  int32_t file;
  uint32_t begin, end; /* byte range in the file */
  uint32_t name_at;    /* where the name of a declaration starts */
  FlyNode *next;       /* next element of the list this node is in */
  FlyNode *kid[4];
  union {
    uint64_t ival;
    double fval;
    struct {
      const char *str; /* NUL-terminated; may also hold NULs (len counts) */
      uint32_t len;
    };
  };
};

/* A list under construction: the grammar appends, the node keeps the head. */
typedef struct FlyList {
  FlyNode *head, *tail;
} FlyList;

/* A source range as the grammar tracks it (the file is the parse's). */
typedef struct FlyLoc {
  uint32_t begin, end;
} FlyLoc;

/* What the constructors need: the arena, the file, and where to report
 * limits. A constructor returns NULL when the arena is exhausted or the tree
 * would be too deep; the builder then records one error and sets `failed`,
 * and NULL children are accepted everywhere, so the parse finishes. */
typedef struct FlyAstBuilder {
  FlyArena *arena;
  int32_t file;
  bool failed;         /* an allocation or depth limit was hit */
  FlyLoc failed_at;    /* where */
  const char *failure; /* "nested too deeply (limit is 256)", "out of memory", ... */
} FlyAstBuilder;

static inline FlySpan fly_node_span(const FlyNode *n) {
  return n ? fly_span(n->file, n->begin, n->end) : fly_no_span();
}
static inline FlySpan fly_node_name_span(const FlyNode *n) {
  return n ? fly_span(n->file, n->name_at, n->name_at + n->len) : fly_no_span();
}

/* Constructors: one per shape of node. */
FlyNode *fly_ast_leaf(FlyAstBuilder *b, FlyNodeKind kind, FlyLoc loc);
FlyNode *fly_ast_int(FlyAstBuilder *b, FlyLoc loc, uint64_t value);
FlyNode *fly_ast_float(FlyAstBuilder *b, FlyLoc loc, double value);
FlyNode *fly_ast_bool(FlyAstBuilder *b, FlyLoc loc, bool value);
/* str is copied; kinds with a name or text payload. */
FlyNode *fly_ast_text(FlyAstBuilder *b, FlyNodeKind kind, FlyLoc loc, const char *str,
                      uint32_t len);
FlyNode *fly_ast_type(FlyAstBuilder *b, FlyLoc loc, FlyTypeCode code);
FlyNode *fly_ast_op(FlyAstBuilder *b, FlyNodeKind kind, FlyLoc loc, FlyOp op, FlyNode *a,
                    FlyNode *c);
/* A node with up to four children (NULL for absent ones). A child may be the
 * head of a list; the node's depth counts the deepest element. */
FlyNode *fly_ast_node(FlyAstBuilder *b, FlyNodeKind kind, FlyLoc loc, FlyNode *k0, FlyNode *k1,
                      FlyNode *k2, FlyNode *k3);
/* A list node (tuple, block statements, ...): kid[0] is the list's head. */
FlyNode *fly_ast_list(FlyAstBuilder *b, FlyNodeKind kind, FlyLoc loc, FlyList list);
/* Gives a node its name (declarations, members, carries): copied. */
FlyNode *fly_ast_named(FlyAstBuilder *b, FlyNode *n, FlyLoc name_loc, const char *name,
                       uint32_t len);
FlyNode *fly_ast_flag(FlyNode *n, unsigned flag);

FlyList fly_list_empty(void);
FlyList fly_list_one(FlyNode *n);
/* Appends n (ignored when NULL, as after a recovered syntax error). */
FlyList fly_list_append(FlyList list, FlyNode *n);

/* Names for messages and the printer. */
const char *fly_node_kind_name(FlyNodeKind kind);
const char *fly_op_spelling(FlyOp op);
const char *fly_type_code_name(FlyTypeCode code);

#endif
