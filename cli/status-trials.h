/*
 * status-trials.h: `spotrun status SWEEP`, the morning view of a sweep:
 * one row per trial with the parameters that vary between its trials,
 * the latest and best value of a metric (doc/spotrun.1, METRICS) and a
 * sparkline of it, state, attempts and preemptions, time run and cost
 * (--wide: the start and GPU-hours too), then a note per trial that
 * failed (its exit code or signal and its output's last error line,
 * status-reason.h) or waits (status-why.h); in 80 columns unless --wide,
 * state coloured and the best trial bold when asked; --json carries the
 * rows, their reasons and every trial's metrics. Per trial it reads its
 * meta.json, its metrics' segments and its attempt records (a few
 * requests each), a failed one the end of its log, beside the status
 * markers; the agents' records and the pending markers when a trial
 * waits, the leases' listings when one runs.
 */
#ifndef SR_STATUS_TRIALS_H
#define SR_STATUS_TRIALS_H

#include <stddef.h>

#include "fleet-index.h"
#include "fleet.h"

struct sr_trials_opts {
	const char *metric;	/* NAME or NAME:min or NAME:max; NULL: loss if any, else
				 * the first one reported */
	int sort;		/* by the best value, best first */
	int wide;		/* no 80-column budget */
	int json;
	int unicode;		/* the sparkline in block characters (else ASCII) */
	int color;		/* SGR escapes: state coloured, the best trial bold */
};

/* Print sweep's trials (the n rows of ix at idx) as o says: 0, or an exit
 * code (a message said). */
int sr_status_trials(struct sr_fleet *fl, const struct sr_fleet_index *ix, const char *sweep,
    const size_t *idx, size_t n, const struct sr_trials_opts *o);

/* Whether a metric is better small (0) or large (1): spec's ":min" or
 * ":max" if it has one (cut off in name, len bytes), else by its name: a
 * last component (after '/' or '.') starting with acc, auc, f1, score,
 * reward or precision/recall is large, anything else (loss, err...) small.
 * -1 for a suffix other than those two. name must not be spec. */
int sr_metric_goal(const char *spec, char *name, size_t len);

/* A parameter's value in a trial's meta, "" when it has none (or m is
 * NULL: a trial whose meta could not be read). */
const char *sr_param_value(const struct sr_queue_job_meta *m, const char *name);
/* The parameters whose values differ between n trials' metas (NULL: one
 * that could not be read, taken as having none), in the first meta's
 * order: how many, their names (borrowed from the metas) in *out
 * (malloc'd, free it). */
size_t sr_params_varying(const struct sr_queue_job_meta *const *metas, size_t n,
    const char ***out);

#endif
