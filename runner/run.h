/*
 * run.h: supervising one job through its attempts: restore, launch, watch
 * notices, checkpoint, stop, and play the next VM or restart. The engine
 * says how the run ended (struct sr_run_result); what exit status that
 * becomes is the caller's business: `spotrun run` (cmd-run.c) maps it to
 * the codes of doc/spotrun.1.
 */
#ifndef SR_RUN_H
#define SR_RUN_H

#include "util.h"

struct sr_jobspec;

/* How a run ended. */
enum sr_run_outcome {
	SR_RUN_FINISHED,	/* the job exited 0 */
	SR_RUN_FAILED,		/* the job exited non-zero or was killed, and is
				 * not restarted (no restart left, or not for
				 * this code, or stopped by the user) */
	SR_RUN_PREEMPTED,	/* preempted, and no next machine follows here */
	SR_RUN_CANNOT_EXEC,	/* the command could not be executed */
	/* spotrun's own errors; err says what failed */
	SR_RUN_ERR_SYSTEM,	/* directories, the lock file, pipes, signals */
	SR_RUN_ERR_UNAVAILABLE,	/* this machine lacks what the job needs (GPUs),
				 * or another run of the job holds its lock */
	SR_RUN_ERR_STORE,	/* the store could not be opened */
	SR_RUN_ERR_PROVIDER,	/* the provider could not be set up */
	SR_RUN_ERR_CONFIG,	/* a setting the job file check could not judge
				 * turned out bad (a trace_start the trace, read
				 * only now, does not allow): the job file's to fix */
	SR_RUN_ERR_ATTEMPT	/* an attempt could not go on: its restore, its
				 * log, the provider's VM, the spawn */
};

struct sr_run_result {
	enum sr_run_outcome outcome;
	/* FINISHED, FAILED: the job's exit code (128+N when killed by signal
	 * N); CANNOT_EXEC: 126, or 127 when not found, as a shell gives. */
	int code;
	int exec_errno;		/* CANNOT_EXEC: why */
	char err[SR_ERRMAX];	/* CANNOT_EXEC and the errors: "verb object: reason" */
};

struct sr_run_opts {
	int quiet;		/* timeline: only the important lines */
	/* The exit status the caller will give for a result, which the run's
	 * last line shows ("exit 75: 1 attempt, ..."); NULL: res->code. */
	int (*exit_code)(const struct sr_run_result *res);
};

/* Run the job to its end and say how it ended in *res. The timeline and
 * the job's output go to stderr/stdout as the run goes; the errors of
 * res->err are the caller's to print. */
enum sr_run_outcome sr_run_job(struct sr_jobspec *js, const struct sr_run_opts *o,
    struct sr_run_result *res);

#endif
