/*
 * attempt-record.c: the attempt's record in the store (record.h): written
 * as the attempt starts, so that a machine that vanished still leaves its
 * start, rewritten after each commit (from the method's thread, off the
 * supervisor's loop), so that one killed later still shows its checkpoints,
 * and rewritten as it ends. A failure to write it is worth a warning,
 * never the job.
 */
#include "config.h"

#include <string.h>

#include "run-int.h"
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
}

void
sr_run_record_end(struct run *r, struct attempt *a, const char *outcome, int code)
{
	char err[SR_ERRMAX];

	if (a->rec.attempt == 0 || r->lease_lost)
		return;		/* it never started; or the job is no longer this run's to write */
	a->rec.ended = sr_now();
	strlcpy(a->rec.outcome, outcome, sizeof a->rec.outcome);
	a->rec.exit_code = code;
	a->rec.checkpoints = r->checkpoints - a->checkpoints_before;
	if (sr_record_put(r->st, r->js->name, &a->rec, err) == -1)
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
