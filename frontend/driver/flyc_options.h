/* flyc_options.h — the options the flyc commands share. */
#ifndef FLYC_OPTIONS_H
#define FLYC_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

#include "fly_check.h"
#include "fly_unit.h"

enum { FLYC_OK = 0, FLYC_ERRORS = 1, FLYC_USAGE = 2 };

/* Which options a command accepts, beyond the diagnostics ones. */
enum {
  FLYC_OPT_DUMP_AST = 1,
  FLYC_OPT_STDLIB = 2,
  FLYC_OPT_SEMA = 4,     /* -D, --target, --step-limit, --depth-limit */
  FLYC_OPT_EXPR = 8,     /* the argument is an expression, not a file; --import */
  FLYC_OPT_DRAW = 16,    /* --table, --svg */
  FLYC_OPT_SPECS = 32,   /* --print-specializations */
  FLYC_OPT_COMPILE = 64, /* --emit, -o, -O, --kernel, --split-input-file, --locations */
};

enum { FLYC_MAX_DEFINES = 256, FLYC_MAX_IMPORTS = 64, FLYC_MAX_TARGETS = 8 };

typedef struct FlycOptions {
  const char *file;
  bool dump_ast;
  FlyUnitSettings unit; /* diagnostics and --stdlib */
  /* The semantic pass: -D bindings, target and limits. check.target is
     the first of targets (--target, several allowed), or the default. */
  FlyCheckOptions check;
  const FlyTarget *targets[FLYC_MAX_TARGETS];
  int ntargets; /* 0: none was named */
  FlyDefine defines[FLYC_MAX_DEFINES];
  bool print_specializations;
  const char *imports[FLYC_MAX_IMPORTS]; /* eval, layout: --import FILE */
  int nimports;
  bool table;         /* layout --table */
  const char *svg;    /* layout --svg FILE */
  const char *emit;   /* compile --emit: what to write */
  const char *output; /* compile -o FILE ("-" or NULL: standard output) */
  bool split;         /* compile --split-input-file */
  bool locations;     /* compile --locations */
  bool no_cache;      /* compile --no-cache */
  int opt_level;      /* compile -O0..-O3: LLVM's level for device code */
} FlycOptions;

/* Parses argv (after the command name). Returns FLYC_OK, or FLYC_USAGE after
 * printing the problem; sets *help when --help was asked for. */
int flyc_parse_options(const char *command, const char *usage, unsigned accepted, int argc,
                       char **argv, FlycOptions *o, bool *help);

/* The same, reporting problems on err. */
int flyc_parse_options_to(FILE *err, const char *command, const char *usage, unsigned accepted,
                          int argc, char **argv, FlycOptions *o, bool *help);

/* A help text, with {targets} written as the list of targets, {default}
   as the default one (fly_target.h), a line {diagnostics} as the options
   of diagnostics (--diagnostics, --color, --error-limit, -Werror) and a
   line {checking} as those and the semantic pass's (--step-limit,
   --depth-limit, --stdlib), with their defaults. */
void flyc_print_usage(const char *usage, FILE *out);

/* The options as they are when none is given. */
void flyc_options_defaults(FlycOptions *o);
/* -D NAME=VALUE and --target=A[,B...] added to o, as the command line adds
   them; FLYC_USAGE after reporting the problem on err. */
int flyc_options_define(FILE *err, const char *command, FlycOptions *o, const char *def);
int flyc_options_targets(FILE *err, const char *command, FlycOptions *o, const char *list);

/* The value of option `name` written "--name=value" or "--name value" (then
   the value is the next argument, and *i moves past it). NULL when argv[*i]
   is not this option; "" when the value is missing. */
const char *flyc_option_value(int argc, char **argv, int *i, const char *name);

/* Whether the n bytes at s are an identifier: a letter or '_', then
   letters, digits and '_'. */
bool flyc_is_identifier(const char *s, size_t n);

/* Frees what parsing the options allocated (the names of -D bindings). */
void flyc_free_options(FlycOptions *o);

/* The exit status for a unit whose work is done: 1 if it reported errors. */
int flyc_finish(FlyUnit *u);

#endif
