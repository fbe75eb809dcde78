/*
 * qlog.c: a job's output in the queue (queue.h): a writer that buffers
 * what the job prints and ships it from a thread of its own as segments
 * logs/ID/RRRRRRRRRRRR-AAAA-NNNNNN (run = lease epoch, attempt, number),
 * each written create-only, so that the output outlives its VM and a
 * laptop can follow it; and the reader, which lists the segments in key
 * order (runs, attempts and numbers are fixed-width) and reads the new
 * ones. The supervisor's loop never waits on the store: a write only
 * copies into the buffer.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lease-int.h"
#include "queue-int.h"
#include "util.h"

#define BUF_CAP (8 * 1024 * 1024)	/* unshipped output beyond this is dropped */
#define SEG_MAX 999999
#define READ_MAX (64 * 1024 * 1024)
#define CLOSE_TRIES 3

struct sr_queue_log {
	struct sr_queue *q;
	char id[SR_QUEUE_ID_MAX + 1];
	int64_t run;
	int attempt;
	double interval;
	size_t max;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* on CLOCK_MONOTONIC */
	char *buf;			/* unshipped output */
	size_t len;
	unsigned long long dropped;	/* bytes dropped since the last segment */
	int seq, stop, segments, failures;
	char last_err[SR_ERRMAX];
};

/* How much of the buffer the next segment takes: up to the last line's end
 * within max bytes, or all of that when no line ends there. Lock held. */
static size_t
cut(const struct sr_queue_log *lw)
{
	size_t n = lw->len < lw->max ? lw->len : lw->max, i;

	for (i = n; i > 0; i--)
		if (lw->buf[i - 1] == '\n')
			return i;
	return n;
}

/* Ship one segment of n bytes from the buffer's start. Called with the
 * lock held; drops it during the request. 0, or -1 (kept for a retry). */
static int
ship(struct sr_queue_log *lw, size_t n)
{
	char key[SR_QUEUE_KEY_MAX], err[SR_ERRMAX], note[96] = "";
	size_t nlen;
	char *seg;
	int rc;

	if (lw->seq > SEG_MAX) {
		lw->dropped += n;
		memmove(lw->buf, lw->buf + n, lw->len - n);
		lw->len -= n;
		snprintf(lw->last_err, sizeof lw->last_err, "log of %s: more than %d segments in "
		    "run %lld attempt %d: the rest is dropped", lw->id, SEG_MAX, (long long)lw->run,
		    lw->attempt);
		return -1;
	}
	if (lw->dropped > 0)
		snprintf(note, sizeof note, "[spotrun: %llu bytes of output dropped: the store "
		    "was out of reach]\n", lw->dropped);
	nlen = strlen(note);
	seg = sr_malloc(nlen + n);
	memcpy(seg, note, nlen);
	memcpy(seg + nlen, lw->buf, n);
	snprintf(key, sizeof key, "logs/%s/%012lld-%04d-%06d", lw->id, (long long)lw->run,
	    lw->attempt, lw->seq);
	pthread_mutex_unlock(&lw->lock);
	rc = sr_q_put(lw->q, lw->q->st, key, seg, nlen + n, SR_PUT_CREATE, NULL, NULL, err);
	free(seg);
	pthread_mutex_lock(&lw->lock);
	if (rc == SR_STORE_EXISTS) {
		/* another writer of this run and attempt: take the next number */
		lw->seq++;
		snprintf(lw->last_err, sizeof lw->last_err, "%s: exists; shipped as the next", key);
		return -1;
	}
	if (rc != SR_STORE_OK) {
		snprintf(lw->last_err, sizeof lw->last_err, "log of %s: %s", lw->id, err);
		lw->failures++;
		return -1;
	}
	memmove(lw->buf, lw->buf + n, lw->len - n);
	lw->len -= n;
	lw->dropped = 0;
	lw->seq++;
	lw->segments++;
	return 0;
}

static void *
writer_main(void *arg)
{
	struct sr_queue_log *lw = arg;
	double next = sr_mono() + lw->interval;
	struct timespec ts;
	int close_failures = 0;

	pthread_mutex_lock(&lw->lock);
	for (;;) {
		while (!lw->stop && lw->len < lw->max && (lw->len == 0 || sr_mono() < next)) {
			if (lw->len == 0)
				pthread_cond_wait(&lw->cond, &lw->lock);
			else {
				sr_timespec(next, &ts);
				pthread_cond_timedwait(&lw->cond, &lw->lock, &ts);
			}
		}
		if (lw->len == 0 && lw->dropped == 0 && lw->stop)
			break;
		if (lw->len == 0 && lw->dropped == 0)
			continue;
		if (ship(lw, cut(lw)) == 0) {
			if (lw->len < lw->max)
				next = sr_mono() + lw->interval;
			continue;
		}
		if (lw->stop && ++close_failures >= CLOSE_TRIES)
			break;
		/* the store is out of reach: try again an interval later */
		next = sr_mono() + lw->interval;
		sr_timespec(next, &ts);
		while (!lw->stop && sr_mono() < next)
			pthread_cond_timedwait(&lw->cond, &lw->lock, &ts);
	}
	pthread_mutex_unlock(&lw->lock);
	return NULL;
}

struct sr_queue_log *
sr_queue_log_open(struct sr_queue *q, const char *id, int64_t run, int attempt,
    double interval, size_t max_bytes, char *err)
{
	struct sr_queue_log *lw;
	pthread_condattr_t ca;
	sigset_t all, old;
	int r;

	if (sr_lease_job_check(id, err) == -1)
		return NULL;
	if (run < 0 || run > 999999999999LL || attempt < 0 || attempt > 9999) {
		sr_err(err, "log of %s: run %lld or attempt %d out of range", id, (long long)run,
		    attempt);
		return NULL;
	}
	lw = sr_calloc(1, sizeof *lw);
	lw->q = q;
	snprintf(lw->id, sizeof lw->id, "%s", id);
	lw->run = run;
	lw->attempt = attempt;
	lw->interval = interval > 0 ? interval : 5.0;
	lw->max = max_bytes > 0 ? max_bytes : 64 * 1024;
	if (lw->max > BUF_CAP)
		lw->max = BUF_CAP;
	lw->buf = sr_malloc(BUF_CAP);
	if (pthread_mutex_init(&lw->lock, NULL) != 0 || pthread_condattr_init(&ca) != 0 ||
	    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
	    pthread_cond_init(&lw->cond, &ca) != 0)
		sr_fatal("log writer: pthread init failed");
	pthread_condattr_destroy(&ca);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&lw->thread, NULL, writer_main, lw);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		errno = r;
		sr_errno(err, "log of %s: create its thread", id);
		pthread_cond_destroy(&lw->cond);
		pthread_mutex_destroy(&lw->lock);
		free(lw->buf);
		free(lw);
		return NULL;
	}
	return lw;
}

void
sr_queue_log_write(struct sr_queue_log *lw, const void *buf, size_t len)
{
	size_t room;

	pthread_mutex_lock(&lw->lock);
	room = BUF_CAP - lw->len;
	if (len > room) {
		lw->dropped += len - room;
		len = room;
	}
	memcpy(lw->buf + lw->len, buf, len);
	lw->len += len;
	if (lw->len >= lw->max || len > 0)
		pthread_cond_signal(&lw->cond);
	pthread_mutex_unlock(&lw->lock);
}

int
sr_queue_log_segments(struct sr_queue_log *lw, char *last_err)
{
	int n;

	pthread_mutex_lock(&lw->lock);
	n = lw->segments;
	if (last_err != NULL)
		snprintf(last_err, SR_ERRMAX, "%s", lw->last_err);
	pthread_mutex_unlock(&lw->lock);
	return n;
}

int
sr_queue_log_close(struct sr_queue_log *lw, char *err)
{
	int rc = 0;

	if (lw == NULL)
		return 0;
	pthread_mutex_lock(&lw->lock);
	lw->stop = 1;
	pthread_cond_signal(&lw->cond);
	pthread_mutex_unlock(&lw->lock);
	pthread_join(lw->thread, NULL);
	if (lw->len > 0 || lw->dropped > 0)
		rc = sr_err(err, "%s; %zu bytes of output not shipped", lw->last_err[0] != '\0' ?
		    lw->last_err : "log: not shipped", lw->len);
	pthread_cond_destroy(&lw->cond);
	pthread_mutex_destroy(&lw->lock);
	free(lw->buf);
	free(lw);
	return rc;
}

/* ---- reading ---- */

struct seglist {
	const char *after;
	char **v;
	size_t n;
};

static int
seg_cb(const struct sr_object_info *info, void *arg)
{
	struct seglist *s = arg;

	if (strcmp(info->key, s->after) > 0) {
		s->v = sr_reallocarray(s->v, s->n + 1, sizeof *s->v);
		s->v[s->n++] = sr_strdup(info->key);
	}
	return 0;
}

int
sr_queue_log_read(struct sr_queue *q, const char *id, char *after,
    int (*fn)(void *arg, const char *key, const char *data, size_t len), void *arg, char *err)
{
	struct seglist s = { after, NULL, 0 };
	char prefix[SR_QUEUE_ID_MAX + 16];
	size_t i;
	int rc;

	if (sr_lease_job_check(id, err) == -1)
		return -1;
	snprintf(prefix, sizeof prefix, "logs/%s/", id);
	rc = sr_q_list(q, q->st, prefix, seg_cb, &s, err);
	for (i = 0; i < s.n; i++) {
		void *buf;
		size_t len;

		if (rc == 0) {
			int g = sr_q_get(q, q->st, s.v[i], READ_MAX, &buf, &len, NULL, err);

			if (g == SR_STORE_OK) {
				snprintf(after, SR_QUEUE_KEY_MAX, "%s", s.v[i]);
				rc = fn(arg, s.v[i], buf, len);
				free(buf);
			} else if (g != SR_STORE_NOTFOUND)
				rc = sr_err_prefix(err, "log of %s", id);
		}
		free(s.v[i]);
	}
	free(s.v);
	return rc;
}

int
sr_queue_log_tail(struct sr_queue *q, const char *id, char **buf, size_t *len, char *err)
{
	struct seglist s = { "", NULL, 0 };
	char prefix[SR_QUEUE_ID_MAX + 16];
	size_t i, first, plen;
	int rc;

	*buf = NULL;
	*len = 0;
	if (sr_lease_job_check(id, err) == -1)
		return -1;
	plen = (size_t)snprintf(prefix, sizeof prefix, "logs/%s/", id);
	rc = sr_q_list(q, q->st, prefix, seg_cb, &s, err);
	/* RRRRRRRRRRRR-AAAA-NNNNNN: the same run and attempt share 17 characters */
	first = s.n;
	if (s.n > 0)
		first = s.n >= 2 && strncmp(s.v[s.n - 2] + plen, s.v[s.n - 1] + plen, 17) == 0 ?
		    s.n - 2 : s.n - 1;
	for (i = first; rc == 0 && i < s.n; i++) {
		void *seg;
		size_t n;
		int g = sr_q_get(q, q->st, s.v[i], READ_MAX, &seg, &n, NULL, err);

		if (g == SR_STORE_OK) {
			*buf = sr_realloc(*buf, *len + n + 1);
			memcpy(*buf + *len, seg, n);
			*len += n;
			(*buf)[*len] = '\0';
			free(seg);
		} else if (g != SR_STORE_NOTFOUND)
			rc = sr_err_prefix(err, "log of %s", id);
	}
	for (i = 0; i < s.n; i++)
		free(s.v[i]);
	free(s.v);
	if (rc != 0) {
		free(*buf);
		*buf = NULL;
		*len = 0;
	}
	return rc;
}

int
sr_queue_log_follow(struct sr_queue *q, const char *id, double interval,
    const volatile int *stop,
    int (*fn)(void *arg, const char *key, const char *data, size_t len), void *arg, char *err)
{
	char after[SR_QUEUE_KEY_MAX] = "";
	int rc;

	if (interval <= 0)
		interval = 1.0;
	while ((rc = sr_queue_log_read(q, id, after, fn, arg, err)) == 0) {
		double until = sr_mono() + interval;

		while (!sr_flag_get(stop) && sr_mono() < until)
			sr_sleep(until - sr_mono() < 0.1 ? until - sr_mono() : 0.1);
		if (sr_flag_get(stop))
			return 0;
	}
	return rc;
}
