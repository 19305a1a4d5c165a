/* fly_ptxas.h — cubins from PTX with CUDA's ptxas, when it is installed.
 *
 * ptxas is found through FLYC_PTXAS, then PATH, then /usr/local/cuda/bin.
 * Only --emit=cubin needs it; PTX alone needs no CUDA tool, the driver
 * compiles it when the module is loaded. */
#ifndef FLY_PTXAS_H
#define FLY_PTXAS_H

#include <stddef.h>

/* The path of ptxas (malloc'd), or NULL when there is none. */
char *fly_ptxas_find(void);
/* The cubin for arch (sm_90 ...) of the PTX text, malloc'd with its length
   in *len; NULL with the reason in *why (malloc'd). */
char *fly_ptxas_compile(const char *ptx, size_t ptx_len, const char *arch, size_t *len, char **why);

#endif
