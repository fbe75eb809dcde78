/*
 * lib.h: libspotrun's own header (not installed): the context and its
 * registered buffers, shared by the files of lib/, and the few helpers
 * every entry point uses (lib/msg.c): memory through the caller's hooks,
 * messages through its callback.
 */
#ifndef SR_LIB_H
#define SR_LIB_H

#include <stddef.h>
#include <stdint.h>

#ifndef SPOTRUN_EXPERIMENTAL
#define SPOTRUN_EXPERIMENTAL	/* its entry points are defined in lib/ */
#endif
#include "libspotrun.h"
#include "manifest.h"
#include "util.h"

struct lib_buf {
	char *name;
	spotrun_dtype dtype;
	int ndim;
	uint64_t shape[SR_TENSOR_DIMS], offsets[SR_TENSOR_DIMS], sizes[SR_TENSOR_DIMS];
	void *host;
	uint64_t bytes;
	int device;			/* CUDA device ordinal; -1: a host buffer */
	uint64_t dptr;			/* device buffers: the device pointer */
	struct sr_dev_memo *memo;	/* device buffers: lib/device.c's */
	struct sr_dev_gpu *gpu;		/* device buffers: its device's handle */
};

struct spotrun_ctx_s {
	spotrun_params p;		/* strings replaced by the copies below */
	char *store_url, *job;
	struct sr_store *st;
	spotrun_error sticky;		/* spotrun_create's failure, returned by every call */
	char sticky_msg[SR_ERRMAX];
	char msg[SR_ERRMAX];		/* the last call's failure, "" */
	struct lib_buf *bufs;
	size_t nbufs, bufs_cap;
	uint64_t epoch;			/* SPOTRUN_EPOCH */
	/* the request protocol */
	char *req_path, *done_path;	/* NULL: not under library mode */
	char *saves_path;		/* SPOTRUN_CKPT_SAVES, rank 0's (report.c); NULL: none */
	char *look_path;		/* SPOTRUN_CKPT_LOOK, every rank's; NULL: none */
	int looked;			/* this process marked its first look */
	double req_checked;		/* sr_mono() of the last look */
	int req_pending;
	unsigned long long req_seq, answered_seq;
	int last;			/* spotrun_set_last: answers are the job's last */
	double req_deadline;
	char req_reason[16];		/* of req_seq: "notice", "periodic", ... */
	/* The async save (lib/async.c). async: the save in flight, or the
	 * last one whose result no call has collected yet (NULL: none).
	 * stage, stage_cap: the staging memory, kept from save to save
	 * (or allocated ahead by spotrun_prepare_async);
	 * staging_bytes its budget (spotrun_set_staging_bytes).
	 * The caller's thread alone reads and writes these four, and every
	 * field above: the save's thread reads only what does not change
	 * while a context lives (p, st, job, epoch, done_path, rank_wait)
	 * and struct sr_async's own fields, under its lock as async.c says;
	 * it writes the device buffers' records of the last commit (their
	 * memos, devs->last_seq and have_last: sr_lib_device_sums_end),
	 * which the caller's thread reads only after collecting the save. */
	struct sr_async *async;
	void *stage;
	size_t stage_cap;
	size_t staging_bytes;		/* spotrun_set_staging_bytes (0: the default) */
	/* device buffers (lib/device.c) */
	char *cuda_library;		/* spotrun_set_cuda_library's copy; NULL: none */
	struct sr_lib_devs *devs;	/* NULL until one is registered */
	/* ranks (lib/ranks.c): ctx->p.rank and world_size resolved */
	double rank_wait;		/* seconds a collective save waits for the others */
};

/* Memory through the context's hooks (malloc and free without them). */
void *sr_lib_alloc(const spotrun_params *p, size_t n);
void sr_lib_free(const spotrun_params *p, void *ptr);
/* A copy of s, NULL when the allocator failed. */
char *sr_lib_strdup(const spotrun_params *p, const char *s);

/* Hand text to the caller's message callback, if any. */
void sr_lib_tell(const spotrun_ctx *ctx, spotrun_msg_level level, const char *text);
/* Fail the call: keep the message in ctx->msg, say it as an error, return
 * code. */
spotrun_error sr_lib_fail(spotrun_ctx *ctx, spotrun_error code, const char *fmt, ...)
    SR_PRINTF(3, 4);
/* Start a call: spotrun_create's kept failure (said again), or SPOTRUN_OK
 * with ctx->msg cleared. */
spotrun_error sr_lib_begin(spotrun_ctx *ctx);
/* code, or SPOTRUN_ERROR_MEMORY when the module's message err says
 * out-of-memory (sr_err_is_oom): what failed below was the allocator. */
spotrun_error sr_lib_oom_or(spotrun_error code, const char *err);

/* ---- the async save (lib/async.c, lib/staging.c) ---- */

struct sr_ckpt_opts;
struct sr_ckpt_stats;

/* Start the save of step in the background with options o (copied; its
 * deadline is the request's when answering, the request ctx->req_seq):
 * returns once every registered buffer is in staging, SPOTRUN_OK or a
 * failure of the start (memory, the budget) with ctx->msg set. t0: when
 * the caller's call began (sr_mono), for the time training was blocked. */
spotrun_error sr_async_start(spotrun_ctx *ctx, long long step, const struct sr_ckpt_opts *o,
    int answering, double t0);
/* spotrun_prepare_async: the staging the next save_async needs for the
 * buffers registered now (o: the save's options, as sr_async_start's),
 * allocated and its pages faulted in, unless ctx has it or a save in
 * flight holds it. SPOTRUN_OK, or a failure with ctx->msg set. */
spotrun_error sr_async_prepare(spotrun_ctx *ctx, const struct sr_ckpt_opts *o);
/* Wait for the save in flight and take its result: 0 when there was
 * none; else 1 with *rc the checkpoint module's code and err its error. */
int sr_async_collect(spotrun_ctx *ctx, int *rc, char *err);
/* Before another save, a restore or the end: wait for the save in flight;
 * a failure nobody collected is told as a warning. */
void sr_async_settle(spotrun_ctx *ctx);
/* Without blocking: take in a save that has ended (its answer to a
 * request, which ctx->answered_seq then records). */
void sr_async_reap(spotrun_ctx *ctx);
/* The request just read (ctx->req_seq) is the save in flight's: the one
 * it answers already, or a notice, which it takes (and its deadline) to
 * answer: 1; else 0 (a periodic request that came after it began). */
int sr_async_take_request(spotrun_ctx *ctx);
/* spotrun_free's part: settle, then the staging memory back. */
void sr_async_free(spotrun_ctx *ctx);
/* Tell the supervisor (ctx->done_path) that checkpoint cs answers
 * request seq, training blocked for blocked seconds; from either thread. */
/* Tell the supervisor (ctx->saves_path; none: nothing) of a save no
 * request asked for that committed cs (failure NULL), or of a save that
 * failed with that message (seq: the request it answered, 0 none). Any
 * thread; a line that cannot be written is a warning. */
void sr_lib_report_save(const spotrun_ctx *ctx, unsigned long long seq, long long step,
    const struct sr_ckpt_stats *cs, double blocked, const char *failure);

/* last: the answer says the checkpoint is the job's last (spotrun_set_last
 * when the save began). */
void sr_async_answer(const spotrun_ctx *ctx, unsigned long long seq, long long step,
    const struct sr_ckpt_stats *cs, double blocked, int last);
/* The INFO line of a commit; blocked < 0: a blocking save (not said). */
void sr_async_tell_commit(const spotrun_ctx *ctx, long long step, size_t nbufs,
    const struct sr_ckpt_stats *cs, double blocked);

/* Staging (lib/staging.c): its memory, from one allocator (pinned for
 * device buffers), and the copy of a buffer's bytes into it, one
 * function per kind of buffer. */
void *sr_staging_alloc(const spotrun_ctx *ctx, size_t n);
void sr_staging_release(const spotrun_ctx *ctx, void *mem);
/* Copy len bytes of b from offset off to dst: 0, or -1 with err. */
int sr_staging_copy(const struct lib_buf *b, uint64_t off, void *dst, size_t len, char *err);
/* lib/ranks.c: a job of several ranks. Resolve ctx->p.rank and
 * ctx->p.world_size (-1: from $RANK and $WORLD_SIZE) and the wait
 * ($SPOTRUN_RANK_WAIT): SPOTRUN_OK, or SPOTRUN_ERROR_PARAMETER with msg
 * naming the variable. */
spotrun_error sr_lib_ranks_setup(spotrun_ctx *ctx, char *msg, size_t len);
struct sr_ckpt_tensor;
struct sr_save_src;
/* The save of src (a source of savesrc.h; NULL: the n buffers t, as
 * sr_ckpt_save_tensors takes them) for this rank of ctx's world: alone,
 * that; with world_size > 1 rank 0 waits for every other rank's part and
 * commits them all, and any other rank saves its part and waits for that
 * commit (cs->seq is the checkpoint committed). sr_ckpt_save_tensors's
 * codes. Reads only what does not change while ctx lives: callable from
 * an async save's thread. */
int sr_lib_ranks_save(spotrun_ctx *ctx, struct sr_ckpt_opts *o, const struct sr_save_src *src,
    const struct sr_ckpt_tensor *t, size_t n, long long step, struct sr_ckpt_stats *cs,
    char *err);

#endif
