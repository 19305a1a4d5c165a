/* flyc: the Fly compiler driver.
 *
 * The first argument names a command; each command parses the rest of the
 * arguments itself (flyc_commands.h). Exit codes follow the usual
 * convention for command-line tools: 0 on success, 2 for a usage error, so that
 * scripts can tell "you called me wrong" from a compile error (1).
 */
#include <stdio.h>
#include <string.h>

#include "fly_output.h"
#include "fly_version.h"
#include "flyc_commands.h"

enum { EXIT_OK = 0, EXIT_ERROR = 1, EXIT_USAGE = 2 };

static void print_usage(FILE *out) {
  fputs("usage: flyc <command> [options] [args]\n"
        "       flyc --help | --version\n"
        "\n"
        "Commands:\n"
        "  parse FILE   report syntax errors; --dump-ast prints the syntax tree\n"
        "  check FILE   report every error in FILE and the files it imports\n"
        "  eval EXPR    evaluate a constant expression and print its value\n"
        "  layout EXPR  print a layout in CuTe's form; --table and --svg draw it\n"
        "  compile FILE compile the kernels: a bundle, PTX, a code object ...\n"
        "  inspect B    print what the bundle B holds\n"
        "  run FILE     launch a kernel of a .fly or a bundle on the GPU, with\n"
        "               arguments made from the command line; time it with --bench\n"
        "  cache ACTION the disk cache of compiled kernels: stats, clear, dir\n"
        "  vocabulary   every word the compiler knows, by kind (for editors)\n"
        "\n"
        "Run 'flyc COMMAND --help' for a command's options.\n"
        "\n"
        "Options:\n"
        "  --help      print this help and exit\n"
        "  --version   print the version and exit\n",
        out);
}

static void print_version(void) { printf("flyc %s\n", FLY_VERSION); }

/* Every usage error ends with the same pointer to --help, so a user who mistyped
   one word learns where the full list is without being shown all of it. */
static int usage_error(const char *what, const char *arg) {
  fprintf(stderr, "flyc: error: unknown %s '%s'\n", what, arg);
  fputs("run 'flyc --help' for usage\n", stderr);
  return EXIT_USAGE;
}

/* A lone "-" conventionally names standard input, so it is not an option. */
static int is_option(const char *arg) { return arg[0] == '-' && arg[1] != '\0'; }

typedef struct Command {
  const char *name;
  int (*run)(int argc, char **argv);
} Command;

static const Command commands[] = {
    {"parse", flyc_parse_command},     {"check", flyc_check_command},
    {"eval", flyc_eval_command},       {"layout", flyc_layout_command},
    {"compile", flyc_compile_command}, {"cache", flyc_cache_command},
    {"inspect", flyc_inspect_command}, {"vocabulary", flyc_vocabulary_command},
    {"run", flyc_run_command},
};

/* What a command printed is flushed here, once it is done; a write to
   standard output that failed, now or on the way (a full disk, /dev/full),
   is an error. */
static int flush_stdout(int status) {
  char why[256];
  if (fly_output_flush_stdout(why, sizeof why))
    return status;
  fprintf(stderr, "flyc: error: %s\n", why);
  return status == EXIT_OK ? EXIT_ERROR : status;
}

static int run(int argc, char **argv) {
  /* Diagnostics are written piece by piece; unbuffered, each piece would be
     a system call. The buffer is flushed at exit. */
  static char stderr_buffer[1 << 16];
  setvbuf(stderr, stderr_buffer, _IOFBF, sizeof stderr_buffer);
  if (argc < 2) {
    print_usage(stderr);
    return EXIT_USAGE;
  }
  const char *first = argv[1];
  if (strcmp(first, "--help") == 0) {
    print_usage(stdout);
    return EXIT_OK;
  }
  if (strcmp(first, "--version") == 0) {
    print_version();
    return EXIT_OK;
  }
  if (is_option(first))
    return usage_error("option", first);
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(first, commands[i].name) == 0)
      return commands[i].run(argc - 2, argv + 2);
  return usage_error("command", first);
}

/* Only the first argument decides what flyc does; the command parses the
   rest. */
int main(int argc, char **argv) { return flush_stdout(run(argc, argv)); }
