/*
 * oom.c: the allocator replacement behind oom.h. State is a test program's
 * own (armed or not, the counters, the address ranges of "ours"); it is read
 * and changed with atomics since the library's threads allocate too.
 */
#include "config.h"

#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oom.h"

#if defined(__SANITIZE_ADDRESS__)
#define OOM_REPLACES 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OOM_REPLACES 0
#endif
#endif
#ifndef OOM_REPLACES
#define OOM_REPLACES 1
#endif

#define OOM_RANGES 32

static long oom_nth, oom_count, oom_failed;
static int oom_persist, oom_armed, oom_scope_now;
static uintptr_t oom_lo[OOM_RANGES], oom_hi[OOM_RANGES];
static int oom_nranges;

int
oom_usable(void)
{
	return OOM_REPLACES;
}

/* dl_iterate_phdr's callback: the executable segments of the objects
 * that are "ours" (the executable and libspotrun; arg NULL) or fragile
 * (jansson and libcrypto; arg not NULL), as ranges of code addresses. */
static int
oom_add_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *name = info->dlpi_name;
	int i;

	(void)size;
	if (arg == NULL ? !(name[0] == '\0' || strstr(name, "libspotrun") != NULL) :
	    (strstr(name, "libjansson") == NULL && strstr(name, "libcrypto") == NULL))
		return 0;
	for (i = 0; i < info->dlpi_phnum && oom_nranges < OOM_RANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		oom_lo[oom_nranges] = info->dlpi_addr + ph->p_vaddr;
		oom_hi[oom_nranges] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		oom_nranges++;
	}
	return 0;
}

void
oom_arm(long nth, int persist, enum oom_scope scope)
{
	oom_nranges = 0;
	if (scope == OOM_OURS)
		dl_iterate_phdr(oom_add_object, NULL);
	else if (scope == OOM_ALL_BUT_FRAGILE)
		dl_iterate_phdr(oom_add_object, (void *)"fragile");
	__atomic_store_n(&oom_count, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&oom_failed, 0, __ATOMIC_SEQ_CST);
	oom_nth = nth;
	oom_persist = persist;
	oom_scope_now = (int)scope;
	__atomic_store_n(&oom_armed, 1, __ATOMIC_SEQ_CST);
}

long
oom_disarm(void)
{
	__atomic_store_n(&oom_armed, 0, __ATOMIC_SEQ_CST);
	return __atomic_load_n(&oom_count, __ATOMIC_SEQ_CST);
}

long
oom_failures(void)
{
	return __atomic_load_n(&oom_failed, __ATOMIC_SEQ_CST);
}

/* Bytes handed out and not freed, counted by the replacement itself:
 * glibc's own figures (mallinfo2) count blocks parked in a thread's cache
 * as in use, which moves with every thread the library starts. */
#if OOM_REPLACES
static size_t oom_live;
#endif

size_t
oom_in_use(void)
{
#if OOM_REPLACES
	return __atomic_load_n(&oom_live, __ATOMIC_SEQ_CST);
#else
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
#endif
}

#if OOM_REPLACES
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void __libc_free(void *);
void *__libc_memalign(size_t, size_t);

/* Whether this allocation, made from code at caller, is to fail. */
static int
oom_fails(const void *caller)
{
	long k;
	int i, ours;

	if (!__atomic_load_n(&oom_armed, __ATOMIC_SEQ_CST))
		return 0;
	if (oom_scope_now != OOM_ALL) {
		/* in the ranges: ours (counted) or the fragile ones (spared) */
		for (ours = 0, i = 0; i < oom_nranges && !ours; i++)
			ours = (uintptr_t)caller >= oom_lo[i] && (uintptr_t)caller < oom_hi[i];
		if (ours != (oom_scope_now == OOM_OURS))
			return 0;
	}
	k = __atomic_add_fetch(&oom_count, 1, __ATOMIC_SEQ_CST);
	if (oom_nth <= 0 || k < oom_nth || (k > oom_nth && !oom_persist))
		return 0;
	__atomic_add_fetch(&oom_failed, 1, __ATOMIC_SEQ_CST);
	errno = ENOMEM;
	return 1;
}

#define OOM_CALLER __builtin_extract_return_addr(__builtin_return_address(0))

/* p, just allocated (or NULL), counted live. */
static void *
oom_got(void *p)
{
	if (p != NULL)
		__atomic_add_fetch(&oom_live, malloc_usable_size(p), __ATOMIC_SEQ_CST);
	return p;
}

/* p, about to be freed or moved, no longer live. */
static void
oom_gone(void *p)
{
	if (p != NULL)
		__atomic_sub_fetch(&oom_live, malloc_usable_size(p), __ATOMIC_SEQ_CST);
}

void *
malloc(size_t n)
{
	return oom_fails(OOM_CALLER) ? NULL : oom_got(__libc_malloc(n));
}

void *
calloc(size_t n, size_t size)
{
	return oom_fails(OOM_CALLER) ? NULL : oom_got(__libc_calloc(n, size));
}

/* realloc for a caller: the one count of the allocation. */
static void *
oom_realloc(void *p, size_t n, const void *caller)
{
	size_t had = p != NULL ? malloc_usable_size(p) : 0;
	void *q;

	/* realloc(p, 0) frees: no allocation to fail. */
	if (n != 0 && oom_fails(caller))
		return NULL;
	if ((q = __libc_realloc(p, n)) != NULL || n == 0) {
		__atomic_sub_fetch(&oom_live, had, __ATOMIC_SEQ_CST);
		oom_got(q);
	}
	return q;
}

void *
realloc(void *p, size_t n)
{
	return oom_realloc(p, n, OOM_CALLER);
}

void *
reallocarray(void *p, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	return oom_realloc(p, n * size, OOM_CALLER);
}

void
free(void *p)
{
	oom_gone(p);
	__libc_free(p);
}

void *
memalign(size_t align, size_t n)
{
	return oom_fails(OOM_CALLER) ? NULL : oom_got(__libc_memalign(align, n));
}

void *
aligned_alloc(size_t align, size_t n)
{
	return oom_fails(OOM_CALLER) ? NULL : oom_got(__libc_memalign(align, n));
}

int
posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	if (align < sizeof(void *) || (align & (align - 1)) != 0)
		return EINVAL;
	if (oom_fails(OOM_CALLER))
		return ENOMEM;
	if ((p = oom_got(__libc_memalign(align, n))) == NULL)
		return ENOMEM;
	*out = p;
	return 0;
}

void *
valloc(size_t n)
{
	return oom_fails(OOM_CALLER) ? NULL : oom_got(__libc_memalign(4096, n));
}
#endif
