/*
 * qstale.c: finding the jobs whose machine died without a word (queue.h,
 * sr_queue_find_expired). Listings only, but for the leases worth reading:
 * those of jobs the index does not show ended and no pending marker
 * offers, that the caller's record (sr_lease_seen) has seen unchanged (the
 * same etag in the listing) for min_age by its monotonic clock. A holder
 * renews every TTL / 3, so a live lease never qualifies, and a queue of
 * 10,000 ended jobs costs a few listings and no GET. No wall clock is
 * compared with the store's mtimes: a reader's clock minutes off would
 * read everything, or nothing for minutes. (sr_queue_lease_times, for
 * `status` to show how long a holder has been silent, gives the mtimes as
 * they are: a reader's display, not a decision.)
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue-int.h"
#include "util.h"

/* A sorted list of ids. */
struct ids {
	char **v;
	size_t n, cap;
};

static void
ids_add(struct ids *s, const char *id)
{
	s->v = sr_grow(s->v, s->n, &s->cap, sizeof *s->v);
	s->v[s->n++] = sr_strdup(id);
}

static int
ids_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
ids_has(const struct ids *s, const char *id)
{
	return s->n > 0 && bsearch(&id, s->v, s->n, sizeof *s->v, ids_cmp) != NULL;
}

static void
ids_free(struct ids *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

static int
live_cb(const struct sr_queue_status *s, void *arg)
{
	if (s->state == SR_LEASE_QUEUED || s->state == SR_LEASE_RUNNING ||
	    s->state == SR_LEASE_RELEASED)
		ids_add(arg, s->id);
	return 0;
}

static int
pending_cb(const struct sr_queue_pending *p, void *arg)
{
	ids_add(arg, p->id);
	return 0;
}

struct scan {
	struct sr_queue *q;
	const struct sr_lease_owner *me;
	struct sr_lease_seen *seen;
	double min_age, horizon;
	struct ids live, pending;
	struct sr_store *st;
	struct ids old;			/* leases of the store being listed worth a read */
	struct sr_queue_expired *out;
	size_t n, cap;
	char *err;
};

static int
lease_cb(const struct sr_object_info *info, void *arg)
{
	struct scan *s = arg;
	const char *job = info->key + strlen("_leases/");

	/* the listing's etag is the object's (store.h: one etag per object) */
	if (strchr(job, '/') == NULL && ids_has(&s->live, job) && !ids_has(&s->pending, job) &&
	    (sr_lease_seen_note(s->seen, sr_store_url(s->st), job, info->etag, sr_mono()) >=
	    s->min_age || s->min_age <= 0))
		ids_add(&s->old, job);
	return 0;
}

/* The job ended (li) but its newest status marker says it is not: its
 * holder died between its lease's end and the marker's. Write the marker
 * again with the lease's state, its counts kept (a hint repaired; a
 * failure leaves it for the next scan). */
static void
repair_status(struct sr_queue *q, const struct sr_lease_info *li)
{
	struct sr_queue_status st;
	char err[SR_ERRMAX];

	if (sr_queue_status_get(q, li->job, &st, err) != SR_QUEUE_OK || st.state == li->state)
		return;
	st.state = li->state;
	if (li->epoch > st.epoch)
		st.epoch = li->epoch;
	st.time = 0;
	sr_queue_status_set(q, &st, NULL, err);
}

static int
store_cb(struct sr_store *st, void *arg)
{
	struct scan *s = arg;
	char err[SR_ERRMAX];
	size_t i;
	int rc;

	s->old.n = 0;
	s->st = st;
	if (sr_q_list(s->q, st, "_leases/", lease_cb, s, s->err) != 0)
		return -1;
	for (i = 0; i < s->old.n; i++) {
		struct sr_queue_expired e;

		memset(&e, 0, sizeof e);
		snprintf(e.id, sizeof e.id, "%s", s->old.v[i]);
		sr_q_count(s->q, SR_QC_GET, 1);
		rc = sr_lease_read(st, e.id, &e.lease, err);
		free(s->old.v[i]);
		if (rc != SR_LEASE_OK)
			continue;	/* gone, or malformed: a claim reports that */
		if (e.lease.state != SR_LEASE_RUNNING && e.lease.state != SR_LEASE_RELEASED &&
		    e.lease.state != SR_LEASE_QUEUED) {
			repair_status(s->q, &e.lease);
			continue;
		}
		sr_lease_may_claim(&e.lease, s->me, sr_lease_seen_note(s->seen, sr_store_url(st),
		    e.id, e.lease.etag, sr_mono()), &e.wait);
		if (e.wait > s->horizon)
			continue;	/* renewed recently after all (a longer TTL than ours) */
		s->out = sr_grow(s->out, s->n, &s->cap, sizeof *s->out);
		s->out[s->n++] = e;
	}
	s->old.n = 0;
	return 0;
}

int
sr_queue_find_expired(struct sr_queue *q, const struct sr_lease_owner *me,
    struct sr_lease_seen *seen, double min_age, double horizon, struct sr_queue_expired **out,
    size_t *n, char *err)
{
	double start = sr_mono();
	struct scan s;
	int rc;

	memset(&s, 0, sizeof s);
	s.q = q;
	s.me = me;
	s.seen = seen != NULL ? seen : sr_lease_seen_new();
	s.min_age = min_age;
	s.horizon = horizon > 0 ? horizon : SR_LEASE_TTL_DEFAULT;
	s.err = err;
	*out = NULL;
	*n = 0;
	rc = sr_queue_status_list(q, live_cb, &s.live, NULL, NULL, err);
	if (rc == 0)
		rc = sr_queue_pending_list(q, pending_cb, &s.pending, NULL, err);
	if (rc == 0) {
		if (s.live.n > 1)
			sr_sort(s.live.v, s.live.n, sizeof *s.live.v, ids_cmp);
		if (s.pending.n > 1)
			sr_sort(s.pending.v, s.pending.n, sizeof *s.pending.v, ids_cmp);
		rc = sr_q_stores_each(q, store_cb, &s, err);
	}
	ids_free(&s.live);
	ids_free(&s.pending);
	ids_free(&s.old);
	/* what this scan did not see has ended, is pending, or is gone */
	if (rc == 0)
		sr_lease_seen_forget(s.seen, start);
	if (s.seen != seen)
		sr_lease_seen_free(s.seen);
	if (rc != 0) {
		free(s.out);
		return sr_err_prefix(err, "find expired leases in queue %s", q->url);
	}
	*out = s.out;
	*n = s.n;
	return 0;
}

struct times {
	struct sr_queue *q;
	int (*fn)(void *arg, const char *id, double mtime);
	void *arg;
	char *err;
	int stop;
};

static int
time_cb(const struct sr_object_info *info, void *arg)
{
	struct times *t = arg;
	const char *job = info->key + strlen("_leases/");

	if (strchr(job, '/') != NULL)
		return 0;
	return t->stop = t->fn(t->arg, job, info->mtime);
}

static int
times_store_cb(struct sr_store *st, void *arg)
{
	struct times *t = arg;

	if (sr_q_list(t->q, st, "_leases/", time_cb, t, t->err) != 0)
		return t->stop != 0 ? t->stop : -1;
	return 0;
}

int
sr_queue_lease_times(struct sr_queue *q, int (*fn)(void *arg, const char *id, double mtime),
    void *arg, char *err)
{
	struct times t = { q, fn, arg, err, 0 };
	int rc = sr_q_stores_each(q, times_store_cb, &t, err);

	if (rc != 0 && t.stop == 0)
		return sr_err_prefix(err, "list the leases of queue %s", q->url);
	return rc;
}
