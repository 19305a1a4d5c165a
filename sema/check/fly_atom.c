/* fly_atom.c — the atom table (fly_atom.h), made from fly_atoms.def. */
#include "fly_atom.h"

#include <string.h>

#define NONE (-1)
#define W(bits) (1u << (__builtin_ctz(bits)))
#define T(code) (1u << FLY_TYPE_##code)
#define FLY_PAIRS_SAME false
#define FLY_PAIRS_ANY true

static const FlyAtom atoms[] = {
#define FLY_COPY_ATOM(id, name, family, feature, widths, src_tv, dst_tv)                           \
  {FLY_ATOM_##id,                                                                                  \
   name,                                                                                           \
   FLY_ATOM_COPY,                                                                                  \
   FLY_COPY_##family,                                                                              \
   FLY_FEATURE_##feature,                                                                          \
   widths,                                                                                         \
   src_tv,                                                                                         \
   dst_tv,                                                                                         \
   0,                                                                                              \
   0,                                                                                              \
   0,                                                                                              \
   0,                                                                                              \
   0,                                                                                              \
   0,                                                                                              \
   false,                                                                                          \
   FLY_TYPE_NONE,                                                                                  \
   {NULL, NULL, NULL}},
#define FLY_MMA_ATOM(id, name, family, feature, m, n, k, threads, inputs, pairs, acc, tv_a, tv_b,  \
                     tv_c)                                                                         \
  {FLY_ATOM_##id,                                                                                  \
   name,                                                                                           \
   FLY_ATOM_MMA,                                                                                   \
   0,                                                                                              \
   FLY_FEATURE_##feature,                                                                          \
   0,                                                                                              \
   NULL,                                                                                           \
   NULL,                                                                                           \
   FLY_MMA_##family,                                                                               \
   m,                                                                                              \
   n,                                                                                              \
   k,                                                                                              \
   threads,                                                                                        \
   inputs,                                                                                         \
   FLY_PAIRS_##pairs,                                                                              \
   FLY_TYPE_##acc,                                                                                 \
   {tv_a, tv_b, tv_c}},
#define FLY_FEATURE_NONE NONE
#include "fly_atoms.def"
#undef FLY_FEATURE_NONE
#undef FLY_COPY_ATOM
#undef FLY_MMA_ATOM
};

static const char *const copy_names[] = {
#define X(id, name, doc) name,
    FLY_COPY_FAMILIES(X)
#undef X
};
static const char *const copy_docs[] = {
#define X(id, name, doc) doc,
    FLY_COPY_FAMILIES(X)
#undef X
};

const FlyAtom *fly_atom_find(const char *name, size_t len) {
  for (int i = 0; i < FLY_ATOM_COUNT; i++)
    if (strlen(atoms[i].name) == len && memcmp(atoms[i].name, name, len) == 0)
      return &atoms[i];
  return NULL;
}

const FlyAtom *fly_atom_find_in(const char *ns, const char *name, size_t len) {
  size_t nl = strlen(ns);
  for (int i = 0; i < FLY_ATOM_COUNT; i++) {
    const char *full = atoms[i].name;
    if (strncmp(full, ns, nl) == 0 && full[nl] == '.' && strlen(full + nl + 1) == len &&
        memcmp(full + nl + 1, name, len) == 0)
      return &atoms[i];
  }
  return NULL;
}

const FlyAtom *fly_atom_at(int i) { return i >= 0 && i < FLY_ATOM_COUNT ? &atoms[i] : NULL; }

int fly_atom_vendor(const FlyAtom *a) {
  return a->kind == FLY_ATOM_MMA ? (int)fly_mma_family_vendor(a->mma) : -1;
}

bool fly_atom_available(const FlyAtom *a, const FlyTarget *t) {
  if (a->kind == FLY_ATOM_MMA && !fly_target_has_mma(t, a->mma))
    return false;
  return a->feature < 0 || fly_target_has(t, (FlyFeature)a->feature);
}

/* An MMA atom's feature is one of its family's later chips, which have the
   family too. */
const char *fly_atom_targets(const FlyAtom *a) {
  if (a->kind == FLY_ATOM_MMA && a->feature < 0)
    return fly_targets_with_mma(a->mma);
  return a->feature < 0 ? fly_target_names() : fly_targets_with_feature((FlyFeature)a->feature);
}

const char *fly_copy_family_name(FlyCopyFamily f) { return copy_names[f]; }
const char *fly_copy_family_doc(FlyCopyFamily f) { return copy_docs[f]; }
