/*
 * catalog.c: a job's checkpoints as objects in the store: keys, the LATEST
 * pointer (read, and advanced by compare-and-swap), the list of committed
 * manifests, and the two operations that only look at the catalog,
 * sr_ckpt_list and sr_ckpt_gc (which also aborts the unfinished pack
 * uploads of saves that died). See catalog.h for what "committed" means.
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "ckpt.h"
#include "fault.h"
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
sr_ckpt_job_check(const char *job, char *err)
{
	const char *p;
	char q[256];
	int start = 1;

	if (job == NULL || *job == '\0')
		return sr_err(err, "job name is empty");
	if (strlen(job) > 512)
		return sr_err(err, "job name %s: longer than 512 bytes", sr_path_quote(job, q, sizeof q));
	for (p = job; *p != '\0'; p++) {
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

char *
sr_ckpt_manifest_key(const char *job, uint64_t seq)
{
	return sr_asprintf("%s/manifests/%0*" PRIu64 ".json", job, SR_SEQ_DIGITS, seq);
}

char *
sr_ckpt_latest_key(const char *job)
{
	return sr_asprintf("%s/LATEST", job);
}

/* Parse exactly SR_SEQ_DIGITS digits at s; returns the end or NULL. */
static const char *
parse_seq(const char *s, uint64_t *seq)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < SR_SEQ_DIGITS; i++) {
		if (s[i] < '0' || s[i] > '9')
			return NULL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*seq = v;
	return s + SR_SEQ_DIGITS;
}

/* The seq of a key J/manifests/<seq>.json; -1 for any other key. */
static int
manifest_key_seq(const char *job, const char *key, uint64_t *seq)
{
	size_t n = strlen(job);
	const char *p;

	if (strncmp(key, job, n) != 0 || strncmp(key + n, "/manifests/", 11) != 0)
		return -1;
	p = parse_seq(key + n + 11, seq);
	return p != NULL && strcmp(p, ".json") == 0 ? 0 : -1;
}

int
sr_ckpt_is_pack_key(const char *job, const char *key)
{
	size_t n = strlen(job);
	const char *p;
	uint64_t seq;

	if (strncmp(key, job, n) != 0 || strncmp(key + n, "/packs/", 7) != 0)
		return 0;
	if ((p = parse_seq(key + n + 7, &seq)) == NULL || *p++ != '-')
		return 0;
	if (strspn(p, "0123456789abcdef") == 0)
		return 0;
	p += strspn(p, "0123456789abcdef");
	return strcmp(p, ".tar") == 0;
}

struct list_acc {
	const char *job;
	struct sr_catalog *c;
	size_t cap;
};

static int
list_manifest_cb(const struct sr_object_info *info, void *arg)
{
	struct list_acc *acc = arg;
	struct sr_catalog *c = acc->c;
	uint64_t seq;

	if (manifest_key_seq(acc->job, info->key, &seq) == -1)
		return 0;	/* not ours: another tool's object, or a nested job's */
	if (c->n == acc->cap) {
		acc->cap = acc->cap ? acc->cap * 2 : 16;
		c->seqs = sr_reallocarray(c->seqs, acc->cap, sizeof *c->seqs);
		c->sizes = sr_reallocarray(c->sizes, acc->cap, sizeof *c->sizes);
	}
	c->seqs[c->n] = seq;
	c->sizes[c->n++] = info->size;
	return 0;
}

/* The end of every LATEST warning: what readers do about it. */
#define LATEST_GARBAGE_TAIL "every manifest counts as committed and the newest is the " \
	"latest; the next save rewrites LATEST"

/*
 * LATEST holds the decimal seq and a newline (doc/format.md). The digits
 * without the newline are read as that seq, with a warning: a writer that
 * dropped it, or a hand repair with printf, meant that number, and
 * treating it as garbage would count a commit in flight as committed.
 * Anything else is garbage. Fills c's state, seq and warning.
 */
static void
parse_latest(const char *job, const char *buf, size_t len, struct sr_catalog *c)
{
	char q[64];
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < len && i <= SR_SEQ_DIGITS && buf[i] >= '0' && buf[i] <= '9'; i++)
		v = v * 10 + (uint64_t)(buf[i] - '0');
	if (i > 0 && i <= SR_SEQ_DIGITS && (i == len || (buf[i] == '\n' && i + 1 == len))) {
		c->latest_state = SR_LATEST_OK;
		c->latest = v;
		if (i == len)
			snprintf(c->latest_warning, sizeof c->latest_warning, "warning: %s/LATEST "
			    "holds %" PRIu64 " without the newline that ends it: read as %" PRIu64
			    "; the next save rewrites LATEST", job, v, v);
		return;
	}
	c->latest_state = SR_LATEST_GARBAGE;
	if (memchr(buf, '\0', len) != NULL)
		snprintf(q, sizeof q, "%zu bytes, a NUL among them", len);
	else
		sr_path_quote(buf, q, sizeof q);
	snprintf(c->latest_warning, sizeof c->latest_warning, "warning: %s/LATEST is not a "
	    "checkpoint number (it holds %s): " LATEST_GARBAGE_TAIL, job, q);
}

/* Read LATEST into c's latest fields. An object too large to be a pointer
 * is garbage too (its etag, for the repairing CAS, from a HEAD). */
static int
read_latest(struct sr_store *st, const char *job, struct sr_catalog *c, char *err)
{
	char *key = sr_ckpt_latest_key(job), why[SR_ERRMAX];
	struct sr_object_info info;
	void *buf = NULL;
	size_t len = 0;
	int rc;

	c->latest_state = SR_LATEST_ABSENT;
	c->etag[0] = '\0';
	c->latest_warning[0] = '\0';
	rc = sr_store_get(st, key, SR_LATEST_MAX, &buf, &len, c->etag, err);
	if (rc == SR_STORE_ERROR && sr_store_head(st, key, &info, why) == SR_STORE_OK &&
	    info.size > SR_LATEST_MAX) {
		err[0] = '\0';	/* not an error after all */
		free(key);
		c->latest_state = SR_LATEST_GARBAGE;
		strlcpy(c->etag, info.etag, sizeof c->etag);
		snprintf(c->latest_warning, sizeof c->latest_warning, "warning: %s/LATEST is not a "
		    "checkpoint number (it holds %" PRIu64 " bytes, more than the %d a pointer may "
		    "have): " LATEST_GARBAGE_TAIL, job, info.size, SR_LATEST_MAX);
		return 0;
	}
	free(key);
	if (rc == SR_STORE_NOTFOUND)
		return 0;
	if (rc != 0)
		return -1;
	parse_latest(job, buf, len, c);
	free(buf);
	return 0;
}

void
sr_catalog_warn(const struct sr_ckpt_opts *o, const struct sr_catalog *c)
{
	if (c->latest_warning[0] != '\0')
		sr_ckpt_say(o, "%s", c->latest_warning);
}

static int
seq_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int
sr_catalog_read(struct sr_store *st, const char *job, struct sr_catalog *c, char *err)
{
	struct list_acc acc = { job, c, 0 };
	char *prefix;
	int rc;
	size_t i;

	memset(c, 0, sizeof *c);
	if (read_latest(st, job, c, err) == -1)
		return -1;
	prefix = sr_asprintf("%s/manifests/", job);
	rc = sr_store_list(st, prefix, list_manifest_cb, &acc, err);
	free(prefix);
	if (rc != 0) {
		sr_catalog_free(c);
		return -1;
	}
	/* Key order is numeric order already (zero-padded); sizes follow along
	 * only if that holds, which the check below makes sure of. */
	for (i = 1; i < c->n; i++) {
		if (c->seqs[i - 1] >= c->seqs[i]) {
			qsort(c->seqs, c->n, sizeof *c->seqs, seq_cmp);
			memset(c->sizes, 0, c->n * sizeof *c->sizes);
			break;
		}
	}
	c->ncommitted = c->n;
	if (c->latest_state == SR_LATEST_OK) {
		c->ncommitted = 0;
		while (c->ncommitted < c->n && c->seqs[c->ncommitted] <= c->latest)
			c->ncommitted++;
	}
	return 0;
}

void
sr_catalog_free(struct sr_catalog *c)
{
	free(c->seqs);
	free(c->sizes);
	c->seqs = c->sizes = NULL;
	c->n = c->ncommitted = 0;
}

int
sr_catalog_load(struct sr_store *st, const char *job, uint64_t seq, struct sr_manifest *m,
    char *err)
{
	char *key = sr_ckpt_manifest_key(job, seq);
	void *buf = NULL;
	size_t len = 0;
	int rc;

	sr_manifest_init(m);
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
		sr_err_prefix(err, "bad manifest %s", key);
		rc = SR_CATALOG_BAD;
	}
	free(buf);
	free(key);
	return rc;
}

int
sr_catalog_set_latest(struct sr_store *st, const char *job, uint64_t seq,
    const struct sr_catalog *c, char *err)
{
	char *key = sr_ckpt_latest_key(job), text[32], etag[SR_ETAG_MAX];
	struct sr_catalog now;
	enum sr_latest_state state = c->latest_state;
	int tries, rc = -1;

	snprintf(text, sizeof text, "%" PRIu64 "\n", seq);
	strlcpy(etag, c->etag, sizeof etag);
	/* Each lost race means another writer moved LATEST: at most one move
	 * per committed checkpoint, so this ends quickly. */
	for (tries = 0; tries < 1000; tries++) {
		rc = sr_store_put(st, key, text, strlen(text),
		    state == SR_LATEST_ABSENT ? SR_PUT_CREATE : SR_PUT_MATCH,
		    state == SR_LATEST_ABSENT ? NULL : etag, NULL, err);
		if (rc == 0)
			break;
		if (rc != SR_STORE_PRECONDITION && rc != SR_STORE_EXISTS)
			break;
		memset(&now, 0, sizeof now);
		if ((rc = read_latest(st, job, &now, err)) == -1)
			break;
		if (now.latest_state == SR_LATEST_OK && now.latest >= seq)
			break;	/* a newer commit already covers ours */
		state = now.latest_state;
		strlcpy(etag, now.etag, sizeof etag);
		rc = -1;
	}
	if (rc != 0 && tries == 1000)
		sr_err(err, "too many lost races");
	if (rc != 0)
		sr_err_prefix(err, "advance %s to %" PRIu64, key, seq);
	free(key);
	return rc == 0 ? 0 : -1;
}

/* ---- sr_ckpt_list ---- */

int
sr_ckpt_list(struct sr_store *st, const char *job,
    int (*fn)(const struct sr_ckpt_stats *ck, int is_latest, void *arg), void *arg, char *err)
{
	return sr_ckpt_list_log(st, NULL, job, fn, arg, err);
}

int
sr_ckpt_list_log(struct sr_store *st, const struct sr_ckpt_opts *o, const char *job,
    int (*fn)(const struct sr_ckpt_stats *ck, int is_latest, void *arg), void *arg, char *err)
{
	struct sr_catalog c;
	struct sr_manifest m;
	char why[SR_ERRMAX];
	size_t i;
	int rc = 0;

	if (sr_ckpt_job_check(job, err) == -1)
		return -1;
	if (sr_catalog_read(st, job, &c, err) == -1)
		return sr_err_prefix(err, "list checkpoints of %s", job);
	sr_catalog_warn(o, &c);
	for (i = 0; i < c.ncommitted && rc == 0; i++) {
		struct sr_ckpt_stats ck;
		int latest = c.latest_state == SR_LATEST_OK ? c.seqs[i] == c.latest :
		    i + 1 == c.ncommitted;
		int lrc = sr_catalog_load(st, job, c.seqs[i], &m, why);
		if (lrc == -1) {
			sr_err(err, "list checkpoints of %s: %s", job, why);
			sr_manifest_free(&m);
			rc = -1;
			break;
		}
		ck = m.stats;
		ck.seq = c.seqs[i];
		ck.problem = lrc == 0 ? NULL : why;
		if (lrc != 0)
			ck.step = -1;
		rc = fn(&ck, latest, arg);
		sr_manifest_free(&m);
	}
	sr_catalog_free(&c);
	return rc;
}

/* ---- sr_ckpt_gc ---- */

struct strset {
	char **v;
	size_t n, cap;
};

static void
strset_add(struct strset *s, const char *k)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->v = sr_reallocarray(s->v, s->cap, sizeof *s->v);
	}
	s->v[s->n++] = sr_strdup(k);
}

static int
str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
strset_has(const struct strset *s, const char *k)
{
	return s->n > 0 && bsearch(&k, s->v, s->n, sizeof *s->v, str_cmp) != NULL;
}

static void
strset_free(struct strset *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

struct gc_acc {
	const char *job;
	const struct strset *live;
	struct strset dead;
	uint64_t dead_bytes;
};

static int
gc_pack_cb(const struct sr_object_info *info, void *arg)
{
	struct gc_acc *g = arg;

	if (!sr_ckpt_is_pack_key(g->job, info->key) || strset_has(g->live, info->key))
		return 0;
	strset_add(&g->dead, info->key);
	g->dead_bytes += info->size;
	return 0;
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
	prefix = sr_asprintf("%s/packs/", job);
	rc = sr_store_abort_stale_uploads(st, prefix, older_than, aborted, err);
	free(prefix);
	return rc == 0 ? 0 : -1;
}

int
sr_ckpt_gc(struct sr_store *st, const char *job, int keep, uint64_t *deleted_bytes, char *err)
{
	return sr_ckpt_gc_log(st, NULL, job, keep, sr_now() - SR_GC_UPLOAD_AGE, deleted_bytes, err);
}

int
sr_ckpt_gc_log(struct sr_store *st, const struct sr_ckpt_opts *o, const char *job, int keep,
    double older_than, uint64_t *deleted_bytes, char *err)
{
	struct sr_catalog c;
	struct strset live = { 0 };
	struct gc_acc g;
	struct sr_manifest m;
	uint64_t freed = 0;
	size_t i, ndel = 0;
	char *prefix;
	int rc = -1;

	if (deleted_bytes != NULL)
		*deleted_bytes = 0;
	if (sr_ckpt_job_check(job, err) == -1)
		return -1;
	if (sr_catalog_read(st, job, &c, err) == -1)
		return sr_err_prefix(err, "gc %s", job);
	sr_catalog_warn(o, &c);
	if (keep > 0 && c.ncommitted > (size_t)keep)
		ndel = c.ncommitted - (size_t)keep;
	/* The packs every kept manifest references, in flight ones included.
	 * A manifest that is unusable references nothing a restore would
	 * read; one that cannot be read now stops gc before it deletes. */
	for (i = ndel; i < c.n; i++) {
		size_t e, k;
		int lrc = sr_catalog_load(st, job, c.seqs[i], &m, err);
		if (lrc == -1) {
			sr_manifest_free(&m);
			sr_err_prefix(err, "gc %s: nothing deleted", job);
			goto out;
		}
		for (e = 0; lrc == 0 && e < m.nentries; e++) {
			for (k = 0; k < m.entries[e].nchunks; k++) {
				const char *p = m.entries[e].chunks[k].pack;
				if (live.n == 0 || strcmp(live.v[live.n - 1], p) != 0)
					strset_add(&live, p);
			}
		}
		sr_manifest_free(&m);
	}
	if (live.n > 0)
		qsort(live.v, live.n, sizeof *live.v, str_cmp);
	/* Manifests first: a crash between the two steps leaves packs that
	 * nothing references (the next gc removes them), never a kept
	 * manifest without its packs. */
	for (i = 0; i < ndel; i++) {
		char *key = sr_ckpt_manifest_key(job, c.seqs[i]);
		int drc = sr_store_delete(st, key, err);
		free(key);
		if (drc != 0) {
			sr_err_prefix(err, "gc %s", job);
			goto out;
		}
		freed += c.sizes[i];
	}
	memset(&g, 0, sizeof g);
	g.job = job;
	g.live = &live;
	prefix = sr_asprintf("%s/packs/", job);
	sr_fault("ckpt-gc-list");	/* just before gc lists the packs */
	rc = sr_store_list(st, prefix, gc_pack_cb, &g, err);
	free(prefix);
	if (rc == 0)
		rc = sr_store_delete_many(st, (const char *const *)g.dead.v, g.dead.n, err);
	strset_free(&g.dead);
	if (rc != 0) {
		sr_err_prefix(err, "gc %s", job);
		rc = -1;
		goto out;
	}
	freed += g.dead_bytes;
	/* The parts of a save that died mid-upload are no object: only an
	 * abort of its multipart upload frees them. */
	{
		char why[SR_ERRMAX];
		int n = 0;

		if (sr_ckpt_gc_uploads(st, job, older_than, &n, why) == -1)
			sr_ckpt_say(o, "warning: gc %s: %s (aborted %d unfinished pack "
			    "upload%s; the next gc tries again)", job, why, n, n == 1 ? "" : "s");
		else if (n > 0)
			sr_ckpt_say(o, "gc %s: aborted %d unfinished pack upload%s left by saves "
			    "that never finished", job, n, n == 1 ? "" : "s");
	}
out:
	if (deleted_bytes != NULL)
		*deleted_bytes = freed;
	strset_free(&live);
	sr_catalog_free(&c);
	return rc;
}
