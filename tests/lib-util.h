/*
 * lib-util.h: what the tests of libspotrun share: a counting allocator for
 * spotrun_params' hooks, so that a test can assert that every allocation
 * the library made through them was freed, and a manifest the library
 * wrote, read back with the checkpoint module.
 */
#ifndef SR_LIB_UTIL_H
#define SR_LIB_UTIL_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "manifest.h"
#include "store.h"
#include "util.h"

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

/* The manifest of checkpoint seq of job, parsed and validated: 0, or -1
 * (said as a TAP comment). */
static __attribute__((unused)) int
load_manifest(struct sr_store *st, const char *job, uint64_t seq, struct sr_manifest *m)
{
	char key[256], err[SR_ERRMAX];
	void *buf;
	size_t len;
	int rc;

	snprintf(key, sizeof key, "%s/manifests/%010" PRIu64 ".json", job, seq);
	sr_manifest_init(m);
	if (sr_store_get(st, key, SR_MANIFEST_MAX, &buf, &len, NULL, err) != 0) {
		printf("# %s\n", err);
		return -1;
	}
	rc = sr_manifest_parse(buf, len, m, err);
	if (rc == 0)
		rc = sr_manifest_validate(m, job, seq, err);
	if (rc != 0)
		printf("# %s\n", err);
	free(buf);
	return rc;
}

#endif
