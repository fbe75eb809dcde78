/*
 * lease-keeper.c: the threads that keep a held lease alive (lease.h). The
 * renewer renews every TTL / 3 by the monotonic clock (a wall-clock jump
 * moves neither the schedule nor the give-up time) and about every second
 * after a failed renewal (GCS takes one write per second per object). The
 * watchdog gives the lease up SR_LEASE_GIVEUP before its TTL ends when no
 * renewal got through, even while a renewal hangs in the network: the
 * holder must stop before another machine, whose clock may be a few
 * seconds ahead, sees the lease expired.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lease-int.h"
#include "util.h"

struct sr_lease_keeper {
	struct sr_lease *l;
	pthread_t renewer, watchdog;
	int nthreads;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* on CLOCK_MONOTONIC */
	int stop;
	int done;			/* the renewer ended (its holder ended the lease) */
	int rc;				/* SR_LEASE_OK while held, then SR_LEASE_LOST */
	char why[SR_ERRMAX];
	int renewals;
	double ok_at;			/* monotonic send time of the last good write */
	double ttl;
	int pipe[2];			/* [0] readable once lost */
	void (*lost)(void *arg, int rc, const char *why);
	void *arg;
	void (*held)(void *arg, double until, double expires);
	void *held_arg;
};

/* Tell the watcher how long the lease is held now; with k->lock held. */
static void
tell_held(struct sr_lease_keeper *k)
{
	if (k->held != NULL)
		k->held(k->held_arg, k->ok_at + k->ttl - SR_LEASE_GIVEUP(k->ttl), k->ok_at + k->ttl);
}

/* Wait until the monotonic time t, a stop or the loss; 1 unless t came. */
static int
wait_until(struct sr_lease_keeper *k, double t)
{
	struct timespec ts;
	int over;

	sr_timespec(t, &ts);
	pthread_mutex_lock(&k->lock);
	while (!k->stop && k->rc == SR_LEASE_OK && sr_mono() < t)
		pthread_cond_timedwait(&k->cond, &k->lock, &ts);
	over = k->stop || k->rc != SR_LEASE_OK;
	pthread_mutex_unlock(&k->lock);
	return over;
}

/* The lease is lost: say so once (the renewer and the watchdog may both
 * find out). */
static void
report(struct sr_lease_keeper *k, const char *why)
{
	char one = 'x';
	int first;

	pthread_mutex_lock(&k->lock);
	first = k->rc == SR_LEASE_OK && !k->stop;
	if (first) {
		k->rc = SR_LEASE_LOST;
		snprintf(k->why, sizeof k->why, "%s", why);
	}
	pthread_cond_broadcast(&k->cond);
	pthread_mutex_unlock(&k->lock);
	if (!first)
		return;
	if (k->lost != NULL)
		k->lost(k->arg, SR_LEASE_LOST, why);
	if (write(k->pipe[1], &one, 1) == -1) {
		/* the pipe is ours and empty: it cannot be full */
	}
}

static int
still_held(struct sr_lease *l)
{
	int held;

	pthread_mutex_lock(&l->lock);
	held = l->held;
	pthread_mutex_unlock(&l->lock);
	return held;
}

static void *
renewer_main(void *arg)
{
	struct sr_lease_keeper *k = arg;
	struct sr_lease *l = k->l;
	double interval = k->ttl / 3, retry = interval / 4 < 1.0 ? interval / 4 : 1.0;
	double next = k->ok_at + interval;
	char err[SR_ERRMAX];

	while (!wait_until(k, next)) {
		double t0 = sr_mono();
		int rc = sr_lease_renew(l, err);

		if (rc == SR_LEASE_OK) {
			pthread_mutex_lock(&k->lock);
			k->renewals++;
			k->ok_at = t0;
			tell_held(k);
			pthread_cond_broadcast(&k->cond);	/* the watchdog's deadline moved */
			pthread_mutex_unlock(&k->lock);
			next = t0 + interval;
			continue;
		}
		if (rc == SR_LEASE_LOST) {
			report(k, err);
			break;
		}
		if (!still_held(l)) {
			/* its holder ended it: nothing to keep, nothing to give up */
			pthread_mutex_lock(&k->lock);
			k->done = 1;
			pthread_cond_broadcast(&k->cond);
			pthread_mutex_unlock(&k->lock);
			break;
		}
		pthread_mutex_lock(&k->lock);
		snprintf(k->why, sizeof k->why, "%s", err);	/* the watchdog's last error */
		pthread_mutex_unlock(&k->lock);
		next = sr_mono() + retry;
	}
	return NULL;
}

/* The lease is given up: no renewal got through by its give-up time.
 * Called without k->lock. */
static void
give_up(struct sr_lease_keeper *k)
{
	char why[SR_ERRMAX], last[SR_ERRMAX], dur[32];
	double since;

	pthread_mutex_lock(&k->lock);
	since = sr_mono() - k->ok_at;
	snprintf(last, sizeof last, "%s", k->why[0] != '\0' ? k->why : "a renewal still in flight");
	pthread_mutex_unlock(&k->lock);
	snprintf(why, sizeof why, "renew lease %s in %s: lost: not renewed for %s, too close to its "
	    "expiry to go on (last error: %s)", k->l->key, sr_store_url(k->l->st),
	    sr_fmt_duration(since, dur, sizeof dur), last);
	/* not still_held(): a hung renewal holds the lease's lock */
	report(k, why);
}

/* Whether the give-up time has come with the lease still held; with
 * k->lock held. */
static int
due(const struct sr_lease_keeper *k)
{
	return !k->stop && !k->done && k->rc == SR_LEASE_OK &&
	    sr_mono() >= k->ok_at + k->ttl - SR_LEASE_GIVEUP(k->ttl);
}

static void *
watchdog_main(void *arg)
{
	struct sr_lease_keeper *k = arg;
	struct timespec ts;
	double giveup;

	/* Its give-up must not wait behind a loaded machine's runnable
	 * processes: a higher priority for this thread alone where that is
	 * allowed (root, CAP_SYS_NICE); refused, it runs as it is. */
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), SR_LEASE_WATCHDOG_NICE);
	pthread_mutex_lock(&k->lock);
	for (;;) {
		giveup = k->ok_at + k->ttl - SR_LEASE_GIVEUP(k->ttl);
		if (k->stop || k->done || k->rc != SR_LEASE_OK)
			break;
		if (due(k)) {
			pthread_mutex_unlock(&k->lock);
			give_up(k);
			pthread_mutex_lock(&k->lock);
			break;
		}
		sr_timespec(giveup, &ts);
		pthread_cond_timedwait(&k->cond, &k->lock, &ts);
	}
	pthread_mutex_unlock(&k->lock);
	return NULL;
}

struct sr_lease_keeper *
sr_lease_keeper_start(struct sr_lease *l, void (*lost)(void *arg, int rc, const char *why),
    void *arg, char *err)
{
	struct sr_lease_keeper *k = sr_calloc(1, sizeof *k);
	pthread_condattr_t ca;
	sigset_t all, old;
	int r;

	k->l = l;
	k->lost = lost;
	k->arg = arg;
	pthread_mutex_lock(&l->lock);
	k->ttl = l->info.ttl;
	k->ok_at = l->mono_ok;
	pthread_mutex_unlock(&l->lock);
	if (pipe2(k->pipe, O_CLOEXEC | O_NONBLOCK) == -1) {
		sr_errno(err, "start lease keeper for %s: pipe", l->key);
		free(k);
		return NULL;
	}
	if (pthread_mutex_init(&k->lock, NULL) != 0 || pthread_condattr_init(&ca) != 0 ||
	    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
	    pthread_cond_init(&k->cond, &ca) != 0)
		sr_fatal("lease keeper: pthread init failed");
	pthread_condattr_destroy(&ca);
	/* The keeper takes no signals: they stay with the supervisor. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&k->renewer, NULL, renewer_main, k);
	if (r == 0) {
		k->nthreads = 1;
		r = pthread_create(&k->watchdog, NULL, watchdog_main, k);
		if (r == 0)
			k->nthreads = 2;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		errno = r;
		sr_errno(err, "start lease keeper for %s: create its threads", l->key);
		sr_lease_keeper_stop(k);
		return NULL;
	}
	return k;
}

void
sr_lease_keeper_watch(struct sr_lease_keeper *k,
    void (*held)(void *arg, double until, double expires), void *arg)
{
	pthread_mutex_lock(&k->lock);
	k->held = held;
	k->held_arg = arg;
	if (k->rc == SR_LEASE_OK)
		tell_held(k);
	pthread_mutex_unlock(&k->lock);
}

int
sr_lease_keeper_fd(const struct sr_lease_keeper *k)
{
	return k->pipe[0];
}

int
sr_lease_keeper_status(struct sr_lease_keeper *k, char *why)
{
	int rc, late;

	/* By the clock, not only by the watchdog's word: a holder stopped
	 * (SIGSTOP, a paused VM) and resumed past the give-up time may ask
	 * before its watchdog thread has run again. */
	pthread_mutex_lock(&k->lock);
	late = due(k);
	pthread_mutex_unlock(&k->lock);
	if (late)
		give_up(k);
	pthread_mutex_lock(&k->lock);
	rc = k->rc;
	if (why != NULL)
		snprintf(why, SR_ERRMAX, "%s", rc == SR_LEASE_OK ? "" : k->why);
	pthread_mutex_unlock(&k->lock);
	return rc;
}

int
sr_lease_keeper_renewals(struct sr_lease_keeper *k)
{
	int n;

	pthread_mutex_lock(&k->lock);
	n = k->renewals;
	pthread_mutex_unlock(&k->lock);
	return n;
}

void
sr_lease_keeper_stop(struct sr_lease_keeper *k)
{
	if (k == NULL)
		return;
	pthread_mutex_lock(&k->lock);
	k->stop = 1;
	pthread_cond_broadcast(&k->cond);
	pthread_mutex_unlock(&k->lock);
	if (k->nthreads > 0)
		pthread_join(k->renewer, NULL);
	if (k->nthreads > 1)
		pthread_join(k->watchdog, NULL);
	close(k->pipe[0]);
	close(k->pipe[1]);
	pthread_cond_destroy(&k->cond);
	pthread_mutex_destroy(&k->lock);
	free(k);
}
