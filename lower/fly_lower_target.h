/* fly_lower_target.h — convert-fly-to-nvvm and convert-fly-to-rocdl: one
 * pass (fly_lower_target.c), its vendor's parts behind one hook table, in
 * the way of QBE's Target.
 *
 *   fly_lower_memory.c   copies, loads and stores: element offsets from
 *                        the layouts, vectorised where contiguous
 *   fly_lower_buffer.c   AMD's buffer loads and stores, range-checked
 *                        against the tensor argument by the hardware
 *   fly_lower_swizzle.c  addresses in swizzled shared memory
 *   fly_lower_atomic.c   atomics, fences, atomic and volatile loads and
 *                        stores: LLVM's atomics with the vendor's scopes
 *   fly_lower_math.c     math as LLVM intrinsics both back ends implement,
 *                        and conversions with a directed rounding
 *   fly_lower_fp8.c      conversions to and from the 8-bit floats, in pairs
 *   fly_lower_gemm.c     an MMA of fragments as the atom's instructions
 *   fly_lower_wgmma.c    Hopper's wgmma, A and B read from shared memory
 *                        through descriptors derived from their layouts
 *   fly_lower_carry.c    loops carry wgmma's accumulator structs, not the
 *                        vector fly.gemm gives
 *   fly_lower_nvvm.c     NVIDIA's hooks: mma.sync, lg2.approx, cvt with a
 *                        rounding, the fp8 cvt of sm_89 and later, atomics
 *                        as PTX where LLVM 22 loses their scope and order
 *   fly_lower_rocdl.c    AMD's hooks: MFMA, launch sizes from the dispatch
 *                        packet, private memory in address space 5, the
 *                        mode register's rounding, the fp8 cvt (OCP on
 *                        gfx950 and gfx1201, FNUZ with fix-ups on gfx942),
 *                        what memory atomics may touch */
#ifndef FLY_LOWER_TARGET_H
#define FLY_LOWER_TARGET_H

#include "fly_atom.h"
#include "fly_lower_build.h"
#include "fly_memory_order.h"

/* One MMA instruction: x, y, z are the atom's A, B and C values of one
   thread (va, vb, vc of them, of element types ta, tb, tc). */
typedef struct FlyMmaCall {
  const FlyAtom *atom;
  MlirValue x, y, z;
  int va, vb, vc;
  MlirType ta, tb, tc;
} FlyMmaCall;

/* One atomic read-modify-write: *ptr = op(*ptr, x), giving the value
   before, with its scope and order. */
typedef struct FlyAtomicRmw {
  FlyAtomicOp op;
  FlyMemScope scope;
  FlyMemOrder order;
  MlirValue ptr; /* the element: !llvm.ptr<1>, or <3> in shared memory */
  MlirValue x;   /* i32, i64, f32, or a pair: vector<2xf16>, vector<2xbf16> */
  MlirType type; /* x's, and the result's */
  bool shared;
} FlyAtomicRmw;

typedef struct FlyTargetHooks {
  FlyVendor vendor;
  /* The MMA instruction of c->atom's family; its result as vector<vc x tc>. */
  MlirValue (*mma)(FlyBuild *b, const FlyMmaCall *c);
  /* log2 of f32 (a scalar or a vector of type t). */
  MlirValue (*log2)(FlyBuild *b, MlirType t, MlirValue x);
  /* exp2 of f32 (likewise) in one instruction: results below 2^-126
     flush to zero (the generic intrinsic adds a compare and two multiplies
     an element to keep them, a third of a softmax's instructions). */
  MlirValue (*exp2)(FlyBuild *b, MlirType t, MlirValue x);
  /* x (f32 or f64, a scalar or a vector) narrowed to the float type `to`
     (of x's shape) with a directed rounding, arith's RoundingMode: 1
     downward, 2 upward, 3 toward zero. */
  MlirValue (*trunc_rounded)(FlyBuild *b, MlirValue x, MlirType to, int mode);
  /* The fp8 instructions of target t (which has FLY_FEATURE_FP8 or
     FP8_FNUZ), on two values: pack converts a vector<2xf32> or
     vector<2xf16> to the 8-bit float f8 (f8E4M3FN, f8E5M2 or their FNUZ
     formats: FP8_FNUZ targets only), rounding to
     nearest even and saturating (NaN stays NaN), and gives the two bytes as
     an i16, element 0 in its low byte; unpack converts two such bytes back,
     exactly, to a vector<2xf16> or vector<2xf32>, whichever it makes. */
  MlirValue (*fp8_pack)(FlyBuild *b, const FlyTarget *t, MlirValue pair, MlirType f8);
  MlirValue (*fp8_unpack)(FlyBuild *b, const FlyTarget *t, MlirValue bytes, MlirType f8);
  /* Operations besides the Fly ones this vendor rewrites (AMD's
     gpu.block_dim ...): whether it wants op, and the rewrite. */
  bool (*wants)(MlirOperation op);
  void (*rewrite)(FlyBuild *b, MlirOperation op);
  /* LLVM's syncscope for a Fly scope, in atomics, fences and atomic loads
     and stores; "" for the whole system (LLVM's default scope). */
  const char *(*syncscope)(FlyMemScope s);
  /* An atomic read-modify-write; its result, the value before. */
  MlirValue (*atomic_rmw)(FlyBuild *b, const FlyAtomicRmw *a);
  /* The shared memory the launch gives beyond the kernel fn's own tiles
     (smem<T>(?)): where it starts (!llvm.ptr<3>), and its bytes, an i32,
     in *bytes when bytes is not NULL. */
  MlirValue (*launch_smem)(FlyBuild *b, MlirOperation fn, MlirValue *bytes);
} FlyTargetHooks;

/* ---- fly_lower_target.c ---- */
/* An LLVM intrinsic of no operands and one i32 or pointer result. */
MlirValue fly_build_intrinsic0(FlyBuild *b, const char *name, MlirType t);

/* The target of the gpu.module op is in (its nvvm or rocdl target's chip),
   or NULL when it has none that Fly knows. */
const FlyTarget *fly_lower_target_of(MlirOperation op);

extern const FlyTargetHooks fly_nvvm_hooks;
extern const FlyTargetHooks fly_rocdl_hooks;

/* ---- fly_lower_memory.c ---- */
void fly_lower_copy(FlyBuild *b, MlirOperation op);

/* ---- fly_lower_async.c ---- */
/* One cp.async of `bytes` (4, 8 or 16) from global `from` to shared `to`,
   as atom (nv.cp_async_ca or _cg) moves it; with a predicate p (an i1, or
   null), a masked element is zero-filled when zero_fill, else untouched.
   False after reporting why it cannot be (a run narrower than 4 bytes). */
bool fly_lower_cp_async(FlyBuild *b, const struct FlyAtom *atom, MlirValue to, MlirValue from,
                        int bytes, MlirValue p, bool zero_fill);
/* fly.mbarrier: NVVM's mbarrier operation of its kind on the element's
   address; `wait` is try_wait.parity, which NVVM loops until it holds. */
void fly_lower_mbarrier(FlyBuild *b, MlirOperation op);

/* ---- fly_lower_buffer.c ---- */
/* AMD's buffer resource of the tensor argument a global address is in. */
typedef struct FlyBufferRsrc {
  MlirValue rsrc; /* !llvm.ptr<8> */
  MlirValue base; /* its base: the argument's lowest element */
} FlyBufferRsrc;
/* The resource of the kernel argument ptr is an address in, made at the
   kernel's entry; false after an error naming atom (ptr not traced to an
   argument). */
bool fly_lower_buffer_rsrc(FlyBuild *b, const struct FlyAtom *atom, MlirValue ptr,
                           FlyBufferRsrc *r);
/* A load of `bytes` (1, 2, 4, 8 or 16) at ptr as type t, and a store of x;
   where pred (an i1, or null) is false the offset lies past the resource:
   the load gives 0 and the store is dropped. */
MlirValue fly_lower_buffer_load(FlyBuild *b, const FlyBufferRsrc *r, MlirValue ptr, MlirType t,
                                int bytes, MlirValue pred);
void fly_lower_buffer_store(FlyBuild *b, const FlyBufferRsrc *r, MlirValue ptr, MlirValue x,
                            int bytes, MlirValue pred);

/* ---- fly_lower_ldmatrix.c ---- */
/* The matrices one instruction of a warp-wide atom moves (1, 2 or 4) and
   whether it transposes them; false after an error. */
bool fly_lower_matrix_shape(FlyBuild *b, const struct FlyAtom *atom, int *matrices, bool *trans);
/* ldmatrix from this lane's 16-byte row (an !llvm.ptr<3>): one i32 a
   matrix in out; stmatrix of one i32 a matrix (in) to it. */
bool fly_lower_ldmatrix(FlyBuild *b, MlirValue row, int matrices, bool trans, MlirValue *out);
bool fly_lower_stmatrix(FlyBuild *b, MlirValue row, int matrices, bool trans, const MlirValue *in);
void fly_lower_load(FlyBuild *b, MlirOperation op);
void fly_lower_store(FlyBuild *b, MlirOperation op);

/* ---- fly_lower_tma.c ---- */
/* fly.tma_load, fly.tma_load_multicast and fly.tma_store: NVVM's bulk
   tensor copies (NVIDIA only: the feature tma keeps other targets from
   reaching here). */
void fly_lower_tma_load(FlyBuild *b, MlirOperation op);
void fly_lower_tma_load_multicast(FlyBuild *b, MlirOperation op);
void fly_lower_tma_store(FlyBuild *b, MlirOperation op);
/* The pointer to the one element of a memref (null after an error). */
MlirValue fly_lower_element_ptr(FlyBuild *b, const FlyMemDesc *d);

/* ---- fly_lower_swizzle.c ---- */
/* The elements of a swizzled tile (fly_lower_build.h's FlyMemDesc): its
   base, element type and swizzle, and the address computations made so
   far, which later elements share. Zero the rest before the first use. */
enum { FLY_SWIZZLED_PTRS = 16 };
typedef struct FlySwizzledPtrs {
  MlirValue base;
  MlirType elem;
  FlySwizzle s;
  const void *known_x; /* the last runtime offset whose alignment was found */
  int known_k;
  struct {
    const void *x;
    int64_t hi, flip;
  } key[FLY_SWIZZLED_PTRS];
  MlirValue val[FLY_SWIZZLED_PTRS];
  int n, next;
} FlySwizzledPtrs;
/* base + swizzle(x + c): x a runtime offset (or a constant), c a constant;
   folded where x is known, and, where x is a multiple of the swizzle's
   period, base + x + swizzle(c). */
MlirValue fly_build_swizzled_ptr(FlyBuild *b, FlySwizzledPtrs *p, FlySym x, int64_t c);
/* The longest run of consecutive offsets s keeps consecutive (2^M, when
   the run starts at a multiple of it). */
int fly_swizzle_run(FlySwizzle s);

/* ---- fly_lower_atomic.c ---- */
/* Whether op is an atomic, a fence, or an atomic or volatile access. */
bool fly_lower_atomic_wanted(MlirOperation op);
void fly_lower_atomic(FlyBuild *b, MlirOperation op, const FlyTargetHooks *h);
/* LLVM's atomicrmw for a, in syncscope ("" for the system), with the
   vendor's attributes; whether it works on floats (fadd, fmin, fmax). */
MlirValue fly_build_atomicrmw(FlyBuild *b, const FlyAtomicRmw *a, const char *syncscope, int nattr,
                              const MlirNamedAttribute *attr);
bool fly_atomic_is_float(const FlyAtomicRmw *a);

/* ---- fly_lower_math.c ---- */
/* Whether the math or arith operation is one the pass rewrites. */
bool fly_lower_math_wanted(MlirOperation op);
void fly_lower_math(FlyBuild *b, MlirOperation op, const FlyTargetHooks *h);
/* An LLVM intrinsic by name ("llvm.exp2"), suffixed with its type. */
MlirValue fly_build_intrinsic(FlyBuild *b, const char *name, MlirType t, int n, const MlirValue *v);
/* t's element type (t itself for a scalar), and a vector of n of them. */
MlirType fly_elem_of(MlirType t);
MlirType fly_vec_type(int n, MlirType elem);

/* ---- fly_lower_fp8.c ---- */
/* An arith.truncf to an 8-bit float or an arith.extf from one. */
void fly_lower_fp8(FlyBuild *b, MlirOperation op, const FlyTargetHooks *h);
/* The FlyType of the 8-bit float t (f8E4M3FN, f8E5M2, f8E4M3FNUZ or
   f8E5M2FNUZ; NULL for others),
   for its format's facts (fly_float_max ...). */
const FlyType *fly_lower_f8_type(MlirType t);

/* ---- fly_lower_gemm.c ---- */
void fly_lower_gemm(FlyBuild *b, MlirOperation op, const FlyTargetHooks *h);
/* ---- fly_lower_wgmma.c: fly.gemm of a wgmma atom, A and B in shared memory ---- */
void fly_lower_wgmma(FlyBuild *b, MlirOperation op, const FlyAtom *atom);
/* ---- fly_lower_carry.c: accumulators between fly.gemm's vector and wgmma's structs ---- */
/* A marked conversion of v to `to` (between the vector and the struct, or
   struct of structs, of the same floats in the same order). */
MlirValue fly_acc_cast(FlyBuild *b, MlirValue v, MlirType to);
/* Whether v is a marked conversion's result, and its input. */
bool fly_acc_cast_input(MlirValue v, MlirValue *from);
/* After the rewrites: loops carry the structs their MMAs give, conversions
   that undo each other go, and the rest become element moves. */
bool fly_lower_carry(FlyMlir *m, MlirOperation root);
/* Elements idx[0..n) of vector v, as a vector (one element: a scalar). */
MlirValue fly_build_pick(FlyBuild *b, MlirValue v, const int *idx, int n, MlirType elem);

#endif
