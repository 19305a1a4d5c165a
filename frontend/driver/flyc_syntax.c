/* flyc_syntax.c — `flyc parse` and `flyc check`.
 *
 * parse reads one file and reports its syntax errors (and prints the tree
 * with --dump-ast); check loads the file with everything it imports and runs
 * every check the compiler has: syntax, imports, top-level definitions, and
 * the semantic pass (names, types, compile-time evaluation). */
#include <stdio.h>

#include "fly_ast_print.h"
#include "fly_check.h"
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
    "{diagnostics}\n";

static const char check_usage[] =
    "usage: flyc check FILE [-D NAME=VALUE ...] [options]\n"
    "\n"
    "Reads a .fly file and everything it imports and reports every problem\n"
    "found: syntax, imports, names, types, and everything the compile-time\n"
    "interpreter finds while it evaluates the top-level constants and runs each\n"
    "kernel once for its specialisation (its const parameters, on one target).\n"
    "\n"
    "Options:\n"
    "  -D NAME=VALUE            bind the const parameter NAME of the kernels that\n"
    "                           have one (VALUE is a Fly constant expression)\n"
    "  --target=ARCH            the target (default {default}), one of\n"
    "                           {targets}\n"
    "  --print-specializations  print each kernel specialisation checked\n"
    "{checking}\n";

int flyc_parse_command(int argc, char **argv) {
  FlycOptions o;
  bool help;
  int status = flyc_parse_options("parse", parse_usage, FLYC_OPT_DUMP_AST, argc, argv, &o, &help);
  if (status != FLYC_OK || help)
    return status;
  FlyUnit u;
  fly_unit_init(&u, stderr);
  fly_unit_apply(&u, &o.unit);
  int file = fly_unit_parse_file(&u, o.file);
  if (file >= 0 && o.dump_ast && fly_unit_ok(&u))
    fly_ast_print(stdout, &u.sources, u.trees[file]);
  return flyc_finish(&u);
}

int flyc_check_command(int argc, char **argv) {
  FlycOptions o;
  bool help;
  unsigned accepted = FLYC_OPT_STDLIB | FLYC_OPT_SEMA | FLYC_OPT_SPECS;
  int status = flyc_parse_options("check", check_usage, accepted, argc, argv, &o, &help);
  if (status != FLYC_OK || help) {
    flyc_free_options(&o);
    return status;
  }
  FlyUnit u;
  fly_unit_init(&u, stderr);
  fly_unit_apply(&u, &o.unit);
  fly_unit_load(&u, o.file);
  fly_unit_check_definitions(&u); /* also after import errors: report all at once */
  /* Meaning is checked only on whole trees: after a syntax error, the
     semantic pass would mostly report the error's consequences. */
  if (fly_unit_ok(&u)) {
    o.check.specializations = o.print_specializations ? stdout : NULL;
    fly_check_unit(&u, &o.check);
  }
  flyc_free_options(&o);
  return flyc_finish(&u);
}
