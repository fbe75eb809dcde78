/*
 * run-lease.c: the run's hold on its job (doc/fleet.md, "Leases and
 * fencing"). A run claims the job's lease, S/_leases/J in the job's store,
 * before it restores anything (an agent hands in the one it claimed from
 * its queue), keeps it renewed from the keeper's threads, and carries its
 * epoch in every checkpoint it commits. A second run watches a lease held
 * elsewhere (it has no record of it from before: lease.h, "Clocks"): once
 * it sees it renewed it is refused, with who holds the job and until
 * when; a lease it saw unchanged past its TTL, or one whose owner on this
 * machine is gone, is taken over, saying so. When the lease
 * is lost (taken over by a newer run, or not renewed in time) the job is
 * stopped at once, its checkpoint in flight given up, and nothing more is
 * written for it: no record, no FINISHED marker, no lease.
 *
 * The fencing: the run moves the job's LATEST to its epoch (sr_ckpt_fence)
 * before its first restore and saves with that epoch, so that a run whose
 * lease was taken over can commit nothing, even from the middle of a save
 * (ckpt.h).
 *
 * A plain `spotrun run` of a job whose lease ended (succeeded, failed,
 * cancelled) claims it anew: the user asked to run it, and the FINISHED
 * marker already makes a run of a finished job start afresh. An agent
 * never sees those: the queue's claims leave ended jobs alone.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run-int.h"
#include "units.h"
#include "util.h"

int
sr_run_lease_ttl(double *ttl, const struct sr_store *st, char *err)
{
	const char *s = getenv("SPOTRUN_LEASE_TTL");
	double v, least = st != NULL ? 3 * sr_store_write_interval(st) : 0;

	*ttl = SR_LEASE_TTL_DEFAULT;
	if (s == NULL || *s == '\0')
		return 0;
	if (sr_parse_duration(s, &v) != 0 || v < SR_LEASE_TTL_MIN || v > SR_LEASE_TTL_MAX)
		return sr_err(err, "SPOTRUN_LEASE_TTL=%.40s: not a lease TTL; give a duration from 1s "
		    "to 24h (e.g. 60s), or unset it for the default of 60s", s);
	if (v < least)
		return sr_err(err, "SPOTRUN_LEASE_TTL=%.40s: too short for %s, which takes one write "
		    "of an object every %gs, and the lease is renewed every TTL / 3: give %gs or "
		    "more, or unset it for the default of 60s", s, sr_store_url(st),
		    sr_store_write_interval(st), least);
	*ttl = v;
	return 0;
}

int
sr_run_lease_state(const struct sr_run_result *res)
{
	switch (res->outcome) {
	case SR_RUN_FINISHED:
		return SR_LEASE_SUCCEEDED;
	case SR_RUN_FAILED:
		return res->signal != 0 ? SR_LEASE_RELEASED : SR_LEASE_FAILED;
	case SR_RUN_CANNOT_EXEC:
		return SR_LEASE_FAILED;
	case SR_RUN_CANCELLED:
		return SR_LEASE_CANCELLED;
	case SR_RUN_LEASE_HELD:
	case SR_RUN_LEASE_LOST:
		return -1;
	default:
		return SR_LEASE_RELEASED;
	}
}

/* Claim the lease of r's job for me. A lease the job ended with is moved
 * back to queued first (see the file's comment) and then claimed at once,
 * over the etag that wrote. The lease's own codes, err set. */
static int
claim(struct run *r, const struct sr_lease_owner *me, double ttl, char *err)
{
	struct sr_lease_claim c;
	struct sr_lease_info ended, requeued;
	int rc, again;

	memset(&c, 0, sizeof c);
	c.owner = me;
	c.ttl = ttl;
	/* one shot: no record of the lease from before, so a lease held
	 * elsewhere is watched until it is renewed (held) or expires (lease.h) */
	c.watch = 1;
	rc = sr_lease_claim(r->st, r->js->name, &c, &r->lease, err);
	for (again = 0; rc == SR_LEASE_TERMINAL && again < 3; again++) {
		ended = c.prev;
		rc = sr_lease_requeue(r->st, r->js->name, SR_LEASE_TERMINALS, ended.epoch, me, NULL,
		    &requeued, err);
		if (rc != SR_LEASE_OK && rc != SR_LEASE_STATE && rc != SR_LEASE_HELD)
			return rc;
		/* someone got in between: claim over what is there now */
		c.hint_etag = rc == SR_LEASE_OK ? requeued.etag : NULL;
		c.hint_epoch = rc == SR_LEASE_OK ? requeued.epoch : 0;
		rc = sr_lease_claim(r->st, r->js->name, &c, &r->lease, err);
		if (rc == SR_LEASE_OK) {
			sr_tl(&r->tl, 0, "lease", "the job %s in an earlier run (epoch %lld, %s on %s); "
			    "this run claims it anew (epoch %lld)", sr_lease_state_name(ended.state),
			    (long long)ended.epoch, ended.owner.agent[0] != '\0' ? ended.owner.agent :
			    "spotrun run", ended.owner.host, (long long)sr_lease_epoch(r->lease));
			c.found = 1;
			c.prev = ended;
		}
	}
	if (rc != SR_LEASE_OK) {
		if (rc == SR_LEASE_HELD) {
			char desc[600];

			sr_err(err, "run %s: not started: its lease in %s is held by %s; one run of a "
			    "job at a time: wait for that run to end (a lease whose machine died "
			    "expires by itself)", r->js->name, sr_store_url(r->st),
			    sr_lease_describe(&c.prev, sr_now(), desc, sizeof desc));
		}
		return rc;
	}
	r->lease_own = 1;
	r->lease_found = c.found;
	r->lease_prev = c.prev;
	if (c.took_over) {
		char desc[600];

		sr_tl(&r->tl, 1, "lease", "took job %s over (epoch %lld) from %s: %s", r->js->name,
		    (long long)sr_lease_epoch(r->lease), sr_lease_describe(&c.prev, sr_now(), desc,
		    sizeof desc), c.took_over == SR_LEASE_TOOK_EXPIRED ? "its lease expired" :
		    "its process on this machine is gone");
	}
	return SR_LEASE_OK;
}

/* The owner this run claims as: this process, with its provider. */
static int
owner_of(struct run *r, struct sr_lease_owner *me, char *err)
{
	return sr_lease_owner_local(me, NULL, NULL, sr_provider_name(r->prov), err);
}

/* sr_lease_keeper_watch's callback: on the lease keeper's thread. */
static void
held(void *arg, double until, double expires)
{
	sr_contain_lease(arg, until, expires);
}

int
sr_run_lease_take(struct run *r, struct sr_run_result *res)
{
	const struct sr_run_hooks *h = r->hooks;
	struct sr_lease_owner me;
	struct sr_lease_info li;
	char *err = res->err, ttlbuf[32];
	double ttl;
	int rc;

	if (h->lease == NULL && h->gang.nodes > 1 && h->gang.node > 0) {
		/* a gang's other node: node 0 holds the lease and fences */
		r->epoch = h->gang.epoch;
		r->copts.epoch = (uint64_t)r->epoch;
		sr_tl(&r->tl, 0, "gang", "node %d of %d, epoch %lld: node 0 holds the lease and "
		    "commits the checkpoints", h->gang.node, h->gang.nodes, (long long)r->epoch);
		return 0;
	}
	if (h->lease != NULL) {
		sr_lease_get_info(h->lease, &li);
		if (strcmp(li.job, r->js->name) != 0) {
			res->outcome = SR_RUN_ERR_SYSTEM;
			return sr_err(err, "run %s: the lease handed in is job %s's", r->js->name,
			    li.job);
		}
		r->lease = h->lease;
		r->lease_found = h->lease_prev != NULL;
		if (h->lease_prev != NULL)
			r->lease_prev = *h->lease_prev;
	} else {
		if (sr_run_lease_ttl(&ttl, r->st, err) == -1) {
			res->outcome = SR_RUN_ERR_CONFIG;
			return -1;
		}
		if (owner_of(r, &me, err) == -1) {
			res->outcome = SR_RUN_ERR_SYSTEM;
			return -1;
		}
		rc = claim(r, &me, ttl, err);
		if (rc != SR_LEASE_OK) {
			res->outcome = rc == SR_LEASE_HELD ? SR_RUN_LEASE_HELD : SR_RUN_ERR_STORE;
			return -1;
		}
	}
	sr_lease_get_info(r->lease, &li);
	r->epoch = li.epoch;
	r->keeper = sr_lease_keeper_start(r->lease, NULL, NULL, err);
	if (r->keeper == NULL) {
		res->outcome = SR_RUN_ERR_SYSTEM;
		return -1;
	}
	/* The run's keeper learns each renewal, to stop the job itself if
	 * this process is stopped while the lease runs out (contain.h). */
	sr_lease_keeper_watch(r->keeper, held, r->contain);
	/* Before anything is restored: from now on no run of a lower epoch
	 * can commit, and every save of this run carries the epoch. */
	r->copts.epoch = (uint64_t)r->epoch;
	rc = sr_ckpt_fence_log(r->st, &r->copts, r->js->name, (uint64_t)r->epoch, err);
	if (rc == SR_CKPT_FENCED) {
		/* a newer run fenced the job already: this lease is stale */
		sr_run_lease_gone(r, err);
		res->outcome = SR_RUN_LEASE_LOST;
		return -1;
	}
	if (rc != 0) {
		res->outcome = SR_RUN_ERR_STORE;
		return -1;
	}
	sr_tl(&r->tl, 0, "lease", "epoch %lld, renewed every %s", (long long)r->epoch,
	    sr_fmt_duration(li.ttl / 3, ttlbuf, sizeof ttlbuf));
	return 0;
}

int
sr_run_lease_fd(const struct run *r)
{
	return r->keeper != NULL && !r->lease_lost ? sr_lease_keeper_fd(r->keeper) : -1;
}

int
sr_run_lease_gone(struct run *r, const char *why)
{
	char kwhy[SR_ERRMAX];

	if (r->lease_lost)
		return 1;
	if (why == NULL) {
		if (r->keeper == NULL || sr_lease_keeper_status(r->keeper, kwhy) == SR_LEASE_OK)
			return 0;
		why = kwhy;
	}
	r->lease_lost = 1;
	snprintf(r->lease_why, sizeof r->lease_why, "%s", why);
	sr_tl(&r->tl, 1, "lost", "the lease of %s is lost (%s); the job is stopped and nothing "
	    "more is committed", r->js->name, why);
	return 1;
}

int
sr_run_lease_finish(struct run *r, int alone)
{
	int caller = !r->lease_own && r->hooks->finish != NULL, tries, rc = SR_LEASE_ERROR;
	char err[SR_ERRMAX], why[SR_ERRMAX];
	int late;

	late = r->lease_lost || (r->keeper != NULL &&
	    sr_lease_keeper_status(r->keeper, why) != SR_LEASE_OK);
	if (late && !alone) {
		sr_run_lease_gone(r, NULL);
		return -2;
	}
	if (late) {
		/* The job's end is done, whatever the lease: the store's
		 * compare-and-swap says whether another run has the job (its
		 * write fails) or not (then the end stands and nothing runs
		 * it again). */
		sr_tl(&r->tl, 1, "lease", "%s ended on its own as its lease was given up (%s); "
		    "recorded succeeded unless another run took it over", r->js->name,
		    r->lease_lost ? r->lease_why : why);
	}
	if (r->lease == NULL) {
		/* a gang's other node: its node 0 ends the lease */
		if (r->hooks->finish != NULL)
			(void)r->hooks->finish(r->hooks->arg, err);
		return 1;
	}
	if (caller) {
		rc = r->hooks->finish(r->hooks->arg, err);
		rc = rc == 0 ? SR_LEASE_OK : rc == -2 ? SR_LEASE_LOST : SR_LEASE_ERROR;
	}
	/* a store that fails now and then gets a few tries: without the
	 * lease set, no FINISHED marker may be written */
	for (tries = 0; tries < 3 && rc == SR_LEASE_ERROR && !caller; tries++) {
		if (tries > 0)
			sr_sleep(0.5 * tries);
		rc = sr_lease_set_state(r->lease, SR_LEASE_SUCCEEDED, err);
	}
	if (rc == SR_LEASE_LOST) {
		sr_run_lease_gone(r, err);
		return -2;
	}
	if (rc == SR_LEASE_OK && late) {
		/* the write went through: the lease was still this run's */
		r->lease_lost = 0;
		sr_tl(&r->tl, 1, "lease", "no other run had taken %s over: its lease is succeeded",
		    r->js->name);
	}
	if (rc != SR_LEASE_OK) {
		sr_tl(&r->tl, 1, "warning", "%s; no FINISHED marker, so a next run of %s resumes its "
		    "newest checkpoint instead of starting afresh", err, r->js->name);
		return -1;
	}
	return 0;
}

void
sr_run_lease_end(struct run *r, struct sr_run_result *res)
{
	struct sr_lease_info li;
	char err[SR_ERRMAX];
	int state = sr_run_lease_state(res);

	if (r->lease_lost && res->outcome != SR_RUN_LEASE_LOST) {
		/* lost after its job ended: the outcome stands, but no write */
		sr_tl(&r->tl, 1, "warning", "the lease of %s was lost at the end (%s); nothing was "
		    "written for it after that", r->js->name, r->lease_why);
	}
	sr_lease_keeper_stop(r->keeper);
	r->keeper = NULL;
	if (!r->lease_own || r->lease == NULL)
		return;
	sr_lease_get_info(r->lease, &li);
	if (state >= 0 && !r->lease_lost && li.state == SR_LEASE_RUNNING &&
	    sr_lease_set_state(r->lease, (enum sr_lease_state)state, err) != SR_LEASE_OK)
		sr_tl(&r->tl, 1, "warning", "%s", err);
	sr_lease_free(r->lease);
	r->lease = NULL;
}
