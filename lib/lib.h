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
	double req_checked;		/* sr_mono() of the last look */
	int req_pending;
	unsigned long long req_seq, answered_seq;
	double req_deadline;
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

/* lib/ranks.c: a job of several ranks. Resolve ctx->p.rank and
 * ctx->p.world_size (-1: from $RANK and $WORLD_SIZE) and the wait
 * ($SPOTRUN_RANK_WAIT): SPOTRUN_OK, or SPOTRUN_ERROR_PARAMETER with msg
 * naming the variable. */
spotrun_error sr_lib_ranks_setup(spotrun_ctx *ctx, char *msg, size_t len);
struct sr_ckpt_opts;
struct sr_ckpt_tensor;
struct sr_ckpt_stats;
/* sr_ckpt_save_tensors for this rank of ctx's world: alone, that; with
 * world_size > 1 rank 0 waits for every other rank's part and commits
 * them all, and any other rank saves its part and waits for that commit
 * (cs->seq is the checkpoint committed). sr_ckpt_save_tensors's codes. */
int sr_lib_ranks_save(spotrun_ctx *ctx, struct sr_ckpt_opts *o, const struct sr_ckpt_tensor *t,
    size_t n, long long step, struct sr_ckpt_stats *cs, char *err);

#endif
