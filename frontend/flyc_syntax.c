/* flyc_syntax.c — `flyc parse` and `flyc check`.
 *
 * parse reads one file and reports its syntax errors (and prints the tree
 * with --dump-ast); check loads the file with everything it imports and runs
 * every check the compiler has: syntax, imports, top-level definitions. */
#include <stdio.h>

#include "fly_ast_print.h"
#include "flyc_commands.h"
#include "flyc_options.h"

static const char parse_usage[] =
    "usage: flyc parse FILE [--dump-ast] [options]\n"
    "\n"
    "Reads one .fly file (- for standard input) and reports its syntax errors.\n"
    "Imports are not followed; 'flyc check' does that.\n"
    "\n"
    "Options:\n"
    "  --dump-ast               print the syntax tree on standard output\n"
    "  --diagnostics=text|json  how to print diagnostics (json: one object a line)\n"
    "  --color=auto|always|never\n"
    "  --error-limit=N          stop after N errors (default 20, 0: no limit)\n"
    "  -Werror                  treat warnings as errors\n";

static const char check_usage[] =
    "usage: flyc check FILE [options]\n"
    "\n"
    "Reads a .fly file and everything it imports and reports every problem\n"
    "found: syntax, imports, and duplicate top-level definitions.\n"
    "\n"
    "Options:\n"
    "  --stdlib=DIR             where 'import std.x;' looks (default: $FLY_STDLIB,\n"
    "                           else the standard library of this build)\n"
    "  --diagnostics=text|json  how to print diagnostics (json: one object a line)\n"
    "  --color=auto|always|never\n"
    "  --error-limit=N          stop after N errors (default 20, 0: no limit)\n"
    "  -Werror                  treat warnings as errors\n";

int flyc_parse_command(int argc, char **argv) {
  FlycOptions o;
  bool help;
  int status = flyc_parse_options("parse", parse_usage, FLYC_OPT_DUMP_AST, argc, argv, &o, &help);
  if (status != FLYC_OK || help)
    return status;
  FlyUnit u;
  fly_unit_init(&u, stderr);
  flyc_apply_options(&u, &o);
  int file = fly_unit_parse_file(&u, o.file);
  if (file >= 0 && o.dump_ast && fly_unit_ok(&u))
    fly_ast_print(stdout, &u.sources, u.trees[file]);
  return flyc_finish(&u);
}

int flyc_check_command(int argc, char **argv) {
  FlycOptions o;
  bool help;
  int status = flyc_parse_options("check", check_usage, FLYC_OPT_STDLIB, argc, argv, &o, &help);
  if (status != FLYC_OK || help)
    return status;
  FlyUnit u;
  fly_unit_init(&u, stderr);
  flyc_apply_options(&u, &o);
  fly_unit_load(&u, o.file);
  fly_unit_check_definitions(&u); /* also after import errors: report all at once */
  return flyc_finish(&u);
}
