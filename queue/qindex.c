/*
 * qindex.c: status markers (queue.h): index/ID~FIELDS, one per job, its
 * fields in the key, so that `status` of N jobs is one listing of N / 1000
 * requests and no GET. A writer puts the new marker before it deletes the
 * old, so a reader may meet two of one job: it takes the newest, the last
 * in key order (epoch, then time, both fixed-width).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue-int.h"
#include "util.h"

/* Keys of one job's markers other than keep. */
struct olds {
	const char *keep;
	char **v;
	size_t n;
};

static int
olds_cb(const struct sr_object_info *info, void *arg)
{
	struct olds *o = arg;

	if (strcmp(info->key, o->keep) != 0) {
		o->v = sr_reallocarray(o->v, o->n + 1, sizeof *o->v);
		o->v[o->n++] = sr_strdup(info->key);
	}
	return 0;
}

int
sr_queue_status_set(struct sr_queue *q, struct sr_queue_status *s, const char *old_key,
    char *err)
{
	struct olds o = { s->key, NULL, 0 };
	char prefix[SR_QUEUE_ID_MAX + 16];
	size_t i;
	int rc;

	if (s->time <= 0)
		s->time = sr_now();
	if (sr_qkey_index(s, s->key, sizeof s->key, err) == -1)
		return SR_QUEUE_ERROR;
	if (sr_q_put(q, q->st, s->key, "", 0, SR_PUT_OVERWRITE, NULL, NULL, err) != SR_STORE_OK) {
		sr_err_prefix(err, "status of %s", s->id);
		return SR_QUEUE_ERROR;
	}
	if (old_key == NULL) {
		snprintf(prefix, sizeof prefix, "index/%s~", s->id);
		if (sr_q_list(q, q->st, prefix, olds_cb, &o, err) != 0) {
			rc = SR_QUEUE_ERROR;
			goto out;
		}
	} else if (old_key[0] != '\0' && strcmp(old_key, s->key) != 0) {
		o.v = sr_calloc(1, sizeof *o.v);
		o.v[o.n++] = sr_strdup(old_key);
	}
	rc = sr_q_delete_many(q, q->st, (const char *const *)o.v, o.n, err) == 0 ? SR_QUEUE_OK :
	    SR_QUEUE_ERROR;
out:
	if (rc != SR_QUEUE_OK)
		sr_err_prefix(err, "status of %s: remove the old marker", s->id);
	for (i = 0; i < o.n; i++)
		free(o.v[i]);
	free(o.v);
	return rc;
}

/* Newest marker per job, streamed (the markers of one job are adjacent). */
struct reader {
	struct sr_queue_status cur;
	int have;
	int stale, bad;
	int (*fn)(const struct sr_queue_status *s, void *arg);
	void (*bad_fn)(const char *key, void *arg);
	void *arg;
};

static int
reader_cb(const struct sr_object_info *info, void *arg)
{
	struct reader *r = arg;
	struct sr_queue_status s;
	int rc = 0;

	if (sr_qkey_index_parse(info->key, &s, NULL) == -1) {
		r->bad++;
		if (r->bad_fn != NULL)
			r->bad_fn(info->key, r->arg);
		return 0;
	}
	if (r->have && strcmp(r->cur.id, s.id) == 0)
		r->stale++;
	else if (r->have && r->fn != NULL)
		rc = r->fn(&r->cur, r->arg);
	r->cur = s;
	r->have = 1;
	return rc;
}

int
sr_queue_status_list(struct sr_queue *q,
    int (*fn)(const struct sr_queue_status *s, void *arg), void *arg, int *stale, int *bad,
    char *err)
{
	return sr_queue_status_walk(q, fn, NULL, arg, stale, bad, err);
}

int
sr_queue_status_walk(struct sr_queue *q,
    int (*fn)(const struct sr_queue_status *s, void *arg),
    void (*bad_fn)(const char *key, void *arg), void *arg, int *stale, int *bad, char *err)
{
	struct reader *r = sr_calloc(1, sizeof *r);
	int rc;

	r->fn = fn;
	r->bad_fn = bad_fn;
	r->arg = arg;
	rc = sr_q_list(q, q->st, "index/", reader_cb, r, err);
	if (rc == 0 && r->have && fn != NULL)
		rc = fn(&r->cur, arg);
	if (stale != NULL)
		*stale = r->stale;
	if (bad != NULL)
		*bad = r->bad;
	free(r);
	return rc;
}

/* The markers before each job's newest, streamed: the one before is held
 * until the next says whether it was its job's last. */
struct stales {
	double older_than;
	const char *id;		/* only this job's (NULL: every job's) */
	struct sr_queue_status prev;
	struct sr_object_info prev_info;
	char prev_key[SR_QUEUE_KEY_MAX];
	int have;
	int (*fn)(const struct sr_object_info *info, const char *id, void *arg);
	void *arg;
};

static int
stales_cb(const struct sr_object_info *info, void *arg)
{
	struct stales *r = arg;
	struct sr_queue_status s;
	int rc = 0;

	if (sr_qkey_index_parse(info->key, &s, NULL) == -1 ||
	    (r->id != NULL && strcmp(s.id, r->id) != 0))
		return 0;
	if (r->have && strcmp(r->prev.id, s.id) == 0 && r->prev_info.mtime <= r->older_than)
		rc = r->fn(&r->prev_info, r->prev.id, r->arg);
	r->prev = s;
	r->prev_info = *info;
	strlcpy(r->prev_key, info->key, sizeof r->prev_key);
	r->prev_info.key = r->prev_key;
	r->have = 1;
	return rc;
}

int
sr_queue_status_stale(struct sr_queue *q, const char *id, double older_than,
    int (*fn)(const struct sr_object_info *info, const char *id, void *arg), void *arg,
    char *err)
{
	struct stales *r = sr_calloc(1, sizeof *r);
	char prefix[SR_QUEUE_ID_MAX + 16];
	int rc;

	r->older_than = older_than;
	r->id = id;
	r->fn = fn;
	r->arg = arg;
	if (id != NULL)
		snprintf(prefix, sizeof prefix, "index/%s~", id);
	rc = sr_q_list(q, q->st, id != NULL ? prefix : "index/", stales_cb, r, err);
	free(r);
	return rc;
}

int
sr_queue_status_delete(struct sr_queue *q, const char *key, char *err)
{
	if (strncmp(key, "index/", 6) != 0)
		return sr_err(err, "delete status marker %s: not a status marker", key);
	return sr_q_delete(q, q->st, key, err) == SR_STORE_OK ? 0 : -1;
}

int
sr_queue_sweep_turn(struct sr_queue *q, double interval, const char *by, double *last,
    char *err)
{
	char etag[SR_ETAG_MAX], text[400], *end;
	void *buf = NULL;
	size_t len;
	double now = sr_now(), t = 0;
	int rc;

	*last = 0;
	rc = sr_q_get(q, q->st, "gc", 256, &buf, &len, etag, err);
	if (rc != SR_STORE_OK && rc != SR_STORE_NOTFOUND)
		return sr_err_prefix(err, "read the queue's last sweep (gc)");
	if (rc == SR_STORE_OK) {
		/* one that does not parse is taken over as one long past */
		t = strtod(buf, &end);
		if (end == buf || t < 0 || t > 1e11)
			t = 0;
		*last = t;
	}
	free(buf);
	if (rc == SR_STORE_OK && t > now - interval && t <= now + interval)
		return 0;
	snprintf(text, sizeof text, "%.3f %s\n", now, by);
	rc = sr_q_put(q, q->st, "gc", text, strlen(text),
	    rc == SR_STORE_NOTFOUND ? SR_PUT_CREATE : SR_PUT_MATCH,
	    rc == SR_STORE_NOTFOUND ? NULL : etag, NULL, err);
	if (rc == SR_STORE_EXISTS || rc == SR_STORE_PRECONDITION)
		return 0;	/* another agent's turn: it sweeps */
	if (rc != SR_STORE_OK)
		return sr_err_prefix(err, "take the queue's sweep (gc)");
	return 1;
}

int
sr_queue_status_get(struct sr_queue *q, const char *id, struct sr_queue_status *out, char *err)
{
	struct reader *r = sr_calloc(1, sizeof *r);
	char prefix[SR_QUEUE_ID_MAX + 16];
	int rc;

	if (sr_lease_job_check(id, err) == -1) {
		free(r);
		return SR_QUEUE_ERROR;
	}
	snprintf(prefix, sizeof prefix, "index/%s~", id);
	rc = sr_q_list(q, q->st, prefix, reader_cb, r, err);
	if (rc != 0)
		rc = SR_QUEUE_ERROR;
	else if (!r->have) {
		sr_err(err, "status of %s: no status marker in %s", id, q->url);
		rc = SR_QUEUE_NOTFOUND;
	} else
		*out = r->cur;
	free(r);
	return rc;
}
