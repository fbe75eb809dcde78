/*
 * fence.h: who may move LATEST (doc/format.md, "Fencing"): a commit moves
 * it forward by compare-and-swap, never over a higher epoch than its own
 * and never backwards; sr_ckpt_fence (ckpt.h) moves it to a new holder's
 * epoch.
 */
#ifndef SR_FENCE_H
#define SR_FENCE_H

#include <stdint.h>

#include "latest.h"
#include "store.h"

/* sr_latest_advance: LATEST moved to seq or past it meanwhile, by a
 * writer of this epoch or a lower one: this commit is not on the chain. */
#define SR_CATALOG_OVERTAKEN (-11)

/*
 * Commit: move job's LATEST from what `from` describes to seq at epoch,
 * by compare-and-swap (create-only when it was absent). A LATEST of a
 * higher epoch refuses it: SR_CKPT_FENCED, err "nothing committed: job J
 * is now run by epoch E (a newer run took it over)". On a lost race
 * LATEST is read again: if it holds seq at epoch, the write was ours (its
 * reply lost): 0; a higher epoch: SR_CKPT_FENCED; seq or a higher one:
 * SR_CATALOG_OVERTAKEN (err names it); else rebase (may be NULL) is told
 * what LATEST holds now, so that the manifest can name it as its parent,
 * and the swap is retried from there (a rebase's -1 ends it). 0,
 * SR_CKPT_FENCED, SR_CATALOG_OVERTAKEN, or -1 (a store error: whether
 * LATEST moved is unknown).
 */
int sr_latest_advance(struct sr_store *st, const char *job, uint64_t seq, uint64_t epoch,
    const struct sr_latest *from,
    int (*rebase)(void *arg, const struct sr_latest *now, char *err), void *arg, char *err);

#endif
