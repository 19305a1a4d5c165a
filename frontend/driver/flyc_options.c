/* flyc_options.c — reading the options the flyc commands share. */
#include "flyc_options.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where problems with the options are reported: stderr for the commands,
   the compile's diagnostics for the library. */
static _Thread_local FILE *errout;

static int usage_error(const char *command, const char *fmt, const char *arg) {
  fprintf(errout, "flyc %s: error: ", command);
  fprintf(errout, fmt, arg);
  fprintf(errout, "\nrun 'flyc %s --help' for usage\n", command);
  return FLYC_USAGE;
}

/* The value of option `name` written "--name=value" or "--name value" (then
   the value is the next argument, and *i moves past it). NULL when argv[*i]
   is not this option; "" when the value is missing. */
const char *flyc_option_value(int argc, char **argv, int *i, const char *name) {
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

bool flyc_is_identifier(const char *s, size_t n) {
  if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
    return false;
  for (size_t i = 1; i < n; i++)
    if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
      return false;
  return true;
}

/* -D NAME=VALUE (or -DNAME=VALUE). */
static int add_define(const char *command, FlycOptions *o, const char *def) {
  const char *eq = strchr(def, '=');
  if (!eq || !flyc_is_identifier(def, (size_t)(eq - def)))
    return usage_error(command, "-D takes NAME=VALUE, such as -D BLOCK=128, not '%s'", def);
  if (o->check.ndefines == FLYC_MAX_DEFINES)
    return usage_error(command, "too many -D options (limit is %s)", "256");
  size_t n = (size_t)(eq - def);
  char *name = malloc(n + 1);
  if (!name)
    return usage_error(command, "%s", "out of memory");
  memcpy(name, def, n);
  name[n] = '\0';
  o->defines[o->check.ndefines].name = name;
  o->defines[o->check.ndefines].value = eq + 1;
  o->check.ndefines++;
  return FLYC_OK;
}

static int parse_limit(const char *command, const char *option, const char *v, long max,
                       long *out) {
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (!*v || *end || errno || n < 1 || n > max) {
    fprintf(errout, "flyc %s: error: %s takes a number from 1 to %ld, not '%s'\n", command, option,
            max, v);
    fprintf(errout, "run 'flyc %s --help' for usage\n", command);
    return FLYC_USAGE;
  }
  *out = n;
  return FLYC_OK;
}

/* An expression may start with '-' (-1, -(2 * 3)): only '-' followed by a
   letter or another '-' is an option then. */
static bool looks_like_option(const char *arg, bool expression) {
  if (arg[0] != '-' || arg[1] == '\0')
    return false;
  return !expression || isalpha((unsigned char)arg[1]) || arg[1] == '-';
}

void flyc_free_options(FlycOptions *o) {
  for (int i = 0; i < o->check.ndefines; i++)
    free((char *)o->defines[i].name);
  o->check.ndefines = 0;
}

/* --target=A[,B...]: each named target, in order, once. */
static int add_targets(const char *command, FlycOptions *o, const char *list) {
  char name[32];
  for (const char *p = list;;) {
    size_t n = strcspn(p, ",");
    snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), p);
    const FlyTarget *t = n < sizeof name ? fly_target_find(name) : NULL;
    if (!t) {
      fprintf(errout, "flyc %s: error: unknown target '%.*s' (the targets are %s)\n", command,
              (int)n, p, fly_target_names());
      fprintf(errout, "run 'flyc %s --help' for usage\n", command);
      return FLYC_USAGE;
    }
    bool seen = false;
    for (int i = 0; i < o->ntargets; i++)
      seen = seen || o->targets[i] == t;
    if (!seen && o->ntargets == FLYC_MAX_TARGETS)
      return usage_error(command, "too many targets (limit is %s)", "8");
    if (!seen)
      o->targets[o->ntargets++] = t;
    if (!p[n])
      break;
    p += n + 1;
  }
  o->check.target = o->targets[0];
  return FLYC_OK;
}

/* The options every command that reads .fly takes ({diagnostics}), and
   with the semantic pass's limits and library ({checking}); the defaults
   come from where they are defined. */
static void print_common_options(FILE *out, bool checking) {
  if (checking)
    fprintf(out,
            "  --step-limit=N           compile-time steps allowed (default %d)\n"
            "  --depth-limit=N          nested helper calls allowed (default %d)\n"
            "  --stdlib=DIR             where 'import std.x;' looks (default: $FLY_STDLIB,\n"
            "                           else the standard library of this build)\n",
            FLY_DEFAULT_STEP_LIMIT, FLY_DEFAULT_DEPTH_LIMIT);
  fprintf(out,
          "  --diagnostics=text|json  how to print diagnostics (json: one object a line)\n"
          "  --color=auto|always|never\n"
          "  --error-limit=N          stop after N errors (default %d, 0: no limit)\n"
          "  -Werror                  treat warnings as errors\n",
          FLY_DEFAULT_ERROR_LIMIT);
}

void flyc_print_usage(const char *usage, FILE *out) {
  static const char *const marks[] = {"{targets}", "{default}", "{checking}\n", "{diagnostics}\n"};
  for (const char *s = usage; *s;) {
    size_t k = 0, n = sizeof marks / sizeof marks[0];
    while (k < n && strncmp(s, marks[k], strlen(marks[k])) != 0)
      k++;
    if (k == 0)
      fputs(fly_target_names(), out);
    else if (k == 1)
      fputs(FLY_DEFAULT_TARGET, out);
    else if (k == 2 || k == 3)
      print_common_options(out, k == 2);
    else
      fputc(*s, out);
    s += k < n ? strlen(marks[k]) : 1;
  }
}

int flyc_parse_options(const char *command, const char *usage, unsigned accepted, int argc,
                       char **argv, FlycOptions *o, bool *help) {
  return flyc_parse_options_to(stderr, command, usage, accepted, argc, argv, o, help);
}

void flyc_options_defaults(FlycOptions *o) {
  memset(o, 0, sizeof *o);
  fly_check_options_init(&o->check);
  o->check.defines = o->defines;
  o->unit.color = -1;
  o->unit.error_limit = FLY_DEFAULT_ERROR_LIMIT;
  o->opt_level = 3;
}

int flyc_options_define(FILE *err, const char *command, FlycOptions *o, const char *def) {
  errout = err;
  return add_define(command, o, def);
}

int flyc_options_targets(FILE *err, const char *command, FlycOptions *o, const char *list) {
  errout = err;
  return add_targets(command, o, list);
}

int flyc_parse_options_to(FILE *err, const char *command, const char *usage, unsigned accepted,
                          int argc, char **argv, FlycOptions *o, bool *help) {
  errout = err;
  flyc_options_defaults(o);
  bool expression = accepted & FLYC_OPT_EXPR;
  bool positional_only = false;
  const char *what = expression ? "expression" : "input file";
  *help = false;
  const char *v;
  /* Options that take a value, and the form the value has. */
  static const char *const valued[][2] = {
      {"--diagnostics", "--diagnostics=text|json"},
      {"--color", "--color=auto|always|never"},
      {"--error-limit", "--error-limit=N"},
      {"--stdlib", "--stdlib=DIR"},
      {"--target", "--target=ARCH"},
      {"--step-limit", "--step-limit=N"},
      {"--depth-limit", "--depth-limit=N"},
      {"--import", "--import=FILE"},
      {"--svg", "--svg=FILE"},
      {"--emit", "--emit=fly|irdl|llvm|ptx|asm|cubin|hsaco|bundle"},
      {"--kernel", "--kernel=NAME"},
      {"-o", "-o FILE"},
      {"-D", "-D NAME=VALUE"}};
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
      if (strcmp(arg, valued[k][0]) == 0 && i + 1 == argc)
        return usage_error(command, "missing value: write %s", valued[k][1]);
    if (positional_only || !looks_like_option(arg, expression)) {
      if (o->file) {
        char msg[64];
        snprintf(msg, sizeof msg, "more than one %s ('%%s')", what);
        return usage_error(command, msg, arg);
      }
      o->file = arg;
    } else if (strcmp(arg, "--") == 0) {
      positional_only = true;
    } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      flyc_print_usage(usage, stdout);
      *help = true;
      return FLYC_OK;
    } else if ((accepted & FLYC_OPT_DUMP_AST) && strcmp(arg, "--dump-ast") == 0) {
      o->dump_ast = true;
    } else if ((v = flyc_option_value(argc, argv, &i, "--diagnostics"))) {
      if (strcmp(v, "text") == 0)
        o->unit.format = FLY_DIAG_TEXT;
      else if (strcmp(v, "json") == 0)
        o->unit.format = FLY_DIAG_JSON;
      else
        return usage_error(command, "--diagnostics takes 'text' or 'json', not '%s'", v);
    } else if ((v = flyc_option_value(argc, argv, &i, "--color"))) {
      if (strcmp(v, "auto") == 0)
        o->unit.color = -1;
      else if (strcmp(v, "always") == 0)
        o->unit.color = 1;
      else if (strcmp(v, "never") == 0)
        o->unit.color = 0;
      else
        return usage_error(command, "--color takes 'auto', 'always' or 'never', not '%s'", v);
    } else if ((v = flyc_option_value(argc, argv, &i, "--error-limit"))) {
      char *end;
      errno = 0;
      long n = strtol(v, &end, 10);
      if (!*v || *end || errno || n < 0 || n > 1000000)
        return usage_error(command,
                           "--error-limit takes a number from 0 (no limit) to "
                           "1000000, not '%s'",
                           v);
      o->unit.error_limit = (int)n;
    } else if (strcmp(arg, "-Werror") == 0) {
      o->unit.werror = true;
    } else if ((accepted & FLYC_OPT_STDLIB) &&
               (v = flyc_option_value(argc, argv, &i, "--stdlib"))) {
      o->unit.stdlib_dir = v;
    } else if ((accepted & FLYC_OPT_SEMA) && strncmp(arg, "-D", 2) == 0) {
      const char *def = arg[2] ? arg + 2 : argv[++i];
      if (add_define(command, o, def) != FLYC_OK)
        return FLYC_USAGE;
    } else if ((accepted & (FLYC_OPT_SEMA | FLYC_OPT_EXPR)) &&
               (v = flyc_option_value(argc, argv, &i, "--target"))) {
      if (add_targets(command, o, v) != FLYC_OK)
        return FLYC_USAGE;
    } else if ((accepted & (FLYC_OPT_SEMA | FLYC_OPT_EXPR)) &&
               (v = flyc_option_value(argc, argv, &i, "--step-limit"))) {
      if (parse_limit(command, "--step-limit", v, 1000000000L, &o->check.step_limit) != FLYC_OK)
        return FLYC_USAGE;
    } else if ((accepted & (FLYC_OPT_SEMA | FLYC_OPT_EXPR)) &&
               (v = flyc_option_value(argc, argv, &i, "--depth-limit"))) {
      long n;
      if (parse_limit(command, "--depth-limit", v, 10000, &n) != FLYC_OK)
        return FLYC_USAGE;
      o->check.depth_limit = (int)n;
    } else if ((accepted & FLYC_OPT_SPECS) && strcmp(arg, "--print-specializations") == 0) {
      o->print_specializations = true;
    } else if (expression && (v = flyc_option_value(argc, argv, &i, "--import"))) {
      if (o->nimports == FLYC_MAX_IMPORTS)
        return usage_error(command, "too many --import options (limit is %s)", "64");
      o->imports[o->nimports++] = v;
    } else if ((accepted & FLYC_OPT_DRAW) && strcmp(arg, "--table") == 0) {
      o->table = true;
    } else if ((accepted & FLYC_OPT_DRAW) && (v = flyc_option_value(argc, argv, &i, "--svg"))) {
      o->svg = v;
    } else if ((accepted & FLYC_OPT_COMPILE) && (v = flyc_option_value(argc, argv, &i, "--emit"))) {
      static const char *const kinds[] = {"fly", "irdl",  "llvm",  "ptx",
                                          "asm", "cubin", "hsaco", "bundle"};
      bool known = false;
      for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        known = known || strcmp(v, kinds[k]) == 0;
      if (!known)
        return usage_error(command,
                           "--emit takes 'fly', 'irdl', 'llvm', 'ptx', 'asm', 'cubin', 'hsaco' or "
                           "'bundle', not '%s'",
                           v);
      o->emit = v;
    } else if ((accepted & FLYC_OPT_COMPILE) &&
               (v = flyc_option_value(argc, argv, &i, "--kernel"))) {
      o->check.only_kernel = v;
    } else if ((accepted & FLYC_OPT_COMPILE) && strcmp(arg, "--split-input-file") == 0) {
      o->split = true;
    } else if ((accepted & FLYC_OPT_COMPILE) && strcmp(arg, "--locations") == 0) {
      o->locations = true;
    } else if ((accepted & FLYC_OPT_COMPILE) && strcmp(arg, "-o") == 0) {
      o->output = argv[++i];
    } else if ((accepted & FLYC_OPT_COMPILE) && strcmp(arg, "--no-cache") == 0) {
      o->no_cache = true;
    } else if ((accepted & FLYC_OPT_COMPILE) && strncmp(arg, "-O", 2) == 0) {
      if (arg[2] < '0' || arg[2] > '3' || arg[3] != '\0')
        return usage_error(command, "-O takes a level from 0 to 3 (-O0 ... -O3), not '%s'", arg);
      o->opt_level = arg[2] - '0';
    } else {
      return usage_error(command, "unknown option '%s'", arg);
    }
  }
  if (!o->file) {
    char msg[32];
    snprintf(msg, sizeof msg, "no %s", what);
    return usage_error(command, "%s", msg);
  }
  return FLYC_OK;
}

int flyc_finish(FlyUnit *u) {
  int status = fly_unit_ok(u) ? FLYC_OK : FLYC_ERRORS;
  fly_unit_release(u);
  return status;
}
