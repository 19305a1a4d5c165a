/* fly_lower_build.h — what the Fly lowering passes share: the pieces of a
 * Fly type's text, layouts whose leaves are numbers or SSA values, and a
 * builder that folds the arithmetic on them as it emits it.
 *
 * A Fly type carries its static layout as text ("((32,32),(?,?)):((1,?),(32,?))");
 * the values of the `?` leaves travel as operands (fly.make_memref and the
 * views list them, shape leaves first, then stride leaves). The passes read
 * the text into a tree whose leaves are FlySym: a number, or a value of type
 * i32 known only when the kernel runs. Arithmetic on FlySym folds where both
 * sides are numbers, so static layouts produce no code at all. */
#ifndef FLY_LOWER_BUILD_H
#define FLY_LOWER_BUILD_H

#include <stdbool.h>
#include <stdint.h>

#include "fly_mlir.h"

/* A number, or (value not null) a runtime i32. */
typedef struct FlySym {
  MlirValue v;
  int64_t c;
} FlySym;

/* A layout or int-tuple tree: a leaf (n < 0) or a tuple of n modes. */
typedef struct FlyTree FlyTree;
struct FlyTree {
  int n;       /* -1 for a leaf */
  FlySym leaf; /* leaves: the value */
  bool dyn;    /* leaves: `?` in the text */
  bool under;  /* leaves: `_` in the text */
  FlyTree **e; /* tuples: the modes */
};

/* Emits at one insertion point with one location; remembers failure. */
typedef struct FlyBuild {
  FlyMlir *m;
  FlyInsert ip;
  MlirLocation loc;
  MlirType i32;
  bool failed;
} FlyBuild;

/* ---- text ----------------------------------------------------------------------------------- */

/* The text of a type or attribute (malloc'd). */
char *fly_lower_type_text(MlirType t);
char *fly_lower_attr_text(MlirAttribute a);
/* The index-th quoted parameter of a Fly type's text (malloc'd), or NULL. */
char *fly_lower_quoted(const char *type_text, int index);
/* A tuple text ("(4,(2,?))", "_", "8", "()") as a tree; `?` leaves take the
   values vals[*next], vals[*next + 1] ... in order (NULL vals: they stay
   unknown, value null and dyn set). NULL when the text is malformed. */
FlyTree *fly_tree_parse(const char **s, const MlirValue *vals, int nvals, int *next);
void fly_tree_free(FlyTree *t);
/* Leaves in order; the number of leaves, at most cap stored. */
int fly_tree_leaves(FlyTree *t, FlyTree **out, int cap);
/* The number of `?` leaves of a tuple text or "S:D" layout text. */
int fly_lower_count_dyn(const char *text);

/* A layout "S:D" read with the values of its `?` leaves (shape ones
   first). False when malformed or when the values do not match. */
typedef struct FlyLayoutTree {
  FlyTree *shape, *stride;
} FlyLayoutTree;
bool fly_layout_tree_parse(const char *text, const MlirValue *vals, int nvals, FlyLayoutTree *out);
void fly_layout_tree_free(FlyLayoutTree *l);

/* ---- arithmetic ----------------------------------------------------------------------------- */

FlySym fly_sym_const(int64_t c);
bool fly_sym_is_const(FlySym a);
FlySym fly_sym_add(FlyBuild *b, FlySym x, FlySym y);
FlySym fly_sym_mul(FlyBuild *b, FlySym x, FlySym y);
/* Division and remainder of non-negative numbers. */
FlySym fly_sym_div(FlyBuild *b, FlySym x, FlySym y);
FlySym fly_sym_rem(FlyBuild *b, FlySym x, FlySym y);
/* The value of a FlySym (a constant made now for a number). */
MlirValue fly_sym_value(FlyBuild *b, FlySym x);
/* The number of elements of a shape tree. */
FlySym fly_tree_size(FlyBuild *b, const FlyTree *shape);
/* Where the coordinate crd (a tree congruent to a prefix of shape, or one
   index for a whole mode) lands in the layout: CuTe's crd2idx. */
FlySym fly_tree_crd2idx(FlyBuild *b, FlySym idx, const FlyTree *shape, const FlyTree *stride);
/* The coordinate of index idx in shape, column-major, as leaves in order
   (out has one entry per leaf of shape). */
void fly_tree_idx2crd(FlyBuild *b, FlySym idx, const FlyTree *shape, FlySym *out, int *n);

/* ---- operations ----------------------------------------------------------------------------- */

MlirValue fly_build_i32(FlyBuild *b, int64_t c);
MlirValue fly_build_op1(FlyBuild *b, const char *name, MlirType res, int n, const MlirValue *v,
                        int nattr, const MlirNamedAttribute *attr);
/* An attribute from its text ("16 : i64", "array<i32: 0, 1>"). */
MlirAttribute fly_build_attr(FlyBuild *b, const char *text);
/* ptr + off elements of type elem (llvm.getelementptr); ptr itself for 0. */
MlirValue fly_build_gep(FlyBuild *b, MlirValue ptr, MlirType elem, FlySym off);
MlirValue fly_build_load(FlyBuild *b, MlirType t, MlirValue ptr, int align);
void fly_build_store(FlyBuild *b, MlirValue v, MlirValue ptr, int align);
MlirValue fly_build_extract(FlyBuild *b, MlirValue vec, int64_t i, MlirType elem);
MlirValue fly_build_insert(FlyBuild *b, MlirValue vec, MlirValue x, int64_t i);
/* Reports an error at the builder's location and marks it failed. */
void fly_build_error(FlyBuild *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The bytes of a scalar type (f16 2, f32 4 ...); 0 for others. */
int fly_lower_type_bytes(MlirType t);

#endif

/* ---- memrefs -------------------------------------------------------------------------------- */

/* What a !fly.memref type says: element type, memory, layout text. */
typedef struct FlyMemType {
  MlirType elem;
  char space[16];
  char *layout; /* malloc'd; "S<B,M,S> o L" for a swizzled tile */
  bool swizzled;
} FlyMemType;
bool fly_memtype_read(FlyMlir *m, MlirType t, FlyMemType *out);
void fly_memtype_free(FlyMemType *t);

/* A memref after fly-layout-lowering: made by fly.make_memref(ptr, leaves),
   its layout read with those leaves. */
typedef struct FlyMemDesc {
  FlyMemType type;
  MlirValue ptr;
  FlyLayoutTree L;
} FlyMemDesc;
/* False, after an error at b's location, when v is not such a memref. */
bool fly_memdesc_of(FlyBuild *b, MlirValue v, FlyMemDesc *d);
void fly_memdesc_free(FlyMemDesc *d);
/* The LLVM address space of a Fly memory: 1 global, 3 shared, `priv` for
   registers (5 on AMD, 0 on NVIDIA). */
int fly_lower_addr_space(const char *space, int priv);
/* The value of an operation's string attribute (malloc'd) or NULL. */
char *fly_lower_str_attr(MlirOperation op, const char *name);
/* Whether the operation's name is `name`. */
bool fly_lower_is(MlirOperation op, const char *name);

/* The operations under root that `want` picks, in program order (pre-order
   walk), collected before a pass rewrites them. ops NULL after running out
   of memory. */
typedef struct FlyOpList {
  MlirOperation *ops;
  int n, cap;
  bool failed;
  bool (*want)(MlirOperation op);
} FlyOpList;
void fly_lower_collect(MlirOperation root, FlyOpList *list);

/* Atoms: the fly.make_* operation that made an atom or tiled atom value
   (null when it was not made by one), and its row of the atom table, named
   by its `atom` attribute (NULL when unknown). */
struct FlyAtom;
MlirOperation fly_lower_atom_op(MlirValue atom);
const struct FlyAtom *fly_lower_atom(MlirValue atom);
/* The value of an operation's integer attribute, or `missing`. */
int64_t fly_lower_int_attr(MlirOperation op, const char *name, int64_t missing);
