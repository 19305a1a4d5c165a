/* flyc_options.h — the options the flyc commands share. */
#ifndef FLYC_OPTIONS_H
#define FLYC_OPTIONS_H

#include <stdbool.h>

#include "fly_unit.h"

enum { FLYC_OK = 0, FLYC_ERRORS = 1, FLYC_USAGE = 2 };

/* Which options a command accepts, beyond the diagnostics ones. */
enum {
  FLYC_OPT_DUMP_AST = 1,
  FLYC_OPT_STDLIB = 2,
};

typedef struct FlycOptions {
  const char *file;
  bool dump_ast;
  FlyDiagFormat format;
  int color; /* -1: when stderr is a terminal, 0: never, 1: always */
  int error_limit;
  bool werror;
  const char *stdlib_dir; /* NULL: the default */
} FlycOptions;

/* Parses argv (after the command name). Returns FLYC_OK, or FLYC_USAGE after
 * printing the problem; sets *help when --help was asked for. */
int flyc_parse_options(const char *command, const char *usage, unsigned accepted, int argc,
                       char **argv, FlycOptions *o, bool *help);

/* The diagnostics settings of o, applied to a fresh unit. */
void flyc_apply_options(FlyUnit *u, const FlycOptions *o);

/* The exit status for a unit whose work is done: 1 if it reported errors. */
int flyc_finish(FlyUnit *u);

#endif
