/*
 * latest.h: the LATEST pointer of a job (doc/format.md, "LATEST"): its
 * forms, read and written. `SEQ\n` (what versions before fencing write, and
 * what an unfenced save still writes), `SEQ EPOCH\n` (a fenced run's
 * commit) and `none EPOCH\n` (a job a run fenced before it had a
 * checkpoint); the digits alone are read with a warning; anything else is
 * garbage. The rules of who may move it are fence.h's.
 */
#ifndef SR_LATEST_H
#define SR_LATEST_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* Largest LATEST object read. */
#define SR_LATEST_MAX 4096
/* Largest epoch: what a JSON integer (the lease's, the manifest's) holds. */
#define SR_EPOCH_MAX 9223372036854775807ULL
/* Digits of an epoch at most. */
#define SR_EPOCH_DIGITS 19

enum sr_latest_state {
	SR_LATEST_ABSENT = 0,
	SR_LATEST_OK,		/* a seq (and an epoch, 0 in the old form) */
	SR_LATEST_NONE,		/* "none EPOCH": fenced, nothing committed yet */
	SR_LATEST_GARBAGE	/* present but none of the forms */
};

struct sr_latest {
	enum sr_latest_state state;
	uint64_t seq;		/* SR_LATEST_OK */
	uint64_t epoch;		/* OK and NONE; 0 otherwise */
	char etag[SR_ETAG_MAX];	/* when present (also garbage) */
	/* What is wrong with it, as a whole warning line, or "": garbage (too
	 * large, no form), or a form without its newline, which is read as
	 * what it says. Every reader says it (sr_catalog_warn). */
	char warning[320];
};


/* Parse the len bytes of job's LATEST into l (etag untouched). */
void sr_latest_parse(const char *job, const char *buf, size_t len, struct sr_latest *l);

/* Read job's LATEST into l: absent is no error; an object too large to be
 * a pointer is garbage (its etag from a HEAD, for the repairing CAS). 0,
 * or -1 with err (a store error: not garbage). */
int sr_latest_read(struct sr_store *st, const char *job, struct sr_latest *l, char *err);

/* The text of a LATEST: "SEQ\n" at epoch 0, else "SEQ EPOCH\n", or with
 * has_seq 0 "none EPOCH\n". */
void sr_latest_text(int has_seq, uint64_t seq, uint64_t epoch, char *out, size_t len);

/* Write text over the LATEST that from describes: create-only when it was
 * absent, else compare-and-swap against its etag. The store's return code
 * (SR_STORE_EXISTS or SR_STORE_PRECONDITION: another writer moved it). */
int sr_latest_put(struct sr_store *st, const char *job, const struct sr_latest *from,
    const char *text, char *err);

/* The epoch l carries: 0 for an absent or garbage LATEST (whatever wrote
 * it, a repair by any run is welcome). */
uint64_t sr_latest_epoch(const struct sr_latest *l);

/* err = "WHAT: job J is now run by epoch E (a newer run took it over)";
 * returns SR_CKPT_FENCED. */
int sr_latest_fenced(char *err, const char *what, const char *job, uint64_t epoch);

#endif
