/* flyc_vocabulary.c — `flyc vocabulary [--json]`: every word the compiler
 * knows, by kind: the lexer's reserved words (grammar/fly_words.c) and the
 * semantic pass's predefined names (sema/check/fly_ops.def). Editor
 * grammars are checked against this list, so they cannot miss a word the
 * compiler knows, and editors/update-words.py rewrites their word lists
 * from it. `--table=NAME` prints a registry as a Markdown table instead
 * (flyc_tables.c). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fly_builtin_info.h"
#include "fly_syntax.h"
#include "flyc_commands.h"
#include "flyc_options.h"

static const char vocabulary_usage[] =
    "usage: flyc vocabulary [--json]\n"
    "       flyc vocabulary --table=builtins|atoms|targets\n"
    "\n"
    "Prints every word the compiler knows, one 'KIND WORD' line each, or with\n"
    "--json one object mapping each kind to its words. The kinds:\n"
    "  keyword            kernel, fn, launch, let, for ...\n"
    "  constant           true, false\n"
    "  type               element and compile-time types: f32, i32, int, layout ...\n"
    "  type-constructor   vec, tensor, smem, rmem\n"
    "  builtin-value      thread_idx, block_idx, warp_size, target ...\n"
    "  builtin-function   size, logical_divide, copy, exp ...\n"
    "\n"
    "--table=NAME prints, as the Markdown table docs/language.md shows, the\n"
    "builtins (usage and meaning by group), the copy and MMA atoms, or the\n"
    "targets and their features.\n";

static const char *const kinds[] = {"keyword",          "constant",      "type",
                                    "type-constructor", "builtin-value", "builtin-function"};
enum { NKINDS = sizeof kinds / sizeof kinds[0], MAX_WORDS = 512 };

typedef struct Words {
  const char *word[MAX_WORDS], *kind[MAX_WORDS];
  int n;
} Words;

static void add(const char *word, const char *kind, void *ctx) {
  Words *w = ctx;
  for (int i = 0; i < w->n; i++)
    if (strcmp(w->word[i], word) == 0)
      return; /* a name is listed once, under its first kind */
  if (w->n < MAX_WORDS) {
    w->word[w->n] = word;
    w->kind[w->n++] = kind;
  }
}

static void print_text(const Words *w) {
  for (int k = 0; k < NKINDS; k++)
    for (int i = 0; i < w->n; i++)
      if (strcmp(w->kind[i], kinds[k]) == 0)
        printf("%s %s\n", kinds[k], w->word[i]);
}

static void print_json(const Words *w) {
  printf("{");
  for (int k = 0; k < NKINDS; k++) {
    printf("%s\n  \"%s\": [", k ? "," : "", kinds[k]);
    bool first = true;
    for (int i = 0; i < w->n; i++)
      if (strcmp(w->kind[i], kinds[k]) == 0) {
        printf("%s\"%s\"", first ? "" : ", ", w->word[i]);
        first = false;
      }
    printf("]");
  }
  printf("\n}\n");
}

int flyc_vocabulary_command(int argc, char **argv) {
  bool json = false;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(vocabulary_usage, stdout);
      return FLYC_OK;
    }
    if (strncmp(argv[i], "--table=", 8) == 0) {
      if (flyc_print_table(argv[i] + 8))
        return FLYC_OK;
      fprintf(stderr,
              "flyc vocabulary: error: no table named '%s' (the tables are builtins, atoms and "
              "targets)\n",
              argv[i] + 8);
      return FLYC_USAGE;
    }
    if (strcmp(argv[i], "--json") != 0) {
      fprintf(stderr,
              "flyc vocabulary: error: unknown argument '%s'\n"
              "run 'flyc vocabulary --help' for usage\n",
              argv[i]);
      return FLYC_USAGE;
    }
    json = true;
  }
  static Words w;
  w.n = 0;
  for (const FlyWord *r = fly_reserved_words; r->word; r++)
    add(r->word, r->kind, &w);
  static const char *const word_kinds[] = {"builtin-function", "builtin-value", "type"};
  for (int i = 0; fly_builtin_info_at(i); i++) {
    const FlyBuiltinInfo *b = fly_builtin_info_at(i);
    add(b->name, word_kinds[b->kind], &w);
  }
  if (json)
    print_json(&w);
  else
    print_text(&w);
  return FLYC_OK;
}
