/* fly_tool.h — running an external tool of the toolchain (CUDA's ptxas,
 * ld.lld) on one input.
 *
 * The tool works in a private temporary directory made for the one run
 * under $TMPDIR (or /tmp): the input is written there, the tool reads it
 * and writes its output beside it, and the directory is removed whatever
 * happens, so a failed compile leaves no files behind. What the tool
 * prints goes to a log that becomes the message when it fails. */
#ifndef FLY_TOOL_H
#define FLY_TOOL_H

#include <stddef.h>

typedef struct FlyToolRun {
  const char *tool;        /* its path */
  const char *const *opts; /* options before the files, NULL-terminated */
  const char *in_name;     /* the input's file name ("in.ptx"), its bytes and length */
  const void *in;
  size_t in_len;
  const char *out_name; /* the output's file name; the tool is run as TOOL OPTS... IN -o OUT */
  const char *failure;  /* what a failure is called: "ptxas rejected the PTX" */
} FlyToolRun;

/* The tool's output, malloc'd with its length in *len; NULL with the reason
   in *why (malloc'd: `failure` and what the tool printed). */
char *fly_tool_run(const FlyToolRun *run, size_t *len, char **why);

#endif
