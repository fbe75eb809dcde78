/*
 * catalog.h: what the checkpoint module knows about a job's objects in the
 * store, shared by save, restore, list, fence and gc: job names, the keys
 * of manifests and packs, LATEST (latest.h) with the listing of manifests,
 * and one manifest loaded (see doc/format.md).
 *
 * Which manifests are committed is the chain's business (chain.h): those
 * on LATEST's chain of parents.
 */
#ifndef SR_CATALOG_H
#define SR_CATALOG_H

#include <stdint.h>

#include "ckpt.h"
#include "latest.h"
#include "manifest.h"
#include "store.h"
#include "util.h"

struct sr_catalog {
	struct sr_latest latest;	/* read before the listing */
	uint64_t *seqs;		/* every manifest by listing, ascending */
	uint64_t *sizes;	/* their object sizes, with their commit records' */
	double *mtimes;		/* and modification times (the store's clock) */
	size_t n;
};

/* Throttled progress: call o->progress when *last (sr_mono() of the last
 * call, 0 at first) is 0.25 s old, or always when done == total. The
 * caller serialises calls for one operation. */
void sr_ckpt_progress(const struct sr_ckpt_opts *o, double *last, uint64_t done, uint64_t total);

/* Send a formatted line to opts->log, if any. */
void sr_ckpt_say(const struct sr_ckpt_opts *o, const char *fmt, ...) SR_PRINTF(2, 3);

/* Resize the array at *pp (a T **) to n elements of size bytes: 0, or -1
 * with err (out of memory) and *pp as it was. */
int sr_ckpt_resize(void *pp, size_t n, size_t size, char *err);

/* Check a job name: segments of [A-Za-z0-9._-] separated by '/', each
 * starting with a letter or digit. 0 or -1 with err. */
int sr_ckpt_job_check(const char *job, char *err);

/* Read LATEST, then list the manifests (in that order, so that a seq
 * chosen from both is above anything committed before the read). */
int sr_catalog_read(struct sr_store *st, const char *job, struct sr_catalog *c, char *err);
/* Only the listing part of sr_catalog_read: c->latest is left as it is
 * (gc reads LATEST, then the packs, then this). */
int sr_catalog_list_manifests(struct sr_store *st, const char *job, struct sr_catalog *c,
    char *err);
void sr_catalog_free(struct sr_catalog *c);
/* Say c->latest's warning through o->log (o may be NULL), if there is
 * one: every reader of LATEST warns alike. */
void sr_catalog_warn(const struct sr_ckpt_opts *o, const struct sr_catalog *c);
/* Index of seq in c's listing, or -1. */
long sr_catalog_find(const struct sr_catalog *c, uint64_t seq);

/* sr_catalog_load: the manifest object is there but unusable. */
#define SR_CATALOG_BAD (-10)

/* Get, parse and validate manifest seq of job into m (free it whatever
 * happens; m->link says what it said of its parent even when refused).
 * Returns 0, SR_STORE_NOTFOUND (missing), SR_CATALOG_BAD (bad JSON or
 * refused by validation) or -1 (store error, or out-of-memory: never
 * SR_CATALOG_BAD, the manifest may well be sound); err says why. */
int sr_catalog_load(struct sr_store *st, const char *job, uint64_t seq, struct sr_manifest *m,
    char *err);

/*
 * Commit records (doc/format.md, "Commit records"): J/manifests/<seq>.commit,
 * "commit SEQ parent P epoch E\n" (P "none" for the chain's first), put by
 * the save whose compare-and-swap of LATEST committed seq, after it: a
 * writer that did not commit (fenced, overtaken, killed before its swap)
 * never writes one. It repeats the manifest's link, so that a restore can
 * still follow the chain past a manifest that cannot say it (damaged, or
 * of a newer version).
 */
/* Put seq's record (link SR_LINK_NONE or SR_LINK_PARENT with parent):
 * 0 or -1 with err. */
int sr_commit_put(struct sr_store *st, const char *job, uint64_t seq, enum sr_mlink link,
    uint64_t parent, uint64_t epoch, char *err);
/* Read seq's record: 1 with *link (SR_LINK_NONE or SR_LINK_PARENT, then
 * *parent below seq); 0 when there is none or it is not exactly a record
 * of seq (why says which); -1 with why on a store error or out of memory. */
int sr_commit_get(struct sr_store *st, const char *job, uint64_t seq, enum sr_mlink *link,
    uint64_t *parent, char *why);

/* How old an unfinished upload of a job's packs must be for gc to abort
 * it: a day is far longer than any save (a terabyte at 100 MB/s takes
 * three hours), so a save in flight on another machine is never touched,
 * while the parts of one whose machine died stop being billed a day later. */
#define SR_GC_UPLOAD_AGE (24 * 3600.0)

/* Abort the unfinished multipart uploads under J/packs/ started before
 * the epoch time older_than (sr_store_abort_stale_uploads); *aborted (may
 * be NULL) counts them. 0, or -1 with err. */
int sr_ckpt_gc_uploads(struct sr_store *st, const char *job, double older_than, int *aborted,
    char *err);

#endif
