/*
 * progress.c: see progress.h. What is drawn, and when, is the terminal's
 * business (term.c): here the text of the line.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "progress.h"
#include "term.h"
#include "util.h"

void
sr_progress_start(struct sr_progress *p, struct sr_term *term, const char *what)
{
	memset(p, 0, sizeof *p);
	p->term = sr_term_draws(term) ? term : NULL;
	snprintf(p->what, sizeof p->what, "%s", what);
	p->t0 = sr_mono();
	p->delay = 1.0;
}

void
sr_progress_format(char *buf, size_t len, const char *what, uint64_t done, uint64_t total,
    double elapsed)
{
	char d[32], t[32], rate[32], left[32];
	double bps = elapsed > 0 ? (double)done / elapsed : 0;
	int pct = total > 0 ? (int)((double)done * 100.0 / (double)total) : 100;

	sr_fmt_bytes(done, d, sizeof d);
	sr_fmt_bytes(total, t, sizeof t);
	sr_fmt_bytes((uint64_t)bps, rate, sizeof rate);
	if (bps > 0 && done < total)
		sr_fmt_duration((double)(total - done) / bps, left, sizeof left);
	else
		sr_fmt_duration(0, left, sizeof left);
	snprintf(buf, len, "%s: %s of %s (%d%%), %s/s, %s left", what, d, t, pct, rate, left);
}

void
sr_progress_update(void *arg, uint64_t done, uint64_t total)
{
	struct sr_progress *p = arg;
	double elapsed = sr_mono() - p->t0;
	char line[256];

	if (p->term == NULL)
		return;
	if (done >= total) {
		sr_progress_end(p);
		return;
	}
	if (elapsed < p->delay)
		return;
	sr_progress_format(line, sizeof line, p->what, done, total, elapsed);
	sr_term_show(p->term, line);
	p->shown = 1;
}

void
sr_progress_end(struct sr_progress *p)
{
	if (p->term != NULL && p->shown)
		sr_term_show(p->term, NULL);
	p->shown = 0;
}
