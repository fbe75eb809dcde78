/*
 * list.c: sr_ckpt_list, the committed checkpoints of a job: LATEST's chain
 * walked from the newest (chain.h), each manifest loaded for its
 * statistics, then reported oldest first.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "chain.h"
#include "ckpt.h"
#include "manifest.h"
#include "util.h"

int
sr_ckpt_list(struct sr_store *st, const char *job,
    int (*fn)(const struct sr_ckpt_stats *ck, int is_latest, void *arg), void *arg, char *err)
{
	return sr_ckpt_list_log(st, NULL, job, fn, arg, err);
}

struct row {
	struct sr_ckpt_stats ck;
	char *problem;		/* why a restore would refuse it, or NULL */
};

int
sr_ckpt_list_log(struct sr_store *st, const struct sr_ckpt_opts *o, const char *job,
    int (*fn)(const struct sr_ckpt_stats *ck, int is_latest, void *arg), void *arg, char *err)
{
	struct sr_catalog c;
	struct sr_manifest m;
	struct sr_chain w;
	struct row *rows = NULL;
	char why[SR_ERRMAX];
	size_t n = 0, cap = 0, i;
	uint64_t seq;
	int rc = 0;

	if (sr_ckpt_job_check(job, err) == -1)
		return -1;
	if (sr_catalog_read(st, job, &c, err) == -1)
		return sr_err_prefix(err, "list checkpoints of %s", job);
	sr_catalog_warn(o, &c);
	sr_chain_begin(&w, job, &c);
	while (sr_chain_next(&w, &seq)) {
		int lrc = sr_catalog_load(st, job, seq, &m, why);

		if (lrc == -1) {
			sr_err(err, "list checkpoints of %s: %s", job, why);
			sr_manifest_free(&m);
			rc = -1;
			break;
		}
		sr_chain_follow(&w, &m);
		/* LATEST's own seq without a manifest is no checkpoint to list */
		if (lrc != SR_STORE_NOTFOUND) {
			if (n == cap) {
				cap = cap ? cap * 2 : 16;
				rows = sr_reallocarray(rows, cap, sizeof *rows);
			}
			rows[n].ck = m.stats;
			rows[n].ck.seq = seq;
			rows[n].problem = lrc == 0 ? NULL : sr_strdup(why);
			if (lrc != 0)
				rows[n].ck.step = -1;
			n++;
		}
		sr_manifest_free(&m);
	}
	if (rc == 0 && w.note[0] != '\0')
		sr_ckpt_say(o, "%s", w.note);
	/* Oldest first; the head of the chain is the latest. */
	for (i = n; rc == 0 && i > 0; i--) {
		rows[i - 1].ck.problem = rows[i - 1].problem;
		rc = fn(&rows[i - 1].ck, i == 1, arg);
	}
	for (i = 0; i < n; i++)
		free(rows[i].problem);
	free(rows);
	sr_catalog_free(&c);
	return rc;
}
