/*
 * watch.c: see watch.h.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util.h"
#include "watch.h"

void
sr_watch_init(struct sr_watch *w, const char *who)
{
	pthread_condattr_t ca;
	int r;

	memset(w, 0, sizeof *w);
	w->who = who;
	if ((r = pthread_mutex_init(&w->lock, NULL)) != 0 ||
	    (r = pthread_condattr_init(&ca)) != 0)
		sr_fatal("%s provider: pthread init: %s", who, strerror(r));
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if ((r = pthread_cond_init(&w->cond, &ca)) != 0)
		sr_fatal("%s provider: pthread_cond_init: %s", who, strerror(r));
	pthread_condattr_destroy(&ca);
}

void
sr_watch_destroy(struct sr_watch *w)
{
	sr_watch_stop(w);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
}

int
sr_watch_start(struct sr_watch *w, void *(*fn)(void *), void *arg, int vm, char *err)
{
	sigset_t all, old;
	int r;

	__atomic_store_n(&w->stop, 0, __ATOMIC_RELAXED);
	/* The watcher takes no signals: they stay with the supervisor. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&w->thread, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		errno = r;
		return sr_errno(err, "start VM %d: create the notice thread", vm);
	}
	w->live = 1;
	return 0;
}

void
sr_watch_stop(struct sr_watch *w)
{
	if (!w->live)
		return;
	pthread_mutex_lock(&w->lock);
	__atomic_store_n(&w->stop, 1, __ATOMIC_RELAXED);
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	w->live = 0;
}

int
sr_watch_stopping(struct sr_watch *w)
{
	return __atomic_load_n(&w->stop, __ATOMIC_RELAXED);
}

int
sr_watch_wait_locked(struct sr_watch *w, double until)
{
	struct timespec ts;

	if (sr_watch_stopping(w))
		return 1;
	if (until < 0) {
		pthread_cond_wait(&w->cond, &w->lock);
	} else {
		ts.tv_sec = (time_t)until;
		ts.tv_nsec = (long)((until - (double)ts.tv_sec) * 1e9);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&w->cond, &w->lock, &ts);
	}
	return sr_watch_stopping(w);
}

void
sr_watch_error(struct sr_watch *w, const char *msg)
{
	int first;

	pthread_mutex_lock(&w->lock);
	w->errors++;
	strlcpy(w->last_err, msg, sizeof w->last_err);
	first = !w->warned;
	w->warned = 1;
	pthread_mutex_unlock(&w->lock);
	if (first)
		fprintf(stderr, "spotrun: warning: %s: %s (polling goes on; later "
		    "errors are not shown)\n", w->who, msg);
}

void
sr_watch_errors(struct sr_watch *w, unsigned long *count, char *last, size_t len)
{
	pthread_mutex_lock(&w->lock);
	*count = w->errors;
	if (last != NULL)
		strlcpy(last, w->last_err, len);
	pthread_mutex_unlock(&w->lock);
}
