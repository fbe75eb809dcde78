/*
 * device.c: device buffers of libspotrun (device.h): state in CUDA device
 * memory, saved and restored through pinned host memory, with the driver
 * loaded at run time (kernels/cudadrv.h), so that one build of the library
 * runs with and without a GPU. Here: the driver and the devices of a
 * context, registration, staging memory, restore; the save is
 * device-save.c's.
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
 * (save.c's ring, savesrc.h's source interface; SR_SRC_DRAIN_ONE when both
 * are still held). Without the kernels (a build without nvcc) every chunk
 * is copied raw and its sum computed on the host after the copy; a chunk
 * whose sum matches is still referenced rather than uploaded.
 *
 * Memory: two chunks of pinned host memory (32 MiB with the default chunk
 * size) and, on each GPU with float buffers, two chunks of device memory
 * for the split, both held from the first save to spotrun_free; a buffer's
 * sums (16 bytes a chunk, and a copy of each chunk's manifest record) for
 * as long (the async save's records too: device-save.c's sr_dev_sums).
 * Restore hands each chunk read of a device buffer to dev_put (the put
 * hook of restore-tensors.c), which packs the buffer's bytes of it into
 * one of the same two pinned staging buffers and copies them with
 * cuMemcpyHtoDAsync, so a restore holds two chunks of pinned memory, and
 * waits for the copies to end before it returns; the sums the restored
 * manifest recorded are then the next save's reference, as the context's
 * own commit's would be.
 *
 * Every CUDA call is made with the buffer's device's primary context
 * pushed for the time of the call and popped after, so the caller's
 * current context is the same after a call as before.
 */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "ckpt.h"
#include "cudadrv.h"
#include "manifest.h"
#include "reshard.h"
#include "util.h"
#include "device.h"
#include "device-int.h"
#include "lib.h"

/* ---- the driver ---- */

struct sr_dev_gpu *
sr_dev_gpu_of(struct sr_lib_devs *d, int ordinal)
{
	size_t i;

	for (i = 0; i < d->ngpus; i++)
		if (d->gpus[i].ordinal == ordinal)
			return &d->gpus[i];
	return NULL;
}

/* CUDA result r of `call` (an API name) done for `what`: 0, or -1 with err
 * "WHAT: CALL: NAME (number): text". */
int
sr_dev_ok(struct sr_dev_gpu *g, CUresult r, const char *what, const char *call, char *err)
{
	char w[SR_ERRMAX];

	if (r == CUDA_SUCCESS)
		return 0;
	snprintf(w, sizeof w, "%s: %s", what, call);
	return sr_cuda_check(g->cu, r, w, err);
}

/* Make g's context current for the calls that follow (pop gives the
 * caller's back): 0, or -1 with err (NULL-able) saying for what. */
int
sr_dev_push(struct sr_dev_gpu *g, const char *what, char *err)
{
	char w[SR_ERRMAX];

	if (sr_cuda_push(g->cu, w) == 0)
		return 0;
	return sr_err(err, "%s: %s", what, w);
}

void
sr_dev_pop(struct sr_dev_gpu *g)
{
	sr_cuda_pop(g->cu);
}

/* Device `ordinal` of the context's driver, opened on first use. */
static struct sr_dev_gpu *
open_gpu(spotrun_ctx *ctx, int ordinal, char *err)
{
	struct sr_lib_devs *d = ctx->devs;
	struct sr_dev_gpu *g = sr_dev_gpu_of(d, ordinal);
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
	if (sr_dev_push(g, "create a CUDA stream", err) == -1) {
		sr_cuda_close(g->cu);
		return NULL;
	}
	if (sr_dev_ok(g, g->cu->api.cuStreamCreate(&g->stream, 0), "create a CUDA stream",
	    "cuStreamCreate", err) == -1) {
		sr_dev_pop(g);
		sr_cuda_close(g->cu);
		return NULL;
	}
	sr_dev_pop(g);
	d->ngpus++;
	return g;
}

static void
close_gpu(struct sr_dev_gpu *g)
{
	size_t j;

	if (sr_dev_push(g, "", NULL) == 0) {
		g->cu->api.cuStreamSynchronize(g->stream);
		for (j = 0; j < SLOTS; j++)
			if (g->tmp[j] != 0)
				g->cu->api.cuMemFree(g->tmp[j]);
		g->cu->api.cuStreamDestroy(g->stream);
		sr_dev_pop(g);
	}
	sr_cuda_close(g->cu);
}

void
sr_dev_memo_clear(const spotrun_params *p, struct sr_dev_memo *mm)
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
			sr_dev_memo_clear(&ctx->p, ctx->bufs[i].memo);
			sr_lib_free(&ctx->p, ctx->bufs[i].memo);
		}
	if (d->ngpus > 0 && sr_dev_push(&d->gpus[d->stage_gpu], "", NULL) == 0) {
		for (j = 0; j < SLOTS; j++)
			if (d->stage[j] != NULL)
				d->gpus[d->stage_gpu].cu->api.cuMemFreeHost(d->stage[j]);
		sr_dev_pop(&d->gpus[d->stage_gpu]);
	}
	sr_lib_device_unpin(ctx, d->async_pinned);
	for (i = 0; i < d->ngpus; i++)
		close_gpu(&d->gpus[i]);
	sr_lib_free(&ctx->p, d->lib);
	sr_lib_free(&ctx->p, d);
	ctx->devs = NULL;
}

/* ---- registration ---- */

const char *
sr_lib_device_library(const spotrun_ctx *ctx)
{
	return ctx->devs != NULL ? ctx->devs->lib : NULL;
}

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
	struct sr_dev_gpu *g;

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
		return sr_lib_fail(ctx, sr_lib_oom_or(SPOTRUN_ERROR_NO_DEVICE, err), "register \"%s\": %s; nothing "
		    "registered: name the CUDA driver with spotrun_set_cuda_library or "
		    "SPOTRUN_CUDA_LIBRARY, or register host buffers", name, err);
	if (ptr == NULL && b->bytes == 0)
		goto done;
	if (ptr == NULL)
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "register \"%s\": no buffer (NULL) for "
		    "%" PRIu64 " bytes", name, b->bytes);
	snprintf(what, sizeof what, "register \"%s\": check device pointer %p", name, ptr);
	if (sr_dev_push(g, what, err) == -1)
		return sr_lib_fail(ctx, sr_lib_oom_or(SPOTRUN_ERROR_NO_DEVICE, err), "%s", err);
	bad = g->cu->api.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dptr);
	if (bad == CUDA_ERROR_INVALID_VALUE) {
		sr_dev_pop(g);
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "register \"%s\": %p is not CUDA "
		    "memory (cuPointerGetAttribute: CUDA_ERROR_INVALID_VALUE): a host buffer is "
		    "registered with spotrun_register", name, ptr);
	}
	if (sr_dev_ok(g, bad, what, "cuPointerGetAttribute", err) == -1 ||
	    sr_dev_ok(g, g->cu->api.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
	    dptr), what, "cuPointerGetAttribute", err) == -1) {
		sr_dev_pop(g);
		return sr_lib_fail(ctx, sr_lib_oom_or(SPOTRUN_ERROR_NO_DEVICE, err), "%s", err);
	}
	if (type != CU_MEMORYTYPE_DEVICE) {
		sr_dev_pop(g);
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "register \"%s\": %p is CUDA host "
		    "memory, not device memory: a host buffer is registered with spotrun_register",
		    name, ptr);
	}
	if (ordinal != device) {
		sr_dev_pop(g);
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "register \"%s\": %p is memory of "
		    "CUDA device %d, not of device %d", name, ptr, ordinal, device);
	}
	if (sr_dev_ok(g, g->cu->api.cuMemGetAddressRange(&base, &size, dptr), what,
	    "cuMemGetAddressRange", err) == -1) {
		sr_dev_pop(g);
		return sr_lib_fail(ctx, sr_lib_oom_or(SPOTRUN_ERROR_NO_DEVICE, err), "%s", err);
	}
	sr_dev_pop(g);
	if (dptr - base > size || b->bytes > size - (dptr - base))
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "register \"%s\": the allocation "
		    "at %p holds %" PRIu64 " bytes from there, the slice needs %" PRIu64, name, ptr,
		    (uint64_t)(size - (dptr - base)), b->bytes);
done:
	b->device = device;
	b->dptr = dptr;
	b->gpu = g;
	return SPOTRUN_OK;
}

/* ---- staging ---- */

/* The pinned staging buffers and (planes: for a save) the split's device
 * memory, of at least `bytes` each, allocated on first need: 0 or -1. */
int
sr_dev_stage_alloc(spotrun_ctx *ctx, size_t bytes, int planes, char *err)
{
	struct sr_lib_devs *d = ctx->devs;
	struct sr_dev_gpu *g = &d->gpus[0];
	size_t i, j;
	int rc = 0;

	if (d->stage_bytes < bytes) {
		if (sr_dev_push(&d->gpus[d->stage_gpu], "pin staging memory", err) == -1)
			return -1;
		for (j = 0; j < SLOTS; j++)
			if (d->stage[j] != NULL) {
				d->gpus[d->stage_gpu].cu->api.cuMemFreeHost(d->stage[j]);
				d->stage[j] = NULL;
			}
		sr_dev_pop(&d->gpus[d->stage_gpu]);
		d->stage_bytes = 0;
		d->stage_gpu = 0;
		if (sr_dev_push(g, "pin staging memory", err) == -1)
			return -1;
		for (j = 0; j < SLOTS && rc == 0; j++)
			rc = sr_dev_ok(g, g->cu->api.cuMemHostAlloc((void **)&d->stage[j], bytes,
			    CU_MEMHOSTALLOC_PORTABLE), "pin staging memory", "cuMemHostAlloc", err);
		sr_dev_pop(g);
		if (rc != 0)
			return -1;
		d->stage_bytes = bytes;
	}
	for (i = 0; planes && i < d->ngpus; i++) {
		g = &d->gpus[i];
		if (!g->cu->kernels || g->tmp_bytes >= bytes)
			continue;
		if (sr_dev_push(g, "allocate device memory for the byte planes", err) == -1)
			return -1;
		for (j = 0; j < SLOTS && rc == 0; j++) {
			if (g->tmp[j] != 0)
				g->cu->api.cuMemFree(g->tmp[j]);
			g->tmp[j] = 0;
			rc = sr_dev_ok(g, g->cu->api.cuMemAlloc(&g->tmp[j], bytes), "allocate device "
			    "memory for the byte planes", "cuMemAlloc", err);
		}
		sr_dev_pop(g);
		if (rc != 0)
			return -1;
		g->tmp_bytes = bytes;
	}
	return 0;
}

int
sr_lib_device_copy(const struct lib_buf *b, uint64_t off, void *dst, size_t len, char *err)
{
	struct sr_dev_gpu *g = b->gpu;
	char what[SR_ERRMAX];
	int rc;

	snprintf(what, sizeof what, "copy \"%s\" off CUDA device %d", b->name, b->device);
	if (off > b->bytes || len > b->bytes - off)
		return sr_err(err, "%s: bytes [%" PRIu64 ", +%zu) are outside its %" PRIu64, what,
		    off, len, b->bytes);
	if (len == 0)
		return 0;
	if (sr_dev_push(g, what, err) == -1)
		return -1;
	rc = sr_dev_ok(g, g->cu->api.cuMemcpyDtoHAsync(dst, b->dptr + off, len, g->stream), what,
	    "cuMemcpyDtoHAsync", err);
	if (rc == 0)
		rc = sr_dev_ok(g, g->cu->api.cuStreamSynchronize(g->stream), what, "cuStreamSynchronize",
		    err);
	sr_dev_pop(g);
	return rc;
}

void *
sr_lib_device_pin(const spotrun_ctx *ctx, size_t n)
{
	struct sr_lib_devs *d = ctx->devs;
	char err[SR_ERRMAX];
	void *p = NULL;

	if (d == NULL || d->ngpus == 0 || d->async_pinned != NULL || n == 0 ||
	    sr_dev_push(&d->gpus[0], "", NULL) == -1)
		return sr_lib_alloc(&ctx->p, n);
	if (sr_dev_ok(&d->gpus[0], d->gpus[0].cu->api.cuMemHostAlloc(&p, n,
	    CU_MEMHOSTALLOC_PORTABLE), "pin staging memory", "cuMemHostAlloc", err) == -1)
		p = NULL;
	sr_dev_pop(&d->gpus[0]);
	if (p == NULL)
		return sr_lib_alloc(&ctx->p, n);	/* pageable: slower copies, no failure */
	d->async_pinned = p;
	return p;
}

int
sr_lib_device_unpin(const spotrun_ctx *ctx, void *mem)
{
	struct sr_lib_devs *d = ctx->devs;

	if (d == NULL || mem == NULL || mem != d->async_pinned)
		return 0;
	if (sr_dev_push(&d->gpus[0], "", NULL) == 0) {
		d->gpus[0].cu->api.cuMemFreeHost(mem);
		sr_dev_pop(&d->gpus[0]);
	}
	d->async_pinned = NULL;
	return 1;
}

/* ---- restore ---- */

/* What the checkpoint restored holds of device buffer b (chunk size
 * chunk), where it recorded the chunks' sums: its records and sums in mm,
 * 0; else -1 (mm empty). */
static int
seed_one(spotrun_ctx *ctx, const struct sr_manifest *m, const struct lib_buf *b, size_t chunk,
    struct sr_dev_memo *mm)
{
	const struct sr_mentry *e = NULL;
	size_t i, k, n = (b->bytes + chunk - 1) / chunk;
	int d, same;

	for (i = 0; i < m->ntensors && e == NULL; i++) {
		const struct sr_mtensor *t = &m->tensors[i];

		if (strcmp(t->name, b->name) != 0)
			continue;
		for (k = 0; k < t->npieces && e == NULL; k++) {
			for (same = 1, d = 0; d < b->ndim; d++)
				same &= t->pieces[k].offsets[d] == b->offsets[d] &&
				    t->pieces[k].sizes[d] == b->sizes[d];
			if (same)
				e = &t->pieces[k].data;
		}
	}
	if (e == NULL || e->nchunks != n || n == 0)
		return -1;
	for (k = 0; k < n; k++)
		if (!e->chunks[k].has_csum || e->chunks[k].rlen != (k + 1 < n ? chunk :
		    b->bytes - (uint64_t)k * chunk))
			return -1;
	mm->chunks = sr_lib_alloc(&ctx->p, n * sizeof *mm->chunks);
	mm->sums = sr_lib_alloc(&ctx->p, 16 * n);
	if (mm->chunks == NULL || mm->sums == NULL)
		goto fail;
	memset(mm->chunks, 0, n * sizeof *mm->chunks);
	mm->n = n;
	for (k = 0; k < n; k++) {
		mm->chunks[k] = e->chunks[k];
		memcpy(mm->sums + 16 * k, e->chunks[k].csum, 16);
		if ((mm->chunks[k].pack = sr_lib_strdup(&ctx->p, e->chunks[k].pack)) == NULL)
			goto fail;
	}
	return 0;
fail:
	sr_dev_memo_clear(&ctx->p, mm);
	return -1;
}

/* After a restore of checkpoint seq: what it holds of each device buffer
 * (the chunks' sums, where it recorded them) is what the next save
 * compares with, as if this context had saved it, so that a restarted
 * job's first checkpoint copies only what changed off the GPU. Failing
 * (the manifest unreadable, no sums, memory) only makes that save copy
 * every chunk. */
static void
seed_memos(spotrun_ctx *ctx, uint64_t seq)
{
	size_t chunk = ctx->p.chunk_size != 0 ? ctx->p.chunk_size : SR_DEV_CHUNK_DEFAULT, i;
	struct sr_manifest m;
	char err[SR_ERRMAX];
	int ok;

	ctx->devs->have_last = 0;
	ok = sr_catalog_load(ctx->st, ctx->job, seq, &m, err) == 0;
	for (i = 0; i < ctx->nbufs; i++) {
		struct lib_buf *b = &ctx->bufs[i];

		if (b->device < 0)
			continue;
		if (b->memo == NULL && (b->memo = sr_lib_alloc(&ctx->p, sizeof *b->memo)) != NULL)
			memset(b->memo, 0, sizeof *b->memo);
		if (b->memo == NULL)
			continue;
		sr_dev_memo_clear(&ctx->p, b->memo);
		if (ok)
			seed_one(ctx, &m, b, chunk, b->memo);
	}
	sr_manifest_free(&m);
	ctx->devs->last_seq = seq;
	ctx->devs->have_last = ok;
}

/* A restore's copies onto the devices: each chunk's bytes of a device
 * buffer are packed into one of the two pinned staging buffers (the
 * save's, d->stage) and copied from there with cuMemcpyHtoDAsync, an
 * event recorded after them; a staging buffer is refilled once its event
 * has passed, while the copies out of the other one run, so the restore
 * holds two chunks of pinned memory whatever the state's size. The
 * readers call in from several threads: one at a time, under mu. */
struct dput {
	spotrun_ctx *ctx;
	const struct sr_ckpt_tensor *t0;	/* t[0]: t - t0 is the buffer's index */
	pthread_mutex_t mu;
	size_t next;				/* the staging buffer filled next */
	struct sr_dev_gpu *busy[SLOTS];		/* whose stream copies out of it */
	CUevent ev[SR_LIB_MAX_GPUS][SLOTS];	/* of a device's copies out of each */
	int cuda_failed;
	/* the run being copied */
	const struct lib_buf *b;
	struct sr_dev_gpu *g;
	const uint8_t *src;
	uint8_t *at;
	char *err;
};

/* Wait for the copies out of staging buffer j. */
static int
put_wait(struct dput *p, size_t j, char *err)
{
	char what[SR_ERRMAX];
	int rc;

	if (p->busy[j] == NULL)
		return 0;
	snprintf(what, sizeof what, "copy onto CUDA device %d", p->busy[j]->ordinal);
	if (sr_dev_push(p->busy[j], what, err) == -1)
		return -1;
	rc = sr_dev_ok(p->busy[j], p->busy[j]->cu->api.cuEventSynchronize(
	    p->ev[p->busy[j] - p->ctx->devs->gpus][j]), what, "cuEventSynchronize", err);
	sr_dev_pop(p->busy[j]);
	if (rc == 0)
		p->busy[j] = NULL;
	return rc;
}

static int
put_run(void *arg, uint64_t dst, uint64_t at, uint64_t len)
{
	struct dput *p = arg;
	char what[SR_ERRMAX];

	memcpy(p->at, p->src + at, len);
	snprintf(what, sizeof what, "copy \"%s\" onto CUDA device %d", p->b->name, p->b->device);
	if (sr_dev_ok(p->g, p->g->cu->api.cuMemcpyHtoDAsync(p->b->dptr + dst, p->at, len,
	    p->g->stream), what, "cuMemcpyHtoDAsync", p->err) == -1)
		return -1;
	p->at += len;
	return 0;
}

static int
dev_put(void *arg, const struct sr_ckpt_tensor *t, const struct sr_runs *r, uint64_t from,
    uint64_t n, const uint8_t *src, char *err)
{
	struct dput *p = arg;
	struct sr_lib_devs *d = p->ctx->devs;
	size_t j, need = (size_t)n;
	char what[SR_ERRMAX];
	CUevent *ev;
	int rc = -1;

	pthread_mutex_lock(&p->mu);
	p->b = &p->ctx->bufs[t - p->t0];
	p->g = sr_dev_gpu_of(d, p->b->device);
	if (need > p->b->bytes)
		need = (size_t)p->b->bytes;	/* its runs: of this buffer's bytes */
	j = p->next;
	p->next = (j + 1) % SLOTS;
	if (put_wait(p, j, err) == -1)
		goto out;
	if (need > d->stage_bytes) {
		/* a checkpoint of larger chunks than this context's */
		for (j = 0; j < SLOTS; j++)
			if (put_wait(p, j, err) == -1)
				goto out;
		if (sr_dev_stage_alloc(p->ctx, need, 0, err) == -1)
			goto out;
		j = 0;
		p->next = 1;
	}
	snprintf(what, sizeof what, "copy \"%s\" onto CUDA device %d", p->b->name, p->b->device);
	if (sr_dev_push(p->g, what, err) == -1)
		goto out;
	p->src = src;
	p->at = d->stage[j];
	p->err = err;
	rc = sr_runs_each(r, from, n, put_run, p);
	/* the mark that the copies out of staging buffer j have ended */
	ev = &p->ev[p->g - d->gpus][j];
	if (rc == 0 && *ev == NULL)
		rc = sr_dev_ok(p->g, p->g->cu->api.cuEventCreate(ev, CU_EVENT_DEFAULT), what,
		    "cuEventCreate", err);
	if (rc == 0)
		rc = sr_dev_ok(p->g, p->g->cu->api.cuEventRecord(*ev, p->g->stream), what,
		    "cuEventRecord", err);
	sr_dev_pop(p->g);
	if (rc == 0)
		p->busy[j] = p->g;
out:
	if (rc != 0)
		p->cuda_failed = 1;
	pthread_mutex_unlock(&p->mu);
	return rc;
}

int
sr_lib_device_restore(spotrun_ctx *ctx, struct sr_ckpt_tensor *t, const struct sr_ckpt_opts *o,
    struct sr_ckpt_stats *stats, char *err)
{
	struct sr_lib_devs *d = ctx->devs;
	size_t chunk = ctx->p.chunk_size != 0 ? ctx->p.chunk_size : SR_DEV_CHUNK_DEFAULT, i;
	size_t most = 0;
	char what[SR_ERRMAX];
	struct dput p;
	int rc = 0;

	memset(&p, 0, sizeof p);
	p.ctx = ctx;
	p.t0 = t;
	pthread_mutex_init(&p.mu, NULL);
	/* the device buffers' bytes go through dev_put, two chunks of pinned
	 * memory at a time (of the buffer, when it is smaller) */
	for (i = 0; i < ctx->nbufs; i++) {
		const struct lib_buf *b = &ctx->bufs[i];

		t[i].data = b->host;
		if (b->device < 0)
			continue;
		t[i].put = dev_put;
		t[i].put_arg = &p;
		if ((b->bytes < chunk ? b->bytes : chunk) > most)
			most = (size_t)(b->bytes < chunk ? b->bytes : chunk);
	}
	if (most > 0 && sr_dev_stage_alloc(ctx, most, 0, err) == -1)
		rc = SR_LIB_DEVICE_FAILED;
	if (rc == 0)
		rc = sr_ckpt_restore_tensors(ctx->st, o, t, ctx->nbufs, stats, err);
	if (rc != 0 && p.cuda_failed)
		rc = SR_LIB_DEVICE_FAILED;
	/* every copy ended before the call returns */
	for (i = 0; i < d->ngpus; i++) {
		struct sr_dev_gpu *g = &d->gpus[i];

		snprintf(what, sizeof what, "copy onto CUDA device %d", g->ordinal);
		if (sr_dev_push(g, what, rc == 0 ? err : NULL) == -1) {
			rc = rc == 0 ? SR_LIB_DEVICE_FAILED : rc;
			continue;
		}
		if (sr_dev_ok(g, g->cu->api.cuStreamSynchronize(g->stream), what, "cuStreamSynchronize",
		    rc == 0 ? err : what) == -1 && rc == 0)
			rc = SR_LIB_DEVICE_FAILED;
		sr_dev_pop(g);
	}
	for (i = 0; i < d->ngpus; i++) {
		size_t j;

		for (j = 0; j < SLOTS; j++)
			if (p.ev[i][j] != NULL && sr_dev_push(&d->gpus[i], "", NULL) == 0) {
				d->gpus[i].cu->api.cuEventDestroy(p.ev[i][j]);
				sr_dev_pop(&d->gpus[i]);
			}
	}
	pthread_mutex_destroy(&p.mu);
	if (rc == SR_LIB_DEVICE_FAILED && strncmp(err, "restore ", 8) != 0)
		sr_err_prefix(err, "restore %s", ctx->job);
	if (rc == 0)
		seed_memos(ctx, stats->seq);
	for (i = 0; i < ctx->nbufs; i++) {
		t[i].put = NULL;
		t[i].put_arg = NULL;
	}
	return rc;
}
