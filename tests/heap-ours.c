/*
 * heap-ours.c: counting wrappers around the malloc family for the
 * program's own objects (heap-ours.h). The link names them with
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free, so that
 * every call the program's objects make comes here and goes on to the real
 * one (tests/oom.c's, when linked, which may fail it).
 */
#include "config.h"

#include <malloc.h>
#include <stdlib.h>

#include "heap-ours.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);

static size_t heap_ours;

size_t
heap_ours_in_use(void)
{
	return __atomic_load_n(&heap_ours, __ATOMIC_SEQ_CST);
}

static void *
heap_took(void *p)
{
	if (p != NULL)
		__atomic_add_fetch(&heap_ours, malloc_usable_size(p), __ATOMIC_SEQ_CST);
	return p;
}

void *
__wrap_malloc(size_t n)
{
	return heap_took(__real_malloc(n));
}

void *
__wrap_calloc(size_t n, size_t size)
{
	return heap_took(__real_calloc(n, size));
}

void *
__wrap_realloc(void *p, size_t n)
{
	size_t was = p != NULL ? malloc_usable_size(p) : 0;
	void *q = __real_realloc(p, n);

	/* failed: p is still held (the count too) */
	if (q == NULL && n != 0)
		return NULL;
	__atomic_sub_fetch(&heap_ours, was, __ATOMIC_SEQ_CST);
	return heap_took(q);
}

void
__wrap_free(void *p)
{
	if (p != NULL)
		__atomic_sub_fetch(&heap_ours, malloc_usable_size(p), __ATOMIC_SEQ_CST);
	__real_free(p);
}
