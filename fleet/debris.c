/*
 * debris.c: gc of what nothing else removes (debris.h, doc/fleet.md "gc").
 * The checkpoints' own gc (ckpt/gc.c) decides what of a job's checkpoints
 * is debris; this file decides which jobs may be swept at all (no live
 * lease: no save in flight that could still commit) and adds what the
 * queue leaves: parts of saves that never merged and stale status markers.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"
#include "debris.h"
#include "lease.h"
#include "util.h"

struct relay {
	const struct sr_debris_opts *o;
	struct sr_debris_total *t;
	const char *job;
};

static void
relay_each(void *arg, const char *key, uint64_t size, const char *why)
{
	struct relay *r = arg;

	r->t->objects++;
	if (size != SR_GC_SIZE_UNKNOWN)
		r->t->bytes += size;
	if (r->o->each != NULL)
		r->o->each(r->o->arg, r->job, key, size, why);
}

static void
relay_log(void *arg, const char *msg)
{
	struct relay *r = arg;

	/* the checkpoints' gc names the job itself */
	if (r->o->note != NULL)
		r->o->note(r->o->arg, NULL, msg);
}

static void
note(const struct sr_debris_opts *o, const char *job, const char *msg)
{
	if (o->note != NULL)
		o->note(o->arg, job, msg);
}

static int
skip(const struct sr_debris_opts *o, struct sr_debris_total *t, const char *job,
    const char *msg)
{
	t->skipped++;
	if (o->skip != NULL)
		o->skip(o->arg, job, msg);
	return 0;
}

int
sr_debris_job(struct sr_store *st, const char *job, const struct sr_debris_opts *o,
    struct sr_debris_total *t, char *err)
{
	struct sr_lease_info li;
	struct sr_ckpt_opts co;
	struct relay r = { o, t, job };
	char msg[SR_ERRMAX + 64], who[512];
	double now = sr_now(), before = now - o->grace;
	int rc;

	t->jobs++;
	memset(&li, 0, sizeof li);
	rc = sr_lease_read(st, job, &li, err);
	if (rc == SR_LEASE_MALFORMED) {
		snprintf(msg, sizeof msg, "skipped: %s", err);
		return skip(o, t, job, msg);
	}
	if (rc != SR_LEASE_OK && rc != SR_LEASE_NOTFOUND)
		return -1;
	/* A held lease: a save may be in flight, its packs not yet named by
	 * any manifest, its parts not yet merged. */
	if (rc == SR_LEASE_OK && li.state == SR_LEASE_RUNNING && li.expires > now) {
		snprintf(msg, sizeof msg, "skipped: its lease is held by %s",
		    sr_lease_describe(&li, now, who, sizeof who));
		return skip(o, t, job, msg);
	}
	memset(&co, 0, sizeof co);
	co.job = job;
	co.epoch = rc == SR_LEASE_OK ? (uint64_t)li.epoch : 0;
	co.gc_grace = o->grace > 0 ? o->grace : -1;
	co.log = relay_log;
	co.log_arg = &r;
	co.gc_each = relay_each;
	co.gc_arg = &r;
	co.gc_dry_run = !o->apply;
	rc = sr_ckpt_gc_log(st, &co, job, 0, before, NULL, err);
	if (rc == SR_CKPT_FENCED) {
		/* a run took the job since its lease was read */
		snprintf(msg, sizeof msg, "skipped: %s", err);
		return skip(o, t, job, msg);
	}
	if (rc != 0)
		return -1;
	return sr_ckpt_gc_parts(st, &co, job, before, NULL, err);
}

struct marker_relay {
	struct sr_queue *q;
	const struct sr_debris_opts *o;
	struct sr_debris_total *t;
	char err[SR_ERRMAX];
};

static int
stale_marker(const struct sr_object_info *info, const char *id, void *arg)
{
	struct marker_relay *m = arg;
	char why[SR_QUEUE_ID_MAX + 64];

	if (m->o->apply && sr_queue_status_delete(m->q, info->key, m->err) == -1)
		return -1;
	m->t->objects++;
	m->t->bytes += info->size;
	snprintf(why, sizeof why, "status marker of %s older than its newest", id);
	if (m->o->each != NULL)
		m->o->each(m->o->arg, NULL, info->key, info->size, why);
	return 0;
}

/* The agents' records under agents/ not written for the grace nor for
 * SR_QUEUE_MACHINE_STALE: their agents were killed without a word (a live
 * one writes its record every SR_QUEUE_MACHINE_RENEW, so even gc --grace
 * 0s leaves it). 0, or -1 with err. */
static int
stale_agents(struct sr_queue *q, const struct sr_debris_opts *o, struct sr_debris_total *t,
    char *err)
{
	struct sr_queue_machine *mv;
	double age = o->grace > SR_QUEUE_MACHINE_STALE ? o->grace : SR_QUEUE_MACHINE_STALE;
	double now = sr_now();
	char key[SR_QUEUE_MACHINE_AGENT_MAX + 16], why[96];
	size_t i, nm;
	int rc = 0;

	if (sr_queue_machines_read(q, &mv, &nm, NULL, err) == -1)
		return -1;
	for (i = 0; i < nm && rc == 0; i++) {
		if (now - mv[i].time <= age)
			continue;
		if (o->apply && sr_queue_machine_delete(q, mv[i].agent, err) == -1) {
			rc = -1;
			break;
		}
		t->objects++;
		snprintf(key, sizeof key, "agents/%s", mv[i].agent);
		snprintf(why, sizeof why, "an agent's record not renewed for %.0fm: the agent is gone",
		    (now - mv[i].time) / 60);
		if (o->each != NULL)
			o->each(o->arg, NULL, key, 0, why);
	}
	free(mv);
	return rc;
}

/* The jobs whose newest status marker was written at or after since. */
struct recent {
	double since;
	char **v;
	size_t n;
};

static int
recent_cb(const struct sr_queue_status *s, void *arg)
{
	struct recent *r = arg;

	if (s->time >= r->since) {
		r->v = sr_reallocarray(r->v, r->n + 1, sizeof *r->v);
		r->v[r->n++] = sr_strdup(s->id);
	}
	return 0;
}

/* The debris of job id of q, in its checkpoint store. */
static int
queue_job(struct sr_queue *q, const char *id, const struct sr_debris_opts *o,
    struct sr_debris_total *t, char *err)
{
	struct sr_queue_job_meta m;
	struct sr_store *st;
	int rc;

	rc = sr_queue_meta_read(q, id, &m, err);
	if (rc == SR_QUEUE_NOTFOUND) {
		/* a submission cut short: no job ran, so no debris */
		t->jobs++;
		return skip(o, t, id, "skipped: no meta.json (its submission was cut short)");
	}
	if (rc != SR_QUEUE_OK)
		return sr_err_prefix(err, "gc %s", id);
	st = sr_queue_ckpt_store(q, m.store != NULL && m.store[0] != '\0' ? m.store :
	    sr_queue_ckpt_url(q), err);
	rc = st == NULL ? -1 : sr_debris_job(st, id, o, t, err);
	sr_queue_job_meta_free(&m);
	return rc == 0 ? 0 : sr_err_prefix(err, "gc %s", id);
}

int
sr_debris_queue(struct sr_queue *q, const char *const *ids, size_t n, double since,
    const struct sr_debris_opts *o, struct sr_debris_total *t, char *err)
{
	struct recent all = { since, NULL, 0 };
	struct marker_relay m;
	char jerr[SR_ERRMAX];
	int failed = 0, every = ids == NULL;
	size_t i;

	if (every) {
		if (sr_queue_status_list(q, recent_cb, &all, NULL, NULL, err) != 0)
			return sr_err_prefix(err, "gc: list the status markers");
		ids = (const char *const *)all.v;
		n = all.n;
	}
	for (i = 0; i < n; i++) {
		if (queue_job(q, ids[i], o, t, jerr) == -1) {
			note(o, ids[i], jerr);
			strlcpy(err, jerr, SR_ERRMAX);
			failed = 1;
		}
	}
	memset(&m, 0, sizeof m);
	m.q = q;
	m.o = o;
	m.t = t;
	for (i = 0; i < (every ? 1 : n); i++) {
		if (sr_queue_status_stale(q, every ? NULL : ids[i], sr_now() - o->grace,
		    stale_marker, &m, jerr) != 0) {
			sr_err(err, "gc: stale status markers: %s", m.err[0] != '\0' ? m.err : jerr);
			failed = 1;
			break;
		}
	}
	if (every && stale_agents(q, o, t, jerr) == -1) {
		sr_err(err, "gc: agents' records: %s", jerr);
		failed = 1;
	}
	for (i = 0; i < all.n; i++)
		free(all.v[i]);
	free(all.v);
	return failed ? -1 : 0;
}
