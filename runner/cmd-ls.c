/*
 * cmd-ls.c: `spotrun ls [-a] [-s STORE] JOB.ini|NAME`: the committed
 * checkpoints of a job (sequence, step, time, files, raw and stored size,
 * ratio), or with -a its attempts: when, how long, on which machine, from
 * which step, how many checkpoints, and how each ended.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ckpt.h"
#include "cmd.h"
#include "defaults.h"
#include "jobspec.h"
#include "record.h"
#include "store.h"
#include "util.h"

struct ls_state {
	int n;
};

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
	return 0;
}

static int
ls_attempt(const struct sr_attempt_record *r, void *arg)
{
	struct ls_state *s = arg;
	char when[32], took[32], from[32], machine[128];
	time_t t = (time_t)r->started;
	struct tm tm;

	if (s->n++ == 0)
		printf("%-7s %-19s %8s %-9s %-7s %-5s %-10s %s\n", "ATTEMPT", "STARTED", "TIME", "FROM",
		    "VM", "CKPTS", "OUTCOME", "MACHINE");
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
	printf("%-7d %-19s %8s %-9s %-7d %-5d %-10s %s\n", r->attempt, when, took, from, r->vm,
	    r->checkpoints, r->ended > 0 ? r->outcome : "no end (running, or the machine vanished)",
	    machine);
	return 0;
}

static int
cmd_ls_exec(int argc, char **argv)
{
	struct sr_jobspec_errors errs = { NULL, 0 };
	struct sr_jobspec *js = NULL;
	struct sr_store *st;
	struct ls_state s = { 0 };
	struct stat sb;
	char err[SR_ERRMAX], *store = NULL, *name;
	int ch, rc, attempts = 0;

	optind = 1;
	while ((ch = getopt(argc, argv, sr_cmd_ls_entry.getopt)) != -1) {
		switch (ch) {
		case 'a':
			attempts = 1;
			break;
		case 's':
			free(store);
			store = sr_strdup(optarg);
			break;
		default:
			sr_cmd_usage(&sr_cmd_ls_entry, stderr);
			free(store);
			return SR_EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		sr_cmd_usage(&sr_cmd_ls_entry, stderr);
		free(store);
		return SR_EXIT_USAGE;
	}
	name = argv[optind];
	if (stat(name, &sb) == 0 && S_ISREG(sb.st_mode)) {
		if (sr_jobspec_load(name, &js, &errs) == -1) {
			sr_jobspec_errors_print(name, &errs, stderr);
			sr_jobspec_errors_free(&errs);
			free(store);
			return SR_EXIT_BADSPEC;
		}
		name = js->name;
		if (store == NULL)
			store = sr_strdup(js->store);
	}
	if (store == NULL)
		store = sr_default_store();
	if (sr_store_open(store, &st, err) == -1) {
		fprintf(stderr, "spotrun: %s\n", err);
		free(store);
		sr_jobspec_free(js);
		return SR_EXIT_IOERR;
	}
	if (attempts)
		rc = sr_record_list(st, name, ls_attempt, &s, err);
	else
		rc = sr_ckpt_list(st, name, ls_row, &s, err);
	if (rc == -1)
		fprintf(stderr, "spotrun: %s\n", err);
	else if (s.n == 0)
		printf("no %s of job %s in %s\n", attempts ? "attempts" : "checkpoints", name, store);
	sr_store_close(st);
	free(store);
	sr_jobspec_free(js);
	return rc == -1 ? SR_EXIT_IOERR : 0;
}

const struct sr_cmd_entry sr_cmd_ls_entry = {
	"ls", "[-a] [-s STORE] JOB.ini|NAME", "+as:", "list a job's checkpoints, or with -a its attempts",
	cmd_ls_exec
};
