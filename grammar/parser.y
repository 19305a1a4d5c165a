/* parser.y — the grammar of Fly (docs/language.md is its specification).
 *
 * A pure, reentrant LALR(1) parser with locations as byte ranges. Actions only
 * call the AST constructors of fly_ast.h; names, types and meaning are the
 * semantic pass's business. Syntax errors name what was expected, point at
 * the right place and, through the `error` rules at statement, parameter and
 * block level, let one run report several of them. */

%require "3.8"
%define api.pure full
%define api.token.prefix {TOK_}
%define api.value.type union
%define api.location.type {FlyLoc}
%define parse.error custom
%define parse.lac full
%locations
%param {FlySyntax *S}
%expect 0

%code requires {
#include "fly_ast.h"
typedef struct FlySyntax FlySyntax;
/* An identifier's or literal's text in the source (not NUL-terminated). */
typedef struct FlyText {
  const char *s;
  uint32_t len;
} FlyText;
}

%code provides {
/* recovering: the parser is discarding tokens after a syntax error. */
int fly_lex(YYSTYPE *value, FlyLoc *loc, FlySyntax *S, bool recovering);
}

%code {
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_syntax.h"

#define B (&S->build)
#define YYLLOC_DEFAULT(Cur, Rhs, N)                                                        \
  do {                                                                                     \
    if (N) {                                                                               \
      (Cur).begin = YYRHSLOC(Rhs, 1).begin;                                                \
      (Cur).end = YYRHSLOC(Rhs, N).end;                                                    \
    } else {                                                                               \
      (Cur).begin = (Cur).end = YYRHSLOC(Rhs, 0).end;                                      \
    }                                                                                      \
  } while (0)
/* Prefix operators and brackets are the only things that deepen the stack
   without building a node first; brackets are limited by the lexer, so this
   only stops absurd chains such as ten thousand '-' in a row. */
#define YYMAXDEPTH 4000

static void yyerror(const FlyLoc *loc, FlySyntax *S, const char *msg);

/* The lexer is told when the parser is discarding tokens to recover from an
   error (yyerrstatus, a local of yyparse, is 3 then), so it can skip bracketed
   groups whole: recovery then resumes after `if c { a } else { b };` rather
   than at the first inner '}'. */
#define yylex(value, loc, S) fly_lex((value), (loc), (S), yyerrstatus == 3)

#define NODE(kind, loc, a, b, c, d) fly_ast_node(B, (kind), (loc), (a), (b), (c), (d))
#define NAMED(node, text, loc) fly_ast_named(B, (node), (loc), (text).s, (text).len)
#define BINARY(op, loc, l, r) fly_ast_op(B, FLY_BINARY, (loc), (op), (l), (r))
}

%token END 0 "end of file"
/* Never in source text: fly_parse_expr makes the lexer return it first, so
   one grammar reads both whole files and the lone expressions of
   `flyc eval` and `flyc layout`. */
%token START_EXPR "the start of an expression"
%token <FlyText> IDENT "identifier"
%token <uint64_t> INT "integer"
%token <double> FLOAT "float"
%token <FlyText> STRING "string"
%token <int> TYPE_NAME "type name"
%token <int> TYPE_CTOR "type constructor"

%token KERNEL "kernel" FN "fn" LAUNCH "launch" CONST "const" LET "let" IF "if" ELSE "else"
       FOR "for" WHILE "while" BREAK "break" CONTINUE "continue" IN "in" CARRY "carry"
       YIELD "yield" RETURN "return" IMPORT "import"
       STATIC_ASSERT "static_assert" REQUIRE "require" TRUE "true" FALSE "false" AS "as"
%token LPAREN "(" RPAREN ")" LBRACK "[" RBRACK "]" LBRACE "{" RBRACE "}"
       COMMA "," SEMI ";" COLON ":" DOT "." ARROW "->" ASSIGN "=" QUESTION "?"
       UNDERSCORE "_"
%token PLUS "+" MINUS "-" STAR "*" SLASH "/" PERCENT "%" AMP "&" PIPE "|" CARET "^"
       TILDE "~" BANG "!" SHL "<<" SHR ">>" ANDAND "&&" OROR "||"
       EQ "==" NE "!=" LT "<" LE "<=" GT ">" GE ">="

/* Lowest first. ':' builds a layout from a shape and a stride, so it binds
   loosest: BLOCK * VEC : 1 is (BLOCK * VEC):1. Comparisons do not chain. */
%nonassoc COLON
%left OROR
%left ANDAND
%nonassoc EQ NE LT LE GT GE
%left PIPE
%left CARET
%left AMP
%left SHL SHR
%left PLUS MINUS
%left STAR SLASH PERCENT
%precedence AS
%precedence UNARY

%nterm <FlyNode *> item import fn_decl kernel_decl launch_decl launch_item const_decl
       const_block static_assert param ret_type opt_type opt_default block stmt let_stmt
       for_stmt while_stmt carry if_expr else_part value expr postfix primary type targ texpr arg
       pattern module_part
%nterm <FlyList> items module_path params param_list launch_items stmts carries
       carry_list targs targ_list args arg_list tuple_items type_items patterns

%%

start:
  items                          { S->module = fly_ast_list(B, FLY_MODULE, @$, $1); }
| START_EXPR value               { S->expr = $2; }
;

items:
  %empty                         { $$ = fly_list_empty(); }
| items item                     { $$ = fly_list_append($1, $2); }
;

item:
  import
| fn_decl
| kernel_decl
| launch_decl
| const_decl
| const_block
| static_assert
| error ";"                      { $$ = NULL; }
| error "}"                      { $$ = NULL; }
;

/* import std.reduce;   import "lib/tiles.fly"; */
import:
  "import" module_path ";"       { $$ = fly_ast_list(B, FLY_IMPORT, @$, $2); }
| "import" STRING ";"            { $$ = fly_ast_flag(NODE(FLY_IMPORT, @$,
                                     fly_ast_text(B, FLY_STRING, @2, $2.s, $2.len),
                                     NULL, NULL, NULL), FLY_IMPORT_PATH); }
;

module_path:
  module_part                    { $$ = fly_list_one($1); }
| module_path "." module_part     { $$ = fly_list_append($1, $3); }
;

module_part:
  IDENT                          { $$ = fly_ast_text(B, FLY_NAME, @1, $1.s, $1.len); }
;

/* fn name(params) -> type { body } */
fn_decl:
  "fn" IDENT "(" params ")" ret_type block
                                 { $$ = NAMED(NODE(FLY_FN, @$, $4.head, $6, $7, NULL),
                                              $2, @2); }
;

ret_type:
  %empty                         { $$ = NULL; }
| "->" type                      { $$ = $2; }
;

kernel_decl:
  "kernel" IDENT "(" params ")" block
                                 { $$ = NAMED(NODE(FLY_KERNEL, @$, $4.head, NULL, $6, NULL),
                                              $2, @2); }
;

params:
  %empty                         { $$ = fly_list_empty(); }
| param_list
| param_list ","
;

param_list:
  param                          { $$ = fly_list_one($1); }
| param_list "," param           { $$ = fly_list_append($1, $3); }
;

param:
  IDENT opt_type opt_default     { $$ = NAMED(NODE(FLY_PARAM, @$, $2, $3, NULL, NULL), $1, @1); }
| "const" IDENT opt_type opt_default
                                 { $$ = fly_ast_flag(NAMED(NODE(FLY_PARAM, @$, $3, $4, NULL,
                                                                NULL), $2, @2), FLY_IS_CONST); }
| error                          { $$ = NULL; }
;

opt_type:
  %empty                         { $$ = NULL; }
| ":" type                       { $$ = $2; }
;

opt_default:
  %empty                         { $$ = NULL; }
| "=" value                      { $$ = $2; }
;

/* launch kernel { require COND, "why"; grid = ...; block = ...; shared = ...; } */
launch_decl:
  "launch" IDENT "{" launch_items "}"
                                 { $$ = NAMED(NODE(FLY_LAUNCH, @$, $4.head, NULL, NULL, NULL),
                                              $2, @2); }
;

launch_items:
  %empty                         { $$ = fly_list_empty(); }
| launch_items launch_item       { $$ = fly_list_append($1, $2); }
;

launch_item:
  IDENT "=" value ";"            { $$ = NAMED(NODE(FLY_LAUNCH_FIELD, @$, $3, NULL, NULL, NULL),
                                              $1, @1); }
| "require" value ";"            { $$ = NODE(FLY_REQUIRE, @$, $2, NULL, NULL, NULL); }
| "require" value "," value ";"  { $$ = NODE(FLY_REQUIRE, @$, $2, $4, NULL, NULL); }
| let_stmt
| error ";"                      { $$ = NULL; }
;

const_decl:
  "const" IDENT opt_type "=" value ";"
                                 { $$ = NAMED(NODE(FLY_CONST, @$, NULL, $3, $5, NULL), $2, @2); }
;

const_block:
  "const" block                  { $$ = NODE(FLY_CONST_BLOCK, @$, $2, NULL, NULL, NULL); }
;

static_assert:
  "static_assert" "(" value ")" ";"
                                 { $$ = NODE(FLY_STATIC_ASSERT, @$, $3, NULL, NULL, NULL); }
| "static_assert" "(" value "," value ")" ";"
                                 { $$ = NODE(FLY_STATIC_ASSERT, @$, $3, $5, NULL, NULL); }
;

/* ---- statements ------------------------------------------------------ */

/* A block's value is its final expression, written without ';'. */
block:
  "{" stmts "}"                  { $$ = NODE(FLY_BLOCK, @$, $2.head, NULL, NULL, NULL); }
| "{" stmts expr "}"             { $$ = NODE(FLY_BLOCK, @$, $2.head, $3, NULL, NULL); }
| "{" stmts error "}"            { $$ = NODE(FLY_BLOCK, @$, $2.head, NULL, NULL, NULL); }
;

stmts:
  %empty                         { $$ = fly_list_empty(); }
| stmts stmt                     { $$ = fly_list_append($1, $2); }
;

stmt:
  let_stmt
| const_decl
| const_block
| static_assert
| for_stmt
| while_stmt
| if_expr                        { $$ = NODE(FLY_EXPR_STMT, @$, $1, NULL, NULL, NULL); }
| expr ";"                       { $$ = NODE(FLY_EXPR_STMT, @$, $1, NULL, NULL, NULL); }
| "yield" value ";"              { $$ = NODE(FLY_YIELD, @$, $2, NULL, NULL, NULL); }
| "return" ";"                   { $$ = NODE(FLY_RETURN, @$, NULL, NULL, NULL, NULL); }
| "return" value ";"             { $$ = NODE(FLY_RETURN, @$, $2, NULL, NULL, NULL); }
| "break" ";"                    { $$ = NODE(FLY_BREAK, @$, NULL, NULL, NULL, NULL); }
| "break" value ";"              { $$ = NODE(FLY_BREAK, @$, $2, NULL, NULL, NULL); }
| "continue" ";"                 { $$ = NODE(FLY_CONTINUE, @$, NULL, NULL, NULL, NULL); }
| "continue" value ";"           { $$ = NODE(FLY_CONTINUE, @$, $2, NULL, NULL, NULL); }
| ";"                            { $$ = NULL; }
| error ";"                      { $$ = NULL; }
;

let_stmt:
  "let" pattern opt_type "=" value ";"
                                 { $$ = NODE(FLY_LET, @$, $2, $3, $5, NULL); }
;

pattern:
  IDENT                          { $$ = fly_ast_text(B, FLY_PAT_NAME, @$, $1.s, $1.len); }
| "_"                            { $$ = fly_ast_leaf(B, FLY_PAT_WILDCARD, @$); }
| "(" pattern ")"                { $$ = $2; }
| "(" pattern "," ")"            { $$ = fly_ast_list(B, FLY_PAT_TUPLE, @$, fly_list_one($2)); }
| "(" patterns ")"               { $$ = fly_ast_list(B, FLY_PAT_TUPLE, @$, $2); }
| "(" patterns "," ")"           { $$ = fly_ast_list(B, FLY_PAT_TUPLE, @$, $2); }
;

/* Two or more patterns: (a) only groups, as in expressions; (a,) is a tuple. */
patterns:
  pattern "," pattern            { $$ = fly_list_append(fly_list_one($1), $3); }
| patterns "," pattern           { $$ = fly_list_append($1, $3); }
;

/* for i in range(lo, hi) carry (acc = a0) { ...; yield (acc2); } */
for_stmt:
  "for" pattern "in" expr carries block
                                 { $$ = NODE(FLY_FOR, @$, $2, $4, $5.head, $6); }
;

/* while i < n carry (i = 0, acc = a0) { ...; yield (i + 1, acc2); } */
while_stmt:
  "while" expr carries block     { $$ = NODE(FLY_WHILE, @$, NULL, $2, $3.head, $4); }
;

carries:
  %empty                         { $$ = fly_list_empty(); }
| "carry" "(" carry_list ")"     { $$ = $3; }
| "carry" "(" carry_list "," ")" { $$ = $3; }
;

carry_list:
  carry                          { $$ = fly_list_one($1); }
| carry_list "," carry           { $$ = fly_list_append($1, $3); }
;

carry:
  IDENT "=" value                { $$ = NAMED(NODE(FLY_CARRY, @$, $3, NULL, NULL, NULL), $1, @1); }
;

/* if c { ... } else if d { ... } else { ... }; also `if const`. */
if_expr:
  "if" expr block else_part      { $$ = NODE(FLY_IF, @$, $2, $3, $4, NULL); }
| "if" "const" expr block else_part
                                 { $$ = fly_ast_flag(NODE(FLY_IF, @$, $3, $4, $5, NULL),
                                                     FLY_IS_CONST); }
;

else_part:
  %empty                         { $$ = NULL; }
| "else" block                   { $$ = $2; }
| "else" if_expr                 { $$ = $2; }
;

/* ---- expressions ----------------------------------------------------- */

/* A value is an expression or an if-expression. An `if` at the start of a
   statement is a statement, so `if` takes part in operators only inside
   parentheses: (if c { a } else { b }) + 1. */
value:
  expr
| if_expr
;

expr:
  expr ":" expr                  { $$ = NODE(FLY_LAYOUT, @$, $1, $3, NULL, NULL); }
| expr "||" expr                 { $$ = BINARY(FLY_OP_OR, @$, $1, $3); }
| expr "&&" expr                 { $$ = BINARY(FLY_OP_AND, @$, $1, $3); }
| expr "==" expr                 { $$ = BINARY(FLY_OP_EQ, @$, $1, $3); }
| expr "!=" expr                 { $$ = BINARY(FLY_OP_NE, @$, $1, $3); }
| expr "<" expr                  { $$ = BINARY(FLY_OP_LT, @$, $1, $3); }
| expr "<=" expr                 { $$ = BINARY(FLY_OP_LE, @$, $1, $3); }
| expr ">" expr                  { $$ = BINARY(FLY_OP_GT, @$, $1, $3); }
| expr ">=" expr                 { $$ = BINARY(FLY_OP_GE, @$, $1, $3); }
| expr "|" expr                  { $$ = BINARY(FLY_OP_BITOR, @$, $1, $3); }
| expr "^" expr                  { $$ = BINARY(FLY_OP_BITXOR, @$, $1, $3); }
| expr "&" expr                  { $$ = BINARY(FLY_OP_BITAND, @$, $1, $3); }
| expr "<<" expr                 { $$ = BINARY(FLY_OP_SHL, @$, $1, $3); }
| expr ">>" expr                 { $$ = BINARY(FLY_OP_SHR, @$, $1, $3); }
| expr "+" expr                  { $$ = BINARY(FLY_OP_ADD, @$, $1, $3); }
| expr "-" expr                  { $$ = BINARY(FLY_OP_SUB, @$, $1, $3); }
| expr "*" expr                  { $$ = BINARY(FLY_OP_MUL, @$, $1, $3); }
| expr "/" expr                  { $$ = BINARY(FLY_OP_DIV, @$, $1, $3); }
| expr "%" expr                  { $$ = BINARY(FLY_OP_MOD, @$, $1, $3); }
| expr "as" type                 { $$ = NODE(FLY_CAST, @$, $1, $3, NULL, NULL); }
| "-" expr %prec UNARY           { $$ = fly_ast_op(B, FLY_UNARY, @$, FLY_OP_NEG, $2, NULL); }
| "!" expr %prec UNARY           { $$ = fly_ast_op(B, FLY_UNARY, @$, FLY_OP_NOT, $2, NULL); }
| "~" expr %prec UNARY           { $$ = fly_ast_op(B, FLY_UNARY, @$, FLY_OP_BITNOT, $2, NULL); }
| postfix
;

postfix:
  primary
| postfix "(" args ")"           { $$ = NODE(FLY_CALL, @$, $1, $3.head, NULL, NULL); }
| postfix "[" args "]"           { $$ = NODE(FLY_INDEX, @$, $1, $3.head, NULL, NULL); }
| postfix "." IDENT              { $$ = NAMED(NODE(FLY_MEMBER, @$, $1, NULL, NULL, NULL), $3, @3); }
;

primary:
  INT                            { $$ = fly_ast_int(B, @$, $1); }
| FLOAT                          { $$ = fly_ast_float(B, @$, $1); }
| STRING                         { $$ = fly_ast_text(B, FLY_STRING, @$, $1.s, $1.len); }
| "true"                         { $$ = fly_ast_bool(B, @$, true); }
| "false"                        { $$ = fly_ast_bool(B, @$, false); }
| IDENT                          { $$ = fly_ast_text(B, FLY_NAME, @$, $1.s, $1.len); }
| "_"                            { $$ = fly_ast_leaf(B, FLY_UNDERSCORE, @$); }
| "?"                            { $$ = fly_ast_leaf(B, FLY_DYNAMIC, @$); }
| TYPE_NAME                      { $$ = fly_ast_type(B, @$, (FlyTypeCode)$1); }
| TYPE_CTOR "<" targs ">"        { $$ = fly_ast_op(B, FLY_TYPE_APPLY, @$, (FlyOp)$1, $3.head,
                                                   NULL); }
| "(" ")"                        { $$ = fly_ast_list(B, FLY_TUPLE, @$, fly_list_empty()); }
/* Parentheses group, except around a tuple literal: ((4,2)) is the tuple of
   one element (4,2), as CuTe writes the rank-1 layout ((4,2)):((1,4)). */
| "(" value ")"                  { $$ = $2 && $2->kind == FLY_TUPLE
                                       ? fly_ast_list(B, FLY_TUPLE, @$, fly_list_one($2))
                                       : $2; }
| "(" value "," ")"              { $$ = fly_ast_list(B, FLY_TUPLE, @$, fly_list_one($2)); }
| "(" tuple_items ")"           { $$ = fly_ast_list(B, FLY_TUPLE, @$, $2); }
| "(" tuple_items "," ")"       { $$ = fly_ast_list(B, FLY_TUPLE, @$, $2); }
;

tuple_items:
  value "," value                { $$ = fly_list_append(fly_list_one($1), $3); }
| tuple_items "," value          { $$ = fly_list_append($1, $3); }
;

args:
  %empty                         { $$ = fly_list_empty(); }
| arg_list
| arg_list ","
;

arg_list:
  arg                            { $$ = fly_list_one($1); }
| arg_list "," arg               { $$ = fly_list_append($1, $3); }
;

/* f(x, align = 16) */
arg:
  value
| IDENT "=" value                { $$ = NAMED(NODE(FLY_NAMED_ARG, @$, $3, NULL, NULL, NULL),
                                              $1, @1); }
;

/* ---- types ------------------------------------------------------------ */

type:
  TYPE_NAME                      { $$ = fly_ast_type(B, @$, (FlyTypeCode)$1); }
| TYPE_CTOR "<" targs ">"        { $$ = fly_ast_op(B, FLY_TYPE_APPLY, @$, (FlyOp)$1, $3.head,
                                                   NULL); }
| IDENT                          { $$ = fly_ast_text(B, FLY_NAME, @$, $1.s, $1.len); }
| "(" ")"                        { $$ = fly_ast_list(B, FLY_TUPLE, @$, fly_list_empty()); }
| "(" type "," ")"               { $$ = fly_ast_list(B, FLY_TUPLE, @$, fly_list_one($2)); }
| "(" type_items ")"             { $$ = fly_ast_list(B, FLY_TUPLE, @$, $2); }
| "(" type_items "," ")"         { $$ = fly_ast_list(B, FLY_TUPLE, @$, $2); }
;

/* A tuple type has at least one comma: (i32, i32), or (i32,) for one. */
type_items:
  type ","  type                 { $$ = fly_list_append(fly_list_one($1), $3); }
| type_items "," type            { $$ = fly_list_append($1, $3); }
;

targs:
  targ_list
| targ_list ","
;

targ_list:
  targ                           { $$ = fly_list_one($1); }
| targ_list "," targ             { $$ = fly_list_append($1, $3); }
;

targ:
  texpr
| IDENT "=" texpr                { $$ = NAMED(NODE(FLY_NAMED_ARG, @$, $3, NULL, NULL, NULL),
                                              $1, @1); }
;

/* Type arguments are expressions without comparisons or shifts, so the '>'
   that closes them is never an operator: vec<VEC * 2, f32>, and
   tensor<f16, (?, ?):(?, 1)>. Parenthesise anything else. */
texpr:
  texpr ":" texpr                { $$ = NODE(FLY_LAYOUT, @$, $1, $3, NULL, NULL); }
| texpr "+" texpr                { $$ = BINARY(FLY_OP_ADD, @$, $1, $3); }
| texpr "-" texpr                { $$ = BINARY(FLY_OP_SUB, @$, $1, $3); }
| texpr "*" texpr                { $$ = BINARY(FLY_OP_MUL, @$, $1, $3); }
| texpr "/" texpr                { $$ = BINARY(FLY_OP_DIV, @$, $1, $3); }
| texpr "%" texpr                { $$ = BINARY(FLY_OP_MOD, @$, $1, $3); }
| "-" texpr %prec UNARY          { $$ = fly_ast_op(B, FLY_UNARY, @$, FLY_OP_NEG, $2, NULL); }
| postfix
;

%%


/* ---- syntax errors ----------------------------------------------------- */

/* Kinds of token that are described rather than quoted in messages. */
static bool is_described(yysymbol_kind_t kind) {
  switch (kind) {
  case YYSYMBOL_YYEOF:
  case YYSYMBOL_IDENT:
  case YYSYMBOL_INT:
  case YYSYMBOL_FLOAT:
  case YYSYMBOL_STRING:
  case YYSYMBOL_TYPE_NAME:
  case YYSYMBOL_TYPE_CTOR:
    return true;
  default:
    return false;
  }
}

/* A group of expected tokens is named as a whole once at least `threshold`
   of its members are expected: "expected an expression" reads better than a
   list of fifteen tokens that can start one. */
typedef struct TokenGroup {
  const char *name;
  int threshold;
  yysymbol_kind_t members[24];
} TokenGroup;

static const TokenGroup groups[] = {
    {"a declaration (kernel, fn, launch, import, const or static_assert)", 3,
     {YYSYMBOL_KERNEL, YYSYMBOL_FN, YYSYMBOL_LAUNCH, YYSYMBOL_IMPORT, YYSYMBOL_CONST,
      YYSYMBOL_STATIC_ASSERT}},
    {"a statement", 3,
     {YYSYMBOL_LET, YYSYMBOL_FOR, YYSYMBOL_WHILE, YYSYMBOL_BREAK, YYSYMBOL_CONTINUE,
      YYSYMBOL_YIELD, YYSYMBOL_RETURN, YYSYMBOL_CONST, YYSYMBOL_STATIC_ASSERT, YYSYMBOL_SEMI}},
    {"an expression", 5,
     {YYSYMBOL_IDENT, YYSYMBOL_INT, YYSYMBOL_FLOAT, YYSYMBOL_STRING, YYSYMBOL_TRUE,
      YYSYMBOL_FALSE, YYSYMBOL_LPAREN, YYSYMBOL_MINUS, YYSYMBOL_BANG, YYSYMBOL_TILDE,
      YYSYMBOL_UNDERSCORE, YYSYMBOL_QUESTION, YYSYMBOL_TYPE_NAME, YYSYMBOL_TYPE_CTOR,
      YYSYMBOL_IF}},
    {"an operator", 5,
     {YYSYMBOL_COLON, YYSYMBOL_OROR, YYSYMBOL_ANDAND, YYSYMBOL_EQ, YYSYMBOL_NE, YYSYMBOL_LT,
      YYSYMBOL_LE, YYSYMBOL_GT, YYSYMBOL_GE, YYSYMBOL_PIPE, YYSYMBOL_CARET, YYSYMBOL_AMP,
      YYSYMBOL_SHL, YYSYMBOL_SHR, YYSYMBOL_PLUS, YYSYMBOL_MINUS, YYSYMBOL_STAR,
      YYSYMBOL_SLASH, YYSYMBOL_PERCENT, YYSYMBOL_AS, YYSYMBOL_DOT, YYSYMBOL_LPAREN,
      YYSYMBOL_LBRACK}},
};

enum { MAX_LISTED = 6 };

static bool group_has(const TokenGroup *g, yysymbol_kind_t kind) {
  for (int i = 0; i < 24 && g->members[i] != YYSYMBOL_YYEOF; i++)
    if (g->members[i] == kind)
      return true;
  return false;
}

/* Appends the name of one expected item to buf: 'x' for punctuation and
   keywords, a description for the rest. */
static void add_item(char *buf, size_t size, int index, int count, const char *item,
                     bool quote) {
  size_t n = strlen(buf);
  const char *sep = index == 0 ? "" : index == count - 1 ? " or " : ", ";
  snprintf(buf + n, size - n, quote ? "%s'%s'" : "%s%s", sep, item);
}

static const char *article_name(yysymbol_kind_t kind) {
  switch (kind) {
  case YYSYMBOL_YYEOF: return "the end of the file";
  case YYSYMBOL_IDENT: return "an identifier";
  case YYSYMBOL_INT: return "an integer";
  case YYSYMBOL_FLOAT: return "a float";
  case YYSYMBOL_STRING: return "a string";
  case YYSYMBOL_TYPE_NAME: return "a type";
  default: return "a type constructor";
  }
}

/* "identifier 'foo'", "'kernel'", "end of file": what the parser found. */
static void describe_found(FlySyntax *S, yysymbol_kind_t kind, FlyLoc loc, char *buf,
                           size_t size) {
  int len = (int)(loc.end - loc.begin);
  const char *text = (const char *)S->text + loc.begin;
  if (len > 40)
    len = 40;
  switch (kind) {
  case YYSYMBOL_YYEOF:
    snprintf(buf, size, "the end of the file");
    break;
  case YYSYMBOL_IDENT:
    snprintf(buf, size, "identifier '%.*s'", len, text);
    break;
  case YYSYMBOL_INT:
  case YYSYMBOL_FLOAT:
    snprintf(buf, size, "number '%.*s'", len, text);
    break;
  case YYSYMBOL_STRING:
    snprintf(buf, size, "a string");
    break;
  case YYSYMBOL_TYPE_NAME:
  case YYSYMBOL_TYPE_CTOR:
    snprintf(buf, size, "type '%.*s'", len, text);
    break;
  default:
    snprintf(buf, size, "'%s'", yysymbol_name(kind));
  }
}

static char closer_of(char open) {
  return open == '(' ? ')' : open == '[' ? ']' : open == '{' ? '}' : '>';
}

static bool is_comparison(yysymbol_kind_t kind) {
  return kind == YYSYMBOL_LT || kind == YYSYMBOL_LE || kind == YYSYMBOL_GT ||
         kind == YYSYMBOL_GE || kind == YYSYMBOL_EQ || kind == YYSYMBOL_NE;
}

/* Tokens that, found where a closing bracket could go, suggest the bracket
   was left open: the end, another closer, or the start of a statement or
   declaration. */
static bool suggests_unclosed(yysymbol_kind_t kind) {
  switch (kind) {
  case YYSYMBOL_YYEOF:
  case YYSYMBOL_LPAREN:
  case YYSYMBOL_LBRACE:
  case YYSYMBOL_RPAREN:
  case YYSYMBOL_RBRACK:
  case YYSYMBOL_RBRACE:
  case YYSYMBOL_LET:
  case YYSYMBOL_CONST:
  case YYSYMBOL_FOR:
  case YYSYMBOL_WHILE:
  case YYSYMBOL_BREAK:
  case YYSYMBOL_CONTINUE:
  case YYSYMBOL_IF:
  case YYSYMBOL_YIELD:
  case YYSYMBOL_RETURN:
  case YYSYMBOL_KERNEL:
  case YYSYMBOL_FN:
  case YYSYMBOL_LAUNCH:
  case YYSYMBOL_IMPORT:
  case YYSYMBOL_STATIC_ASSERT:
  case YYSYMBOL_REQUIRE:
    return true;
  default:
    return false;
  }
}

/* The innermost open bracket whose closer the parser expects. The lexer's
   stack can hold brackets the parser already gave up on during recovery, so
   the search goes outwards; a bracket the found token opened is skipped. */
static void note_unclosed(FlySyntax *S, const yysymbol_kind_t *expected, int count, FlyLoc loc) {
  for (int b = S->nbrackets - 1; b >= 0; b--) {
    const FlyBracket *open = &S->brackets[b];
    if (open->at == loc.begin)
      continue;
    char close[2] = {closer_of(open->open), '\0'};
    for (int i = 0; i < count; i++)
      if (strcmp(yysymbol_name(expected[i]), close) == 0) {
        fly_note(S->diag, fly_span(S->file, open->at, open->at + 1), "to match this '%c'",
                 open->open);
        return;
      }
  }
}

static int yyreport_syntax_error(const yypcontext_t *ctx, FlySyntax *S) {
  if (S->fatal || S->quiet_tokens > 0)
    return 0;
  yysymbol_kind_t found = yypcontext_token(ctx);
  FlyLoc loc = *yypcontext_location(ctx);
  yysymbol_kind_t expected[YYNTOKENS];
  int count = yypcontext_expected_tokens(ctx, expected, YYNTOKENS);
  /* The internal start token is possible only before a file's first token
     and is never what a user should write. */
  int kept = 0;
  for (int i = 0; i < count; i++)
    if (expected[i] != YYSYMBOL_START_EXPR)
      expected[kept++] = expected[i];
  count = kept;

  /* Name the groups that apply, then list the tokens no group took. */
  const char *items[YYNTOKENS + 4];
  bool quoted[YYNTOKENS + 4];
  int n = 0;
  bool taken[YYNTOKENS] = {false};
  bool semi = false;
  for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
    int hits = 0;
    for (int i = 0; i < count; i++)
      hits += !taken[i] && group_has(&groups[g], expected[i]);
    if (hits < groups[g].threshold)
      continue;
    for (int i = 0; i < count; i++)
      if (group_has(&groups[g], expected[i]))
        taken[i] = true;
    items[n] = groups[g].name;
    quoted[n++] = false;
  }
  for (int i = 0; i < count; i++) {
    semi |= expected[i] == YYSYMBOL_SEMI;
    if (taken[i])
      continue;
    items[n] = is_described(expected[i]) ? article_name(expected[i]) : yysymbol_name(expected[i]);
    quoted[n++] = !is_described(expected[i]);
  }

  char what[160], list[512] = "";
  describe_found(S, found, loc, what, sizeof what);
  FlySpan span = fly_span(S->file, loc.begin, loc.end);
  /* The end of the file is reported just after the last token, not on the
     empty line after it. */
  if (found == YYSYMBOL_YYEOF)
    span = fly_span(S->file, S->prev_end, S->prev_end);
  /* A missing ';' at the end of a line is reported where it is missing. */
  /* 'let' is expected only where a statement may start, and there a ';'
     (an empty statement) is not what is missing. */
  bool statement_start = false;
  for (int i = 0; i < count; i++)
    statement_start |= expected[i] == YYSYMBOL_LET;
  if (semi && !statement_start && memchr(S->text + S->prev_end, '\n', loc.begin - S->prev_end))
    span = fly_span(S->file, S->prev_end, S->prev_end);
  if (found == YYSYMBOL_IF && count > 0) {
    /* 'if' starts a value, but not one that can be an operand as it stands:
       "expected an expression, found 'if'" would contradict itself. */
    fly_error(S->diag, span,
              "an if-expression that is an operand or follows another value goes in "
              "parentheses: (if c { a } else { b })");
  } else if (n == 0 || n > MAX_LISTED) {
    fly_error(S->diag, span, "unexpected %s", what);
  } else {
    for (int i = 0; i < n; i++)
      add_item(list, sizeof list, i, n, items[i], quoted[i]);
    fly_error(S->diag, span, "expected %s, found %s", list, what);
  }

  /* Comparisons and ':' do not chain, and a comparison cannot be a type
     argument without parentheses; the expected list alone would not say so. */
  bool closed_types = found == YYSYMBOL_GT && loc.begin == S->closed_angle_at;
  if (is_comparison(found) && count > 1 && !closed_types)
    fly_note(S->diag, fly_span(S->file, loc.begin, loc.end),
             "comparisons do not chain and are not allowed in type arguments: add "
             "parentheses, such as (a < b) && (b < c)");
  if ((found == YYSYMBOL_SHL || found == YYSYMBOL_SHR) && count > 1 && S->nbrackets > 0 &&
      S->brackets[S->nbrackets - 1].open == '<')
    fly_note(S->diag, fly_span(S->file, loc.begin, loc.end),
             "shifts are not allowed in type arguments: add parentheses, such as "
             "vec<(N << 1), f32>");
  if (found == YYSYMBOL_COLON && count > 1)
    fly_note(S->diag, fly_span(S->file, loc.begin, loc.end),
             "':' makes one layout of a shape and a stride and does not chain: add "
             "parentheses");
  if (found == YYSYMBOL_LPAREN && count == 1 && expected[0] == YYSYMBOL_LBRACE &&
      S->launch_pending)
    fly_note(S->diag, fly_span(S->file, loc.begin, loc.end),
             "a launch block has no parameter list: the kernel's parameters are in scope "
             "inside it");

  if (found == YYSYMBOL_REQUIRE)
    fly_note(S->diag, fly_span(S->file, loc.begin, loc.end),
             "'require' states a precondition in a launch block; in a kernel or a "
             "function, test with 'if' at run time or 'static_assert' at compile time");

  /* Assignment is the commonest thing people try that Fly does not have. */
  if (found == YYSYMBOL_ASSIGN && semi)
    fly_note(S->diag, fly_span(S->file, loc.begin, loc.end),
             "Fly has no assignment: bind a new name with 'let', carry loop state with "
             "'carry' and 'yield', write memory with '.store(...)'");

  /* Point at the bracket the expected closer would close, when what was
     found suggests that bracket was never closed. */
  if (suggests_unclosed(found))
    note_unclosed(S, expected, count, loc);
  if (fly_diag_stopped(S->diag))
    S->fatal = true;
  return 0;
}

static void yyerror(const FlyLoc *loc, FlySyntax *S, const char *msg) {
  if (S->fatal)
    return;
  FlySpan span = fly_span(S->file, loc->begin, loc->end);
  if (strcmp(msg, "memory exhausted") == 0)
    fly_error(S->diag, span, "nested too deeply (the parser's limit is %d pending symbols)",
              YYMAXDEPTH);
  else
    fly_error(S->diag, span, "%s", msg);
  S->fatal = true;
}

static FlyNode *parse(FlyArena *arena, FlyDiag *diag, int file, bool expression) {
  FlySyntax S;
  memset(&S, 0, sizeof S);
  const FlySource *src = fly_source(diag->sources, file);
  S.diag = diag;
  S.file = file;
  S.build.arena = arena;
  S.build.file = file;
  S.text = S.cur = S.tok = (const unsigned char *)src->text;
  S.lim = S.text + src->len;
  S.last_token = -1;
  S.closed_angle_at = UINT32_MAX;
  S.start_expr = expression;
  yyparse(&S);
  fly_syntax_report_limit(&S);
  free(S.scratch);
  return expression ? S.expr : S.module;
}

FlyNode *fly_parse(FlyArena *arena, FlyDiag *diag, int file) {
  return parse(arena, diag, file, false);
}

FlyNode *fly_parse_expr(FlyArena *arena, FlyDiag *diag, int file) {
  return parse(arena, diag, file, true);
}
