/*
 * run.c: the supervisor behind `spotrun run`. One run is a series of
 * attempts (attempt.c), each playing one VM: after a preemption the next
 * VM follows when the provider plays one (local); a job that exits non-zero
 * is restarted as [retry] says, with a doubling backoff. The run ends with
 * a summary line and an outcome (run.h); the exit status is the caller's.
 * The parts and what each holds: run-int.h.
 */
#include "config.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "data.h"
#include "run-int.h"
#include "util.h"

/* Sleep for the restart backoff; 1 if a signal from the user cut it short. */
static int
backoff_wait(struct run *r, double seconds)
{
	double until = sr_mono() + seconds;
	int sig;

	for (;;) {
		struct pollfd pf = { .fd = r->sigfd, .events = POLLIN };
		double left = until - sr_mono();
		if (left <= 0)
			return 0;
		if (poll(&pf, 1, (int)(left * 1000) + 1) > 0) {
			while (sr_sig_next(r->sigfd, &sig) == 1) {
				if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT) {
					r->interrupted = sig;
					return 1;
				}
			}
		}
	}
}

static int
restart_allowed(const struct run *r, int code)
{
	size_t i;

	if (r->restarts >= r->js->max_restarts)
		return 0;
	if (r->js->n_on_exit_codes == 0)
		return 1;
	for (i = 0; i < r->js->n_on_exit_codes; i++) {
		if (r->js->on_exit_codes[i] == code)
			return 1;
	}
	return 0;
}

/* The run's last line, with the exit status the caller gives for res;
 * "interrupted" says first what the user's signal left. */
static void
final_line(struct run *r, const struct sr_run_opts *o, const char *what,
    const struct sr_run_result *res)
{
	int code = o->exit_code != NULL ? o->exit_code(res) : res->code;
	char lost[32], restarts[32] = "", why[256] = "";

	if (r->method != NULL && r->method->ops->settle != NULL)
		r->method->ops->settle(r->method);	/* its lines before the last */
	sr_run_record_flush(r);
	if (r->restarts > 0)
		snprintf(restarts, sizeof restarts, ", %d restart%s", r->restarts, r->restarts == 1 ? "" : "s");
	if (strcmp(what, "interrupted") == 0) {
		sr_run_interrupt_what(r, why, sizeof why - 2);
		strcat(why, "; ");
	}
	sr_tl(&r->tl, 1, what, "exit %d: %s%d attempt%s, %d preemption%s%s, %s of work lost, %d checkpoint%s",
	    code, why, r->attempt, r->attempt == 1 ? "" : "s", r->preemptions, r->preemptions == 1 ? "" : "s",
	    restarts, sr_fmt_duration(r->lost, lost, sizeof lost), r->checkpoints,
	    r->checkpoints == 1 ? "" : "s");
}

/* The run's first line: the job, where it runs, on what, its store, and
 * when it started. */
static void
announce(struct run *r)
{
	struct sr_facts f;
	char err[SR_ERRMAX], how[64] = "", t0[64];

	memset(&f, 0, sizeof f);
	if (sr_provider_facts(r->prov, &f, err) == -1)
		strlcpy(f.instance_type, "unknown machine", sizeof f.instance_type);
	/* With "auto": what it chose and what finding out cost. */
	if (sr_provider_detect_seconds(r->prov) >= 0)
		snprintf(how, sizeof how, " (auto, detected in %.3f s)", sr_provider_detect_seconds(r->prov));
	/* The timeline's times are elapsed: say once what wall-clock time they
	 * count from. */
	fprintf(stderr, "spotrun: %s on %s%s, %s, store %s; the timeline's 00:00 is %s\n",
	    r->js->name, sr_provider_name(r->prov), how, f.instance_type, sr_store_url(r->st),
	    sr_tl_wall(r->tl.t0, 1, t0, sizeof t0));
}

/* The run's id: its start time (UTC) and pid, and ".N" as its log
 * folder has it (run-setup.c), so that an agent's runs in one second are
 * told apart; it names its records. */
static void
name_run(struct run *r)
{
	struct tm tm;
	char stamp[24];

	gmtime_r(&r->named_at, &tm);
	strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
	if (r->name_seq > 1)
		snprintf(r->run_id, sizeof r->run_id, "%s-%ld.%d", stamp, (long)getpid(),
		    r->name_seq);
	else
		snprintf(r->run_id, sizeof r->run_id, "%s-%ld", stamp, (long)getpid());
}

/* The lease was lost: the run ends so, having written nothing more. */
static void
end_lost(struct run *r, const struct sr_run_opts *o, struct sr_run_result *res)
{
	res->outcome = SR_RUN_LEASE_LOST;
	sr_err(res->err, "job %s stopped: %s", r->js->name, r->lease_why);
	final_line(r, o, "lost", res);
}

/* The job exited with code: restart it (1, after the backoff) or end the
 * run with *res filled (0). */
static int
after_exit(struct run *r, struct attempt *a, const struct sr_run_opts *o, int code,
    struct sr_run_result *res)
{
	struct sr_jobspec *js = r->js;
	double delay = js->backoff;
	char d[32];
	int k;

	res->code = code;
	res->outcome = code == 0 ? SR_RUN_FINISHED : SR_RUN_FAILED;
	if (code == 0) {
		/* the last line first: an agent ships it before the lease ends */
		final_line(r, o, "finished", res);
		switch (sr_run_lease_finish(r, !a->stopping)) {
		case 0:
			/* its end, not written while the lease looked lost */
			if (a->rec.ended == 0)
				sr_run_record_end(r, a, "exit 0", 0, 0);
			sr_run_mark_finished(r);
			break;
		case -2:
			end_lost(r, o, res);
			break;
		}	/* 1: a gang's other node, whose node 0 writes the marker */
		return 0;
	}
	if (r->interrupted || r->cancelled || !restart_allowed(r, code)) {
		final_line(r, o, r->interrupted ? "interrupted" : "failed", res);
		return 0;
	}
	for (k = 0; k < r->restarts && delay < js->backoff_max; k++)
		delay *= 2;
	if (delay > js->backoff_max)
		delay = js->backoff_max;
	r->restarts++;
	sr_tl(&r->tl, 1, "restart", "exit %d; restart %d of %d in %s", code, r->restarts,
	    js->max_restarts, sr_fmt_duration(delay, d, sizeof d));
	if (!backoff_wait(r, delay)) {
		/* the next attempt starts from the newest checkpoint */
		sr_run_count_lost(r, a);
		return 1;
	}
	r->restarts--;		/* announced, never made */
	final_line(r, o, "interrupted", res);
	return 0;
}

/* How attempt a ended: go on with another (1), or end the run (0, *res). */
static int
after_attempt(struct run *r, struct attempt *a, enum sr_attempt_end end,
    const struct sr_run_opts *o, struct sr_run_result *res)
{
	char what[32];
	int code;

	code = a->job_done ? sr_exit_code(a->status) : -1;
	/* A job that ended on its own with 0 as its lease was given up has
	 * done its end: after_exit records it if the lease is still ours. */
	if (sr_run_lease_gone(r, NULL) && !(end == SR_ATTEMPT_EXITED && code == 0 && !a->stopping)) {
		end_lost(r, o, res);
		return 0;
	}
	if (r->cancelled && !(end == SR_ATTEMPT_EXITED && code == 0)) {
		sr_run_record_end(r, a, "cancelled", code, 0);
		res->outcome = SR_RUN_CANCELLED;
		res->code = code;
		final_line(r, o, "cancelled", res);
		return 0;
	}
	switch (end) {
	case SR_ATTEMPT_ERROR:
		sr_run_record_end(r, a, "spotrun error", -1, 0);
		res->outcome = SR_RUN_ERR_ATTEMPT;
		return 0;
	case SR_ATTEMPT_EXEC_FAILED:
		res->outcome = SR_RUN_CANNOT_EXEC;
		res->exec_errno = a->exec_errno;
		res->code = sr_exec_code(a->exec_errno);
		sr_run_record_end(r, a, "cannot run", res->code, 0);
		return 0;
	case SR_ATTEMPT_PREEMPTED:
		sr_run_record_end(r, a, "preempted", a->job_done ? sr_exit_code(a->status) : -1,
		    sr_run_next_here(r));
		if (!r->interrupted && sr_provider_next_vm(r->prov)) {
			res->next_vm = 1;
			if (!r->hooks->one_vm) {
				r->vm++;
				sr_tl(&r->tl, 1, "preempted", "next machine");
				return 1;
			}
		}
		res->outcome = SR_RUN_PREEMPTED;
		final_line(r, o, "preempted", res);
		return 0;
	case SR_ATTEMPT_EXITED:
		break;
	}
	code = sr_exit_code(a->status);
	snprintf(what, sizeof what, "exit %d", code);
	sr_run_record_end(r, a, what, code, 0);
	return after_exit(r, a, o, code, res);
}

/* A run that ended for good (the job finished, failed without a restart,
 * could not be executed, was cancelled, or is another run's now) leaves on this machine only its logs and the
 * lock: the method's copy of the job's state goes, as no later run uses it.
 * After a preemption it stays (the machine is going; no time to spend),
 * and after spotrun's own errors, for a look. */
static void
discard_local(struct run *r, enum sr_run_outcome oc)
{
	char err[SR_ERRMAX];

	if (r->method == NULL || r->method->ops->discard == NULL ||
	    (oc != SR_RUN_FINISHED && oc != SR_RUN_FAILED && oc != SR_RUN_CANNOT_EXEC &&
	    oc != SR_RUN_CANCELLED && oc != SR_RUN_LEASE_LOST))
		return;
	if (r->method->ops->discard(r->method, err) == -1)
		sr_tl(&r->tl, 1, "warning", "%s", err);
}

static void
data_say(void *arg, const char *line)
{
	struct run *r = arg;

	sr_tl(&r->tl, 1, "data", "%s", line + (strncmp(line, "data: ", 6) == 0 ? 6 : 0));
}

/* A signal from the user, or the lease gone, stops a fetch. */
static int
data_stop(void *arg)
{
	struct run *r = arg;
	int sig;

	while (sr_sig_next(r->sigfd, &sig) == 1) {
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT)
			r->interrupted = sig;
	}
	return r->interrupted != 0 || sr_run_lease_gone(r, NULL);
}

/* The job's [data] before its first attempt (data.h), into the working
 * directory's .spotrun/data: 0 to go on, or -1 with *res: failed (the URL
 * has nothing, access denied, a full disk: as a setting the check could
 * not judge), the store's passing error, or stopped. */
static int
fetch_data(struct run *r, const struct sr_run_opts *o, struct sr_run_result *res)
{
	struct sr_data_opts d;
	struct sr_data_result dr;
	int rc;

	if (r->js->ndata == 0 || o->data_done)
		return 0;
	memset(&d, 0, sizeof d);
	d.cache = sr_asprintf("%s/.spotrun/data",
	    strcmp(r->js->workdir, "/") == 0 ? "" : r->js->workdir);
	d.say = data_say;
	d.stop = data_stop;
	d.arg = r;
	rc = sr_data_fetch(r->js, &d, &dr, res->err);
	free((char *)d.cache);
	if (rc == 0)
		return 0;
	if (rc == 1 && sr_run_lease_gone(r, NULL)) {
		end_lost(r, o, res);
		return -1;
	}
	if (rc == 1) {
		res->outcome = SR_RUN_FAILED;
		res->code = 128 + r->interrupted;
		sr_tl(&r->tl, 1, "interrupted", "while fetching [data]");
		return -1;
	}
	res->outcome = dr.permanent ? SR_RUN_ERR_CONFIG : SR_RUN_ERR_STORE;
	return -1;
}

enum sr_run_outcome
sr_run_job(struct sr_jobspec *js, const struct sr_run_opts *o, struct sr_run_result *res)
{
	static const struct sr_run_hooks no_hooks = { .stop_fd = -1, .notice_fd = -1 };
	enum sr_attempt_end end;
	struct attempt a;
	struct run r;
	int more;

	memset(res, 0, sizeof *res);
	memset(&r, 0, sizeof r);
	r.js = js;
	r.lockfd = -1;
	r.newest_seq = r.newest_step = -1;
	r.hooks = o->hooks != NULL ? o->hooks : &no_hooks;
	sr_tl_init(&r.tl, stderr, o->quiet);
	if (sr_run_setup(&r, res) == 0) {
		announce(&r);
		sr_tl(&r.tl, 0, "contain", "%s", sr_contain_how(r.contain));
		r.vm = r.hooks->vm > 0 ? r.hooks->vm : 1;
		name_run(&r);
		if (sr_run_lease_take(&r, res) == 0 && fetch_data(&r, o, res) == 0) {
			do {
				if (sr_run_lease_gone(&r, NULL)) {
					end_lost(&r, o, res);
					break;
				}
				r.attempt++;
				end = sr_run_attempt(&r, &a, res->err);
				if (a.started > 0)
					r.used += sr_now() - a.started;
				sr_run_tell(&r, NULL, SR_RUN_EV_ATTEMPT_END);
				/* What follows the attempt (the next machine, a
				 * restart, the final line) goes to its log too. */
				more = after_attempt(&r, &a, end, o, res);
				sr_tl_set_sink(&r.tl, NULL, NULL);
				sr_run_ranks_free(&a);
				sr_joblog_close(a.log);
				a.log = NULL;
			} while (more);
		}
		sr_run_record_flush(&r);	/* a run ended without its last line (its error) */
		res->signal = r.interrupted;
		sr_run_lease_end(&r, res);
	}
	discard_local(&r, res->outcome);
	sr_run_teardown(&r);
	return res->outcome;
}
