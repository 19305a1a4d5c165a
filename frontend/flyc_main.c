/* flyc: the Fly compiler driver.
 *
 * This version only answers --help and --version; the commands (compile, run,
 * check, eval, layout) arrive with later versions. Exit codes follow the usual
 * convention for command-line tools: 0 on success, 2 for a usage error, so that
 * scripts can tell "you called me wrong" from a compile error (1).
 */
#include <stdio.h>
#include <string.h>

#include "fly_version.h"

enum { EXIT_OK = 0, EXIT_USAGE = 2 };

static void print_usage(FILE *out) {
  fputs("usage: flyc <command> [options] [args]\n"
        "       flyc --help | --version\n"
        "\n"
        "Commands: (none yet in this version)\n"
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

/* Only the first argument decides what flyc does; the commands to come will
   parse the rest themselves. */
int main(int argc, char **argv) {
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
  return usage_error("command", first);
}
