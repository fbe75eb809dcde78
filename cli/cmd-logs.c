/*
 * cmd-logs.c: `spotrun logs [-f] [--queue URL] JOB`: a job's output as its
 * agents shipped it to the queue (Q/logs/ID/, in segments), every attempt
 * of every run in order, each begun by a header line; -f follows it live,
 * reading the new segments every second, until the job's lease says it
 * ended (then what is left is read once more) or ^C. On a terminal the
 * output is escaped as what spotrun says around it is (headers naming a
 * segment's key, errors quoting the queue: termsafe.h), but for newline,
 * tab and carriage return (a progress bar's), so that a job's bytes
 * cannot retitle, clear or reprogram the terminal of whoever reads them;
 * --raw, or output that is not a terminal, gets them as shipped.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "fleet-index.h"
#include "fleet-target.h"
#include "fleet.h"
#include "termsafe.h"
#include "util.h"

enum { LOGS_FOLLOW, LOGS_RAW, LOGS_QUEUE };

static const struct sr_opt logs_opts[] = {
	[LOGS_FOLLOW] = { 'f', "follow", NULL, "follow the output until the job ends (or ^C)" },
	[LOGS_RAW] = { 0, "raw", NULL, "on a terminal too, print the output as shipped" },
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
	int escape;		/* escape what a terminal acts on (not --raw, a tty) */
	char cut[4];		/* a character the last segment ended inside */
	size_t ncut;
};

/* The length of the UTF-8 character lead byte c starts (0: none). */
static size_t
utf8_len(unsigned char c)
{
	return c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 :
	    c >= 0xf0 && c <= 0xf4 ? 4 : 0;
}

/* data (len bytes) on stdout, what a terminal would act on escaped as
 * sr_termsafe does, newline, tab and carriage return kept. Unless last,
 * a character the data ends inside is kept in o->cut for the next
 * segment, which begins with the rest of it. */
static void
put_escaped(struct out *o, const char *data, size_t len, int last)
{
	char *all = NULL;
	uint32_t cp;
	size_t i, n;

	if (o->ncut > 0) {
		all = sr_malloc(o->ncut + len);
		memcpy(all, o->cut, o->ncut);
		memcpy(all + o->ncut, data, len);
		data = all;
		len += o->ncut;
		o->ncut = 0;
	}
	for (i = 0; i < len; i += n) {
		n = sr_utf8_char(data + i, len - i, &cp);
		if (n == 0 && !last && len - i < utf8_len((unsigned char)data[i])) {
			memcpy(o->cut, data + i, len - i);
			o->ncut = len - i;
			break;
		}
		if (n > 0 && (cp == '\n' || cp == '\t' || cp == '\r' || !sr_term_acts_on(cp)))
			fwrite(data + i, 1, n, stdout);
		else if (n == 0 || cp < 0x80) {
			printf("\\x%02x", (unsigned char)data[i]);
			n = 1;
		} else
			printf("\\u{%x}", (unsigned)cp);
	}
	free(all);
}

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
		if (o->ncut > 0)	/* the last segment of an attempt ended inside one */
			put_escaped(o, "", 0, 1);
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
	if (o->escape)
		put_escaped(o, data, len, 0);
	else
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
	o.escape = !sr_args_has(a, LOGS_RAW) && isatty(STDOUT_FILENO);
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
	if (o.ncut > 0)		/* the output ended inside a character */
		put_escaped(&o, "", 0, 1);
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
	    "(a trial's NAME.NNN) or its job file. On a terminal, what the job wrote\n"
	    "that the terminal would act on (escape sequences, control characters but\n"
	    "newline, tab and carriage return) is shown escaped, as \\x1b; --raw prints\n"
	    "it as shipped.",
	.exec = cmd_logs_exec,
};
