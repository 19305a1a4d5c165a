/* fly_syntax.h — the state one parse of one file shares between the re2c
 * lexer (lexer.re) and the Bison parser (parser.y). Nothing outside grammar/
 * includes this; the rest of the compiler calls fly_parse (fly_parse.h). */
#ifndef FLY_SYNTAX_H
#define FLY_SYNTAX_H

#include <stdbool.h>
#include <stdint.h>

#include "fly_ast.h"
#include "fly_diag.h"
#include "fly_parse.h"

/* Deepest nesting of brackets the lexer accepts: beyond it the parser's stack
 * would grow without bound, so the lexer stops the parse with a message. */
enum { FLY_MAX_BRACKETS = 256 };

typedef struct FlyBracket {
  uint32_t at; /* offset of the opening bracket */
  char open;   /* ( [ { or < (the angle brackets of a type such as vec<4, f32>) */
} FlyBracket;

typedef struct FlySyntax {
  FlyDiag *diag;
  FlyAstBuilder build;
  int file;
  /* lexer */
  const unsigned char *text, *cur, *lim, *tok, *marker;
  uint32_t prev_end;        /* end of the token before the current one */
  uint32_t last_end;        /* end of the current (last returned) token */
  int last_token;           /* its kind, to see `vec <` as the start of type arguments */
  bool launch_name;         /* the current token is the NAME of `launch NAME` */
  bool launch_pending;      /* the token before the current one was: for a hint */
  uint32_t closed_angle_at; /* offset of the last '>' that closed type arguments */
  FlyBracket brackets[FLY_MAX_BRACKETS];
  int nbrackets;
  char *scratch; /* decoded string literal being built (malloc'd) */
  size_t scratch_len, scratch_cap;
  bool fatal; /* stop: a limit was hit or the error limit reached */
  /* Tokens during which syntax errors are not reported: an unterminated
     string swallows the rest of its line, so the parser's complaint about
     what follows would only echo the lexer's. */
  int quiet_tokens;
  bool start_expr; /* the next token is START_EXPR: parse one expression */
  FlyNode *module;
  FlyNode *expr; /* the result of fly_parse_expr */
} FlySyntax;

/* Reports, once, a limit the tree builder hit (depth, memory) and stops the
 * parse; defined by lexer.re, which checks before every token. */
void fly_syntax_report_limit(FlySyntax *S);

/* A word the lexer reserves and its kind: "keyword", "constant" (true,
   false), "type" (i32, f16 ...), "type-constructor" (vec, tensor, smem,
   rmem). fly_reserved_words ends with a NULL word (fly_words.c). */
typedef struct FlyWord {
  const char *word, *kind;
} FlyWord;
extern const FlyWord fly_reserved_words[];

#endif
