/*
 * gang.c: the slots of a gang (gang.h, doc/fleet.md "Gangs"): their JSON,
 * the leader's slot 0, members joining the first free slot, renewals and
 * state changes by compare-and-swap, the leader's reading of the members.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gang.h"
#include "queue-int.h"
#include "util.h"

#define SLOT_BYTES_MAX 4096

struct sr_gang {
	struct sr_queue *q;
	struct sr_gang_slot s;		/* as last written */
	int held;
	long seen_request;		/* a member: slot 0's request last passed on */
	/* whom to wake, from the last read of the others' slots */
	struct sr_gang_peer *peers;
	int npeers, peers_cap;
};

static const char *const state_names[] = { "waiting", "running", "notice", "released",
	"done" };

const char *
sr_gang_state_name(enum sr_gang_state s)
{
	return (unsigned)s < SR_ARRAY_LEN(state_names) ? state_names[s] : "?";
}

int
sr_gang_key(const char *id, int node, char *key, size_t len, char *err)
{
	char file[32];

	snprintf(file, sizeof file, "slots/%d", node);
	return sr_qkey_job(id, file, key, len, err);
}

static char *
slot_json(const struct sr_gang_slot *s, size_t *len)
{
	json_t *o = json_pack("{s:s, s:i, s:I, s:s, s:{s:s, s:I, s:s}, s:s, s:i, s:i, s:i, s:f, "
	    "s:f, s:f, s:f, s:f, s:I, s:f}",
	    "job", s->job, "node", s->node, "epoch", (json_int_t)s->epoch,
	    "state", sr_gang_state_name(s->state),
	    "owner", "host", s->host, "pid", (json_int_t)s->pid, "agent", s->agent,
	    "addr", s->addr, "port", s->port, "wake", s->wake, "nodes", s->nodes, "since", s->since,
	    "renewed", s->renewed, "expires", s->expires, "ttl", s->ttl, "deadline", s->deadline,
	    "request", (json_int_t)s->request, "request_deadline", s->request_deadline);
	char *t;

	if (o == NULL)
		sr_fatal("gang slot: a field is not UTF-8");
	t = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(13));
	json_decref(o);
	if (t == NULL)
		sr_fatal("json_dumps: out of memory");
	*len = strlen(t);
	return t;
}

static int
num_field(json_t *o, const char *name, double lo, double hi, double *out)
{
	json_t *v = json_object_get(o, name);

	if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < lo ||
	    json_number_value(v) > hi)
		return -1;
	*out = json_number_value(v);
	return 0;
}

static int
str_field(json_t *o, const char *name, char *out, size_t len)
{
	json_t *v = json_object_get(o, name);

	if (!json_is_string(v) || json_string_length(v) >= len)
		return -1;
	memcpy(out, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

/* Parse a slot object of job id, node node: 0, or -1 with the field. */
static int
slot_parse(const char *buf, size_t len, const char *id, int node, struct sr_gang_slot *s,
    const char **bad)
{
	json_t *o = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL), *ow;
	double d;
	char st[16];
	size_t i;
	int rc = -1;

	memset(s, 0, sizeof *s);
	*bad = "not a JSON object";
	if (!json_is_object(o))
		goto out;
	if ((*bad = "job", str_field(o, "job", s->job, sizeof s->job)) == -1 || strcmp(s->job, id))
		goto out;
	if ((*bad = "node", num_field(o, "node", node, node, &d)) == -1)
		goto out;
	s->node = node;
	if ((*bad = "epoch", num_field(o, "epoch", 1, 9e18, &d)) == -1 ||
	    !json_is_integer(json_object_get(o, "epoch")))
		goto out;
	s->epoch = (int64_t)json_integer_value(json_object_get(o, "epoch"));
	*bad = "state";
	if (str_field(o, "state", st, sizeof st) == -1)
		goto out;
	for (i = 0; i < SR_ARRAY_LEN(state_names) && strcmp(st, state_names[i]) != 0; i++)
		;
	if (i == SR_ARRAY_LEN(state_names))
		goto out;
	s->state = (enum sr_gang_state)i;
	*bad = "owner";
	ow = json_object_get(o, "owner");
	if (!json_is_object(ow) || str_field(ow, "host", s->host, sizeof s->host) == -1 ||
	    str_field(ow, "agent", s->agent, sizeof s->agent) == -1 ||
	    num_field(ow, "pid", 0, 1e12, &d) == -1)
		goto out;
	s->pid = (long)d;
	if ((*bad = "addr", str_field(o, "addr", s->addr, sizeof s->addr)) == -1)
		goto out;
	if ((*bad = "port", num_field(o, "port", 0, 65535, &d)) == -1)
		goto out;
	s->port = (int)d;
	/* "wake" came later: a slot without it has none */
	s->wake = 0;
	if (json_object_get(o, "wake") != NULL) {
		if ((*bad = "wake", num_field(o, "wake", 0, 65535, &d)) == -1)
			goto out;
		s->wake = (int)d;
	}
	if ((*bad = "nodes", num_field(o, "nodes", 0, SR_QUEUE_NODES_MAX, &d)) == -1)
		goto out;
	s->nodes = (int)d;
	if ((*bad = "since", num_field(o, "since", 0, 1e11, &s->since)) == -1 ||
	    (*bad = "renewed", num_field(o, "renewed", 0, 1e11, &s->renewed)) == -1 ||
	    (*bad = "expires", num_field(o, "expires", 0, 1e11, &s->expires)) == -1 ||
	    (*bad = "ttl", num_field(o, "ttl", SR_LEASE_TTL_MIN, SR_LEASE_TTL_MAX, &s->ttl)) == -1 ||
	    (*bad = "deadline", num_field(o, "deadline", 0, 1e11, &s->deadline)) == -1 ||
	    (*bad = "request", num_field(o, "request", 0, 1e15, &d)) == -1 ||
	    (*bad = "request_deadline", num_field(o, "request_deadline", 0, 1e11,
	    &s->request_deadline)) == -1)
		goto out;
	s->request = (long)d;
	rc = 0;
out:
	json_decref(o);
	return rc;
}

/* GET slot node: SR_QUEUE_OK, SR_QUEUE_NOTFOUND, SR_QUEUE_ERROR. */
static int
slot_get(struct sr_queue *q, const char *id, int node, struct sr_gang_slot *out, char *err)
{
	char key[SR_QUEUE_KEY_MAX];
	const char *bad;
	void *buf;
	size_t len;
	int rc;

	if (sr_gang_key(id, node, key, sizeof key, err) == -1)
		return SR_QUEUE_ERROR;
	rc = sr_q_get(q, q->st, key, SLOT_BYTES_MAX, &buf, &len, out->etag, err);
	if (rc == SR_STORE_NOTFOUND)
		return SR_QUEUE_NOTFOUND;
	if (rc != SR_STORE_OK)
		return SR_QUEUE_ERROR;
	{
		char etag[SR_ETAG_MAX];

		snprintf(etag, sizeof etag, "%s", out->etag);
		rc = slot_parse(buf, len, id, node, out, &bad);
		snprintf(out->etag, sizeof out->etag, "%s", etag);
	}
	free(buf);
	if (rc == -1)
		return sr_err(err, "read gang slot %s: \"%s\" is missing or wrong; it is claimed over "
		    "once its job's gang moves on, or delete the object", key, bad), SR_QUEUE_ERROR;
	return SR_QUEUE_OK;
}

int
sr_gang_read(struct sr_queue *q, const char *id, int node, struct sr_gang_slot *out, char *err)
{
	return slot_get(q, id, node, out, err);
}

int
sr_gang_live(const struct sr_gang_slot *s, double now)
{
	return s->state != SR_GANG_RELEASED && s->state != SR_GANG_DONE && s->expires > now;
}

/* Write g's slot (renewed now) create-only when etag is NULL, else by CAS
 * over etag: SR_STORE_* codes. */
static int
slot_put(struct sr_gang *g, const char *etag, char *err)
{
	char key[SR_QUEUE_KEY_MAX], *text;
	size_t len;
	int rc;

	if (sr_gang_key(g->s.job, g->s.node, key, sizeof key, err) == -1)
		return SR_STORE_ERROR;
	g->s.renewed = sr_now();
	g->s.expires = g->s.state == SR_GANG_RELEASED || g->s.state == SR_GANG_DONE ?
	    g->s.renewed : g->s.renewed + g->s.ttl;
	text = slot_json(&g->s, &len);
	rc = sr_q_put(g->q, g->q->st, key, text, len, etag == NULL ? SR_PUT_CREATE : SR_PUT_MATCH,
	    etag, g->s.etag, err);
	free(text);
	return rc;
}

static struct sr_gang *
gang_new(struct sr_queue *q, const char *id, int node, const struct sr_gang_claim *c)
{
	struct sr_gang *g = sr_calloc(1, sizeof *g);

	g->q = q;
	snprintf(g->s.job, sizeof g->s.job, "%s", id);
	g->s.node = node;
	g->s.epoch = c->epoch;
	g->s.state = SR_GANG_WAITING;
	snprintf(g->s.host, sizeof g->s.host, "%s", c->owner->host);
	g->s.pid = c->owner->pid;
	snprintf(g->s.agent, sizeof g->s.agent, "%s", c->owner->agent);
	snprintf(g->s.addr, sizeof g->s.addr, "%s", c->addr != NULL ? c->addr : "");
	if (node == 0)
		g->s.port = c->port;
	g->s.wake = c->wake;
	g->s.ttl = c->ttl > 0 ? c->ttl : SR_LEASE_TTL_DEFAULT;
	g->s.since = sr_now();
	return g;
}

/* Claim slot node at c->epoch: SR_QUEUE_OK (held), SR_QUEUE_BUSY (held by
 * a live slot of this epoch), SR_GANG_STALE, SR_QUEUE_ERROR. A lost race
 * reads the winner and judges it again, so exactly one claimer wins. */
static int
claim_slot(struct sr_queue *q, const char *id, int node, struct sr_gang_claim *c,
    struct sr_gang **out, char *err)
{
	struct sr_gang *g = gang_new(q, id, node, c);
	struct sr_gang_slot cur;
	int tries, rc, have = 0;

	for (tries = 0; tries < 4; tries++) {
		const char *over = NULL;

		if (have) {
			if (cur.epoch > c->epoch) {
				sr_gang_free(g);
				return sr_err(err, "join gang of job %s: slot %d is of epoch %lld, "
				    "above %lld: the job moved on", id, node, (long long)cur.epoch,
				    (long long)c->epoch), SR_GANG_STALE;
			}
			if (cur.epoch == c->epoch && sr_gang_live(&cur, sr_now())) {
				sr_gang_free(g);
				return SR_QUEUE_BUSY;
			}
			over = cur.etag;
		}
		c->requests++;
		rc = slot_put(g, over, err);
		if (rc == SR_STORE_OK) {
			g->held = 1;
			*out = g;
			return SR_QUEUE_OK;
		}
		if (rc != SR_STORE_EXISTS && rc != SR_STORE_PRECONDITION)
			break;
		c->requests++;
		rc = slot_get(q, id, node, &cur, err);
		if (rc == SR_QUEUE_NOTFOUND) {
			have = 0;
			continue;
		}
		if (rc != SR_QUEUE_OK)
			break;
		have = 1;
	}
	sr_gang_free(g);
	if (tries == 4)
		sr_err(err, "claim gang slot %d of job %s: lost four races in a row", node, id);
	return SR_QUEUE_ERROR;
}

int
sr_gang_lead(struct sr_queue *q, const char *id, struct sr_gang_claim *c, struct sr_gang **out,
    char *err)
{
	int rc;

	*out = NULL;
	c->requests = 0;
	rc = claim_slot(q, id, 0, c, out, err);
	if (rc == SR_QUEUE_BUSY) {	/* a live slot 0 of our own epoch: we hold the lease */
		sr_err(err, "lead gang of job %s: its slot 0 is held at epoch %lld by another "
		    "agent", id, (long long)c->epoch);
		rc = SR_QUEUE_ERROR;
	}
	return rc;
}

int
sr_gang_join(struct sr_queue *q, const char *id, struct sr_gang_claim *c, struct sr_gang **out,
    char *err)
{
	int node, rc;

	*out = NULL;
	c->requests = 0;
	for (node = 1; node < c->nodes_max; node++) {
		rc = claim_slot(q, id, node, c, out, err);
		if (rc != SR_QUEUE_BUSY)
			return rc;
	}
	return sr_err(err, "join gang of job %s: its %d slots are held", id, c->nodes_max),
	    SR_GANG_FULL;
}

int
sr_gang_node(const struct sr_gang *g)
{
	return g->s.node;
}

int64_t
sr_gang_epoch(const struct sr_gang *g)
{
	return g->s.epoch;
}

void
sr_gang_info(const struct sr_gang *g, struct sr_gang_slot *out)
{
	*out = g->s;
}

int
sr_gang_set(struct sr_gang *g, enum sr_gang_state state, int nodes, double deadline, char *err)
{
	struct sr_gang_slot prev = g->s;
	char etag[SR_ETAG_MAX];
	int rc;

	if (!g->held)
		return sr_err(err, "write gang slot %d of job %s: not held", g->s.node, g->s.job),
		    SR_GANG_LOST;
	snprintf(etag, sizeof etag, "%s", g->s.etag);
	g->s.state = state;
	if (state == SR_GANG_RUNNING && nodes > 0)
		g->s.nodes = nodes;
	/* A notice's deadline only comes earlier: node 0's own machine's
	 * notice after the one it passed on (agent-gang.c) must not put off
	 * the deadline the members read from slot 0. */
	if (state == SR_GANG_NOTICE && !(prev.state == SR_GANG_NOTICE && prev.deadline > 0 &&
	    prev.deadline < deadline))
		g->s.deadline = deadline;
	rc = slot_put(g, etag, err);
	if (rc == SR_STORE_OK) {
		if (state == SR_GANG_RELEASED || state == SR_GANG_DONE)
			g->held = 0;
		return SR_QUEUE_OK;
	}
	g->s = prev;
	if (rc == SR_STORE_PRECONDITION || rc == SR_STORE_NOTFOUND) {
		g->held = 0;
		return sr_err(err, "write gang slot %d of job %s: it was taken over", g->s.node,
		    g->s.job), SR_GANG_LOST;
	}
	return SR_QUEUE_ERROR;
}

int
sr_gang_renew(struct sr_gang *g, char *err)
{
	return sr_gang_set(g, g->s.state, g->s.nodes, g->s.deadline, err);
}

/* Remember s's agent as one to wake (its wake port, if it has one). */
static void
peer_add(struct sr_gang *g, const struct sr_gang_slot *s)
{
	if (s->wake <= 0 || s->addr[0] == '\0')
		return;
	if (g->npeers == g->peers_cap) {
		g->peers_cap = g->peers_cap ? 2 * g->peers_cap : 4;
		g->peers = sr_reallocarray(g->peers, (size_t)g->peers_cap, sizeof *g->peers);
	}
	snprintf(g->peers[g->npeers].addr, sizeof g->peers[g->npeers].addr, "%s", s->addr);
	g->peers[g->npeers++].wake = s->wake;
}

int
sr_gang_peers(const struct sr_gang *g, struct sr_gang_peer *out, int max)
{
	int i;

	for (i = 0; i < g->npeers && i < max; i++)
		out[i] = g->peers[i];
	return i;
}

int
sr_gang_members(struct sr_gang *g, int max, int *held, double *notice, char *err)
{
	struct sr_gang_slot s;
	double now = sr_now();
	int node, gap = 0, rc;

	*held = 1;
	*notice = 0;
	g->npeers = 0;
	for (node = 1; node < max; node++) {
		rc = slot_get(g->q, g->s.job, node, &s, err);
		if (rc == SR_QUEUE_NOTFOUND) {
			gap = 1;
			continue;
		}
		if (rc != SR_QUEUE_OK)
			return SR_QUEUE_ERROR;
		if (s.epoch != g->s.epoch) {
			gap = 1;
			continue;
		}
		/* Woken, live or not: a member releases its slot as its run
		 * ends, and then waits idle for the job put back, which the
		 * leader's last look before the release must not have dropped
		 * it from (it then found the job at its next poll, up to
		 * 0.4 s later). A wake is a hint: one to a gone node is lost. */
		peer_add(g, &s);
		/* a member whose job succeeded is not gone: node 0's job may
		 * end later (rank 0's last save, the others exited) */
		if (s.state == SR_GANG_DONE) {
			if (!gap)
				(*held)++;
			continue;
		}
		if (!sr_gang_live(&s, now)) {
			gap = 1;
			continue;
		}
		if (!gap)
			(*held)++;
		if (s.state == SR_GANG_NOTICE && (*notice == 0 || s.deadline < *notice))
			*notice = s.deadline > 0 ? s.deadline : now;
	}
	return SR_QUEUE_OK;
}

/* Renew g's slot when a third of its TTL has passed since it was written. */
static int
renew_due(struct sr_gang *g, char *err)
{
	if (sr_now() - g->s.renewed < g->s.ttl / 3)
		return SR_QUEUE_OK;
	return sr_gang_renew(g, err);
}

/* Release g's slot (a failure only said: it expires anyway) and return news. */
static int
leave(struct sr_gang *g, int news)
{
	char err[SR_ERRMAX];

	(void)sr_gang_set(g, SR_GANG_RELEASED, 0, 0, err);
	return news;
}

/* What a step and a watch begin with: the slot renewed when due, then
 * what the others say: the leader reads the members' slots up to max
 * (*held, *notice), a member slot 0 (*s0). SR_QUEUE_OK, SR_QUEUE_NOTFOUND
 * (a member: no slot 0), SR_QUEUE_ERROR or SR_GANG_LOST. */
static int
look(struct sr_gang *g, int max, int *held, double *notice, struct sr_gang_slot *s0, char *err)
{
	int rc = renew_due(g, err);

	if (rc != SR_QUEUE_OK)
		return rc;
	if (g->s.node == 0)
		return sr_gang_members(g, max, held, notice, err);
	rc = slot_get(g->q, g->s.job, 0, s0, err);
	g->npeers = 0;
	if (rc == SR_QUEUE_OK && s0->epoch == g->s.epoch)
		peer_add(g, s0);
	return rc;
}

int
sr_gang_abandon(struct sr_gang *g, const struct sr_gang_form *f, char *err)
{
	int rc = SR_QUEUE_OK;

	/* the lease's release puts a marker back, with its etag */
	if (g->s.node == 0 && f->marker != NULL &&
	    sr_q_delete(g->q, g->q->st, f->marker, err) != SR_STORE_OK)
		rc = SR_QUEUE_ERROR;
	if (g->held && sr_gang_set(g, SR_GANG_RELEASED, 0, 0, err) != SR_QUEUE_OK)
		rc = SR_QUEUE_ERROR;
	return rc;
}

int
sr_gang_step(struct sr_gang *g, const struct sr_gang_form *f, int *nodes,
    struct sr_gang_slot *leader, char *err)
{
	struct sr_gang_slot s0;
	double now = sr_now(), notice;
	int rc, held;

	rc = look(g, f->nodes_max, &held, &notice, &s0, err);
	if (rc == SR_QUEUE_ERROR || rc == SR_GANG_LOST)
		return rc;
	if (g->s.node == 0) {
		if (held >= f->nodes_max || (held >= f->nodes_min && now - g->s.since >= f->fill)) {
			if ((rc = sr_gang_set(g, SR_GANG_RUNNING, held, 0, err)) != SR_QUEUE_OK)
				return rc;
			if (f->marker != NULL && sr_q_delete(g->q, g->q->st, f->marker, err) !=
			    SR_STORE_OK)
				err[0] = '\0';	/* a stale marker: the next claimer repairs it */
			if (nodes != NULL)
				*nodes = held;
			if (leader != NULL)
				*leader = g->s;
			return SR_GANG_STARTED;
		}
		if (now - g->s.since >= f->timeout) {
			(void)sr_gang_abandon(g, f, err);
			return SR_GANG_TIMEDOUT;
		}
		if (nodes != NULL)
			*nodes = held;
		return SR_GANG_FORMING;
	}
	if (rc == SR_QUEUE_NOTFOUND || s0.epoch != g->s.epoch || !sr_gang_live(&s0, now) ||
	    s0.state == SR_GANG_NOTICE)
		return leave(g, SR_GANG_OUT);
	if (s0.state == SR_GANG_RUNNING) {
		if (g->s.node >= s0.nodes)
			return leave(g, SR_GANG_OUT);
		if ((rc = sr_gang_set(g, SR_GANG_RUNNING, s0.nodes, 0, err)) != SR_QUEUE_OK)
			return rc;
		/* every request of this gang is passed on (node 0 may have made one
		 * already: its ranks started first) */
		g->seen_request = 0;
		if (nodes != NULL)
			*nodes = s0.nodes;
		if (leader != NULL)
			*leader = s0;
		return SR_GANG_STARTED;
	}
	if (now - g->s.since >= f->timeout)
		return leave(g, SR_GANG_TIMEDOUT);
	return SR_GANG_FORMING;
}

int
sr_gang_watch(struct sr_gang *g, int nodes, double *deadline, char *err)
{
	struct sr_gang_slot s0;
	double now = sr_now(), notice;
	int rc, held;

	*deadline = 0;
	rc = look(g, nodes, &held, &notice, &s0, err);
	if (rc == SR_QUEUE_ERROR || rc == SR_GANG_LOST)
		return rc;
	if (g->s.node == 0) {
		if (notice > 0 && g->s.state != SR_GANG_NOTICE &&
		    (rc = sr_gang_set(g, SR_GANG_NOTICE, 0, notice, err)) != SR_QUEUE_OK)
			return rc;
		if (g->s.state == SR_GANG_NOTICE) {	/* a notice stands till the end */
			*deadline = g->s.deadline;
			return SR_GANG_NOTICED;
		}
		if (held < nodes) {
			/* the members learn it from slot 0, as a notice */
			char werr[SR_ERRMAX];

			sr_err(err, "gang of job %s: node %d of %d is gone (its slot is released or "
			    "expired)", g->s.job, held, nodes);
			(void)sr_gang_set(g, SR_GANG_NOTICE, 0, now + 30, werr);
			return SR_GANG_BROKEN;
		}
		return SR_GANG_QUIET;
	}
	if (rc == SR_QUEUE_OK && s0.epoch == g->s.epoch && s0.state == SR_GANG_DONE)
		return SR_GANG_QUIET;	/* node 0's job ended: this node's ends too */
	if (rc == SR_QUEUE_NOTFOUND || s0.epoch != g->s.epoch || !sr_gang_live(&s0, now))
		return sr_err(err, "gang of job %s: node 0 is gone (its slot is %s)", g->s.job,
		    rc == SR_QUEUE_NOTFOUND ? "missing" : s0.epoch != g->s.epoch ?
		    "of another epoch" : s0.state == SR_GANG_RELEASED ? "released" : "expired"),
		    SR_GANG_BROKEN;
	if (s0.state == SR_GANG_NOTICE) {
		*deadline = s0.deadline;
		return SR_GANG_NOTICED;
	}
	if (s0.request > g->seen_request) {
		g->seen_request = s0.request;
		*deadline = s0.request_deadline;
		return SR_GANG_REQUESTED;
	}
	return SR_GANG_QUIET;
}

int
sr_gang_request(struct sr_gang *g, double deadline, char *err)
{
	int rc;

	g->s.request++;
	g->s.request_deadline = deadline;
	if ((rc = sr_gang_renew(g, err)) != SR_QUEUE_OK) {
		g->s.request--;
		return rc;
	}
	return SR_QUEUE_OK;
}

void
sr_gang_free(struct sr_gang *g)
{
	if (g != NULL)
		free(g->peers);
	free(g);
}
