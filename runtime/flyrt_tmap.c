/* flyrt_tmap.c — a kernel's TMA tensor maps (fly_bundle.h's
 * FlyBundleTensorMap) made ready for the driver: the arguments of
 * cuTensorMapEncodeTiled from the tensor a launch passes, and every rule of
 * the hardware checked first, so that a tensor TMA cannot map is refused
 * with a message naming the argument instead of a driver error (or worse,
 * a fault in the kernel). Pure: no driver, no allocation. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "flyrt_internal.h"

/* CUtensorMapDataType of each FLY_DTYPE_* (-1: none): integers of 1 byte
   (and the 8-bit floats) as bytes, the rest as themselves. */
static int data_type(uint32_t dtype) {
  switch (dtype) {
  case FLY_DTYPE_I8:
  case FLY_DTYPE_F8E4M3:
  case FLY_DTYPE_F8E5M2:
  case FLY_DTYPE_F8E4M3FNUZ:
  case FLY_DTYPE_F8E5M2FNUZ:
    return 0; /* UINT8 */
  case FLY_DTYPE_I16:
    return 1; /* UINT16 */
  case FLY_DTYPE_I32:
    return 3; /* INT32 */
  case FLY_DTYPE_I64:
    return 5; /* INT64 */
  case FLY_DTYPE_F16:
    return 6; /* FLOAT16 */
  case FLY_DTYPE_F32:
    return 7; /* FLOAT32 */
  case FLY_DTYPE_F64:
    return 8; /* FLOAT64 */
  case FLY_DTYPE_BF16:
    return 9; /* BFLOAT16 */
  default:
    return -1;
  }
}

/* The driver's enumerations (NONE, then 32B, 64B, 128B for swizzles and
   64B, 128B, 256B for L2 promotion) from bytes. */
static int swizzle_code(uint32_t bytes) {
  return bytes == 32 ? 1 : bytes == 64 ? 2 : bytes == 128 ? 3 : 0;
}
static int l2_code(uint32_t bytes) {
  return bytes == 64 ? 1 : bytes == 128 ? 2 : bytes == 256 ? 3 : 0;
}

static FlyrtStatus refuse(const Kernel *k, const FlyBundleTensorMap *m, const char *fmt, int64_t a,
                          int64_t b) {
  char what[320];
  snprintf(what, sizeof what, fmt, a, b);
  return flyrt_fail(FLYRT_ERROR_ARGUMENTS, "%s: argument '%s': TMA cannot map it: %s", k->name,
                    k->params[m->param].info.name, what);
}

FlyrtStatus flyrt_tmap_prepare(const Kernel *k, const FlyBundleTensorMap *m, const FlyrtTensor *t,
                               FlyrtTmapEncode *e) {
  memset(e, 0, sizeof *e);
  size_t eb = flyrtDtypeSize(t->dtype);
  e->data_type = data_type(m->dtype);
  if (e->data_type < 0 || eb == 0 || m->rank < 1 || m->rank > FLY_TMAP_MAX_RANK ||
      (int)m->rank != t->rank)
    return refuse(k, m, "its map is malformed (rank %" PRId64 ", type %" PRId64 ")", m->rank,
                  m->dtype);
  if ((uintptr_t)t->data % 16)
    return refuse(k, m, "its address is not a multiple of 16 bytes (it is %" PRId64 " past one)",
                  (int64_t)((uintptr_t)t->data % 16), 0);
  e->rank = m->rank;
  e->address = t->data;
  for (uint32_t i = 0; i < m->rank; i++) {
    uint32_t mode = m->dims[i];
    int64_t extent = t->shape[mode], stride = t->stride[mode];
    if (extent < 1 || extent > ((int64_t)1 << 32))
      return refuse(k, m, "mode %" PRId64 " has %" PRId64 " elements; TMA maps 1 to 2^32", mode,
                    extent);
    e->dims[i] = (uint64_t)extent;
    e->box[i] = m->box[i];
    e->element_strides[i] = 1;
    if (i == 0) {
      if (stride != 1 && extent > 1)
        return refuse(k, m,
                      "its innermost mode %" PRId64 " has stride %" PRId64
                      "; TMA reads rows of stride 1",
                      mode, stride);
      continue;
    }
    int64_t bytes = stride * (int64_t)eb;
    if (stride < 0 || bytes % 16 || bytes >= ((int64_t)1 << 40))
      return refuse(k, m,
                    "mode %" PRId64 " has a stride of %" PRId64
                    " bytes; TMA's strides are multiples of 16 bytes below 2^40",
                    mode, bytes);
    e->strides[i - 1] = (uint64_t)bytes;
  }
  int64_t inner = (int64_t)m->box[0] * (int64_t)eb;
  if (inner % 16)
    return refuse(k, m, "the box's innermost dimension is %" PRId64 " bytes, not a multiple of 16",
                  inner, 0);
  if (m->swizzle && inner > m->swizzle)
    return refuse(k, m,
                  "the box's innermost dimension is %" PRId64
                  " bytes, more than its swizzle of %" PRId64,
                  inner, m->swizzle);
  e->interleave = 0;
  e->swizzle = swizzle_code(m->swizzle);
  e->l2_promotion = l2_code(m->l2_promotion);
  e->oob_fill = 0;
  return FLYRT_SUCCESS;
}
