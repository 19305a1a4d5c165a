/* fly_ast_print.c — printing syntax trees for people and golden tests. */
#include "fly_ast_print.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

/* The role of each child, by kind; NULL prints the child unlabelled. */
static const char *const roles[FLY_NODE_KIND_COUNT][4] = {
    [FLY_LAYOUT] = {"shape", "stride"},        [FLY_CAST] = {NULL, "to"},
    [FLY_CALL] = {"callee", "args"},           [FLY_INDEX] = {"base", "index"},
    [FLY_IF] = {"cond", "then", "else"},       [FLY_BLOCK] = {NULL, "value"},
    [FLY_LET] = {"pattern", "type", "value"},  [FLY_CONST] = {NULL, "type", "value"},
    [FLY_STATIC_ASSERT] = {"cond", "message"}, [FLY_FOR] = {"var", "range", "carry", "body"},
    [FLY_PARAM] = {"type", "default"},         [FLY_FN] = {"params", "result", "body"},
    [FLY_KERNEL] = {"params", NULL, "body"},   [FLY_WHILE] = {NULL, "cond", "carry", "body"},
    [FLY_REQUIRE] = {"cond", "message"},
};

static void indent(FILE *out, int depth) {
  for (int i = 0; i < depth; i++)
    fputs("  ", out);
}

/* A string literal as it would be written, escapes included. */
static void print_string(FILE *out, const char *s, uint32_t len) {
  fputc('"', out);
  for (uint32_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\')
      fprintf(out, "\\%c", c);
    else if (c == '\n')
      fputs("\\n", out);
    else if (c == '\t')
      fputs("\\t", out);
    else if (c < 0x20 || c == 0x7f)
      fprintf(out, "\\x%02x", c);
    else
      fputc(c, out);
  }
  fputc('"', out);
}

static void print_payload(FILE *out, const FlyNode *n) {
  switch (n->kind) {
  case FLY_INT:
    fprintf(out, " %" PRIu64, n->ival);
    break;
  case FLY_FLOAT: {
    /* The fewest digits that read back as the same double (0.1, not
       0.10000000000000001), written without an exponent up to 1e17. */
    char buf[40];
    int digits = 1;
    for (; digits < 17; digits++) {
      snprintf(buf, sizeof buf, "%.*e", digits - 1, n->fval);
      if (strtod(buf, NULL) == n->fval)
        break;
    }
    int exp10 = n->fval != 0 && isfinite(n->fval) ? (int)floor(log10(fabs(n->fval))) : 0;
    int precision = exp10 >= digits && exp10 < 17 ? exp10 + 1 : digits;
    fprintf(out, " %.*g", precision, n->fval);
    break;
  }
  case FLY_BOOL:
    fputs(n->ival ? " true" : " false", out);
    break;
  case FLY_STRING:
    fputc(' ', out);
    print_string(out, n->str, n->len);
    break;
  case FLY_TYPE:
  case FLY_TYPE_APPLY:
    fprintf(out, " %s", fly_type_code_name((FlyTypeCode)n->op));
    break;
  case FLY_UNARY:
  case FLY_BINARY:
    fprintf(out, " '%s'", fly_op_spelling((FlyOp)n->op));
    break;
  default:
    if (n->str && n->kind != FLY_STRING)
      fprintf(out, " %s", n->str);
  }
  if (n->flags & FLY_IS_CONST)
    fputs(" const", out);
  if (n->flags & FLY_IMPORT_PATH)
    fputs(" path", out);
}

static void print_range(FILE *out, const FlySourceManager *sources, const FlyNode *n) {
  uint32_t l0, c0, l1, c1;
  fly_source_line_col(sources, n->file, n->begin, &l0, &c0);
  fly_source_line_col(sources, n->file, n->end, &l1, &c1);
  fprintf(out, " <%u:%u-%u:%u>\n", l0, c0, l1, c1);
}

static void print_node(FILE *out, const FlySourceManager *sources, const FlyNode *n, int depth) {
  indent(out, depth);
  fputs(fly_node_kind_name((FlyNodeKind)n->kind), out);
  print_payload(out, n);
  print_range(out, sources, n);
  for (int k = 0; k < 4; k++) {
    const FlyNode *child = n->kid[k];
    if (!child)
      continue;
    const char *role = roles[n->kind][k];
    if (role) {
      indent(out, depth + 1);
      fprintf(out, "%s:\n", role);
    }
    for (; child; child = child->next)
      print_node(out, sources, child, depth + 1 + (role != NULL));
  }
}

void fly_ast_print(FILE *out, const FlySourceManager *sources, const FlyNode *node) {
  if (node)
    print_node(out, sources, node, 0);
}
