/*
 * cmd-ls.c: `spotrun ls [-a] [-s STORE] JOB.ini|NAME`: the committed
 * checkpoints of a job (sequence, step, time, files, raw and stored size,
 * ratio; one that a restore would refuse marked unusable, with why and what
 * a restore falls back to), or with -a its attempts, run by run: which run,
 * when, how long, on which machine, from which step, how many checkpoints,
 * and how each ended. What the store says (records, why a checkpoint is
 * unusable, errors quoting it) reaches the terminal escaped (termsafe.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ckpt.h"
#include "cmd.h"
#include "record.h"
#include "store.h"
#include "target.h"
#include "termsafe.h"
#include "util.h"

enum { LS_ATTEMPTS, LS_STORE };

static const struct sr_opt ls_opts[] = {
	[LS_ATTEMPTS] = { 'a', "attempts", NULL, "list the job's attempts instead, run by run" },
	[LS_STORE] = { 's', "store", "STORE", "look in this store: a URL or a directory" },
	{ 0 }
};

/* An unusable checkpoint, told after the table. */
struct ls_problem {
	uint64_t seq;
	int is_latest;
	int has_fallback;	/* an older usable checkpoint exists */
	uint64_t fallback_seq;
	long long fallback_step;
	char why[SR_ERRMAX];
};

struct ls_state {
	int n;
	/* the newest usable checkpoint listed so far */
	int have_usable;
	uint64_t usable_seq;
	long long usable_step;
	struct ls_problem *problems;
	size_t nproblems;
	struct sr_attempt_record *attempts;	/* -a: every record, by run */
	size_t nattempts;
};

static void
ls_note_problem(struct ls_state *s, const struct sr_ckpt_stats *ck, int is_latest)
{
	struct ls_problem *p;

	s->problems = sr_reallocarray(s->problems, s->nproblems + 1, sizeof *s->problems);
	p = &s->problems[s->nproblems++];
	p->seq = ck->seq;
	p->is_latest = is_latest;
	p->has_fallback = s->have_usable;
	p->fallback_seq = s->usable_seq;
	p->fallback_step = s->usable_step;
	strlcpy(p->why, ck->problem, sizeof p->why);
}

static int
ls_row(const struct sr_ckpt_stats *ck, int is_latest, void *arg)
{
	struct ls_state *s = arg;
	char when[32], raw[32], stored[32], step[32];
	time_t t = (time_t)ck->created;
	struct tm tm;

	if (s->n++ == 0)
		printf("%-6s %-10s %-19s %7s %10s %10s %6s\n", "SEQ", "STEP", "CREATED", "FILES", "RAW",
		    "STORED", "RATIO");
	if (ck->problem != NULL) {
		/* what its manifest says cannot be trusted */
		printf("%-6llu %-10s %-19s %7s %10s %10s %6s  %s\n", (unsigned long long)ck->seq,
		    "-", "-", "-", "-", "-", "-", is_latest ? "latest unusable" : "unusable");
		ls_note_problem(s, ck, is_latest);
		return 0;
	}
	localtime_r(&t, &tm);
	strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
	if (ck->step >= 0)
		snprintf(step, sizeof step, "%lld", ck->step);
	else
		strlcpy(step, "-", sizeof step);
	printf("%-6llu %-10s %-19s %7llu %10s %10s %6.3f%s\n", (unsigned long long)ck->seq, step, when,
	    (unsigned long long)ck->files, sr_fmt_bytes(ck->raw_bytes, raw, sizeof raw),
	    sr_fmt_bytes(ck->stored_bytes, stored, sizeof stored),
	    ck->raw_bytes ? (double)ck->stored_bytes / (double)ck->raw_bytes : 0.0,
	    is_latest ? "  latest" : "");
	s->have_usable = 1;
	s->usable_seq = ck->seq;
	s->usable_step = ck->step;
	return 0;
}

/* The warnings after the table: one line per unusable checkpoint, and for
 * the latest what a restore uses instead (restore.c tries the newest
 * first, then each older one). */
static void
ls_tell_problems(const struct ls_state *s)
{
	char why[SR_TERMSAFE_LEN(SR_ERRMAX)];
	size_t i;

	for (i = 0; i < s->nproblems; i++) {
		const struct ls_problem *p = &s->problems[i];
		char step[40] = "";

		sr_termsafe(p->why, why, sizeof why);
		if (!p->is_latest) {
			fprintf(stderr, "spotrun: warning: checkpoint %llu cannot be restored: %s\n",
			    (unsigned long long)p->seq, why);
			continue;
		}
		if (!p->has_fallback) {
			fprintf(stderr, "spotrun: warning: checkpoint %llu, the latest, cannot be restored:"
			    " %s; no older checkpoint is usable, so a restore fails\n",
			    (unsigned long long)p->seq, why);
			continue;
		}
		if (p->fallback_step >= 0)
			snprintf(step, sizeof step, " (step %lld)", p->fallback_step);
		fprintf(stderr, "spotrun: warning: checkpoint %llu, the latest, cannot be restored: %s;"
		    " a restore falls back to checkpoint %llu%s\n", (unsigned long long)p->seq,
		    why, (unsigned long long)p->fallback_seq, step);
	}
}

static int
ls_collect_attempt(const struct sr_attempt_record *r, void *arg)
{
	struct ls_state *s = arg;

	s->attempts = sr_reallocarray(s->attempts, s->nattempts + 1, sizeof *s->attempts);
	s->attempts[s->nattempts++] = *r;
	s->n++;
	return 0;
}

/* The attempts, run by run; the RUN column as wide as the longest id
 * (start time and pid: its width follows the pid's). */
static void
ls_print_attempts(const struct ls_state *s)
{
	char run[SR_TERMSAFE_LEN(sizeof s->attempts->run)];
	char outcome[SR_TERMSAFE_LEN(sizeof s->attempts->outcome)];
	int w = 3;
	size_t i;

	for (i = 0; i < s->nattempts; i++) {
		if ((int)strlen(sr_termsafe(s->attempts[i].run, run, sizeof run)) > w)
			w = (int)strlen(run);
	}
	for (i = 0; i < s->nattempts; i++) {
		const struct sr_attempt_record *r = &s->attempts[i];
		char when[32], took[32], from[32], machine[128], safe[SR_TERMSAFE_LEN(128)];
		time_t t = (time_t)r->started;
		struct tm tm;

		if (i == 0)
			printf("%-*s %-7s %-19s %8s %-9s %-7s %-5s %-10s %s\n", w, "RUN", "ATTEMPT",
			    "STARTED", "TIME", "FROM", "VM", "CKPTS", "OUTCOME", "MACHINE");
		localtime_r(&t, &tm);
		strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
		if (r->ended > 0)
			sr_fmt_duration(r->ended - r->started, took, sizeof took);
		else
			strlcpy(took, "-", sizeof took);
		if (r->restored_step >= 0)
			snprintf(from, sizeof from, "step %lld", r->restored_step);
		else
			strlcpy(from, "fresh", sizeof from);
		snprintf(machine, sizeof machine, "%s %s, %s, %s, %s", r->facts.provider,
		    r->facts.instance_id, r->facts.instance_type, r->facts.zone, r->facts.lifecycle);
		if (r->ended > 0)
			sr_termsafe(r->outcome, outcome, sizeof outcome);
		else
			strlcpy(outcome, "no end (running, or the machine vanished)", sizeof outcome);
		printf("%-*s %-7d %-19s %8s %-9s %-7d %-5d %-10s %s\n", w,
		    sr_termsafe(r->run, run, sizeof run), r->attempt, when, took, from, r->vm,
		    r->checkpoints, outcome, sr_termsafe(machine, safe, sizeof safe));
	}
}

/* A warning of the checkpoint module (a LATEST that is not a number, or
 * one without its newline), on stderr as spotrun's. */
static void
ls_log(void *arg, const char *msg)
{
	char safe[SR_TERMSAFE_LEN(1024)];	/* sr_ckpt_say's longest */

	(void)arg;
	fflush(stdout);
	fprintf(stderr, "spotrun: %s\n", sr_termsafe(msg, safe, sizeof safe));
}

/* The checkpoints, what the catalog warns of, and the unusable ones. */
static int
ls_checkpoints(struct sr_store *st, const char *name, struct ls_state *s, char *err)
{
	struct sr_ckpt_opts o = { 0 };
	int rc;

	o.log = ls_log;
	rc = sr_ckpt_list_log(st, &o, name, ls_row, s, err);
	fflush(stdout);
	if (rc == 0)
		ls_tell_problems(s);
	return rc;
}

static int
cmd_ls_exec(const struct sr_args *a)
{
	struct sr_target t;
	struct sr_store *st;
	struct ls_state s = { 0 };
	char err[SR_ERRMAX], safe[SR_TERMSAFE_LEN(SR_ERRMAX)];
	int rc, attempts = sr_args_has(a, LS_ATTEMPTS) > 0;

	if ((rc = sr_cmd_target(a->argv[0], sr_args_get(a, LS_STORE), &t)) != 0)
		return rc;
	if (sr_store_open(t.store, &st, err) == -1) {
		fprintf(stderr, "spotrun: %s\n", err);
		sr_target_free(&t);
		return SR_EXIT_IOERR;
	}
	if (attempts && (rc = sr_record_list(st, t.name, ls_collect_attempt, &s, err)) == 0)
		ls_print_attempts(&s);
	else if (!attempts)
		rc = ls_checkpoints(st, t.name, &s, err);
	if (rc == -1)
		fprintf(stderr, "spotrun: %s\n", sr_termsafe(err, safe, sizeof safe));
	else if (s.n == 0)
		printf("no %s of job %s in %s\n", attempts ? "attempts" : "checkpoints", t.name,
		    t.store);
	free(s.problems);
	free(s.attempts);
	sr_store_close(st);
	sr_target_free(&t);
	return rc == -1 ? SR_EXIT_IOERR : 0;
}

const struct sr_cmd_entry sr_cmd_ls_entry = {
	.name = "ls",
	.args = { .opts = ls_opts, .operands = "JOB.ini|NAME", .min = 1, .max = 1 },
	.summary = "list a job's checkpoints, or with -a its attempts",
	.help = "List the committed checkpoints of a job, oldest first: sequence number,\n"
	    "step, creation time, files, raw and stored size, ratio; the latest is\n"
	    "marked, and one a restore would refuse is marked unusable, with why on\n"
	    "standard error. With -a, list the job's attempts, run by run.\n"
	    "The job is a job file (its name and store, unless -s), or a job NAME in\n"
	    "STORE, else in the default store.",
	.exec = cmd_ls_exec,
};
