/* fly_trace.h — the tracer: checked kernels to Fly IR.
 *
 * The semantic pass runs each kernel's body once per specialisation; with
 * the tracer's emitter installed (fly_emit.h) every runtime operation it
 * meets becomes MLIR: Fly dialect operations for tensors, atoms and the
 * layout algebra on runtime values, and the upstream gpu, arith, math, scf
 * and vector dialects for the rest. Static values are folded by the
 * interpreter, so static layouts appear only as type parameters. Every
 * operation carries its .fly source location. */
#ifndef FLY_TRACE_H
#define FLY_TRACE_H

#include "fly_check.h"
#include "fly_mlir.h"

/* Checks and traces the unit's kernels (o->only_kernel: just that one)
 * into a new module, verified. False after errors, reported in the unit's
 * diagnostics (a verifier failure is an internal error naming the kernel
 * and the location). */
bool fly_trace_unit(FlyUnit *u, const FlyCheckOptions *o, FlyMlir *m, MlirModule *out);

#endif
