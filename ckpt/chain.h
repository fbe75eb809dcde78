/*
 * chain.h: which checkpoints are committed (doc/format.md, "Committed"):
 * those on LATEST's chain. A walk starts at LATEST's seq and goes back
 * through each manifest's `parent`; a manifest without one (written before
 * the chain existed) hands over to the old rule, every listed manifest
 * below it; a LATEST that is missing or garbage makes every manifest
 * count, the newest first. The walk is lazy: the caller loads each seq it
 * is given and tells the walk what that manifest said, so a restore whose
 * first candidate is good reads no other manifest.
 *
 *	sr_chain_begin(&w, job, &cat);
 *	while (sr_chain_next(&w, &seq)) {
 *		rc = sr_catalog_load(st, job, seq, &m, err);
 *		...
 *		sr_chain_follow(&w, &m);
 *	}
 */
#ifndef SR_CHAIN_H
#define SR_CHAIN_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "manifest.h"

/* How the walk ended (or will end). */
enum sr_chain_end {
	SR_CHAIN_WHOLE = 0,	/* at the first checkpoint, or at a parent that is
				 * gone (retention deleted it and all below) */
	SR_CHAIN_BROKEN		/* at a manifest that could not say which came
				 * before it: what is listed below is unknown */
};

struct sr_chain {
	const char *job;
	const struct sr_catalog *c;
	int mode;		/* links, the old rule, or done */
	uint64_t cur;		/* the seq last given */
	uint64_t next;		/* links: the seq to give next */
	size_t below;		/* old rule: c->seqs[0 .. below) are left */
	int started;
	enum sr_chain_end end;
	uint64_t broken_at;	/* SR_CHAIN_BROKEN: the seq whose parent is unknown */
	/* A chain that ended above manifests still listed (broken, or at a
	 * parent that is missing): a whole warning line, naming the seq and
	 * how to restore an older one; else "". */
	char note[512];
};

/* Start a walk over c (which must outlive it). */
void sr_chain_begin(struct sr_chain *w, const char *job, const struct sr_catalog *c);

/* The next committed seq, newest first: 1 with *seq, or 0 at the end. The
 * first is LATEST's seq even when no manifest of it is listed (so that
 * its absence is reported); after that only listed seqs are given. */
int sr_chain_next(struct sr_chain *w, uint64_t *seq);

/* After sr_chain_next gave a seq: m is its manifest as sr_catalog_load
 * left it (whatever it returned: m->link is SR_LINK_UNKNOWN when the
 * manifest could not be read or its `parent` not parsed). */
void sr_chain_follow(struct sr_chain *w, const struct sr_manifest *m);

/* Whether the walk follows links now (LATEST's chain, not the old rule
 * nor done): only then does a manifest's link matter, so that a caller
 * looks one that its manifest could not say up elsewhere (restore-walk.c,
 * its commit record). */
int sr_chain_links(const struct sr_chain *w);

/* The seq readers take as the newest committed (the chain's head) and
 * that a new checkpoint names as its parent: LATEST's, or with LATEST
 * missing or garbage the newest listed; 0 when there is none (LATEST
 * "none EPOCH", or nothing at all). */
int sr_chain_head(const struct sr_catalog *c, uint64_t *seq);

#endif
