/* flyrt_module.c — a bundle's kernels for one device: which target's
 * images to use, each kernel's signature read from the bundle, and the
 * loading of binaries into the device when a kernel is asked for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flyrt_internal.h"

/* ---- choosing the target ---- */

/* "sm_90" -> 90, with *accel for "sm_90a"; -1 for anything else. */
static int sm_arch(const char *t, bool *accel) {
  int arch, n = 0;
  *accel = false;
  if (sscanf(t, "sm_%d%n", &arch, &n) != 1)
    return -1;
  if (t[n] == 'a' && t[n + 1] == '\0')
    *accel = true;
  else if (t[n] != '\0')
    return -1;
  return arch;
}

/* How well image im suits the device's target: 0 not at all; more is
   better. NVIDIA: a cubin must be for the device's own architecture; PTX
   may be for an older one (the driver compiles it forward), except the
   `a` variants, which run only on their own chip. AMD: the same chip. */
static int suitability(const char *device, const char *image, uint32_t kind) {
  bool dev_a, img_a;
  int d = sm_arch(device, &dev_a), i = sm_arch(image, &img_a);
  if (d < 0 || i < 0)
    return strcmp(device, image) == 0 && kind == FLY_IMAGE_HSACO ? 1 : 0;
  if (kind == FLY_IMAGE_HSACO || i > d || (img_a && i != d))
    return 0;
  if (kind == FLY_IMAGE_CUBIN && i != d)
    return 0;
  /* Newer architecture first, then cubin over PTX, then the `a` variant. */
  return i * 4 + (kind == FLY_IMAGE_CUBIN) * 2 + img_a + 1;
}

/* The targets of the bundle's images, "sm_90 ptx, gfx942 hsaco", for
   messages. */
static void list_targets(const FlyBundle *b, char *buf, size_t n) {
  size_t used = 0;
  buf[0] = '\0';
  for (uint32_t i = 0; i < b->nimages && used < n; i++) {
    FlyBundleImage im = fly_bundle_image(b, i);
    const char *kind = im.kind == FLY_IMAGE_PTX     ? "ptx"
                       : im.kind == FLY_IMAGE_CUBIN ? "cubin"
                                                    : "hsaco";
    used += (size_t)snprintf(buf + used, n - used, "%s%s %s", i ? ", " : "",
                             fly_bundle_string(b, im.target), kind);
  }
  if (b->nimages == 0)
    snprintf(buf, n, "none");
}

FlyrtStatus flyrt_choose_target(const FlyBundle *b, const char *device_target, const char *device,
                                char *out, size_t n) {
  char have[512];
  int best = 0;
  for (uint32_t i = 0; i < b->nimages; i++) {
    FlyBundleImage im = fly_bundle_image(b, i);
    const char *t = fly_bundle_string(b, im.target);
    int s = suitability(device_target, t, im.kind);
    if (s > best) {
      best = s;
      snprintf(out, n, "%s", t);
    }
  }
  if (best)
    return FLYRT_SUCCESS;
  list_targets(b, have, sizeof have);
  return flyrt_fail(FLYRT_ERROR_NO_IMAGE,
                    "the bundle has no image that runs on %s (%s): it has %s; compile it with "
                    "--target=%s",
                    device, device_target[0] ? device_target : "target unknown", have,
                    device_target[0] ? device_target : "...");
}

/* The target named, which the bundle must have, or the device's best. */
static FlyrtStatus choose_target(const FlyBundle *b, const Device *d, const char *target, char *out,
                                 size_t n) {
  if (!target) {
    char device[320];
    snprintf(device, sizeof device, "GPU %d, %s", d->ordinal, d->name);
    return flyrt_choose_target(b, d->target, device, out, n);
  }
  bool named = false;
  for (uint32_t i = 0; i < b->nimages; i++) {
    FlyBundleImage im = fly_bundle_image(b, i);
    if (strcmp(fly_bundle_string(b, im.target), target) != 0)
      continue;
    named = true;
    /* On a device, the target must be one it runs (when its own is known). */
    if (d && d->target[0] && !suitability(d->target, target, im.kind))
      continue;
    snprintf(out, n, "%s", target);
    return FLYRT_SUCCESS;
  }
  if (named)
    return flyrt_fail(FLYRT_ERROR_NO_IMAGE, "GPU %d, %s (%s), cannot run the bundle's %s code",
                      d->ordinal, d->name, d->target, target);
  char have[512];
  list_targets(b, have, sizeof have);
  return flyrt_fail(FLYRT_ERROR_NO_IMAGE, "the bundle has no image for %s (it has: %s)", target,
                    have);
}

/* ---- the kernels' signatures ---- */

static int count_dynamic(const int64_t *leaves, int n) {
  int c = 0;
  for (int i = 0; i < n; i++)
    c += leaves[i] == FLYRT_DYNAMIC;
  return c;
}

static FlyrtStatus read_params(const FlyBundle *b, Kernel *k) {
  k->params = calloc(k->rec.nparams ? k->rec.nparams : 1, sizeof *k->params);
  if (!k->params)
    return flyrt_fail(FLYRT_ERROR_OUT_OF_MEMORY, "out of memory");
  if (k->rec.nargs > FLYRT_MAX_ARGS)
    return flyrt_fail(FLYRT_ERROR_BAD_BUNDLE, "kernel '%s' takes %u arguments (limit is %d)",
                      k->name, k->rec.nargs, FLYRT_MAX_ARGS);
  for (uint32_t i = 0; i < k->rec.nparams; i++) {
    FlyBundleParam r = fly_bundle_param(b, k->rec.first_param + i);
    Param *p = &k->params[i];
    atomic_init(&p->checked, 0);
    p->info.name = fly_bundle_string(b, r.name);
    p->info.kind = (FlyrtParamKind)r.kind;
    p->info.dtype = (FlyrtDtype)r.dtype;
    p->info.type = fly_bundle_string(b, r.type);
    p->info.layout = fly_bundle_string(b, r.layout);
    p->info.align = r.align;
    p->info.stride_align = r.stride_align;
    p->info.max_span = r.max_span;
    p->first_arg = r.first_arg;
    p->dyn_shape = (int)r.dyn_shape;
    p->dyn_stride = (int)r.dyn_stride;
    uint64_t end = (uint64_t)r.first_arg + 1;
    if (r.kind == FLY_PARAM_TENSOR) {
      if (!flyrt_parse_layout(p->info.layout, &p->info) ||
          count_dynamic(p->info.shape, p->info.rank) != p->dyn_shape ||
          count_dynamic(p->info.stride, p->info.rank) != p->dyn_stride)
        return flyrt_fail(FLYRT_ERROR_BAD_BUNDLE,
                          "corrupt bundle: parameter '%s' of kernel '%s' has layout '%s', which "
                          "does not match its record",
                          p->info.name, k->name, p->info.layout);
      end += (uint64_t)r.dyn_shape + r.dyn_stride;
    }
    if (r.kind != FLY_PARAM_CONST) {
      k->nuser++;
      if (end > k->rec.nargs || r.dtype == FLY_DTYPE_NONE)
        return flyrt_fail(FLYRT_ERROR_BAD_BUNDLE,
                          "corrupt bundle: parameter '%s' of kernel '%s' has no place among "
                          "its %u arguments",
                          p->info.name, k->name, k->rec.nargs);
    }
  }
  return FLYRT_SUCCESS;
}

/* Its tensor maps, which the launch builds. */
static FlyrtStatus read_tmaps(const FlyBundle *b, Kernel *k) {
  if (k->rec.ntmaps > FLYRT_MAX_TMAPS)
    return flyrt_fail(FLYRT_ERROR_BAD_BUNDLE, "kernel '%s' takes %u tensor maps (limit is %d)",
                      k->name, k->rec.ntmaps, FLYRT_MAX_TMAPS);
  if (!k->rec.ntmaps)
    return FLYRT_SUCCESS;
  k->tmaps = calloc(k->rec.ntmaps, sizeof *k->tmaps);
  if (!k->tmaps)
    return flyrt_fail(FLYRT_ERROR_OUT_OF_MEMORY, "out of memory");
  for (uint32_t i = 0; i < k->rec.ntmaps; i++)
    k->tmaps[i] = fly_bundle_tmap(b, k->rec.first_tmap + i);
  return FLYRT_SUCCESS;
}

/* ---- modules ---- */

static void module_free(Module *m) {
  if (!m)
    return;
  for (uint32_t i = 0; i < m->nkernels; i++) {
    free(m->kernels[i].params);
    free(m->kernels[i].tmaps);
  }
  for (uint32_t i = 0; m->images && i < m->nimages; i++)
    if (m->images[i].module)
      m->device->driver->unload(m->device, m->images[i].module);
  free(m->kernels);
  free(m->images);
  pthread_mutex_destroy(&m->lock);
  flyrt_bundle_release(m->bundle);
  free(m);
}

FlyrtStatus flyrtModuleCreate(FlyrtBundle bh, FlyrtDevice dh, const char *target,
                              FlyrtModule *out) {
  Bundle *bundle = bh.ptr;
  Device *d = dh.ptr;
  if (!out || !bundle || (!d && !target))
    return flyrt_fail(FLYRT_ERROR_INVALID_VALUE,
                      "flyrtModuleCreate: needs a bundle, and a device or a target");
  out->ptr = NULL;
  const FlyBundle *b = &bundle->b;
  Module *m = calloc(1, sizeof *m);
  if (!m)
    return flyrt_fail(FLYRT_ERROR_OUT_OF_MEMORY, "out of memory");
  pthread_mutex_init(&m->lock, NULL);
  flyrt_bundle_retain(bundle);
  m->bundle = bundle;
  m->device = d;
  FlyrtStatus s = choose_target(b, d, target, m->target, sizeof m->target);
  m->nimages = b->nimages;
  m->images = calloc(b->nimages ? b->nimages : 1, sizeof *m->images);
  m->kernels = calloc(b->nkernels ? b->nkernels : 1, sizeof *m->kernels);
  if (!s && (!m->images || !m->kernels))
    s = flyrt_fail(FLYRT_ERROR_OUT_OF_MEMORY, "out of memory");
  for (uint32_t i = 0; !s && i < b->nimages; i++)
    m->images[i].index = i;
  for (uint32_t i = 0; !s && i < b->nkernels; i++) {
    FlyBundleKernel r = fly_bundle_kernel(b, i);
    if (strcmp(fly_bundle_string(b, r.target), m->target) != 0)
      continue;
    Kernel *k = &m->kernels[m->nkernels++];
    k->module = m;
    k->index = i;
    k->rec = r;
    k->name = fly_bundle_string(b, r.name);
    k->spec = fly_bundle_string(b, r.spec);
    k->symbol = fly_bundle_string(b, r.symbol);
    k->image = &m->images[r.image];
    s = read_params(b, k);
    if (!s)
      s = read_tmaps(b, k);
  }
  if (s) {
    module_free(m);
    return s;
  }
  out->ptr = m;
  return flyrt_ok();
}

void flyrtModuleDestroy(FlyrtModule h) {
  Module *m = h.ptr;
  if (m && m->device)
    m->device->driver->bind(m->device);
  module_free(m);
}

const char *flyrtModuleTarget(FlyrtModule h) {
  Module *m = h.ptr;
  return m ? m->target : "";
}

/* ---- finding a kernel ---- */

/* Whether every binding of want ("BLOCK=128 VEC=4") is among have's. */
static bool spec_matches(const char *have, const char *want) {
  for (const char *w = want;;) {
    while (*w == ' ')
      w++;
    if (!*w)
      return true;
    size_t n = strcspn(w, " ");
    bool found = false;
    for (const char *h = have; *h && !found;) {
      while (*h == ' ')
        h++;
      size_t m = strcspn(h, " ");
      found = m == n && m > 0 && strncmp(h, w, n) == 0;
      h += m;
    }
    if (!found)
      return false;
    w += n;
  }
}

static void list_specs(const Module *m, const char *name, char *buf, size_t n) {
  size_t used = 0;
  buf[0] = '\0';
  for (uint32_t i = 0; i < m->nkernels && used < n; i++)
    if (strcmp(m->kernels[i].name, name) == 0)
      used +=
          (size_t)snprintf(buf + used, n - used, "%s'%s'", used ? ", " : "", m->kernels[i].spec);
}

static void list_names(const Module *m, char *buf, size_t n) {
  size_t used = 0;
  buf[0] = '\0';
  for (uint32_t i = 0; i < m->nkernels && used < n; i++) {
    bool seen = false;
    for (uint32_t j = 0; j < i && !seen; j++)
      seen = strcmp(m->kernels[i].name, m->kernels[j].name) == 0;
    if (!seen)
      used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? ", " : "", m->kernels[i].name);
  }
  if (!m->nkernels)
    snprintf(buf, n, "none");
}

/* Loads k's image and function into the device, once. */
static FlyrtStatus load(Module *m, Kernel *k) {
  Device *d = m->device;
  FlyrtStatus s = FLYRT_SUCCESS;
  pthread_mutex_lock(&m->lock);
  if (!k->fn) {
    s = d->driver->bind(d);
    if (!s && !k->image->module) {
      FlyBundleImage im = fly_bundle_image(&m->bundle->b, k->image->index);
      s = d->driver->load(d, fly_bundle_image_bytes(&m->bundle->b, &im), im.size, im.kind,
                          &k->image->module);
    }
    void *fn = NULL;
    if (!s)
      s = d->driver->function(d, k->image->module, k->symbol, &fn);
    if (!s)
      k->fn = fn;
  }
  pthread_mutex_unlock(&m->lock);
  return s;
}

FlyrtStatus flyrtModuleGetKernel(FlyrtModule h, const char *name, const char *spec,
                                 FlyrtKernel *out) {
  Module *m = h.ptr;
  if (!m || !name || !out)
    return flyrt_fail(FLYRT_ERROR_INVALID_VALUE, "flyrtModuleGetKernel: null argument");
  out->ptr = NULL;
  Kernel *found = NULL;
  int named = 0, matched = 0;
  for (uint32_t i = 0; i < m->nkernels; i++) {
    Kernel *k = &m->kernels[i];
    if (strcmp(k->name, name) != 0)
      continue;
    named++;
    if (!spec || spec_matches(k->spec, spec)) {
      /* Of two images of one specialisation, the better suited (a cubin). */
      if (found && strcmp(found->spec, k->spec) == 0) {
        FlyBundleImage a = fly_bundle_image(&m->bundle->b, found->image->index);
        FlyBundleImage b = fly_bundle_image(&m->bundle->b, k->image->index);
        if (b.kind == FLY_IMAGE_CUBIN && a.kind != FLY_IMAGE_CUBIN)
          found = k;
        continue;
      }
      matched++;
      found = k;
    }
  }
  char list[768];
  if (!named) {
    list_names(m, list, sizeof list);
    return flyrt_fail(FLYRT_ERROR_NOT_FOUND, "no kernel '%s' in the bundle for %s (it has: %s)",
                      name, m->target, list);
  }
  if (matched != 1) {
    list_specs(m, name, list, sizeof list);
    if (matched == 0)
      return flyrt_fail(FLYRT_ERROR_NOT_FOUND,
                        "kernel '%s' has no specialisation '%s' for %s (it has: %s)", name,
                        spec ? spec : "", m->target, list);
    return flyrt_fail(FLYRT_ERROR_NOT_FOUND,
                      "kernel '%s' has %d specialisations%s%s%s for %s: name the const "
                      "bindings of one (%s)",
                      name, matched, spec && *spec ? " matching '" : "", spec ? spec : "",
                      spec && *spec ? "'" : "", m->target, list);
  }
  if (m->device) {
    FlyrtStatus s = load(m, found);
    if (s)
      return s;
  }
  out->ptr = found;
  return flyrt_ok();
}

/* ---- the signature ---- */

const char *flyrtKernelName(FlyrtKernel h) {
  Kernel *k = h.ptr;
  return k ? k->name : "";
}

const char *flyrtKernelSpec(FlyrtKernel h) {
  Kernel *k = h.ptr;
  return k ? k->spec : "";
}

int flyrtKernelParamCount(FlyrtKernel h) {
  Kernel *k = h.ptr;
  return k ? (int)k->rec.nparams : 0;
}

int flyrtKernelArgCount(FlyrtKernel h) {
  Kernel *k = h.ptr;
  return k ? k->nuser : 0;
}

FlyrtStatus flyrtKernelParam(FlyrtKernel h, int i, FlyrtParamInfo *out) {
  Kernel *k = h.ptr;
  if (!k || !out)
    return flyrt_fail(FLYRT_ERROR_INVALID_VALUE, "flyrtKernelParam: null argument");
  if (i < 0 || (uint32_t)i >= k->rec.nparams)
    return flyrt_fail(FLYRT_ERROR_INVALID_VALUE, "kernel '%s' has %u parameters, not %d", k->name,
                      k->rec.nparams, i + 1);
  *out = k->params[i].info;
  return flyrt_ok();
}
