/*
 * device-save.c: spotrun_save of a context with device buffers (device.h,
 * sr_lib_device_save): a source of save.c's pipeline (savesrc.h) over the
 * host buffers, whole where they lie, and the device buffers a chunk at a
 * time, each referenced (its sum equal to the last commit's record) or
 * handed over from a pinned staging buffer that a copy off the GPU filled
 * (after the byte-plane split on the GPU, for 2- and 4-byte floats). Two
 * staging buffers: chunk i+1's copy is queued as chunk i is handed over,
 * so it runs while the workers encode chunk i; with both held, the source
 * answers SR_SRC_DRAIN_ONE. device.c says why and what it holds.
 *
 * The chunk sums and the records of what a save stored (struct
 * sr_dev_sums) are the async save's too (device.h: lib/staging.c plans
 * and hands over its parts with them). With several ranks the save goes
 * through lib/ranks.c, each rank's items being its pieces and its shares
 * of replicated buffers (chunks [first, end) of them).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byteplane.h"
#include "chunksum.h"
#include "ckpt.h"
#include "cudadrv.h"
#include "manifest.h"
#include "savesrc.h"
#include "util.h"
#include "device.h"
#include "device-int.h"
#include "lib.h"

enum slot_state { SLOT_FREE, SLOT_COPYING, SLOT_OUT };

struct slot {
	enum slot_state state;
	size_t bi, k;			/* the chunk: buffer index, chunk number */
	int planes;
};

/* The chunk sums of a save's device buffers and what it records of them
 * (device.h): the blocking save's and the async save's alike. */
struct sr_dev_sums {
	spotrun_ctx *ctx;		/* its allocator hooks, its devices */
	struct sr_lib_devs *d;
	const struct lib_buf *bufs;	/* as the save began (memos: the last commit's) */
	size_t n, chunk;
	uint64_t *first, *end;		/* per buffer: the chunks this rank saves */
	int reuse;			/* the memos apply to this save */
	uint8_t **sums;			/* per buffer: the sums now */
	int *summed;			/* per buffer: sums computed on the GPU */
	struct sr_dev_memo *next;	/* per buffer: what this save records */
	int next_bad;			/* a record could not be kept */
	int cuda_failed;
};

struct dsave {
	struct sr_dev_sums u;
	const struct sr_ckpt_tensor *t;
	size_t *order;			/* indices of bufs by name */
	struct sr_manifest *m;
	size_t ti, k;			/* the next item to hand out */
	struct slot slots[SLOTS];
	int tries;			/* of the pipeline's (describe counts them) */
	size_t refs;			/* references handed out by the last try */
};

static size_t
nchunks(const struct sr_dev_sums *u, size_t bi)
{
	return (u->bufs[bi].bytes + u->chunk - 1) / u->chunk;
}

static size_t
chunk_len(const struct sr_dev_sums *u, size_t bi, size_t k)
{
	uint64_t left = u->bufs[bi].bytes - (uint64_t)k * u->chunk;

	return left < u->chunk ? (size_t)left : u->chunk;
}

/* The planes a chunk of b is split into on its GPU: 4 (f32), 2 (f16,
 * bf16), or 0 (copied as it is: other dtypes, or no kernels). */
static int
planes_of(const struct dsave *s, const struct lib_buf *b)
{
	if (!sr_dev_gpu_of(s->u.d, b->device)->cu->kernels)
		return 0;
	switch (b->dtype) {
	case SPOTRUN_F32: return 4;
	case SPOTRUN_F16: case SPOTRUN_BF16: return 2;
	default: return 0;
	}
}

/* Whether chunk k of buffer bi equals what the memo says the last commit
 * holds (its sum known now). */
static int
unchanged(const struct sr_dev_sums *u, size_t bi, size_t k)
{
	const struct sr_dev_memo *mm = u->bufs[bi].memo;

	return u->reuse && mm != NULL && mm->n == nchunks(u, bi) && mm->chunks[k].pack != NULL &&
	    memcmp(u->sums[bi] + 16 * k, mm->sums + 16 * k, 16) == 0;
}

/* Whether chunk k of buffer bi must come off its GPU. */
static int
needs_copy(const struct sr_dev_sums *u, size_t bi, size_t k)
{
	return !u->summed[bi] || !unchanged(u, bi, k);
}

static int
dev_fail(struct dsave *s)
{
	s->u.cuda_failed = 1;
	return -1;
}

/* Queue the copy of chunk k of buffer bi into slot j. */
static int
start_copy(struct dsave *s, size_t j, size_t bi, size_t k, char *err)
{
	const struct lib_buf *b = &s->u.bufs[bi];
	struct sr_dev_gpu *g = sr_dev_gpu_of(s->u.d, b->device);
	struct slot *sl = &s->slots[j];
	CUdeviceptr src = b->dptr + (uint64_t)k * s->u.chunk;
	size_t len = chunk_len(&s->u, bi, k);
	char what[SR_ERRMAX], why[SR_ERRMAX];
	int rc = 0;

	snprintf(what, sizeof what, "copy chunk %zu of \"%s\" off CUDA device %d", k, b->name,
	    b->device);
	sl->bi = bi;
	sl->k = k;
	sl->planes = planes_of(s, b);
	if (sr_dev_push(g, what, err) == -1)
		return dev_fail(s);
	if (sl->planes != 0) {
		if (sr_byteplane_split_cuda(g->cu, src, len, (unsigned)sl->planes, g->tmp[j],
		    g->stream, why) == -1)
			rc = sr_err(err, "%s: %s", what, why);
		src = g->tmp[j];
	}
	if (rc == 0)
		rc = sr_dev_ok(g, g->cu->api.cuMemcpyDtoHAsync(s->u.d->stage[j], src, len, g->stream),
		    what, "cuMemcpyDtoHAsync", err);
	sr_dev_pop(g);
	if (rc != 0)
		return dev_fail(s);
	sl->state = SLOT_COPYING;
	return 0;
}

/* Wait for slot j's copy. */
static int
wait_copy(struct dsave *s, size_t j, char *err)
{
	const struct lib_buf *b = &s->u.bufs[s->slots[j].bi];
	struct sr_dev_gpu *g = sr_dev_gpu_of(s->u.d, b->device);
	char what[SR_ERRMAX];
	int rc;

	snprintf(what, sizeof what, "copy chunk %zu of \"%s\" off CUDA device %d", s->slots[j].k,
	    b->name, b->device);
	if (sr_dev_push(g, what, err) == -1)
		return dev_fail(s);
	rc = sr_dev_ok(g, g->cu->api.cuStreamSynchronize(g->stream), what, "cuStreamSynchronize", err);
	sr_dev_pop(g);
	return rc == 0 ? 0 : dev_fail(s);
}

/* The slot holding or copying chunk k of buffer bi, or -1. */
static int
slot_of(const struct dsave *s, size_t bi, size_t k)
{
	int j;

	for (j = 0; j < SLOTS; j++)
		if (s->slots[j].state != SLOT_FREE && s->slots[j].bi == bi && s->slots[j].k == k)
			return j;
	return -1;
}

static int
free_slot(const struct dsave *s)
{
	int j;

	for (j = 0; j < SLOTS; j++)
		if (s->slots[j].state == SLOT_FREE)
			return j;
	return -1;
}

/* Start the copy of the first chunk after (ti, k) in the save's order
 * that must come off its GPU, if a slot is free: chunk i+1's copy runs
 * while chunk i is encoded. */
static int
prefetch(struct dsave *s, size_t ti, size_t k, char *err)
{
	int j = free_slot(s);
	size_t bi;

	if (j < 0)
		return 0;
	for (; ti < s->u.n; ti++, k = (size_t)-1) {
		bi = s->order[ti];
		if (s->u.bufs[bi].device < 0)
			continue;
		if (k == (size_t)-1)
			k = (size_t)s->u.first[bi];
		for (; k < s->u.end[bi]; k++)
			if (needs_copy(&s->u, bi, k) && slot_of(s, bi, k) < 0)
				return start_copy(s, (size_t)j, bi, k, err);
	}
	return 0;
}

/* Every copy queued has ended (a save that stopped early leaves some). */
static void
settle(struct dsave *s)
{
	size_t i, j;

	for (j = 0; j < SLOTS; j++)
		if (s->slots[j].state == SLOT_COPYING)
			for (i = 0; i < s->u.d->ngpus; i++)
				if (sr_dev_push(&s->u.d->gpus[i], "", NULL) == 0) {
					s->u.d->gpus[i].cu->api.cuStreamSynchronize(s->u.d->gpus[i].stream);
					sr_dev_pop(&s->u.d->gpus[i]);
				}
	for (j = 0; j < SLOTS; j++)
		s->slots[j].state = SLOT_FREE;
}

void
sr_lib_device_sums_restart(struct sr_dev_sums *u)
{
	size_t i;

	for (i = 0; i < u->n; i++)
		sr_dev_memo_clear(&u->ctx->p, &u->next[i]);
	u->next_bad = 0;
}

static int
dsave_describe(void *arg, struct sr_manifest *m, const struct sr_ckpt_opts *o, char *err)
{
	struct dsave *s = arg;

	/* each try of the save starts here */
	settle(s);
	sr_lib_device_sums_restart(&s->u);
	s->ti = 0;
	s->k = (size_t)-1;
	s->m = m;
	/* a try after one that failed references nothing: the records may
	 * name a chunk the store lost (a pack deleted), which would fail
	 * every try until the deadline */
	s->u.reuse = s->tries++ == 0 && s->u.d->have_last && m->link == SR_LINK_PARENT &&
	    m->parent == s->u.d->last_seq;
	s->refs = 0;
	return sr_ckpt_tensors_describe(s->t, s->order, s->u.n, m, o, err);
}

/* Host buffers whole (this rank's share of a replicated one), where they
 * lie; device buffers a chunk at a time (of the share): referenced, or out
 * of a staging buffer. */
static int
dsave_next(void *arg, struct sr_manifest *m, const struct sr_ckpt_opts *o, size_t *cursor,
    struct sr_save_item *it, char *err)
{
	struct dsave *s = arg;
	const struct lib_buf *b;
	const struct sr_mpiece *p;
	size_t bi, len;
	int j;

	for (; s->ti < s->u.n; s->ti++, s->k = (size_t)-1) {
		bi = s->order[s->ti];
		b = &s->u.bufs[bi];
		p = &m->tensors[s->ti].pieces[0];
		memset(it, 0, sizeof *it);
		it->e = (struct sr_mentry *)&p->data;
		it->fd = -1;
		if (b->device < 0) {
			if (p->data.size == 0 || s->k != (size_t)-1)
				continue;
			it->mem = (const uint8_t *)b->host + p->share_off;
			it->size = p->data.size;
			s->k = 0;
			(*cursor)++;
			return 1;
		}
		if (s->k == (size_t)-1)
			s->k = (size_t)s->u.first[bi];
		if (s->k >= s->u.end[bi])
			continue;
		len = chunk_len(&s->u, bi, s->k);
		it->size = len;
		if (!needs_copy(&s->u, bi, s->k)) {
			it->ref = &b->memo->chunks[s->k];
			s->refs++;
			it->csum = s->u.sums[bi] + 16 * s->k;
			s->k++;
			(*cursor)++;
			return 1;
		}
		if ((j = slot_of(s, bi, s->k)) < 0) {
			if ((j = free_slot(s)) < 0)
				return SR_SRC_DRAIN_ONE;
			if (start_copy(s, (size_t)j, bi, s->k, err) == -1)
				return -1;
		}
		if (s->slots[j].state == SLOT_COPYING && wait_copy(s, (size_t)j, err) == -1)
			return -1;
		if (!s->u.summed[bi]) {
			/* no kernels: the sum of the raw bytes, now on the host */
			sr_chunksum(s->u.d->stage[j], len, s->u.sums[bi] + 16 * s->k);
			if (unchanged(&s->u, bi, s->k)) {
				s->slots[j].state = SLOT_FREE;
				it->ref = &b->memo->chunks[s->k];
				s->refs++;
				it->csum = s->u.sums[bi] + 16 * s->k;
				s->k++;
				(*cursor)++;
				return prefetch(s, s->ti, s->k, err) == -1 ? -1 : 1;
			}
		}
		s->slots[j].state = SLOT_OUT;
		it->mem = s->u.d->stage[j];
		it->planes = s->slots[j].planes;
		it->csum = s->u.sums[bi] + 16 * s->k;
		s->k++;
		(*cursor)++;
		return prefetch(s, s->ti, s->k, err) == -1 ? -1 : 1;
	}
	return 0;
}

void
sr_lib_device_record(struct sr_dev_sums *u, size_t bi, const struct sr_mentry *e)
{
	const struct sr_mchunk *c;
	struct sr_dev_memo *nx;
	size_t k;

	if (u == NULL || u->bufs[bi].device < 0 || e->nchunks == 0)
		return;
	nx = &u->next[bi];
	k = (size_t)u->first[bi] + e->nchunks - 1;
	c = &e->chunks[e->nchunks - 1];
	if (nx->chunks == NULL) {
		nx->n = nchunks(u, bi);
		nx->chunks = sr_lib_alloc(&u->ctx->p, nx->n * sizeof *nx->chunks);
		nx->sums = sr_lib_alloc(&u->ctx->p, 16 * nx->n);
		if (nx->chunks == NULL || nx->sums == NULL) {
			u->next_bad = 1;
			sr_lib_free(&u->ctx->p, nx->chunks);
			sr_lib_free(&u->ctx->p, nx->sums);
			memset(nx, 0, sizeof *nx);
			return;
		}
		memset(nx->chunks, 0, nx->n * sizeof *nx->chunks);
		memset(nx->sums, 0, 16 * nx->n);
	}
	if (k >= nx->n || !c->has_csum)
		return;
	sr_lib_free(&u->ctx->p, (char *)nx->chunks[k].pack);	/* a retry's */
	nx->chunks[k] = *c;
	memcpy(nx->sums + 16 * k, c->csum, 16);
	if ((nx->chunks[k].pack = sr_lib_strdup(&u->ctx->p, c->pack)) == NULL)
		u->next_bad = 1;
}

/* Keep what the save recorded for a device chunk (for the next save's
 * references), and take its staging buffer back. */
static void
dsave_finished(void *arg, const struct sr_ckpt_opts *o, struct sr_save_item *it,
    uint64_t saved)
{
	struct dsave *s = arg;
	size_t i;
	int j;

	for (j = 0; j < SLOTS; j++)
		if (it->mem != NULL && it->mem == s->u.d->stage[j])
			s->slots[j].state = SLOT_FREE;
	for (i = 0; i < s->m->ntensors && it->e != &s->m->tensors[i].pieces[0].data; i++)
		;
	if (i < s->m->ntensors)
		sr_lib_device_record(&s->u, s->order[i], it->e);
}

/* The sums of every chunk of the device buffers whose GPU has the
 * kernels, computed there; only the sums come off it. */
static int
sum_on_gpus(struct sr_dev_sums *u, char *err)
{
	size_t bi, nc;
	CUdeviceptr scratch, out;
	char what[SR_ERRMAX], why[SR_ERRMAX];
	int rc;

	for (bi = 0; bi < u->n; bi++) {
		const struct lib_buf *b = &u->bufs[bi];
		struct sr_dev_gpu *g;

		if (b->device < 0 || (nc = nchunks(u, bi)) == 0)
			continue;
		g = sr_dev_gpu_of(u->d, b->device);
		if (!g->cu->kernels)
			continue;
		snprintf(what, sizeof what, "chunk sums of \"%s\" on CUDA device %d", b->name,
		    b->device);
		scratch = out = 0;
		if (sr_dev_push(g, what, err) == -1) {
			u->cuda_failed = 1;
			return -1;
		}
		rc = sr_dev_ok(g, g->cu->api.cuMemAlloc(&scratch, sr_chunksum_cuda_scratch(b->bytes,
		    u->chunk)), what, "cuMemAlloc", err);
		if (rc == 0)
			rc = sr_dev_ok(g, g->cu->api.cuMemAlloc(&out, 16 * nc), what, "cuMemAlloc", err);
		if (rc == 0 && sr_chunksum_cuda(g->cu, b->dptr, b->bytes, u->chunk, scratch, out,
		    g->stream, why) == -1)
			rc = sr_err(err, "%s: %s", what, why);
		if (rc == 0)
			rc = sr_dev_ok(g, g->cu->api.cuStreamSynchronize(g->stream), what,
			    "cuStreamSynchronize", err);
		if (rc == 0)
			rc = sr_dev_ok(g, g->cu->api.cuMemcpyDtoH(u->sums[bi], out, 16 * nc), what,
			    "cuMemcpyDtoH", err);
		if (scratch != 0)
			g->cu->api.cuMemFree(scratch);
		if (out != 0)
			g->cu->api.cuMemFree(out);
		sr_dev_pop(g);
		if (rc != 0) {
			u->cuda_failed = 1;
			return -1;
		}
		u->summed[bi] = 1;
	}
	return 0;
}

/* The per-buffer arrays: 0, or -1 (out of memory). */
static int
sums_init(struct sr_dev_sums *u, spotrun_ctx *ctx, const struct lib_buf *bufs,
    const struct sr_ckpt_tensor *t, size_t n, const struct sr_ckpt_opts *o)
{
	uint64_t off, len;
	size_t i, nc;

	memset(u, 0, sizeof *u);
	u->ctx = ctx;
	u->d = ctx->devs;
	u->bufs = bufs;
	u->n = n;
	u->chunk = sr_ckpt_chunk_size(o);
	u->sums = sr_lib_alloc(&ctx->p, (n + 1) * sizeof *u->sums);
	u->summed = sr_lib_alloc(&ctx->p, (n + 1) * sizeof *u->summed);
	u->next = sr_lib_alloc(&ctx->p, (n + 1) * sizeof *u->next);
	u->first = sr_lib_alloc(&ctx->p, (n + 1) * sizeof *u->first);
	u->end = sr_lib_alloc(&ctx->p, (n + 1) * sizeof *u->end);
	/* zeroed before anything can fail: sums_free reads what they hold */
	if (u->sums != NULL)
		memset(u->sums, 0, (n + 1) * sizeof *u->sums);
	if (u->summed != NULL)
		memset(u->summed, 0, (n + 1) * sizeof *u->summed);
	if (u->next != NULL)
		memset(u->next, 0, (n + 1) * sizeof *u->next);
	if (u->sums == NULL || u->summed == NULL || u->next == NULL || u->first == NULL ||
	    u->end == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		/* this rank's chunks: a replicated buffer's share, else all */
		sr_ckpt_tensor_share(&t[i], o, &off, &len, NULL, NULL);
		u->first[i] = off / u->chunk;
		u->end[i] = u->first[i] + (len + u->chunk - 1) / u->chunk;
		if (bufs[i].device < 0 || (nc = nchunks(u, i)) == 0)
			continue;
		if ((u->sums[i] = sr_lib_alloc(&ctx->p, 16 * nc)) == NULL)
			return -1;
	}
	return 0;
}

static void
sums_free(struct sr_dev_sums *u)
{
	size_t i;

	if (u->next != NULL)
		sr_lib_device_sums_restart(u);
	if (u->sums != NULL)
		for (i = 0; i < u->n; i++)
			sr_lib_free(&u->ctx->p, u->sums[i]);
	sr_lib_free(&u->ctx->p, u->sums);
	sr_lib_free(&u->ctx->p, u->summed);
	sr_lib_free(&u->ctx->p, u->next);
	sr_lib_free(&u->ctx->p, u->first);
	sr_lib_free(&u->ctx->p, u->end);
}

void
sr_lib_device_sums_end(struct sr_dev_sums *u, int committed, uint64_t seq)
{
	struct sr_dev_memo *mm;
	size_t i;

	if (u == NULL)
		return;
	/* After a failure the records are not trusted: one whose chunk has
	 * gone from the store (a pack deleted) would fail every save after */
	if (!committed) {
		u->d->have_last = 0;
		return;
	}
	for (i = 0; i < u->n; i++) {
		if (u->bufs[i].device < 0 || (mm = u->bufs[i].memo) == NULL)
			continue;
		sr_dev_memo_clear(&u->ctx->p, mm);
		if (!u->next_bad) {
			*mm = u->next[i];
			memset(&u->next[i], 0, sizeof u->next[i]);
		}
	}
	u->d->last_seq = seq;
	u->d->have_last = !u->next_bad;
}

/* A memo for each device buffer, where the records of this save go. */
static int
memos_alloc(spotrun_ctx *ctx)
{
	size_t i;

	for (i = 0; i < ctx->nbufs; i++) {
		struct lib_buf *b = &ctx->bufs[i];

		if (b->device < 0 || b->memo != NULL)
			continue;
		if ((b->memo = sr_lib_alloc(&ctx->p, sizeof *b->memo)) == NULL)
			return -1;
		memset(b->memo, 0, sizeof *b->memo);
	}
	return 0;
}

int
sr_lib_device_sums(spotrun_ctx *ctx, const struct lib_buf *bufs,
    const struct sr_ckpt_tensor *t, size_t n, const struct sr_ckpt_opts *o,
    struct sr_dev_sums **out, char *err)
{
	struct sr_dev_sums *u;

	*out = NULL;
	if (ctx->devs == NULL)
		return 0;
	if ((u = sr_lib_alloc(&ctx->p, sizeof *u)) == NULL)
		return sr_err(err, "out of memory");
	if (sums_init(u, ctx, bufs, t, n, o) == -1) {
		sums_free(u);
		sr_lib_free(&ctx->p, u);
		return sr_err(err, "out of memory");
	}
	/* the memos were allocated by the caller (bufs is a copy of theirs) */
	u->reuse = ctx->devs->have_last;
	if (sum_on_gpus(u, err) == -1) {
		sr_lib_device_sums_free(u);
		return -1;
	}
	*out = u;
	return 0;
}

void
sr_lib_device_sums_free(struct sr_dev_sums *u)
{
	spotrun_ctx *ctx;

	if (u == NULL)
		return;
	ctx = u->ctx;
	sums_free(u);
	sr_lib_free(&ctx->p, u);
}

int
sr_lib_device_memos(spotrun_ctx *ctx)
{
	return ctx->devs == NULL ? 0 : memos_alloc(ctx);
}

const struct sr_mchunk *
sr_lib_device_ref(const struct sr_dev_sums *u, size_t bi, size_t k, int staged,
    const uint8_t **csum)
{
	*csum = NULL;
	if (u == NULL || u->bufs[bi].device < 0 || u->sums[bi] == NULL)
		return NULL;
	*csum = u->sums[bi] + 16 * k;
	if (!u->summed[bi] && !staged)
		return NULL;		/* not known before the copy */
	return unchanged(u, bi, k) ? &u->bufs[bi].memo->chunks[k] : NULL;
}

void
sr_lib_device_sum_staged(struct sr_dev_sums *u, size_t bi, size_t k, const uint8_t *bytes,
    size_t len)
{
	if (u != NULL && u->bufs[bi].device >= 0 && !u->summed[bi] && u->sums[bi] != NULL)
		sr_chunksum(bytes, len, u->sums[bi] + 16 * k);
}

int
sr_lib_device_save(spotrun_ctx *ctx, const struct sr_ckpt_opts *opts,
    const struct sr_ckpt_tensor *t, long long step, struct sr_ckpt_stats *stats, char *err)
{
	struct sr_save_src src;
	struct sr_ckpt_opts o = *opts;
	struct dsave s;
	size_t i, most = 0;
	int rc;

	memset(&s, 0, sizeof s);
	memset(&src, 0, sizeof src);
	o.world_size = ctx->p.world_size;	/* the shares, before the save */
	o.rank = ctx->p.rank;
	if (memos_alloc(ctx) == -1 || sums_init(&s.u, ctx, ctx->bufs, t, ctx->nbufs, &o) == -1 ||
	    (s.order = sr_ckpt_tensors_order(t, ctx->nbufs, NULL)) == NULL) {
		sums_free(&s.u);
		free(s.order);
		return sr_err(err, "save: out of memory");
	}
	s.t = t;
	for (i = 0; i < s.u.n; i++)
		if (ctx->bufs[i].device >= 0 && ctx->bufs[i].bytes > 0 && chunk_len(&s.u, i, 0) > most)
			most = chunk_len(&s.u, i, 0);
	rc = most > 0 && sr_dev_stage_alloc(ctx, most, 1, err) == -1 ? SR_LIB_DEVICE_FAILED : 0;
	if (rc == 0 && sum_on_gpus(&s.u, err) == -1)
		rc = SR_LIB_DEVICE_FAILED;
	if (rc == 0) {
		src.arg = &s;
		src.describe = dsave_describe;
		src.next = dsave_next;
		src.finished = dsave_finished;
		src.any_chunk = 0;	/* one chunk of opts' size an item */
		/* alone, or this rank's part of a collective save */
		rc = sr_lib_ranks_save(ctx, &o, &src, NULL, 0, step, stats, err);
		/* once more without references (a save under a deadline has
		 * tried again already, without them); not rank 0 of several,
		 * whose failure has dropped the other ranks' parts */
		if (rc == -1 && !s.u.cuda_failed && s.refs > 0 && s.tries == 1 &&
		    (ctx->p.world_size == 1 || ctx->p.rank > 0)) {
			char line[SR_ERRMAX + 64];

			snprintf(line, sizeof line, "warning: %s; saving again, every chunk", err);
			sr_lib_tell(ctx, SPOTRUN_MSG_WARNING, line);
			o = *opts;
			rc = sr_lib_ranks_save(ctx, &o, &src, NULL, 0, step, stats, err);
		}
		if (rc != 0 && s.u.cuda_failed)
			rc = SR_LIB_DEVICE_FAILED;
	}
	sr_lib_device_sums_end(&s.u, rc == 0, rc == 0 ? stats->seq : 0);
	if (rc == SR_LIB_DEVICE_FAILED) {
		size_t l = strlen(err);

		snprintf(err + l, SR_ERRMAX - l, "; nothing committed");
		sr_err_prefix(err, "save %s", ctx->job);
	}
	settle(&s);
	sums_free(&s.u);
	free(s.order);
	return rc;
}
