/*
 * cmd-gc.c: `spotrun gc [--apply] [--grace DUR] [-s STORE] [--queue URL]
 * [JOB.ini|NAME|SWEEP ...]`: remove what nothing else removes (packs and
 * manifests of saves that never committed, parts of gangs and ranks
 * whose run is gone, unfinished pack uploads, stale status markers;
 * doc/fleet.md, "gc"), by the engine the idle agent sweeps with
 * (fleet/debris.c). A dry run unless --apply: each object that would go,
 * its size and why, and the total. Job files and names without --queue
 * are jobs in a store (as `ls` takes them); with --queue, or with no
 * argument, jobs and sweeps of the queue (every job when none is named).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "ckpt.h"
#include "cmd.h"
#include "debris.h"
#include "fleet-index.h"
#include "fleet-target.h"
#include "fleet.h"
#include "store.h"
#include "target.h"
#include "termsafe.h"
#include "units.h"
#include "util.h"

enum { GC_APPLY, GC_GRACE, GC_STORE, GC_QUEUE };

static const struct sr_opt gc_opts[] = {
	[GC_APPLY] = { 0, "apply", NULL, "delete (default: a dry run, which only lists)" },
	[GC_GRACE] = { 0, "grace", "DUR", "leave what was written within DUR (default 1h)" },
	[GC_STORE] = { 's', "store", "STORE", "jobs in this store: a URL or a directory" },
	[GC_QUEUE] = { 0, "queue", "URL", "jobs of the queue: a store URL or a directory" },
	{ 0 }
};

static void
gc_each(void *arg, const char *job, const char *key, uint64_t size, const char *why)
{
	const struct sr_debris_opts *o = arg;
	char safe[SR_TERMSAFE_LEN(1024)], sz[32];

	(void)job;
	if (size == SR_GC_SIZE_UNKNOWN)
		strlcpy(sz, "size not listed", sizeof sz);
	else
		sr_fmt_bytes(size, sz, sizeof sz);
	printf("%s %s (%s): %s\n", o->apply ? "deleted" : "would delete",
	    sr_termsafe(key, safe, sizeof safe), sz, why);
}

static void
gc_note(void *arg, const char *job, const char *msg)
{
	char safe[SR_TERMSAFE_LEN(SR_ERRMAX)];

	(void)arg;
	fflush(stdout);
	if (job == NULL)
		fprintf(stderr, "spotrun: %s\n", sr_termsafe(msg, safe, sizeof safe));
	else
		fprintf(stderr, "spotrun: gc %s: %s\n", job, sr_termsafe(msg, safe, sizeof safe));
}

/* The jobs named in a store (ls's way): 0, or an exit code. */
static int
gc_store_jobs(const struct sr_args *a, const struct sr_debris_opts *o,
    struct sr_debris_total *t)
{
	struct sr_target tg;
	struct sr_store *st;
	char err[SR_ERRMAX], safe[SR_TERMSAFE_LEN(SR_ERRMAX)];
	int i, rc, worst = 0;

	for (i = 0; i < a->argc; i++) {
		if ((rc = sr_cmd_target(a->argv[i], sr_args_get(a, GC_STORE), &tg)) != 0)
			return rc;
		rc = sr_store_open(tg.store, &st, err);
		if (rc == 0) {
			rc = sr_debris_job(st, tg.name, o, t, err);
			sr_store_close(st);
		}
		if (rc != 0) {
			fflush(stdout);
			fprintf(stderr, "spotrun: gc %s: %s\n", tg.name,
			    sr_termsafe(err, safe, sizeof safe));
			worst = SR_EXIT_IOERR;
		}
		sr_target_free(&tg);
	}
	return worst;
}

/* The jobs of the queue, all of them or those named: 0, or an exit code. */
static int
gc_queue_jobs(const struct sr_args *a, const struct sr_debris_opts *o,
    struct sr_debris_total *t)
{
	struct sr_fleet fl;
	struct sr_fleet_index ix;
	struct sr_fleet_ids ids = { 0 };
	char err[SR_ERRMAX], safe[SR_TERMSAFE_LEN(SR_ERRMAX)];
	int rc;

	memset(&ix, 0, sizeof ix);
	if ((rc = sr_fleet_open(&fl, "gc", sr_args_get(a, GC_QUEUE))) != 0)
		return rc;
	if (a->argc > 0 && (rc = sr_fleet_read_targets(&fl, a->argv, a->argc, &ix, &ids)) != 0) {
		sr_fleet_close(&fl);
		return rc;
	}
	/* a job that fails was said (gc_note): the others went on */
	if (sr_debris_queue(fl.q, a->argc > 0 ? (const char *const *)ids.v : NULL, ids.n, 0, o,
	    t, err) != 0) {
		fflush(stdout);
		fprintf(stderr, "spotrun: %s\n", sr_termsafe(err, safe, sizeof safe));
		rc = SR_EXIT_IOERR;
	}
	if (a->argc > 0) {
		sr_fleet_ids_free(&ids);
		sr_fleet_index_free(&ix);
	}
	sr_fleet_close(&fl);
	return rc;
}

static int
cmd_gc_exec(const struct sr_args *a)
{
	struct sr_debris_opts o;
	struct sr_debris_total t = { 0 };
	const char *v = sr_args_get(a, GC_GRACE);
	char sz[32];
	int rc;

	memset(&o, 0, sizeof o);
	o.grace = SR_DEBRIS_GRACE;
	o.apply = sr_args_has(a, GC_APPLY) > 0;
	o.each = gc_each;
	o.note = gc_note;
	o.skip = gc_note;
	o.arg = &o;
	if (v != NULL && sr_parse_duration(v, &o.grace) != 0) {
		fprintf(stderr, "spotrun gc: --grace %s: not a duration (e.g. 1h, 30m, 0s)\n", v);
		return SR_EXIT_USAGE;
	}
	if (sr_args_has(a, GC_STORE) && sr_args_has(a, GC_QUEUE)) {
		fprintf(stderr, "spotrun gc: -s and --queue do not go together: jobs in a store, "
		    "or of a queue\n");
		return SR_EXIT_USAGE;
	}
	if (sr_args_has(a, GC_STORE) && a->argc == 0) {
		fprintf(stderr, "spotrun gc: -s needs the jobs (JOB.ini or NAME)\n");
		return SR_EXIT_USAGE;
	}
	if (a->argc > 0 && !sr_args_has(a, GC_QUEUE))
		rc = gc_store_jobs(a, &o, &t);
	else
		rc = gc_queue_jobs(a, &o, &t);
	fflush(stderr);
	sr_fmt_bytes(t.bytes, sz, sizeof sz);
	if (o.apply)
		printf("deleted %ld object%s, %s, of %ld job%s\n", t.objects,
		    t.objects == 1 ? "" : "s", sz, t.jobs, t.jobs == 1 ? "" : "s");
	else
		printf("would delete %ld object%s, %s, of %ld job%s (a dry run: --apply deletes "
		    "them)\n", t.objects,
		    t.objects == 1 ? "" : "s", sz, t.jobs, t.jobs == 1 ? "" : "s");
	return rc;
}

const struct sr_cmd_entry sr_cmd_gc_entry = {
	.name = "gc",
	.args = { .opts = gc_opts, .operands = "[JOB.ini|NAME|SWEEP ...]", .min = 0, .max = -1 },
	.summary = "remove what saves, gangs and markers left behind (a dry run by default)",
	.help = "List, and with --apply delete, what nothing else removes: packs and\n"
	    "manifests of saves that never committed, parts of gangs and ranks whose\n"
	    "run is gone, stale status markers, unfinished pack uploads (aborted).\n"
	    "Never a committed checkpoint, anything written within the grace,\n"
	    "or a job whose lease is held. Jobs in a store (JOB.ini or NAME, -s), or\n"
	    "of the queue (--queue, or no argument: every job).",
	.exec = cmd_gc_exec,
};
