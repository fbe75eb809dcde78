/*
 * store-s3.c: the s3:// and gs:// store backends (store-int.h) on the S3
 * request engine (s3.h). One code path serves both: GCS's XML API speaks
 * S3 with SigV4 (region "auto"), and differs where store.h's semantics
 * meet conditional writes: S3 and RGW take If-None-Match: * (create-only)
 * and If-Match: <etag> (compare-and-swap), GCS takes
 * x-goog-if-generation-match with 0 or the object's generation. So on GCS
 * the etag a put returns and a CAS takes is the generation.
 *
 * Control objects (manifests, pointers, records) are single PUTs with a
 * Content-MD5; large objects stream through multipart uploads (s3-mpu.c),
 * and those left unfinished are found and aborted here (both stores list
 * them with GET ?uploads).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netops.h"
#include "parts.h"
#include "s3-mpu.h"
#include "s3.h"
#include "sigv4.h"
#include "store-int.h"
#include "util.h"

#define S3(st) ((struct sr_s3 *)(st)->priv)

static int
s3_open(struct sr_store *st, const char *rest, char *err)
{
	const char *scheme = st->be == &sr_store_gs_backend ? "gs" : "s3";
	struct sr_s3 *s;

	if (sr_s3_open(scheme, rest, st->no_metadata, &s, err) == -1)
		return -1;
	st->priv = s;
	return 0;
}

static int
s3_check(const char *rest, char *err)
{
	return sr_s3_url_check("s3", rest, err);
}

static int
gs_check(const char *rest, char *err)
{
	return sr_s3_url_check("gs", rest, err);
}

/* The aborts still owed get one more chance, a few seconds long: a run
 * that ends after a failed save would otherwise leave its upload to gc's
 * one-day cleanup. */
#define SETTLE_AT_CLOSE 5.0	/* seconds */

static void
s3_close(struct sr_store *st)
{
	sr_s3_mpu_settle(S3(st), sr_now() + SETTLE_AT_CLOSE);
	sr_s3_close(S3(st));
}

/* Did our own earlier attempt land? After a broken-off attempt a
 * conditional PUT may see its own object and get 412; the object is ours
 * when its MD5 (the ETag of a single PUT on S3; GCS sends it too) is the
 * body's. 1 or 0; -1 with err when the HEAD could not be made for want of
 * memory (then nobody knows who won: not a lost race). */
static int
landed(struct sr_s3 *s, const char *key, const char *md5hex, char *etag_out, char *err)
{
	struct sr_xfer_req rq = { .method = "HEAD", .key = key };
	struct sr_xfer_resp r;
	char herr[SR_ERRMAX];
	int ok;

	if (sr_s3_do(s, &rq, &r, "head", herr) == -1) {
		if (!sr_err_is_oom(herr))
			return 0;
		snprintf(err, SR_ERRMAX, "%s", herr);
		return -1;
	}
	ok = r.status == 200 && strcmp(r.etag, md5hex) == 0;
	if (ok && etag_out != NULL)
		snprintf(etag_out, SR_ETAG_MAX, "%s", sr_xfer_etag(sr_s3_xfer(s), &r));
	sr_xfer_resp_free(&r);
	return ok;
}

static int
s3_put(struct sr_store *st, const char *key, const void *buf, size_t len,
    enum sr_put_mode mode, const char *if_match, char *etag_out, char *err)
{
	struct sr_s3 *s = S3(st);
	struct sr_xfer_req rq = { .method = "PUT", .key = key, .body = buf, .body_len = len };
	struct sr_xfer_resp r;
	char w[SR_KEY_SHOW_MAX + 16], md5h[64], md5b[32], md5x[33], cond[SR_ETAG_MAX + 48];
	int n = 0, rc, ours = 0;

	sr_net_what(w, sizeof w, "put", key);
	if (rq.body == NULL)
		rq.body = "";
	if (sr_digest_md5(rq.body, len, md5b, md5x, err) == -1)
		return sr_err_prefix(err, "%s", w);
	snprintf(md5h, sizeof md5h, "Content-MD5: %s", md5b);
	rq.hdrs[n++] = "Content-Type: application/octet-stream";
	rq.hdrs[n++] = md5h;
	if (mode == SR_PUT_CREATE)
		rq.hdrs[n++] = sr_s3_is_gcs(s) ? "x-goog-if-generation-match: 0" : "If-None-Match: *";
	else if (mode == SR_PUT_MATCH) {
		/* RGW takes If-Match unquoted only; S3 takes both forms */
		snprintf(cond, sizeof cond, sr_s3_is_gcs(s) ? "x-goog-if-generation-match: %s" :
		    "If-Match: %s", if_match);
		rq.hdrs[n++] = cond;
	}
	if (sr_s3_do(s, &rq, &r, w, err) == -1)
		return SR_STORE_ERROR;
	if (r.status == 200) {
		if (etag_out != NULL)
			snprintf(etag_out, SR_ETAG_MAX, "%s", sr_xfer_etag(sr_s3_xfer(s), &r));
		rc = SR_STORE_OK;
	} else if (r.status == 412 && r.maybe_landed &&
	    (ours = landed(s, key, md5x, etag_out, err)) != 0)
		rc = ours == 1 ? SR_STORE_OK : sr_err_prefix(err, "%s", w);
	else if (r.status == 412 && mode == SR_PUT_CREATE)
		rc = sr_net_say(err, SR_STORE_EXISTS, "%s: exists (create-only put lost the race)", w);
	else if (r.status == 412 && mode == SR_PUT_MATCH)
		rc = sr_net_say(err, SR_STORE_PRECONDITION, "%s: changed since etag %s "
		    "(compare-and-swap lost the race)", w, if_match);
	else if (r.status == 404 && mode == SR_PUT_MATCH && strcmp(r.error.code, "NoSuchKey") == 0)
		rc = sr_net_say(err, SR_STORE_PRECONDITION, "%s: no such key (compare-and-swap lost "
		    "the race)", w);
	else
		rc = sr_s3_fail(s, w, &r, err);
	sr_xfer_resp_free(&r);
	return rc;
}

static int
s3_get(struct sr_store *st, const char *key, size_t max, void **buf, size_t *len,
    char *etag_out, char *err)
{
	return sr_net_get(sr_s3_xfer(S3(st)), key, max, buf, len, etag_out, err);
}

static int
s3_read_range(struct sr_store *st, const char *key, uint64_t off, size_t len, void *buf,
    char *err)
{
	return sr_net_read_range(sr_s3_xfer(S3(st)), key, off, len, buf, err);
}

static int
s3_head(struct sr_store *st, const char *key, struct sr_object_info *info, char *err)
{
	return sr_net_head(sr_s3_xfer(S3(st)), key, info, err);
}

/* base + prefix, encoded for a query's prefix= (malloc'd); NULL with err
 * on out-of-memory. */
static char *
encoded_prefix(const char *base, const char *prefix, char *err)
{
	char *full = sr_try_asprintf(err, "%s%s", base, prefix);
	char *e = full != NULL ? sr_sigv4_uri_encode(full, strlen(full), 0, err) : NULL;

	free(full);
	return e;
}

static int
s3_list(struct sr_store *st, const char *prefix,
    int (*fn)(const struct sr_object_info *info, void *arg), void *arg, char *err)
{
	struct sr_s3 *s = S3(st);
	const char *base = sr_s3_prefix(s);
	char *token = NULL, w[SR_KEY_SHOW_MAX + 16];
	char *eprefix = encoded_prefix(base, prefix, err);
	int rc = 0, truncated = 1;

	sr_net_what(w, sizeof w, "list", prefix[0] != '\0' ? prefix : "/");
	if (eprefix == NULL)
		return sr_err_prefix(err, "%s", w);
	while (rc == 0 && truncated) {
		char *etoken = NULL, *q = NULL;
		struct sr_xfer_req rq = { .method = "GET", .max = 16 * 1024 * 1024 };
		struct sr_xfer_resp r;

		if ((token == NULL || (etoken = sr_sigv4_uri_encode(token, strlen(token), 0,
		    err)) != NULL))
			q = sr_try_asprintf(err, "list-type=2&max-keys=1000&prefix=%s%s%s", eprefix,
			    etoken != NULL ? "&continuation-token=" : "", etoken != NULL ? etoken : "");
		free(etoken);
		if (q == NULL) {
			rc = sr_err_prefix(err, "%s", w);
			break;
		}
		rq.query = q;
		if (sr_s3_do(s, &rq, &r, w, err) == -1) {
			free(q);
			rc = SR_STORE_ERROR;
			break;
		}
		free(q);
		free(token);
		token = NULL;
		if (r.status != 200)
			rc = sr_s3_fail(s, w, &r, err);
		else {
			rc = sr_s3_xml_list(r.body != NULL ? r.body : "", r.len, base,
			    sr_s3_is_gcs(s), fn, arg, &truncated, &token, err);
			if (rc == -1)
				sr_err_prefix(err, "%s", w);
		}
		sr_xfer_resp_free(&r);
	}
	free(token);
	free(eprefix);
	return rc;
}

/* S3 answers 204 for a missing key too; GCS answers 404 NoSuchKey */
static int
s3_del(struct sr_store *st, const char *key, char *err)
{
	return sr_net_del(sr_s3_xfer(S3(st)), key, NULL, err);
}

/* Append key to the DeleteObjects body, escaped for XML. */
static size_t
xml_key(char *out, const char *prefix, const char *key)
{
	size_t o = 0;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		const char *p = pass == 0 ? prefix : key;

		for (; *p != '\0'; p++) {
			const char *rep = *p == '&' ? "&amp;" : *p == '<' ? "&lt;" : *p == '>' ?
			    "&gt;" : *p == '"' ? "&quot;" : *p == '\'' ? "&apos;" : NULL;

			if (rep != NULL) {
				memcpy(out + o, rep, strlen(rep));
				o += strlen(rep);
			} else
				out[o++] = *p;
		}
	}
	return o;
}

#define DELETE_BATCH 1000	/* S3's limit per DeleteObjects request */

/* DeleteObjects (POST ?delete), 1000 keys a request, Quiet: the reply
 * lists only the keys that failed. GCS's XML API has no such request, so
 * gs:// deletes one by one, `concurrency` of them in flight. */
static int
s3_del_many(struct sr_store *st, const char *const *keys, size_t n, char *err)
{
	struct sr_s3 *s = S3(st);
	const char *base = sr_s3_prefix(s);
	size_t i, j;

	if (sr_s3_is_gcs(s))
		return sr_net_del_many(sr_s3_xfer(s), keys, n, NULL, err);
	for (i = 0; i < n; i += DELETE_BATCH) {
		size_t m = n - i < DELETE_BATCH ? n - i : DELETE_BATCH, cap = 64, o = 0;
		struct sr_xfer_req rq = { .method = "POST", .query = "delete=" };
		struct sr_xfer_resp r;
		char *xml, md5[64], w[64];
		int rc;

		for (j = 0; j < m; j++)	/* 6x: every byte may become &quot; */
			cap += 40 + 6 * (strlen(base) + strlen(keys[i + j]));
		snprintf(w, sizeof w, "delete %zu keys", m);
		if ((xml = sr_try_malloc(cap, err)) == NULL) {
			sr_err_prefix(err, "%s", w);
			return SR_STORE_ERROR;
		}
		o += (size_t)sprintf(xml + o, "<Delete><Quiet>true</Quiet>");
		for (j = 0; j < m; j++) {
			o += (size_t)sprintf(xml + o, "<Object><Key>");
			o += xml_key(xml + o, base, keys[i + j]);
			o += (size_t)sprintf(xml + o, "</Key></Object>");
		}
		o += (size_t)sprintf(xml + o, "</Delete>");
		snprintf(md5, sizeof md5, "Content-MD5: ");
		/* S3 requires it here */
		if (sr_digest_md5(xml, o, md5 + strlen(md5), NULL, err) == -1) {
			free(xml);
			sr_err_prefix(err, "%s", w);
			return SR_STORE_ERROR;
		}
		rq.hdrs[0] = "Content-Type: application/xml";
		rq.hdrs[1] = md5;
		rq.body = xml;
		rq.body_len = o;
		if (sr_s3_do(s, &rq, &r, w, err) == -1) {
			free(xml);
			return SR_STORE_ERROR;
		}
		free(xml);
		if (r.status != 200)
			rc = sr_s3_fail(s, w, &r, err);
		else
			rc = sr_s3_xml_delete_result(r.body != NULL ? r.body : "", r.len, err);
		sr_xfer_resp_free(&r);
		if (rc != 0)
			return SR_STORE_ERROR;
	}
	return 0;
}

static int
s3_upload_begin(struct sr_upload *up, char *err)
{
	up->priv = sr_s3_mpu_begin(S3(up->st), up->key, err);
	return up->priv != NULL ? 0 : SR_STORE_ERROR;
}

/* The stale uploads of the page being read: aborted once it is read. */
struct stale {
	const char *prefix;		/* the caller's, relative to the store */
	double older_than;
	/* sr_store_list_stale_uploads: each told here, none aborted */
	int (*fn)(const char *key, double initiated, void *arg);
	void *arg;
	char **keys, **ids;
	size_t n, cap;
	char *err;			/* the caller's: an out-of-memory */
};

static int
stale_cb(const struct sr_s3_upload *u, void *arg)
{
	struct stale *sa = arg;
	char err[SR_ERRMAX];

	/* prefix= is the server's to honour; one that ignores it (our GCS
	 * emulator does) must not get other keys' uploads aborted. A key that
	 * store.h would refuse is not spotrun's: left alone. */
	if (strncmp(u->key, sa->prefix, strlen(sa->prefix)) != 0 ||
	    sr_store_key_check("abort upload", u->key, err) == -1)
		return 0;
	/* an upload of unknown age is never taken for a stale one */
	if (u->initiated < 0 || u->initiated >= sa->older_than)
		return 0;
	if (sa->fn != NULL)
		return sa->fn(u->key, u->initiated, sa->arg);
	if (sa->n == sa->cap) {
		size_t cap = sa->cap ? sa->cap * 2 : 16;
		char **k, **i;

		/* each kept when the other fails: both stay right for n */
		if ((k = sr_try_reallocarray(sa->keys, cap, sizeof *k, sa->err)) == NULL)
			return -1;
		sa->keys = k;
		if ((i = sr_try_reallocarray(sa->ids, cap, sizeof *i, sa->err)) == NULL)
			return -1;
		sa->ids = i;
		sa->cap = cap;
	}
	if ((sa->keys[sa->n] = sr_try_strdup(u->key, sa->err)) == NULL)
		return -1;
	if ((sa->ids[sa->n] = sr_try_strdup(u->upload_id, sa->err)) == NULL) {
		free(sa->keys[sa->n]);
		return -1;
	}
	sa->n++;
	return 0;
}

static void
stale_clear(struct stale *sa)
{
	size_t i;

	for (i = 0; i < sa->n; i++) {
		free(sa->keys[i]);
		free(sa->ids[i]);
	}
	sa->n = 0;
}

static int
same_marker(const char *a, const char *b)
{
	return a != NULL && b != NULL ? strcmp(a, b) == 0 : a == b;
}

/* ListMultipartUploads (GET ?uploads, paged by key-marker and
 * upload-id-marker), aborting each page's stale uploads before asking for
 * the next: the markers are positions in key order, so what was aborted
 * does not move them. */
static int
s3_abort_stale(struct sr_store *st, const char *prefix, double older_than,
    int (*fn)(const char *key, double initiated, void *arg), void *arg, int *aborted,
    char *err)
{
	struct sr_s3 *s = S3(st);
	const char *base = sr_s3_prefix(s);
	char w[SR_KEY_SHOW_MAX + 16];
	char *eprefix = encoded_prefix(base, prefix, err);
	char *key_marker = NULL, *id_marker = NULL;
	struct stale sa = { .prefix = prefix, .older_than = older_than, .fn = fn, .arg = arg,
	    .err = err };
	int rc = 0, truncated = 1;
	size_t i;

	sr_net_what(w, sizeof w, "list uploads", prefix[0] != '\0' ? prefix : "/");
	if (eprefix == NULL) {
		sr_err_prefix(err, "%s", w);
		return SR_STORE_ERROR;
	}
	while (rc == 0 && truncated) {
		char *ek = NULL, *ei = NULL, *q = NULL;
		struct sr_xfer_req rq = { .method = "GET", .max = 16 * 1024 * 1024 };
		struct sr_xfer_resp r;
		char *nk = NULL, *ni = NULL;

		if ((key_marker == NULL || (ek = sr_sigv4_uri_encode(key_marker,
		    strlen(key_marker), 0, err)) != NULL) &&
		    (id_marker == NULL || (ei = sr_sigv4_uri_encode(id_marker,
		    strlen(id_marker), 0, err)) != NULL))
			q = sr_try_asprintf(err, "uploads=&prefix=%s%s%s%s%s", eprefix,
			    ek != NULL ? "&key-marker=" : "", ek != NULL ? ek : "",
			    ei != NULL ? "&upload-id-marker=" : "", ei != NULL ? ei : "");
		free(ek);
		free(ei);
		if (q == NULL) {
			rc = sr_err_prefix(err, "%s", w);
			break;
		}
		rq.query = q;
		if (sr_s3_do(s, &rq, &r, w, err) == -1) {
			free(q);
			rc = SR_STORE_ERROR;
			break;
		}
		free(q);
		if (r.status != 200)
			rc = sr_s3_fail(s, w, &r, err);
		else if ((rc = sr_s3_xml_uploads(r.body != NULL ? r.body : "", r.len, base,
		    stale_cb, &sa, &truncated, &nk, &ni, err)) == -1)
			sr_err_prefix(err, "%s", w);
		sr_xfer_resp_free(&r);
		for (i = 0; rc == 0 && i < sa.n; i++) {
			int arc = sr_s3_mpu_abort(s, sa.keys[i], sa.ids[i], 0, err);

			if (arc == -1)
				rc = SR_STORE_ERROR;
			else if (arc == 0)
				(*aborted)++;
		}
		stale_clear(&sa);
		/* a server that sends the same page again must not keep us here */
		if (rc == 0 && truncated && same_marker(nk, key_marker) &&
		    same_marker(ni, id_marker))
			rc = sr_err(err, "%s: the server sent the same page twice", w);
		free(key_marker);
		free(id_marker);
		key_marker = nk;
		id_marker = ni;
	}
	free(key_marker);
	free(id_marker);
	free(sa.keys);
	free(sa.ids);
	free(eprefix);
	return rc == 0 ? 0 : SR_STORE_ERROR;
}

static void
s3_read_plan(const struct sr_store *st, int *streams, uint64_t *piece)
{
	sr_net_read_plan(sr_s3_xfer(S3(st)), streams, piece);
}

static void
s3_stats(struct sr_store *st, struct sr_store_stats *out)
{
	sr_xfer_stats(sr_s3_xfer(S3(st)), out);
}

static int
s3_presign(struct sr_store *st, const char *key, long expires, time_t now, char **url,
    char *err)
{
	return sr_s3_presign(S3(st), key, expires, now, url, err);
}

#define S3_OPS \
	.open = s3_open, .close = s3_close, .put = s3_put, .get = s3_get, \
	.read_range = s3_read_range, .head = s3_head, .list = s3_list, .del = s3_del, \
	.del_many = s3_del_many, \
	.upload_begin = s3_upload_begin, .upload_write = sr_parts_up_write, \
	.upload_commit = sr_parts_up_commit, .upload_abort = sr_parts_up_abort, \
	.upload_limit = sr_parts_up_limit, .abort_stale = s3_abort_stale, \
	.read_plan = s3_read_plan, .stats = s3_stats, .presign = s3_presign

const struct sr_store_backend sr_store_s3_backend = { .scheme = "s3",
	.form = "bucket/prefix", .root = "bucket", .check = s3_check,
	.delete_batch = DELETE_BATCH, S3_OPS };
/* GCS: "a maximum rate of one write per second to the same object name"
 * (Cloud Storage quotas and limits; 429 beyond it, doc/fleet.md). */
const struct sr_store_backend sr_store_gs_backend = { .scheme = "gs",
	.form = "bucket/prefix", .root = "bucket", .check = gs_check,
	.vm_note = "spotrun reaches gs:// with HMAC keys (GS_ACCESS_KEY_ID, ~/.boto), which a "
	    "Compute Engine service account does not give",
	.write_interval = 1.0, S3_OPS };
