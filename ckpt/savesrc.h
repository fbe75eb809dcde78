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
#include "store.h"

struct sr_save_item {
	struct sr_mentry *e;		/* its chunks go here (e->size: its bytes) */
	int fd;				/* read with pread, closed by the pipeline
					 * after its last chunk; -1: mem */
	const uint8_t *mem;		/* with fd -1: the bytes themselves, which
					 * must not change until the save returns */
	uint64_t size;			/* bytes to read now */
};

struct sr_save_src {
	void *arg;
	/* Record what is saved in m (entries or tensors, and stats.files):
	 * 0, or -1 with err. */
	int (*describe)(void *arg, struct sr_manifest *m, const struct sr_ckpt_opts *o, char *err);
	/* The next data item at or after *cursor (0 at first): 1 with *it
	 * filled and *cursor past it, 0 when there is none left, -1 with
	 * err. An item of size 0 is never handed out. */
	int (*next)(void *arg, struct sr_manifest *m, const struct sr_ckpt_opts *o, size_t *cursor,
	    struct sr_save_item *it, char *err);
	/* NULL-able. Item it is drained, saved bytes of it stored (fewer than
	 * it->size: its file shrank); before the pipeline closes its fd. */
	void (*finished)(void *arg, const struct sr_ckpt_opts *o, struct sr_save_item *it,
	    uint64_t saved);
};

/* The chunk size a save with opts cuts its items into. */
size_t sr_ckpt_chunk_size(const struct sr_ckpt_opts *opts);

/* sr_ckpt_save's contract, for what src holds. */
int sr_ckpt_save_src(struct sr_store *st, const struct sr_ckpt_opts *opts,
    const struct sr_save_src *src, long long step, struct sr_ckpt_stats *stats, char *err);

#endif
