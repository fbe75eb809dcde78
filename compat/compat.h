/*
 * compat.h: declarations of functions that some C libraries lack; the
 * replacements live in compat/ and are built only where configure found the
 * function missing.
 */
#ifndef SR_COMPAT_H
#define SR_COMPAT_H

#include <stddef.h>
#include "config.h"

#ifndef HAVE_STRLCPY
size_t strlcpy(char *dst, const char *src, size_t size);
#endif
#ifndef HAVE_STRLCAT
size_t strlcat(char *dst, const char *src, size_t size);
#endif

#endif
