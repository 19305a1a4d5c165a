/* fly_tuple.h — integer tuples nested to any depth (CuTe's IntTuple).
 *
 * A tuple is an integer leaf, the underscore `_` (only meaningful in slicing
 * coordinates) or a sequence of tuples, possibly empty. Tuples are immutable
 * once built and may share sub-tuples; they live in a FlyAlgebra arena.
 *
 * A leaf may also be a basis element scaled by an integer (CuTe's
 * ScaledBasis, `E<i,j>{} * s`): `s@i` is the coordinate whose mode i is s and
 * whose other modes are 0; `s@j@i` puts `s@j` in mode i (the path i, j from
 * the outermost mode in, printed innermost first as CuTe prints it). Basis
 * elements are the strides of layouts whose values are coordinates, such as
 * the identity layout (4,3):(1@0,1@1), and never part of a shape.
 *
 * A pattern (fly_parse_tuple_pattern, fly_symbolic.h) may also have `?`
 * leaves: values known only when a kernel runs, each with the handle its
 * user gave it. The algebra proper takes static tuples only; fly_tuple_product
 * and fly_tuple_str are the functions here that accept `?`. */
#ifndef FLY_TUPLE_H
#define FLY_TUPLE_H

#include "fly_algebra.h"

typedef enum FlyTupleKind {
  FLY_TUPLE_INT,
  FLY_TUPLE_UNDERSCORE,
  FLY_TUPLE_SEQ,
  FLY_TUPLE_DYNAMIC, /* `?`, in patterns only */
  FLY_TUPLE_BASIS,   /* value@modes: a scaled basis element, in strides and values */
} FlyTupleKind;

typedef struct FlyTuple FlyTuple;
struct FlyTuple {
  FlyTupleKind kind;
  int n;         /* number of elements of a FLY_TUPLE_SEQ */
  int64_t value; /* the integer of a FLY_TUPLE_INT, the scale of a FLY_TUPLE_BASIS */
  FlyTuple **elem;
  const void *sym;  /* FLY_TUPLE_DYNAMIC: the user's handle of its value (NULL: none yet) */
  int nmodes;       /* FLY_TUPLE_BASIS: the length of its path of modes, >= 1 */
  const int *modes; /* FLY_TUPLE_BASIS: the path, outermost mode first: 1@0@1 is {1, 0} */
};

FlyTuple *fly_tuple_int(FlyAlgebra *A, int64_t value);
FlyTuple *fly_tuple_underscore(FlyAlgebra *A);
FlyTuple *fly_tuple_dynamic(FlyAlgebra *A, const void *sym);
/* A sequence of n elements (copied); any NULL element gives NULL. */
FlyTuple *fly_tuple_seq(FlyAlgebra *A, int n, FlyTuple *const *elems);
FlyTuple *fly_tuple_pair(FlyAlgebra *A, FlyTuple *a, FlyTuple *b);
/* scale@modes[n-1]@...@modes[0]: the basis element of the path modes
 * (outermost first, 1 <= n <= FLY_MAX_DEPTH, each below FLY_MAX_MODES)
 * times scale. CuTe's E<m0,m1,...>{} * scale. */
FlyTuple *fly_tuple_basis(FlyAlgebra *A, int64_t scale, int n, const int *modes);

static inline bool fly_tuple_is_int(const FlyTuple *t) { return t->kind == FLY_TUPLE_INT; }
static inline bool fly_tuple_is_seq(const FlyTuple *t) { return t->kind == FLY_TUPLE_SEQ; }
static inline bool fly_tuple_is_basis(const FlyTuple *t) { return t->kind == FLY_TUPLE_BASIS; }
/* Whether some leaf is a basis element. */
bool fly_tuple_has_basis(const FlyTuple *t);
/* Whether two basis elements have the same path (their scales may differ). */
bool fly_tuple_same_basis(const FlyTuple *a, const FlyTuple *b);

/* rank: 1 for a leaf, n for a sequence. depth: 0 for a leaf, 1 + deepest
 * element for a sequence (1 for the empty one). */
int fly_tuple_rank(const FlyTuple *t);
int fly_tuple_depth(const FlyTuple *t);
/* The i-th element; a leaf is its own element 0. NULL with an error when i
 * is out of range. */
FlyTuple *fly_tuple_get(FlyAlgebra *A, FlyTuple *t, int i);

/* Product of all leaves (1 for the empty tuple); an error on `_`, a basis
 * element or overflow. */
bool fly_tuple_product(FlyAlgebra *A, const FlyTuple *t, int64_t *out);
/* Leaves in order, as a sequence (a leaf becomes a rank-1 sequence). */
FlyTuple *fly_tuple_flatten(FlyAlgebra *A, FlyTuple *t);
int fly_tuple_leaf_count(const FlyTuple *t);
/* CuTe's unwrap: strips rank-1 sequences, (((8))) -> 8. */
FlyTuple *fly_tuple_unwrap(FlyTuple *t);

bool fly_tuple_equal(const FlyTuple *a, const FlyTuple *b);
/* Same tree structure, leaves not compared. */
bool fly_tuple_congruent(const FlyTuple *a, const FlyTuple *b);
bool fly_tuple_has_underscore(const FlyTuple *t);
/* Whether no leaf is `?`. */
bool fly_tuple_is_static(const FlyTuple *t);
/* The leaves in order (a leaf is its own); the number of leaves, of which at
   most cap are stored. */
int fly_tuple_leaves(FlyTuple *t, FlyTuple **out, int cap);

/* Exclusive prefix product congruent to `shape`, starting at `init`:
 * the compact column-major strides, (4,(2,3)) -> (1,(4,8)). */
FlyTuple *fly_tuple_prefix_product(FlyAlgebra *A, FlyTuple *shape, int64_t init);
/* Compact row-major strides: (4,(2,3)) -> (6,(3,1)). */
FlyTuple *fly_tuple_suffix_product(FlyAlgebra *A, FlyTuple *shape, int64_t init);
/* The strides of CuTe's compact layouts (make_layout(shape) and LayoutRight):
 * the running product, except that a leaf of size 1 gets stride 0, as CuTe
 * gives a static size-1 mode: (4,1,3) -> (1,0,4). */
FlyTuple *fly_tuple_compact_strides(FlyAlgebra *A, FlyTuple *shape, bool row_major);
/* CuTe's ceil_div of a tuple by an integer: each element divides what the
 * ones before it left over, (4,6) / 3 -> (2,6). */
FlyTuple *fly_tuple_ceil_div(FlyAlgebra *A, FlyTuple *a, int64_t b);

/* The natural (colexicographic) coordinate of index idx in shape, congruent
 * to shape; the last mode absorbs indices past the size, as in CuTe. */
FlyTuple *fly_tuple_idx2crd(FlyAlgebra *A, int64_t idx, FlyTuple *shape);

/* ---- arithmetic (CuTe's int_tuple.hpp and arithmetic_tuple.hpp) ---------- */

/* CuTe's make_basis_like: a tuple congruent to shape whose leaf at path
 * (i, j, ...) is 1@...@j@i, the strides of the identity layout:
 * (4,(2,3)) -> (1@0,(1@0@1,1@1@1)). A leaf shape gives the integer 1. */
FlyTuple *fly_tuple_basis_like(FlyAlgebra *A, const FlyTuple *shape);
/* CuTe's as_arithmetic_tuple: every basis element as the coordinate it
 * stands for, 3@1 -> (0,3) and 1@0@1 -> (0,(1)); other leaves unchanged. */
FlyTuple *fly_tuple_as_coord(FlyAlgebra *A, const FlyTuple *t);

typedef enum FlyArith {
  FLY_ARITH_ADD,
  FLY_ARITH_SUB,
  FLY_ARITH_MUL,
  FLY_ARITH_DIV, /* truncating, as C and CuTe divide */
  FLY_ARITH_MOD,
} FlyArith;
/* a op b, leaf by leaf. Two tuples must be congruent, except that + and -
 * treat missing modes as 0 (CuTe's ArithmeticTuple: (1,2) + (3) = (4,2));
 * an integer operand applies to every leaf of the other, (1,(2,3)) * 2 =
 * (2,(4,6)), but inside two tuples an integer meets only an integer. A basis
 * element adds and subtracts as the coordinate it stands for (1@0 + 2@1 is
 * (1,2)), multiplies by an integer (3 * 1@1 is 3@1) and divides by one that
 * divides its scale (6@1 / 2 is 3@1, CuTe's safe_div); nothing else takes
 * one. Errors: division by zero, overflow, tuples that do not match. */
FlyTuple *fly_tuple_arith(FlyAlgebra *A, FlyArith op, const FlyTuple *a, const FlyTuple *b);
/* CuTe's ceil_div of tuples: tuple by tuple, leaf by leaf with b's missing
 * modes read as 1 (b may not have more modes than a); tuple by integer,
 * as fly_tuple_ceil_div; integer by tuple, by the tuple's product. */
FlyTuple *fly_tuple_ceil_div_tuple(FlyAlgebra *A, const FlyTuple *a, const FlyTuple *b);
/* CuTe's shape_div: as ceil_div (tuple by tuple needs the same rank), each
 * integer division a / b needing a % b == 0 or b % a == 0 (then it is
 * ceil(a / b)): (4,5,6) / 40 -> (1,1,3). */
FlyTuple *fly_tuple_shape_div(FlyAlgebra *A, const FlyTuple *a, const FlyTuple *b);
/* CuTe's elem_less: a < b at every leaf, where a may stop early (its
 * missing modes compare true) but not run past b (false). An error when an
 * integer meets a tuple. */
bool fly_tuple_elem_less(FlyAlgebra *A, const FlyTuple *a, const FlyTuple *b, bool *out);
/* CuTe's product_each: the product of each mode, (4,(2,3)) -> (4,6); a leaf
 * is its own product. */
FlyTuple *fly_tuple_product_each(FlyAlgebra *A, const FlyTuple *t);
/* Elements [begin, end) of a tuple (a leaf is a tuple of one): CuTe's take. */
FlyTuple *fly_tuple_take(FlyAlgebra *A, FlyTuple *t, int begin, int end);

/* Canonical text: 8, (8,16), (4,(2,3)), _, 3@1, 1@0@1 ; "" never. Returns an
 * arena string. */
char *fly_tuple_str(FlyAlgebra *A, const FlyTuple *t);

#endif
