/*
 * report.h: `spotrun report`, a sweep's (or a job's) results as one
 * self-contained HTML page: what is read for it (report-data.c: the status
 * markers' rows, and per job its meta.json, metrics, attempt records and
 * checkpoints, and the best one's job file), and the page written from
 * that (report-html.c, its charts in report-svg.c, every byte from the
 * store escaped by report-esc.c). doc/fleet.md, "report", has the page's
 * parts and the requests made.
 */
#ifndef SR_REPORT_H
#define SR_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "fleet-index.h"
#include "fleet.h"
#include "metrics.h"
#include "record.h"
#include "status-view.h"

/* A committed checkpoint, on the timeline. */
struct sr_report_ckpt {
	double created;			/* epoch seconds */
	long long step;			/* -1: none reported */
};

/* One job (a sweep's trial) and what was read of it. */
struct sr_report_job {
	const struct sr_fleet_row *row;	/* its status marker's (into the index) */
	struct sr_queue_job_meta meta;
	int have_meta;
	struct sr_metrics_table mt;
	int metric;			/* the metric's index in mt.names, -1: none */
	int have;			/* a value of the metric */
	double latest, best;
	long long latest_step, best_step;
	struct sr_attempt_record *att;	/* by run, each run's attempts in order */
	size_t natt;
	struct sr_report_ckpt *ck;	/* oldest first */
	size_t nck;
	double seconds;			/* the attempts' time, start to end */
};

struct sr_report {
	char *title;			/* the sweep's name, or the job's id */
	int is_sweep;
	const char *queue;		/* the queue's URL (borrowed) */
	char metric[128];		/* the metric's name */
	int goal;			/* 1: largest is best, 0: smallest */
	struct sr_report_job *jobs;	/* by id */
	size_t n;
	int best;			/* index of the best job by the metric, -1: none */
	char *spec;			/* the best job's file (else the first's); NULL: unread */
	const char **varying;		/* parameters that differ between the trials */
	size_t nvarying;
	struct sr_status_totals totals;	/* of every job (status-view.h) */
	double now;			/* when it was read */
	long warnings;			/* what could not be read (said on stderr) */
	long long requests;		/* made to the queue and its stores */
};

/* Read the n jobs ids (in ix, each there) of queue fl, title naming them
 * (a sweep when is_sweep), with metric spec (NAME[:min|max], NULL: loss if
 * reported, else the first one reported): 0 with r filled
 * (sr_report_free), or -1 with err (a --metric that is no metric's; what
 * the store cannot give is a warning on stderr, left out). */
int sr_report_read(struct sr_fleet *fl, const struct sr_fleet_index *ix, const char *title,
    int is_sweep, char *const *ids, size_t n, const char *metric, struct sr_report *r,
    char *err);
void sr_report_free(struct sr_report *r);

/* The page for r, to fp: 0, or -1 when writing failed (errno set). */
int sr_report_write_html(const struct sr_report *r, FILE *fp);

/* The charts (report-svg.c), each one inline <svg> element: every job's
 * curve of the metric (one <path class="curve"> a job, the best one drawn
 * over the others and thicker), axes with ticks, and a legend of the jobs
 * and their varying parameters; and the timeline, a lane per job, its
 * attempts as bars on one time axis labelled with their machines, the
 * checkpoints, the preemptions and the work lost. */
void sr_report_svg_curves(const struct sr_report *r, FILE *fp);
void sr_report_svg_timeline(const struct sr_report *r, FILE *fp);
/* The colour of job i's curve and legend ("#rrggbb"). */
const char *sr_report_colour(size_t i);

/* s as HTML text or attribute value (report-esc.c): & < > " ' as
 * references; a byte that starts no well-formed UTF-8 character, and a
 * character a terminal would act on (C0 but tab and newline, DEL, C1, the
 * bidirectional controls: sr_term_acts_on) as U+FFFD; the rest as it is.
 * n bytes of s (its NUL ends it sooner). */
void sr_html_text(FILE *fp, const char *s, size_t n);
/* sr_html_text of a NUL-terminated s. */
void sr_html(FILE *fp, const char *s);

#endif
