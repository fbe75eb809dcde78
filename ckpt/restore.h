/*
 * restore.h: the walk every restore makes (restore-walk.c): the catalog
 * read once, then the candidates newest first along LATEST's chain (its
 * seq first, then each failed one's parent), each tried by the caller's
 * function until one restores; the fallback lines and the final message
 * are the walk's, so a restore into a directory (restore.c) and into
 * buffers (restore-tensors.c) fall back and report alike.
 */
#ifndef SR_RESTORE_H
#define SR_RESTORE_H

#include <stdint.h>

#include "ckpt.h"
#include "manifest.h"
#include "store.h"

/* Outcome of one candidate checkpoint. */
enum try_rc {
	TRY_OK = 0,
	TRY_BAD = -1,		/* this checkpoint is unusable: fall back */
	TRY_LOCAL = -2,		/* writing here failed: falling back would not help */
	TRY_CANCELLED = -3,
	TRY_MISMATCH = -4	/* it holds something else than asked for: so would
				 * an older one (SR_CKPT_MISMATCH) */
};

/* Called once the catalog is read and there is something to restore
 * (NULL-able): the caller's housekeeping before the first try. */
typedef void sr_restore_prepare_fn(void *arg, const struct sr_ckpt_opts *o);
/* Restore checkpoint seq: load it into m (sr_catalog_load; m is freed by
 * the walk whatever happens, and its parent followed on failure) and
 * bring it in; an enum try_rc, why saying what went wrong. */
typedef int sr_restore_try_fn(void *arg, struct sr_store *st, const struct sr_ckpt_opts *o,
    uint64_t seq, struct sr_manifest *m, char *why);

/* sr_ckpt_restore's walk and return values (plus SR_CKPT_MISMATCH),
 * for what try brings in; *unusable (NULL-able) is set to 1 when the -1
 * is because every candidate failed (not a store or local error). */
int sr_restore_walk(struct sr_store *st, const struct sr_ckpt_opts *opts,
    sr_restore_prepare_fn *prepare, sr_restore_try_fn *try, void *arg,
    struct sr_ckpt_stats *stats, int *unusable, char *err);

#endif
