/*
 * pool-drain.c: see pool-drain.h. The record marked and the target set
 * to 0 first, then a look every poll: which hosts are the pool's (the
 * agents' records), which jobs run on them (the status markers), the
 * group's target (set to 0 again if a scaler raised it), and how many
 * VMs the cloud still bills (the engine's list, else describe).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "pool-drain.h"
#include "pool-engine.h"
#include "pool-scale.h"
#include "util.h"

#define MARK_TRIES 10		/* CAS rounds against scalers writing the record */

/* Mark the record draining with target 0 (a scaler's write meanwhile:
 * read again and mark over it). *rec gets what was written. 0, 1 (no
 * record), or -1 with err. */
static int
mark(struct sr_pool_drain *d, struct sr_queue_pool *rec, char *err)
{
	char etag[SR_ETAG_MAX];
	int i, rc;

	for (i = 0; i < MARK_TRIES; i++) {
		rc = sr_queue_pool_read(d->q, d->pool, rec, etag, err);
		if (rc == SR_QUEUE_NOTFOUND)
			return 1;
		if (rc != SR_QUEUE_OK)
			return -1;
		if (rec->draining <= 0)
			rec->draining = sr_now();
		rec->target = 0;
		rec->updated = sr_now();
		snprintf(rec->by, sizeof rec->by, "%s", d->by);
		snprintf(rec->why, sizeof rec->why, "%s", SR_POOL_SCALE_DRAINING);
		rc = sr_queue_pool_put_if(d->q, rec, etag, NULL, err);
		if (rc == SR_QUEUE_OK)
			return 0;
		if (rc != SR_QUEUE_BUSY)
			return -1;
	}
	return sr_err(err, "pool %s: mark it draining: its record changed %d times meanwhile",
	    d->pool, MARK_TRIES);
}

/* Whether host is one of the pool's agents' (m, n). */
static int
pool_host(const struct sr_queue_machine *m, size_t n, const char *pool, const char *host)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(m[i].pool, pool) == 0 && strncmp(m[i].host, host, SR_QUEUE_HOST_MAX) == 0)
			return 1;
	return 0;
}

/* The job id among d's, or a new one. */
static struct sr_pool_drained *
job(struct sr_pool_drain *d, const char *id)
{
	size_t i;

	for (i = 0; i < d->njobs; i++)
		if (strcmp(d->jobs[i].id, id) == 0)
			return &d->jobs[i];
	d->jobs = sr_realloc(d->jobs, (d->njobs + 1) * sizeof *d->jobs);
	memset(&d->jobs[d->njobs], 0, sizeof *d->jobs);
	snprintf(d->jobs[d->njobs].id, sizeof d->jobs[0].id, "%s", id);
	d->jobs[d->njobs].step = -1;
	return &d->jobs[d->njobs++];
}

/* One look: the jobs now running on the pool's hosts (the others it saw
 * are back), and the billed VMs into d->vms, asked through engine e's
 * client c. *busy gets how many jobs still run there. 0, or -1 with
 * err. */
static int
look(struct sr_pool_drain *d, const struct sr_pool_engine *e, void *c,
    const struct sr_pool_where *w, size_t *busy, char *err)
{
	struct sr_queue_machine *m = NULL;
	struct sr_pool_running *run = NULL;
	struct sr_pool_vm *vms = NULL;
	struct sr_pool_vms counts;
	struct sr_queue_status st;
	struct sr_pool_drained *j;
	size_t nm = 0, nrun = 0, n = 0, nwas, i;
	unsigned demand, target;
	int *was;

	if (sr_queue_machines_read(d->q, &m, &nm, NULL, err) == -1 ||
	    sr_pool_demand_running(d->q, -1, &demand, &run, &nrun, err) == -1) {
		free(m);
		return -1;
	}
	was = sr_calloc(d->njobs + 1, sizeof *was);
	for (i = 0; i < d->njobs; i++) {
		was[i] = d->jobs[i].back;
		d->jobs[i].back = 1;
	}
	nwas = d->njobs;
	*busy = 0;
	for (i = 0; i < nrun; i++) {
		if (!pool_host(m, nm, d->pool, run[i].host))
			continue;
		j = job(d, run[i].id);
		j->back = 0;
		snprintf(j->host, sizeof j->host, "%s", run[i].host);
		(*busy)++;
	}
	free(m);
	free(run);
	/* the ones back since the last look: how their markers say they
	 * ended (one GET each, once) */
	for (i = 0; i < nwas; i++) {
		j = &d->jobs[i];
		if (j->back && !was[i] && sr_queue_status_get(d->q, j->id, &st, err) ==
		    SR_QUEUE_OK) {
			j->state = st.state;
			j->step = st.step;
		}
	}
	free(was);
	d->vms = 0;
	if (w->group[0] == '\0')
		return 0;
	/* the group's target held at 0: a scaler's write to the cloud that
	 * crossed the marking (pool-scale.c's unchanged narrows it to the
	 * time between a read and a call) is undone at the next look */
	sr_fault("pool-drain-look");
	if (e->describe(c, w, &target, &counts, err) == -1)
		return -1;
	if (target > 0) {
		if (e->set_target(c, w, 0, err) == -1)
			return -1;
		d->reset++;
	}
	if (e->list != NULL) {
		if (e->list(c, w, d->pool, &vms, &n, err) == -1)
			return -1;
		for (i = 0; i < n; i++)
			d->vms += vms[i].billed != 0;
		free(vms);
	} else
		d->vms = counts.pending + counts.running + counts.stopping;
	return 0;
}

/* The drain after the mark, with engine e's client c. */
static int
drain(struct sr_pool_drain *d, const struct sr_pool_engine *e, void *c,
    const struct sr_queue_pool *rec, double start, char *err)
{
	struct sr_pool_where w;
	double poll = d->poll > 0 ? d->poll : 1.0;
	size_t busy;

	sr_pool_where_of(rec, &w);
	if (rec->group[0] != '\0' && e->set_target(c, &w, 0, err) == -1)
		return sr_err_prefix(err, "drain pool %s: set target 0", d->pool);
	if (look(d, e, c, &w, &busy, err) == -1)
		return sr_err_prefix(err, "drain pool %s", d->pool);
	if (d->started != NULL)
		d->started(d->arg, d);
	while (busy > 0 || d->vms > 0) {
		if (sr_mono() - start >= d->timeout) {
			d->timed_out = 1;
			break;
		}
		sr_sleep(poll);
		if (look(d, e, c, &w, &busy, err) == -1)
			return sr_err_prefix(err, "drain pool %s", d->pool);
	}
	d->took = sr_mono() - start;
	return 0;
}

int
sr_pool_drain(struct sr_pool_drain *d, char *err)
{
	const struct sr_pool_engine *e;
	struct sr_queue_pool rec;
	double start = sr_mono();
	void *c;
	int rc;

	d->jobs = NULL;
	d->njobs = d->vms = d->reset = 0;
	d->timed_out = 0;
	d->took = 0;
	if ((rc = mark(d, &rec, err)) != 0)
		return rc == 1 ? 1 : sr_err_prefix(err, "drain pool %s", d->pool);
	if ((e = sr_pool_engine_named(rec.cloud)) == NULL)
		return sr_err(err, "drain pool %s: no fleet engine for cloud %s in this build",
		    d->pool, rec.cloud);
	/* one client for every look: its token and project or subscription
	 * fetched once */
	if (e->open(&c, err) == -1)
		return sr_err_prefix(err, "drain pool %s", d->pool);
	rc = drain(d, e, c, &rec, start, err);
	e->close(c);
	return rc;
}

void
sr_pool_drain_free(struct sr_pool_drain *d)
{
	free(d->jobs);
	d->jobs = NULL;
	d->njobs = 0;
}
