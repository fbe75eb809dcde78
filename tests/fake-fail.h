/*
 * fake-fail.h: the failure specs of the tests' stand-in libraries
 * (tests/fake-cuda.c's FAKE_CUDA_FAIL, tests/fake-nccl.c's
 * FAKE_NCCL_FAIL): "NAME:N[:CODE][@RANK],...", the N-th call of function
 * NAME fails with CODE (@RANK: on that rank only, where the library knows
 * ranks). Header-only: each fake includes it once.
 */
#ifndef SR_FAKE_FAIL_H
#define SR_FAKE_FAIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fake_fail {
	int fn;			/* index in the library's names */
	int rank;		/* -1: any */
	uint64_t nth;
	int code;
};

/* Parse spec (NULL: none) into at most max entries of out, the functions
 * by their index in names[n]; a name that is none of them is said on
 * stderr, prefixed with who, and skipped. Returns the entries. */
static int
fake_fail_parse(const char *spec, const char *const *names, int n, int dflt,
    struct fake_fail *out, int max, const char *who)
{
	char buf[512], *save = NULL, *tok;
	int count = 0;

	if (spec == NULL)
		return 0;
	snprintf(buf, sizeof buf, "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok != NULL && count < max;
	    tok = strtok_r(NULL, ",", &save)) {
		char *at = strchr(tok, '@'), *c1, *c2;
		int fn;

		out[count].rank = at != NULL ? atoi(at + 1) : -1;
		if (at != NULL)
			*at = '\0';
		if ((c1 = strchr(tok, ':')) == NULL)
			continue;
		*c1++ = '\0';
		c2 = strchr(c1, ':');
		for (fn = 0; fn < n && strcmp(names[fn], tok) != 0; fn++)
			;
		if (fn == n) {
			fprintf(stderr, "%s: no function %s\n", who, tok);
			continue;
		}
		out[count].fn = fn;
		out[count].nth = strtoull(c1, NULL, 10);
		out[count].code = c2 != NULL ? atoi(c2 + 1) : dflt;
		count++;
	}
	return count;
}

#endif
