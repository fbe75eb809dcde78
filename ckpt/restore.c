/*
 * restore.c: sr_ckpt_restore, the newest usable checkpoint back into a
 * directory.
 *
 * Each candidate (LATEST, then back along its chain of parents: the older
 * committed checkpoints) is loaded and validated in full before anything
 * is written; the tree is then built in
 * a fresh staging directory next to the target: directories, empty files
 * (O_CREAT | O_EXCL, never through a symlink), then the chunks, then
 * symlinks, then modes and times (children before their directory). The
 * chunks flow through a ring of read slots: reader threads fetch them by
 * ranged reads, in order, into slot k % depth, as many at once and as
 * large as the store's read plan says (sr_store_read_plan: whole chunks
 * two at a time from a disk; pieces of `part_size`, `concurrency` at a
 * time, from an object store); worker threads decode each
 * to exactly its raw length, free its slot, then hash and pwrite it block
 * by block (WRITE_BLOCK) and check it: its XXH3-128 against the manifest's
 * (the id itself in version 2; its SHA-256 id for version 1 manifests
 * without an xxh3; chunkhash.h). Waiting
 * for the store overlaps decoding, and memory stays bounded (RESTORE_MEM).
 * Only a complete tree, every chunk of it checked, replaces the target; a
 * bad chunk removes the staging directory and falls back to the next older
 * checkpoint, saying which and why.
 *
 * Nothing restored is fsync'd: the checkpoint is durable in the store
 * already, and every restore builds its tree afresh and swaps it in, so a
 * crash during or after one loses nothing that the next restore does not
 * bring back. Syncing would only make the job wait for the disk (a
 * gigabyte took over a second on the benchmark VM) for no safety gained.
 * But each large chunk's writeback is started as it is written, on a
 * thread that never holds the workers up (writeback.h): the tree goes to
 * the disk while the job starts rather than beside its first checkpoint.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog.h"
#include "chain.h"
#include "chunkhash.h"
#include "ckpt.h"
#include "codec.h"
#include "fault.h"
#include "manifest.h"
#include "pathsafe.h"
#include "restore.h"
#include "util.h"
#include "writeback.h"

/* Memory for chunks at most: each worker decodes into a raw chunk through
 * its codec's planes (two chunks), each read slot holds an encoded one. */
#define RESTORE_MEM ((size_t)192 << 20)
/* A decoded chunk is hashed and written in blocks of this size, each
 * written right after it is hashed, while it is in the worker's L2 cache
 * (1 MiB here). Measured on the benchmark's 1 GiB (doc/benchmarks.md):
 * one pwrite of a whole 16 MiB chunk after hashing it, or blocks of 4 MiB,
 * cost 2.1-2.9 s of system time, nearly all the copy into new page-cache
 * pages from memory; blocks of 64 KiB-1 MiB 0.42-0.69 s. */
#define WRITE_BLOCK ((uint64_t)256 << 10)
/* Chunks at least this large have their writeback started as soon as they
 * are written (writeback.h); smaller ones are left to the kernel. */
#define WRITEBACK_MIN ((uint64_t)1 << 20)


struct task {
	size_t entry, chunk;
	const struct sr_mchunk *c;
	uint64_t foff;		/* offset of the chunk in its file */
};

/* A read slot: the encoded member of unit k, for k % depth. A unit is
 * one read and one decode: a chunk, or the member that several files'
 * slices share (doc/format.md, "Slices"), written to each. */
struct rslot {
	enum { RS_FREE = 0, RS_READING, RS_FULL } state;
	size_t turn;		/* the task it holds or is for next: k, k + depth, ... */
	uint8_t *cbuf;		/* the largest chunk's clen, page-aligned: the store
				 * may read with O_DIRECT */
	int pieces_left;	/* RS_READING: reads not yet back */
	int rc;			/* of the first read that failed */
	char err[SR_ERRMAX];
};

struct restorer {
	struct sr_store *st;
	struct sr_writeback *wb;	/* NULL: none */
	const struct sr_ckpt_opts *o;
	const struct sr_manifest *m;
	int sfd;		/* the staging directory */
	struct task *tasks;
	size_t ntasks;
	size_t *units;		/* unit k is tasks [units[k], units[k + 1]) */
	size_t nunits;
	struct rslot *slots;
	size_t depth;
	uint8_t *slot_mem;	/* every slot's cbuf, one huge-page buffer */
	uint64_t piece;		/* bytes per ranged read; 0: whole chunks */
	size_t next_read;	/* the unit whose pieces are handed out now */
	int next_piece;		/* ... and its next piece */
	size_t next_work;	/* the next unit to decode */
	pthread_mutex_t mu;
	/* The readers wait on rcv (a slot freed, a task's other pieces
	 * started), the workers on wcv (a slot filled); a failure wakes both.
	 * One for all woke every thread at every change: for 10,000 small
	 * files 7.4 futex calls a chunk, 4.9 with two. */
	pthread_cond_t rcv, wcv;
	enum try_rc rc;		/* first failure */
	char why[SR_ERRMAX];
	/* per entry: its mode and time were set by the worker that wrote
	 * its one chunk (each written by that worker alone, read after the
	 * join) */
	unsigned char *meta_done;
	uint64_t done, total;	/* raw bytes verified, of all */
	double progress_at;
};

/* Record the first failure; later ones are consequences or noise. */
static void
fail(struct restorer *r, enum try_rc rc, const char *fmt, ...) SR_PRINTF(3, 4);

static void
fail(struct restorer *r, enum try_rc rc, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&r->mu);
	if (r->rc == TRY_OK) {
		va_start(ap, fmt);
		vsnprintf(r->why, sizeof r->why, fmt, ap);
		va_end(ap);
		/* out of memory, wherever it came from, says nothing of the
		 * checkpoint: an older one would not fare better */
		r->rc = rc == TRY_BAD && sr_err_is_oom(r->why) ? TRY_LOCAL : rc;
	}
	pthread_cond_broadcast(&r->rcv);	/* everyone stops */
	pthread_cond_broadcast(&r->wcv);
	pthread_mutex_unlock(&r->mu);
}

/* The member unit k reads and decodes. */
static const struct sr_mchunk *
member_of(const struct restorer *r, size_t k)
{
	return r->tasks[r->units[k]].c;
}

/* Piece j of unit k's member: [*off, *off + *len) of it. Pieces end
 * at the pack's multiples of r->piece, which is the upload's part size by
 * default, so that no read straddles two parts (AWS's advice: ranged GETs
 * aligned with the parts). The number of pieces, or with j < 0 only that. */
static int
piece_of(const struct restorer *r, size_t k, int j, uint64_t *off, uint64_t *len)
{
	const struct sr_mchunk *c = member_of(r, k);
	uint64_t first, start, end;

	if (r->piece == 0) {
		if (j >= 0) {
			*off = 0;
			*len = c->clen;
		}
		return 1;
	}
	first = c->offset / r->piece;
	if (j >= 0) {
		start = (first + (uint64_t)j) * r->piece;
		end = start + r->piece;
		if (start < c->offset)
			start = c->offset;
		if (end > c->offset + c->clen)
			end = c->offset + c->clen;
		*off = start - c->offset;
		*len = end - start;
	}
	return (int)((c->offset + c->clen - 1) / r->piece - first + 1);
}

static int
pieces_of(const struct restorer *r, size_t k)
{
	return piece_of(r, k, -1, NULL, NULL);
}

/*
 * Reader threads: each takes the next piece (a ranged read) in task order
 * and reads it into its slot. The reader of a task's first piece waits for
 * the slot to be free for that task; the readers of its other pieces wait
 * for that; the last piece back marks it full. A network store thus keeps
 * `streams` requests in flight over as many connections while memory holds
 * only the few chunks they cover.
 */
static void *
reader_main(void *arg)
{
	struct restorer *r = arg;
	const struct sr_mchunk *c;
	struct rslot *sl;
	uint64_t off = 0, len = 0;
	char err[SR_ERRMAX];
	size_t k;
	int j, rc;

	pthread_mutex_lock(&r->mu);
	for (;;) {
		if (r->rc != TRY_OK || r->next_read == r->nunits)
			break;
		k = r->next_read;
		j = r->next_piece++;
		if (r->next_piece == pieces_of(r, k)) {
			r->next_read++;
			r->next_piece = 0;
		}
		c = member_of(r, k);
		sl = &r->slots[k % r->depth];
		if (j == 0) {
			/* free once task k - depth is decoded: not before, not after */
			while (r->rc == TRY_OK && (sl->state != RS_FREE || sl->turn != k))
				pthread_cond_wait(&r->rcv, &r->mu);
			if (r->rc != TRY_OK)
				break;
			sl->pieces_left = pieces_of(r, k);
			sl->rc = 0;
			sl->state = RS_READING;
			if (sl->pieces_left > 1)
				pthread_cond_broadcast(&r->rcv);
		} else {
			while (r->rc == TRY_OK && (sl->state != RS_READING || sl->turn != k))
				pthread_cond_wait(&r->rcv, &r->mu);
			if (r->rc != TRY_OK)
				break;
		}
		pthread_mutex_unlock(&r->mu);
		piece_of(r, k, j, &off, &len);
		rc = sr_store_read_range(r->st, c->pack, c->offset + off, (size_t)len, sl->cbuf + off,
		    err);
		pthread_mutex_lock(&r->mu);
		if (rc != 0 && sl->rc == 0) {
			sl->rc = rc;
			snprintf(sl->err, sizeof sl->err, "%s", err);
		}
		if (--sl->pieces_left == 0) {
			sl->state = RS_FULL;
			pthread_cond_broadcast(&r->wcv);
		}
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

static void ts_of(int64_t ns, struct timespec ts[2]);
static unsigned safe_mode(const struct sr_mentry *e);

/* Write task t's chunk, raw (its rlen bytes), into its file and verify
 * it: 0, or -1 after fail() (a chunk that fails the check fails the
 * whole staging tree). */
static int
write_task(struct restorer *r, const struct task *t, const uint8_t *raw, struct sr_chunkhash *h,
    struct sr_path_dir *dir)
{
	const struct sr_mentry *e = &r->m->entries[t->entry];
	const struct sr_mchunk *c = t->c;
	char hex[65], got[65], want[65], q[256], err[SR_ERRMAX];
	uint8_t id[32], check[16];
	uint64_t off, n;
	int fd;

	sr_id_hex(r->m->chunk_id, c->id, hex);
	sr_path_quote(e->path, q, sizeof q);
	if ((fd = sr_path_openat(dir, r->sfd, e->path, O_WRONLY, 0, err)) == -1) {
		fail(r, TRY_LOCAL, "%s", err);
		return -1;
	}
	/* Hash and write block by block, each while it is in the CPU's cache:
	 * the chunk is then read from memory once rather than twice. The bytes
	 * written before the check are in the staging tree only, which a bad
	 * chunk removes; nothing is restored until every chunk has passed.
	 * The check is the manifest's XXH3-128 where it has one, else the id. */
	if (sr_chunkhash_begin(h, c->has_check ? SR_CH_CHECK : SR_CH_ID, err) == -1) {
		fail(r, TRY_LOCAL, "chunk %s of %s: %s", hex, q, err);
		close(fd);
		return -1;
	}
	for (off = 0; off < c->rlen; off += n) {
		n = c->rlen - off < WRITE_BLOCK ? c->rlen - off : WRITE_BLOCK;
		if (sr_chunkhash_update(h, raw + off, n, err) == -1) {
			fail(r, TRY_LOCAL, "chunk %s of %s: %s", hex, q, err);
			close(fd);
			return -1;
		}
		if (sr_pwrite_all(fd, raw + off, n, t->foff + off) == -1) {
			sr_errno(err, "write %s", q);
			fail(r, TRY_LOCAL, "%s", err);
			close(fd);
			return -1;
		}
	}
	if (c->rlen >= WRITEBACK_MIN)
		sr_writeback_offer(r->wb, fd, t->foff, c->rlen);
	/* A file of one chunk gets its mode and time here, through the fd
	 * it was written by, not opened again for them in build's serial
	 * pass (a small file's third open): nothing writes it after this,
	 * so its time stays. Should either fail, that pass tries again and
	 * reports it. */
	if (e->nchunks == 1) {
		struct timespec ts[2];

		ts_of(e->mtime_ns, ts);
		if (fchmod(fd, safe_mode(e)) == 0 && futimens(fd, ts) == 0)
			r->meta_done[t->entry] = 1;
	}
	close(fd);
	if (sr_chunkhash_end(h, id, check, err) == -1) {
		fail(r, TRY_LOCAL, "chunk %s of %s: %s", hex, q, err);
		return -1;
	}
	if (c->has_check && memcmp(check, c->check, sizeof check) != 0) {
		sr_hex_of(check, sizeof check, got);
		sr_hex_of(c->check, sizeof c->check, want);
		fail(r, TRY_BAD, "chunk %s of %s: checksum mismatch (XXH3-128 %s, the manifest"
		    " says %s)", hex, q, got, want);
		return -1;
	}
	if (!c->has_check && memcmp(id, c->id, sizeof id) != 0) {
		sr_id_hex(SR_ID_SHA256, id, got);
		fail(r, TRY_BAD, "chunk %s of %s: checksum mismatch (the data hashes to %s)", hex, q, got);
		return -1;
	}
	pthread_mutex_lock(&r->mu);
	r->done += c->rlen;
	if (r->done < r->total)	/* the end is reported once the tree is in place */
		sr_ckpt_progress(r->o, &r->progress_at, r->done, r->total);
	pthread_mutex_unlock(&r->mu);
	return 0;
}

/* Decode unit k's member out of its slot (freeing the slot), then write
 * each of its tasks' chunks. */
static void
restore_unit(struct restorer *r, struct sr_codec *codec, size_t k, struct rslot *sl,
    uint8_t **rbuf, size_t *rcap, struct sr_chunkhash *h, struct sr_path_dir *dir)
{
	const struct task *t = &r->tasks[r->units[k]];
	const struct sr_mchunk *c = t->c;
	uint64_t mlen = sr_mchunk_mlen(c);
	char hex[65], q[256], err[SR_ERRMAX];
	uint8_t *nb;
	size_t i;
	int rc;

	sr_id_hex(r->m->chunk_id, c->id, hex);
	sr_path_quote(r->m->entries[t->entry].path, q, sizeof q);
	if (*rcap < mlen && (nb = sr_try_bigbuf(mlen, mlen, err)) != NULL) {
		free(*rbuf);
		*rbuf = nb;
		*rcap = mlen;
	}
	rc = -1;
	if (*rcap < mlen)
		fail(r, TRY_LOCAL, "chunk %s of %s: %s", hex, q, err);
	else if (sl->rc == SR_STORE_NOTFOUND)
		fail(r, TRY_BAD, "chunk %s of %s: pack %s is missing", hex, q, c->pack);
	else if (sl->rc != 0)
		fail(r, TRY_BAD, "chunk %s of %s: %s", hex, q, sl->err);
	else if ((rc = sr_codec_decode(codec, sl->cbuf, c->clen, c->xf, *rbuf, mlen, err)) != 0)
		fail(r, TRY_BAD, "chunk %s of %s: %s", hex, q, err);
	pthread_mutex_lock(&r->mu);
	sl->turn = k + r->depth;
	sl->state = RS_FREE;
	pthread_cond_broadcast(&r->rcv);
	pthread_mutex_unlock(&r->mu);
	for (i = r->units[k]; rc == 0 && i < r->units[k + 1]; i++)
		rc = write_task(r, &r->tasks[i], *rbuf + r->tasks[i].c->at, h, dir);
}

static void *
worker_main(void *arg)
{
	struct restorer *r = arg;
	char err[SR_ERRMAX];
	struct sr_codec *codec = sr_codec_new(1, err);
	struct sr_chunkhash *h = codec != NULL ? sr_chunkhash_new(err) : NULL;
	struct sr_path_dir dir = SR_PATH_DIR_INIT;
	uint8_t *rbuf = NULL;
	size_t rcap = 0, k;
	struct rslot *sl;

	if (h == NULL) {
		fail(r, TRY_LOCAL, "restore a chunk: %s", err);
		sr_codec_free(codec);
		return NULL;
	}
	pthread_mutex_lock(&r->mu);
	for (;;) {
		if (r->rc != TRY_OK || r->next_work == r->nunits)
			break;
		if (sr_flag_get(r->o->cancel)) {
			pthread_mutex_unlock(&r->mu);
			fail(r, TRY_CANCELLED, "restore of %s cancelled", r->o->job);
			pthread_mutex_lock(&r->mu);
			break;
		}
		k = r->next_work++;
		sl = &r->slots[k % r->depth];
		while (r->rc == TRY_OK && (sl->state != RS_FULL || sl->turn != k))
			pthread_cond_wait(&r->wcv, &r->mu);
		if (r->rc != TRY_OK)
			break;
		pthread_mutex_unlock(&r->mu);
		restore_unit(r, codec, k, sl, &rbuf, &rcap, h, &dir);
		pthread_mutex_lock(&r->mu);
	}
	pthread_mutex_unlock(&r->mu);
	sr_path_dir_close(&dir);
	free(rbuf);
	sr_chunkhash_free(h);
	sr_codec_free(codec);
	return NULL;
}

/* Whole chunks first, by chunk index, then file: workers take neighbouring
 * tasks at the same time, and these then write different files, rather
 * than queueing on one file's inode lock (a buffered write takes it
 * exclusively). Then slices, by member (pack, offset), so that those of
 * one member are neighbours, one unit; in the pack's order. */
static int
task_cmp(const void *a, const void *b)
{
	const struct task *x = a, *y = b;
	int c;

	if ((x->c->mlen != 0) != (y->c->mlen != 0))
		return x->c->mlen != 0 ? 1 : -1;
	if (x->c->mlen != 0) {
		if (x->c->pack != y->c->pack && (c = strcmp(x->c->pack, y->c->pack)) != 0)
			return c;
		if (x->c->offset != y->c->offset)
			return x->c->offset < y->c->offset ? -1 : 1;
		return x->c->at < y->c->at ? -1 : x->c->at > y->c->at;
	}
	if (x->chunk != y->chunk)
		return x->chunk < y->chunk ? -1 : 1;
	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

/* Fetch every chunk on worker threads. */
static enum try_rc
fetch_chunks(struct restorer *r, int threads)
{
	const struct sr_manifest *m = r->m;
	uint64_t rmax = 1, cmax = 1;
	pthread_t *tids = NULL;
	size_t i, k, cap = 0, stride;
	int n, nr, inflight, t, e;
	char err[SR_ERRMAX];

	pthread_cond_init(&r->rcv, NULL);	/* fail() wakes on them */
	pthread_cond_init(&r->wcv, NULL);
	for (i = 0; i < m->nentries; i++) {
		uint64_t off = 0;
		for (k = 0; k < m->entries[i].nchunks; k++) {
			const struct sr_mchunk *c = &m->entries[i].chunks[k];
			if (r->ntasks == cap) {
				if (sr_ckpt_resize(&r->tasks, cap ? cap * 2 : 256, sizeof *r->tasks,
				    err) == -1) {
					fail(r, TRY_LOCAL, "plan the restore: %s", err);
					goto out;
				}
				cap = cap ? cap * 2 : 256;
			}
			r->tasks[r->ntasks].entry = i;
			r->tasks[r->ntasks].chunk = k;
			r->tasks[r->ntasks].c = c;
			r->tasks[r->ntasks++].foff = off;
			off += c->rlen;
			r->total += c->rlen;
			if (sr_mchunk_mlen(c) > rmax)
				rmax = sr_mchunk_mlen(c);
			if (c->clen > cmax)
				cmax = c->clen;
		}
	}
	if (r->ntasks > 1)
		sr_sort(r->tasks, r->ntasks, sizeof *r->tasks, task_cmp);
	/* units: a task each, but the slices of one member together. One
	 * member is decoded once, by the first slice's clen, xf and mlen, so
	 * slices that say otherwise of it (a manifest written by hand: the
	 * save never does) are units of their own: each decodes the member
	 * as it says, and fails its check if that is not what it is, never
	 * reading past what the member decoded to. */
	if ((r->units = sr_try_calloc(r->ntasks + 1, sizeof *r->units, err)) == NULL) {
		fail(r, TRY_LOCAL, "plan the restore: %s", err);
		goto out;
	}
	for (i = 0; i < r->ntasks; i++) {
		const struct sr_mchunk *c = r->tasks[i].c, *p = i > 0 ? r->tasks[i - 1].c : NULL;

		if (p == NULL || c->mlen == 0 || p->mlen == 0 || c->pack != p->pack ||
		    c->offset != p->offset || c->clen != p->clen || c->xf != p->xf ||
		    c->mlen != p->mlen)
			r->units[r->nunits++] = i;
	}
	r->units[r->nunits] = r->ntasks;
	/* The store's plan: nr reads in flight of r->piece bytes each (0:
	 * whole chunks). Each worker holds two raw chunks and each slot an
	 * encoded one: a slot for every worker, for the chunks the reads in
	 * flight cover (nr of whole chunks; else about nr * piece / cmax and
	 * the one being started), and one to spare. */
	sr_store_read_plan(r->st, &nr, &r->piece);
	if (nr < 1)
		nr = 1;
	inflight = nr;
	if (r->piece > 0 && cmax > 0 && (nr * r->piece + cmax - 1) / cmax + 1 < (uint64_t)nr)
		inflight = (int)((nr * r->piece + cmax - 1) / cmax + 1);
	if ((size_t)inflight > r->nunits)
		inflight = (int)r->nunits;
	/* workers first (with two chunks in flight at least), then as many
	 * chunks in flight as the rest of the memory holds */
	n = threads;
	while (n > 1 && (uint64_t)n * 2 * rmax + (uint64_t)(n + 3) * cmax > RESTORE_MEM)
		n--;
	if ((size_t)n > r->nunits)
		n = (int)r->nunits;
	if (n < 1)
		n = 1;
	while (inflight > 2 &&
	    (uint64_t)n * 2 * rmax + (uint64_t)(n + inflight + 1) * cmax > RESTORE_MEM)
		inflight--;
	r->depth = (size_t)(n + inflight + 1);
	if ((r->slots = sr_try_calloc(r->depth, sizeof *r->slots, err)) == NULL) {
		fail(r, TRY_LOCAL, "plan the restore: %s", err);
		goto out;
	}
	/* every slot's buffer now, of the largest chunk, from this thread:
	 * grown in the readers, 16 MiB at a time, they ended up in each
	 * reader's malloc arena and cost 3-7 MiB of RSS per reader more than
	 * the slots themselves (and page faults); in one buffer, page-aligned
	 * each, so that huge pages are not rounded up slot by slot */
	stride = ((size_t)cmax + 4095) & ~(size_t)4095;
	if (stride < cmax || r->depth > SIZE_MAX / stride) {
		fail(r, TRY_LOCAL, "plan the restore: %zu read buffers of %zu bytes overflow",
		    r->depth, stride);
		goto out;
	}
	if ((r->slot_mem = sr_try_bigbuf(r->depth * stride, r->depth * stride, err)) == NULL) {
		fail(r, TRY_LOCAL, "plan the restore: %s", err);
		goto out;
	}
	for (i = 0; i < r->depth; i++) {
		r->slots[i].turn = i;
		r->slots[i].cbuf = r->slot_mem + i * stride;
	}
	if ((tids = sr_try_calloc((size_t)(n + nr), sizeof *tids, err)) == NULL) {
		fail(r, TRY_LOCAL, "plan the restore: %s", err);
		goto out;
	}
	r->wb = sr_writeback_start();
	for (t = 0; t < n + nr; t++) {
		if ((e = pthread_create(&tids[t], NULL, t < nr ? reader_main : worker_main, r)) != 0) {
			/* those started see the failure and stop */
			fail(r, TRY_LOCAL, "start a restore thread: %s", strerror(e));
			break;
		}
	}
	while (t > 0)
		pthread_join(tids[--t], NULL);
	sr_writeback_stop(r->wb);
	r->wb = NULL;
out:
	free(tids);
	free(r->slot_mem);
	free(r->slots);
	pthread_cond_destroy(&r->rcv);
	pthread_cond_destroy(&r->wcv);
	return r->rc;
}

static void
ts_of(int64_t ns, struct timespec ts[2])
{
	ts[0].tv_sec = 0;
	ts[0].tv_nsec = UTIME_OMIT;	/* atime: left as it is */
	ts[1].tv_sec = (time_t)(ns / 1000000000);
	ts[1].tv_nsec = (long)(ns % 1000000000);
	if (ts[1].tv_nsec < 0) {
		ts[1].tv_nsec += 1000000000;
		ts[1].tv_sec--;
	}
}

/*
 * The mode an entry is restored with: its mode without setuid and setgid
 * (and without sticky on a file, where Linux ignores it). Whoever can
 * write the store chooses the modes, and a restore creates every file as
 * the restoring user: run as root, mode 06777 would plant a setuid-root
 * file. Sticky stays on directories (it only limits who deletes there).
 * World-writable bits are kept: the job saved them so, and they let
 * others write what anyone who can write the store could write anyway.
 */
static unsigned
safe_mode(const struct sr_mentry *e)
{
	return e->mode & (e->type == SR_MT_DIR ? ~(unsigned)(S_ISUID | S_ISGID) : 0777u);
}

/* Set mode (not for symlinks; safe_mode) and mtime of one entry, without
 * following a symlink. */
static int
set_meta(struct sr_path_dir *dir, int sfd, const struct sr_mentry *e, char *err)
{
	struct timespec ts[2];
	const char *leaf;
	char q[256];
	int fd, pfd, rc = 0;

	ts_of(e->mtime_ns, ts);
	sr_path_quote(e->path, q, sizeof q);
	if (e->type == SR_MT_SYMLINK) {
		if ((pfd = sr_path_dir_parent(dir, sfd, e->path, &leaf, err)) == -1)
			return -1;
		if (utimensat(pfd, leaf, ts, AT_SYMLINK_NOFOLLOW) == -1)
			return sr_errno(err, "set the time of %s", q);
		return 0;
	}
	fd = sr_path_openat(dir, sfd, e->path, O_RDONLY | (e->type == SR_MT_DIR ? O_DIRECTORY : 0),
	    0, err);
	if (fd == -1)
		return -1;
	if (fchmod(fd, safe_mode(e)) == -1)
		rc = sr_errno(err, "set the mode of %s", q);
	else if (futimens(fd, ts) == -1)
		rc = sr_errno(err, "set the time of %s", q);
	close(fd);
	return rc;
}

/* Create dirs and empty files, in path order (parents first). */
static int
make_tree(int sfd, const struct sr_manifest *m, char *err)
{
	struct sr_path_dir dir = SR_PATH_DIR_INIT;
	const char *leaf;
	char q[256];
	size_t i;
	int pfd = 0, fd, rc = 0;

	for (i = 0; i < m->nentries && rc == 0; i++) {
		const struct sr_mentry *e = &m->entries[i];
		if (e->type == SR_MT_SYMLINK)
			continue;
		sr_path_quote(e->path, q, sizeof q);
		if ((pfd = sr_path_dir_parent(&dir, sfd, e->path, &leaf, err)) == -1)
			break;
		if (e->type == SR_MT_DIR) {
			if (mkdirat(pfd, leaf, 0700) == -1)
				rc = sr_errno(err, "create directory %s", q);
		} else {
			fd = openat(pfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (fd == -1)
				rc = sr_errno(err, "create %s", q);
			else
				close(fd);
		}
	}
	sr_path_dir_close(&dir);
	return pfd == -1 ? -1 : rc;
}

static int
make_links(int sfd, const struct sr_manifest *m, char *err)
{
	struct sr_path_dir dir = SR_PATH_DIR_INIT;
	const char *leaf;
	char q[256];
	size_t i;
	int pfd = 0, rc = 0;

	for (i = 0; i < m->nentries && rc == 0; i++) {
		const struct sr_mentry *e = &m->entries[i];
		if (e->type != SR_MT_SYMLINK)
			continue;
		if ((pfd = sr_path_dir_parent(&dir, sfd, e->path, &leaf, err)) == -1)
			break;
		if (symlinkat(e->target, pfd, leaf) == -1)
			rc = sr_errno(err, "create symlink %s", sr_path_quote(e->path, q, sizeof q));
	}
	sr_path_dir_close(&dir);
	return pfd == -1 ? -1 : rc;
}

/* Say once per restore which entries lost bits to safe_mode: the first
 * by name, and how many more. */
static void
say_stripped(const struct sr_ckpt_opts *o, const struct sr_manifest *m)
{
	const struct sr_mentry *first = NULL;
	char q[256], more[64] = "";
	size_t i, n = 0;

	for (i = 0; i < m->nentries; i++) {
		const struct sr_mentry *e = &m->entries[i];

		if (e->type != SR_MT_SYMLINK && safe_mode(e) != e->mode && n++ == 0)
			first = e;
	}
	if (first == NULL)
		return;
	if (n > 1)
		snprintf(more, sizeof more, " (and %zu more entr%s)", n - 1, n == 2 ? "y" : "ies");
	sr_ckpt_say(o, "warning: checkpoint %" PRIu64 ": %s has mode %#o: restored as %#o%s; "
	    "a restore never sets setuid or setgid (nor sticky on files)", m->stats.seq,
	    sr_path_quote(first->path, q, sizeof q), first->mode, safe_mode(first), more);
}

/* Build checkpoint m in the empty directory sfd. */
static enum try_rc
build(struct sr_store *st, const struct sr_ckpt_opts *o, const struct sr_manifest *m, int sfd,
    char *why)
{
	struct sr_path_dir dir = SR_PATH_DIR_INIT;
	struct restorer r;
	size_t i;
	enum try_rc rc;

	if (make_tree(sfd, m, why) == -1)
		return TRY_LOCAL;
	memset(&r, 0, sizeof r);
	if ((r.meta_done = sr_try_calloc(m->nentries + 1, 1, why)) == NULL)
		return TRY_LOCAL;
	r.st = st;
	r.o = o;
	r.m = m;
	r.sfd = sfd;
	pthread_mutex_init(&r.mu, NULL);
	rc = fetch_chunks(&r, o->threads > 0 ? o->threads : sr_ncpus());
	pthread_mutex_destroy(&r.mu);
	free(r.tasks);
	free(r.units);
	if (rc != TRY_OK) {
		strlcpy(why, r.why, SR_ERRMAX);
		free(r.meta_done);
		return rc;
	}
	sr_fault("ckpt-restore");	/* the chunks are in the staging tree */
	if (make_links(sfd, m, why) == -1) {
		free(r.meta_done);
		return TRY_LOCAL;
	}
	/* Files and links in order, then directories deepest first: setting
	 * anything inside a directory changes its mtime. */
	rc = TRY_OK;
	for (i = 0; i < m->nentries && rc == TRY_OK; i++) {
		if (m->entries[i].type != SR_MT_DIR && !r.meta_done[i] &&
		    set_meta(&dir, sfd, &m->entries[i], why) == -1)
			rc = TRY_LOCAL;
	}
	free(r.meta_done);
	for (i = m->nentries; i > 0 && rc == TRY_OK; i--) {
		if (m->entries[i - 1].type == SR_MT_DIR &&
		    set_meta(&dir, sfd, &m->entries[i - 1], why) == -1)
			rc = TRY_LOCAL;
	}
	sr_path_dir_close(&dir);
	if (rc != TRY_OK)
		return rc;
	sr_ckpt_progress(o, &r.progress_at, r.total, r.total);
	say_stripped(o, m);
	return TRY_OK;
}

/* Remove the replaced tree; the restore stands even if that fails. */
static void
drop_old(const struct sr_ckpt_opts *o, const char *old)
{
	char err[SR_ERRMAX];

	if (sr_rmtree(old, err) == -1)
		sr_ckpt_say(o, "warning: removing the replaced tree: %s", err);
}

/* Put the finished staging directory where dir is. */
static int
swap_in(const struct sr_ckpt_opts *o, const char *staging, const char *dir, char *err)
{
	struct stat sb;
	char *old;

	if (lstat(dir, &sb) == -1) {
		if (errno != ENOENT)
			return sr_errno(err, "stat %s", dir);
		if (rename(staging, dir) == -1)
			return sr_errno(err, "rename %s to %s", staging, dir);
		return 0;
	}
	if (renameat2(AT_FDCWD, staging, AT_FDCWD, dir, RENAME_EXCHANGE) == 0) {
		drop_old(o, staging);	/* now the old tree */
		return 0;
	}
	if (errno != EINVAL && errno != ENOSYS)
		return sr_errno(err, "exchange %s with %s", staging, dir);
	if ((old = sr_try_asprintf(err, "%s.old.%ld", dir, (long)getpid())) == NULL)
		return sr_err_prefix(err, "move %s into place of %s", staging, dir);
	if (sr_rmtree(old, err) == -1) {
		free(old);
		return -1;
	}
	if (rename(dir, old) == -1 || rename(staging, dir) == -1) {
		sr_errno(err, "move %s into place of %s", staging, dir);
		free(old);
		return -1;
	}
	drop_old(o, old);
	free(old);
	return 0;
}

/*
 * Remove the staging directories (DIR.restore.PID, and DIR.old.PID of the
 * two-rename swap) that restores killed before their end left beside dir:
 * nothing else ever removes them. One is removed only when its process is
 * gone (kill(PID, 0) says no such process) and no process holds the flock
 * a restore keeps on its staging directory while it builds it (which also
 * covers a restore in another pid namespace); our own pid's is try_one's.
 * The runner calls the restore under the job's lock, so no other restore
 * of this directory runs. Best effort: a failure is a warning.
 */
static void
sweep_staging(const struct sr_ckpt_opts *o, const char *dir)
{
	char *parent = sr_try_strdup(dir, NULL), *slash, err[SR_ERRMAX];
	const char *base;
	size_t blen;
	struct dirent *de;
	DIR *d;

	if (parent == NULL) {
		/* best effort, like the rest of the sweep */
		sr_ckpt_say(o, "warning: not removing what killed restores of %s left: out of memory",
		    dir);
		return;
	}
	slash = strrchr(parent, '/');
	base = slash != NULL ? dir + (slash - parent) + 1 : dir;
	blen = strlen(base);
	if (slash == parent)
		parent[1] = '\0';
	else if (slash != NULL)
		*slash = '\0';
	if ((d = opendir(slash != NULL ? parent : ".")) == NULL) {
		free(parent);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		const char *p = de->d_name + blen, *digits;
		char *end, *path;
		long pid;
		int fd, gone;

		if (strncmp(de->d_name, base, blen) != 0)
			continue;
		if (strncmp(p, ".restore.", 9) == 0)
			digits = p + 9;
		else if (strncmp(p, ".old.", 5) == 0)
			digits = p + 5;
		else
			continue;
		if (*digits < '1' || *digits > '9')
			continue;
		errno = 0;
		pid = strtol(digits, &end, 10);
		if (*end != '\0' || errno != 0 || pid <= 0 || pid == (long)getpid() ||
		    pid > INT32_MAX || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd == -1)
			continue;
		gone = flock(fd, LOCK_EX | LOCK_NB) == 0;
		close(fd);
		if (!gone)
			continue;
		path = slash != NULL ? sr_try_asprintf(err, "%s/%s", slash == parent ? "" : parent,
		    de->d_name) : sr_try_strdup(de->d_name, err);
		if (path == NULL)
			sr_ckpt_say(o, "warning: removing %s, left by a restore that was killed: %s",
			    de->d_name, err);
		else if (sr_rmtree(path, err) == -1)
			sr_ckpt_say(o, "warning: removing %s, left by a restore that was killed: %s",
			    path, err);
		else
			sr_ckpt_say(o, "removed %s, left by a restore (pid %ld) that was killed", path,
			    pid);
		free(path);
	}
	closedir(d);
	free(parent);
}

/* Restore checkpoint seq into dir; why says what went wrong. */
static enum try_rc
try_one(struct sr_store *st, const struct sr_ckpt_opts *o, const char *dir, uint64_t seq,
    struct sr_manifest *m, char *why)
{
	char *staging, *slash, *parent, err[SR_ERRMAX];
	struct stat sb;
	enum try_rc rc;
	int sfd;

	/* Missing, refused, or unreadable (a store error too: the store
	 * retries what is transient): an older checkpoint may still do; not
	 * after out-of-memory, which an older one would not escape. */
	if (sr_catalog_load(st, o->job, seq, m, why) != 0)
		return sr_err_is_oom(why) ? TRY_LOCAL : TRY_BAD;
	if ((staging = sr_try_asprintf(why, "%s.restore.%ld", dir, (long)getpid())) == NULL)
		return TRY_LOCAL;
	if ((parent = sr_try_strdup(dir, why)) == NULL) {
		free(staging);
		return TRY_LOCAL;
	}
	if ((slash = strrchr(parent, '/')) != NULL && slash != parent) {
		*slash = '\0';
		if (sr_mkdirs(parent, 0755, why) == -1) {
			free(parent);
			free(staging);
			return TRY_LOCAL;
		}
	}
	free(parent);
	if (sr_rmtree(staging, why) == -1 || mkdir(staging, 0700) == -1) {
		if (why[0] == '\0')
			sr_errno(why, "create %s", staging);
		free(staging);
		return TRY_LOCAL;
	}
	sfd = open(staging, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd == -1) {
		sr_errno(why, "open %s", staging);
		rc = TRY_LOCAL;
	} else {
		/* held while the tree is built: sweep_staging leaves it alone */
		(void)flock(sfd, LOCK_EX | LOCK_NB);
		rc = build(st, o, m, sfd, why);
		/* The root keeps the mode the target had (the manifest does
		 * not record it); a new one gets the usual 0755. */
		if (rc == TRY_OK && fchmod(sfd, stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode) ?
		    sb.st_mode & 07777 : 0755) == -1) {
			sr_errno(why, "set the mode of %s", staging);
			rc = TRY_LOCAL;
		}
		close(sfd);
	}
	if (rc == TRY_OK && swap_in(o, staging, dir, why) == -1)
		rc = TRY_LOCAL;
	if (rc != TRY_OK && sr_rmtree(staging, err) == -1)
		sr_ckpt_say(o, "warning: %s", err);
	free(staging);
	return rc;
}

/* The candidates' walk calls these (restore.h). */
struct dir_restore {
	const char *dir;		/* without trailing slashes */
};

static void
dir_prepare(void *arg, const struct sr_ckpt_opts *o)
{
	struct dir_restore *d = arg;

	sweep_staging(o, d->dir);
}

static int
dir_try(void *arg, struct sr_store *st, const struct sr_ckpt_opts *o, uint64_t seq,
    struct sr_manifest *m, char *why)
{
	struct dir_restore *d = arg;

	return try_one(st, o, d->dir, seq, m, why);
}

int
sr_ckpt_restore(struct sr_store *st, const struct sr_ckpt_opts *opts, const char *dir,
    struct sr_ckpt_stats *stats, char *err)
{
	struct dir_restore d;
	char *t = sr_try_strdup(dir, err);
	size_t i;
	int rc;

	if (t == NULL)
		return sr_err_prefix(err, "restore %s", opts->job);
	for (i = strlen(t); i > 1 && t[i - 1] == '/'; i--)
		t[i - 1] = '\0';
	d.dir = t;
	rc = sr_restore_walk(st, opts, dir_prepare, dir_try, &d, stats, NULL, err);
	free(t);
	return rc;
}

int
sr_ckpt_restore_seq(struct sr_store *st, const struct sr_ckpt_opts *opts, const char *dir,
    uint64_t seq, struct sr_ckpt_stats *stats, char *err)
{
	struct sr_manifest m;
	char why[SR_ERRMAX], *t;
	double t0 = sr_mono();
	size_t i;
	int rc;

	if (sr_ckpt_job_check(opts->job, err) == -1)
		return -1;
	if ((t = sr_try_strdup(dir, err)) == NULL)
		return sr_err_prefix(err, "restore %s", opts->job);
	for (i = strlen(t); i > 1 && t[i - 1] == '/'; i--)
		t[i - 1] = '\0';
	sweep_staging(opts, t);
	why[0] = '\0';
	sr_manifest_init(&m);
	rc = try_one(st, opts, t, seq, &m, why);
	if (rc == TRY_OK && stats != NULL) {
		*stats = m.stats;
		stats->seq = seq;
		stats->new_bytes = 0;
		stats->seconds = sr_mono() - t0;
	}
	sr_manifest_free(&m);
	free(t);
	if (rc != TRY_OK)
		return sr_err(err, "restore %s: checkpoint %" PRIu64 ": %s", opts->job, seq, why);
	return 0;
}
