/* fuzz_layout_text.c — libFuzzer entry for the algebra's text reader.
 *
 * Any input must parse or fail with a message, never crash or leak. What
 * parses must print canonically and read back to the same text, and the
 * algebra run on it must either succeed or report an error. */
#include <stdlib.h>
#include <string.h>

#include "fly_layout_text.h"

/* A few operations whose cost is polynomial in the number of modes. */
static void exercise(FlyAlgebra *A, FlyLayout *L) {
  int64_t size;
  fly_layout_coalesce(A, L);
  fly_layout_right_inverse(A, L);
  fly_layout_left_inverse(A, L);
  if (fly_layout_size(A, L, &size))
    fly_layout_complement(A, L, fly_tuple_int(A, size));
  fly_layout_composition(A, L, L);
  fly_layout_logical_divide(A, L, fly_tiler_layout(A, L));
  fly_layout_recast(A, L, 16, 32);
  fly_layout_value_at(A, L, 0);
  fly_layout_coshape(A, L);
  fly_algebra_clear_error(A);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  FlyAlgebra A;
  FlyValue v, again;
  fly_algebra_init(&A);
  if (fly_parse_value(&A, (const char *)data, size, &v)) {
    char *text = fly_value_str(&A, &v);
    if (!text || !fly_parse_value(&A, text, strlen(text), &again))
      abort(); /* the printer wrote something the reader rejects */
    char *twice = fly_value_str(&A, &again);
    if (!twice || strcmp(text, twice) != 0)
      abort(); /* print o parse is not the identity on canonical text */
    if (v.kind == FLY_VALUE_LAYOUT)
      exercise(&A, v.as.layout);
  } else if (fly_algebra_message(&A)[0] == '\0') {
    abort(); /* a failure must say why */
  }
  fly_algebra_release(&A);
  return 0;
}
