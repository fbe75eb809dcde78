/*
 * cmd-up.c: `spotrun up POOL.ini --queue URL [--dry-run] [--prices FILE]`:
 * acquire the spot VMs a pool file describes (spotrun-pool(5)) through its
 * cloud's own fleet engine, each VM an agent of the queue. This build has
 * the plan only: --dry-run prints it (fleet/pool-plan.c); without it `up`
 * says that creating is not built yet and exits 69.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cloudinit.h"
#include "cmd.h"
#include "pool-plan.h"
#include "util.h"

enum { UP_QUEUE, UP_DRY_RUN, UP_PRICES };

static const struct sr_opt up_opts[] = {
	[UP_QUEUE] = { 0, "queue", "URL", "the queue the VMs' agents serve (default: "
	    "$SPOTRUN_QUEUE)" },
	[UP_DRY_RUN] = { 'n', "dry-run", NULL, "print what would be created and its hourly "
	    "cost" },
	[UP_PRICES] = { 0, "prices", "FILE", "the price table (default: the built-in one)" },
	{ 0 }
};

static int
cmd_up_exec(const struct sr_args *a)
{
	struct sr_jobspec_errors errs;
	struct sr_cinit_opts o = { .queue = sr_args_get(a, UP_QUEUE) };
	struct sr_prices *t = NULL;
	struct sr_pool *p;
	const char *path = a->argv[0], *prices = sr_args_get(a, UP_PRICES);
	char err[SR_ERRMAX];
	int rc = 0;

	if (sr_pool_load(path, &p, &errs) == -1) {
		sr_jobspec_errors_print(path, &errs, stderr);
		sr_jobspec_errors_free(&errs);
		return SR_EXIT_BADSPEC;
	}
	if (o.queue == NULL)
		o.queue = getenv("SPOTRUN_QUEUE");
	/* the queue goes into the user-data and every resource's tags: the
	 * same checks as cloud-init's (no credential, printable ASCII) */
	if (o.queue == NULL || sr_cinit_check(&o, NULL, NULL, err) == -1) {
		fprintf(stderr, "spotrun up: %s\n", o.queue == NULL ? "no queue; give --queue "
		    "URL or set SPOTRUN_QUEUE" : err);
		sr_pool_free(p);
		return SR_EXIT_USAGE;
	}
	if (!sr_args_has(a, UP_DRY_RUN)) {
		fprintf(stderr, "spotrun up: creating a pool on %s is not in this build yet; "
		    "--dry-run prints the plan\n", sr_pool_cloud_name(p->cloud));
		sr_pool_free(p);
		return SR_EXIT_UNAVAILABLE;
	}
	if ((prices != NULL ? sr_prices_load(prices, &t, err) : sr_prices_builtin(&t, err)) == -1) {
		fprintf(stderr, "spotrun up: %s\n", err);
		sr_pool_free(p);
		return SR_EXIT_CONFIG;
	}
	if (sr_pool_plan_print(p, o.queue, t, stdout, err) == -1) {
		fprintf(stderr, "spotrun up: %s: %s\n", path, err);
		rc = SR_EXIT_BADSPEC;
	} else if (fflush(stdout) == EOF || ferror(stdout)) {
		sr_errno(err, "write standard output");
		fprintf(stderr, "spotrun up: %s\n", err);
		rc = SR_EXIT_IOERR;
	}
	sr_prices_free(t);
	sr_pool_free(p);
	return rc;
}

const struct sr_cmd_entry sr_cmd_up_entry = {
	.name = "up",
	.args = { .opts = up_opts, .operands = "POOL.ini", .min = 1, .max = 1 },
	.summary = "acquire a pool of spot VMs for a queue (this build: --dry-run)",
	.help = "Acquire the spot VMs that POOL.ini describes (spotrun-pool(5)) through\n"
	    "the cloud's fleet engine (AWS: an EC2 Fleet of type maintain; GCP: a\n"
	    "regional managed instance group; Azure: a Flexible VM scale set), each\n"
	    "VM an agent of the queue. --dry-run prints the engine, the resources\n"
	    "and their tags, the launch configuration, the placement candidates in\n"
	    "order and the hourly cost range by the price table. This build creates\n"
	    "nothing: without --dry-run it exits 69.",
	.exec = cmd_up_exec,
};
