/* fuzz_parser.c — libFuzzer entry for the front end: lexer, parser and tree.
 *
 * Any input must parse or fail with a message, never crash or leak. A clean
 * parse must give a module whose nodes all lie inside the file, no deeper
 * than the tree's limit, with every number literal holding the value its
 * text denotes, and the tree must print. Diagnostics go in text form to
 * /dev/null with the default error limit, as `flyc parse` reports them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_ast_print.h"
#include "fly_parse.h"
#include "fly_unit.h"

/* A promise was broken: say which before libFuzzer saves the input. */
static void broken(const char *why) __attribute__((noreturn));
static void broken(const char *why) {
  fprintf(stderr, "fuzz_parser: %s\n", why);
  abort();
}

static FILE *devnull(void) {
  static FILE *null;
  if (!null)
    null = fopen("/dev/null", "w");
  if (!null)
    abort();
  return null;
}

/* An integer literal's text, worked out independently of the lexer: its
 * value must be what the node holds, and must fit (the parse was clean). */
static void check_int(const FlyNode *n, const char *text, size_t len) {
  unsigned base = 10;
  size_t i = 0;
  if (len > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'b'))
    base = text[1] == 'x' ? 16 : 2, i = 2;
  uint64_t v = 0;
  for (; i < len; i++) {
    char c = text[i];
    if (c == '_')
      continue;
    unsigned digit = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                            : 99;
    if (digit >= base)
      broken("an integer node whose text is not an integer literal");
    if (__builtin_mul_overflow(v, base, &v) || __builtin_add_overflow(v, digit, &v))
      broken("an integer literal too large for 64 bits was accepted");
  }
  if (v != n->ival)
    broken("an integer literal's value is not what its text says");
}

/* A float literal's text, converted whole by strtod. */
static void check_float(const FlyNode *n, const char *text, size_t len) {
  char *digits = malloc(len + 1);
  if (!digits)
    abort();
  size_t k = 0;
  for (size_t i = 0; i < len; i++)
    if (text[i] != '_')
      digits[k++] = text[i];
  digits[k] = '\0';
  char *end;
  double v = strtod(digits, &end);
  if (*end != '\0')
    broken("a float node whose text is not a float literal");
  free(digits);
  if (v != n->fval)
    broken("a float literal's value is not what its text says");
}

/* Every node of a tree: inside the file, ordered, and within the depth limit
 * its own children give it. Returns the node's depth. */
static unsigned check_node(const FlyNode *n, int file, const char *text, uint32_t len) {
  if (n->kind >= FLY_NODE_KIND_COUNT || n->file != file)
    broken("a node with a bad kind or file");
  if (n->begin > n->end || n->end > len)
    broken("a node's range is reversed or runs past the end of the file");
  if (n->kind == FLY_INT)
    check_int(n, text + n->begin, n->end - n->begin);
  if (n->kind == FLY_FLOAT)
    check_float(n, text + n->begin, n->end - n->begin);
  unsigned deepest = 0;
  for (int k = 0; k < 4; k++)
    for (const FlyNode *c = n->kid[k]; c; c = c->next) {
      unsigned d = check_node(c, file, text, len);
      if (d > deepest)
        deepest = d;
    }
  /* The recorded depth is what keeps later walks off the end of the stack. */
  if (deepest + 1 != n->depth)
    broken("a node's recorded depth is not its real depth");
  if (n->depth > FLY_AST_MAX_DEPTH)
    broken("a tree deeper than FLY_AST_MAX_DEPTH");
  return n->depth;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  FlySourceManager sources;
  FlyDiag diag;
  FlyArena arena;
  fly_sources_init(&sources);
  fly_diag_init(&diag, &sources, devnull());
  fly_arena_init(&arena, FLY_UNIT_ARENA_LIMIT);

  char why[128];
  int file = fly_sources_add(&sources, "fuzz.fly", (const char *)data, size, why, sizeof why);
  if (file < 0)
    broken("fly_sources_add refused an input far below the size limit");
  FlyNode *tree = fly_parse(&arena, &diag, file);
  if (diag.errors == 0) {
    if (!tree || tree->kind != FLY_MODULE)
      broken("a parse without errors gave no module");
    const FlySource *src = fly_source(&sources, file);
    check_node(tree, file, src->text, src->len);
    fly_ast_print(devnull(), &sources, tree);
  }

  fly_diag_finish(&diag);
  fly_arena_release(&arena);
  fly_sources_release(&sources);
  return 0;
}
