/*
 * qmachine.c: what agents say of their machines (queue.h), the records
 * under Q/agents/ that `spotrun status` shows: written by an agent whose
 * machine cannot do what it seems to (GPU device nodes, no working
 * driver), so that whoever looks at the queue from elsewhere sees it.
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
sr_queue_machine_put(struct sr_queue *q, struct sr_queue_machine *m, char *err)
{
	char key[SR_QUEUE_KEY_MAX], *body;
	json_t *root;
	int rc;

	m->time = sr_now();
	root = json_pack("{s:s, s:s, s:f, s:i, s:i, s:s, s:s, s:s}", "agent", m->agent, "host",
	    m->host, "time", round(m->time * 1000.0) / 1000.0, "gpu_nodes", m->gpu_nodes, "gpus",
	    m->gpus, "gpu_type", m->gpu_type, "no_driver", m->no_driver, "instance", m->instance);
	if (root != NULL && m->pool[0] != '\0' && json_object_set_new(root, "pool",
	    json_string(m->pool)) == -1) {
		json_decref(root);
		root = NULL;
	}
	if (root == NULL)
		return sr_err(err, "write agents/ record of %s: not UTF-8 text", m->agent);
	if ((body = json_dumps(root, JSON_COMPACT)) == NULL)
		sr_fatal("sr_queue_machine_put: out of memory");
	json_decref(root);
	sr_qkey_machine(m->agent, key, sizeof key);
	rc = sr_q_put(q, q->st, key, body, strlen(body), SR_PUT_OVERWRITE, NULL, NULL, err);
	free(body);
	if (rc != SR_STORE_OK)
		return sr_err_prefix(err, "write %s in queue %s", key, q->url);
	return 0;
}

int
sr_queue_machine_delete(struct sr_queue *q, const char *agent, char *err)
{
	char key[SR_QUEUE_KEY_MAX];
	int rc;

	sr_qkey_machine(agent, key, sizeof key);
	rc = sr_q_delete(q, q->st, key, err);
	if (rc != SR_STORE_OK && rc != SR_STORE_NOTFOUND)
		return sr_err_prefix(err, "delete %s in queue %s", key, q->url);
	return 0;
}

int
sr_queue_machine_stale(const struct sr_queue_machine *m, double now)
{
	return now - m->time > SR_QUEUE_MACHINE_STALE;
}

/* A record's JSON into m: 0, or -1. */
static int
parse(const char *body, struct sr_queue_machine *m)
{
	const char *agent, *host, *why, *type = "", *instance = "", *pool = "";
	json_t *root = json_loads(body, 0, NULL);
	double t;
	int rc;

	memset(m, 0, sizeof *m);
	/* gpu_type, instance and pool may be missing: a record of an agent
	 * before they were kept, or of none in a pool */
	rc = json_unpack(root, "{s:s, s:s, s:F, s:i, s:i, s?s, s:s, s?s, s?s}", "agent", &agent,
	    "host", &host, "time", &t, "gpu_nodes", &m->gpu_nodes, "gpus", &m->gpus, "gpu_type",
	    &type, "no_driver", &why, "instance", &instance, "pool", &pool);
	if (rc == 0) {
		snprintf(m->pool, sizeof m->pool, "%s", pool);
		snprintf(m->instance, sizeof m->instance, "%s", instance);
		snprintf(m->gpu_type, sizeof m->gpu_type, "%s", type);
		snprintf(m->agent, sizeof m->agent, "%s", agent);
		snprintf(m->host, sizeof m->host, "%s", host);
		snprintf(m->no_driver, sizeof m->no_driver, "%s", why);
		m->time = t;
	}
	json_decref(root);
	return rc == 0 ? 0 : -1;
}

int
sr_queue_machines_read(struct sr_queue *q, struct sr_queue_machine **v, size_t *n, int *bad,
    char *err)
{
	char **keys;
	size_t i, len, nkeys;
	void *buf;
	int rc = 0, st;

	*v = NULL;
	*n = 0;
	if (bad != NULL)
		*bad = 0;
	if (sr_q_keys(q, "agents/", &keys, &nkeys, err) < 0)
		rc = sr_err_prefix(err, "list agents/ of queue %s", q->url);
	for (i = 0; i < nkeys && rc == 0; i++) {
		st = sr_q_get(q, q->st, keys[i], RECORD_MAX, &buf, &len, NULL, err);
		if (st == SR_STORE_NOTFOUND)
			continue;	/* its agent ended meanwhile */
		if (st != SR_STORE_OK) {
			rc = sr_err_prefix(err, "read %s of queue %s", keys[i], q->url);
			break;
		}
		*v = sr_reallocarray(*v, *n + 1, sizeof **v);
		if (parse(buf, &(*v)[*n]) == 0)
			(*n)++;
		else if (bad != NULL)
			(*bad)++;
		free(buf);
	}
	sr_q_keys_free(keys, nkeys);
	if (rc != 0) {
		free(*v);
		*v = NULL;
		*n = 0;
	}
	return rc;
}
