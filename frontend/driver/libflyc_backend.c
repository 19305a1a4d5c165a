/* libflyc_backend.c — finding and opening libflyc_lower.so, the half of the
 * compiler that links MLIR and LLVM.
 *
 * It is looked for beside whatever holds this code (the flyc executable in
 * bin/, or libflyc.so in lib/): DIR/libflyc_lower.so, then
 * DIR/../lib/libflyc_lower.so. FLYC_BACKEND overrides the search. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libflyc_internal.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static FlyBackendCompileFn compile_fn;
static char load_error[3 * PATH_MAX];

/* The directory of the file this code was loaded from. */
static bool own_directory(char *dir, size_t n) {
  Dl_info info;
  char path[PATH_MAX];
  ssize_t len = -1;
  if (dladdr((void *)&own_directory, &info) && info.dli_fname && strchr(info.dli_fname, '/') &&
      strcmp(info.dli_fname, "") != 0) {
    snprintf(path, sizeof path, "%s", info.dli_fname);
    len = (ssize_t)strlen(path);
  }
  /* In the executable itself dladdr may give just argv[0]. */
  if (len < 0 || !strstr(path, ".so")) {
    len = readlink("/proc/self/exe", path, sizeof path - 1);
    if (len < 0)
      return false;
    path[len] = '\0';
  }
  char *slash = strrchr(path, '/');
  if (!slash)
    return false;
  *slash = '\0';
  snprintf(dir, n, "%s", path);
  return true;
}

static char found_path[PATH_MAX + 64];

static void *try_open(const char *path) {
  snprintf(found_path, sizeof found_path, "%s", path);
  void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
  if (!h)
    snprintf(load_error, sizeof load_error, "%s", dlerror());
  return h;
}

static void load(void) {
  const char *env = getenv("FLYC_BACKEND");
  void *h = NULL;
  char dir[PATH_MAX], path[PATH_MAX + 64];
  if (env && *env) {
    h = try_open(env);
  } else if (own_directory(dir, sizeof dir)) {
    snprintf(path, sizeof path, "%s/libflyc_lower.so", dir);
    if (access(path, F_OK) == 0)
      h = try_open(path);
    snprintf(path, sizeof path, "%s/../lib/libflyc_lower.so", dir);
    if (!h && access(path, F_OK) == 0)
      h = try_open(path);
    if (!h && !load_error[0])
      snprintf(load_error, sizeof load_error,
               "libflyc_lower.so is not in %s or %s/../lib (set FLYC_BACKEND to its path)", dir,
               dir);
  } else {
    snprintf(load_error, sizeof load_error, "cannot tell where flyc is installed");
  }
  if (!h)
    return;
  compile_fn = (FlyBackendCompileFn)dlsym(h, FLY_BACKEND_SYMBOL);
  if (!compile_fn)
    snprintf(load_error, sizeof load_error, "%s", dlerror());
}

/* The path the back end would be loaded from, without loading it: the one
   FLYC_BACKEND names when it exists (a name that does not, as the cache's
   tests give to show that a hit needs no back end, leaves the one beside
   the driver). */
static void find(void) {
  const char *env = getenv("FLYC_BACKEND");
  char dir[PATH_MAX], path[PATH_MAX + 64];
  if (env && *env && access(env, F_OK) == 0) {
    snprintf(found_path, sizeof found_path, "%s", env);
    return;
  }
  if (!own_directory(dir, sizeof dir))
    return;
  snprintf(path, sizeof path, "%s/libflyc_lower.so", dir);
  if (access(path, F_OK) != 0)
    snprintf(path, sizeof path, "%s/../lib/libflyc_lower.so", dir);
  snprintf(found_path, sizeof found_path, "%s", path);
}

static pthread_once_t identity_once = PTHREAD_ONCE_INIT;
static char identity[128];

static void identify(void) {
  find();
  struct stat st;
  if (found_path[0] && stat(found_path, &st) == 0)
    snprintf(identity, sizeof identity, "%lld.%lld.%ld", (long long)st.st_size,
             (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
}

const char *fly_backend_identity(void) {
  pthread_once(&identity_once, identify);
  return identity;
}

FlyBackendCompileFn fly_backend_load(char *why, size_t n) {
  pthread_once(&once, load);
  if (!compile_fn)
    snprintf(why, n, "cannot load the compiler's back end: %s", load_error);
  return compile_fn;
}
