/*
 * submit-jobs.h: what `spotrun submit` puts in the queue, worked out
 * before anything is written: every file loaded and validated, each sweep
 * expanded into its trials (runner/sweep.h), each job with its id, spec
 * text, parameters and requirements; and the same under another name for
 * `--again`.
 */
#ifndef SR_SUBMIT_JOBS_H
#define SR_SUBMIT_JOBS_H

#include <stddef.h>

#include "jobspec.h"
#include "queue.h"

/* One job to submit. */
struct sr_submit_job {
	char *id;			/* its name: NAME, or NAME.NNN for a trial */
	size_t file;			/* index into the plan's files */
	struct sr_queue_param *params;	/* a trial's parameters (strings owned) */
	size_t nparams;
	char *spec;			/* its job file: as given, or the trial's */
	size_t spec_len;
};

/* One file given. */
struct sr_submit_file {
	const char *path;		/* as given */
	struct sr_jobspec *js;
	char *name;			/* the name its jobs are submitted under */
	size_t first, n;		/* its jobs in the plan */
	int sweep;			/* 1: a sweep file */
	size_t same_as;			/* (size_t)-1, or the file it repeats */
};

struct sr_submit_plan {
	struct sr_submit_file *files;
	size_t nfiles;
	struct sr_submit_job *jobs;
	size_t njobs;
};

/*
 * Load the n files (each as `spotrun check` does, every error printed)
 * and expand them into p under their own names (sr_submit_plan_free). A
 * file given twice is kept once (same_as). 0, or after saying why on
 * stderr 65: a file is not valid, or two files make one id with different
 * job files (nothing is planned then).
 */
int sr_submit_plan(char *const *paths, int n, struct sr_submit_plan *p);
void sr_submit_plan_free(struct sr_submit_plan *p);

/*
 * Expand file f of p again under name (`submit --again`): a job file with
 * its name line rewritten, a sweep's trials as name.NNN. -1 with err when
 * a name would be longer than a job name may be.
 */
int sr_submit_rename(struct sr_submit_plan *p, size_t f, const char *name, char *err);

/* "lr=0.1, seed=3": job j's parameters (malloc'd; "" for a plain job). */
char *sr_submit_params(const struct sr_submit_job *j);

/* The first line where two job files differ, for "what differs": 0 when
 * they are the same, else its number with both lines (cut to 100 bytes)
 * in a and b; a trial's first line, which names the sweep's content id,
 * is passed over when both have one. */
int sr_submit_diff(const char *x, size_t xlen, const char *y, size_t ylen, char *a, char *b,
    size_t len);

#endif
