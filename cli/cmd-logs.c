/*
 * cmd-logs.c: `spotrun logs [-f] [--queue URL] JOB`: a job's output as its
 * agents shipped it to the queue (Q/logs/ID/, in segments), every attempt
 * of every run in order, each begun by a header line; -f follows it live,
 * reading the new segments every second, until the job's lease says it
 * ended (then what is left is read once more) or ^C. The output itself is
 * printed as shipped; what spotrun says around it (headers naming a
 * segment's key, errors quoting the queue) is escaped (termsafe.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "fleet-index.h"
#include "fleet-target.h"
#include "fleet.h"
#include "termsafe.h"
#include "util.h"

enum { LOGS_FOLLOW, LOGS_QUEUE };

static const struct sr_opt logs_opts[] = {
	[LOGS_FOLLOW] = { 'f', "follow", NULL, "follow the output until the job ends (or ^C)" },
	[LOGS_QUEUE] = { 0, "queue", "URL", "the queue: a store URL or a directory" },
	{ 0 }
};

#define FOLLOW_INTERVAL 1.0	/* seconds between two readings of a followed log */

struct out {
	const char *id;
	long long run;
	int attempt;
	int segments;		/* printed so far */
	int mid_line;		/* the last one did not end with a newline */
};

/* One segment: a header when its run or attempt is not the last one's. */
static int
print_segment(void *arg, const char *key, const char *data, size_t len)
{
	struct out *o = arg;
	const char *name = strrchr(key, '/');
	char safe[SR_TERMSAFE_LEN(SR_QUEUE_KEY_MAX)];
	long long run = -1;
	int attempt = -1, seg, n = 0;

	if (name == NULL || sscanf(name + 1, "%12lld-%4d-%6d%n", &run, &attempt, &seg, &n) != 3 ||
	    name[1 + n] != '\0')
		run = -1, attempt = -1;	/* not the writer's key: a header of its own */
	if (o->segments == 0 || run != o->run || attempt != o->attempt || run == -1) {
		if (o->mid_line)
			putchar('\n');
		if (run >= 0 && attempt == 0)	/* what the agent did before attempt 1 */
			printf("==> %s: run %lld, setup <==\n", o->id, run);
		else if (run >= 0)
			printf("==> %s: run %lld, attempt %d <==\n", o->id, run, attempt);
		else
			printf("==> %s: %s <==\n", o->id, sr_termsafe(key, safe, sizeof safe));
	}
	o->run = run;
	o->attempt = attempt;
	o->segments++;
	fwrite(data, 1, len, stdout);
	o->mid_line = len > 0 && data[len - 1] != '\n';
	fflush(stdout);
	return 0;
}

/* The job id of the argument; a sweep, or a NAME of nothing, said. */
static int
job_of(struct sr_fleet *fl, const char *arg, struct sr_queue_job_meta *m, char **id)
{
	struct sr_fleet_index ix;
	struct sr_fleet_ids ids;
	char err[SR_ERRMAX], safe[SR_TERMSAFE_LEN(SR_ERRMAX)];
	int rc = sr_fleet_targets((char *const[]){ (char *)arg }, 1, NULL, fl->where, &ids);

	*id = NULL;
	if (rc != 0)
		return rc;
	if (ids.n == 1 && !ids.of_sweep[0] && (rc = sr_queue_meta_read(fl->q, ids.v[0], m, err)) ==
	    SR_QUEUE_OK) {
		*id = sr_strdup(ids.v[0]);
		sr_fleet_ids_free(&ids);
		return 0;
	}
	if (ids.n == 1 && !ids.of_sweep[0] && rc != SR_QUEUE_NOTFOUND) {
		fprintf(stderr, "spotrun: queue %s: %s\n", fl->where,
		    sr_termsafe(err, safe, sizeof safe));
		sr_fleet_ids_free(&ids);
		return SR_EXIT_IOERR;
	}
	if (ids.n == 1 && !ids.of_sweep[0]) {	/* not a job: a sweep's name, or nothing */
		sr_fleet_ids_free(&ids);
		if (sr_fleet_index_read(fl->q, &ix, err) == -1) {
			fprintf(stderr, "spotrun: queue %s: %s\n", fl->where,
			    sr_termsafe(err, safe, sizeof safe));
			return SR_EXIT_IOERR;
		}
		rc = sr_fleet_targets((char *const[]){ (char *)arg }, 1, &ix, fl->where, &ids);
		sr_fleet_index_free(&ix);
		if (rc != 0)
			return rc;
		if (ids.n == 1 && !ids.of_sweep[0]) {	/* a marker without its job */
			fprintf(stderr, "spotrun: %s: not in queue %s\n", arg, fl->where);
			sr_fleet_ids_free(&ids);
			return SR_EXIT_NOINPUT;
		}
	}
	fprintf(stderr, "spotrun: %s is a sweep of %zu trial%s; spotrun logs shows one job: give "
	    "a trial's id, as in spotrun logs %s\n", arg, ids.n, ids.n == 1 ? "" : "s", ids.v[0]);
	sr_fleet_ids_free(&ids);
	return SR_EXIT_USAGE;
}

/* Whether the job's lease says it ended: 1 (its state in *state), 0 (not,
 * or not known now: a failure is said once). */
static int
ended(struct sr_fleet *fl, const struct sr_queue_job_meta *m, const char *id,
    enum sr_lease_state *state, int *warned)
{
	struct sr_lease_info li;
	struct sr_store *st;
	char err[SR_ERRMAX], safe[SR_TERMSAFE_LEN(SR_ERRMAX)];
	int rc;

	if ((st = sr_queue_ckpt_store(fl->q, m->store, err)) == NULL)
		rc = SR_LEASE_ERROR;
	else
		rc = sr_lease_read(st, id, &li, err);
	if (rc == SR_LEASE_OK) {
		*state = li.state;
		return li.state == SR_LEASE_SUCCEEDED || li.state == SR_LEASE_FAILED ||
		    li.state == SR_LEASE_CANCELLED;
	}
	if (rc != SR_LEASE_NOTFOUND && !*warned) {	/* goes on: the next reading may do */
		fprintf(stderr, "spotrun: warning: %s\n", sr_termsafe(err, safe, sizeof safe));
		*warned = 1;
	}
	return 0;
}

static int
cmd_logs_exec(const struct sr_args *a)
{
	struct sr_fleet fl;
	struct sr_queue_job_meta m;
	struct out o = { 0 };
	enum sr_lease_state state = SR_LEASE_QUEUED;
	char after[SR_QUEUE_KEY_MAX] = "", err[SR_ERRMAX], *id;
	char safe[SR_TERMSAFE_LEN(SR_ERRMAX)];
	int rc, done = 0, warned = 0, failed_once = 0;

	if ((rc = sr_fleet_open(&fl, "logs", sr_args_get(a, LOGS_QUEUE))) != 0)
		return rc;
	if ((rc = job_of(&fl, a->argv[0], &m, &id)) != 0) {
		sr_fleet_close(&fl);
		return rc;
	}
	o.id = id;
	for (;;) {
		if (sr_queue_log_read(fl.q, id, after, print_segment, &o, err) != 0) {
			if (!sr_args_has(a, LOGS_FOLLOW) || o.segments == 0) {
				fprintf(stderr, "spotrun: queue %s: %s\n", fl.where,
				    sr_termsafe(err, safe, sizeof safe));
				rc = SR_EXIT_IOERR;
				break;
			}
			if (!failed_once++)
				fprintf(stderr, "spotrun: warning: %s (trying again)\n",
				    sr_termsafe(err, safe, sizeof safe));
		}
		if (!sr_args_has(a, LOGS_FOLLOW) || done)
			break;
		if ((done = ended(&fl, &m, id, &state, &warned)))
			continue;	/* what came before the end */
		sr_sleep(FOLLOW_INTERVAL);
	}
	if (o.mid_line)
		putchar('\n');
	fflush(stdout);
	if (rc == 0 && done)
		fprintf(stderr, "spotrun: job %s %s\n", id, sr_lease_state_name(state));
	else if (rc == 0 && o.segments == 0)
		fprintf(stderr, "spotrun: job %s has no output in the queue yet\n", id);
	free(id);
	sr_queue_job_meta_free(&m);
	sr_fleet_close(&fl);
	return rc;
}

const struct sr_cmd_entry sr_cmd_logs_entry = {
	.name = "logs",
	.args = { .opts = logs_opts, .operands = "JOB", .min = 1, .max = 1 },
	.summary = "a queued job's output, across its attempts",
	.help = "Print a queued job's output as its agents shipped it to the queue, every\n"
	    "attempt in order, each after a line \"==> JOB: run R, attempt A <==\"\n"
	    "(what the agent did before attempt 1, the job's [job] setup, after\n"
	    "\"==> JOB: run R, setup <==\").\n"
	    "With -f, follow it live until the job ends (or ^C). JOB is a job's id\n"
	    "(a trial's NAME.NNN) or its job file.",
	.exec = cmd_logs_exec,
};
