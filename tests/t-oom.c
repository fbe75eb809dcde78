/*
 * t-oom.c: the out-of-memory injection of tests/oom.c (what the other OOM
 * trials stand on) and common/util's fallible allocation (sr_try_*), whose
 * failures the job-side library returns instead of dying.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oom.h"
#include "tap.h"
#include "util.h"

/* Where a pointer escapes to, so that the compiler keeps its allocation. */
void *volatile sink;

int
main(void)
{
	char err[SR_ERRMAX], *s, *p, *q;
	void *v;
	size_t before, after;
	long n;
	int e;

	if (!oom_usable())
		tap_skip_all("AddressSanitizer owns malloc: no injection in this build");

	/* The replacement itself. */
	oom_arm(2, 0, OOM_ALL);
	p = malloc(10);
	errno = 0;
	q = malloc(10);
	e = errno;
	v = malloc(10);
	n = oom_disarm();
	ok(p != NULL && q == NULL && e == ENOMEM, "the 2nd allocation fails with ENOMEM");
	ok(v != NULL, "the 3rd is made again (not persistent)");
	is_int(n, 3, "three allocations counted");
	is_int(oom_failures(), 1, "one failed");
	free(p);
	free(v);
	oom_arm(2, 1, OOM_ALL);
	p = malloc(1);
	q = calloc(2, 8);
	v = realloc(NULL, 4);
	oom_disarm();
	ok(p != NULL && q == NULL && v == NULL, "persistent: every one from the 2nd fails");
	is_int(oom_failures(), 2, "two failed");
	free(p);
	oom_arm(1, 0, OOM_ALL);
	s = strdup("abc");
	oom_disarm();
	ok(s == NULL, "the C library's own allocations go through it (strdup)");
	oom_arm(1, 0, OOM_OURS);
	s = strdup("abc");
	n = oom_disarm();
	ok(s != NULL && n == 0, "OOM_OURS: the C library's allocation is not counted");
	free(s);
	oom_arm(1, 0, OOM_OURS);
	s = sr_try_strdup("abc", err);
	n = oom_disarm();
	ok(s == NULL && n == 1, "OOM_OURS: spotrun's code's allocation fails");
	before = oom_in_use();
	p = malloc(100000);
	memset(p, 1, 100000);
	sink = p;	/* seen: the compiler may not drop the pair */
	after = oom_in_use();
	ok(after >= before + 100000, "oom_in_use counts a live allocation");
	if (after < before + 100000)
		tap_diag("in use %zu, then %zu", before, after);
	free(p);
	is_int((long)(oom_in_use() - before), 0, "and not once it is freed");

	/* sr_try_*: NULL with the error, never a death. */
	oom_arm(1, 0, OOM_ALL);
	v = sr_try_malloc(10, err);
	oom_disarm();
	ok(v == NULL, "sr_try_malloc: NULL");
	is_str(err, "allocate 10 bytes: out of memory", "sr_try_malloc: the message");
	ok(sr_err_is_oom(err), "sr_err_is_oom: yes");
	sr_err_prefix(err, "save job/1");
	ok(sr_err_is_oom(err), "sr_err_is_oom: through a prefix");
	sr_err(err, "read LATEST: no such file");
	ok(!sr_err_is_oom(err), "sr_err_is_oom: not another failure");
	ok(!sr_err_is_oom(NULL), "sr_err_is_oom: not NULL");
	oom_arm(1, 0, OOM_ALL);
	v = sr_try_calloc(3, 8, err);
	oom_disarm();
	ok(v == NULL, "sr_try_calloc: NULL");
	is_str(err, "allocate 3 x 8 bytes: out of memory", "sr_try_calloc: the message");
	v = sr_try_calloc(SIZE_MAX / 2, 4, err);
	ok(v == NULL && sr_err_is_oom(err), "sr_try_calloc: an overflowing size fails");
	is_str(err, "allocate 9223372036854775807 x 4 bytes: out of memory (the size overflows)",
	    "sr_try_calloc: and says so");
	p = sr_try_malloc(4, err);
	memcpy(p, "abc", 4);
	oom_arm(1, 0, OOM_ALL);
	q = sr_try_reallocarray(p, 100, 10, err);
	oom_disarm();
	ok(q == NULL && strcmp(p, "abc") == 0, "sr_try_reallocarray: NULL, the old block kept");
	is_str(err, "allocate 1000 bytes: out of memory", "sr_try_reallocarray: the message");
	q = sr_try_reallocarray(p, SIZE_MAX / 8, 16, err);
	ok(q == NULL && strcmp(p, "abc") == 0 && sr_err_is_oom(err),
	    "sr_try_reallocarray: overflow fails, the old block kept");
	q = sr_try_reallocarray(p, 0, 16, err);
	ok(q != NULL, "sr_try_reallocarray: a zero size is one byte, not a free");
	free(q);
	oom_arm(1, 0, OOM_ALL);
	s = sr_try_strndup("abcdef", 3, err);
	oom_disarm();
	ok(s == NULL && sr_err_is_oom(err), "sr_try_strndup: NULL with the error");
	s = sr_try_strndup("abcdef", 3, err);
	is_str(s, "abc", "sr_try_strndup: the first n bytes");
	free(s);
	s = sr_try_strndup("ab", 30, err);
	is_str(s, "ab", "sr_try_strndup: a shorter string whole");
	free(s);
	oom_arm(1, 0, OOM_ALL);
	s = sr_try_asprintf(err, "%s-%d", "step", 42);
	oom_disarm();
	ok(s == NULL, "sr_try_asprintf: NULL");
	is_str(err, "allocate 8 bytes: out of memory", "sr_try_asprintf: the message");
	s = sr_try_asprintf(err, "%s-%d", "step", 42);
	is_str(s, "step-42", "sr_try_asprintf: the string");
	free(s);
	sr_err_oom(err, "json_dumps of the manifest");
	is_str(err, "json_dumps of the manifest: out of memory", "sr_err_oom: the message");
	ok(sr_err_is_oom(err), "sr_err_oom: is out-of-memory");
	return tap_done();
}
