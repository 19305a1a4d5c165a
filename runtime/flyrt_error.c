/* flyrt_error.c — status codes and the calling thread's last message. */
#include <stdarg.h>
#include <stdio.h>

#include "flyrt_internal.h"

/* Each thread has its own message, so that concurrent failures do not
   overwrite each other's explanation. */
static _Thread_local char last_error[1024];

FlyrtStatus flyrt_fail(FlyrtStatus s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return s;
}

FlyrtStatus flyrt_ok(void) {
  last_error[0] = '\0';
  return FLYRT_SUCCESS;
}

const char *flyrtLastError(void) { return last_error; }

const char *flyrtStatusName(FlyrtStatus s) {
  static const char *const names[] = {"FLYRT_SUCCESS",
                                      "FLYRT_ERROR_INVALID_VALUE",
                                      "FLYRT_ERROR_IO",
                                      "FLYRT_ERROR_BAD_BUNDLE",
                                      "FLYRT_ERROR_VERSION",
                                      "FLYRT_ERROR_NOT_FOUND",
                                      "FLYRT_ERROR_NO_IMAGE",
                                      "FLYRT_ERROR_ARGUMENTS",
                                      "FLYRT_ERROR_LAUNCH_RULE",
                                      "FLYRT_ERROR_NO_DRIVER",
                                      "FLYRT_ERROR_NO_DEVICE",
                                      "FLYRT_ERROR_DRIVER",
                                      "FLYRT_ERROR_OUT_OF_MEMORY",
                                      "FLYRT_ERROR_LAUNCH_REFUSED"};
  if ((unsigned)s < sizeof names / sizeof names[0])
    return names[s];
  return "FLYRT_ERROR_UNKNOWN";
}

const char *flyrtVersion(void) { return FLYRT_VERSION; }

uint32_t flyrtBundleFormatVersion(void) { return FLY_BUNDLE_VERSION; }
