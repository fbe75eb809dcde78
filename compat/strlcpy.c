/*
 * strlcpy.c: strlcpy and strlcat for C libraries without them (glibc before
 * 2.38). Both always NUL-terminate a non-empty buffer and return the length
 * of the string they tried to create, so truncation is detectable.
 */
#include <string.h>

#include "compat.h"

#ifndef HAVE_STRLCPY
size_t
strlcpy(char *dst, const char *src, size_t size)
{
	size_t n = strlen(src);

	if (size > 0) {
		size_t c = n < size - 1 ? n : size - 1;
		memcpy(dst, src, c);
		dst[c] = '\0';
	}
	return n;
}
#endif

#ifndef HAVE_STRLCAT
size_t
strlcat(char *dst, const char *src, size_t size)
{
	size_t d = strnlen(dst, size);

	if (d == size)
		return size + strlen(src);
	return d + strlcpy(dst + d, src, size - d);
}
#endif
