/* fly_layout_basis.c — layouts whose strides are basis elements, whose
 * values are therefore coordinates (CuTe's ScaledBasis strides): the
 * coprofile that says what shape those coordinates have, the identity
 * layout, and the codomain's extent (coshape).
 *
 * A layout's values are the sums of its strides scaled by coordinates.
 * With basis strides the sum is CuTe's ArithmeticTuple: each basis element
 * is the coordinate it stands for (3@1 is (0,3)) and coordinates add leaf by
 * leaf, a missing mode counting as 0. The coprofile is the shape of that
 * sum, computed once from the strides, so every value of one layout has the
 * same structure whatever the coordinate (as CuTe's are with dynamic
 * scales). Beside basis elements an integer stride must be 0, which adds
 * nothing; a nonzero one, or a mode that one basis element makes a number
 * and another a tuple, has no sum and is refused. */
#include <string.h>

#include "fly_layout_internal.h"

static const char *text(FlyAlgebra *A, const FlyTuple *t) {
  char *s = fly_tuple_str(A, t);
  return s ? s : "?";
}

/* The basis leaves of a stride, and the first nonzero integer among them. */
typedef struct Bases {
  int n, cap;
  const FlyTuple **leaf;
  const FlyTuple *nonzero_int;
} Bases;

static bool collect(FlyAlgebra *A, const FlyTuple *d, Bases *b) {
  if (d->kind == FLY_TUPLE_SEQ) {
    for (int i = 0; i < d->n; i++)
      if (!collect(A, d->elem[i], b))
        return false;
    return true;
  }
  if (d->kind == FLY_TUPLE_INT && d->value != 0 && !b->nonzero_int)
    b->nonzero_int = d;
  if (d->kind != FLY_TUPLE_BASIS)
    return true;
  if (b->n == b->cap) {
    int cap = b->cap ? 2 * b->cap : 8;
    const FlyTuple **grown = fly_alloc(A, (size_t)cap * sizeof *grown);
    if (!grown)
      return false;
    if (b->n)
      memcpy(grown, b->leaf, (size_t)b->n * sizeof *grown);
    b->leaf = grown;
    b->cap = cap;
  }
  b->leaf[b->n++] = d;
  return true;
}

/* The structure the elements leaf[0..n) add up to, below the first `depth`
 * modes of their paths (which they share). */
static FlyTuple *profile_of(FlyAlgebra *A, const FlyTuple **leaf, int n, int depth) {
  int ending = 0, rank = 0;
  for (int i = 0; i < n; i++) {
    if (leaf[i]->nmodes == depth)
      ending++;
    else if (leaf[i]->modes[depth] + 1 > rank)
      rank = leaf[i]->modes[depth] + 1;
  }
  if (ending == n)
    return fly_tuple_int(A, 0);
  if (ending > 0) {
    const FlyTuple *num = NULL, *tup = NULL;
    for (int i = 0; i < n; i++)
      *(leaf[i]->nmodes == depth ? &num : &tup) = leaf[i];
    return fly_fail(A,
                    "the strides %s and %s do not add up: one makes a mode a number, the other "
                    "a tuple",
                    text(A, num), text(A, tup));
  }
  FlyTuple **e = fly_alloc(A, (size_t)rank * sizeof *e);
  const FlyTuple **sub = fly_alloc(A, (size_t)n * sizeof *sub);
  if (!e || !sub)
    return NULL;
  for (int m = 0; m < rank; m++) {
    int k = 0;
    for (int i = 0; i < n; i++)
      if (leaf[i]->modes[depth] == m)
        sub[k++] = leaf[i];
    e[m] = k ? profile_of(A, sub, k, depth + 1) : fly_tuple_int(A, 0);
    if (!e[m])
      return NULL;
  }
  return fly_tuple_seq(A, rank, e);
}

FlyTuple *fly_stride_coprofile(FlyAlgebra *A, const FlyTuple *stride) {
  Bases b = {0, 0, NULL, NULL};
  if (!stride || !collect(A, stride, &b))
    return NULL;
  if (b.n == 0)
    return fly_tuple_int(A, 0);
  if (b.nonzero_int)
    return fly_fail(A,
                    "the stride %s mixes basis elements with the integer %s: beside basis "
                    "elements an integer stride must be 0",
                    text(A, stride), text(A, b.nonzero_int));
  return profile_of(A, b.leaf, b.n, 0);
}

int fly_coprofile_slot(const FlyTuple *profile, const FlyTuple *basis) {
  int slot = 0;
  const FlyTuple *at = profile;
  for (int k = 0; k < basis->nmodes; k++) {
    int m = basis->modes[k];
    if (at->kind != FLY_TUPLE_SEQ || m >= at->n)
      return -1;
    for (int i = 0; i < m; i++)
      slot += fly_tuple_leaf_count(at->elem[i]);
    at = at->elem[m];
  }
  return at->kind == FLY_TUPLE_SEQ ? -1 : slot;
}

static FlyTuple *fill(FlyAlgebra *A, const FlyTuple *profile, const int64_t *v, int *k) {
  if (profile->kind != FLY_TUPLE_SEQ)
    return fly_tuple_int(A, v[(*k)++]);
  FlyTuple **e = fly_alloc(A, (size_t)(profile->n ? profile->n : 1) * sizeof *e);
  if (!e)
    return NULL;
  for (int i = 0; i < profile->n; i++)
    if (!(e[i] = fill(A, profile->elem[i], v, k)))
      return NULL;
  return fly_tuple_seq(A, profile->n, e);
}

FlyTuple *fly_coprofile_fill(FlyAlgebra *A, const FlyTuple *profile, const int64_t *v) {
  int k = 0;
  return fill(A, profile, v, &k);
}

/* ---- the public operations -------------------------------------------------------- */

bool fly_layout_has_basis(const FlyLayout *L) { return fly_tuple_has_basis(L->stride); }

FlyTuple *fly_layout_coprofile(FlyAlgebra *A, const FlyLayout *L) {
  return L ? fly_stride_coprofile(A, L->stride) : NULL;
}

FlyLayout *fly_layout_identity(FlyAlgebra *A, FlyTuple *shape) {
  return fly_layout_make(A, shape, fly_tuple_basis_like(A, shape));
}

/* 1 + the largest value each slot of the codomain reaches, every stride
 * counted by its magnitude: CuTe's coshape. */
FlyTuple *fly_layout_coshape(FlyAlgebra *A, const FlyLayout *L) {
  FlyFlat f;
  FlyTuple *profile = fly_layout_coprofile(A, L);
  if (!profile || !fly_flat_of(A, L, &f))
    return NULL;
  int slots = fly_tuple_leaf_count(profile);
  int64_t *hi = fly_alloc(A, (size_t)slots * sizeof *hi);
  if (!hi)
    return NULL;
  for (int k = 0; k < slots; k++)
    hi[k] = 1;
  for (int i = 0; i < f.n; i++) {
    int slot = f.basis[i] ? fly_coprofile_slot(profile, f.basis[i]) : 0;
    int64_t d = f.stride[i], term;
    if (d == INT64_MIN)
      return fly_fail(A, "coshape: stride %lld has no magnitude in 64 bits", (long long)d);
    if (!fly_mul(A, f.shape[i] - 1, d < 0 ? -d : d, &term) ||
        !fly_add(A, hi[slot], term, &hi[slot]))
      return NULL;
  }
  return fly_coprofile_fill(A, profile, hi);
}

/* A message for the operations that need integer strides. */
bool fly_layout_needs_integers(FlyAlgebra *A, const char *op, const FlyLayout *L) {
  if (!L)
    return false;
  if (!fly_layout_has_basis(L))
    return true;
  fly_fail(A,
           "%s: %s has basis strides, so its values are coordinates; %s needs a layout whose "
           "values are integers",
           op, fly_layout_str(A, L), op);
  return false;
}
