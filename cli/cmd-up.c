/*
 * cmd-up.c: `spotrun up POOL.ini --queue URL [--count N] [--dry-run]
 * [--prices FILE]`: acquire the spot VMs a pool file describes
 * (spotrun-pool(5)) through its cloud's own fleet engine
 * (fleet/pool-engine.h), each VM an agent of the queue: the user-data is
 * `spotrun cloud-init`'s with this binary published to the queue's store,
 * the first target --count or the queue's demand, and the pool's record
 * written into the queue (Q/pools/NAME). Found by its tags, a pool made
 * before only gets its target set. An engine that fails over (GCP, Azure) says
 * where it found no capacity, and whether the pool waits for it. --dry-run prints the plan
 * (fleet/pool-plan.c); a cloud whose engine is not in this build exits 69.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudinit.h"
#include "cmd.h"
#include "fleet.h"
#include "pool-engine.h"
#include "pool-plan.h"
#include "util.h"

enum { UP_QUEUE, UP_COUNT, UP_DRY_RUN, UP_PRICES };

static const struct sr_opt up_opts[] = {
	[UP_QUEUE] = { 0, "queue", "URL", "the queue the VMs' agents serve (default: "
	    "$SPOTRUN_QUEUE)" },
	[UP_COUNT] = { 0, "count", "N", "the VMs to keep, 0 to max_vms (default: the queue's "
	    "demand)" },
	[UP_DRY_RUN] = { 'n', "dry-run", NULL, "print what would be created and its hourly "
	    "cost" },
	[UP_PRICES] = { 0, "prices", "FILE", "the price table (default: the built-in one)" },
	{ 0 }
};

/* The user-data of the pool's VMs (malloc'd into *ud, *len bytes): this
 * binary published to the queue's store and presigned, as `spotrun
 * cloud-init --queue QUEUE --labels pool=NAME [--idle-timeout T]` prints
 * it. 0, or -1 with err. */
static int
user_data(const struct sr_pool *p, const char *queue, char **ud, size_t *len, char *err)
{
	struct sr_cinit_opts o = { .queue = queue };
	char sha[65], key[SR_CINIT_BIN_KEY_MAX], idle[32], labels[64], *url = NULL;
	FILE *fp;

	/* the agent says which pool its VM is of (agents/), so that `down
	 * --drain` finds the pool's jobs */
	snprintf(labels, sizeof labels, "pool=%s", p->name);
	o.labels = labels;

	if (p->idle_timeout > 0)
		o.idle_timeout = sr_fmt_duration(p->idle_timeout, idle, sizeof idle);
	if (sr_cinit_check(&o, NULL, NULL, err) == -1 ||
	    sr_cinit_publish(queue, "/proc/self/exe", SR_CINIT_URL_EXPIRES, &url, sha, key,
	    err) == -1)
		return -1;
	o.bin_url = url;
	o.bin_sha256 = sha;
	if ((fp = open_memstream(ud, len)) == NULL)
		sr_fatal("up: open_memstream: out of memory");
	sr_cinit_write_userdata(&o, fp);
	if (fclose(fp) != 0)
		sr_fatal("up: user-data: out of memory");
	free(url);
	return 0;
}

/* The first target: --count, else the queue's demand. 0, or an exit code
 * after saying why. */
static int
first_target(const struct sr_args *a, const struct sr_pool *p, struct sr_queue *q,
    unsigned *target, int *from_demand)
{
	const char *s = sr_args_get(a, UP_COUNT);
	char err[SR_ERRMAX], *end;
	long n;

	*from_demand = s == NULL;
	if (s == NULL) {
		if (sr_pool_demand(q, p->max_vms, target, err) == -1) {
			fprintf(stderr, "spotrun up: %s\n", err);
			return SR_EXIT_IOERR;
		}
		return 0;
	}
	n = strtol(s, &end, 10);
	if (end == s || *end != '\0' || n < 0 || n > p->max_vms) {
		fprintf(stderr, "spotrun up: --count %s: want a whole number from 0 to the pool's "
		    "max_vms, %d\n", s, p->max_vms);
		return SR_EXIT_USAGE;
	}
	*target = (unsigned)n;
	return 0;
}

/* Create or update pool p on engine e for the queue, and record it. */
/* The places that refused pool p this `up` (w->refused) added to the
 * queue's placement history; a failure is said and `up` goes on. */
static void
note_refused(struct sr_queue *q, const struct sr_pool *p, const struct sr_pool_where *w)
{
	struct sr_queue_place_event ev[SR_POOL_REFUSED_MAX];
	const char *cloud = sr_pool_cloud_name(p->cloud);
	char err[SR_ERRMAX];
	double now = sr_now();
	size_t i;

	memset(ev, 0, sizeof ev);
	for (i = 0; i < w->nrefused; i++) {
		snprintf(ev[i].cloud, sizeof ev[i].cloud, "%s", cloud);
		snprintf(ev[i].region, sizeof ev[i].region, "%s", w->refused[i].region);
		snprintf(ev[i].zone, sizeof ev[i].zone, "%s", w->refused[i].zone);
		snprintf(ev[i].type, sizeof ev[i].type, "%s", w->refused[i].type);
		snprintf(ev[i].why, sizeof ev[i].why, "%s", w->refused[i].code);
		ev[i].at = now;
	}
	if (sr_queue_placement_add(q, cloud, ev, w->nrefused, err) == -1)
		fprintf(stderr, "spotrun up: warning: %s\n", err);
}

static int
up(const struct sr_args *a, const struct sr_pool *p, const struct sr_pool_engine *e,
    const char *queue, const struct sr_prices *t)
{
	struct sr_pool_launch l = { .p = p, .queue = queue };
	struct sr_pool_where w;
	struct sr_queue_pool rec, old;
	struct sr_fleet fl;
	struct sr_queue_place_event *hist = NULL;
	const char **types = NULL;
	char err[SR_ERRMAX], *ud = NULL;
	void *c;
	int rc, from_demand;

	if (sr_pool_types(p, t, &types, &l.ntypes, err) == -1) {
		fprintf(stderr, "spotrun up: %s: %s\n", p->path, err);
		return SR_EXIT_BADSPEC;
	}
	l.types = types;
	if ((rc = sr_fleet_open(&fl, "up", queue)) != 0) {
		free(types);
		return rc;
	}
	if ((rc = first_target(a, p, fl.q, &l.target, &from_demand)) != 0)
		goto out;
	if (user_data(p, queue, &ud, &l.user_data_len, err) == -1) {
		fprintf(stderr, "spotrun up: %s\n", err);
		rc = SR_EXIT_IOERR;
		goto out;
	}
	l.user_data = ud;
	/* the places that failed lately go last (doc/design.md, "Provisioning") */
	if (sr_queue_placement_read(fl.q, sr_pool_cloud_name(p->cloud), &hist, &l.nhistory,
	    err) == -1) {
		fprintf(stderr, "spotrun up: %s\n", err);
		rc = SR_EXIT_IOERR;
		goto out;
	}
	l.history = hist;
	memset(&w, 0, sizeof w);
	if ((rc = e->open(&c, err)) == 0) {
		rc = e->ensure(c, &l, &w, err);
		e->close(c);
	}
	if (w.nrefused > 0)
		note_refused(fl.q, p, &w);
	if (rc == -1) {
		fprintf(stderr, "spotrun up: %s\n", err);
		rc = SR_EXIT_UNAVAILABLE;
		goto out;
	}
	if (w.tried[0] != '\0')
		printf("pool %s: no capacity in %s\n", p->name, w.tried);
	if (w.waiting)
		printf("pool %s: waiting for capacity in %s%s%s (every place tried), target %u "
		    "VM%s%s\n", p->name, w.region, w.group[0] != '\0' ? ", " : "", w.group,
		    w.target, w.target == 1 ? "" : "s", from_demand ? " (the queue's demand)" : "");
	else if (w.created)
		/* no image: a template made before, kept */
		printf("pool %s: created %s %s in %s (%s %s%s%s), target %u VM%s%s\n",
		    p->name, e->what, w.group, w.region, e->template_what != NULL ?
		    e->template_what : "launch template", w.template_id, w.image[0] != '\0' ?
		    ", image " : "", w.image, w.target, w.target == 1 ? "" : "s",
		    from_demand ? " (the queue's demand)" : "");
	else
		printf("pool %s: found %s %s in %s by its tags; target %u VM%s%s\n", p->name,
		    e->what, w.group, w.region, w.target, w.target == 1 ? "" : "s",
		    from_demand ? " (the queue's demand)" : "");
	memset(&rec, 0, sizeof rec);
	snprintf(rec.name, sizeof rec.name, "%s", p->name);
	snprintf(rec.cloud, sizeof rec.cloud, "%s", sr_pool_cloud_name(p->cloud));
	snprintf(rec.region, sizeof rec.region, "%s", w.region);
	snprintf(rec.group, sizeof rec.group, "%s", w.group);
	snprintf(rec.template_id, sizeof rec.template_id, "%s", w.template_id);
	rec.target = w.target;
	snprintf(rec.tried, sizeof rec.tried, "%s", w.tried);
	rec.waiting = w.waiting;
	rec.updated = sr_now();
	rec.max_vms = p->max_vms;
	rec.cost_cap = p->cost_cap;
	rec.idle_timeout = p->idle_timeout;
	snprintf(rec.by, sizeof rec.by, "spotrun up");
	snprintf(rec.why, sizeof rec.why, "as spotrun up set it");
	rec.spent_at = rec.updated;
	if (sr_queue_pool_get(fl.q, p->name, &old, err) != SR_QUEUE_OK)
		memset(&old, 0, sizeof old);
	rec.created = !w.created && strcmp(old.group, w.group) == 0 ? old.created : rec.updated;
	/* the scaler's fence and the cost so far outlive an up of the same pool */
	rec.fence = old.fence;
	if (old.name[0] != '\0' && old.spent_at > 0) {
		rec.spent = old.spent;
		rec.spent_at = old.spent_at;
		rec.in_jobs = old.in_jobs;
		rec.idle = old.idle;
		memcpy(rec.prices, old.prices, sizeof rec.prices);
		rec.nprices = old.nprices;
	}
	if (sr_queue_pool_put(fl.q, &rec, err) == -1) {
		fprintf(stderr, "spotrun up: %s\n", err);
		rc = SR_EXIT_IOERR;
	}
out:
	free(hist);
	free(ud);
	free(types);
	sr_fleet_close(&fl);
	return rc;
}

static int
cmd_up_exec(const struct sr_args *a)
{
	struct sr_jobspec_errors errs;
	struct sr_cinit_opts o = { .queue = sr_args_get(a, UP_QUEUE) };
	const struct sr_pool_engine *e;
	struct sr_prices *t = NULL;
	struct sr_pool *p;
	const char *path = a->argv[0], *prices = sr_args_get(a, UP_PRICES);
	char err[SR_ERRMAX];
	int rc = 0;

	if (sr_pool_load(path, &p, &errs) == -1) {
		sr_jobspec_errors_print(path, &errs, stderr);
		sr_jobspec_errors_free(&errs);
		return SR_EXIT_BADSPEC;
	}
	if (o.queue == NULL)
		o.queue = getenv("SPOTRUN_QUEUE");
	/* the queue goes into the user-data and every resource's tags: the
	 * same checks as cloud-init's (no credential, printable ASCII) */
	if (o.queue == NULL || sr_cinit_check(&o, NULL, NULL, err) == -1) {
		fprintf(stderr, "spotrun up: %s\n", o.queue == NULL ? "no queue; give --queue "
		    "URL or set SPOTRUN_QUEUE" : err);
		sr_pool_free(p);
		return SR_EXIT_USAGE;
	}
	e = sr_pool_engine(p->cloud);
	if (!sr_args_has(a, UP_DRY_RUN) && e == NULL) {
		fprintf(stderr, "spotrun up: creating a pool on %s is not in this build yet; "
		    "--dry-run prints the plan\n", sr_pool_cloud_name(p->cloud));
		sr_pool_free(p);
		return SR_EXIT_UNAVAILABLE;
	}
	if ((prices != NULL ? sr_prices_load(prices, &t, err) : sr_prices_builtin(&t, err)) == -1) {
		fprintf(stderr, "spotrun up: %s\n", err);
		sr_pool_free(p);
		return SR_EXIT_CONFIG;
	}
	if (!sr_args_has(a, UP_DRY_RUN))
		rc = up(a, p, e, o.queue, t);
	else if (sr_pool_plan_print(p, o.queue, t, stdout, err) == -1) {
		fprintf(stderr, "spotrun up: %s: %s\n", path, err);
		rc = SR_EXIT_BADSPEC;
	}
	if (rc == 0 && (fflush(stdout) == EOF || ferror(stdout))) {
		sr_errno(err, "write standard output");
		fprintf(stderr, "spotrun up: %s\n", err);
		rc = SR_EXIT_IOERR;
	}
	sr_prices_free(t);
	sr_pool_free(p);
	return rc;
}

const struct sr_cmd_entry sr_cmd_up_entry = {
	.name = "up",
	.args = { .opts = up_opts, .operands = "POOL.ini", .min = 1, .max = 1 },
	.summary = "acquire a pool of spot VMs for a queue",
	.help = "Acquire the spot VMs that POOL.ini describes (spotrun-pool(5)) through\n"
	    "the cloud's fleet engine (AWS: an EC2 Fleet of type maintain; GCP: a\n"
	    "regional managed instance group; Azure: a Flexible VM scale set), each\n"
	    "VM an agent of the queue. --dry-run prints the engine, the resources\n"
	    "and their tags, the launch configuration, the placement candidates in\n"
	    "order and the hourly cost range by the price table. Without it, the\n"
	    "pool is made (AWS, GCP, Azure), tagged with its name and the queue,\n"
	    "its VMs booting `spotrun cloud-init`'s user-data, its first target\n"
	    "--count or the queue's demand (pending and running jobs, within\n"
	    "max_vms), and recorded in the queue; a pool found by its tags only gets\n"
	    "its target set. On GCP and Azure, a group or scale set that meets\n"
	    "capacity or quota errors moves to the next region, then the next type,\n"
	    "in the file's order.",
	.exec = cmd_up_exec,
};
