/* flyrt_args.c — a launch's arguments checked against the kernel's
 * signature and laid out as the compiled function takes them (the kernel
 * ABI of docs/bundle.md), and the launch rule run on them. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "flyrt_internal.h"

static const char *const dtype_names[] = {"none",   "i1",     "i8",    "i16",        "i32",
                                          "i64",    "f16",    "bf16",  "f32",        "f64",
                                          "f8e4m3", "f8e5m2", "other", "f8e4m3fnuz", "f8e5m2fnuz"};

const char *flyrtDtypeName(FlyrtDtype t) {
  return (unsigned)t < sizeof dtype_names / sizeof *dtype_names ? dtype_names[t] : "unknown";
}

size_t flyrtDtypeSize(FlyrtDtype t) { return fly_dtype_size((uint32_t)t); }

FlyrtArg flyrtTensor1D(void *data, FlyrtDtype dtype, int64_t n) {
  FlyrtArg a = {.kind = FLYRT_ARG_TENSOR};
  a.u.tensor.data = data;
  a.u.tensor.dtype = dtype;
  a.u.tensor.rank = 1;
  a.u.tensor.shape[0] = n;
  a.u.tensor.stride[0] = 1;
  return a;
}

FlyrtArg flyrtTensor2D(void *data, FlyrtDtype dtype, int64_t rows, int64_t cols, int64_t ld) {
  FlyrtArg a = flyrtTensor1D(data, dtype, rows);
  a.u.tensor.rank = 2;
  a.u.tensor.shape[1] = cols;
  a.u.tensor.stride[0] = ld;
  a.u.tensor.stride[1] = 1;
  return a;
}

FlyrtArg flyrtInt(int64_t v) {
  FlyrtArg a = {.kind = FLYRT_ARG_INT};
  a.u.i = v;
  return a;
}

FlyrtArg flyrtFloat(double v) {
  FlyrtArg a = {.kind = FLYRT_ARG_FLOAT};
  a.u.f = v;
  return a;
}

/* "4x?x2" from a list of leaves, for messages. */
static const char *dims(const int64_t *v, int n, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < n && used < size; i++) {
    if (v[i] == FLYRT_DYNAMIC)
      used += (size_t)snprintf(buf + used, size - used, "%s?", i ? "x" : "");
    else
      used += (size_t)snprintf(buf + used, size - used, "%s%" PRId64, i ? "x" : "", v[i]);
  }
  return buf;
}

static FlyrtStatus bad(const Kernel *k, const Param *p, const char *fmt, const char *a,
                       const char *b) {
  char what[640];
  snprintf(what, sizeof what, fmt, a, b);
  return flyrt_fail(FLYRT_ERROR_ARGUMENTS, "%s: argument '%s': %s", k->name, p->info.name, what);
}

/* One leaf list (shape or stride) of tensor t against the layout's:
   static leaves must agree, `?` leaves go to the arguments (32-bit). */
static FlyrtStatus leaves(const Kernel *k, const Param *p, const char *which, const int64_t *want,
                          const int64_t *got, int rank, uint64_t **slot, int64_t *dyn) {
  char a[160], b[160];
  for (int i = 0; i < rank; i++) {
    if (want[i] == FLYRT_DYNAMIC) {
      if (got[i] < INT32_MIN || got[i] > INT32_MAX)
        return bad(k, p, "%s leaf does not fit the 32-bit integer the kernel takes (%s)", which,
                   dims(got, rank, a, sizeof a));
      int32_t v = (int32_t)got[i];
      memcpy(*slot, &v, sizeof v);
      ++*slot;
      *dyn++ = got[i];
    } else if (want[i] != got[i]) {
      snprintf(b, sizeof b, "the kernel's layout is %s, and its %s is %s", p->info.layout, which,
               dims(want, rank, a, sizeof a));
      char g[160];
      return bad(k, p, "%s; the tensor's is %s", b, dims(got, rank, g, sizeof g));
    }
  }
  return FLYRT_SUCCESS;
}

/* The elements from t's lowest to its highest, both counted (0 when a mode
   is empty), saturating at UINT64_MAX. */
static uint64_t span_elements(const FlyrtTensor *t) {
  uint64_t elements = 1; /* highest offset - lowest + 1 */
  for (int i = 0; i < t->rank; i++) {
    if (t->shape[i] == 0)
      return 0;
    uint64_t s = (uint64_t)t->shape[i] - 1;
    uint64_t d = t->stride[i] < 0 ? -(uint64_t)t->stride[i] : (uint64_t)t->stride[i];
    if (d && s > (UINT64_MAX - elements) / d)
      return UINT64_MAX;
    elements += s * d;
  }
  return elements;
}

static FlyrtStatus tensor(const Kernel *k, const Param *p, const FlyrtTensor *t, uint64_t *slots,
                          int64_t *shape, int64_t *stride) {
  char a[160], b[160];
  if (t->dtype != p->info.dtype)
    return bad(k, p, "the kernel takes %s elements, not %s", p->info.type,
               flyrtDtypeName(t->dtype));
  if (t->rank != p->info.rank)
    return flyrt_fail(
        FLYRT_ERROR_ARGUMENTS,
        "%s: argument '%s': the kernel's layout %s has %d mode%s (flattened), and "
        "the tensor %d (%s)",
        k->name, p->info.name, p->info.layout, p->info.rank, p->info.rank == 1 ? "" : "s", t->rank,
        t->rank > 0 && t->rank <= FLYRT_MAX_RANK ? dims(t->shape, t->rank, b, sizeof b)
                                                 : "no shape");
  if (!t->data)
    return bad(k, p, "a null pointer%s%s", "", "");
  size_t natural = flyrtDtypeSize(t->dtype);
  if (natural > 1 && (uintptr_t)t->data % natural)
    return bad(k, p, "the pointer %s is not aligned to its %s-byte elements",
               (snprintf(a, sizeof a, "%p", t->data), a),
               (snprintf(b, sizeof b, "%zu", natural), b));
  if (p->info.align && (uintptr_t)t->data % p->info.align)
    return bad(k, p,
               "the kernel's vector accesses need %s-byte alignment, and the pointer %s is "
               "not aligned so (a view that starts in the middle of a vector?)",
               (snprintf(a, sizeof a, "%u", p->info.align), a),
               (snprintf(b, sizeof b, "%p", t->data), b));
  /* The `?` strides the vector accesses step by. */
  for (int i = 0; i < t->rank && p->info.stride_align; i++)
    if (p->info.stride[i] == FLYRT_DYNAMIC &&
        (uint64_t)(t->stride[i] < 0 ? -t->stride[i] : t->stride[i]) * natural %
            p->info.stride_align)
      return bad(k, p,
                 "the kernel's vector accesses need every runtime stride to be a multiple "
                 "of %s bytes, and the strides are %s elements",
                 (snprintf(a, sizeof a, "%u", p->info.stride_align), a),
                 dims(t->stride, t->rank, b, sizeof b));
  for (int i = 0; i < t->rank; i++)
    if (t->shape[i] < 0)
      return bad(k, p, "negative extent in shape %s%s", dims(t->shape, t->rank, a, sizeof a), "");
  uintptr_t ptr = (uintptr_t)t->data;
  memcpy(&slots[p->first_arg], &ptr, sizeof ptr);
  uint64_t *slot = &slots[p->first_arg + 1];
  FlyrtStatus s = leaves(k, p, "shape", p->info.shape, t->shape, t->rank, &slot, shape);
  if (!s)
    s = leaves(k, p, "stride", p->info.stride, t->stride, t->rank, &slot, stride);
  /* After the leaves, whose own limit says more where one is too large. */
  if (!s && p->info.max_span && span_elements(t) > p->info.max_span)
    return bad(k, p,
               "the kernel's offsets into it are 32-bit and reach %s elements, and the tensor "
               "spans more (shape %s)",
               (snprintf(a, sizeof a, "%u", p->info.max_span), a),
               dims(t->shape, t->rank, b, sizeof b));
  return s;
}

/* A scalar in its parameter's type, checked for range. */
static FlyrtStatus scalar(const Kernel *k, const Param *p, const FlyrtArg *a, uint64_t *slot,
                          int64_t *value) {
  char buf[64];
  FlyrtDtype t = p->info.dtype;
  bool is_float = t == FLYRT_F16 || t == FLYRT_BF16 || t == FLYRT_F32 || t == FLYRT_F64;
  if (a->kind == FLYRT_ARG_FLOAT && !is_float)
    return bad(k, p, "the kernel takes %s, not a floating number (%s)", p->info.type,
               (snprintf(buf, sizeof buf, "%g", a->u.f), buf));
  *slot = 0;
  *value = a->kind == FLYRT_ARG_INT ? a->u.i : 0;
  if (is_float) {
    double v = a->kind == FLYRT_ARG_INT ? (double)a->u.i : a->u.f;
    /* A finite number beyond the type's range would arrive as infinity. */
    double max = t == FLYRT_F64 ? INFINITY : t == FLYRT_F16 ? 65504.0 : 3.4028234663852886e38;
    if (isfinite(v) && fabs(v) > max)
      return bad(k, p, "%s does not fit %s", (snprintf(buf, sizeof buf, "%g", v), buf),
                 p->info.type);
    if (t == FLYRT_F64) {
      memcpy(slot, &v, sizeof v);
    } else if (t == FLYRT_F32) {
      float f = (float)v;
      memcpy(slot, &f, sizeof f);
    } else {
      /* f16 and bf16: through float, rounding to nearest even. */
      uint16_t h = t == FLYRT_BF16 ? flyrtF32ToBF16((float)v) : flyrtF32ToF16((float)v);
      memcpy(slot, &h, sizeof h);
    }
    return FLYRT_SUCCESS;
  }
  int64_t lo, hi;
  switch (t) {
  case FLYRT_I1:
    lo = 0, hi = 1;
    break;
  case FLYRT_I8:
    lo = INT8_MIN, hi = INT8_MAX;
    break;
  case FLYRT_I16:
    lo = INT16_MIN, hi = INT16_MAX;
    break;
  case FLYRT_I32:
    lo = INT32_MIN, hi = INT32_MAX;
    break;
  case FLYRT_I64:
    lo = INT64_MIN, hi = INT64_MAX;
    break;
  default:
    return bad(k, p, "scalars of type %s cannot be passed yet%s", p->info.type, "");
  }
  if (a->u.i < lo || a->u.i > hi)
    return bad(k, p, "%s does not fit %s", (snprintf(buf, sizeof buf, "%" PRId64, a->u.i), buf),
               p->info.type);
  int32_t v32 = (int32_t)a->u.i;
  int16_t v16 = (int16_t)a->u.i;
  int8_t v8 = (int8_t)a->u.i;
  if (t == FLYRT_I64)
    memcpy(slot, &a->u.i, 8);
  else if (t == FLYRT_I32)
    memcpy(slot, &v32, 4);
  else if (t == FLYRT_I16)
    memcpy(slot, &v16, 2);
  else
    memcpy(slot, &v8, 1);
  return FLYRT_SUCCESS;
}

static const char *kind_name(FlyrtArgKind k) {
  return k == FLYRT_ARG_TENSOR ? "a tensor" : k == FLYRT_ARG_INT ? "an integer" : "a float";
}

bool flyrt_kernel_cluster(const Kernel *k, uint32_t cluster[3]) {
  bool has = k->rec.cluster[0] && k->rec.cluster[1] && k->rec.cluster[2];
  for (int i = 0; i < 3; i++)
    cluster[i] = has ? k->rec.cluster[i] : 1;
  return has;
}

/* A kernel compiled for clusters runs on a grid of whole clusters: the
   driver refuses any other, less clearly. */
static FlyrtStatus whole_clusters(const Kernel *k, const FlyrtLaunchConfig *c) {
  uint32_t cl[3];
  if (!flyrt_kernel_cluster(k, cl))
    return FLYRT_SUCCESS;
  for (int i = 0; i < 3; i++)
    if (c->grid[i] % cl[i])
      return flyrt_fail(FLYRT_ERROR_LAUNCH_RULE,
                        "%s: a grid of %u x %u x %u blocks is not made of whole clusters of %u x "
                        "%u x %u blocks (the kernel's cluster)",
                        k->name, c->grid[0], c->grid[1], c->grid[2], cl[0], cl[1], cl[2]);
  return FLYRT_SUCCESS;
}

FlyrtStatus flyrt_prepare(const Kernel *k, const FlyrtArg *args, int nargs,
                          const FlyrtLaunchConfig *override, uint64_t *slots,
                          FlyrtLaunchConfig *config) {
  if (nargs != k->nuser)
    return flyrt_fail(FLYRT_ERROR_ARGUMENTS, "%s: takes %d arguments, %d given", k->name, k->nuser,
                      nargs);
  if (nargs && !args)
    return flyrt_fail(FLYRT_ERROR_INVALID_VALUE, "%s: null arguments", k->name);
  uint32_t np = k->rec.nparams;
  /* The values the launch rule reads, per parameter. */
  int64_t scalars[FLYRT_MAX_ARGS];
  int64_t shape_v[FLYRT_MAX_ARGS][FLYRT_MAX_RANK], stride_v[FLYRT_MAX_ARGS][FLYRT_MAX_RANK];
  const int64_t *shapes[FLYRT_MAX_ARGS], *strides[FLYRT_MAX_ARGS];
  if (np > FLYRT_MAX_ARGS)
    return flyrt_fail(FLYRT_ERROR_BAD_BUNDLE, "%s: too many parameters (%u)", k->name, np);
  int ai = 0;
  for (uint32_t i = 0; i < np; i++) {
    const Param *p = &k->params[i];
    shapes[i] = strides[i] = NULL;
    scalars[i] = 0;
    if (p->info.kind == FLYRT_PARAM_CONST)
      continue;
    const FlyrtArg *a = &args[ai++];
    FlyrtStatus s;
    if (p->info.kind == FLYRT_PARAM_TENSOR) {
      if (a->kind != FLYRT_ARG_TENSOR)
        return bad(k, p, "the kernel takes a tensor, not %s%s", kind_name(a->kind), "");
      s = tensor(k, p, &a->u.tensor, slots, shape_v[i], stride_v[i]);
      shapes[i] = shape_v[i];
      strides[i] = stride_v[i];
    } else {
      if (a->kind != FLYRT_ARG_INT && a->kind != FLYRT_ARG_FLOAT)
        return bad(k, p, "the kernel takes a number (%s), not %s", p->info.type,
                   a->kind == FLYRT_ARG_TENSOR ? "a tensor" : "an unknown kind of argument");
      s = scalar(k, p, a, &slots[p->first_arg], &scalars[i]);
    }
    if (s)
      return s;
  }
  int64_t v[7] = {0, 0, 0, 0, 0, 0, 0};
  /* An override of the whole grid and block replaces the rule's settings
     (and its shared memory is the override's, 0 included); the rule's
     requirements are checked all the same. */
  bool whole = override != NULL;
  for (int i = 0; whole && i < 3; i++)
    whole = override->grid[i] && override->block[i];
  bool rule = k->rec.flags & FLY_BUNDLE_KERNEL_HAS_LAUNCH;
  if (rule) {
    char why[768];
    if (!fly_bundle_launch_eval(&k->module->bundle->b, &k->rec, scalars, shapes, strides,
                                whole ? NULL : v, why, sizeof why)) {
      /* A refusal is the kernel's own sentence (fly_bundle.h); anything
         else, the rule's failure. */
      bool refused = strncmp(why, "launch refused", 14) == 0;
      return flyrt_fail(refused ? FLYRT_ERROR_LAUNCH_REFUSED : FLYRT_ERROR_LAUNCH_RULE, "%s: %s%s",
                        k->name, refused ? "" : "the launch rule failed: ", why);
    }
  }
  if (whole) {
    *config = *override;
    return whole_clusters(k, config);
  }
  for (int i = 0; i < 3; i++) {
    config->grid[i] = override && override->grid[i] ? override->grid[i] : (uint32_t)v[i];
    config->block[i] = override && override->block[i] ? override->block[i] : (uint32_t)v[3 + i];
  }
  config->shared_bytes =
      override && override->shared_bytes ? override->shared_bytes : (uint32_t)v[6];
  /* A rule may give no blocks (nothing to do: the launch is skipped); without
     a rule, grid and block must come from the caller. */
  for (int i = 0; i < 3; i++)
    if ((!rule && !config->grid[i]) || !config->block[i])
      return flyrt_fail(FLYRT_ERROR_LAUNCH_RULE,
                        "%s: the kernel has no launch block: give grid and block explicitly",
                        k->name);
  return whole_clusters(k, config);
}

const FlyrtTensor *flyrt_param_tensor(const Kernel *k, const FlyrtArg *args, int nargs,
                                      uint32_t param) {
  int ai = 0;
  for (uint32_t i = 0; i < param && i < k->rec.nparams; i++)
    ai += k->params[i].info.kind != FLYRT_PARAM_CONST;
  if (param >= k->rec.nparams || ai >= nargs || args[ai].kind != FLYRT_ARG_TENSOR)
    return NULL;
  return &args[ai].u.tensor;
}

bool flyrtKernelHasLaunchRule(FlyrtKernel h) {
  const Kernel *k = h.ptr;
  return k && (k->rec.flags & FLY_BUNDLE_KERNEL_HAS_LAUNCH);
}

bool flyrtKernelCluster(FlyrtKernel h, uint32_t out[3]) {
  const Kernel *k = h.ptr;
  if (!k) {
    for (int i = 0; out && i < 3; i++)
      out[i] = 1;
    return false;
  }
  uint32_t c[3];
  bool has = flyrt_kernel_cluster(k, c);
  if (out)
    memcpy(out, c, sizeof c);
  return has;
}

FlyrtStatus flyrtKernelLaunchConfigFor(FlyrtKernel h, const FlyrtArg *args, int nargs,
                                       FlyrtLaunchConfig *out) {
  const Kernel *k = h.ptr;
  if (!k || !out)
    return flyrt_fail(FLYRT_ERROR_INVALID_VALUE, "flyrtKernelLaunchConfigFor: null argument");
  uint64_t slots[FLYRT_MAX_ARGS];
  FlyrtStatus s = flyrt_prepare(k, args, nargs, NULL, slots, out);
  /* The tensor maps the launch would build: refused here as there. */
  for (uint32_t i = 0; !s && i < k->rec.ntmaps; i++) {
    FlyrtTmapEncode e;
    const FlyrtTensor *t = flyrt_param_tensor(k, args, nargs, k->tmaps[i].param);
    s = t ? flyrt_tmap_prepare(k, &k->tmaps[i], t, &e)
          : flyrt_fail(FLYRT_ERROR_BAD_BUNDLE, "%s: a tensor map of no tensor", k->name);
  }
  return s ? s : flyrt_ok();
}
