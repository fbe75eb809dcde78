/*
 * gc.c: sr_ckpt_gc, retention and garbage collection of a job's
 * checkpoints (doc/format.md, "Listing, retention and gc").
 *
 * A commit may be in flight elsewhere while gc runs (another writer, or a
 * run that lost its lease and does not know it yet), and its packs exist
 * before its manifest does. So gc lists the packs before it reads the
 * manifests: a pack uploaded later is not in its list at all, and one in
 * the list whose manifest is written after the manifests were read is
 * young. Everything gc did not see committed is kept while it is younger
 * than the grace period (the age of each object by the store's clock,
 * taken when gc started: a gc that pauses never finds things older than
 * they were). gc reads LATEST first and does nothing at all when a run of
 * a higher epoch than its own holds the job.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "chain.h"
#include "ckpt.h"
#include "fault.h"
#include "jobkeys.h"
#include "latest.h"
#include "manifest.h"
#include "util.h"

struct strset {
	char **v;
	size_t n, cap;
};

/* 0, or -1 with err (out of memory: then gc must delete nothing, since
 * what it failed to record may be live). */
static int
strset_add(struct strset *s, const char *k, char *err)
{
	char *copy;

	if (s->n == s->cap) {
		if (sr_ckpt_resize(&s->v, s->cap ? s->cap * 2 : 16, sizeof *s->v, err) == -1)
			return -1;
		s->cap = s->cap ? s->cap * 2 : 16;
	}
	if ((copy = sr_try_strdup(k, err)) == NULL)
		return -1;
	s->v[s->n++] = copy;
	return 0;
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

/* The job's packs as listed before the manifests were read. */
struct pack_list {
	const char *job;
	struct strset keys;
	uint64_t *sizes;
	double *mtimes;
	size_t cap;
	char err[SR_ERRMAX];	/* why pack_cb stopped the listing */
};

static int
pack_cb(const struct sr_object_info *info, void *arg)
{
	struct pack_list *p = arg;

	if (!sr_jobkey_is_pack(p->job, info->key))
		return 0;	/* not a pack: never deleted */
	if (p->keys.n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;

		if (sr_ckpt_resize(&p->sizes, cap, sizeof *p->sizes, p->err) == -1 ||
		    sr_ckpt_resize(&p->mtimes, cap, sizeof *p->mtimes, p->err) == -1)
			return -1;
		p->cap = cap;
	}
	p->sizes[p->keys.n] = info->size;
	p->mtimes[p->keys.n] = info->mtime;
	return strset_add(&p->keys, info->key, p->err);
}

/* Add the packs m references to live: 0, or -1 with err. */
static int
add_packs(struct strset *live, const struct sr_manifest *m, char *err)
{
	size_t i;

	for (i = 0; i < m->npacks; i++) {
		if (strset_add(live, m->packs[i], err) == -1)
			return -1;
	}
	return 0;
}

/* FATE_RETIRE: committed, older than the newest keep; FATE_DELETE: off
 * the chain (never committed) and old. */
enum fate { FATE_UNSEEN = 0, FATE_KEEP, FATE_DELETE, FATE_RETIRE };

/* Load manifest seq for its packs (kept: they must stay). An unusable
 * one references nothing a restore would read; one that cannot be read
 * now stops gc before it deletes anything (-1). */
static int
keep_packs_of(struct sr_store *st, const char *job, uint64_t seq, struct strset *live,
    char *err)
{
	struct sr_manifest m;
	int rc = sr_catalog_load(st, job, seq, &m, err);

	if (rc == 0 && add_packs(live, &m, err) == -1)
		rc = -1;
	sr_manifest_free(&m);
	return rc == -1 ? -1 : 0;
}

/* Tell o->gc_each of manifest seq, retired or off the chain (a retired
 * one's commit record goes with it, uncounted: a few bytes). buf is
 * scratch of SR_ERRMAX bytes: a key that cannot be built (out of memory)
 * is not told. */
static void
tell(const struct sr_ckpt_opts *o, const char *job, uint64_t seq, uint64_t size, int retired,
    char *buf)
{
	char *key;

	if (o == NULL || o->gc_each == NULL || (key = sr_jobkey_manifest(job, seq, buf)) == NULL)
		return;
	o->gc_each(o->gc_arg, key, size, retired ? "manifest of a retired checkpoint" :
	    "manifest of a save that never committed");
	free(key);
}

static int
upload_cb(const char *key, double initiated, void *arg)
{
	const struct sr_ckpt_opts *o = arg;

	(void)initiated;
	o->gc_each(o->gc_arg, key, SR_GC_SIZE_UNKNOWN, "unfinished upload of a pack (its "
	    "parts; aborted, not deleted)");
	return 0;
}

/* A dry run's list of the unfinished pack uploads a gc would abort, told
 * to o->gc_each; one that cannot be listed is a warning, as an abort that
 * fails is. */
static void
list_uploads(struct sr_store *st, const struct sr_ckpt_opts *o, const char *job,
    double older_than)
{
	char why[SR_ERRMAX], *prefix;

	if (o->gc_each == NULL)
		return;
	if ((prefix = sr_jobkey_prefix(job, SR_JOBKEY_PACKS, why)) == NULL ||
	    sr_store_list_stale_uploads(st, prefix, older_than, upload_cb, (void *)o, why) != 0)
		sr_ckpt_say(o, "warning: gc %s: list the unfinished uploads: %s", job, why);
	free(prefix);
}

struct parts_sweep {
	const struct sr_ckpt_opts *o;
	const char *job;
	double older_than;
	struct strset keys;
	uint64_t *sizes;	/* of keys */
	size_t cap;
	uint64_t bytes;
	char err[SR_ERRMAX];
};

static int
part_cb(const struct sr_object_info *info, void *arg)
{
	struct parts_sweep *p = arg;

	if (!sr_jobkey_is_part(p->job, info->key) || info->mtime > p->older_than)
		return 0;
	if (p->keys.n == p->cap) {
		if (sr_ckpt_resize(&p->sizes, p->cap ? p->cap * 2 : 16, sizeof *p->sizes,
		    p->err) == -1)
			return -1;
		p->cap = p->cap ? p->cap * 2 : 16;
	}
	p->sizes[p->keys.n] = info->size;
	if (strset_add(&p->keys, info->key, p->err) == -1)
		return -1;
	p->bytes += info->size;
	return 0;
}

int
sr_ckpt_gc_parts(struct sr_store *st, const struct sr_ckpt_opts *o, const char *job,
    double older_than, uint64_t *bytes, char *err)
{
	struct parts_sweep p;
	char *prefix;
	size_t i;
	int rc;

	if (bytes != NULL)
		*bytes = 0;
	if (sr_ckpt_job_check(job, err) == -1)
		return -1;
	memset(&p, 0, sizeof p);
	p.o = o;
	p.job = job;
	p.older_than = older_than;
	if ((prefix = sr_jobkey_prefix(job, SR_JOBKEY_PARTS, err)) == NULL)
		return sr_err_prefix(err, "gc the parts of %s", job);
	rc = sr_store_list(st, prefix, part_cb, &p, err);
	free(prefix);
	if (rc != 0 && p.err[0] != '\0')
		sr_err(err, "%s", p.err);
	if (rc == 0 && (o == NULL || !o->gc_dry_run))
		rc = sr_store_delete_many(st, (const char *const *)p.keys.v, p.keys.n, err);
	for (i = 0; rc == 0 && o != NULL && o->gc_each != NULL && i < p.keys.n; i++)
		o->gc_each(o->gc_arg, p.keys.v[i], p.sizes[i],
		    "part of a gang's or ranks' save that never merged");
	strset_free(&p.keys);
	free(p.sizes);
	if (rc != 0)
		return sr_err_prefix(err, "gc the parts of %s", job);
	if (bytes != NULL)
		*bytes = p.bytes;
	return 0;
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
	struct pack_list packs;
	struct strset live = { 0 }, dropped = { 0 }, dead = { 0 };
	struct sr_manifest m;
	struct sr_chain w;
	enum fate *fate = NULL;
	double grace = o == NULL || o->gc_grace == 0 ? SR_CKPT_GC_GRACE : o->gc_grace;
	double young = sr_now() - (grace > 0 ? grace : 0);	/* mtimes after it are young */
	uint64_t epoch = o != NULL ? o->epoch : 0, freed = 0, dead_bytes = 0, seq;
	size_t i, kept = 0;
	char *prefix;
	int rc = -1;

	if (deleted_bytes != NULL)
		*deleted_bytes = 0;
	if (sr_ckpt_job_check(job, err) == -1)
		return -1;
	memset(&c, 0, sizeof c);
	memset(&packs, 0, sizeof packs);
	packs.job = job;
	if (sr_latest_read(st, job, &c.latest, err) == -1)
		return sr_err_prefix(err, "gc %s", job);
	if (sr_latest_epoch(&c.latest) > epoch) {
		char what[600];

		snprintf(what, sizeof what, "gc %s: nothing deleted", job);
		return sr_latest_fenced(err, what, job, c.latest.epoch);
	}
	sr_catalog_warn(o, &c);
	if ((prefix = sr_jobkey_prefix(job, SR_JOBKEY_PACKS, err)) == NULL) {
		rc = sr_err_prefix(err, "gc %s: nothing deleted", job);
		goto out;
	}
	sr_fault("ckpt-gc-list");	/* just before gc lists the packs */
	rc = sr_store_list(st, prefix, pack_cb, &packs, err);
	free(prefix);
	if (rc != 0 && packs.err[0] != '\0')
		sr_err(err, "list the packs: %s", packs.err);
	if (rc != 0 || sr_catalog_list_manifests(st, job, &c, err) == -1) {
		rc = sr_err_prefix(err, "gc %s", job);
		goto out;
	}
	rc = -1;
	if ((fate = sr_try_calloc(c.n + 1, sizeof *fate, err)) == NULL) {
		sr_err_prefix(err, "gc %s: nothing deleted", job);
		goto out;
	}
	/* The chain: its newest `keep` stay, with their packs; the rest go. */
	sr_chain_begin(&w, job, &c);
	while (sr_chain_next(&w, &seq)) {
		long at = sr_catalog_find(&c, seq);
		int lrc = sr_catalog_load(st, job, seq, &m, err);

		if (lrc == -1) {
			sr_manifest_free(&m);
			sr_err_prefix(err, "gc %s: nothing deleted", job);
			goto out;
		}
		sr_chain_follow(&w, &m);
		if (at >= 0) {
			fate[at] = keep <= 0 || kept < (size_t)keep ? FATE_KEEP : FATE_RETIRE;
			if (lrc == 0 && add_packs(fate[at] == FATE_KEEP ? &live : &dropped, &m,
			    err) == -1) {
				sr_manifest_free(&m);
				sr_err_prefix(err, "gc %s: nothing deleted", job);
				goto out;
			}
			kept++;
		}
		sr_manifest_free(&m);
	}
	if (w.note[0] != '\0')
		sr_ckpt_say(o, "%s", w.note);
	/* Off the chain: a commit in flight, or what a stale or killed writer
	 * left; kept while young. Below a manifest that could not say which
	 * came before it nothing is known: all of it stays. */
	for (i = 0; i < c.n; i++) {
		if (fate[i] != FATE_UNSEEN)
			continue;
		if ((w.end == SR_CHAIN_BROKEN && c.seqs[i] < w.broken_at) || c.mtimes[i] > young) {
			fate[i] = FATE_KEEP;
			if (keep_packs_of(st, job, c.seqs[i], &live, err) == -1) {
				sr_err_prefix(err, "gc %s: nothing deleted", job);
				goto out;
			}
		} else
			fate[i] = FATE_DELETE;
	}
	if (live.n > 0)
		sr_sort(live.v, live.n, sizeof *live.v, str_cmp);
	if (dropped.n > 0)
		sr_sort(dropped.v, dropped.n, sizeof *dropped.v, str_cmp);
	/* Manifests first: a crash between the two steps leaves packs that
	 * nothing references (the next gc removes them), never a kept
	 * manifest without its packs. Oldest first: an interrupted retention
	 * leaves the chain whole, ending at a parent that is gone. */
	for (i = 0; i < c.n; i++) {
		char *key;
		int drc;

		if (fate[i] != FATE_DELETE && fate[i] != FATE_RETIRE)
			continue;
		if (o != NULL && o->gc_dry_run) {
			tell(o, job, c.seqs[i], c.sizes[i], fate[i] == FATE_RETIRE, err);
			freed += c.sizes[i];
			continue;
		}
		/* Its commit record first (none for one off the chain): a
		 * crash between the two leaves a manifest without one, never a
		 * record that a later manifest of its seq could be taken by. */
		if ((key = sr_jobkey_commit(job, c.seqs[i], err)) == NULL) {
			sr_err_prefix(err, "gc %s", job);
			goto out;
		}
		drc = sr_store_delete(st, key, err);
		free(key);
		if (drc == 0 && (key = sr_jobkey_manifest(job, c.seqs[i], err)) == NULL) {
			sr_err_prefix(err, "gc %s", job);
			goto out;
		}
		if (drc == 0) {
			drc = sr_store_delete(st, key, err);
			free(key);
		}
		if (drc != 0) {
			sr_err_prefix(err, "gc %s", job);
			goto out;
		}
		tell(o, job, c.seqs[i], c.sizes[i], fate[i] == FATE_RETIRE, err);
		freed += c.sizes[i];
	}
	/* A pack no kept manifest references goes once it is old, or at once
	 * when a checkpoint this gc retires referenced it: a save in flight
	 * that reuses it started from that checkpoint, so its commit finds
	 * LATEST moved and checks its packs again (save.c, rebase). */
	for (i = 0; i < packs.keys.n; i++) {
		if (!strset_has(&live, packs.keys.v[i]) && (packs.mtimes[i] <= young ||
		    strset_has(&dropped, packs.keys.v[i]))) {
			if (strset_add(&dead, packs.keys.v[i], err) == -1) {
				sr_err_prefix(err, "gc %s", job);
				goto out;
			}
			dead_bytes += packs.sizes[i];
		}
	}
	if ((o == NULL || !o->gc_dry_run) &&
	    sr_store_delete_many(st, (const char *const *)dead.v, dead.n, err) != 0) {
		sr_err_prefix(err, "gc %s", job);
		goto out;
	}
	for (i = 0; o != NULL && o->gc_each != NULL && i < packs.keys.n; i++) {
		/* the test that put it in dead, above */
		if (!strset_has(&live, packs.keys.v[i]) && (packs.mtimes[i] <= young ||
		    strset_has(&dropped, packs.keys.v[i])))
			o->gc_each(o->gc_arg, packs.keys.v[i], packs.sizes[i],
			    strset_has(&dropped, packs.keys.v[i]) ? "pack of a retired checkpoint" :
			    "pack no committed checkpoint references");
	}
	freed += dead_bytes;
	rc = 0;
	if (o != NULL && o->gc_dry_run) {
		list_uploads(st, o, job, older_than);
		goto out;
	}
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
	free(fate);
	strset_free(&live);
	strset_free(&dropped);
	strset_free(&dead);
	strset_free(&packs.keys);
	free(packs.sizes);
	free(packs.mtimes);
	sr_catalog_free(&c);
	return rc;
}

void
sr_ckpt_retain(struct sr_store *st, const struct sr_ckpt_opts *o, uint64_t seq)
{
	char gerr[SR_ERRMAX], freed_s[32];
	uint64_t freed = 0;

	if (sr_ckpt_gc_log(st, o, o->job, o->keep, sr_now() - SR_GC_UPLOAD_AGE, &freed, gerr) != 0)
		sr_ckpt_say(o, "warning: retention after checkpoint %" PRIu64 ": %s", seq, gerr);
	else if (freed > 0)
		sr_ckpt_say(o, "retention: kept %d checkpoints, deleted %s", o->keep,
		    sr_fmt_bytes(freed, freed_s, sizeof freed_s));
}
