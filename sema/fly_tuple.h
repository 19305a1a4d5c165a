/* fly_tuple.h — integer tuples nested to any depth (CuTe's IntTuple).
 *
 * A tuple is an integer leaf, the underscore `_` (only meaningful in slicing
 * coordinates) or a sequence of tuples, possibly empty. Tuples are immutable
 * once built and may share sub-tuples; they live in a FlyAlgebra arena.
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
} FlyTupleKind;

typedef struct FlyTuple FlyTuple;
struct FlyTuple {
  FlyTupleKind kind;
  int n;         /* number of elements of a FLY_TUPLE_SEQ */
  int64_t value; /* the integer of a FLY_TUPLE_INT */
  FlyTuple **elem;
  const void *sym; /* FLY_TUPLE_DYNAMIC: the user's handle of its value (NULL: none yet) */
};

FlyTuple *fly_tuple_int(FlyAlgebra *A, int64_t value);
FlyTuple *fly_tuple_underscore(FlyAlgebra *A);
FlyTuple *fly_tuple_dynamic(FlyAlgebra *A, const void *sym);
/* A sequence of n elements (copied); any NULL element gives NULL. */
FlyTuple *fly_tuple_seq(FlyAlgebra *A, int n, FlyTuple *const *elems);
FlyTuple *fly_tuple_pair(FlyAlgebra *A, FlyTuple *a, FlyTuple *b);

static inline bool fly_tuple_is_int(const FlyTuple *t) { return t->kind == FLY_TUPLE_INT; }
static inline bool fly_tuple_is_seq(const FlyTuple *t) { return t->kind == FLY_TUPLE_SEQ; }

/* rank: 1 for a leaf, n for a sequence. depth: 0 for a leaf, 1 + deepest
 * element for a sequence (1 for the empty one). */
int fly_tuple_rank(const FlyTuple *t);
int fly_tuple_depth(const FlyTuple *t);
/* The i-th element; a leaf is its own element 0. NULL with an error when i
 * is out of range. */
FlyTuple *fly_tuple_get(FlyAlgebra *A, FlyTuple *t, int i);

/* Product of all leaves (1 for the empty tuple); an error on `_` or overflow. */
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

/* Canonical text: 8, (8,16), (4,(2,3)), _ ; "" never. Returns an arena string. */
char *fly_tuple_str(FlyAlgebra *A, const FlyTuple *t);

#endif
