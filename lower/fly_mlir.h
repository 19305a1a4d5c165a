/* fly_mlir.h — the MLIR context Fly builds IR in, and small helpers over the
 * MLIR C API for making operations.
 *
 * A FlyMlir owns one context with the upstream dialects registered and the
 * Fly dialect (fly.irdl.mlir, embedded) loaded, and a diagnostic handler
 * that collects MLIR's messages so that the caller can report them as its
 * own. Operations are made generically (name, operands, results,
 * attributes, regions) and inserted at the builder's insertion point. */
#ifndef FLY_MLIR_H
#define FLY_MLIR_H

#include <stdbool.h>
#include <stdio.h>

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

enum { FLY_MLIR_MAX_PMS = 24 };

typedef struct FlyMlir {
  MlirContext ctx;
  /* Pass managers kept for reuse, by pipeline text (fly_pipeline.c), and
     whether the LLVM translations are registered. */
  MlirPassManager pms[FLY_MLIR_MAX_PMS];
  char *pm_text[FLY_MLIR_MAX_PMS];
  int npms;
  bool translations;
  char *messages; /* MLIR diagnostics since the last fly_mlir_take_messages */
  size_t len, cap;
  /* The first error with a file location, for a caret at the .fly source
     (err_msg malloc'd; NULL when none). */
  char *err_msg;
  char err_file[512];
  unsigned err_line, err_col;
} FlyMlir;

/* False (after printing why on stderr) when the dialect cannot be loaded:
   an internal error, the embedded dialect being part of the compiler. */
bool fly_mlir_init(FlyMlir *m);
void fly_mlir_release(FlyMlir *m);
/* Forgets the messages and the first error, for the next compile in the
   same (warm) context. */
void fly_mlir_reset(FlyMlir *m);
/* The MLIR diagnostics collected so far, one a line (the caller frees),
   or NULL when there were none. */
char *fly_mlir_take_messages(FlyMlir *m);

/* The embedded dialect's text (for --emit=irdl and for tests). */
extern const char fly_dialect_irdl[];

/* A type from its textual form; null type when the text is not a type. */
MlirType fly_mlir_type(FlyMlir *m, const char *text);
MlirAttribute fly_mlir_str_attr(FlyMlir *m, const char *s);
MlirNamedAttribute fly_mlir_named(FlyMlir *m, const char *name, MlirAttribute a);

/* Where new operations go: at the end of `block`, or before `before` when
   that is not null. */
typedef struct FlyInsert {
  MlirBlock block;
  MlirOperation before;
} FlyInsert;

/* One generic operation, inserted at ip. Returns the operation. */
MlirOperation fly_mlir_op(FlyMlir *m, FlyInsert ip, MlirLocation loc, const char *name, int nres,
                          const MlirType *res, int nopd, const MlirValue *opd, int nattr,
                          const MlirNamedAttribute *attr, int nregion, MlirRegion *regions);
/* The same, for an operation with one result: that result. */
MlirValue fly_mlir_op1(FlyMlir *m, FlyInsert ip, MlirLocation loc, const char *name, MlirType res,
                       int nopd, const MlirValue *opd, int nattr, const MlirNamedAttribute *attr);

/* A call of the LLVM intrinsic `name` ("llvm.floor") on n values, named
   with its type as LLVM names them ("llvm.floor.f32", "llvm.floor.v4f16")
   and giving a t. The NVVM and ROCDL conversions rewrite the math dialect
   into calls of their device libraries, which Fly does not use; a named
   intrinsic stays as it is, and both back ends select the instruction
   (cvt.rmi, v_floor_f32 ...). */
MlirValue fly_mlir_intrinsic(FlyMlir *m, FlyInsert ip, MlirLocation loc, const char *name,
                             MlirType t, int n, const MlirValue *v);
/* The same by its full name ("llvm.fptosi.sat.i32.f32", "llvm.nvvm.ff.to.e4m3x2.rn"), for
   intrinsics overloaded on more than their result or on nothing; the part of
   such a name a type gives (".f32", ".v4f16") is written to buf. */
MlirValue fly_mlir_call_intrinsic(FlyMlir *m, FlyInsert ip, MlirLocation loc, const char *full,
                                  MlirType t, int n, const MlirValue *v);
void fly_mlir_intrinsic_suffix(MlirType t, char *buf, size_t n);

/* Prints an operation's text to a stream (generic form for Fly ops). */
void fly_mlir_print(MlirOperation op, FILE *out, bool locations);

#endif
