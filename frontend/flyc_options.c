/* flyc_options.c — reading the options the flyc commands share. */
#include "flyc_options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage_error(const char *command, const char *fmt, const char *arg) {
  fprintf(stderr, "flyc %s: error: ", command);
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nrun 'flyc %s --help' for usage\n", command);
  return FLYC_USAGE;
}

/* The value of option `name` written "--name=value" or "--name value" (then
   the value is the next argument, and *i moves past it). NULL when argv[*i]
   is not this option; "" when the value is missing. */
static const char *value_of(int argc, char **argv, int *i, const char *name) {
  const char *arg = argv[*i];
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0)
    return NULL;
  if (arg[n] == '=')
    return arg + n + 1;
  if (arg[n] != '\0')
    return NULL;
  if (*i + 1 >= argc)
    return "";
  return argv[++*i];
}

int flyc_parse_options(const char *command, const char *usage, unsigned accepted, int argc,
                       char **argv, FlycOptions *o, bool *help) {
  memset(o, 0, sizeof *o);
  o->color = -1;
  o->error_limit = FLY_DEFAULT_ERROR_LIMIT;
  *help = false;
  const char *v;
  /* Options that take a value, and the form the value has. */
  static const char *const valued[][2] = {{"--diagnostics", "--diagnostics=text|json"},
                                          {"--color", "--color=auto|always|never"},
                                          {"--error-limit", "--error-limit=N"},
                                          {"--stdlib", "--stdlib=DIR"}};
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
      if (strcmp(arg, valued[k][0]) == 0 && i + 1 == argc)
        return usage_error(command, "missing value: write %s", valued[k][1]);
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      fputs(usage, stdout);
      *help = true;
      return FLYC_OK;
    } else if ((accepted & FLYC_OPT_DUMP_AST) && strcmp(arg, "--dump-ast") == 0) {
      o->dump_ast = true;
    } else if ((v = value_of(argc, argv, &i, "--diagnostics"))) {
      if (strcmp(v, "text") == 0)
        o->format = FLY_DIAG_TEXT;
      else if (strcmp(v, "json") == 0)
        o->format = FLY_DIAG_JSON;
      else
        return usage_error(command, "--diagnostics takes 'text' or 'json', not '%s'", v);
    } else if ((v = value_of(argc, argv, &i, "--color"))) {
      if (strcmp(v, "auto") == 0)
        o->color = -1;
      else if (strcmp(v, "always") == 0)
        o->color = 1;
      else if (strcmp(v, "never") == 0)
        o->color = 0;
      else
        return usage_error(command, "--color takes 'auto', 'always' or 'never', not '%s'", v);
    } else if ((v = value_of(argc, argv, &i, "--error-limit"))) {
      char *end;
      errno = 0;
      long n = strtol(v, &end, 10);
      if (!*v || *end || errno || n < 0 || n > 1000000)
        return usage_error(command,
                           "--error-limit takes a number from 0 (no limit) to "
                           "1000000, not '%s'",
                           v);
      o->error_limit = (int)n;
    } else if (strcmp(arg, "-Werror") == 0) {
      o->werror = true;
    } else if ((accepted & FLYC_OPT_STDLIB) && (v = value_of(argc, argv, &i, "--stdlib"))) {
      o->stdlib_dir = v;
    } else if (arg[0] == '-' && arg[1] != '\0') {
      return usage_error(command, "unknown option '%s'", arg);
    } else if (o->file) {
      return usage_error(command, "more than one input file ('%s')", arg);
    } else {
      o->file = arg;
    }
  }
  if (!o->file)
    return usage_error(command, "%s", "no input file");
  return FLYC_OK;
}

void flyc_apply_options(FlyUnit *u, const FlycOptions *o) {
  u->diag.format = o->format;
  u->diag.color =
      o->format == FLY_DIAG_TEXT && (o->color < 0 ? fly_diag_color_default(stderr) : o->color == 1);
  u->diag.error_limit = o->error_limit;
  u->diag.warnings_as_errors = o->werror;
  if (o->stdlib_dir)
    u->stdlib_dir = o->stdlib_dir;
}

int flyc_finish(FlyUnit *u) {
  int status = fly_unit_ok(u) ? FLYC_OK : FLYC_ERRORS;
  fly_unit_release(u);
  return status;
}
