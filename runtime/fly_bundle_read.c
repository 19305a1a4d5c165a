/* fly_bundle_read.c — checking a bundle before anything in it is used.
 *
 * fly_bundle_open validates the whole bundle in one pass: the header, the
 * checksum, every table's extent, and every reference a record makes (to a
 * string, an image, a parameter, an instruction). After it succeeds the
 * accessors below need no checks, so the runtime can trust what it reads
 * and a corrupted or truncated file is one clear message, never a crash. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fly_bundle.h"
#include "fly_bundle_internal.h"

_Static_assert(sizeof(FlyBundleHeader) == 160, "the header is 160 bytes");
_Static_assert(sizeof(FlyBundleKernel) == 184, "the kernel record is 184 bytes");
_Static_assert(sizeof(FlyBundleTensorMap) == 72, "the tensor map record is 72 bytes");
_Static_assert(sizeof(FlyBundleParam) == 48, "the parameter record is 48 bytes (40 at first)");
_Static_assert(sizeof(FlyBundleInsn) == 40, "the version 1 instruction record is 40 bytes");
_Static_assert(sizeof(FlyBundleImage) == 24, "the version 1 image record is 24 bytes");

static const size_t known_size[FLY_BUNDLE_NTABLES] = {
    sizeof(FlyBundleKernel), sizeof(FlyBundleParam), sizeof(FlyBundleInsn), sizeof(FlyBundleImage),
    sizeof(FlyBundleTensorMap)};
/* The sizes of the first bundles' records (the kernel's before its tensor
   maps) and header: shorter ones are refused, these read with zeros for the
   fields added since. */
static const size_t first_size[FLY_BUNDLE_NTABLES] = {
    160, 40, sizeof(FlyBundleInsn), sizeof(FlyBundleImage), sizeof(FlyBundleTensorMap)};
enum { FIRST_HEADER_SIZE = 144 };
static const char *const table_name[FLY_BUNDLE_NTABLES] = {"kernel", "parameter", "instruction",
                                                           "image", "tensor map"};

bool fly_bundle_fail(char *why, size_t n, const char *fmt, ...) {
  if (why && n) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
  }
  return false;
}

/* [offset, offset + size) lies within [0, limit), without overflow. */
static bool within(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

static bool host_is_little_endian(void) {
  const uint16_t one = 1;
  unsigned char first;
  memcpy(&first, &one, 1);
  return first == 1;
}

/* A record of table t, copied out: the known prefix of a possibly larger
   record, or a shorter one with zeros after it. */
static void record(const FlyBundle *b, int t, uint32_t i, void *out) {
  const FlyBundleTable *tab = &b->header.tables[t];
  size_t n = tab->record_size < known_size[t] ? tab->record_size : known_size[t];
  memset(out, 0, known_size[t]);
  memcpy(out, b->base + tab->offset + (uint64_t)i * tab->record_size, n);
}

FlyBundleKernel fly_bundle_kernel(const FlyBundle *b, uint32_t i) {
  FlyBundleKernel k;
  record(b, FLY_BUNDLE_T_KERNELS, i, &k);
  return k;
}
FlyBundleParam fly_bundle_param(const FlyBundle *b, uint32_t i) {
  FlyBundleParam p;
  record(b, FLY_BUNDLE_T_PARAMS, i, &p);
  return p;
}
FlyBundleInsn fly_bundle_insn(const FlyBundle *b, uint32_t i) {
  FlyBundleInsn in;
  record(b, FLY_BUNDLE_T_CODE, i, &in);
  return in;
}
FlyBundleImage fly_bundle_image(const FlyBundle *b, uint32_t i) {
  FlyBundleImage im;
  record(b, FLY_BUNDLE_T_IMAGES, i, &im);
  return im;
}
FlyBundleTensorMap fly_bundle_tmap(const FlyBundle *b, uint32_t i) {
  FlyBundleTensorMap m;
  record(b, FLY_BUNDLE_T_TMAPS, i, &m);
  return m;
}
const char *fly_bundle_string(const FlyBundle *b, uint32_t offset) { return b->strings + offset; }
const void *fly_bundle_image_bytes(const FlyBundle *b, const FlyBundleImage *im) {
  return b->data + im->offset;
}

static bool check_string(const FlyBundle *b, uint32_t s, const char *what, char *why, size_t n) {
  if (s >= b->strings_size)
    return fly_bundle_fail(why, n, "corrupt bundle: %s refers past the string area", what);
  return true;
}

/* An operand of kernel k's launch program; `before` is how many of its
   instructions an operand may refer to. */
static bool check_operand(const FlyBundle *b, const FlyBundleKernel *k, const FlyBundleOperand *o,
                          uint32_t before, const char *what, char *why, size_t n) {
  switch (o->kind) {
  case FLY_LAUNCH_CONST:
    return true;
  case FLY_LAUNCH_TEMP:
    if (o->index >= before)
      return fly_bundle_fail(
          why, n, "corrupt bundle: %s uses an instruction that does not come before it", what);
    return true;
  case FLY_LAUNCH_SCALAR:
  case FLY_LAUNCH_SHAPE:
  case FLY_LAUNCH_STRIDE: {
    if (o->index >= k->nparams)
      return fly_bundle_fail(why, n, "corrupt bundle: %s names parameter %u of %u", what, o->index,
                             k->nparams);
    FlyBundleParam p = fly_bundle_param(b, k->first_param + o->index);
    if (o->kind == FLY_LAUNCH_SCALAR && p.kind == FLY_PARAM_SCALAR)
      return true;
    uint32_t leaves = o->kind == FLY_LAUNCH_SHAPE ? p.dyn_shape : p.dyn_stride;
    if (o->kind != FLY_LAUNCH_SCALAR && p.kind == FLY_PARAM_TENSOR && o->value >= 0 &&
        (uint64_t)o->value < leaves)
      return true;
    return fly_bundle_fail(why, n, "corrupt bundle: %s reads a value parameter '%s' does not have",
                           what, fly_bundle_string(b, p.name));
  }
  default:
    return fly_bundle_fail(why, n, "corrupt bundle: %s has an operand of unknown kind %u", what,
                           o->kind);
  }
}

/* A parameter record's own fields. Every record is checked, not only those
   a kernel names, since the accessors hand out any of them. */
static bool check_param(const FlyBundle *b, const FlyBundleParam *p, char *why, size_t n) {
  if (!check_string(b, p->name, "a parameter's name", why, n) ||
      !check_string(b, p->type, "a parameter's type", why, n) ||
      !check_string(b, p->layout, "a parameter's layout", why, n))
    return false;
  const char *name = fly_bundle_string(b, p->name);
  if (p->kind < FLY_PARAM_TENSOR || p->kind > FLY_PARAM_CONST)
    return fly_bundle_fail(why, n, "corrupt bundle: parameter '%s' is of unknown kind %u", name,
                           p->kind);
  if (p->dtype >= FLY_DTYPE_COUNT)
    return fly_bundle_fail(why, n, "corrupt bundle: parameter '%s' has unknown type %u", name,
                           p->dtype);
  return true;
}

/* Its arguments, among the nargs of the kernel it belongs to. */
static bool check_param_args(const FlyBundle *b, const FlyBundleParam *p, uint32_t nargs, char *why,
                             size_t n) {
  if (p->kind == FLY_PARAM_CONST)
    return true;
  uint64_t args = p->kind == FLY_PARAM_TENSOR ? 1 + (uint64_t)p->dyn_shape + p->dyn_stride : 1;
  if (!within(p->first_arg, args, nargs))
    return fly_bundle_fail(why, n,
                           "corrupt bundle: the arguments of parameter '%s' are out of range",
                           fly_bundle_string(b, p->name));
  return true;
}

/* Kernel k's tensor maps: each of a tensor parameter, its argument among
   the kernel's and apart from its parameters', a box the hardware takes. */
static bool check_tmaps(const FlyBundle *b, const FlyBundleKernel *k, const char *name, char *why,
                        size_t n) {
  bool has = k->flags & FLY_BUNDLE_KERNEL_HAS_TMAPS;
  if (!has && k->ntmaps)
    return fly_bundle_fail(why, n, "corrupt bundle: kernel '%s' has tensor maps but not the flag",
                           name);
  if (!within(k->first_tmap, k->ntmaps, b->ntmaps))
    return fly_bundle_fail(why, n,
                           "corrupt bundle: the tensor maps of kernel '%s' are out of range", name);
  for (uint32_t i = 0; i < k->ntmaps; i++) {
    FlyBundleTensorMap m = fly_bundle_tmap(b, k->first_tmap + i);
    bool ok = m.param < k->nparams && m.arg < k->nargs && m.rank >= 1 &&
              m.rank <= FLY_TMAP_MAX_RANK && m.dtype > FLY_DTYPE_NONE &&
              m.dtype != FLY_DTYPE_OTHER && m.dtype < FLY_DTYPE_COUNT && m.interleave == 0 &&
              m.oob_fill == 0 &&
              (m.swizzle == 0 || m.swizzle == 32 || m.swizzle == 64 || m.swizzle == 128) &&
              (m.l2_promotion == 0 || m.l2_promotion == 64 || m.l2_promotion == 128 ||
               m.l2_promotion == 256);
    FlyBundleParam p = ok ? fly_bundle_param(b, k->first_param + m.param) : (FlyBundleParam){0};
    ok = ok && p.kind == FLY_PARAM_TENSOR && p.dtype == m.dtype &&
         (m.arg < p.first_arg || m.arg > p.first_arg + p.dyn_shape + p.dyn_stride);
    unsigned seen = 0;
    for (uint32_t d = 0; ok && d < m.rank; d++) {
      ok = m.dims[d] < m.rank && !(seen & (1u << m.dims[d])) && m.box[d] >= 1 && m.box[d] <= 256;
      seen |= 1u << (m.dims[d] & 31);
    }
    if (!ok)
      return fly_bundle_fail(why, n, "corrupt bundle: tensor map %u of kernel '%s' is malformed", i,
                             name);
  }
  return true;
}

/* Kernel k's cluster: none (0, 0, 0), or 1 to 8 blocks along each
   dimension and 8 in all. */
static bool check_cluster(const FlyBundleKernel *k, const char *name, char *why, size_t n) {
  const uint32_t *c = k->cluster;
  if (!c[0] && !c[1] && !c[2])
    return true;
  uint64_t size = (uint64_t)c[0] * c[1] * c[2];
  if (!c[0] || !c[1] || !c[2] || size > FLY_BUNDLE_MAX_CLUSTER)
    return fly_bundle_fail(why, n,
                           "corrupt bundle: kernel '%s' has a cluster of %u x %u x %u blocks (1 "
                           "to %d in all)",
                           name, c[0], c[1], c[2], FLY_BUNDLE_MAX_CLUSTER);
  return true;
}

static bool check_kernel(const FlyBundle *b, const FlyBundleKernel *k, char *why, size_t n) {
  if (!check_string(b, k->name, "a kernel's name", why, n) ||
      !check_string(b, k->spec, "a kernel's specialisation", why, n) ||
      !check_string(b, k->target, "a kernel's target", why, n) ||
      !check_string(b, k->symbol, "a kernel's symbol", why, n))
    return false;
  const char *name = fly_bundle_string(b, k->name);
  if (k->image >= b->nimages)
    return fly_bundle_fail(why, n, "corrupt bundle: kernel '%s' names image %u of %u", name,
                           k->image, b->nimages);
  if (k->flags & ~(uint32_t)(FLY_BUNDLE_KERNEL_HAS_LAUNCH | FLY_BUNDLE_KERNEL_HAS_TMAPS))
    return fly_bundle_fail(why, n, "corrupt bundle: kernel '%s' has unknown flags 0x%x", name,
                           k->flags);
  if (!within(k->first_param, k->nparams, b->nparams))
    return fly_bundle_fail(why, n, "corrupt bundle: the parameters of kernel '%s' are out of range",
                           name);
  if (!within(k->first_insn, k->ninsns, b->ninsns))
    return fly_bundle_fail(
        why, n, "corrupt bundle: the launch program of kernel '%s' is out of range", name);
  for (uint32_t i = 0; i < k->nparams; i++) {
    FlyBundleParam p = fly_bundle_param(b, k->first_param + i);
    if (!check_param_args(b, &p, k->nargs, why, n))
      return false;
  }
  if (!check_tmaps(b, k, name, why, n) || !check_cluster(k, name, why, n))
    return false;
  char what[160];
  snprintf(what, sizeof what, "the launch program of kernel '%s'", name);
  for (uint32_t i = 0; i < k->ninsns; i++) {
    FlyBundleInsn in = fly_bundle_insn(b, k->first_insn + i);
    if (in.op < FLY_LAUNCH_ADD || in.op >= FLY_LAUNCH_NOPS)
      return fly_bundle_fail(why, n, "corrupt bundle: %s has an instruction of unknown kind %u",
                             what, in.op);
    if (!check_operand(b, k, &in.a, i, what, why, n) ||
        !check_operand(b, k, &in.b, i, what, why, n))
      return false;
    if (in.op == FLY_LAUNCH_REQUIRE &&
        (in.b.kind != FLY_LAUNCH_CONST || in.b.value < 0 ||
         (uint64_t)in.b.value >= b->strings_size || in.where >= b->strings_size))
      return fly_bundle_fail(why, n, "corrupt bundle: %s has a requirement without its message",
                             what);
  }
  snprintf(what, sizeof what, "the launch rule of kernel '%s'", name);
  const FlyBundleOperand *rule[7] = {&k->grid[0],  &k->grid[1],  &k->grid[2], &k->block[0],
                                     &k->block[1], &k->block[2], &k->shared};
  for (int i = 0; i < 7 && (k->flags & FLY_BUNDLE_KERNEL_HAS_LAUNCH); i++)
    if (!check_operand(b, k, rule[i], k->ninsns, what, why, n))
      return false;
  return true;
}

static bool check_image(const FlyBundle *b, const FlyBundleImage *im, char *why, size_t n) {
  if (!check_string(b, im->target, "an image's target", why, n))
    return false;
  if (im->kind < FLY_IMAGE_PTX || im->kind > FLY_IMAGE_HSACO)
    return fly_bundle_fail(why, n, "corrupt bundle: an image is of unknown kind %u", im->kind);
  if (im->offset % 16 || !within(im->offset, im->size, b->header.data_size))
    return fly_bundle_fail(why, n, "corrupt bundle: an image lies outside the data area");
  if (im->kind == FLY_IMAGE_PTX && (im->size == 0 || b->data[im->offset + im->size - 1] != 0))
    return fly_bundle_fail(why, n, "corrupt bundle: a PTX image does not end with a NUL");
  return true;
}

/* The header's own fields, before anything it points to is read. */
static bool check_header(FlyBundle *b, const unsigned char *p, size_t size, char *why, size_t n) {
  if (size < 8 || memcmp(p, FLY_BUNDLE_MAGIC, 8) != 0)
    return fly_bundle_fail(why, n,
                           "not a Fly bundle (it does not start with the bundle's magic bytes)");
  if (size < 16)
    return fly_bundle_fail(why, n, "truncated bundle: %zu bytes, less than its header", size);
  uint32_t version, header_size;
  memcpy(&version, p + 8, 4);
  memcpy(&header_size, p + 12, 4);
  if (version != FLY_BUNDLE_VERSION)
    return fly_bundle_fail(why, n,
                           "the bundle is of format version %u, and this reader reads version %u "
                           "(compile it again with this version of flyc)",
                           version, (unsigned)FLY_BUNDLE_VERSION);
  if (header_size < FIRST_HEADER_SIZE)
    return fly_bundle_fail(why, n,
                           "corrupt bundle: the header is %u bytes, less than the %d of version %u",
                           header_size, FIRST_HEADER_SIZE, (unsigned)FLY_BUNDLE_VERSION);
  if (header_size > size)
    return fly_bundle_fail(why, n, "truncated bundle: %zu bytes, less than its header", size);
  /* A header written before a table was added has none of it. */
  memset(&b->header, 0, sizeof b->header);
  memcpy(&b->header, p, header_size < sizeof b->header ? header_size : sizeof b->header);
  return true;
}

bool fly_bundle_open(FlyBundle *b, const void *data, size_t size, char *why, size_t n) {
  memset(b, 0, sizeof *b);
  if (!host_is_little_endian())
    return fly_bundle_fail(why, n, "bundles are little-endian and this machine is not");
  const unsigned char *p = data;
  if (!p)
    return fly_bundle_fail(why, n, "no bundle (a null pointer)");
  if (!check_header(b, p, size, why, n))
    return false;
  const FlyBundleHeader h = b->header;
  b->base = p;
  b->size = size;
  if (h.file_size > size)
    return fly_bundle_fail(why, n, "truncated bundle: it says %llu bytes and has %zu",
                           (unsigned long long)h.file_size, size);
  if (h.file_size < size)
    return fly_bundle_fail(why, n,
                           "corrupt bundle: it says %llu bytes and has %zu (bytes after its end)",
                           (unsigned long long)h.file_size, size);
  if (size > FLY_BUNDLE_MAX_SIZE)
    return fly_bundle_fail(why, n, "the bundle is too large (%zu bytes)", size);
  /* The checksum covers every byte but its own four. */
  size_t at = offsetof(FlyBundleHeader, checksum);
  static const unsigned char zero[4];
  uint32_t crc = fly_crc32(0, p, at);
  crc = fly_crc32(crc, zero, 4);
  crc = fly_crc32(crc, p + at + 4, size - at - 4);
  if (crc != h.checksum)
    return fly_bundle_fail(why, n,
                           "corrupt bundle: the checksum does not match (0x%08x, expected 0x%08x)",
                           crc, h.checksum);
  if (h.flags || h.reserved)
    return fly_bundle_fail(why, n, "corrupt bundle: reserved header fields are set");
  if (!within(h.strings, h.strings_size, size) || h.strings_size == 0 ||
      p[h.strings + h.strings_size - 1] != 0)
    return fly_bundle_fail(why, n,
                           "corrupt bundle: the string area is out of range or unterminated");
  /* Images are 16-aligned within the data area; that makes them 16-aligned
     in the file only if the area itself is. */
  if (!within(h.data, h.data_size, size) || h.data % 16)
    return fly_bundle_fail(why, n, "corrupt bundle: the data area is out of range or misaligned");
  b->strings = (const char *)p + h.strings;
  b->strings_size = h.strings_size;
  b->data = p + h.data;
  uint32_t *counts[FLY_BUNDLE_NTABLES] = {&b->nkernels, &b->nparams, &b->ninsns, &b->nimages,
                                          &b->ntmaps};
  for (int t = 0; t < FLY_BUNDLE_NTABLES; t++) {
    const FlyBundleTable *tab = &h.tables[t];
    if (tab->count == 0 && tab->record_size == 0 && tab->offset == 0) /* a table it predates */
      continue;
    if (tab->record_size < first_size[t] || tab->offset % 8 ||
        !within(tab->offset, (uint64_t)tab->count * tab->record_size, size))
      return fly_bundle_fail(why, n, "corrupt bundle: the %s table is out of range", table_name[t]);
    *counts[t] = tab->count;
  }
  if (!check_string(b, h.compiler, "the compiler's name", why, n) ||
      !check_string(b, h.toolchain, "the toolchain version", why, n) ||
      !check_string(b, h.source_hash, "the source hash", why, n))
    return false;
  for (uint32_t i = 0; i < b->nimages; i++) {
    FlyBundleImage im = fly_bundle_image(b, i);
    if (!check_image(b, &im, why, n))
      return false;
  }
  for (uint32_t i = 0; i < b->nparams; i++) {
    FlyBundleParam param = fly_bundle_param(b, i);
    if (!check_param(b, &param, why, n))
      return false;
  }
  /* Each kernel's parameters and program come after the previous kernel's
     (gaps allowed, overlaps not), as the writer lays them out: so checking
     is linear in the bundle's size, however it was crafted. */
  uint64_t next_param = 0, next_insn = 0, next_tmap = 0;
  for (uint32_t i = 0; i < b->nkernels; i++) {
    FlyBundleKernel k = fly_bundle_kernel(b, i);
    if (k.first_param < next_param || k.first_insn < next_insn || k.first_tmap < next_tmap)
      return fly_bundle_fail(
          why, n,
          "corrupt bundle: kernel %u's parameters or program overlap the previous "
          "kernel's",
          i);
    if (!check_kernel(b, &k, why, n))
      return false;
    next_param = (uint64_t)k.first_param + k.nparams;
    next_insn = (uint64_t)k.first_insn + k.ninsns;
    next_tmap = (uint64_t)k.first_tmap + k.ntmaps;
  }
  /* Instructions no kernel runs: after the kernels, whose messages name
     them. */
  for (uint32_t i = 0; i < b->ninsns; i++) {
    FlyBundleInsn in = fly_bundle_insn(b, i);
    if (in.op < FLY_LAUNCH_ADD || in.op >= FLY_LAUNCH_NOPS)
      return fly_bundle_fail(why, n, "corrupt bundle: instruction %u is of unknown kind %u", i,
                             in.op);
  }
  return true;
}
