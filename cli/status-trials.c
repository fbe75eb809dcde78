/*
 * status-trials.c: see status-trials.h. What is gathered per trial comes
 * first (trial_read), then why trials failed or wait (reasons), then the
 * columns are sized to the budget, then printed, coloured on request
 * (escapes around cells padded by their visible width), with the reasons
 * as notes under the table; --json prints the same rows with the whole
 * series instead.
 */
#include "config.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "metrics.h"
#include "record.h"
#include "status-reason.h"
#include "status-trials.h"
#include "status-why.h"
#include "termsafe.h"
#include "util.h"

#define COLS 80
#define PARAM_CAP 12		/* a parameter's column at most, in 80 columns */
#define PARAM_MIN 4
#define SPARK_MAX 16
#define SPARK_MIN 6

struct trial {
	const struct sr_fleet_row *row;
	struct sr_queue_job_meta meta;
	int have_meta;
	struct sr_metrics_table mt;
	int metric;			/* index into mt.names, -1 none */
	int have;			/* a value of the metric */
	double latest, best;
	long long latest_step, best_step;
	double seconds;			/* run: the attempts' time, start to end */
	double started;			/* the first attempt's start (0: none) */
	struct sr_attempt_record last;	/* the attempt that started last */
	int have_last;
	char *reason;			/* why it failed or waits (malloc'd), or NULL */
};

/* SGR sequences: a state's colour (its foreground, ended by FG_OFF, so
 * that a bold row stays bold), the best trial's row bold. */
#define FG_OFF "\033[39m"
#define BOLD "\033[1m"
#define BOLD_OFF "\033[22m"

int
sr_metric_goal(const char *spec, char *name, size_t len)
{
	static const char *const large[] = { "acc", "auc", "f1", "score", "reward", "precision",
	    "recall" };
	const char *colon = strrchr(spec, ':'), *last;
	size_t i, n = colon != NULL ? (size_t)(colon - spec) : strlen(spec);

	snprintf(name, len, "%.*s", (int)n, spec);
	if (colon != NULL)
		return strcmp(colon + 1, "min") == 0 ? 0 : strcmp(colon + 1, "max") == 0 ? 1 : -1;
	last = name + strcspn(name, "");
	while (last > name && last[-1] != '/' && last[-1] != '.')
		last--;
	for (i = 0; i < sizeof large / sizeof large[0]; i++)
		if (strncmp(last, large[i], strlen(large[i])) == 0)
			return 1;
	return 0;
}

static int
record_cb(const struct sr_attempt_record *r, void *arg)
{
	struct trial *t = arg;
	double end = r->ended > 0 ? r->ended : (t->row->state == SR_LEASE_RUNNING ? sr_now() : 0);

	if (t->started == 0 || r->started < t->started)
		t->started = r->started;
	if (!t->have_last || r->started >= t->last.started) {
		t->last = *r;
		t->have_last = 1;
	}
	if (end > r->started)
		t->seconds += end - r->started;
	return 0;
}

/* The trial's meta, metrics and records; what cannot be read is said (a
 * warning) and left out. */
static void
trial_read(struct sr_fleet *fl, struct trial *t)
{
	char err[SR_ERRMAX], safe[SR_TERMSAFE_LEN(SR_ERRMAX)];
	struct sr_store *st = NULL;

	t->metric = -1;
	if (sr_queue_meta_read(fl->q, t->row->id, &t->meta, err) == SR_QUEUE_OK) {
		t->have_meta = 1;
		st = sr_queue_ckpt_store(fl->q, t->meta.store != NULL && t->meta.store[0] != '\0' ?
		    t->meta.store : sr_queue_ckpt_url(fl->q), err);
	}
	if (st != NULL && sr_metrics_read(st, t->row->id, &t->mt, err) == -1)
		st = NULL;
	if (st != NULL && sr_record_list(st, t->row->id, record_cb, t, err) == -1)
		st = NULL;
	if (st == NULL)
		fprintf(stderr, "spotrun: warning: %s\n", sr_termsafe(err, safe, sizeof safe));
}

/* The latest and best value of metric name (goal 1: largest). */
static void
trial_metric(struct trial *t, const char *name, int goal)
{
	size_t r;
	double v;

	t->metric = sr_metrics_find(&t->mt, name);
	t->have = 0;
	for (r = 0; t->metric >= 0 && r < t->mt.nrows; r++) {
		if (!sr_metrics_value(&t->mt, r, t->metric, &v))
			continue;
		if (!t->have || (goal ? v > t->best : v < t->best)) {
			t->best = v;
			t->best_step = t->mt.rows[r].step;
		}
		t->latest = v;
		t->latest_step = t->mt.rows[r].step;
		t->have = 1;
	}
}

/* A parameter's value in trial t, "" when it has none. */
static const char *
param(const struct trial *t, const char *name)
{
	return sr_param_value(t->have_meta ? &t->meta : NULL, name);
}

const char *
sr_param_value(const struct sr_queue_job_meta *m, const char *name)
{
	size_t i;

	for (i = 0; m != NULL && i < m->nparams; i++)
		if (strcmp(m->param_names[i], name) == 0)
			return m->param_values[i];
	return "";
}

size_t
sr_params_varying(const struct sr_queue_job_meta *const *metas, size_t n, const char ***out)
{
	const struct sr_queue_job_meta *f = NULL;
	size_t i, k, nv = 0;

	for (i = 0; i < n && f == NULL; i++)
		f = metas[i];
	*out = sr_calloc(f != NULL ? f->nparams + 1 : 1, sizeof **out);
	for (k = 0; f != NULL && k < f->nparams; k++)
		for (i = 0; i < n; i++)
			if (strcmp(sr_param_value(metas[i], f->param_names[k]),
			    f->param_values[k]) != 0) {
				(*out)[nv++] = f->param_names[k];
				break;
			}
	return nv;
}

/* The parameters whose values differ between the trials. */
static size_t
varying(const struct trial *tv, size_t n, const char ***out)
{
	const struct sr_queue_job_meta **m = sr_calloc(n + 1, sizeof *m);
	size_t i, nv;

	for (i = 0; i < n; i++)
		m[i] = tv[i].have_meta ? &tv[i].meta : NULL;
	nv = sr_params_varying(m, n, out);
	free(m);
	return nv;
}

static const char *
duration(double s, char *buf, size_t len)
{
	long x = (long)(s + 0.5);

	if (s <= 0)
		snprintf(buf, len, "-");
	else if (x < 60)
		snprintf(buf, len, "%lds", x);
	else if (x < 3600)
		snprintf(buf, len, "%ldm%02lds", x / 60, x % 60);
	else if (x < 86400)
		snprintf(buf, len, "%ldh%02ldm", x / 3600, x % 3600 / 60);
	else
		snprintf(buf, len, "%ldd%02ldh", x / 86400, x % 86400 / 3600);
	return buf;
}

/* s escaped, cut to w columns (a cut one ends in '~'), into buf. */
static const char *
cell(const char *s, int w, char *buf, size_t len)
{
	char *safe = sr_malloc(SR_TERMSAFE_LEN(strlen(s)));

	sr_termsafe(s, safe, SR_TERMSAFE_LEN(strlen(s)));
	if (w > 0)
		sr_status_cut(safe, (size_t)w);
	snprintf(buf, len, "%s", safe);
	free(safe);
	return buf;
}

/* s printed left in w columns, counted in characters (a UTF-8 parameter
 * takes fewer columns than bytes). */
static void
pad(const char *s, int w)
{
	int n = (int)sr_status_cols(s);

	fputs(s, stdout);
	for (; n < w; n++)
		putchar(' ');
}

/* The colour of a state, NULL for none. */
static const char *
state_colour(enum sr_lease_state st)
{
	switch (st) {
	case SR_LEASE_SUCCEEDED:
		return "\033[32m";	/* green */
	case SR_LEASE_FAILED:
		return "\033[31m";	/* red */
	case SR_LEASE_RUNNING:
		return "\033[33m";	/* yellow */
	case SR_LEASE_QUEUED:
	case SR_LEASE_RELEASED:
		return "\033[36m";	/* cyan */
	case SR_LEASE_CANCELLED:
		break;
	}
	return NULL;
}

/* "12-02 23:14", local time, or "-". */
static const char *
start_time(double t, char *buf, size_t len)
{
	time_t x = (time_t)t;
	struct tm tm;

	if (t <= 0 || localtime_r(&x, &tm) == NULL || strftime(buf, len, "%m-%d %H:%M", &tm) == 0)
		snprintf(buf, len, "-");
	return buf;
}

static const char *
number(int have, double v, char *buf, size_t len)
{
	if (have)
		snprintf(buf, len, "%.4g", v);
	else
		snprintf(buf, len, "-");
	return buf;
}

/* The sparkline of t's metric in w columns on the scale lo..hi: the
 * series cut into w pieces, each shown by its last value. */
static void
spark(const struct trial *t, int w, double lo, double hi, int unicode)
{
	static const char *const blocks[] = { "\u2581", "\u2582", "\u2583", "\u2584", "\u2585",
	    "\u2586", "\u2587", "\u2588" };
	static const char ascii[] = "_.-=+*#@";
	double *v = sr_calloc(t->mt.nrows + 1, sizeof *v), x;
	size_t r, n = 0;
	int i;

	for (r = 0; t->metric >= 0 && r < t->mt.nrows; r++)
		if (sr_metrics_value(&t->mt, r, t->metric, &x))
			v[n++] = x;
	for (i = 0; n > 0 && i < w && (size_t)i < n; i++) {
		size_t at = n <= (size_t)w ? (size_t)i : ((size_t)i + 1) * n / (size_t)w - 1;
		int level = hi > lo ? (int)((v[at] - lo) / (hi - lo) * 7.0 + 0.5) : 3;

		level = level < 0 ? 0 : level > 7 ? 7 : level;
		if (unicode)
			fputs(blocks[level], stdout);
		else
			putchar(ascii[level]);
	}
	free(v);
}

static int
by_best(const void *a, const void *b, int goal)
{
	const struct trial *x = a, *y = b;

	if (x->have != y->have)
		return x->have ? -1 : 1;
	if (x->have && x->best != y->best)
		return (goal ? x->best > y->best : x->best < y->best) ? -1 : 1;
	return strcmp(x->row->id, y->row->id);
}
static int by_min(const void *a, const void *b) { return by_best(a, b, 0); }
static int by_max(const void *a, const void *b) { return by_best(a, b, 1); }

/* The trial's number: what follows the sweep's name and its dot. */
static const char *
trial_no(const struct trial *t, const char *sweep)
{
	return t->row->id + strlen(sweep) + 1;
}

/* The trial with the best value of the metric (the first of equals), or
 * -1 when none has one. */
static long
best_trial(const struct trial *tv, size_t n, int goal)
{
	long b = -1;
	size_t i;

	for (i = 0; i < n; i++)
		if (tv[i].have && (b < 0 || (goal ? tv[i].best > tv[b].best :
		    tv[i].best < tv[b].best)))
			b = (long)i;
	return b;
}

/* The notes under the table: "TRIAL: STATE, REASON" for each trial with a
 * reason, escaped, cut to 80 columns unless wide. */
static void
print_notes(const char *sweep, const struct trial *tv, size_t n, int wide)
{
	size_t i;
	int first = 1;

	for (i = 0; i < n; i++) {
		char *line, *safe;

		if (tv[i].reason == NULL)
			continue;
		if (first)
			putchar('\n');
		first = 0;
		line = sr_asprintf("%s: %s, %s", trial_no(&tv[i], sweep),
		    sr_lease_state_name(tv[i].row->state), tv[i].reason);
		safe = sr_malloc(SR_TERMSAFE_LEN(strlen(line)));
		sr_termsafe(line, safe, SR_TERMSAFE_LEN(strlen(line)));
		if (!wide)
			sr_status_cut(safe, COLS);
		printf("%s\n", safe);
		free(safe);
		free(line);
	}
}

static void
print_table(const char *sweep, struct trial *tv, size_t n, int goal,
    const struct sr_trials_opts *o)
{
	const char **pv;
	size_t np = varying(tv, n, &pv), i, k;
	int *pw = sr_calloc(np + 1, sizeof *pw), tw = 5, fixed, budget, sw = 0, used;
	char buf[256], a[32], b[32], d[32], e[32];
	double lo = 0, hi = 0;
	long best = best_trial(tv, n, goal);
	int any = 0;

	for (i = 0; i < n; i++)
		if ((int)strlen(trial_no(&tv[i], sweep)) > tw)
			tw = (int)strlen(trial_no(&tv[i], sweep));
	/* TRIAL params STATE ATT/P TIME COST LAST BEST spark; --wide: ATT,
	 * PREEMPT, START, GPU-HOURS instead of ATT/P (no budget) */
	fixed = tw + 2 + 9 + 1 + 5 + 1 + 7 + 1 + 8 + 1 + 9 + 1 + 9;
	for (k = 0; k < np; k++) {
		pw[k] = (int)sr_status_cols(pv[k]);
		for (i = 0; i < n; i++) {
			int w = (int)sr_status_cols(cell(param(&tv[i], pv[k]), 0, buf, sizeof buf));

			pw[k] = w > pw[k] ? w : pw[k];
		}
		if (!o->wide && pw[k] > PARAM_CAP)
			pw[k] = PARAM_CAP;
	}
	budget = COLS - fixed;
	for (used = 0, k = 0; k < np; k++)
		used += pw[k] + 1;
	/* over the budget: the widest parameters narrowed, down to PARAM_MIN */
	while (!o->wide && used > budget) {
		size_t wk = 0;

		for (k = 1; k < np; k++)
			if (pw[k] > pw[wk])
				wk = k;
		if (np == 0 || pw[wk] <= PARAM_MIN)
			break;
		pw[wk]--;
		used--;
	}
	sw = o->wide ? 2 * SPARK_MAX : budget - used - 1;
	if (sw > (o->wide ? 2 * SPARK_MAX : SPARK_MAX))
		sw = o->wide ? 2 * SPARK_MAX : SPARK_MAX;
	if (sw < SPARK_MIN)
		sw = 0;
	for (i = 0; i < n; i++) {
		size_t r;
		double x;

		for (r = 0; tv[i].metric >= 0 && r < tv[i].mt.nrows; r++)
			if (sr_metrics_value(&tv[i].mt, r, tv[i].metric, &x)) {
				lo = any && lo < x ? lo : x;
				hi = any && hi > x ? hi : x;
				any = 1;
			}
	}
	printf("%-*s  ", tw, "TRIAL");
	for (k = 0; k < np; k++) {
		pad(cell(pv[k], pw[k], buf, sizeof buf), pw[k]);
		putchar(' ');
	}
	if (o->wide)
		printf("%-9s %3s %7s %-11s %7s %9s %8s %9s %9s", "STATE", "ATT", "PREEMPT", "START",
		    "TIME", "GPU-HOURS", "COST", "LAST", "BEST");
	else
		printf("%-9s %5s %7s %8s %9s %9s", "STATE", "ATT/P", "TIME", "COST", "LAST", "BEST");
	if (sw > 0)
		printf(" %s", "CURVE");
	putchar('\n');
	for (i = 0; i < n; i++) {
		const struct trial *t = &tv[i];
		const char *colour = o->color ? state_colour(t->row->state) : NULL;
		int bold = o->color && (long)i == best;

		if (bold)
			fputs(BOLD, stdout);
		printf("%-*s  ", tw, trial_no(t, sweep));
		for (k = 0; k < np; k++) {
			pad(cell(param(t, pv[k]), pw[k], buf, sizeof buf), pw[k]);
			putchar(' ');
		}
		if (colour != NULL)
			printf("%s%s%s", colour, sr_lease_state_name(t->row->state), FG_OFF);
		else
			fputs(sr_lease_state_name(t->row->state), stdout);
		printf("%*s", 10 - (int)strlen(sr_lease_state_name(t->row->state)), "");
		snprintf(d, sizeof d, "$%.2f", t->row->cost);
		if (o->wide)
			printf("%3d %7d %-11s %7s %9.2f ", t->row->attempts, t->row->preemptions,
			    start_time(t->started, e, sizeof e), duration(t->seconds, buf, sizeof buf),
			    (double)t->row->gpu_seconds / 3600.0);
		else {
			snprintf(e, sizeof e, "%d/%d", t->row->attempts, t->row->preemptions);
			printf("%5s %7s ", e, duration(t->seconds, buf, sizeof buf));
		}
		printf("%8s %9s %9s", d, number(t->have, t->latest, a, sizeof a),
		    number(t->have, t->best, b, sizeof b));
		if (sw > 0 && t->have) {
			putchar(' ');
			spark(t, sw, lo, hi, o->unicode);
		}
		if (bold)
			fputs(BOLD_OFF, stdout);
		putchar('\n');
	}
	print_notes(sweep, tv, n, o->wide);
	free(pw);
	free(pv);
}

static json_t *
num(double x)
{
	return json_real(x);
}

static json_t *
str(const char *s)
{
	json_t *j = json_string(s);

	return j != NULL ? j : json_string("?");	/* not UTF-8: anyone's bytes */
}

static void
print_json(struct sr_fleet *fl, const char *sweep, struct trial *tv, size_t n,
    const char *metric, int goal)
{
	const char **pv;
	size_t np = varying(tv, n, &pv), i, k, r;
	json_t *o = json_object(), *va = json_array(), *ta = json_array();
	char *text;

	for (k = 0; k < np; k++)
		json_array_append_new(va, str(pv[k]));
	json_object_set_new(o, "queue", str(fl->url));
	json_object_set_new(o, "sweep", str(sweep));
	json_object_set_new(o, "metric", json_pack("{s:o, s:s}", "name", str(metric), "goal",
	    goal ? "max" : "min"));
	json_object_set_new(o, "varying", va);
	for (i = 0; i < n; i++) {
		const struct trial *t = &tv[i];
		json_t *to = json_object(), *po = json_object(), *pts = json_array();

		json_object_set_new(to, "id", str(t->row->id));
		for (k = 0; t->have_meta && k < t->meta.nparams; k++)
			json_object_set_new(po, t->meta.param_names[k], str(t->meta.param_values[k]));
		json_object_set_new(to, "params", po);
		json_object_set_new(to, "state", str(sr_lease_state_name(t->row->state)));
		json_object_set_new(to, "reason", t->reason != NULL ? str(t->reason) : json_null());
		json_object_set_new(to, "exit_code", t->row->state == SR_LEASE_FAILED &&
		    t->have_last && t->last.exit_code >= 0 ? json_integer(t->last.exit_code) :
		    json_null());
		json_object_set_new(to, "signal", t->row->state == SR_LEASE_FAILED &&
		    t->have_last && t->last.signal > 0 ? json_integer(t->last.signal) : json_null());
		json_object_set_new(to, "attempts", json_integer(t->row->attempts));
		json_object_set_new(to, "preemptions", json_integer(t->row->preemptions));
		json_object_set_new(to, "started", t->started > 0 ? num(t->started) : json_null());
		json_object_set_new(to, "seconds", num(round(t->seconds * 1000) / 1000));
		json_object_set_new(to, "gpu_seconds", json_integer(t->row->gpu_seconds));
		json_object_set_new(to, "cost", num(t->row->cost));
		json_object_set_new(to, "on_demand_cost", num(t->row->on_demand_cost));
		if (t->have)
			json_object_set_new(to, "metric", json_pack("{s:f, s:I, s:f, s:I}", "latest",
			    t->latest, "latest_step", (json_int_t)t->latest_step, "best", t->best,
			    "best_step", (json_int_t)t->best_step));
		else
			json_object_set_new(to, "metric", json_null());
		for (r = 0; r < t->mt.nrows; r++) {
			json_t *p = json_object();
			size_t c;

			json_object_set_new(p, "step", json_integer(t->mt.rows[r].step));
			for (c = t->mt.rows[r].first; c < t->mt.rows[r].first + t->mt.rows[r].n; c++)
				json_object_set_new(p, t->mt.names[t->mt.cells[c].name],
				    num(t->mt.cells[c].value));
			json_array_append_new(pts, p);
		}
		json_object_set_new(to, "metrics", pts);
		json_array_append_new(ta, to);
	}
	json_object_set_new(o, "trials", ta);
	text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	if (text == NULL)
		sr_fatal("status: out of memory");
	printf("%s\n", text);
	free(text);
	json_decref(o);
	free(pv);
}

/* Why each trial failed (its last record and the end of its log) or waits
 * (status-why.h, against the agents' records, read only when a trial is
 * queued or released). What cannot be read is warned about, and that
 * reason left out. */
static void
reasons(struct sr_fleet *fl, struct trial *tv, size_t n)
{
	const struct sr_fleet_row **rows = sr_calloc(n + 1, sizeof *rows);
	struct sr_queue_machine *mv = NULL;
	struct sr_status_why why = { 0 };
	char err[SR_ERRMAX], safe[SR_TERMSAFE_LEN(SR_ERRMAX)], line[SR_STATUS_LINE_MAX + 1];
	size_t i, nm = 0, nw = 0;
	int waiting = 0, bad = 0, ok = 1;

	for (i = 0; i < n; i++) {
		enum sr_lease_state st = tv[i].row->state;

		if (st == SR_LEASE_QUEUED || st == SR_LEASE_RELEASED || st == SR_LEASE_RUNNING)
			rows[nw++] = tv[i].row;
		waiting |= st == SR_LEASE_QUEUED || st == SR_LEASE_RELEASED;
	}
	if (waiting && sr_queue_machines_read(fl->q, &mv, &nm, &bad, err) == -1)
		ok = 0;
	if (ok && nw > 0 && sr_status_why_read(fl->q, rows, nw, mv, nm, sr_now(), &why, err) == -1)
		ok = 0;
	if (!ok)
		fprintf(stderr, "spotrun: warning: queue %s: %s\n", fl->where,
		    sr_termsafe(err, safe, sizeof safe));
	for (i = 0; i < n; i++) {
		struct trial *t = &tv[i];
		const char *w = sr_status_why_find(&why, t->row->id);
		char *log = NULL;
		size_t len = 0;

		if (w != NULL)
			t->reason = sr_strdup(w);
		if (t->row->state != SR_LEASE_FAILED || !t->have_last)
			continue;
		line[0] = '\0';
		if (sr_queue_log_tail(fl->q, t->row->id, &log, &len, err) == -1)
			fprintf(stderr, "spotrun: warning: %s\n", sr_termsafe(err, safe, sizeof safe));
		else if (log != NULL)
			sr_status_error_line(log, len, line);
		t->reason = sr_status_end_reason(&t->last, line);
		free(log);
	}
	sr_status_why_free(&why);
	free(mv);
	free(rows);
}

int
sr_status_trials(struct sr_fleet *fl, const struct sr_fleet_index *ix, const char *sweep,
    const size_t *idx, size_t n, const struct sr_trials_opts *o)
{
	struct trial *tv = sr_calloc(n + 1, sizeof *tv);
	char metric[SR_METRICS_NAME_MAX + 8] = "", spec[sizeof metric];
	char safe[SR_TERMSAFE_LEN(SR_QUEUE_ID_MAX)];
	int goal = 0;
	size_t i;

	if (o->metric != NULL && ((goal = sr_metric_goal(o->metric, metric, sizeof metric)) == -1 ||
	    !sr_metrics_name_ok(metric))) {
		fprintf(stderr, "spotrun: status: --metric %s: a metric's name, or NAME:min or "
		    "NAME:max\n", o->metric);
		free(tv);
		return SR_EXIT_USAGE;
	}
	for (i = 0; i < n; i++) {
		tv[i].row = &ix->v[idx[i]];
		trial_read(fl, &tv[i]);
	}
	if (metric[0] == '\0') {	/* loss if reported, else the first name */
		for (i = 0; i < n && metric[0] == '\0'; i++)
			if (sr_metrics_find(&tv[i].mt, "loss") >= 0)
				snprintf(metric, sizeof metric, "loss");
		for (i = 0; i < n && metric[0] == '\0'; i++)
			if (tv[i].mt.nnames > 0)
				snprintf(metric, sizeof metric, "%s", tv[i].mt.names[0]);
		if (metric[0] == '\0')
			snprintf(metric, sizeof metric, "loss");
		snprintf(spec, sizeof spec, "%s", metric);
		goal = sr_metric_goal(spec, metric, sizeof metric);
	}
	for (i = 0; i < n; i++)
		trial_metric(&tv[i], metric, goal);
	reasons(fl, tv, n);
	if (o->sort)
		sr_sort(tv, n, sizeof *tv, goal ? by_max : by_min);
	if (o->json) {
		print_json(fl, sweep, tv, n, metric, goal);
	} else {
		printf("sweep %s: %zu trial%s, metric %s (%s is best)\n",
		    sr_termsafe(sweep, safe, sizeof safe), n, n == 1 ? "" : "s", metric,
		    goal ? "largest" : "smallest");
		print_table(sweep, tv, n, goal, o);
	}
	for (i = 0; i < n; i++) {
		if (tv[i].have_meta)
			sr_queue_job_meta_free(&tv[i].meta);
		sr_metrics_table_free(&tv[i].mt);
		free(tv[i].reason);
	}
	free(tv);
	return 0;
}
