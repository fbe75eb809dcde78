/*
 * agent-scale.c: the agent's scaler (doc/fleet.md, "Pool scaling"), a
 * thread of its own beside the claims and the jobs, so that a pool grows
 * while its agents are busy. Every SPOTRUN_SCALE_INTERVAL seconds (30 by
 * default; 0: no scaler) it reads the queue's pools (Q/pools/) and, for
 * each, claims the pool's lease (pool-scale.h) unless it holds it (a lease
 * held elsewhere is tried again every TTL / 3, so that a dead holder's is
 * taken over once it expires), then steps the rule under it
 * (sr_pool_scale_step), the lease kept alive by a keeper. A step that
 * finds itself fenced lets the lease go and writes nothing. At the agent's
 * end each lease it holds is released, after a last step when the agent
 * ends idle or drained (the queue drained: the pool goes to 0 now, before
 * its VM goes). SPOTRUN_SCALE_IDLE (seconds) overrides the pool's
 * idle_timeout as how long the queue stays drained before the pool goes
 * to 0.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent-int.h"
#include "pool-scale.h"
#include "util.h"

/* One pool as this agent's scaler sees it. */
struct pool {
	char name[SR_QUEUE_POOL_NAME_MAX + 1];
	struct sr_lease *lease;		/* held, or NULL */
	struct sr_lease_keeper *keeper;
	struct sr_pool_scale s;
	double next_claim, next_step;	/* monotonic */
	char holder[128];		/* the holder said, once */
	int seen;			/* in the last listing */
};

struct sr_agent_scale {
	struct sr_agent *ag;
	struct sr_queue *q;		/* its own handle */
	struct sr_lease_seen *seen;
	double interval, scale_idle;
	struct pool *v;
	size_t n;
	int pipe[2];			/* written: stop */
	pthread_t thread;
};

/* A positive number of seconds from the environment variable name, or
 * def when unset; -1 with err when it does not parse. */
static int
env_seconds(const char *name, double def, double *out, char *err)
{
	const char *s = getenv(name);
	char *end;

	*out = def;
	if (s == NULL || *s == '\0')
		return 0;
	errno = 0;
	*out = strtod(s, &end);
	if (end == s || *end != '\0' || errno != 0 || !isfinite(*out) || *out < 0 || *out > 86400)
		return sr_err(err, "%s=%.40s: not a number of seconds from 0 to 86400", name, s);
	return 0;
}

/* Let p's lease go: released (another takes it at once) or, fenced,
 * left as it is; its cloud's client closed with it (the pool's next
 * holder, here or elsewhere, opens its own). */
static void
drop(struct pool *p, int release)
{
	char err[SR_ERRMAX];

	sr_pool_scale_end(&p->s);
	if (p->lease == NULL)
		return;
	sr_lease_keeper_stop(p->keeper);
	p->keeper = NULL;
	if (release && sr_lease_set_state(p->lease, SR_LEASE_RELEASED, err) != SR_LEASE_OK)
		sr_agent_say("warning: pool %s: release its lease: %s", p->name, err);
	sr_lease_free(p->lease);
	p->lease = NULL;
	p->holder[0] = '\0';
}

/* One step of pool p under its lease, said when the target moves or the
 * step fails. */
static void
step(struct sr_agent_scale *sc, struct pool *p)
{
	char err[SR_ERRMAX];
	int rc;

	p->s.q = sc->q;
	p->s.pool = p->name;
	p->s.lease = p->lease;
	p->s.by = sc->ag->me.agent;
	p->s.prices = sc->ag->o->prices;
	p->s.scale_idle = sc->scale_idle;
	rc = sr_pool_scale_step(&p->s, err);
	switch (rc) {
	case SR_POOL_SCALE_OK:
		if (p->s.target != p->s.before)
			sr_agent_say("pool %s: target %u -> %u (%s)", p->name, p->s.before,
			    p->s.target, p->s.why);
		else if (p->s.asked_again > 0)
			sr_agent_say("pool %s: target %u, set again (%s)", p->name, p->s.target,
			    p->s.why);
		break;
	case SR_POOL_SCALE_STALE:
		sr_agent_say("%s", err);
		drop(p, 0);
		p->next_claim = sr_mono() + sc->ag->ttl / 3;
		break;
	case SR_POOL_SCALE_GONE:
		drop(p, 1);
		break;
	default:
		sr_agent_say("warning: %s; trying again in %.0fs", err, sc->interval);
	}
}

/* Claim p's lease: 1 when held now. */
static int
claim(struct sr_agent_scale *sc, struct pool *p)
{
	struct sr_lease_claim c;
	char err[SR_ERRMAX];
	const char *who;
	int rc;

	memset(&c, 0, sizeof c);
	c.owner = &sc->ag->me;
	c.ttl = sc->ag->ttl;
	c.seen = sc->seen;
	rc = sr_pool_lease_claim(sc->q, p->name, &c, &p->lease, err);
	if (rc == SR_LEASE_OK) {
		if ((p->keeper = sr_lease_keeper_start(p->lease, NULL, NULL, err)) == NULL) {
			sr_agent_say("warning: pool %s: %s", p->name, err);
			drop(p, 1);
			return 0;
		}
		sr_agent_say("pool %s: scaling it (its lease, epoch %lld)", p->name,
		    (long long)sr_lease_epoch(p->lease));
		sr_pool_scale_end(&p->s);
		memset(&p->s, 0, sizeof p->s);
		return 1;
	}
	p->lease = NULL;
	if (rc == SR_LEASE_HELD) {
		who = c.prev.owner.agent[0] != '\0' ? c.prev.owner.agent : c.prev.owner.host;
		if (strcmp(p->holder, who) != 0)
			sr_agent_say("pool %s: scaled by %s", p->name, who);
		snprintf(p->holder, sizeof p->holder, "%s", who);
	} else
		sr_agent_say("warning: pool %s: %s", p->name, err);
	return 0;
}

/* The pools of the queue now: new ones added, gone ones dropped. */
static void
list_pools(struct sr_agent_scale *sc)
{
	struct sr_queue_pool *v;
	char err[SR_ERRMAX];
	size_t n, i, k;

	if (sr_queue_pools_read(sc->q, &v, &n, NULL, err) == -1) {
		sr_agent_say("warning: scaler: %s", err);
		return;
	}
	for (k = 0; k < sc->n; k++)
		sc->v[k].seen = 0;
	for (i = 0; i < n; i++) {
		for (k = 0; k < sc->n && strcmp(sc->v[k].name, v[i].name) != 0; k++)
			;
		if (k == sc->n) {
			sc->v = sr_reallocarray(sc->v, sc->n + 1, sizeof *sc->v);
			memset(&sc->v[k], 0, sizeof sc->v[k]);
			snprintf(sc->v[k].name, sizeof sc->v[k].name, "%s", v[i].name);
			sc->n++;
		}
		sc->v[k].seen = 1;
	}
	for (k = 0; k < sc->n; k++)
		if (!sc->v[k].seen)
			drop(&sc->v[k], 1);
	free(v);
}

/* Wait up to seconds for the stop: 1 when asked. */
static int
wait_stop(struct sr_agent_scale *sc, double seconds)
{
	struct pollfd pf = { .fd = sc->pipe[0], .events = POLLIN };

	return poll(&pf, 1, seconds > 0 ? (int)(seconds * 1000) + 1 : 0) > 0;
}

/* This machine is going: every pool lease it holds released, with no last
 * step, so that another agent's scaler takes the pool over at its next
 * claim rather than after the TTL. */
static void
let_go(struct sr_agent_scale *sc)
{
	size_t k;

	for (k = 0; k < sc->n; k++)
		if (sc->v[k].lease != NULL) {
			sr_agent_say("pool %s: its lease let go: this machine is going", sc->v[k].name);
			drop(&sc->v[k], 1);
			sc->v[k].next_claim = 0;
		}
}

static void *
run(void *arg)
{
	struct sr_agent_scale *sc = arg;
	double now, tick, next;
	struct pool *p;
	size_t k;

	tick = sc->ag->ttl / 3 < sc->interval ? sc->ag->ttl / 3 : sc->interval;
	for (;;) {
		if (__atomic_load_n(&sc->ag->going, __ATOMIC_RELAXED)) {
			let_go(sc);
			if (wait_stop(sc, tick < 0.5 ? tick : 0.5))
				break;
			continue;
		}
		list_pools(sc);
		next = sr_mono() + tick;
		for (k = 0; k < sc->n; k++) {
			p = &sc->v[k];
			if (!p->seen)
				continue;
			now = sr_mono();
			if (p->lease != NULL && sr_lease_keeper_status(p->keeper, NULL) != SR_LEASE_OK) {
				sr_agent_say("pool %s: lost its lease", p->name);
				drop(p, 0);
			}
			if (p->lease == NULL && now >= p->next_claim) {
				p->next_claim = now + sc->ag->ttl / 3;
				if (claim(sc, p))
					p->next_step = now;
			}
			if (p->lease != NULL && sr_mono() >= p->next_step) {
				step(sc, p);
				p->next_step = sr_mono() + sc->interval;
			}
			if (p->lease != NULL && p->next_step < next)
				next = p->next_step;
		}
		if (wait_stop(sc, next - sr_mono()))
			break;
	}
	return NULL;
}

int
sr_agent_scale_start(struct sr_agent *ag, char *err)
{
	struct sr_agent_scale *sc;
	double interval, idle;

	ag->scale = NULL;
	if (env_seconds("SPOTRUN_SCALE_INTERVAL", SR_POOL_SCALE_INTERVAL, &interval, err) == -1 ||
	    env_seconds("SPOTRUN_SCALE_IDLE", -1, &idle, err) == -1)
		return -1;
	if (interval == 0)
		return 0;	/* no scaler */
	sc = sr_calloc(1, sizeof *sc);
	sc->ag = ag;
	sc->interval = interval;
	sc->scale_idle = idle;
	if (sr_queue_open_with(ag->o->queue, &ag->so, &sc->q, err) == -1) {
		free(sc);
		return -1;
	}
	sc->seen = sr_lease_seen_new();
	if (pipe(sc->pipe) == -1) {
		sr_errno(err, "scaler: pipe");
		goto fail;
	}
	if ((errno = pthread_create(&sc->thread, NULL, run, sc)) != 0) {
		sr_errno(err, "scaler: start its thread");
		close(sc->pipe[0]);
		close(sc->pipe[1]);
		goto fail;
	}
	ag->scale = sc;
	return 0;
fail:
	sr_lease_seen_free(sc->seen);
	sr_queue_close(sc->q);
	free(sc);
	return -1;
}

void
sr_agent_scale_stop(struct sr_agent *ag, int drained)
{
	struct sr_agent_scale *sc = ag->scale;
	size_t k;

	if (sc == NULL)
		return;
	(void)sr_write_all(sc->pipe[1], "x", 1);
	pthread_join(sc->thread, NULL);
	for (k = 0; k < sc->n; k++) {
		if (sc->v[k].lease == NULL) {
			sr_pool_scale_end(&sc->v[k].s);
			continue;
		}
		if (drained) {
			sc->v[k].s.drained_now = 1;
			step(sc, &sc->v[k]);
		}
		drop(&sc->v[k], 1);
	}
	close(sc->pipe[0]);
	close(sc->pipe[1]);
	free(sc->v);
	sr_lease_seen_free(sc->seen);
	sr_queue_close(sc->q);
	free(sc);
	ag->scale = NULL;
}
