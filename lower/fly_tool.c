/* fly_tool.c — running an external tool on one input (fly_tool.h). */
#include "fly_tool.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fly_source.h"

extern char **environ;

enum { MAX_OPTS = 16 };

static char *fail(char **why, const char *msg, const char *detail) {
  size_t n = strlen(msg) + (detail ? strlen(detail) : 0) + 4;
  *why = malloc(n);
  if (*why)
    snprintf(*why, n, "%s%s%s", msg, detail ? ": " : "", detail ? detail : "");
  return NULL;
}

static bool write_input(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return false;
  bool ok = fwrite(data, 1, len, f) == len;
  return fclose(f) == 0 && ok;
}

/* TOOL OPTS... IN -o OUT with its output and errors in log; the exit
   status (-1 when it could not be started or did not exit). */
static int spawn(const FlyToolRun *r, char *in, char *out, const char *log) {
  char *argv[MAX_OPTS + 5];
  int n = 0;
  argv[n++] = (char *)r->tool;
  for (int i = 0; r->opts && r->opts[i] && n < MAX_OPTS; i++)
    argv[n++] = (char *)r->opts[i];
  argv[n++] = in;
  argv[n++] = "-o";
  argv[n++] = out;
  argv[n] = NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 2, 1);
  pid_t pid;
  int status = -1;
  if (posix_spawn(&pid, r->tool, &fa, NULL, argv, environ) == 0 && waitpid(pid, &status, 0) < 0)
    status = -1;
  posix_spawn_file_actions_destroy(&fa);
  return status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The log as the detail of a failure: its last newline dropped, as the
   message ends the line itself. */
static char *failed(const FlyToolRun *r, const char *log, char **why) {
  size_t n = 0;
  const char *ignored;
  char *msg = fly_read_file(log, &n, &ignored);
  if (msg && n && msg[n - 1] == '\n')
    msg[n - 1] = 0;
  fail(why, r->failure, msg && *msg ? msg : NULL);
  free(msg);
  return NULL;
}

char *fly_tool_run(const FlyToolRun *r, size_t *len, char **why) {
  *why = NULL;
  const char *tmp = getenv("TMPDIR");
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/flyc-tool-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir))
    return fail(why, "cannot make a temporary directory for the toolchain", NULL);
  char in[1200], out[1200], log[1200];
  snprintf(in, sizeof in, "%s/%s", dir, r->in_name);
  snprintf(out, sizeof out, "%s/%s", dir, r->out_name);
  snprintf(log, sizeof log, "%s/log.txt", dir);
  char *result = NULL;
  if (!write_input(in, r->in, r->in_len)) {
    fail(why, "cannot write the toolchain's input in", dir);
  } else if (spawn(r, in, out, log) != 0) {
    failed(r, log, why);
  } else {
    const char *ignored;
    result = fly_read_file(out, len, &ignored);
    if (!result)
      fail(why, r->failure, "it wrote nothing");
  }
  unlink(in);
  unlink(out);
  unlink(log);
  rmdir(dir);
  return result;
}
