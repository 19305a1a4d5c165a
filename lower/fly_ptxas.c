/* fly_ptxas.c — running ptxas (fly_ptxas.h). */
#include "fly_ptxas.h"

#include "fly_source.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

char *fly_ptxas_find(void) {
  const char *env = getenv("FLYC_PTXAS");
  if (env && *env)
    return access(env, X_OK) == 0 ? strdup(env) : NULL;
  const char *path = getenv("PATH");
  char buf[4096];
  while (path && *path) {
    size_t n = strcspn(path, ":");
    snprintf(buf, sizeof buf, "%.*s/ptxas", (int)n, path);
    if (n && access(buf, X_OK) == 0)
      return strdup(buf);
    path += n + (path[n] == ':');
  }
  return access("/usr/local/cuda/bin/ptxas", X_OK) == 0 ? strdup("/usr/local/cuda/bin/ptxas")
                                                        : NULL;
}

static char *fail(char **why, const char *msg, const char *detail) {
  size_t n = strlen(msg) + (detail ? strlen(detail) : 0) + 4;
  *why = malloc(n);
  if (*why)
    snprintf(*why, n, "%s%s%s", msg, detail ? ": " : "", detail ? detail : "");
  return NULL;
}

char *fly_ptxas_compile(const char *ptx, size_t ptx_len, const char *arch, size_t *len,
                        char **why) {
  *why = NULL;
  char *tool = fly_ptxas_find();
  if (!tool)
    return fail(why,
                "--emit=cubin needs CUDA's ptxas, which is not installed here (set "
                "FLYC_PTXAS to its path, or use --emit=ptx: the driver compiles PTX)",
                NULL);
  const char *tmp = getenv("TMPDIR");
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/flyc-ptxas-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    free(tool);
    return fail(why, "cannot make a temporary directory for ptxas", NULL);
  }
  char in[1100], out[1100], log[1100], archopt[64];
  snprintf(in, sizeof in, "%s/in.ptx", dir);
  snprintf(out, sizeof out, "%s/out.cubin", dir);
  snprintf(log, sizeof log, "%s/log.txt", dir);
  snprintf(archopt, sizeof archopt, "-arch=%s", arch);
  char *result = NULL;
  FILE *f = fopen(in, "wb");
  if (f && fwrite(ptx, 1, ptx_len, f) == ptx_len && fclose(f) == 0) {
    char *argv[] = {tool, archopt, "-O3", in, "-o", out, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 2, 1);
    pid_t pid;
    int status = -1;
    if (posix_spawn(&pid, tool, &fa, NULL, argv, environ) == 0)
      waitpid(pid, &status, 0);
    posix_spawn_file_actions_destroy(&fa);
    if (status == 0) {
      const char *ignored;
      result = fly_read_file(out, len, &ignored);
      if (!result)
        fail(why, "ptxas wrote no cubin", NULL);
    } else {
      size_t n = 0;
      const char *ignored;
      char *msg = fly_read_file(log, &n, &ignored);
      if (msg && n && msg[n - 1] == '\n')
        msg[n - 1] = 0; /* the message ends the line itself */
      fail(why, "ptxas rejected the PTX", msg);
      free(msg);
    }
  } else {
    if (f)
      fclose(f);
    fail(why, "cannot write the PTX for ptxas", NULL);
  }
  unlink(in);
  unlink(out);
  unlink(log);
  rmdir(dir);
  free(tool);
  return result;
}
