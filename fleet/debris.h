/*
 * debris.h: what nothing else removes from a store and a queue (doc/fleet.md,
 * "gc"): packs and manifests of saves that never committed, parts of gangs
 * and ranks whose run is gone, unfinished pack uploads, stale status
 * markers. One engine for `spotrun gc` and the agent's sweep at idle, so
 * that both delete exactly the same things.
 */
#ifndef SR_DEBRIS_H
#define SR_DEBRIS_H

#include <stddef.h>
#include <stdint.h>

#include "queue.h"
#include "store.h"

/* How long debris must lie before gc takes it: `spotrun gc` and the agent. */
#define SR_DEBRIS_GRACE 3600.0
/* The agents of a queue sweep it at idle once per this (seconds), all of
 * them together (sr_queue_sweep_turn). */
#define SR_DEBRIS_INTERVAL 3600.0

struct sr_debris_opts {
	double grace;		/* seconds: nothing last written since is touched (>= 0) */
	int apply;		/* 0: a dry run, nothing deleted */
	/* Each object deleted (apply) or that would be: the job's id (NULL: the
	 * queue's own object), its key (in the job's store, or the queue's),
	 * its size and why. */
	void (*each)(void *arg, const char *job, const char *key, uint64_t size,
	    const char *why);
	/* What gc did besides (uploads aborted), or a job that failed; job
	 * NULL when msg names it ("gc J: ..."). */
	void (*note)(void *arg, const char *job, const char *msg);
	/* A job left alone (its lease held...), and why (NULL: not told). */
	void (*skip)(void *arg, const char *job, const char *msg);
	void *arg;
};

struct sr_debris_total {
	long objects;		/* deleted, or that would be */
	uint64_t bytes;
	long jobs, skipped;	/* jobs looked at; of them left alone */
};

/*
 * The debris of job in st, the job's checkpoint store: unless its lease
 * is held (running and not expired; then o->skip says by whom, and
 * nothing is read further), the checkpoints' gc with nothing committed
 * retired (sr_ckpt_gc_log with keep 0, fenced by the lease's epoch, o's
 * grace, its unfinished pack uploads older than the grace aborted), then
 * the parts older than the grace (sr_ckpt_gc_parts). Adds to *t. 0, or
 * -1 with err (a store error; a malformed lease, or a LATEST of a higher
 * epoch than the lease, is a skip).
 */
int sr_debris_job(struct sr_store *st, const char *job, const struct sr_debris_opts *o,
    struct sr_debris_total *t, char *err);

/*
 * The debris of the queue's jobs: the n ids (ids NULL: every job with a
 * status marker written at or after the epoch time since, 0: all), each
 * in its checkpoint store (its meta.json's, the queue's Q/ckpt when it
 * names none) by sr_debris_job, and their stale status markers
 * (sr_queue_status_stale) older than the grace; with ids NULL, the records
 * under agents/ of agents gone without a word (older than the grace and
 * than SR_QUEUE_MACHINE_STALE: queue.h), said with job NULL and size 0.
 * A job that fails is said
 * through o->note and the others go on; -1 with err (the last failure)
 * when any failed, or the markers could not be listed.
 */
int sr_debris_queue(struct sr_queue *q, const char *const *ids, size_t n, double since,
    const struct sr_debris_opts *o, struct sr_debris_total *t, char *err);

#endif
