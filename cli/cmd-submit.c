/*
 * cmd-submit.c: `spotrun submit [-a] [-n] [-p N] [--queue URL]
 * [--run-local] JOB.ini ...`: validate job and sweep files, expand sweeps
 * into their trials and queue one job each (sr_queue_add: Q/jobs/ID/
 * spec.ini, its markers, meta.json), one line per job and a summary;
 * each file's working directory is shipped first, as a snapshot in the
 * queue's checkpoint store (submit-workdir.c), unless it says not to.
 *
 * Ids are the jobs' names (a trial's NAME.NNN), so the same file
 * submitted twice makes the same ids and is not queued twice: the jobs
 * already there are reported, and a file that differs from what is queued
 * under its ids is refused, saying where, before anything is written.
 * --again submits such files as new jobs under the first free name of
 * NAME.r2, NAME.r3, ... (a sweep's trials become NAME.r2.NNN), with
 * checkpoints of their own. A pool of the queue at target 0 is raised to
 * the demand (fleet/pool-scale.h), as the agents' scaler would.
 */
#include "config.h"

#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "cmd.h"
#include "fleet-index.h"
#include "fleet.h"
#include "pool-scale.h"
#include "submit-jobs.h"
#include "submit-workdir.h"
#include "sweep.h"
#include "util.h"

enum { SUB_AGAIN, SUB_CREATE, SUB_DRY_RUN, SUB_PRIORITY, SUB_QUEUE, SUB_RUN_LOCAL };

static const struct sr_opt submit_opts[] = {
	[SUB_AGAIN] = { 'a', "again", NULL, "queue jobs already there again, as new jobs NAME.rN" },
	[SUB_CREATE] = { 0, "create", NULL, "make a file:// queue that does not exist yet" },
	[SUB_DRY_RUN] = { 'n', "dry-run", NULL, "print the jobs, trials and folders to ship; "
	    "write nothing" },
	[SUB_PRIORITY] = { 'p', "priority", "N", "run before lower priorities (-9999 to 9999, "
	    "default 0)" },
	[SUB_QUEUE] = { 0, "queue", "URL", "the queue: a store URL or a directory" },
	[SUB_RUN_LOCAL] = { 0, "run-local", NULL, "then run an agent here until the queue is "
	    "drained" },
	{ 0 }
};

#define RUNS_MAX 999	/* --again: NAME.r2 to NAME.r999 */

/* How a file stands in the queue before anything is written. */
enum presence { ABSENT = 0, SAME, OTHER };

struct submit {
	struct sr_fleet fl;
	struct sr_submit_plan plan;
	struct sr_submit_ship ship;	/* the files' working directories shipped */
	enum presence *presence;	/* per file */
	enum sr_lease_state *first_state;	/* per file, when SAME */
	struct sr_fleet_index ix;	/* read when a sweep is there already */
	int have_ix;
	int priority;
	char by[320];
	long queued, already;
};

/* "user@host", who submitted. */
static void
who(char *by, size_t len)
{
	struct passwd *pw = getpwuid(getuid());
	const char *user = pw != NULL && pw->pw_name != NULL ? pw->pw_name : getenv("USER");
	char host[256] = "";

	if (gethostname(host, sizeof host) != 0)
		host[0] = '\0';
	host[sizeof host - 1] = '\0';
	snprintf(by, len, "%s@%s", user != NULL ? user : "someone", host[0] ? host : "localhost");
}

static int
parse_priority(const char *s, int *out)
{
	char *end;
	long v;

	if (s == NULL) {
		*out = 0;
		return 0;
	}
	v = strtol(s, &end, 10);
	if (end == s || *end != '\0' || v < SR_QUEUE_PRIORITY_MIN || v > SR_QUEUE_PRIORITY_MAX) {
		fprintf(stderr, "spotrun submit: --priority %s: not an integer from %d to %d; see "
		    "'spotrun help submit'\n", s, SR_QUEUE_PRIORITY_MIN, SR_QUEUE_PRIORITY_MAX);
		return -1;
	}
	*out = (int)v;
	return 0;
}

/* The "(lr=0.1, seed=1)" after a trial's id, or "". */
static void
print_job(const struct sr_submit_job *j, const char *what)
{
	char *params = sr_submit_params(j);

	printf("%s: %s%s%s%s\n", j->id, what, params[0] ? " (" : "", params, params[0] ? ")" : "");
	free(params);
}

/* Say that file's job id is queued with another job file: what differs. */
static void
say_differs(const struct submit *s, const struct sr_submit_file *file, const char *id,
    const char *queued, size_t qlen, const struct sr_submit_job *j)
{
	char there[104], here[104];
	int line = sr_submit_diff(queued, qlen, j->spec, j->spec_len, there, here, 100);

	fprintf(stderr, "spotrun: %s: job %s is already in queue %s with another job file: line "
	    "%d is '%s' there and '%s' here; to queue this file as new jobs: spotrun submit "
	    "--again %s; to run the queued %s again: spotrun requeue %s\n", file->path, id,
	    s->fl.where, line, there, here, file->path, file->sweep ? "trials" : "job",
	    file->name);
}

/* Compare job j with the spec queued under its id: 1 the same, 0 another
 * (said), 2 none queued, -1 an error (said). */
static int
compare_queued(struct submit *s, const struct sr_submit_job *j)
{
	const struct sr_submit_file *file = &s->plan.files[j->file];
	char err[SR_ERRMAX], *spec;
	size_t len;
	int rc = sr_queue_spec_read(s->fl.q, j->id, &spec, &len, err);

	if (rc == SR_QUEUE_NOTFOUND)
		return 2;
	if (rc != SR_QUEUE_OK) {
		fprintf(stderr, "spotrun: %s\n", err);
		return -1;
	}
	rc = len == j->spec_len && memcmp(spec, j->spec, len) == 0;
	if (!rc)
		say_differs(s, file, j->id, spec, len, j);
	free(spec);
	return rc;
}

/* Before anything is written: how each file's first job stands. 0, or
 * the exit code after saying why (nothing written then). */
static int
precheck(struct submit *s)
{
	struct sr_queue_status st;
	char err[SR_ERRMAX];
	size_t f;
	int rc, differ = 0;

	for (f = 0; f < s->plan.nfiles; f++) {
		const struct sr_submit_file *file = &s->plan.files[f];
		const struct sr_submit_job *j = &s->plan.jobs[file->first];

		if (file->same_as != (size_t)-1)
			continue;
		rc = sr_queue_status_get(s->fl.q, j->id, &st, err);
		if (rc == SR_QUEUE_NOTFOUND)
			continue;
		if (rc != SR_QUEUE_OK) {
			fprintf(stderr, "spotrun: queue %s: %s\n", s->fl.where, err);
			return SR_EXIT_IOERR;
		}
		switch (compare_queued(s, j)) {
		case 1:
			s->presence[f] = SAME;
			s->first_state[f] = st.state;
			break;
		case 0:
			s->presence[f] = OTHER;
			differ = 1;
			break;
		case -1:
			return SR_EXIT_IOERR;
		}
	}
	if (differ) {
		fprintf(stderr, "spotrun: nothing was submitted\n");
		return SR_EXIT_BADSPEC;
	}
	return 0;
}

/* Queue job j: 0, or the exit code after saying why. */
static int
add_job(struct submit *s, const struct sr_submit_job *j)
{
	const struct sr_submit_file *file = &s->plan.files[j->file];
	const struct sr_jobspec *js = file->js;
	struct sr_queue_meta m = {
		.id = j->id, .name = j->id, .sweep = file->sweep ? file->name : NULL,
		.params = j->params, .nparams = j->nparams, .gpus_min = js->gpus_min,
		.gpus_max = js->gpus_max, .nodes_min = js->nodes_min, .nodes_max = js->nodes_max,
		.gpu_type = js->gpu_type, .priority = s->priority,
		.store = js->store_line != 0 ? js->store : NULL, .by = s->by, .dir = js->dir
	};
	char err[SR_ERRMAX];
	int rc;

	if ((rc = sr_submit_ship(&s->ship, &s->fl, &s->plan, j->file)) != 0)
		return rc;
	m.workdir = s->ship.ids != NULL ? s->ship.ids[j->file] : NULL;
	rc = sr_queue_add(s->fl.q, j->spec, j->spec_len, &m, err);

	if (rc == SR_QUEUE_OK) {
		print_job(j, "queued");
		s->queued++;
		return 0;
	}
	if (rc != SR_QUEUE_EXISTS) {
		fprintf(stderr, "spotrun: %s\n", err);
		return SR_EXIT_IOERR;
	}
	/* another submission came between the check and this one */
	switch (compare_queued(s, j)) {
	case 1:
		print_job(j, "already in the queue, the same job file");
		s->already++;
		return 0;
	case 0:
		return SR_EXIT_BADSPEC;
	case 2:
		fprintf(stderr, "spotrun: %s\n", err);
		return SR_EXIT_IOERR;
	default:
		return SR_EXIT_IOERR;
	}
}

/* A checkpoint store on this machine, for a queue that agents elsewhere
 * read: say so once per file. */
static void
warn_store(const struct submit *s, const struct sr_submit_file *file)
{
	const struct sr_jobspec *js = file->js;

	if (js->store_line != 0 && sr_store_url_local(js->store) && !sr_store_url_local(s->fl.url))
		fprintf(stderr, "spotrun: warning: %s:%d: store = %s is on this machine, which "
		    "agents on other machines cannot read; leave store out to keep the checkpoints "
		    "in the queue's store (%s)\n", file->path, js->store_line, js->store,
		    sr_queue_ckpt_url(s->fl.q));
}

static void
print_sweep(const struct sr_submit_file *file)
{
	if (file->sweep)
		printf("sweep %s (%s): %zu trial%s\n", file->name, file->path, file->n,
		    file->n == 1 ? "" : "s");
}

/* The jobs of a file that is in the queue already (SAME): report them,
 * queueing the ones a submission cut short left out. */
static int
add_present(struct submit *s, size_t f)
{
	const struct sr_submit_file *file = &s->plan.files[f];
	const struct sr_fleet_row *row;
	char err[SR_ERRMAX], what[96];
	size_t t;
	int rc;

	if (file->n > 1 && !s->have_ix) {
		if (sr_fleet_index_read(s->fl.q, &s->ix, err) == -1) {
			fprintf(stderr, "spotrun: queue %s: %s\n", s->fl.where, err);
			return SR_EXIT_IOERR;
		}
		s->have_ix = 1;
	}
	for (t = 0; t < file->n; t++) {
		const struct sr_submit_job *j = &s->plan.jobs[file->first + t];
		enum sr_lease_state st = s->first_state[f];

		if (t > 0) {
			if ((row = sr_fleet_index_find(&s->ix, j->id)) == NULL) {
				if ((rc = add_job(s, j)) != 0)
					return rc;
				continue;
			}
			st = row->state;
		}
		snprintf(what, sizeof what, "already in the queue (%s), the same job file",
		    sr_lease_state_name(st));
		print_job(j, what);
		s->already++;
	}
	/* The same job file says nothing of the code beside it: a user who
	 * changed train.py and submitted again would otherwise wonder why
	 * nothing ran. */
	if (file->js->ship_workdir)
		printf("%s: its workdir %s was not shipped again; to run it with the "
		    "folder as it is now: spotrun submit --again %s\n", file->name,
		    file->js->workdir, file->path);
	return 0;
}

/* --again: the first free name of NAME, NAME.r2, ... for file f, and its
 * jobs renamed to it. 0, or the exit code after saying why. */
static int
rename_again(struct submit *s, size_t f)
{
	struct sr_submit_file *file = &s->plan.files[f];
	struct sr_queue_status st;
	char *base = sr_strdup(file->name), *cand = NULL, first[SR_JOBSPEC_NAME_MAX + 1];
	char err[SR_ERRMAX];
	int r, rc = 0;

	for (r = 1; r <= RUNS_MAX; r++) {
		free(cand);
		cand = r == 1 ? sr_strdup(base) : sr_asprintf("%s.r%d", base, r);
		if (strlen(cand) > SR_JOBSPEC_NAME_MAX)
			break;
		if (file->sweep) {
			char *keep = file->js->name;

			file->js->name = cand;
			rc = sr_sweep_trial_name(file->js, 0, first, err);
			file->js->name = keep;
			if (rc == -1)
				break;
		} else
			snprintf(first, sizeof first, "%s", cand);
		rc = sr_queue_status_get(s->fl.q, first, &st, err);
		if (rc == SR_QUEUE_NOTFOUND)
			break;
		if (rc != SR_QUEUE_OK) {
			fprintf(stderr, "spotrun: queue %s: %s\n", s->fl.where, err);
			free(base);
			free(cand);
			return SR_EXIT_IOERR;
		}
	}
	rc = 0;
	if (r > RUNS_MAX)
		fprintf(stderr, "spotrun: %s: %s to %s.r%d are all in the queue; give the job another "
		    "name\n", file->path, base, base, RUNS_MAX), rc = SR_EXIT_BADSPEC;
	else if (strcmp(cand, base) != 0 && sr_submit_rename(&s->plan, f, cand, err) == -1)
		fprintf(stderr, "spotrun: %s\n", err), rc = SR_EXIT_BADSPEC;
	else if (strcmp(cand, base) != 0)
		printf("%s: submitted again as %s%s\n", file->path, file->sweep ? "sweep " : "", cand);
	free(base);
	free(cand);
	return rc;
}

static int
dry_run(const struct submit *s, int again)
{
	size_t f, t, n = 0;

	for (f = 0; f < s->plan.nfiles; f++) {
		const struct sr_submit_file *file = &s->plan.files[f];

		if (file->same_as != (size_t)-1)
			continue;
		if (file->js->ship_workdir)
			printf("%s: workdir %s would be shipped (what .gitignore and .spotrunignore "
			    "leave out left out)\n", file->name, file->js->workdir);
		print_sweep(file);
		for (t = 0; t < file->n; t++)
			print_job(&s->plan.jobs[file->first + t], "would be queued");
		n += file->n;
	}
	printf("dry run: %zu job%s%s, nothing written to queue %s\n", n, n == 1 ? "" : "s",
	    again ? " (--again: under the first name of NAME, NAME.r2, ... free when submitted)" :
	    "", s->fl.where);
	return 0;
}

static int
submit_all(struct submit *s, int again)
{
	size_t f, t;
	int rc;

	if (!again && (rc = precheck(s)) != 0)
		return rc;
	/* every working directory shipped before a job is queued: one too
	 * large means nothing is submitted (a file queued already in full
	 * ships nothing; one cut short ships when its jobs are added) */
	for (f = 0; f < s->plan.nfiles; f++)
		if (s->plan.files[f].same_as == (size_t)-1 && s->presence[f] != SAME &&
		    (rc = sr_submit_ship(&s->ship, &s->fl, &s->plan, f)) != 0)
			return rc;
	for (f = 0; f < s->plan.nfiles; f++) {
		const struct sr_submit_file *file = &s->plan.files[f];

		if (file->same_as != (size_t)-1) {
			fprintf(stderr, "spotrun: %s: the same file as %s, submitted once\n",
			    file->path, s->plan.files[file->same_as].path);
			continue;
		}
		if (again && (rc = rename_again(s, f)) != 0)
			return rc;
		warn_store(s, file);
		print_sweep(file);
		if (s->presence[f] == SAME) {
			if ((rc = add_present(s, f)) != 0)
				return rc;
			continue;
		}
		for (t = 0; t < file->n; t++)
			if ((rc = add_job(s, &s->plan.jobs[file->first + t])) != 0)
				return rc;
	}
	return 0;
}

static void
raise_note(void *arg, const char *line)
{
	(void)arg;
	if (strncmp(line, "warning: ", 9) == 0)
		fprintf(stderr, "spotrun: %s\n", line);
	else
		printf("%s\n", line);
}

/* The queue's pools at target 0 raised to the demand (fleet/pool-scale.h),
 * as its agents' scaler would: with no agent left, none would. What fails
 * is a warning; the jobs are queued all the same. */
static void
raise_pools(struct submit *s)
{
	struct sr_prices *t = NULL;
	char err[SR_ERRMAX];

	if (sr_fleet_prices(NULL, &s->fl.set, &t, err) == -1 ||
	    sr_pool_raise(s->fl.q, &s->fl.me, t, raise_note, NULL, err) == -1)
		fprintf(stderr, "spotrun: warning: pools of queue %s: %s\n", s->fl.where, err);
	sr_prices_free(t);
}

/* --run-local: an agent here, in this process, until the queue is drained. */
static int
run_local(const char *url)
{
	struct sr_agent_opts o;

	memset(&o, 0, sizeof o);
	o.once = 1;
	return sr_cmd_agent_run(&o, url, NULL);
}

static int
cmd_submit_exec(const struct sr_args *a)
{
	struct submit s;
	int rc, again = sr_args_has(a, SUB_AGAIN) > 0;

	memset(&s, 0, sizeof s);
	if (parse_priority(sr_args_get(a, SUB_PRIORITY), &s.priority) == -1)
		return SR_EXIT_USAGE;
	if ((rc = sr_submit_plan(a->argv, a->argc, &s.plan)) != 0)
		return rc;
	if ((rc = sr_fleet_resolve(&s.fl, sr_args_get(a, SUB_QUEUE))) != 0) {
		sr_submit_plan_free(&s.plan);
		return rc;
	}
	if ((rc = sr_fleet_must_exist(&s.fl, sr_args_has(a, SUB_CREATE))) != 0)
		sr_fleet_close(&s.fl);
	if (rc != 0 || (!sr_args_has(a, SUB_DRY_RUN) && (rc = sr_fleet_attach(&s.fl, "submit")))) {
		sr_submit_plan_free(&s.plan);
		return rc;
	}
	who(s.by, sizeof s.by);
	s.presence = sr_calloc(s.plan.nfiles + 1, sizeof *s.presence);
	s.first_state = sr_calloc(s.plan.nfiles + 1, sizeof *s.first_state);
	if (sr_args_has(a, SUB_DRY_RUN))
		rc = dry_run(&s, again);
	else if ((rc = submit_all(&s, again)) == 0 || s.queued > 0)
		printf("%ld queued, %ld already in the queue: %s\n", s.queued, s.already,
		    s.fl.where);
	if (rc == 0 && s.queued > 0 && !sr_args_has(a, SUB_DRY_RUN))
		raise_pools(&s);
	fflush(stdout);
	if (rc == 0 && sr_args_has(a, SUB_RUN_LOCAL) && !sr_args_has(a, SUB_DRY_RUN))
		rc = run_local(s.fl.url);
	if (s.have_ix)
		sr_fleet_index_free(&s.ix);
	sr_submit_ship_free(&s.ship);
	free(s.presence);
	free(s.first_state);
	sr_submit_plan_free(&s.plan);
	sr_fleet_close(&s.fl);
	return rc;
}

const struct sr_cmd_entry sr_cmd_submit_entry = {
	.name = "submit",
	.args = { .opts = submit_opts, .operands = "JOB.ini ...", .min = 1, .max = -1 },
	.summary = "queue jobs and sweeps for the fleet's agents",
	.help = "Validate job files and queue one job each for the fleet's agents; a sweep\n"
	    "([sweep]) queues one job per trial, NAME.NNN. Nothing is queued while any\n"
	    "file is invalid. A job already in the queue under its name is reported,\n"
	    "not queued twice, and a file that differs from the one queued under its\n"
	    "name is refused unless --again queues it as new jobs NAME.r2, NAME.r3, ...\n"
	    "The queue is --queue, else $SPOTRUN_QUEUE, else queue = in [fleet] of\n"
	    "~/.config/spotrun/config.ini, else ~/.local/share/spotrun/queue.\n"
	    "A directory queue (file://) that does not exist is an error unless\n"
	    "--create makes it (the default queue is made at first use).",
	.exec = cmd_submit_exec,
};
