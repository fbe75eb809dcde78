/*
 * pool-failover.c: the failover walk every engine shares
 * (pool-failover.h; doc/design.md, "Provisioning"): the places ordered by
 * the queue's placement history, each tried once, refusals noted, a
 * growing pause between places, and the pool left waiting on the last
 * when every one refused. What a place is and how to make, watch and
 * delete the pool there is the engine's (pool-aws.c, pool-gcp.c,
 * pool-azure.c).
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool-failover.h"
#include "queue.h"
#include "util.h"

#define BACKOFF_S	1.0	/* the pause before the second place; doubled after each */
#define BACKOFF_MAX_S	30.0

/* Type's weight in h at now: 2 for a capacity failure in the last
 * SR_POOL_RECENT_S, 1 for SR_POOL_PREEMPT_N preemptions there, else 0;
 * zone NULL: any zone's events, else that zone's and those naming none. */
static int
type_weight(const struct sr_queue_place_event *h, size_t n, const char *cloud,
    const char *region, const char *zone, const char *type, double now)
{
	size_t i, preempted = 0;

	for (i = 0; i < n; i++) {
		if (h[i].at < now - SR_POOL_RECENT_S || h[i].at > now + 60 ||
		    strcmp(h[i].cloud, cloud) != 0 || strcmp(h[i].region, region) != 0 ||
		    strcmp(h[i].type, type) != 0 ||
		    (zone != NULL && h[i].zone[0] != '\0' && strcmp(h[i].zone, zone) != 0))
			continue;
		if (strcmp(h[i].why, SR_POOL_PREEMPTED) != 0)
			return 2;
		preempted++;
	}
	return preempted >= SR_POOL_PREEMPT_N ? 1 : 0;
}

int
sr_pool_place_rank(const struct sr_queue_place_event *h, size_t n, const char *cloud,
    const struct sr_pool_place *pl, double now)
{
	size_t t;
	int rank = 2, w;

	if (pl->ntypes == 0)
		return 0;
	for (t = 0; t < pl->ntypes && rank > 0; t++)
		if ((w = type_weight(h, n, cloud, pl->region, NULL, pl->types[t], now)) < rank)
			rank = w;
	return rank;
}

int
sr_pool_type_rank(const struct sr_queue_place_event *h, size_t n, const char *cloud,
    const char *region, const char *zone, const char *type, double now)
{
	return type_weight(h, n, cloud, region, zone, type, now);
}

int
sr_pool_zone_region(enum sr_pool_cloud cloud, const char *zone, char *region, size_t len)
{
	size_t n = strlen(zone);
	const char *dash = strrchr(zone, '-');

	if (n == 0 || n >= len || strcmp(zone, "unknown") == 0)
		return -1;
	switch (cloud) {
	case SR_POOL_AWS:	/* us-east-1a -> us-east-1 */
		while (n > 0 && islower((unsigned char)zone[n - 1]))
			n--;
		if (n == 0 || n == strlen(zone) || !isdigit((unsigned char)zone[n - 1]))
			return -1;
		break;
	case SR_POOL_GCP:	/* us-central1-a -> us-central1 */
		if (dash == NULL || dash == zone || !islower((unsigned char)dash[1]) ||
		    dash[2] != '\0')
			return -1;
		n = (size_t)(dash - zone);
		break;
	case SR_POOL_AZURE:	/* eastus-1 -> eastus; eastus */
		if (dash != NULL && dash != zone && dash[1] != '\0' &&
		    strspn(dash + 1, "0123456789") == strlen(dash + 1))
			n = (size_t)(dash - zone);
		break;
	default:
		return -1;
	}
	snprintf(region, len, "%.*s", (int)n, zone);
	return 0;
}

void
sr_failover_code_in(const char *err, int (*is_capacity)(const char *code), char code[64])
{
	const char *s;
	size_t n;

	for (s = strstr(err, ": "); s != NULL; s = strstr(s + 2, ": ")) {
		n = strcspn(s + 2, ": ");
		if (n > 0 && n < 64) {
			snprintf(code, 64, "%.*s", (int)n, s + 2);
			if (is_capacity(code))
				return;
		}
	}
	snprintf(code, 64, "capacity");
}

/* Note refusal r at pl: "TYPE in REGION (CODE)" in w->tried (the type r
 * names, else pl's first), and one event per type of pl in w->refused
 * (none of them launched there; the zone r names given to its type). */
static void
note(struct sr_pool_where *w, const struct sr_pool_place *pl, const struct sr_failover_refusal *r)
{
	const char *type = r->type[0] != '\0' ? r->type : pl->ntypes > 0 ? pl->types[0] : "";
	size_t n = strlen(w->tried), t;
	struct sr_pool_refused *e;

	snprintf(w->tried + n, sizeof w->tried - n, "%s%s in %s (%s)", n > 0 ? ", " : "", type,
	    pl->region, r->code);
	for (t = 0; t < pl->ntypes && w->nrefused < SR_POOL_REFUSED_MAX; t++) {
		e = &w->refused[w->nrefused++];
		snprintf(e->region, sizeof e->region, "%s", pl->region);
		snprintf(e->type, sizeof e->type, "%s", pl->types[t]);
		snprintf(e->zone, sizeof e->zone, "%s", strcmp(pl->types[t], type) == 0 ? r->zone :
		    "");
		snprintf(e->code, sizeof e->code, "%s", r->code);
	}
}

/* The walk's order of the n places into order[]: by rank
 * (sr_pool_place_rank: none, repeated preemptions, capacity failures),
 * each rank in the file's order. */
static void
order_places(const struct sr_pool_launch *l, const struct sr_pool_place *places, size_t n,
    size_t *order)
{
	const char *cloud = sr_pool_cloud_name(l->p->cloud);
	double now = sr_now();
	size_t i, k = 0;
	int rank;

	for (rank = 0; rank <= 2; rank++)
		for (i = 0; i < n; i++)
			if (sr_pool_place_rank(l->history, l->nhistory, cloud, &places[i], now) ==
			    rank)
				order[k++] = i;
}

int
sr_pool_failover(const struct sr_pool_launch *l, struct sr_pool_where *w,
    const struct sr_pool_place *places, size_t n, long at, const struct sr_failover_ops *ops,
    char *err)
{
	struct sr_failover_refusal r;
	size_t *order, tries, pos = 0, i;
	double pause = BACKOFF_S;
	int have = at >= 0;
	char e[SR_ERRMAX];
	enum sr_failover_rc st = SR_FAILOVER_OK;

	if (n == 0)
		return sr_err(err, "place pool %s: no region and type to try", l->p->name);
	order = sr_calloc(n, sizeof *order);
	order_places(l, places, n, order);
	for (i = 0; have && i < n; i++)
		if (order[i] == (size_t)at)
			pos = i;
	for (tries = 0; tries < n; tries++) {
		const struct sr_pool_place *pl = &places[order[(pos + tries) % n]];

		memset(&r, 0, sizeof r);
		e[0] = '\0';
		if ((st = ops->attempt(ops->arg, pl, have, &r, e)) == SR_FAILOVER_OK)
			break;
		if (st != SR_FAILOVER_CAPACITY) {
			snprintf(err, SR_ERRMAX, "%s", e);
			break;
		}
		if (r.code[0] == '\0')
			snprintf(r.code, sizeof r.code, "capacity");
		note(w, pl, &r);
		if (tries + 1 == n) {	/* every place refused: wait on this one */
			w->waiting = 1;
			w->created = 0;
			st = SR_FAILOVER_OK;
			snprintf(w->region, sizeof w->region, "%s", pl->region);
			break;
		}
		if (w->group[0] != '\0' && ops->drop(ops->arg, pl, err) == -1) {
			st = SR_FAILOVER_ERROR;
			break;
		}
		have = w->created = 0;
		w->group[0] = '\0';
		sr_sleep(pause);
		pause = pause * 2 < BACKOFF_MAX_S ? pause * 2 : BACKOFF_MAX_S;
	}
	free(order);
	return st == SR_FAILOVER_OK ? 0 : -1;
}

void
sr_pool_places_by_type(const struct sr_pool_launch *l, struct sr_pool_place *places)
{
	size_t t, g, k = 0;

	for (t = 0; t < l->ntypes; t++)
		for (g = 0; g < l->p->nregions; g++, k++) {
			places[k].region = l->p->regions[g];
			places[k].types = &l->types[t];
			places[k].ntypes = 1;
		}
}

long
sr_pool_place_index(const struct sr_pool_place *places, size_t n, const char *type,
    const char *region)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (strcmp(places[k].types[0], type) == 0 && strcmp(places[k].region, region) == 0)
			return (long)k;
	return -1;
}
