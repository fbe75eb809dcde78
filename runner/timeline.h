/*
 * timeline.h: the short, human timeline `spotrun run` prints on stderr
 * ("00:12  notice   simulated preemption, deadline 00:42"), each line also
 * passed to a sink (the attempt's log file). Times are relative to the start
 * of the run. Lines may come from the checkpoint thread, so printing is
 * serialised.
 */
#ifndef SR_TIMELINE_H
#define SR_TIMELINE_H

#include <pthread.h>
#include <stdio.h>

struct sr_timeline {
	FILE *fp;		/* where lines go (stderr); NULL: nowhere */
	double t0;		/* sr_now() at the start of the run */
	int quiet;		/* print only errors and the final line */
	pthread_mutex_t lock;
	/* Each line is also given to sink (e.g. the attempt's log). */
	void (*sink)(void *arg, const char *line);
	void *sink_arg;
};

void sr_tl_init(struct sr_timeline *tl, FILE *fp, int quiet);
void sr_tl_destroy(struct sr_timeline *tl);
void sr_tl_set_sink(struct sr_timeline *tl, void (*sink)(void *, const char *), void *arg);
/* Print "MM:SS  event  message"; important lines print even when quiet. */
void sr_tl(struct sr_timeline *tl, int important, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Format an absolute epoch time as the run-relative "MM:SS" (or "H:MM:SS"). */
const char *sr_tl_clock(const struct sr_timeline *tl, double epoch, char *buf, size_t len);

#endif
