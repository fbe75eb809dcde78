/*
 * cmd-status.c: `spotrun status [--json] [--queue URL] [SWEEP|JOB ...]`
 * (with a sweep alone, its trials: status-trials.c):
 * what the queue's jobs are doing and what they cost, from one listing of
 * the status markers (N jobs: N / 1000 requests, no GET per job): a table
 * per sweep and one for the jobs of no sweep, each row a job (state,
 * attempts, preemptions, GPU-hours used and lost (done again), cost,
 * what on-demand machines would have cost, last checkpoint's step, host),
 * totals per table, and a last line for all ("what the night cost").
 * Then why jobs wait or may have stopped (status-why.c: a queued job's
 * needs against what the agents offer, one listing of pending/; a running
 * job's lease no agent renews, a listing of each store's leases), a line
 * each, and what agents said of their machines (agents/: GPU device nodes
 * with no working driver), a line each.
 * --json prints the same as one object (doc/fleet.md). What the markers
 * say (ids, hosts) and errors quoting the queue reach the terminal escaped
 * (termsafe.h): a host of "\e]0;x\a" is shown, not obeyed.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "fleet-index.h"
#include "fleet-target.h"
#include "fleet.h"
#include "status-pools.h"
#include "status-trials.h"
#include "status-view.h"
#include "status-why.h"
#include "target.h"
#include "termsafe.h"
#include "util.h"

enum { STATUS_JSON, STATUS_QUEUE, STATUS_METRIC, STATUS_SORT, STATUS_WIDE, STATUS_COLOR,
    STATUS_NO_CLOUD };

static const struct sr_opt status_opts[] = {
	[STATUS_JSON] = { 0, "json", NULL, "print one JSON object (doc/fleet.md has its fields)" },
	[STATUS_QUEUE] = { 0, "queue", "URL", "the queue: a store URL or a directory" },
	[STATUS_METRIC] = { 0, "metric", "NAME", "a sweep's trials: the metric, NAME[:min|max]" },
	[STATUS_SORT] = { 0, "sort", NULL, "a sweep's trials: best metric first" },
	[STATUS_WIDE] = { 0, "wide", NULL, "a sweep's trials: wider than 80 columns" },
	[STATUS_COLOR] = { 0, "color", "WHEN", "a sweep's trials in colour: auto, always, never" },
	[STATUS_NO_CLOUD] = { 0, "no-cloud", NULL, "pools: their records only, no VMs asked of "
	    "the cloud" },
	{ 0 }
};

static const char *
dollars(double x, char *buf, size_t len)
{
	snprintf(buf, len, "$%.2f", x);
	return buf;
}

/* One line of a table: a job's, or (state NULL) the totals'. */
static void
print_line(int w, const char *name, const char *state, long attempts, long preemptions,
    int64_t used, int64_t lost, double cost, double od, const char *step, const char *host)
{
	char c[32], d[32];

	printf("%-*s  %-9s %8ld %9ld %9.2f %7.2f %9s %9s", w, name, state != NULL ? state : "",
	    attempts, preemptions, (double)used / 3600.0, (double)lost / 3600.0,
	    dollars(cost, c, sizeof c), dollars(od, d, sizeof d));
	if (step != NULL)
		printf(" %8s  %s", step, host[0] != '\0' ? host : "-");
	putchar('\n');
}

static void
print_group(const struct sr_status_group *g)
{
	const struct sr_status_totals *t = &g->totals;
	char states[256], step[32], id[SR_TERMSAFE_LEN(SR_QUEUE_ID_MAX)];
	char host[SR_TERMSAFE_LEN(SR_QUEUE_HOST_MAX)];
	size_t i;
	int w = 5;

	if (g->name[0] != '\0')
		printf("sweep %s: %ld trial%s (%s)\n", sr_termsafe(g->name, id, sizeof id), t->jobs,
		    t->jobs == 1 ? "" : "s", sr_status_states_line(t->states, states, sizeof states));
	else
		printf("jobs: %ld (%s)\n", t->jobs, sr_status_states_line(t->states, states, sizeof states));
	for (i = 0; i < g->n; i++)
		if ((int)strlen(sr_termsafe(g->rows[i]->id, id, sizeof id)) > w)
			w = (int)strlen(id);
	printf("%-*s  %-9s %8s %9s %9s %7s %9s %9s %8s  %s\n", w, "JOB", "STATE", "ATTEMPTS",
	    "PREEMPTED", "GPU-HOURS", "LOST", "COST", "ON-DEMAND", "STEP", "HOST");
	for (i = 0; i < g->n; i++) {
		const struct sr_fleet_row *r = g->rows[i];

		if (r->step >= 0)
			snprintf(step, sizeof step, "%lld", (long long)r->step);
		else
			snprintf(step, sizeof step, "-");
		print_line(w, sr_termsafe(r->id, id, sizeof id), sr_lease_state_name(r->state),
		    r->attempts, r->preemptions, r->gpu_seconds, r->lost_gpu_seconds, r->cost,
		    r->on_demand_cost, step, sr_termsafe(r->host, host, sizeof host));
	}
	print_line(w, "total", NULL, t->attempts, t->preemptions, t->gpu_seconds,
	    t->lost_gpu_seconds, t->cost, t->on_demand_cost, NULL, NULL);
}

/* The last line: all the jobs shown, and what spot saved. */
static void
print_all(const struct sr_status_totals *t)
{
	char states[256], c[32], d[32], s[32], pct[32] = "";

	if (t->on_demand_cost > 0)
		snprintf(pct, sizeof pct, " (%.0f%%)", 100.0 * (t->on_demand_cost - t->cost) /
		    t->on_demand_cost);
	printf("all: %ld job%s (%s), %ld attempt%s, %ld preemption%s, %.2f GPU-hours used, %.2f "
	    "lost; cost %s, on demand %s, saved %s%s\n", t->jobs, t->jobs == 1 ? "" : "s",
	    sr_status_states_line(t->states, states, sizeof states), t->attempts, t->attempts == 1 ? "" : "s",
	    t->preemptions, t->preemptions == 1 ? "" : "s", (double)t->gpu_seconds / 3600.0,
	    (double)t->lost_gpu_seconds / 3600.0, dollars(t->cost, c, sizeof c),
	    dollars(t->on_demand_cost, d, sizeof d),
	    dollars(t->on_demand_cost - t->cost, s, sizeof s), pct);
}

/* What an agent said of its machine, a line: "vm-x: 4 GPU device nodes,
 * driver not working: WHY (agent vm-x-123 since TIME; ...)". Host and
 * reason are anyone's bytes: escaped. */
static void
print_machine(const struct sr_queue_machine *m)
{
	char host[SR_TERMSAFE_LEN(sizeof m->host)], agent[SR_TERMSAFE_LEN(sizeof m->agent)];
	char why[SR_TERMSAFE_LEN(sizeof m->no_driver)], when[32] = "?";
	time_t t = (time_t)m->time;
	struct tm tm;

	if (gmtime_r(&t, &tm) != NULL)
		strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	printf("%s: %d GPU device node%s, driver not working: %s (agent %s since %s; ",
	    sr_termsafe(m->host, host, sizeof host), m->gpu_nodes, m->gpu_nodes == 1 ? "" : "s",
	    sr_termsafe(m->no_driver, why, sizeof why), sr_termsafe(m->agent, agent, sizeof agent),
	    when);
	if (m->gpus > 0)
		printf("its label gpus offers %d all the same)\n", m->gpus);
	else
		printf("it claims only jobs that need no GPU)\n");
}

/* Whether any of the agents' records has something wrong to say. */
static int
machines_said(const struct sr_queue_machine *mv, size_t nm)
{
	size_t i;

	for (i = 0; i < nm; i++)
		if (mv[i].no_driver[0] != '\0')
			return 1;
	return 0;
}

/* The rows to show: every job's, or those of the targets (each found in
 * the index, else said: 66). */
static int
choose(const struct sr_args *a, const struct sr_fleet *fl, const struct sr_fleet_index *ix,
    const struct sr_fleet_row ***rows, size_t *n)
{
	struct sr_fleet_ids ids;
	size_t i;
	int rc;

	*rows = sr_calloc(ix->n + 1, sizeof **rows);
	*n = 0;
	if (a->argc == 0) {
		for (i = 0; i < ix->n; i++)
			(*rows)[(*n)++] = &ix->v[i];
		return 0;
	}
	if ((rc = sr_fleet_targets(a->argv, a->argc, ix, fl->where, &ids)) != 0)
		return rc;
	*rows = sr_reallocarray(*rows, ids.n + 1, sizeof **rows);
	for (i = 0; i < ids.n; i++) {
		const struct sr_fleet_row *r = sr_fleet_index_find(ix, ids.v[i]);

		if (r == NULL && sr_fleet_index_broken(ix, ids.v[i]) != NULL)
			continue;	/* its marker does not parse: said, no row to show */
		if (r == NULL) {	/* a job file's job that was never submitted */
			fprintf(stderr, "spotrun: %s: not in queue %s (submit it with spotrun "
			    "submit)\n", ids.v[i], fl->where);
			rc = SR_EXIT_NOINPUT;
			break;
		}
		(*rows)[(*n)++] = r;
	}
	sr_fleet_ids_free(&ids);
	return rc;
}

/* Whether the terminal on stdout shows UTF-8: the locale's variables say
 * so (the first set of LC_ALL, LC_CTYPE, LANG). */
static int
utf8_terminal(void)
{
	static const char *const vars[] = { "LC_ALL", "LC_CTYPE", "LANG" };
	const char *v = NULL;
	size_t i;

	if (!isatty(STDOUT_FILENO))
		return 0;
	for (i = 0; i < 3 && (v == NULL || *v == '\0'); i++)
		v = getenv(vars[i]);
	return v != NULL && (strcasestr(v, "utf-8") != NULL || strcasestr(v, "utf8") != NULL);
}

/* Whether to colour (a sweep's trials): --color always or never, else
 * (auto) when standard output is a terminal and NO_COLOR is unset or empty
 * (no-color.org). -1 for another WHEN (said). */
static int
colour_wanted(const struct sr_args *a)
{
	const char *when = sr_args_get(a, STATUS_COLOR), *no = getenv("NO_COLOR");

	if (when == NULL || strcmp(when, "auto") == 0)
		return isatty(STDOUT_FILENO) && (no == NULL || no[0] == '\0');
	if (strcmp(when, "always") == 0)
		return 1;
	if (strcmp(when, "never") == 0)
		return 0;
	fprintf(stderr, "spotrun: status: --color %s: auto, always or never\n", when);
	return -1;
}

/* The sweep a sweep file given alone names, into name; 0 when arg is no
 * file or not a sweep's, 1 when it is, -1 when it could not be read (*rc
 * the exit code, the reason said, as the jobs' view would say it). */
static int
sweep_of_file(const char *arg, const struct sr_fleet_index *ix, const char *where,
    char *name, size_t len, int *rc)
{
	struct sr_fleet_ids ids;
	char *const args[1] = { (char *)arg };
	size_t i;
	int of_sweep;

	if (!sr_target_is_file(arg))
		return 0;
	if ((*rc = sr_fleet_targets(args, 1, ix, where, &ids)) != 0)
		return -1;
	of_sweep = ids.n > 0 && sr_fleet_sweep_of(ids.v[0], name, len);
	for (i = 0; i < ids.n; i++)
		of_sweep = of_sweep && ids.of_sweep[i];
	sr_fleet_ids_free(&ids);
	return of_sweep;
}

/* `status SWEEP` (its name or its file), one sweep named alone: its trials'
 * view (status-trials.h); 1 when it was (*rc its exit code), else 0. */
static int
trials_view(const struct sr_args *a, struct sr_fleet *fl, const struct sr_fleet_index *ix,
    int *rc)
{
	struct sr_trials_opts o;
	size_t *idx = NULL, n;
	char sweep[SR_QUEUE_ID_MAX + 1];
	const char *name;
	int f;

	if (a->argc != 1)
		return 0;
	name = a->argv[0];
	if ((f = sweep_of_file(name, ix, fl->where, sweep, sizeof sweep, rc)) == -1)
		return 1;
	if (f == 1)
		name = sweep;
	if (sr_fleet_index_find(ix, name) != NULL ||
	    (n = sr_fleet_index_sweep(ix, name, &idx)) == 0)
		return 0;
	memset(&o, 0, sizeof o);
	o.metric = sr_args_get(a, STATUS_METRIC);
	o.sort = sr_args_has(a, STATUS_SORT);
	o.wide = sr_args_has(a, STATUS_WIDE);
	o.json = sr_args_has(a, STATUS_JSON);
	o.unicode = utf8_terminal();
	o.color = colour_wanted(a);
	*rc = sr_status_trials(fl, ix, name, idx, n, &o);
	free(idx);
	return 1;
}

static int
cmd_status_exec(const struct sr_args *a)
{
	struct sr_fleet fl;
	struct sr_fleet_index ix;
	struct sr_status_view v;
	struct sr_queue_counts counts;
	const struct sr_fleet_row **rows = NULL;
	struct sr_queue_machine *mv = NULL;
	struct sr_status_why why = { 0 };
	struct sr_status_pools pools = { 0 };
	size_t nm = 0;
	int mbad = 0;
	char err[SR_ERRMAX], safe[SR_TERMSAFE_LEN(SR_ERRMAX)], first[SR_QUEUE_KEY_MAX];
	char fsafe[SR_TERMSAFE_LEN(SR_QUEUE_KEY_MAX)];
	size_t n, g;
	int rc;

	if (colour_wanted(a) == -1)
		return SR_EXIT_USAGE;
	if ((rc = sr_fleet_open(&fl, "status", sr_args_get(a, STATUS_QUEUE))) != 0)
		return rc;
	if (sr_fleet_index_read(fl.q, &ix, err) == -1) {
		fprintf(stderr, "spotrun: queue %s: %s\n", fl.where,
		    sr_termsafe(err, safe, sizeof safe));
		sr_fleet_close(&fl);
		return SR_EXIT_IOERR;
	}
	if (ix.bad > 0)
		fprintf(stderr, "spotrun: warning: %d status marker%s in queue %s cannot be read "
		    "(not of the form index/ID~EPOCH~...; doc/fleet.md): skipped\n", ix.bad,
		    ix.bad == 1 ? "" : "s", fl.where);
	if (sr_queue_malformed_count(fl.q, &ix.malformed, first, err) == -1) {
		fprintf(stderr, "spotrun: queue %s: %s\n", fl.where,
		    sr_termsafe(err, safe, sizeof safe));
		rc = SR_EXIT_IOERR;
	} else if (ix.malformed > 0)
		fprintf(stderr, "spotrun: warning: %ld marker%s in queue %s %s quarantined by an "
		    "agent as malformed, no job's (the first: %s; each object says why; "
		    "doc/fleet.md): delete them once read\n", ix.malformed,
		    ix.malformed == 1 ? "" : "s", fl.where, ix.malformed == 1 ? "was" : "were",
		    sr_termsafe(first, fsafe, sizeof fsafe));
	if (rc == 0 && trials_view(a, &fl, &ix, &rc)) {
		fflush(stdout);
		sr_fleet_index_free(&ix);
		sr_fleet_close(&fl);
		return rc;
	}
	if (rc == 0 && (sr_args_has(a, STATUS_METRIC) || sr_args_has(a, STATUS_SORT) ||
	    sr_args_has(a, STATUS_WIDE))) {
		fprintf(stderr, "spotrun: status: --metric, --sort and --wide are for one sweep's "
		    "trials: spotrun status SWEEP\n");
		rc = SR_EXIT_USAGE;
	}
	if (rc == 0 && sr_queue_machines_read(fl.q, &mv, &nm, &mbad, err) == -1) {
		fprintf(stderr, "spotrun: queue %s: %s\n", fl.where,
		    sr_termsafe(err, safe, sizeof safe));
		rc = SR_EXIT_IOERR;
	} else if (mbad > 0)
		fprintf(stderr, "spotrun: warning: %d record%s under agents/ in queue %s cannot be "
		    "read (doc/fleet.md): skipped\n", mbad, mbad == 1 ? "" : "s", fl.where);
	if (rc == 0 && (rc = choose(a, &fl, &ix, &rows, &n)) == 0 &&
	    !sr_args_has(a, STATUS_JSON) && sr_status_why_read(fl.q, rows, n, mv, nm, sr_now(), &why,
	    err) == -1) {
		fprintf(stderr, "spotrun: queue %s: %s\n", fl.where,
		    sr_termsafe(err, safe, sizeof safe));
		rc = SR_EXIT_IOERR;
	}
	/* the pools: for the whole queue only, not for jobs named */
	if (rc == 0 && a->argc == 0 && sr_status_pools_read(fl.q, &fl.set,
	    sr_args_has(a, STATUS_NO_CLOUD), &pools, err) == -1) {
		fprintf(stderr, "spotrun: queue %s: %s\n", fl.where,
		    sr_termsafe(err, safe, sizeof safe));
		rc = SR_EXIT_IOERR;
	} else if (pools.bad > 0)
		fprintf(stderr, "spotrun: warning: %d record%s under pools/ in queue %s cannot be "
		    "read (doc/fleet.md): skipped\n", pools.bad, pools.bad == 1 ? "" : "s", fl.where);
	if (rc == 0) {
		sr_status_view_build(rows, n, &v);
		sr_queue_get_counts(fl.q, &counts);
		if (sr_args_has(a, STATUS_JSON))
			sr_status_print_json(&v, fl.url, fl.from, &ix, mv, nm, &pools, &counts);
		else if (n == 0)
			printf("queue %s: no jobs\n", fl.where);
		else {
			printf("queue %s\n", fl.where);
			for (g = 0; g < v.ngroups; g++) {
				putchar('\n');
				print_group(&v.groups[g]);
			}
			putchar('\n');
			print_all(&v.totals);
			sr_status_why_print(&why);
		}
		if (nm > 0 && !sr_args_has(a, STATUS_JSON) && machines_said(mv, nm)) {
			putchar('\n');
			for (g = 0; g < nm; g++)
				if (mv[g].no_driver[0] != '\0')
					print_machine(&mv[g]);
		}
		if (!sr_args_has(a, STATUS_JSON))
			sr_status_pools_print(&pools);
		sr_status_view_free(&v);
	}
	fflush(stdout);
	sr_status_pools_free(&pools);
	sr_status_why_free(&why);
	free(rows);
	free(mv);
	sr_fleet_index_free(&ix);
	sr_fleet_close(&fl);
	return rc;
}

const struct sr_cmd_entry sr_cmd_status_entry = {
	.name = "status",
	.args = { .opts = status_opts, .operands = "[SWEEP|JOB ...]", .min = 0, .max = -1 },
	.summary = "what the queue's jobs are doing and what they cost",
	.help = "Show the queue's jobs, or those named (a job, a sweep's trials, a job or\n"
	    "sweep file's jobs): a table per sweep and one for other jobs, each job's\n"
	    "state, attempts, preemptions, GPU-hours used and lost (done again), cost,\n"
	    "what on-demand machines would have cost, last checkpoint's step and host,\n"
	    "with totals, and a last line for all; then a line for each agent whose\n"
	    "machine has GPU device nodes but no working driver, and a line for each\n"
	    "pool spotrun up made for the queue: its target and why, who set it, and\n"
	    "its VMs as its cloud lists them (state, zone, type, price, age; not\n"
	    "with --no-cloud). One listing of the queue's status markers, no\n"
	    "request per job.\n"
	    "A sweep named alone shows its trials: the parameters that vary, the\n"
	    "latest and best value of a metric the jobs reported (--metric, loss by\n"
	    "default; --sort for the best first) and its curve, state, attempts and\n"
	    "preemptions, time and cost, in 80 columns (--wide: start and GPU-hours\n"
	    "too), then why each trial failed or waits; on a terminal in colour\n"
	    "(--color, NO_COLOR); --json has every metric.",
	.exec = cmd_status_exec,
};
