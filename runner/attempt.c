/*
 * attempt.c: one attempt ("a VM"): restore the job's world, launch the job
 * and wait in one poll(2) loop on signals (self-pipe), the job's output,
 * the provider's notice pipe and the checkpoint method's fd, with timers
 * for the method's answer, periodic checkpoints and the stop's deadlines;
 * then stop what is left of the job and let the VM go. What a checkpoint
 * or a notice does is attempt-ckpt.c's; the loop never blocks on storage.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jobenv.h"
#include "run-int.h"
#include "util.h"

static void
tl_to_joblog(void *arg, const char *line)
{
	sr_joblog_note(arg, "%s", line);
}

/* The attempt's log lines, to the caller's hook as well (the agent ships
 * them to its queue). */
static void
joblog_to_hook(void *arg, const char *buf, size_t len)
{
	struct run *r = arg;

	r->hooks->log(r->hooks->arg, r->attempt, buf, len);
}

/* The caller asked for the job to stop (hooks->stop_fd was readable). */
static void
stop_request(struct run *r, struct attempt *a)
{
	int checkpoint = 0;

	if (r->hooks->stop(r->hooks->arg, &checkpoint) == 1)
		sr_run_cancel(r, a, checkpoint);
}

static void
free_launch(struct sr_launch *l)
{
	int i;

	sr_jobenv_free(l->env);
	for (i = 0; l->proc_env != NULL && i < l->nprocs; i++)
		sr_jobenv_free(l->proc_env[i]);
	free(l->proc_env);
}

/* Start the VM and spawn the ranks: 0 they run, or -1 with *end (and err). */
static int
launch(struct run *r, struct attempt *a, long long step, int prev_world,
    enum sr_attempt_end *end, char *err)
{
	struct sr_launch l;
	int rc;

	memset(&l, 0, sizeof l);
	l.argv = r->js->argv;
	l.nprocs = a->nranks;
	*end = SR_ATTEMPT_ERROR;
	/* a gang's port is node 0's, chosen once for the gang */
	if (r->hooks->gang.nodes > 1)
		r->master_port = r->hooks->gang.master_port;
	else if (r->ranks.world > 0 && sr_ranks_free_port(&r->master_port, err) == -1)
		return -1;
	r->method->ops->launch(r->method, &l);
	if (sr_provider_start_vm(r->prov, r->vm, err) == -1) {
		free_launch(&l);
		return -1;
	}
	rc = sr_run_ranks_spawn(r, a, &l, step, prev_world, end, err);
	free_launch(&l);
	if (rc == -1)
		sr_provider_stop_vm(r->prov, NULL);
	return rc;
}

/* SIGTERM to a run whose caller asked for it (an agent, which systemd
 * stops with SIGTERM when its machine shuts down): a notice, by [provider]
 * grace, so the job is checkpointed and stopped and its lease released;
 * no next machine follows, and the caller ends. */
static void
term_notice(struct run *r, struct attempt *a)
{
	struct sr_notice n;

	memset(&n, 0, sizeof n);
	n.kind = SR_NOTICE_PREEMPT;
	n.seen = sr_now();
	n.deadline = n.seen + r->js->provider.grace;
	snprintf(n.reason, sizeof n.reason, "SIGTERM: this machine's agent is stopping");
	r->interrupted = SIGTERM;
	sr_run_notice(r, a, &n, 1);
}

static void
handle_signal(struct run *r, struct attempt *a, int sig)
{
	switch (sig) {
	case SIGCHLD:
		sr_run_ranks_reap(r, a);
		break;
	case SIGWINCH:
		sr_term_resize(r->term);
		break;
	case SIGTERM:
		if (sr_provider_on_signal(r->prov, sig))
			break;
		if (r->hooks->term_notice && !a->noticed && !a->job_done && !a->stopping) {
			term_notice(r, a);
			break;
		}
		/* FALLTHROUGH */
	case SIGINT:
	case SIGHUP:
	case SIGQUIT:
		sr_run_user_signal(r, a, sig);
		break;
	default:
		break;
	}
}

/* Milliseconds until the nearest timer, capped at 1 s. */
static int
next_timeout(struct run *r, struct attempt *a)
{
	double now = sr_mono(), t = 1.0, poll_every = r->method->ops->state_poll;

	if (a->req_pending && poll_every > 0 && poll_every < t)
		t = poll_every;
	if (a->next_periodic > 0 && a->next_periodic - now < t)
		t = a->next_periodic - now;
	if (a->stopping && a->kill_at - now < t)
		t = a->kill_at - now;
	if (a->rank_stop_at > 0 && a->rank_stop_at - now < t)
		t = a->rank_stop_at - now;
	if (a->job_done)
		t = t < 0.05 ? t : 0.05;
	return t <= 0 ? 0 : (int)(t * 1000) + 1;
}

static void
on_timers(struct run *r, struct attempt *a)
{
	double now = sr_mono();

	sr_run_check_request(r, a);
	sr_run_ranks_timer(r, a, now);
	if (a->noticed && !a->job_done && !a->stopping && sr_now() >= a->notice.deadline)
		sr_run_begin_stop(r, a, "the machine is going away");
	if (a->stopping && !a->job_done && now >= a->kill_at) {
		sr_tl(&r->tl, 0, "stop", "grace period over; SIGKILL to the job%s",
		    a->nranks > 1 ? "'s ranks still running" : "");
		sr_run_signal_job(a, SIGKILL);
		a->kill_at = now + 3600;
	}
	sr_run_periodic(r, a, now);
}

static void
feed_output(struct rank *k, int *open, int stream, int fd)
{
	int rc = sr_joblog_feed(k->log, stream, fd, stream == 1 ? STDOUT_FILENO : STDERR_FILENO);

	if (rc <= 0) {
		close(fd);
		*open = 0;
	}
}

/* Is any rank's output pipe still open? */
static int
pipes_open(const struct attempt *a)
{
	int i;

	for (i = 0; i < a->nranks; i++)
		if (a->rank[i].out_open || a->rank[i].err_open)
			return 1;
	return 0;
}

/* The last of the output, then the pipes closed. */
static void
drain(struct attempt *a)
{
	struct rank *k;
	int i;

	for (i = 0; i < a->nranks; i++) {
		k = &a->rank[i];
		if (k->out_open)
			feed_output(k, &k->out_open, 1, a->child[i].out_fd);
		if (k->err_open)
			feed_output(k, &k->err_open, 2, a->child[i].err_fd);
		if (k->out_open) {
			close(a->child[i].out_fd);
			k->out_open = 0;
		}
		if (k->err_open) {
			close(a->child[i].err_fd);
			k->err_open = 0;
		}
	}
}

/* Every rank exited and no save runs: 1 when the attempt is over. Pipes
 * still open then belong to leftovers of the job: stop them, then drain.
 * A job killed from outside may have died of what spotrun gets too, and a
 * little later (Slurm's SIGTERM to every process of the job): its notice
 * is waited for a moment, to end the attempt as preempted. */
static int
job_gone(struct run *r, struct attempt *a)
{
	if (!a->noticed && sr_run_killed_outside(a) &&
	    sr_mono() - a->job_done_at < SR_OUTSIDE_NOTICE_WAIT)
		return 0;
	if (!pipes_open(a))
		return 1;
	if (sr_mono() - a->job_done_at <= 1.0)
		return 0;
	sr_run_ranks_stop(r, a, 2.0);
	drain(a);
	return 1;
}

/* One wait of the loop and what it brought; -1 when poll failed (err). */
static int
watch_once(struct run *r, struct attempt *a, char *err)
{
	struct pollfd *pf = sr_calloc((size_t)(6 + 2 * a->nranks), sizeof *pf);
	int *which = sr_calloc((size_t)(6 + 2 * a->nranks), sizeof *which);
	struct sr_notice n;
	struct rank *k;
	int np = 0, i, j, i_sig, i_prov, i_m = -1, i_lease = -1, i_stop = -1, i_peer = -1, sig;
	int rc = 0;
	int mfd = r->method->ops->fd(r->method), lfd = sr_run_lease_fd(r);

	i_sig = np;
	pf[np++] = (struct pollfd){ .fd = r->sigfd, .events = POLLIN };
	/* which[]: 2 * rank + (0 out, 1 err) for the job's pipes */
	for (i = 0; i < a->nranks; i++) {
		if (a->rank[i].out_open) {
			which[np] = 2 * i;
			pf[np++] = (struct pollfd){ .fd = a->child[i].out_fd, .events = POLLIN };
		}
		if (a->rank[i].err_open) {
			which[np] = 2 * i + 1;
			pf[np++] = (struct pollfd){ .fd = a->child[i].err_fd, .events = POLLIN };
		}
	}
	i_prov = np;
	pf[np++] = (struct pollfd){ .fd = sr_provider_fd(r->prov), .events = POLLIN };
	if (mfd >= 0) {
		i_m = np;
		pf[np++] = (struct pollfd){ .fd = mfd, .events = POLLIN };
	}
	if (lfd >= 0) {
		i_lease = np;
		pf[np++] = (struct pollfd){ .fd = lfd, .events = POLLIN };
	}
	if (r->hooks->stop_fd >= 0 && !r->cancelled) {
		i_stop = np;
		pf[np++] = (struct pollfd){ .fd = r->hooks->stop_fd, .events = POLLIN };
	}
	if (r->hooks->notice_fd >= 0 && !a->noticed) {
		i_peer = np;
		pf[np++] = (struct pollfd){ .fd = r->hooks->notice_fd, .events = POLLIN };
	}
	if (poll(pf, (nfds_t)np, next_timeout(r, a)) == -1 && errno != EINTR) {
		rc = sr_errno(err, "poll");
		goto out;
	}
	if (pf[i_sig].revents & POLLIN) {
		while (sr_sig_next(r->sigfd, &sig) == 1)
			handle_signal(r, a, sig);
		/* A signal may have been the notice (the signal provider):
		 * read it in this wake, as poll's answer predates it. */
		pf[i_prov].revents |= POLLIN;
	}
	for (j = i_sig + 1; j < i_prov; j++) {
		if (!(pf[j].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		k = &a->rank[which[j] / 2];
		if (which[j] % 2 == 0)
			feed_output(k, &k->out_open, 1, pf[j].fd);
		else
			feed_output(k, &k->err_open, 2, pf[j].fd);
	}
	if (pf[i_prov].revents & POLLIN) {
		while (sr_provider_read(r->prov, &n, err) == 1)
			sr_run_notice(r, a, &n, 1);
	}
	if (i_m >= 0 && (pf[i_m].revents & POLLIN)) {
		/* A job that has exited by now, its SIGCHLD not yet seen,
		 * ended on its own: not stopped after a notice's commit, so
		 * not counted preempted, and its end not run again. */
		sr_run_ranks_reap(r, a);
		sr_run_method_news(r, a);
		sr_run_user_release(r, a);
	}
	if (i_lease >= 0 && (pf[i_lease].revents & POLLIN) && sr_run_lease_gone(r, NULL)) {
		/* a job that exited already ended on its own: its end is
		 * recorded if the lease is still this run's (run-lease.c) */
		sr_run_ranks_reap(r, a);
		sr_run_give_up(r, a);
	}
	if (i_stop >= 0 && (pf[i_stop].revents & POLLIN))
		stop_request(r, a);
	/* another node of the gang got a notice: this one's, too; or node
	 * 0 asked for a checkpoint */
	if (i_peer >= 0 && (pf[i_peer].revents & POLLIN)) {
		switch (r->hooks->notice(r->hooks->arg, &n)) {
		case 1:
			sr_run_notice(r, a, &n, 0);
			break;
		case 2:
			sr_run_request_periodic(r, a, n.deadline);
			break;
		}
	}
	on_timers(r, a);
out:
	free(pf);
	free(which);
	return rc;
}

/* Rank 0's metrics file, shipped to the store from now on (metrics.h):
 * node 0's alone in a gang. Not shipped is no failure of the attempt. */
static void
metrics_start(struct run *r, struct attempt *a)
{
	char err[SR_ERRMAX];

	if (r->hooks->gang.nodes > 1 && r->hooks->gang.node != 0)
		return;
	a->metrics_path = sr_asprintf("%s/attempt-%d.metrics", r->log_dir, r->attempt);
	a->metrics = sr_metrics_ship_start(r->st, r->js->name, r->epoch, r->attempt,
	    a->metrics_path, 0, err);
	if (a->metrics == NULL) {
		sr_tl(&r->tl, 1, "warning", "metrics: %s; SPOTRUN_METRICS is /dev/null", err);
		free(a->metrics_path);
		a->metrics_path = NULL;
	}
}

/* The last of the metrics shipped, and what was wrong with them said once. */
static void
metrics_stop(struct run *r, struct attempt *a)
{
	struct sr_metrics_counts c;
	char err[SR_ERRMAX];

	if (a->metrics == NULL)
		return;
	if (sr_metrics_ship_stop(a->metrics, &c, err) == -1)
		sr_tl(&r->tl, 1, "warning", "%s", err);
	a->metrics = NULL;
	free(a->metrics_path);
	a->metrics_path = NULL;
	if (c.bad > 0)
		sr_tl(&r->tl, 1, "warning", "metrics: %ld line%s of SPOTRUN_METRICS skipped, not "
		    "of the form step=N name=value ... (the first: %s)", c.bad, c.bad == 1 ? "" : "s",
		    c.first_bad);
	if (c.thinned > 0)
		sr_tl(&r->tl, 0, "metrics", "%ld lines, %ld kept: past %d a line, only steps at a "
		    "stride", c.lines, c.kept, SR_METRICS_FULL);
}

/* Stop what is left of the job and let the VM go. */
static enum sr_attempt_end
end_attempt(struct run *r, struct attempt *a, char *err)
{
	struct sr_notice left;
	int own_end;

	/* Now that every notice that came with the job's end is in. */
	if (a->job_done)
		sr_run_job_ended(r, a);
	sr_run_ranks_stop(r, a, 2.0);
	metrics_stop(r, a);
	sr_run_job_saves(r, a);
	if (a->req_pending)
		r->method->ops->clear(r->method);
	if (r->method->ops->stop != NULL)
		r->method->ops->stop(r->method, sr_run_next_here(r));
	/* The notice's acknowledgment, if one went out, ends before the VM
	 * is let go (bounded by its request timeout), so it is not lost. */
	switch (sr_provider_ack_wait(r->prov, err)) {
	case 1:
		sr_tl(&r->tl, 0, "ack", "the notice is acknowledged: the machine may go");
		break;
	case -1:
		sr_tl(&r->tl, 1, "warning", "%s", err);
		break;
	}
	/* This machine's notice that came as the attempt ended, unread (a
	 * gang's run stopping for another node's): the caller must learn
	 * that its machine goes, or an agent would join the gang's next
	 * epoch on it, to be stopped again at once. */
	if (sr_provider_stop_vm(r->prov, &left) == 1 && (a->noticed || a->stopping))
		sr_run_notice(r, a, &left, 1);
	/* A job that finished on its own (exit 0, not stopped by us) as a
	 * notice came is done: running its end again on the next machine
	 * would do its last steps twice. One that crashed on its own after a
	 * simulated notice, which nothing but spotrun saw, is a crash: [retry]
	 * restarts it or not. */
	a->ended = a->job_done ? sr_now() - (sr_mono() - a->job_done_at) : sr_now();
	own_end = a->job_done && (!a->stopping || a->job_done_at < a->stop_at);
	if (a->noticed && !(own_end && (sr_exit_code(a->status) == 0 ||
	    (sr_provider_simulated(r->prov) && !sr_run_killed_outside(a))))) {
		sr_run_count_lost(r, a);
		return SR_ATTEMPT_PREEMPTED;
	}
	/* The notice was counted when it came; the attempt was not preempted
	 * after all (status and the last line count preempted attempts). */
	if (a->noticed)
		r->preemptions--;
	return SR_ATTEMPT_EXITED;
}

/* The attempt's log, which gets the timeline from now on (its restore
 * included; the caller closes it after what follows the attempt), opening
 * with the wall-clock time its offsets count from. */
static int
open_log(struct run *r, struct attempt *a, char *err)
{
	char *logpath = sr_asprintf("%s/attempt-%d.log", r->log_dir, r->attempt);
	char zero[64], t0[64];

	a->log = sr_joblog_open(logpath, sr_mono(), err);
	free(logpath);
	if (a->log == NULL)
		return -1;
	if (r->hooks->log != NULL)
		sr_joblog_set_sink(a->log, joblog_to_hook, r);
	sr_joblog_note(a->log, "attempt %d of run %s of %s: this log's +0000.000 is %s; the "
	    "timeline's 00:00 is %s", r->attempt, r->run_id, r->js->name, sr_tl_wall(sr_now(), 1, zero, sizeof zero),
	    sr_tl_wall(r->tl.t0, 1, t0, sizeof t0));
	sr_joblog_set_term(a->log, r->term);
	sr_tl_set_sink(&r->tl, tl_to_joblog, a->log);
	return 0;
}

/* "python3 train.py (pid 123)", or with ranks "(4 ranks: pids 123-126)". */
static void
say_started(struct run *r, struct attempt *a)
{
	pid_t lo = a->child[0].pid, hi = a->child[a->nranks - 1].pid;

	if (a->nranks == 1)
		sr_tl(&r->tl, 0, "started", "%s (pid %ld)", r->js->command, (long)lo);
	else if (hi - lo == a->nranks - 1)
		sr_tl(&r->tl, 0, "started", "%s (%d ranks: pids %ld-%ld, MASTER_PORT %d)",
		    r->js->command, a->nranks, (long)lo, (long)hi, r->master_port);
	else
		sr_tl(&r->tl, 0, "started", "%s (%d ranks: pids %ld, ..., %ld, MASTER_PORT %d)",
		    r->js->command, a->nranks, (long)lo, (long)hi, r->master_port);
}

/* Resumed on fewer ranks than wrote the checkpoint: what the ranks gone
 * wrote (their rank-R folders) is part of the directory, so of every
 * later checkpoint, until the job removes it (spotrun.torch does). Said,
 * since nothing else tells why each checkpoint stays that large. */
static void
say_fewer_ranks(struct run *r, int prev_world)
{
	int world = (r->hooks->gang.nodes > 1 ? r->hooks->gang.nodes : 1) * r->ranks.world;
	char gone[64];

	if (r->ranks.world <= 0 || prev_world <= world)
		return;
	if (prev_world - world == 1)
		snprintf(gone, sizeof gone, "rank %d (rank-%d/", world, world);
	else
		snprintf(gone, sizeof gone, "ranks %d-%d (rank-%d/ to rank-%d/", world,
		    prev_world - 1, world, prev_world - 1);
	sr_tl(&r->tl, 1, "warning", "resumed on %d rank%s from a checkpoint of %d: what %s "
	    "in the checkpoint directory) wrote stays in every later checkpoint until the "
	    "job removes it (spotrun.torch does)", world, world == 1 ? "" : "s", prev_world, gone);
}

enum sr_attempt_end
sr_run_attempt(struct run *r, struct attempt *a, char *err)
{
	enum sr_attempt_end end;
	long long step;
	int prev_world;

	memset(a, 0, sizeof *a);
	if (open_log(r, a, err) == -1 || sr_run_ranks_init(r, a, err) == -1 ||
	    sr_run_restore(r, &step, &prev_world, err) == -1)
		return SR_ATTEMPT_ERROR;
	r->method->ops->clear(r->method);

	metrics_start(r, a);
	if (launch(r, a, step, prev_world, &end, err) == -1) {
		metrics_stop(r, a);
		return end;
	}
	if (r->js->interval > 0 && r->hooks->gang.node == 0)	/* a gang's: node 0's */
		a->next_periodic = sr_mono() + r->js->interval;
	say_started(r, a);
	say_fewer_ranks(r, prev_world);
	sr_run_record_start(r, a, step);
	sr_run_tell(r, a, SR_RUN_EV_ATTEMPT);

	while (!(a->job_done && !a->saving && job_gone(r, a))) {
		if (watch_once(r, a, err) == -1)
			break;
	}
	return end_attempt(r, a, err);
}
