/*
 * chain.c: the walk over LATEST's chain of parents (chain.h). Each step
 * goes to a lower seq (a parent at or above its child is refused), so a
 * walk ends after at most as many steps as there are manifests listed,
 * plus LATEST's own.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "chain.h"
#include "jobkeys.h"
#include "manifest.h"

enum { WALK_LINKS, WALK_OLD, WALK_DONE };

/* How many listed seqs are below seq. */
static size_t
count_below(const struct sr_catalog *c, uint64_t seq)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->seqs[mid] < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The chain ends at w->cur, below which `below` is listed: say so if
 * anything is (why completes "checkpoint N of J ..."). */
static void
ends(struct sr_chain *w, uint64_t below, const char *why)
{
	size_t older = count_below(w->c, below);

	w->mode = WALK_DONE;
	if (older == 0)
		return;
	snprintf(w->note, sizeof w->note, "warning: checkpoint %" PRIu64 " of %s %s: the chain of "
	    "committed checkpoints ends there, and the %zu older manifest%s listed %s not "
	    "restored (to restore one, write its number into " SR_JOBKEY_LATEST_FMT ")", w->cur,
	    w->job, why, older, older == 1 ? "" : "s", older == 1 ? "is" : "are", w->job);
}

/* The chain cannot go on from w->cur: what is below is unknown. */
static void
broken(struct sr_chain *w, const char *why)
{
	w->end = SR_CHAIN_BROKEN;
	w->broken_at = w->cur;
	ends(w, w->cur, why);
}

int
sr_chain_head(const struct sr_catalog *c, uint64_t *seq)
{
	switch (c->latest.state) {
	case SR_LATEST_OK:
		*seq = c->latest.seq;
		return 1;
	case SR_LATEST_NONE:
		return 0;
	default:
		if (c->n == 0)
			return 0;
		*seq = c->seqs[c->n - 1];
		return 1;
	}
}

void
sr_chain_begin(struct sr_chain *w, const char *job, const struct sr_catalog *c)
{
	memset(w, 0, sizeof *w);
	w->job = job;
	w->c = c;
	switch (c->latest.state) {
	case SR_LATEST_OK:
		w->mode = WALK_LINKS;
		w->next = c->latest.seq;
		break;
	case SR_LATEST_NONE:
		w->mode = WALK_DONE;	/* fenced before anything was committed */
		break;
	default:
		/* missing or garbage: every manifest counts, as it always did */
		w->mode = WALK_OLD;
		w->below = c->n;
		break;
	}
}

int
sr_chain_next(struct sr_chain *w, uint64_t *seq)
{
	switch (w->mode) {
	case WALK_LINKS:
		if (w->started && sr_catalog_find(w->c, w->next) < 0) {
			/* Gone: retention deletes the oldest first, so what is
			 * listed below is off the chain (a stale writer's), or
			 * a hand took a manifest out of its middle. */
			char why[96];

			snprintf(why, sizeof why, "names as its parent checkpoint %" PRIu64 ", which "
			    "is missing", w->next);
			ends(w, w->next, why);
			return 0;
		}
		w->started = 1;
		w->cur = *seq = w->next;
		return 1;
	case WALK_OLD:
		if (w->below == 0) {
			w->mode = WALK_DONE;
			return 0;
		}
		w->cur = *seq = w->c->seqs[--w->below];
		return 1;
	default:
		return 0;
	}
}

int
sr_chain_links(const struct sr_chain *w)
{
	return w->mode == WALK_LINKS;
}

void
sr_chain_follow(struct sr_chain *w, const struct sr_manifest *m)
{
	if (w->mode != WALK_LINKS)
		return;		/* the old rule needs no links */
	switch (m->link) {
	case SR_LINK_PARENT:
		if (m->parent < w->cur) {
			w->next = m->parent;
			return;
		}
		broken(w, "names a parent that is not below it");
		return;
	case SR_LINK_NONE:
		w->mode = WALK_DONE;	/* the chain's first checkpoint */
		return;
	case SR_LINK_OLD:
		/* written before the chain: the old rule below it */
		w->mode = WALK_OLD;
		w->below = count_below(w->c, w->cur);
		return;
	default:
		broken(w, "cannot say which checkpoint came before it");
		return;
	}
}
