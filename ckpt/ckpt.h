/*
 * ckpt.h: directory checkpoints in an object store. The runner calls these;
 * they know nothing of jobs, providers or processes.
 *
 * Layout under the store, for job J:
 *   J/packs/<seq>-<rand>.tar        pax tar archives of chunk members
 *   J/manifests/<seq>.json          one per committed checkpoint (create-only)
 *   J/LATEST                        the newest committed sequence (CAS)
 * A checkpoint exists once its manifest is written and LATEST points at it.
 * An interrupted save leaves only unreferenced packs, which gc removes.
 */
#ifndef SR_CKPT_H
#define SR_CKPT_H

#include <stdint.h>

#include "store.h"

/* Return codes besides 0 and -1. */
#define SR_CKPT_LATE	(-2)	/* the deadline passed: nothing committed */
#define SR_CKPT_NONE	(-3)	/* restore: the job has no usable checkpoint */
#define SR_CKPT_CANCELLED (-4)	/* *cancel became non-zero: nothing committed */

struct sr_ckpt_opts {
	const char *job;		/* job name: the key prefix */
	size_t chunk_size;		/* bytes per chunk (default 16 MiB) */
	int level;			/* zstd level (default 1) */
	int threads;			/* worker threads (0 = all CPUs); a restore
					 * adds readers that mostly wait for the
					 * store (sr_store_read_plan's streams) */
	int keep;			/* checkpoints kept after a commit (0 = all) */
	double deadline;		/* epoch seconds; 0 = none */
	volatile int *cancel;		/* non-NULL: checked between chunks */
	/* Called with progress and warnings (restore fallbacks); may be NULL. */
	void (*log)(void *arg, const char *msg);
	void *log_arg;
	uint64_t pack_size;		/* start a new pack past this (default 1 GiB) */
	/* Called as raw bytes are done (save: read and stored; restore:
	 * written and verified), at most every 0.25 s, from any one thread at
	 * a time; done == total once at the end of a success. May be NULL. */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
	int world_size;			/* save: the job's processes that wrote the
					 * directory, recorded in the manifest
					 * (0: not known, not recorded) */
};

struct sr_ckpt_stats {
	uint64_t seq;			/* checkpoint sequence number */
	long long step;			/* step the job reported (-1 if none) */
	int world_size;			/* processes that wrote it (0 if not known) */
	double created;			/* epoch seconds of the commit */
	uint64_t files;
	uint64_t chunks;
	uint64_t raw_bytes;		/* size of all files */
	uint64_t stored_bytes;		/* compressed size of all chunks referenced */
	uint64_t new_bytes;		/* compressed bytes uploaded by this save */
	uint64_t reused_chunks;		/* chunks already in the store */
	double seconds;			/* wall time of the save or restore */
	const char *problem;		/* sr_ckpt_list: why it cannot be restored (valid
					 * during the callback), else NULL */
};

/* Snapshot dir into a new checkpoint of opts->job and commit it.
 * Returns 0 (committed; stats filled), SR_CKPT_LATE, SR_CKPT_CANCELLED or -1. */
int sr_ckpt_save(struct sr_store *st, const struct sr_ckpt_opts *opts, const char *dir,
    long long step, struct sr_ckpt_stats *stats, char *err);

/* Restore the newest usable checkpoint into dir (emptied first). Every chunk
 * is verified; a corrupt or missing one falls back to the previous
 * checkpoint, saying which and why through opts->log. Returns 0 (stats
 * filled), SR_CKPT_NONE, or -1. */
int sr_ckpt_restore(struct sr_store *st, const struct sr_ckpt_opts *opts, const char *dir,
    struct sr_ckpt_stats *stats, char *err);

/* Call fn for each committed checkpoint of job, oldest first. */
int sr_ckpt_list(struct sr_store *st, const char *job,
    int (*fn)(const struct sr_ckpt_stats *ck, int is_latest, void *arg), void *arg, char *err);
/* sr_ckpt_list, saying through o->log (o may be NULL; only log and
 * log_arg are read) what a restore would warn about the catalog before
 * fn is called: a garbage LATEST, or one without its newline (one line
 * starting "warning: "). */
int sr_ckpt_list_log(struct sr_store *st, const struct sr_ckpt_opts *o, const char *job,
    int (*fn)(const struct sr_ckpt_stats *ck, int is_latest, void *arg), void *arg, char *err);

/* Keep the newest `keep` checkpoints; delete older manifests and every pack
 * no kept manifest references, and abort the job's unfinished pack uploads
 * older than a day (saves that died mid-upload; catalog.h). */
int sr_ckpt_gc(struct sr_store *st, const char *job, int keep, uint64_t *deleted_bytes, char *err);

#endif
