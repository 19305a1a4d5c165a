/* fly_check.h — the semantic pass: names, types and compile-time evaluation.
 *
 * After the front end has loaded a unit (a file and its imports), the
 * semantic pass resolves every name, evaluates the top-level constants,
 * const blocks and static_asserts, and then runs each kernel's body once per
 * specialisation (one binding of its const parameters, on one target) with
 * the compile-time interpreter: static values are computed, runtime values
 * are tracked by type. Every problem is a diagnostic in the unit's engine.
 *
 * This library reads the front end's syntax tree and reports through its
 * diagnostics; like the rest of sema/ it includes no MLIR header. */
#ifndef FLY_CHECK_H
#define FLY_CHECK_H

#include <stdbool.h>
#include <stdio.h>

#include "fly_target.h"
#include "fly_unit.h"
#include "fly_value.h"

/* -D NAME=VALUE: VALUE is a Fly constant expression. */
typedef struct FlyDefine {
  const char *name;
  const char *value;
} FlyDefine;

enum {
  FLY_DEFAULT_STEP_LIMIT = 1000000, /* expressions evaluated at compile time */
  FLY_DEFAULT_DEPTH_LIMIT = 200,    /* nested calls of helper functions */
};

typedef struct FlyCheckOptions {
  const FlyTarget *target; /* a row of fly_targets.def */
  const FlyDefine *defines;
  int ndefines;
  long step_limit;
  int depth_limit;
  /* When set, each kernel specialisation checked is printed there, one a
     line: "KERNEL NAME=VALUE ... @TARGET". */
  FILE *specializations;
  /* Tracing (fly_emit.h): when set, the kernels (only the one named
     `only_kernel`, when that is set) are run with this emitter, which turns
     their runtime work into code. */
  struct FlyEmitter *emit;
  const char *only_kernel;
  /* When set, each kernel specialisation checked (only `only_kernel`, when
     that is set) appends its signature and launch rule here
     (fly_kernel_info.h). */
  struct FlyKernelInfoList *kernel_info;
} FlyCheckOptions;

void fly_check_options_init(FlyCheckOptions *o);

/* Runs the semantic pass over a loaded unit. Returns false if it reported
 * errors. Call only when loading reported none: the trees must be whole. */
bool fly_check_unit(FlyUnit *u, const FlyCheckOptions *o);

/* What `flyc eval` and `flyc layout` do: parse `text` as one expression
 * (diagnostics name it `name`), evaluate it in the context of the unit's
 * definitions (the unit may hold no file), and print its canonical form on
 * out. The value must be static. `layouts_only` refuses anything but a
 * layout or a tuple of layouts. With `table` or `svg`, the layout is drawn
 * as a table on out, or as an SVG picture written to the file `svg`. */
typedef struct FlyEvalRequest {
  const char *name;
  const char *text;
  bool layouts_only;
  bool table;
  const char *svg;
} FlyEvalRequest;

bool fly_eval_text(FlyUnit *u, const FlyCheckOptions *o, const FlyEvalRequest *r, FILE *out);

#endif
