/*
 * catalog.c: a job's checkpoints as objects in the store: names and keys,
 * LATEST with the listing of manifests, one manifest loaded and checked,
 * and the helpers every operation shares (its log, its progress).
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "ckpt.h"
#include "jobkeys.h"
#include "pathsafe.h"
#include "util.h"

void
sr_ckpt_say(const struct sr_ckpt_opts *o, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (o == NULL || o->log == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	o->log(o->log_arg, msg);
}

void
sr_ckpt_progress(const struct sr_ckpt_opts *o, double *last, uint64_t done, uint64_t total)
{
	double now;

	if (o == NULL || o->progress == NULL)
		return;
	now = sr_mono();
	if (done != total && now - *last < 0.25)
		return;
	*last = now;
	o->progress(o->progress_arg, done, total);
}

int
sr_ckpt_resize(void *pp, size_t n, size_t size, char *err)
{
	void **v = pp, *p = sr_try_reallocarray(*v, n, size, err);

	if (p == NULL)
		return -1;
	*v = p;
	return 0;
}

int
sr_ckpt_job_check(const char *job, char *err)
{
	const char *p;
	char q[256];
	int start = 1;

	if (job == NULL || *job == '\0')
		return sr_err(err, "job name is empty");
	if (strlen(job) > 512)
		return sr_err(err, "job name %s: longer than 512 bytes", sr_path_quote(job, q, sizeof q));
	/* a reserved chain (jobkeys.h: "_workdir/NAME") is checked after its prefix */
	for (p = job + sr_jobkey_reserved_len(job); *p != '\0'; p++) {
		int alnum = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9');
		if (*p == '/' && !start) {
			start = 1;
			continue;
		}
		if (start ? !alnum : !(alnum || *p == '.' || *p == '_' || *p == '-'))
			return sr_err(err, "job name %s: segments are letters, digits, '.', '_' and '-',"
			    " starting with a letter or digit", sr_path_quote(job, q, sizeof q));
		start = 0;
	}
	if (start)
		return sr_err(err, "job name %s: ends with '/'", sr_path_quote(job, q, sizeof q));
	return 0;
}

struct list_acc {
	const char *job;
	struct sr_catalog *c;
	size_t cap;
	char err[SR_ERRMAX];	/* why the callback stopped the listing */
	uint64_t rec_seq, rec_size;	/* the commit record just listed (its
					 * key sorts right before its manifest's) */
	int rec;
};

static int
list_manifest_cb(const struct sr_object_info *info, void *arg)
{
	struct list_acc *acc = arg;
	struct sr_catalog *c = acc->c;
	uint64_t seq;

	if (sr_jobkey_commit_seq(acc->job, info->key, &acc->rec_seq) == 0) {
		acc->rec = 1;
		acc->rec_size = info->size;
		return 0;
	}
	if (sr_jobkey_manifest_seq(acc->job, info->key, &seq) == -1)
		return 0;	/* not ours: another tool's object, or a nested job's */
	if (c->n == acc->cap) {
		size_t cap = acc->cap ? acc->cap * 2 : 16;

		/* each array grown on its own: one that moved is kept at once */
		if (sr_ckpt_resize(&c->seqs, cap, sizeof *c->seqs, acc->err) == -1 ||
		    sr_ckpt_resize(&c->sizes, cap, sizeof *c->sizes, acc->err) == -1 ||
		    sr_ckpt_resize(&c->mtimes, cap, sizeof *c->mtimes, acc->err) == -1)
			return -1;
		acc->cap = cap;
	}
	c->seqs[c->n] = seq;
	c->mtimes[c->n] = info->mtime;
	c->sizes[c->n++] = info->size + (acc->rec && acc->rec_seq == seq ? acc->rec_size : 0);
	acc->rec = 0;
	return 0;
}

void
sr_catalog_warn(const struct sr_ckpt_opts *o, const struct sr_catalog *c)
{
	if (c->latest.warning[0] != '\0')
		sr_ckpt_say(o, "%s", c->latest.warning);
}

static int
seq_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int
sr_catalog_list_manifests(struct sr_store *st, const char *job, struct sr_catalog *c,
    char *err)
{
	struct list_acc acc = { job, c, 0, "", 0, 0, 0 };
	char *prefix = sr_jobkey_prefix(job, SR_JOBKEY_MANIFESTS, err);
	size_t i;
	int rc;

	if (prefix == NULL) {
		sr_catalog_free(c);
		return sr_err_prefix(err, "list the manifests of %s", job);
	}
	rc = sr_store_list(st, prefix, list_manifest_cb, &acc, err);
	free(prefix);
	if (rc != 0) {
		if (acc.err[0] != '\0')
			sr_err(err, "list the manifests of %s: %s", job, acc.err);
		sr_catalog_free(c);
		return -1;
	}
	/* Key order is numeric order already (zero-padded); sizes and times
	 * follow along only if that holds, which the check below makes sure
	 * of (a store that lists out of order gets them zeroed: nothing is
	 * then taken for old by gc). */
	for (i = 1; i < c->n; i++) {
		if (c->seqs[i - 1] >= c->seqs[i]) {
			sr_sort(c->seqs, c->n, sizeof *c->seqs, seq_cmp);
			memset(c->sizes, 0, c->n * sizeof *c->sizes);
			for (i = 0; i < c->n; i++)
				c->mtimes[i] = sr_now();
			break;
		}
	}
	return 0;
}

int
sr_catalog_read(struct sr_store *st, const char *job, struct sr_catalog *c, char *err)
{
	memset(c, 0, sizeof *c);
	if (sr_latest_read(st, job, &c->latest, err) == -1)
		return -1;
	return sr_catalog_list_manifests(st, job, c, err);
}

long
sr_catalog_find(const struct sr_catalog *c, uint64_t seq)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->seqs[mid] == seq)
			return (long)mid;
		if (c->seqs[mid] < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

void
sr_catalog_free(struct sr_catalog *c)
{
	free(c->seqs);
	free(c->sizes);
	free(c->mtimes);
	c->seqs = c->sizes = NULL;
	c->mtimes = NULL;
	c->n = 0;
}

int
sr_catalog_load(struct sr_store *st, const char *job, uint64_t seq, struct sr_manifest *m,
    char *err)
{
	char *key = sr_jobkey_manifest(job, seq, err);
	void *buf = NULL;
	size_t len = 0;
	int rc;

	sr_manifest_init(m);
	if (key == NULL)
		return sr_err_prefix(err, "load manifest %" PRIu64 " of %s", seq, job);
	rc = sr_store_get(st, key, SR_MANIFEST_MAX, &buf, &len, NULL, err);
	if (rc == SR_STORE_NOTFOUND) {
		sr_err(err, "manifest %s is missing", key);
		free(key);
		return SR_STORE_NOTFOUND;
	}
	if (rc != 0) {
		free(key);
		return -1;
	}
	if (sr_manifest_parse(buf, len, m, err) == -1 ||
	    sr_manifest_validate(m, job, seq, err) == -1) {
		/* out of memory says nothing of the manifest */
		if (sr_err_is_oom(err)) {
			sr_err_prefix(err, "load manifest %s", key);
			rc = -1;
		} else {
			sr_err_prefix(err, "bad manifest %s", key);
			rc = SR_CATALOG_BAD;
			m->damaged = 1;
		}
	}
	free(buf);
	free(key);
	return rc;
}

/* The text of a commit record; the largest is under 96 bytes. */
static void
commit_text(uint64_t seq, enum sr_mlink link, uint64_t parent, uint64_t epoch, char *out,
    size_t len)
{
	if (link == SR_LINK_PARENT)
		snprintf(out, len, "commit %" PRIu64 " parent %" PRIu64 " epoch %" PRIu64 "\n", seq,
		    parent, epoch);
	else
		snprintf(out, len, "commit %" PRIu64 " parent none epoch %" PRIu64 "\n", seq, epoch);
}

int
sr_commit_put(struct sr_store *st, const char *job, uint64_t seq, enum sr_mlink link,
    uint64_t parent, uint64_t epoch, char *err)
{
	char *key = sr_jobkey_commit(job, seq, err), text[96];
	int rc;

	if (key == NULL)
		return sr_err_prefix(err, "write the commit record of checkpoint %" PRIu64, seq);
	commit_text(seq, link, parent, epoch, text, sizeof text);
	rc = sr_store_put(st, key, text, strlen(text), SR_PUT_OVERWRITE, NULL, NULL, err);
	free(key);
	return rc == 0 ? 0 : sr_err_prefix(err, "write the commit record of checkpoint %" PRIu64,
	    seq);
}

int
sr_ckpt_commit_record(struct sr_store *st, const char *job, uint64_t seq, uint64_t epoch,
    char *err)
{
	struct sr_manifest m;
	int rc;

	rc = sr_catalog_load(st, job, seq, &m, err);
	if (rc == 0)
		rc = sr_commit_put(st, job, seq, m.link, m.parent, epoch, err);
	else
		sr_err_prefix(err, "write the commit record of checkpoint %" PRIu64, seq);
	sr_manifest_free(&m);
	return rc == 0 ? 0 : -1;
}

int
sr_commit_get(struct sr_store *st, const char *job, uint64_t seq, enum sr_mlink *link,
    uint64_t *parent, char *why)
{
	char *key = sr_jobkey_commit(job, seq, why), text[96];
	const char *p;
	void *buf = NULL;
	size_t len = 0;
	uint64_t par = 0, epoch;
	enum sr_mlink l = SR_LINK_PARENT;
	int rc;

	if (key == NULL)
		return -1;
	rc = sr_store_get(st, key, sizeof text - 1, &buf, &len, NULL, why);
	if (rc == SR_STORE_NOTFOUND) {
		sr_err(why, "%s is missing", key);
		rc = 0;
	} else if (rc != 0) {
		sr_err_prefix(why, "read %s", key);
		rc = -1;
	} else {
		/* Exactly what sr_commit_put writes for seq, nothing else: the
		 * numbers read, the text rebuilt and compared byte for byte. */
		memcpy(text, buf, len);
		text[len] = '\0';
		p = text + strcspn(text, "0123456789");
		p = (p = strstr(p, "parent ")) == NULL ? "" : p + 7;
		if (strncmp(p, "none ", 5) == 0)
			l = SR_LINK_NONE;
		else
			par = strtoull(p, NULL, 10);
		p = (p = strstr(p, "epoch ")) == NULL ? "0" : p + 6;
		epoch = strtoull(p, NULL, 10);
		{
			char again[96];

			commit_text(seq, l, par, epoch, again, sizeof again);
			rc = strlen(again) == len && memcmp(again, text, len) == 0 &&
			    (l == SR_LINK_NONE || par < seq);
		}
		if (rc == 1) {
			*link = l;
			*parent = par;
		} else
			sr_err(why, "%s is not a commit record of checkpoint %" PRIu64, key, seq);
	}
	free(buf);
	free(key);
	return rc;
}

int
sr_ckpt_gc_uploads(struct sr_store *st, const char *job, double older_than, int *aborted,
    char *err)
{
	char *prefix;
	int rc;

	if (aborted != NULL)
		*aborted = 0;
	if (sr_ckpt_job_check(job, err) == -1)
		return -1;
	if ((prefix = sr_jobkey_prefix(job, SR_JOBKEY_PACKS, err)) == NULL)
		return sr_err_prefix(err, "abort the stale uploads of %s", job);
	rc = sr_store_abort_stale_uploads(st, prefix, older_than, aborted, err);
	free(prefix);
	return rc == 0 ? 0 : -1;
}
