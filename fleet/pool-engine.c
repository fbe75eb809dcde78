/*
 * pool-engine.c: see pool-engine.h. The table of the clouds' engines, and
 * the demand `up` sizes a pool's first target by.
 */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pool-engine.h"
#include "queue.h"
#include "util.h"

/* Indexed by enum sr_pool_cloud; NULL: no engine in this build. */
static const struct sr_pool_engine *const engines[SR_POOL_NCLOUDS] = {
	[SR_POOL_AWS] = &sr_pool_engine_aws,
	[SR_POOL_GCP] = &sr_pool_engine_gcp,
	[SR_POOL_AZURE] = &sr_pool_engine_azure,
};

const struct sr_pool_engine *
sr_pool_engine(enum sr_pool_cloud c)
{
	return (unsigned)c < SR_POOL_NCLOUDS ? engines[c] : NULL;
}

const struct sr_pool_engine *
sr_pool_engine_named(const char *cloud)
{
	int k;

	for (k = 0; k < SR_POOL_NCLOUDS; k++)
		if (strcmp(cloud, sr_pool_cloud_name((enum sr_pool_cloud)k)) == 0)
			return engines[k];
	return NULL;
}

double
sr_pool_time(const char *s)
{
	struct tm tm;
	const char *p;
	char *end;
	double t, frac = 0;
	int sign;

	memset(&tm, 0, sizeof tm);
	if (s == NULL || (p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)) == NULL)
		return 0;
	if (*p == '.') {
		frac = strtod(p, &end);
		p = end;
	}
	t = (double)timegm(&tm) + frac;
	if (strcmp(p, "Z") == 0 || strcmp(p, "z") == 0)
		return t;
	if ((*p != '+' && *p != '-') || strlen(p) != 6 || p[3] != ':')
		return 0;
	sign = *p == '+' ? 1 : -1;
	/* 10:00 ahead of UTC is 10 hours earlier in UTC */
	return t - sign * (atoi(p + 1) * 3600.0 + atoi(p + 4) * 60.0);
}

static int
on_pending(const struct sr_queue_pending *p, void *arg)
{
	unsigned *vms = arg;

	*vms += p->nodes_min > 1 ? (unsigned)p->nodes_min : 1;
	return 0;
}

static int
on_status(const struct sr_queue_status *s, void *arg)
{
	unsigned *vms = arg;

	if (s->state == SR_LEASE_RUNNING)
		(*vms)++;
	return 0;
}

int
sr_pool_demand(struct sr_queue *q, int max_vms, unsigned *vms, char *err)
{
	unsigned n = 0;

	*vms = 0;
	if (sr_queue_pending_list(q, on_pending, &n, NULL, err) < 0 ||
	    sr_queue_status_list(q, on_status, &n, NULL, NULL, err) < 0)
		return sr_err_prefix(err, "read the demand of queue %s", sr_queue_url(q));
	*vms = max_vms < 0 || n < (unsigned)max_vms ? n : (unsigned)max_vms;
	return 0;
}
