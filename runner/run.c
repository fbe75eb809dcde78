/*
 * run.c: the supervisor loop behind `spotrun run`. One run is a series of
 * attempts. Each attempt ("a VM") restores the newest committed checkpoint
 * into the job's checkpoint directory, launches the job, and then waits in
 * poll(2) on: signals (self-pipe), the job's output, the provider's notice
 * pipe and the checkpoint thread's completion pipe, with timers for
 * periodic checkpoints, the done marker and deadlines.
 *
 * A checkpoint is requested (marker file + signal), the job writes its files
 * and the done marker, and a thread packs and commits them while the job
 * keeps running; the loop never blocks on storage. On a preemption notice the
 * request carries the notice's deadline minus the safety margin: the
 * checkpoint commits before it or not at all, and then the job is stopped.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ckpt.h"
#include "cmd.h"
#include "fault.h"
#include "jobenv.h"
#include "joblog.h"
#include "leftover.h"
#include "jobspec.h"
#include "progress.h"
#include "provider.h"
#include "record.h"
#include "request.h"
#include "run.h"
#include "store.h"
#include "supervise.h"
#include "timeline.h"
#include "util.h"

extern char **environ;

/* The checkpoint thread: one save at a time. */
struct saver {
	pthread_t th;
	int active;			/* started and not yet joined */
	int pipe[2];			/* one byte written when the save ends */
	struct sr_store *st;
	struct sr_ckpt_opts opts;
	const char *dir;
	long long step;
	const char *reason;		/* "periodic", "notice", "early" */
	double state_at;		/* when the job's files were complete */
	volatile int cancel;
	int rc;
	struct sr_ckpt_stats stats;
	char err[SR_ERRMAX];
	struct sr_progress pg;		/* the line on a terminal while it runs */
};

struct run {
	struct sr_jobspec *js;
	struct sr_store *st;
	struct sr_provider *prov;
	struct sr_timeline tl;
	struct saver sv;
	int sigfd;
	int lockfd;
	char *ckpt_dir, *ctl_dir, *log_dir, *req_path, *done_path;
	const char *signal_name;
	struct sr_ckpt_opts copts;
	int gpus;			/* GPUs given to the job */
	/* Counters over the whole run, for the final line. */
	int attempt, preemptions, restarts, checkpoints, missed;
	int vm;				/* machine number: grows with preemptions only */
	char run_id[40];		/* names this run's attempt records */
	double lost;			/* seconds of work lost to preemptions */
	uint64_t req_seq;
	int interrupted;		/* signal from the user: no restarts */
};

enum outcome { OUT_EXITED, OUT_PREEMPTED, OUT_EXEC_FAILED, OUT_ERROR };

struct attempt {
	struct sr_child child;
	struct sr_joblog *log;
	double started;			/* epoch */
	int leader_done, status;
	double leader_done_at;		/* mono */
	int out_open, err_open;
	/* the pending request */
	int req_pending;
	const char *req_reason;
	double req_deadline;		/* epoch; the job must answer by then */
	double req_posted;		/* epoch; when it was asked */
	/* the notice */
	int noticed;
	struct sr_notice notice;
	double ckpt_deadline;		/* epoch: notice deadline minus margin */
	int emergency_pending;		/* request once the running save ends */
	/* stopping the job */
	int stopping;
	double kill_at;			/* mono */
	double last_state_at;		/* epoch of the newest committed state, 0 = none */
	double next_periodic;		/* mono; 0 = off */
	/* for the attempt's record in the store */
	struct sr_attempt_record rec;
	int checkpoints_before;		/* r->checkpoints when it started */
};

static void *
saver_main(void *arg)
{
	struct saver *sv = arg;
	char b = 1;

	sv->err[0] = '\0';
	sv->rc = sr_ckpt_save(sv->st, &sv->opts, sv->dir, sv->step, &sv->stats, sv->err);
	(void)!write(sv->pipe[1], &b, 1);
	return NULL;
}

static void
log_from_ckpt(void *arg, const char *msg)
{
	struct run *r = arg;

	sr_tl(&r->tl, 0, "ckpt", "%s", msg);
}

static void
tl_to_joblog(void *arg, const char *line)
{
	sr_joblog_note(arg, "%s", line);
}

/* Count the GPUs of this machine from the driver's device nodes. */
static int
count_gpus(void)
{
	glob_t g;
	int n = 0;

	if (glob("/dev/nvidia[0-9]*", 0, NULL, &g) == 0)
		n = (int)g.gl_pathc;
	globfree(&g);
	return n;
}

static const char *
signal_name(int sig)
{
	static const struct { int sig; const char *name; } names[] = {
		{ SIGUSR1, "USR1" }, { SIGUSR2, "USR2" }, { SIGHUP, "HUP" },
		{ SIGINT, "INT" }, { SIGTERM, "TERM" }, { SIGWINCH, "WINCH" },
		{ SIGQUIT, "QUIT" }, { SIGALRM, "ALRM" }, { SIGCONT, "CONT" },
	};
	size_t i;

	if (sig == 0)
		return "none";
	for (i = 0; i < SR_ARRAY_LEN(names); i++) {
		if (names[i].sig == sig)
			return names[i].name;
	}
	return "none";
}

static void
post_request(struct run *r, struct attempt *a, const char *reason, double deadline)
{
	char err[SR_ERRMAX], clock[32];

	r->req_seq++;
	if (sr_req_post(r->req_path, r->req_seq, reason, deadline, err) == -1) {
		sr_tl(&r->tl, 1, "error", "%s", err);
		return;
	}
	if (r->js->request_signal != 0)
		sr_child_signal(&a->child, r->js->request_signal);
	sr_fault("ckpt-request");
	a->req_pending = 1;
	a->req_reason = reason;
	a->req_deadline = deadline;
	a->req_posted = sr_now();
	sr_tl(&r->tl, 0, "request", "%s checkpoint, answer by %s", reason,
	    sr_tl_clock(&r->tl, deadline, clock, sizeof clock));
}

static void
begin_stop(struct run *r, struct attempt *a, const char *why)
{
	double grace = 10;

	if (a->stopping || a->leader_done)
		return;
	if (a->noticed) {
		double left = a->notice.deadline - sr_now();
		if (left < grace)
			grace = left > 1 ? left : 1;
	}
	a->stopping = 1;
	a->kill_at = sr_mono() + grace;
	sr_tl(&r->tl, 0, "stop", "%s; SIGTERM to the job", why);
	sr_child_signal(&a->child, SIGTERM);
}

/* Bytes per second, for the summary lines. */
static uint64_t
rate_of(uint64_t bytes, double seconds)
{
	return seconds > 0 ? (uint64_t)((double)bytes / seconds) : 0;
}

static void
start_save(struct run *r, struct attempt *a, long long step)
{
	struct saver *sv = &r->sv;

	sv->opts = r->copts;
	sr_progress_start(&sv->pg, STDERR_FILENO, "checkpoint");
	sv->opts.progress = sr_progress_update;
	sv->opts.progress_arg = &sv->pg;
	sv->opts.deadline = strcmp(a->req_reason, "notice") == 0 ? a->ckpt_deadline : 0;
	sv->cancel = 0;
	sv->opts.cancel = &sv->cancel;
	sv->st = r->st;
	sv->dir = r->ckpt_dir;
	sv->step = step;
	sv->reason = a->req_reason;
	sv->state_at = sr_now();
	if (pthread_create(&sv->th, NULL, saver_main, sv) != 0) {
		sr_tl(&r->tl, 1, "error", "start checkpoint thread: %s", strerror(errno));
		return;
	}
	sv->active = 1;
}

static void
finish_save(struct run *r, struct attempt *a)
{
	struct saver *sv = &r->sv;
	char b, raw[32], stored[32], fresh[32], took[32], rate[32];
	int was_notice = strcmp(sv->reason, "notice") == 0;

	while (read(sv->pipe[0], &b, 1) == -1 && errno == EINTR)
		;
	pthread_join(sv->th, NULL);
	sv->active = 0;
	sr_progress_end(&sv->pg);
	if (sv->rc == 0) {
		r->checkpoints++;
		a->last_state_at = sv->state_at;
		sr_tl(&r->tl, 1, "ckpt", "%llu step %lld: %s -> %s (%.2f), %s new, committed in %s "
		    "(%s/s)",
		    (unsigned long long)sv->stats.seq, sv->stats.step,
		    sr_fmt_bytes(sv->stats.raw_bytes, raw, sizeof raw),
		    sr_fmt_bytes(sv->stats.stored_bytes, stored, sizeof stored),
		    sv->stats.raw_bytes ? (double)sv->stats.stored_bytes / (double)sv->stats.raw_bytes : 0.0,
		    sr_fmt_bytes(sv->stats.new_bytes, fresh, sizeof fresh),
		    sr_fmt_duration(sv->stats.seconds, took, sizeof took),
		    sr_fmt_bytes(rate_of(sv->stats.raw_bytes, sv->stats.seconds), rate, sizeof rate));
		if (was_notice) {
			/* Only now that it is committed may the provider be told
			 * the machine can go (Azure's ack). That goes out on a
			 * thread of the provider's: this loop does not wait. */
			char err[SR_ERRMAX];
			if (sr_provider_ack(r->prov, &a->notice, err) == -1)
				sr_tl(&r->tl, 1, "warning", "%s", err);
		}
	} else if (sv->rc == SR_CKPT_LATE) {
		r->missed++;
		sr_tl(&r->tl, 1, "ckpt", "%s checkpoint missed its deadline; the previous checkpoint stays the newest",
		    sv->reason);
	} else if (sv->rc == SR_CKPT_CANCELLED) {
		sr_tl(&r->tl, 0, "ckpt", "%s checkpoint cancelled", sv->reason);
	} else {
		r->missed++;
		sr_tl(&r->tl, 1, "error", "%s checkpoint failed: store %s: %s; the previous checkpoint "
		    "stays the newest", sv->reason, sr_store_url(r->st), sv->err);
	}
	if (a->emergency_pending) {
		a->emergency_pending = 0;
		if (!a->leader_done && sr_now() < a->ckpt_deadline) {
			post_request(r, a, "notice", a->ckpt_deadline);
			return;
		}
	}
	if (a->noticed && (was_notice || !a->req_pending))
		begin_stop(r, a, was_notice && sv->rc == 0 ? "checkpoint committed" : "no checkpoint for this notice");
}

static void
handle_notice(struct run *r, struct attempt *a, const struct sr_notice *n)
{
	char clock[32];
	double now = sr_now();

	if (a->leader_done || a->stopping)
		return;
	if (n->kind == SR_NOTICE_EARLY || n->kind == SR_NOTICE_FREEZE) {
		if (n->kind == SR_NOTICE_EARLY && !r->js->early_checkpoint) {
			sr_tl(&r->tl, 1, "warning", "%s; no checkpoint (early_checkpoint = no)",
			    n->reason);
			return;
		}
		sr_tl(&r->tl, 1, "warning", "%s", n->reason);
		if (!a->req_pending && !r->sv.active)
			post_request(r, a, "early", now + r->js->write_timeout);
		return;
	}
	if (a->noticed)
		return;
	a->noticed = 1;
	a->notice = *n;
	a->ckpt_deadline = n->deadline - r->js->margin;
	r->preemptions++;
	sr_tl(&r->tl, 1, "notice", "%s, deadline %s", n->reason,
	    sr_tl_clock(&r->tl, n->deadline, clock, sizeof clock));
	if (a->ckpt_deadline <= now) {
		/* Nothing is asked of the job, so nothing can be half-written:
		 * the newest committed checkpoint stays what the next run
		 * restores. */
		char left[32], margin[32];
		r->missed++;
		sr_tl(&r->tl, 1, "ckpt", "no time for a checkpoint: the notice left %s, margin = %s; "
		    "the previous checkpoint stays the newest",
		    sr_fmt_duration(n->deadline > now ? n->deadline - now : 0, left, sizeof left),
		    sr_fmt_duration(r->js->margin, margin, sizeof margin));
		begin_stop(r, a, "no checkpoint for this notice");
		return;
	}
	if (r->sv.active) {
		a->emergency_pending = 1;
	} else if (a->req_pending) {
		/* Upgrade the pending request: same files, tighter deadline. */
		post_request(r, a, "notice", a->ckpt_deadline);
	} else {
		post_request(r, a, "notice", a->ckpt_deadline);
	}
}

static void
check_request(struct run *r, struct attempt *a)
{
	char err[SR_ERRMAX];
	long long step;
	int rc;

	rc = sr_req_done(r->done_path, &step, err);
	if (rc == -1) {
		sr_tl(&r->tl, 1, "warning", "%s", err);
		step = -1;
		rc = 1;
	}
	if (rc == 1) {
		sr_req_clear(r->req_path, r->done_path);
		a->req_pending = 0;
		start_save(r, a, step);
		return;
	}
	if (a->req_deadline > 0 && sr_now() >= a->req_deadline) {
		char took[32];
		sr_req_clear(r->req_path, r->done_path);
		a->req_pending = 0;
		r->missed++;
		sr_tl(&r->tl, 1, "ckpt", "the job did not write its %s checkpoint within %s; the previous checkpoint stays the newest",
		    a->req_reason, sr_fmt_duration(a->req_deadline - a->req_posted, took, sizeof took));
		if (a->noticed)
			begin_stop(r, a, "no checkpoint for this notice");
	}
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
	case SIGTERM:
		if (sr_provider_on_signal(r->prov, sig))
			break;
		/* FALLTHROUGH */
	case SIGINT:
	case SIGHUP:
	case SIGQUIT:
		r->interrupted = sig;
		if (!a->leader_done)
			sr_child_signal(&a->child, sig);
		break;
	default:
		break;
	}
}

/* Milliseconds until the nearest timer, capped at 1 s. */
static int
next_timeout(struct run *r, struct attempt *a)
{
	double now = sr_mono(), t = 1.0;

	if (a->req_pending)
		t = 0.02;	/* the done marker is polled at 50 Hz */
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

	if (a->req_pending && !a->leader_done)
		check_request(r, a);
	if (a->noticed && !a->leader_done && !a->stopping && sr_now() >= a->notice.deadline)
		begin_stop(r, a, "the machine is going away");
	if (a->stopping && !a->leader_done && now >= a->kill_at) {
		sr_tl(&r->tl, 0, "stop", "grace period over; SIGKILL to the job");
		sr_child_signal(&a->child, SIGKILL);
		a->kill_at = now + 3600;
	}
	if (a->next_periodic > 0 && now >= a->next_periodic) {
		a->next_periodic = now + r->js->interval;
		if (!a->req_pending && !r->sv.active && !a->noticed && !a->leader_done && !a->stopping)
			post_request(r, a, "periodic", sr_now() + r->js->write_timeout);
	}
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

static int
latest_cb(const struct sr_ckpt_stats *ck, int is_latest, void *arg)
{
	if (is_latest)
		*(long long *)arg = (long long)ck->seq;
	return 0;
}

/* The sequence number of the job's newest committed checkpoint, -1 if none. */
static long long
latest_seq(struct run *r)
{
	char err[SR_ERRMAX];
	long long seq = -1;

	if (sr_ckpt_list(r->st, r->js->name, latest_cb, &seq, err) == -1)
		return -1;
	return seq;
}

/* The FINISHED marker: a job that ended with exit 0 records which
 * checkpoint was the newest then, so that running it again starts afresh
 * instead of resuming the end of the finished run. */
static char *
finished_key(const struct run *r)
{
	return sr_asprintf("%s/FINISHED", r->js->name);
}

static void
mark_finished(struct run *r)
{
	char err[SR_ERRMAX], buf[64], *key = finished_key(r);
	int n = snprintf(buf, sizeof buf, "%lld\n", latest_seq(r));

	if (sr_store_put(r->st, key, buf, (size_t)n, SR_PUT_OVERWRITE, NULL, NULL, err) != 0)
		sr_tl(&r->tl, 1, "warning", "%s (the next run of this job resumes instead of starting afresh)", err);
	free(key);
}

/* 1 if the job finished with the newest checkpoint it has now. */
static int
finished_before(struct run *r, long long *seq)
{
	char err[SR_ERRMAX], *key = finished_key(r), *end;
	void *buf;
	size_t len;
	long long fseq;
	int rc;

	rc = sr_store_get(r->st, key, 64, &buf, &len, NULL, err);
	free(key);
	if (rc != SR_STORE_OK)
		return 0;
	fseq = strtoll(buf, &end, 10);
	rc = end != buf && (*end == '\n' || *end == '\0');
	free(buf);
	*seq = latest_seq(r);
	return rc && fseq == *seq;
}

static int
restore(struct run *r, long long *step, char *err)
{
	struct sr_ckpt_stats cs;
	struct sr_ckpt_opts ro;
	struct sr_progress pg;
	char stored[32], raw[32], took[32], rate[32];
	long long fseq;
	int rc;

	if (sr_rmtree(r->ckpt_dir, err) == -1 || sr_mkdirs(r->ckpt_dir, 0755, err) == -1)
		return -1;
	if (r->attempt == 1 && finished_before(r, &fseq)) {
		*step = -1;
		if (fseq >= 0)
			sr_tl(&r->tl, 1, "attempt", "1 starts afresh: %s finished in an earlier run "
			    "(its checkpoints stay in the store: spotrun ls)", r->js->name);
		return 0;
	}
	memset(&cs, 0, sizeof cs);
	ro = r->copts;
	sr_progress_start(&pg, STDERR_FILENO, "restore");
	ro.progress = sr_progress_update;
	ro.progress_arg = &pg;
	rc = sr_ckpt_restore(r->st, &ro, r->ckpt_dir, &cs, err);
	sr_progress_end(&pg);
	if (rc == SR_CKPT_NONE) {
		*step = -1;
		if (r->attempt > 1)
			sr_tl(&r->tl, 1, "attempt", "%d starts fresh: no checkpoint committed yet", r->attempt);
		return 0;
	}
	if (rc != 0)
		return -1;
	*step = cs.step;
	sr_tl(&r->tl, 1, "attempt", "%d restored checkpoint %llu at step %lld (%s -> %s in %s, "
	    "%s/s)", r->attempt, (unsigned long long)cs.seq, cs.step,
	    sr_fmt_bytes(cs.stored_bytes, stored, sizeof stored),
	    sr_fmt_bytes(cs.raw_bytes, raw, sizeof raw), sr_fmt_duration(cs.seconds, took, sizeof took),
	    sr_fmt_bytes(rate_of(cs.raw_bytes, cs.seconds), rate, sizeof rate));
	return 0;
}

/* The attempt's record: written as it starts, rewritten as it ends. A
 * failure to write it is worth a warning, never the job. */
static void
record_start(struct run *r, struct attempt *a, long long step)
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
	if (sr_provider_facts(r->prov, &rec->facts, err) == -1)
		sr_tl(&r->tl, 0, "warning", "%s", err);
	a->checkpoints_before = r->checkpoints;
	if (sr_record_put(r->st, r->js->name, rec, err) == -1)
		sr_tl(&r->tl, 1, "warning", "%s", err);
}

static void
record_end(struct run *r, struct attempt *a, const char *outcome, int code)
{
	char err[SR_ERRMAX];

	if (a->rec.attempt == 0)
		return;		/* it never started */
	a->rec.ended = sr_now();
	strlcpy(a->rec.outcome, outcome, sizeof a->rec.outcome);
	a->rec.exit_code = code;
	a->rec.checkpoints = r->checkpoints - a->checkpoints_before;
	if (sr_record_put(r->st, r->js->name, &a->rec, err) == -1)
		sr_tl(&r->tl, 1, "warning", "%s", err);
}

static enum outcome
run_attempt(struct run *r, struct attempt *a, char *err)
{
	struct sr_jobenv_vars v;
	struct sr_spawn_opts so;
	struct sr_notice n;
	char **env, *logpath;
	long long step;
	int sig;

	memset(a, 0, sizeof *a);
	a->child.pid = -1;
	a->child.out_fd = a->child.err_fd = -1;
	if (restore(r, &step, err) == -1)
		return OUT_ERROR;
	sr_req_clear(r->req_path, r->done_path);

	logpath = sr_asprintf("%s/attempt-%d.log", r->log_dir, r->attempt);
	a->log = sr_joblog_open(logpath, sr_mono(), err);
	free(logpath);
	if (a->log == NULL)
		return OUT_ERROR;
	sr_tl_set_sink(&r->tl, tl_to_joblog, a->log);

	memset(&v, 0, sizeof v);
	v.attempt = r->attempt;
	v.ckpt_dir = r->ckpt_dir;
	v.request_path = r->req_path;
	v.done_path = r->done_path;
	v.signal_name = r->signal_name;
	v.resume_step = step;
	v.provider = sr_provider_name(r->prov);
	v.rank = 0;
	v.world_size = 1;
	env = sr_jobenv_build(environ, r->js, &v);
	if (r->gpus > 0) {
		/* One process sees all its GPUs for now; see BUGS in spotrun(1). */
		char *cvd = sr_strdup("CUDA_VISIBLE_DEVICES=0"), *t;
		int i;
		for (i = 1; i < r->gpus; i++) {
			t = sr_asprintf("%s,%d", cvd, i);
			free(cvd);
			cvd = t;
		}
		t = sr_asprintf("%s", cvd);
		free(cvd);
		{
			size_t k;
			for (k = 0; env[k] != NULL; k++)
				;
			env = sr_reallocarray(env, k + 2, sizeof *env);
			env[k] = t;
			env[k + 1] = NULL;
		}
	}

	if (sr_provider_start_vm(r->prov, r->vm, err) == -1) {
		sr_jobenv_free(env);
		return OUT_ERROR;
	}
	memset(&so, 0, sizeof so);
	so.argv = r->js->argv;
	so.envp = env;
	so.cwd = r->js->workdir;
	so.capture = 1;
	so.stdin_null = 1;	/* a background group reading the terminal would stop on SIGTTIN */
	so.parent_death_signal = SIGKILL;
	a->started = sr_now();
	if (sr_spawn(&so, &a->child, err) == -1) {
		sr_jobenv_free(env);
		sr_provider_stop_vm(r->prov);
		return OUT_ERROR;
	}
	sr_jobenv_free(env);
	if (a->child.exec_errno != 0) {
		int status;
		errno = a->child.exec_errno;
		sr_errno(err, "run %s", r->js->argv[0]);
		sr_child_stop(&a->child, 1);
		while (sr_reap(&a->child, &status) == 0 && waitpid(a->child.pid, &status, 0) == -1 && errno == EINTR)
			;
		if (a->child.out_fd != -1)
			close(a->child.out_fd);
		if (a->child.err_fd != -1)
			close(a->child.err_fd);
		sr_provider_stop_vm(r->prov);
		return OUT_EXEC_FAILED;
	}
	a->out_open = a->child.out_fd != -1;
	a->err_open = a->child.err_fd != -1;
	if (r->js->interval > 0)
		a->next_periodic = sr_mono() + r->js->interval;
	sr_tl(&r->tl, 0, "started", "%s (pid %ld)", r->js->command, (long)a->child.pid);
	record_start(r, a, step);

	for (;;) {
		struct pollfd pf[5];
		int np = 0, i_sig, i_out = -1, i_err = -1, i_prov, i_sv = -1;

		if (a->leader_done && !r->sv.active) {
			/* Pipes still open after the leader exited belong to
			 * leftovers of the job: stop them, then drain. */
			if (!a->out_open && !a->err_open)
				break;
			if (sr_mono() - a->leader_done_at > 1.0) {
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
				break;
			}
		}
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
		if (r->sv.active) {
			i_sv = np;
			pf[np++] = (struct pollfd){ .fd = r->sv.pipe[0], .events = POLLIN };
		}
		if (poll(pf, (nfds_t)np, next_timeout(r, a)) == -1 && errno != EINTR) {
			sr_errno(err, "poll");
			break;
		}
		if (pf[i_sig].revents & POLLIN) {
			while (sr_sig_next(r->sigfd, &sig) == 1)
				handle_signal(r, a, sig);
		}
		if (i_out >= 0 && (pf[i_out].revents & (POLLIN | POLLHUP | POLLERR)))
			feed_output(a, &a->out_open, 1, a->child.out_fd);
		if (i_err >= 0 && (pf[i_err].revents & (POLLIN | POLLHUP | POLLERR)))
			feed_output(a, &a->err_open, 2, a->child.err_fd);
		if (pf[i_prov].revents & POLLIN) {
			while (sr_provider_read(r->prov, &n, err) == 1)
				handle_notice(r, a, &n);
		}
		if (i_sv >= 0 && (pf[i_sv].revents & POLLIN))
			finish_save(r, a);
		on_timers(r, a);
	}

	sr_child_stop(&a->child, 2.0);
	if (a->req_pending)
		sr_req_clear(r->req_path, r->done_path);
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
	if (a->noticed) {
		double ended = a->leader_done ? sr_now() - (sr_mono() - a->leader_done_at) : sr_now();
		r->lost += ended - (a->last_state_at > 0 ? a->last_state_at : a->started);
		return OUT_PREEMPTED;
	}
	return OUT_EXITED;
}

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

static void
final_line(struct run *r, const char *what, int code)
{
	char lost[32];

	char restarts[32] = "";

	if (r->restarts > 0)
		snprintf(restarts, sizeof restarts, ", %d restart%s", r->restarts, r->restarts == 1 ? "" : "s");
	sr_tl(&r->tl, 1, what, "exit %d: %d attempt%s, %d preemption%s%s, %s of work lost, %d checkpoint%s",
	    code, r->attempt, r->attempt == 1 ? "" : "s", r->preemptions, r->preemptions == 1 ? "" : "s",
	    restarts, sr_fmt_duration(r->lost, lost, sizeof lost), r->checkpoints,
	    r->checkpoints == 1 ? "" : "s");
}

static int
setup(struct run *r, char *err)
{
	struct sr_provider_conf pc;
	struct sr_jobspec *js = r->js;
	char *lockpath;
	int rc;

	r->ckpt_dir = sr_asprintf("%s/ckpt", js->local_dir);
	r->ctl_dir = sr_asprintf("%s/ctl", js->local_dir);
	r->req_path = sr_asprintf("%s/request", r->ctl_dir);
	r->done_path = sr_asprintf("%s/done", r->ctl_dir);
	r->signal_name = signal_name(js->request_signal);
	if (sr_mkdirs(r->ctl_dir, 0755, err) == -1)
		return SR_EXIT_OSERR;
	lockpath = sr_asprintf("%s/lock", js->local_dir);
	r->lockfd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (r->lockfd == -1) {
		sr_errno(err, "open %s", lockpath);
		free(lockpath);
		return SR_EXIT_OSERR;
	}
	if (flock(r->lockfd, LOCK_EX | LOCK_NB) == -1) {
		sr_err(err, "lock %s: another spotrun run of job %s is using %s", lockpath, js->name,
		    js->local_dir);
		free(lockpath);
		return SR_EXIT_UNAVAILABLE;
	}
	free(lockpath);
	{
		char *entry = sr_asprintf("SPOTRUN_CKPT_DIR=%s", r->ckpt_dir);
		int n = sr_leftover_kill(entry, err);
		free(entry);
		if (n == -1)
			return SR_EXIT_OSERR;
		if (n > 0)
			fprintf(stderr, "spotrun: stopped %d process%s left running by an earlier, killed run of %s\n",
			    n, n == 1 ? "" : "es", js->name);
	}
	{
		/* One folder of logs per run, so runs of the same job do not
		 * mix; logs/latest points at the newest. */
		char stamp[32], *latest;
		time_t t = time(NULL);
		struct tm tm;
		localtime_r(&t, &tm);
		strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
		r->log_dir = sr_asprintf("%s/logs/%s-%ld", js->local_dir, stamp, (long)getpid());
		latest = sr_asprintf("%s/logs/latest", js->local_dir);
		if (sr_mkdirs(r->log_dir, 0755, err) == -1) {
			free(latest);
			return SR_EXIT_OSERR;
		}
		unlink(latest);
		(void)!symlink(strrchr(r->log_dir, '/') + 1, latest);
		free(latest);
	}

	r->gpus = count_gpus();
	if (r->gpus < js->gpus_min) {
		sr_err(err, "job %s needs at least %d GPU%s; this machine has %d", js->name,
		    js->gpus_min, js->gpus_min == 1 ? "" : "s", r->gpus);
		return SR_EXIT_UNAVAILABLE;
	}
	if (r->gpus > js->gpus_max)
		r->gpus = js->gpus_max;

	if (sr_store_open(js->store, &r->st, err) == -1)
		return SR_EXIT_IOERR;
	memset(&pc, 0, sizeof pc);
	pc.name = js->provider;
	pc.window = js->window;
	pc.grace = js->grace;
	pc.after = js->after;
	pc.random_mean = js->random_mean;
	pc.seed = js->seed;
	pc.notice_file = js->notice_file;
	pc.trace = js->trace;
	pc.trace_scale = js->trace_scale;
	pc.trace_start = js->trace_start;
	pc.max_preemptions = js->preemptions;
	pc.endpoint = js->endpoint;
	pc.ipv6 = js->ipv6;
	pc.poll = js->poll;
	if ((rc = sr_provider_new(&pc, &r->prov, err)) != 0)	/* ECONF: the job file's to fix */
		return rc == SR_PROVIDER_ECONF ? SR_EXIT_BADSPEC : SR_EXIT_SOFTWARE;

	memset(&r->copts, 0, sizeof r->copts);
	r->copts.job = js->name;
	r->copts.chunk_size = js->chunk_size;
	r->copts.level = js->level;
	r->copts.threads = 0;
	r->copts.keep = js->keep;
	r->copts.log = log_from_ckpt;
	r->copts.log_arg = r;
	if (pipe2(r->sv.pipe, O_CLOEXEC) == -1) {
		sr_errno(err, "create pipe");
		return SR_EXIT_OSERR;
	}
	if (sr_subreaper_enable(err) == -1 || sr_sig_init(&r->sigfd, err) == -1)
		return SR_EXIT_OSERR;
	return 0;
}

static void
teardown(struct run *r)
{
	if (r->prov != NULL)
		sr_provider_free(r->prov);
	if (r->st != NULL)
		sr_store_close(r->st);
	if (r->sv.pipe[0] > 0) {
		close(r->sv.pipe[0]);
		close(r->sv.pipe[1]);
	}
	if (r->lockfd > 0)
		close(r->lockfd);
	sr_sig_reset();
	free(r->ckpt_dir);
	free(r->ctl_dir);
	free(r->log_dir);
	free(r->req_path);
	free(r->done_path);
	sr_tl_destroy(&r->tl);
}

int
sr_run_job(struct sr_jobspec *js, const struct sr_run_opts *o)
{
	struct run r;
	struct attempt a;
	struct sr_facts f;
	char err[SR_ERRMAX];
	int code;

	memset(&r, 0, sizeof r);
	r.js = js;
	r.lockfd = -1;
	sr_tl_init(&r.tl, stderr, o->quiet);
	if ((code = setup(&r, err)) != 0) {
		fprintf(stderr, "spotrun: %s\n", err);
		teardown(&r);
		return code;
	}
	memset(&f, 0, sizeof f);
	if (sr_provider_facts(r.prov, &f, err) == -1)
		strlcpy(f.instance_type, "unknown machine", sizeof f.instance_type);
	{
		/* With "auto": what it chose and what finding out cost. */
		char how[64] = "";
		if (sr_provider_detect_seconds(r.prov) >= 0)
			snprintf(how, sizeof how, " (auto, detected in %.3f s)",
			    sr_provider_detect_seconds(r.prov));
		fprintf(stderr, "spotrun: %s on %s%s, %s, store %s\n", js->name,
		    sr_provider_name(r.prov), how, f.instance_type, sr_store_url(r.st));
	}

	r.vm = 1;
	{
		time_t t = time(NULL);
		struct tm tm;
		char stamp[24];
		gmtime_r(&t, &tm);
		strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
		snprintf(r.run_id, sizeof r.run_id, "%s-%ld", stamp, (long)getpid());
	}
	for (;;) {
		enum outcome oc;
		char *jobname = js->name;

		r.attempt++;
		oc = run_attempt(&r, &a, err);
		sr_tl_set_sink(&r.tl, NULL, NULL);
		if (a.log != NULL)
			sr_joblog_close(a.log);
		a.log = NULL;
		if (oc == OUT_ERROR) {
			record_end(&r, &a, "spotrun error", -1);
			fprintf(stderr, "spotrun: %s: %s\n", jobname, err);
			code = SR_EXIT_IOERR;
			break;
		}
		if (oc == OUT_EXEC_FAILED) {
			code = sr_exec_code(a.child.exec_errno);
			record_end(&r, &a, "cannot run", code);
			fprintf(stderr, "spotrun: %s; exit %d\n", err, code);
			break;
		}
		if (oc == OUT_PREEMPTED) {
			record_end(&r, &a, "preempted", a.leader_done ? sr_exit_code(a.status) : -1);
			if (!r.interrupted && sr_provider_next_vm(r.prov)) {
				r.vm++;
				sr_tl(&r.tl, 1, "preempted", "next machine");
				continue;
			}
			code = SR_EXIT_PREEMPTED;
			final_line(&r, "preempted", code);
			break;
		}
		code = sr_exit_code(a.status);
		{
			char what[32];
			snprintf(what, sizeof what, "exit %d", code);
			record_end(&r, &a, what, code);
		}
		if (code == 0) {
			mark_finished(&r);
			final_line(&r, "finished", code);
			break;
		}
		if (!r.interrupted && restart_allowed(&r, code)) {
			double delay = js->backoff;
			char d[32];
			int k;
			for (k = 0; k < r.restarts && delay < js->backoff_max; k++)
				delay *= 2;
			if (delay > js->backoff_max)
				delay = js->backoff_max;
			r.restarts++;
			sr_tl(&r.tl, 1, "restart", "exit %d; restart %d of %d in %s", code, r.restarts,
			    js->max_restarts, sr_fmt_duration(delay, d, sizeof d));
			if (backoff_wait(&r, delay))
				break;
			continue;
		}
		final_line(&r, "failed", code);
		break;
	}
	teardown(&r);
	return code;
}
