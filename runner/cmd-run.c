/*
 * cmd-run.c: `spotrun run [-q] JOB.ini`: validate the job file, then
 * supervise the job on this machine until it finishes (run.c).
 */
#include "config.h"

#include <stdio.h>
#include <unistd.h>

#include "cmd.h"
#include "jobspec.h"
#include "run.h"

static int
cmd_run_exec(int argc, char **argv)
{
	struct sr_jobspec_errors errs = { NULL, 0 };
	struct sr_jobspec *js;
	struct sr_run_opts o = { 0 };
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
	code = sr_run_job(js, &o);
	sr_jobspec_free(js);
	return code;
}

const struct sr_cmd_entry sr_cmd_run_entry = {
	"run", "[-q] JOB.ini", "+q", "supervise a job on this machine until it finishes",
	cmd_run_exec
};
