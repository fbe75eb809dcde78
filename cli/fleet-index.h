/*
 * fleet-index.h: the queue's status markers read once, by one listing of
 * Q/index/ (N jobs: N / 1000 requests, no GET), into rows sorted by id:
 * what `status` shows, and how the other commands find a sweep's trials
 * and a job's last state and epoch. A trial's sweep is read from its id:
 * NAME.DIGITS is trial DIGITS of sweep NAME (runner/sweep.h names them so).
 */
#ifndef SR_FLEET_INDEX_H
#define SR_FLEET_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "lease.h"
#include "queue.h"

struct sr_fleet_row {
	char *id;
	int64_t epoch;			/* of the lease that wrote the marker */
	double time;			/* when it was written */
	enum sr_lease_state state;
	int attempts, preemptions;
	int64_t gpu_seconds, lost_gpu_seconds;
	double cost, on_demand_cost;	/* dollars */
	int64_t step;			/* -1: no checkpoint */
	char *host;
};

struct sr_fleet_index {
	struct sr_fleet_row *v;		/* sorted by id */
	size_t n;
	int stale, bad;			/* markers skipped: older ones, keys that do not parse */
	char **broken;			/* the keys that do not parse */
	size_t nbroken;
	long malformed;			/* markers under malformed/ (status reads them) */
};

/* Read every job's newest marker: 0, or -1 with err. */
int sr_fleet_index_read(struct sr_queue *q, struct sr_fleet_index *ix, char *err);
void sr_fleet_index_free(struct sr_fleet_index *ix);

/* The first key of a status marker of job id (index/ID~...) that does
 * not parse, or NULL: a job known only by a broken marker. */
const char *sr_fleet_index_broken(const struct sr_fleet_index *ix, const char *id);

/* The row of job id, or NULL. */
const struct sr_fleet_row *sr_fleet_index_find(const struct sr_fleet_index *ix, const char *id);

/* Whether id is a sweep's trial (NAME.DIGITS, NAME not empty): 1 with the
 * sweep's NAME in name (len bytes), else 0. */
int sr_fleet_sweep_of(const char *id, char *name, size_t len);

/* The rows of sweep name's trials in id order: how many, their indexes
 * into ix->v in *rows (malloc'd; NULL when none). */
size_t sr_fleet_index_sweep(const struct sr_fleet_index *ix, const char *name, size_t **rows);

#endif
