/*
 * restore-walk.c: the candidates of a restore, newest first along LATEST's
 * chain (restore.h): LATEST's seq even when its manifest is not listed
 * (so that its absence is reported), then what each failed one names as
 * its parent, saying each fallback through opts->log and, when none is
 * left, what the newest one's problem was and how many older ones failed.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "chain.h"
#include "ckpt.h"
#include "manifest.h"
#include "restore.h"
#include "util.h"

int
sr_restore_walk(struct sr_store *st, const struct sr_ckpt_opts *opts,
    sr_restore_prepare_fn *prepare, sr_restore_try_fn *try, void *arg,
    struct sr_ckpt_stats *stats, int *unusable, char *err)
{
	struct sr_catalog cat;
	struct sr_manifest m;
	struct sr_chain w;
	uint64_t seq, next;
	double t0 = sr_mono();
	char why[SR_ERRMAX], first[SR_ERRMAX];
	int rc = -1, nbad = 0, more;

	if (sr_ckpt_job_check(opts->job, err) == -1)
		return -1;
	if (sr_catalog_read(st, opts->job, &cat, err) == -1)
		return sr_err_prefix(err, "restore %s", opts->job);
	if ((cat.n == 0 && cat.latest.state != SR_LATEST_OK) ||
	    cat.latest.state == SR_LATEST_NONE) {
		sr_catalog_free(&cat);
		sr_err(err, "restore %s: no checkpoint", opts->job);
		return SR_CKPT_NONE;
	}
	sr_catalog_warn(opts, &cat);
	if (prepare != NULL)
		prepare(arg, opts);
	first[0] = '\0';
	/* Newest first along LATEST's chain (chain.h): LATEST itself even
	 * when its manifest is not listed, so that its absence is reported;
	 * each next candidate is what the failed one names as its parent. */
	sr_chain_begin(&w, opts->job, &cat);
	for (more = sr_chain_next(&w, &seq); more; seq = next) {
		int trc;
		why[0] = '\0';
		sr_manifest_init(&m);
		trc = try(arg, st, opts, seq, &m, why);
		/* Out of memory says nothing of the checkpoint: falling back to an
		 * older one would restore the wrong step where the newest would do
		 * once memory is back. */
		if (trc == TRY_BAD && sr_err_is_oom(why))
			trc = TRY_LOCAL;
		if (trc == TRY_OK) {
			if (stats != NULL) {
				*stats = m.stats;
				stats->seq = seq;
				stats->new_bytes = 0;
				stats->seconds = sr_mono() - t0;
			}
			sr_manifest_free(&m);
			rc = 0;
			break;
		}
		sr_chain_follow(&w, &m);
		sr_manifest_free(&m);
		if (trc == TRY_CANCELLED) {
			sr_err(err, "restore %s: cancelled", opts->job);
			rc = SR_CKPT_CANCELLED;
			break;
		}
		if (trc == TRY_MISMATCH) {
			sr_err(err, "restore %s: checkpoint %" PRIu64 ": %s", opts->job, seq, why);
			rc = SR_CKPT_MISMATCH;
			break;
		}
		if (trc == TRY_LOCAL) {
			sr_err(err, "restore %s: checkpoint %" PRIu64 ": %s", opts->job, seq, why);
			break;
		}
		if (nbad++ == 0)
			snprintf(first, sizeof first, "checkpoint %" PRIu64 ": %s", seq, why);
		if ((more = sr_chain_next(&w, &next)))
			sr_ckpt_say(opts, "checkpoint %" PRIu64 ": %s; falling back to checkpoint %" PRIu64,
			    seq, why, next);
		else {
			sr_ckpt_say(opts, "checkpoint %" PRIu64 ": %s; no older checkpoint", seq, why);
			if (w.note[0] != '\0')
				sr_ckpt_say(opts, "%s", w.note);
		}
	}
	if (rc == -1 && nbad > 0 && !more) {
		if (unusable != NULL)
			*unusable = 1;
		if (nbad > 1)
			sr_err(err, "restore %s: no usable checkpoint; %s (and %d older ones failed too)",
			    opts->job, first, nbad - 1);
		else
			sr_err(err, "restore %s: %s", opts->job, first);
	}
	sr_catalog_free(&cat);
	return rc;
}
