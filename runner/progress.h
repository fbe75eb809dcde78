/*
 * progress.h: the one-line progress display of a long checkpoint transfer
 * on a terminal ("checkpoint: 512.0 MiB of 1.0 GiB (50%), 240.0 MiB/s,
 * 2.1s left"), redrawn in place with \r at most four times a second (the
 * ckpt module throttles its calls) and erased when the transfer ends, so
 * the timeline's summary line takes its place. Nothing is drawn when the
 * output is not a terminal, nor for transfers shorter than a second. The
 * terminal (term.h) keeps it clear of other output and fits it to the
 * width.
 */
#ifndef SR_PROGRESS_H
#define SR_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

struct sr_term;

struct sr_progress {
	struct sr_term *term;	/* where to draw; NULL: draw nothing */
	char what[64];		/* "checkpoint", "restore" */
	double t0;		/* sr_mono() at the start */
	double delay;		/* seconds before the first draw (1) */
	int shown;		/* a line is on the screen */
};

/* Start showing the transfer named what on term, if it is a terminal. */
void sr_progress_start(struct sr_progress *p, struct sr_term *term, const char *what);
/* The sr_ckpt_opts progress callback; arg is a struct sr_progress. The
 * end (done == total) erases the line. */
void sr_progress_update(void *arg, uint64_t done, uint64_t total);
/* Erase the line if one is shown (the transfer failed or ended early). */
void sr_progress_end(struct sr_progress *p);
/* The line's text (no \r), for done of total after elapsed seconds. */
void sr_progress_format(char *buf, size_t len, const char *what, uint64_t done, uint64_t total,
    double elapsed);

#endif
