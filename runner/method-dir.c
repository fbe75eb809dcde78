/*
 * method-dir.c: directory mode, the first checkpoint method (method.h). The
 * job's state is a directory, SPOTRUN_CKPT_DIR, restored before the job
 * starts. A request is a marker file plus a signal (request.c; why both:
 * doc/design.md) sent only to the processes that catch it (sigcatch.c); the job writes its files and a done marker holding its
 * step; then a thread packs and commits the directory (sr_ckpt_save) while
 * the job runs on, and writes one byte to a pipe when it ends, which the
 * attempt loop polls. One save at a time.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "method.h"
#include "progress.h"
#include "request.h"
#include "sigcatch.h"

struct dir_method {
	char *ctl_dir, *req_path, *done_path;
	const char *signal_name;	/* SPOTRUN_CKPT_SIGNAL: "USR1", "none" */
	int said_skipped;		/* this attempt's timeline said who was not signalled */
	/* the save thread */
	pthread_t th;
	int active;			/* started and not yet joined */
	int pipe[2];			/* one byte written when the save ends */
	struct sr_ckpt_opts opts;
	long long step;
	volatile int cancel;
	struct sr_ckpt_result res;
	struct sr_progress pg;		/* the line on a terminal while it runs */
};

static const char *
signal_name(int sig)
{
	static const struct { int sig; const char *name; } names[] = {
		{ SIGUSR1, "USR1" }, { SIGUSR2, "USR2" }, { SIGHUP, "HUP" },
		{ SIGINT, "INT" }, { SIGTERM, "TERM" }, { SIGWINCH, "WINCH" },
		{ SIGQUIT, "QUIT" }, { SIGALRM, "ALRM" }, { SIGCONT, "CONT" },
	};
	size_t i;

	for (i = 0; sig != 0 && i < SR_ARRAY_LEN(names); i++) {
		if (names[i].sig == sig)
			return names[i].name;
	}
	return "none";
}

static int
dir_init(struct sr_method *m, char *err)
{
	struct dir_method *d = sr_calloc(1, sizeof *d);

	m->priv = d;
	d->pipe[0] = d->pipe[1] = -1;
	d->ctl_dir = sr_asprintf("%s/ctl", m->ctx.js->local_dir);
	d->req_path = sr_asprintf("%s/request", d->ctl_dir);
	d->done_path = sr_asprintf("%s/done", d->ctl_dir);
	d->signal_name = signal_name(m->ctx.js->request_signal);
	if (sr_mkdirs(d->ctl_dir, 0755, err) == -1)
		return -1;
	if (pipe2(d->pipe, O_CLOEXEC) == -1)
		return sr_errno(err, "create pipe");
	return 0;
}

static void
dir_free(struct sr_method *m)
{
	struct dir_method *d = m->priv;

	if (d == NULL)
		return;
	if (d->active) {
		d->cancel = 1;
		pthread_join(d->th, NULL);
	}
	if (d->pipe[0] != -1) {
		close(d->pipe[0]);
		close(d->pipe[1]);
	}
	free(d->ctl_dir);
	free(d->req_path);
	free(d->done_path);
	free(d);
}

static int
dir_restore(struct sr_method *m, int fresh, struct sr_ckpt_stats *cs, char *err)
{
	struct sr_ckpt_opts ro = *m->ctx.copts;
	struct sr_progress pg;
	int rc;

	if (sr_rmtree(m->ctx.ckpt_dir, err) == -1 || sr_mkdirs(m->ctx.ckpt_dir, 0755, err) == -1)
		return -1;
	if (fresh)
		return SR_CKPT_NONE;
	sr_progress_start(&pg, m->ctx.term, "restore");
	ro.progress = sr_progress_update;
	ro.progress_arg = &pg;
	rc = sr_ckpt_restore(m->ctx.st, &ro, m->ctx.ckpt_dir, cs, err);
	sr_progress_end(&pg);
	return rc;
}

static void
dir_launch(struct sr_method *m, struct sr_launch *l)
{
	struct dir_method *d = m->priv;

	d->said_skipped = 0;
	l->env = sr_calloc(4, sizeof *l->env);
	l->env[0] = sr_asprintf("SPOTRUN_CKPT_REQUEST=%s", d->req_path);
	l->env[1] = sr_asprintf("SPOTRUN_CKPT_DONE=%s", d->done_path);
	l->env[2] = sr_asprintf("SPOTRUN_CKPT_SIGNAL=%s", d->signal_name);
}

/* Once an attempt: which processes of the job the request signal skips,
 * as they do not catch it (the request file alone asks them). */
static void
say_skipped(struct sr_method *m, const struct sr_sigcatch *sc)
{
	struct dir_method *d = m->priv;
	char more[32] = "";

	if (sc->skipped == 0 || d->said_skipped)
		return;
	d->said_skipped = 1;
	if (sc->skipped > 1)
		snprintf(more, sizeof more, " and %d more", sc->skipped - 1);
	if (sc->sent == 0)
		sr_tl(m->ctx.tl, 0, "request", "SIG%s not sent: the job does not catch it (pid %ld, "
		    "%s%s); the request file alone asks", d->signal_name, (long)sc->skipped_pid,
		    sc->skipped_name, more);
	else
		sr_tl(m->ctx.tl, 0, "request", "SIG%s sent to %d of the job's %d processes: pid %ld "
		    "(%s)%s does not catch it; the request file alone asks it", d->signal_name,
		    sc->sent, sc->sent + sc->skipped, (long)sc->skipped_pid, sc->skipped_name, more);
}

static int
dir_request(struct sr_method *m, const struct sr_child *job, const struct sr_ckpt_request *rq,
    int *signalled, char *err)
{
	struct dir_method *d = m->priv;
	struct sr_sigcatch sc;
	int sig = m->ctx.js->request_signal;

	*signalled = 0;
	if (sr_req_post(d->req_path, d->done_path, rq->seq, sr_ckpt_reason_name(rq->reason),
	    rq->deadline, err) == -1)
		return -1;
	if (sig == 0)
		return 0;
	/* The file is the request; the signal only wakes those that wait
	 * for it, and would end a process that does not catch it. */
	if (sr_sigcatch_send(job->pid, sig, &sc, err) == -1) {
		sr_tl(m->ctx.tl, 1, "warning", "%s; the request file alone asks", err);
		return 0;
	}
	say_skipped(m, &sc);
	if (sc.leader)
		*signalled = sig;
	return 0;
}

/* The done marker: a step number, or nothing. */
static int
dir_state(struct sr_method *m, long long *step)
{
	struct dir_method *d = m->priv;
	char err[SR_ERRMAX];
	int rc = sr_req_done(d->done_path, step, err);

	if (rc == -1) {
		sr_tl(m->ctx.tl, 1, "warning", "%s", err);
		*step = -1;
		rc = 1;
	}
	return rc;
}

static void
dir_clear(struct sr_method *m)
{
	struct dir_method *d = m->priv;

	sr_req_clear(d->req_path, d->done_path);
}

static void *
saver_main(void *arg)
{
	struct sr_method *m = arg;
	struct dir_method *d = m->priv;
	char b = 1;

	d->res.err[0] = '\0';
	d->res.rc = sr_ckpt_save(m->ctx.st, &d->opts, m->ctx.ckpt_dir, d->step, &d->res.stats,
	    d->res.err);
	if (d->res.rc == 0 && m->ctx.on_commit != NULL)
		m->ctx.on_commit(m->ctx.on_commit_arg, &d->res.stats);
	(void)!write(d->pipe[1], &b, 1);
	return NULL;
}

static int
dir_save(struct sr_method *m, long long step, double deadline, char *err)
{
	struct dir_method *d = m->priv;

	d->opts = *m->ctx.copts;
	sr_progress_start(&d->pg, m->ctx.term, "checkpoint");
	d->opts.progress = sr_progress_update;
	d->opts.progress_arg = &d->pg;
	d->opts.deadline = deadline;
	d->cancel = 0;
	d->opts.cancel = &d->cancel;
	d->step = step;
	if ((errno = pthread_create(&d->th, NULL, saver_main, m)) != 0)
		return sr_errno(err, "start checkpoint thread");
	d->active = 1;
	return 0;
}

/* The save thread checks the flag between chunks, and the store's requests
 * with it. */
static void
dir_cancel(struct sr_method *m)
{
	struct dir_method *d = m->priv;

	if (d->active)
		d->cancel = 1;
}

static int
dir_fd(const struct sr_method *m)
{
	const struct dir_method *d = m->priv;

	return d->pipe[0];
}

static int
dir_saved(struct sr_method *m, struct sr_ckpt_result *res)
{
	struct dir_method *d = m->priv;
	char b;

	if (!d->active)
		return 0;
	while (read(d->pipe[0], &b, 1) == -1 && errno == EINTR)
		;
	pthread_join(d->th, NULL);
	d->active = 0;
	sr_progress_end(&d->pg);
	*res = d->res;
	return 1;
}

/* The local copy of the job's directory (1.2 GB for some) and the marker
 * files: the next run restores from the store. */
static int
dir_discard(struct sr_method *m, char *err)
{
	struct dir_method *d = m->priv;

	if (sr_rmtree(m->ctx.ckpt_dir, err) == -1)
		return -1;
	return sr_rmtree(d->ctl_dir, err);
}

const struct sr_method_ops sr_method_dir_ops = {
	.name = "directory",
	.init = dir_init,
	.free = dir_free,
	.restore = dir_restore,
	.launch = dir_launch,
	.request = dir_request,
	.state = dir_state,
	.state_poll = 0.02,	/* the done marker at 50 Hz */
	.clear = dir_clear,
	.save = dir_save,
	.fd = dir_fd,
	.cancel = dir_cancel,
	.saved = dir_saved,
	.committed = NULL,
	.stop = NULL,
	.discard = dir_discard,
};
