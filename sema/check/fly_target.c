/* fly_target.c — the target table (fly_target.h), made from fly_targets.def. */
#include "fly_target.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define MMA(f) (1u << FLY_MMA_##f)
#define FEAT(f) (1u << FLY_FEATURE_##f)

static const FlyTarget targets[] = {
#define FLY_TARGET(id, arch, vendor, family, warp, smem, device, isa, mma, features)               \
  {FLY_TARGET_##id, arch, FLY_VENDOR_##vendor, family, warp, smem, device, isa, mma, features},
#include "fly_targets.def"
#undef FLY_TARGET
};

static const char *const feature_names[] = {
#define X(id, name, doc) name,
    FLY_FEATURES(X)
#undef X
};
static const char *const feature_docs[] = {
#define X(id, name, doc) doc,
    FLY_FEATURES(X)
#undef X
};
static const char *const mma_names[] = {
#define X(id, vendor, name, doc) name,
    FLY_MMA_FAMILIES(X)
#undef X
};
static const char *const mma_docs[] = {
#define X(id, vendor, name, doc) doc,
    FLY_MMA_FAMILIES(X)
#undef X
};
static const FlyVendor mma_vendors[] = {
#define X(id, vendor, name, doc) FLY_VENDOR_##vendor,
    FLY_MMA_FAMILIES(X)
#undef X
};

const FlyTarget *fly_target_find(const char *arch) {
  for (int i = 0; i < FLY_TARGET_COUNT; i++)
    if (strcmp(arch, targets[i].arch) == 0)
      return &targets[i];
  return NULL;
}

const FlyTarget *fly_target_at(int i) {
  return i >= 0 && i < FLY_TARGET_COUNT ? &targets[i] : NULL;
}

/* A list of the targets a predicate keeps, written once into buf. */
static void list_targets(char *buf, size_t n, bool (*keep)(const FlyTarget *, int), int arg) {
  size_t at = 0;
  buf[0] = '\0';
  for (int i = 0; i < FLY_TARGET_COUNT; i++)
    if (keep(&targets[i], arg) && at < n)
      at += (size_t)snprintf(buf + at, n - at, "%s%s", at ? ", " : "", targets[i].arch);
}

static bool any(const FlyTarget *t, int arg) {
  (void)t;
  (void)arg;
  return true;
}
static bool has_feature(const FlyTarget *t, int f) { return fly_target_has(t, (FlyFeature)f); }
static bool has_mma(const FlyTarget *t, int m) { return fly_target_has_mma(t, (FlyMmaFamily)m); }

enum { LIST = 128 };
static char all_names[LIST];
static char with_feature[FLY_FEATURE_COUNT][LIST];
static char with_mma[FLY_MMA_FAMILY_COUNT][LIST];
static pthread_once_t lists_once = PTHREAD_ONCE_INIT;

static void make_lists(void) {
  list_targets(all_names, LIST, any, 0);
  for (int f = 0; f < FLY_FEATURE_COUNT; f++)
    list_targets(with_feature[f], LIST, has_feature, f);
  for (int m = 0; m < FLY_MMA_FAMILY_COUNT; m++)
    list_targets(with_mma[m], LIST, has_mma, m);
}

const char *fly_target_names(void) {
  pthread_once(&lists_once, make_lists);
  return all_names;
}

const char *fly_targets_with_feature(FlyFeature f) {
  pthread_once(&lists_once, make_lists);
  return with_feature[f];
}

const char *fly_targets_with_mma(FlyMmaFamily m) {
  pthread_once(&lists_once, make_lists);
  return with_mma[m];
}

int fly_target_static_smem(const FlyTarget *t) {
  enum { NVIDIA_STATIC_SMEM = 48 * 1024 };
  if (t->vendor == FLY_VENDOR_NVIDIA && t->smem_per_block > NVIDIA_STATIC_SMEM)
    return NVIDIA_STATIC_SMEM;
  return t->smem_per_block;
}

const FlyTarget *fly_target_for_device(FlyVendor vendor, int device) {
  const FlyTarget *best = NULL;
  for (int i = 0; i < FLY_TARGET_COUNT; i++) {
    const FlyTarget *t = &targets[i];
    size_t n = strlen(t->arch);
    if (t->vendor != vendor || t->arch[n - 1] == 'a')
      continue;
    if (vendor == FLY_VENDOR_AMD ? t->device == device
                                 : t->device <= device && (!best || t->device > best->device))
      best = t;
  }
  return best;
}

const char *fly_vendor_name(FlyVendor v) { return v == FLY_VENDOR_NVIDIA ? "nvidia" : "amd"; }
const char *fly_vendor_title(FlyVendor v) { return v == FLY_VENDOR_NVIDIA ? "NVIDIA" : "AMD"; }

const char *fly_feature_name(FlyFeature f) { return feature_names[f]; }
const char *fly_feature_doc(FlyFeature f) { return feature_docs[f]; }

int fly_feature_find(const char *name, unsigned len) {
  for (int f = 0; f < FLY_FEATURE_COUNT; f++)
    if (strlen(feature_names[f]) == len && memcmp(feature_names[f], name, len) == 0)
      return f;
  return -1;
}

const char *fly_mma_family_name(FlyMmaFamily f) { return mma_names[f]; }
const char *fly_mma_family_doc(FlyMmaFamily f) { return mma_docs[f]; }
FlyVendor fly_mma_family_vendor(FlyMmaFamily f) { return mma_vendors[f]; }
