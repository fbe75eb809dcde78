/*
 * qclaim.c: claiming jobs (queue.h). Uncontended, a claim is 3 requests:
 * one listing of pending/ (its first page holds the best candidates, in
 * priority and submit order, each with its GPU needs, store and lease
 * hint in the key), the lease (a create-only PUT for a fresh job, a CAS
 * over the etag the marker carries for one released or requeued), and a
 * GET of the spec; deleting the marker is one more. Agents pick at random
 * among the first candidates of the best priority, so that many of them
 * starting together spread over the jobs instead of all racing for one.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gang.h"
#include "queue-int.h"
#include "util.h"

/* Claim rounds (a listing and its candidates) before giving up as empty:
 * a round ends early only when all its candidates were stale. */
#define ROUNDS 4

/* The first candidates of the best priority that fit the agent. */
struct cands {
	struct sr_queue *q;
	const struct sr_queue_agent *a;
	struct sr_queue_pending *v;
	size_t n, want;
	long seen;
};

static int
cand_cb(const struct sr_object_info *info, void *arg)
{
	struct cands *c = arg;
	struct sr_queue_pending p;

	c->seen++;
	if (sr_qkey_pending_parse(info->key, &p, NULL) == 0 &&
	    sr_queue_pending_fits(&p, c->a->gpus, c->a->gpu_type) && !sr_q_skipped(c->q, p.id, 0)) {
		if (c->n > 0 && p.priority != c->v[0].priority)
			return 1;	/* the rest wait behind these */
		c->v[c->n++] = p;
		if (c->n == c->want)
			return 1;
	}
	/* one page is enough once it gave us something */
	return c->n > 0 && c->seen % 1000 == 0;
}

static void
warn(const struct sr_queue_agent *a, const char *msg)
{
	if (a->warn != NULL)
		a->warn(a->warn_arg, msg);
}

void
sr_queue_job_free(struct sr_queue_job *j)
{
	if (j == NULL)
		return;
	sr_lease_free(j->lease);
	sr_gang_free(j->gang);
	free(j->spec);
	free(j->store_url);
	free(j);
}

/* Job p cannot be claimed for good: err is a permanent store error
 * (sr_store_err_permanent) of one of its objects (its lease, its store's
 * stores/HASH, its spec), which no retry mends. Mark it failed in the
 * index (its lease, when held, too), so that no agent tries it again,
 * and say so through a->warn and err. SR_QUEUE_BUSY: the caller drops
 * its marker and goes on. */
static int
fail_for_good(struct sr_queue *q, const struct sr_queue_agent *a,
    const struct sr_queue_pending *p, struct sr_lease *held, char *err)
{
	struct sr_queue_status s;
	char why[SR_ERRMAX], serr[SR_ERRMAX];

	if (sr_queue_status_get(q, p->id, &s, serr) != SR_QUEUE_OK) {
		memset(&s, 0, sizeof s);
		snprintf(s.id, sizeof s.id, "%s", p->id);
		s.step = -1;
	}
	s.state = SR_LEASE_FAILED;
	s.time = 0;
	if (held != NULL) {
		sr_lease_set_state(held, SR_LEASE_FAILED, serr);
		sr_q_count(q, SR_QC_PUT, 1);
	}
	if (sr_queue_status_set(q, &s, NULL, serr) != SR_QUEUE_OK)
		snprintf(why, sizeof why, "job %s: %s; a permanent error, not tried again (and its "
		    "status marker could not say failed: %s)", p->id, err, serr);
	else
		snprintf(why, sizeof why, "job %s: %s; a permanent error: the job is marked failed",
		    p->id, err);
	warn(a, why);
	snprintf(err, SR_ERRMAX, "%s", why);
	return SR_QUEUE_BUSY;
}

/* Claim the job of marker p. SR_QUEUE_OK with *out; SR_QUEUE_BUSY when
 * the marker was stale, the lease malformed (err says, *malformed is set
 * for the latter; go on with the next) or the job failed for good
 * (fail_for_good); SR_QUEUE_ERROR. *requests counts what it made. */
static int
claim_one(struct sr_queue *q, const struct sr_queue_agent *a, const struct sr_queue_pending *p,
    int hinted, struct sr_queue_job **out, int *requests, int *malformed, char *err)
{
	struct sr_queue_job *j = sr_calloc(1, sizeof *j);
	const char *url;
	struct sr_store *st;
	char why[SR_ERRMAX];
	int rc;

	*out = NULL;
	*malformed = 0;
	j->marker = *p;
	if ((st = sr_q_store_of_hash(q, p->store, &url, requests, err)) == NULL) {
		sr_queue_job_free(j);
		return sr_store_err_permanent(err) ? fail_for_good(q, a, p, NULL, err) :
		    SR_QUEUE_ERROR;
	}
	j->claim.owner = a->owner;
	j->claim.ttl = a->ttl;
	j->claim.seen = a->seen;
	if (hinted) {
		j->claim.hint_etag = p->etag;
		j->claim.hint_epoch = p->epoch;
	}
	rc = sr_lease_claim(st, p->id, &j->claim, &j->lease, err);
	*requests += j->claim.requests;
	sr_q_count(q, SR_QC_ALL, j->claim.requests);
	if (rc == SR_LEASE_HELD || rc == SR_LEASE_TERMINAL || rc == SR_LEASE_MALFORMED) {
		*malformed = rc == SR_LEASE_MALFORMED;
		sr_queue_job_free(j);
		return SR_QUEUE_BUSY;
	}
	if (rc != SR_LEASE_OK) {
		sr_queue_job_free(j);
		return sr_store_err_permanent(err) ? fail_for_good(q, a, p, NULL, err) :
		    SR_QUEUE_ERROR;
	}
	j->store = st;
	j->store_url = sr_strdup(url);
	(*requests)++;
	rc = sr_queue_spec_read(q, p->id, &j->spec, &j->spec_len, err);
	if (rc == SR_QUEUE_NOTFOUND) {
		/* a marker without its job: end the job so no one tries it again */
		snprintf(why, sizeof why, "%s; the job is marked failed", err);
		warn(a, why);
		sr_lease_set_state(j->lease, SR_LEASE_FAILED, err);
		sr_q_count(q, SR_QC_PUT, 1);
		sr_queue_job_free(j);
		snprintf(err, SR_ERRMAX, "%s", why);
		return SR_QUEUE_BUSY;
	}
	if (rc != SR_QUEUE_OK && sr_store_err_permanent(err)) {
		rc = fail_for_good(q, a, p, j->lease, err);
		sr_queue_job_free(j);
		return rc;
	}
	if (rc != SR_QUEUE_OK) {
		/* we hold it but cannot read it: let it go at once for another try */
		sr_lease_set_state(j->lease, SR_LEASE_RELEASED, why);
		sr_q_count(q, SR_QC_PUT, 1);
		sr_queue_job_free(j);
		return SR_QUEUE_ERROR;
	}
	*out = j;
	return SR_QUEUE_OK;
}

/* Join the gang of job p at slot 0's epoch c->epoch: SR_QUEUE_OK with *out,
 * SR_QUEUE_BUSY (full), SR_QUEUE_ERROR. */
static int
join_gang(struct sr_queue *q, const struct sr_queue_pending *p, struct sr_gang_claim *c,
    struct sr_queue_job **out, int *requests, char *err)
{
	struct sr_queue_job *j;
	struct sr_gang *g;
	const char *url;
	char why[SR_ERRMAX];
	int rc = sr_gang_join(q, p->id, c, &g, err);

	*requests += c->requests;
	if (rc == SR_GANG_FULL || rc == SR_GANG_STALE)
		return SR_QUEUE_BUSY;
	if (rc != SR_QUEUE_OK)
		return SR_QUEUE_ERROR;
	j = sr_calloc(1, sizeof *j);
	j->marker = *p;
	j->gang = g;
	if ((j->store = sr_q_store_of_hash(q, p->store, &url, requests, err)) == NULL ||
	    ((*requests)++, sr_queue_spec_read(q, p->id, &j->spec, &j->spec_len, err)) !=
	    SR_QUEUE_OK) {
		sr_gang_set(g, SR_GANG_RELEASED, 0, 0, why);
		sr_queue_job_free(j);
		return SR_QUEUE_ERROR;
	}
	j->store_url = sr_strdup(url);
	*out = j;
	return SR_QUEUE_OK;
}

/* Claim a slot of the gang job of marker p: join the gang forming (slot
 * 0 live above the marker's epoch) or lead a new one (claim_one's lease,
 * then slot 0 at its epoch). A claimer that lost the lease to a new
 * leader reads slot 0 again, a few times 0.1 s apart, to join it (the
 * leader writes it right after its lease). SR_QUEUE_OK with *out,
 * SR_QUEUE_BUSY (full, started, the lease held: err says; the marker
 * stays), SR_QUEUE_ERROR. */
static int
claim_gang(struct sr_queue *q, const struct sr_queue_agent *a, const struct sr_queue_pending *p,
    struct sr_queue_job **out, int *requests, int *malformed, char *err)
{
	struct sr_gang_claim c = { a->owner, a->ttl, 0, p->nodes_max, a->addr, a->port, 0 };
	struct sr_gang_slot s0;
	struct sr_queue_job *j;
	char why[SR_ERRMAX];
	int rc, round;

	*out = NULL;
	*malformed = 0;
	for (round = 0; round < 6; round++) {
		if (round > 0)
			sr_sleep(0.1);
		(*requests)++;
		rc = sr_gang_read(q, p->id, 0, &s0, err);
		if (rc == SR_QUEUE_ERROR)
			return SR_QUEUE_ERROR;
		if (rc == SR_QUEUE_OK && s0.epoch > p->epoch && sr_gang_live(&s0, sr_now())) {
			if (s0.state != SR_GANG_WAITING)
				return sr_err(err, "join gang of job %s: it runs already (%s)", p->id,
				    sr_gang_state_name(s0.state)), SR_QUEUE_BUSY;
			c.epoch = s0.epoch;
			return join_gang(q, p, &c, out, requests, err);
		}
		if (round > 0)
			continue;
		rc = claim_one(q, a, p, 1, &j, requests, malformed, err);
		if (rc == SR_QUEUE_BUSY && !*malformed)
			continue;	/* held: a leader may be writing slot 0 */
		if (rc != SR_QUEUE_OK)
			return rc;
		c.epoch = sr_lease_epoch(j->lease);
		rc = sr_gang_lead(q, p->id, &c, &j->gang, err);
		*requests += c.requests;
		if (rc != SR_QUEUE_OK) {
			sr_lease_set_state(j->lease, SR_LEASE_RELEASED, why);
			sr_q_count(q, SR_QC_PUT, 1);
			sr_queue_job_free(j);
			return rc == SR_GANG_STALE ? SR_QUEUE_BUSY : SR_QUEUE_ERROR;
		}
		*out = j;
		return SR_QUEUE_OK;
	}
	return SR_QUEUE_BUSY;
}

int
sr_queue_claim(struct sr_queue *q, const struct sr_queue_agent *a, struct sr_queue_job **out,
    char *err)
{
	struct cands c = { q, a, NULL, 0, 0, 0 };
	int round, rc = SR_QUEUE_EMPTY, requests = 0;

	*out = NULL;
	c.want = a->pick > 0 ? (size_t)a->pick : SR_QUEUE_PICK_DEFAULT;
	c.v = sr_calloc(c.want, sizeof *c.v);
	for (round = 0; round < ROUNDS; round++) {
		int stale = 0;

		c.n = 0;
		c.seen = 0;
		if (sr_q_list(q, q->st, "pending/", cand_cb, &c, err) < 0) {
			rc = SR_QUEUE_ERROR;
			break;
		}
		requests += c.seen == 0 ? 1 : (int)((c.seen + 999) / 1000);
		if (c.n == 0) {
			rc = SR_QUEUE_EMPTY;
			break;
		}
		while (c.n > 0) {
			size_t i = sr_q_random(q, (unsigned)c.n);
			struct sr_queue_pending p = c.v[i];
			char why[SR_ERRMAX];
			int malformed;

			c.v[i] = c.v[--c.n];
			if (p.nodes_max > 1) {
				/* a gang's marker stays while it forms */
				rc = claim_gang(q, a, &p, out, &requests, &malformed, why);
				if (rc == SR_QUEUE_OK) {
					(*out)->requests = requests;
					break;
				}
				if (rc == SR_QUEUE_ERROR) {
					snprintf(err, SR_ERRMAX, "%s", why);
					break;
				}
				if (malformed && !sr_q_skipped(q, p.id, 1))
					warn(a, why);
				continue;
			}
			rc = claim_one(q, a, &p, 1, out, &requests, &malformed, why);
			if (rc == SR_QUEUE_OK) {
				(*out)->requests = requests;
				(*out)->cleanup_requests = 1;
				if (sr_q_delete(q, q->st, p.key, why) != SR_STORE_OK)
					warn(a, why);	/* a stale marker: the next claimer repairs it */
				break;
			}
			if (rc == SR_QUEUE_ERROR) {
				snprintf(err, SR_ERRMAX, "%s", why);
				break;
			}
			/* busy: stale (held elsewhere, ended: drop the marker) or malformed (skip) */
			if (malformed) {
				if (!sr_q_skipped(q, p.id, 1))
					warn(a, why);
			} else {
				requests++;
				sr_q_delete(q, q->st, p.key, why);
				stale++;
			}
		}
		if (rc == SR_QUEUE_OK || rc == SR_QUEUE_ERROR || stale == 0)
			break;
	}
	free(c.v);
	if (rc == SR_QUEUE_BUSY)
		rc = SR_QUEUE_EMPTY;
	if (rc == SR_QUEUE_EMPTY)
		sr_err(err, "claim from queue %s: no job this agent can run (%d GPU%s%s%s)", q->url,
		    a->gpus, a->gpus == 1 ? "" : "s", a->gpu_type != NULL && a->gpu_type[0] != '\0' ?
		    " " : "", a->gpu_type != NULL ? a->gpu_type : "");
	return rc;
}

struct keys {
	char **v;
	size_t n;
};

static int
keys_cb(const struct sr_object_info *info, void *arg)
{
	struct keys *k = arg;

	k->v = sr_reallocarray(k->v, k->n + 1, sizeof *k->v);
	k->v[k->n++] = sr_strdup(info->key);
	return 0;
}

/* Delete every pending marker of p's job, whatever its lease hint. */
static int
drop_markers(struct sr_queue *q, const struct sr_queue_pending *p, char *err)
{
	struct keys k = { NULL, 0 };
	char prefix[SR_QUEUE_KEY_MAX], *tilde;
	size_t i;
	int rc;

	/* the marker's key up to its lease hint is fixed by the job's meta */
	if (sr_qkey_pending(p, prefix, sizeof prefix, err) == -1)
		return -1;
	tilde = strrchr(prefix, '~');
	*tilde = '\0';
	tilde = strrchr(prefix, '~');
	tilde[1] = '\0';
	rc = sr_q_list(q, q->st, prefix, keys_cb, &k, err);
	if (rc == 0)
		rc = sr_q_delete_many(q, q->st, (const char *const *)k.v, k.n, err);
	for (i = 0; i < k.n; i++)
		free(k.v[i]);
	free(k.v);
	return rc;
}

int
sr_queue_claim_id(struct sr_queue *q, const struct sr_queue_agent *a, const char *id,
    struct sr_queue_job **out, char *err)
{
	struct sr_queue_job_meta m;
	struct sr_queue_pending p;
	char hash[20], why[SR_ERRMAX];
	int rc, requests = 1, malformed;

	*out = NULL;
	if ((rc = sr_queue_meta_read(q, id, &m, err)) != SR_QUEUE_OK)
		return rc;
	sr_q_hash_of_url(q, m.store, hash);
	sr_q_pending_of_meta(&m, hash, 0, "", &p);
	sr_queue_job_meta_free(&m);
	rc = claim_one(q, a, &p, 0, out, &requests, &malformed, err);
	if (rc != SR_QUEUE_OK)
		return rc;
	(*out)->requests = requests;
	if (drop_markers(q, &p, why) == -1)
		warn(a, why);
	(*out)->cleanup_requests = 2;
	if (p.nodes_max > 1) {
		/* a gang's, whose node 0 died: back to pending, for a new gang */
		rc = sr_queue_job_end(q, *out, SR_LEASE_RELEASED, err);
		sr_queue_job_free(*out);
		*out = NULL;
		if (rc != SR_QUEUE_OK)
			return rc == SR_QUEUE_LOST ? SR_QUEUE_BUSY : rc;
		return sr_err(err, "claim job %s: it runs on a gang of %d-%d nodes: put back in the "
		    "queue for a new gang to form", id, p.nodes_min, p.nodes_max), SR_QUEUE_BUSY;
	}
	return SR_QUEUE_OK;
}

int
sr_queue_job_end(struct sr_queue *q, struct sr_queue_job *j, enum sr_lease_state state,
    char *err)
{
	struct sr_lease_info li;
	int rc = sr_lease_set_state(j->lease, state, err);

	sr_q_count(q, SR_QC_PUT, 1);
	if (rc == SR_LEASE_LOST)
		return SR_QUEUE_LOST;
	if (rc != SR_LEASE_OK)
		return SR_QUEUE_ERROR;
	if (state != SR_LEASE_RELEASED && state != SR_LEASE_QUEUED)
		return SR_QUEUE_OK;
	sr_lease_get_info(j->lease, &li);
	j->marker.epoch = li.epoch;
	snprintf(j->marker.etag, sizeof j->marker.etag, "%s", li.etag);
	return sr_q_pending_put(q, &j->marker, err) == 0 ? SR_QUEUE_OK : SR_QUEUE_ERROR;
}
