/*
 * qpool.c: the pools `spotrun up` made for the queue (queue.h), one record
 * each under Q/pools/NAME: where its fleet engine keeps it (cloud, region,
 * the group's and the template's ids), the target `up` or the scaler
 * last set and why, the pool file's limits the scaler keeps to, and the
 * fence that keeps a stale scaler from writing (fleet/pool-scale.c), so
 * that `status` and the agents find the pool from the queue alone. The truth
 * is the cloud's (the resources found by their tags); a record is a hint
 * that `down` removes.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "queue-int.h"
#include "util.h"

#define RECORD_MAX 16384	/* a record's JSON, at most (64 prices: 5 KB) */

/* p's launch prices as {"VM": price}, rounded to 1/10000 as clouds say them. */
static json_t *
prices_json(const struct sr_queue_pool *p)
{
	json_t *o = json_object();
	size_t i;

	for (i = 0; i < p->nprices && i < SR_QUEUE_POOL_PRICES; i++)
		json_object_set_new(o, p->prices[i].vm,
		    json_real(round(p->prices[i].price * 1e6) / 1e6));
	return o;
}

/* The record's "prices" (may be NULL: none) into p: 0, or -1 (not an
 * object, a key too long or empty, a price not a number above 0, too
 * many). */
static int
prices_parse(json_t *o, struct sr_queue_pool *p)
{
	const char *k;
	json_t *v;

	p->nprices = 0;
	if (o == NULL)
		return 0;
	if (!json_is_object(o) || json_object_size(o) > SR_QUEUE_POOL_PRICES)
		return -1;
	json_object_foreach(o, k, v) {
		if (k[0] == '\0' || strlen(k) >= sizeof p->prices[0].vm || !json_is_number(v) ||
		    json_number_value(v) <= 0)
			return -1;
		snprintf(p->prices[p->nprices].vm, sizeof p->prices[0].vm, "%s", k);
		p->prices[p->nprices++].price = json_number_value(v);
	}
	return 0;
}

/* p's record as JSON (malloc'd), or NULL when a string is not UTF-8. */
static char *
record_json(const struct sr_queue_pool *p)
{
	json_t *root;
	char *body;
	/* idle is what was spent outside jobs: written as the difference of
	 * the two rounded sums, so that spent = in_jobs + idle holds in the
	 * record however many writes rounded them (each rounding to the
	 * millionth on its own drifted the identity by up to 1.5e-6 a write:
	 * t58 saw it past its bound on a slow run) */
	double spent = round(p->spent * 1e6) / 1e6, in_jobs = round(p->in_jobs * 1e6) / 1e6;
	double idle = spent > in_jobs ? round((spent - in_jobs) * 1e6) / 1e6 : 0;

	root = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:f, s:f, s:i, s:f, s:f, s:f, s:f, "
	    "s:f, s:f, s:I, s:s, s:s}", "name", p->name, "cloud", p->cloud, "region", p->region,
	    "group", p->group, "template", p->template_id, "target", (json_int_t)p->target, "created",
	    round(p->created * 1000.0) / 1000.0, "updated", round(p->updated * 1000.0) / 1000.0,
	    "max_vms", p->max_vms, "cost_cap", p->cost_cap, "idle_timeout", p->idle_timeout,
	    "spent", spent, "spent_at", round(p->spent_at * 1000.0) / 1000.0,
	    "in_jobs", in_jobs, "idle", idle,
	    "fence", (json_int_t)p->fence, "by", p->by, "why", p->why);
	if (root != NULL && p->nprices > 0 && json_object_set_new(root, "prices",
	    prices_json(p)) == -1) {
		json_decref(root);
		root = NULL;
	}
	if (root != NULL && p->tried[0] != '\0' && (json_object_set_new(root, "tried",
	    json_string(p->tried)) == -1 || json_object_set_new(root, "waiting",
	    json_boolean(p->waiting)) == -1)) {
		json_decref(root);
		root = NULL;
	}
	if (root != NULL && p->draining > 0 && json_object_set_new(root, "draining",
	    json_real(round(p->draining * 1000.0) / 1000.0)) == -1) {
		json_decref(root);
		root = NULL;
	}
	if (root == NULL)
		return NULL;
	if ((body = json_dumps(root, JSON_COMPACT)) == NULL)
		sr_fatal("sr_queue_pool_put: out of memory");
	json_decref(root);
	return body;
}

/* Put p's record: overwriting (if_match NULL) or by CAS. */
static int
put(struct sr_queue *q, const struct sr_queue_pool *p, const char *if_match, char *etag_out,
    char *err)
{
	char key[SR_QUEUE_KEY_MAX], *body;
	int rc;

	if (sr_qkey_pool(p->name, key, sizeof key, err) == -1)
		return SR_QUEUE_ERROR;
	if ((body = record_json(p)) == NULL) {
		sr_err(err, "write %s in queue %s: not UTF-8 text", key, q->url);
		return SR_QUEUE_ERROR;
	}
	rc = sr_q_put(q, q->st, key, body, strlen(body), if_match != NULL ? SR_PUT_MATCH :
	    SR_PUT_OVERWRITE, if_match, etag_out, err);
	free(body);
	if (rc == SR_STORE_PRECONDITION) {
		sr_err(err, "write %s in queue %s: written by another meanwhile", key, q->url);
		return SR_QUEUE_BUSY;
	}
	if (rc != SR_STORE_OK) {
		sr_err_prefix(err, "write %s in queue %s", key, q->url);
		return SR_QUEUE_ERROR;
	}
	return SR_QUEUE_OK;
}

int
sr_queue_pool_put(struct sr_queue *q, const struct sr_queue_pool *p, char *err)
{
	return put(q, p, NULL, NULL, err) == SR_QUEUE_OK ? 0 : -1;
}

int
sr_queue_pool_put_if(struct sr_queue *q, const struct sr_queue_pool *p, const char *if_match,
    char *etag_out, char *err)
{
	return put(q, p, if_match, etag_out, err);
}

/* A record's JSON into p: 0, or -1. */
static int
parse(const char *body, size_t len, struct sr_queue_pool *p)
{
	const char *name, *cloud, *region, *group, *tmpl, *tried = "", *by = "", *why = "";
	json_t *root = json_loadb(body, len, 0, NULL);
	json_int_t target, fence = 0;
	json_t *prices = NULL;
	int rc, waiting = 0, max_vms = 0;

	memset(p, 0, sizeof *p);
	rc = json_unpack(root, "{s:s, s:s, s:s, s:s, s:s, s:I, s:F, s:F, s?:s, s?:b, s?:i, s?:F, "
	    "s?:F, s?:F, s?:F, s?:F, s?:F, s?:I, s?:s, s?:s, s?:o, s?:F}", "name", &name, "cloud", &cloud,
	    "region", &region, "group", &group, "template", &tmpl, "target", &target, "created",
	    &p->created, "updated", &p->updated, "tried", &tried, "waiting", &waiting,
	    "max_vms", &max_vms, "cost_cap", &p->cost_cap, "idle_timeout", &p->idle_timeout,
	    "spent", &p->spent, "spent_at", &p->spent_at, "in_jobs", &p->in_jobs, "idle", &p->idle,
	    "fence", &fence, "by", &by, "why", &why, "prices", &prices, "draining", &p->draining);
	if (rc == 0 && prices_parse(prices, p) == -1)
		rc = -1;
	if (rc == 0 && target >= 0 && target <= 1000000 && max_vms >= 0 && max_vms <= 1000000 &&
	    fence >= 0 && p->cost_cap >= 0 && p->idle_timeout >= 0 && p->spent >= 0 &&
	    p->in_jobs >= 0 && p->idle >= 0 && p->draining >= 0) {
		snprintf(p->name, sizeof p->name, "%s", name);
		snprintf(p->cloud, sizeof p->cloud, "%s", cloud);
		snprintf(p->region, sizeof p->region, "%s", region);
		snprintf(p->group, sizeof p->group, "%s", group);
		snprintf(p->template_id, sizeof p->template_id, "%s", tmpl);
		p->target = (unsigned)target;
		snprintf(p->tried, sizeof p->tried, "%s", tried);
		p->waiting = waiting;
		p->max_vms = max_vms;
		p->fence = fence;
		snprintf(p->by, sizeof p->by, "%s", by);
		snprintf(p->why, sizeof p->why, "%s", why);
	} else
		rc = -1;
	json_decref(root);
	return rc == 0 ? 0 : -1;
}

/* What reading a record found. */
enum got { GOT, GONE, BAD, FAILED };

static enum got
read_record(struct sr_queue *q, const char *name, struct sr_queue_pool *p, char *etag, char *err)
{
	char key[SR_QUEUE_KEY_MAX];
	size_t len;
	void *buf;
	int st;

	memset(p, 0, sizeof *p);
	if (sr_qkey_pool(name, key, sizeof key, err) == -1)
		return FAILED;
	st = sr_q_get(q, q->st, key, RECORD_MAX, &buf, &len, etag, err);
	if (st == SR_STORE_NOTFOUND)
		return GONE;
	if (st != SR_STORE_OK) {
		sr_err_prefix(err, "read %s of queue %s", key, q->url);
		return FAILED;
	}
	st = parse(buf, len, p);
	free(buf);
	if (st == -1) {
		sr_err(err, "read %s of queue %s: not a pool record (doc/fleet.md)", key, q->url);
		return BAD;
	}
	return GOT;
}

int
sr_queue_pool_get(struct sr_queue *q, const char *name, struct sr_queue_pool *p, char *err)
{
	return sr_queue_pool_read(q, name, p, NULL, err);
}

int
sr_queue_pool_read(struct sr_queue *q, const char *name, struct sr_queue_pool *p, char *etag,
    char *err)
{
	switch (read_record(q, name, p, etag, err)) {
	case GOT:
		return SR_QUEUE_OK;
	case GONE:
		return SR_QUEUE_NOTFOUND;
	default:
		return SR_QUEUE_ERROR;
	}
}

int
sr_queue_pool_delete(struct sr_queue *q, const char *name, char *err)
{
	char key[SR_QUEUE_KEY_MAX];
	int rc;

	if (sr_qkey_pool(name, key, sizeof key, err) == -1)
		return -1;
	rc = sr_q_delete(q, q->st, key, err);
	if (rc != SR_STORE_OK && rc != SR_STORE_NOTFOUND)
		return sr_err_prefix(err, "delete %s in queue %s", key, q->url);
	return 0;
}

int
sr_queue_pools_read(struct sr_queue *q, struct sr_queue_pool **v, size_t *n, int *bad,
    char *err)
{
	char **keys;
	size_t i, nkeys;
	int rc = 0, st;

	*v = NULL;
	*n = 0;
	if (bad != NULL)
		*bad = 0;
	if (sr_q_keys(q, SR_QKEY_POOLS, &keys, &nkeys, err) < 0)
		rc = sr_err_prefix(err, "list %s of queue %s", SR_QKEY_POOLS, q->url);
	for (i = 0; i < nkeys && rc == 0; i++) {
		*v = sr_reallocarray(*v, *n + 1, sizeof **v);
		st = read_record(q, keys[i] + strlen(SR_QKEY_POOLS), &(*v)[*n], NULL, err);
		if (st == GOT)
			(*n)++;
		else if (st == BAD && bad != NULL)
			(*bad)++;
		else if (st == FAILED)
			rc = -1;
		/* GONE: taken down meanwhile */
	}
	sr_q_keys_free(keys, nkeys);
	if (rc != 0) {
		free(*v);
		*v = NULL;
		*n = 0;
	}
	return rc;
}
