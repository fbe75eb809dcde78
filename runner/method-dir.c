/*
 * method-dir.c: directory mode, the first checkpoint method (method.h). The
 * job's state is a directory, SPOTRUN_CKPT_DIR, restored before the job
 * starts and shared by its ranks. A request is one marker file for all plus
 * a signal (request.c; why both: doc/design.md) sent only to the processes
 * of each rank that catch it (sigcatch.c); each rank writes its files and a
 * done marker of its own holding its step and the request it answers
 * (ctl/done.R; ctl/done when one process answers). An answer to a request
 * that a newer one replaced (a notice's, while a rank was still writing
 * the periodic one's files) is no answer: the rank is signalled again, so
 * that it answers the newer one. Once every rank has answered, at one step, a thread
 * packs and commits the directory (sr_ckpt_save) while the job runs on,
 * and writes one byte to a pipe when it ends; the attempt loop polls it
 * with inotify's watch of the control directory (ctlwatch.h).
 * One save at a time.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "ctlwatch.h"
#include "gang-ckpt.h"
#include "method.h"
#include "progress.h"
#include "request.h"
#include "sigcatch.h"

/* Seconds between looks for processes that began to catch the request
 * signal after it was sent (a /proc walk of the ranks' groups each). */
#define RESEND_EVERY	0.25

/* Timeline lines a thread holds for the loop's thread to say. */
struct held {
	char **v;
	size_t n;
};

/* What a notice's save left for after the job's stop, run in the
 * background when a next machine follows: its commit record, then its
 * retention. */
struct tail {
	pthread_t th;
	int active;			/* started and not yet joined */
	struct sr_store *st;
	struct sr_ckpt_opts o;		/* its log holds into lines */
	uint64_t seq;			/* the commit it follows */
	int record, retain;		/* what is to do */
	struct held lines;
};

struct dir_method {
	char *ctl_dir, *req_path;
	char **done_paths;		/* one per process that answers */
	char **look_paths;		/* and its first look's marker (dir_starting) */
	size_t ndone;
	int *answered;			/* ndone: its done marker is there */
	long long *steps;		/* ndone: the step it holds, -1 none */
	int *last;			/* ndone: it said "last" */
	int *replaced;			/* ndone: it answered a replaced request */
	uint64_t seq;			/* the pending request's */
	int said_replaced;		/* the timeline said so for this request */
	const char *signal_name;	/* SPOTRUN_CKPT_SIGNAL: "USR1", "none" */
	int said_skipped;		/* this attempt's timeline said who was not signalled */
	/* A request some process did not catch yet: who was signalled, the
	 * ranks' groups, and when to look again for late handlers. */
	struct sr_sigcatch_seen seen;
	pid_t *pgids;
	size_t npgids;
	int *late_sig;			/* npgids: the signal its leader got after request returned */
	double resend_at;		/* monotonic; 0: nobody left to look for */
	/* the save thread */
	pthread_t th;
	int active;			/* started and not yet joined */
	/* The loop's fd: one byte in its pipe when the save ends, and
	 * inotify on the control directory, so that the loop wakes as the
	 * job's done marker lands rather than at its next look (state_poll:
	 * up to 20 ms of the job's work lost a notice). */
	struct sr_ctlwatch w;
	struct sr_ckpt_opts opts;
	struct sr_gang_parts parts;	/* a gang's: the keys of its parts */
	long long step;
	volatile int cancel;
	struct sr_ckpt_result res;
	struct sr_progress pg;		/* the line on a terminal while it runs */
	/* A notice's save commits without its retention, which waits for the
	 * attempt's end (dir_stop): keep, and whether a commit left it due. */
	int retain_keep;
	int retain_due;
	int record_due;			/* and its commit record (opts.commit_record_later) */
	/* A periodic save's retention runs in the save thread after the
	 * commit, its messages held here until the commit is said
	 * (dir_reported). */
	struct held held;
	/* A notice's retention when the run goes on to a next machine: in a
	 * thread of its own while that machine restores and starts the job,
	 * as the old machine's would on a cloud; settled (joined, its
	 * messages said) by dir_settle. */
	struct tail tail;
};

/* Say the lines h holds (from the loop's thread; m NULL: drop them) and
 * let them go. */
static void
held_say(struct sr_method *m, struct held *h)
{
	size_t i;

	for (i = 0; i < h->n; i++) {
		if (m != NULL && m->ctx.copts->log != NULL)
			m->ctx.copts->log(m->ctx.copts->log_arg, h->v[i]);
		free(h->v[i]);
	}
	free(h->v);
	h->v = NULL;
	h->n = 0;
}

static void
dir_settle(struct sr_method *m)
{
	struct dir_method *d = m->priv;

	if (d->tail.active) {
		pthread_join(d->tail.th, NULL);
		d->tail.active = 0;
	}
	held_say(m, &d->tail.lines);
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
	d->w.pipe[0] = d->w.pipe[1] = d->w.ino = d->w.ep = -1;
	d->ctl_dir = sr_asprintf("%s/ctl", m->ctx.js->local_dir);
	d->req_path = sr_asprintf("%s/request", d->ctl_dir);
	d->signal_name = signal_name(m->ctx.js->request_signal);
	if (sr_mkdirs(d->ctl_dir, 0755, err) == -1)
		return -1;
	if (sr_ctlwatch_init(&d->w, err) == -1 ||
	    sr_ctlwatch_add(&d->w, d->ctl_dir, IN_MOVED_TO | IN_CLOSE_WRITE, err) == -1)
		return -1;
	return 0;
}

static void
free_done(struct dir_method *d)
{
	size_t i;

	for (i = 0; i < d->ndone; i++) {
		free(d->done_paths[i]);
		free(d->look_paths[i]);
	}
	free(d->done_paths);
	free(d->look_paths);
	free(d->answered);
	free(d->steps);
	free(d->last);
	free(d->replaced);
	free(d->pgids);
	free(d->late_sig);
	d->done_paths = NULL;
	d->look_paths = NULL;
	d->answered = NULL;
	d->steps = NULL;
	d->last = NULL;
	d->replaced = NULL;
	d->ndone = 0;
	d->pgids = NULL;
	d->late_sig = NULL;
	d->npgids = 0;
	d->resend_at = 0;
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
	if (d->tail.active)	/* a run ended on its own error, without its last line */
		pthread_join(d->tail.th, NULL);
	held_say(NULL, &d->tail.lines);
	held_say(NULL, &d->held);
	sr_ctlwatch_close(&d->w);
	free(d->ctl_dir);
	free(d->req_path);
	free_done(d);
	sr_gang_parts_free(&d->parts);
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

/* The done markers: ctl/done for one process, ctl/done.R for each rank R
 * of several; the first look's beside them, ctl/look(.R), none left from
 * an earlier attempt. */
static void
dir_launch(struct sr_method *m, struct sr_launch *l)
{
	struct dir_method *d = m->priv;
	size_t i, n = l->nprocs > 0 ? (size_t)l->nprocs : 1;

	d->said_skipped = 0;
	free_done(d);
	d->ndone = n;
	d->done_paths = sr_calloc(n + 1, sizeof *d->done_paths);
	d->look_paths = sr_calloc(n + 1, sizeof *d->look_paths);
	d->answered = sr_calloc(n, sizeof *d->answered);
	d->steps = sr_calloc(n, sizeof *d->steps);
	d->last = sr_calloc(n, sizeof *d->last);
	d->replaced = sr_calloc(n, sizeof *d->replaced);
	l->env = sr_calloc(3, sizeof *l->env);
	l->env[0] = sr_asprintf("SPOTRUN_CKPT_REQUEST=%s", d->req_path);
	l->env[1] = sr_asprintf("SPOTRUN_CKPT_SIGNAL=%s", d->signal_name);
	l->proc_env = sr_calloc(n, sizeof *l->proc_env);
	for (i = 0; i < n; i++) {
		d->done_paths[i] = n == 1 ? sr_asprintf("%s/done", d->ctl_dir) :
		    sr_asprintf("%s/done.%zu", d->ctl_dir, i);
		d->look_paths[i] = n == 1 ? sr_asprintf("%s/look", d->ctl_dir) :
		    sr_asprintf("%s/look.%zu", d->ctl_dir, i);
		/* an earlier attempt's would say this one's job had looked */
		(void)unlink(d->look_paths[i]);
		l->proc_env[i] = sr_calloc(3, sizeof *l->proc_env[i]);
		l->proc_env[i][0] = sr_asprintf("SPOTRUN_CKPT_DONE=%s", d->done_paths[i]);
		l->proc_env[i][1] = sr_asprintf("SPOTRUN_CKPT_LOOK=%s", d->look_paths[i]);
	}
}

/* Each process's marker (sr_req_look), a stat each, at a notice and
 * while its request waits: a process that marks nothing may be stepping. */
static int
dir_starting(struct sr_method *m)
{
	struct dir_method *d = m->priv;
	size_t i;
	int rc = d->ndone > 0 ? 1 : -1, look;

	for (i = 0; i < d->ndone; i++)
		if ((look = sr_req_look(d->look_paths[i])) == 0)
			return 0;
		else if (look == -1)
			rc = -1;
	return rc;
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
		    "(%s)%s %s not catch it; the request file alone asks %s", d->signal_name,
		    sc->sent, sc->sent + sc->skipped, (long)sc->skipped_pid, sc->skipped_name, more,
		    sc->skipped > 1 ? "do" : "does", sc->skipped > 1 ? "them" : "it");
}

static int
dir_request(struct sr_method *m, const struct sr_child *job, size_t njob,
    const struct sr_ckpt_request *rq, int *signalled, char *err)
{
	struct dir_method *d = m->priv;
	struct sr_sigcatch sc, all;
	int sig = m->ctx.js->request_signal;
	size_t i;

	memset(&all, 0, sizeof all);
	d->seen.n = 0;
	d->resend_at = 0;
	for (i = 0; i < njob; i++)
		signalled[i] = 0;
	memset(d->answered, 0, d->ndone * sizeof *d->answered);
	memset(d->replaced, 0, d->ndone * sizeof *d->replaced);
	d->seq = rq->seq;
	d->said_replaced = 0;
	if (sr_req_post(d->req_path, d->done_paths, d->ndone, rq->seq,
	    sr_ckpt_reason_name(rq->reason), rq->deadline, err) == -1)
		return -1;
	if (sig == 0)
		return 0;
	/* The file is the request; the signal only wakes those that wait
	 * for it, and would end a process that does not catch it. Each rank
	 * is a process group of its own. */
	d->pgids = sr_reallocarray(d->pgids, njob > 0 ? njob : 1, sizeof *d->pgids);
	d->late_sig = sr_reallocarray(d->late_sig, njob > 0 ? njob : 1, sizeof *d->late_sig);
	d->npgids = njob;
	for (i = 0; i < njob; i++) {
		d->pgids[i] = job[i].pid;
		d->late_sig[i] = 0;
		if (sr_sigcatch_send(job[i].pid, sig, &d->seen, &sc, err) == -1) {
			sr_tl(m->ctx.tl, 1, "warning", "%s; the request file alone asks", err);
			return 0;
		}
		if (sc.leader)
			signalled[i] = sig;
		all.sent += sc.sent;
		if (sc.skipped > 0 && all.skipped == 0) {
			all.skipped_pid = sc.skipped_pid;
			strlcpy(all.skipped_name, sc.skipped_name, sizeof all.skipped_name);
		}
		all.skipped += sc.skipped;
	}
	say_skipped(m, &all);
	if (all.skipped > 0)
		d->resend_at = sr_mono() + RESEND_EVERY;
	return 0;
}

/* While the request is pending, a process that did not catch the signal
 * may install its handler (a job still importing torch at the request):
 * look for those again, and signal each once, so that a job that waits
 * for the signal alone is not left to its write timeout. */
static void
resend(struct sr_method *m)
{
	struct dir_method *d = m->priv;
	struct sr_sigcatch sc;
	char err[SR_ERRMAX];
	int sent = 0, skipped = 0;
	size_t i;

	for (i = 0; i < d->npgids; i++) {
		if (sr_sigcatch_send(d->pgids[i], m->ctx.js->request_signal, &d->seen, &sc, err) == -1)
			continue;	/* the rank's group is gone: nothing to ask */
		sent += sc.sent;
		skipped += sc.skipped;
		if (sc.leader)
			d->late_sig[i] = m->ctx.js->request_signal;
	}
	if (sent > 0)
		sr_tl(m->ctx.tl, 0, "request", "SIG%s sent to %d more process%s, which began to "
		    "catch it after the request", d->signal_name, sent, sent == 1 ? "" : "es");
	d->resend_at = skipped > 0 ? sr_mono() + RESEND_EVERY : 0;
}

/* Rank i answered request seq, which the pending one replaced (the ranks
 * that had answered it before were asked anew by the newer request's
 * signal; this one may have taken that signal for the old request): its
 * answer is ignored, and its processes that catch the signal get it once
 * more, so that it answers the pending request. Said once a request. */
static void
answered_replaced(struct sr_method *m, size_t i, long long seq)
{
	struct dir_method *d = m->priv;
	struct sr_sigcatch sc;
	char err[SR_ERRMAX], who[32];
	int sig = m->ctx.js->request_signal;

	if (d->replaced[i])
		return;
	d->replaced[i] = 1;
	sc.sent = 0;
	if (sig != 0 && i < d->npgids &&
	    sr_sigcatch_send(d->pgids[i], sig, NULL, &sc, err) == -1)
		sc.sent = 0;	/* the rank's group is gone: nothing to ask */
	else if (sig != 0 && i < d->npgids && sc.leader)
		d->late_sig[i] = sig;
	if (d->said_replaced)
		return;
	d->said_replaced = 1;
	if (d->ndone > 1)
		snprintf(who, sizeof who, "rank %zu", i);
	else
		strlcpy(who, "the job", sizeof who);
	sr_tl(m->ctx.tl, 0, "request", "%s answered request %lld, which request %llu replaced: "
	    "that answer is ignored%s", who, seq,
	    (unsigned long long)d->seq, sc.sent > 0 ? "; the request signal is sent again" :
	    "; the request file asks again");
}

/* "rank 3 at step 121" for the message of ranks that disagree. */
static void
say_steps(struct sr_method *m, const long long *steps)
{
	struct dir_method *d = m->priv;
	char list[512] = "", one[64];
	size_t i, len = 0;

	for (i = 0; i < d->ndone; i++) {
		snprintf(one, sizeof one, "%s rank %zu at %lld", i > 0 ? "," : "", i, steps[i]);
		if (len + strlen(one) + 8 >= sizeof list) {
			strcat(list, ", ...");
			break;
		}
		strcat(list, one);
		len += strlen(one);
	}
	sr_tl(m->ctx.tl, 1, "ckpt", "the ranks answered at different steps (%s); their files "
	    "do not make one checkpoint, so none is taken and the previous stays the newest: "
	    "agree on the step before answering (spotrun.torch.requested() in Python, "
	    "doc/python.md)", list + 1);
}

/* Whose death by the request signal spotrun explains: a leader that
 * began to catch it after the request, or a rank asked again, got it
 * from resend or answered_replaced. */
static int
dir_late_signal(struct sr_method *m, size_t i)
{
	struct dir_method *d = m->priv;

	return i < d->npgids ? d->late_sig[i] : 0;
}

/* Every done marker: a step number, or nothing, and the request it answers
 * (none: the pending one); the ranks' steps must agree. The checkpoint is
 * the job's last only when every rank says so: a rank that does not may
 * still have steps to go. */
static int
dir_state(struct sr_method *m, long long *step, int *last)
{
	struct dir_method *d = m->priv;
	char err[SR_ERRMAX];
	long long first = -1, seq;
	int rc, all = 1, differ = 0, every_last = 1;
	size_t i;

	if (d->resend_at > 0 && sr_mono() >= d->resend_at)
		resend(m);

	for (i = 0; i < d->ndone; i++) {
		if (!d->answered[i]) {
			rc = sr_req_done(d->done_paths[i], &d->steps[i], &seq, &d->last[i],
			    err);
			if (rc == -1) {
				sr_tl(m->ctx.tl, 1, "warning", "%s", err);
				d->steps[i] = -1;
				rc = 1;
			} else if (rc == 1 && seq >= 0 && (uint64_t)seq != d->seq) {
				answered_replaced(m, i, seq);
				rc = 0;
			}
			d->answered[i] = rc;
		}
		all &= d->answered[i];
	}
	if (!all)
		return 0;
	for (i = 0; i < d->ndone; i++) {
		every_last &= d->last[i];
		if (d->steps[i] < 0)
			continue;
		if (first >= 0 && d->steps[i] != first)
			differ = 1;
		first = d->steps[i];
	}
	if (differ)
		say_steps(m, d->steps);
	*step = first;
	*last = every_last;
	return differ ? -1 : 1;
}

/* "ranks 2 and 3 of 4": those whose done marker is not there. */
static const char *
dir_waiting(struct sr_method *m, char *buf, size_t len)
{
	struct dir_method *d = m->priv;
	size_t i, k = 0, n = 0, off;

	buf[0] = '\0';
	if (d->ndone < 2)
		return buf;
	for (i = 0; i < d->ndone; i++)
		n += !d->answered[i];
	if (n == 0)
		return buf;
	off = (size_t)snprintf(buf, len, "rank%s", n == 1 ? "" : "s");
	for (i = 0; i < d->ndone && off < len; i++) {
		if (d->answered[i])
			continue;
		k++;
		off += (size_t)snprintf(buf + off, len - off, "%s %zu",
		    k == 1 ? "" : k == n ? " and" : ",", i);
	}
	if (off < len)
		snprintf(buf + off, len - off, " of %zu", d->ndone);
	return buf;
}

static void
dir_clear(struct sr_method *m)
{
	struct dir_method *d = m->priv;

	sr_req_clear(d->req_path, d->done_paths, d->ndone);
	d->resend_at = 0;
	if (d->answered != NULL)
		memset(d->answered, 0, d->ndone * sizeof *d->answered);
}

/* A thread's retention's messages (arg: its struct held), said later. */
static void
hold(void *arg, const char *msg)
{
	struct held *h = arg;

	h->v = sr_reallocarray(h->v, h->n + 1, sizeof *h->v);
	h->v[h->n++] = sr_strdup(msg);
}

/* The save's line is in the timeline: what its retention said after it. */
static void
dir_reported(struct sr_method *m)
{
	struct dir_method *d = m->priv;

	held_say(m, &d->held);
}

static void *
saver_main(void *arg)
{
	struct sr_method *m = arg;
	struct dir_method *d = m->priv;
	struct sr_ckpt_opts o;

	d->res.err[0] = '\0';
	d->res.rc = sr_ckpt_save(m->ctx.st, &d->opts, m->ctx.ckpt_dir, d->step, &d->res.stats,
	    d->res.err);
	/* a gang's part (a node but the first's) commits nothing to retain */
	d->retain_due = d->res.rc == 0 && d->retain_keep > 0 && d->opts.part == NULL;
	d->record_due = d->res.rc == 0 && d->opts.commit_record_later;
	if (d->retain_due && d->opts.deadline <= 0) {	/* not a notice's: now, said later */
		d->retain_due = 0;
		o = d->opts;
		o.keep = d->retain_keep;
		o.progress = NULL;
		o.log = hold;
		o.log_arg = &d->held;
		sr_ckpt_retain(m->ctx.st, &o, d->res.stats.seq);
	}
	if (d->res.rc == 0 && m->ctx.on_commit != NULL)
		m->ctx.on_commit(m->ctx.on_commit_arg, &d->res.stats);
	(void)sr_ctlwatch_post(&d->w);
	return NULL;
}

static void dir_stop(struct sr_method *m, int background);

static int
dir_save(struct sr_method *m, long long step, double deadline, char *err)
{
	struct dir_method *d = m->priv;

	dir_settle(m);		/* one retention at a time, said before the save */
	if (d->record_due)	/* a notice's save, its attempt going on after all */
		dir_stop(m, 0);
	d->opts = *m->ctx.copts;
	sr_gang_parts_free(&d->parts);
	sr_gang_parts_for(m->ctx.gang, d->opts.job, step, &d->opts, &d->parts);
	sr_progress_start(&d->pg, m->ctx.term, "checkpoint");
	d->opts.progress = sr_progress_update;
	d->opts.progress_arg = &d->pg;
	d->opts.deadline = deadline;
	/* A notice's commit record waits for the job's stop too (dir_stop). */
	d->opts.commit_record_later = deadline > 0 && d->opts.part == NULL;
	/* A deadline is a notice's: the job is stopped only once the save
	 * ends, so its retention (+0.37 s on S3) waits until then. Another
	 * save's runs in the save thread after the commit (saver_main). */
	d->retain_keep = d->opts.keep;
	d->opts.keep = 0;
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

	return sr_ctlwatch_fd(&d->w);
}

static int
dir_saved(struct sr_method *m, struct sr_ckpt_result *res)
{
	struct dir_method *d = m->priv;

	/* a marker landed (state reads it) or the save ended */
	sr_ctlwatch_drain(&d->w);
	if (!d->active || !sr_ctlwatch_take(&d->w))
		return 0;
	pthread_join(d->th, NULL);
	d->active = 0;
	sr_progress_end(&d->pg);
	*res = d->res;
	return 1;
}

static void *
tail_main(void *arg)
{
	struct tail *t = arg;
	char err[SR_ERRMAX], msg[SR_ERRMAX + 64];

	if (t->record && sr_ckpt_commit_record(t->st, t->o.job, t->seq, t->o.epoch, err) == -1 &&
	    t->o.log != NULL) {
		snprintf(msg, sizeof msg, "warning: %s: should its manifest be damaged, a restore "
		    "cannot fall back past it", err);
		t->o.log(t->o.log_arg, msg);
	}
	if (t->retain)
		sr_ckpt_retain(t->st, &t->o, t->seq);
	return NULL;
}

/* The attempt is over, its job stopped: the retention that a notice's save
 * left undone runs now, off the path from the notice to the job's stop.
 * The machine may be going; a gc cut short loses nothing (the next
 * commit's retention does the rest). When a next machine follows in this
 * run (background), it runs beside that machine's restore and start
 * rather than before them: on a cloud the old machine's would. */
static void
dir_stop(struct sr_method *m, int background)
{
	struct dir_method *d = m->priv;
	struct tail *t = &d->tail;

	dir_settle(m);
	if (!d->retain_due && !d->record_due)
		return;
	t->record = d->record_due;
	t->retain = d->retain_due;
	d->record_due = d->retain_due = 0;
	t->st = m->ctx.st;
	t->seq = d->res.stats.seq;
	t->o = d->opts;
	t->o.keep = d->retain_keep;
	t->o.deadline = 0;
	t->o.cancel = NULL;
	t->o.progress = NULL;
	if (background) {
		t->o.log = hold;
		t->o.log_arg = &t->lines;
		if (pthread_create(&t->th, NULL, tail_main, t) == 0) {
			t->active = 1;
			return;
		}
	}
	t->o.log = m->ctx.copts->log;
	t->o.log_arg = m->ctx.copts->log_arg;
	tail_main(t);
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
	.late_signal = dir_late_signal,
	.state_poll = 0.02,	/* the done marker at 50 Hz */
	.clear = dir_clear,
	.starting = dir_starting,
	.waiting = dir_waiting,
	.save = dir_save,
	.fd = dir_fd,
	.cancel = dir_cancel,
	.saved = dir_saved,
	.committed = NULL,
	.reported = dir_reported,
	.stop = dir_stop,
	.settle = dir_settle,
	.discard = dir_discard,
};
