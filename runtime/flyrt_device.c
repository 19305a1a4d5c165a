/* flyrt_device.c — devices, memory, streams and events, through whichever
 * driver was loaded; and the launch itself. */
#include <stdlib.h>
#include <string.h>

#include "flyrt_internal.h"

const Driver *flyrt_driver(FlyrtStatus *status) {
  const char *want = getenv("FLYRT_BACKEND");
  bool any = !want || !*want;
  *status = FLYRT_SUCCESS;
  if (!any && strcmp(want, "cuda") != 0 && strcmp(want, "hip") != 0) {
    *status = flyrt_fail(FLYRT_ERROR_INVALID_VALUE,
                         "FLYRT_BACKEND is '%s': it takes 'cuda' or 'hip'", want);
    return NULL;
  }
  const char *cuda_why = "", *hip_why = "";
  const Driver *d = NULL;
  if (any || strcmp(want, "cuda") == 0)
    d = flyrt_cuda_driver(&cuda_why);
  if (!d && (any || strcmp(want, "hip") == 0))
    d = flyrt_hip_driver(&hip_why);
  if (!d)
    *status = flyrt_fail(FLYRT_ERROR_NO_DRIVER, "no GPU driver: %s%s%s", cuda_why,
                         *cuda_why && *hip_why ? "; " : "", hip_why);
  return d;
}

FlyrtStatus flyrtDeviceCount(int *count) {
  if (!count)
    return flyrt_fail(FLYRT_ERROR_INVALID_VALUE, "flyrtDeviceCount: null argument");
  *count = 0;
  FlyrtStatus s;
  const Driver *drv = flyrt_driver(&s);
  if (!drv)
    return s;
  s = drv->count(count);
  return s ? s : flyrt_ok();
}

FlyrtStatus flyrtDeviceCreate(int ordinal, FlyrtDevice *out) {
  if (!out)
    return flyrt_fail(FLYRT_ERROR_INVALID_VALUE, "flyrtDeviceCreate: null argument");
  out->ptr = NULL;
  FlyrtStatus s;
  const Driver *drv = flyrt_driver(&s);
  if (!drv)
    return s;
  int n = 0;
  if ((s = drv->count(&n)))
    return s;
  if (ordinal < 0 || ordinal >= n)
    return flyrt_fail(FLYRT_ERROR_NO_DEVICE, "no GPU %d: the %s sees %d", ordinal, drv->name, n);
  Device *d = calloc(1, sizeof *d);
  if (!d)
    return flyrt_fail(FLYRT_ERROR_OUT_OF_MEMORY, "out of memory");
  d->driver = drv;
  d->ordinal = ordinal;
  if ((s = drv->open(d))) {
    free(d);
    return s;
  }
  out->ptr = d;
  return flyrt_ok();
}

void flyrtDeviceDestroy(FlyrtDevice h) {
  Device *d = h.ptr;
  if (!d)
    return;
  d->driver->close(d);
  free(d);
}

const char *flyrtDeviceTarget(FlyrtDevice h) {
  Device *d = h.ptr;
  return d ? d->target : "";
}

const char *flyrtDeviceName(FlyrtDevice h) {
  Device *d = h.ptr;
  return d ? d->name : "";
}

FlyrtBackend flyrtDeviceBackend(FlyrtDevice h) {
  Device *d = h.ptr;
  return d ? d->driver->backend : (FlyrtBackend)0;
}

int flyrtDeviceOrdinal(FlyrtDevice h) {
  Device *d = h.ptr;
  return d ? d->ordinal : -1;
}

int flyrtDeviceMultiprocessors(FlyrtDevice h) {
  Device *d = h.ptr;
  return d ? d->multiprocessors : 0;
}

/* The device of a call, made current on this thread; NULL after setting
   the message. */
static Device *bound(FlyrtDevice h, const char *fn, FlyrtStatus *s) {
  Device *d = h.ptr;
  if (!d) {
    *s = flyrt_fail(FLYRT_ERROR_INVALID_VALUE, "%s: null device", fn);
    return NULL;
  }
  *s = d->driver->bind(d);
  return *s ? NULL : d;
}

/* Each wrapper: the device bound, the driver's call, the message cleared
   on success. */
#define ON_DEVICE(h, call)                                                                         \
  do {                                                                                             \
    FlyrtStatus s_;                                                                                \
    Device *d = bound(h, __func__, &s_);                                                           \
    if (!d)                                                                                        \
      return s_;                                                                                   \
    s_ = (call);                                                                                   \
    return s_ ? s_ : flyrt_ok();                                                                   \
  } while (0)

FlyrtStatus flyrtDeviceSynchronize(FlyrtDevice h) { ON_DEVICE(h, d->driver->sync(d)); }

FlyrtStatus flyrtMalloc(FlyrtDevice h, size_t bytes, void **ptr) {
  if (!ptr)
    return flyrt_fail(FLYRT_ERROR_INVALID_VALUE, "flyrtMalloc: null argument");
  *ptr = NULL;
  ON_DEVICE(h, d->driver->malloc_(d, bytes, ptr));
}

FlyrtStatus flyrtFree(FlyrtDevice h, void *ptr) {
  if (!ptr)
    return flyrt_ok();
  ON_DEVICE(h, d->driver->free_(d, ptr));
}

FlyrtStatus flyrtMemcpyHostToDevice(FlyrtDevice h, void *dst, const void *src, size_t n) {
  ON_DEVICE(h, d->driver->copy(d, dst, src, n, 1));
}

FlyrtStatus flyrtMemcpyDeviceToHost(FlyrtDevice h, void *dst, const void *src, size_t n) {
  ON_DEVICE(h, d->driver->copy(d, dst, src, n, 2));
}

FlyrtStatus flyrtMemcpyDeviceToDevice(FlyrtDevice h, void *dst, const void *src, size_t n) {
  ON_DEVICE(h, d->driver->copy(d, dst, src, n, 3));
}

FlyrtStatus flyrtMemset(FlyrtDevice h, void *ptr, int byte, size_t n) {
  ON_DEVICE(h, d->driver->memset_(d, ptr, byte, n));
}

FlyrtStatus flyrtStreamCreate(FlyrtDevice h, FlyrtStream *out) {
  if (!out)
    return flyrt_fail(FLYRT_ERROR_INVALID_VALUE, "flyrtStreamCreate: null argument");
  *out = NULL;
  ON_DEVICE(h, d->driver->stream_create(d, out));
}

FlyrtStatus flyrtStreamDestroy(FlyrtDevice h, FlyrtStream s) {
  ON_DEVICE(h, s ? d->driver->stream_destroy(d, s) : FLYRT_SUCCESS);
}

FlyrtStatus flyrtStreamSynchronize(FlyrtDevice h, FlyrtStream s) {
  ON_DEVICE(h, d->driver->stream_sync(d, s));
}

/* ---- events ---- */

FlyrtStatus flyrtEventCreate(FlyrtDevice h, FlyrtEvent *out) {
  if (!out)
    return flyrt_fail(FLYRT_ERROR_INVALID_VALUE, "flyrtEventCreate: null argument");
  out->ptr = NULL;
  FlyrtStatus s;
  Device *d = bound(h, __func__, &s);
  if (!d)
    return s;
  Event *e = calloc(1, sizeof *e);
  if (!e)
    return flyrt_fail(FLYRT_ERROR_OUT_OF_MEMORY, "out of memory");
  e->device = d;
  if ((s = d->driver->event_create(d, &e->event))) {
    free(e);
    return s;
  }
  out->ptr = e;
  return flyrt_ok();
}

void flyrtEventDestroy(FlyrtEvent h) {
  Event *e = h.ptr;
  if (!e)
    return;
  if (!e->device->driver->bind(e->device))
    e->device->driver->event_destroy(e->device, e->event);
  free(e);
}

static Event *event_bound(FlyrtEvent h, const char *fn, FlyrtStatus *s) {
  Event *e = h.ptr;
  if (!e) {
    *s = flyrt_fail(FLYRT_ERROR_INVALID_VALUE, "%s: null event", fn);
    return NULL;
  }
  *s = e->device->driver->bind(e->device);
  return *s ? NULL : e;
}

FlyrtStatus flyrtEventRecord(FlyrtEvent h, FlyrtStream st) {
  FlyrtStatus s;
  Event *e = event_bound(h, __func__, &s);
  if (e)
    s = e->device->driver->event_record(e->device, e->event, st);
  return s ? s : flyrt_ok();
}

FlyrtStatus flyrtEventSynchronize(FlyrtEvent h) {
  FlyrtStatus s;
  Event *e = event_bound(h, __func__, &s);
  if (e)
    s = e->device->driver->event_sync(e->device, e->event);
  return s ? s : flyrt_ok();
}

FlyrtStatus flyrtEventElapsed(FlyrtEvent start, FlyrtEvent end, float *ms) {
  FlyrtStatus s;
  Event *a = event_bound(start, __func__, &s);
  Event *b = a ? event_bound(end, __func__, &s) : NULL;
  if (!ms)
    return flyrt_fail(FLYRT_ERROR_INVALID_VALUE, "flyrtEventElapsed: null argument");
  if (b && a->device != b->device)
    return flyrt_fail(FLYRT_ERROR_INVALID_VALUE, "flyrtEventElapsed: events of two devices");
  if (b)
    s = a->device->driver->event_elapsed(a->device, a->event, b->event, ms);
  return s ? s : flyrt_ok();
}

/* ---- launching ---- */

/* The most dynamic shared memory a kernel gets without asking. */
enum { DEFAULT_SHARED = 48 * 1024 };

/* Whether a tensor parameter before the i-th holds ptr in this launch's
   slots (so it has passed the check of GPU memory already). */
static bool checked_earlier(const Kernel *k, const uint64_t *slots, uint32_t i, const void *ptr) {
  for (uint32_t j = 0; j < i; j++) {
    const Param *q = &k->params[j];
    void *other;
    memcpy(&other, &slots[q->first_arg], sizeof other);
    if (q->info.kind == FLYRT_PARAM_TENSOR && other == ptr && ptr)
      return true;
  }
  return false;
}

FlyrtStatus flyrtKernelLaunch(FlyrtKernel h, const FlyrtArg *args, int nargs, FlyrtStream st,
                              const FlyrtLaunchConfig *override) {
  Kernel *k = h.ptr;
  if (!k)
    return flyrt_fail(FLYRT_ERROR_INVALID_VALUE, "flyrtKernelLaunch: null kernel");
  uint64_t slots[FLYRT_MAX_ARGS];
  void *params[FLYRT_MAX_ARGS];
  FlyrtLaunchConfig c;
  FlyrtStatus s = flyrt_prepare(k, args, nargs, override, slots, &c);
  if (s)
    return s;
  /* A grid of no blocks (the rule's answer for an empty tensor) does
     nothing, successfully, as a loop over nothing would. */
  if (!c.grid[0] || !c.grid[1] || !c.grid[2])
    return flyrt_ok();
  Device *d = k->module->device;
  if (!d)
    return flyrt_fail(FLYRT_ERROR_NO_DEVICE,
                      "%s: its module was made for target %s without a device: it cannot launch",
                      k->name, k->module->target);
  if ((s = d->driver->bind(d)))
    return s;
  /* Each tensor is GPU memory of the kernel's GPU: the driver is asked once
     for each pointer, a call that was most of a small launch's host time.
     Not again for a pointer the parameter held at the kernel's last launch
     (checked then), nor for one an earlier parameter of this launch holds
     (as PyTorch's allocator keeps its memory, a library's repeated calls
     pass the same few pointers). */
  for (uint32_t i = 0; i < k->rec.nparams; i++) {
    Param *p = &k->params[i];
    if (p->info.kind != FLYRT_PARAM_TENSOR)
      continue;
    void *ptr;
    memcpy(&ptr, &slots[p->first_arg], sizeof ptr);
    if (ptr && atomic_load_explicit(&p->checked, memory_order_relaxed) == (uintptr_t)ptr)
      continue;
    if (!checked_earlier(k, slots, i, ptr) &&
        (s = d->driver->check_pointer(d, ptr, k->name, p->info.name)))
      return s;
    atomic_store_explicit(&p->checked, (uintptr_t)ptr, memory_order_relaxed);
  }
  /* Its tensor maps, encoded for this launch (a CPU call each, no
     allocation) or kept from a launch with the same arguments, in place of
     their argument slots. */
  _Alignas(64) unsigned char maps[FLYRT_MAX_TMAPS][128];
  for (uint32_t i = 0; i < k->rec.ntmaps; i++) {
    FlyrtTmapEncode e;
    const FlyrtTensor *t = flyrt_param_tensor(k, args, nargs, k->tmaps[i].param);
    if (!t)
      return flyrt_fail(FLYRT_ERROR_BAD_BUNDLE, "%s: a tensor map of no tensor", k->name);
    if ((s = flyrt_tmap_prepare(k, &k->tmaps[i], t, &e)))
      return s;
    if (!d->driver->encode_tmap)
      return flyrt_fail(FLYRT_ERROR_NO_IMAGE, "%s: its tensor maps (TMA) need the %s", k->name,
                        "CUDA driver");
    if (flyrt_tmap_cache_get(&e, maps[i]))
      continue;
    if ((s = d->driver->encode_tmap(d, &e, maps[i])))
      return s;
    flyrt_tmap_cache_put(&e, maps[i]);
  }
  /* The kernel's own shared tiles (NVIDIA keeps them in the dynamic shared
     memory) come before the bytes the launch asks for. */
  if ((uint64_t)c.shared_bytes + k->rec.static_shared > UINT32_MAX)
    return flyrt_fail(FLYRT_ERROR_LAUNCH_RULE, "%s: %u bytes of shared memory and %u more", k->name,
                      k->rec.static_shared, c.shared_bytes);
  c.shared_bytes += k->rec.static_shared;
  if (c.shared_bytes > DEFAULT_SHARED && c.shared_bytes > atomic_load(&k->shared_allowed)) {
    if ((s = d->driver->allow_shared(d, k->fn, c.shared_bytes)))
      return s;
    atomic_store(&k->shared_allowed, c.shared_bytes);
  }
  for (uint32_t i = 0; i < k->rec.nargs; i++)
    params[i] = &slots[i];
  for (uint32_t i = 0; i < k->rec.ntmaps; i++)
    params[k->tmaps[i].arg] = maps[i];
  uint32_t cluster[3];
  bool clustered = flyrt_kernel_cluster(k, cluster);
  s = d->driver->launch(d, k->fn, &c, clustered ? cluster : NULL, st, params);
  return s ? s : flyrt_ok();
}
