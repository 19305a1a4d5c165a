/* fly_kernel_record.h — the semantic pass's side of fly_kernel_info.h:
 * recording a specialisation's signature and its launch block. */
#ifndef FLY_KERNEL_RECORD_H
#define FLY_KERNEL_RECORD_H

#include "fly_interp.h"
#include "fly_kernel_info.h"

/* A new record, appended to I->options.kernel_info, for the kernel k bound
   to params (decls its parameters). NULL after reporting an error. */
FlyKernelInfo *fly_kernel_record_begin(FlyInterp *I, const FlyNode *k, int n,
                                       const FlyNode *const *decls, FlyVal *const *params,
                                       const char *spec);

/* Runs run(I, launch, arg), the launch block's evaluation, with the
   recording emitter installed and the n runtime parameters' values given
   their operands. False if it reported errors. */
bool fly_kernel_record_launch(FlyInterp *I, FlyKernelInfo *info, int n, FlyVal *const *params,
                              const FlyNode *launch,
                              void (*run)(FlyInterp *I, const FlyNode *launch, void *arg),
                              void *arg);

/* The value v of launch setting `field` (0 grid, 1 block, 2 shared). */
bool fly_kernel_record_field(FlyInterp *I, FlyKernelInfo *info, int field, const FlyVal *v,
                             const FlyNode *at);

/* A launch requirement whose condition cond depends on the runtime
   arguments; msg[0..len) its message (NULL: none). */
bool fly_kernel_record_require(FlyInterp *I, FlyKernelInfo *info, const FlyVal *cond,
                               const char *msg, size_t len, const FlyNode *at);

#endif
