/*
 * qclaim.c: claiming jobs (queue.h). Uncontended, a claim is 3 requests:
 * one listing of pending/ (its first page holds the best candidates, in
 * priority and submit order, each with its GPU needs, store and lease
 * hint in the key), the lease (a create-only PUT for a fresh job, a CAS
 * over the etag the marker carries for one released or requeued), and a
 * GET of the spec; deleting the marker is one more. Agents pick at random
 * among the first candidates of the best priority, so that many of them
 * starting together spread over the jobs instead of all racing for one.
 * Markers that are no job's are read past and quarantined under
 * malformed/, a few a claim, so that junk never starves the real jobs.
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
/* Pending markers that are no job's (junk) a claim moves to malformed/
 * at most: each is a write and a delete (and a GET of the job's meta.json
 * when the key names one), made after the first listing that met junk and
 * before the leases of its candidates are claimed (no lease waits on them
 * unrenewed), so junk never delays a claim by more than this many; the
 * scan itself reads past any number of them. */
#define JUNK_MAX 64
/* Junk warned one by one per claim; the rest are counted in one line. */
#define JUNK_SAY 3
/* A marker naming a job with no status marker is junk only when written
 * this long before the claim (its store's clock): a job submitted while
 * the claim listed index/ has its status marker but not in that listing. */
#define JUNK_AGE 600.0

/* Why claim_one gave SR_QUEUE_BUSY. */
enum busy { BUSY_STALE, BUSY_MALFORMED, BUSY_NOJOB };

/* Ids with a status marker (the first field of each key under index/),
 * sorted: a marker naming another id is no job's. */
struct known {
	char **v;
	size_t n, cap;
};

/* Pending markers that are no job's, met by a claim's last listing. */
struct junk {
	char **key;
	unsigned char *nojob;	/* 0: the key does not parse; 1: it names no job */
	size_t n;
	long seen, nojob_seen;
};

/* The first candidates of the best priority that fit the agent. */
struct cands {
	struct sr_queue *q;
	const struct sr_queue_agent *a;
	struct sr_queue_pending *v;
	size_t n, want;
	long seen;
	const struct known *known;	/* NULL: not read; every parsed marker is a candidate */
	double before;			/* junk naming no job: written before this */
	struct junk junk;
};

static int
str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
known_has(const struct known *k, const char *id)
{
	return bsearch(&id, k->v, k->n, sizeof *k->v, str_cmp) != NULL;
}

static void
junk_add(struct junk *j, const char *key, int nojob)
{
	j->seen++;
	j->nojob_seen += nojob;
	if (j->n == JUNK_MAX)
		return;
	j->key = sr_reallocarray(j->key, j->n + 1, sizeof *j->key);
	j->nojob = sr_reallocarray(j->nojob, j->n + 1, 1);
	j->key[j->n] = sr_strdup(key);
	j->nojob[j->n++] = (unsigned char)nojob;
}

static void
junk_clear(struct junk *j)
{
	size_t i;

	for (i = 0; i < j->n; i++)
		free(j->key[i]);
	free(j->key);
	free(j->nojob);
	memset(j, 0, sizeof *j);
}

static int
cand_cb(const struct sr_object_info *info, void *arg)
{
	struct cands *c = arg;
	struct sr_queue_pending p;

	c->seen++;
	if (sr_qkey_pending_parse(info->key, &p, NULL) == -1)
		junk_add(&c->junk, info->key, 0);
	else if (c->known != NULL && !known_has(c->known, p.id)) {
		if (info->mtime < c->before)
			junk_add(&c->junk, info->key, 1);
	} else if (!sr_queue_pending_fits(&p, c->a->gpus, c->a->gpu_type)) {
		if (c->a->unfit != NULL)
			c->a->unfit(c->a->warn_arg, &p);
	} else if (!sr_q_skipped(c->q, p.id, 0)) {
		if (c->n > 0 && p.priority != c->v[0].priority)
			return 1;	/* the rest wait behind these */
		c->v[c->n++] = p;
		if (c->n == c->want)
			return 1;
	}
	/* one page is enough once it gave us something */
	return c->n > 0 && c->seen % 1000 == 0;
}

static int
known_cb(const struct sr_object_info *info, void *arg)
{
	struct known *k = arg;
	const char *id = info->key + strlen("index/"), *tilde = strchr(id, '~');

	if (tilde == NULL)
		return 0;
	if (k->n > 0 && strncmp(k->v[k->n - 1], id, (size_t)(tilde - id)) == 0 &&
	    k->v[k->n - 1][tilde - id] == '\0')
		return 0;	/* the job's older marker, adjacent */
	k->v = sr_grow(k->v, k->n, &k->cap, sizeof *k->v);
	k->v[k->n++] = sr_strndup(id, (size_t)(tilde - id));
	return 0;
}

/* Read the ids that have a status marker into k (sorted): 0, or -1 with
 * err. One listing of index/. */
static int
known_read(struct sr_queue *q, struct known *k, char *err)
{
	if (sr_q_list(q, q->st, "index/", known_cb, k, err) != 0)
		return -1;
	if (k->n > 1)
		sr_sort(k->v, k->n, sizeof *k->v, str_cmp);
	return 0;
}

static void
known_free(struct known *k)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		free(k->v[i]);
	free(k->v);
	memset(k, 0, sizeof *k);
}

static void
warn(const struct sr_queue_agent *a, const char *msg)
{
	if (a->warn != NULL)
		a->warn(a->warn_arg, msg);
}

/* The job a junk key's third field names, into id (SR_QUEUE_ID_MAX + 1
 * bytes): 0, or -1 when it names none. */
static int
junk_id(const char *key, char *id)
{
	const char *f = strchr(key, '~'), *end;

	if (f == NULL || (f = strchr(f + 1, '~')) == NULL)
		return -1;
	f++;
	end = strchr(f, '~');
	if (end == NULL || end - f > SR_QUEUE_ID_MAX)
		return -1;
	memcpy(id, f, (size_t)(end - f));
	id[end - f] = '\0';
	return sr_lease_job_check(id, NULL);
}

/* Put job id's pending marker back as its meta.json says (no lease hint:
 * a claim reads the lease): 1 when put, 0 when id is no job of the
 * queue, -1 with err. */
static int
repair_marker(struct sr_queue *q, const char *id, char *err)
{
	struct sr_queue_job_meta m;
	struct sr_queue_pending p;
	char hash[20];
	int rc = sr_queue_meta_read(q, id, &m, err);

	if (rc == SR_QUEUE_NOTFOUND)
		return 0;
	if (rc != SR_QUEUE_OK)
		return -1;
	sr_q_hash_of_url(q, m.store, hash);
	sr_q_pending_of_meta(&m, hash, 0, "", &p);
	sr_queue_job_meta_free(&m);
	return sr_q_pending_put(q, &p, err) == 0 ? 1 : -1;
}

/* A parsed marker names job id, which has no status marker: 0 when the
 * job is not in the queue either (no meta.json: junk to quarantine);
 * else -1 with msg, the marker left: a job whose status markers were
 * lost gets one saying queued (its pending marker says it waits), so
 * that a claim takes it for a job again (-2 once written). */
static int
no_status(struct sr_queue *q, const char *key, const char *id, char *msg, size_t len)
{
	struct sr_queue_job_meta m;
	struct sr_queue_status s;
	char err[SR_ERRMAX];
	int rc = sr_queue_meta_read(q, id, &m, err);

	if (rc == SR_QUEUE_NOTFOUND)
		return 0;
	if (rc != SR_QUEUE_OK) {
		snprintf(msg, len, "check pending marker %s: %s; left in place", key, err);
		return -1;
	}
	sr_queue_job_meta_free(&m);
	memset(&s, 0, sizeof s);
	snprintf(s.id, sizeof s.id, "%s", id);
	s.state = SR_LEASE_QUEUED;
	s.step = -1;
	if (sr_queue_status_set(q, &s, NULL, err) != SR_QUEUE_OK)
		snprintf(msg, len, "pending marker %s: job %s has no status marker in index/: %s", key,
		    id, err);
	else {
		snprintf(msg, len, "pending marker %s: job %s had no status marker in index/: one "
		    "saying queued is written", key, id);
		return -2;
	}
	return -1;
}

/* Move one junk marker to malformed/KEY, its body saying why, and put
 * back the marker of the job it names, if any (from meta.json). Says
 * what it did into msg. 0 when the key is gone from pending/ (1: and its
 * job was put back), -1 when it is left (msg says why; the next claim
 * tries again; -2: it is a job's after all, now with a status marker). */
static int
quarantine_one(struct sr_queue *q, const char *key, int nojob, char *msg, size_t len)
{
	struct sr_queue_pending p;
	char why[SR_ERRMAX], err[SR_ERRMAX], id[SR_QUEUE_ID_MAX + 1], body[SR_ERRMAX + 1];
	char tail[SR_ERRMAX + 256], *dst = sr_asprintf("malformed/%s", key);
	int kept = 1, rc;

	if (!nojob)
		sr_qkey_pending_parse(key, &p, why);
	else if (junk_id(key, id) == 0 && (rc = no_status(q, key, id, msg, len)) != 0) {
		free(dst);
		return rc;
	} else {
		snprintf(why, sizeof why, "pending marker %.200s: job %s has no status marker in "
		    "index/ and no jobs/%s/ (not a job of this queue)", key, id, id);
	}
	snprintf(body, sizeof body, "%s\n", why);
	/* the key passed the store's rules, so only its length can fail them */
	if (strlen(dst) > SR_QUEUE_KEY_MAX)
		kept = 0;	/* too long to keep under malformed/: the warning names it */
	else if (sr_q_put(q, q->st, dst, body, strlen(body), SR_PUT_OVERWRITE, NULL, NULL, err) !=
	    SR_STORE_OK) {
		snprintf(msg, len, "quarantine %s: %s; left in place", why, err);
		free(dst);
		return -1;
	}
	if (sr_q_delete(q, q->st, key, err) != SR_STORE_OK) {
		snprintf(msg, len, "quarantine %s: %s", why, err);
		free(dst);
		return -1;
	}
	rc = nojob || junk_id(key, id) == -1 ? 0 : repair_marker(q, id, err);
	if (rc == 1)
		snprintf(tail, sizeof tail, "; job %s is put back in the queue from its meta.json",
		    id);
	else if (rc == 0 && kept)
		snprintf(tail, sizeof tail, "; %s names no job of this queue: delete it once read",
		    dst);
	else if (rc == 0)
		snprintf(tail, sizeof tail, "; it names no job of this queue");
	else
		snprintf(tail, sizeof tail, "; job %s could not be put back in the queue: %s", id,
		    err);
	snprintf(msg, len, "%s: %s%s%s", why, kept ? "moved to " : "deleted (too long a key to "
	    "keep under malformed/)", kept ? dst : "", tail);
	free(dst);
	return rc == 1;
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
 * the marker was stale, the lease malformed (err says, *malformed is
 * BUSY_MALFORMED; go on with the next), the job is not in the queue
 * (BUSY_NOJOB) or failed for good (fail_for_good); SR_QUEUE_ERROR.
 * *requests counts what it made. */
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
		*malformed = rc == SR_LEASE_MALFORMED ? BUSY_MALFORMED : BUSY_STALE;
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
		*malformed = BUSY_NOJOB;
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
 * leader reads slot 0 again, from 0.01 s later doubling to 0.2 s apart,
 * 0.7 s in all, to join it (the leader writes it right after its lease,
 * a few milliseconds later: at 0.1 s apart, as it was, each such loser
 * came 0.1 s late to the gang, which then started 0.1 s late). SR_QUEUE_OK with *out,
 * SR_QUEUE_BUSY (full, started, the lease held: err says; the marker
 * stays), SR_QUEUE_ERROR. */
static int
claim_gang(struct sr_queue *q, const struct sr_queue_agent *a, const struct sr_queue_pending *p,
    struct sr_queue_job **out, int *requests, int *malformed, char *err)
{
	struct sr_gang_claim c = { a->owner, a->ttl, 0, p->nodes_max, a->addr, a->port, a->wake,
		0 };
	struct sr_gang_slot s0;
	struct sr_queue_job *j;
	char why[SR_ERRMAX];
	double pause = 0.01;
	int rc, round;

	*out = NULL;
	*malformed = 0;
	for (round = 0; round < 8; round++) {
		if (round > 0) {
			sr_sleep(pause);
			pause = pause * 2 > 0.2 ? 0.2 : pause * 2;
		}
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
		if (rc == SR_QUEUE_BUSY && *malformed == BUSY_STALE)
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

/* Move the junk of a claim's listing to malformed/ (quarantine_one),
 * saying so through a->warn: the first JUNK_SAY one by one, and the
 * first that could not be moved, then a count. Returns how many jobs it
 * put back (their markers were not in the listing). */
static int
quarantine(struct sr_queue *q, const struct sr_queue_agent *a, const struct junk *j)
{
	char msg[3 * SR_ERRMAX];
	size_t i, moved = 0;
	int failed = 0, back = 0, rc;

	for (i = 0; i < j->n; i++) {
		rc = quarantine_one(q, j->key[i], j->nojob[i], msg, sizeof msg);
		back += rc == 1 || rc == -2;
		if (rc >= 0)
			moved++;
		else if (!failed++ && i >= JUNK_SAY)
			warn(a, msg);
		if (i < JUNK_SAY)
			warn(a, msg);
	}
	if (j->seen > JUNK_SAY) {
		snprintf(msg, sizeof msg, "quarantine %ld more pending markers of queue %s that are no "
		    "job's: %zu of the %ld moved to malformed/ now, the rest at the next claims "
		    "(`spotrun status` counts those under malformed/)", j->seen - JUNK_SAY, q->url,
		    moved, j->seen);
		warn(a, msg);
	}
	return back;
}

int
sr_queue_claim(struct sr_queue *q, const struct sr_queue_agent *a, struct sr_queue_job **out,
    char *err)
{
	struct cands c = { q, a, NULL, 0, 0, 0, NULL, 0, { NULL, NULL, 0, 0, 0 } };
	struct known known = { NULL, 0, 0 };
	int round, rc = SR_QUEUE_EMPTY, requests = 0, nojob = 0;
	long nojob_seen = 0;
	int quarantined = 0, back = 0;

	*out = NULL;
	c.want = a->pick > 0 ? (size_t)a->pick : SR_QUEUE_PICK_DEFAULT;
	c.v = sr_calloc(c.want, sizeof *c.v);
	for (round = 0; round < ROUNDS; round++) {
		int stale = 0;

		/* markers of jobs not in the queue met here or by the last
		 * claim: read which jobs are, so as to read past them */
		if ((nojob || q->junk_names) && c.known == NULL) {
			c.before = sr_now() - JUNK_AGE;
			if (known_read(q, &known, err) == -1) {
				rc = SR_QUEUE_ERROR;
				break;
			}
			requests += known.n == 0 ? 1 : (int)((known.n + 999) / 1000);
			c.known = &known;
		}
		c.n = 0;
		c.seen = 0;
		junk_clear(&c.junk);
		if (sr_q_list(q, q->st, "pending/", cand_cb, &c, err) < 0) {
			rc = SR_QUEUE_ERROR;
			break;
		}
		requests += c.seen == 0 ? 1 : (int)((c.seen + 999) / 1000);
		if (!quarantined && c.junk.seen > 0) {
			back = quarantine(q, a, &c.junk);
			quarantined = 1;
		}
		nojob_seen += c.junk.nojob_seen;
		if (c.n == 0 && back > 0 && round + 1 < ROUNDS) {
			/* jobs put back: their markers and status are read again */
			back = 0;
			known_free(&known);
			c.known = NULL;
			continue;
		}
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
				if (malformed == BUSY_MALFORMED && !sr_q_skipped(q, p.id, 1))
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
			/* busy: stale (held elsewhere, ended: drop the marker), no
			 * job's (dropped; the next round reads past the like of
			 * it) or malformed (skip) */
			if (malformed == BUSY_MALFORMED) {
				if (!sr_q_skipped(q, p.id, 1))
					warn(a, why);
			} else {
				nojob += malformed == BUSY_NOJOB;
				requests++;
				sr_q_delete(q, q->st, p.key, why);
				stale++;
			}
		}
		if (rc == SR_QUEUE_OK || rc == SR_QUEUE_ERROR || stale == 0)
			break;
	}
	free(c.v);
	/* the next claim reads index/ first while markers of no job are met */
	q->junk_names = nojob > 0 || nojob_seen > 0;
	junk_clear(&c.junk);
	known_free(&known);
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
	size_t n, cap;
};

static int
keys_cb(const struct sr_object_info *info, void *arg)
{
	struct keys *k = arg;

	k->v = sr_grow(k->v, k->n, &k->cap, sizeof *k->v);
	k->v[k->n++] = sr_strdup(info->key);
	return 0;
}

/* Delete every pending marker of p's job, whatever its lease hint. */
static int
drop_markers(struct sr_queue *q, const struct sr_queue_pending *p, char *err)
{
	struct keys k = { NULL, 0, 0 };
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

int
sr_queue_job_verify(struct sr_queue *q, const struct sr_queue_agent *a,
    struct sr_queue_job **jp, char *err)
{
	struct sr_queue_job *j = *jp;
	struct sr_queue_job_meta m;
	char hash[20], key[SR_QUEUE_ID_MAX + 16], id[SR_QUEUE_ID_MAX + 1], why[3 * SR_ERRMAX];
	int rc;

	if (j->gang != NULL || j->lease == NULL)
		return SR_QUEUE_OK;
	rc = sr_queue_meta_read(q, j->marker.id, &m, err);
	if (rc == SR_QUEUE_NOTFOUND)
		return SR_QUEUE_OK;
	if (rc != SR_QUEUE_OK)
		return SR_QUEUE_OK;	/* a malformed meta.json: the marker is all there is */
	sr_q_hash_of_url(q, m.store, hash);
	if (strcmp(hash, j->marker.store) == 0) {
		sr_queue_job_meta_free(&m);
		return SR_QUEUE_OK;
	}
	/* no lease of this job belongs in the marker's store: drop it there */
	snprintf(key, sizeof key, "_leases/%s", j->marker.id);
	rc = sr_q_delete(q, j->store, key, err);
	snprintf(why, sizeof why, "claim job %s: pending marker %s names checkpoint store %s, "
	    "but jobs/%s/meta.json names %s (meta.json is the job's truth: written once, by "
	    "its submission; cancel goes by it too): %s; the job is claimed in its own store",
	    j->marker.id, j->marker.key, j->store_url, j->marker.id, m.store[0] != '\0' ?
	    m.store : q->ckpt_url, rc == SR_STORE_OK ? "the lease taken there is deleted" :
	    "the lease taken there could not be deleted");
	if (rc != SR_STORE_OK)
		snprintf(why + strlen(why), sizeof why - strlen(why), " (%s)", err);
	warn(a, why);
	sr_queue_job_meta_free(&m);
	snprintf(id, sizeof id, "%s", j->marker.id);
	sr_queue_job_free(j);
	*jp = NULL;
	return sr_queue_claim_id(q, a, id, jp, err);
}

struct malformed_count {
	long n;
	char *first;
};

static int
malformed_cb(const struct sr_object_info *info, void *arg)
{
	struct malformed_count *m = arg;

	if (m->n++ == 0)
		snprintf(m->first, SR_QUEUE_KEY_MAX, "%s", info->key);
	return 0;
}

int
sr_queue_malformed_count(struct sr_queue *q, long *n, char *first, char *err)
{
	struct malformed_count m = { 0, first };

	first[0] = '\0';
	*n = 0;
	if (sr_q_list(q, q->st, "malformed/", malformed_cb, &m, err) != 0)
		return sr_err_prefix(err, "list malformed/ of queue %s", q->url);
	*n = m.n;
	return 0;
}
