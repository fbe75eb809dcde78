/*
 * lease-keeper.c: the thread that keeps a held lease alive (lease.h):
 * renewals every TTL / 3 by the monotonic clock (a wall-clock jump moves
 * neither the schedule nor the give-up time), retries about every second
 * after a failed one (GCS takes one write per second per object), and the
 * lease given up, SR_LEASE_GIVEUP before its TTL ends, when no renewal got
 * through: the holder must stop before another machine, whose clock may be
 * a few seconds ahead, sees the lease expired.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lease-int.h"
#include "util.h"

struct sr_lease_keeper {
	struct sr_lease *l;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* on CLOCK_MONOTONIC */
	int stop;
	int rc;				/* SR_LEASE_OK while held, then SR_LEASE_LOST */
	char why[SR_ERRMAX];
	int renewals;
	int pipe[2];			/* [0] readable once lost */
	void (*lost)(void *arg, int rc, const char *why);
	void *arg;
};

/* Wait until the monotonic time t or a stop; 1 when stopped. */
static int
wait_until(struct sr_lease_keeper *k, double t)
{
	struct timespec ts;
	int stop;

	ts.tv_sec = (time_t)t;
	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&k->lock);
	while (!k->stop && sr_mono() < t)
		if (pthread_cond_timedwait(&k->cond, &k->lock, &ts) == ETIMEDOUT)
			break;
	stop = k->stop;
	pthread_mutex_unlock(&k->lock);
	return stop;
}

static void
report(struct sr_lease_keeper *k, const char *why)
{
	char one = 'x';

	pthread_mutex_lock(&k->lock);
	k->rc = SR_LEASE_LOST;
	snprintf(k->why, sizeof k->why, "%s", why);
	pthread_mutex_unlock(&k->lock);
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
keeper_main(void *arg)
{
	struct sr_lease_keeper *k = arg;
	struct sr_lease *l = k->l;
	double ttl, interval, retry, ok_at, next;
	char err[SR_ERRMAX], why[SR_ERRMAX], dur[32];

	pthread_mutex_lock(&l->lock);
	ttl = l->info.ttl;
	ok_at = l->mono_ok;
	pthread_mutex_unlock(&l->lock);
	interval = ttl / 3;
	retry = interval / 4 < 1.0 ? interval / 4 : 1.0;
	next = ok_at + interval;
	while (!wait_until(k, next)) {
		double t0 = sr_mono();
		int rc = sr_lease_renew(l, err);

		if (rc == SR_LEASE_OK) {
			pthread_mutex_lock(&k->lock);
			k->renewals++;
			pthread_mutex_unlock(&k->lock);
			ok_at = t0;
			next = t0 + interval;
			continue;
		}
		if (rc == SR_LEASE_LOST) {
			report(k, err);
			break;
		}
		if (!still_held(l))
			break;		/* its holder ended it: nothing to keep */
		if (sr_mono() + retry >= ok_at + ttl - SR_LEASE_GIVEUP(ttl)) {
			snprintf(why, sizeof why, "renew lease %s in %s: lost: not renewed for %s, "
			    "too close to its expiry to go on (last error: %s)", l->key,
			    sr_store_url(l->st), sr_fmt_duration(sr_mono() - ok_at, dur, sizeof dur),
			    err);
			report(k, why);
			break;
		}
		next = sr_mono() + retry;
	}
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
	r = pthread_create(&k->thread, NULL, keeper_main, k);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		errno = r;
		sr_errno(err, "start lease keeper for %s: create its thread", l->key);
		close(k->pipe[0]);
		close(k->pipe[1]);
		pthread_cond_destroy(&k->cond);
		pthread_mutex_destroy(&k->lock);
		free(k);
		return NULL;
	}
	return k;
}

int
sr_lease_keeper_fd(const struct sr_lease_keeper *k)
{
	return k->pipe[0];
}

int
sr_lease_keeper_status(struct sr_lease_keeper *k, char *why)
{
	int rc;

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
	pthread_cond_signal(&k->cond);
	pthread_mutex_unlock(&k->lock);
	pthread_join(k->thread, NULL);
	close(k->pipe[0]);
	close(k->pipe[1]);
	pthread_cond_destroy(&k->cond);
	pthread_mutex_destroy(&k->lock);
	free(k);
}
