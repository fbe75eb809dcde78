/*
 * timeline.c: see timeline.h.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "term.h"
#include "timeline.h"
#include "util.h"

void
sr_tl_init(struct sr_timeline *tl, FILE *fp, int quiet)
{
	tl->fp = fp;
	tl->t0 = sr_now();
	tl->quiet = quiet;
	tl->sink = NULL;
	tl->sink_arg = NULL;
	tl->term = NULL;
	pthread_mutex_init(&tl->lock, NULL);
}

void
sr_tl_destroy(struct sr_timeline *tl)
{
	pthread_mutex_destroy(&tl->lock);
}

void
sr_tl_set_sink(struct sr_timeline *tl, void (*sink)(void *, const char *), void *arg)
{
	pthread_mutex_lock(&tl->lock);
	tl->sink = sink;
	tl->sink_arg = arg;
	pthread_mutex_unlock(&tl->lock);
}

void
sr_tl_set_term(struct sr_timeline *tl, struct sr_term *term)
{
	pthread_mutex_lock(&tl->lock);
	tl->term = term;
	pthread_mutex_unlock(&tl->lock);
}

const char *
sr_tl_clock(const struct sr_timeline *tl, double epoch, char *buf, size_t len)
{
	double d = epoch - tl->t0;
	long s;

	if (d < 0)
		d = 0;
	s = (long)d;
	if (s >= 3600)
		snprintf(buf, len, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
	else
		snprintf(buf, len, "%02ld:%02ld", s / 60, s % 60);
	return buf;
}

const char *
sr_tl_wall(double epoch, int date, char *buf, size_t len)
{
	time_t t = (time_t)epoch;
	struct tm tm;
	char day[32], zone[16];

	localtime_r(&t, &tm);
	if (!date) {
		strftime(buf, len, "%H:%M:%S", &tm);
		return buf;
	}
	strftime(day, sizeof day, "%Y-%m-%d %H:%M:%S", &tm);
	strftime(zone, sizeof zone, "%z", &tm);
	snprintf(buf, len, "%s.%03d %s", day, (int)((epoch - (double)t) * 1000), zone);
	return buf;
}

void
sr_tl(struct sr_timeline *tl, int important, const char *event, const char *fmt, ...)
{
	char clock[32], msg[1024], line[1200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(line, sizeof line, "%s  %-8s %s", sr_tl_clock(tl, sr_now(), clock, sizeof clock),
	    event, msg);
	pthread_mutex_lock(&tl->lock);
	if (tl->fp != NULL && (important || !tl->quiet)) {
		sr_term_begin(tl->term, fileno(tl->fp));
		fprintf(tl->fp, "%s\n", line);
		fflush(tl->fp);
		sr_term_end(tl->term, fileno(tl->fp), "\n", 1);
	}
	if (tl->sink != NULL)
		tl->sink(tl->sink_arg, line);
	pthread_mutex_unlock(&tl->lock);
}
