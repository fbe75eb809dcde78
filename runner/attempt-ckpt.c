/*
 * attempt-ckpt.c: the checkpoints of an attempt, as policy: the restore
 * before the launch, when to ask for a checkpoint and by when, what a
 * preemption notice or an early warning does, what follows the end of a
 * save, and when the job must be stopped. How a checkpoint is asked for,
 * seen complete and taken to the store is the method's (method.h), so
 * nothing here depends on the mode.
 *
 * On a notice the request carries the notice's deadline minus the safety
 * margin: the checkpoint commits before it or not at all (the previous one
 * stays the newest), and then the job is stopped. A notice that comes while
 * a save runs is served right after it.
 */
#include "config.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "run-int.h"
#include "util.h"

/* Bytes per second, for the summary lines. */
static uint64_t
rate_of(uint64_t bytes, double seconds)
{
	return seconds > 0 ? (uint64_t)((double)bytes / seconds) : 0;
}

int
sr_run_restore(struct run *r, long long *step, int *world, char *err)
{
	struct sr_ckpt_stats cs;
	char stored[32], raw[32], took[32], rate[32];
	long long fseq = -1;
	int fresh = r->attempt == 1 && sr_run_finished_before(r, &fseq), rc;

	*step = -1;
	*world = 0;
	memset(&cs, 0, sizeof cs);
	rc = r->method->ops->restore(r->method, fresh, &cs, err);
	if (rc != 0 && rc != SR_CKPT_NONE)
		return -1;
	if (fresh) {
		if (fseq >= 0)
			sr_tl(&r->tl, 1, "attempt", "1 starts afresh: %s finished in an earlier run "
			    "(its checkpoints stay in the store: spotrun ls)", r->js->name);
		return 0;
	}
	/* a run that took the job over from a vanished holder redoes its work */
	sr_run_count_vanished(r, rc == 0 ? cs.created : 0);
	if (rc == SR_CKPT_NONE) {
		if (r->attempt > 1)
			sr_tl(&r->tl, 1, "attempt", "%d starts fresh: no checkpoint committed yet", r->attempt);
		return 0;
	}
	*step = cs.step;
	*world = cs.world_size;
	r->newest_seq = (long long)cs.seq;
	r->newest_step = cs.step;
	if (r->method->ops->job_reads)
		sr_tl(&r->tl, 1, "attempt", "%d resumes from checkpoint %llu at step %lld (%s -> %s): "
		    "the job reads it (%s mode)", r->attempt, (unsigned long long)cs.seq, cs.step,
		    sr_fmt_bytes(cs.stored_bytes, stored, sizeof stored),
		    sr_fmt_bytes(cs.raw_bytes, raw, sizeof raw), r->method->ops->name);
	else
		sr_tl(&r->tl, 1, "attempt", "%d restored checkpoint %llu at step %lld (%s -> %s in "
		    "%s, %s/s)", r->attempt, (unsigned long long)cs.seq, cs.step,
		    sr_fmt_bytes(cs.stored_bytes, stored, sizeof stored),
		    sr_fmt_bytes(cs.raw_bytes, raw, sizeof raw),
		    sr_fmt_duration(cs.seconds, took, sizeof took),
		    sr_fmt_bytes(rate_of(cs.raw_bytes, cs.seconds), rate, sizeof rate));
	return 0;
}

static void
post_request(struct run *r, struct attempt *a, enum sr_ckpt_reason reason, double deadline)
{
	struct sr_ckpt_request rq;
	char err[SR_ERRMAX], within[32], by[32];
	double posted = sr_now();
	int *signalled = sr_calloc((size_t)a->nranks, sizeof *signalled), i;

	rq.seq = ++r->req_seq;
	rq.reason = reason;
	rq.deadline = deadline;
	/* Said first, so what the method says of it follows. To the
	 * millisecond: the microseconds since the caller's clock reading must
	 * not turn 10m00s into 9m59s. */
	sr_tl(&r->tl, 0, "request", "%s checkpoint, answer within %s (by %s)",
	    sr_ckpt_reason_name(reason),
	    sr_fmt_duration(round((deadline - posted) * 1000) / 1000, within, sizeof within),
	    sr_tl_wall(deadline, 0, by, sizeof by));
	if (r->method->ops->request(r->method, a->child, (size_t)a->nranks, &rq, signalled,
	    err) == -1) {
		sr_tl(&r->tl, 1, "error", "%s", err);
		free(signalled);
		return;
	}
	for (i = 0; i < a->nranks; i++)
		if (signalled[i] != 0)
			a->rank[i].req_signal = signalled[i];
	free(signalled);
	sr_fault("ckpt-request");
	a->req_pending = 1;
	a->req_reason = reason;
	a->req_deadline = deadline;
	a->req_posted = posted;
}

void
sr_run_begin_stop(struct run *r, struct attempt *a, const char *why)
{
	sr_run_begin_stop_grace(r, a, why, 10);
}

void
sr_run_begin_stop_grace(struct run *r, struct attempt *a, const char *why, double grace)
{
	if (a->stopping || a->job_done)
		return;
	if (a->noticed) {
		double left = a->notice.deadline - sr_now();
		if (left < grace)
			grace = left > 1 ? left : 1;
	}
	a->stopping = 1;
	a->stop_at = sr_mono();
	a->kill_at = sr_mono() + grace;
	sr_tl(&r->tl, 0, "stop", "%s; SIGTERM to the job", why);
	sr_run_signal_job(a, SIGTERM);
}

/* The job's state is complete (step): have the method take it to the store. */
static void
start_save(struct run *r, struct attempt *a, long long step, int last)
{
	double deadline = a->req_reason == SR_REASON_NOTICE ? a->ckpt_deadline : 0;
	char err[SR_ERRMAX];

	a->save_reason = a->req_reason;
	/* A gang's nodes stop together: a node's job left to end alone
	 * would wait for the others' collectives. */
	a->save_last = last && r->hooks->gang.nodes <= 1;
	a->save_state_at = sr_now();
	a->notice_saved |= a->req_reason == SR_REASON_NOTICE;
	sr_run_record_arm(r, a, a->req_reason != SR_REASON_NOTICE);
	if (r->method->ops->save(r->method, step, deadline, err) == -1) {
		r->note.armed = 0;
		sr_tl(&r->tl, 1, "error", "%s", err);
		return;
	}
	a->saving = 1;
}

/* The timeline's line of a commit: its figures, and how (committed). */
static void
say_commit(struct run *r, const struct sr_ckpt_stats *s, const char *how)
{
	char raw[32], stored[32], fresh[32], took[32], rate[32];

	sr_tl(&r->tl, 1, "ckpt", "%llu step %lld: %s -> %s (%.2f), %s new, %s in %s (%s/s)",
	    (unsigned long long)s->seq, s->step, sr_fmt_bytes(s->raw_bytes, raw, sizeof raw),
	    sr_fmt_bytes(s->stored_bytes, stored, sizeof stored),
	    s->raw_bytes ? (double)s->stored_bytes / (double)s->raw_bytes : 0.0,
	    sr_fmt_bytes(s->new_bytes, fresh, sizeof fresh), how,
	    sr_fmt_duration(s->seconds, took, sizeof took),
	    sr_fmt_bytes(rate_of(s->raw_bytes, s->seconds), rate, sizeof rate));
}

/* Count a save's end and say how it went. */
static void
report_save(struct run *r, struct attempt *a, const struct sr_ckpt_result *res)
{
	const struct sr_ckpt_stats *s = &res->stats;
	const char *reason = sr_ckpt_reason_name(a->save_reason);
	char err[SR_ERRMAX];

	r->last_save_rc = res->rc;
	if (res->rc == 0) {
		r->checkpoints++;
		r->newest_seq = (long long)s->seq;
		r->newest_step = s->step;
		a->last_state_at = a->save_state_at;
		/* a gang's other node stores its part; node 0 commits them all */
		say_commit(r, s, r->hooks->gang.nodes > 1 && r->hooks->gang.node > 0 ?
		    "stored as this node's part (node 0 commits it)" : "committed");
		if (r->method->ops->committed != NULL)
			r->method->ops->committed(r->method, res);
		/* Only now that it is committed may the provider be told the
		 * machine can go (Azure's ack). That goes out on a thread of
		 * the provider's: this loop does not wait. */
		if (a->save_reason == SR_REASON_NOTICE && a->noticed &&
		    sr_provider_ack(r->prov, &a->notice, err) == -1)
			sr_tl(&r->tl, 1, "warning", "%s", err);
		sr_run_tell(r, a, SR_RUN_EV_CHECKPOINT);
	} else if (res->rc == SR_CKPT_LATE) {
		r->missed++;
		/* the save's own words: how far it got, or how long the store
		 * failed ("checkpoint of J missed its deadline after ...") */
		sr_tl(&r->tl, 1, "ckpt", "%s %s; the previous checkpoint stays the newest", reason,
		    res->err[0] != '\0' ? res->err : "checkpoint missed its deadline");
	} else if (res->rc == SR_CKPT_FENCED) {
		/* a newer run holds the job: what this one saved is not committed */
		r->missed++;
		sr_tl(&r->tl, 1, "ckpt", "%s checkpoint fenced out: %s", reason, res->err);
		if (sr_run_lease_gone(r, "its checkpoint was fenced out: a newer run holds the job"))
			sr_run_give_up(r, a);
	} else if (res->rc == SR_CKPT_CANCELLED) {
		sr_tl(&r->tl, 0, "ckpt", "%s checkpoint cancelled", reason);
	} else {
		r->missed++;
		sr_tl(&r->tl, 1, "error", "%s checkpoint failed: store %s: %s; the previous checkpoint "
		    "stays the newest", reason, sr_store_url(r->st), res->err);
	}
}

/* A save the job reported itself (library mode): a commit nobody asked
 * for counts as any other; a failure is said when it happens (one that
 * answered a request is counted missed when that request ends). */
static void
report_job_save(struct run *r, struct attempt *a, const struct sr_ckpt_result *res)
{
	const struct sr_ckpt_stats *s = &res->stats;

	if (res->rc != 0) {
		if (s->seq == 0)
			r->missed++;
		sr_tl(&r->tl, 1, "error", "the job's checkpoint of step %lld failed%s: %s; the "
		    "previous checkpoint stays the newest", s->step, s->seq != 0 ?
		    " (its answer to the request)" : "", res->err);
		return;
	}
	r->checkpoints++;
	if ((long long)s->seq > r->newest_seq) {
		r->newest_seq = (long long)s->seq;
		r->newest_step = s->step;
	}
	say_commit(r, s, res->err[0] != '\0' ? res->err : "committed by the job unasked");
	sr_run_tell(r, a, SR_RUN_EV_CHECKPOINT);
}

/* A notice after the job's last checkpoint committed: the job is left to
 * end on its own; at the deadline the machine goes away (on_timers). */
static void
say_ends_alone(struct run *r, struct attempt *a)
{
	char at[32];

	sr_tl(&r->tl, 0, "stop", "the job's last checkpoint is committed: it may end on its own "
	    "until the machine goes away at %s", sr_tl_wall(a->notice.deadline, 0, at, sizeof at));
}

void
sr_run_job_saves(struct run *r, struct attempt *a)
{
	struct sr_ckpt_result res;

	while (r->method->ops->job_saved != NULL && r->method->ops->job_saved(r->method, &res) == 1)
		report_job_save(r, a, &res);
}

void
sr_run_method_news(struct run *r, struct attempt *a)
{
	struct sr_ckpt_result res;
	int was_notice;

	sr_run_job_saves(r, a);
	if (r->method->ops->saved(r->method, &res) != 1)
		return;
	a->saving = 0;
	was_notice = a->save_reason == SR_REASON_NOTICE;
	sr_run_record_disarm(r, a);
	report_save(r, a, &res);
	if (r->method->ops->reported != NULL)
		r->method->ops->reported(r->method);
	if (res.rc == 0 && a->save_last) {
		a->last_committed = 1;
		sr_tl(&r->tl, 0, "ckpt", "step %lld is the job's last checkpoint: no other is asked, "
		    "and a notice lets the job end on its own", res.stats.step);
	}
	if (a->emergency_pending) {
		a->emergency_pending = 0;
		if (!a->job_done && !a->last_committed && sr_now() < a->ckpt_deadline) {
			post_request(r, a, SR_REASON_NOTICE, a->ckpt_deadline);
			return;
		}
	}
	if (!(a->noticed || a->final_ckpt) || !(was_notice || !a->req_pending))
		return;
	if (a->last_committed && !a->final_ckpt) {
		say_ends_alone(r, a);
		return;
	}
	sr_run_begin_stop(r, a, was_notice && res.rc == 0 ? (r->hooks->gang.node > 0 ?
	    "checkpoint part stored" : "checkpoint committed") :
	    a->noticed ? "no checkpoint for this notice" : "no final checkpoint");
}

/* An early warning (now: sr_now()): checkpoint, and the job goes on. A
 * freeze (AWS hibernate) too, whatever early_checkpoint says: the
 * hibernation keeps the processes, so the job is not stopped, but the
 * checkpoint is the only copy if the instance never comes back. */
static void
early_warning(struct run *r, struct attempt *a, const struct sr_notice *n, double now)
{
	if (n->kind == SR_NOTICE_EARLY && !r->js->early_checkpoint) {
		sr_tl(&r->tl, 1, "warning", "%s; no checkpoint (early_checkpoint = no)", n->reason);
		return;
	}
	/* A gang's nodes checkpoint together, asked by node 0: another
	 * node's ranks asked alone would wait for the others' request
	 * (spotrun.torch), which never comes. */
	if (r->hooks->gang.nodes > 1 && r->hooks->gang.node > 0) {
		sr_tl(&r->tl, 1, "warning", "%s; no checkpoint (a gang's checkpoints are node 0's "
		    "to ask)", n->reason);
		return;
	}
	sr_tl(&r->tl, 1, "warning", "%s", n->reason);
	if (!a->req_pending && !a->saving && !a->last_committed) {
		post_request(r, a, SR_REASON_EARLY, now + r->js->write_timeout);
		sr_run_tell(r, a, SR_RUN_EV_REQUEST);
	}
}

/* A notice that finds the job still starting (method's starting: no
 * process has looked for a request since the launch) stops it at once,
 * its request withdrawn: the job has ended no step since its restore, so
 * its checkpoint could only repeat the restored one, and waiting for its
 * first look would hold the machine, and a gang's every machine, to the
 * deadline. Only while the job has been up for less than the notice
 * leaves (stopping loses at most that; a job up longer may be deep in a
 * long first step that ends in time), or when a process said it marks its
 * first look only after the notice came: it was starting then. at_notice:
 * called for the notice itself. 1 when it stopped the job. */
static int
stop_if_starting(struct run *r, struct attempt *a, double now, int at_notice)
{
	struct sr_method *m = r->method;
	char up[32];
	int starting;

	if (m->ops->starting == NULL || a->job_done || a->stopping || a->saving)
		return 0;
	starting = m->ops->starting(m);
	if (at_notice)
		a->undeclared_at_notice = starting == -1;
	if (starting != 1 || (now - a->started >= a->notice.deadline - now &&
	    !a->undeclared_at_notice))
		return 0;
	if (a->req_pending) {
		m->ops->clear(m);
		a->req_pending = 0;
	}
	sr_tl(&r->tl, 1, "ckpt", "none for this notice: the job is still starting (up %s, it has "
	    "not looked for a request yet), with nothing new to save; the previous checkpoint "
	    "stays the newest", sr_fmt_duration(round((now - a->started) * 1000) / 1000, up,
	    sizeof up));
	sr_run_begin_stop(r, a, "nothing to save for this notice");
	return 1;
}

void
sr_run_notice(struct run *r, struct attempt *a, const struct sr_notice *n, int machine)
{
	char at[32], left[32], margin[32];
	double now = sr_now();

	if (machine && n->kind == SR_NOTICE_PREEMPT && !a->machine_noticed) {
		a->machine_noticed = 1;
		a->machine_deadline = n->deadline;
		if (a->noticed || a->stopping) {
			/* Another node's notice stops the attempt already, but
			 * this machine goes too: its caller must know, or an
			 * agent would take its next job on a machine that is
			 * going (in a gang whose nodes all get notices, a gang
			 * formed to be stopped at once). The checkpoint asked
			 * keeps its deadline: every node of the gang answers
			 * the same request. */
			sr_tl(&r->tl, 1, "notice", "%s: this machine goes too (at %s)", n->reason,
			    sr_tl_wall(n->deadline, 0, at, sizeof at));
			sr_run_tell(r, a, SR_RUN_EV_NOTICE);
			return;
		}
	}

	/* A notice that follows the job's death by a signal from outside is
	 * the machine going away (Slurm's SIGTERM to spotrun and the job at
	 * once): the attempt is preempted, with nothing left to ask. */
	if (a->stopping || r->lease_lost || (a->job_done && !sr_run_killed_outside(a)))
		return;
	if (n->kind == SR_NOTICE_EARLY || n->kind == SR_NOTICE_FREEZE) {
		if (!a->job_done)
			early_warning(r, a, n, now);
		return;
	}
	if (a->noticed)
		return;
	a->noticed = 1;
	a->notice = *n;
	a->ckpt_deadline = n->deadline - r->js->margin;
	r->preemptions++;
	sr_run_tell(r, a, SR_RUN_EV_NOTICE);
	if (n->deadline > now)
		sr_tl(&r->tl, 1, "notice", "%s, deadline in %s (at %s)", n->reason,
		    sr_fmt_duration(n->deadline - now, left, sizeof left),
		    sr_tl_wall(n->deadline, 0, at, sizeof at));
	else
		sr_tl(&r->tl, 1, "notice", "%s, deadline already past (%s)", n->reason,
		    sr_tl_wall(n->deadline, 1, at, sizeof at));
	if (a->job_done)
		return;
	if (a->last_committed) {
		say_ends_alone(r, a);
		return;
	}
	if (a->ckpt_deadline <= now) {
		/* Nothing is asked of the job, so nothing can be half-written:
		 * the newest committed checkpoint stays what the next run
		 * restores. */
		r->missed++;
		sr_tl(&r->tl, 1, "ckpt", "no time for a checkpoint: the notice left %s, margin = %s; "
		    "the previous checkpoint stays the newest",
		    sr_fmt_duration(n->deadline > now ? n->deadline - now : 0, left, sizeof left),
		    sr_fmt_duration(r->js->margin, margin, sizeof margin));
		sr_run_begin_stop(r, a, "no checkpoint for this notice");
		return;
	}
	if (stop_if_starting(r, a, now, 1))
		return;
	if (a->saving)
		a->emergency_pending = 1;
	else
		/* A pending request is upgraded: same files, tighter deadline. */
		post_request(r, a, SR_REASON_NOTICE, a->ckpt_deadline);
}

void
sr_run_check_request(struct run *r, struct attempt *a)
{
	struct sr_method *m = r->method;
	char took[32], who[256] = "";
	long long step;
	size_t len;
	int rc, i, last = 0;

	if (!a->req_pending || a->job_done)
		return;
	/* a process that said only now that it marks its first look */
	if (a->noticed && a->req_reason == SR_REASON_NOTICE &&
	    stop_if_starting(r, a, sr_now(), 0))
		return;
	rc = m->ops->state(m, &step, &last);
	/* state may have found a commit of the job's that answered a request
	 * this one replaced (library mode): reported now, before this one's */
	sr_run_job_saves(r, a);
	for (i = 0; m->ops->late_signal != NULL && i < a->nranks; i++)
		if (m->ops->late_signal(m, (size_t)i) != 0)
			a->rank[i].req_signal = m->ops->late_signal(m, (size_t)i);
	if (rc == 1) {
		m->ops->clear(m);
		a->req_pending = 0;
		start_save(r, a, step, last);
		return;
	}
	if (rc == -1) {		/* the method said why */
		m->ops->clear(m);
		a->req_pending = 0;
		r->missed++;
		if (a->noticed)
			sr_run_begin_stop(r, a, "no checkpoint for this notice");
		return;
	}
	if (a->req_deadline > 0 && sr_now() >= a->req_deadline) {
		if (m->ops->waiting != NULL && *m->ops->waiting(m, who, sizeof who) != '\0') {
			len = strlen(who);
			snprintf(who + len, sizeof who - len, " did not answer");
		}
		m->ops->clear(m);
		a->req_pending = 0;
		r->missed++;
		sr_tl(&r->tl, 1, "ckpt", "the job did not write its %s checkpoint within %s%s%s%s; the "
		    "previous checkpoint stays the newest", sr_ckpt_reason_name(a->req_reason),
		    sr_fmt_duration(round((a->req_deadline - a->req_posted) * 1000) / 1000, took,
		    sizeof took),
		    who[0] != '\0' ? " (" : "", who, who[0] != '\0' ? ")" : "");
		if (a->noticed || a->final_ckpt)
			sr_run_begin_stop(r, a, a->noticed ? "no checkpoint for this notice" :
			    "no final checkpoint");
	}
}

void
sr_run_periodic(struct run *r, struct attempt *a, double now)
{
	int was = a->req_pending;

	if (a->next_periodic <= 0 || now < a->next_periodic)
		return;
	a->next_periodic = now + r->js->interval;
	sr_run_request_periodic(r, a, sr_now() + r->js->write_timeout);
	/* a gang's other nodes are asked through node 0's agent */
	if (!was && a->req_pending)
		sr_run_tell(r, a, SR_RUN_EV_REQUEST);
}

void
sr_run_request_periodic(struct run *r, struct attempt *a, double deadline)
{
	if (!a->req_pending && !a->saving && !a->noticed && !a->job_done && !a->stopping &&
	    !a->final_ckpt && !a->last_committed)
		post_request(r, a, SR_REASON_PERIODIC, deadline);
}

void
sr_run_give_up(struct run *r, struct attempt *a)
{
	a->next_periodic = 0;
	a->emergency_pending = 0;
	if (a->req_pending) {
		r->method->ops->clear(r->method);
		a->req_pending = 0;
	}
	if (a->saving && r->method->ops->cancel != NULL)
		r->method->ops->cancel(r->method);
	sr_run_begin_stop(r, a, "the lease is lost");
}

void
sr_run_cancel(struct run *r, struct attempt *a, int checkpoint)
{
	double now = sr_now();
	char clock[32];

	if (r->cancelled)
		return;
	r->cancelled = 1;
	if (a->job_done || a->stopping || r->lease_lost) {
		sr_tl(&r->tl, 1, "cancel", "%s is cancelled", r->js->name);
		return;
	}
	if (!checkpoint || a->noticed || a->last_committed) {
		/* a notice's checkpoint, if any, is the last one already */
		sr_tl(&r->tl, 1, "cancel", "%s is cancelled%s", r->js->name, a->noticed ?
		    " (its notice's checkpoint is the last)" : a->last_committed && checkpoint ?
		    " (its last checkpoint is committed)" : "");
		if (!a->noticed || a->last_committed)
			sr_run_begin_stop(r, a, "cancelled");
		return;
	}
	a->final_ckpt = 1;
	a->ckpt_deadline = now + r->js->write_timeout;
	sr_tl(&r->tl, 1, "cancel", "%s is cancelled: a final checkpoint first, by %s", r->js->name,
	    sr_tl_clock(&r->tl, a->ckpt_deadline, clock, sizeof clock));
	if (a->saving)
		a->emergency_pending = 1;	/* one more, once the running save ends */
	else
		post_request(r, a, SR_REASON_NOTICE, a->ckpt_deadline);
}

void
sr_run_tell(struct run *r, const struct attempt *a, enum sr_run_event ev)
{
	struct sr_run_progress p;

	if (r->hooks->progress == NULL)
		return;
	memset(&p, 0, sizeof p);
	p.attempts = r->attempt;
	p.preemptions = r->preemptions;
	p.checkpoints = r->checkpoints;
	p.step = r->newest_step;
	p.seconds = r->used + (a != NULL && a->started > 0 ? sr_now() - a->started : 0);
	p.lost = r->lost;
	p.gpus = r->ranks.gpus;
	p.notice_deadline = a != NULL && a->noticed ? a->notice.deadline : 0;
	p.notice_machine = a != NULL && a->machine_noticed;
	if (p.notice_machine)
		p.notice_deadline = a->machine_deadline;
	p.request_deadline = a != NULL && a->req_pending ? a->req_deadline : 0;
	r->hooks->progress(r->hooks->arg, ev, &p);
}
