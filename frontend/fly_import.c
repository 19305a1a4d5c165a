/* fly_import.c — following imports from the root file (fly_unit_load).
 *
 * A depth-first walk: each file is parsed, then its imports are resolved in
 * order. A file met again while it is still being walked closes a cycle,
 * reported at the import that closes it, with a note at every other import
 * of the chain. A file met again after its walk finished is simply shared. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "fly_parse.h"
#include "fly_unit.h"

enum { NEW = 0, IMPORTING = 1, DONE = 2 };

/* The chain of imports being followed: stack[i] imported stack[i+1]. */
typedef struct ImportStack {
  int file[FLY_MAX_IMPORT_DEPTH + 1];
  const FlyNode *via[FLY_MAX_IMPORT_DEPTH + 1]; /* the import that led here */
  int depth;
} ImportStack;

/* "std.nn.softmax" for messages. */
static void module_name(const FlyNode *import, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = '\0';
  for (const FlyNode *part = import->kid[0]; part && n < size; part = part->next)
    n += (size_t)snprintf(buf + n, size - n, "%s%s", part == import->kid[0] ? "" : ".", part->str);
}

/* Directory part of path, with its slash ("" for a bare file name). */
static size_t dir_length(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? (size_t)(slash - path) + 1 : 0;
}

/* Works out the file an import names, into path. Returns false after
   reporting an import that cannot name a file. */
static bool import_path(FlyUnit *u, int importer, const FlyNode *import, char *path, size_t size) {
  if (import->flags & FLY_IMPORT_PATH) {
    const char *rel = import->kid[0]->str;
    const FlySource *src = fly_source(&u->sources, importer);
    /* Text given with a file's name (the compiler's back end, fly.compile
       with filename=) imports relative to that name, as the file would;
       only standard input ("-", "<stdin>") has no directory. */
    bool from_stdin = src->real == NULL && (strcmp(src->path, "-") == 0 || src->path[0] == '<');
    if (rel[0] == '/' || from_stdin)
      snprintf(path, size, "%s", rel);
    else
      snprintf(path, size, "%.*s%s", (int)dir_length(src->path), src->path, rel);
    if (strlen(import->kid[0]->str) != import->kid[0]->len) {
      fly_error(&u->diag, fly_node_span(import->kid[0]), "an import path cannot contain NUL");
      return false;
    }
    return true;
  }
  const FlyNode *root = import->kid[0];
  if (!root)
    return false;
  if (strcmp(root->str, "std") != 0) {
    fly_error(&u->diag, fly_node_span(root),
              "unknown module '%s': module names start with 'std.' (import a file of your "
              "own with import \"path.fly\";)",
              root->str);
    return false;
  }
  if (!root->next) {
    fly_error(&u->diag, fly_node_span(import),
              "'std' is the standard library, not a module; import one of its modules, such as "
              "'import std.math;'");
    return false;
  }
  size_t dir = strlen(u->stdlib_dir);
  while (dir > 1 && u->stdlib_dir[dir - 1] == '/')
    dir--;
  size_t n = (size_t)snprintf(path, size, "%.*s", (int)dir, u->stdlib_dir);
  for (const FlyNode *part = root->next; part && n < size; part = part->next)
    n += (size_t)snprintf(path + n, size - n, "/%s", part->str);
  if (n < size)
    snprintf(path + n, size - n, ".fly");
  return true;
}

static void report_cycle(FlyUnit *u, const ImportStack *stack, int target, const FlyNode *import) {
  int from = stack->depth - 1;
  while (from > 0 && stack->file[from] != target)
    from--;
  char chain[1024];
  size_t n = 0;
  chain[0] = '\0';
  for (int i = from; i < stack->depth && n < sizeof chain; i++)
    n += (size_t)snprintf(chain + n, sizeof chain - n, "%s -> ",
                          fly_source(&u->sources, stack->file[i])->path);
  if (n < sizeof chain)
    snprintf(chain + n, sizeof chain - n, "%s", fly_source(&u->sources, target)->path);
  fly_error(&u->diag, fly_node_span(import), "import cycle: %s", chain);
  for (int i = from + 1; i < stack->depth; i++)
    fly_note(&u->diag, fly_node_span(stack->via[i]), "'%s' is imported here",
             fly_source(&u->sources, stack->file[i])->path);
}

static void walk(FlyUnit *u, ImportStack *stack, int file, const FlyNode *via);

/* Resolves one import of file `importer`. */
static void follow(FlyUnit *u, ImportStack *stack, int importer, const FlyNode *import) {
  char path[PATH_MAX + 64];
  if (!import_path(u, importer, import, path, sizeof path))
    return;
  char what[PATH_MAX + 64];
  if (import->flags & FLY_IMPORT_PATH)
    snprintf(what, sizeof what, "\"%s\"", import->kid[0]->str);
  else
    module_name(import, what, sizeof what);

  char *real = realpath(path, NULL);
  if (!real) {
    fly_error(&u->diag, fly_node_span(import), "cannot import %s: %s '%s'", what,
              import->flags & FLY_IMPORT_PATH ? "no such file" : "no such module; looked for",
              path);
    return;
  }
  int known = fly_sources_find_real(&u->sources, real);
  free(real);
  if (known >= 0 && u->state[known] == IMPORTING) {
    report_cycle(u, stack, known, import);
    return;
  }
  if (known >= 0)
    return; /* already walked: shared, not parsed again */
  if (stack->depth == FLY_MAX_IMPORT_DEPTH) {
    fly_error(&u->diag, fly_node_span(import), "imports nested too deeply (limit is %d)",
              FLY_MAX_IMPORT_DEPTH);
    return;
  }
  if (u->sources.count >= FLY_MAX_FILES) {
    fly_error(&u->diag, fly_node_span(import), "too many imported files (limit is %d)",
              FLY_MAX_FILES);
    return;
  }
  char why[256];
  int file = fly_sources_load(&u->sources, path, why, sizeof why);
  if (file < 0) {
    fly_error(&u->diag, fly_node_span(import), "cannot import %s: cannot read '%s': %s", what, path,
              why);
    return;
  }
  walk(u, stack, file, import);
}

static bool same_import(const FlyNode *a, const FlyNode *b) {
  if ((a->flags & FLY_IMPORT_PATH) != (b->flags & FLY_IMPORT_PATH))
    return false;
  const FlyNode *x = a->kid[0], *y = b->kid[0];
  for (; x && y; x = x->next, y = y->next)
    if (x->len != y->len || memcmp(x->str, y->str, x->len) != 0)
      return false;
  return !x && !y;
}

/* An import of tree written the same way before item, or NULL. */
static const FlyNode *earlier_import(const FlyNode *tree, const FlyNode *item) {
  for (const FlyNode *i = tree->kid[0]; i != item; i = i->next)
    if (i->kind == FLY_IMPORT && same_import(i, item))
      return i;
  return NULL;
}

/* Parses a freshly loaded file and follows its imports. Each file's imports
   are checked against the earlier imports of the same file, so a repeated
   one gets a warning pointing at the first. */
static void walk(FlyUnit *u, ImportStack *stack, int file, const FlyNode *via) {
  if (!fly_unit_reserve(u)) {
    fly_error(&u->diag, fly_node_span(via), "out of memory");
    return;
  }
  u->trees[file] = fly_parse(&u->arena, &u->diag, file);
  u->state[file] = IMPORTING;
  stack->file[stack->depth] = file;
  stack->via[stack->depth] = via;
  stack->depth++;
  const FlyNode *tree = u->trees[file];
  for (const FlyNode *item = tree ? tree->kid[0] : NULL; item; item = item->next) {
    if (item->kind != FLY_IMPORT || fly_diag_stopped(&u->diag))
      continue;
    const FlyNode *earlier = earlier_import(tree, item);
    if (earlier) {
      fly_warning(&u->diag, fly_node_span(item), "this import repeats an earlier one");
      fly_note(&u->diag, fly_node_span(earlier), "the earlier import is here");
      continue;
    }
    follow(u, stack, file, item);
  }
  stack->depth--;
  u->state[file] = DONE;
  u->rank[file] = u->ranked++;
}

static bool load_root(FlyUnit *u, int file) {
  u->root = file;
  ImportStack stack;
  stack.depth = 0;
  walk(u, &stack, file, NULL);
  return fly_unit_ok(u);
}

bool fly_unit_load(FlyUnit *u, const char *path) {
  /* A file already in the unit (named twice, as with `flyc eval --import
     a.fly --import a.fly`, or imported by an earlier one) is shared, as an
     import met again is: loading it again would define its names twice. */
  char *real = strcmp(path, "-") == 0 ? NULL : realpath(path, NULL);
  int known = real ? fly_sources_find_real(&u->sources, real) : -1;
  free(real);
  if (known >= 0)
    return fly_unit_ok(u);
  char why[256];
  int file = fly_sources_load(&u->sources, path, why, sizeof why);
  if (file < 0) {
    fly_error(&u->diag, fly_no_span(), "cannot read '%s': %s", path, why);
    return false;
  }
  return load_root(u, file);
}

bool fly_unit_load_text(FlyUnit *u, const char *name, const char *text, size_t len) {
  char why[256];
  int file = fly_sources_add(&u->sources, name, text, len, why, sizeof why);
  if (file < 0) {
    fly_error(&u->diag, fly_no_span(), "cannot read '%s': %s", name, why);
    return false;
  }
  return load_root(u, file);
}
