/*
 * cmd-check.c: `spotrun check [-q] JOB.ini ...`: validate job files without
 * running anything, printing every error as FILE:LINE: message (stderr) and
 * "FILE: ok" for each valid file, "FILE: ok: sweep NAME, N trials" for a
 * sweep, "FILE: ok: a gang of N nodes" (or MIN-MAX) for a job of several
 * machines (stdout, unless -q). Exit 0 when all are
 * valid, 65 when any is not, 64 on a usage error.
 */
#include "config.h"

#include <stdio.h>

#include "cmd.h"
#include "jobfile.h"
#include "sweep.h"

enum { CHECK_QUIET };

static const struct sr_opt check_opts[] = {
	[CHECK_QUIET] = { 'q', "quiet", NULL, "print only the errors, not FILE: ok" },
	{ 0 }
};

static int
cmd_check_exec(const struct sr_args *a)
{
	struct sr_jobspec *js;
	int bad = 0, i;

	for (i = 0; i < a->argc; i++) {
		if (sr_jobfile_load(a->argv[i], &js) != SR_JOBFILE_OK) {
			bad = 1;
			continue;
		}
		if (!sr_args_has(a, CHECK_QUIET) && js->nsweep > 0)
			printf("%s: ok: sweep %s, %zu trial%s\n", a->argv[i], js->name,
			    sr_sweep_count(js), sr_sweep_count(js) == 1 ? "" : "s");
		else if (!sr_args_has(a, CHECK_QUIET) && js->nodes_min < js->nodes_max)
			printf("%s: ok: a gang of %d-%d nodes\n", a->argv[i], js->nodes_min,
			    js->nodes_max);
		else if (!sr_args_has(a, CHECK_QUIET) && js->nodes_max > 1)
			printf("%s: ok: a gang of %d nodes\n", a->argv[i], js->nodes_max);
		else if (!sr_args_has(a, CHECK_QUIET))
			printf("%s: ok\n", a->argv[i]);
		sr_jobspec_free(js);
	}
	fflush(stdout);
	return bad ? SR_EXIT_BADSPEC : 0;
}

const struct sr_cmd_entry sr_cmd_check_entry = {
	.name = "check",
	.args = { .opts = check_opts, .operands = "JOB.ini ...", .min = 1, .max = -1 },
	.summary = "validate job files",
	.help = "Validate job files without running anything: every error is printed as\n"
	    "FILE:LINE: message, naming the key and what would be valid. Exits 0 when\n"
	    "every file is valid, 65 when any is not.",
	.exec = cmd_check_exec,
};
