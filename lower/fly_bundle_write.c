/* fly_bundle_write.c — laying out a bundle: header, tables, strings, images,
 * then the checksum over all of it. */
#include "fly_bundle_write.h"

#include <stdlib.h>
#include <string.h>

void fly_bundle_writer_init(FlyBundleWriter *w) { memset(w, 0, sizeof *w); }

void fly_bundle_writer_release(FlyBundleWriter *w) {
  free(w->kernels);
  free(w->params);
  free(w->tmaps);
  free(w->code);
  free(w->images);
  free(w->strings);
  free(w->data);
  memset(w, 0, sizeof *w);
}

/* Room for `more` records of `size` bytes in *array; false when out of
   memory or past the format's 32-bit counts. */
static bool grow(FlyBundleWriter *w, void **array, uint32_t count, uint32_t *cap, size_t size,
                 size_t more) {
  if (w->failed || count + more > UINT32_MAX / 2) {
    w->failed = true;
    return false;
  }
  if (count + more <= *cap)
    return true;
  size_t n = *cap ? *cap : 8;
  while (n < count + more)
    n *= 2;
  void *p = realloc(*array, n * size);
  if (!p) {
    w->failed = true;
    return false;
  }
  *array = p;
  *cap = (uint32_t)n;
  return true;
}

/* Appends bytes (aligned to `align`) to a growing area; returns the offset. */
static size_t append(FlyBundleWriter *w, char **area, size_t *len, size_t *cap, const void *bytes,
                     size_t size, size_t align) {
  size_t at = (*len + align - 1) / align * align;
  if (w->failed || at + size < at || at + size > FLY_BUNDLE_MAX_SIZE) {
    w->failed = true;
    return 0;
  }
  if (at + size > *cap) {
    size_t n = *cap ? *cap : 256;
    while (n < at + size)
      n *= 2;
    char *p = realloc(*area, n);
    if (!p) {
      w->failed = true;
      return 0;
    }
    *area = p;
    *cap = n;
  }
  /* Nothing to copy (an empty image) may come with no area yet. */
  if (at + size > *len) {
    memset(*area + *len, 0, at - *len);
    memcpy(*area + at, bytes, size);
    *len = at + size;
  }
  return at;
}

/* A string's offset; each distinct string is stored once. */
static uint32_t string(FlyBundleWriter *w, const char *s) {
  size_t n = strlen(s) + 1;
  for (size_t at = 0; at < w->strings_len; at += strlen(w->strings + at) + 1)
    if (strcmp(w->strings + at, s) == 0)
      return (uint32_t)at;
  size_t at = append(w, &w->strings, &w->strings_len, &w->strings_cap, s, n, 1);
  if (at > UINT32_MAX)
    w->failed = true;
  return (uint32_t)at;
}

uint32_t fly_bundle_writer_image(FlyBundleWriter *w, const char *target, uint32_t kind,
                                 const void *bytes, size_t size) {
  if (!grow(w, (void **)&w->images, w->nimages, &w->images_cap, sizeof *w->images, 1))
    return 0;
  FlyBundleImage *im = &w->images[w->nimages];
  im->target = string(w, target);
  im->kind = kind;
  im->offset = append(w, (char **)&w->data, &w->data_len, &w->data_cap, bytes, size, 16);
  im->size = size;
  return w->nimages++;
}

void fly_bundle_writer_kernel(FlyBundleWriter *w, const FlyKernelInfo *k, uint32_t image,
                              const char *symbol) {
  if (!grow(w, (void **)&w->kernels, w->nkernels, &w->kernels_cap, sizeof *w->kernels, 1) ||
      !grow(w, (void **)&w->params, w->nparams, &w->params_cap, sizeof *w->params,
            (size_t)k->nparams) ||
      !grow(w, (void **)&w->code, w->ninsns, &w->code_cap, sizeof *w->code, k->ninsns) ||
      !grow(w, (void **)&w->tmaps, w->ntmaps, &w->tmaps_cap, sizeof *w->tmaps, k->ntmaps))
    return;
  FlyBundleKernel r = {0};
  r.name = string(w, k->name);
  r.spec = string(w, k->spec);
  r.target = string(w, k->target);
  r.symbol = string(w, symbol);
  r.image = image;
  r.flags = (k->has_launch ? FLY_BUNDLE_KERNEL_HAS_LAUNCH : 0) |
            (k->ntmaps ? FLY_BUNDLE_KERNEL_HAS_TMAPS : 0);
  r.first_param = w->nparams;
  r.nparams = (uint32_t)k->nparams;
  r.nargs = k->nargs;
  r.first_insn = w->ninsns;
  r.ninsns = k->has_launch ? k->ninsns : 0;
  r.static_shared = k->static_shared;
  r.first_tmap = w->ntmaps;
  r.ntmaps = k->ntmaps;
  memcpy(r.cluster, k->cluster, sizeof r.cluster);
  for (uint32_t i = 0; i < k->ntmaps; i++)
    w->tmaps[w->ntmaps++] = k->tmaps[i];
  /* TEMP operands index the kernel's own program: no rebasing. */
  for (int i = 0; i < 3; i++) {
    r.grid[i] = k->rule[i];
    r.block[i] = k->rule[3 + i];
  }
  r.shared = k->rule[6];
  for (int i = 0; i < k->nparams; i++) {
    const FlyParamInfo *p = &k->params[i];
    w->params[w->nparams++] = (FlyBundleParam){string(w, p->name),
                                               p->kind,
                                               p->dtype,
                                               string(w, p->type),
                                               string(w, p->layout),
                                               p->dyn_shape,
                                               p->dyn_stride,
                                               p->first_arg,
                                               p->align,
                                               p->stride_align,
                                               p->max_span,
                                               0};
  }
  for (uint32_t i = 0; i < r.ninsns; i++)
    w->code[w->ninsns++] = k->code[i];
  /* A requirement's message and place become strings of the bundle. */
  for (uint32_t i = 0; i < k->nrequires && k->has_launch; i++) {
    const FlyRequireInfo *q = &k->requires[i];
    FlyBundleInsn *in = &w->code[r.first_insn + q->insn];
    in->b.value = string(w, q->message);
    in->where = string(w, q->where);
  }
  w->kernels[w->nkernels++] = r;
}

void fly_bundle_writer_merge(FlyBundleWriter *w, const FlyBundle *b) {
  uint32_t first_image = w->nimages;
  for (uint32_t i = 0; i < b->nimages; i++) {
    FlyBundleImage im = fly_bundle_image(b, i);
    fly_bundle_writer_image(w, fly_bundle_string(b, im.target), im.kind,
                            fly_bundle_image_bytes(b, &im), im.size);
  }
  for (uint32_t i = 0; i < b->nkernels; i++) {
    FlyBundleKernel k = fly_bundle_kernel(b, i);
    if (!grow(w, (void **)&w->kernels, w->nkernels, &w->kernels_cap, sizeof *w->kernels, 1) ||
        !grow(w, (void **)&w->params, w->nparams, &w->params_cap, sizeof *w->params, k.nparams) ||
        !grow(w, (void **)&w->code, w->ninsns, &w->code_cap, sizeof *w->code, k.ninsns) ||
        !grow(w, (void **)&w->tmaps, w->ntmaps, &w->tmaps_cap, sizeof *w->tmaps, k.ntmaps))
      return;
    FlyBundleKernel r = k;
    r.name = string(w, fly_bundle_string(b, k.name));
    r.spec = string(w, fly_bundle_string(b, k.spec));
    r.target = string(w, fly_bundle_string(b, k.target));
    r.symbol = string(w, fly_bundle_string(b, k.symbol));
    r.image = first_image + k.image;
    r.first_param = w->nparams;
    r.first_insn = w->ninsns;
    r.first_tmap = w->ntmaps;
    for (uint32_t j = 0; j < k.ntmaps; j++)
      w->tmaps[w->ntmaps++] = fly_bundle_tmap(b, k.first_tmap + j);
    for (uint32_t j = 0; j < k.nparams; j++) {
      FlyBundleParam p = fly_bundle_param(b, k.first_param + j);
      p.name = string(w, fly_bundle_string(b, p.name));
      p.type = string(w, fly_bundle_string(b, p.type));
      p.layout = string(w, fly_bundle_string(b, p.layout));
      w->params[w->nparams++] = p;
    }
    for (uint32_t j = 0; j < k.ninsns; j++) {
      FlyBundleInsn in = fly_bundle_insn(b, k.first_insn + j);
      if (in.op == FLY_LAUNCH_REQUIRE) {
        in.b.value = string(w, fly_bundle_string(b, (uint32_t)in.b.value));
        in.where = string(w, fly_bundle_string(b, in.where));
      }
      w->code[w->ninsns++] = in;
    }
    w->kernels[w->nkernels++] = r;
  }
}

void *fly_bundle_writer_finish(FlyBundleWriter *w, const char *compiler, const char *toolchain,
                               const char *source_hash, size_t *size) {
  FlyBundleHeader h = {0};
  memcpy(h.magic, FLY_BUNDLE_MAGIC, 8);
  h.version = FLY_BUNDLE_VERSION;
  h.header_size = sizeof h;
  h.compiler = string(w, compiler);
  h.toolchain = string(w, toolchain);
  h.source_hash = string(w, source_hash);
  if (w->strings_len == 0)
    string(w, "");
  if (w->failed)
    return NULL;
  /* Header, the five tables, strings, data: each table 8-aligned, the
     data 16-aligned so that each image keeps its 16-byte alignment. */
  const void *tables[FLY_BUNDLE_NTABLES] = {w->kernels, w->params, w->code, w->images, w->tmaps};
  uint32_t counts[FLY_BUNDLE_NTABLES] = {w->nkernels, w->nparams, w->ninsns, w->nimages, w->ntmaps};
  size_t sizes[FLY_BUNDLE_NTABLES] = {sizeof *w->kernels, sizeof *w->params, sizeof *w->code,
                                      sizeof *w->images, sizeof *w->tmaps};
  size_t at = sizeof h;
  for (int t = 0; t < FLY_BUNDLE_NTABLES; t++) {
    at = (at + 7) / 8 * 8;
    h.tables[t] = (FlyBundleTable){at, counts[t], (uint32_t)sizes[t]};
    at += counts[t] * sizes[t];
  }
  h.strings = at;
  h.strings_size = w->strings_len;
  at = (at + w->strings_len + 15) / 16 * 16;
  h.data = at;
  h.data_size = w->data_len;
  at += w->data_len;
  h.file_size = at;
  if (at > FLY_BUNDLE_MAX_SIZE)
    return NULL;
  unsigned char *out = calloc(1, at ? at : 1);
  if (!out)
    return NULL;
  for (int t = 0; t < FLY_BUNDLE_NTABLES; t++)
    if (counts[t])
      memcpy(out + h.tables[t].offset, tables[t], counts[t] * sizes[t]);
  memcpy(out + h.strings, w->strings, w->strings_len);
  if (w->data_len)
    memcpy(out + h.data, w->data, w->data_len);
  memcpy(out, &h, sizeof h);
  h.checksum = fly_crc32(0, out, at);
  memcpy(out + offsetof(FlyBundleHeader, checksum), &h.checksum, 4);
  *size = at;
  return out;
}
