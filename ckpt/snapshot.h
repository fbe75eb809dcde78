/*
 * snapshot.h: a directory shipped as a snapshot: a checkpoint of a chain
 * of its own (a reserved "job", common/jobkeys.h's sr_jobkey_workdir), so
 * that its chunks are content-addressed, compressed and deduplicated
 * against the chain's previous snapshot as every checkpoint is
 * (doc/format.md, "Working directories"). A snapshot leaves out what the
 * .gitignore and .spotrunignore files of the tree say (ignore.h), every
 * .git and .spotrun, and the paths the caller names; its id is the key of
 * its manifest, which is create-only: a restore by id brings back exactly
 * that one, whatever was saved after it. Knows nothing of jobs.
 */
#ifndef SR_SNAPSHOT_H
#define SR_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "ckpt.h"
#include "store.h"

/* sr_snapshot_save: the tree is larger than max_bytes; nothing written. */
#define SR_SNAPSHOT_TOO_BIG (-8)
/* sr_snapshot_save: a .gitignore or .spotrunignore refused (a pattern, its size). */
#define SR_SNAPSHOT_BAD_RULES (-9)

/* The rule files read in every directory of the tree, in this order. */
#define SR_SNAPSHOT_IGNORE_FILES ".gitignore", ".spotrunignore"

struct sr_snapshot_opts {
	uint64_t max_bytes;		/* the files' bytes at most (0: no limit) */
	const char *const *never;	/* paths below the directory never taken, */
	size_t nnever;			/* nor anything inside them */
};

/*
 * Snapshot dir into a new checkpoint of the chain o->job (keep, epoch and
 * part must be 0: a snapshot is committed and never retired), leaving out
 * what the rules say. 0 with stats (seq: the snapshot's; files,
 * raw_bytes; chunks and reused_chunks; new_bytes: what was uploaded),
 * SR_SNAPSHOT_BAD_RULES with err naming a rule file the walk refused (its
 * file and line), SR_SNAPSHOT_TOO_BIG with err naming the total, the limit and the
 * biggest entries of the directory's top level, or -1 with err. A lost race
 * with a save of the same chain is tried again.
 */
int sr_snapshot_save(struct sr_store *st, const struct sr_ckpt_opts *o, const char *dir,
    const struct sr_snapshot_opts *so, struct sr_ckpt_stats *stats, char *err);

/* The id of snapshot seq of chain: the key of its manifest (malloc'd;
 * NULL with err on out-of-memory). */
char *sr_snapshot_id(const char *chain, uint64_t seq, char *err);

/* The earliest snapshot of chain, up from seq along its parents (a few
 * steps at most), that holds the same tree as seq (sr_snapshot_save just
 * committed seq): *same, seq itself when its parent differs. Naming a
 * resubmission of unchanged code by that one lets the machines that have
 * it restored, and its setup run, use them again. 0, or -1 with err (the
 * store's, reading seq or a parent). */
int sr_snapshot_settle(struct sr_store *st, const char *chain, uint64_t seq, uint64_t *same,
    char *err);

/* Restore snapshot id into dir (created, or emptied first): exactly it,
 * every chunk checked, modes and symlinks as saved, nothing outside dir.
 * o's job is ignored (the id names the chain). 0 with stats, or -1 with
 * err (an id that is not a snapshot's is one). */
int sr_snapshot_restore(struct sr_store *st, const struct sr_ckpt_opts *o, const char *id,
    const char *dir, struct sr_ckpt_stats *stats, char *err);

/* A name for a copy of snapshot id of the store at url, unique to both:
 * 32 hex digits and a NUL into out. 0, or -1 with err. */
int sr_snapshot_cache_name(const char *url, const char *id, char out[33], char *err);

#endif
