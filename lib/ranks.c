/*
 * ranks.c: a library job of several ranks (doc/libspotrun.3, "Ranks";
 * doc/format.md, "Ranks"). Each rank has its own context and saves its
 * own buffers; spotrun_save is collective. Rank r > 0 uploads its
 * pieces' chunks to packs of its own and writes a part, a manifest that
 * commits nothing, at J/parts/E-S-rankR.json (epoch and step in the key,
 * so a part of a save that failed joins no other one); rank 0 waits for
 * every part, joins their pieces to its own and commits the one manifest
 * and one move of LATEST at its epoch, then deletes the parts; rank r
 * returns once LATEST names that commit. The ranks never talk to each
 * other but through the store, which they share already: no socket, no
 * rendezvous, the same code on file://, s3://, gs:// and az://.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"
#include "gangparts.h"
#include "jobkeys.h"
#include "savesrc.h"
#include "latest.h"
#include "util.h"
#include "lib.h"

/* Ranks at most (a sanity bound: a rank-0 merge reads one part each). */
#define RANKS_MAX 65536
/* Seconds a collective save without a deadline waits for the other ranks
 * (rank 0 for the parts; the others for the commit, twice as long),
 * $SPOTRUN_RANK_WAIT:
 * long enough for a slower rank's upload, short enough that a rank that
 * died is reported while the job can still do something about it. */
#define RANK_WAIT 300.0

/* One of rank and world_size: the parameter, or the variable when it is
 * -1, or dflt when that is not set; in [lo, hi]. */
static int
resolve(int param, const char *pname, const char *var, int dflt, int lo, int hi, int *out,
    char *msg, size_t len)
{
	const char *v = getenv(var);
	char *end;
	long x;

	if (param != -1) {
		if (param < lo || param > hi) {
			snprintf(msg, len, "spotrun_create: params.%s %d is outside [%d, %d] (-1: from "
			    "$%s)", pname, param, lo, hi, var);
			return -1;
		}
		*out = param;
		return 0;
	}
	if (v == NULL || *v == '\0') {
		*out = dflt;
		return 0;
	}
	errno = 0;
	x = strtol(v, &end, 10);
	if (errno != 0 || *end != '\0' || end == v || x < lo || x > hi) {
		snprintf(msg, len, "spotrun_create: %s=%.40s is not a %s in [%d, %d]", var, v, pname,
		    lo, hi);
		return -1;
	}
	*out = (int)x;
	return 0;
}

spotrun_error
sr_lib_ranks_setup(spotrun_ctx *ctx, char *msg, size_t len)
{
	const char *w = getenv("SPOTRUN_RANK_WAIT");
	int world, rank;
	char *end;

	if (resolve(ctx->p.world_size, "world_size", "WORLD_SIZE", 1, 1, RANKS_MAX, &world, msg,
	    len) == -1 ||
	    resolve(ctx->p.rank, "rank", "RANK", 0, 0, world - 1, &rank, msg, len) == -1)
		return SPOTRUN_ERROR_PARAMETER;
	ctx->p.world_size = world;
	ctx->p.rank = rank;
	ctx->rank_wait = RANK_WAIT;
	if (w != NULL && *w != '\0') {
		ctx->rank_wait = strtod(w, &end);
		if (*end != '\0' || end == w || !(ctx->rank_wait > 0) || ctx->rank_wait > 86400) {
			snprintf(msg, len, "spotrun_create: SPOTRUN_RANK_WAIT=%.40s is not a number of "
			    "seconds in (0, 86400]", w);
			return SPOTRUN_ERROR_PARAMETER;
		}
	}
	return SPOTRUN_OK;
}

/* What this rank saves: src, or the n tensors t. */
struct what {
	const struct sr_save_src *src;
	const struct sr_ckpt_tensor *t;
	size_t n;
};

static int
save_one(spotrun_ctx *ctx, const struct sr_ckpt_opts *o, const struct what *w, long long step,
    struct sr_ckpt_stats *cs, char *err)
{
	if (w->src != NULL)
		return sr_ckpt_save_src(ctx->st, o, w->src, step, cs, err);
	return sr_ckpt_save_tensors(ctx->st, o, w->t, w->n, step, cs, err);
}

/* Rank 0: wait for ranks 1 to W - 1 and commit them all. */
static int
save_rank0(spotrun_ctx *ctx, struct sr_ckpt_opts *o, const struct what *w, long long step,
    struct sr_ckpt_stats *cs, char *err)
{
	size_t i, nmerge = (size_t)ctx->p.world_size - 1;
	char **keys = sr_try_calloc(nmerge, sizeof *keys, err);
	int rc;

	if (keys == NULL)
		return sr_err_prefix(err, "save %s: step %lld", o->job, step);
	for (i = 0; i < nmerge; i++) {
		if ((keys[i] = sr_jobkey_rank_part(o->job, o->epoch, step, (int)i + 1, err)) == NULL) {
			while (i > 0)
				free(keys[--i]);
			free(keys);
			return sr_err_prefix(err, "save %s: step %lld", o->job, step);
		}
	}
	o->merge = (const char *const *)keys;
	o->nmerge = nmerge;
	o->merge_ranks = 1;
	o->merge_wait = sr_ckpt_deadline(o) > 0 ? 0 : ctx->rank_wait;
	rc = save_one(ctx, o, w, step, cs, err);
	if (rc == 0)
		sr_parts_sweep(ctx->st, o, step);
	for (i = 0; i < nmerge; i++)
		free(keys[i]);
	free(keys);
	o->merge = NULL;
	o->nmerge = 0;
	return rc;
}

/* Rank r > 0: its part, then rank 0's commit. */
static int
save_rank(spotrun_ctx *ctx, struct sr_ckpt_opts *o, const struct what *w, long long step,
    struct sr_ckpt_stats *cs, char *err)
{
	struct sr_latest base;
	char why[SR_ERRMAX];
	uint64_t seq;
	int rc;

	/* LATEST before the part: rank 0 cannot commit this save without it */
	if (sr_latest_read(ctx->st, o->job, &base, why) != 0)
		return sr_err(err, "save %s: step %lld: read LATEST: %s", o->job, step, why);
	if ((o->part = sr_jobkey_rank_part(o->job, o->epoch, step, ctx->p.rank, err)) == NULL)
		return sr_err_prefix(err, "save %s: step %lld", o->job, step);
	rc = save_one(ctx, o, w, step, cs, err);
	/* rank 0 may wait rank_wait for the slowest part, then commit: this
	 * rank waits longer, so that it learns whether rank 0 gave up */
	if (rc == 0 && (rc = sr_parts_await(ctx->st, o, &base, step,
	    sr_ckpt_deadline(o) > 0 ? 0 : 2 * ctx->rank_wait, &seq, err)) == 0)
		cs->seq = seq;
	free((char *)o->part);
	o->part = NULL;
	return rc;
}

int
sr_lib_ranks_save(spotrun_ctx *ctx, struct sr_ckpt_opts *o, const struct sr_save_src *src,
    const struct sr_ckpt_tensor *t, size_t n, long long step, struct sr_ckpt_stats *cs,
    char *err)
{
	struct what w = { src, t, n };

	o->world_size = ctx->p.world_size;
	o->rank = ctx->p.rank;
	if (ctx->p.world_size <= 1)
		return save_one(ctx, o, &w, step, cs, err);
	if (ctx->p.rank == 0)
		return save_rank0(ctx, o, &w, step, cs, err);
	return save_rank(ctx, o, &w, step, cs, err);
}
