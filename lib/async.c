/*
 * async.c: the async save of libspotrun (spotrun_save_async,
 * spotrun_wait): the registered buffers are copied into staging memory on
 * the caller's thread (lib/staging.c), and a thread of the context's own
 * runs the checkpoint pipeline on the copy (hashing, compression, packs,
 * the commit) while training goes on. One save is in flight at a time;
 * what it ended with (committed, or its error) is kept in ctx->async
 * until a call collects it: spotrun_wait, or the next save, restore or
 * spotrun_free, which wait for it first.
 *
 * The save's thread reads the context's fixed parts only (its params,
 * store, job, epoch, done marker); what it shares with the caller is in
 * struct sr_async, under the staging's lock (sg.mu): the request it
 * answers, and its end. A notice that comes while the save is in flight
 * is handed to it (sr_async_take_request): it takes the notice's
 * deadline (opts.deadline_live, read by the pipeline between chunks and
 * tries) and writes the done marker once its commit lands.
 *
 * Also here, for both kinds of save: the done marker's line and the
 * commit's message.
 */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"
#include "lib.h"
#include "device.h"
#include "staging.h"

/* The staging budget when spotrun_set_staging_bytes gave none (0): the whole state up
 * to this. */
#define DEFAULT_BUDGET ((size_t)1 << 30)

struct sr_async {
	/* Set by the caller before the thread starts, then read-only. */
	spotrun_ctx *ctx;
	long long step;
	double t0;			/* sr_mono() when save_async began */
	struct lib_buf *bufs;		/* the registered buffers as they were */
	struct sr_ckpt_tensor *t;
	size_t n;
	struct sr_ckpt_opts o;
	pthread_t tid;
	int joined;			/* the caller's: the thread is joined */
	struct sr_stage sg;		/* its lock, sg.mu, guards what follows */
	/* Read with __atomic: the deadline the pipeline keeps to. */
	double deadline;
	/* Under sg.mu. */
	int answering;			/* answers request answer_seq */
	unsigned long long answer_seq;
	int last;			/* ctx->last when it began */
	int closed;			/* its answer is decided: no request taken now */
	int done;			/* the thread has ended: rc and err are its result */
	int rc;
	char err[SR_ERRMAX];
};

/* ---- the done marker and the commit's message ---- */

void
sr_async_answer(const spotrun_ctx *ctx, unsigned long long seq, long long step,
    const struct sr_ckpt_stats *cs, double blocked, int last)
{
	char line[300], err[SR_ERRMAX];
	int n = snprintf(line, sizeof line, "seq=%llu step=%lld checkpoint=%" PRIu64 " raw=%" PRIu64
	    " stored=%" PRIu64 " new=%" PRIu64 " reused=%" PRIu64 " seconds=%.3f blocked=%.3f%s\n",
	    seq, step, cs->seq, cs->raw_bytes, cs->stored_bytes, cs->new_bytes, cs->reused_chunks,
	    cs->seconds, blocked, last ? " last=1" : "");

	if (ctx->done_path == NULL)	/* a rank above 0: rank 0 answers */
		return;
	if (sr_write_file_atomic(ctx->done_path, line, (size_t)n, 0, err) == -1)
		sr_lib_tell(ctx, SPOTRUN_MSG_WARNING, err);
}

void
sr_async_tell_commit(const spotrun_ctx *ctx, long long step, size_t nbufs,
    const struct sr_ckpt_stats *cs, double blocked)
{
	char line[SR_ERRMAX + 64];
	int n = snprintf(line, sizeof line, "checkpoint %" PRIu64 " of %s committed: step %lld, %zu "
	    "buffer%s, %" PRIu64 " bytes (%" PRIu64 " stored, %" PRIu64 " new)", cs->seq, ctx->job,
	    step, nbufs, nbufs == 1 ? "" : "s", cs->raw_bytes, cs->stored_bytes, cs->new_bytes);

	if (blocked >= 0 && n > 0 && (size_t)n < sizeof line)
		snprintf(line + n, sizeof line - (size_t)n, "; training blocked %.3f s of %.3f s",
		    blocked, cs->seconds);
	sr_lib_tell(ctx, SPOTRUN_MSG_INFO, line);
}

/* ---- the save's thread ---- */

static void *
save_main(void *arg)
{
	struct sr_async *j = arg;
	spotrun_ctx *ctx = j->ctx;
	struct sr_save_src src;
	struct sr_ckpt_stats cs;
	unsigned long long seq;
	char err[SR_ERRMAX];
	double blocked;
	int rc, answering;

	sr_stage_source(&j->sg, &src);
	err[0] = '\0';
	/* alone, or this rank's part of a collective save (lib/ranks.c) */
	rc = sr_lib_ranks_save(ctx, &j->o, &src, NULL, 0, j->step, &cs, err);
	sr_stage_end(&j->sg);
	/* the device chunks' records: the next save's references */
	sr_lib_device_sums_end(j->sg.sums, rc == 0 && !j->sg.refused, cs.seq);
	pthread_mutex_lock(&j->sg.mu);
	if (j->sg.refused) {
		rc = -1;
		snprintf(err, sizeof err, "save %s: the store failed and the snapshot of step %lld, "
		    "larger than the staging budget, cannot be tried again (its first parts are "
		    "overwritten; the failure is in the warning before); nothing committed", ctx->job,
		    j->step);
	}
	j->closed = 1;
	answering = j->answering;
	seq = j->answer_seq;
	blocked = j->sg.filled_at - j->t0;
	pthread_mutex_unlock(&j->sg.mu);
	if (rc == 0) {
		sr_async_tell_commit(ctx, j->step, j->n, &cs, blocked);
		if (answering)
			sr_async_answer(ctx, seq, j->step, &cs, blocked, j->last);
		else
			sr_lib_report_save(ctx, 0, j->step, &cs, blocked, NULL);
	} else {
		sr_lib_report_save(ctx, answering ? seq : 0, j->step, NULL, 0, err);
	}
	pthread_mutex_lock(&j->sg.mu);
	j->rc = rc;
	strlcpy(j->err, err, sizeof j->err);
	j->done = 1;
	pthread_cond_broadcast(&j->sg.cv);
	pthread_mutex_unlock(&j->sg.mu);
	return NULL;
}

/* ---- the caller's side ---- */

static void
job_free(spotrun_ctx *ctx, struct sr_async *j)
{
	sr_stage_free(ctx, &j->sg);
	sr_lib_device_sums_free(j->sg.sums);
	free(j->sg.order);
	sr_lib_free(&ctx->p, j->t);
	sr_lib_free(&ctx->p, j->bufs);
	sr_lib_free(&ctx->p, j);
}

/* Join the ended thread and take in its answer to a request: answered,
 * or given up by the supervisor at its deadline, it is not asked again. */
static void
join(spotrun_ctx *ctx, struct sr_async *j)
{
	pthread_join(j->tid, NULL);
	j->joined = 1;
	if (j->answering && (j->rc == 0 || j->rc == SR_CKPT_LATE)) {
		if (j->answer_seq > ctx->answered_seq)
			ctx->answered_seq = j->answer_seq;
		ctx->req_pending = 0;
	}
}

void
sr_async_reap(spotrun_ctx *ctx)
{
	struct sr_async *j = ctx->async;
	int done;

	if (j == NULL || j->joined)
		return;
	pthread_mutex_lock(&j->sg.mu);
	done = j->done;
	pthread_mutex_unlock(&j->sg.mu);
	if (done)
		join(ctx, j);
}

int
sr_async_collect(spotrun_ctx *ctx, int *rc, char *err)
{
	struct sr_async *j = ctx->async;

	if (j == NULL)
		return 0;
	if (!j->joined) {
		pthread_mutex_lock(&j->sg.mu);
		while (!j->done)
			pthread_cond_wait(&j->sg.cv, &j->sg.mu);
		pthread_mutex_unlock(&j->sg.mu);
		join(ctx, j);
	}
	*rc = j->rc;
	strlcpy(err, j->err, SR_ERRMAX);
	ctx->async = NULL;
	job_free(ctx, j);
	return 1;
}

void
sr_async_settle(spotrun_ctx *ctx)
{
	char err[SR_ERRMAX], line[SR_ERRMAX + 80];
	long long step = ctx->async != NULL ? ctx->async->step : -1;
	int rc;

	if (sr_async_collect(ctx, &rc, err) && rc != 0) {
		snprintf(line, sizeof line, "the async save of step %lld failed (no spotrun_wait took "
		    "its result): %s", step, err);
		sr_lib_tell(ctx, SPOTRUN_MSG_WARNING, line);
	}
}

int
sr_async_take_request(spotrun_ctx *ctx)
{
	struct sr_async *j = ctx->async;
	double cur;
	int taken = 0;

	if (j == NULL)
		return 0;
	pthread_mutex_lock(&j->sg.mu);
	if (!j->closed && !j->done && j->answering && j->answer_seq == ctx->req_seq) {
		taken = 1;	/* the request it began with, or a notice it took */
	} else if (!j->closed && !j->done && strcmp(ctx->req_reason, "notice") == 0) {
		j->answering = 1;
		j->answer_seq = ctx->req_seq;
		__atomic_load(&j->deadline, &cur, __ATOMIC_RELAXED);
		if (cur == 0 || ctx->req_deadline < cur)
			__atomic_store(&j->deadline, &ctx->req_deadline, __ATOMIC_RELAXED);
		taken = 1;
	}
	pthread_mutex_unlock(&j->sg.mu);
	return taken;
}

void
sr_async_free(spotrun_ctx *ctx)
{
	sr_async_settle(ctx);
	sr_staging_release(ctx, ctx->stage);
	ctx->stage = NULL;
	ctx->stage_cap = 0;
}

/* The staging the save needs: the whole snapshot when the budget holds
 * it, else two halves of whole chunks (*half, *halves). */
static spotrun_error
size_staging(spotrun_ctx *ctx, uint64_t total, size_t chunk, size_t *half, int *halves)
{
	size_t budget = ctx->staging_bytes;

	if (budget == 0)
		budget = total < DEFAULT_BUDGET ? (size_t)total : DEFAULT_BUDGET;
	if (total <= budget) {
		*half = (size_t)total;
		*halves = 1;
		return SPOTRUN_OK;
	}
	*half = budget / 2 / chunk * chunk;
	*halves = 2;
	if (*half == 0)
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "save_async: staging_bytes %zu is "
		    "below two chunks of %zu bytes, the least a snapshot larger than it (%" PRIu64
		    " bytes) is staged in: raise it, or lower chunk_size", budget, chunk, total);
	return SPOTRUN_OK;
}

/* The buffers as they are now, and as the pipeline takes them. */
static int
copy_bufs(spotrun_ctx *ctx, struct sr_async *j)
{
	size_t i;

	j->n = ctx->nbufs;
	j->bufs = sr_lib_alloc(&ctx->p, (j->n + 1) * sizeof *j->bufs);
	j->t = sr_lib_alloc(&ctx->p, (j->n + 1) * sizeof *j->t);
	if (j->bufs == NULL || j->t == NULL)
		return -1;
	memcpy(j->bufs, ctx->bufs, j->n * sizeof *j->bufs);
	memset(j->t, 0, (j->n + 1) * sizeof *j->t);
	for (i = 0; i < j->n; i++) {
		const struct lib_buf *b = &j->bufs[i];
		j->t[i].name = b->name;
		j->t[i].dtype = (int)b->dtype;
		j->t[i].ndim = b->ndim;
		j->t[i].shape = b->shape;
		j->t[i].offsets = b->offsets;
		j->t[i].sizes = b->sizes;
		j->t[i].bytes = b->bytes;
	}
	return 0;
}

/* A save of the registered buffers as they are now, with o's options,
 * not started: its buffers, tensors and their order. NULL: out of memory
 * (said, in ctx). */
static struct sr_async *
job_new(spotrun_ctx *ctx, const char *verb, const struct sr_ckpt_opts *o)
{
	struct sr_async *j;

	if ((j = sr_lib_alloc(&ctx->p, sizeof *j)) == NULL) {
		sr_lib_fail(ctx, SPOTRUN_ERROR_MEMORY, "%s: out of memory", verb);
		return NULL;
	}
	memset(j, 0, sizeof *j);
	j->ctx = ctx;
	j->o = *o;
	j->deadline = o->deadline;
	j->o.deadline_live = &j->deadline;
	j->o.cancel = &j->sg.cancel;
	j->o.chunk_size = o->chunk_size ? o->chunk_size : SR_CKPT_DEFAULT_CHUNK;
	j->o.world_size = ctx->p.world_size;	/* for the shares staged */
	j->o.rank = ctx->p.rank;
	if (sr_lib_device_memos(ctx) == -1 || copy_bufs(ctx, j) == -1) {
		sr_lib_free(&ctx->p, j->t);
		sr_lib_free(&ctx->p, j->bufs);
		sr_lib_free(&ctx->p, j);
		sr_lib_fail(ctx, SPOTRUN_ERROR_MEMORY, "%s: out of memory", verb);
		return NULL;
	}
	j->sg.bufs = j->bufs;
	j->sg.t = j->t;
	j->sg.n = j->n;
	j->sg.o = &j->o;
	if ((j->sg.order = sr_ckpt_tensors_order(j->t, j->n, NULL)) == NULL) {
		job_free(ctx, j);
		sr_lib_fail(ctx, SPOTRUN_ERROR_MEMORY, "%s: out of memory", verb);
		return NULL;
	}
	return j;
}

/* ctx->stage holding at least need bytes: the staging kept from the last
 * save, or new memory, its pages faulted in (sr_staging_alloc); a budget
 * lowered since the last save holds staging to it. */
static spotrun_error
ensure_staging(spotrun_ctx *ctx, const char *verb, size_t need)
{
	if (ctx->stage_cap >= need &&
	    (ctx->staging_bytes == 0 || ctx->stage_cap <= ctx->staging_bytes))
		return SPOTRUN_OK;
	sr_staging_release(ctx, ctx->stage);
	ctx->stage_cap = 0;
	if ((ctx->stage = sr_staging_alloc(ctx, need)) == NULL)
		return sr_lib_fail(ctx, SPOTRUN_ERROR_MEMORY, "%s: out of memory for %zu bytes of "
		    "staging", verb, need);
	ctx->stage_cap = need;
	return SPOTRUN_OK;
}

spotrun_error
sr_async_prepare(spotrun_ctx *ctx, const struct sr_ckpt_opts *o)
{
	struct sr_async *j;
	void *before;
	size_t half;
	char line[160];
	int halves;
	spotrun_error code;

	if (ctx->async != NULL)
		return SPOTRUN_OK;	/* a save holds staging already */
	if ((j = job_new(ctx, "prepare_async", o)) == NULL)
		return SPOTRUN_ERROR_MEMORY;
	/* no device chunk is referenced before the first save: all staged */
	code = size_staging(ctx, sr_stage_need(&j->sg), j->o.chunk_size, &half, &halves);
	job_free(ctx, j);
	if (code != SPOTRUN_OK)
		return code;
	before = ctx->stage;
	if ((code = ensure_staging(ctx, "prepare_async", half * (size_t)halves)) != SPOTRUN_OK)
		return code;
	if (ctx->stage == before)
		return SPOTRUN_OK;	/* prepared already, or by a save */
	snprintf(line, sizeof line, "staging of %zu bytes ready for spotrun_save_async, its "
	    "pages faulted in", ctx->stage_cap);
	sr_lib_tell(ctx, SPOTRUN_MSG_INFO, line);
	return SPOTRUN_OK;
}

spotrun_error
sr_async_start(spotrun_ctx *ctx, long long step, const struct sr_ckpt_opts *o, int answering,
    double t0)
{
	struct sr_async *j;
	uint64_t total;
	size_t half, chunk;
	char err[SR_ERRMAX];
	int halves, rc;
	spotrun_error code;

	if ((j = job_new(ctx, "save_async", o)) == NULL)
		return SPOTRUN_ERROR_MEMORY;
	j->step = step;
	j->t0 = t0;
	j->answering = answering;
	j->answer_seq = ctx->req_seq;
	j->last = ctx->last;
	chunk = j->o.chunk_size;
	/* device buffers: their chunk sums first (on the GPUs), so that a
	 * chunk the last commit holds is neither copied nor staged */
	if (sr_lib_device_sums(ctx, j->bufs, j->t, j->n, &j->o, &j->sg.sums, err) == -1) {
		job_free(ctx, j);
		return sr_lib_fail(ctx, sr_lib_oom_or(SPOTRUN_ERROR_NO_DEVICE, err), "save_async of step %lld: %s; "
		    "nothing committed", step, err);
	}
	/* what this rank stages: its boxes, its shares of replicated
	 * tensors, but the chunks referenced */
	total = sr_stage_need(&j->sg);
	if ((code = size_staging(ctx, total, chunk, &half, &halves)) != SPOTRUN_OK) {
		job_free(ctx, j);
		return code;
	}
	if ((code = ensure_staging(ctx, "save_async", half * (size_t)halves)) != SPOTRUN_OK) {
		job_free(ctx, j);
		return code;
	}
	j->sg.mem = ctx->stage;
	if (sr_stage_plan(ctx, &j->sg, half, halves) == -1) {
		job_free(ctx, j);
		return sr_lib_fail(ctx, SPOTRUN_ERROR_MEMORY, "save_async: out of memory");
	}
	/* The thread first reads the store's catalog while the copy runs. */
	if (pthread_create(&j->tid, NULL, save_main, j) != 0) {
		job_free(ctx, j);
		return sr_lib_fail(ctx, SPOTRUN_ERROR_MEMORY, "save_async: cannot start the save's "
		    "thread");
	}
	ctx->async = j;
	if (sr_stage_fill(&j->sg, err) == -1) {
		char why[SR_ERRMAX];

		/* no snapshot: the save stops on it, and the caller hears it now
		 * (only a device buffer's copy can fail) */
		sr_async_collect(ctx, &rc, why);
		return sr_lib_fail(ctx, sr_lib_oom_or(SPOTRUN_ERROR_NO_DEVICE, err), "save_async of step %lld: %s; "
		    "nothing committed", step, err);
	}
	return SPOTRUN_OK;
}
