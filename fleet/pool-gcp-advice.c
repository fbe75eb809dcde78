/*
 * pool-gcp-advice.c: the GCP engine's places weighed by Google's own
 * record (doc/design.md, "Provisioning"): advice.capacityHistory's
 * newest Spot preemption rate of each place's machine type, in each of
 * the pool's zones of its region (the region itself when it names none),
 * folded into the placement history the failover walk ranks by, as if
 * the queue had seen that place preempted twice in the hour.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gce.h"
#include "pool-gcp-advice.h"
#include "queue.h"
#include "util.h"

/* The lowest newest rate among the zones of pl's region in p (the region
 * when p names none there): -1 when none has a record. 0, or -1 when the
 * advice failed (err). */
static int
place_rate(struct sr_gce *c, const struct sr_pool *p, const struct sr_pool_place *pl,
    double *rate, char *err)
{
	size_t i, rl = strlen(pl->region);
	double r;
	int asked = 0;

	*rate = -1;
	for (i = 0; i < p->nzones; i++) {
		if (strncmp(p->zones[i], pl->region, rl) != 0 || p->zones[i][rl] != '-')
			continue;
		asked = 1;
		if (sr_gce_capacity_history(c, pl->region, p->zones[i], pl->types[0], &r, err) !=
		    SR_GCE_OK)
			return -1;
		if (r >= 0 && (*rate < 0 || r < *rate))
			*rate = r;
	}
	if (!asked && sr_gce_capacity_history(c, pl->region, NULL, pl->types[0], rate, err) !=
	    SR_GCE_OK)
		return -1;
	return 0;
}

void
sr_pool_gcp_advice(struct sr_gce *c, const struct sr_pool_launch *l,
    const struct sr_pool_place *places, size_t n, struct sr_pool_advice *a)
{
	struct sr_queue_place_event *ev;
	char err[SR_ERRMAX];
	double now = sr_now(), rate;
	size_t i, k;

	a->nhistory = l->nhistory;
	a->history = sr_calloc(l->nhistory + n * SR_POOL_PREEMPT_N + 1, sizeof *a->history);
	if (l->nhistory > 0)
		memcpy(a->history, l->history, l->nhistory * sizeof *l->history);
	for (i = 0; i < n; i++) {
		if (places[i].ntypes == 0)
			continue;
		if (place_rate(c, l->p, &places[i], &rate, err) == -1) {
			/* no advice for this account (403) or none to be had:
			 * the queue's history alone, as before */
			a->nhistory = l->nhistory;
			return;
		}
		if (rate < SR_POOL_ADVICE_RATE)
			continue;
		for (k = 0; k < SR_POOL_PREEMPT_N; k++) {
			ev = &a->history[a->nhistory++];
			snprintf(ev->cloud, sizeof ev->cloud, "gcp");
			snprintf(ev->region, sizeof ev->region, "%s", places[i].region);
			snprintf(ev->type, sizeof ev->type, "%s", places[i].types[0]);
			snprintf(ev->why, sizeof ev->why, "%s", SR_POOL_PREEMPTED);
			ev->at = now;
		}
	}
}

void
sr_pool_advice_free(struct sr_pool_advice *a)
{
	free(a->history);
	a->history = NULL;
	a->nhistory = 0;
}
