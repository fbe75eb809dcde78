/*
 * watch.h: the watcher thread every provider runs per VM: started by
 * start_vm, stopped promptly by stop_vm (a condition variable on the
 * monotonic clock, not a sleep), with every signal blocked so that signals
 * stay with the supervisor's loop.
 */
#ifndef SR_WATCH_H
#define SR_WATCH_H

#include <pthread.h>
#include <stddef.h>

#include "util.h"

struct sr_watch {
	pthread_mutex_t lock;	/* guards stop and the provider's shared state */
	pthread_cond_t cond;	/* waits on CLOCK_MONOTONIC */
	pthread_t thread;
	int live;		/* started and not yet joined */
	int stop;		/* written under lock, readable atomically */
	const char *who;	/* the provider's name, for messages */
	/* Under lock: what went wrong while watching (sr_watch_error). */
	unsigned long errors;
	char last_err[SR_ERRMAX];
	int warned;		/* stderr got the first error */
};

/* Initialise w for the provider named who (a string that outlives w);
 * dies (sr_fatal) if pthreads cannot. */
void sr_watch_init(struct sr_watch *w, const char *who);
void sr_watch_destroy(struct sr_watch *w);
/* Start fn(arg) on a thread with all signals blocked; 0, or -1 with err
 * ("start VM N: create the notice thread: ..."). */
int sr_watch_start(struct sr_watch *w, void *(*fn)(void *), void *arg, int vm, char *err);
/* Ask the thread to end, wake it, and join it; nothing if none runs. */
void sr_watch_stop(struct sr_watch *w);
/* Non-zero once sr_watch_stop was called (no lock needed). */
int sr_watch_stopping(struct sr_watch *w);
/* With w->lock held: wait until monotonic time `until` (< 0: until woken),
 * or a stop, or a wake-up; returns sr_watch_stopping(). */
int sr_watch_wait_locked(struct sr_watch *w, double until);

/* A failure while watching: counted, kept as the last error, and the
 * first one of the provider's life written to stderr too (there is no
 * other channel to the runner's output); watching goes on. */
void sr_watch_error(struct sr_watch *w, const char *msg);
/* How many failures so far, and the last one into last (len bytes; last
 * may be NULL). */
void sr_watch_errors(struct sr_watch *w, unsigned long *count, char *last, size_t len);

#endif
