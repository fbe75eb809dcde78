/*
 * progress.c: see progress.h. The line is written with one write() so a
 * line of the job's output, written by another thread, cannot land in the
 * middle of it; at worst it lands after it, and the next redraw starts a
 * clean line.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "progress.h"
#include "util.h"

void
sr_progress_start(struct sr_progress *p, int fd, const char *what)
{
	memset(p, 0, sizeof *p);
	p->fd = fd >= 0 && isatty(fd) ? fd : -1;
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

	if (p->fd == -1)
		return;
	if (done >= total) {
		sr_progress_end(p);
		return;
	}
	if (elapsed < p->delay)
		return;
	line[0] = '\r';
	sr_progress_format(line + 1, sizeof line - 8, p->what, done, total, elapsed);
	strcat(line, "\033[K");	/* erase what a longer line left */
	if (sr_write_all(p->fd, line, strlen(line)) >= 0)
		p->shown = 1;
}

void
sr_progress_end(struct sr_progress *p)
{
	if (p->fd != -1 && p->shown)
		(void)sr_write_all(p->fd, "\r\033[K", 4);
	p->shown = 0;
}
