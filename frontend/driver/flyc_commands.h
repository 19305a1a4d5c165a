/* flyc_commands.h — the flyc commands; each takes the arguments after its
 * name and returns the exit status (0 success, 1 errors reported, 2 usage). */
#ifndef FLYC_COMMANDS_H
#define FLYC_COMMANDS_H

#include <stdbool.h>

int flyc_parse_command(int argc, char **argv);
int flyc_check_command(int argc, char **argv);
int flyc_eval_command(int argc, char **argv);
int flyc_layout_command(int argc, char **argv);
int flyc_compile_command(int argc, char **argv);
int flyc_cache_command(int argc, char **argv);
int flyc_vocabulary_command(int argc, char **argv);
/* flyc vocabulary --table=NAME: false when there is no such table. */
bool flyc_print_table(const char *name);
int flyc_inspect_command(int argc, char **argv);
int flyc_run_command(int argc, char **argv);

#endif
