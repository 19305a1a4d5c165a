/* fly_builtins.h — the table of builtin functions, shared by the files that
 * implement them (fly_builtins_*.c). */
#ifndef FLY_BUILTINS_H
#define FLY_BUILTINS_H

#include "fly_interp.h"

/* A builtin receives its arguments with a method's receiver first: x.f(a)
   calls f with (x, a). */
typedef const FlyVal *(*FlyBuiltinFn)(FlyInterp *I, const FlyArgs *a);

typedef struct FlyBuiltin {
  const char *name;
  int min_args, max_args; /* max -1: any number */
  FlyBuiltinFn fn;
  const char *usage; /* for messages: "size(x)" */
} FlyBuiltin;

/* Each group's table, ended by an entry with a NULL name. */
extern const FlyBuiltin fly_algebra_builtins[];
extern const FlyBuiltin fly_gpu_builtins[];
extern const FlyBuiltin fly_data_builtins[];

/* Argument helpers: each reports its own error. */
bool fly_arg_int(FlyInterp *I, const FlyArgs *a, int i, const char *what, int64_t *out);
const FlyLayout *fly_arg_layout(FlyInterp *I, const FlyArgs *a, int i, const char *what);
const FlyType *fly_arg_type(FlyInterp *I, const FlyArgs *a, int i, const char *what);

/* The algebra on tensors whose strides are given at launch
   (fly_tensor_probe.c). fly_tensor_probe gives the tensor's layout: exact
   when static, with probes for its runtime strides when only the shape is
   static, NULL (no error) otherwise. fly_tensor_unprobe makes the tensor of
   a result R of the algebra on that layout, each stride static or a runtime
   value. */
#define FLY_PROBE_MAX 16
typedef struct FlyProbe {
  int n;
  const FlyVal *leaf[FLY_PROBE_MAX]; /* the runtime strides probed, in order */
} FlyProbe;
const FlyLayout *fly_tensor_probe(FlyInterp *I, const FlyTensor *t, FlyProbe *p);
const FlyVal *fly_tensor_unprobe(FlyInterp *I, const FlyVal *like, const FlyLayout *R,
                                 const FlyProbe *p, const FlyNode *at);

#endif
