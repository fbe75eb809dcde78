/*
 * device.c: device buffers of libspotrun (device.h): state in CUDA device
 * memory, saved and restored through pinned host memory, with the driver
 * loaded at run time (kernels/cudadrv.h), so that one build of the library
 * runs with and without a GPU.
 *
 * Save. Before the pipeline, the chunk sum (kernels/chunksum.h) of every
 * chunk of every device buffer is computed on its GPU (chunksum.cu, one
 * pass over the buffer) and only the sums are copied off it. A chunk whose
 * sum equals the one this context's previous commit recorded for the same
 * chunk of the same piece (when the save is based on that commit, so its
 * packs are the chain head's) is referenced: neither copied off the GPU
 * nor uploaded. The other chunks are split into byte planes on the GPU
 * when their dtype is a 2- or 4-byte float (byteplane.cu; the encoder then
 * skips its own split), and copied with cuMemcpyDtoHAsync into one of two
 * pinned staging buffers of a chunk each: while the pipeline's workers
 * hash and encode chunk i out of one, chunk i+1 is copied into the other
 * (save.c's ring, savesrc.h's source interface; SR_SAVE_DRAIN when both
 * are still held). Without the kernels (a build without nvcc) every chunk
 * is copied raw and its sum computed on the host after the copy; a chunk
 * whose sum matches is still referenced rather than uploaded.
 *
 * Memory: two chunks of pinned host memory (32 MiB with the default chunk
 * size) and, on each GPU with float buffers, two chunks of device memory
 * for the split, both held from the first save to spotrun_free; a buffer's
 * sums (16 bytes a chunk, and a copy of each chunk's manifest record) for
 * as long. Restore decodes into pinned memory of the device buffers' size,
 * copies it with cuMemcpyHtoDAsync and waits for the copies to end before
 * it returns.
 *
 * Every CUDA call is made with the buffer's device's primary context
 * pushed for the time of the call and popped after, so the caller's
 * current context is the same after a call as before.
 */
#include "config.h"

#include <inttypes.h>
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
#include "lib.h"

#define SLOTS 2				/* staging buffers: double-buffered */
#define SR_LIB_MAX_GPUS 16		/* devices of one context at most */
#define CHUNK_DEFAULT ((size_t)16 << 20)	/* save.c's default chunk */

struct gpu {
	int ordinal;
	struct sr_cuda *cu;
	CUstream stream;
	CUdeviceptr tmp[SLOTS];		/* the split's output, tmp_bytes each */
	size_t tmp_bytes;
};

/* What this context's last commit holds of one device buffer. */
struct sr_dev_memo {
	size_t n;			/* chunks; 0: nothing known */
	uint8_t *sums;			/* 16 bytes a chunk */
	struct sr_mchunk *chunks;	/* their records, pack strings owned */
};

struct sr_lib_devs {
	char *lib;			/* the driver library */
	struct gpu gpus[SR_LIB_MAX_GPUS];
	size_t ngpus;
	uint8_t *stage[SLOTS];		/* pinned, stage_bytes each */
	size_t stage_bytes;
	size_t stage_gpu;		/* whose context allocated them */
	uint64_t last_seq;		/* the commit the memos describe */
	int have_last;
};

/* ---- the driver ---- */

static struct gpu *
gpu_of(struct sr_lib_devs *d, int ordinal)
{
	size_t i;

	for (i = 0; i < d->ngpus; i++)
		if (d->gpus[i].ordinal == ordinal)
			return &d->gpus[i];
	return NULL;
}

/* CUDA result r of `call` (an API name) done for `what`: 0, or -1 with err
 * "WHAT: CALL: NAME (number): text". */
static int
cu_ok(struct gpu *g, CUresult r, const char *what, const char *call, char *err)
{
	char w[SR_ERRMAX];

	if (r == CUDA_SUCCESS)
		return 0;
	snprintf(w, sizeof w, "%s: %s", what, call);
	return sr_cuda_check(g->cu, r, w, err);
}

/* Make g's context current for the calls that follow (pop gives the
 * caller's back): 0, or -1 with err (NULL-able) saying for what. */
static int
push(struct gpu *g, const char *what, char *err)
{
	char w[SR_ERRMAX];

	if (sr_cuda_push(g->cu, w) == 0)
		return 0;
	return sr_err(err, "%s: %s", what, w);
}

static void
pop(struct gpu *g)
{
	sr_cuda_pop(g->cu);
}

/* Device `ordinal` of the context's driver, opened on first use. */
static struct gpu *
open_gpu(spotrun_ctx *ctx, int ordinal, char *err)
{
	struct sr_lib_devs *d = ctx->devs;
	struct gpu *g = gpu_of(d, ordinal);
	char why[SR_ERRMAX];

	if (g != NULL)
		return g;
	if (d->ngpus == SR_LIB_MAX_GPUS) {
		sr_err(err, "CUDA device %d: buffers of %d devices at most in one context", ordinal,
		    SR_LIB_MAX_GPUS);
		return NULL;
	}
	g = &d->gpus[d->ngpus];
	memset(g, 0, sizeof *g);
	if ((g->cu = sr_cuda_open(d->lib, ordinal, why)) == NULL) {
		sr_err(err, "%s", why);
		return NULL;
	}
	g->ordinal = ordinal;
	if (push(g, "create a CUDA stream", err) == -1) {
		sr_cuda_close(g->cu);
		return NULL;
	}
	if (cu_ok(g, g->cu->api.cuStreamCreate(&g->stream, 0), "create a CUDA stream",
	    "cuStreamCreate", err) == -1) {
		pop(g);
		sr_cuda_close(g->cu);
		return NULL;
	}
	pop(g);
	d->ngpus++;
	return g;
}

static void
close_gpu(struct gpu *g)
{
	size_t j;

	if (push(g, "", NULL) == 0) {
		g->cu->api.cuStreamSynchronize(g->stream);
		for (j = 0; j < SLOTS; j++)
			if (g->tmp[j] != 0)
				g->cu->api.cuMemFree(g->tmp[j]);
		g->cu->api.cuStreamDestroy(g->stream);
		pop(g);
	}
	sr_cuda_close(g->cu);
}

static void
memo_clear(const spotrun_params *p, struct sr_dev_memo *mm)
{
	size_t k;

	if (mm->chunks != NULL)
		for (k = 0; k < mm->n; k++)
			sr_lib_free(p, (char *)mm->chunks[k].pack);
	sr_lib_free(p, mm->chunks);
	sr_lib_free(p, mm->sums);
	memset(mm, 0, sizeof *mm);
}

void
sr_lib_device_free(spotrun_ctx *ctx)
{
	struct sr_lib_devs *d = ctx->devs;
	size_t i, j;

	if (d == NULL)
		return;
	for (i = 0; i < ctx->nbufs; i++)
		if (ctx->bufs[i].memo != NULL) {
			memo_clear(&ctx->p, ctx->bufs[i].memo);
			sr_lib_free(&ctx->p, ctx->bufs[i].memo);
		}
	if (d->ngpus > 0 && push(&d->gpus[d->stage_gpu], "", NULL) == 0) {
		for (j = 0; j < SLOTS; j++)
			if (d->stage[j] != NULL)
				d->gpus[d->stage_gpu].cu->api.cuMemFreeHost(d->stage[j]);
		pop(&d->gpus[d->stage_gpu]);
	}
	for (i = 0; i < d->ngpus; i++)
		close_gpu(&d->gpus[i]);
	sr_lib_free(&ctx->p, d->lib);
	sr_lib_free(&ctx->p, d);
	ctx->devs = NULL;
}

/* ---- registration ---- */

spotrun_error
sr_lib_device_register(spotrun_ctx *ctx, struct lib_buf *b, const char *name, void *ptr,
    int device)
{
	const char *lib = ctx->cuda_library;
	CUdeviceptr dptr = (uintptr_t)ptr, base = 0;
	char err[SR_ERRMAX], what[SR_ERRMAX];
	unsigned int type = 0;
	int ordinal = -1, bad;
	size_t size = 0;
	struct gpu *g;

	if (device < 0)
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "register \"%s\": CUDA device %d "
		    "is not a device ordinal", name, device);
	if (ctx->devs == NULL) {
		if (lib == NULL && (lib = getenv("SPOTRUN_CUDA_LIBRARY")) != NULL && *lib == '\0')
			lib = NULL;
		if ((ctx->devs = sr_lib_alloc(&ctx->p, sizeof *ctx->devs)) == NULL)
			return sr_lib_fail(ctx, SPOTRUN_ERROR_MEMORY, "register \"%s\": out of memory",
			    name);
		memset(ctx->devs, 0, sizeof *ctx->devs);
		if ((ctx->devs->lib = sr_lib_strdup(&ctx->p, lib != NULL ? lib : "libcuda.so.1")) ==
		    NULL) {
			sr_lib_device_free(ctx);
			return sr_lib_fail(ctx, SPOTRUN_ERROR_MEMORY, "register \"%s\": out of memory",
			    name);
		}
	}
	if ((g = open_gpu(ctx, device, err)) == NULL)
		return sr_lib_fail(ctx, SPOTRUN_ERROR_NO_DEVICE, "register \"%s\": %s; nothing "
		    "registered: set params.cuda_library or SPOTRUN_CUDA_LIBRARY to the CUDA driver, "
		    "or register host buffers", name, err);
	if (ptr == NULL && b->bytes == 0)
		goto done;
	if (ptr == NULL)
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "register \"%s\": no buffer (NULL) for "
		    "%" PRIu64 " bytes", name, b->bytes);
	snprintf(what, sizeof what, "register \"%s\": check device pointer %p", name, ptr);
	if (push(g, what, err) == -1)
		return sr_lib_fail(ctx, SPOTRUN_ERROR_NO_DEVICE, "%s", err);
	bad = g->cu->api.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dptr);
	if (bad == CUDA_ERROR_INVALID_VALUE) {
		pop(g);
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "register \"%s\": %p is not CUDA "
		    "memory (cuPointerGetAttribute: CUDA_ERROR_INVALID_VALUE): a host buffer is "
		    "registered with spotrun_register", name, ptr);
	}
	if (cu_ok(g, bad, what, "cuPointerGetAttribute", err) == -1 ||
	    cu_ok(g, g->cu->api.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
	    dptr), what, "cuPointerGetAttribute", err) == -1) {
		pop(g);
		return sr_lib_fail(ctx, SPOTRUN_ERROR_NO_DEVICE, "%s", err);
	}
	if (type != CU_MEMORYTYPE_DEVICE) {
		pop(g);
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "register \"%s\": %p is CUDA host "
		    "memory, not device memory: a host buffer is registered with spotrun_register",
		    name, ptr);
	}
	if (ordinal != device) {
		pop(g);
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "register \"%s\": %p is memory of "
		    "CUDA device %d, not of device %d", name, ptr, ordinal, device);
	}
	if (cu_ok(g, g->cu->api.cuMemGetAddressRange(&base, &size, dptr), what,
	    "cuMemGetAddressRange", err) == -1) {
		pop(g);
		return sr_lib_fail(ctx, SPOTRUN_ERROR_NO_DEVICE, "%s", err);
	}
	pop(g);
	if (dptr - base > size || b->bytes > size - (dptr - base))
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "register \"%s\": the allocation "
		    "at %p holds %" PRIu64 " bytes from there, the slice needs %" PRIu64, name, ptr,
		    (uint64_t)(size - (dptr - base)), b->bytes);
done:
	b->device = device;
	b->dptr = dptr;
	return SPOTRUN_OK;
}

/* ---- staging ---- */

/* The pinned staging buffers and the split's device memory, of at least
 * `bytes` each, allocated on first need: 0 or -1. */
static int
stage_alloc(spotrun_ctx *ctx, size_t bytes, char *err)
{
	struct sr_lib_devs *d = ctx->devs;
	struct gpu *g = &d->gpus[0];
	size_t i, j;
	int rc = 0;

	if (d->stage_bytes < bytes) {
		if (push(&d->gpus[d->stage_gpu], "pin staging memory", err) == -1)
			return -1;
		for (j = 0; j < SLOTS; j++)
			if (d->stage[j] != NULL) {
				d->gpus[d->stage_gpu].cu->api.cuMemFreeHost(d->stage[j]);
				d->stage[j] = NULL;
			}
		pop(&d->gpus[d->stage_gpu]);
		d->stage_bytes = 0;
		d->stage_gpu = 0;
		if (push(g, "pin staging memory", err) == -1)
			return -1;
		for (j = 0; j < SLOTS && rc == 0; j++)
			rc = cu_ok(g, g->cu->api.cuMemHostAlloc((void **)&d->stage[j], bytes,
			    CU_MEMHOSTALLOC_PORTABLE), "pin staging memory", "cuMemHostAlloc", err);
		pop(g);
		if (rc != 0)
			return -1;
		d->stage_bytes = bytes;
	}
	for (i = 0; i < d->ngpus; i++) {
		g = &d->gpus[i];
		if (!g->cu->kernels || g->tmp_bytes >= bytes)
			continue;
		if (push(g, "allocate device memory for the byte planes", err) == -1)
			return -1;
		for (j = 0; j < SLOTS && rc == 0; j++) {
			if (g->tmp[j] != 0)
				g->cu->api.cuMemFree(g->tmp[j]);
			g->tmp[j] = 0;
			rc = cu_ok(g, g->cu->api.cuMemAlloc(&g->tmp[j], bytes), "allocate device "
			    "memory for the byte planes", "cuMemAlloc", err);
		}
		pop(g);
		if (rc != 0)
			return -1;
		g->tmp_bytes = bytes;
	}
	return 0;
}

int
sr_lib_device_stage(spotrun_ctx *ctx, const struct lib_buf *b, uint64_t off, size_t len,
    void *dst, char *err)
{
	struct gpu *g = gpu_of(ctx->devs, b->device);
	char what[SR_ERRMAX];
	int rc;

	snprintf(what, sizeof what, "copy \"%s\" off CUDA device %d", b->name, b->device);
	if (off > b->bytes || len > b->bytes - off)
		return sr_err(err, "%s: bytes [%" PRIu64 ", +%zu) are outside its %" PRIu64, what,
		    off, len, b->bytes);
	if (len == 0)
		return 0;
	if (push(g, what, err) == -1)
		return -1;
	rc = cu_ok(g, g->cu->api.cuMemcpyDtoHAsync(dst, b->dptr + off, len, g->stream), what,
	    "cuMemcpyDtoHAsync", err);
	if (rc == 0)
		rc = cu_ok(g, g->cu->api.cuStreamSynchronize(g->stream), what, "cuStreamSynchronize",
		    err);
	pop(g);
	return rc;
}

/* ---- save ---- */

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
	if (!gpu_of(s->d, b->device)->cu->kernels)
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
	struct gpu *g = gpu_of(s->d, b->device);
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
	if (push(g, what, err) == -1)
		return dev_fail(s);
	if (sl->planes != 0) {
		if (sr_byteplane_split_cuda(g->cu, src, len, (unsigned)sl->planes, g->tmp[j],
		    g->stream, why) == -1)
			rc = sr_err(err, "%s: %s", what, why);
		src = g->tmp[j];
	}
	if (rc == 0)
		rc = cu_ok(g, g->cu->api.cuMemcpyDtoHAsync(s->d->stage[j], src, len, g->stream),
		    what, "cuMemcpyDtoHAsync", err);
	pop(g);
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
	struct gpu *g = gpu_of(s->d, b->device);
	char what[SR_ERRMAX];
	int rc;

	snprintf(what, sizeof what, "copy chunk %zu of \"%s\" off CUDA device %d", s->slots[j].k,
	    b->name, b->device);
	if (push(g, what, err) == -1)
		return dev_fail(s);
	rc = cu_ok(g, g->cu->api.cuStreamSynchronize(g->stream), what, "cuStreamSynchronize", err);
	pop(g);
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

static int
by_name(const void *a, const void *b, void *arg)
{
	const struct sr_ckpt_tensor *t = arg;

	return strcmp(t[*(const size_t *)a].name, t[*(const size_t *)b].name);
}

/* Every copy queued has ended (a save that stopped early leaves some). */
static void
settle(struct dsave *s)
{
	size_t i, j;

	for (j = 0; j < SLOTS; j++)
		if (s->slots[j].state == SLOT_COPYING)
			for (i = 0; i < s->d->ngpus; i++)
				if (push(&s->d->gpus[i], "", NULL) == 0) {
					s->d->gpus[i].cu->api.cuStreamSynchronize(s->d->gpus[i].stream);
					pop(&s->d->gpus[i]);
				}
	for (j = 0; j < SLOTS; j++)
		s->slots[j].state = SLOT_FREE;
}

static void
next_clear(struct dsave *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		memo_clear(&s->ctx->p, &s->next[i]);
	s->next_bad = 0;
}

static int
dsave_describe(void *arg, struct sr_manifest *m, const struct sr_ckpt_opts *o, char *err)
{
	struct dsave *s = arg;
	size_t i;

	/* each try of the save starts here */
	settle(s);
	next_clear(s);
	s->ti = s->k = 0;
	s->m = m;
	s->reuse = s->d->have_last && m->link == SR_LINK_PARENT && m->parent == s->d->last_seq;
	for (i = 0; i < s->n; i++) {
		const struct sr_ckpt_tensor *t = &s->t[s->order[i]];
		struct sr_mtensor *mt;

		if (i > 0 && strcmp(s->t[s->order[i - 1]].name, t->name) == 0)
			return sr_err(err, "tensor \"%s\" is given twice", t->name);
		mt = sr_manifest_add_tensor(m, t->name, (enum sr_dtype)t->dtype, t->ndim, t->shape);
		sr_mtensor_add_piece(mt, t->offsets, t->sizes)->data.size = t->bytes;
	}
	m->stats.files = s->n;
	return 0;
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
			it->csum = s->sums[bi] + 16 * s->k;
			s->k++;
			(*cursor)++;
			return 1;
		}
		if ((j = slot_of(s, bi, s->k)) < 0) {
			if ((j = free_slot(s)) < 0)
				return SR_SAVE_DRAIN;
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
		struct gpu *g;

		if (b->device < 0 || (nc = nchunks(s, bi)) == 0)
			continue;
		g = gpu_of(s->d, b->device);
		if (!g->cu->kernels)
			continue;
		snprintf(what, sizeof what, "chunk sums of \"%s\" on CUDA device %d", b->name,
		    b->device);
		scratch = out = 0;
		if (push(g, what, err) == -1)
			return dev_fail(s);
		rc = cu_ok(g, g->cu->api.cuMemAlloc(&scratch, sr_chunksum_cuda_scratch(b->bytes,
		    s->chunk)), what, "cuMemAlloc", err);
		if (rc == 0)
			rc = cu_ok(g, g->cu->api.cuMemAlloc(&out, 16 * nc), what, "cuMemAlloc", err);
		if (rc == 0 && sr_chunksum_cuda(g->cu, b->dptr, b->bytes, s->chunk, scratch, out,
		    g->stream, why) == -1)
			rc = sr_err(err, "%s: %s", what, why);
		if (rc == 0)
			rc = cu_ok(g, g->cu->api.cuStreamSynchronize(g->stream), what,
			    "cuStreamSynchronize", err);
		if (rc == 0)
			rc = cu_ok(g, g->cu->api.cuMemcpyDtoH(s->sums[bi], out, 16 * nc), what,
			    "cuMemcpyDtoH", err);
		if (scratch != 0)
			g->cu->api.cuMemFree(scratch);
		if (out != 0)
			g->cu->api.cuMemFree(out);
		pop(g);
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
	s->chunk = o->chunk_size != 0 ? o->chunk_size : CHUNK_DEFAULT;
	s->order = sr_lib_alloc(&ctx->p, s->n * sizeof *s->order);
	s->sums = sr_lib_alloc(&ctx->p, s->n * sizeof *s->sums);
	s->summed = sr_lib_alloc(&ctx->p, s->n * sizeof *s->summed);
	s->next = sr_lib_alloc(&ctx->p, s->n * sizeof *s->next);
	if (s->order == NULL || s->sums == NULL || s->summed == NULL || s->next == NULL)
		return -1;
	memset(s->sums, 0, s->n * sizeof *s->sums);
	memset(s->summed, 0, s->n * sizeof *s->summed);
	memset(s->next, 0, s->n * sizeof *s->next);
	for (i = 0; i < s->n; i++) {
		s->order[i] = i;
		if (ctx->bufs[i].device < 0 || (nc = nchunks(s, i)) == 0)
			continue;
		if ((s->sums[i] = sr_lib_alloc(&ctx->p, 16 * nc)) == NULL)
			return -1;
	}
	if (s->n > 1)
		qsort_r(s->order, s->n, sizeof *s->order, by_name, (void *)t);
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
	sr_lib_free(&s->ctx->p, s->order);
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
		memo_clear(&s->ctx->p, mm);
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
	rc = most > 0 && stage_alloc(ctx, most, err) == -1 ? SR_LIB_DEVICE_FAILED : 0;
	if (rc == 0 && sum_on_gpus(&s, err) == -1)
		rc = SR_LIB_DEVICE_FAILED;
	if (rc == 0) {
		src.arg = &s;
		src.describe = dsave_describe;
		src.next = dsave_next;
		src.finished = dsave_finished;
		rc = sr_ckpt_save_src(ctx->st, o, &src, step, stats, err);
		if (rc != 0 && s.cuda_failed)
			rc = SR_LIB_DEVICE_FAILED;
		if (rc == 0)
			remember(&s, stats->seq);
	}
	if (rc == SR_LIB_DEVICE_FAILED) {
		size_t l = strlen(err);

		snprintf(err + l, SR_ERRMAX - l, "; nothing committed");
		sr_err_prefix(err, "save %s", ctx->job);
	}
	settle(&s);
	dsave_free(&s);
	return rc;
}

/* ---- restore ---- */

int
sr_lib_device_restore(spotrun_ctx *ctx, struct sr_ckpt_tensor *t, const struct sr_ckpt_opts *o,
    struct sr_ckpt_stats *stats, char *err)
{
	struct sr_lib_devs *d = ctx->devs;
	char what[SR_ERRMAX];
	size_t i;
	int rc = 0;

	/* pinned host memory for each device buffer: the restore decodes
	 * into it */
	for (i = 0; i < ctx->nbufs && rc == 0; i++) {
		struct lib_buf *b = &ctx->bufs[i];
		struct gpu *g;

		t[i].data = b->host;
		if (b->device < 0 || b->bytes == 0)
			continue;
		g = gpu_of(d, b->device);
		snprintf(what, sizeof what, "pin host memory for \"%s\"", b->name);
		if (push(g, what, err) == -1) {
			rc = SR_LIB_DEVICE_FAILED;
			break;
		}
		if (cu_ok(g, g->cu->api.cuMemHostAlloc(&t[i].data, b->bytes,
		    CU_MEMHOSTALLOC_PORTABLE), what, "cuMemHostAlloc", err) == -1) {
			t[i].data = NULL;
			rc = SR_LIB_DEVICE_FAILED;
		}
		pop(g);
	}
	if (rc == 0)
		rc = sr_ckpt_restore_tensors(ctx->st, o, t, ctx->nbufs, stats, err);
	/* then onto the devices, every copy ended before the call returns */
	for (i = 0; i < ctx->nbufs && rc == 0; i++) {
		const struct lib_buf *b = &ctx->bufs[i];
		struct gpu *g;

		if (b->device < 0 || b->bytes == 0)
			continue;
		g = gpu_of(d, b->device);
		snprintf(what, sizeof what, "copy \"%s\" onto CUDA device %d", b->name, b->device);
		if (push(g, what, err) == -1) {
			rc = SR_LIB_DEVICE_FAILED;
			break;
		}
		if (cu_ok(g, g->cu->api.cuMemcpyHtoDAsync(b->dptr, t[i].data, b->bytes, g->stream),
		    what, "cuMemcpyHtoDAsync", err) == -1)
			rc = SR_LIB_DEVICE_FAILED;
		pop(g);
	}
	for (i = 0; i < d->ngpus; i++) {
		struct gpu *g = &d->gpus[i];

		snprintf(what, sizeof what, "copy onto CUDA device %d", g->ordinal);
		if (push(g, what, rc == 0 ? err : NULL) == -1) {
			rc = rc == 0 ? SR_LIB_DEVICE_FAILED : rc;
			continue;
		}
		if (cu_ok(g, g->cu->api.cuStreamSynchronize(g->stream), what, "cuStreamSynchronize",
		    rc == 0 ? err : what) == -1 && rc == 0)
			rc = SR_LIB_DEVICE_FAILED;
		pop(g);
	}
	if (rc == SR_LIB_DEVICE_FAILED)
		sr_err_prefix(err, "restore %s", ctx->job);
	for (i = 0; i < ctx->nbufs; i++) {
		const struct lib_buf *b = &ctx->bufs[i];
		struct gpu *g;

		if (b->device < 0 || t[i].data == NULL)
			continue;
		g = gpu_of(d, b->device);
		if (push(g, "", NULL) == 0) {
			g->cu->api.cuMemFreeHost(t[i].data);
			pop(g);
		}
		t[i].data = NULL;
	}
	return rc;
}
