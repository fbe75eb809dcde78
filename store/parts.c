/*
 * parts.c: parallel part uploads (parts.h). The writer thread fills a part
 * buffer and queues it; the upload's own thread owns the curl multi handle
 * (curl multi handles are not shared between threads), starts queued parts
 * while fewer than `concurrency` are in flight, schedules retries at their
 * backoff time, and records each part's ETag for the commit.
 * curl_multi_wakeup lets the writer end the thread's poll at once when it
 * queues a part or gives up. With a checksum on, a part first goes to the
 * upload's hasher threads (one per CPU, at most `concurrency`): MD5 runs at
 * ~0.76 GB/s per core, SHA-256 at ~2 GB/s, and on the upload thread either
 * capped an upload there and stalled the transfers in flight while it
 * hashed.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "http.h"
#include "parts.h"
#include "store-int.h"
#include "util.h"
#include "xfer.h"

#define POLL_MS		100	/* longest sleep of the upload thread */
#define DRAIN_MAX	2.0	/* seconds an ending upload lets its parts in flight end */

/* P_HASHING: waiting for (or under) its MD5; P_QUEUED: ready to send. */
enum part_state { P_HASHING, P_QUEUED, P_ACTIVE, P_WAITING, P_DONE };

struct part {
	struct sr_parts *m;
	int num;			/* 1-based part number */
	char *buf;
	size_t len;
	enum part_state state;
	double not_before;		/* P_WAITING: retry at this sr_mono() time */
	char sum[SR_SUM_HEADER_MAX];	/* the checksum header, "" when none */
	char *query;
	struct sr_xfer_req rq;
	struct sr_xfer_call *call;
	char etag[SR_ETAG_MAX];
};

struct sr_parts {
	struct sr_xfer *x;
	const struct sr_parts_ops *ops;
	void *arg;			/* the family's, for ops */
	char *key;
	char what[SR_KEY_SHOW_MAX + 16];
	size_t part_size;
	int concurrency;
	char *cur;			/* the part being filled */
	size_t cur_len;
	int begun;			/* the first part was queued (ops->begin done) */
	int touched;			/* the server may hold some of the upload */
	double deadline;		/* sr_parts_limit */
	volatile int *cancel;

	pthread_mutex_t lock;		/* guards everything below */
	pthread_cond_t cond;		/* a part finished, or the upload failed */
	struct part **parts;
	int nparts, cap;
	/* Part buffers whose bytes are on the server, kept for the next parts:
	 * a fresh 8 MiB buffer is a fresh mmap whose every page faults in. */
	char **spare;
	int nspare;
	int pending;			/* queued, active or waiting */
	int failed;
	char err[SR_ERRMAX];
	int stop;			/* abort: the thread drops everything */
	int finishing;			/* no more parts will come */
	CURLM *multi;
	pthread_t th;
	int th_started;
	pthread_cond_t hash_cv;		/* a part to hash, or the end */
	int hash_next;			/* parts[hash_next...] are not taken yet */
	pthread_t *hashers;
	int nhashers;
};

struct sr_parts *
sr_parts_begin(struct sr_xfer *x, const struct sr_parts_ops *ops, void *arg, const char *key,
    char *err)
{
	struct sr_parts *m = sr_try_calloc(1, sizeof *m, err);
	char show[SR_KEY_SHOW_MAX];

	if (m == NULL || (m->key = sr_try_strdup(key, err)) == NULL ||
	    (m->spare = sr_try_calloc((size_t)sr_xfer_tuning(x)->concurrency + 1,
	    sizeof *m->spare, err)) == NULL) {
		if (m != NULL)
			free(m->key);
		free(m);
		if (ops->free != NULL)
			ops->free(arg);
		sr_err_prefix(err, "upload %s", sr_store_key_show(key, show, sizeof show));
		return NULL;
	}
	m->x = x;
	m->ops = ops;
	m->arg = arg;
	snprintf(m->what, sizeof m->what, "upload %s", sr_store_key_show(key, show, sizeof show));
	m->part_size = sr_xfer_tuning(x)->part_size;
	m->concurrency = sr_xfer_tuning(x)->concurrency;
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->cond, NULL);
	pthread_cond_init(&m->hash_cv, NULL);
	return m;
}

/* Record the upload's failure (the first one wins); lock held. */
static void
fail_locked(struct sr_parts *m, const char *err)
{
	if (!m->failed) {
		m->failed = 1;
		snprintf(m->err, sizeof m->err, "%s", err);
	}
	pthread_cond_broadcast(&m->cond);
}

static void
part_free(struct part *p)
{
	if (p == NULL)
		return;
	sr_xfer_call_free(p->call);
	free(p->buf);
	free(p->query);
	free(p);
}

/* Prepare p's next attempt and hand it to the multi handle; thread only. */
static void
start_part(struct sr_parts *m, struct part *p)
{
	char err[SR_ERRMAX];
	CURLMcode mc;

	if (p->call == NULL) {
		char w[SR_KEY_SHOW_MAX + 48];

		snprintf(w, sizeof w, "%s: part %d", m->what, p->num);
		if ((p->call = sr_xfer_call_new(m->x, &p->rq, w, err)) == NULL)
			goto fail;
	}
	if (sr_xfer_call_setup(p->call, err) == -1)
		goto fail;
	pthread_mutex_lock(&m->lock);
	m->touched = 1;
	pthread_mutex_unlock(&m->lock);
	curl_easy_setopt(sr_xfer_call_handle(p->call), CURLOPT_PRIVATE, p);
	if ((mc = curl_multi_add_handle(m->multi, sr_xfer_call_handle(p->call))) == CURLM_OK)
		return;
	sr_http_multi_err(mc, "curl_multi_add_handle", err);
	sr_err_prefix(err, "%s: part %d", m->what, p->num);
fail:
	pthread_mutex_lock(&m->lock);
	p->state = P_WAITING;	/* not in the multi handle: nothing to remove */
	fail_locked(m, err);
	pthread_mutex_unlock(&m->lock);
}

/* A transfer ended: record its part's ETag, schedule a retry, or fail. */
static void
finish_part(struct sr_parts *m, struct part *p, CURLcode result)
{
	char err[SR_ERRMAX];
	double delay;
	struct sr_xfer_resp *r;
	int v, ok;

	curl_multi_remove_handle(m->multi, sr_xfer_call_handle(p->call));
	v = sr_xfer_call_verdict(p->call, result, &delay, err);
	r = sr_xfer_call_resp(p->call);
	ok = v == 0 && r->status >= 200 && r->status < 300;
	pthread_mutex_lock(&m->lock);
	if (v == 1) {
		p->state = P_WAITING;
		p->not_before = sr_mono() + delay;
	} else if (ok && (r->etag[0] != '\0' || !m->ops->part_etag)) {
		snprintf(p->etag, sizeof p->etag, "%s", r->etag);
		p->state = P_DONE;
		sr_xfer_call_free(p->call);
		p->call = NULL;
		/* the bytes are safe on the server: the buffer can take new ones */
		if (m->nspare <= m->concurrency)
			m->spare[m->nspare++] = p->buf;
		else
			free(p->buf);
		p->buf = NULL;
		m->pending--;
		pthread_cond_broadcast(&m->cond);
	} else {
		if (v == 0) {
			char w[SR_KEY_SHOW_MAX + 48];

			snprintf(w, sizeof w, "%s: part %d", m->what, p->num);
			if (ok)
				sr_err(err, "%s: the reply has no ETag", w);
			else
				sr_xfer_fail(m->x, w, r, err);
		}
		fail_locked(m, err);
	}
	pthread_mutex_unlock(&m->lock);
}

/* Hash parts in the order they came, until the upload ends or fails. */
static void *
hash_thread(void *arg)
{
	struct sr_parts *m = arg;
	struct part *p;
	char err[SR_ERRMAX];
	int rc;

	pthread_mutex_lock(&m->lock);
	while (!m->stop && !m->failed) {
		if (m->hash_next == m->nparts) {
			if (m->finishing)
				break;
			pthread_cond_wait(&m->hash_cv, &m->lock);
			continue;
		}
		p = m->parts[m->hash_next++];
		pthread_mutex_unlock(&m->lock);
		rc = sr_digest_header(sr_xfer_tuning(m->x)->part_sum, p->buf, p->len, p->sum, err);
		pthread_mutex_lock(&m->lock);
		if (rc == -1) {
			sr_err_prefix(err, "%s: part %d", m->what, p->num);
			fail_locked(m, err);
			break;
		}
		p->state = P_QUEUED;
		curl_multi_wakeup(m->multi);
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

/* The hashers: one per online CPU, at most one per part in flight. 0,
 * or -1 with err (those started are joined by join). */
static int
start_hashers(struct sr_parts *m, char *err)
{
	int cpus = sr_ncpus(), n = cpus < m->concurrency ? cpus : m->concurrency;

	if ((m->hashers = sr_try_calloc((size_t)n, sizeof *m->hashers, err)) == NULL)
		return sr_err_prefix(err, "%s", m->what);
	for (m->nhashers = 0; m->nhashers < n; m->nhashers++)
		if (pthread_create(&m->hashers[m->nhashers], NULL, hash_thread, m) != 0)
			return sr_err(err, "%s: cannot start a hasher thread", m->what);
	return 0;
}

static void *
upload_thread(void *arg)
{
	struct sr_parts *m = arg;
	struct part *start[64];
	double drain_until = 0;

	for (;;) {
		int n = 0, active = 0, i, running, wait_ms = POLL_MS, left, hurry, draining;
		double now = sr_mono();
		CURLMsg *msg;

		pthread_mutex_lock(&m->lock);
		hurry = sr_flag_get(m->cancel) || (m->deadline > 0 && sr_now() >= m->deadline);
		if (hurry) {
			char why[SR_ERRMAX];

			snprintf(why, sizeof why, "%s: %s", m->what, sr_flag_get(m->cancel) ?
			    "cancelled" : "the checkpoint's deadline passed");
			fail_locked(m, why);
		}
		if (m->finishing && m->pending == 0) {
			pthread_mutex_unlock(&m->lock);
			break;
		}
		for (i = 0; i < m->nparts; i++)
			active += m->parts[i]->state == P_ACTIVE;
		/* An upload that ends (aborted, or a part failed) lets the parts in
		 * flight end first, DRAIN_MAX at most, and starts none: a part cut
		 * off after its bytes reached the server can still land there,
		 * after the abort (Azure keeps such a block as an uncommitted
		 * blob). A cancel or a passed deadline does not wait. */
		draining = m->stop || m->failed;
		if (draining) {
			if (drain_until == 0)
				drain_until = now + DRAIN_MAX;
			if (hurry || active == 0 || now >= drain_until) {
				pthread_mutex_unlock(&m->lock);
				break;
			}
		}
		for (i = 0; !draining && i < m->nparts && active + n < m->concurrency && n < 64;
		    i++) {
			struct part *p = m->parts[i];

			if (p->state == P_QUEUED || (p->state == P_WAITING && p->not_before <= now)) {
				p->state = P_ACTIVE;
				start[n++] = p;
			} else if (p->state == P_WAITING) {
				int ms = (int)((p->not_before - now) * 1000) + 1;

				wait_ms = ms < wait_ms ? ms : wait_ms;
			}
		}
		pthread_mutex_unlock(&m->lock);

		for (i = 0; i < n; i++)
			start_part(m, start[i]);
		curl_multi_perform(m->multi, &running);
		while ((msg = curl_multi_info_read(m->multi, &left)) != NULL) {
			struct part *p = NULL;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&p);
			finish_part(m, p, msg->data.result);
		}
		curl_multi_poll(m->multi, NULL, 0, wait_ms, NULL);
	}
	/* drop whatever is still in flight (failure or abort) */
	pthread_mutex_lock(&m->lock);
	for (int i = 0; i < m->nparts; i++) {
		struct part *p = m->parts[i];

		if (p->state == P_ACTIVE && p->call != NULL)
			curl_multi_remove_handle(m->multi, sr_xfer_call_handle(p->call));
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

/* The upload's machinery could not start: it has failed (err prefixed
 * with what the upload is); -1. */
static int
start_failed(struct sr_parts *m, char *err)
{
	sr_err_prefix(err, "%s", m->what);
	pthread_mutex_lock(&m->lock);
	fail_locked(m, err);
	pthread_mutex_unlock(&m->lock);
	return -1;
}

/* Queue the filled part; wait while every slot is taken. */
static int
submit(struct sr_parts *m, char *err)
{
	struct part *p;

	/* as a request would not be sent: fail here, not later in the thread */
	if (sr_flag_get(m->cancel))
		return sr_err(err, "%s: cancelled", m->what);
	if (m->deadline > 0 && sr_now() >= m->deadline)
		return sr_err(err, "%s: the checkpoint's deadline passed", m->what);
	if (!m->begun) {
		if (m->ops->begin != NULL && m->ops->begin(m->arg, m, err) == -1)
			return -1;
		m->begun = 1;
		m->touched = m->ops->begin != NULL;
		if ((m->multi = curl_multi_init()) == NULL) {
			sr_err_oom(err, "curl_multi_init");
			return start_failed(m, err);
		}
		if (pthread_create(&m->th, NULL, upload_thread, m) != 0) {
			sr_err(err, "cannot start the upload thread");
			return start_failed(m, err);
		}
		m->th_started = 1;
		if (sr_xfer_tuning(m->x)->part_sum != SR_SUM_NONE && start_hashers(m, err) == -1) {
			pthread_mutex_lock(&m->lock);
			fail_locked(m, err);
			pthread_mutex_unlock(&m->lock);
			return -1;
		}
	}
	pthread_mutex_lock(&m->lock);
	while (!m->failed && m->pending >= m->concurrency)
		pthread_cond_wait(&m->cond, &m->lock);
	if (m->failed) {
		sr_err(err, "%s", m->err);
		pthread_mutex_unlock(&m->lock);
		return -1;
	}
	if (m->nparts >= m->ops->max_parts) {
		pthread_mutex_unlock(&m->lock);
		return sr_err(err, "%s: more than %d parts of %zu bytes; raise the store's "
		    "%s", m->what, m->ops->max_parts, m->part_size, m->ops->size_option);
	}
	if (m->nparts == m->cap) {
		int cap = m->cap ? m->cap * 2 : 16;
		struct part **v = sr_try_reallocarray(m->parts, (size_t)cap, sizeof *v, err);

		if (v == NULL)
			goto oom;
		m->parts = v;
		m->cap = cap;
	}
	if ((p = sr_try_calloc(1, sizeof *p, err)) == NULL)
		goto oom;
	p->num = m->nparts + 1;
	if ((p->query = m->ops->part_query(m->arg, p->num)) == NULL) {
		free(p);
		sr_err_oom(err, "make a part's query");
		goto oom;
	}
	p->m = m;
	p->buf = m->cur;
	p->len = m->cur_len;
	p->state = m->nhashers > 0 ? P_HASHING : P_QUEUED;
	p->rq.method = "PUT";
	p->rq.key = m->key;
	p->rq.query = p->query;
	/* the hashers fill it in before the part is queued */
	p->rq.hdrs[0] = m->nhashers > 0 ? p->sum : NULL;
	p->rq.body = p->buf;
	p->rq.body_len = p->len;
	/* the bytes are covered by the checksum, which the server checks (with
	 * none by TLS on https, and on restore by each chunk's XXH3-128); S3's
	 * signer takes a SHA-256 checksum as the payload hash it signs */
	p->rq.unsigned_payload = 1;
	p->rq.deadline = m->deadline;
	p->rq.cancel = m->cancel;
	m->parts[m->nparts++] = p;
	m->pending++;
	pthread_cond_signal(&m->hash_cv);
	pthread_mutex_unlock(&m->lock);
	m->cur = NULL;
	m->cur_len = 0;
	curl_multi_wakeup(m->multi);
	return 0;
oom:
	/* the part stays m->cur (freed with the upload); the upload has failed */
	sr_err_prefix(err, "%s", m->what);
	fail_locked(m, err);
	pthread_mutex_unlock(&m->lock);
	return -1;
}

int
sr_parts_write(struct sr_parts *m, const void *buf, size_t len, char *err)
{
	const char *b = buf;

	while (len > 0) {
		size_t n;

		if (m->cur == NULL) {
			pthread_mutex_lock(&m->lock);
			m->cur = m->nspare > 0 ? m->spare[--m->nspare] : NULL;
			pthread_mutex_unlock(&m->lock);
			/* in huge pages (sr_try_bigbuf): a 16 MiB part's
			 * first touch page by page costs 52 ms of CPU on the
			 * VMs of doc/benchmarks.md, 5 times its SHA-256 */
			if (m->cur == NULL &&
			    (m->cur = sr_try_bigbuf(m->part_size, m->part_size, err)) == NULL) {
				sr_err_prefix(err, "%s", m->what);
				pthread_mutex_lock(&m->lock);
				fail_locked(m, err);
				pthread_mutex_unlock(&m->lock);
				return -1;
			}
		}
		n = m->part_size - m->cur_len;
		if (n > len)
			n = len;
		memcpy(m->cur + m->cur_len, b, n);
		m->cur_len += n;
		b += n;
		len -= n;
		if (m->cur_len == m->part_size && submit(m, err) == -1)
			return -1;
	}
	return 0;
}

/* Stop the threads (after they finished, or at once when stop is set). */
static void
join(struct sr_parts *m)
{
	int i;

	if (!m->th_started)
		return;
	pthread_mutex_lock(&m->lock);
	pthread_cond_broadcast(&m->hash_cv);
	pthread_mutex_unlock(&m->lock);
	for (i = 0; i < m->nhashers; i++)
		pthread_join(m->hashers[i], NULL);
	curl_multi_wakeup(m->multi);
	pthread_join(m->th, NULL);
	m->th_started = 0;
}

static void
parts_free(struct sr_parts *m)
{
	int i;

	for (i = 0; i < m->nparts; i++)
		part_free(m->parts[i]);
	free(m->parts);
	for (i = 0; i < m->nspare; i++)
		free(m->spare[i]);
	free(m->spare);
	if (m->multi != NULL)
		curl_multi_cleanup(m->multi);
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->cond);
	pthread_cond_destroy(&m->hash_cv);
	free(m->hashers);
	free(m->cur);
	if (m->ops->free != NULL)
		m->ops->free(m->arg);
	free(m->key);
	free(m);
}

int
sr_parts_commit(struct sr_parts *m, char *err)
{
	int rc = 0;

	if (!m->begun) {
		rc = m->ops->whole(m->arg, m, m->cur != NULL ? m->cur : "", m->cur_len, err);
		parts_free(m);
		return rc;
	}
	if (m->cur_len > 0 && submit(m, err) == -1)
		rc = -1;
	pthread_mutex_lock(&m->lock);
	m->finishing = 1;
	if (rc == -1)
		m->stop = 1;
	while (rc == 0 && !m->failed && m->pending > 0)
		pthread_cond_wait(&m->cond, &m->lock);
	if (rc == 0 && m->failed) {
		sr_err(err, "%s", m->err);
		rc = -1;
	}
	pthread_mutex_unlock(&m->lock);
	join(m);
	if (rc == 0)
		rc = m->ops->commit(m->arg, m, err);
	if (rc == -1 && m->touched)
		m->ops->abort(m->arg, m);
	parts_free(m);
	return rc;
}

void
sr_parts_limit(struct sr_parts *m, double deadline, volatile int *cancel)
{
	m->deadline = deadline;
	m->cancel = cancel;
}

void
sr_parts_abort(struct sr_parts *m)
{
	if (m == NULL)
		return;
	pthread_mutex_lock(&m->lock);
	m->stop = 1;
	pthread_mutex_unlock(&m->lock);
	join(m);
	if (m->touched)
		m->ops->abort(m->arg, m);
	parts_free(m);
}

const char *
sr_parts_key(const struct sr_parts *m)
{
	return m->key;
}

const char *
sr_parts_what(const struct sr_parts *m)
{
	return m->what;
}

int
sr_parts_count(const struct sr_parts *m)
{
	return m->nparts;
}

const char *
sr_parts_etag(const struct sr_parts *m, int i)
{
	return m->parts[i]->etag;
}

double
sr_parts_deadline(const struct sr_parts *m)
{
	return m->deadline;
}

volatile int *
sr_parts_cancel(const struct sr_parts *m)
{
	return m->cancel;
}

int
sr_parts_up_write(struct sr_upload *up, const void *buf, size_t len, char *err)
{
	return sr_parts_write(up->priv, buf, len, err);
}

int
sr_parts_up_commit(struct sr_upload *up, char *err)
{
	return sr_parts_commit(up->priv, err);
}

void
sr_parts_up_limit(struct sr_upload *up, double deadline, volatile int *cancel)
{
	sr_parts_limit(up->priv, deadline, cancel);
}

void
sr_parts_up_abort(struct sr_upload *up)
{
	sr_parts_abort(up->priv);
}
