/* fly_unit.h — one compilation: the root file, every file it imports, their
 * syntax trees, and the diagnostics about them.
 *
 * A unit owns a source manager, a diagnostics engine reporting against it,
 * and the arena every syntax tree lives in. Imports are resolved when the
 * root is loaded: `import std.x.y;` names stdlib/x/y.fly, `import "p.fly";`
 * a path relative to the importing file. Each file is parsed once however
 * often it is imported; a cycle is an error that shows the chain. */
#ifndef FLY_UNIT_H
#define FLY_UNIT_H

#include <stdbool.h>
#include <stdio.h>

#include "fly_arena.h"
#include "fly_ast.h"
#include "fly_diag.h"
#include "fly_source.h"

/* Bytes the syntax trees of one unit may use (FLY_SOURCE_MAX_BYTES of the
 * densest source fits). */
#define FLY_UNIT_ARENA_LIMIT ((size_t)1 << 30)

enum {
  FLY_MAX_IMPORT_DEPTH = 64, /* a imports b imports c ... */
  FLY_MAX_FILES = 4096,      /* files in one unit */
};

typedef struct FlyUnit {
  FlySourceManager sources;
  FlyDiag diag;
  FlyArena arena;
  const char *stdlib_dir; /* where `import std.x;` looks */
  FlyNode **trees;        /* syntax tree per file index (NULL if unparsed) */
  unsigned char *state;   /* per file: 0 new, 1 importing, 2 done */
  int *rank;              /* per file: when its walk finished (imports first) */
  int ranked;             /* walks finished so far */
  int cap;
  int root; /* file index of the root, -1 before loading */
} FlyUnit;

/* What a unit's user chooses: how diagnostics look, how many are shown,
 * and where `import std.x;` looks. The flyc commands read them from their
 * options; the compiler's back end receives them as they are. */
typedef struct FlyUnitSettings {
  FlyDiagFormat format;
  int color; /* -1: when stderr is a terminal, 0: never, 1: always */
  int error_limit;
  bool werror;
  const char *stdlib_dir; /* NULL: the default */
} FlyUnitSettings;

/* Diagnostics go to diag_out. */
void fly_unit_init(FlyUnit *u, FILE *diag_out);
/* The settings, applied to a fresh unit. */
void fly_unit_apply(FlyUnit *u, const FlyUnitSettings *s);
void fly_unit_release(FlyUnit *u);

/* The standard library directory: $FLY_STDLIB if set, else the one this
 * build was configured with. */
const char *fly_default_stdlib_dir(void);

/* Loads and parses one file without following its imports. Returns the file
 * index, or -1 after reporting why the file could not be read. */
int fly_unit_parse_file(FlyUnit *u, const char *path);

/* Grows trees[] and state[] to the number of loaded files. */
bool fly_unit_reserve(FlyUnit *u);

/* Loads the root file and, recursively, everything it imports. Returns false
 * if any error was reported. A file the unit already holds (the same file
 * by its real path) is not loaded again. */
bool fly_unit_load(FlyUnit *u, const char *path);

/* The same for a root held in memory; name is where it is said to be (its
 * relative imports are found beside it). */
bool fly_unit_load_text(FlyUnit *u, const char *name, const char *text, size_t len);
/* Checks the top level of every loaded file: one definition per name (fn,
 * kernel and const share one namespace) and at most one launch block per
 * kernel. */
void fly_unit_check_definitions(FlyUnit *u);

static inline bool fly_unit_ok(const FlyUnit *u) { return u->diag.errors == 0; }

#endif
