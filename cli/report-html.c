/*
 * report-html.c: the report's page (report.h): one HTML file with its CSS
 * inline and its charts as inline SVG (report-svg.c), no script, font,
 * image or anything else it would fetch (its Content-Security-Policy
 * forbids all of it): the metric's curves, the table of jobs as
 * `status SWEEP` shows them, the cost against on-demand machines, the
 * timeline of attempts and the table of them, and the best job's file.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "report.h"
#include "status-trials.h"

static const char css[] =
    "body{font:14px/1.4 sans-serif;margin:24px auto;max-width:840px;color:#222;"
    "background:#fff}\n"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;"
    "border-bottom:1px solid #ccc}\n"
    "p.sub,p.foot{color:#555;margin:2px 0}p.none{color:#8a5a00;background:#fff6e0;"
    "padding:8px}\n"
    /* a wide table scrolls in its own box: the page keeps its width */
    "table{border-collapse:collapse;font-size:13px;display:block;overflow-x:auto;"
    "max-width:100%}th,td{padding:2px 8px;text-align:left;"
    "border-bottom:1px solid #eee;white-space:nowrap}td.n,th.n{text-align:right}\n"
    "tr.best td{background:#fff3b0;font-weight:bold}\n"
    "pre{background:#f6f6f6;padding:10px;overflow:auto;font-size:12px}\n"
    ".chart{display:block;margin:8px 0;font-size:11px}.plot{fill:#fafafa;stroke:#999}\n"
    ".grid{stroke:#e4e4e4}.tick{stroke:#999}text.tick.y{text-anchor:end}"
    "text.tick.x{text-anchor:middle}.axis{text-anchor:middle;font-size:12px}\n"
    ".curve{fill:none;stroke-width:1.5;opacity:.7}.curve.best{stroke-width:3.5;opacity:1}\n"
    ".best-point{fill:#fff;stroke-width:2}.legend line{stroke-width:3}"
    ".legend.best text{font-weight:bold}\n"
    ".attempt rect,rect.attempt{stroke:#333;stroke-width:.5}.ok rect,rect.ok{fill:#59a14f}"
    ".preempted rect,rect.preempted{fill:#f28e2b}.failed rect,rect.failed{fill:#e15759}"
    ".running rect,rect.running{fill:#4e79a7}.noend rect{fill:#bab0ac}\n"
    ".lost{fill:#7b1f1f;opacity:.75}.ckpt{fill:#fff;stroke:#111;stroke-width:1.5}"
    ".preempt{fill:#c00}.machine text{font-size:10px;fill:#444}"
    "text.best{font-weight:bold}\n"
    ".bar.cost{fill:#59a14f}.bar.od{fill:#bab0ac}\n";

static void
utc(double t, char *buf, size_t len)
{
	time_t x = (time_t)t;
	struct tm tm;

	if (t <= 0 || gmtime_r(&x, &tm) == NULL)
		snprintf(buf, len, "-");
	else
		strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

static void
duration(double s, char *buf, size_t len)
{
	long x = (long)(s + 0.5);

	if (s <= 0)
		snprintf(buf, len, "-");
	else if (x < 60)
		snprintf(buf, len, "%lds", x);
	else if (x < 3600)
		snprintf(buf, len, "%ldm%02lds", x / 60, x % 60);
	else
		snprintf(buf, len, "%ldh%02ldm", x / 3600, x % 3600 / 60);
}

static void
value(FILE *fp, int have, double v)
{
	if (have)
		fprintf(fp, "%.6g", v);
	else
		fputs("-", fp);
}

static void
head(const struct sr_report *r, FILE *fp)
{
	char when[48];

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	    "style-src 'unsafe-inline'\">\n<title>spotrun report: ", fp);
	fputs(r->is_sweep ? "sweep " : "job ", fp);
	sr_html(fp, r->title);
	fprintf(fp, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", css);
	fputs(r->is_sweep ? "Sweep " : "Job ", fp);
	sr_html(fp, r->title);
	utc(r->now, when, sizeof when);
	fprintf(fp, "</h1>\n<p class=\"sub\">%zu %s in queue ", r->n,
	    r->is_sweep ? (r->n == 1 ? "trial" : "trials") : (r->n == 1 ? "job" : "jobs"));
	sr_html(fp, r->queue);
	fprintf(fp, ", as of %s</p>\n", when);
}

static void
curves(const struct sr_report *r, FILE *fp)
{
	size_t i;
	int any = 0;

	fputs("<h2>Metric ", fp);
	sr_html(fp, r->metric);
	fprintf(fp, " (%s is best)</h2>\n", r->goal ? "largest" : "smallest");
	for (i = 0; i < r->n; i++)
		any = any || r->jobs[i].have;
	if (!any) {
		fputs("<p class=\"none\">No metrics reported: no job reported a value of ", fp);
		sr_html(fp, r->metric);
		fputs(" (doc/spotrun.1, METRICS: spotrun.report() in Python, spotrun_report() in "
		    "libspotrun, or lines appended to $SPOTRUN_METRICS).</p>\n", fp);
		return;
	}
	sr_report_svg_curves(r, fp);
}

static void
jobs_table(const struct sr_report *r, FILE *fp)
{
	char took[32];
	size_t i, k;

	fprintf(fp, "<h2>%s</h2>\n<table class=\"jobs\">\n<tr><th>%s</th>",
	    r->is_sweep ? "Trials" : "Job", r->is_sweep ? "TRIAL" : "JOB");
	for (k = 0; k < r->nvarying; k++) {
		fputs("<th>", fp);
		sr_html(fp, r->varying[k]);
		fputs("</th>", fp);
	}
	fputs("<th>STATE</th><th class=\"n\">ATT</th><th class=\"n\">PREEMPTED</th>"
	    "<th class=\"n\">TIME</th><th class=\"n\">GPU-HOURS</th><th class=\"n\">LOST</th>"
	    "<th class=\"n\">COST</th><th class=\"n\">ON-DEMAND</th><th class=\"n\">LAST</th>"
	    "<th class=\"n\">BEST</th><th class=\"n\">STEP</th><th>HOST</th></tr>\n", fp);
	for (i = 0; i < r->n; i++) {
		const struct sr_report_job *j = &r->jobs[i];
		const struct sr_fleet_row *w = j->row;

		fprintf(fp, "<tr%s><td>", (int)i == r->best ? " class=\"best\"" : "");
		sr_html(fp, w->id);
		fputs("</td>", fp);
		for (k = 0; k < r->nvarying; k++) {
			fputs("<td>", fp);
			sr_html(fp, sr_param_value(j->have_meta ? &j->meta : NULL, r->varying[k]));
			fputs("</td>", fp);
		}
		duration(j->seconds, took, sizeof took);
		fprintf(fp, "<td>%s</td><td class=\"n\">%d</td><td class=\"n\">%d</td>"
		    "<td class=\"n\">%s</td><td class=\"n\">%.2f</td><td class=\"n\">%.2f</td>"
		    "<td class=\"n\">$%.2f</td><td class=\"n\">$%.2f</td><td class=\"n\">",
		    sr_lease_state_name(w->state), w->attempts, w->preemptions, took,
		    (double)w->gpu_seconds / 3600.0, (double)w->lost_gpu_seconds / 3600.0, w->cost,
		    w->on_demand_cost);
		value(fp, j->have, j->latest);
		fputs("</td><td class=\"n\">", fp);
		value(fp, j->have, j->best);
		fputs("</td><td class=\"n\">", fp);
		if (w->step >= 0)
			fprintf(fp, "%lld", (long long)w->step);
		else
			fputs("-", fp);
		fputs("</td><td>", fp);
		sr_html(fp, w->host[0] != '\0' ? w->host : "-");
		fputs("</td></tr>\n", fp);
	}
	fputs("</table>\n", fp);
}

static void
cost(const struct sr_report *r, FILE *fp)
{
	const struct sr_status_totals *t = &r->totals;
	double top = t->on_demand_cost > t->cost ? t->on_demand_cost : t->cost;
	int wc = top > 0 ? (int)(t->cost / top * 500 + 0.5) : 0;
	int wo = top > 0 ? (int)(t->on_demand_cost / top * 500 + 0.5) : 0;

	fputs("<h2>Cost against on-demand</h2>\n<p class=\"cost\">", fp);
	fprintf(fp, "%ld attempt%s, %ld preemption%s, %.2f GPU-hours used, %.2f lost (done again); "
	    "cost $%.2f, on demand $%.2f, saved $%.2f", t->attempts, t->attempts == 1 ? "" : "s",
	    t->preemptions, t->preemptions == 1 ? "" : "s", (double)t->gpu_seconds / 3600.0,
	    (double)t->lost_gpu_seconds / 3600.0, t->cost, t->on_demand_cost,
	    t->on_demand_cost - t->cost);
	if (t->on_demand_cost > 0)
		fprintf(fp, " (%.0f%%)", 100.0 * (t->on_demand_cost - t->cost) / t->on_demand_cost);
	fputs("</p>\n", fp);
	if (top <= 0) {
		fputs("<p class=\"sub\">No machine had a price (the agents' price tables priced "
		    "nothing: a local machine costs nothing).</p>\n", fp);
		return;
	}
	fprintf(fp, "<svg class=\"chart cost\" width=\"800\" "
	    "height=\"64\" viewBox=\"0 0 800 64\" role=\"img\" aria-label=\"cost against "
	    "on-demand\">\n<text x=\"0\" y=\"20\">spot</text><rect class=\"bar cost\" x=\"90\" "
	    "y=\"8\" width=\"%d\" height=\"18\"/><text x=\"%d\" y=\"22\">$%.2f</text>\n"
	    "<text x=\"0\" y=\"50\">on demand</text><rect class=\"bar od\" x=\"90\" y=\"38\" "
	    "width=\"%d\" height=\"18\"/><text x=\"%d\" y=\"52\">$%.2f</text>\n</svg>\n", wc,
	    96 + wc, t->cost, wo, 96 + wo, t->on_demand_cost);
}

static void
attempts_table(const struct sr_report *r, FILE *fp)
{
	char when[48], took[32], lost[32];
	size_t i, k;
	int any = 0;

	for (i = 0; i < r->n; i++)
		any = any || r->jobs[i].natt > 0;
	fputs("<h2>Timeline</h2>\n", fp);
	if (!any) {
		fputs("<p class=\"none\">No attempts recorded yet.</p>\n", fp);
		return;
	}
	sr_report_svg_timeline(r, fp);
	fputs("<table class=\"attempts\">\n<tr><th>JOB</th><th>RUN</th><th class=\"n\">ATTEMPT"
	    "</th><th>STARTED</th><th class=\"n\">TIME</th><th>FROM</th><th class=\"n\">CKPTS"
	    "</th><th>OUTCOME</th><th class=\"n\">LOST</th><th>MACHINE</th></tr>\n", fp);
	for (i = 0; i < r->n; i++)
		for (k = 0; k < r->jobs[i].natt; k++) {
			const struct sr_attempt_record *a = &r->jobs[i].att[k];

			fputs("<tr><td>", fp);
			sr_html(fp, r->jobs[i].row->id);
			fputs("</td><td>", fp);
			sr_html(fp, a->run);
			utc(a->started, when, sizeof when);
			duration(a->ended > 0 ? a->ended - a->started : 0, took, sizeof took);
			duration(a->lost, lost, sizeof lost);
			fprintf(fp, "</td><td class=\"n\">%d</td><td>%s</td><td class=\"n\">%s</td>"
			    "<td>", a->attempt, when, took);
			if (a->restored_step >= 0)
				fprintf(fp, "step %lld", a->restored_step);
			else
				fputs("fresh", fp);
			fprintf(fp, "</td><td class=\"n\">%d</td><td>", a->checkpoints);
			sr_html(fp, a->ended > 0 ? a->outcome :
			    "no end (running, or the machine vanished)");
			fprintf(fp, "</td><td class=\"n\">%s</td><td>", lost);
			sr_html(fp, a->facts.provider);
			fputc(' ', fp);
			sr_html(fp, a->facts.instance_id);
			fputs(", ", fp);
			sr_html(fp, a->facts.instance_type);
			fputs(", ", fp);
			sr_html(fp, a->facts.zone);
			fputs(", ", fp);
			sr_html(fp, a->facts.lifecycle);
			fputs("</td></tr>\n", fp);
		}
	fputs("</table>\n", fp);
}

static void
job_file(const struct sr_report *r, FILE *fp)
{
	const struct sr_report_job *j;

	if (r->n == 0)
		return;
	j = &r->jobs[r->best >= 0 ? r->best : 0];
	fputs("<h2>Job file of ", fp);
	fputs(r->best >= 0 ? "the best, " : "", fp);
	sr_html(fp, j->row->id);
	if (r->best < 0)
		fputs(" (no metric to rank by)", fp);
	fputs("</h2>\n", fp);
	if (r->spec == NULL) {
		fputs("<p class=\"none\">Its job file could not be read.</p>\n", fp);
		return;
	}
	fputs("<pre class=\"jobfile\">", fp);
	sr_html(fp, r->spec);
	fputs("</pre>\n", fp);
}

int
sr_report_write_html(const struct sr_report *r, FILE *fp)
{
	head(r, fp);
	curves(r, fp);
	jobs_table(r, fp);
	cost(r, fp);
	attempts_table(r, fp);
	job_file(r, fp);
	fprintf(fp, "<p class=\"foot\">Written by spotrun %s report from %lld requests to the "
	    "queue%s.</p>\n</body>\n</html>\n", PACKAGE_VERSION, r->requests,
	    r->warnings > 0 ? "; some of it could not be read (said on standard error)" : "");
	if (fflush(fp) == EOF || ferror(fp)) {
		if (errno == 0)
			errno = EIO;
		return -1;
	}
	return 0;
}
