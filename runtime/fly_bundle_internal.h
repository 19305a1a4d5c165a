/* fly_bundle_internal.h — what the bundle reader's files share. */
#ifndef FLY_BUNDLE_INTERNAL_H
#define FLY_BUNDLE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

/* Writes the message to why (when there is room) and returns false, so
   that a check can `return fly_bundle_fail(...)`. */
bool fly_bundle_fail(char *why, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
