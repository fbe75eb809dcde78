/*
 * restore-walk.c: the candidates of a restore, newest first along LATEST's
 * chain (restore.h): LATEST's seq even when its manifest is not listed
 * (so that its absence is reported), then what each failed one names as
 * its parent, saying each fallback through opts->log and, when none is
 * left, what the newest one's problem was and how many older ones failed.
 * A manifest that cannot say its parent (damaged, or of a newer version)
 * hands over to its commit record (catalog.h), which only the writer that
 * committed it wrote: the walk stays on the chain, and says so.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "chain.h"
#include "ckpt.h"
#include "jobkeys.h"
#include "manifest.h"
#include "restore.h"
#include "util.h"

/* A damaged manifest passed by its commit record. */
struct passed {
	uint64_t seq;		/* the newest one passed so */
	uint64_t parent;	/* what its record names */
	char why[SR_ERRMAX];	/* why its manifest could not say it */
	int n;
};

/* m, seq's manifest, is damaged and cannot say its parent: take it from
 * seq's commit record when the walk follows links. Only damage: after a
 * store error the manifest may well be sound (the newest would restore
 * once the store is back), and a missing one is no damage either. */
static void
link_from_record(struct sr_store *st, const struct sr_ckpt_opts *opts,
    const struct sr_chain *w, uint64_t seq,
    struct sr_manifest *m, const char *why, struct passed *p)
{
	char rwhy[SR_ERRMAX];
	enum sr_mlink link;
	uint64_t parent;

	if (!m->damaged || m->link != SR_LINK_UNKNOWN || !sr_chain_links(w))
		return;
	/* None (an older version's commit, or a lost put) or unreadable: the
	 * chain ends here, as chain.c says. */
	if (sr_commit_get(st, opts->job, seq, &link, &parent, rwhy) != 1)
		return;
	m->link = link;
	m->parent = parent;
	if (p->n++ == 0 && link == SR_LINK_PARENT) {
		p->seq = seq;
		p->parent = parent;
		strlcpy(p->why, why, sizeof p->why);
	}
}

/* Restored seq (its step) past a damaged manifest: say which, and what. */
static void
say_passed(const struct sr_ckpt_opts *opts, const struct passed *p, uint64_t seq,
    long long step)
{
	char kerr[SR_ERRMAX], *mkey = sr_jobkey_manifest(opts->job, p->seq, kerr);
	const char *why = p->why, *key = mkey != NULL ? mkey : "(its key: out of memory)";
	size_t n = strlen("bad manifest "), k = strlen(key);

	/* the load's "bad manifest KEY: " said once, by the key */
	if (strncmp(why, "bad manifest ", n) == 0 && strncmp(why + n, key, k) == 0 &&
	    strncmp(why + n + k, ": ", 2) == 0)
		why += n + k + 2;
	sr_ckpt_say(opts, "warning: restored checkpoint %" PRIu64 " (step %lld) instead of "
	    "checkpoint %" PRIu64 ", whose manifest %s cannot be read (%s): checkpoint %" PRIu64
	    " is %s committed, as the commit record of %" PRIu64 " says", seq, step, p->seq, key,
	    why, seq, seq == p->parent ? "the newest older one" : "an older one", p->seq);
	free(mkey);
}

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
	struct passed passed = { 0, 0, "", 0 };
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
			if (passed.n > 0)
				say_passed(opts, &passed, seq, m.stats.step);
			sr_manifest_free(&m);
			rc = 0;
			break;
		}
		if (trc == TRY_BAD)
			link_from_record(st, opts, &w, seq, &m, why, &passed);
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
