/* fly_parse.h — the front end's entry point: one source file to a syntax tree.
 *
 * Diagnostics go to diag; the tree (possibly partial after errors, NULL when
 * nothing could be built) lives in arena. Whether the file was clean is
 * whether diag's error count grew. */
#ifndef FLY_PARSE_H
#define FLY_PARSE_H

#include "fly_arena.h"
#include "fly_ast.h"
#include "fly_diag.h"

FlyNode *fly_parse(FlyArena *arena, FlyDiag *diag, int file);

/* The whole file as one value (an expression or an if-expression), for the
 * expressions given on the command line of `flyc eval` and `flyc layout`. */
FlyNode *fly_parse_expr(FlyArena *arena, FlyDiag *diag, int file);

#endif
