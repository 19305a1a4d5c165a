/* flyc_run_args.h — the arguments of `flyc run` (flyc_run.c): NAME=VALUE
 * read from the command line, .npy files loaded, host data generated, and
 * tensors written back as .npy. No device is involved here. */
#ifndef FLYC_RUN_ARGS_H
#define FLYC_RUN_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fly/runtime.h"
#include "fly_npy.h"

typedef enum FlycRunValue {
  FLYC_RUN_RANDN = 1, /* normal(0, 1); integers: round(4 * normal), clamped to the type */
  FLYC_RUN_RAND,      /* uniform [0, 1); integers: uniform 0 to 15 */
  FLYC_RUN_ZEROS,
  FLYC_RUN_ONES,
  FLYC_RUN_FILE,  /* @FILE.npy */
  FLYC_RUN_INT,   /* a scalar: an integer literal */
  FLYC_RUN_FLOAT, /* a scalar: a floating literal */
} FlycRunValue;

enum { FLYC_RUN_NAME_MAX = 128 };

typedef struct FlycRunArg {
  const char *text;             /* "A=randn:f32:1024", as written */
  const char *value_text;       /* what follows the '=' */
  char name[FLYC_RUN_NAME_MAX]; /* "A" */
  FlycRunValue value;
  /* Tensors: the element type and the row-major shape (for FILE, known
     once loaded). */
  FlyrtDtype dtype;
  int rank;
  int64_t shape[FLYRT_MAX_RANK];
  const char *path; /* FILE */
  FlyNpyArray npy;  /* FILE, once loaded: its data, already in dtype */
  int64_t i;        /* INT */
  double f;         /* FLOAT */
  void *host;       /* generated data, malloc'd (NULL for zeros and files) */
} FlycRunArg;

/* A random number generator (xoshiro256**), so that --seed reproduces the
   same arguments on every machine. */
typedef struct FlycRng {
  uint64_t s[4];
  double spare; /* the second normal of the last Box-Muller pair */
  bool has_spare;
} FlycRng;

void flyc_rng_seed(FlycRng *rng, uint64_t seed);

/* The element type named "f32", "bf16" ...: the ones `flyc run` makes
   (f16 bf16 f32 f64 i8 i16 i32 i64); FLYRT_DTYPE_NONE for anything else. */
FlyrtDtype flyc_run_dtype(const char *name, size_t len);

/* Reads NAME=VALUE (see `flyc run --help`). False with the reason in why,
   which is a usage error: the text's form, not what a kernel takes. */
bool flyc_run_arg_parse(const char *text, FlycRunArg *a, char *why, size_t why_size);

static inline bool flyc_run_arg_is_tensor(const FlycRunArg *a) {
  return a->value != FLYC_RUN_INT && a->value != FLYC_RUN_FLOAT;
}

/* For @FILE.npy: reads the file and takes its dtype and shape. A float32
   file given to a bf16 parameter (`want`) is rounded to bf16, as NumPy has
   no bf16. False with the reason (the file named) in why. */
bool flyc_run_arg_load(FlycRunArg *a, FlyrtDtype want, char *why, size_t why_size);

/* Elements and bytes of a tensor argument; checked not to overflow when it
   was parsed or loaded. */
uint64_t flyc_run_arg_count(const FlycRunArg *a);
uint64_t flyc_run_arg_bytes(const FlycRunArg *a);

/* The host bytes to copy to the device: the file's data, or data generated
   from rng into a->host; NULL for zeros (the device memory is cleared
   instead) and when memory runs out (then *oom). */
const void *flyc_run_arg_host_data(FlycRunArg *a, FlycRng *rng, bool *oom);

/* Writes rank x shape elements of dtype at data to path as .npy; bf16 as
   float32, which NumPy reads. False with the reason in why. */
bool flyc_run_write_npy(const char *path, FlyrtDtype dtype, int rank, const int64_t *shape,
                        const void *data, char *why, size_t why_size);

void flyc_run_arg_release(FlycRunArg *a);

#endif
