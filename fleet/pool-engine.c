/*
 * pool-engine.c: see pool-engine.h. The table of the clouds' engines, and
 * the demand `up` sizes a pool's first target by.
 */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
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

void
sr_pool_where_of(const struct sr_queue_pool *rec, struct sr_pool_where *w)
{
	memset(w, 0, sizeof *w);
	snprintf(w->region, sizeof w->region, "%s", rec->region);
	snprintf(w->group, sizeof w->group, "%s", rec->group);
	snprintf(w->template_id, sizeof w->template_id, "%s", rec->template_id);
	w->target = rec->target;
	w->known = rec->prices;
	w->nknown = rec->nprices;
}

double
sr_pool_known_price(const struct sr_pool_where *w, const char *id)
{
	size_t i;

	for (i = 0; i < w->nknown && w->known != NULL && id[0] != '\0'; i++)
		if (strcmp(w->known[i].vm, id) == 0)
			return w->known[i].price;
	return 0;
}

/* A job's marker at a lease epoch: a pending one (vms: what it asks
 * for), or the status of one that ended (succeeded, failed, cancelled). */
struct mark {
	char id[SR_QUEUE_ID_MAX + 1];
	int64_t epoch;
	unsigned vms;
};

/* What the demand's walk of the markers collects. */
struct demand {
	unsigned vms;
	struct sr_pool_running *run;	/* NULL: hosts not wanted */
	size_t nrun, cap;
	struct mark *pend;		/* the pending markers */
	size_t npend, pendcap;
	struct mark *end;		/* the ended jobs (sorted by id before use) */
	size_t nend, endcap;
	struct mark *wait;		/* queued or released by their status */
	size_t nwait, waitcap;
};

static int
mark_cmp(const void *a, const void *b)
{
	return strcmp(((const struct mark *)a)->id, ((const struct mark *)b)->id);
}

/* Room for one more in *v (*n used, *cap allocated): the new one, zeroed. */
static struct mark *
mark_add(struct mark **v, size_t *n, size_t *cap)
{
	if (*n == *cap) {
		*cap = *cap > 0 ? 2 * *cap : 16;
		*v = sr_realloc(*v, *cap * sizeof **v);
	}
	memset(&(*v)[*n], 0, sizeof **v);
	return &(*v)[(*n)++];
}

static int
on_pending(const struct sr_queue_pending *p, void *arg)
{
	struct demand *d = arg;

	struct mark *m = mark_add(&d->pend, &d->npend, &d->pendcap);

	snprintf(m->id, sizeof m->id, "%s", p->id);
	m->epoch = p->epoch;
	m->vms = p->nodes_min > 1 ? (unsigned)p->nodes_min : 1;
	return 0;
}

/* The pending markers' VMs, but for those of jobs that ended after the
 * marker was written (a queued job cancelled: cancel leaves the marker
 * for the next claimer to drop), which ask for none. A job whose status
 * says queued or released but that had no marker in the listing asks for
 * one: a claim deletes the marker before its agent writes "running", and
 * a job in that gap counted for neither would let a scaler end the VM
 * that just claimed it (or one submitted between the two listings). */
static void
add_pending(struct demand *d)
{
	struct mark *e;
	size_t i;

	if (d->nend > 1)
		qsort(d->end, d->nend, sizeof *d->end, mark_cmp);
	for (i = 0; i < d->npend; i++) {
		e = d->nend > 0 ? bsearch(&d->pend[i], d->end, d->nend, sizeof *d->end,
		    mark_cmp) : NULL;
		if (e == NULL || e->epoch <= d->pend[i].epoch)
			d->vms += d->pend[i].vms;
	}
	if (d->npend > 1)
		qsort(d->pend, d->npend, sizeof *d->pend, mark_cmp);
	for (i = 0; i < d->nwait; i++)
		if (d->npend == 0 || bsearch(&d->wait[i], d->pend, d->npend, sizeof *d->pend,
		    mark_cmp) == NULL)
			d->vms++;
}

static int
on_status(const struct sr_queue_status *s, void *arg)
{
	struct demand *d = arg;

	if (s->state == SR_LEASE_SUCCEEDED || s->state == SR_LEASE_FAILED ||
	    s->state == SR_LEASE_CANCELLED) {
		struct mark *m = mark_add(&d->end, &d->nend, &d->endcap);

		snprintf(m->id, sizeof m->id, "%s", s->id);
		m->epoch = s->epoch;
		return 0;
	}
	if (s->state == SR_LEASE_QUEUED || s->state == SR_LEASE_RELEASED) {
		snprintf(mark_add(&d->wait, &d->nwait, &d->waitcap)->id, SR_QUEUE_ID_MAX + 1,
		    "%s", s->id);
		return 0;
	}
	if (s->state != SR_LEASE_RUNNING)
		return 0;
	d->vms++;
	if (d->run == NULL)
		return 0;
	if (d->nrun == d->cap) {
		d->cap = d->cap > 0 ? 2 * d->cap : 16;
		d->run = sr_realloc(d->run, d->cap * sizeof *d->run);
	}
	snprintf(d->run[d->nrun].host, sizeof d->run[d->nrun].host, "%s", s->host);
	snprintf(d->run[d->nrun].id, sizeof d->run[d->nrun].id, "%s", s->id);
	d->nrun++;
	return 0;
}

int
sr_pool_demand_running(struct sr_queue *q, int max_vms, unsigned *vms,
    struct sr_pool_running **run, size_t *nrun, char *err)
{
	struct demand d;
	int rc;

	memset(&d, 0, sizeof d);
	*vms = 0;
	if (run != NULL) {
		*run = NULL;
		*nrun = 0;
		d.run = sr_calloc(1, sizeof *d.run);
		d.cap = 1;
	}
	/* pending first: a job claimed between the two listings is counted
	 * twice rather than not at all (a target too low ends a VM) */
	rc = sr_queue_pending_list(q, on_pending, &d, NULL, err);
	if (rc >= 0)
		rc = sr_queue_status_list(q, on_status, &d, NULL, NULL, err);
	if (rc >= 0)
		add_pending(&d);
	free(d.pend);
	free(d.end);
	free(d.wait);
	if (rc < 0) {
		free(d.run);
		return sr_err_prefix(err, "read the demand of queue %s", sr_queue_url(q));
	}
	*vms = max_vms < 0 || d.vms < (unsigned)max_vms ? d.vms : (unsigned)max_vms;
	if (run != NULL) {
		*run = d.run;
		*nrun = d.nrun;
	}
	return 0;
}

int
sr_pool_demand(struct sr_queue *q, int max_vms, unsigned *vms, char *err)
{
	return sr_pool_demand_running(q, max_vms, vms, NULL, NULL, err);
}
