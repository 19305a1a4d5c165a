/* fly_lower_build.h — what the Fly lowering passes share: the parameters
 * of a Fly type, layouts whose leaves are numbers or SSA values, and a
 * builder of the LLVM operations they emit.
 *
 * A Fly type carries its layout as the layout algebra's text with `?` for
 * the leaves known only when the kernel runs ("((32,32),(?,?)):((1,?),(32,?))");
 * the values of those leaves travel as operands (fly.make_memref and the
 * views list them, shape leaves first, then stride leaves). The passes read
 * the text with the algebra's own pattern reader (fly_layout_text.h) and
 * give each `?` its value; sema's symbolic functions (fly_symbolic.h) then
 * compute offsets and sizes, folding what is static, and call back here to
 * emit the rest as arith on i32. So lower/ has no layout parser and no
 * layout algebra of its own. */
#ifndef FLY_LOWER_BUILD_H
#define FLY_LOWER_BUILD_H

#include <stdbool.h>
#include <stdint.h>

#include "fly_layout.h"
#include "fly_mlir.h"
#include "fly_swizzle.h"
#include "fly_symbolic.h"

/* Emits at one insertion point with one location; remembers failure. The
   algebra session A (the pass's) holds the layouts the pass reads. */
typedef struct FlyBuild {
  FlyMlir *m;
  FlyInsert ip;
  MlirLocation loc;
  MlirType i32;
  bool failed;
  FlyAlgebra *A;
} FlyBuild;

/* ---- text ----------------------------------------------------------------------------------- */

/* The text of a type or attribute (malloc'd). */
char *fly_lower_type_text(MlirType t);
char *fly_lower_attr_text(MlirAttribute a);

/* ---- layouts and arithmetic ------------------------------------------------------------------ */

/* The arithmetic fly_symbolic.h asks for, emitted by b as arith on i32. */
FlySymOps fly_build_ops(FlyBuild *b);
/* The value of x (a constant made now for a number). */
MlirValue fly_build_sym(FlyBuild *b, FlySym x);
static inline FlySym fly_sym_of(MlirValue v) { return fly_sym_handle(v.ptr); }
/* A tuple or layout pattern read from text, its `?` leaves taking vals[0],
   vals[1] ... in order (shape leaves before stride leaves); with vals NULL
   they stay without values (only their structure is wanted). NULL after an
   error at b's location (a malformed text, or as many values as `?`s). */
FlyTuple *fly_build_tuple(FlyBuild *b, const char *text, const MlirValue *vals, int nvals);
FlyLayout *fly_build_layout(FlyBuild *b, const char *text, const MlirValue *vals, int nvals);
/* The number of `?` leaves of a tuple or layout. */
int fly_tuple_dynamic_count(FlyTuple *t);
int fly_layout_dynamic_count(const FlyLayout *L);

/* ---- operations ----------------------------------------------------------------------------- */

MlirValue fly_build_i32(FlyBuild *b, int64_t c);
MlirValue fly_build_op1(FlyBuild *b, const char *name, MlirType res, int n, const MlirValue *v,
                        int nattr, const MlirNamedAttribute *attr);
/* A constant of type t, a scalar or a vector splatting it, from its
   value's text ("1", "-0.0", "0x7FC00000"). */
MlirValue fly_build_constant(FlyBuild *b, MlirType t, const char *value);
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
/* Whether t is f8E4M3FN or f8E5M2, or a vector of them. LLVM has no 8-bit
   floats: memory holds them as i8 (the storage type of t: t itself for
   other types), and arith.bitcast, which the LLVM conversion erases,
   turns one into the other. v as type t (v itself when it has that type). */
bool fly_lower_is_f8(MlirType t);
MlirType fly_lower_storage_type(MlirType t);
MlirValue fly_build_bitcast(FlyBuild *b, MlirValue v, MlirType t);

/* ---- memrefs -------------------------------------------------------------------------------- */

/* What a !fly.memref type says: element type, memory, layout text. A
   swizzled tile's type says "S<B,M,S> o L": `swizzle` holds (B, M, S) and
   `layout` only L's text. */
typedef struct FlyMemType {
  MlirType elem;
  char space[16];
  char *layout; /* malloc'd; L, without a swizzle */
  bool swizzled;
  FlySwizzle swizzle; /* when swizzled */
} FlyMemType;
bool fly_memtype_read(FlyMlir *m, MlirType t, FlyMemType *out);
void fly_memtype_free(FlyMemType *t);

/* A memref after fly-layout-lowering: made by fly.make_memref(ptr, leaves),
   its layout read with those leaves (in b's algebra session).

   A swizzled memref (type.swizzled, shared memory) is made by
   fly.make_memref(base, offset, leaves): element c of the view is at
   base + swizzle(offset + L(c)), the swizzle acting on the element offset
   from the tile's base, not from the view's origin (CuTe's swizzled
   pointers). So every view of a tile keeps the tile's base; only the
   offset moves. This is what wgmma descriptors and TMA need: the tile's
   base (aligned to fly_swizzle_tile_align), the view's offset in it, the
   swizzle and the view's layout. */
typedef struct FlyMemDesc {
  FlyMemType type; /* type.swizzle: (B, M, S) when type.swizzled */
  /* The view's first element; for a swizzled view, the base of its tile
     (its allocation, an !llvm.ptr<3> aligned to fly_swizzle_tile_align). */
  MlirValue ptr;
  FlyLayout *L; /* the view's layout L (for a swizzled view, without the swizzle) */
  /* A swizzled view's origin in elements from ptr (before the swizzle):
     a constant (fly_sym_is_const) or the handle of an i32 value;
     offset_value is that i32 either way (an arith.constant for a constant).
     For other memrefs the constant 0 and a null value. */
  FlySym offset;
  MlirValue offset_value;
} FlyMemDesc;
/* False, after an error at b's location, when v is not such a memref. */
bool fly_memdesc_of(FlyBuild *b, MlirValue v, FlyMemDesc *d);
void fly_memdesc_free(FlyMemDesc *d);
/* The address of the view's origin as the hardware's tile engines (TMA,
   wgmma descriptors) take it: ptr itself, or for a swizzled view its
   tile's base plus its offset, unswizzled (they swizzle the addresses they
   compute from the tile's aligned base themselves). */
MlirValue fly_memdesc_start(FlyBuild *b, const FlyMemDesc *d);
/* The LLVM address space of a Fly memory: 1 global, 3 shared, `priv` for
   registers (5 on AMD, 0 on NVIDIA). */
int fly_lower_addr_space(const char *space, int priv);
/* The value of an operation's string attribute (malloc'd) or NULL. */
char *fly_lower_str_attr(MlirOperation op, const char *name);
/* Whether the operation's name is `name`. */
bool fly_lower_is(MlirOperation op, const char *name);
/* The numbers a function records one an argument in its attribute `name`
   (a dense i64 array: fly.arg_align, fly.arg_span), malloc'd, n of them
   (the entry block's arguments); zeros where it has none yet. NULL when
   out of memory (the error is made). Set them back with
   fly_lower_set_arg_numbers. */
int64_t *fly_lower_arg_numbers(FlyBuild *b, MlirOperation fn, const char *name, intptr_t *n);
void fly_lower_set_arg_numbers(MlirOperation fn, const char *name, intptr_t n,
                               const int64_t *numbers);

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
/* Whether v is an integer arith.constant, and its value. */
bool fly_lower_constant_of(MlirValue v, int64_t *out);
/* The value of an operation's integer attribute, or `missing`. */
int64_t fly_lower_int_attr(MlirOperation op, const char *name, int64_t missing);

/* ---- fly_lower_align.c: used by both passes ---- */
/* Whether ptr is a multiple of `bytes` (a power of two), assuming of the
   kernel's arguments what the runtime will then check: when it is, the
   arguments it depends on are marked as requiring it (the gpu.func's
   fly.arg_align, and llvm.align on its pointers). */
bool fly_lower_aligned(FlyBuild *b, MlirValue ptr, int64_t bytes);
/* Whether the i32 v is provably a multiple of k, assuming nothing of the
   kernel's arguments (and so requiring nothing of them). */
bool fly_lower_multiple(FlyBuild *b, MlirValue v, int64_t k);

/* An external array of no size in shared memory (address space 3) named
   sym in the gpu.module gm, declared once, aligned to `align` bytes (at
   least 16; a later call may raise it): the dynamic shared memory, whose
   size the launch gives. */
void fly_build_extern_shared(FlyBuild *b, MlirOperation gm, const char *sym, int64_t align);
/* The address of the global sym, a pointer in addr_space. */
MlirValue fly_build_addressof(FlyBuild *b, const char *sym, int addr_space);

#endif
