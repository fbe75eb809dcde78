/*
 * cmd-cancel.c: `spotrun cancel [--checkpoint] [--queue URL] JOB|SWEEP
 * ...`: cancel queued jobs (sr_queue_cancel): one no agent runs is
 * cancelled at once (its lease claimed and set cancelled, so a claim
 * racing with it loses); a running one is asked to stop, and its agent,
 * which reads the request at its next heartbeat, stops it (after a last
 * checkpoint with --checkpoint); one that ended is left as it is. Says
 * which for each job.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "fleet-index.h"
#include "fleet-target.h"
#include "fleet.h"
#include "util.h"

enum { CANCEL_CHECKPOINT, CANCEL_QUEUE };

static const struct sr_opt cancel_opts[] = {
	[CANCEL_CHECKPOINT] = { 0, "checkpoint", NULL, "a running job saves a last checkpoint "
	    "first" },
	[CANCEL_QUEUE] = { 0, "queue", "URL", "the queue: a store URL or a directory" },
	{ 0 }
};

static int
cmd_cancel_exec(const struct sr_args *a)
{
	struct sr_fleet fl;
	struct sr_fleet_index ix;
	struct sr_fleet_ids ids;
	struct sr_queue_status st;
	enum sr_queue_cancel how;
	char err[SR_ERRMAX];
	long done = 0, asked = 0, over = 0;
	int rc, worst = 0, ckpt = sr_args_has(a, CANCEL_CHECKPOINT) > 0;
	size_t i;

	if ((rc = sr_fleet_open(&fl, "cancel", sr_args_get(a, CANCEL_QUEUE))) != 0)
		return rc;
	if ((rc = sr_fleet_read_targets(&fl, a->argv, a->argc, &ix, &ids)) != 0) {
		sr_fleet_close(&fl);
		return rc;
	}
	for (i = 0; i < ids.n; i++) {
		rc = sr_queue_cancel(fl.q, ids.v[i], ckpt, &fl.me, &how, err);
		if (rc != SR_QUEUE_OK) {
			fprintf(stderr, "spotrun: %s\n", err);
			if (worst == 0 || rc != SR_QUEUE_NOTFOUND)
				worst = rc == SR_QUEUE_NOTFOUND ? SR_EXIT_NOINPUT : SR_EXIT_IOERR;
			continue;
		}
		if (how == SR_QUEUE_CANCEL_DONE) {
			printf("%s: cancelled (no agent was running it)\n", ids.v[i]);
			done++;
		} else if (how == SR_QUEUE_CANCEL_ASKED) {
			printf("%s: asked to stop: the agent running it stops it at its next heartbeat "
			    "(within 20 s by default)%s\n", ids.v[i], ckpt ?
			    ", after a last checkpoint" : "");
			asked++;
		} else {
			if (sr_queue_status_get(fl.q, ids.v[i], &st, err) == SR_QUEUE_OK)
				printf("%s: had ended (%s): nothing to cancel\n", ids.v[i],
				    sr_lease_state_name(st.state));
			else
				printf("%s: had ended: nothing to cancel\n", ids.v[i]);
			over++;
		}
	}
	printf("%ld cancelled, %ld asked to stop, %ld had ended: %s\n", done, asked, over,
	    fl.where);
	fflush(stdout);
	sr_fleet_ids_free(&ids);
	sr_fleet_index_free(&ix);
	sr_fleet_close(&fl);
	return worst;
}

const struct sr_cmd_entry sr_cmd_cancel_entry = {
	.name = "cancel",
	.args = { .opts = cancel_opts, .operands = "JOB|SWEEP ...", .min = 1, .max = -1 },
	.summary = "cancel queued jobs, or stop running ones",
	.help = "Cancel jobs of the queue (a job, a sweep's trials, a job or sweep file's\n"
	    "jobs): one no agent is running is cancelled at once; a running one is asked\n"
	    "to stop, and its agent stops it at its next heartbeat, after a last\n"
	    "checkpoint with --checkpoint; one that ended is left as it is.",
	.exec = cmd_cancel_exec,
};
