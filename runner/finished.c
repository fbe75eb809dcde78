/*
 * finished.c: the FINISHED marker. A job that ended with exit 0 records
 * which checkpoint was the newest then (J/FINISHED holds its seq), so that
 * running it again starts afresh instead of resuming the end of the
 * finished run; a checkpoint committed after it (a new run that got
 * further) makes it stale.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "jobkeys.h"
#include "run-int.h"
#include "util.h"

static int
latest_cb(const struct sr_ckpt_stats *ck, int is_latest, void *arg)
{
	if (is_latest)
		*(long long *)arg = (long long)ck->seq;
	return 0;
}

/* The sequence number of the job's newest committed checkpoint, -1 if none. */
static long long
latest_seq(struct run *r)
{
	char err[SR_ERRMAX];
	long long seq = -1;

	if (sr_ckpt_list(r->st, r->js->name, latest_cb, &seq, err) == -1)
		return -1;
	return seq;
}

static char *
finished_key(const struct run *r)
{
	char err[SR_ERRMAX], *key = sr_jobkey_finished(r->js->name, err);

	if (key == NULL)
		sr_fatal("%s", err);	/* the supervisor's rule for out of memory */
	return key;
}

void
sr_run_mark_finished(struct run *r)
{
	char err[SR_ERRMAX], buf[64], *key = finished_key(r);
	int n = snprintf(buf, sizeof buf, "%lld\n", latest_seq(r));

	if (sr_store_put(r->st, key, buf, (size_t)n, SR_PUT_OVERWRITE, NULL, NULL, err) != 0)
		sr_tl(&r->tl, 1, "warning", "%s (the next run of this job resumes instead of starting afresh)", err);
	free(key);
}

int
sr_run_finished_before(struct run *r, long long *seq)
{
	char err[SR_ERRMAX], *key = finished_key(r), *end;
	void *buf;
	size_t len;
	long long fseq;
	int rc;

	rc = sr_store_get(r->st, key, 64, &buf, &len, NULL, err);
	free(key);
	if (rc != SR_STORE_OK)
		return 0;
	fseq = strtoll(buf, &end, 10);
	rc = end != buf && (*end == '\n' || *end == '\0');
	free(buf);
	*seq = latest_seq(r);
	return rc && fseq == *seq;
}
