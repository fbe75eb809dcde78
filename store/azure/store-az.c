/*
 * store-az.c: the az:// store backend (store-int.h) on the Azure Blob
 * family of the request engine (az.h). store.h's semantics on Blob:
 *
 *  - put is one Put Blob (a block blob) with its Content-MD5; create-only
 *    sends If-None-Match: * (an existing blob: 409 BlobAlreadyExists, 412
 *    on some servers), compare-and-swap If-Match: "ETAG" (a stale one: 412
 *    ConditionNotMet; a missing blob: 404 or 412). A put whose earlier
 *    attempt broke off may see its own blob: it is ours when the blob's
 *    Content-MD5 (which Put Blob stores) is the body's.
 *  - etags are Azure's ETags without their quotes; a CAS sends them quoted.
 *  - get and read_range are GET (with x-ms-range), head is Get Blob
 *    Properties; a 404 says in x-ms-error-code whether the blob or the
 *    container is missing, so a missing container is an error, not "no
 *    such key", for HEAD too.
 *  - list is List Blobs by prefix, 5000 names a page, NextMarker to go on.
 *  - delete is Delete Blob (with its snapshots); a missing blob is no
 *    error. Deleting many keys sends one DELETE each, up to `concurrency`
 *    in flight at once on one curl multi handle (see doc/design.md for why
 *    not Blob Batch).
 *  - uploads go through az-blocks.c (Put Block + Put Block List), and gc's
 *    stale uploads are blobs that have only uncommitted blocks: listed with
 *    include=uncommittedblobs, confirmed by Get Block List, dropped as an
 *    aborted upload's are.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "az-blocks.h"
#include "az-xml.h"
#include "az.h"
#include "netops.h"
#include "parts.h"
#include "store-int.h"
#include "util.h"

#define AZ(st) ((struct sr_az *)(st)->priv)
#define LIST_PAGE 5000		/* List Blobs' maxresults limit */

static int
az_open(struct sr_store *st, const char *rest, char *err)
{
	struct sr_az *a;

	if (sr_az_open(rest, st->no_metadata, &a, err) == -1)
		return -1;
	st->priv = a;
	return 0;
}

static int
az_check(const char *rest, char *err)
{
	return sr_az_url_check(rest, err);
}

static void
az_close(struct sr_store *st)
{
	sr_az_close(AZ(st));
}

static int
code_is(const struct sr_xfer_resp *r, const char *code)
{
	return strcmp(sr_az_code(r), code) == 0;
}

/* Did our own earlier attempt land? Its blob carries our Content-MD5. 1
 * or 0; -1 with err when out of memory (which says nothing about the
 * blob: not to be taken for "someone else's"). */
static int
landed(struct sr_az *a, const char *key, const char *md5_b64, char *etag_out, const char *w,
    char *err)
{
	struct sr_xfer_req rq = { .method = "HEAD", .key = key };
	struct sr_xfer_resp r;
	char herr[SR_ERRMAX];
	int ok;

	if (sr_az_do(a, &rq, &r, "head", herr) == -1)
		return sr_err_is_oom(herr) ? sr_err(err, "%s: %s", w, herr) : 0;
	ok = r.status == 200 && strcmp(r.captured[SR_AZ_CONTENT_MD5], md5_b64) == 0;
	if (ok && etag_out != NULL)
		snprintf(etag_out, SR_ETAG_MAX, "%s", r.etag);
	sr_xfer_resp_free(&r);
	return ok;
}

static int
az_put(struct sr_store *st, const char *key, const void *buf, size_t len,
    enum sr_put_mode mode, const char *if_match, char *etag_out, char *err)
{
	struct sr_az *a = AZ(st);
	struct sr_xfer_resp r;
	char w[SR_KEY_SHOW_MAX + 16], md5[32], cond[SR_ETAG_MAX + 16];
	const char *c = NULL;
	int rc, l = 0;

	sr_net_what(w, sizeof w, "put", key);
	if (mode == SR_PUT_CREATE)
		c = "If-None-Match: *";
	else if (mode == SR_PUT_MATCH) {
		snprintf(cond, sizeof cond, "If-Match: \"%s\"", if_match);
		c = cond;
	}
	if (sr_az_put_blob(a, key, buf, len, c, 0, NULL, md5, &r, w, err) == -1)
		return SR_STORE_ERROR;
	if (r.status == 201) {
		if (etag_out != NULL)
			snprintf(etag_out, SR_ETAG_MAX, "%s", r.etag);
		rc = SR_STORE_OK;
	} else if ((r.status == 409 || r.status == 412) && r.maybe_landed &&
	    (l = landed(a, key, md5, etag_out, w, err)) != 0)
		rc = l == 1 ? SR_STORE_OK : SR_STORE_ERROR;
	else if (mode == SR_PUT_CREATE && (r.status == 412 ||
	    (r.status == 409 && code_is(&r, "BlobAlreadyExists"))))
		rc = sr_net_say(err, SR_STORE_EXISTS, "%s: exists (create-only put lost the race)", w);
	else if (mode == SR_PUT_MATCH && r.status == 412)
		rc = sr_net_say(err, SR_STORE_PRECONDITION, "%s: changed since etag %s "
		    "(compare-and-swap lost the race)", w, if_match);
	else if (mode == SR_PUT_MATCH && sr_xfer_missing(sr_az_xfer(a), &r))
		rc = sr_net_say(err, SR_STORE_PRECONDITION, "%s: no such key (compare-and-swap lost "
		    "the race)", w);
	else
		rc = sr_az_fail(a, w, &r, err);
	sr_xfer_resp_free(&r);
	return rc;
}

static int
az_get(struct sr_store *st, const char *key, size_t max, void **buf, size_t *len,
    char *etag_out, char *err)
{
	return sr_net_get(sr_az_xfer(AZ(st)), key, max, buf, len, etag_out, err);
}

static int
az_read_range(struct sr_store *st, const char *key, uint64_t off, size_t len, void *buf,
    char *err)
{
	return sr_net_read_range(sr_az_xfer(AZ(st)), key, off, len, buf, err);
}

static int
az_head(struct sr_store *st, const char *key, struct sr_object_info *info, char *err)
{
	return sr_net_head(sr_az_xfer(AZ(st)), key, info, err);
}

/* List Blobs under the store's prefix + prefix, page by page; with
 * uncommitted, blobs that have only uncommitted blocks too. */
static int
list_pages(struct sr_az *a, const char *prefix, int uncommitted,
    int (*fn)(const struct sr_object_info *info, void *arg), void *arg, const char *w,
    char *err)
{
	const char *base = sr_az_prefix(a);
	char *full, *marker = NULL, *eprefix = NULL;
	int rc = 0;

	if ((full = sr_try_asprintf(err, "%s%s", base, prefix)) == NULL ||
	    (eprefix = sr_az_encode(full, 0, err)) == NULL) {
		free(full);
		return sr_err_prefix(err, "%s", w);
	}
	do {
		char *em = NULL, *q = NULL, *next = NULL;
		struct sr_xfer_req rq;
		struct sr_xfer_resp r;

		if ((marker != NULL && (em = sr_az_encode(marker, 0, err)) == NULL) ||
		    (q = sr_try_asprintf(err, "restype=container&comp=list&prefix=%s&maxresults=%d"
		    "%s%s%s", eprefix, LIST_PAGE, uncommitted ? "&include=uncommittedblobs" : "",
		    em != NULL ? "&marker=" : "", em != NULL ? em : "")) == NULL) {
			free(em);
			rc = sr_err_prefix(err, "%s", w);
			break;
		}
		free(em);
		/* a page of 5000 names of up to 1 KiB is at most ~6 MiB of XML */
		rq = (struct sr_xfer_req){ .method = "GET", .query = q, .max = 32 * 1024 * 1024 };
		if (sr_az_do(a, &rq, &r, w, err) == -1) {
			free(q);
			rc = SR_STORE_ERROR;
			break;
		}
		free(q);
		if (r.status != 200)
			rc = sr_az_fail(a, w, &r, err);
		else if ((rc = sr_az_xml_list(r.body != NULL ? r.body : "", r.len, base, fn, arg,
		    &next, err)) == -1)
			sr_err_prefix(err, "%s", w);
		sr_xfer_resp_free(&r);
		/* a server that hands the same marker back must not keep us here */
		if (rc == 0 && next != NULL && marker != NULL && strcmp(next, marker) == 0)
			rc = sr_err(err, "%s: the server sent the same page twice", w);
		free(marker);
		marker = next;
	} while (rc == 0 && marker != NULL);
	free(marker);
	free(eprefix);
	free(full);
	return rc;
}

static int
az_list(struct sr_store *st, const char *prefix,
    int (*fn)(const struct sr_object_info *info, void *arg), void *arg, char *err)
{
	char w[SR_KEY_SHOW_MAX + 16];

	sr_net_what(w, sizeof w, "list", prefix[0] != '\0' ? prefix : "/");
	return list_pages(AZ(st), prefix, 0, fn, arg, w, err);
}

/* Its snapshots too, which a Delete Blob otherwise refuses to leave
 * behind (409 SnapshotsPresent). */
#define DELETE_HDR "x-ms-delete-snapshots: include"

static int
az_del(struct sr_store *st, const char *key, char *err)
{
	return sr_net_del(sr_az_xfer(AZ(st)), key, DELETE_HDR, err);
}

/* One Delete Blob each, up to `concurrency` in flight (doc/design.md:
 * deletes are free on Azure, a batch costs the same per blob, and Blob
 * Batch is not offered on every account, e.g. not with a hierarchical
 * namespace). */
static int
az_del_many(struct sr_store *st, const char *const *keys, size_t n, char *err)
{
	return sr_net_del_many(sr_az_xfer(AZ(st)), keys, n, DELETE_HDR, err);
}

static int
az_upload_begin(struct sr_upload *up, char *err)
{
	up->priv = sr_az_blocks_begin(AZ(up->st), up->key, err);
	return up->priv != NULL ? 0 : -1;
}

/* Names, for telling the uncommitted-only blobs from the committed. */
struct names {
	char **v;
	size_t n, cap;
};

/* 0, or -1 with err (out of memory; ns keeps what it had). */
static int
names_add(struct names *ns, const char *s, char *err)
{
	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? ns->cap * 2 : 64;
		char **v = sr_try_reallocarray(ns->v, cap, sizeof *v, err);

		if (v == NULL)
			return -1;
		ns->v = v;
		ns->cap = cap;
	}
	if ((ns->v[ns->n] = sr_try_strdup(s, err)) == NULL)
		return -1;
	ns->n++;
	return 0;
}

static void
names_free(struct names *ns)
{
	size_t i;

	for (i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
	memset(ns, 0, sizeof *ns);
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What the listings gather: the committed names, then those with only
 * uncommitted blocks, under the prefix, started before older_than; err is
 * the caller's, for a callback that stops on out-of-memory. */
struct stale {
	const char *prefix;
	double older_than;
	/* sr_store_list_stale_uploads: each told here, none dropped */
	int (*fn)(const char *key, double initiated, void *arg);
	void *arg;
	struct names committed;
	struct names found;
	char *err;
};

static int
committed_cb(const struct sr_object_info *info, void *arg)
{
	struct stale *sa = arg;

	return names_add(&sa->committed, info->key, sa->err);
}

static int
stale_cb(const struct sr_object_info *info, void *arg)
{
	struct stale *sa = arg;
	const char *k = info->key;
	char err[SR_ERRMAX];

	/* prefix= is the server's to honour; a key that store.h would refuse
	 * is not spotrun's: both left alone */
	if (strncmp(k, sa->prefix, strlen(sa->prefix)) != 0 ||
	    sr_store_key_check("abort upload", k, err) == -1)
		return 0;
	if (sa->committed.n > 0 && bsearch(&k, sa->committed.v, sa->committed.n,
	    sizeof *sa->committed.v, name_cmp) != NULL)
		return 0;
	/* an upload of unknown age is never taken for a stale one */
	if (info->mtime <= 0 || info->mtime >= sa->older_than)
		return 0;
	if (sa->fn != NULL)
		return sa->fn(k, info->mtime, sa->arg);
	return names_add(&sa->found, k, sa->err);
}

/* Unfinished uploads on Azure are blobs with uncommitted blocks only:
 * those List Blobs shows with include=uncommittedblobs and not without.
 * Azure drops them 7 days after their last block anyway; gc drops them
 * sooner (a day), as it aborts S3's multipart uploads. */
static int
az_abort_stale(struct sr_store *st, const char *prefix, double older_than,
    int (*fn)(const char *key, double initiated, void *arg), void *arg, int *aborted,
    char *err)
{
	struct sr_az *a = AZ(st);
	struct stale sa = { .prefix = prefix, .older_than = older_than, .fn = fn, .arg = arg,
	    .err = err };
	char w[SR_KEY_SHOW_MAX + 32];
	size_t i;
	int rc;

	sr_net_what(w, sizeof w, "list uploads", prefix[0] != '\0' ? prefix : "/");
	rc = list_pages(a, prefix, 0, committed_cb, &sa, w, err);
	if (rc == 0) {
		if (sa.committed.n > 1)
			qsort(sa.committed.v, sa.committed.n, sizeof *sa.committed.v, name_cmp);
		rc = list_pages(a, prefix, 1, stale_cb, &sa, w, err);
	}
	for (i = 0; rc == 0 && i < sa.found.n; i++) {
		int d = sr_az_drop_blocks(a, sa.found.v[i], 0, NULL, err);

		if (d == -1)
			rc = SR_STORE_ERROR;
		else
			*aborted += d;
	}
	names_free(&sa.committed);
	names_free(&sa.found);
	return rc == 0 ? 0 : SR_STORE_ERROR;
}

static void
az_read_plan(const struct sr_store *st, int *streams, uint64_t *piece)
{
	sr_net_read_plan(sr_az_xfer(AZ(st)), streams, piece);
}

static void
az_stats(struct sr_store *st, struct sr_store_stats *out)
{
	sr_xfer_stats(sr_az_xfer(AZ(st)), out);
}

static int
az_presign(struct sr_store *st, const char *key, long expires, time_t now, char **url,
    char *err)
{
	return sr_az_presign(AZ(st), key, expires, now, url, err);
}

const struct sr_store_backend sr_store_az_backend = {
	.scheme = "az", .form = "account/container/prefix", .root = "account",
	.check = az_check,
	.open = az_open, .close = az_close, .put = az_put, .get = az_get,
	.read_range = az_read_range, .head = az_head, .list = az_list, .del = az_del,
	.del_many = az_del_many,
	.upload_begin = az_upload_begin, .upload_write = sr_parts_up_write,
	.upload_commit = sr_parts_up_commit, .upload_abort = sr_parts_up_abort,
	.upload_limit = sr_parts_up_limit, .read_plan = az_read_plan,
	.abort_stale = az_abort_stale, .stats = az_stats, .presign = az_presign,
};
