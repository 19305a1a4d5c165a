/* fly_value.h — the values and types of the compile-time interpreter.
 *
 * Everything a Fly expression can evaluate to is a FlyVal. Most values are
 * static (known at compile time): integers, floats, booleans, strings,
 * tuples, layouts, types, functions, atoms. A runtime value (FLY_V_RUNTIME)
 * is one the kernel computes when it runs: the interpreter knows only its
 * type, and where it came from, so that an error can say why it is not
 * static. Tensors are static descriptions (element type, memory, layout)
 * whose shape and stride leaves may be runtime values.
 *
 * Values and types live in the interpreter's arena and are immutable. */
#ifndef FLY_VALUE_H
#define FLY_VALUE_H

#include <stdbool.h>
#include <stdint.h>

#include "fly_ast.h"
#include "fly_swizzle.h"

/* ---- types ----------------------------------------------------------------- */

typedef enum FlyTypeKind {
  FLY_TY_SCALAR, /* code: FLY_TYPE_I1 ... FLY_TYPE_F8E5M2FNUZ */
  FLY_TY_VEC,    /* n elements (-1: not known here) of elem */
  FLY_TY_TENSOR, /* tensor/smem/rmem<elem, shape:stride>; shape NULL: any */
  FLY_TY_TUPLE,  /* n elems */
  FLY_TY_STATIC, /* code: FLY_TYPE_INT ... FLY_TYPE_TYPE, the compile-time types */
} FlyTypeKind;

typedef enum FlySpace {
  FLY_SPACE_GLOBAL,
  FLY_SPACE_SHARED,
  FLY_SPACE_REGISTER,
  FLY_SPACE_COORD, /* no memory: an identity tensor's elements are coordinates */
} FlySpace;

typedef struct FlyVal FlyVal;
typedef struct FlyType FlyType;
struct FlyType {
  FlyTypeKind kind;
  FlyTypeCode code;
  FlySpace space;
  int n;
  const FlyType *elem;
  const FlyType **elems;
  const FlyVal *shape, *stride; /* tensor types: `?` leaves are FLY_V_DYNAMIC */
  int align;                    /* tensor types: bytes, 0 when not promised */
};

/* ---- values ---------------------------------------------------------------- */

typedef enum FlyValKind {
  FLY_V_NONE,       /* what a statement or a valueless block gives */
  FLY_V_INT,        /* i; type NULL (int) or an integer scalar type */
  FLY_V_FLOAT,      /* f; type NULL (float) or a float scalar type */
  FLY_V_BOOL,       /* i: 0 or 1; type NULL (bool) or i1 */
  FLY_V_STR,        /* s, len */
  FLY_V_TUPLE,      /* n, elems */
  FLY_V_LAYOUT,     /* layout */
  FLY_V_COMPOSED,   /* composed: inner (swizzle or layout) o offset o layout */
  FLY_V_SWIZZLE,    /* swizzle */
  FLY_V_BASIS,      /* basis: a scaled basis element s@i of the algebra (fly_tuple.h) */
  FLY_V_TYPE,       /* type */
  FLY_V_UNDERSCORE, /* `_` */
  FLY_V_DYNAMIC,    /* `?` in a tensor type */
  FLY_V_RUNTIME,    /* type: a scalar or vec type; origin: why not static */
  FLY_V_TENSOR,     /* tensor */
  FLY_V_FN,         /* fn: a helper function's declaration */
  FLY_V_KERNEL,     /* fn: a kernel's declaration (only its launch uses it) */
  FLY_V_BUILTIN,    /* builtin id; self, self_at: the receiver of a method */
  FLY_V_OBJECT,     /* object: atoms, tiled copies, target, namespaces ... */
} FlyValKind;

/* Why a runtime value is not static: the node that made it and a phrase
 * ("a runtime parameter of kernel 'k'", "the thread index"). */
typedef struct FlyOrigin {
  const FlyNode *node;
  const char *why;
} FlyOrigin;

typedef struct FlyTensor {
  const FlyType *elem;
  FlySpace space;
  const FlyVal *shape, *stride; /* congruent tuples; leaves INT or RUNTIME */
  int align;
  /* A swizzled shared tile: element c is at swizzle(o + L(c)), o being the
     offset of the tensor's start from the tile's base (which the compiler
     aligns to the swizzle's period). Tensors cut from it keep the swizzle,
     as CuTe's swizzled shared-memory pointers do. */
  bool swizzled;
  FlySwizzle swizzle;
  /* FLY_SPACE_COORD: the coordinate of element 0 (NULL: the origin), a
     tuple of static or runtime integers; the strides are basis elements, and
     element c is origin + the layout's value at c (fly_identity.c). */
  const FlyVal *origin;
} FlyTensor;

typedef enum FlyObjectKind {
  FLY_OBJ_TARGET,     /* `target`: .vendor, .arch, .family */
  FLY_OBJ_INDEX3,     /* thread_idx ...: .x .y .z; name in `name` */
  FLY_OBJ_NAMESPACE,  /* nv, amd: atom names as members */
  FLY_OBJ_ATOM_NAME,  /* nv.mma_sync_16x8x16 ... */
  FLY_OBJ_UNIVERSAL,  /* universal(BITS): bits */
  FLY_OBJ_COPY_ATOM,  /* bits, elem */
  FLY_OBJ_MMA_ATOM,   /* atom name, elem (A), elem_b (B), acc */
  FLY_OBJ_TILED_COPY, /* atom, tv */
  FLY_OBJ_TILED_MMA,  /* atom, layout: how atoms tile the threads */
  FLY_OBJ_THR_COPY,   /* tiled copy sliced to one thread: thread */
  FLY_OBJ_THR_MMA,    /* tiled mma sliced to one thread */
  FLY_OBJ_RANGE,      /* range(lo, hi, step) or range_const(n) */
  FLY_OBJ_TENSOR_MAP, /* tensor_map(A, box): tmap */
} FlyObjectKind;

typedef struct FlyAtom FlyAtom;           /* fly_atom.h */
typedef struct FlyTvLayout FlyTvLayout;   /* fly_layout_tv.h */
typedef struct FlyTensorMap FlyTensorMap; /* fly_tensor_map.h */

typedef struct FlyObject {
  FlyObjectKind kind;
  const char *name;    /* INDEX3, NAMESPACE, ATOM_NAME: its name */
  int which;           /* INDEX3: the opcode of its members (fly_emit.h) */
  const FlyAtom *atom; /* ATOM_NAME, MMA_ATOM, COPY_ATOM */
  int bits;            /* UNIVERSAL, COPY_ATOM */
  /* COPY_ATOM: elem; MMA_ATOM: A's operand type (elem), B's (elem_b: the
     same unless the atom mixes types) and the accumulator's. */
  const FlyType *elem, *elem_b, *acc;
  const FlyVal *base;           /* TILED_*: the atom; THR_*: the tiled value */
  const FlyLayout *layout;      /* TILED_MMA: atom layout */
  const FlyTvLayout *tv;        /* TILED_COPY */
  const FlyVal *thread;         /* THR_*: the thread index */
  const FlyVal *lo, *hi, *step; /* RANGE */
  bool unrolled;                /* RANGE: range_const */
  const FlyTensorMap *tmap;     /* TENSOR_MAP */
} FlyObject;

/* The element type of operand 'A', 'B' or 'C' of an MMA atom. */
static inline const FlyType *fly_mma_elem(const FlyObject *atom, char operand) {
  return operand == 'A' ? atom->elem : operand == 'B' ? atom->elem_b : atom->acc;
}

struct FlyVal {
  FlyValKind kind;
  const FlyType *type;
  /* RUNTIME and TENSOR values while tracing: the emitter's handle for the
     code that computes the value (fly_emit.h); NULL otherwise. */
  const void *ssa;
  /* A RUNTIME vec whose elements the interpreter knows, being built from
     constants (vec<4, i32>(1, 2, 3, 4)): a tuple of them, typed constants
     of its element type; NULL otherwise. The vec still lives in registers,
     so it is not static, but its elements, reductions and bits are, and
     the vector builtins fold them (fly_builtins_vector.c). */
  const FlyVal *known;
  union {
    int64_t i;
    double f;
    struct {
      const char *s;
      uint32_t len;
    };
    struct {
      int n;
      const FlyVal **elems;
    };
    const FlyLayout *layout;
    const FlyComposed *composed;
    FlySwizzle swizzle;
    const FlyTuple *basis;
    const FlyType *type_value;
    FlyOrigin origin;
    FlyTensor tensor;
    const FlyNode *fn;
    struct {
      int builtin;
      const FlyVal *self;
      const FlyNode *self_at; /* the receiver's expression in x.f, for messages */
    };
    FlyObject object;
  };
};

/* ---- construction (fly_value.c); every value comes from the arena ---------- */

typedef struct FlyAlgebra FlyAlgebra;

const FlyType *fly_type_scalar(FlyTypeCode code);
const FlyType *fly_type_static(FlyTypeCode code);
const FlyType *fly_type_vec(FlyAlgebra *A, int n, const FlyType *elem);
const FlyType *fly_type_tuple(FlyAlgebra *A, int n, const FlyType **elems);

const FlyVal *fly_val_none(void);
/* What a name is bound to when its definition failed: using it gives no
   second message. */
const FlyVal *fly_val_poison(void);
const FlyVal *fly_val_underscore(void);
const FlyVal *fly_val_dynamic(void);
const FlyVal *fly_val_bool(bool b);
FlyVal *fly_val_new(FlyAlgebra *A, FlyValKind kind);
const FlyVal *fly_val_int(FlyAlgebra *A, int64_t i, const FlyType *type);
const FlyVal *fly_val_float(FlyAlgebra *A, double f, const FlyType *type);
const FlyVal *fly_val_str(FlyAlgebra *A, const char *s, uint32_t len);
const FlyVal *fly_val_tuple(FlyAlgebra *A, int n, const FlyVal **elems);
const FlyVal *fly_val_layout(FlyAlgebra *A, const FlyLayout *L);
const FlyVal *fly_val_type(FlyAlgebra *A, const FlyType *t);
const FlyVal *fly_val_runtime(FlyAlgebra *A, const FlyType *type, FlyOrigin origin);

/* ---- questions ------------------------------------------------------------- */

/* Static: known at compile time. A tuple is static when all its elements
 * are; a tensor never is (its data lives on the GPU). */
bool fly_val_is_static(const FlyVal *v);
/* The first runtime value inside v (v itself, an element, a tensor leaf). */
const FlyVal *fly_val_first_runtime(const FlyVal *v);
bool fly_type_is_int(const FlyType *t); /* i1 excluded */
bool fly_type_is_float(const FlyType *t);
/* The 8-bit floats: f8e4m3 and f8e5m2 (OCP), f8e4m3fnuz and f8e5m2fnuz. */
bool fly_type_is_f8(const FlyType *t);
bool fly_type_is_fnuz(const FlyType *t);
int fly_type_bits(const FlyType *t); /* scalar widths; index counts 64 */
bool fly_type_equal(const FlyType *a, const FlyType *b);
/* How a value between two of a type's is rounded: to the nearest (ties to
   even), toward zero, down (toward -infinity) or up (toward +infinity). */
typedef enum FlyRounding {
  FLY_ROUND_NEAREST,
  FLY_ROUND_ZERO,
  FLY_ROUND_DOWN,
  FLY_ROUND_UP,
} FlyRounding;
/* x rounded to the nearest value of float type t, ties to even (t not a
   float type: x itself). False when the result is beyond t's largest finite
   value, which fly_float_max gives. */
bool fly_float_round(const FlyType *t, double x, double *out);
/* The same with a rounding; as IEEE 754 has it, a value beyond the largest
   finite one that rounds toward zero gives that value (so does one above it
   rounding down, or below its negative rounding up): only the others
   overflow. */
bool fly_float_round_to(const FlyType *t, double x, FlyRounding r, double *out);
double fly_float_max(const FlyType *t);
/* The encoding of x, a finite value of float type t (as fly_float_round
   gives it), in t's bits: IEEE binary16, binary32 and binary64, bfloat16,
   and the OCP 8-bit formats E4M3FN and E5M2. */
uint64_t fly_float_bits(const FlyType *t, double x);
/* The value that `bits` (the low bits of t's width) encode in float type t;
   false for an infinity or a NaN, which no compile-time float holds. */
bool fly_float_from_bits(const FlyType *t, uint64_t bits, double *out);
/* The range of a fixed-width integer type (two's complement); the range of
   64 bits and false for another type. */
bool fly_int_range(const FlyType *t, int64_t *lo, int64_t *hi);
/* The smallest magnitude that rounds to nearest beyond float type t's
   largest finite value: that value plus half the spacing below it. Whether
   this halfway value itself overflows (ties go to even, and the largest
   finite value may be odd) is *inclusive. */
double fly_float_overflow_bound(const FlyType *t, bool *inclusive);
/* A tuple of integers only (static), usable as a shape or a coordinate. */
bool fly_val_is_int_tuple(const FlyVal *v);
/* Structural equality of static values (== on tuples, layouts, types ...). */
bool fly_val_equal(const FlyVal *a, const FlyVal *b);

/* ---- text -------------------------------------------------------------------- */

/* The canonical form `flyc eval` prints: 42, 1.5, true, "s", (1,(2,3)),
 * (8,16):(1,8), f32, vec<4, f32>, tensor<f32, (?,?):(?,1)>, 7 as i8 ... */
char *fly_val_str_canonical(FlyAlgebra *A, const FlyVal *v);
char *fly_type_str(FlyAlgebra *A, const FlyType *t);
/* What kind of value this is, for messages: "an integer", "a layout",
 * "a runtime i32", "a tensor in shared memory", ... */
char *fly_val_describe(FlyAlgebra *A, const FlyVal *v);

/* The runtime type a static number takes where no other type is implied:
 * int -> i32, float -> f32, bool -> i1; a typed constant keeps its type
 * (fly_interp_types.c). */
const FlyType *fly_default_runtime_type(const FlyVal *v);

/* A tuple value as a pattern of the algebra (fly_layout_text.h): integers,
 * `_`, and `?` for each runtime leaf (its handle: the leaf's FlyVal). How
 * the tracer writes shapes, strides and coordinates into the IR, which the
 * lowering reads back with fly_parse_tuple_pattern. NULL after an error. */
struct FlyTuple;
struct FlyTuple *fly_val_pattern(FlyAlgebra *A, const FlyVal *v);

#endif
