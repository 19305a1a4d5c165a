/* fly_composed.c — composed layouts inner o offset o outer (fly_swizzle.h):
 * construction, evaluation, slicing, recast and text. */
#include "fly_layout_internal.h"
#include "fly_strbuf.h"
#include "fly_swizzle.h"

static FlyComposed *new_composed(FlyAlgebra *A, FlyLayout *outer) {
  FlyComposed *C = outer ? fly_alloc(A, sizeof *C) : NULL;
  if (C)
    C->layout = outer;
  return C;
}

FlyComposed *fly_composed_make(FlyAlgebra *A, FlySwizzle s, int64_t offset, FlyLayout *L) {
  if (!L)
    return NULL;
  FlySwizzle checked;
  if (!fly_swizzle_make(A, s.bits, s.base, s.shift, &checked))
    return NULL;
  if (fly_layout_has_basis(L)) {
    char *sw = fly_swizzle_str(A, checked), *ls = fly_layout_str(A, L);
    return fly_fail(A, "%s takes integers, but %s has basis strides: its values are coordinates",
                    sw ? sw : "?", ls ? ls : "?");
  }
  FlyComposed *C = new_composed(A, L);
  if (C) {
    C->swizzle = checked;
    C->offset = offset;
  }
  return C;
}

FlyComposed *fly_composed_make_layout(FlyAlgebra *A, FlyLayout *inner, const FlyTuple *offset,
                                      FlyLayout *outer) {
  if (!inner || !offset || !outer)
    return NULL;
  FlyTuple *zero = fly_layout_coprofile(A, outer), *reach = fly_layout_coshape(A, outer);
  if (!zero || !reach)
    return NULL;
  /* An outer layout that gives only 0, such as what slicing leaves, takes
     a coordinate offset as well. */
  bool only_zero = reach->kind == FLY_TUPLE_INT && reach->value == 1;
  if (zero->kind != FLY_TUPLE_SEQ && !(only_zero && offset->kind == FLY_TUPLE_SEQ)) {
    if (offset->kind != FLY_TUPLE_INT) {
      char *o = fly_tuple_str(A, offset);
      return fly_fail(A,
                      "the offset %s of a composed layout whose outer layout gives integers "
                      "must be an integer",
                      o ? o : "?");
    }
  } else if (offset->kind == FLY_TUPLE_INT && offset->value == 0) {
    offset = zero; /* 0: the origin */
  } else if (offset->kind != FLY_TUPLE_SEQ) {
    char *o = fly_tuple_str(A, offset), *z = fly_tuple_str(A, zero);
    return fly_fail(A,
                    "the offset %s of a composed layout whose outer layout gives coordinates "
                    "such as %s must be a coordinate",
                    o ? o : "?", z ? z : "?");
  } else if (!fly_tuple_arith(A, FLY_ARITH_ADD, offset, fly_layout_coshape(A, outer))) {
    return NULL; /* it must add to the values (the coshape has no zero leaf to excuse it) */
  }
  FlyComposed *C = new_composed(A, outer);
  if (C) {
    C->inner = inner;
    C->offset = offset->kind == FLY_TUPLE_INT ? offset->value : 0;
    C->offset_crd = offset->kind == FLY_TUPLE_SEQ ? (FlyTuple *)offset : NULL;
  }
  return C;
}

FlyTuple *fly_composed_offset(FlyAlgebra *A, const FlyComposed *C) {
  if (!C)
    return NULL;
  return C->offset_crd ? C->offset_crd : fly_tuple_int(A, C->offset);
}

/* inner(offset + x), x a value of the outer layout. */
static FlyTuple *finish(FlyAlgebra *A, const FlyComposed *C, const FlyTuple *x) {
  FlyTuple *at = x ? fly_tuple_arith(A, FLY_ARITH_ADD, fly_composed_offset(A, C), x) : NULL;
  if (!at)
    return NULL;
  if (!C->inner)
    return fly_tuple_int(A, fly_swizzle_apply(C->swizzle, at->value));
  if (at->kind == FLY_TUPLE_INT)
    return fly_layout_value_at(A, C->inner, at->value);
  return fly_layout_value(A, at, C->inner);
}

FlyTuple *fly_composed_value(FlyAlgebra *A, const FlyTuple *coord, const FlyComposed *C) {
  return C ? finish(A, C, fly_layout_value(A, coord, C->layout)) : NULL;
}

static bool integer(FlyAlgebra *A, const FlyComposed *C, const FlyTuple *v, int64_t *out) {
  if (!v)
    return false;
  if (v->kind != FLY_TUPLE_INT) {
    char *cs = fly_composed_str(A, C);
    fly_fail(A, "%s gives coordinates, not integers", cs ? cs : "?");
    return false;
  }
  *out = v->value;
  return true;
}

bool fly_composed_crd2idx(FlyAlgebra *A, const FlyTuple *coord, const FlyComposed *C,
                          int64_t *out) {
  return C && integer(A, C, fly_composed_value(A, coord, C), out);
}

bool fly_composed_eval(FlyAlgebra *A, const FlyComposed *C, int64_t i, int64_t *out) {
  return C && integer(A, C, finish(A, C, fly_layout_value_at(A, C->layout, i)), out);
}

static FlyComposed *like(FlyAlgebra *A, const FlyComposed *C, const FlyTuple *offset,
                         FlyLayout *outer) {
  if (C->inner)
    return fly_composed_make_layout(A, C->inner, offset, outer);
  return offset ? fly_composed_make(A, C->swizzle, offset->value, outer) : NULL;
}

FlyComposed *fly_composed_slice(FlyAlgebra *A, const FlyTuple *coord, const FlyComposed *C) {
  if (!C)
    return NULL;
  FlyTuple *part = NULL;
  FlyLayout *rest = fly_layout_slice_and_offset(A, coord, C->layout, &part);
  if (!rest)
    return NULL;
  /* A coordinate offset stays one when every basis mode is sliced away:
     the rest gives only 0 then. */
  return like(A, C, fly_tuple_arith(A, FLY_ARITH_ADD, fly_composed_offset(A, C), part), rest);
}

FlyComposed *fly_composed_with_layout(FlyAlgebra *A, const FlyComposed *C, FlyLayout *L) {
  if (!C || !L)
    return NULL;
  FlyComposed *R = new_composed(A, L);
  if (R) {
    *R = *C;
    R->layout = L;
  }
  return R;
}

FlyComposed *fly_composed_recast(FlyAlgebra *A, const FlyComposed *C, int old_bits, int new_bits) {
  if (!C)
    return NULL;
  if (C->inner)
    return fly_fail(A, "recast: the inner part of %s is a layout, not a swizzle",
                    fly_composed_str(A, C));
  FlySwizzle s;
  if (!fly_swizzle_recast(A, C->swizzle, old_bits, new_bits, &s))
    return NULL;
  int64_t scaled;
  if (!fly_mul(A, C->offset, old_bits, &scaled))
    return NULL;
  if (scaled % new_bits != 0)
    return fly_fail(A, "recast: offset %lld is not a whole number of %d-bit elements",
                    (long long)C->offset, new_bits);
  return fly_composed_make(A, s, scaled / new_bits,
                           fly_layout_recast(A, C->layout, old_bits, new_bits));
}

bool fly_composed_equal(const FlyComposed *a, const FlyComposed *b) {
  if ((a->inner == NULL) != (b->inner == NULL) ||
      (a->offset_crd == NULL) != (b->offset_crd == NULL))
    return false;
  if (a->inner ? !fly_layout_equal(a->inner, b->inner) : !fly_swizzle_equal(a->swizzle, b->swizzle))
    return false;
  if (a->offset_crd ? !fly_tuple_equal(a->offset_crd, b->offset_crd) : a->offset != b->offset)
    return false;
  return fly_layout_equal(a->layout, b->layout);
}

char *fly_composed_str(FlyAlgebra *A, const FlyComposed *C) {
  if (!C)
    return NULL;
  char *in = C->inner ? fly_layout_str(A, C->inner) : fly_swizzle_str(A, C->swizzle);
  char *off = fly_tuple_str(A, fly_composed_offset(A, C)), *l = fly_layout_str(A, C->layout);
  if (!in || !off || !l)
    return NULL;
  FlyStrBuf sb;
  fly_sb_init(&sb, A);
  fly_sb_puts(&sb, in);
  fly_sb_puts(&sb, " o ");
  fly_sb_puts(&sb, off);
  fly_sb_puts(&sb, " o ");
  fly_sb_puts(&sb, l);
  return fly_sb_finish(&sb);
}
