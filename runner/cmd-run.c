/*
 * cmd-run.c: `spotrun run [-q] JOB.ini`: validate the job file, then
 * supervise the job on this machine until it finishes (run.c), and turn how
 * the run ended into spotrun's exit status and error line.
 */
#include "config.h"

#include <stdio.h>
#include <unistd.h>

#include "cmd.h"
#include "jobspec.h"
#include "run.h"
#include "sweep.h"

/* The exit status for a run's result (doc/spotrun.1, EXIT STATUS): the
 * job's own code when it ran, 126/127 when it could not be executed, 75
 * when preempted, else spotrun's own sysexits code. */
static int
run_exit_code(const struct sr_run_result *res)
{
	switch (res->outcome) {
	case SR_RUN_FINISHED:
	case SR_RUN_FAILED:
	case SR_RUN_CANNOT_EXEC:
		return res->code;
	case SR_RUN_PREEMPTED:
		return SR_EXIT_PREEMPTED;
	case SR_RUN_ERR_SYSTEM:
		return SR_EXIT_OSERR;
	case SR_RUN_ERR_UNAVAILABLE:
		return SR_EXIT_UNAVAILABLE;
	case SR_RUN_ERR_STORE:
	case SR_RUN_ERR_ATTEMPT:
		return SR_EXIT_IOERR;
	case SR_RUN_ERR_PROVIDER:
		return SR_EXIT_SOFTWARE;
	}
	return SR_EXIT_SOFTWARE;
}

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
	case SR_RUN_ERR_ATTEMPT:
		fprintf(stderr, "spotrun: %s: %s\n", js->name, res->err);
		return;
	default:
		fprintf(stderr, "spotrun: %s\n", res->err);
		return;
	}
}

static int
cmd_run_exec(int argc, char **argv)
{
	struct sr_jobspec_errors errs = { NULL, 0 };
	struct sr_jobspec *js;
	struct sr_run_opts o = { 0, run_exit_code };
	struct sr_run_result res;
	int ch, code;

	optind = 1;
	while ((ch = getopt(argc, argv, sr_cmd_run_entry.getopt)) != -1) {
		switch (ch) {
		case 'q':
			o.quiet = 1;
			break;
		default:
			sr_cmd_usage(&sr_cmd_run_entry, stderr);
			return SR_EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		sr_cmd_usage(&sr_cmd_run_entry, stderr);
		return SR_EXIT_USAGE;
	}
	if (sr_jobspec_load(argv[optind], &js, &errs) == -1) {
		sr_jobspec_errors_print(argv[optind], &errs, stderr);
		sr_jobspec_errors_free(&errs);
		fprintf(stderr, "spotrun: %s: not started; fix the errors above (spotrun check %s)\n",
		    argv[optind], argv[optind]);
		return SR_EXIT_BADSPEC;
	}
	if (js->nsweep > 0) {
		fprintf(stderr, "spotrun: %s: a sweep of %zu trials, not started; spotrun run runs "
		    "one job; submit a sweep with spotrun submit %s (spotrun agent runs its "
		    "trials)\n", argv[optind], sr_sweep_count(js), argv[optind]);
		sr_jobspec_free(js);
		return SR_EXIT_USAGE;
	}
	sr_run_job(js, &o, &res);
	code = run_exit_code(&res);
	print_error(js, &res, code);
	sr_jobspec_free(js);
	return code;
}

const struct sr_cmd_entry sr_cmd_run_entry = {
	"run", "[-q] JOB.ini", "+q", "supervise a job on this machine until it finishes",
	cmd_run_exec
};
