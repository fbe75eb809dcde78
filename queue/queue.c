/*
 * queue.c: the queue handle (queue.h): opening a queue by URL, its default
 * on a laptop and its default checkpoint store Q/ckpt, the store calls of
 * the whole module counted as S3 needs them, and the checkpoint stores its
 * jobs use (stores/HASH), opened once per handle.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "queue-int.h"
#include "util.h"

/* A stores/ entry holds one URL. */
#define STORE_URL_MAX 4096

const char *
sr_queue_rc_name(int rc)
{
	switch (rc) {
	case SR_QUEUE_OK:
		return "SR_QUEUE_OK";
	case SR_QUEUE_ERROR:
		return "SR_QUEUE_ERROR";
	case SR_QUEUE_EXISTS:
		return "SR_QUEUE_EXISTS";
	case SR_QUEUE_EMPTY:
		return "SR_QUEUE_EMPTY";
	case SR_QUEUE_NOTFOUND:
		return "SR_QUEUE_NOTFOUND";
	case SR_QUEUE_BUSY:
		return "SR_QUEUE_BUSY";
	case SR_QUEUE_LOST:
		return "SR_QUEUE_LOST";
	}
	return "SR_QUEUE_UNKNOWN";
}

int
sr_queue_default_url(char *buf, size_t len, char *err)
{
	const char *x = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
	int n;

	if (x != NULL && x[0] == '/')
		n = snprintf(buf, len, "file://%s/spotrun/queue", x);
	else if (home != NULL && home[0] == '/')
		n = snprintf(buf, len, "file://%s/.local/share/spotrun/queue", home);
	else
		return sr_err(err, "default queue: neither XDG_DATA_HOME nor HOME is an absolute "
		    "path; give the queue's URL (--queue or SPOTRUN_QUEUE)");
	if (n < 0 || (size_t)n >= len)
		return sr_err(err, "default queue: the path is too long");
	return 0;
}

/* url with "/ckpt" added to its path, before any "?options". */
static char *
ckpt_url_of(const char *url)
{
	const char *q = strchr(url, '?');
	size_t n = q != NULL ? (size_t)(q - url) : strlen(url);

	while (n > 0 && url[n - 1] == '/' && !(n >= 3 && strncmp(url + n - 3, "://", 3) == 0))
		n--;
	return sr_asprintf("%.*s/ckpt%s", (int)n, url, q != NULL ? q : "");
}

int
sr_queue_open(const char *url, struct sr_queue **out, char *err)
{
	return sr_queue_open_with(url, NULL, out, err);
}

int
sr_queue_open_with(const char *url, const struct sr_store_opts *so, struct sr_queue **out,
    char *err)
{
	struct sr_queue *q;
	struct sr_store *st;

	*out = NULL;
	if (sr_store_open_with(url, so, &st, err) == -1)
		return sr_err_prefix(err, "open queue");
	q = sr_calloc(1, sizeof *q);
	if (so != NULL)
		q->sopts = *so;
	q->st = st;
	q->url = sr_strdup(url);
	q->ckpt_url = ckpt_url_of(url);
	pthread_mutex_init(&q->lock, NULL);
	q->rng = (unsigned)getpid() ^ (unsigned)(uint64_t)(sr_now() * 1000.0);
	*out = q;
	return 0;
}

void
sr_queue_close(struct sr_queue *q)
{
	size_t i;

	if (q == NULL)
		return;
	for (i = 0; i < q->nstores; i++) {
		sr_store_close(q->stores[i].st);
		free(q->stores[i].url);
	}
	for (i = 0; i < q->nskip; i++)
		free(q->skip[i]);
	free(q->skip);
	free(q->stores);
	sr_store_close(q->st);
	pthread_mutex_destroy(&q->lock);
	free(q->url);
	free(q->ckpt_url);
	free(q);
}

const char *
sr_queue_url(const struct sr_queue *q)
{
	return q->url;
}

struct sr_store *
sr_queue_store(struct sr_queue *q)
{
	return q->st;
}

const char *
sr_queue_ckpt_url(const struct sr_queue *q)
{
	return q->ckpt_url;
}

/* ---- counted calls ---- */

void
sr_q_count(struct sr_queue *q, enum sr_qcount kind, long n)
{
	__atomic_add_fetch(&q->counts[SR_QC_ALL], n, __ATOMIC_RELAXED);
	if (kind != SR_QC_ALL)
		__atomic_add_fetch(&q->counts[kind], n, __ATOMIC_RELAXED);
}

void
sr_queue_get_counts(const struct sr_queue *q, struct sr_queue_counts *out)
{
	out->requests = __atomic_load_n(&q->counts[SR_QC_ALL], __ATOMIC_RELAXED);
	out->lists = __atomic_load_n(&q->counts[SR_QC_LIST], __ATOMIC_RELAXED);
	out->gets = __atomic_load_n(&q->counts[SR_QC_GET], __ATOMIC_RELAXED);
	out->puts = __atomic_load_n(&q->counts[SR_QC_PUT], __ATOMIC_RELAXED);
	out->deletes = __atomic_load_n(&q->counts[SR_QC_DEL], __ATOMIC_RELAXED);
	out->heads = __atomic_load_n(&q->counts[SR_QC_HEAD], __ATOMIC_RELAXED);
}

int
sr_q_put(struct sr_queue *q, struct sr_store *st, const char *key, const void *buf, size_t len,
    enum sr_put_mode mode, const char *if_match, char *etag_out, char *err)
{
	sr_q_count(q, SR_QC_PUT, 1);
	return sr_store_put(st, key, buf, len, mode, if_match, etag_out, err);
}

int
sr_q_get(struct sr_queue *q, struct sr_store *st, const char *key, size_t max, void **buf,
    size_t *len, char *etag_out, char *err)
{
	sr_q_count(q, SR_QC_GET, 1);
	return sr_store_get(st, key, max, buf, len, etag_out, err);
}

/* A listing's callback that counts what it passes on. */
struct counted_list {
	int (*fn)(const struct sr_object_info *info, void *arg);
	void *arg;
	long seen;
};

static int
counted_cb(const struct sr_object_info *info, void *arg)
{
	struct counted_list *c = arg;

	c->seen++;
	return c->fn(info, c->arg);
}

int
sr_q_list(struct sr_queue *q, struct sr_store *st, const char *prefix,
    int (*fn)(const struct sr_object_info *info, void *arg), void *arg, char *err)
{
	struct counted_list c = { fn, arg, 0 };
	int rc = sr_store_list(st, prefix, counted_cb, &c, err);

	/* S3 pages by 1000 keys; an empty listing is one request too */
	sr_q_count(q, SR_QC_LIST, c.seen == 0 ? 1 : (c.seen + 999) / 1000);
	return rc;
}

struct keys {
	char **v;
	size_t n;
};

static int
key_cb(const struct sr_object_info *info, void *arg)
{
	struct keys *k = arg;

	k->v = sr_reallocarray(k->v, k->n + 1, sizeof *k->v);
	k->v[k->n++] = sr_strdup(info->key);
	return 0;
}

int
sr_q_keys(struct sr_queue *q, const char *prefix, char ***v, size_t *n, char *err)
{
	struct keys k = { NULL, 0 };

	if (sr_q_list(q, q->st, prefix, key_cb, &k, err) < 0) {
		sr_q_keys_free(k.v, k.n);
		*v = NULL;
		*n = 0;
		return -1;
	}
	*v = k.v;
	*n = k.n;
	return 0;
}

void
sr_q_keys_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int
sr_q_delete(struct sr_queue *q, struct sr_store *st, const char *key, char *err)
{
	sr_q_count(q, SR_QC_DEL, 1);
	return sr_store_delete(st, key, err);
}

int
sr_q_delete_many(struct sr_queue *q, struct sr_store *st, const char *const *keys, size_t n,
    char *err)
{
	if (n == 0)
		return 0;
	/* S3's DeleteObjects takes 1000 keys; elsewhere a key is a request */
	sr_q_count(q, SR_QC_DEL, (long)((n + sr_store_delete_batch(st) - 1) /
	    sr_store_delete_batch(st)));
	return sr_store_delete_many(st, keys, n, err);
}

/* ---- checkpoint stores ---- */

static void
hash_of(const char *url, char *hash)
{
	unsigned char d[32];
	unsigned dlen = 0;

	if (EVP_Digest(url, strlen(url), d, &dlen, EVP_sha256(), NULL) != 1)
		sr_fatal("EVP_Digest: SHA-256 failed");
	sr_hex_of(d, 8, hash);
}

/* The cached entry of hash, or NULL; q->lock held. */
static struct sr_qstore *
find_locked(struct sr_queue *q, const char *hash)
{
	size_t i;

	for (i = 0; i < q->nstores; i++)
		if (strcmp(q->stores[i].hash, hash) == 0)
			return &q->stores[i];
	return NULL;
}

/* Open url as hash's store and cache it; q->lock held. NULL with err. */
static struct sr_qstore *
add_locked(struct sr_queue *q, const char *hash, const char *url, char *err)
{
	struct sr_qstore *e;
	struct sr_store *st;

	if (sr_store_open_with(url, &q->sopts, &st, err) == -1)
		return NULL;
	q->stores = sr_reallocarray(q->stores, q->nstores + 1, sizeof *q->stores);
	e = &q->stores[q->nstores++];
	memset(e, 0, sizeof *e);
	snprintf(e->hash, sizeof e->hash, "%s", hash);
	e->url = sr_strdup(url);
	e->st = st;
	e->registered = strcmp(hash, "q") == 0;
	return e;
}

void
sr_q_hash_of_url(const struct sr_queue *q, const char *url, char *hash)
{
	/* the queue's own store however the submitter spelt the queue (an
	 * endpoint alias, an option of its own): it is this agent's too */
	if (url == NULL || url[0] == '\0' || sr_store_url_same(url, q->ckpt_url))
		snprintf(hash, 20, "q");
	else
		hash_of(url, hash);
}

struct sr_store *
sr_queue_ckpt_store(struct sr_queue *q, const char *url, char *err)
{
	char hash[20];
	struct sr_qstore *e;
	struct sr_store *st = NULL;

	sr_q_hash_of_url(q, url, hash);
	pthread_mutex_lock(&q->lock);
	if ((e = find_locked(q, hash)) == NULL)
		e = add_locked(q, hash, strcmp(hash, "q") == 0 ? q->ckpt_url : url, err);
	if (e != NULL)
		st = e->st;
	pthread_mutex_unlock(&q->lock);
	return st;
}

struct sr_store *
sr_q_store_of_hash(struct sr_queue *q, const char *hash, const char **url, int *requests,
    char *err)
{
	struct sr_qstore *e;
	char key[64], *u;
	void *buf;
	size_t len;
	int rc;

	pthread_mutex_lock(&q->lock);
	e = find_locked(q, hash);
	if (e == NULL && strcmp(hash, "q") == 0)
		e = add_locked(q, hash, q->ckpt_url, err);
	pthread_mutex_unlock(&q->lock);
	if (e == NULL && strcmp(hash, "q") != 0) {
		snprintf(key, sizeof key, "stores/%s", hash);
		if (requests != NULL)
			(*requests)++;
		rc = sr_q_get(q, q->st, key, STORE_URL_MAX, &buf, &len, NULL, err);
		if (rc == SR_STORE_NOTFOUND) {
			sr_err(err, "queue %s: job store %s is not registered (no %s)", q->url, hash,
			    key);
			return NULL;
		}
		if (rc != SR_STORE_OK) {
			sr_err_prefix(err, "queue %s: job store %s", q->url, hash);
			return NULL;
		}
		u = buf;
		while (len > 0 && (u[len - 1] == '\n' || u[len - 1] == ' '))
			u[--len] = '\0';
		if (strlen(u) != len || sr_store_url_check(u, err) == -1) {
			if (strlen(u) != len)
				sr_err(err, "not a URL");
			sr_err_prefix(err, "queue %s: %s", q->url, key);
			free(buf);
			return NULL;
		}
		pthread_mutex_lock(&q->lock);
		if ((e = find_locked(q, hash)) == NULL && (e = add_locked(q, hash, u, err)) != NULL)
			e->registered = 1;
		pthread_mutex_unlock(&q->lock);
		free(buf);
	}
	if (e == NULL)
		return NULL;
	if (url != NULL)
		*url = e->url;
	return e->st;
}

int
sr_q_store_register(struct sr_queue *q, const char *url, char *hash, char *err)
{
	struct sr_qstore *e;
	char key[64];
	int registered, rc;

	if (sr_queue_ckpt_store(q, url, err) == NULL)
		return -1;
	sr_q_hash_of_url(q, url, hash);
	if (strcmp(hash, "q") == 0)
		return 0;
	pthread_mutex_lock(&q->lock);
	e = find_locked(q, hash);
	registered = e->registered;
	pthread_mutex_unlock(&q->lock);
	if (registered)
		return 0;
	snprintf(key, sizeof key, "stores/%s", hash);
	rc = sr_q_put(q, q->st, key, url, strlen(url), SR_PUT_CREATE, NULL, NULL, err);
	if (rc != SR_STORE_OK && rc != SR_STORE_EXISTS)
		return sr_err_prefix(err, "register store %s in queue %s", url, q->url);
	pthread_mutex_lock(&q->lock);
	find_locked(q, hash)->registered = 1;
	pthread_mutex_unlock(&q->lock);
	return 0;
}

/* Collects the hashes under stores/. */
struct hashes {
	char (*v)[20];
	size_t n;
};

static int
hash_cb(const struct sr_object_info *info, void *arg)
{
	struct hashes *h = arg;
	const char *name = info->key + strlen("stores/");
	size_t i;

	if (strlen(name) != 16)
		return 0;
	for (i = 0; i < 16; i++)
		if (sr_hexval(name[i]) == -1)
			return 0;
	h->v = sr_reallocarray(h->v, h->n + 1, sizeof *h->v);
	snprintf(h->v[h->n++], 20, "%s", name);
	return 0;
}

int
sr_q_stores_each(struct sr_queue *q, int (*fn)(struct sr_store *st, void *arg), void *arg,
    char *err)
{
	struct hashes h = { NULL, 0 };
	struct sr_store *st;
	size_t i;
	int rc;

	if ((st = sr_q_store_of_hash(q, "q", NULL, NULL, err)) == NULL)
		return -1;
	if ((rc = fn(st, arg)) != 0)
		return rc;
	if (sr_q_list(q, q->st, "stores/", hash_cb, &h, err) != 0) {
		free(h.v);
		return -1;
	}
	for (i = 0, rc = 0; rc == 0 && i < h.n; i++) {
		/* a registration no retry mends (too large, not a file)
		 * fails its jobs at their claims (qclaim.c); the other
		 * stores are still the queue's */
		if ((st = sr_q_store_of_hash(q, h.v[i], NULL, NULL, err)) == NULL)
			rc = sr_store_err_permanent(err) ? 0 : -1;
		else
			rc = fn(st, arg);
	}
	free(h.v);
	return rc;
}

/* ---- small shared state ---- */

int
sr_q_skipped(struct sr_queue *q, const char *id, int add)
{
	size_t i;
	int found = 0;

	pthread_mutex_lock(&q->lock);
	for (i = 0; i < q->nskip && !found; i++)
		found = strcmp(q->skip[i], id) == 0;
	if (!found && add) {
		q->skip = sr_reallocarray(q->skip, q->nskip + 1, sizeof *q->skip);
		q->skip[q->nskip++] = sr_strdup(id);
	}
	pthread_mutex_unlock(&q->lock);
	return found;
}

unsigned
sr_q_random(struct sr_queue *q, unsigned n)
{
	unsigned r;

	pthread_mutex_lock(&q->lock);
	r = (unsigned)rand_r(&q->rng);
	pthread_mutex_unlock(&q->lock);
	return n > 0 ? r % n : 0;
}
