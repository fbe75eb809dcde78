/*
 * catalog.h: what the checkpoint module knows about a job's objects in the
 * store, shared by save, restore, list and gc: job names, the keys of
 * manifests and packs, the LATEST pointer and which manifests count as
 * committed (see doc/format.md).
 *
 * Committed: a manifest whose seq is at most LATEST's. A manifest above
 * LATEST is a commit in flight (or one whose pointer write was lost in a
 * crash, which the next commit adopts). When LATEST is missing or garbage,
 * every manifest counts.
 */
#ifndef SR_CATALOG_H
#define SR_CATALOG_H

#include <stdint.h>

#include "ckpt.h"
#include "manifest.h"
#include "store.h"
#include "util.h"

/* Largest LATEST object read. */
#define SR_LATEST_MAX 4096

enum sr_latest_state {
	SR_LATEST_ABSENT = 0,
	SR_LATEST_OK,
	SR_LATEST_GARBAGE	/* present but not a sequence number */
};

struct sr_catalog {
	uint64_t *seqs;		/* every manifest by listing, ascending */
	uint64_t *sizes;	/* their object sizes */
	size_t n;
	size_t ncommitted;	/* seqs[0 .. ncommitted) are committed */
	enum sr_latest_state latest_state;
	uint64_t latest;	/* when SR_LATEST_OK */
	char etag[SR_ETAG_MAX];	/* of LATEST, when present */
	/* What is wrong with LATEST, as a whole warning line, or "": garbage
	 * (doc/format.md: too large, not a number), or a number without its
	 * newline, which is read as that number. sr_catalog_warn says it. */
	char latest_warning[256];
};

/* Throttled progress: call o->progress when *last (sr_mono() of the last
 * call, 0 at first) is 0.25 s old, or always when done == total. The
 * caller serialises calls for one operation. */
void sr_ckpt_progress(const struct sr_ckpt_opts *o, double *last, uint64_t done, uint64_t total);

/* Send a formatted line to opts->log, if any. */
void sr_ckpt_say(const struct sr_ckpt_opts *o, const char *fmt, ...) SR_PRINTF(2, 3);

/* Check a job name: segments of [A-Za-z0-9._-] separated by '/', each
 * starting with a letter or digit. 0 or -1 with err. */
int sr_ckpt_job_check(const char *job, char *err);

/* Keys: J/manifests/<seq>.json, J/LATEST, J/packs/. malloc'd. */
char *sr_ckpt_manifest_key(const char *job, uint64_t seq);
char *sr_ckpt_latest_key(const char *job);
/* Whether key is exactly J/packs/<10 digits>-<hex>.tar: only such keys
 * are ever deleted by gc. */
int sr_ckpt_is_pack_key(const char *job, const char *key);

/* Read LATEST, then list the manifests (in that order, so that a seq
 * chosen from both is above anything committed before the read). */
int sr_catalog_read(struct sr_store *st, const char *job, struct sr_catalog *c, char *err);
void sr_catalog_free(struct sr_catalog *c);
/* Say c->latest_warning through o->log (o may be NULL), if there is one:
 * every reader of LATEST (save, restore, list) warns alike. */
void sr_catalog_warn(const struct sr_ckpt_opts *o, const struct sr_catalog *c);

/* sr_catalog_load: the manifest object is there but unusable. */
#define SR_CATALOG_BAD (-10)

/* Get, parse and validate manifest seq of job into m (free it whatever
 * happens). Returns 0, SR_STORE_NOTFOUND (missing), SR_CATALOG_BAD (bad
 * JSON or refused by validation) or -1 (store error); err says why. */
int sr_catalog_load(struct sr_store *st, const char *job, uint64_t seq, struct sr_manifest *m,
    char *err);

/* Advance LATEST to seq by compare-and-swap from the state in c, re-reading
 * it on a lost race; a LATEST already at or past seq counts as success. */
int sr_catalog_set_latest(struct sr_store *st, const char *job, uint64_t seq,
    const struct sr_catalog *c, char *err);

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

/* sr_ckpt_gc (ckpt.h), then sr_ckpt_gc_uploads with older_than, saying
 * through o->log (o may be NULL) how many uploads it aborted, or, as a
 * warning, why it could not: that is never a gc failure (the next gc
 * tries again). sr_ckpt_gc is this with no log and uploads older than
 * SR_GC_UPLOAD_AGE. */
int sr_ckpt_gc_log(struct sr_store *st, const struct sr_ckpt_opts *o, const char *job, int keep,
    double older_than, uint64_t *deleted_bytes, char *err);

#endif
