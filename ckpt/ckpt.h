/*
 * ckpt.h: directory checkpoints in an object store. The runner calls these;
 * they know nothing of jobs, providers or processes.
 *
 * Layout under the store, for job J (keys built by common/jobkeys.h):
 *   J/packs/<seq>-<rand>.tar        pax tar archives of chunk members
 *   J/manifests/<seq>.json          one per checkpoint (create-only), naming
 *                                   its parent: the one committed before it
 *   J/LATEST                        the newest committed seq and the epoch
 *                                   of the run that holds the job (CAS)
 * A checkpoint is committed once LATEST points at it or at a checkpoint
 * whose chain of parents reaches it. An interrupted save leaves only
 * unreferenced packs and manifests off the chain, which gc removes.
 *
 * Fencing: a run holding the job's lease (its epoch grows with every
 * claim) first calls sr_ckpt_fence, then saves with opts->epoch; a run
 * whose lease was taken over (a paused VM, a partitioned network) can then
 * commit nothing: its saves return SR_CKPT_FENCED. doc/format.md has it all.
 */
#ifndef SR_CKPT_H
#define SR_CKPT_H

#include <stdint.h>

#include "store.h"

/* Return codes besides 0 and -1. */
#define SR_CKPT_LATE	(-2)	/* the deadline passed: nothing committed */
#define SR_CKPT_NONE	(-3)	/* restore: the job has no usable checkpoint */
#define SR_CKPT_CANCELLED (-4)	/* *cancel became non-zero: nothing committed */
#define SR_CKPT_FENCED	(-5)	/* LATEST carries a higher epoch than opts->epoch:
				 * a newer run holds the job; nothing committed
				 * (save), changed (fence) or deleted (gc) */
#define SR_CKPT_MISMATCH (-6)	/* restore of tensors: the checkpoint holds other
				 * tensors than the buffers (a name, type, shape
				 * or box differs), or files */
#define SR_CKPT_UNUSABLE (-7)	/* restore of tensors: every checkpoint failed its
				 * checks or could not be read */

/* gc keeps packs and manifests off the chain younger than this (seconds):
 * a commit in flight elsewhere may still come to reference them. */
#define SR_CKPT_GC_GRACE 600.0

/* Bytes per chunk unless opts->chunk_size says otherwise. */
#define SR_CKPT_DEFAULT_CHUNK ((size_t)16 << 20)

struct sr_ckpt_opts {
	const char *job;		/* job name: the key prefix */
	size_t chunk_size;		/* bytes per chunk (0: a directory's save
					 * chooses, ckpt/chunksize.h; 16 MiB for
					 * the rest) */
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
	/* The fencing token of this run: the epoch of its lease (0: unfenced,
	 * the lowest). A save writes it into the manifest and LATEST and
	 * commits nothing over a LATEST with a higher one; gc does nothing
	 * then. At most 9223372036854775807. */
	uint64_t epoch;
	/* save: leave the commit record (doc/format.md, "Commit records") to
	 * sr_ckpt_commit_record, called after what must not wait for it (a
	 * notice's save, whose job is stopped only once the save returns). */
	int commit_record_later;
	/* gc's grace period in seconds (0: SR_CKPT_GC_GRACE; < 0: none, for a
	 * job that nothing writes). A save longer than half of it checks,
	 * before its commit, that what it wrote is still there. */
	double gc_grace;
	/* save: chunk ids by SHA-256 in a manifest of version 1, as spotrun
	 * wrote before XXH3-128 ids (doc/format.md, "Chunk ids"); the tests
	 * write old stores with it. 0: XXH3-128 ids, version 2. */
	int sha256_ids;
	/* save: every file in chunks of its own, as spotrun wrote before
	 * small files shared one (doc/format.md, "Slices"); the tests write
	 * such stores, bench-ckpt compares. 0: small files share. */
	int no_bundles;
	/* A gang's checkpoint (doc/format.md, "Gangs"). part: the key (under
	 * the job, J/parts/...) the save writes its manifest to instead of
	 * committing: this node's part, LATEST untouched, no retention run.
	 * merge: the keys of the other nodes' parts, which the save waits for
	 * (until the deadline: SR_CKPT_LATE) and whose entries it adds to its
	 * own before it commits (a path in two parts is taken from the first:
	 * this save's own, then merge's order, but see node_ranks), deleting
	 * them once committed. */
	const char *part;
	const char *const *merge;
	size_t nmerge;
	double merge_wait;		/* merge: seconds to wait for the parts at most,
					 * before the deadline (0: the deadline alone) */
	/* A gang's merge: the ranks each node runs (0: no rule). A path in
	 * the directory of global rank R (rank-R, or under rank-R/) with R
	 * below node_ranks * (nmerge + 1) is node R / node_ranks's alone: the
	 * merge takes it from that node's part, or from this save for node 0,
	 * and from nowhere else. Every node restores the whole checkpoint, so
	 * every node's directory holds the other ranks' folders as the
	 * previous checkpoint left them; without the rule, node 0's copies
	 * would shadow what the other ranks wrote since. */
	int node_ranks;
	/* save: non-NULL: the deadline, which another thread may set while
	 * the save runs (a notice for a save in flight, lib/async.c), read
	 * and written with __atomic_load/__atomic_store; deadline is then
	 * unused. Read between chunks, before the commit and between tries;
	 * a pack upload begun keeps the deadline it began with. */
	double *deadline_live;
	/* A library job of several ranks (doc/format.md, "Ranks"): this
	 * process's rank, below world_size. With world_size > 1, a save of
	 * tensors writes a buffer of a tensor's whole box as this rank's share
	 * of its chunks (the tensor is replicated: every rank holds it), and
	 * merge's parts are ranks 1 to nmerge (messages name the rank and the
	 * step; their tensors' pieces join the save's and must tile each
	 * tensor). */
	int rank;
	int merge_ranks;
	/* gc (`spotrun gc`, an agent's idle sweep): gc_each, when set, is
	 * told each object gc deletes (or would delete), its size and why;
	 * with gc_dry_run nothing is deleted and no upload aborted, the rest
	 * as a real gc (its fencing and grace), so a dry run lists exactly
	 * what a gc would delete. */
	void (*gc_each)(void *arg, const char *key, uint64_t size, const char *why);
	void *gc_arg;
	int gc_dry_run;
};

/* gc_each's size of an unfinished upload that a dry run lists (the store
 * lists them without their size); those a gc aborts are said through
 * o->log, in a count. */
#define SR_GC_SIZE_UNKNOWN UINT64_MAX

/* The save's deadline now (0: none): see deadline_live. */
static inline double
sr_ckpt_deadline(const struct sr_ckpt_opts *o)
{
	double d;

	if (o->deadline_live == NULL)
		return o->deadline;
	__atomic_load(o->deadline_live, &d, __ATOMIC_RELAXED);
	return d;
}

struct sr_ckpt_stats {
	uint64_t seq;			/* checkpoint sequence number */
	long long step;			/* step the job reported (-1 if none) */
	int world_size;			/* processes that wrote it (0 if not known) */
	uint64_t epoch;			/* of the run that wrote it (0: unfenced) */
	double created;			/* epoch seconds of the commit */
	uint64_t files;
	uint64_t chunks;
	uint64_t raw_bytes;		/* size of all files */
	uint64_t stored_bytes;		/* compressed size of all chunks referenced */
	uint64_t new_bytes;		/* compressed bytes uploaded by this save */
	uint64_t reused_chunks;		/* chunks already in the store */
	double seconds;			/* wall time of the save or restore */
	uint64_t read_chunks;		/* restore of tensors: chunks read from the store */
	uint64_t read_bytes;		/* and their encoded bytes */
	const char *problem;		/* sr_ckpt_list: why it cannot be restored (valid
					 * during the callback), else NULL */
};

/* Snapshot dir into a new checkpoint of opts->job and commit it at
 * opts->epoch (or store it as a part: opts->part). Returns 0 (committed; stats filled), SR_CKPT_LATE,
 * SR_CKPT_CANCELLED, SR_CKPT_FENCED (a newer run holds the job: stop) or
 * -1 (err says why; a lost race with another writer is one, and a retry
 * may commit; out of memory, sr_err_is_oom(err), is never tried again and
 * commits nothing, LATEST as it was). */
int sr_ckpt_save(struct sr_store *st, const struct sr_ckpt_opts *opts, const char *dir,
    long long step, struct sr_ckpt_stats *stats, char *err);

/* A buffer of this process saved as a piece of a tensor (the library's,
 * lib/libspotrun.h): name, element type (manifest.h's enum sr_dtype),
 * global shape, and the box of it the buffer holds, [offsets, offsets +
 * sizes) in each of ndim dimensions, row-major and contiguous in data. */
struct sr_runs;
struct sr_ckpt_tensor {
	const char *name;
	int dtype;
	int ndim;
	const uint64_t *shape, *offsets, *sizes;
	void *data;			/* save: read only, unchanged until it returns */
	uint64_t bytes;			/* of data: the box's elements times their size */
	/* Restore, NULL-able: with data NULL, where the bytes go instead (the
	 * library's device buffers): called for each chunk read, checked and
	 * decoded at src, with the runs r of the buffer it holds bytes of
	 * (reshard.h: sr_runs_each gives each run's place in the buffer and
	 * in src); from several reader threads at once; src is the reader's
	 * until put returns. 0, or -1 with err: the restore fails (no older
	 * checkpoint is tried: the fault is here, not in the store). */
	int (*put)(void *arg, const struct sr_ckpt_tensor *t, const struct sr_runs *r,
	    uint64_t from, uint64_t n, const uint8_t *src, char *err);
	void *put_arg;
};

/* sr_ckpt_save for n buffers instead of a directory: a manifest of
 * version 3 with their tensors (doc/format.md). The names must be
 * distinct; the caller checked each box against its shape. With
 * opts->world_size > 1 a buffer of its tensor's whole box is saved as
 * opts->rank's share of its chunks (doc/format.md, "Ranks"). */
int sr_ckpt_save_tensors(struct sr_store *st, const struct sr_ckpt_opts *opts,
    const struct sr_ckpt_tensor *t, size_t n, long long step, struct sr_ckpt_stats *stats,
    char *err);

/* Fill the n buffers from the newest usable checkpoint that holds each of
 * them: a tensor of the same name, type and shape whose pieces cover the
 * buffer's box, however many ranks saved them (resharding: only the chunks
 * holding bytes of the box are read; stats->read_chunks and read_bytes say
 * how many). Every chunk is checked before the next candidate is tried; a bad one falls back to the previous
 * checkpoint as sr_ckpt_restore does, and the buffers then hold that one
 * (their contents are undefined after a failure). A checkpoint that does
 * not match the buffers fails with SR_CKPT_MISMATCH, no fallback: an
 * older one of the same job would not match either. 0 (stats filled),
 * SR_CKPT_NONE, SR_CKPT_MISMATCH, SR_CKPT_UNUSABLE, SR_CKPT_CANCELLED or
 * -1 (the store, or a chunk codec, failed, or memory ran out: never a
 * fallback then, sr_err_is_oom(err) says which). */
int sr_ckpt_restore_tensors(struct sr_store *st, const struct sr_ckpt_opts *opts,
    const struct sr_ckpt_tensor *t, size_t n, struct sr_ckpt_stats *stats, char *err);

/* Restore the newest usable checkpoint into dir (emptied first). Every chunk
 * is verified; a corrupt or missing one falls back to the previous
 * checkpoint, saying which and why through opts->log. Returns 0 (stats
 * filled), SR_CKPT_NONE, or -1. */
int sr_ckpt_restore(struct sr_store *st, const struct sr_ckpt_opts *opts, const char *dir,
    struct sr_ckpt_stats *stats, char *err);

/* Restore exactly checkpoint seq into dir (emptied first), every chunk
 * verified, falling back to nothing: committed or not, whatever LATEST
 * says (a snapshot, snapshot.h, is named by its seq). 0 (stats filled)
 * or -1 with err. */
int sr_ckpt_restore_seq(struct sr_store *st, const struct sr_ckpt_opts *opts, const char *dir,
    uint64_t seq, struct sr_ckpt_stats *stats, char *err);

/* Take the job over for a run of this epoch: move LATEST to it (the same
 * seq, or "no checkpoint yet"), by compare-and-swap, before the run
 * restores or saves anything. From then on, a run of a lower epoch can
 * commit nothing. A LATEST at this epoch already is left as it is (0);
 * one at a higher epoch is never lowered: SR_CKPT_FENCED, err naming it.
 * Epoch 0 changes nothing. 0, SR_CKPT_FENCED or -1. */
int sr_ckpt_fence(struct sr_store *st, const char *job, uint64_t epoch, char *err);
/* sr_ckpt_fence, saying through o->log (o may be NULL; only log and
 * log_arg are read) what every reader of LATEST warns about. */
int sr_ckpt_fence_log(struct sr_store *st, const struct sr_ckpt_opts *o, const char *job,
    uint64_t epoch, char *err);

/* Call fn for each committed checkpoint of job (LATEST's chain), oldest
 * first. */
int sr_ckpt_list(struct sr_store *st, const char *job,
    int (*fn)(const struct sr_ckpt_stats *ck, int is_latest, void *arg), void *arg, char *err);
/* sr_ckpt_list, saying through o->log (o may be NULL; only log and
 * log_arg are read) what a restore would warn about the catalog before
 * fn is called: a garbage LATEST, or one without its newline, and a
 * chain of checkpoints that ends at a manifest that cannot say which came
 * before it (lines starting "warning: "). */
int sr_ckpt_list_log(struct sr_store *st, const struct sr_ckpt_opts *o, const char *job,
    int (*fn)(const struct sr_ckpt_stats *ck, int is_latest, void *arg), void *arg, char *err);

/* Keep the newest `keep` committed checkpoints; delete older ones,
 * manifests off the chain older than SR_CKPT_GC_GRACE, and every pack
 * older than that which no kept manifest references; abort the job's
 * unfinished pack uploads older than a day (saves that died mid-upload;
 * catalog.h). Unfenced (epoch 0): SR_CKPT_FENCED, nothing deleted, on a
 * job whose LATEST carries an epoch; sr_ckpt_gc_log takes opts. */
int sr_ckpt_gc(struct sr_store *st, const char *job, int keep, uint64_t *deleted_bytes, char *err);
/* sr_ckpt_gc for the run of o (may be NULL: unfenced, the default grace):
 * fenced by o->epoch, with o->gc_grace, aborting unfinished uploads begun
 * before the epoch time older_than, and saying through o->log how many it
 * aborted, or as a warning why it could not (never a gc failure: the next
 * gc tries again), and a chain that ends at a manifest that cannot say
 * which came before it (everything below it is then kept). */
int sr_ckpt_gc_log(struct sr_store *st, const struct sr_ckpt_opts *o, const char *job, int keep,
    double older_than, uint64_t *deleted_bytes, char *err);
/* The debris of a gang's or ranks' saves that never merged: every part
 * under J/parts/ (sr_jobkey_is_part) last written at or before the epoch
 * time older_than, deleted (o->gc_dry_run: not) and told to o->gc_each
 * (o may be NULL). Only for a job no run holds (its lease ended, released
 * or expired: doc/fleet.md, "gc"): a gang that lives merges and deletes
 * its parts itself. *bytes (may be NULL) gets their total size. 0, or -1
 * with err (on an error some may be gone). */
int sr_ckpt_gc_parts(struct sr_store *st, const struct sr_ckpt_opts *o, const char *job,
    double older_than, uint64_t *bytes, char *err);
/* The retention after checkpoint seq of o->job: sr_ckpt_gc_log keeping
 * o->keep (> 0), its outcome said through o->log ("retention: kept N
 * checkpoints, deleted SIZE", or a warning: never an error, the next one
 * tries again). sr_ckpt_save runs it after each commit when o->keep > 0;
 * a caller that must not wait for it there (a notice's save, whose job
 * is stopped only after the save) saves with keep 0 and calls it later. */
void sr_ckpt_retain(struct sr_store *st, const struct sr_ckpt_opts *o, uint64_t seq);
/* The commit record of checkpoint seq of job, committed at epoch by a save
 * with commit_record_later: the link read back from its manifest. Without
 * it (a machine gone first) the chain loses only the fallback past that
 * manifest, should it be damaged. 0, or -1 with err. */
int sr_ckpt_commit_record(struct sr_store *st, const char *job, uint64_t seq, uint64_t epoch,
    char *err);

#endif
