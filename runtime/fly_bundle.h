/* fly_bundle.h — the bundle (.flyb): compiled kernels as the runtime loads
 * them. The compiler writes it (lower/fly_bundle_write.c), the runtime reads
 * it (runtime/fly_bundle_read.c); this header is the format both follow,
 * and docs/bundle.md describes it for other readers.
 *
 * A bundle holds, for each kernel specialisation (one binding of its const
 * parameters on one target): the binary image with its symbol, the
 * parameter signature (names, kinds, element types, layouts with their `?`
 * leaves), the kernel's arguments in the order the binary takes them, and
 * the launch rule of its `launch` block as a small program over the runtime
 * arguments. Several specialisations of a kernel, and several targets, sit
 * side by side; the runtime picks by name, target and const bindings.
 *
 * The layout on disk, all integers little-endian:
 *
 *   FlyBundleHeader      at offset 0
 *   tables               each an array of fixed-size records, 8-aligned
 *   strings              NUL-terminated UTF-8, referenced by offset
 *   data                 the binary images, each 16-aligned
 *
 * A reader rejects any bundle whose magic, version, sizes, checksum or
 * references are wrong before it hands out a single record, so what it
 * returns can be used without further checks. Records may grow in later
 * versions: each table states its record size and a reader reads the
 * prefix it knows; a record or header shorter than this version's (written
 * before a field was added) reads with zeros for what it lacks. */
#ifndef FLY_BUNDLE_H
#define FLY_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FLY_BUNDLE_MAGIC "FLYBNDL\n" /* 8 bytes, no NUL */
enum { FLY_BUNDLE_VERSION = 1 };
/* The largest bundle a reader accepts (a sanity bound, not a format limit). */
#define FLY_BUNDLE_MAX_SIZE ((uint64_t)1 << 32)

/* A table: count records of record_size bytes at offset. */
typedef struct FlyBundleTable {
  uint64_t offset;
  uint32_t count;
  uint32_t record_size;
} FlyBundleTable;

enum {
  FLY_BUNDLE_T_KERNELS,
  FLY_BUNDLE_T_PARAMS,
  FLY_BUNDLE_T_CODE,
  FLY_BUNDLE_T_IMAGES,
  FLY_BUNDLE_T_TMAPS, /* added after the first bundles: a header of 144 bytes has none */
  FLY_BUNDLE_NTABLES
};

typedef struct FlyBundleHeader {
  char magic[8];         /* FLY_BUNDLE_MAGIC */
  uint32_t version;      /* FLY_BUNDLE_VERSION */
  uint32_t header_size;  /* sizeof(FlyBundleHeader): 160 (144 before the tensor maps' table) */
  uint64_t file_size;    /* the whole bundle, in bytes */
  uint32_t checksum;     /* CRC-32 (as zlib's crc32) of the whole bundle, read
                            with these four bytes as zero */
  uint32_t flags;        /* 0; reserved */
  uint32_t compiler;     /* string: the compiler that wrote it, "flyc 0.1.0" */
  uint32_t toolchain;    /* string: the code generator it was built with, "LLVM 22.1.8" */
  uint32_t source_hash;  /* string: SHA-256 (hex) of the sources compiled */
  uint32_t reserved;     /* 0 */
  uint64_t strings;      /* offset of the string area */
  uint64_t strings_size; /* its size; its last byte is NUL */
  uint64_t data;         /* offset of the data area (the images) */
  uint64_t data_size;
  FlyBundleTable tables[FLY_BUNDLE_NTABLES];
} FlyBundleHeader;

/* A value of the launch program: a number, a runtime argument, or the
   result of an earlier instruction of the same kernel. */
enum {
  FLY_LAUNCH_CONST = 0,  /* value */
  FLY_LAUNCH_SCALAR = 1, /* the scalar parameter `index` (an index into the kernel's params) */
  FLY_LAUNCH_SHAPE = 2,  /* leaf `value` of the `?` shape leaves of tensor parameter `index` */
  FLY_LAUNCH_STRIDE = 3, /* the same among its `?` stride leaves */
  FLY_LAUNCH_TEMP = 4,   /* the result of instruction `index` (an earlier one) */
};

typedef struct FlyBundleOperand {
  uint32_t kind;
  uint32_t index;
  int64_t value;
} FlyBundleOperand;

/* Instructions of the launch program: 64-bit signed integer arithmetic.
   Division and remainder truncate toward zero, as the kernel's own do. */
enum {
  FLY_LAUNCH_ADD = 1,
  FLY_LAUNCH_SUB,
  FLY_LAUNCH_MUL,
  FLY_LAUNCH_DIV,
  FLY_LAUNCH_REM,
  FLY_LAUNCH_MIN,
  FLY_LAUNCH_MAX,
  FLY_LAUNCH_SHL,
  FLY_LAUNCH_SHR,
  FLY_LAUNCH_AND,
  FLY_LAUNCH_OR,
  FLY_LAUNCH_XOR,
  /* Comparisons: 1 when a OP b holds, else 0. */
  FLY_LAUNCH_EQ,
  FLY_LAUNCH_NE,
  FLY_LAUNCH_LT,
  FLY_LAUNCH_LE,
  FLY_LAUNCH_GT,
  FLY_LAUNCH_GE,
  /* A `require` of the launch block: when a is 0 the launch is refused with
     the message, the string at offset b.value (b is a CONST), and where it
     was written, the string `where`. Its result is 0. */
  FLY_LAUNCH_REQUIRE,
  FLY_LAUNCH_NOPS
};

typedef struct FlyBundleInsn {
  uint32_t op;
  uint32_t where; /* REQUIRE: string, "file.fly:LINE:COL: CONDITION"; 0 otherwise */
  FlyBundleOperand a, b;
} FlyBundleInsn;

enum {
  FLY_BUNDLE_KERNEL_HAS_LAUNCH = 1,
  /* The kernel takes tensor maps (tmaps[first_tmap ..+ ntmaps]) that the
     runtime builds at launch. A reader that does not know the flag refuses
     the bundle, rather than launch the kernel without them. */
  FLY_BUNDLE_KERNEL_HAS_TMAPS = 2,
};

/* One kernel specialisation on one target. */
typedef struct FlyBundleKernel {
  uint32_t name;        /* string: the kernel's name */
  uint32_t spec;        /* string: its const bindings, "BLOCK=256 VEC=4" ("" when none) */
  uint32_t target;      /* string: "sm_90", "gfx942" ... */
  uint32_t symbol;      /* string: the function's name in the image */
  uint32_t image;       /* index into the images */
  uint32_t flags;       /* FLY_BUNDLE_KERNEL_HAS_LAUNCH */
  uint32_t first_param; /* its parameters: params[first_param ..+ nparams] */
  uint32_t nparams;
  uint32_t nargs;      /* arguments the function takes (FlyBundleParam.first_arg) */
  uint32_t first_insn; /* its launch program: code[first_insn ..+ ninsns] */
  uint32_t ninsns;
  uint32_t static_shared; /* bytes of shared memory its tiles take, which a launch adds to the
                             rule's dynamic bytes (NVIDIA: the tiles live there); 0 otherwise */
  /* The launch rule (when HAS_LAUNCH): grid x, y, z; block x, y, z; bytes
     of dynamic shared memory. Operands of kind TEMP index the program. */
  FlyBundleOperand grid[3], block[3], shared;
  /* Its tensor maps (with FLY_BUNDLE_KERNEL_HAS_TMAPS; 0 and 0 otherwise,
     as in records of 160 bytes, written before them). */
  uint32_t first_tmap, ntmaps;
  /* Its thread-block cluster (the launch block's `cluster`, NVIDIA sm_90):
     blocks along x, y and z, each 1 to 8 and at most 8 in all; 0, 0, 0 for
     a kernel without one, as in records of 168 bytes, written before
     clusters. The binary carries the shape too (.reqnctapercluster), so a
     reader that predates it still launches the kernel correctly. */
  uint32_t cluster[3];
  uint32_t reserved2; /* 0 */
} FlyBundleKernel;
enum { FLY_BUNDLE_MAX_CLUSTER = 8 };

enum {
  FLY_PARAM_TENSOR = 1, /* a tensor in global memory: a pointer, then its `?` leaves */
  FLY_PARAM_SCALAR = 2, /* a runtime number: one argument of its type */
  FLY_PARAM_CONST = 3,  /* bound at compile time: no argument */
};

/* Element and scalar types, as numbered here (type names in `type`). */
enum {
  FLY_DTYPE_NONE = 0,
  FLY_DTYPE_I1,
  FLY_DTYPE_I8,
  FLY_DTYPE_I16,
  FLY_DTYPE_I32,
  FLY_DTYPE_I64,
  FLY_DTYPE_F16,
  FLY_DTYPE_BF16,
  FLY_DTYPE_F32,
  FLY_DTYPE_F64,
  FLY_DTYPE_F8E4M3,
  FLY_DTYPE_F8E5M2,
  FLY_DTYPE_OTHER, /* a vec or another type: see the name */
  /* Later types, after OTHER so that the numbers above stay. */
  FLY_DTYPE_F8E4M3FNUZ,
  FLY_DTYPE_F8E5M2FNUZ,
  FLY_DTYPE_COUNT
};

/* The bytes of an element of type t (0 for NONE, OTHER and numbers past
   the table). */
static inline uint32_t fly_dtype_size(uint32_t t) {
  static const unsigned char size[FLY_DTYPE_COUNT] = {0, 1, 1, 2, 4, 8, 2, 2, 4, 8, 1, 1, 0, 1, 1};
  return t < FLY_DTYPE_COUNT ? size[t] : 0;
}

typedef struct FlyBundleParam {
  uint32_t name;         /* string */
  uint32_t kind;         /* FLY_PARAM_* */
  uint32_t dtype;        /* FLY_DTYPE_*: the element type of a tensor, the scalar's type */
  uint32_t type;         /* string: the type as written in Fly, "f32", "vec<f16, 8>", "int" */
  uint32_t layout;       /* string: a tensor's layout, "(?,?):(?,1)"; a const's value */
  uint32_t dyn_shape;    /* tensors: how many shape leaves are `?` (arguments after the pointer) */
  uint32_t dyn_stride;   /* and stride leaves (after the shape leaves); each an i32 */
  uint32_t first_arg;    /* the index of its first argument; UINT32_MAX for a const */
  uint32_t align;        /* tensors: the alignment in bytes the kernel assumes of the pointer */
  uint32_t stride_align; /* tensors: each `?` stride, in bytes, is a multiple of this (0: any) */
  uint32_t max_span;     /* tensors: the most bytes the tensor may span (0: any); added after
                            the first bundles, whose records are 40 bytes */
  uint32_t reserved;     /* 0: records stay multiples of 8 bytes */
} FlyBundleParam;

enum {
  FLY_IMAGE_PTX = 1,   /* PTX text (NUL-terminated), for the CUDA driver */
  FLY_IMAGE_CUBIN = 2, /* an NVIDIA ELF cubin */
  FLY_IMAGE_HSACO = 3, /* an AMD ELF code object */
};

typedef struct FlyBundleImage {
  uint32_t target; /* string: the target it was compiled for */
  uint32_t kind;   /* FLY_IMAGE_* */
  uint64_t offset; /* in the data area, 16-aligned */
  uint64_t size;
} FlyBundleImage;

/* A tensor map (TMA, NVIDIA sm_90): the 128-byte CUtensorMap the runtime
   encodes at each launch from tensor parameter `param`'s pointer, shape and
   strides (cuTensorMapEncodeTiled), and passes by value, 64-byte aligned,
   as argument `arg` of the kernel. Dimensions are the hardware's, innermost
   first: dimension i is the tensor's mode dims[i], and dims[0] is a mode of
   stride 1. */
enum { FLY_TMAP_MAX_RANK = 5 };
typedef struct FlyBundleTensorMap {
  uint32_t param;                   /* the tensor parameter, among the kernel's */
  uint32_t arg;                     /* where the map goes among the kernel's arguments */
  uint32_t dtype;                   /* FLY_DTYPE_* of the elements (the tensor's) */
  uint32_t rank;                    /* 1 to 5 */
  uint32_t dims[FLY_TMAP_MAX_RANK]; /* tensor mode of each hardware dimension */
  uint32_t box[FLY_TMAP_MAX_RANK];  /* the box's elements along it: 1 to 256 */
  uint32_t swizzle;                 /* bytes of the shared tile's swizzle: 0 (none), 32, 64, 128 */
  uint32_t interleave;              /* 0: none (the only kind written) */
  uint32_t l2_promotion;            /* bytes: 0 (none), 64, 128 or 256 */
  uint32_t oob_fill;                /* 0: elements outside the tensor read as zeros */
} FlyBundleTensorMap;

/* ---- reading ------------------------------------------------------------- */

/* A bundle checked by fly_bundle_open: pointers into the caller's bytes,
   which must outlive it. */
typedef struct FlyBundle {
  const unsigned char *base;
  uint64_t size;
  FlyBundleHeader header; /* a copy: the bytes need not be aligned */
  const char *strings;
  uint64_t strings_size;
  const unsigned char *data;
  uint32_t nkernels, nparams, ninsns, nimages, ntmaps;
} FlyBundle;

/* Checks every byte of size bytes at data and fills *b. False, with a
   sentence in why (naming the first problem found), when it is not a whole,
   valid bundle of this version. data need not be aligned. */
bool fly_bundle_open(FlyBundle *b, const void *data, size_t size, char *why, size_t why_size);

/* The records, copied out (the bytes need not be aligned); i must be below
   the matching count. Records written by a later version with larger
   records are read by their known prefix. */
FlyBundleKernel fly_bundle_kernel(const FlyBundle *b, uint32_t i);
FlyBundleParam fly_bundle_param(const FlyBundle *b, uint32_t i);
FlyBundleInsn fly_bundle_insn(const FlyBundle *b, uint32_t i);
FlyBundleImage fly_bundle_image(const FlyBundle *b, uint32_t i);
FlyBundleTensorMap fly_bundle_tmap(const FlyBundle *b, uint32_t i);
/* How a launch instruction is written: "+", "min", "==", "require"; "?"
   for an unknown one. */
const char *fly_bundle_op_symbol(uint32_t op);
/* A string of the bundle (checked by fly_bundle_open to be in range). */
const char *fly_bundle_string(const FlyBundle *b, uint32_t offset);
/* An image's bytes. */
const void *fly_bundle_image_bytes(const FlyBundle *b, const FlyBundleImage *im);

/* The launch rule of kernel k for its arguments: scalars[i] is the value of
   parameter i when it is a scalar; shapes[i] and strides[i] the `?` leaves
   of parameter i when it is a tensor (NULL for other kinds). out receives
   grid x, y, z, block x, y, z and shared bytes. False, with why, when the
   kernel has no launch rule, a requirement does not hold ("launch refused:
   MESSAGE (WHERE)"), an operation overflows or divides by zero, or a result
   is out of range (grid and block from 0 to 2^31-1, shared from 0; a grid
   of 0 blocks is a launch with nothing to do). With out NULL only the
   program runs: the requirements are checked, the settings not read. */
bool fly_bundle_launch_eval(const FlyBundle *b, const FlyBundleKernel *k, const int64_t *scalars,
                            const int64_t *const *shapes, const int64_t *const *strides,
                            int64_t out[7], char *why, size_t why_size);

/* CRC-32 as zlib computes it (polynomial 0xEDB88320), continued from crc
   (0 to start). */
uint32_t fly_crc32(uint32_t crc, const void *data, size_t size);

#endif
