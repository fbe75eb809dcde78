/*
 * report-svg.c: the report's charts as inline SVG (report.h): the metric's
 * curves, one path a job on shared axes with ticks and a legend, and the
 * timeline, a lane a job with its attempts on one time axis. Coordinates
 * are printed to a tenth of a pixel; every text from the store goes through
 * sr_html (report-esc.c).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "status-trials.h"

#define W 800			/* the charts' width */
#define PL 70			/* curves: the plot's left margin (tick labels) */
#define PR 20
#define PT 16
#define PH 300			/* the plot's height */
#define LEG 18			/* a legend line */
#define TL 150			/* timeline: the lanes' label column */
#define LANE 36

const char *
sr_report_colour(size_t i)
{
	static const char *const c[] = { "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
	    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf" };

	return c[i % (sizeof c / sizeof c[0])];
}

/* A tick spacing of 1, 2 or 5 times a power of ten, about n ticks over range. */
static double
nice_step(double range, int n)
{
	double raw = range / n, p = pow(10, floor(log10(raw))), f = raw / p;

	return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * p;
}

/* The range of the metric's values and steps over every job: 0 when none. */
static int
extent(const struct sr_report *r, double *x0, double *x1, double *y0, double *y1)
{
	size_t i, k;
	double v;
	int any = 0;

	for (i = 0; i < r->n; i++) {
		const struct sr_report_job *j = &r->jobs[i];

		for (k = 0; j->metric >= 0 && k < j->mt.nrows; k++) {
			if (!sr_metrics_value(&j->mt, k, j->metric, &v) || !isfinite(v))
				continue;
			if (!any) {
				*x0 = *x1 = (double)j->mt.rows[k].step;
				*y0 = *y1 = v;
				any = 1;
			}
			*x0 = fmin(*x0, (double)j->mt.rows[k].step);
			*x1 = fmax(*x1, (double)j->mt.rows[k].step);
			*y0 = fmin(*y0, v);
			*y1 = fmax(*y1, v);
		}
	}
	return any;
}

/* A tick's label: %g, with -0 as 0. */
static void
tick_label(double v, double step, char *buf, size_t len)
{
	if (fabs(v) < step * 1e-9)
		v = 0;
	snprintf(buf, len, "%.6g", v);
}

static void
curve(const struct sr_report *r, size_t i, FILE *fp, double x0, double x1, double y0,
    double y1)
{
	const struct sr_report_job *j = &r->jobs[i];
	int best = (int)i == r->best, first = 1;
	size_t k;
	double v;

	fprintf(fp, "<path class=\"curve%s\" data-job=\"", best ? " best" : "");
	sr_html(fp, j->row->id);
	fprintf(fp, "\" stroke=\"%s\" d=\"", sr_report_colour(i));
	for (k = 0; k < j->mt.nrows; k++) {
		if (!sr_metrics_value(&j->mt, k, j->metric, &v) || !isfinite(v))
			continue;
		fprintf(fp, "%s%.1f %.1f", first ? "M" : " L",
		    PL + ((double)j->mt.rows[k].step - x0) / (x1 - x0) * (W - PL - PR),
		    PT + PH - (v - y0) / (y1 - y0) * PH);
		first = 0;
	}
	fputs("\"><title>", fp);
	sr_html(fp, j->row->id);
	fputs("</title></path>\n", fp);
	if (best)
		fprintf(fp, "<circle class=\"best-point\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" "
		    "stroke=\"%s\"/>\n",
		    PL + ((double)j->best_step - x0) / (x1 - x0) * (W - PL - PR),
		    PT + PH - (j->best - y0) / (y1 - y0) * PH, sr_report_colour(i));
}

/* A job's name in a legend or lane: a trial's number with its parameters
 * that vary ("3  lr=2 how=py"), a job's id. */
static void
job_label(const struct sr_report *r, const struct sr_report_job *j, FILE *fp)
{
	size_t k;

	sr_html(fp, j->row->id);
	for (k = 0; k < r->nvarying; k++) {
		fputs(k == 0 ? "  " : " ", fp);
		sr_html(fp, r->varying[k]);
		fputc('=', fp);
		sr_html(fp, sr_param_value(j->have_meta ? &j->meta : NULL, r->varying[k]));
	}
}

void
sr_report_svg_curves(const struct sr_report *r, FILE *fp)
{
	double x0 = 0, x1 = 0, y0 = 0, y1 = 0, xs, ys, t;
	int h = PT + PH + 46 + (int)r->n * LEG;
	char lab[64];
	size_t i, pass;

	if (!extent(r, &x0, &x1, &y0, &y1))
		return;
	if (x1 <= x0) {
		x0 -= 1;
		x1 += 1;
	}
	if (y1 <= y0) {
		double d = fabs(y0) > 0 ? fabs(y0) / 10 : 1;

		y0 -= d;
		y1 += d;
	}
	xs = nice_step(x1 - x0, 8);
	ys = nice_step(y1 - y0, 6);
	y0 = floor(y0 / ys) * ys;
	y1 = ceil(y1 / ys) * ys;
	fprintf(fp, "<svg class=\"chart curves\" "
	    "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"",
	    W, h, W, h);
	sr_html(fp, r->metric);
	fputs(" by step, a curve a job\">\n", fp);
	fprintf(fp, "<rect class=\"plot\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n", PL,
	    PT, W - PL - PR, PH);
	for (t = ceil(y0 / ys) * ys; t <= y1 + ys * 1e-9; t += ys) {
		double y = PT + PH - (t - y0) / (y1 - y0) * PH;

		tick_label(t, ys, lab, sizeof lab);
		fprintf(fp, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
		    "<text class=\"tick y\" x=\"%d\" y=\"%.1f\">%s</text>\n", PL, y, W - PR, y,
		    PL - 6, y + 4, lab);
	}
	for (t = ceil(x0 / xs) * xs; t <= x1 + xs * 1e-9; t += xs) {
		double x = PL + (t - x0) / (x1 - x0) * (W - PL - PR);

		tick_label(t, xs, lab, sizeof lab);
		fprintf(fp, "<line class=\"tick\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>"
		    "<text class=\"tick x\" x=\"%.1f\" y=\"%d\">%s</text>\n", x, PT + PH, x,
		    PT + PH + 5, x, PT + PH + 18, lab);
	}
	fprintf(fp, "<text class=\"axis\" x=\"%d\" y=\"%d\">step</text>\n", (W + PL) / 2,
	    PT + PH + 34);
	fprintf(fp, "<text class=\"axis\" transform=\"translate(14 %d) rotate(-90)\">", PT + PH / 2);
	sr_html(fp, r->metric);
	fputs("</text>\n", fp);
	/* the others first, the best over them */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < r->n; i++)
			if (r->jobs[i].have && ((int)i == r->best) == (pass == 1))
				curve(r, i, fp, x0, x1, y0, y1);
	for (i = 0; i < r->n; i++) {
		const struct sr_report_job *j = &r->jobs[i];
		int y = PT + PH + 46 + (int)i * LEG;

		fprintf(fp, "<g class=\"legend%s\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
		    "stroke=\"%s\"/><text x=\"%d\" y=\"%d\">", (int)i == r->best ? " best" : "",
		    PL, y - 4, PL + 24, y - 4, sr_report_colour(i), PL + 30, y);
		job_label(r, j, fp);
		if (j->have) {
			tick_label(j->best, 1e-300, lab, sizeof lab);
			fprintf(fp, "  best %s at step %lld", lab, j->best_step);
		} else
			fputs("  (no value of the metric)", fp);
		if ((int)i == r->best)
			fputs("  \xe2\x80\x94 the best", fp);
		fputs("</text></g>\n", fp);
	}
	fputs("</svg>\n", fp);
}

/* Elapsed seconds as a tick's label: 45s, 2m, 2m30s, 1h, 1h05m. */
static void
elapsed(double s, char *buf, size_t len)
{
	long x = (long)(s + 0.5);

	if (x < 60)
		snprintf(buf, len, "%lds", x);
	else if (x < 3600 && x % 60 == 0)
		snprintf(buf, len, "%ldm", x / 60);
	else if (x < 3600)
		snprintf(buf, len, "%ldm%02lds", x / 60, x % 60);
	else if (x % 3600 == 0)
		snprintf(buf, len, "%ldh", x / 3600);
	else
		snprintf(buf, len, "%ldh%02ldm", x / 3600, x % 3600 / 60);
}

/* A time axis's tick spacing: about 8 over span seconds. */
static double
time_step(double span)
{
	static const double s[] = { 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600,
	    7200, 10800, 21600, 43200, 86400, 172800, 604800 };
	size_t i;

	for (i = 0; i < sizeof s / sizeof s[0]; i++)
		if (span / s[i] <= 8)
			return s[i];
	return s[i - 1];
}

/* When attempt a ended, as drawn: its end, now for one running, else (no
 * end: the machine vanished) its start. */
static double
att_end(const struct sr_report *r, const struct sr_report_job *j,
    const struct sr_attempt_record *a)
{
	if (a->ended > 0)
		return a->ended;
	return j->row->state == SR_LEASE_RUNNING ? r->now : a->started;
}

static const char *
att_class(const struct sr_attempt_record *a)
{
	if (a->ended <= 0)
		return strcmp(a->outcome, "running") == 0 ? "running" : "noend";
	if (strcmp(a->outcome, "exit 0") == 0)
		return "ok";
	if (strcmp(a->outcome, "preempted") == 0)
		return "preempted";
	return "failed";
}

static void
attempt(const struct sr_report *r, const struct sr_report_job *j,
    const struct sr_attempt_record *a, FILE *fp, double t0, double t1, int y)
{
	double span = t1 - t0, x = TL + (a->started - t0) / span * (W - TL - 10);
	double e = att_end(r, j, a), x2 = TL + (e - t0) / span * (W - TL - 10), w = x2 - x;
	char took[32], lost[32];

	if (w < 2)
		w = 2;
	fprintf(fp, "<g class=\"attempt %s\"><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
	    "height=\"14\"/><title>attempt %d of run ", att_class(a), x, y, w, a->attempt);
	sr_html(fp, a->run);
	fputs(": ", fp);
	sr_html(fp, a->ended > 0 ? a->outcome : "no end (running, or the machine vanished)");
	elapsed(e - a->started, took, sizeof took);
	fprintf(fp, " after %s, from %s", took, a->restored_step >= 0 ? "step " : "the start");
	if (a->restored_step >= 0)
		fprintf(fp, "%lld", a->restored_step);
	fprintf(fp, ", %d checkpoint%s; on ", a->checkpoints, a->checkpoints == 1 ? "" : "s");
	sr_html(fp, a->facts.provider);
	fputc(' ', fp);
	sr_html(fp, a->facts.instance_id);
	fputs(", ", fp);
	sr_html(fp, a->facts.instance_type);
	fputs(", ", fp);
	sr_html(fp, a->facts.zone);
	fputs(", ", fp);
	sr_html(fp, a->facts.lifecycle);
	if (a->lost > 0) {
		elapsed(a->lost, lost, sizeof lost);
		fprintf(fp, "; %s of work lost", lost);
	}
	fputs("</title></g>\n", fp);
	/* the machine, clipped to the bar's width by a nested svg */
	fprintf(fp, "<svg class=\"machine\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"14\">"
	    "<text x=\"1\" y=\"11\">", x, y + 15, w < 40 ? 40 : w);
	sr_html(fp, a->facts.instance_type[0] != '\0' ? a->facts.instance_type :
	    a->facts.provider);
	fputs("</text></svg>\n", fp);
	if (a->lost > 0 && a->ended > 0) {
		double lx = TL + (a->ended - a->lost - t0) / span * (W - TL - 10);
		double lw = x2 - lx < 2 ? 2 : x2 - lx;

		elapsed(a->lost, lost, sizeof lost);
		fprintf(fp, "<rect class=\"lost\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"14\">"
		    "<title>%s of work lost (done again)</title></rect>\n", lx, y, lw, lost);
	}
	if (strcmp(att_class(a), "preempted") == 0)
		fprintf(fp, "<path class=\"preempt\" d=\"M%.1f %d L%.1f %d L%.1f %d Z\"><title>"
		    "preempted (a notice, then the checkpoint it asked for, then the end)</title>"
		    "</path>\n", x2 - 5, y - 8, x2 + 5, y - 8, x2, y - 1);
}

void
sr_report_svg_timeline(const struct sr_report *r, FILE *fp)
{
	double t0 = 0, t1 = 0, span, st, t;
	int any = 0, h = 10 + (int)r->n * LANE + 56;
	size_t i, k;
	char lab[32];

	for (i = 0; i < r->n; i++) {
		const struct sr_report_job *j = &r->jobs[i];

		for (k = 0; k < j->natt; k++) {
			double e = att_end(r, j, &j->att[k]);

			t0 = any ? fmin(t0, j->att[k].started) : j->att[k].started;
			t1 = any ? fmax(t1, e) : e;
			any = 1;
		}
	}
	if (!any)
		return;
	for (i = 0; i < r->n; i++)
		for (k = 0; k < r->jobs[i].nck; k++) {
			t0 = fmin(t0, r->jobs[i].ck[k].created);
			t1 = fmax(t1, r->jobs[i].ck[k].created);
		}
	span = t1 - t0 > 1 ? t1 - t0 : 1;
	st = time_step(span);
	fprintf(fp, "<svg class=\"chart timeline\" "
	    "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
	    "aria-label=\"attempts on a time axis, a lane a job\">\n", W, h, W, h);
	for (t = 0; t <= span + 1e-9; t += st) {
		double x = TL + t / span * (W - TL - 10);

		elapsed(t, lab, sizeof lab);
		fprintf(fp, "<line class=\"grid\" x1=\"%.1f\" y1=\"6\" x2=\"%.1f\" y2=\"%d\"/>"
		    "<text class=\"tick x\" x=\"%.1f\" y=\"%d\">%s</text>\n", x, x,
		    10 + (int)r->n * LANE, x, 10 + (int)r->n * LANE + 14, lab);
	}
	for (i = 0; i < r->n; i++) {
		const struct sr_report_job *j = &r->jobs[i];
		int y = 10 + (int)i * LANE + 8;

		fprintf(fp, "<svg class=\"lane-label\" x=\"0\" y=\"%d\" width=\"%d\" height=\"16\">"
		    "<text x=\"2\" y=\"12\"%s>", y, TL - 6, (int)i == r->best ? " class=\"best\"" : "");
		sr_html(fp, j->row->id);
		fputs("</text></svg>\n", fp);
		for (k = 0; k < j->natt; k++)
			attempt(r, j, &j->att[k], fp, t0, t0 + span, y);
		for (k = 0; k < j->nck; k++) {
			fprintf(fp, "<circle class=\"ckpt\" cx=\"%.1f\" cy=\"%d\" r=\"3.5\"><title>"
			    "checkpoint", TL + (j->ck[k].created - t0) / span * (W - TL - 10), y + 7);
			if (j->ck[k].step >= 0)
				fprintf(fp, " at step %lld", j->ck[k].step);
			fputs("</title></circle>\n", fp);
		}
	}
	k = 10 + r->n * LANE + 38;
	fprintf(fp, "<g class=\"key\" transform=\"translate(%d %zu)\">"
	    "<rect class=\"attempt ok\" x=\"0\" y=\"-10\" width=\"14\" height=\"12\"/>"
	    "<text x=\"18\" y=\"0\">exit 0</text>"
	    "<rect class=\"attempt preempted\" x=\"70\" y=\"-10\" width=\"14\" height=\"12\"/>"
	    "<text x=\"88\" y=\"0\">preempted</text>"
	    "<rect class=\"attempt failed\" x=\"170\" y=\"-10\" width=\"14\" height=\"12\"/>"
	    "<text x=\"188\" y=\"0\">failed</text>"
	    "<rect class=\"attempt running\" x=\"245\" y=\"-10\" width=\"14\" height=\"12\"/>"
	    "<text x=\"263\" y=\"0\">running</text>"
	    "<rect class=\"lost\" x=\"330\" y=\"-10\" width=\"14\" height=\"12\"/>"
	    "<text x=\"348\" y=\"0\">work lost</text>"
	    "<circle class=\"ckpt\" cx=\"430\" cy=\"-4\" r=\"3.5\"/>"
	    "<text x=\"440\" y=\"0\">checkpoint</text>"
	    "<path class=\"preempt\" d=\"M515 -9 L525 -9 L520 -2 Z\"/>"
	    "<text x=\"530\" y=\"0\">preemption</text></g>\n", TL, k);
	fputs("</svg>\n", fp);
}
