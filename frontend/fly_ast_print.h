/* fly_ast_print.h — the syntax tree as indented text (`flyc parse --dump-ast`).
 *
 * One node per line: its kind, its payload (name, value, operator), and its
 * source range as line:col-line:col; children indented below, labelled by
 * role where a kind has several. The format is what the golden tests check. */
#ifndef FLY_AST_PRINT_H
#define FLY_AST_PRINT_H

#include <stdio.h>

#include "fly_ast.h"
#include "fly_source.h"

void fly_ast_print(FILE *out, const FlySourceManager *sources, const FlyNode *node);

#endif
