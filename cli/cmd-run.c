/*
 * cmd-run.c: `spotrun run [-q] JOB.ini`: validate the job file, then
 * supervise the job on this machine until it finishes (run.c), and turn how
 * the run ended into spotrun's exit status and error line.
 */
#include "config.h"

#include <stdio.h>

#include "cmd.h"
#include "jobfile.h"
#include "run.h"
#include "sweep.h"

/* What went wrong, on stderr, for the results that are not the job's own. */
static void
print_error(const struct sr_jobspec *js, const struct sr_run_result *res, int code)
{
	switch (res->outcome) {
	case SR_RUN_FINISHED:
	case SR_RUN_FAILED:
	case SR_RUN_PREEMPTED:
		return;
	case SR_RUN_CANNOT_EXEC:
		fprintf(stderr, "spotrun: %s; exit %d\n", res->err, code);
		return;
	case SR_RUN_CANCELLED:
		return;
	case SR_RUN_ERR_ATTEMPT:
		fprintf(stderr, "spotrun: %s: %s\n", js->name, res->err);
		return;
	default:
		fprintf(stderr, "spotrun: %s\n", res->err);
		return;
	}
}

enum { RUN_QUIET };

static const struct sr_opt run_opts[] = {
	[RUN_QUIET] = { 'q', "quiet", NULL,
	    "print only the important lines: notices, checkpoints, the end" },
	{ 0 }
};

static int
cmd_run_exec(const struct sr_args *a)
{
	struct sr_jobspec *js;
	struct sr_run_opts o = { .exit_code = sr_cmd_run_code };
	struct sr_run_result res;
	const char *path = a->argv[0];
	int code;

	o.quiet = sr_args_has(a, RUN_QUIET) > 0;
	switch (sr_jobfile_load(path, &js)) {
	case SR_JOBFILE_OK:
		break;
	case SR_JOBFILE_INVALID:
		fprintf(stderr, "spotrun: %s: not started; fix the errors above (spotrun check %s)\n",
		    path, path);
		return SR_EXIT_BADSPEC;
	default:
		return SR_EXIT_BADSPEC;
	}
	if (js->nsweep > 0) {
		fprintf(stderr, "spotrun: %s: a sweep of %zu trials, not started; spotrun run runs "
		    "one job; submit a sweep with spotrun submit %s (spotrun agent runs its "
		    "trials)\n", path, sr_sweep_count(js), path);
		sr_jobspec_free(js);
		return SR_EXIT_USAGE;
	}
	/* the folder on this machine is the user's, set up by the user: setup
	 * is for the agents' machines, where the code arrives bare */
	if (js->setup != NULL && !o.quiet)
		fprintf(stderr, "spotrun: %s: setup not run: spotrun run runs the job in %s as it is "
		    "(an agent runs setup once per machine before the job)\n", js->name, js->workdir);
	sr_run_job(js, &o, &res);
	code = sr_cmd_run_code(&res);
	print_error(js, &res, code);
	sr_jobspec_free(js);
	return code;
}

const struct sr_cmd_entry sr_cmd_run_entry = {
	.name = "run",
	.args = { .opts = run_opts, .operands = "JOB.ini", .min = 1, .max = 1 },
	.summary = "supervise a job on this machine until it finishes",
	.help = "Validate the job file, then supervise the job until it finishes: restore its\n"
	    "newest checkpoint, launch it, ask it for checkpoints periodically and on a\n"
	    "preemption notice, commit them to the store, and restart it as [retry] says.\n"
	    "Exits with the job's own status, 75 when preempted (see spotrun(1)).",
	.exec = cmd_run_exec,
};
