/*
 * oom.h: out-of-memory injection for the tests. A test program linked with
 * tests/oom.c has its own malloc, calloc, realloc, free and the aligned
 * family (glibc lets a program replace them: its own calls and the C
 * library's, and every shared library's, go through the replacement), which
 * hand out glibc's memory (__libc_malloc...) unless told to fail: the nth
 * allocation counted since oom_arm, and with persist every one after it too.
 *
 * Under AddressSanitizer the sanitizer owns malloc, so nothing is replaced:
 * oom_usable() says 0 and a test plans its injection trials out.
 */
#ifndef SR_TEST_OOM_H
#define SR_TEST_OOM_H

#include <stddef.h>

/* Which allocations are counted and may fail. */
enum oom_scope {
	OOM_ALL,	/* every one, whoever asks (the C library, jansson, curl...) */
	OOM_OURS,	/* only those called from the test program itself or from
			 * libspotrun.so: spotrun's own code */
	OOM_ALL_BUT_FRAGILE /* every one but those of the two libraries that do not
			 * survive their own failing: jansson (2.14: its parser
			 * drops a byte, then asserts when it meets the gap in
			 * load.c's lex_scan_string, ending the process) and
			 * OpenSSL's libcrypto (3.0: 48 bytes lost when a digest
			 * context's inner allocation fails) */
};

/* Whether the replacement is built (0 under AddressSanitizer). */
int oom_usable(void);
/* Count allocations of scope from now on and fail the nth (1-based; 0:
 * none, only count), with persist every one after it too, until
 * oom_disarm. Failing ones return NULL with errno ENOMEM. */
void oom_arm(long nth, int persist, enum oom_scope scope);
/* Stop failing and counting; returns how many allocations were counted. */
long oom_disarm(void);
/* How many allocations oom_arm's n-th made fail since (0 or more). */
long oom_failures(void);
/* Bytes allocated and not freed since the program started (counted by the
 * replacement), for leak checks: the same before and after a trial that
 * freed what it allocated. */
size_t oom_in_use(void);

#endif
