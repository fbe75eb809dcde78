/*
 * status-why.h: why a job that `spotrun status` shows waits, or may have
 * stopped without a word (issue 25): a queued job's needs against what
 * the agents of the queue offer (their records under agents/), and a
 * running job's lease that its holder stopped renewing. Apart from the
 * table (status-view.c), which shows the markers' fields.
 */
#ifndef SR_STATUS_WHY_H
#define SR_STATUS_WHY_H

#include <stddef.h>

#include "fleet-index.h"
#include "queue.h"

/* A running job's lease this old (seconds, by the store's clock against
 * this machine's) has a silent holder: its agent renews every TTL / 3. */
#define SR_STATUS_SILENT SR_LEASE_TTL_DEFAULT

struct sr_status_why {
	struct sr_status_why_one {
		char *id;	/* a row's job */
		char *why;	/* "needs 1xH100: no agent has one (...)" */
	} *v;			/* sorted by id */
	size_t n;
};

/*
 * What explains the rows (n of them) that need it, into *w: for those
 * queued or released, the pending markers (one listing, made only when
 * there are such rows) against the agents' records mv (nm), those stale at
 * now (sr_queue_machine_stale) counted as agents gone; for those
 * running, the age of their leases at now (a listing of stores/ and one
 * of each store's _leases/, made only when there are such rows). 0, or
 * -1 with err (*w is then empty).
 */
int sr_status_why_read(struct sr_queue *q, const struct sr_fleet_row *const *rows, size_t n,
    const struct sr_queue_machine *mv, size_t nm, double now, struct sr_status_why *w,
    char *err);
/* Each reason on stdout, "ID: WHY", by id, what came from the queue
 * escaped (termsafe.h); nothing when there is none. */
void sr_status_why_print(const struct sr_status_why *w);
/* The reason for job id, or NULL when there is none to say. */
const char *sr_status_why_find(const struct sr_status_why *w, const char *id);
void sr_status_why_free(struct sr_status_why *w);

#endif
