/*
 * lib-util.h: what the tests of libspotrun share: a counting allocator for
 * spotrun_params' hooks, so that a test can assert that every allocation
 * the library made through them was freed.
 */
#ifndef SR_LIB_UTIL_H
#define SR_LIB_UTIL_H

#include <stdlib.h>

struct counts {
	int allocs, frees;
};

static __attribute__((unused)) void *
count_alloc(void *opaque, size_t n)
{
	((struct counts *)opaque)->allocs++;
	return malloc(n);
}

static __attribute__((unused)) void
count_free(void *opaque, void *p)
{
	((struct counts *)opaque)->frees++;
	free(p);
}

#endif
