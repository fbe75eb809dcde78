/*
 * staging.c: the staging memory of an async save (staging.h). Training
 * blocks only while its buffers are copied here; the checkpoint pipeline
 * then reads the copy on the save's thread while training changes the
 * buffers again.
 *
 * The copy is planned as parts: runs of a buffer's bytes, in the
 * manifest's order (by name), each starting at a whole chunk of its
 * buffer so that the chunks, and so the chunk ids that dedupe one
 * checkpoint against the last, are those a blocking save makes. A part is
 * at most PART_MAX, so the pipeline starts on the first part while the
 * caller copies the next. A snapshot within the budget has room for all
 * of it (one "half"); a larger one gets two halves of the budget, and a
 * part goes into a half only once the pipeline is done with the parts
 * the half held before (their finished() callback): the caller copies
 * half B while the pipeline encodes and uploads half A.
 *
 * The pipeline's planner asks for parts in order (next()); a part not
 * copied yet while items it handed out are still in the ring is
 * SR_SRC_DRAIN, so that the ring drains, their half comes back, and the
 * caller, who may be waiting for that half, goes on: the two never wait
 * for each other.
 *
 * Memory comes from sr_staging_alloc (the caller's allocator hooks, its
 * pages faulted in at once; the device path makes it pinned), and a
 * buffer's bytes from sr_staging_copy, one function per kind of buffer
 * (host: memcpy).
 */
#include "config.h"

#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "device.h"
#include "staging.h"

/* Parts at most this long (rounded down to whole chunks), so that the
 * pipeline overlaps the copy of a large buffer. */
#define PART_MAX ((uint64_t)64 << 20)

/* ---- memory and copies, by kind of buffer ---- */

/* Fault in every page of fresh host memory where it is allocated, not page
 * by page inside the first copy into it, which made the first
 * spotrun_save_async block as long as a blocking save (9.2 s for 196 MiB,
 * the second 0.38 s; doc/benchmarks.md). A write to each page through
 * this very mapping: MADV_POPULATE_WRITE fills the pages from the kernel's
 * side, and on a virtual machine with shadow page tables the first copy
 * still took 2.5 s after it. The bytes do not matter: each save
 * overwrites them. */
static void
prefault(void *mem, size_t n)
{
	uint8_t *p = mem, *end = p + n;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	for (; p < end; p += pg)
		*(volatile uint8_t *)p = 0;
	if (n > 0)
		*(volatile uint8_t *)(end - 1) = 0;
}

void *
sr_staging_alloc(const spotrun_ctx *ctx, size_t n)
{
	void *mem;

	if (ctx->devs != NULL)
		return sr_lib_device_pin(ctx, n);	/* pinned: resident already */
	if ((mem = sr_lib_alloc(&ctx->p, n)) != NULL)
		prefault(mem, n);
	return mem;
}

void
sr_staging_release(const spotrun_ctx *ctx, void *mem)
{
	if (!sr_lib_device_unpin(ctx, mem))
		sr_lib_free(&ctx->p, mem);
}

/* A host buffer: read where it lies. */
static int
copy_host(const struct lib_buf *b, uint64_t off, void *dst, size_t len, char *err)
{
	(void)err;
	memcpy(dst, (const uint8_t *)b->host + off, len);
	return 0;
}

int
sr_staging_copy(const struct lib_buf *b, uint64_t off, void *dst, size_t len, char *err)
{
	if (b->device >= 0)
		return sr_lib_device_copy(b, off, dst, len, err);	/* lib/device.c */
	return copy_host(b, off, dst, len, err);
}

/* ---- the plan ---- */

/* Whether chunk k of the i-th buffer (by name) is referenced: its sum,
 * computed on its GPU, is the last commit's. */
static int
referenced(const struct sr_stage *sg, size_t i, uint64_t k)
{
	const uint8_t *csum;

	return sr_lib_device_ref(sg->sums, sg->order[i], (size_t)k, 0, &csum) != NULL;
}

/* The parts, into parts when it is not NULL; their number. Of each
 * buffer, the bytes this rank saves (a replicated one: its share). */
static size_t
plan(const struct sr_stage *sg, size_t half, int halves, uint64_t chunk, uint64_t part_max,
    struct sr_stage_part *parts)
{
	size_t i, n = 0, fill = 0, pos = 0, fill_start = 0, prev_start = 0;

	for (i = 0; i < sg->n; i++) {
		int dev = sg->sums != NULL && sg->bufs[sg->order[i]].device >= 0;
		uint64_t off, left, len, space;

		sr_ckpt_tensor_share(&sg->t[sg->order[i]], sg->o, &off, &left, NULL, NULL);
		while (left > 0) {
			if (dev && referenced(sg, i, off / chunk)) {
				/* referenced: in no half */
				len = left < chunk ? left : chunk;
				if (parts != NULL) {
					memset(&parts[n], 0, sizeof parts[n]);
					parts[n].t = i;
					parts[n].off = off;
					parts[n].len = len;
					parts[n].dev = parts[n].ref = 1;
				}
				n++;
				off += len;
				left -= len;
				continue;
			}
			space = half - pos;
			len = left <= space ? left : space / chunk * chunk;
			if (len > part_max)
				len = part_max;
			if (dev && len > chunk)
				len = chunk;	/* a device chunk a part: its own sum */
			if (len == 0) {
				/* the half is full: the other one, once it is back */
				fill++;
				prev_start = fill_start;
				fill_start = n;
				pos = 0;
				continue;
			}
			if (parts != NULL) {
				memset(&parts[n], 0, sizeof parts[n]);
				parts[n].t = i;
				parts[n].off = off;
				parts[n].len = len;
				parts[n].at = (fill % (size_t)halves) * half + pos;
				parts[n].need = fill >= 2 ? prev_start : 0;
				parts[n].dev = dev;
			}
			n++;
			pos += len;
			off += len;
			left -= len;
		}
	}
	return n;
}

uint64_t
sr_stage_need(const struct sr_stage *sg)
{
	size_t chunk = sr_ckpt_chunk_size(sg->o), i;
	uint64_t total = 0, off, len, k;

	for (i = 0; i < sg->n; i++) {
		sr_ckpt_tensor_share(&sg->t[sg->order[i]], sg->o, &off, &len, NULL, NULL);
		total += len;
		if (sg->sums == NULL || sg->bufs[sg->order[i]].device < 0)
			continue;
		for (k = off / chunk; k * chunk < off + len; k++)
			if (referenced(sg, i, k))
				total -= (off + len - k * chunk < chunk ? off + len - k * chunk : chunk);
	}
	return total;
}

int
sr_stage_plan(const spotrun_ctx *ctx, struct sr_stage *sg, size_t half, int halves)
{
	size_t i, chunk = sr_ckpt_chunk_size(sg->o);
	uint64_t part_max = PART_MAX / chunk * chunk;

	if (part_max == 0)
		part_max = chunk;
	sg->halves = halves;
	sg->nparts = plan(sg, half, halves, chunk, part_max, NULL);
	sg->parts = sr_lib_alloc(&ctx->p, (sg->nparts + 1) * sizeof *sg->parts);
	if (sg->parts == NULL)
		return -1;
	plan(sg, half, halves, chunk, part_max, sg->parts);
	sg->used = 0;
	for (i = 0; i < sg->nparts; i++) {
		if (!sg->parts[i].ref && sg->parts[i].at + sg->parts[i].len > sg->used)
			sg->used = sg->parts[i].at + sg->parts[i].len;
	}
	if (sg->nparts == 0)
		sg->filled_at = sr_mono();	/* nothing to copy (empty buffers) */
	pthread_mutex_init(&sg->mu, NULL);
	pthread_cond_init(&sg->cv, NULL);
	return 0;
}

void
sr_stage_free(const spotrun_ctx *ctx, struct sr_stage *sg)
{
	if (sg->parts == NULL)
		return;
	sr_lib_free(&ctx->p, sg->parts);
	sg->parts = NULL;
	pthread_mutex_destroy(&sg->mu);
	pthread_cond_destroy(&sg->cv);
}

/* ---- the caller's side ---- */

int
sr_stage_fill(struct sr_stage *sg, char *err)
{
	size_t k;

	for (k = 0; k < sg->nparts; k++) {
		const struct sr_stage_part *p = &sg->parts[k];
		int stop;

		pthread_mutex_lock(&sg->mu);
		while (sg->released < p->need && !sg->ended)
			pthread_cond_wait(&sg->cv, &sg->mu);
		/* a save that ended has its result already: the rest is moot */
		stop = sg->ended;
		if (p->need > 0)
			sg->overwritten = 1;
		pthread_mutex_unlock(&sg->mu);
		if (stop)
			break;
		if (!p->ref && sr_staging_copy(&sg->bufs[sg->order[p->t]], p->off, sg->mem + p->at,
		    (size_t)p->len, err) == -1) {
			pthread_mutex_lock(&sg->mu);
			sg->copy_failed = 1;
			strlcpy(sg->copy_err, err, sizeof sg->copy_err);
			pthread_cond_broadcast(&sg->cv);
			pthread_mutex_unlock(&sg->mu);
			return -1;
		}
		pthread_mutex_lock(&sg->mu);
		if (k + 1 == sg->nparts)
			sg->filled_at = sr_mono();
		sg->staged++;
		pthread_cond_broadcast(&sg->cv);
		pthread_mutex_unlock(&sg->mu);
	}
	return 0;
}

void
sr_stage_end(struct sr_stage *sg)
{
	pthread_mutex_lock(&sg->mu);
	sg->ended = 1;
	pthread_cond_broadcast(&sg->cv);
	pthread_mutex_unlock(&sg->mu);
}

/* ---- the pipeline's side (savesrc.h) ---- */

/* The manifest's tensors, as a blocking save records them. A second try
 * (a save with a deadline retries) reads the parts again from the
 * first: possible unless a half has been refilled since. */
static int
stage_describe(void *arg, struct sr_manifest *m, const struct sr_ckpt_opts *o, char *err)
{
	struct sr_stage *sg = arg;
	int refuse;

	pthread_mutex_lock(&sg->mu);
	refuse = sg->tries++ > 0 && sg->overwritten;
	if (refuse) {
		sg->refused = 1;
		sr_flag_set(&sg->cancel, 1);	/* no third try either */
	} else
		sg->released = 0;
	pthread_mutex_unlock(&sg->mu);
	if (refuse)
		return sr_err(err, "the snapshot is larger than the staging budget and its "
		    "first parts are overwritten: it cannot be tried again");
	sg->m = m;
	if (sg->tries > 1 && sg->sums != NULL)
		sr_lib_device_sums_restart(sg->sums);	/* the records of this try only */
	return sr_ckpt_tensors_describe(sg->t, sg->order, sg->n, m, o, err);
}

static int
stage_next(void *arg, struct sr_manifest *m, const struct sr_ckpt_opts *o, size_t *cursor,
    struct sr_save_item *it, char *err)
{
	struct sr_stage *sg = arg;
	const struct sr_stage_part *p;
	size_t k = *cursor;

	if (k == sg->nparts)
		return 0;
	pthread_mutex_lock(&sg->mu);
	while (sg->staged <= k) {
		if (sg->copy_failed) {
			sr_err(err, "%s", sg->copy_err);
			pthread_mutex_unlock(&sg->mu);
			return -1;
		}
		/* parts handed out still in the ring: their half may be
		 * what the caller waits for */
		if (sg->released < k) {
			pthread_mutex_unlock(&sg->mu);
			return SR_SRC_DRAIN;
		}
		pthread_cond_wait(&sg->cv, &sg->mu);
	}
	pthread_mutex_unlock(&sg->mu);
	p = &sg->parts[k];
	it->e = &m->tensors[p->t].pieces[0].data;
	it->fd = -1;
	it->mem = sg->mem != NULL ? sg->mem + p->at : NULL;	/* device pieces: no host staging */
	it->size = p->len;
	if (p->dev) {
		/* a device chunk: its sum recorded, and referenced when it is
		 * the last commit's (known now, without the kernels) */
		size_t bi = sg->order[p->t], kk = (size_t)(p->off / sr_ckpt_chunk_size(o));

		if (!p->ref)
			sr_lib_device_sum_staged(sg->sums, bi, kk, it->mem, (size_t)p->len);
		if ((it->ref = sr_lib_device_ref(sg->sums, bi, kk, !p->ref, &it->csum)) != NULL)
			it->mem = NULL;
	}
	*cursor = k + 1;
	return 1;
}

/* The pipeline read the part's last chunk: its bytes may be overwritten. */
static void
stage_finished(void *arg, const struct sr_ckpt_opts *o, struct sr_save_item *it, uint64_t saved)
{
	struct sr_stage *sg = arg;
	size_t i;

	/* a device chunk's record, for the next save's references */
	for (i = 0; sg->sums != NULL && i < sg->m->ntensors; i++)
		if (it->e == &sg->m->tensors[i].pieces[0].data) {
			sr_lib_device_record(sg->sums, sg->order[i], it->e);
			break;
		}
	pthread_mutex_lock(&sg->mu);
	sg->released++;
	pthread_cond_broadcast(&sg->cv);
	pthread_mutex_unlock(&sg->mu);
}

void
sr_stage_source(struct sr_stage *sg, struct sr_save_src *src)
{
	memset(src, 0, sizeof *src);
	src->arg = sg;
	src->describe = stage_describe;
	src->next = stage_next;
	src->finished = stage_finished;
	src->any_chunk = 0;	/* staged by the chunk size of opts */
}
