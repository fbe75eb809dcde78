/*
 * attempt-intr.c: a signal from the user (SIGINT, SIGHUP, SIGQUIT, and
 * SIGTERM unless it is the notice) stops restarts and goes on to the job:
 * at once, or, while a save runs, once the save has ended, so that the job
 * cannot touch its directory while it is packed. The first one lets the
 * save finish ("^C  finishing the checkpoint; ^C again to abandon it"); a
 * second abandons it (the method's cancel: nothing is committed); a third
 * goes to the job at once. The run's last line then says what became of
 * the save and which checkpoint is the newest, instead of a bare "failed
 * exit 130".
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "run-int.h"
#include "util.h"

/* How the user's signal reads on the timeline. */
static const char *
label(int sig)
{
	switch (sig) {
	case SIGINT:
		return "^C";
	case SIGHUP:
		return "SIGHUP";
	case SIGQUIT:
		return "SIGQUIT";
	default:
		return "SIGTERM";
	}
}

void
sr_run_user_signal(struct run *r, struct attempt *a, int sig)
{
	const char *who = label(sig);

	if (r->interrupted == 0)
		r->interrupted = sig;
	if (!a->saving) {
		if (!a->job_done)
			sr_run_signal_job(a, sig);
		return;
	}
	if (a->held_sig == 0) {
		a->held_sig = sig;
		sr_tl(&r->tl, 1, who, "finishing the checkpoint; %s again to abandon it", who);
	} else if (!a->abandoning && r->method->ops->cancel != NULL) {
		a->abandoning = 1;
		r->method->ops->cancel(r->method);
		sr_tl(&r->tl, 1, who, "abandoning the checkpoint");
	} else if (!a->job_done) {
		sr_run_signal_job(a, sig);
	}
}

void
sr_run_user_release(struct run *r, struct attempt *a)
{
	if (a->held_sig == 0 || a->saving)
		return;
	if (r->last_save_rc == 0)
		r->intr_save = SR_INTR_COMMITTED;
	else if (r->last_save_rc == SR_CKPT_CANCELLED)
		r->intr_save = SR_INTR_ABANDONED;
	else
		r->intr_save = SR_INTR_FAILED;
	if (!a->job_done)
		sr_run_signal_job(a, a->held_sig);
	a->held_sig = 0;
}

const char *
sr_run_interrupt_what(const struct run *r, char *buf, size_t len)
{
	const char *who = label(r->interrupted);
	char newest[96];

	if (r->newest_seq < 0)
		snprintf(newest, sizeof newest, "no checkpoint committed");
	else if (r->newest_step >= 0)
		snprintf(newest, sizeof newest, "the newest checkpoint is %lld (step %lld)",
		    r->newest_seq, r->newest_step);
	else
		snprintf(newest, sizeof newest, "the newest checkpoint is %lld", r->newest_seq);
	switch (r->intr_save) {
	case SR_INTR_COMMITTED:
		snprintf(buf, len, "%s during a checkpoint, which was committed first; %s", who, newest);
		break;
	case SR_INTR_ABANDONED:
		snprintf(buf, len, "%s twice: the checkpoint was abandoned; %s", who, newest);
		break;
	case SR_INTR_FAILED:
		snprintf(buf, len, "%s during a checkpoint, which failed; %s", who, newest);
		break;
	default:
		snprintf(buf, len, "%s; %s", who, newest);
		break;
	}
	return buf;
}
