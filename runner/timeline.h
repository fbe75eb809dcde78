/*
 * timeline.h: the short, human timeline `spotrun run` prints on stderr
 * ("00:12  notice   simulated preemption, deadline in 30.0s (at 14:30:42)"),
 * each line also passed to a sink (the attempt's log file). The time that
 * starts a line is elapsed since the start of the run, which the run's
 * first line gives as a wall-clock time. Lines may come from the checkpoint thread, so printing is
 * serialised.
 */
#ifndef SR_TIMELINE_H
#define SR_TIMELINE_H

#include <pthread.h>
#include <stdio.h>

struct sr_term;

struct sr_timeline {
	FILE *fp;		/* where lines go (stderr); NULL: nowhere */
	double t0;		/* sr_now() at the start of the run */
	int quiet;		/* print only errors and the final line */
	pthread_mutex_t lock;
	struct sr_term *term;	/* the terminal fp shares with a progress line */
	/* Each line is also given to sink (e.g. the attempt's log). */
	void (*sink)(void *arg, const char *line);
	void *sink_arg;
};

void sr_tl_init(struct sr_timeline *tl, FILE *fp, int quiet);
void sr_tl_destroy(struct sr_timeline *tl);
void sr_tl_set_sink(struct sr_timeline *tl, void (*sink)(void *, const char *), void *arg);
/* The terminal whose progress line a printed line must not glue onto (the
 * line is erased first and drawn again after); NULL: none. */
void sr_tl_set_term(struct sr_timeline *tl, struct sr_term *term);
/* Print "MM:SS  event  message"; important lines print even when quiet. */
void sr_tl(struct sr_timeline *tl, int important, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Format an absolute epoch time as the run-relative "MM:SS" (or "H:MM:SS"). */
const char *sr_tl_clock(const struct sr_timeline *tl, double epoch, char *buf, size_t len);
/* Format an epoch time as the wall-clock, local time: "14:40:05", or with
 * date "2026-12-01 14:30:05.123 +0100". The timeline's own times are
 * elapsed; a deadline or a log's zero is also given as a wall-clock time so
 * that neither reads as the other. */
const char *sr_tl_wall(double epoch, int date, char *buf, size_t len);

#endif
