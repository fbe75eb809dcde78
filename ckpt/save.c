/*
 * save.c: sr_ckpt_save_src, a source's data (savesrc.h: a directory, or
 * buffers in memory) into a new checkpoint.
 *
 * The source records what is saved (metadata only); then its data items
 * (files, tensors' pieces) are cut into chunks that flow through a bounded
 * ring of slots. The calling thread plans: it takes each item and queues
 * its chunks (item, offset, length) in slot k % depth. Worker threads take
 * the queued chunks in order, read each with pread into their own buffer
 * (an item in memory is read where it is), hash it (XXH3-128: its id and
 * its check; SHA-256 too for version 1 ids) and, unless the
 * previous checkpoint already stores it, encode it into the slot with
 * their own codec. The calling thread drains the slots in order, appending
 * new chunks to the pack upload and references to the manifest. So the
 * copies out of the page cache, the hashing and the encoding run on every
 * worker at once, and the one serial thread only writes the pack. Memory is
 * bounded by SAVE_MEM whatever the size of the tree. Then the manifest is
 * written create-only, naming as its parent the checkpoint LATEST held, and
 * LATEST advanced by compare-and-swap at the run's epoch (fence.h); until
 * both are done, nothing a reader trusts has changed.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "byteplane.h"
#include "catalog.h"
#include "chunkhash.h"
#include "chunksize.h"
#include "ckpt.h"
#include "chain.h"
#include "codec.h"
#include "fault.h"
#include "fence.h"
#include "idtab.h"
#include "jobkeys.h"
#include "manifest.h"
#include "pack.h"
#include "gangparts.h"
#include "pathsafe.h"
#include "savesrc.h"
#include "util.h"

#define DEFAULT_CHUNK SR_CKPT_DEFAULT_CHUNK
#define MIN_CHUNK ((size_t)4 << 10)
#define DEFAULT_PACK ((uint64_t)1 << 30)
/*
 * Memory of the pipeline at most: each worker holds a raw chunk and its
 * codec's split of it; each slot holds an encoded chunk. With 16 MiB
 * chunks that is 2 workers and 6 slots: 2 being encoded, the rest to
 * absorb the pack writer's stalls (with 4 slots the workers waited a
 * quarter of the time; with 3, a 4 GiB save took 5-10% longer). t-ckpt
 * checks the RSS of such a save. This, not the number of CPUs, bounds
 * what a save holds. Chunks below SLOTS_BIG_CHUNK get one slot more than
 * the workers, no more: their writes are short, and each further slot is
 * memory the save touches for the first time (page faults: one a 4 KiB
 * page when measured, one a 2 MiB huge page since sr_try_bigbuf) and
 * keeps out of the cache. Measured quiet (doc/benchmarks.md, item 3): 3
 * slots of 1 MiB against 8 cut a 64 MiB save's CPU by 10%, a 256 MiB
 * one's by 7%, in the same time; at 4 MiB chunks (1 GiB) by 2%, but it
 * took 3% longer, so those keep the slots the memory allows.
 */
#define SAVE_MEM ((size_t)160 << 20)
#define SLOTS_PER_WORKER 4
#define SLOTS_BIG_CHUNK ((size_t)4 << 20)
/*
 * Small files share a chunk (a bundle; doc/format.md, "Slices"): a file
 * of at most chunk / BUNDLE_SMALL bytes joins the bundle being planned,
 * which goes to the workers when the next file would not fit in one chunk
 * or it holds as many files as the descriptors allow. One file a chunk
 * cost each file its own zstd frame, codec probe, pack member, hand-over
 * between threads and read request: 10,000 files of 32 KiB took 2.9
 * CPU-seconds a GiB against 0.7 for large files (doc/benchmarks.md). Each
 * file stays a chunk of its own in the manifest, with its own id, so an
 * unchanged file is found by the next save however its bundle changed.
 * A bundle's files come unopened (savesrc.h, open()): the worker that
 * reads one opens it, reads it whole and closes it, so that the planning
 * thread, the one serial stage, makes no system call for a small file:
 * for 10,000 files of 32 KiB its open, two fstats and close had been most
 * of the planner's time (doc/benchmarks.md). At most BUNDLE_PARTS_MAX
 * files a bundle.
 */
#define BUNDLE_SMALL 4
#define BUNDLE_PARTS_MAX 64

enum slot_state { SLOT_FREE = 0, SLOT_QUEUED, SLOT_DONE };

/* A file of a bundle: a slice of the slot's chunk, unless stored before. */
struct part {
	struct sr_save_item it;		/* a whole file, unopened but while its
					 * worker reads it; size as planned, then
					 * as found (savesrc.h, finished()) */
	size_t rlen;			/* bytes read (< it.size: it shrank) */
	uint64_t at;			/* where it starts in the bundle */
	uint8_t check[16];		/* XXH3-128: its id and check */
	const struct sr_mchunk *prev;	/* stored by the previous checkpoint */
};

/* A chunk in flight: what to read (set by the planner), then what the
 * worker made of it. */
struct slot {
	enum slot_state state;
	struct sr_save_item it;		/* its item; a file stays open until its
					 * last chunk drains */
	int last;			/* the item's last chunk: drain closes it */
	uint64_t off;			/* where the chunk starts in the item */
	size_t want;			/* bytes planned */
	uint8_t *enc;			/* enc_cap bytes of the ring's slot_mem */
	size_t rlen, clen;		/* bytes read (< want: the file shrank) */
	enum sr_transform xf;
	uint8_t id[32];
	uint8_t check[16];
	const struct sr_mchunk *prev;	/* stored by the previous checkpoint */
	struct part *parts;		/* a bundle's files (else nparts 0): its
					 * chunk is theirs, rlen bytes */
	size_t nparts;
	size_t bad;			/* the part that failed */
	int failed;			/* 1: see err; 2: read failed with errnum;
					 * 3: err is all there is to say */
	int errnum;
	char err[SR_ERRMAX];
};

struct saver {
	struct sr_store *st;
	const struct sr_ckpt_opts *o;
	const struct sr_save_src *src;
	const char *job;
	size_t chunk_size;
	uint64_t pack_size;
	int level;
	uint64_t seq;
	struct sr_manifest m;
	struct sr_manifest prev;
	struct sr_idtab *prev_ids;	/* read-only while workers run */
	struct sr_idtab *new_ids;	/* chunks this save stored */
	/* the ring */
	pthread_mutex_t mu;
	pthread_cond_t work_cv, done_cv;
	struct slot *slots;
	size_t depth, enc_cap;
	uint8_t *slot_mem;		/* every slot's enc, one huge-page buffer */
	pthread_t *tids;
	int nworkers;
	uint64_t submitted, taken, drained;
	int stop;
	int plan_fd;			/* the file being queued, until its last chunk is */
	struct sr_path_dir plan_dir;	/* where the planner opens files (open()) */
	/* bundles: files of at most bundle_max bytes (0: none), the one
	 * being planned in open (not yet submitted) */
	size_t bundle_max;
	struct part *parts_mem;
	struct slot *open;
	/* the item being drained: bytes saved so far, and whether a chunk
	 * came back short (the rest of the file is then dropped) */
	const struct sr_mentry *dr_entry;
	uint64_t dr_total;
	int dr_short;
	/* packs */
	struct sr_pack *pack;
	int members;			/* written by this save */
	char **own;			/* the packs this save committed */
	double *own_at;			/* when (sr_mono) */
	size_t nown, own_cap;
	/* Their flush (packs_durable): 0 not begun, 1 on the thread fl_tid,
	 * 2 done; its outcome, fl_rc and fl_err. */
	int fl_state;
	pthread_t fl_tid;
	int fl_rc;
	char fl_err[SR_ERRMAX];
	/* the commit */
	char manifest_etag[SR_ETAG_MAX];
	double manifest_at;		/* when it was written (sr_mono) */
	double half_grace;		/* gc's grace / 2: older things are checked */
	int gone;			/* something it wrote or reuses is gone: refused */
	time_t mtime;
	uint64_t raw_done, raw_total;
	size_t fill;			/* what a chunk holds at most, as planned */
	double progress_at;		/* sr_ckpt_progress's last call */
};

size_t
sr_ckpt_chunk_size(const struct sr_ckpt_opts *opts)
{
	return opts->chunk_size ? opts->chunk_size : DEFAULT_CHUNK;
}

/* ---- the previous checkpoint, for content addressing ---- */

/* Remember a chunk of the previous checkpoint by the id this save gives
 * it: its own when both use the same hash; the XXH3-128 check that a
 * SHA-256 manifest records next to its ids, when this save's ids are
 * XXH3-128 (so the first save after the change of format dedupes too). */
static int
put_previous(struct saver *s, const struct sr_mchunk *c, char *err)
{
	struct sr_mchunk x;

	if (s->prev.chunk_id == s->m.chunk_id)
		return sr_idtab_put(s->prev_ids, c, err);
	if (s->m.chunk_id == SR_ID_XXH3 && c->has_check) {
		x = *c;
		memset(x.id, 0, sizeof x.id);
		memcpy(x.id, c->check, sizeof c->check);
		return sr_idtab_put(s->prev_ids, &x, err);
	}
	return 0;
}

/* Index e's chunks of the previous checkpoint whose pack is still there
 * (ok[p] for its pack p): 0, or -1 with err on out-of-memory. */
static int
index_chunks(struct saver *s, const struct sr_mentry *e, const char *ok, char *err)
{
	size_t k, p, np = s->prev.npacks;

	for (k = 0; k < e->nchunks; k++) {
		for (p = 0; p < np && s->prev.packs[p] != e->chunks[k].pack; p++)
			;
		if (p < np && ok[p] && put_previous(s, &e->chunks[k], err) == -1)
			return -1;
	}
	return 0;
}

/* The previous checkpoint's chunks, for content addressing: one that
 * cannot be read is a warning (every chunk is stored again); out of
 * memory fails the save (-1 with err), as it would the next step. */
static int
load_previous(struct saver *s, const struct sr_catalog *c, char *err)
{
	uint64_t pseq;
	char why[SR_ERRMAX];
	size_t i, k, np, nids = 0;
	char *ok;
	int rc = 0;

	/* The chain's head only: gc keeps its packs while it is LATEST, and
	 * a lost race that moves it makes the commit check them again. */
	if (!sr_chain_head(c, &pseq))
		return 0;
	if (sr_catalog_load(s->st, s->job, pseq, &s->prev, why) != 0) {
		sr_manifest_free(&s->prev);
		if (sr_err_is_oom(why))
			return sr_err(err, "save %s: read checkpoint %" PRIu64 ": %s", s->job, pseq, why);
		sr_ckpt_say(s->o, "warning: checkpoint %" PRIu64 " cannot be read (%s): storing every"
		    " chunk again", pseq, why);
		return 0;
	}
	/* A chunk in a pack that has gone missing must be stored again. */
	np = s->prev.npacks;
	if ((ok = sr_try_calloc(np, 1, err)) == NULL)
		return sr_err_prefix(err, "save %s", s->job);
	for (i = 0; i < np; i++) {
		struct sr_object_info info;
		int hrc = sr_store_head(s->st, s->prev.packs[i], &info, why);
		ok[i] = hrc == 0;
		if (hrc != 0 && sr_err_is_oom(why)) {
			free(ok);
			return sr_err(err, "save %s: check pack %s: %s", s->job, s->prev.packs[i], why);
		}
		if (hrc != 0)
			sr_ckpt_say(s->o, "warning: pack %s of checkpoint %" PRIu64 " %s: its chunks"
			    " are stored again", s->prev.packs[i], pseq,
			    hrc == SR_STORE_NOTFOUND ? "is missing" : "cannot be checked");
	}
	for (i = 0; i < s->prev.nentries; i++)
		nids += s->prev.entries[i].nchunks;
	for (i = 0; i < s->prev.ntensors; i++) {
		for (k = 0; k < s->prev.tensors[i].npieces; k++)
			nids += s->prev.tensors[i].pieces[k].data.nchunks;
	}
	if ((s->prev_ids = sr_idtab_new(nids, err)) == NULL)
		rc = -1;
	for (i = 0; i < s->prev.nentries && rc == 0; i++)
		rc = index_chunks(s, &s->prev.entries[i], ok, err);
	for (i = 0; i < s->prev.ntensors && rc == 0; i++) {
		for (k = 0; k < s->prev.tensors[i].npieces && rc == 0; k++)
			rc = index_chunks(s, &s->prev.tensors[i].pieces[k].data, ok, err);
	}
	free(ok);
	if (rc != 0)
		return sr_err_prefix(err, "save %s: index checkpoint %" PRIu64, s->job, pseq);
	return 0;
}

/* The previous checkpoint's copy of the rlen bytes whose id is id, or
 * NULL. A slice serves any file, whole or one chunk of it, but never a
 * tensor (their chunks are whole: manifest.h). */
static const struct sr_mchunk *
stored_before(const struct saver *s, const uint8_t *id, size_t rlen)
{
	const struct sr_mchunk *c;

	if (s->prev_ids == NULL || (c = sr_idtab_get(s->prev_ids, id)) == NULL)
		return NULL;
	if (c->rlen != rlen || (c->mlen != 0 && s->m.ntensors > 0))
		return NULL;
	return c;
}

/* ---- the ring of chunks ---- */

/* Read up to len bytes at off (less only at the end of the file). */
static ssize_t
pread_full(int fd, uint8_t *buf, size_t len, uint64_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, buf + got, len - got, (off_t)(off + got));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* Read, hash and (unless stored already) encode the chunk of slot sl. */
static void
work_one(struct saver *s, struct sr_codec *codec, struct sr_chunkhash *h, uint8_t *raw,
    struct slot *sl)
{
	ssize_t n;

	const uint8_t *planes = NULL;
	char hex[65];

	sl->prev = NULL;
	sl->failed = 0;
	sl->rlen = sl->clen = 0;
	if (sl->it.ref != NULL) {
		/* the chunk the source says it is: stored in a pack that the
		 * previous checkpoint names and that is still there */
		memcpy(sl->id, sl->it.ref->id, sizeof sl->id);
		memcpy(sl->check, sl->it.ref->check, sizeof sl->check);
		sl->rlen = sl->want;
		if ((sl->prev = stored_before(s, sl->id, sl->rlen)) != NULL)
			return;
		sl->failed = 1;
		sr_id_hex(s->m.chunk_id, sl->id, hex);
		sr_err(sl->err, "chunk %s is not in the checkpoint this one is based on, or its pack "
		    "is gone", hex);
		return;
	}
	if (sl->it.fd == -1 && sl->it.planes != 0) {
		/* split on the GPU: the id is the raw bytes', joined back here */
		planes = sl->it.mem + sl->off;
		sr_byteplane_join(planes, sl->want, (unsigned)sl->it.planes, raw);
		n = (ssize_t)sl->want;
	} else if (sl->it.fd == -1) {
		raw = (uint8_t *)sl->it.mem + sl->off;	/* only read from here */
		n = (ssize_t)sl->want;
	} else if ((n = pread_full(sl->it.fd, raw, sl->want, sl->off)) == -1) {
		sl->errnum = errno;
		sl->failed = 2;
		return;
	}
	sl->rlen = (size_t)n;
	if (n == 0)
		return;		/* the file shrank: nothing here any more */
	/* the check too, even for a chunk stored already: the new manifest
	 * records it for every chunk, whatever the old one had; an XXH3-128
	 * id is the check, so only SHA-256 ids hash twice */
	if (sr_chunkhash_buf(h, s->m.chunk_id == SR_ID_SHA256 ? SR_CH_ID | SR_CH_CHECK :
	    SR_CH_CHECK, raw, sl->rlen, sl->id, sl->check, sl->err) == -1) {
		sl->failed = 1;
		return;
	}
	if (s->m.chunk_id == SR_ID_XXH3) {
		memset(sl->id, 0, sizeof sl->id);
		memcpy(sl->id, sl->check, sizeof sl->check);
	}
	if ((sl->prev = stored_before(s, sl->id, sl->rlen)) != NULL)
		return;		/* stored already: nothing to encode */
	if (sr_codec_encode(codec, planes != NULL ? planes : raw, sl->rlen, planes != NULL ?
	    sl->it.planes | SR_CODEC_SPLIT : -1, sl->enc, s->enc_cap, &sl->clen, &sl->xf,
	    sl->err) != 0)
		sl->failed = 1;
}

/* Open part p's file (unopened until now), read it whole into buf, which
 * has room bytes for it, and close it: its bytes, p->it.size set to what
 * was found there, or -1 with sl's failure set. One read a file: a
 * second iovec takes a byte past room, which tells a file that grew past
 * it (then cut at room, and its size looked up for the warning). */
static ssize_t
read_part(struct saver *s, struct sr_path_dir *d, struct slot *sl, struct part *p, uint8_t *buf,
    size_t room)
{
	struct iovec iov[2];
	struct stat sb;
	uint8_t past;
	ssize_t n, more;

	if (s->src->open(s->src->arg, d, &p->it, 0, sl->err) == -1) {
		sl->failed = 3;
		return -1;
	}
	iov[0].iov_base = buf;
	iov[0].iov_len = room;
	iov[1].iov_base = &past;
	iov[1].iov_len = 1;
	while ((n = preadv(p->it.fd, iov, 2, 0)) == -1 && errno == EINTR)
		;
	/* fewer bytes than planned: it shrank, or a short read; read on to
	 * the end to tell which */
	if (n >= 0 && (uint64_t)n < p->it.size) {
		if ((more = pread_full(p->it.fd, buf + n, room - (size_t)n, (uint64_t)n)) == -1)
			n = -1;
		else
			n += more;
	}
	if (n == -1) {
		sl->errnum = errno;
		sl->failed = 2;
	} else if ((size_t)n > room) {
		p->it.size = fstat(p->it.fd, &sb) == 0 ? (uint64_t)sb.st_size : (uint64_t)n;
		n = (ssize_t)room;
	} else
		p->it.size = (uint64_t)n;
	close(p->it.fd);
	p->it.fd = -1;
	return n;
}

/* Read and hash each file of a bundle, and encode those not stored before
 * one after another as one chunk (sl->rlen bytes, its member named by the
 * first one's id). A file that grew since the walk may take the room the
 * bundle has beyond what was planned for it (the chunk size less the
 * planned bytes of the files after it). */
static void
work_bundle(struct saver *s, struct sr_codec *codec, struct sr_chunkhash *h, uint8_t *raw,
    struct sr_path_dir *d, struct slot *sl)
{
	uint8_t id[32];
	size_t k, pos = 0, rest = sl->want;
	ssize_t n;

	sl->prev = NULL;
	sl->failed = 0;
	sl->rlen = sl->clen = 0;
	for (k = 0; k < sl->nparts; k++) {
		struct part *p = &sl->parts[k];

		p->prev = NULL;
		p->rlen = 0;
		sl->bad = k;
		/* pos + rest <= the chunk size: raw holds the planned bytes */
		rest -= (size_t)p->it.size;
		if ((n = read_part(s, d, sl, p, raw + pos, s->chunk_size - pos - rest)) == -1)
			return;
		if ((p->rlen = (size_t)n) == 0)
			continue;	/* it shrank to nothing */
		if (sr_chunkhash_buf(h, SR_CH_CHECK, raw + pos, p->rlen, NULL, p->check,
		    sl->err) == -1) {
			sl->failed = 1;
			return;
		}
		memset(id, 0, sizeof id);
		memcpy(id, p->check, sizeof p->check);
		if ((p->prev = stored_before(s, id, p->rlen)) != NULL)
			continue;
		if (pos == 0)
			memcpy(sl->id, id, sizeof sl->id);
		p->at = pos;
		pos += p->rlen;
	}
	sl->bad = 0;
	if ((sl->rlen = pos) > 0 && sr_codec_encode(codec, raw, pos, -1, sl->enc, s->enc_cap,
	    &sl->clen, &sl->xf, sl->err) != 0)
		sl->failed = 1;
}

static void *
worker_main(void *arg)
{
	struct saver *s = arg;
	char err[SR_ERRMAX];
	struct sr_codec *codec = sr_codec_new(s->level, err);
	struct sr_chunkhash *h = codec != NULL ? sr_chunkhash_new(err) : NULL;
	struct sr_path_dir d = SR_PATH_DIR_INIT;	/* where it opens files */
	uint8_t *raw = NULL;
	struct slot *sl;

	/* A worker without its state fails every chunk it takes with why
	 * (the save then stops at the first one drained). */
	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (!s->stop && s->taken == s->submitted)
			pthread_cond_wait(&s->work_cv, &s->mu);
		if (s->stop)
			break;
		sl = &s->slots[s->taken++ % s->depth];
		pthread_mutex_unlock(&s->mu);

		if (h != NULL && raw == NULL)
			raw = sr_try_bigbuf(s->chunk_size, s->fill, err);
		if (raw == NULL) {
			sl->failed = 1;
			strlcpy(sl->err, err, sizeof sl->err);
		} else if (sl->nparts > 0)
			work_bundle(s, codec, h, raw, &d, sl);
		else
			work_one(s, codec, h, raw, sl);

		pthread_mutex_lock(&s->mu);
		sl->state = SLOT_DONE;
		pthread_cond_broadcast(&s->done_cv);
	}
	pthread_mutex_unlock(&s->mu);
	sr_path_dir_close(&d);
	free(raw);
	sr_chunkhash_free(h);
	sr_codec_free(codec);
	return NULL;
}

static void ring_stop(struct saver *s);

/* Start the workers: 0, or -1 with err (none left running). */
static int
ring_start(struct saver *s, int threads, char *err)
{
	size_t per_worker = 2 * s->chunk_size, depth, stride, j;
	int i, e;

	s->enc_cap = sr_codec_bound(s->chunk_size);
	/* A state smaller than a chunk touches no more of a buffer than its
	 * size (more only if its files grow while read): its buffers get no
	 * huge pages (sr_try_bigbuf), whose first touch cost such a save more
	 * than all the rest of its ring */
	s->fill = s->raw_total < s->chunk_size ? (size_t)s->raw_total : s->chunk_size;
	/* Each worker needs its buffers and a slot, and the writer one more. */
	s->nworkers = threads > 1 ? threads : 1;
	while (s->nworkers > 1 && (size_t)s->nworkers * per_worker +
	    (size_t)(s->nworkers + 1) * s->enc_cap > SAVE_MEM)
		s->nworkers--;
	depth = 0;
	if (SAVE_MEM > (size_t)s->nworkers * per_worker)
		depth = (SAVE_MEM - (size_t)s->nworkers * per_worker) / s->enc_cap;
	if (depth > (size_t)s->nworkers * SLOTS_PER_WORKER)
		depth = (size_t)s->nworkers * SLOTS_PER_WORKER;
	if (s->chunk_size < SLOTS_BIG_CHUNK)
		depth = (size_t)s->nworkers + 1;
	if (depth < (size_t)s->nworkers + 1)
		depth = (size_t)s->nworkers + 1;
	s->depth = depth;
	/* Encoded chunks start page-aligned, as a store that writes them with
	 * direct I/O from the slot would need (the file store copies them
	 * into its staging buffer now: store-file.c); all slots in one buffer,
	 * so that huge pages are not rounded up slot by slot.
	 * Only what a chunk fills is touched: a save that reuses every chunk
	 * touches none of it. */
	stride = (s->enc_cap + 4095) & ~(size_t)4095;
	if (stride < s->enc_cap || s->depth > SIZE_MAX / stride)
		return sr_err(err, "save %s: %zu slots of %zu bytes overflow", s->job, s->depth,
		    stride);
	if ((s->tids = sr_try_calloc((size_t)s->nworkers, sizeof *s->tids, err)) == NULL ||
	    (s->slots = sr_try_calloc(s->depth, sizeof *s->slots, err)) == NULL ||
	    (s->slot_mem = sr_try_bigbuf(s->depth * stride, s->depth * sr_codec_bound(s->fill),
	    err)) == NULL ||
	    (s->bundle_max > 0 && (s->parts_mem = sr_try_calloc(s->depth * BUNDLE_PARTS_MAX,
	    sizeof *s->parts_mem, err)) == NULL)) {
		free(s->tids);
		free(s->slots);
		free(s->slot_mem);
		s->tids = NULL;
		s->slots = NULL;
		s->slot_mem = NULL;
		return sr_err_prefix(err, "save %s", s->job);
	}
	for (j = 0; j < s->depth; j++)
		s->slots[j].enc = s->slot_mem + j * stride;
	for (j = 0; j < s->depth && s->bundle_max > 0; j++)
		s->slots[j].parts = s->parts_mem + j * BUNDLE_PARTS_MAX;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->work_cv, NULL);
	pthread_cond_init(&s->done_cv, NULL);
	for (i = 0; i < s->nworkers; i++) {
		if ((e = pthread_create(&s->tids[i], NULL, worker_main, s)) != 0) {
			s->nworkers = i;	/* ring_stop joins those started */
			ring_stop(s);
			return sr_err(err, "save %s: start a worker thread: %s", s->job, strerror(e));
		}
	}
	return 0;
}

static void
ring_stop(struct saver *s)
{
	size_t i;
	int t;

	if (s->slots == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop = 1;
	pthread_cond_broadcast(&s->work_cv);
	pthread_mutex_unlock(&s->mu);
	for (t = 0; t < s->nworkers; t++)
		pthread_join(s->tids[t], NULL);
	/* a save stopped early: the file being queued, and below those of
	 * undrained chunks (closed only now that no worker reads them; a
	 * bundle's files are open only while a worker reads them) */
	if (s->plan_fd >= 0)
		close(s->plan_fd);
	s->plan_fd = -1;
	for (i = 0; i < s->depth; i++) {
		struct slot *sl = &s->slots[i];

		if (sl->state != SLOT_FREE && sl->last && sl->it.fd >= 0)
			close(sl->it.fd);
	}
	s->open = NULL;
	free(s->parts_mem);
	s->parts_mem = NULL;
	free(s->slot_mem);
	free(s->slots);
	free(s->tids);
	s->slot_mem = NULL;
	s->slots = NULL;
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->work_cv);
	pthread_cond_destroy(&s->done_cv);
}

static void
submit(struct saver *s, struct slot *sl)
{
	pthread_mutex_lock(&s->mu);
	sl->state = SLOT_QUEUED;
	s->submitted++;
	pthread_cond_signal(&s->work_cv);
	pthread_mutex_unlock(&s->mu);
}

/* Commit the current pack and remember it (own packs are checked before
 * the commit when the save outlived half of gc's grace). */
static int
pack_done(struct saver *s, char *err)
{
	char *key;
	int rc;

	/* room first: the pack committed must be remembered */
	if (s->nown == s->own_cap) {
		size_t cap = s->own_cap ? s->own_cap * 2 : 8;

		if (sr_ckpt_resize(&s->own, cap, sizeof *s->own, err) == -1 ||
		    sr_ckpt_resize(&s->own_at, cap, sizeof *s->own_at, err) == -1)
			return sr_err_prefix(err, "save %s", s->job);
		s->own_cap = cap;
	}
	if ((key = sr_try_strdup(sr_pack_key(s->pack), err)) == NULL)
		return sr_err_prefix(err, "save %s", s->job);
	rc = sr_pack_commit(s->pack, err);
	s->pack = NULL;
	if (rc != 0) {
		free(key);
		return -1;
	}
	s->own[s->nown] = key;
	s->own_at[s->nown++] = sr_mono();
	return 0;
}

/*
 * Packs are committed visible but not yet durable (sr_pack_defer_flush),
 * and flushed together before the manifest names them: no committed
 * checkpoint refers to a pack until then, and a pack a crash left
 * unflushed is gc's like any other a failed save left. One flush at the
 * end instead of one a pack: a mid-save fsync of a 1 GiB pack held a
 * 4 GiB save 0.4-0.64 s each, three times, and on this machine's virtual
 * disk every write waits behind a flush (doc/benchmarks.md). The flush
 * begins on a thread of its own as the pipeline ends, so that the
 * manifest's checks and JSON are made meanwhile.
 */
static void *
flush_main(void *arg)
{
	struct saver *s = arg;

	s->fl_rc = sr_store_flush(s->st, (const char *const *)s->own, s->nown, s->fl_err);
	return NULL;
}

/* Begin the packs' flush (nothing to do without packs; where no thread
 * can be had, packs_durable flushes). */
static void
packs_flush_begin(struct saver *s)
{
	if (s->fl_state == 0 && s->nown > 0 &&
	    pthread_create(&s->fl_tid, NULL, flush_main, s) == 0)
		s->fl_state = 1;
}

/* Every pack of this save durable: 0, or -1 with err. */
static int
packs_durable(struct saver *s, char *err)
{
	if (s->fl_state == 0)
		(void)flush_main(s);
	else if (s->fl_state == 1)
		pthread_join(s->fl_tid, NULL);
	s->fl_state = 2;
	if (s->fl_rc == 0)
		return 0;
	sr_err(err, "%s", s->fl_err);
	return sr_err_prefix(err, "save %s", s->job);
}

/* Append a new chunk to the current pack, starting one if needed. */
static int
store_chunk(struct saver *s, struct slot *sl, struct sr_mchunk *c, char *err)
{
	char name[80], hex[65], rnd[17];
	uint8_t r[8];
	ssize_t got;

	if (s->pack == NULL) {
		char *key;
		/* getrandom(2), not OpenSSL's RAND_bytes: the kernel's bytes need
		 * no allocation, so no out-of-memory reads as a failure of
		 * randomness */
		while ((got = getrandom(r, sizeof r, 0)) == -1 && errno == EINTR)
			;
		if (got != (ssize_t)sizeof r)
			return sr_errno(err, "create pack name: getrandom");
		sr_hex_of(r, sizeof r, rnd);
		key = sr_jobkey_pack(s->job, s->seq, rnd, err);
		if (key == NULL)
			return sr_err_prefix(err, "save %s: start a pack", s->job);
		s->pack = sr_pack_begin(s->st, key, s->mtime, err);
		free(key);
		if (s->pack == NULL)
			return -1;
		sr_pack_defer_flush(s->pack);
		/* a network store must not carry a notice's save past its deadline */
		sr_pack_limit(s->pack, sr_ckpt_deadline(s->o), s->o->cancel);
	}
	sr_id_hex(s->m.chunk_id, sl->id, hex);
	snprintf(name, sizeof name, "%s.zst", hex);
	if (sr_pack_add(s->pack, name, sl->enc, sl->clen, &c->offset, err) == -1)
		return -1;
	if (s->members++ == 0)
		sr_fault("ckpt-pack");
	if ((c->pack = sr_manifest_intern(&s->m, sr_pack_key(s->pack), err)) == NULL)
		return sr_err_prefix(err, "save %s", s->job);
	c->clen = sl->clen;
	c->xf = sl->xf;
	s->m.stats.new_bytes += sl->clen;
	if (sr_pack_size(s->pack) >= s->pack_size)
		return pack_done(s, err);
	return 0;
}

/* Make c reference have, a copy already stored (by the previous
 * checkpoint, or earlier in this save): 0, or -1 with err (out of memory
 * interning its pack key). */
static int
refer(struct saver *s, struct sr_mchunk *c, const struct sr_mchunk *have, char *err)
{
	if ((c->pack = sr_manifest_intern(&s->m, have->pack, err)) == NULL)
		return -1;
	c->offset = have->offset;
	c->clen = have->clen;
	c->xf = have->xf;
	c->at = have->at;
	c->mlen = have->mlen;
	s->m.stats.reused_chunks++;
	return 0;
}

/* Record a drained bundle: each file's chunk, a slice of the bundle's
 * (stored with the first that needs it) or the previous checkpoint's. */
static int
drain_bundle(struct saver *s, struct slot *sl, char *err)
{
	struct sr_mchunk member, *c;
	size_t k;
	char q[256];

	memset(&member, 0, sizeof member);
	if (sl->failed) {
		sr_path_quote(sl->parts[sl->bad].it.e->path, q, sizeof q);
		if (sl->failed == 3)
			return sr_err(err, "%s", sl->err);
		if (sl->failed == 2) {
			errno = sl->errnum;
			return sr_errno(err, "read %s", q);
		}
		return sr_err(err, "save %s: %s", q, sl->err);
	}
	for (k = 0; k < sl->nparts; k++) {
		struct part *p = &sl->parts[k];
		struct sr_mentry *e = p->it.e;

		if (p->rlen > 0) {
			if ((c = sr_mentry_add_chunk(e, err)) == NULL)
				return sr_err_prefix(err, "save %s", sr_path_quote(e->path, q,
				    sizeof q));
			memcpy(c->id, p->check, sizeof p->check);
			memcpy(c->check, p->check, sizeof c->check);
			c->has_check = 1;
			c->rlen = p->rlen;
			if (p->prev != NULL) {
				if (refer(s, c, p->prev, err) == -1)
					return sr_err_prefix(err, "save %s", sr_path_quote(e->path,
					    q, sizeof q));
			} else {
				if (member.pack == NULL && store_chunk(s, sl, &member, err) == -1)
					return -1;
				c->pack = member.pack;
				c->offset = member.offset;
				c->clen = member.clen;
				c->xf = member.xf;
				/* the bundle's only new file is a chunk of its own */
				if (p->rlen != sl->rlen) {
					c->at = p->at;
					c->mlen = sl->rlen;
				}
				if (sr_idtab_put(s->new_ids, c, err) == -1)
					return -1;
			}
			sr_manifest_note_chunk(&s->m, c);
			s->m.stats.chunks++;
			s->m.stats.stored_bytes += sr_mchunk_stored(c);
		}
		s->raw_done += p->rlen;
		if (s->src->finished != NULL)
			s->src->finished(s->src->arg, s->o, &p->it, p->rlen);
	}
	if (s->raw_done < s->raw_total)
		sr_ckpt_progress(s->o, &s->progress_at, s->raw_done, s->raw_total);
	sl->nparts = 0;
	sl->state = SLOT_FREE;
	s->drained++;
	return 0;
}

/* Wait for the oldest slot in flight and record its chunk. */
static int
drain_one(struct saver *s, char *err)
{
	struct slot *sl = &s->slots[s->drained % s->depth];
	struct sr_mentry *e;
	struct sr_mchunk *c;
	const struct sr_mchunk *have;
	char q[256];

	pthread_mutex_lock(&s->mu);
	while (sl->state != SLOT_DONE)
		pthread_cond_wait(&s->done_cv, &s->mu);
	pthread_mutex_unlock(&s->mu);
	if (sl->nparts > 0)
		return drain_bundle(s, sl, err);
	e = sl->it.e;
	if (sl->failed == 2) {
		errno = sl->errnum;
		return sr_errno(err, "read %s", sr_path_quote(e->path, q, sizeof q));
	}
	if (sl->failed)
		return sr_err(err, "save %s: %s", sr_path_quote(e->path, q, sizeof q), sl->err);
	if (e != s->dr_entry || s->drained == 0) {
		s->dr_entry = e;
		s->dr_total = 0;
		s->dr_short = 0;
	}
	/* After a short chunk the file ends: what follows is not its data. */
	if (!s->dr_short && sl->rlen > 0) {
		if ((c = sr_mentry_add_chunk(e, err)) == NULL)
			return sr_err_prefix(err, "save %s", sr_path_quote(e->path, q, sizeof q));
		memcpy(c->id, sl->id, sizeof c->id);
		memcpy(c->check, sl->check, sizeof c->check);
		c->has_check = 1;
		c->rlen = sl->rlen;
		if (sl->it.csum != NULL) {
			memcpy(c->csum, sl->it.csum, sizeof c->csum);
			c->has_csum = 1;
		}
		have = sl->prev != NULL ? sl->prev : sr_idtab_get(s->new_ids, sl->id);
		if (have != NULL) {
			if (refer(s, c, have, err) == -1)
				return sr_err_prefix(err, "save %s", sr_path_quote(e->path, q,
				    sizeof q));
		} else {
			if (store_chunk(s, sl, c, err) == -1 || sr_idtab_put(s->new_ids, c, err) == -1)
				return -1;
		}
		sr_manifest_note_chunk(&s->m, c);
		s->m.stats.chunks++;
		s->m.stats.stored_bytes += sr_mchunk_stored(c);
		s->dr_total += sl->rlen;
	}
	if (sl->rlen < sl->want)
		s->dr_short = 1;
	s->raw_done += sl->rlen;
	if (s->raw_done < s->raw_total)	/* the end is reported after the commit */
		sr_ckpt_progress(s->o, &s->progress_at, s->raw_done, s->raw_total);
	if (sl->last) {
		if (s->src->finished != NULL)
			s->src->finished(s->src->arg, s->o, &sl->it, s->dr_total);
		if (sl->it.fd >= 0)
			close(sl->it.fd);
	}
	sl->state = SLOT_FREE;
	s->drained++;
	return 0;
}

/* SR_CKPT_LATE or SR_CKPT_CANCELLED with err set, else 0. */
static int
check_stop(struct saver *s, char *err)
{
	char done[32], total[32];
	double deadline = sr_ckpt_deadline(s->o);

	if (sr_flag_get(s->o->cancel)) {
		sr_err(err, "checkpoint of %s cancelled; nothing committed", s->job);
		return SR_CKPT_CANCELLED;
	}
	if (deadline > 0 && sr_now() >= deadline) {
		sr_err(err, "checkpoint of %s missed its deadline after %s of %s; nothing committed",
		    s->job, sr_fmt_bytes(s->raw_done, done, sizeof done),
		    sr_fmt_bytes(s->raw_total, total, sizeof total));
		return SR_CKPT_LATE;
	}
	return 0;
}

/* Hand the bundle being planned, if any, to the workers. */
static void
bundle_submit(struct saver *s)
{
	if (s->open != NULL)
		submit(s, s->open);
	s->open = NULL;
}

/* Plan item it (a whole small file, unopened) into the open bundle,
 * opening one first where needed: 0, or SR_CKPT_LATE, SR_CKPT_CANCELLED
 * or -1 with err. */
static int
bundle_add(struct saver *s, const struct sr_save_item *it, char *err)
{
	struct slot *sl = s->open;
	int rc;

	if (sl != NULL && (sl->nparts == BUNDLE_PARTS_MAX || sl->want + it->size > s->chunk_size)) {
		bundle_submit(s);
		sl = NULL;
	}
	if (sl == NULL) {
		if ((rc = check_stop(s, err)) != 0 ||
		    (s->submitted - s->drained == s->depth && (rc = drain_one(s, err)) != 0))
			return rc;
		sl = s->open = &s->slots[s->submitted % s->depth];
		memset(&sl->it, 0, sizeof sl->it);
		sl->it.fd = -1;
		sl->last = 0;
		sl->off = 0;
		sl->want = 0;
		sl->nparts = 0;
	}
	sl->parts[sl->nparts++].it = *it;
	sl->want += (size_t)it->size;
	return 0;
}

/* Queue every chunk of every item through the ring, draining as it fills. */
static int
chunk_items(struct saver *s, char *err)
{
	struct sr_save_item it;
	size_t cursor = 0;
	int rc;

	/* the fields a source does not set are 0 */
	while ((rc = s->src->next(s->src->arg, &s->m, s->o, &cursor,
	    memset(&it, 0, sizeof it), err)) > 0) {
		uint64_t off = 0;

		if (rc != 1 || it.size > s->bundle_max)
			bundle_submit(s);
		if (rc == SR_SRC_DRAIN_ONE) {
			if (s->drained == s->submitted)
				return sr_err(err, "save %s: its source waits for memory that no chunk "
				    "in flight holds (a bug)", s->job);
			if ((rc = drain_one(s, err)) != 0)
				return rc;
			continue;
		}
		if (rc == SR_SRC_DRAIN) {
			while (s->drained < s->submitted) {
				if ((rc = drain_one(s, err)) != 0)
					return rc;
			}
			continue;
		}

		if (it.fd == SR_SAVE_UNOPENED && it.size <= s->bundle_max) {
			if ((rc = bundle_add(s, &it, err)) != 0)
				return rc;
			continue;
		}
		if (it.fd == SR_SAVE_UNOPENED) {
			if (s->src->open(s->src->arg, &s->plan_dir, &it, 1, err) == -1)
				return -1;
			if (it.size == 0) {	/* emptied since it was described */
				if (s->src->finished != NULL)
					s->src->finished(s->src->arg, s->o, &it, 0);
				close(it.fd);
				continue;
			}
		}
		/* Workers may be reading fd until its last chunk is drained:
		 * only ring_stop closes it if the save stops before. */
		s->plan_fd = it.fd;
		while (off < it.size) {
			struct slot *sl;
			if ((rc = check_stop(s, err)) != 0 ||
			    (s->submitted - s->drained == s->depth && (rc = drain_one(s, err)) != 0))
				return rc;
			sl = &s->slots[s->submitted % s->depth];
			sl->it = it;
			sl->off = off;
			sl->want = it.size - off < s->chunk_size ? (size_t)(it.size - off) :
			    s->chunk_size;
			off += sl->want;
			sl->last = off == it.size;
			sl->nparts = 0;
			if (sl->last)
				s->plan_fd = -1;	/* the slot owns fd now */
			submit(s, sl);
		}
	}
	if (rc == -1)
		return -1;
	bundle_submit(s);
	while (s->drained < s->submitted) {
		if ((rc = drain_one(s, err)) != 0)
			return rc;
	}
	if (s->pack != NULL)
		return pack_done(s, err);
	return 0;
}

/* ---- commit ---- */

/* Whether key is still there (a HEAD): 0, or -1 with err saying it went. */
static int
still_there(struct saver *s, const char *key, const char *what, double age, char *err)
{
	struct sr_object_info info;
	char why[SR_ERRMAX];
	int rc = sr_store_head(s->st, key, &info, why);

	if (rc == 0)
		return 0;
	if (rc == SR_STORE_NOTFOUND) {
		s->gone = 1;
		return sr_err(err, "%s %s is gone after %.0f s (a gc elsewhere took it for "
		    "garbage: this save outlived half of gc's grace period of %.0f s); nothing "
		    "committed", what, key, age, 2 * s->half_grace);
	}
	return sr_err(err, "check %s %s: %s", what, key, why);
}

/* A gc elsewhere keeps what it has not seen committed only while it is
 * younger than its grace period: what this save wrote longer ago than
 * half of that is checked before it is committed (nothing is, for a save
 * and a commit as quick as they should be). */
static int
check_own(struct saver *s, int manifest_too, char *err)
{
	double now = sr_mono();
	size_t i;

	if (s->half_grace <= 0)
		return 0;
	for (i = 0; i < s->nown; i++) {
		if (now - s->own_at[i] > s->half_grace &&
		    still_there(s, s->own[i], "pack", now - s->own_at[i], err) == -1)
			return -1;
	}
	if (manifest_too && now - s->manifest_at > s->half_grace) {
		char *key = sr_jobkey_manifest(s->job, s->seq, err);
		int rc;

		if (key == NULL)
			return -1;
		rc = still_there(s, key, "manifest", now - s->manifest_at, err);

		free(key);
		return rc;
	}
	return 0;
}

/* Whether pack is one of this save's own. */
static int
is_own(const struct saver *s, const char *pack)
{
	size_t i;

	for (i = 0; i < s->nown; i++) {
		if (strcmp(s->own[i], pack) == 0)
			return 1;
	}
	return 0;
}

/*
 * sr_latest_advance lost a race to a commit below this one: the manifest
 * must name what LATEST holds now as its parent (so that the chain keeps
 * every commit), and the packs it reuses from the checkpoint it was based
 * on must still be there: another writer's retention may have dropped
 * that checkpoint meanwhile. The manifest is this save's alone (its key
 * was created by this save), so rewriting it races with nobody.
 */
static int
rebase(void *arg, const struct sr_latest *now, char *err)
{
	struct saver *s = arg;
	enum sr_mlink link = s->m.link;
	uint64_t parent = s->m.parent;
	char *key, *text;
	size_t i, len;
	int rc;

	if (now->state == SR_LATEST_OK) {
		link = SR_LINK_PARENT;
		parent = now->seq;
	} else if (now->state == SR_LATEST_NONE)
		link = SR_LINK_NONE;
	if (check_own(s, 1, err) == -1)
		return -1;
	if (link == s->m.link && parent == s->m.parent)
		return 0;
	for (i = 0; i < s->m.npacks; i++) {
		if (is_own(s, s->m.packs[i]) || still_there(s, s->m.packs[i], "pack", 0, err) == 0)
			continue;
		if (s->gone)
			sr_err(err, "pack %s, which checkpoint %" PRIu64 " reuses, was deleted while it "
			    "was saved (by the retention of another writer); nothing committed",
			    s->m.packs[i], s->seq);
		return -1;
	}
	s->m.link = link;
	s->m.parent = parent;
	text = sr_manifest_dump(&s->m, &len, err);
	key = text != NULL ? sr_jobkey_manifest(s->job, s->seq, err) : NULL;
	rc = key == NULL ? -1 : sr_store_put(s->st, key, text, len, SR_PUT_MATCH,
	    s->manifest_etag, s->manifest_etag, err);
	free(text);
	free(key);
	if (rc != 0)
		return sr_err_prefix(err, "rebase checkpoint %" PRIu64 " on %" PRIu64, s->seq, parent);
	return 0;
}

/* Take the manifest back: nothing was committed. */
static void
drop_manifest(struct saver *s)
{
	char derr[SR_ERRMAX], *key = sr_jobkey_manifest(s->job, s->seq, derr);

	/* no key: the manifest stays, off the chain, for gc to take */
	if (key == NULL || sr_store_delete(s->st, key, derr) != 0)
		sr_ckpt_say(s->o, "warning: take back manifest %" PRIu64 ": %s", s->seq, derr);
	free(key);
}

/* Whether readers of l take the listing's newest manifest as the latest
 * (chain.h): no LATEST, or garbage in it. */
static int
by_listing(const struct sr_latest *l)
{
	return l->state == SR_LATEST_ABSENT || l->state == SR_LATEST_GARBAGE;
}

/*
 * The move of LATEST ran out of memory, before or after its request: what
 * readers see now decides what the save says. LATEST on our seq:
 * committed after all (0). LATEST elsewhere: the manifest is taken back
 * and nothing is committed (-1). But where readers go by the listing (no
 * LATEST yet: a job's first save), the manifest written is what they
 * restore: taken back, nothing is committed (-1); if it cannot be taken
 * back, or LATEST cannot be read and was absent when the save began, it
 * is committed (0). LATEST unreadable otherwise: the manifest stays, as
 * LATEST may name it (-1).
 */
static int
settle_oom(struct saver *s, const struct sr_catalog *cat, const char *key, char *err)
{
	struct sr_latest now;
	char why[SR_ERRMAX];

	if (sr_latest_read(s->st, s->job, &now, why) != 0)
		return by_listing(&cat->latest) ? 0 : -1;
	if (now.state == SR_LATEST_OK && now.seq == s->seq)
		return 0;
	if (sr_store_delete(s->st, key, why) != 0) {
		sr_ckpt_say(s->o, "warning: take back manifest %s: %s", key, why);
		if (by_listing(&now))
			return 0;
	}
	return sr_err_prefix(err, "nothing committed");
}

/* Write the manifest (create-only), then move LATEST to it. */
static int
commit(struct saver *s, const struct sr_catalog *cat, char *err)
{
	struct sr_latest now;
	char *key, *text, why[SR_ERRMAX];
	size_t len;
	int rc;

	s->m.stats.created = sr_now();
	/* before anything is written: out of memory commits nothing */
	if ((text = sr_manifest_dump(&s->m, &len, err)) == NULL ||
	    (key = sr_jobkey_manifest(s->job, s->seq, err)) == NULL) {
		free(text);
		return sr_err_prefix(err, "save %s: nothing committed", s->job);
	}
	if ((rc = check_stop(s, err)) != 0)
		goto out;
	if ((rc = check_own(s, 0, err)) != 0) {
		sr_err_prefix(err, "save %s", s->job);
		goto out;
	}
	if ((rc = packs_durable(s, err)) != 0)
		goto out;
	sr_fault("ckpt-manifest");
	rc = sr_store_put(s->st, key, text, len, SR_PUT_CREATE, NULL, s->manifest_etag, err);
	s->manifest_at = sr_mono();
	if (rc == SR_STORE_EXISTS) {
		/* Another writer has this seq: a newer run, or a peer. */
		if (sr_latest_read(s->st, s->job, &now, why) == 0 &&
		    sr_latest_epoch(&now) > s->o->epoch) {
			rc = sr_latest_fenced(err, "nothing committed", s->job, now.epoch);
			sr_err_prefix(err, "save %s", s->job);
		} else
			rc = sr_err(err, "checkpoint seq %" PRIu64 " was committed by another writer",
			    s->seq);
		goto out;
	}
	if (rc != 0) {
		rc = sr_err_prefix(err, "commit checkpoint %" PRIu64, s->seq);
		goto out;
	}
	sr_fault("ckpt-pointer");
	if ((rc = check_stop(s, err)) != 0) {
		/* Not committed until LATEST moves: take the manifest back. */
		drop_manifest(s);
		goto out;
	}
	if ((rc = check_own(s, 1, err)) == 0)
		rc = sr_latest_advance(s->st, s->job, s->seq, s->o->epoch, &cat->latest, rebase, s,
		    err);
	if (rc == -1 && sr_err_is_oom(err))
		rc = settle_oom(s, cat, key, err);
	/* Refused for sure (not a store error, after which the swap may have
	 * landed): off the chain for ever, so taken back. */
	if (rc == SR_CKPT_FENCED || rc == SR_CATALOG_OVERTAKEN || s->gone)
		drop_manifest(s);
	if (rc == SR_CATALOG_OVERTAKEN)
		rc = -1;
	if (rc != 0)
		sr_err_prefix(err, "save %s", s->job);
	else if (!s->o->commit_record_later && sr_commit_put(s->st, s->job, s->seq, s->m.link,
	    s->m.parent, s->o->epoch, why) == -1)
		/* Committed all the same: only a restore past this manifest,
		 * should it be damaged, needs the record. */
		sr_ckpt_say(s->o, "warning: save %s: checkpoint %" PRIu64 " is committed, but %s: "
		    "should its manifest be damaged, a restore cannot fall back past it", s->job,
		    s->seq, why);
out:
	free(text);
	free(key);
	return rc;
}

/* ---- sr_ckpt_save ---- */

static void
saver_free(struct saver *s)
{
	ring_stop(s);
	if (s->fl_state == 1)
		pthread_join(s->fl_tid, NULL);	/* a failed save: its outcome is moot */
	sr_path_dir_close(&s->plan_dir);
	sr_pack_abort(s->pack);
	s->pack = NULL;
	sr_manifest_free(&s->m);
	sr_manifest_free(&s->prev);
	sr_idtab_free(s->prev_ids);
	sr_idtab_free(s->new_ids);
	while (s->nown > 0)
		free(s->own[--s->nown]);
	free(s->own);
	free(s->own_at);
}

/* At most how many chunks the save of m cuts at chunk bytes each, files
 * of up to bundle_max bytes sharing them: a worker more than that only
 * starts and stops (a notice's save of a few bytes paid a second thread). */
static uint64_t
chunks_at_most(const struct sr_manifest *m, size_t chunk, size_t bundle_max)
{
	uint64_t n = 0, small = 0, nsmall = 0;
	size_t i, k;

	for (i = 0; i < m->nentries; i++) {
		const struct sr_mentry *e = &m->entries[i];

		if (e->type != SR_MT_FILE)
			continue;
		if (bundle_max > 0 && e->size <= bundle_max) {
			small += e->size;
			nsmall++;
		} else
			n += e->size / chunk + 1;
	}
	/* bundles: as many as their bytes fill, or their files' count
	 * allows; an estimate (sizes change, bundles end at a large file) */
	if (nsmall > 0)
		n += small / (chunk - bundle_max) + nsmall / BUNDLE_PARTS_MAX + 1;
	for (i = 0; i < m->ntensors; i++)
		for (k = 0; k < m->tensors[i].npieces; k++)
			n += m->tensors[i].pieces[k].data.size / chunk + 1;
	return n;
}

/* Bytes of the files and pieces that m records. */
static uint64_t
raw_of(const struct sr_manifest *m)
{
	uint64_t n = 0;
	size_t i, k;

	for (i = 0; i < m->nentries; i++)
		n += m->entries[i].type == SR_MT_FILE ? m->entries[i].size : 0;
	for (i = 0; i < m->ntensors; i++) {
		for (k = 0; k < m->tensors[i].npieces; k++)
			n += m->tensors[i].pieces[k].data.size;
	}
	return n;
}

/* Whether a save of src with opts chooses its chunk size: none set, a
 * source that takes any, and no gang (its nodes choose apart, so they
 * keep the default; a library job's ranks are a gang too). */
static int
auto_chunk(const struct sr_ckpt_opts *opts, const struct sr_save_src *src)
{
	return opts->chunk_size == 0 && src->any_chunk && opts->part == NULL &&
	    opts->nmerge == 0;
}

/* The chunk size from the state's size and the previous checkpoint
 * (chunksize.h), said through opts->log when the previous had another. */
static void
choose_chunk(struct saver *s)
{
	const char *why;
	size_t was = sr_chunk_used(&s->prev, NULL);

	s->chunk_size = sr_chunk_choose(s->raw_total, &s->prev, &why);
	if (was != 0 && was != s->chunk_size)
		sr_ckpt_say(s->o, "chunk size %zu KiB, %s, not the previous checkpoint's %zu KiB:"
		    " its chunks are stored again", s->chunk_size >> 10, why, was >> 10);
}

/* One try of sr_ckpt_save_src. */
static int
save_once(struct sr_store *st, const struct sr_ckpt_opts *opts, const struct sr_save_src *src,
    long long step, struct sr_ckpt_stats *stats, char *err)
{
	struct saver s;
	struct sr_catalog cat;
	double t0 = sr_mono();
	int rc, threads;
	uint64_t nchunks;

	memset(&s, 0, sizeof s);
	s.plan_fd = -1;
	s.plan_dir.fd = -1;
	sr_manifest_init(&s.m);
	sr_manifest_init(&s.prev);
	memset(&cat, 0, sizeof cat);
	if (sr_ckpt_job_check(opts->job, err) == -1)
		return -1;
	s.st = st;
	s.o = opts;
	s.src = src;
	s.job = opts->job;
	s.chunk_size = sr_ckpt_chunk_size(opts);
	s.pack_size = opts->pack_size ? opts->pack_size : DEFAULT_PACK;
	s.level = opts->level ? opts->level : 1;
	threads = opts->threads > 0 ? opts->threads : sr_ncpus();
	if (s.chunk_size < MIN_CHUNK || s.chunk_size > SR_CODEC_MAX_CHUNK)
		return sr_err(err, "save %s: chunk size %zu is outside [%zu, %zu]", s.job,
		    s.chunk_size, MIN_CHUNK, SR_CODEC_MAX_CHUNK);
	s.mtime = time(NULL);
	s.half_grace = (opts->gc_grace == 0 ? SR_CKPT_GC_GRACE : opts->gc_grace) / 2;
	if (opts->epoch > SR_EPOCH_MAX)
		return sr_err(err, "save %s: epoch %" PRIu64 " is above %llu", s.job, opts->epoch,
		    SR_EPOCH_MAX);
	/* LATEST before the listing: the new seq is above every manifest
	 * that was committed when LATEST was read (see catalog.h). */
	if (sr_catalog_read(st, s.job, &cat, err) == -1) {
		sr_err_prefix(err, "save %s", s.job);
		rc = -1;
		goto out;
	}
	sr_catalog_warn(opts, &cat);
	/* A newer run holds the job: not a byte uploaded. */
	if (sr_latest_epoch(&cat.latest) > opts->epoch) {
		rc = sr_latest_fenced(err, "nothing committed", s.job, cat.latest.epoch);
		sr_err_prefix(err, "save %s", s.job);
		goto out;
	}
	s.seq = 0;
	if (cat.n > 0)
		s.seq = cat.seqs[cat.n - 1] + 1;
	if (cat.latest.state == SR_LATEST_OK && cat.latest.seq + 1 > s.seq)
		s.seq = cat.latest.seq + 1;
	if (s.seq > SR_SEQ_MAX) {
		rc = sr_err(err, "save %s: sequence numbers exhausted", s.job);
		goto out;
	}
	if ((s.m.job = sr_try_strdup(s.job, err)) == NULL) {
		rc = sr_err_prefix(err, "save %s", s.job);
		goto out;
	}
	if (opts->sha256_ids) {
		s.m.version = SR_MANIFEST_VERSION_SHA256;
		s.m.chunk_id = SR_ID_SHA256;
	}
	s.m.stats.seq = s.seq;
	s.m.stats.step = step;
	s.m.stats.world_size = opts->world_size > 0 ? opts->world_size : 0;
	s.m.stats.epoch = opts->epoch;
	s.m.link = sr_chain_head(&cat, &s.m.parent) ? SR_LINK_PARENT : SR_LINK_NONE;
	if (src->describe(src->arg, &s.m, opts, err) == -1) {
		rc = sr_err_prefix(err, "save %s", s.job);
		goto out;
	}
	if (s.m.ntensors > 0) {	/* version 3: XXH3-128 ids, whatever was asked */
		s.m.version = SR_MANIFEST_VERSION_TENSORS;
		s.m.chunk_id = SR_ID_XXH3;
	}
	s.raw_total = raw_of(&s.m);
	if ((rc = check_stop(&s, err)) != 0)
		goto out;
	if ((rc = load_previous(&s, &cat, err)) != 0)
		goto out;
	if (auto_chunk(opts, src))
		choose_chunk(&s);
	/* small files share chunks: a directory's, with XXH3-128 ids */
	if (src->bundle && src->open != NULL && !opts->no_bundles && s.m.chunk_id == SR_ID_XXH3 &&
	    s.m.ntensors == 0)
		s.bundle_max = s.chunk_size / BUNDLE_SMALL;
	/* a chunk a file at most, besides the large files' (grown one by one,
	 * 10,000 small files' ids cost the serial thread 5% of a save) */
	if ((s.new_ids = sr_idtab_new(s.raw_total / s.chunk_size + s.m.stats.files + 16,
	    err)) == NULL) {
		rc = sr_err_prefix(err, "save %s", s.job);
		goto out;
	}
	nchunks = chunks_at_most(&s.m, s.chunk_size, s.bundle_max);
	if ((uint64_t)threads > nchunks)
		threads = (int)nchunks;
	if ((rc = ring_start(&s, threads, err)) != 0)
		goto out;
	rc = chunk_items(&s, err);
	ring_stop(&s);
	if (rc != 0)
		goto out;
	/* Once the workers are gone, so that the save never runs more threads
	 * at once than it did: glibc keeps an ended thread's stack and the TLS
	 * it allocated for it, and a thread beside the workers added one, which
	 * t-lib-oom saw freed by a later save (a leak across its trials). */
	packs_flush_begin(&s);
	/* a gang's node 0: the other nodes' parts join its own */
	if (opts->nmerge > 0 && (rc = sr_parts_merge(st, opts, &s.m, err)) != 0)
		goto out;
	s.m.stats.raw_bytes = raw_of(&s.m);
	if (sr_manifest_validate(&s.m, s.job, s.seq, err) == -1) {
		rc = sr_err_is_oom(err) ? sr_err_prefix(err, "save %s", s.job) :
		    sr_err_prefix(err, "save %s: the new manifest fails its own checks (a bug)", s.job);
		goto out;
	}
	s.m.stats.seconds = sr_mono() - t0;
	if (opts->part != NULL) {
		/* a gang's other node: its part, for node 0 to commit */
		if ((rc = check_stop(&s, err)) == 0 && (rc = packs_durable(&s, err)) == 0)
			rc = sr_parts_put(st, opts, &s.m, err);
		if (rc == 0 && stats != NULL)
			*stats = s.m.stats;
		goto out;
	}
	if ((rc = commit(&s, &cat, err)) != 0)
		goto out;
	if (opts->nmerge > 0)
		sr_parts_drop(st, opts);
	s.m.stats.seconds = sr_mono() - t0;
	sr_ckpt_progress(opts, &s.progress_at, s.raw_total, s.raw_total);
	if (stats != NULL)
		*stats = s.m.stats;
	/* The caller reports the commit from stats: it knows why it saved. */
	if (opts->keep > 0)
		sr_ckpt_retain(st, opts, s.seq);
	rc = 0;
out:
	sr_catalog_free(&cat);
	saver_free(&s);
	return rc;
}

/* Sleep up to secs, but no later than the deadline, waking every 50 ms
 * for the cancel flag: 1 when the save should try again, 0 when cancelled
 * or out of time. */
static int
pause_before_retry(const struct sr_ckpt_opts *o, double secs)
{
	double until = sr_now() + secs, deadline = sr_ckpt_deadline(o);

	if (until > deadline)
		until = deadline;
	while (sr_now() < until && !sr_flag_get(o->cancel))
		sr_sleep(until - sr_now() < 0.05 ? until - sr_now() : 0.05);
	return !sr_flag_get(o->cancel) && sr_now() < deadline;
}

/*
 * A save with a deadline (a notice's) keeps trying while the deadline
 * allows, not a fixed number of times: the machine is going, this is the
 * last chance to keep the work, and a store that is back a minute later is
 * still in time (the store's own requests retry until the deadline too,
 * store/xfer.c). Each try reads LATEST and the listing afresh, so a try
 * whose swap landed although its reply was lost is simply the parent of
 * the next. A fence, a cancel or the deadline end it at once; at the
 * deadline the error is the last try's.
 */
int
sr_ckpt_save_src(struct sr_store *st, const struct sr_ckpt_opts *opts,
    const struct sr_save_src *src, long long step, struct sr_ckpt_stats *stats, char *err)
{
	double wait = 0.5, left;
	char left_s[32];
	int rc, tries = 1;

	/* out of memory is not the store's: trying again would not help */
	while ((rc = save_once(st, opts, src, step, stats, err)) == -1 &&
	    sr_ckpt_deadline(opts) > 0 && !sr_err_is_oom(err)) {
		left = sr_ckpt_deadline(opts) - sr_now();
		if (left <= 0 || sr_flag_get(opts->cancel))
			break;
		sr_ckpt_say(opts, "warning: checkpoint try %d failed: %s; trying again until the "
		    "deadline (%s left)", tries, err, sr_fmt_duration(left, left_s, sizeof left_s));
		if (!pause_before_retry(opts, wait))
			break;
		wait = wait * 2 < 5 ? wait * 2 : 5;
		tries++;
	}
	/* the ranks' parts of a save that failed must not join a later one,
	 * and their ranks learn from their absence that it failed */
	if (rc != 0 && opts->merge_ranks && opts->nmerge > 0)
		sr_parts_drop(st, opts);
	if (rc == -1 && sr_ckpt_deadline(opts) > 0) {
		if (sr_flag_get(opts->cancel)) {
			sr_err(err, "checkpoint of %s cancelled after %d tr%s; nothing committed",
			    opts->job, tries, tries == 1 ? "y" : "ies");
			return SR_CKPT_CANCELLED;
		}
		if (sr_now() >= sr_ckpt_deadline(opts)) {
			char last[SR_ERRMAX];

			strlcpy(last, err, sizeof last);
			sr_err(err, "checkpoint of %s missed its deadline after %d tr%s, the store "
			    "failing until then (the last: %s); nothing committed", opts->job, tries,
			    tries == 1 ? "y" : "ies", last);
			return SR_CKPT_LATE;
		}
	}
	return rc;
}
