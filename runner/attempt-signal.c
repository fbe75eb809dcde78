/*
 * attempt-signal.c: the signals spotrun sends to the job, remembered for the
 * attempt, and what the job's death by a signal means when spotrun can tell:
 *
 *  - killed by spotrun's own checkpoint request signal: the job does not
 *    handle it (it caught it when spotrun looked, then let it go: a handler
 *    reset, an interpreter shutting down);
 *  - killed, or gone, before the checkpoint a notice asked for: by a signal
 *    spotrun did not send, so from outside (Slurm signals the whole job
 *    step, not spotrun alone), or of its own accord.
 *
 * Either way the run's last line alone ("failed exit 138", "preempted exit
 * 75") would not say why; these lines do, with the fix.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "run-int.h"
#include "util.h"

static uint64_t
sig_bit(int sig)
{
	return sig > 0 && sig <= 64 ? 1ULL << (sig - 1) : 0;
}

void
sr_run_signal_job(struct attempt *a, int sig)
{
	a->sent |= sig_bit(sig);
	sr_child_signal(&a->child, sig);
}

/* "TERM" for SIGTERM. */
static const char *
sig_name(int sig, char *buf, size_t len)
{
	const char *abbrev = sigabbrev_np(sig);

	if (abbrev != NULL)
		return abbrev;
	snprintf(buf, len, "%d", sig);
	return buf;
}

/* Signals that someone sends (a crash's are the job's own). */
static int
sent_by_someone(int sig)
{
	switch (sig) {
	case SIGHUP: case SIGINT: case SIGQUIT: case SIGKILL: case SIGUSR1: case SIGUSR2:
	case SIGALRM: case SIGTERM:
		return 1;
	}
	return 0;
}

int
sr_run_killed_outside(const struct attempt *a)
{
	int sig = WIFSIGNALED(a->status) ? WTERMSIG(a->status) : 0;

	return a->leader_done && sig != 0 && sent_by_someone(sig) && !(a->sent & sig_bit(sig)) &&
	    sig != a->req_signal;
}

/* The job ended before the notice's checkpoint was taken (sig: what
 * killed it, 0 none). */
static void
before_notice(struct run *r, struct attempt *a, int sig)
{
	const char *keep = "the previous checkpoint stays the newest";
	char b[16];

	r->missed++;
	if (sig == 0)
		sr_tl(&r->tl, 1, "ckpt", "the job exited (code %d) before it wrote the notice's "
		    "checkpoint; %s", sr_exit_code(a->status), keep);
	else if (!sr_run_killed_outside(a))
		sr_tl(&r->tl, 1, "killed", "the job was killed by SIG%s before it wrote the notice's "
		    "checkpoint; %s", sig_name(sig, b, sizeof b), keep);
	else
		sr_tl(&r->tl, 1, "killed", "the job was killed by SIG%s before it wrote the notice's "
		    "checkpoint: spotrun did not send it, so it came from outside spotrun (Slurm "
		    "sends it to the whole job step); %s. Send the signal to spotrun alone: with "
		    "Slurm, sbatch --signal=B:TERM@120 and `exec spotrun run JOB.ini` in the batch "
		    "script (examples/slurm/)", sig_name(sig, b, sizeof b), keep);
}

void
sr_run_job_ended(struct run *r, struct attempt *a)
{
	int sig = WIFSIGNALED(a->status) ? WTERMSIG(a->status) : 0;
	char b[16];

	if (sig != 0 && sig == a->req_signal && !(a->sent & sig_bit(sig))) {
		sr_tl(&r->tl, 1, "killed", "the job was killed by SIG%s, spotrun's checkpoint request "
		    "signal: it does not handle it; handle SIG%s, `import spotrun` first thing "
		    "(Python), or set signal = none in [checkpoint]", sig_name(sig, b, sizeof b),
		    sig_name(sig, b, sizeof b));
		return;
	}
	if (a->noticed && !a->stopping && !a->notice_saved)
		before_notice(r, a, sig);
}
