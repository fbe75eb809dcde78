/*
 * fence.c: the epoch rules of LATEST (fence.h): a commit's compare-and-swap
 * and a new holder's fence. Both retry a lost race from what they read
 * then; each lost race means another writer moved LATEST, at most once per
 * commit or fence, so the loops end quickly.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "chain.h"
#include "ckpt.h"
#include "fence.h"
#include "jobkeys.h"
#include "latest.h"
#include "util.h"

#define MAX_TRIES 1000

int
sr_latest_advance(struct sr_store *st, const char *job, uint64_t seq, uint64_t epoch,
    const struct sr_latest *from,
    int (*rebase)(void *arg, const struct sr_latest *now, char *err), void *arg, char *err)
{
	struct sr_latest now = *from;
	char text[64], what[96];
	int tries, rc = -1;

	sr_latest_text(1, seq, epoch, text, sizeof text);
	snprintf(what, sizeof what, "advance " SR_JOBKEY_LATEST_FMT " to %" PRIu64, job, seq);
	for (tries = 0; tries < MAX_TRIES; tries++) {
		if (sr_latest_epoch(&now) > epoch)
			return sr_latest_fenced(err, "nothing committed", job, now.epoch);
		rc = sr_latest_put(st, job, &now, text, err);
		if (rc == 0)
			return 0;
		if (rc != SR_STORE_PRECONDITION && rc != SR_STORE_EXISTS)
			return sr_err_prefix(err, "%s", what);
		if (sr_latest_read(st, job, &now, err) == -1)
			return sr_err_prefix(err, "%s", what);
		if (now.state == SR_LATEST_OK && now.seq == seq && now.epoch == epoch)
			return 0;	/* our own write: its reply was lost */
		if (sr_latest_epoch(&now) > epoch)
			continue;	/* refused above */
		if (now.state == SR_LATEST_OK && now.seq >= seq) {
			sr_err(err, "checkpoint %" PRIu64 " was overtaken by checkpoint %" PRIu64
			    " of another writer; nothing committed", seq, now.seq);
			return SR_CATALOG_OVERTAKEN;
		}
		if (rebase != NULL && rebase(arg, &now, err) == -1)
			return -1;
	}
	return sr_err(err, "%s: too many lost races", what);
}

int
sr_ckpt_fence(struct sr_store *st, const char *job, uint64_t epoch, char *err)
{
	return sr_ckpt_fence_log(st, NULL, job, epoch, err);
}

int
sr_ckpt_fence_log(struct sr_store *st, const struct sr_ckpt_opts *o, const char *job,
    uint64_t epoch, char *err)
{
	struct sr_catalog c;
	char text[64], what[96];
	uint64_t head = 0;
	int tries, has, rc;

	if (sr_ckpt_job_check(job, err) == -1)
		return -1;
	snprintf(what, sizeof what, "fence %s at epoch %" PRIu64, job, epoch);
	if (epoch > SR_EPOCH_MAX)
		return sr_err(err, "%s: epochs end at %llu", what, SR_EPOCH_MAX);
	for (tries = 0; tries < MAX_TRIES; tries++) {
		memset(&c, 0, sizeof c);
		if (sr_latest_read(st, job, &c.latest, err) == -1)
			return sr_err_prefix(err, "%s", what);
		if (tries == 0)
			sr_catalog_warn(o, &c);
		if (sr_latest_epoch(&c.latest) > epoch)
			return sr_latest_fenced(err, what, job, c.latest.epoch);
		if (epoch == 0 || ((c.latest.state == SR_LATEST_OK ||
		    c.latest.state == SR_LATEST_NONE) && c.latest.epoch == epoch))
			return 0;	/* nothing to move */
		/* Missing or garbage: what readers take as the newest (the
		 * repair the next save would make), found by a listing. */
		if (c.latest.state != SR_LATEST_OK && c.latest.state != SR_LATEST_NONE &&
		    sr_catalog_list_manifests(st, job, &c, err) == -1)
			return sr_err_prefix(err, "%s", what);
		has = sr_chain_head(&c, &head);
		sr_catalog_free(&c);
		sr_latest_text(has, head, epoch, text, sizeof text);
		rc = sr_latest_put(st, job, &c.latest, text, err);
		if (rc == 0)
			return 0;
		if (rc != SR_STORE_PRECONDITION && rc != SR_STORE_EXISTS)
			return sr_err_prefix(err, "%s", what);
	}
	return sr_err(err, "%s: too many lost races", what);
}
