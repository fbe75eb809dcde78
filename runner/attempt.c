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

#include "defaults.h"
#include "jobenv.h"
#include "run-int.h"
#include "util.h"

extern char **environ;

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

/* The job's environment for this attempt, with the method's variables. */
static char **
job_env(struct run *r, const struct sr_launch *l, long long step)
{
	struct sr_jobenv_vars v;
	struct sr_jobenv_proc p;

	memset(&v, 0, sizeof v);
	v.attempt = r->attempt;
	v.ckpt_dir = r->ckpt_dir;
	v.method_env = l->env;
	v.resume_step = step;
	v.provider = sr_provider_name(r->prov);
	v.world_size = 1;
	v.python_dir = sr_default_python_dir();
	/* One process sees all its GPUs for now; see BUGS in spotrun(1). */
	memset(&p, 0, sizeof p);
	p.rank = 0;
	p.first_gpu = 0;
	p.ngpus = r->gpus;
	return sr_jobenv_build(environ, r->js, &v, &p);
}

/* The command could not be executed: collect the child that says so. */
static void
exec_failed(struct run *r, struct attempt *a, const char *prog, char *err)
{
	int status;

	errno = a->child.exec_errno;
	sr_errno(err, "run %s", prog);
	sr_child_stop(&a->child, 1);
	while (sr_reap(&a->child, &status) == 0 && waitpid(a->child.pid, &status, 0) == -1 &&
	    errno == EINTR)
		;
	if (a->child.out_fd != -1)
		close(a->child.out_fd);
	if (a->child.err_fd != -1)
		close(a->child.err_fd);
	sr_provider_stop_vm(r->prov);
}

/* Start the VM and spawn the job: 0 it runs, or -1 with *end (and err). */
static int
launch(struct run *r, struct attempt *a, long long step, enum sr_attempt_end *end, char *err)
{
	struct sr_launch l = { r->js->argv, NULL };
	struct sr_spawn_opts so;
	char **env;
	int rc;

	r->method->ops->launch(r->method, &l);
	env = job_env(r, &l, step);
	sr_jobenv_free(l.env);
	*end = SR_ATTEMPT_ERROR;
	if (sr_provider_start_vm(r->prov, r->vm, err) == -1) {
		sr_jobenv_free(env);
		return -1;
	}
	memset(&so, 0, sizeof so);
	so.argv = l.argv;
	so.envp = env;
	so.cwd = r->js->workdir;
	so.capture = 1;
	so.stdin_null = 1;	/* a background group reading the terminal would stop on SIGTTIN */
	so.parent_death_signal = SIGKILL;
	a->started = sr_now();
	rc = sr_spawn(&so, &a->child, err);
	sr_jobenv_free(env);
	if (rc == -1) {
		sr_provider_stop_vm(r->prov);
		return -1;
	}
	if (a->child.exec_errno != 0) {
		*end = SR_ATTEMPT_EXEC_FAILED;
		exec_failed(r, a, l.argv[0], err);
		return -1;
	}
	a->out_open = a->child.out_fd != -1;
	a->err_open = a->child.err_fd != -1;
	return 0;
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
	sr_run_notice(r, a, &n);
}

static void
handle_signal(struct run *r, struct attempt *a, int sig)
{
	int status;

	switch (sig) {
	case SIGCHLD:
		if (!a->leader_done && sr_reap(&a->child, &status) == 1) {
			a->leader_done = 1;
			a->status = status;
			a->leader_done_at = sr_mono();
		} else if (a->leader_done) {
			(void)sr_reap(&a->child, &status);
		}
		break;
	case SIGWINCH:
		sr_term_resize(r->term);
		break;
	case SIGTERM:
		if (sr_provider_on_signal(r->prov, sig))
			break;
		if (r->hooks->term_notice && !a->noticed && !a->leader_done && !a->stopping) {
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
	if (a->leader_done)
		t = t < 0.05 ? t : 0.05;
	return t <= 0 ? 0 : (int)(t * 1000) + 1;
}

static void
on_timers(struct run *r, struct attempt *a)
{
	double now = sr_mono();

	sr_run_check_request(r, a);
	if (a->noticed && !a->leader_done && !a->stopping && sr_now() >= a->notice.deadline)
		sr_run_begin_stop(r, a, "the machine is going away");
	if (a->stopping && !a->leader_done && now >= a->kill_at) {
		sr_tl(&r->tl, 0, "stop", "grace period over; SIGKILL to the job");
		sr_run_signal_job(a, SIGKILL);
		a->kill_at = now + 3600;
	}
	sr_run_periodic(r, a, now);
}

static void
feed_output(struct attempt *a, int *open, int stream, int fd)
{
	int rc = sr_joblog_feed(a->log, stream, fd, stream == 1 ? STDOUT_FILENO : STDERR_FILENO);

	if (rc <= 0) {
		close(fd);
		*open = 0;
	}
}

/* The leader exited and no save runs: 1 when the attempt is over. Pipes
 * still open then belong to leftovers of the job: stop them, then drain.
 * A job killed from outside may have died of what spotrun gets too, and a
 * little later (Slurm's SIGTERM to every process of the job): its notice
 * is waited for a moment, to end the attempt as preempted. */
static int
leader_gone(struct attempt *a)
{
	if (!a->noticed && sr_run_killed_outside(a) &&
	    sr_mono() - a->leader_done_at < SR_OUTSIDE_NOTICE_WAIT)
		return 0;
	if (!a->out_open && !a->err_open)
		return 1;
	if (sr_mono() - a->leader_done_at <= 1.0)
		return 0;
	sr_child_stop(&a->child, 2.0);
	if (a->out_open)
		feed_output(a, &a->out_open, 1, a->child.out_fd);
	if (a->err_open)
		feed_output(a, &a->err_open, 2, a->child.err_fd);
	if (a->out_open) {
		close(a->child.out_fd);
		a->out_open = 0;
	}
	if (a->err_open) {
		close(a->child.err_fd);
		a->err_open = 0;
	}
	return 1;
}

/* One wait of the loop and what it brought; -1 when poll failed (err). */
static int
watch_once(struct run *r, struct attempt *a, char *err)
{
	struct pollfd pf[7];
	struct sr_notice n;
	int np = 0, i_sig, i_out = -1, i_err = -1, i_prov, i_m = -1, i_lease = -1, i_stop = -1, sig;
	int mfd = r->method->ops->fd(r->method), lfd = sr_run_lease_fd(r);

	i_sig = np;
	pf[np++] = (struct pollfd){ .fd = r->sigfd, .events = POLLIN };
	if (a->out_open) {
		i_out = np;
		pf[np++] = (struct pollfd){ .fd = a->child.out_fd, .events = POLLIN };
	}
	if (a->err_open) {
		i_err = np;
		pf[np++] = (struct pollfd){ .fd = a->child.err_fd, .events = POLLIN };
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
	if (poll(pf, (nfds_t)np, next_timeout(r, a)) == -1 && errno != EINTR)
		return sr_errno(err, "poll");
	if (pf[i_sig].revents & POLLIN) {
		while (sr_sig_next(r->sigfd, &sig) == 1)
			handle_signal(r, a, sig);
		/* A signal may have been the notice (the signal provider):
		 * read it in this wake, as poll's answer predates it. */
		pf[i_prov].revents |= POLLIN;
	}
	if (i_out >= 0 && (pf[i_out].revents & (POLLIN | POLLHUP | POLLERR)))
		feed_output(a, &a->out_open, 1, a->child.out_fd);
	if (i_err >= 0 && (pf[i_err].revents & (POLLIN | POLLHUP | POLLERR)))
		feed_output(a, &a->err_open, 2, a->child.err_fd);
	if (pf[i_prov].revents & POLLIN) {
		while (sr_provider_read(r->prov, &n, err) == 1)
			sr_run_notice(r, a, &n);
	}
	if (i_m >= 0 && (pf[i_m].revents & POLLIN)) {
		sr_run_method_news(r, a);
		sr_run_user_release(r, a);
	}
	if (i_lease >= 0 && (pf[i_lease].revents & POLLIN) && sr_run_lease_gone(r, NULL))
		sr_run_give_up(r, a);
	if (i_stop >= 0 && (pf[i_stop].revents & POLLIN))
		stop_request(r, a);
	on_timers(r, a);
	return 0;
}

/* Stop what is left of the job and let the VM go. */
static enum sr_attempt_end
end_attempt(struct run *r, struct attempt *a, char *err)
{
	/* Now that every notice that came with the job's end is in. */
	if (a->leader_done)
		sr_run_job_ended(r, a);
	sr_child_stop(&a->child, 2.0);
	if (a->req_pending)
		r->method->ops->clear(r->method);
	if (r->method->ops->stop != NULL)
		r->method->ops->stop(r->method);
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
	sr_provider_stop_vm(r->prov);
	/* A job that finished on its own (exit 0, not stopped by us) as a
	 * notice came is done: running its end again on the next machine
	 * would do its last steps twice. */
	if (a->noticed && !(a->leader_done && sr_exit_code(a->status) == 0 &&
	    (!a->stopping || a->leader_done_at < a->stop_at))) {
		double ended = a->leader_done ? sr_now() - (sr_mono() - a->leader_done_at) : sr_now();
		r->lost += ended - (a->last_state_at > 0 ? a->last_state_at : a->started);
		return SR_ATTEMPT_PREEMPTED;
	}
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

enum sr_attempt_end
sr_run_attempt(struct run *r, struct attempt *a, char *err)
{
	enum sr_attempt_end end;
	long long step;

	memset(a, 0, sizeof *a);
	a->child.pid = -1;
	a->child.out_fd = a->child.err_fd = -1;
	if (open_log(r, a, err) == -1 || sr_run_restore(r, &step, err) == -1)
		return SR_ATTEMPT_ERROR;
	r->method->ops->clear(r->method);

	if (launch(r, a, step, &end, err) == -1)
		return end;
	if (r->js->interval > 0)
		a->next_periodic = sr_mono() + r->js->interval;
	sr_tl(&r->tl, 0, "started", "%s (pid %ld)", r->js->command, (long)a->child.pid);
	sr_run_record_start(r, a, step);
	sr_run_tell(r, a, SR_RUN_EV_ATTEMPT);

	while (!(a->leader_done && !a->saving && leader_gone(a))) {
		if (watch_once(r, a, err) == -1)
			break;
	}
	return end_attempt(r, a, err);
}
