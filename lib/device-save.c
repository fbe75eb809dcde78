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

struct dsave {
	spotrun_ctx *ctx;
	struct sr_lib_devs *d;
	const struct sr_ckpt_tensor *t;
	size_t n, chunk;
	size_t *order;			/* indices of bufs by name */
	struct sr_manifest *m;
	int reuse;			/* the memos apply to this save */
	uint8_t **sums;			/* per buffer: the sums now */
	int *summed;			/* per buffer: sums computed on the GPU */
	struct sr_dev_memo *next;	/* per buffer: what this save records */
	int next_bad;			/* a record could not be kept */
	size_t ti, k;			/* the next item to hand out */
	struct slot slots[SLOTS];
	int cuda_failed;
	int tries;			/* of the pipeline's (describe counts them) */
	size_t refs;			/* references handed out by the last try */
};

static size_t
nchunks(const struct dsave *s, size_t bi)
{
	return (s->ctx->bufs[bi].bytes + s->chunk - 1) / s->chunk;
}

static size_t
chunk_len(const struct dsave *s, size_t bi, size_t k)
{
	uint64_t left = s->ctx->bufs[bi].bytes - (uint64_t)k * s->chunk;

	return left < s->chunk ? (size_t)left : s->chunk;
}

/* The planes a chunk of b is split into on its GPU: 4 (f32), 2 (f16,
 * bf16), or 0 (copied as it is: other dtypes, or no kernels). */
static int
planes_of(const struct dsave *s, const struct lib_buf *b)
{
	if (!sr_dev_gpu_of(s->d, b->device)->cu->kernels)
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
unchanged(const struct dsave *s, size_t bi, size_t k)
{
	const struct sr_dev_memo *mm = s->ctx->bufs[bi].memo;

	return s->reuse && mm != NULL && mm->n == nchunks(s, bi) &&
	    memcmp(s->sums[bi] + 16 * k, mm->sums + 16 * k, 16) == 0;
}

/* Whether chunk k of buffer bi must come off its GPU. */
static int
needs_copy(const struct dsave *s, size_t bi, size_t k)
{
	return !s->summed[bi] || !unchanged(s, bi, k);
}

static int
dev_fail(struct dsave *s)
{
	s->cuda_failed = 1;
	return -1;
}

/* Queue the copy of chunk k of buffer bi into slot j. */
static int
start_copy(struct dsave *s, size_t j, size_t bi, size_t k, char *err)
{
	const struct lib_buf *b = &s->ctx->bufs[bi];
	struct sr_dev_gpu *g = sr_dev_gpu_of(s->d, b->device);
	struct slot *sl = &s->slots[j];
	CUdeviceptr src = b->dptr + (uint64_t)k * s->chunk;
	size_t len = chunk_len(s, bi, k);
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
		rc = sr_dev_ok(g, g->cu->api.cuMemcpyDtoHAsync(s->d->stage[j], src, len, g->stream),
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
	const struct lib_buf *b = &s->ctx->bufs[s->slots[j].bi];
	struct sr_dev_gpu *g = sr_dev_gpu_of(s->d, b->device);
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
	for (; ti < s->n; ti++, k = 0) {
		bi = s->order[ti];
		if (s->ctx->bufs[bi].device < 0)
			continue;
		for (; k < nchunks(s, bi); k++)
			if (needs_copy(s, bi, k) && slot_of(s, bi, k) < 0)
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
			for (i = 0; i < s->d->ngpus; i++)
				if (sr_dev_push(&s->d->gpus[i], "", NULL) == 0) {
					s->d->gpus[i].cu->api.cuStreamSynchronize(s->d->gpus[i].stream);
					sr_dev_pop(&s->d->gpus[i]);
				}
	for (j = 0; j < SLOTS; j++)
		s->slots[j].state = SLOT_FREE;
}

static void
next_clear(struct dsave *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		sr_dev_memo_clear(&s->ctx->p, &s->next[i]);
	s->next_bad = 0;
}

static int
dsave_describe(void *arg, struct sr_manifest *m, const struct sr_ckpt_opts *o, char *err)
{
	struct dsave *s = arg;

	/* each try of the save starts here */
	settle(s);
	next_clear(s);
	s->ti = s->k = 0;
	s->m = m;
	/* a try after one that failed references nothing: the records may
	 * name a chunk the store lost (a pack deleted), which would fail
	 * every try until the deadline */
	s->reuse = s->tries++ == 0 && s->d->have_last && m->link == SR_LINK_PARENT &&
	    m->parent == s->d->last_seq;
	s->refs = 0;
	return sr_ckpt_tensors_describe(s->t, s->order, s->n, m, err);
}

/* Host buffers whole, where they lie; device buffers a chunk at a time:
 * referenced, or out of a staging buffer. */
static int
dsave_next(void *arg, struct sr_manifest *m, const struct sr_ckpt_opts *o, size_t *cursor,
    struct sr_save_item *it, char *err)
{
	struct dsave *s = arg;
	const struct lib_buf *b;
	size_t bi, len;
	int j;

	for (; s->ti < s->n; s->ti++, s->k = 0) {
		bi = s->order[s->ti];
		b = &s->ctx->bufs[bi];
		memset(it, 0, sizeof *it);
		it->e = &m->tensors[s->ti].pieces[0].data;
		it->fd = -1;
		if (b->device < 0) {
			if (b->bytes == 0 || s->k > 0)
				continue;
			it->mem = b->host;
			it->size = b->bytes;
			s->k = 1;
			(*cursor)++;
			return 1;
		}
		if (s->k == nchunks(s, bi))
			continue;
		len = chunk_len(s, bi, s->k);
		it->size = len;
		if (!needs_copy(s, bi, s->k)) {
			it->ref = &b->memo->chunks[s->k];
			s->refs++;
			it->csum = s->sums[bi] + 16 * s->k;
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
		if (!s->summed[bi]) {
			/* no kernels: the sum of the raw bytes, now on the host */
			sr_chunksum(s->d->stage[j], len, s->sums[bi] + 16 * s->k);
			if (unchanged(s, bi, s->k)) {
				s->slots[j].state = SLOT_FREE;
				it->ref = &b->memo->chunks[s->k];
				s->refs++;
			s->refs++;
				it->csum = s->sums[bi] + 16 * s->k;
				s->k++;
				(*cursor)++;
				return prefetch(s, s->ti, s->k, err) == -1 ? -1 : 1;
			}
		}
		s->slots[j].state = SLOT_OUT;
		it->mem = s->d->stage[j];
		it->planes = s->slots[j].planes;
		it->csum = s->sums[bi] + 16 * s->k;
		s->k++;
		(*cursor)++;
		return prefetch(s, s->ti, s->k, err) == -1 ? -1 : 1;
	}
	return 0;
}

/* Keep what the save recorded for a device chunk (for the next save's
 * references), and take its staging buffer back. */
static void
dsave_finished(void *arg, const struct sr_ckpt_opts *o, struct sr_save_item *it,
    uint64_t saved)
{
	struct dsave *s = arg;
	const struct sr_mchunk *c;
	struct sr_dev_memo *nx;
	size_t i, bi, k;
	int j;

	for (j = 0; j < SLOTS; j++)
		if (it->mem != NULL && it->mem == s->d->stage[j])
			s->slots[j].state = SLOT_FREE;
	for (i = 0; i < s->m->ntensors && it->e != &s->m->tensors[i].pieces[0].data; i++)
		;
	if (i == s->m->ntensors || it->e->nchunks == 0)
		return;
	bi = s->order[i];
	if (s->ctx->bufs[bi].device < 0)
		return;
	nx = &s->next[bi];
	k = it->e->nchunks - 1;
	c = &it->e->chunks[k];
	if (nx->chunks == NULL) {
		nx->n = nchunks(s, bi);
		nx->chunks = sr_lib_alloc(&s->ctx->p, nx->n * sizeof *nx->chunks);
		nx->sums = sr_lib_alloc(&s->ctx->p, 16 * nx->n);
		if (nx->chunks == NULL || nx->sums == NULL) {
			s->next_bad = 1;
			sr_lib_free(&s->ctx->p, nx->chunks);
			sr_lib_free(&s->ctx->p, nx->sums);
			memset(nx, 0, sizeof *nx);
			return;
		}
		memset(nx->chunks, 0, nx->n * sizeof *nx->chunks);
	}
	if (k >= nx->n)
		return;
	nx->chunks[k] = *c;
	memcpy(nx->sums + 16 * k, c->csum, 16);
	if ((nx->chunks[k].pack = sr_lib_strdup(&s->ctx->p, c->pack)) == NULL)
		s->next_bad = 1;
}

/* The sums of every chunk of the device buffers whose GPU has the
 * kernels, computed there; only the sums come off it. */
static int
sum_on_gpus(struct dsave *s, char *err)
{
	size_t bi, nc;
	CUdeviceptr scratch, out;
	char what[SR_ERRMAX], why[SR_ERRMAX];
	int rc;

	for (bi = 0; bi < s->n; bi++) {
		const struct lib_buf *b = &s->ctx->bufs[bi];
		struct sr_dev_gpu *g;

		if (b->device < 0 || (nc = nchunks(s, bi)) == 0)
			continue;
		g = sr_dev_gpu_of(s->d, b->device);
		if (!g->cu->kernels)
			continue;
		snprintf(what, sizeof what, "chunk sums of \"%s\" on CUDA device %d", b->name,
		    b->device);
		scratch = out = 0;
		if (sr_dev_push(g, what, err) == -1)
			return dev_fail(s);
		rc = sr_dev_ok(g, g->cu->api.cuMemAlloc(&scratch, sr_chunksum_cuda_scratch(b->bytes,
		    s->chunk)), what, "cuMemAlloc", err);
		if (rc == 0)
			rc = sr_dev_ok(g, g->cu->api.cuMemAlloc(&out, 16 * nc), what, "cuMemAlloc", err);
		if (rc == 0 && sr_chunksum_cuda(g->cu, b->dptr, b->bytes, s->chunk, scratch, out,
		    g->stream, why) == -1)
			rc = sr_err(err, "%s: %s", what, why);
		if (rc == 0)
			rc = sr_dev_ok(g, g->cu->api.cuStreamSynchronize(g->stream), what,
			    "cuStreamSynchronize", err);
		if (rc == 0)
			rc = sr_dev_ok(g, g->cu->api.cuMemcpyDtoH(s->sums[bi], out, 16 * nc), what,
			    "cuMemcpyDtoH", err);
		if (scratch != 0)
			g->cu->api.cuMemFree(scratch);
		if (out != 0)
			g->cu->api.cuMemFree(out);
		sr_dev_pop(g);
		if (rc != 0)
			return dev_fail(s);
		s->summed[bi] = 1;
	}
	return 0;
}

/* The save's per-buffer arrays: 0, or -1 (out of memory). */
static int
dsave_init(struct dsave *s, spotrun_ctx *ctx, const struct sr_ckpt_tensor *t,
    const struct sr_ckpt_opts *o)
{
	size_t i, nc;

	memset(s, 0, sizeof *s);
	s->ctx = ctx;
	s->d = ctx->devs;
	s->t = t;
	s->n = ctx->nbufs;
	s->chunk = o->chunk_size != 0 ? o->chunk_size : SR_DEV_CHUNK_DEFAULT;
	s->order = sr_ckpt_tensors_order(t, s->n);
	s->sums = sr_lib_alloc(&ctx->p, s->n * sizeof *s->sums);
	s->summed = sr_lib_alloc(&ctx->p, s->n * sizeof *s->summed);
	s->next = sr_lib_alloc(&ctx->p, s->n * sizeof *s->next);
	if (s->order == NULL || s->sums == NULL || s->summed == NULL || s->next == NULL)
		return -1;
	memset(s->sums, 0, s->n * sizeof *s->sums);
	memset(s->summed, 0, s->n * sizeof *s->summed);
	memset(s->next, 0, s->n * sizeof *s->next);
	for (i = 0; i < s->n; i++) {
		if (ctx->bufs[i].device < 0 || (nc = nchunks(s, i)) == 0)
			continue;
		if ((s->sums[i] = sr_lib_alloc(&ctx->p, 16 * nc)) == NULL)
			return -1;
	}
	return 0;
}

static void
dsave_free(struct dsave *s)
{
	size_t i;

	if (s->next != NULL)
		next_clear(s);
	if (s->sums != NULL)
		for (i = 0; i < s->n; i++)
			sr_lib_free(&s->ctx->p, s->sums[i]);
	free(s->order);
	sr_lib_free(&s->ctx->p, s->sums);
	sr_lib_free(&s->ctx->p, s->summed);
	sr_lib_free(&s->ctx->p, s->next);
}

/* The save committed: its records are what the next save compares with. */
static void
remember(struct dsave *s, uint64_t seq)
{
	struct sr_dev_memo *mm;
	size_t i;

	for (i = 0; i < s->n; i++) {
		if (s->ctx->bufs[i].device < 0)
			continue;
		if ((mm = s->ctx->bufs[i].memo) == NULL &&
		    (mm = s->ctx->bufs[i].memo = sr_lib_alloc(&s->ctx->p, sizeof *mm)) != NULL)
			memset(mm, 0, sizeof *mm);
		if (mm == NULL)
			continue;
		sr_dev_memo_clear(&s->ctx->p, mm);
		if (!s->next_bad) {
			*mm = s->next[i];
			memset(&s->next[i], 0, sizeof s->next[i]);
		}
	}
	s->d->last_seq = seq;
	s->d->have_last = !s->next_bad;
}

int
sr_lib_device_save(spotrun_ctx *ctx, const struct sr_ckpt_opts *o,
    const struct sr_ckpt_tensor *t, long long step, struct sr_ckpt_stats *stats, char *err)
{
	struct sr_save_src src;
	struct dsave s;
	size_t i, most = 0;
	int rc;

	if (dsave_init(&s, ctx, t, o) == -1) {
		dsave_free(&s);
		return sr_err(err, "save: out of memory");
	}
	for (i = 0; i < s.n; i++)
		if (ctx->bufs[i].device >= 0 && chunk_len(&s, i, 0) > most)
			most = chunk_len(&s, i, 0);
	rc = most > 0 && sr_dev_stage_alloc(ctx, most, err) == -1 ? SR_LIB_DEVICE_FAILED : 0;
	if (rc == 0 && sum_on_gpus(&s, err) == -1)
		rc = SR_LIB_DEVICE_FAILED;
	if (rc == 0) {
		src.arg = &s;
		src.describe = dsave_describe;
		src.next = dsave_next;
		src.finished = dsave_finished;
		rc = sr_ckpt_save_src(ctx->st, o, &src, step, stats, err);
		if (rc == -1 && !s.cuda_failed && s.refs > 0 && s.tries == 1) {
			/* once more without references (a save under a deadline has
			 * tried again already, without them) */
			char line[SR_ERRMAX + 64];

			snprintf(line, sizeof line, "warning: %s; saving again, every chunk", err);
			sr_lib_tell(ctx, SPOTRUN_MSG_WARNING, line);
			rc = sr_ckpt_save_src(ctx->st, o, &src, step, stats, err);
		}
		if (rc != 0 && s.cuda_failed)
			rc = SR_LIB_DEVICE_FAILED;
		if (rc == 0)
			remember(&s, stats->seq);
	}
	/* After a failure the records are not trusted: one whose chunk has
	 * gone from the store (a pack deleted) would fail every save after */
	if (rc != 0)
		s.d->have_last = 0;
	if (rc == SR_LIB_DEVICE_FAILED) {
		size_t l = strlen(err);

		snprintf(err + l, SR_ERRMAX - l, "; nothing committed");
		sr_err_prefix(err, "save %s", ctx->job);
	}
	settle(&s);
	dsave_free(&s);
	return rc;
}

