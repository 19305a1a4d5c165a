/* flyc_eval.c — `flyc eval` and `flyc layout`: the compile-time interpreter
 * and the layout algebra as a calculator.
 *
 *   flyc eval '128 / sizeof_bits(f16)'               -> 8
 *   flyc layout 'logical_divide(16:1, 4:1)'          -> (4,4):(1,4)
 *   flyc layout '(4,8):(8,1)' --table                -> CuTe's print_layout
 *
 * The expression may use the top-level names of files given with --import
 * (and the standard library they import). */
#include <stdio.h>

#include "fly_check.h"
#include "flyc_commands.h"
#include "flyc_options.h"

static const char eval_usage[] =
    "usage: flyc eval 'EXPR' [--import FILE ...] [options]\n"
    "\n"
    "Evaluates a constant expression at compile time and prints its value in\n"
    "canonical form: integers, floats, booleans, strings, tuples, layouts, types.\n"
    "\n"
    "Options:\n"
    "  --import=FILE            make the top-level names of FILE available\n"
    "  --target=ARCH            the target that target.arch, target.vendor and\n"
    "                           warp_size describe (default {default})\n"
    "{checking}\n";

static const char layout_usage[] =
    "usage: flyc layout 'EXPR' [--table] [--svg FILE] [options]\n"
    "\n"
    "Evaluates an expression whose value is a layout (or a tuple of layouts, a\n"
    "swizzled layout, or the thread-value layout of tv_layout(...) or\n"
    "tiled_copy(...)) and prints it in CuTe's text form, such as (8,16):(1,8).\n"
    "\n"
    "Options:\n"
    "  --table                  print the layout as a table of coordinates and\n"
    "                           indices (CuTe's print_layout); a thread-value layout\n"
    "                           shows the thread and value of each cell\n"
    "  --svg=FILE               draw the same table as an SVG picture in FILE\n"
    "  --import=FILE            make the top-level names of FILE available\n"
    "  --target=ARCH            the target (default {default})\n"
    "{checking}\n";

static int run(const char *command, const char *usage, unsigned accepted, bool layouts, int argc,
               char **argv) {
  FlycOptions o;
  bool help;
  accepted |= FLYC_OPT_EXPR | FLYC_OPT_STDLIB;
  int status = flyc_parse_options(command, usage, accepted, argc, argv, &o, &help);
  if (status != FLYC_OK || help) {
    flyc_free_options(&o);
    return status;
  }
  FlyUnit u;
  fly_unit_init(&u, stderr);
  fly_unit_apply(&u, &o.unit);
  for (int i = 0; i < o.nimports; i++)
    fly_unit_load(&u, o.imports[i]);
  fly_unit_check_definitions(&u);
  if (fly_unit_ok(&u) && o.nimports > 0)
    fly_check_unit(&u, &o.check); /* the imported files must be sound */
  if (fly_unit_ok(&u)) {
    FlyEvalRequest r = {
        .name = "<expr>", .text = o.file, .layouts_only = layouts, .table = o.table, .svg = o.svg};
    fly_eval_text(&u, &o.check, &r, stdout);
  }
  flyc_free_options(&o);
  return flyc_finish(&u);
}

int flyc_eval_command(int argc, char **argv) {
  return run("eval", eval_usage, 0, false, argc, argv);
}

int flyc_layout_command(int argc, char **argv) {
  return run("layout", layout_usage, FLYC_OPT_DRAW, true, argc, argv);
}
