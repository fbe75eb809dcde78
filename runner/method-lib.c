/*
 * method-lib.c: library mode (method.h), for jobs that link libspotrun
 * (lib/libspotrun.h): the job saves its registered buffers to the store
 * itself, so the supervisor packs nothing. It keeps the policy's side:
 * restore learns the newest committed checkpoint (the library reads the
 * buffers); launch hands the job the store, the request file, a done
 * marker, the run's epoch and `keep`; request writes the request file
 * (seq, reason, deadline: directory mode's line, request.c), which the
 * library polls at the job's every step, so no signal is sent; state reads
 * the done marker the library writes once it has committed the checkpoint
 * that answers the request ("seq=N step=S checkpoint=C" and its stats);
 * save starts nothing and reports that commit through the pipe the loop
 * polls. doc/design.md, "Library mode", has the protocol and why.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctlwatch.h"
#include "method.h"
#include "provider.h"
#include "request.h"

struct lib_method {
	char *ctl_dir, *req_path, *done_path;
	char *look_path;		/* the ranks' first look (lib_starting) */
	uint64_t req_seq;		/* the pending request's */
	int answered;			/* its done marker was read */
	struct sr_ckpt_result res;	/* what the marker said */
	int last;			/* and that it is the job's last (last=1) */
	/* The loop's fd: its pipe has one byte once "the save" (the job's
	 * commit) is over, and inotify watches the saves file below. */
	struct sr_ctlwatch w;
	int pending;			/* a byte is in the pipe */
	/* The saves the job reports unasked (lib/report.c): the file and
	 * how far it is read. */
	char *saves_path;
	off_t saves_off;
	int saves_bad;			/* lines that were no report: said once */
	/* A commit that answered a request a newer one replaced (a notice's
	 * a periodic one's): it is in the store all the same, so it is
	 * reported as the job's own saves are (job_saved), once. */
	struct sr_ckpt_result late;
	int late_pending;
	unsigned long long late_seq;	/* the request it answered */
};

static int
lib_init(struct sr_method *m, char *err)
{
	struct lib_method *l = sr_calloc(1, sizeof *l);
	int fd;

	m->priv = l;
	l->w.pipe[0] = l->w.pipe[1] = l->w.ino = l->w.ep = -1;
	l->ctl_dir = sr_asprintf("%s/ctl", m->ctx.js->local_dir);
	l->req_path = sr_asprintf("%s/request", l->ctl_dir);
	l->done_path = sr_asprintf("%s/done", l->ctl_dir);
	l->look_path = sr_asprintf("%s/look", l->ctl_dir);
	l->saves_path = sr_asprintf("%s/saves", l->ctl_dir);
	if (sr_mkdirs(l->ctl_dir, 0755, err) == -1)
		return -1;
	if (sr_ctlwatch_init(&l->w, err) == -1)
		return -1;
	/* The run's own file, empty: lines of an earlier run are not news. */
	if ((fd = open(l->saves_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) == -1)
		return sr_errno(err, "create %s", l->saves_path);
	close(fd);
	/* the saves file's lines, and the done marker as it lands (the loop
	 * wakes as the job answers, not at its next look at the marker) */
	if (sr_ctlwatch_add(&l->w, l->saves_path, IN_MODIFY, err) == -1 ||
	    sr_ctlwatch_add(&l->w, l->ctl_dir, IN_MOVED_TO | IN_CLOSE_WRITE, err) == -1)
		return -1;
	return 0;
}

static void
lib_free(struct sr_method *m)
{
	struct lib_method *l = m->priv;

	if (l == NULL)
		return;
	sr_ctlwatch_close(&l->w);
	free(l->saves_path);
	free(l->ctl_dir);
	free(l->req_path);
	free(l->done_path);
	free(l->look_path);
	free(l);
}

struct newest {
	struct sr_ckpt_stats cs;
	int found;
};

static int
newest_cb(const struct sr_ckpt_stats *ck, int is_latest, void *arg)
{
	struct newest *n = arg;

	if (is_latest) {
		n->cs = *ck;
		n->cs.problem = NULL;
		n->found = 1;
	}
	return 0;
}

/* The library restores the buffers itself (libspotrun's spotrun_restore);
 * the supervisor only learns which checkpoint that will be, for its
 * timeline and SPOTRUN_RESUME_STEP (empty: a fresh start, which the
 * library then keeps to). */
static int
lib_restore(struct sr_method *m, int fresh, struct sr_ckpt_stats *cs, char *err)
{
	struct newest n;

	if (sr_rmtree(m->ctx.ckpt_dir, err) == -1 || sr_mkdirs(m->ctx.ckpt_dir, 0755, err) == -1)
		return -1;
	if (fresh)
		return SR_CKPT_NONE;
	memset(&n, 0, sizeof n);
	if (sr_ckpt_list(m->ctx.st, m->ctx.copts->job, newest_cb, &n, err) == -1)
		return -1;
	if (!n.found)
		return SR_CKPT_NONE;
	*cs = n.cs;
	cs->seconds = 0;	/* read by the job, not here */
	return 0;
}

/* What the library reads (libspotrun(3), ENVIRONMENT). Every rank reads
 * the same request file, its deadline included, and saves its buffers
 * when asked (a collective spotrun_save: rank 0 commits every rank's
 * buffers as one checkpoint); every rank is given the done marker, which
 * the library writes on rank 0 alone, once, after the commit. */
static void
lib_launch(struct sr_method *m, struct sr_launch *la)
{
	struct lib_method *l = m->priv;
	struct sr_provider_kind kind;
	const char *prov = m->ctx.js->provider.name;

	la->env = sr_calloc(9, sizeof *la->env);
	la->env[0] = sr_asprintf("SPOTRUN_STORE=%s", m->ctx.js->store);
	la->env[1] = sr_asprintf("SPOTRUN_CKPT_REQUEST=%s", l->req_path);
	la->env[2] = sr_asprintf("SPOTRUN_EPOCH=%" PRIu64, m->ctx.copts->epoch);
	la->env[3] = sr_asprintf("SPOTRUN_CKPT_KEEP=%d", m->ctx.copts->keep);
	la->env[4] = sr_asprintf("SPOTRUN_CKPT_DONE=%s", l->done_path);
	la->env[5] = sr_asprintf("SPOTRUN_CKPT_SAVES=%s", l->saves_path);
	la->env[6] = sr_asprintf("SPOTRUN_CKPT_LOOK=%s", l->look_path);
	/* an earlier attempt's would say this one's job had looked */
	(void)unlink(l->look_path);
	/* the store's credentials in the job ask no metadata address where
	 * the run's do not (run-setup.c) */
	if (sr_provider_kind(prov != NULL ? prov : "auto", &kind) == 0 && !kind.metadata)
		la->env[7] = sr_strdup("SPOTRUN_STORE_NO_METADATA=1");
}

/* One marker for every rank, as the request and the done marker are: the
 * library is in every rank, so one rank's word that it marks is every
 * rank's, and the first look of any ends the job's start. */
static int
lib_starting(struct sr_method *m)
{
	return sr_req_look(((struct lib_method *)m->priv)->look_path);
}

static int read_done(struct lib_method *l, struct sr_method *m);

static int
lib_request(struct sr_method *m, const struct sr_child *job, size_t njob,
    const struct sr_ckpt_request *rq, int *signalled, char *err)
{
	struct lib_method *l = m->priv;
	size_t i;

	for (i = 0; i < njob; i++)
		signalled[i] = 0;
	/* The request this one replaces may have been answered since the
	 * last look; posting clears its marker, so take it now. */
	if (l->req_seq != 0 && !l->answered && read_done(l, m) == 1) {
		l->late = l->res;
		snprintf(l->late.err, sizeof l->late.err, "committed by the job for request %llu, "
		    "which request %llu replaced", (unsigned long long)l->req_seq,
		    (unsigned long long)rq->seq);
		l->late_pending = 1;
		l->late_seq = l->req_seq;
	}
	l->req_seq = rq->seq;
	l->answered = 0;
	return sr_req_post(l->req_path, &l->done_path, 1, rq->seq, sr_ckpt_reason_name(rq->reason),
	    rq->deadline, err);
}

static void
fill_result(struct sr_ckpt_result *res, struct sr_method *m, long long step,
    unsigned long long ckpt, unsigned long long raw, unsigned long long stored,
    unsigned long long fresh, unsigned long long reused, double secs)
{
	memset(res, 0, sizeof *res);
	res->stats.seq = ckpt;
	res->stats.step = step;
	res->stats.epoch = m->ctx.copts->epoch;
	res->stats.raw_bytes = raw;
	res->stats.stored_bytes = stored;
	res->stats.new_bytes = fresh;
	res->stats.reused_chunks = reused;
	res->stats.seconds = secs;
}

/* Keep the commit that answered request seq, which the pending one
 * replaced, for job_saved to report (with how, in err: see method.h). */
static void
take_late(struct lib_method *l, struct sr_method *m, unsigned long long seq, long long step,
    unsigned long long ckpt, unsigned long long raw, unsigned long long stored,
    unsigned long long fresh, unsigned long long reused, double secs)
{
	fill_result(&l->late, m, step, ckpt, raw, stored, fresh, reused, secs);
	snprintf(l->late.err, sizeof l->late.err, "committed by the job for request %llu, which "
	    "request %llu replaced", seq, (unsigned long long)l->req_seq);
	l->late_pending = 1;
	l->late_seq = seq;
}

/* The done marker: "seq=N step=S checkpoint=C raw=R stored=T new=W
 * reused=U seconds=X", then " blocked=B" from a library that says how
 * long the save blocked training (less than X: an async save); 1 when it
 * answers the pending request. */
static int
read_done(struct lib_method *l, struct sr_method *m)
{
	unsigned long long seq, ckpt, raw, stored, fresh, reused;
	long long step;
	double secs, blocked = -1;
	char *buf, err[SR_ERRMAX];
	const char *b;
	int last;

	if (access(l->done_path, F_OK) == -1)
		return 0;
	if (sr_read_file(l->done_path, 4096, &buf, NULL, err) == -1) {
		sr_tl(m->ctx.tl, 1, "warning", "%s", err);
		return 0;
	}
	if (sscanf(buf, "seq=%llu step=%lld checkpoint=%llu raw=%llu stored=%llu new=%llu "
	    "reused=%llu seconds=%lf", &seq, &step, &ckpt, &raw, &stored, &fresh, &reused,
	    &secs) != 8) {
		sr_tl(m->ctx.tl, 1, "warning", "read %s: '%.60s' is not a libspotrun answer "
		    "(seq=N step=S checkpoint=C ...)", l->done_path, buf);
		free(buf);
		return 0;
	}
	if ((b = strstr(buf, " blocked=")) != NULL && sscanf(b, " blocked=%lf", &blocked) != 1)
		blocked = -1;
	last = strstr(buf, " last=1") != NULL;
	free(buf);
	if (seq != l->req_seq) {
		/* an older request's, written late: committed all the same */
		if (seq < l->req_seq && seq != l->late_seq)
			take_late(l, m, seq, step, ckpt, raw, stored, fresh, reused, secs);
		return 0;
	}
	if (blocked >= 0 && blocked < secs)
		sr_tl(m->ctx.tl, 0, "ckpt", "the job saved step %lld in the background: its training "
		    "was blocked %.3f s of the save's %.3f s", step, blocked, secs);
	fill_result(&l->res, m, step, ckpt, raw, stored, fresh, reused, secs);
	l->last = last;
	return 1;
}

/* Complete once the library says it committed: the state is in the store
 * (the job's last checkpoint when the library says so: spotrun_set_last). */
static int
lib_state(struct sr_method *m, long long *step, int *last)
{
	struct lib_method *l = m->priv;

	*last = 0;
	if (!l->answered)
		l->answered = read_done(l, m);
	if (!l->answered)
		return 0;
	*step = l->res.stats.step;
	*last = l->last;
	return 1;
}

static const char *
lib_waiting(struct sr_method *m, char *buf, size_t len)
{
	buf[0] = '\0';
	return buf;
}

static void
lib_clear(struct sr_method *m)
{
	struct lib_method *l = m->priv;

	sr_req_clear(l->req_path, &l->done_path, 1);
}

/* The job committed already: nothing to take to the store, only the news
 * for the loop. */
static int
lib_save(struct sr_method *m, long long step, double deadline, char *err)
{
	struct lib_method *l = m->priv;

	if (!l->answered)
		return sr_err(err, "save: the job has not committed its checkpoint");
	if (sr_ctlwatch_post(&l->w) == -1)
		return sr_errno(err, "write pipe");
	/* ctx.on_commit (the attempt's record after a commit) is for the
	 * method's own thread, and this is the loop's: the record follows
	 * at the attempt's end, as after a notice's save. */
	l->pending = 1;
	return 0;
}

static int
lib_fd(const struct sr_method *m)
{
	const struct lib_method *l = m->priv;

	return sr_ctlwatch_fd(&l->w);
}

/* One line of the saves file (lib/report.c's forms) into res: 1, or 0
 * with a warning for a line that is neither. */
static int
parse_save(struct sr_method *m, const char *line, struct sr_ckpt_result *res)
{
	unsigned long long ckpt, raw, stored, fresh, reused, seq;
	struct sr_ckpt_stats *s = &res->stats;
	double secs, blocked;
	long long step;
	int off = 0;

	memset(res, 0, sizeof *res);
	if (sscanf(line, "commit step=%lld checkpoint=%llu raw=%llu stored=%llu new=%llu "
	    "reused=%llu seconds=%lf blocked=%lf", &step, &ckpt, &raw, &stored, &fresh, &reused,
	    &secs, &blocked) == 8) {
		s->seq = ckpt;
		s->step = step;
		s->epoch = m->ctx.copts->epoch;
		s->raw_bytes = raw;
		s->stored_bytes = stored;
		s->new_bytes = fresh;
		s->reused_chunks = reused;
		s->seconds = secs;
		return 1;
	}
	if (sscanf(line, "failed seq=%llu step=%lld error=%n", &seq, &step, &off) == 2 && off > 0) {
		res->rc = -1;
		s->seq = seq;
		s->step = step;
		strlcpy(res->err, line + off, sizeof res->err);
		return 1;
	}
	/* once: a job that writes there itself could flood the timeline */
	if (((struct lib_method *)m->priv)->saves_bad++ == 0)
		sr_tl(m->ctx.tl, 1, "warning", "read %s: '%.60s' is not a libspotrun report of a "
		    "save (ignored, and any more such lines)",
		    ((struct lib_method *)m->priv)->saves_path, line);
	return 0;
}

/* The next whole line of the saves file past saves_off, if any. */
static int
lib_job_saved(struct sr_method *m, struct sr_ckpt_result *res)
{
	struct lib_method *l = m->priv;
	char buf[1100];
	ssize_t n;
	char *nl;
	int fd;

	if (l->late_pending) {
		l->late_pending = 0;
		*res = l->late;
		return 1;
	}
	sr_ctlwatch_drain(&l->w);	/* the wake is taken; the file says what is new */
	for (;;) {
		if ((fd = open(l->saves_path, O_RDONLY | O_CLOEXEC)) == -1)
			return 0;
		n = pread(fd, buf, sizeof buf - 1, l->saves_off);
		close(fd);
		if (n <= 0)
			return 0;
		buf[n] = '\0';
		if ((nl = strchr(buf, '\n')) == NULL) {
			if ((size_t)n < sizeof buf - 1)
				return 0;	/* the rest of the line is still being written */
			l->saves_off += n;	/* longer than any report: skipped */
			continue;
		}
		*nl = '\0';
		l->saves_off += nl - buf + 1;
		if (parse_save(m, buf, res))
			return 1;
	}
}

static int
lib_saved(struct sr_method *m, struct sr_ckpt_result *res)
{
	struct lib_method *l = m->priv;

	if (!l->pending)
		return 0;
	(void)sr_ctlwatch_take(&l->w);	/* the byte lib_save wrote */
	l->pending = 0;
	*res = l->res;
	return 1;
}

/* The markers' folder and the job's scratch directory: the state is in
 * the store. */
static int
lib_discard(struct sr_method *m, char *err)
{
	struct lib_method *l = m->priv;

	if (sr_rmtree(m->ctx.ckpt_dir, err) == -1)
		return -1;
	return sr_rmtree(l->ctl_dir, err);
}

const struct sr_method_ops sr_method_lib_ops = {
	.name = "library",
	.init = lib_init,
	.free = lib_free,
	.restore = lib_restore,
	.job_reads = 1,
	.launch = lib_launch,
	.request = lib_request,
	.state = lib_state,
	.state_poll = 0.02,	/* the done marker at 50 Hz */
	.clear = lib_clear,
	.starting = lib_starting,
	.waiting = lib_waiting,
	.save = lib_save,
	.fd = lib_fd,
	.cancel = NULL,
	.saved = lib_saved,
	.job_saved = lib_job_saved,
	.committed = NULL,
	.stop = NULL,
	.discard = lib_discard,
};
