/* libflyc_target.c — which GPU to compile for when no --target is given.
 *
 * FLYC_TARGET first (a target or a comma-separated list). Then the GPU of
 * this machine: NVIDIA's through the CUDA driver (libcuda.so.1, opened
 * with dlopen, so flyc needs no CUDA to run), AMD's from the KFD topology
 * in sysfs (no ROCm needed). The target table maps what the driver reports
 * to a target (fly_target_for_device): a newer NVIDIA GPU than Fly knows
 * gets the newest target it can run. Else FLY_DEFAULT_TARGET. Asking the CUDA driver costs
 * its initialisation (tens of milliseconds), paid only when no target is
 * named. */
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libflyc_internal.h"

typedef int (*CuInit)(unsigned);
typedef int (*CuDeviceGet)(int *, int);
typedef int (*CuDeviceGetAttribute)(int *, int, int);

enum { CU_COMPUTE_MAJOR = 75, CU_COMPUTE_MINOR = 76 };

/* The target of the first CUDA device. */
static const FlyTarget *nvidia_target(void) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return false;
  CuInit init = (CuInit)dlsym(h, "cuInit");
  CuDeviceGet get = (CuDeviceGet)dlsym(h, "cuDeviceGet");
  CuDeviceGetAttribute attr = (CuDeviceGetAttribute)dlsym(h, "cuDeviceGetAttribute");
  int dev, major = 0, minor = 0;
  bool ok = init && get && attr && init(0) == 0 && get(&dev, 0) == 0 &&
            attr(&major, CU_COMPUTE_MAJOR, dev) == 0 && attr(&minor, CU_COMPUTE_MINOR, dev) == 0;
  /* The driver stays loaded: unloading it after cuInit is not supported. */
  return ok ? fly_target_for_device(FLY_VENDOR_NVIDIA, major * 10 + minor) : NULL;
}

/* The target of the first GPU node, by its gfx_target_version. */
static const FlyTarget *amd_target(void) {
  const char *root = "/sys/class/kfd/kfd/topology/nodes";
  DIR *d = opendir(root);
  if (!d)
    return NULL;
  const FlyTarget *found = NULL;
  for (struct dirent *e; !found && (e = readdir(d));) {
    if (e->d_name[0] == '.')
      continue;
    char path[512], line[256];
    snprintf(path, sizeof path, "%s/%s/properties", root, e->d_name);
    FILE *f = fopen(path, "r");
    if (!f)
      continue;
    unsigned long v = 0;
    while (fgets(line, sizeof line, f))
      if (sscanf(line, "gfx_target_version %lu", &v) == 1)
        break;
    fclose(f);
    if (v == 0) /* a CPU node */
      continue;
    found = fly_target_for_device(FLY_VENDOR_AMD, (int)v);
  }
  closedir(d);
  return found;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char detected[32];
static const char *detected_from;

static void detect(void) {
  const FlyTarget *t = nvidia_target();
  if (!t)
    t = amd_target();
  if (t) {
    snprintf(detected, sizeof detected, "%s", t->arch);
    detected_from = "the GPU found";
    return;
  }
  snprintf(detected, sizeof detected, "%s", FLY_DEFAULT_TARGET);
  detected_from = "the default";
}

const char *fly_default_targets(const char **from) {
  const char *env = getenv("FLYC_TARGET");
  if (env && *env) {
    *from = "FLYC_TARGET";
    return env;
  }
  pthread_once(&once, detect);
  *from = detected_from;
  return detected;
}
