/* fly_ptxas.c — running ptxas (fly_ptxas.h). */
#include "fly_ptxas.h"

#include "fly_tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
  char archopt[64];
  snprintf(archopt, sizeof archopt, "-arch=%s", arch);
  const char *opts[] = {archopt, "-O3", NULL};
  FlyToolRun run = {.tool = tool,
                    .opts = opts,
                    .in_name = "in.ptx",
                    .in = ptx,
                    .in_len = ptx_len,
                    .out_name = "out.cubin",
                    .failure = "ptxas rejected the PTX"};
  char *cubin = fly_tool_run(&run, len, why);
  free(tool);
  return cubin;
}
