/* fly_layout_main.c — fly-layout: a command-line calculator for the layout
 * algebra, one operation per call, arguments in CuTe's text form.
 *
 *   fly-layout composition '(6,2):(8,2)' '(4,3):(3,1)'   ->  ((2,2),3):((24,2),8)
 *
 * It exists so that the algebra can be tried, demonstrated and tested from
 * the shell before the language's own `flyc layout` arrives. Exit codes: 0
 * for a result, 1 when the algebra refuses the input, 2 for a usage error. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fly_layout_text.h"
#include "fly_output.h"
#include "fly_version.h"

enum { EXIT_REFUSED = 1, EXIT_USAGE = 2, TABLE_CELLS_MAX = 4096 };

typedef struct Call {
  FlyAlgebra A;
  char **argv; /* the operation's arguments */
  int argc;
  int bad_arg; /* which argument a text error points into, -1 if none */
} Call;

typedef bool (*OpFn)(Call *c);

typedef struct Op {
  const char *name;
  int min_args, max_args;
  const char *args;
  const char *help;
  OpFn run;
} Op;

/* ---- reading arguments ----------------------------------------------- */

static const char *arg(Call *c, int i) { return c->argv[i]; }

/* Parse failures remember which argument they came from so the caret can
 * be drawn under the right text. */
static bool note_arg(Call *c, int i, bool ok) {
  if (!ok && c->bad_arg < 0 && fly_algebra_error_pos(&c->A) >= 0)
    c->bad_arg = i;
  return ok;
}

static FlyLayout *layout_arg(Call *c, int i) {
  FlyLayout *L = fly_parse_layout(&c->A, arg(c, i), strlen(arg(c, i)));
  note_arg(c, i, L != NULL);
  return L;
}

static FlyTiler *tiler_arg(Call *c, int i) {
  FlyTiler *T = fly_parse_tiler(&c->A, arg(c, i), strlen(arg(c, i)));
  note_arg(c, i, T != NULL);
  return T;
}

static FlyTuple *tuple_arg(Call *c, int i) {
  FlyTuple *t = fly_parse_tuple(&c->A, arg(c, i), strlen(arg(c, i)));
  note_arg(c, i, t != NULL);
  return t;
}

static bool int_arg(Call *c, int i, int64_t *out) {
  FlyTuple *t = tuple_arg(c, i);
  if (t && t->kind != FLY_TUPLE_INT) {
    fly_fail(&c->A, "argument %d: expected an integer, got %s", i + 1, arg(c, i));
    return false;
  }
  if (t)
    *out = t->value;
  return t != NULL;
}

static bool small_int_arg(Call *c, int i, int *out) {
  int64_t v;
  if (!int_arg(c, i, &v))
    return false;
  if (v < -1000000 || v > 1000000) {
    fly_fail(&c->A, "argument %d: %" PRId64 " is out of range", i + 1, v);
    return false;
  }
  *out = (int)v;
  return true;
}

/* A plain layout or swizzle o offset o layout: operations on the domain
 * act on the inner layout and keep the rest. */
typedef struct AnyLayout {
  FlyLayout *layout;
  FlyComposed *composed; /* NULL for a plain layout */
} AnyLayout;

static bool any_layout_arg(Call *c, int i, AnyLayout *out) {
  FlyValue v;
  if (!note_arg(c, i, fly_parse_value(&c->A, arg(c, i), strlen(arg(c, i)), &v)))
    return false;
  out->composed = v.kind == FLY_VALUE_COMPOSED ? v.as.composed : NULL;
  if (v.kind == FLY_VALUE_LAYOUT)
    out->layout = v.as.layout;
  else if (v.kind == FLY_VALUE_COMPOSED)
    out->layout = v.as.composed->layout;
  else {
    fly_fail(&c->A, "argument %d: expected a layout such as (8,16):(1,8), got %s", i + 1,
             arg(c, i));
    return false;
  }
  return true;
}

/* ---- printing results -------------------------------------------------- */

static bool print_str(const char *s) {
  if (s)
    puts(s);
  return s != NULL;
}

static bool print_layout(Call *c, FlyLayout *L) { return print_str(fly_layout_str(&c->A, L)); }

/* A result of an operation on an AnyLayout's inner layout. */
static bool print_like(Call *c, const AnyLayout *x, FlyLayout *L) {
  if (!x->composed)
    return print_layout(c, L);
  return print_str(fly_composed_str(&c->A, fly_composed_with_layout(&c->A, x->composed, L)));
}

static bool print_int(int64_t v) {
  printf("%" PRId64 "\n", v);
  return true;
}

/* ---- operations ---------------------------------------------------------- */

static bool op_show(Call *c) {
  FlyValue v;
  if (!note_arg(c, 0, fly_parse_value(&c->A, arg(c, 0), strlen(arg(c, 0)), &v)))
    return false;
  return print_str(fly_value_str(&c->A, &v));
}

static bool op_size(Call *c) {
  AnyLayout x;
  int64_t n = 0;
  if (!any_layout_arg(c, 0, &x) || !fly_layout_size(&c->A, x.layout, &n))
    return false;
  return print_int(n);
}

static bool op_cosize(Call *c) {
  int64_t n = 0;
  if (!fly_layout_cosize(&c->A, layout_arg(c, 0), &n))
    return false;
  return print_int(n);
}

static bool op_rank(Call *c) {
  AnyLayout x;
  return any_layout_arg(c, 0, &x) && print_int(fly_layout_rank(x.layout));
}

static bool op_depth(Call *c) {
  AnyLayout x;
  return any_layout_arg(c, 0, &x) && print_int(fly_layout_depth(x.layout));
}

static bool op_shape(Call *c) {
  AnyLayout x;
  return any_layout_arg(c, 0, &x) && print_str(fly_tuple_str(&c->A, x.layout->shape));
}

static bool op_stride(Call *c) {
  FlyLayout *L = layout_arg(c, 0);
  return L && print_str(fly_tuple_str(&c->A, L->stride));
}

static bool op_get(Call *c) {
  AnyLayout x;
  int i;
  return any_layout_arg(c, 0, &x) && small_int_arg(c, 1, &i) &&
         print_like(c, &x, fly_layout_get(&c->A, x.layout, i));
}

static bool op_select(Call *c) {
  AnyLayout x;
  int modes[16];
  if (!any_layout_arg(c, 0, &x))
    return false;
  for (int i = 1; i < c->argc; i++)
    if (!small_int_arg(c, i, &modes[i - 1]))
      return false;
  return print_like(c, &x, fly_layout_select(&c->A, x.layout, c->argc - 1, modes));
}

static bool op_group(Call *c) {
  AnyLayout x;
  int b, e;
  return any_layout_arg(c, 0, &x) && small_int_arg(c, 1, &b) && small_int_arg(c, 2, &e) &&
         print_like(c, &x, fly_layout_group(&c->A, x.layout, b, e));
}

static bool op_append(Call *c) {
  FlyLayout *L = layout_arg(c, 0), *X = c->argc > 1 && L ? layout_arg(c, 1) : NULL;
  if (c->argc > 1 && !X)
    return false;
  return print_layout(c, fly_layout_append(&c->A, L, X));
}

static bool op_prepend(Call *c) {
  FlyLayout *L = layout_arg(c, 0), *X = c->argc > 1 && L ? layout_arg(c, 1) : NULL;
  if (c->argc > 1 && !X)
    return false;
  return print_layout(c, fly_layout_prepend(&c->A, L, X));
}

static bool op_zip(Call *c) { return print_layout(c, fly_layout_zip(&c->A, layout_arg(c, 0))); }

static bool op_flatten(Call *c) {
  AnyLayout x;
  return any_layout_arg(c, 0, &x) && print_like(c, &x, fly_layout_flatten(&c->A, x.layout));
}

/* An integer, or the coordinate a layout with basis strides gives. */
static bool op_crd2idx(Call *c) {
  AnyLayout x;
  FlyTuple *crd = tuple_arg(c, 0);
  int64_t idx = 0;
  if (!crd || !any_layout_arg(c, 1, &x))
    return false;
  if (!x.composed)
    return print_str(fly_tuple_str(&c->A, fly_layout_value(&c->A, crd, x.layout)));
  if (!fly_composed_crd2idx(&c->A, crd, x.composed, &idx))
    return false;
  return print_int(idx);
}

static bool op_idx2crd(Call *c) {
  int64_t i;
  FlyTuple *shape = NULL;
  if (!int_arg(c, 0, &i) || !(shape = tuple_arg(c, 1)))
    return false;
  return print_str(fly_tuple_str(&c->A, fly_tuple_idx2crd(&c->A, i, shape)));
}

static bool op_slice(Call *c) {
  AnyLayout x;
  FlyTuple *crd = tuple_arg(c, 0);
  if (!crd || !any_layout_arg(c, 1, &x))
    return false;
  if (x.composed)
    return print_str(fly_composed_str(&c->A, fly_composed_slice(&c->A, crd, x.composed)));
  FlyTuple *offset = NULL;
  FlyLayout *L = fly_layout_slice_and_offset(&c->A, crd, x.layout, &offset);
  char *s = fly_layout_str(&c->A, L), *o = s ? fly_tuple_str(&c->A, offset) : NULL;
  if (o)
    printf("%s  offset %s\n", s, o);
  return o != NULL;
}

static bool op_dice(Call *c) {
  FlyTuple *crd = tuple_arg(c, 0);
  return crd && print_layout(c, fly_layout_dice(&c->A, crd, layout_arg(c, 1)));
}

static bool op_coalesce(Call *c) {
  AnyLayout x;
  if (!any_layout_arg(c, 0, &x))
    return false;
  if (c->argc == 1)
    return print_like(c, &x, fly_layout_coalesce(&c->A, x.layout));
  FlyTuple *profile = tuple_arg(c, 1);
  return profile && print_like(c, &x, fly_layout_coalesce_by(&c->A, x.layout, profile));
}

static bool op_filter(Call *c) {
  FlyLayout *L = layout_arg(c, 0);
  if (!L || c->argc == 1)
    return print_layout(c, fly_layout_filter(&c->A, L));
  FlyTuple *profile = tuple_arg(c, 1);
  return profile && print_layout(c, fly_layout_filter_by(&c->A, L, profile));
}

typedef FlyLayout *(*TilerOp)(FlyAlgebra *, const FlyLayout *, const FlyTiler *);

static bool with_tiler(Call *c, TilerOp f) {
  AnyLayout x;
  FlyTiler *T = NULL;
  if (!any_layout_arg(c, 0, &x) || !(T = tiler_arg(c, 1)))
    return false;
  return print_like(c, &x, f(&c->A, x.layout, T));
}

static bool op_composition(Call *c) { return with_tiler(c, fly_layout_compose_tiler); }
static bool op_logical_divide(Call *c) { return with_tiler(c, fly_layout_logical_divide); }
static bool op_zipped_divide(Call *c) { return with_tiler(c, fly_layout_zipped_divide); }
static bool op_tiled_divide(Call *c) { return with_tiler(c, fly_layout_tiled_divide); }
static bool op_flat_divide(Call *c) { return with_tiler(c, fly_layout_flat_divide); }
static bool op_logical_product(Call *c) { return with_tiler(c, fly_layout_logical_product); }
static bool op_zipped_product(Call *c) { return with_tiler(c, fly_layout_zipped_product); }
static bool op_tiled_product(Call *c) { return with_tiler(c, fly_layout_tiled_product); }
static bool op_flat_product(Call *c) { return with_tiler(c, fly_layout_flat_product); }

static bool op_complement(Call *c) {
  FlyLayout *L = layout_arg(c, 0);
  if (!L)
    return false;
  FlyTuple *cotarget;
  if (c->argc > 1) {
    cotarget = tuple_arg(c, 1);
  } else { /* CuTe's default: the cosize of the filtered layout */
    int64_t n;
    if (!fly_layout_cosize(&c->A, fly_layout_filter(&c->A, L), &n))
      return false;
    cotarget = fly_tuple_int(&c->A, n);
  }
  return cotarget && print_layout(c, fly_layout_complement(&c->A, L, cotarget));
}

static bool op_right_inverse(Call *c) {
  return print_layout(c, fly_layout_right_inverse(&c->A, layout_arg(c, 0)));
}

static bool op_left_inverse(Call *c) {
  return print_layout(c, fly_layout_left_inverse(&c->A, layout_arg(c, 0)));
}

typedef FlyLayout *(*PairOp)(FlyAlgebra *, const FlyLayout *, const FlyLayout *);

static bool with_layouts(Call *c, PairOp f) {
  FlyLayout *a = layout_arg(c, 0), *b = a ? layout_arg(c, 1) : NULL;
  return b && print_layout(c, f(&c->A, a, b));
}

static bool op_blocked_product(Call *c) { return with_layouts(c, fly_layout_blocked_product); }
static bool op_raked_product(Call *c) { return with_layouts(c, fly_layout_raked_product); }
static bool op_max_common_layout(Call *c) { return with_layouts(c, fly_layout_max_common_layout); }

static bool op_max_common_vector(Call *c) {
  FlyLayout *a = layout_arg(c, 0), *b = a ? layout_arg(c, 1) : NULL;
  int64_t n = 0;
  if (!b || !fly_layout_max_common_vector(&c->A, a, b, &n))
    return false;
  return print_int(n);
}

static bool op_recast(Call *c) {
  AnyLayout x;
  int from, to;
  if (!any_layout_arg(c, 0, &x) || !small_int_arg(c, 1, &from) || !small_int_arg(c, 2, &to))
    return false;
  if (x.composed)
    return print_str(fly_composed_str(&c->A, fly_composed_recast(&c->A, x.composed, from, to)));
  return print_layout(c, fly_layout_recast(&c->A, x.layout, from, to));
}

static bool op_col_major(Call *c) {
  return print_layout(c, fly_layout_col_major(&c->A, tuple_arg(c, 0)));
}

static bool op_row_major(Call *c) {
  return print_layout(c, fly_layout_row_major(&c->A, tuple_arg(c, 0)));
}

static bool op_ordered(Call *c) {
  FlyTuple *shape = tuple_arg(c, 0), *order = shape ? tuple_arg(c, 1) : NULL;
  return order && print_layout(c, fly_layout_ordered(&c->A, shape, order));
}

/* ---- coordinates as values, tuples, layouts after others ------------------------ */

static bool op_identity(Call *c) {
  return print_layout(c, fly_layout_identity(&c->A, tuple_arg(c, 0)));
}

static bool op_basis_like(Call *c) {
  return print_str(fly_tuple_str(&c->A, fly_tuple_basis_like(&c->A, tuple_arg(c, 0))));
}

static bool op_coshape(Call *c) {
  return print_str(fly_tuple_str(&c->A, fly_layout_coshape(&c->A, layout_arg(c, 0))));
}

typedef FlyTuple *(*TupleOp)(FlyAlgebra *, const FlyTuple *, const FlyTuple *);

static bool with_tuples(Call *c, TupleOp f) {
  FlyTuple *a = tuple_arg(c, 0), *b = a ? tuple_arg(c, 1) : NULL;
  return b && print_str(fly_tuple_str(&c->A, f(&c->A, a, b)));
}

static bool arith(Call *c, FlyArith op) {
  FlyTuple *a = tuple_arg(c, 0), *b = a ? tuple_arg(c, 1) : NULL;
  return b && print_str(fly_tuple_str(&c->A, fly_tuple_arith(&c->A, op, a, b)));
}

static bool op_add(Call *c) { return arith(c, FLY_ARITH_ADD); }
static bool op_sub(Call *c) { return arith(c, FLY_ARITH_SUB); }
static bool op_mul(Call *c) { return arith(c, FLY_ARITH_MUL); }
static bool op_div(Call *c) { return arith(c, FLY_ARITH_DIV); }
static bool op_mod(Call *c) { return arith(c, FLY_ARITH_MOD); }
static bool op_ceil_div(Call *c) { return with_tuples(c, fly_tuple_ceil_div_tuple); }
static bool op_shape_div(Call *c) { return with_tuples(c, fly_tuple_shape_div); }

static bool op_elem_less(Call *c) {
  FlyTuple *a = tuple_arg(c, 0), *b = a ? tuple_arg(c, 1) : NULL;
  bool less;
  if (!b || !fly_tuple_elem_less(&c->A, a, b, &less))
    return false;
  return print_str(less ? "true" : "false");
}

static bool op_product_each(Call *c) {
  return print_str(fly_tuple_str(&c->A, fly_tuple_product_each(&c->A, tuple_arg(c, 0))));
}

static bool op_take(Call *c) {
  AnyLayout x;
  int b, e;
  return any_layout_arg(c, 0, &x) && small_int_arg(c, 1, &b) && small_int_arg(c, 2, &e) &&
         print_like(c, &x, fly_layout_take(&c->A, x.layout, b, e));
}

static bool op_layout_like(Call *c) {
  return print_layout(c, fly_layout_like(&c->A, layout_arg(c, 0)));
}

static bool op_fragment_like(Call *c) {
  return print_layout(c, fly_layout_fragment_like(&c->A, layout_arg(c, 0)));
}

static bool op_tile_to_shape(Call *c) {
  FlyLayout *L = layout_arg(c, 0);
  FlyTuple *target = L ? tuple_arg(c, 1) : NULL, *order = NULL;
  if (!target || (c->argc > 2 && !(order = tuple_arg(c, 2))))
    return false;
  return print_layout(c, fly_layout_tile_to_shape(&c->A, L, target, order));
}

typedef FlyTuple *(*CoordOp)(FlyAlgebra *, const FlyLayout *, int64_t);

static bool with_index(Call *c, CoordOp f) {
  int64_t i;
  if (!int_arg(c, 0, &i))
    return false;
  FlyLayout *L = layout_arg(c, 1);
  return L && print_str(fly_tuple_str(&c->A, f(&c->A, L, i)));
}

static bool op_hier_coord(Call *c) { return with_index(c, fly_layout_hier_coord); }
static bool op_flat_coord(Call *c) { return with_index(c, fly_layout_flat_coord); }

static bool op_1d_coord(Call *c) {
  int64_t i, v;
  FlyLayout *L = int_arg(c, 0, &i) ? layout_arg(c, 1) : NULL;
  return L && fly_layout_1d_coord(&c->A, L, i, &v) && print_int(v);
}

/* One cell of the grid: the value at coordinate (row, col), an index or,
 * for basis strides, a coordinate. */
static char *cell(Call *c, const AnyLayout *x, int rank, int64_t row, int64_t col) {
  FlyTuple *crd = fly_tuple_int(&c->A, row);
  if (rank == 2)
    crd = fly_tuple_pair(&c->A, crd, fly_tuple_int(&c->A, col));
  if (x->composed)
    return fly_tuple_str(&c->A, fly_composed_value(&c->A, crd, x->composed));
  return fly_tuple_str(&c->A, fly_layout_value(&c->A, crd, x->layout));
}

/* The layout as a grid, as CuTe's print_layout draws it: rows are the first
 * mode, columns the second, each cell the index that coordinate maps to. */
static bool op_table(Call *c) {
  AnyLayout x;
  if (!any_layout_arg(c, 0, &x))
    return false;
  int rank = fly_layout_rank(x.layout);
  int64_t rows, cols = 1;
  if (rank > 2) {
    fly_fail(&c->A, "table draws layouts of rank 1 or 2; this one has rank %d", rank);
    return false;
  }
  if (!fly_layout_size(&c->A, fly_layout_get(&c->A, x.layout, 0), &rows) ||
      (rank == 2 && !fly_layout_size(&c->A, fly_layout_get(&c->A, x.layout, 1), &cols)))
    return false;
  int64_t cells;
  if (!fly_mul(&c->A, rows, cols, &cells))
    return false;
  if (cells > TABLE_CELLS_MAX) {
    fly_fail(&c->A, "the layout has %" PRId64 " cells; table draws at most %d", cells,
             TABLE_CELLS_MAX);
    return false;
  }
  char **text = fly_alloc(&c->A, (size_t)cells * sizeof *text);
  int width = 4;
  for (int64_t k = 0; text && k < cells; k++) {
    if (!(text[k] = cell(c, &x, rank, k % rows, k / rows)))
      return false;
    if ((int)strlen(text[k]) > width)
      width = (int)strlen(text[k]);
  }
  if (!text || !print_str(arg(c, 0)))
    return false;
  printf("    ");
  for (int64_t j = 0; j < cols; j++)
    printf(" %*" PRId64, width, j);
  printf("\n");
  for (int64_t i = 0; i < rows; i++) {
    printf("%4" PRId64, i);
    for (int64_t j = 0; j < cols; j++)
      printf(" %*s", width, text[i + rows * j]);
    printf("\n");
  }
  return true;
}

static const Op OPS[] = {
    {"show", 1, 1, "VALUE", "the canonical text of a tuple, layout, tiler or swizzle", op_show},
    {"size", 1, 1, "L", "number of coordinates", op_size},
    {"cosize", 1, 1, "L", "one past the largest index", op_cosize},
    {"rank", 1, 1, "L", "number of top-level modes", op_rank},
    {"depth", 1, 1, "L", "nesting depth of the shape", op_depth},
    {"shape", 1, 1, "L", "the shape", op_shape},
    {"stride", 1, 1, "L", "the stride", op_stride},
    {"get", 2, 2, "L I", "mode I", op_get},
    {"select", 2, 17, "L I...", "the modes I..., in that order", op_select},
    {"group", 3, 3, "L B E", "modes [B,E) as one mode", op_group},
    {"append", 1, 2, "L [X]", "X (default 1:0) as a new last mode", op_append},
    {"prepend", 1, 2, "L [X]", "X (default 1:0) as a new first mode", op_prepend},
    {"zip", 1, 1, "L", "transpose a tuple of equal-rank modes", op_zip},
    {"flatten", 1, 1, "L", "all leaves as top-level modes", op_flatten},
    {"crd2idx", 2, 2, "C L", "the index of coordinate C", op_crd2idx},
    {"idx2crd", 2, 2, "I SHAPE", "the natural coordinate of index I", op_idx2crd},
    {"slice", 2, 2, "C L", "the modes under _ in C, and the offset", op_slice},
    {"dice", 2, 2, "C L", "the modes under integers in C", op_dice},
    {"coalesce", 1, 2, "L [PROFILE]", "merge modes, whole or by mode", op_coalesce},
    {"filter", 1, 2, "L [PROFILE]", "drop stride-0 and size-1 modes, then coalesce", op_filter},
    {"composition", 2, 2, "L T", "L o T for a layout or a tiler T", op_composition},
    {"complement", 1, 2, "L [COTARGET]", "the layout of what L leaves out", op_complement},
    {"right_inverse", 1, 1, "L", "R with L(R(i)) == i", op_right_inverse},
    {"left_inverse", 1, 1, "L", "R with R(L(i)) == i", op_left_inverse},
    {"logical_divide", 2, 2, "L T", "split L into (tile, rest)", op_logical_divide},
    {"zipped_divide", 2, 2, "L T", "((tiles...), (rests...))", op_zipped_divide},
    {"tiled_divide", 2, 2, "L T", "((tiles...), rests...)", op_tiled_divide},
    {"flat_divide", 2, 2, "L T", "(tiles..., rests...)", op_flat_divide},
    {"logical_product", 2, 2, "L T", "(L, repetitions of L)", op_logical_product},
    {"zipped_product", 2, 2, "L T", "((blocks...), (repetitions...))", op_zipped_product},
    {"tiled_product", 2, 2, "L T", "((blocks...), repetitions...)", op_tiled_product},
    {"flat_product", 2, 2, "L T", "(blocks..., repetitions...)", op_flat_product},
    {"blocked_product", 2, 2, "L B", "L repeated over B, blocks contiguous", op_blocked_product},
    {"raked_product", 2, 2, "L B", "L repeated over B, blocks interleaved", op_raked_product},
    {"recast", 3, 3, "L OLD_BITS NEW_BITS", "the same memory in other elements", op_recast},
    {"max_common_vector", 2, 2, "A B", "elements contiguous in both", op_max_common_vector},
    {"max_common_layout", 2, 2, "A B", "the layout of those elements", op_max_common_layout},
    {"col_major", 1, 1, "SHAPE", "compact column-major layout", op_col_major},
    {"row_major", 1, 1, "SHAPE", "compact row-major layout", op_row_major},
    {"ordered", 2, 2, "SHAPE ORDER", "compact layout, modes ordered by ORDER", op_ordered},
    {"table", 1, 1, "L", "draw a rank-1 or rank-2 layout as a grid", op_table},
    {"identity", 1, 1, "SHAPE", "the identity layout: basis strides 1@0, 1@1, ...", op_identity},
    {"basis_like", 1, 1, "SHAPE", "the basis elements of the modes of SHAPE", op_basis_like},
    {"coshape", 1, 1, "L", "one past the largest value of each leaf of L's values", op_coshape},
    {"add", 2, 2, "A B", "A + B, leaf by leaf (basis elements as coordinates)", op_add},
    {"sub", 2, 2, "A B", "A - B, leaf by leaf", op_sub},
    {"mul", 2, 2, "A B", "A * B, leaf by leaf (an integer scales a basis element)", op_mul},
    {"div", 2, 2, "A B", "A / B, leaf by leaf, truncating", op_div},
    {"mod", 2, 2, "A B", "A % B, leaf by leaf", op_mod},
    {"ceil_div", 2, 2, "A B", "CuTe's ceil_div of tuples", op_ceil_div},
    {"shape_div", 2, 2, "A B", "CuTe's shape_div: ceil_div of dividing shapes", op_shape_div},
    {"elem_less", 2, 2, "A B", "A < B at every leaf", op_elem_less},
    {"product_each", 1, 1, "T", "the product of each mode", op_product_each},
    {"take", 3, 3, "L B E", "modes [B,E)", op_take},
    {"layout_like", 1, 1, "L", "compact, strides in the order of L's", op_layout_like},
    {"fragment_like", 1, 1, "L", "registers for a tile like L", op_fragment_like},
    {"tile_to_shape", 2, 3, "L SHAPE [ORDER]", "L repeated to SHAPE", op_tile_to_shape},
    {"get_hier_coord", 2, 2, "I L", "the coordinate where compact L gives I", op_hier_coord},
    {"get_flat_coord", 2, 2, "I L", "that coordinate, one integer per mode", op_flat_coord},
    {"get_1d_coord", 2, 2, "I L", "that coordinate as one integer", op_1d_coord},
};
enum { OP_COUNT = sizeof OPS / sizeof OPS[0] };

/* ---- driver -------------------------------------------------------------- */

static void usage(FILE *out) {
  fputs("usage: fly-layout OPERATION ARGUMENT...\n"
        "       fly-layout --demo | --help | --version\n"
        "\n"
        "Arguments use CuTe's notation: 8:1  (8,16):(1,8)  (4,(2,3)):(1,(4,8))\n"
        "tilers (4:1,_)  coordinates (2,_)  swizzles S<3,3,3> o 0 o (8,8):(8,1)\n"
        "basis strides (4,3):(1@0,1@1)\n"
        "\n"
        "Operations:\n",
        out);
  for (int i = 0; i < OP_COUNT; i++) {
    char head[48];
    snprintf(head, sizeof head, "%s %s", OPS[i].name, OPS[i].args);
    fprintf(out, "  %-30s %s\n", head, OPS[i].help);
  }
}

static const Op *find_op(const char *name) {
  for (int i = 0; i < OP_COUNT; i++)
    if (strcmp(OPS[i].name, name) == 0)
      return &OPS[i];
  return NULL;
}

/* The message, and for text errors the argument with a caret under the
 * offending character. */
static void report(Call *c) {
  fprintf(stderr, "fly-layout: error: %s\n", fly_algebra_message(&c->A));
  long pos = fly_algebra_error_pos(&c->A);
  if (c->bad_arg < 0 || pos < 0)
    return;
  const char *text = arg(c, c->bad_arg);
  fprintf(stderr, "  %s\n  %*s^\n", text, (int)pos, "");
}

static int run_op(const Op *op, int argc, char **argv) {
  if (argc < op->min_args || argc > op->max_args) {
    fprintf(stderr, "fly-layout: error: %s takes %s\nusage: fly-layout %s %s\n", op->name,
            op->min_args == op->max_args ? "a fixed number of arguments"
                                         : "more or fewer arguments",
            op->name, op->args);
    return EXIT_USAGE;
  }
  Call c = {.argv = argv, .argc = argc, .bad_arg = -1};
  fly_algebra_init(&c.A);
  bool ok = op->run(&c);
  if (!ok)
    report(&c);
  fly_algebra_release(&c.A);
  return ok ? 0 : EXIT_REFUSED;
}

/* The demo: a tour of the classic examples of CuTe's documentation. */
static const char *const DEMO[][4] = {
    {"show", "(4,(2,3)):(1,(4,8))"},
    {"size", "(4,(2,3)):(1,(4,8))"},
    {"crd2idx", "(1,(1,2))", "(4,(2,3)):(1,(4,8))"},
    {"coalesce", "(2,(1,6)):(1,(6,2))"},
    {"composition", "(6,2):(8,2)", "(4,3):(3,1)"},
    {"composition", "(12,(4,8)):(59,(13,1))", "(3:4,8:2)"},
    {"complement", "(2,2):(1,6)", "24"},
    {"logical_divide", "(4,2,3):(2,1,8)", "4:2"},
    {"zipped_divide", "(9,(4,8)):(59,(13,1))", "(3:3,(2,4):(1,8))"},
    {"logical_product", "(2,2):(4,1)", "6:1"},
    {"blocked_product", "(2,5):(5,1)", "(3,4):(1,3)"},
    {"raked_product", "(2,5):(5,1)", "(3,4):(1,3)"},
    {"right_inverse", "(4,8):(8,1)"},
    {"recast", "(8,16):(1,8)", "16", "32"},
    {"table", "(4,8):(8,1)"},
    {"table", "S<2,0,2> o 0 o (4,4):(4,1)"},
    {"zipped_divide", "(8,6):(1@0,1@1)", "(2,3)"},
};

static int demo(void) {
  int failed = 0;
  for (size_t i = 0; i < sizeof DEMO / sizeof DEMO[0]; i++) {
    const Op *op = find_op(DEMO[i][0]);
    int argc = 0;
    char *argv[3];
    printf("$ fly-layout %s", DEMO[i][0]);
    for (int k = 1; k < 4 && DEMO[i][k]; k++) {
      argv[argc++] = (char *)DEMO[i][k];
      printf(" '%s'", DEMO[i][k]);
    }
    printf("\n");
    fflush(stdout);
    failed |= run_op(op, argc, argv) != 0;
    printf("\n");
  }
  return failed ? EXIT_REFUSED : 0;
}

static int run(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return EXIT_USAGE;
  }
  if (strcmp(argv[1], "--help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("fly-layout %s\n", FLY_VERSION);
    return 0;
  }
  if (strcmp(argv[1], "--demo") == 0)
    return demo();
  const Op *op = find_op(argv[1]);
  if (!op) {
    fprintf(stderr,
            "fly-layout: error: unknown operation '%s'\nrun 'fly-layout --help' for the list\n",
            argv[1]);
    return EXIT_USAGE;
  }
  return run_op(op, argc - 2, argv + 2);
}

/* The result, flushed: output that did not arrive (a full disk) is an
   error. */
int main(int argc, char **argv) {
  int status = run(argc, argv);
  char why[256];
  if (fly_output_flush_stdout(why, sizeof why))
    return status;
  fprintf(stderr, "fly-layout: error: %s\n", why);
  return status ? status : 1;
}
