/*
 * run.h: supervising one job through its attempts: restore, launch, watch
 * notices, checkpoint, stop, and play the next VM or restart. `spotrun run`
 * is a thin wrapper around sr_run_job.
 */
#ifndef SR_RUN_H
#define SR_RUN_H

struct sr_jobspec;

struct sr_run_opts {
	int quiet;		/* timeline: only the important lines */
};

/* Run the job to its end. Returns the process exit code: the job's code
 * (128+N when killed by signal N), 126/127 when it cannot be executed, 75
 * when preempted, or one of spotrun's own codes (cmd.h). */
int sr_run_job(struct sr_jobspec *js, const struct sr_run_opts *o);

#endif
