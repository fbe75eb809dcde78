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
#include <stdlib.h>
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
	int i;

	a->sent |= sig_bit(sig);
	for (i = 0; i < a->nranks; i++)
		if (!a->rank[i].done)
			sr_child_signal(&a->child[i], sig);
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

/* The request signal that the rank whose status is the job's got. */
static int
req_signal_of(const struct attempt *a)
{
	return a->status_rank >= 0 ? a->rank[a->status_rank].req_signal : 0;
}

/* Whether status st, with sent what spotrun had sent, is a death by a
 * signal from outside spotrun (req_signal: the request signal the process
 * got, which is spotrun's). */
static int
outside(int st, uint64_t sent, int req_signal)
{
	int sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;

	return sig != 0 && sent_by_someone(sig) && !(sent & sig_bit(sig)) && sig != req_signal;
}

int
sr_run_killed_outside(const struct attempt *a)
{
	return a->job_done && outside(a->status, a->status_sent, req_signal_of(a));
}

int
sr_run_rank_killed_outside(const struct attempt *a, int i)
{
	return a->rank[i].done && outside(a->rank[i].status, a->sent, a->rank[i].req_signal);
}

const char *
sr_run_rank_end(const struct attempt *a, int i, char *buf, size_t len)
{
	int st = a->rank[i].status, sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	uint64_t sent = i == a->status_rank ? a->status_sent : a->sent;
	char b[16];

	if (!a->rank[i].done)
		snprintf(buf, len, "still running");
	else if (sig == 0)
		snprintf(buf, len, "exit %d", sr_exit_code(st));
	else
		snprintf(buf, len, "SIG%s%s", sig_name(sig, b, sizeof b),
		    (sent & sig_bit(sig)) ? " from spotrun" : "");
	return buf;
}

/* With several ranks, how each one ended, those alike together: "rank 2
 * exit 1 (first); ranks 0, 1, 3 SIGTERM from spotrun". */
static void
say_ranks(struct run *r, struct attempt *a)
{
	char *seen = sr_calloc((size_t)a->nranks, 1), how[64], other[64];
	char line[1024] = "";
	int i, k, order, alone, n;
	size_t len;

	for (order = -1; order < a->nranks; order++) {
		i = order < 0 ? a->status_rank : order;
		if (i < 0 || seen[i])
			continue;
		/* The first to fail stands alone, marked. */
		alone = i == a->status_rank && a->status != 0;
		sr_run_rank_end(a, i, how, sizeof how);
		for (n = 0, k = i; k < a->nranks; k++)
			n += !seen[k] && (k == i || (!alone && k != a->status_rank &&
			    strcmp(sr_run_rank_end(a, k, other, sizeof other), how) == 0));
		len = strlen(line);
		snprintf(line + len, sizeof line - len, "%srank%s", len > 0 ? "; " : "",
		    n == 1 ? "" : "s");
		for (n = 0, k = i; k < a->nranks; k++) {
			if (seen[k] || (k != i && (alone || k == a->status_rank ||
			    strcmp(sr_run_rank_end(a, k, other, sizeof other), how) != 0)))
				continue;
			seen[k] = 1;
			len = strlen(line);
			snprintf(line + len, sizeof line - len, "%s %d", n++ > 0 ? "," : "", k);
		}
		len = strlen(line);
		snprintf(line + len, sizeof line - len, " %s%s", how, alone ? " (first)" : "");
	}
	free(seen);
	sr_tl(&r->tl, a->status != 0, "ranks", "%s", line);
	if (a->status != 0 && a->rank[a->status_rank].log != NULL &&
	    *sr_joblog_last_err(a->rank[a->status_rank].log) != '\0')
		sr_tl(&r->tl, 1, "ranks", "rank %d's last line on stderr: %s", a->status_rank,
		    sr_joblog_last_err(a->rank[a->status_rank].log));
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

	if (a->nranks > 1)
		say_ranks(r, a);
	if (sig != 0 && sig == req_signal_of(a) && !(a->status_sent & sig_bit(sig))) {
		sr_tl(&r->tl, 1, "killed", "the job was killed by SIG%s, spotrun's checkpoint request "
		    "signal: it does not handle it; handle SIG%s, `import spotrun` first thing "
		    "(Python), or set signal = none in [checkpoint]", sig_name(sig, b, sizeof b),
		    sig_name(sig, b, sizeof b));
		return;
	}
	if (a->noticed && (!a->stopping || a->rank_stop) && !a->notice_saved)
		before_notice(r, a, sig);
}
