/*
 * lease-int.h: the held lease, shared by lease.c (claim, renew, states)
 * and lease-keeper.c (the renewing thread). Not for other files: they use
 * lease.h.
 */
#ifndef SR_LEASE_INT_H
#define SR_LEASE_INT_H

#include <pthread.h>

#include "lease.h"

struct sr_lease {
	pthread_mutex_t lock;		/* one request at a time: a renewal and a
					   state change must not race on one etag */
	struct sr_store *st;
	char key[SR_LEASE_JOB_MAX + 16];
	struct sr_lease_info info;	/* as last written, with its etag */
	int held;			/* running and ours */
	double mono_ok;			/* monotonic time the last successful write
					   was sent: the TTL runs from there */
};

/* Epoch seconds t as "2025-12-01T03:35:00Z" into buf (for messages). */
const char *sr_lease_fmt_time(double t, char *buf, size_t len);

#endif
