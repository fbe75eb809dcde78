/*
 * cmd-requeue.c: `spotrun requeue` and `spotrun retry` [--queue URL]
 * JOB|SWEEP ...: put ended jobs back in the queue (sr_queue_requeue: the
 * lease back to queued by compare-and-swap, the cancel request removed,
 * the pending and status markers written again). requeue takes any ended
 * job (succeeded, failed, cancelled) and replaces a lease object that is
 * not a lease; retry takes the failed and cancelled ones. Of a sweep, the
 * trials whose status is another are skipped and counted; a job named by
 * itself is always asked for, since its lease, not its status marker, is
 * the truth.
 *
 * The lease keeps its epoch, never below min_epoch, so the next claim is
 * above anything its checkpoints were fenced with: min_epoch is the epoch
 * of the job's status marker (the last holder's). ckpt/ has no reader of
 * LATEST's epoch yet; when it does, min_epoch is the larger of the two
 * (which matters for a lease object replaced from nothing).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "fleet-index.h"
#include "fleet-target.h"
#include "fleet.h"
#include "status-view.h"
#include "termsafe.h"
#include "util.h"

enum { REQUEUE_QUEUE };

static const struct sr_opt requeue_opts[] = {
	[REQUEUE_QUEUE] = { 0, "queue", "URL", "the queue: a store URL or a directory" },
	{ 0 }
};

#define RETRY_STATES (SR_LEASE_BIT(SR_LEASE_FAILED) | SR_LEASE_BIT(SR_LEASE_CANCELLED))
#define REQUEUE_STATES (SR_LEASE_TERMINALS | SR_LEASE_FROM_MALFORMED)

/* What would work on job id in state (its status marker's), for a refusal
 * of cmd, such as "; ... to run a succeeded one again: spotrun requeue
 * ID" ("" when nothing would); into buf (len bytes). */
static const char *
what_works(const char *cmd, const char *id, enum sr_lease_state state, char *buf, size_t len)
{
	char safe[SR_TERMSAFE_LEN(SR_QUEUE_ID_MAX)];

	sr_termsafe(id, safe, sizeof safe);
	if (state == SR_LEASE_RUNNING)
		snprintf(buf, len, "; to stop it first: spotrun cancel %s, then spotrun %s %s "
		    "once it has ended", safe, cmd, safe);
	else if (state == SR_LEASE_QUEUED || state == SR_LEASE_RELEASED)
		snprintf(buf, len, "; spotrun status %s says why it waits", safe);
	else if (strcmp(cmd, "retry") == 0 && state == SR_LEASE_SUCCEEDED)
		snprintf(buf, len, "; retry takes failed and cancelled jobs: to run a "
		    "succeeded one again: spotrun requeue %s", safe);
	else
		buf[0] = '\0';
	return buf;
}

/* requeue or retry (cmd), the lease states it takes in states. */
static int
requeue_exec(const struct sr_args *a, const char *cmd, unsigned states)
{
	struct sr_fleet fl;
	struct sr_fleet_index ix;
	struct sr_fleet_ids ids;
	long skipped[SR_LEASE_NSTATES] = { 0 }, nskipped = 0, again = 0;
	char err[SR_ERRMAX], said[256], hint[SR_TERMSAFE_LEN(SR_QUEUE_ID_MAX) * 2 + 128];
	int rc, worst = 0;
	size_t i;

	if ((rc = sr_fleet_open(&fl, cmd, sr_args_get(a, REQUEUE_QUEUE))) != 0)
		return rc;
	if (sr_fleet_index_read(fl.q, &ix, err) == -1) {	/* the epochs, a sweep's trials */
		fprintf(stderr, "spotrun: queue %s: %s\n", fl.where, err);
		sr_fleet_close(&fl);
		return SR_EXIT_IOERR;
	}
	if ((rc = sr_fleet_targets(a->argv, a->argc, &ix, fl.where, &ids)) != 0) {
		sr_fleet_index_free(&ix);
		sr_fleet_close(&fl);
		return rc;
	}
	for (i = 0; i < ids.n; i++) {
		const struct sr_fleet_row *row = sr_fleet_index_find(&ix, ids.v[i]);

		if (ids.of_sweep[i] && row != NULL && !(states & SR_LEASE_BIT(row->state))) {
			skipped[row->state]++;
			nskipped++;
			continue;
		}
		rc = sr_queue_requeue(fl.q, ids.v[i], states, row != NULL ? row->epoch : 0, &fl.me,
		    err);
		if (rc == SR_QUEUE_OK) {
			if (row != NULL)
				printf("%s: queued again (it was %s)\n", ids.v[i],
				    sr_lease_state_name(row->state));
			else
				printf("%s: queued again\n", ids.v[i]);
			again++;
			continue;
		}
		if (rc == SR_QUEUE_NOTFOUND && row != NULL)	/* never claimed */
			what_works(cmd, ids.v[i], SR_LEASE_QUEUED, hint, sizeof hint);
		else if (rc == SR_QUEUE_BUSY && row != NULL)
			what_works(cmd, ids.v[i], row->state, hint, sizeof hint);
		else
			hint[0] = '\0';
		fprintf(stderr, "spotrun: %s: not %s: %s%s\n", ids.v[i], strcmp(cmd, "retry") == 0 ?
		    "retried" : "requeued", err, hint);
		if (rc == SR_QUEUE_BUSY || (rc == SR_QUEUE_NOTFOUND && row != NULL)) {
			if (worst == 0)
				worst = SR_EXIT_UNAVAILABLE;
		} else if (rc == SR_QUEUE_NOTFOUND) {
			if (worst == 0 || worst == SR_EXIT_UNAVAILABLE)
				worst = SR_EXIT_NOINPUT;
		} else
			worst = SR_EXIT_IOERR;
	}
	if (nskipped > 0)
		printf("%ld queued again, %ld skipped (%s): %s takes %s jobs: %s\n", again, nskipped,
		    sr_status_states_line(skipped, said, sizeof said), cmd, strcmp(cmd, "retry") == 0 ?
		    "failed and cancelled" : "ended", fl.where);
	else
		printf("%ld queued again: %s\n", again, fl.where);
	fflush(stdout);
	sr_fleet_ids_free(&ids);
	sr_fleet_index_free(&ix);
	sr_fleet_close(&fl);
	return worst;
}

static int
cmd_requeue_exec(const struct sr_args *a)
{
	return requeue_exec(a, "requeue", REQUEUE_STATES);
}

static int
cmd_retry_exec(const struct sr_args *a)
{
	return requeue_exec(a, "retry", RETRY_STATES);
}

const struct sr_cmd_entry sr_cmd_requeue_entry = {
	.name = "requeue",
	.args = { .opts = requeue_opts, .operands = "JOB|SWEEP ...", .min = 1, .max = -1 },
	.summary = "queue ended jobs again",
	.help = "Put jobs that ended (succeeded, failed or cancelled) back in the queue for\n"
	    "an agent to run again: a job, a sweep's trials (those that have not ended\n"
	    "are skipped), a job or sweep file's jobs. A lease object that is not a\n"
	    "lease is replaced by a queued one.",
	.exec = cmd_requeue_exec,
};

const struct sr_cmd_entry sr_cmd_retry_entry = {
	.name = "retry",
	.args = { .opts = requeue_opts, .operands = "JOB|SWEEP ...", .min = 1, .max = -1 },
	.summary = "queue failed and cancelled jobs again",
	.help = "Put jobs that failed or were cancelled back in the queue for an agent to\n"
	    "run again, from their newest checkpoint: a job, a sweep's trials (the\n"
	    "others are skipped), a job or sweep file's jobs.",
	.exec = cmd_retry_exec,
};
