/*
 * report-data.c: what `spotrun report` reads (report.h): the rows the
 * status markers gave, then per job its meta.json (parameters, store),
 * its metrics' segments (sr_metrics_read), its attempt records
 * (sr_record_list) and its committed checkpoints (sr_ckpt_list: the
 * times and steps of the timeline's marks), and the best job's file
 * (spec.ini). What cannot be read is said on stderr and left out: the
 * page still shows the rest.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"
#include "report.h"
#include "status-trials.h"
#include "termsafe.h"
#include "util.h"

static void
warn(struct sr_report *r, const char *what, const char *id, const char *err)
{
	char safe[SR_TERMSAFE_LEN(SR_ERRMAX)], sid[SR_TERMSAFE_LEN(SR_QUEUE_ID_MAX)];

	fprintf(stderr, "spotrun: warning: report: %s of %s: %s (left out)\n", what,
	    sr_termsafe(id, sid, sizeof sid), sr_termsafe(err, safe, sizeof safe));
	r->warnings++;
}

struct collect {
	struct sr_report_job *j;
	double now;
};

static int
attempt_cb(const struct sr_attempt_record *rec, void *arg)
{
	struct collect *c = arg;
	struct sr_report_job *j = c->j;
	double end = rec->ended > 0 ? rec->ended : (j->row->state == SR_LEASE_RUNNING ? c->now : 0);

	j->att = sr_reallocarray(j->att, j->natt + 1, sizeof *j->att);
	j->att[j->natt++] = *rec;
	if (end > rec->started)
		j->seconds += end - rec->started;
	return 0;
}

static int
ckpt_cb(const struct sr_ckpt_stats *ck, int is_latest, void *arg)
{
	struct sr_report_job *j = arg;

	(void)is_latest;
	if (ck->problem != NULL || ck->created <= 0)
		return 0;	/* its manifest cannot be trusted: no time to mark */
	j->ck = sr_reallocarray(j->ck, j->nck + 1, sizeof *j->ck);
	j->ck[j->nck].created = ck->created;
	j->ck[j->nck].step = ck->step;
	j->nck++;
	return 0;
}

/* The job's meta, metrics, records and checkpoints. */
static void
job_read(struct sr_fleet *fl, struct sr_report *r, struct sr_report_job *j)
{
	char err[SR_ERRMAX];
	struct sr_store *st = NULL;
	struct collect c = { j, r->now };

	j->metric = -1;
	if (sr_queue_meta_read(fl->q, j->row->id, &j->meta, err) != SR_QUEUE_OK) {
		warn(r, "meta.json", j->row->id, err);
		return;
	}
	j->have_meta = 1;
	st = sr_queue_ckpt_store(fl->q, j->meta.store != NULL && j->meta.store[0] != '\0' ?
	    j->meta.store : sr_queue_ckpt_url(fl->q), err);
	if (st == NULL) {
		warn(r, "the store", j->row->id, err);
		return;
	}
	if (sr_metrics_read(st, j->row->id, &j->mt, err) == -1)
		warn(r, "the metrics", j->row->id, err);
	if (sr_record_list(st, j->row->id, attempt_cb, &c, err) == -1)
		warn(r, "the attempts", j->row->id, err);
	if (sr_ckpt_list(st, j->row->id, ckpt_cb, j, err) == -1)
		warn(r, "the checkpoints", j->row->id, err);
}

/* The latest and best value of the metric (r->goal 1: largest). */
static void
job_metric(const struct sr_report *r, struct sr_report_job *j)
{
	size_t k;
	double v;

	j->metric = sr_metrics_find(&j->mt, r->metric);
	j->have = 0;
	for (k = 0; j->metric >= 0 && k < j->mt.nrows; k++) {
		if (!sr_metrics_value(&j->mt, k, j->metric, &v) || !isfinite(v))
			continue;
		if (!j->have || (r->goal ? v > j->best : v < j->best)) {
			j->best = v;
			j->best_step = j->mt.rows[k].step;
		}
		j->latest = v;
		j->latest_step = j->mt.rows[k].step;
		j->have = 1;
	}
}

/* The metric: spec's, else loss when any job reported it, else the first
 * name reported. 0, or -1 with err. */
static int
choose_metric(struct sr_report *r, const char *spec, char *err)
{
	char s[sizeof r->metric];
	size_t i;

	if (spec != NULL) {
		if ((r->goal = sr_metric_goal(spec, r->metric, sizeof r->metric)) == -1 ||
		    !sr_metrics_name_ok(r->metric)) {
			sr_err(err, "--metric %s: a metric's name, or NAME:min or NAME:max", spec);
			return -1;
		}
		return 0;
	}
	for (i = 0; i < r->n && r->metric[0] == '\0'; i++)
		if (sr_metrics_find(&r->jobs[i].mt, "loss") >= 0)
			snprintf(r->metric, sizeof r->metric, "loss");
	for (i = 0; i < r->n && r->metric[0] == '\0'; i++)
		if (r->jobs[i].mt.nnames > 0)
			snprintf(r->metric, sizeof r->metric, "%s", r->jobs[i].mt.names[0]);
	if (r->metric[0] == '\0')
		snprintf(r->metric, sizeof r->metric, "loss");
	snprintf(s, sizeof s, "%s", r->metric);
	r->goal = sr_metric_goal(s, r->metric, sizeof r->metric);
	return 0;
}

int
sr_report_read(struct sr_fleet *fl, const struct sr_fleet_index *ix, const char *title,
    int is_sweep, char *const *ids, size_t n, const char *metric, struct sr_report *r,
    char *err)
{
	const struct sr_fleet_row **rows = sr_calloc(n + 1, sizeof *rows);
	const struct sr_queue_job_meta **metas = sr_calloc(n + 1, sizeof *metas);
	struct sr_status_view v;
	struct sr_queue_counts counts;
	char serr[SR_ERRMAX];
	size_t i, len;
	int b = -1;

	memset(r, 0, sizeof *r);
	r->title = sr_strdup(title);
	r->is_sweep = is_sweep;
	r->queue = fl->url;
	r->now = sr_now();
	r->best = -1;
	r->jobs = sr_calloc(n + 1, sizeof *r->jobs);
	r->n = n;
	if (metric != NULL && choose_metric(r, metric, err) == -1) {
		free(rows);
		free(metas);
		sr_report_free(r);	/* the caller frees only what succeeded */
		return -1;
	}
	for (i = 0; i < n; i++) {
		r->jobs[i].row = rows[i] = sr_fleet_index_find(ix, ids[i]);
		if (rows[i] == NULL)
			sr_fatal("report: %s: not in the index (not checked)", ids[i]);
		job_read(fl, r, &r->jobs[i]);
		metas[i] = r->jobs[i].have_meta ? &r->jobs[i].meta : NULL;
	}
	if (metric == NULL)
		choose_metric(r, NULL, err);
	for (i = 0; i < n; i++) {
		job_metric(r, &r->jobs[i]);
		if (r->jobs[i].have && (b < 0 || (r->goal ? r->jobs[i].best > r->jobs[b].best :
		    r->jobs[i].best < r->jobs[b].best)))
			b = (int)i;
	}
	r->best = b;
	r->nvarying = sr_params_varying(metas, n, &r->varying);
	sr_status_view_build(rows, n, &v);
	r->totals = v.totals;
	sr_status_view_free(&v);
	if (n > 0 && sr_queue_spec_read(fl->q, r->jobs[b >= 0 ? b : 0].row->id, &r->spec, &len,
	    serr) == -1) {
		warn(r, "the job file", r->jobs[b >= 0 ? b : 0].row->id, serr);
		r->spec = NULL;
	}
	sr_queue_get_counts(fl->q, &counts);
	r->requests = counts.requests;
	free(rows);
	free(metas);
	return 0;
}

void
sr_report_free(struct sr_report *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		if (r->jobs[i].have_meta)
			sr_queue_job_meta_free(&r->jobs[i].meta);
		sr_metrics_table_free(&r->jobs[i].mt);
		free(r->jobs[i].att);
		free(r->jobs[i].ck);
	}
	free(r->jobs);
	free(r->varying);
	free(r->spec);
	free(r->title);
	memset(r, 0, sizeof *r);
}
