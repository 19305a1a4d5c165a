/* fly_layout_text.h — reading the canonical text form of algebra values.
 *
 *   tuple     8   (8,16)   (4,(2,3))   ()   coordinates may hold _
 *   layout    8:1   (8,16):(1,8)   (4,(2,3)):(1,(4,8))   strides may be 0 or negative
 *   tiler     _   4   4:2   (4:1,8:2)   ((2,2):(1,4),_)
 *   swizzle   S<3,3,3>
 *   composed  S<3,3,3> o 0 o (8,8):(8,1)   (8,8):(8,1) o (2,0) o (4,4):(1@0,1@1)
 *
 * Blanks between tokens are accepted; printing never emits them except the
 * " o " of composed layouts. Errors give the byte offset of the offending
 * character through fly_algebra_error_pos. */
#ifndef FLY_LAYOUT_TEXT_H
#define FLY_LAYOUT_TEXT_H

#include "fly_swizzle.h"

typedef enum FlyValueKind {
  FLY_VALUE_TUPLE,
  FLY_VALUE_LAYOUT,
  FLY_VALUE_TILER,
  FLY_VALUE_SWIZZLE,
  FLY_VALUE_COMPOSED,
} FlyValueKind;

typedef struct FlyValue {
  FlyValueKind kind;
  union {
    FlyTuple *tuple;
    FlyLayout *layout;
    FlyTiler *tiler;
    FlySwizzle swizzle;
    FlyComposed *composed;
  } as;
} FlyValue;

/* Each parser reads the whole text (len bytes, no terminator needed) as one
 * value of its kind; trailing text is an error. */
FlyTuple *fly_parse_tuple(FlyAlgebra *A, const char *text, size_t len);
FlyLayout *fly_parse_layout(FlyAlgebra *A, const char *text, size_t len);
/* Patterns: a tuple (coordinates may hold `_`) or a layout whose leaves may
 * be `?`, known only when the kernel runs (fly_tuple_dynamic leaves with no
 * handle yet). A layout pattern keeps the structure it is written with,
 * rank-1 levels included, and is not checked for size. The Fly dialect
 * writes its types' layouts this way; fly_symbolic.h computes with them. */
FlyTuple *fly_parse_tuple_pattern(FlyAlgebra *A, const char *text, size_t len);
FlyLayout *fly_parse_layout_pattern(FlyAlgebra *A, const char *text, size_t len);
/* A tiler; a plain layout is a tiler too, and an integer n means n:1. */
FlyTiler *fly_parse_tiler(FlyAlgebra *A, const char *text, size_t len);
bool fly_parse_swizzle(FlyAlgebra *A, const char *text, size_t len, FlySwizzle *out);
FlyComposed *fly_parse_composed(FlyAlgebra *A, const char *text, size_t len);
/* Whichever of the five the text is: a layout wins over a tiler, a tuple
 * (without layouts inside) over a tiler. */
bool fly_parse_value(FlyAlgebra *A, const char *text, size_t len, FlyValue *out);

char *fly_value_str(FlyAlgebra *A, const FlyValue *v);

#endif
