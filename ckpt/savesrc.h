/*
 * savesrc.h: what a save reads. save.c's pipeline (the ring of chunks,
 * content addressing, packs, the commit and its retries) takes its data
 * from a source: a directory (save-dir.c, sr_ckpt_save) or buffers in
 * memory (save-tensors.c, sr_ckpt_save_tensors). A source first records
 * the checkpoint's contents in the manifest (files, or tensors), then
 * hands the pipeline its data items in order, each a run of bytes whose
 * chunks go to one manifest entry: a file, or a tensor's piece.
 */
#ifndef SR_SAVESRC_H
#define SR_SAVESRC_H

#include <stddef.h>
#include <stdint.h>

#include "ckpt.h"
#include "manifest.h"
#include "pathsafe.h"
#include "store.h"

/* An item's fd when next() handed it out unopened (a source with open()). */
#define SR_SAVE_UNOPENED (-2)

struct sr_save_item {
	struct sr_mentry *e;		/* its chunks go here (e->size: its bytes) */
	int fd;				/* read with pread, closed by the pipeline
					 * after its last chunk; -1: mem;
					 * SR_SAVE_UNOPENED: see open() */
	const uint8_t *mem;		/* with fd -1: the bytes themselves, which
					 * must not change until finished() is
					 * called for the item or the save returns */
	uint64_t size;			/* bytes to read now */
	/* What a source that cuts its own chunks (the library's device
	 * buffers: an item of one chunk, at most chunk_size bytes) knows of
	 * one; 0 and NULL for the rest. */
	int planes;			/* 2 or 4: mem holds the chunk's byte planes
					 * of that width (split on a GPU), encoded as
					 * such (codec.h, SR_CODEC_SPLIT); its id is
					 * hashed from the bytes joined back */
	const uint8_t *csum;		/* its chunk sum (chunksum.h), recorded */
	const struct sr_mchunk *ref;	/* it is this chunk of the checkpoint the
					 * save is based on (their sums matched):
					 * referenced, nothing read (mem NULL); if
					 * that checkpoint's packs no longer hold it,
					 * the save fails (the source may then try
					 * again without references) */
};

#define SR_SRC_DRAIN 2
/* next's answer when the source needs back the memory of one item it
 * handed out, not all of them (lib/device-save.c's two staging buffers):
 * the pipeline drains its oldest chunk in flight and asks again, so the
 * chunks after it stay in flight. */
#define SR_SRC_DRAIN_ONE 3

struct sr_save_src {
	void *arg;
	/* Record what is saved in m (entries or tensors, and stats.files):
	 * 0, or -1 with err. */
	int (*describe)(void *arg, struct sr_manifest *m, const struct sr_ckpt_opts *o, char *err);
	/* The next data item at or after *cursor (0 at first): 1 with *it
	 * filled and *cursor past it, 0 when there is none left, -1 with
	 * err. An item of size 0 is never handed out. SR_SRC_DRAIN: not
	 * ready until the items handed out are done with (a source that
	 * reuses their memory, lib/staging.c): the pipeline drains every
	 * chunk in flight (finished() for each item) and asks again;
	 * SR_SRC_DRAIN_ONE: the same for the oldest chunk only. Items in a
	 * row may go to the same entry, their chunks in order. */
	int (*next)(void *arg, struct sr_manifest *m, const struct sr_ckpt_opts *o, size_t *cursor,
	    struct sr_save_item *it, char *err);
	/* NULL-able. Item it is drained, saved bytes of it stored; before
	 * the pipeline closes its fd (-1 if a worker closed it already).
	 * it->size: the bytes it held when opened (open(), now 1), or, read
	 * whole by a worker, the bytes found there: more than saved when the
	 * file grew past the room its bundle had, and saved was cut. */
	void (*finished)(void *arg, const struct sr_ckpt_opts *o, struct sr_save_item *it,
	    uint64_t saved);
	/* NULL-able: every item comes open or in memory. Else next() may hand
	 * out an item unopened (fd SR_SAVE_UNOPENED, size as described), and
	 * the pipeline opens it where it is read: 0 with it->fd set, or -1
	 * with err. The planning thread opens an item it cuts into chunks
	 * (now 1: it->size is then set to what it holds now, which is what
	 * is read); worker threads, concurrently, open the small files that
	 * they read whole into a bundle (now 0: the reader finds out itself
	 * how many bytes there are, so no fstat a file) and close them at
	 * once. It may use d, the calling thread's own (pathsafe.h), and the
	 * source's state that does not change during the save, nothing
	 * else. */
	int (*open)(void *arg, struct sr_path_dir *d, struct sr_save_item *it, int now,
	    char *err);
	/* 1: the source takes any chunk size (a directory), so that a save
	 * whose opts set none, outside a gang, chooses it from the state's
	 * size (chunksize.h); 0: opts' or the default, which the source
	 * itself cuts with (tensors' shares, staged and device buffers). */
	int any_chunk;
	/* 1: each item is a whole entry (a directory's file), and small ones
	 * may share a chunk (save.c, "bundles"); 0: items keep their chunks. */
	int bundle;
};

/* What a directory's save leaves out (sr_ckpt_save_filtered; a snapshot,
 * snapshot.c). Every hook is NULL-able; rel and path are relative to the
 * directory saved ("" its root). */
struct stat;
struct sr_dir_filter {
	void *arg;
	/* The walk enters directory rel, open at dfd, before it lists it:
	 * 0, or -1 with err (the save fails). */
	int (*enter)(void *arg, int dfd, const char *rel, char *err);
	/* ... and leaves it, its entries walked. */
	void (*leave)(void *arg, const char *rel);
	/* Entry path, lstat'd into sb: 1 leave it out (a directory: not
	 * walked), 0 take it, -1 with err. */
	int (*skip)(void *arg, const char *path, const struct stat *sb, char *err);
	/* The walk is over, nothing read or stored yet: 0 save, -1 with err
	 * save nothing. */
	int (*walked)(void *arg, char *err);
};

/* sr_ckpt_save, leaving out what filter says (NULL: nothing). */
int sr_ckpt_save_filtered(struct sr_store *st, const struct sr_ckpt_opts *opts, const char *dir,
    const struct sr_dir_filter *filter, long long step, struct sr_ckpt_stats *stats, char *err);

/* The chunk size a save with opts cuts its items into, unless the source
 * takes any and opts set none (then chunksize.h's choice). */
size_t sr_ckpt_chunk_size(const struct sr_ckpt_opts *opts);

/* sr_ckpt_save's contract, for what src holds. */
int sr_ckpt_save_src(struct sr_store *st, const struct sr_ckpt_opts *opts,
    const struct sr_save_src *src, long long step, struct sr_ckpt_stats *stats, char *err);

/* Buffers in memory as a source (save-tensors.c): the indices of t in
 * the manifest's order, by name (malloc'd; NULL with err on
 * out-of-memory), and describe() for them with
 * o (a replicated tensor's piece as o->rank's share), so that the other
 * sources of tensors (lib/staging.c, lib/device-save.c) record them
 * alike. */
size_t *sr_ckpt_tensors_order(const struct sr_ckpt_tensor *t, size_t n, char *err);
int sr_ckpt_tensors_describe(const struct sr_ckpt_tensor *t, const size_t *order, size_t n,
    struct sr_manifest *m, const struct sr_ckpt_opts *o, char *err);
/* The bytes of buffer t that a save with o writes, [*off, *off + *len):
 * all of them (0), or, with o->world_size > 1 and t its tensor's whole
 * box, o->rank's share of t's chunks (1; chunks *first on, of *nchunks,
 * either NULL-able): each source hands over these bytes alone. */
int sr_ckpt_tensor_share(const struct sr_ckpt_tensor *t, const struct sr_ckpt_opts *o,
    uint64_t *off, uint64_t *len, uint64_t *first, uint64_t *nchunks);

#endif
