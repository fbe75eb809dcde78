/*
 * qplace.c: the queue's placement history (queue.h), Q/placement/CLOUD:
 * the places (region, zone, type) where pools of that cloud found no
 * capacity or had a VM preempted, with times, so that the next `up`
 * tries the others first (fleet/pool-failover.c). One small JSON object
 * per cloud, bounded in count and age, written by CAS so that two `up`s
 * lose no event.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "queue-int.h"
#include "util.h"

#define KEY_PREFIX	"placement/"
#define RECORD_MAX	(256 * 1024)
#define CAS_TRIES	16

static int
place_key(const char *cloud, char *key, size_t len, char *err)
{
	const char *c;

	for (c = cloud; *c >= 'a' && *c <= 'z'; c++)
		;
	if (cloud[0] == '\0' || *c != '\0' || strlen(cloud) >= 16)
		return sr_err(err, "placement of cloud \"%.32s\": want a cloud's name", cloud);
	snprintf(key, len, "%s%s", KEY_PREFIX, cloud);
	return 0;
}

/* body's events into *v, *n: 0, or -1. */
static int
parse(const char *body, size_t len, const char *cloud, struct sr_queue_place_event **v,
    size_t *n)
{
	json_t *root = json_loadb(body, len, 0, NULL), *a, *e;
	const char *region, *zone, *type, *why;
	size_t i;
	int rc = -1;

	*v = NULL;
	*n = 0;
	if (json_unpack(root, "{s:o}", "events", &a) != 0 || !json_is_array(a))
		goto out;
	*v = sr_calloc(json_array_size(a) + 1, sizeof **v);
	json_array_foreach(a, i, e) {
		struct sr_queue_place_event *x = &(*v)[*n];

		zone = "";
		if (json_unpack(e, "{s:s, s?:s, s:s, s:s, s:F}", "region", &region, "zone", &zone,
		    "type", &type, "why", &why, "at", &x->at) != 0)
			goto out;
		snprintf(x->cloud, sizeof x->cloud, "%s", cloud);
		snprintf(x->region, sizeof x->region, "%s", region);
		snprintf(x->zone, sizeof x->zone, "%s", zone);
		snprintf(x->type, sizeof x->type, "%s", type);
		snprintf(x->why, sizeof x->why, "%s", why);
		(*n)++;
	}
	rc = 0;
out:
	if (rc == -1) {
		free(*v);
		*v = NULL;
		*n = 0;
	}
	json_decref(root);
	return rc;
}

/* Read cloud's record: SR_QUEUE_OK (etag filled), SR_QUEUE_NOTFOUND, or
 * SR_QUEUE_ERROR with err. */
static int
read_record(struct sr_queue *q, const char *cloud, struct sr_queue_place_event **v, size_t *n,
    char *etag, char *err)
{
	char key[SR_QUEUE_KEY_MAX];
	size_t len;
	void *buf;
	int st;

	*v = NULL;
	*n = 0;
	if (place_key(cloud, key, sizeof key, err) == -1)
		return SR_QUEUE_ERROR;
	st = sr_q_get(q, q->st, key, RECORD_MAX, &buf, &len, etag, err);
	if (st == SR_STORE_NOTFOUND)
		return SR_QUEUE_NOTFOUND;
	if (st != SR_STORE_OK) {
		sr_err_prefix(err, "read %s of queue %s", key, q->url);
		return SR_QUEUE_ERROR;
	}
	st = parse(buf, len, cloud, v, n);
	free(buf);
	if (st == -1) {
		sr_err(err, "read %s of queue %s: not a placement history (doc/fleet.md); "
		    "delete it to start a new one", key, q->url);
		return SR_QUEUE_ERROR;
	}
	return SR_QUEUE_OK;
}

int
sr_queue_placement_read(struct sr_queue *q, const char *cloud, struct sr_queue_place_event **v,
    size_t *n, char *err)
{
	int st = read_record(q, cloud, v, n, NULL, err);

	return st == SR_QUEUE_OK || st == SR_QUEUE_NOTFOUND ? 0 : -1;
}

static int
by_time(const void *a, const void *b)
{
	const struct sr_queue_place_event *x = a, *y = b;

	return x->at < y->at ? -1 : x->at > y->at;
}

/* The events kept of v (n, sorted here) as JSON (malloc'd), or NULL when
 * a string is not UTF-8. */
static char *
record_json(struct sr_queue_place_event *v, size_t n, double now)
{
	json_t *root, *a;
	size_t i, from;
	char *body;

	qsort(v, n, sizeof *v, by_time);
	from = n > SR_QUEUE_PLACE_MAX ? n - SR_QUEUE_PLACE_MAX : 0;
	a = json_array();
	for (i = from; a != NULL && i < n; i++) {
		if (v[i].at < now - SR_QUEUE_PLACE_AGE)
			continue;
		if (json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s, s:f}", "region",
		    v[i].region, "zone", v[i].zone, "type", v[i].type, "why", v[i].why, "at",
		    round(v[i].at * 1000.0) / 1000.0)) == -1) {
			json_decref(a);
			return NULL;
		}
	}
	if (a == NULL || (root = json_pack("{s:o}", "events", a)) == NULL)
		return NULL;
	if ((body = json_dumps(root, JSON_COMPACT)) == NULL)
		sr_fatal("sr_queue_placement_add: out of memory");
	json_decref(root);
	return body;
}

int
sr_queue_placement_add(struct sr_queue *q, const char *cloud,
    const struct sr_queue_place_event *add, size_t nadd, char *err)
{
	struct sr_queue_place_event *v, *all;
	char key[SR_QUEUE_KEY_MAX], etag[SR_ETAG_MAX], *body;
	size_t n, tries;
	int st;

	if (nadd == 0)
		return 0;
	if (place_key(cloud, key, sizeof key, err) == -1)
		return -1;
	for (tries = 0; tries < CAS_TRIES; tries++) {
		etag[0] = '\0';
		st = read_record(q, cloud, &v, &n, etag, err);
		if (st == SR_QUEUE_ERROR)
			return -1;
		all = sr_reallocarray(v, n + nadd + 1, sizeof *all);
		memcpy(all + n, add, nadd * sizeof *add);
		body = record_json(all, n + nadd, sr_now());
		free(all);
		if (body == NULL)
			return sr_err(err, "write %s in queue %s: not UTF-8 text", key, q->url);
		st = sr_q_put(q, q->st, key, body, strlen(body), st == SR_QUEUE_NOTFOUND ?
		    SR_PUT_CREATE : SR_PUT_MATCH, st == SR_QUEUE_NOTFOUND ? NULL : etag, NULL, err);
		free(body);
		if (st == SR_STORE_OK)
			return 0;
		if (st != SR_STORE_PRECONDITION && st != SR_STORE_EXISTS)
			return sr_err_prefix(err, "write %s in queue %s", key, q->url);
		sr_sleep(0.05 * (double)(tries + 1));	/* another wrote it: read again */
	}
	return sr_err(err, "write %s in queue %s: written by others %d times meanwhile", key,
	    q->url, CAS_TRIES);
}
