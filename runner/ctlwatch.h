/*
 * ctlwatch.h: the one descriptor a checkpoint method gives the loop to
 * poll (method.h's fd): readable when the method's own pipe has a byte (a
 * save thread's end, a commit the job reported) or when inotify saw a
 * watched file of the run's control directory change (the job's done
 * marker renamed into place, the library's saves file written). So the
 * loop wakes as the job answers, not at its next poll of the markers.
 * Used from the loop's thread; sr_ctlwatch_post from any.
 */
#ifndef SR_CTLWATCH_H
#define SR_CTLWATCH_H

#include <stdint.h>

struct sr_ctlwatch {
	int pipe[2];	/* [0] non-blocking */
	int ino;	/* inotify, non-blocking */
	int ep;		/* epoll over both: the fd the loop polls */
};

/* Set w up (its fields -1 first, so sr_ctlwatch_close is safe after a
 * failure). 0, or -1 with err. */
int sr_ctlwatch_init(struct sr_ctlwatch *w, char *err);
/* Watch path (a file or a directory) for the inotify events of mask.
 * 0, or -1 with err (e.g. the user's inotify watches are used up). */
int sr_ctlwatch_add(struct sr_ctlwatch *w, const char *path, uint32_t mask, char *err);
/* The descriptor the loop polls. */
int sr_ctlwatch_fd(const struct sr_ctlwatch *w);
/* One byte into the pipe: the fd is readable until sr_ctlwatch_take. 0,
 * or -1 (errno). */
int sr_ctlwatch_post(struct sr_ctlwatch *w);
/* One byte of the pipe taken: 1, or 0 when there was none. Never blocks. */
int sr_ctlwatch_take(struct sr_ctlwatch *w);
/* inotify's events taken away (the caller looks at the files themselves),
 * so that the fd is not readable for them again. Never blocks. */
void sr_ctlwatch_drain(struct sr_ctlwatch *w);
/* Close what w holds. */
void sr_ctlwatch_close(struct sr_ctlwatch *w);

#endif
