/*
 * restore-tensors.c: sr_ckpt_restore_tensors, the newest usable checkpoint
 * back into buffers in memory (the library's registered tensors), along
 * the same walk of candidates as a directory (restore.h). A candidate must
 * hold each buffer's tensor with the same type and shape, and pieces that
 * cover the buffer's box, whatever ranks saved them and however they were
 * split (resharding): the pieces that overlap the box come from an index
 * (reshard.h), and of each only the chunks that hold bytes the box needs
 * are read. Every such chunk is a task for a small pool of threads, each
 * with its own codec: one ranged read, decoded, checked (XXH3-128, or the
 * SHA-256 id for a chunk without it), then copied into the buffer run by
 * run. A chunk that lies inside one run of the buffer (every chunk, when
 * the box is exactly a saved piece) is decoded straight into it. The
 * store handle is shared by the threads: its reads are thread-safe (the
 * directory restore reads with several threads too, store/xfer.h). A
 * buffer without memory but a put hook (the library's device buffers)
 * gets each chunk's decoded bytes through it instead, with their runs.
 */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "chunkhash.h"
#include "ckpt.h"
#include "codec.h"
#include "manifest.h"
#include "pathsafe.h"
#include "reshard.h"
#include "restore.h"
#include "util.h"

/* Threads reading chunks at most, and memory for their buffers (a raw and
 * an encoded chunk each) at most. */
#define READERS_MAX 8
#define READERS_MEM ((size_t)192 << 20)

/* One chunk of a saved piece that a buffer needs. */
struct task {
	const struct sr_ckpt_tensor *t;
	const struct sr_mchunk *c;
	uint64_t from;			/* the chunk's first byte in its piece */
	struct sr_runs runs;		/* the piece's bytes the buffer needs */
};

struct mem_restore {
	const struct sr_ckpt_tensor *t;
	size_t n;
	/* one candidate's tasks */
	struct sr_store *st;
	const struct sr_ckpt_opts *o;
	enum sr_chunk_id cid;
	struct task *tasks;
	size_t ntasks, cap, next;
	size_t maxchunk;		/* the largest rlen and clen of a task */
	pthread_mutex_t mu;
	int rc;				/* TRY_OK, or the first failure */
	char *why;
	uint64_t read_chunks, read_bytes;
};

/* Whether tensor mt is buffer t's: name, type and shape (why set if not). */
static int
same_tensor(const struct sr_mtensor *mt, const struct sr_ckpt_tensor *t, char *why)
{
	char a[200], b[200];

	if (mt == NULL)
		return sr_err(why, "it has no tensor \"%s\"", t->name), 0;
	if ((int)mt->dtype != t->dtype)
		return sr_err(why, "tensor \"%s\" is %s there, but registered as %s", t->name,
		    sr_dtype_name(mt->dtype), sr_dtype_name((enum sr_dtype)t->dtype)), 0;
	if (mt->ndim != t->ndim || memcmp(mt->shape, t->shape, (size_t)t->ndim * sizeof *t->shape))
		return sr_err(why, "tensor \"%s\" has shape %s there, but registered with %s",
		    t->name, sr_dims_str(mt->shape, mt->ndim, a, sizeof a),
		    sr_dims_str(t->shape, t->ndim, b, sizeof b)), 0;
	return 1;
}

/* A new task, or NULL with why on out-of-memory. */
static struct task *
add_task(struct mem_restore *r, char *why)
{
	if (r->ntasks == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;

		if (sr_ckpt_resize(&r->tasks, cap, sizeof *r->tasks, why) == -1)
			return NULL;
		r->cap = cap;
	}
	return &r->tasks[r->ntasks++];
}

/* The tasks of buffer t from tensor mt: the chunks of the pieces that
 * overlap its box holding bytes it needs. TRY_OK, or TRY_MISMATCH when
 * the pieces do not cover the box, TRY_BAD for a share, TRY_LOCAL on
 * out-of-memory (why set). */
static int
plan_buffer(struct mem_restore *r, const struct sr_mtensor *mt, const struct sr_ckpt_tensor *t,
    char *why)
{
	struct sr_pindex x;
	struct sr_box b, pb, *meets;
	size_t *hit = NULL, n, i, k;
	size_t esize = sr_dtype_size(mt->dtype);
	char a[240], g[240];
	int rc = TRY_OK, cov;

	b.ndim = t->ndim;
	memset(b.off, 0, sizeof b.off);
	memset(b.size, 0, sizeof b.size);
	memcpy(b.off, t->offsets, (size_t)t->ndim * sizeof *t->offsets);
	memcpy(b.size, t->sizes, (size_t)t->ndim * sizeof *t->sizes);
	if (sr_box_volume(&b) == 0)
		return TRY_OK;
	meets = NULL;
	if (sr_pindex_build(&x, mt, why) == -1 ||
	    (hit = sr_try_calloc(mt->npieces + 1, sizeof *hit, why)) == NULL ||
	    (meets = sr_try_calloc(mt->npieces + 1, sizeof *meets, why)) == NULL) {
		rc = TRY_LOCAL;
		goto out;
	}
	n = sr_pindex_query(&x, &b, hit);
	for (i = 0; i < n && rc == TRY_OK; i++) {
		const struct sr_mpiece *p = &mt->pieces[hit[i]];
		struct sr_runs runs;
		uint64_t from = 0;

		if (p->share) {
			sr_err(why, "tensor \"%s\" piece %zu is a share of a rank's part, not a piece "
			    "(a manifest no merge made)", t->name, hit[i]);
			rc = TRY_BAD;
			break;
		}
		sr_box_of_piece(mt, p, &pb);
		sr_box_meet(&pb, &b, &meets[i]);
		sr_runs_init(&runs, &pb, &b, &meets[i], esize);
		for (k = 0; k < p->data.nchunks; from += p->data.chunks[k++].rlen) {
			const struct sr_mchunk *c = &p->data.chunks[k];
			struct task *tk;

			if (!sr_runs_touch(&runs, from, c->rlen))
				continue;
			if ((tk = add_task(r, why)) == NULL) {
				rc = TRY_LOCAL;
				goto out;
			}
			tk->t = t;
			tk->c = c;
			tk->from = from;
			tk->runs = runs;
			if (c->rlen > r->maxchunk)
				r->maxchunk = c->rlen;
			if (c->clen > r->maxchunk)
				r->maxchunk = c->clen;
		}
	}
	if (rc == TRY_OK && (cov = sr_box_covered(&b, meets, n, &pb, why)) != 1) {
		if (cov == SR_BOX_OOM) {
			rc = TRY_LOCAL;
			goto out;
		}
		if (cov == 0)
			sr_err(why, "tensor \"%s\": no saved piece holds %s of the box registered (%s; "
			    "%zu piece%s saved)", t->name, sr_box_str(&pb, g, sizeof g),
			    sr_box_str(&b, a, sizeof a), mt->npieces, mt->npieces == 1 ? "" : "s");
		else
			sr_err(why, "tensor \"%s\": the saved pieces do not cover the box registered "
			    "(%s; %zu piece%s saved)", t->name, sr_box_str(&b, a, sizeof a), mt->npieces,
			    mt->npieces == 1 ? "" : "s");
		rc = TRY_MISMATCH;
	}
out:
	if (rc == TRY_LOCAL)
		sr_err_prefix(why, "plan the restore of tensor \"%s\"", t->name);
	free(meets);
	free(hit);
	sr_pindex_free(&x);
	return rc;
}

/* Set the candidate's failure, TRY_BAD or TRY_LOCAL (the first one
 * wins). */
static void
task_fail(struct mem_restore *r, int code, const char *why)
{
	pthread_mutex_lock(&r->mu);
	if (r->rc == TRY_OK) {
		r->rc = code;
		strlcpy(r->why, why, SR_ERRMAX);
	}
	pthread_mutex_unlock(&r->mu);
}

struct reader {
	struct sr_codec *codec;
	struct sr_chunkhash *h;
	uint8_t *cbuf, *rbuf;
};

/* Task tk: read its chunk, decode it (into the buffer when it lies in one
 * run of it), check it, copy what the buffer needs (or hand it to the
 * buffer's put). 0, or TRY_BAD (the checkpoint) or TRY_LOCAL (put) with
 * why. */
static int
run_task(struct mem_restore *r, struct reader *rd, const struct task *tk, char *why)
{
	const struct sr_mchunk *c = tk->c;
	const struct sr_ckpt_tensor *t = tk->t;
	char hex[65], got[65], want[65], err[SR_ERRMAX];
	uint8_t id[32], check[16], *out = rd->rbuf;
	uint64_t i = sr_runs_after(&tk->runs, tk->from), src, dst;
	int rc, direct;

	sr_id_hex(r->cid, c->id, hex);
	sr_runs_at(&tk->runs, i, &src, &dst);
	direct = t->data != NULL && src <= tk->from && tk->from + c->rlen <= src + tk->runs.len;
	if (direct)
		out = (uint8_t *)t->data + dst + (tk->from - src);
	rc = sr_store_read_range(r->st, c->pack, c->offset, (size_t)c->clen, rd->cbuf, err);
	if (rc == SR_STORE_NOTFOUND)
		return sr_err(why, "chunk %s of tensor \"%s\": pack %s is missing", hex, t->name,
		    c->pack);
	if (rc != 0)
		return sr_err(why, "chunk %s of tensor \"%s\": %s", hex, t->name, err);
	if (sr_codec_decode(rd->codec, rd->cbuf, c->clen, c->xf, out, c->rlen, err) != 0)
		return sr_err(why, "chunk %s of tensor \"%s\": %s", hex, t->name, err);
	if (sr_chunkhash_buf(rd->h, c->has_check ? SR_CH_CHECK : SR_CH_ID, out, c->rlen, id, check,
	    err) == -1)
		return sr_err(why, "chunk %s of tensor \"%s\": %s", hex, t->name, err);
	if (c->has_check && memcmp(check, c->check, sizeof check) != 0) {
		sr_hex_of(check, sizeof check, got);
		sr_hex_of(c->check, sizeof c->check, want);
		return sr_err(why, "chunk %s of tensor \"%s\": checksum mismatch (XXH3-128 %s, the "
		    "manifest says %s)", hex, t->name, got, want);
	}
	if (!c->has_check && memcmp(id, c->id, sizeof id) != 0) {
		sr_id_hex(SR_ID_SHA256, id, got);
		return sr_err(why, "chunk %s of tensor \"%s\": checksum mismatch (the data hashes to "
		    "%s)", hex, t->name, got);
	}
	if (t->put != NULL && t->data == NULL) {
		if (t->put(t->put_arg, t, &tk->runs, tk->from, c->rlen, rd->rbuf, err) == -1) {
			sr_err(why, "%s", err);
			return TRY_LOCAL;
		}
	} else if (!direct)
		sr_runs_copy(&tk->runs, tk->from, c->rlen, rd->rbuf, t->data);
	return 0;
}

static void *
reader_main(void *arg)
{
	struct mem_restore *r = arg;
	struct reader rd;
	uint64_t chunks = 0, bytes = 0;
	char why[SR_ERRMAX];
	size_t k;
	int rc;

	memset(&rd, 0, sizeof rd);
	if ((rd.codec = sr_codec_new(1, why)) == NULL || (rd.h = sr_chunkhash_new(why)) == NULL ||
	    (rd.cbuf = sr_try_malloc(r->maxchunk + 1, why)) == NULL ||
	    (rd.rbuf = sr_try_malloc(r->maxchunk + 1, why)) == NULL) {
		/* out of memory: no older checkpoint would do better */
		sr_err_prefix(why, "restore a chunk");
		task_fail(r, TRY_LOCAL, why);
	}
	for (;;) {
		pthread_mutex_lock(&r->mu);
		k = r->next++;
		if (r->rc == TRY_OK && sr_flag_get(r->o->cancel))
			r->rc = TRY_CANCELLED;
		if (r->rc != TRY_OK || k >= r->ntasks) {
			pthread_mutex_unlock(&r->mu);
			break;
		}
		pthread_mutex_unlock(&r->mu);
		if ((rc = run_task(r, &rd, &r->tasks[k], why)) != 0) {
			/* out of memory (a read, a decode) says nothing of the
			 * checkpoint: TRY_LOCAL, never a fallback */
			task_fail(r, rc == TRY_LOCAL || sr_err_is_oom(why) ? TRY_LOCAL : TRY_BAD, why);
			break;
		}
		chunks++;
		bytes += r->tasks[k].c->clen;
	}
	pthread_mutex_lock(&r->mu);
	r->read_chunks += chunks;
	r->read_bytes += bytes;
	pthread_mutex_unlock(&r->mu);
	free(rd.cbuf);
	free(rd.rbuf);
	sr_chunkhash_free(rd.h);
	sr_codec_free(rd.codec);
	return NULL;
}

/* Run the tasks on a pool of readers: TRY_OK, TRY_BAD, TRY_LOCAL or
 * TRY_CANCELLED. */
static int
run_tasks(struct mem_restore *r)
{
	pthread_t tids[READERS_MAX];
	uint64_t piece;
	char why[SR_ERRMAX];
	int i, n, streams, e;

	sr_store_read_plan(r->st, &streams, &piece);
	n = r->o->threads > 0 ? r->o->threads : sr_ncpus();
	if (n < streams)
		n = streams;
	if (n > READERS_MAX)
		n = READERS_MAX;
	while (n > 1 && (size_t)n * 2 * r->maxchunk > READERS_MEM)
		n--;
	if ((size_t)n > r->ntasks)
		n = (int)r->ntasks;
	r->next = 0;
	r->rc = TRY_OK;
	for (i = 0; i < n; i++) {
		if ((e = pthread_create(&tids[i], NULL, reader_main, r)) != 0) {
			/* those started see the failure and stop */
			snprintf(why, sizeof why, "start a restore reader thread: %s", strerror(e));
			task_fail(r, TRY_LOCAL, why);
			break;
		}
	}
	while (i > 0)
		pthread_join(tids[--i], NULL);
	return r->rc;
}

static int
mem_try(void *arg, struct sr_store *st, const struct sr_ckpt_opts *o, uint64_t seq,
    struct sr_manifest *m, char *why)
{
	struct mem_restore *r = arg;
	size_t i;
	int rc = TRY_OK;

	/* out of memory: not this checkpoint's fault, no fallback */
	if (sr_catalog_load(st, o->job, seq, m, why) != 0)
		return sr_err_is_oom(why) ? TRY_LOCAL : TRY_BAD;
	if (m->ntensors == 0 && r->n > 0) {
		sr_err(why, "it holds %s, not tensors (a directory checkpoint)",
		    m->nentries > 0 ? "files" : "nothing");
		return TRY_MISMATCH;
	}
	r->st = st;
	r->o = o;
	r->cid = m->chunk_id;
	r->ntasks = 0;
	r->maxchunk = 0;
	r->why = why;
	r->read_chunks = r->read_bytes = 0;
	/* All planned before a byte is written. */
	for (i = 0; i < r->n && rc == TRY_OK; i++) {
		const struct sr_mtensor *mt = sr_manifest_find_tensor(m, m->ntensors, r->t[i].name);

		if (!same_tensor(mt, &r->t[i], why))
			return TRY_MISMATCH;
		rc = plan_buffer(r, mt, &r->t[i], why);
	}
	if (rc == TRY_OK && r->ntasks > 0)
		rc = run_tasks(r);
	m->stats.read_chunks = r->read_chunks;
	m->stats.read_bytes = r->read_bytes;
	return rc;
}

int
sr_ckpt_restore_tensors(struct sr_store *st, const struct sr_ckpt_opts *opts,
    const struct sr_ckpt_tensor *t, size_t n, struct sr_ckpt_stats *stats, char *err)
{
	struct mem_restore r;
	int rc, unusable = 0;

	memset(&r, 0, sizeof r);
	r.t = t;
	r.n = n;
	pthread_mutex_init(&r.mu, NULL);
	rc = sr_restore_walk(st, opts, NULL, mem_try, &r, stats, &unusable, err);
	pthread_mutex_destroy(&r.mu);
	free(r.tasks);
	return rc == -1 && unusable ? SR_CKPT_UNUSABLE : rc;
}
