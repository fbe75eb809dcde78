/*
 * attempt-record.c: the attempt's record in the store (record.h): written
 * as the attempt starts, so that a machine that vanished still leaves its
 * start, rewritten after each commit (from the method's thread, off the
 * supervisor's loop), so that one killed later still shows its checkpoints,
 * and rewritten as it ends (a preempted one's end, when a next machine
 * follows in this run, once that machine's job has started); the work lost
 * when an attempt ends or vanishes
 * past its last checkpoint, counted once, in the record of the attempt that
 * lost it. A failure to write it is worth a warning, never the job.
 */
#include "config.h"

#include <string.h>
#include <sys/wait.h>

#include "run-int.h"
#include "termsafe.h"
#include "util.h"

void
sr_run_record_start(struct run *r, struct attempt *a, long long step)
{
	struct sr_attempt_record *rec = &a->rec;
	char err[SR_ERRMAX];

	memset(rec, 0, sizeof *rec);
	strlcpy(rec->run, r->run_id, sizeof rec->run);
	rec->attempt = r->attempt;
	rec->vm = r->vm;
	rec->started = a->started;
	rec->exit_code = -1;
	rec->restored_step = step;
	strlcpy(rec->outcome, "running", sizeof rec->outcome);
	rec->ranks = r->ranks.n;
	rec->gpus = r->ranks.gpus;
	if (rec->gpus > 0 && r->gpus_found.n > 0)
		strlcpy(rec->gpu_model, r->gpus_found.v[0].model, sizeof rec->gpu_model);
	if (sr_provider_facts(r->prov, &rec->facts, err) == -1)
		sr_tl(&r->tl, 0, "warning", "%s", err);
	a->checkpoints_before = r->checkpoints;
	if (sr_record_put(r->st, r->js->name, rec, err) == -1)
		sr_tl(&r->tl, 1, "warning", "%s", err);
	sr_run_record_flush(r);
}

void
sr_run_record_flush(struct run *r)
{
	char err[SR_ERRMAX];

	if (!r->rec_later_due)
		return;
	r->rec_later_due = 0;
	if (!r->lease_lost && sr_record_put(r->st, r->js->name, &r->rec_later, err) == -1)
		sr_tl(&r->tl, 1, "warning", "%s", err);
}

void
sr_run_record_end(struct run *r, struct attempt *a, const char *outcome, int code,
    int later)
{
	char err[SR_ERRMAX];

	if (a->rec.attempt == 0 || r->lease_lost)
		return;		/* it never started; or the job is no longer this run's to write */
	a->rec.ended = sr_now();
	strlcpy(a->rec.outcome, outcome, sizeof a->rec.outcome);
	a->rec.exit_code = code;
	a->rec.signal = code >= 0 && a->job_done && WIFSIGNALED(a->status) ?
	    WTERMSIG(a->status) : 0;
	a->rec.checkpoints = r->checkpoints - a->checkpoints_before;
	sr_run_record_flush(r);
	if (later) {
		r->rec_later = a->rec;
		r->rec_later_due = 1;
	} else if (sr_record_put(r->st, r->js->name, &a->rec, err) == -1)
		sr_tl(&r->tl, 1, "warning", "%s", err);
}

void
sr_run_record_arm(struct run *r, struct attempt *a, int armed)
{
	struct sr_record_note *n = &r->note;

	n->armed = armed && a->rec.attempt != 0;
	if (!n->armed)
		return;
	n->st = r->st;
	n->job = r->js->name;
	n->rec = a->rec;
	n->rec.checkpoints = r->checkpoints - a->checkpoints_before + 1;
	n->err[0] = '\0';
}

void
sr_run_record_on_commit(void *arg, const struct sr_ckpt_stats *stats)
{
	struct sr_record_note *n = arg;

	(void)stats;
	if (n->armed && sr_record_put(n->st, n->job, &n->rec, n->err) == -1 && n->err[0] == '\0')
		strlcpy(n->err, "write the attempt's record: failed", sizeof n->err);
}

void
sr_run_record_disarm(struct run *r, struct attempt *a)
{
	(void)a;
	if (r->note.armed && r->note.err[0] != '\0')
		sr_tl(&r->tl, 1, "warning", "%s", r->note.err);
	r->note.armed = 0;
}

void
sr_run_count_lost(struct run *r, struct attempt *a)
{
	double from = a->last_state_at > 0 ? a->last_state_at : a->started;
	char err[SR_ERRMAX];

	if (a->started <= 0 || a->ended <= from)
		return;
	r->lost += a->ended - from;
	a->rec.lost = a->ended - from;
	/* a restart's: counted once the backoff is over, after the end */
	if (a->rec.ended > 0 && !r->lease_lost &&
	    sr_record_put(r->st, r->js->name, &a->rec, err) == -1)
		sr_tl(&r->tl, 1, "warning", "%s", err);
}

/* sr_record_list's callback: the newest record of another run without an
 * end that started while the lease taken over was its holder's (from its
 * claim to its last renewal). */
struct open_rec {
	const char *run;
	double claimed, renewed;
	int found;
	struct sr_attempt_record rec;
};

static int
newest_open(const struct sr_attempt_record *rec, void *arg)
{
	struct open_rec *o = arg;

	if (rec->ended > 0 || strcmp(rec->run, o->run) == 0 || rec->started < o->claimed ||
	    rec->started >= o->renewed)
		return 0;
	if (!o->found || rec->started >= o->rec.started) {
		o->rec = *rec;
		o->found = 1;
	}
	return 0;
}

void
sr_run_count_vanished(struct run *r, double created)
{
	const struct sr_lease_info *li = &r->lease_prev;
	struct open_rec o = { .run = r->run_id, .claimed = li->claimed, .renewed = li->renewed };
	char err[SR_ERRMAX], at[64], lost[32], run[SR_TERMSAFE_LEN(sizeof o.rec.run)];
	double from;

	/* Only a lease taken over while running names the vanished holder's
	 * last sign of life: its renewal, written every TTL / 3 by the
	 * holder's own keeper for as long as it lived. A released or requeued
	 * lease was rewritten by someone else, and a record is rewritten only
	 * as a checkpoint commits, which is not when the work stopped. */
	if (r->attempt != 1 || !r->lease_found || li->state != SR_LEASE_RUNNING)
		return;
	if (sr_record_list(r->st, r->js->name, newest_open, &o, err) == -1) {
		sr_tl(&r->tl, 1, "warning", "%s", err);
		return;
	}
	if (!o.found)
		return;		/* the holder's attempt ended, or none started */
	from = created > o.rec.started ? created : o.rec.started;
	o.rec.lost = li->renewed > from ? li->renewed - from : 0;
	o.rec.ended = li->renewed;
	strlcpy(o.rec.outcome, "vanished", sizeof o.rec.outcome);
	r->lost += o.rec.lost;
	sr_tl(&r->tl, 1, "vanished", "attempt %d of run %s has no end; its lease was last renewed at "
	    "%s: %s of its work after the checkpoint restored is done again", o.rec.attempt,
	    sr_termsafe(o.rec.run, run, sizeof run), sr_tl_wall(li->renewed, 1, at, sizeof at),
	    sr_fmt_duration(o.rec.lost, lost, sizeof lost));
	if (sr_record_put(r->st, r->js->name, &o.rec, err) == -1)
		sr_tl(&r->tl, 1, "warning", "%s", err);
}
