/*
 * latest.c: the LATEST pointer (latest.h): its forms parsed and written,
 * read from the store and put back by create-only or compare-and-swap.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"
#include "jobkeys.h"
#include "latest.h"
#include "manifest.h"
#include "pathsafe.h"
#include "util.h"

/* The end of every garbage warning: what readers do about it. */
#define LATEST_GARBAGE_TAIL "every manifest counts as committed and the newest is the " \
	"latest; the next save rewrites LATEST"

/* At most max decimal digits at buf[*i..len) with value <= lim: 1 and
 * *v, advancing *i; else 0. */
static int
digits(const char *buf, size_t len, size_t *i, int max, uint64_t lim, uint64_t *v)
{
	size_t j = *i;

	*v = 0;
	while (j < len && buf[j] >= '0' && buf[j] <= '9' && (int)(j - *i) <= max) {
		*v = *v * 10 + (uint64_t)(buf[j] - '0');
		j++;
	}
	if (j == *i || (int)(j - *i) > max || *v > lim)
		return 0;
	*i = j;
	return 1;
}

/*
 * The forms (doc/format.md): "SEQ", "SEQ EPOCH" or "none EPOCH", then a
 * newline. Without the newline a form is read as what it says, with a
 * warning: a writer that dropped it, or a hand repair with printf, meant
 * it, and calling it garbage would count a commit in flight as committed.
 * Anything else is garbage.
 */
void
sr_latest_parse(const char *job, const char *buf, size_t len, struct sr_latest *l)
{
	char q[64], what[64];
	size_t i = 0;
	int has_seq = 1, has_epoch = 0;

	l->state = SR_LATEST_GARBAGE;
	l->seq = l->epoch = 0;
	l->warning[0] = '\0';
	if (len >= 4 && memcmp(buf, "none", 4) == 0) {
		has_seq = 0;
		i = 4;
	} else if (!digits(buf, len, &i, SR_SEQ_DIGITS, SR_SEQ_MAX, &l->seq))
		goto garbage;
	if (i < len && buf[i] == ' ') {
		i++;
		if (!digits(buf, len, &i, SR_EPOCH_DIGITS, SR_EPOCH_MAX, &l->epoch))
			goto garbage;
		has_epoch = 1;
	}
	if (!has_seq && !has_epoch)
		goto garbage;
	if (i != len && !(buf[i] == '\n' && i + 1 == len))
		goto garbage;
	l->state = has_seq ? SR_LATEST_OK : SR_LATEST_NONE;
	if (i == len) {
		if (!has_epoch)
			snprintf(what, sizeof what, "%" PRIu64, l->seq);
		else if (has_seq)
			snprintf(what, sizeof what, "%" PRIu64 " at epoch %" PRIu64, l->seq, l->epoch);
		else
			snprintf(what, sizeof what, "no checkpoint yet at epoch %" PRIu64, l->epoch);
		snprintf(l->warning, sizeof l->warning, "warning: " SR_JOBKEY_LATEST_FMT " holds %.*s "
		    "without the newline that ends it: read as %s; the next save rewrites LATEST", job,
		    (int)len, buf, what);
	}
	return;
garbage:
	l->seq = l->epoch = 0;
	if (memchr(buf, '\0', len) != NULL)
		snprintf(q, sizeof q, "%zu bytes, a NUL among them", len);
	else
		sr_path_quote(buf, q, sizeof q);
	snprintf(l->warning, sizeof l->warning, "warning: " SR_JOBKEY_LATEST_FMT " is not a "
	    "checkpoint number (it holds %s): " LATEST_GARBAGE_TAIL, job, q);
}

int
sr_latest_read(struct sr_store *st, const char *job, struct sr_latest *l, char *err)
{
	char *key = sr_jobkey_latest(job, err), why[SR_ERRMAX];
	struct sr_object_info info;
	void *buf = NULL;
	size_t len = 0;
	int rc;

	memset(l, 0, sizeof *l);
	if (key == NULL)
		return sr_err_prefix(err, "read " SR_JOBKEY_LATEST_FMT, job);
	rc = sr_store_get(st, key, SR_LATEST_MAX, &buf, &len, l->etag, err);
	if (rc == SR_STORE_ERROR && sr_store_head(st, key, &info, why) == SR_STORE_OK &&
	    info.size > SR_LATEST_MAX) {
		err[0] = '\0';	/* not an error after all */
		free(key);
		l->state = SR_LATEST_GARBAGE;
		strlcpy(l->etag, info.etag, sizeof l->etag);
		snprintf(l->warning, sizeof l->warning, "warning: " SR_JOBKEY_LATEST_FMT " is not a "
		    "checkpoint number (it holds %" PRIu64 " bytes, more than the %d a pointer may have): "
		    LATEST_GARBAGE_TAIL, job, info.size, SR_LATEST_MAX);
		return 0;
	}
	free(key);
	if (rc == SR_STORE_NOTFOUND) {
		l->etag[0] = '\0';
		return 0;
	}
	if (rc != 0)
		return -1;
	sr_latest_parse(job, buf, len, l);
	free(buf);
	return 0;
}

void
sr_latest_text(int has_seq, uint64_t seq, uint64_t epoch, char *out, size_t len)
{
	if (!has_seq)
		snprintf(out, len, "none %" PRIu64 "\n", epoch);
	else if (epoch == 0)
		snprintf(out, len, "%" PRIu64 "\n", seq);	/* what every version reads */
	else
		snprintf(out, len, "%" PRIu64 " %" PRIu64 "\n", seq, epoch);
}

int
sr_latest_put(struct sr_store *st, const char *job, const struct sr_latest *from,
    const char *text, char *err)
{
	char *key = sr_jobkey_latest(job, err);
	int absent = from->state == SR_LATEST_ABSENT, rc;

	if (key == NULL)
		return sr_err_prefix(err, "write " SR_JOBKEY_LATEST_FMT, job);
	rc = sr_store_put(st, key, text, strlen(text), absent ? SR_PUT_CREATE : SR_PUT_MATCH,
	    absent ? NULL : from->etag, NULL, err);
	free(key);
	return rc;
}

uint64_t
sr_latest_epoch(const struct sr_latest *l)
{
	return l->state == SR_LATEST_OK || l->state == SR_LATEST_NONE ? l->epoch : 0;
}

int
sr_latest_fenced(char *err, const char *what, const char *job, uint64_t epoch)
{
	sr_err(err, "%s: job %s is now run by epoch %" PRIu64 " (a newer run took it over)", what,
	    job, epoch);
	return SR_CKPT_FENCED;
}
