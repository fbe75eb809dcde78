/*
 * cmd-check.c: `spotrun check [-q] JOB.ini ...`: validate job files without
 * running anything, printing every error as FILE:LINE: message (stderr) and
 * "FILE: ok" for each valid file, "FILE: ok: sweep NAME, N trials" for a
 * sweep (stdout, unless -q). Exit 0 when all are
 * valid, 65 when any is not, 64 on a usage error.
 */
#include "config.h"

#include <stdio.h>
#include <unistd.h>

#include "cmd.h"
#include "jobspec.h"
#include "sweep.h"

static int
cmd_check_exec(int argc, char **argv)
{
	struct sr_jobspec_errors errs = { NULL, 0 };
	struct sr_jobspec *js;
	int ch, quiet = 0, bad = 0, i;

	optind = 1;
	while ((ch = getopt(argc, argv, sr_cmd_check_entry.getopt)) != -1) {
		switch (ch) {
		case 'q':
			quiet = 1;
			break;
		default:
			sr_cmd_usage(&sr_cmd_check_entry, stderr);
			return SR_EXIT_USAGE;
		}
	}
	if (optind == argc) {
		sr_cmd_usage(&sr_cmd_check_entry, stderr);
		return SR_EXIT_USAGE;
	}
	for (i = optind; i < argc; i++) {
		if (sr_jobspec_load(argv[i], &js, &errs) == -1) {
			sr_jobspec_errors_print(argv[i], &errs, stderr);
			sr_jobspec_errors_free(&errs);
			bad = 1;
			continue;
		}
		if (!quiet && js->nsweep > 0)
			printf("%s: ok: sweep %s, %zu trial%s\n", argv[i], js->name,
			    sr_sweep_count(js), sr_sweep_count(js) == 1 ? "" : "s");
		else if (!quiet)
			printf("%s: ok\n", argv[i]);
		sr_jobspec_free(js);
	}
	fflush(stdout);
	return bad ? SR_EXIT_BADSPEC : 0;
}

const struct sr_cmd_entry sr_cmd_check_entry = {
	"check", "[-q] JOB.ini ...", "q", "validate job files", cmd_check_exec
};
