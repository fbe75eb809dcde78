/*
 * qpool.c: the pools `spotrun up` made for the queue (queue.h), one record
 * each under Q/pools/NAME: where its fleet engine keeps it (cloud, region,
 * the group's and the template's ids) and the target `up` set, so that
 * `status` and the agents find the pool from the queue alone. The truth
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

#define RECORD_MAX 4096		/* a record's JSON, at most */

int
sr_queue_pool_put(struct sr_queue *q, const struct sr_queue_pool *p, char *err)
{
	char key[SR_QUEUE_KEY_MAX], *body;
	json_t *root;
	int rc;

	if (sr_qkey_pool(p->name, key, sizeof key, err) == -1)
		return -1;
	root = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:f, s:f}", "name", p->name,
	    "cloud", p->cloud, "region", p->region, "group", p->group, "template", p->template_id,
	    "target", (json_int_t)p->target, "created", round(p->created * 1000.0) / 1000.0,
	    "updated", round(p->updated * 1000.0) / 1000.0);
	if (root != NULL && p->tried[0] != '\0' && (json_object_set_new(root, "tried",
	    json_string(p->tried)) == -1 || json_object_set_new(root, "waiting",
	    json_boolean(p->waiting)) == -1)) {
		json_decref(root);
		root = NULL;
	}
	if (root == NULL)
		return sr_err(err, "write %s in queue %s: not UTF-8 text", key, q->url);
	if ((body = json_dumps(root, JSON_COMPACT)) == NULL)
		sr_fatal("sr_queue_pool_put: out of memory");
	json_decref(root);
	rc = sr_q_put(q, q->st, key, body, strlen(body), SR_PUT_OVERWRITE, NULL, NULL, err);
	free(body);
	if (rc != SR_STORE_OK)
		return sr_err_prefix(err, "write %s in queue %s", key, q->url);
	return 0;
}

/* A record's JSON into p: 0, or -1. */
static int
parse(const char *body, size_t len, struct sr_queue_pool *p)
{
	const char *name, *cloud, *region, *group, *tmpl, *tried = "";
	json_t *root = json_loadb(body, len, 0, NULL);
	json_int_t target;
	int rc, waiting = 0;

	memset(p, 0, sizeof *p);
	rc = json_unpack(root, "{s:s, s:s, s:s, s:s, s:s, s:I, s:F, s:F, s?:s, s?:b}", "name",
	    &name, "cloud", &cloud, "region", &region, "group", &group, "template", &tmpl,
	    "target", &target, "created", &p->created, "updated", &p->updated, "tried", &tried,
	    "waiting", &waiting);
	if (rc == 0 && target >= 0 && target <= 1000000) {
		snprintf(p->name, sizeof p->name, "%s", name);
		snprintf(p->cloud, sizeof p->cloud, "%s", cloud);
		snprintf(p->region, sizeof p->region, "%s", region);
		snprintf(p->group, sizeof p->group, "%s", group);
		snprintf(p->template_id, sizeof p->template_id, "%s", tmpl);
		p->target = (unsigned)target;
		snprintf(p->tried, sizeof p->tried, "%s", tried);
		p->waiting = waiting;
	} else
		rc = -1;
	json_decref(root);
	return rc == 0 ? 0 : -1;
}

/* What reading a record found. */
enum got { GOT, GONE, BAD, FAILED };

static enum got
read_record(struct sr_queue *q, const char *name, struct sr_queue_pool *p, char *err)
{
	char key[SR_QUEUE_KEY_MAX];
	size_t len;
	void *buf;
	int st;

	memset(p, 0, sizeof *p);
	if (sr_qkey_pool(name, key, sizeof key, err) == -1)
		return FAILED;
	st = sr_q_get(q, q->st, key, RECORD_MAX, &buf, &len, NULL, err);
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
	switch (read_record(q, name, p, err)) {
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
		st = read_record(q, keys[i] + strlen(SR_QKEY_POOLS), &(*v)[*n], err);
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
