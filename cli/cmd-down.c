/*
 * cmd-down.c: `spotrun down POOL.ini|NAME [--queue URL] [--drain
 * [--drain-timeout DUR]]`: delete every resource `spotrun up` made for a
 * pool, found by its tags in the cloud (fleet/pool-engine.h: the group
 * with its VMs terminated, the template), in the pool file's regions or,
 * given a name, the region of the pool's record in the queue; then remove
 * that record. With --drain, first its jobs checkpoint and go back to the
 * queue (fleet/pool-drain.h). Idempotent: a pool with nothing left says so
 * and exits 0.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "fleet.h"
#include "pool-drain.h"
#include "pool-engine.h"
#include "units.h"
#include "util.h"

enum { DOWN_QUEUE, DOWN_DRAIN, DOWN_DRAIN_TIMEOUT };

static const struct sr_opt down_opts[] = {
	[DOWN_QUEUE] = { 0, "queue", "URL", "the queue of the pool's record (as for submit)" },
	[DOWN_DRAIN] = { 0, "drain", NULL, "first its jobs checkpoint, back in the queue" },
	[DOWN_DRAIN_TIMEOUT] = { 0, "drain-timeout", "DUR", "wait at most DUR for the drain "
	    "(default 10m)" },
	{ 0 }
};

#define DRAIN_TIMEOUT 600.0

static void
drain_started(void *arg, const struct sr_pool_drain *d)
{
	size_t i, n = 0;

	(void)arg;
	for (i = 0; i < d->njobs; i++)
		n += !d->jobs[i].back;
	printf("pool %s: draining: target 0; %zu job%s running on its VMs", d->pool, n,
	    n == 1 ? "" : "s");
	for (i = 0; i < d->njobs; i++)
		if (!d->jobs[i].back)
			printf("%s %s (%s)", i > 0 ? "," : ":", d->jobs[i].id, d->jobs[i].host);
	printf("\n");
	fflush(stdout);
}

/* Drain pool name as pool-drain.h says, saying what each job did. 0, or
 * an exit code after saying why. */
static int
drain(struct sr_queue *q, const char *name, double timeout)
{
	struct sr_pool_drain d;
	struct sr_pool_drained *j;
	char err[SR_ERRMAX], dur[32];
	size_t i;
	int rc;

	memset(&d, 0, sizeof d);
	d.q = q;
	d.pool = name;
	d.by = "spotrun down";
	d.timeout = timeout;
	d.started = drain_started;
	if ((rc = sr_pool_drain(&d, err)) == -1) {
		fprintf(stderr, "spotrun down: %s\n", err);
		return SR_EXIT_UNAVAILABLE;
	}
	if (rc == 1) {
		printf("pool %s: no record in the queue: nothing to drain\n", name);
		return 0;
	}
	for (i = 0; i < d.njobs; i++) {
		j = &d.jobs[i];
		if (!j->back)
			printf("pool %s: %s still running on %s after %s\n", name, j->id, j->host,
			    sr_fmt_duration(timeout, dur, sizeof dur));
		else if (j->state == SR_LEASE_RELEASED || j->state == SR_LEASE_QUEUED) {
			printf("pool %s: %s back in the queue", name, j->id);
			if (j->step >= 0)
				printf(", from its checkpoint at step %lld", (long long)j->step);
			printf("\n");
		} else
			printf("pool %s: %s ended %s\n", name, j->id, sr_lease_state_name(j->state));
	}
	if (d.reset > 0)
		printf("pool %s: its target set to 0 again %zu time%s (a scaler raised it as the "
		    "drain began)\n", name, d.reset, d.reset == 1 ? "" : "s");
	if (d.timed_out)
		printf("pool %s: drain not done after %s (%zu VM%s billed): deleting it anyway; "
		    "its agents release their jobs as on a preemption\n", name,
		    sr_fmt_duration(timeout, dur, sizeof dur), d.vms, d.vms == 1 ? "" : "s");
	else
		printf("pool %s: drained in %s\n", name, sr_fmt_duration(d.took, dur, sizeof dur));
	sr_pool_drain_free(&d);
	return 0;
}

/* A pool's name, not a file: what spotrun-pool(5) allows a name. */
static int
is_name(const char *s)
{
	return s[0] != '\0' && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == strlen(s);
}

static int
cloud_of(const char *name, enum sr_pool_cloud *c)
{
	int i;

	for (i = 0; i < SR_POOL_NCLOUDS; i++)
		if (strcmp(name, sr_pool_cloud_name((enum sr_pool_cloud)i)) == 0) {
			*c = (enum sr_pool_cloud)i;
			return 0;
		}
	return -1;
}

static int
cmd_down_exec(const struct sr_args *a)
{
	struct sr_jobspec_errors errs;
	struct sr_queue_pool rec;
	struct sr_pool *p = NULL;
	struct sr_fleet fl;
	const struct sr_pool_engine *e;
	const char *arg = a->argv[0], *name, *one[1];
	const char *const *regions;
	enum sr_pool_cloud cloud;
	char err[SR_ERRMAX];
	size_t nregions, gone = 0, i;
	double timeout = DRAIN_TIMEOUT;
	void *c;
	int rc, st, cloud_rc = -1;

	if (!is_name(arg) || access(arg, F_OK) == 0) {
		if (sr_pool_load(arg, &p, &errs) == -1) {
			sr_jobspec_errors_print(arg, &errs, stderr);
			sr_jobspec_errors_free(&errs);
			return SR_EXIT_BADSPEC;
		}
	}
	if ((arg = sr_args_get(a, DOWN_DRAIN_TIMEOUT)) != NULL &&
	    (sr_parse_duration(arg, &timeout) != 0 || timeout <= 0 ||
	    !sr_args_has(a, DOWN_DRAIN))) {
		fprintf(stderr, "spotrun down: --drain-timeout %s: %s\n", arg,
		    sr_args_has(a, DOWN_DRAIN) ? "not a duration (e.g. 10m, 90s)" :
		    "without --drain (add it)");
		sr_pool_free(p);
		return SR_EXIT_USAGE;
	}
	arg = a->argv[0];
	if ((rc = sr_fleet_open(&fl, "down", sr_args_get(a, DOWN_QUEUE))) != 0) {
		sr_pool_free(p);
		return rc;
	}
	name = p != NULL ? p->name : arg;
	st = sr_queue_pool_get(fl.q, name, &rec, err);
	if (st == SR_QUEUE_ERROR) {
		fprintf(stderr, "spotrun down: %s\n", err);
		rc = SR_EXIT_IOERR;
		goto out;
	}
	if (p != NULL) {
		cloud = p->cloud;
		regions = (const char *const *)p->regions;
		nregions = p->nregions;
	} else if (st == SR_QUEUE_NOTFOUND || cloud_of(rec.cloud, &cloud) == -1) {
		fprintf(stderr, "spotrun down: pool %s: %s in queue %s; give its pool file (its "
		    "regions are searched by tag)\n", name, st == SR_QUEUE_NOTFOUND ? "no record" :
		    "a record of an unknown cloud", fl.where);
		rc = SR_EXIT_NOINPUT;
		goto out;
	} else {
		one[0] = rec.region;
		regions = one;
		nregions = 1;
	}
	if ((e = sr_pool_engine(cloud)) == NULL) {
		fprintf(stderr, "spotrun down: pools on %s are not in this build yet\n",
		    sr_pool_cloud_name(cloud));
		rc = SR_EXIT_UNAVAILABLE;
		goto out;
	}
	if (sr_args_has(a, DOWN_DRAIN) && (rc = drain(fl.q, name, timeout)) != 0)
		goto out;
	if (e->open(&c, err) == 0) {
		cloud_rc = e->destroy(c, name, regions, nregions, &gone, err);
		e->close(c);
	}
	if (cloud_rc == -1) {
		fprintf(stderr, "spotrun down: %s\n", err);
		rc = SR_EXIT_UNAVAILABLE;
		goto out;
	}
	if (st == SR_QUEUE_OK && sr_queue_pool_delete(fl.q, name, err) == -1) {
		fprintf(stderr, "spotrun down: %s\n", err);
		rc = SR_EXIT_IOERR;
		goto out;
	}
	printf("pool %s: ", name);
	if (gone > 0)
		printf("deleted %zu resource%s (%s, its VMs, %s) in", gone,
		    gone == 1 ? "" : "s", e->what, e->template_what != NULL ? e->template_what :
		    "launch template");
	else
		printf("nothing left in");
	for (i = 0; i < nregions; i++)
		printf("%s %s", i > 0 ? "," : "", regions[i]);
	printf("%s\n", st == SR_QUEUE_OK ? "; its record removed from the queue" : "");
	if (fflush(stdout) == EOF || ferror(stdout)) {
		sr_errno(err, "write standard output");
		fprintf(stderr, "spotrun down: %s\n", err);
		rc = SR_EXIT_IOERR;
	}
out:
	sr_fleet_close(&fl);
	sr_pool_free(p);
	return rc;
}

const struct sr_cmd_entry sr_cmd_down_entry = {
	.name = "down",
	.args = { .opts = down_opts, .operands = "POOL.ini|NAME", .min = 1, .max = 1 },
	.summary = "delete everything up made for a pool",
	.help = "Delete every resource `spotrun up` made for the pool (the fleet engine's\n"
	    "group with its VMs terminated, its launch or instance template), found by\n"
	    "their tags in the cloud: in each region of POOL.ini (GCP: every region),\n"
	    "or given the pool's NAME, in the region of its record in the queue; then\n"
	    "remove that record. A pool with nothing left says so and exits 0.\n"
	    "\n"
	    "With --drain, first the pool's record is marked draining and its target\n"
	    "set to 0: the cloud ends its VMs, whose agents checkpoint their jobs and\n"
	    "put them back in the queue, as on a preemption; down waits (up to\n"
	    "--drain-timeout) until no job runs on the pool and no VM is billed.",
	.exec = cmd_down_exec,
};
