/*
 * store.c: the object store front end (store.h). It picks the backend from
 * the URL's scheme, checks keys and arguments once for every backend, and
 * names the return codes. The backends themselves (store-file.c, ...) only
 * see valid requests; see store-int.h.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pace.h"
#include "store-int.h"
#include "util.h"

/* The backends, by URL scheme. */
static const struct sr_store_backend *const backends[] = {
	&sr_store_file_backend,
	&sr_store_s3_backend,
	&sr_store_gs_backend,
	&sr_store_az_backend,
};

const char *
sr_store_key_show(const char *key, char *buf, size_t len)
{
	size_t o = 0, i;

	for (i = 0; key[i] != '\0' && o + 8 < len; i++) {
		unsigned char ch = (unsigned char)key[i];

		if (ch < 0x20 || ch == 0x7f)
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", ch);
		else
			buf[o++] = (char)ch;
	}
	if (key[i] != '\0' && len >= 4) {
		o = o > len - 4 ? len - 4 : o;
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

/* Why key (a whole key, or a prefix if partial_last) is not valid; NULL if it is. */
static const char *
key_problem(const char *key, int partial_last, char *why, size_t len)
{
	size_t n = strlen(key), i, seg = 0;

	if (n == 0 && !partial_last)
		return "empty";
	if (n > SR_KEY_MAX) {
		snprintf(why, len, "%zu bytes long, at most %d allowed", n, SR_KEY_MAX);
		return why;
	}
	if (key[0] == '/')
		return "starts with '/' (keys are relative to the store)";
	for (i = 0; i <= n; i++) {
		unsigned char ch = (unsigned char)key[i];

		if (ch != '\0' && (ch < 0x20 || ch == 0x7f)) {
			snprintf(why, len, "control character 0x%02x at byte %zu", ch, i);
			return why;
		}
		if (ch != '/' && ch != '\0')
			continue;
		/* key[seg..i) is a segment; a prefix's last one may be partial */
		if (ch == '\0' && partial_last)
			break;
		if (i == seg)
			return ch == '\0' ? "ends with '/'" : "has an empty segment (\"//\")";
		if (i - seg == 1 && key[seg] == '.')
			return "has a \".\" segment";
		if (i - seg == 2 && key[seg] == '.' && key[seg + 1] == '.')
			return "has a \"..\" segment";
		seg = i + 1;
	}
	return NULL;
}

static int
check(const char *verb, const char *key, int partial_last, char *err)
{
	char why[128], show[SR_KEY_SHOW_MAX];
	const char *p;

	if (key == NULL)
		return sr_err(err, "%s: no key given", verb);
	p = key_problem(key, partial_last, why, sizeof why);
	if (p == NULL)
		return 0;
	return sr_err(err, "%s %s: invalid %s: %s", verb,
	    key[0] == '\0' ? "\"\"" : sr_store_key_show(key, show, sizeof show),
	    partial_last ? "prefix" : "key", p);
}

int
sr_store_key_check(const char *verb, const char *key, char *err)
{
	return check(verb, key, 0, err);
}

int
sr_store_prefix_check(const char *verb, const char *prefix, char *err)
{
	return check(verb, prefix, 1, err);
}

/* The backend whose scheme url has (url up to "://"); NULL: none. */
static const struct sr_store_backend *
find_backend(const char *url, const char **rest)
{
	const char *sep = url != NULL ? strstr(url, "://") : NULL;
	size_t i, slen;

	if (sep == NULL)
		return NULL;
	slen = (size_t)(sep - url);
	for (i = 0; i < SR_ARRAY_LEN(backends); i++) {
		const struct sr_store_backend *be = backends[i];

		if (strlen(be->scheme) == slen && strncmp(url, be->scheme, slen) == 0) {
			*rest = sep + 3;
			return be;
		}
	}
	return NULL;
}

void
sr_store_url_forms(char *buf, size_t len)
{
	size_t i, n = SR_ARRAY_LEN(backends);

	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		if (i > 0)
			strlcat(buf, i + 1 == n ? " or " : ", ", len);
		strlcat(buf, backends[i]->scheme, len);
		strlcat(buf, "://", len);
		strlcat(buf, backends[i]->form, len);
	}
}

/* The backend for url's scheme; *rest is what follows "scheme://". NULL
 * with err when there is none. */
static const struct sr_store_backend *
backend_for(const char *url, const char **rest, char *err)
{
	const struct sr_store_backend *be = find_backend(url, rest);
	char names[128];
	size_t i;

	if (be != NULL)
		return be;
	if (url == NULL || strstr(url, "://") == NULL) {
		sr_store_url_forms(names, sizeof names);
		sr_err(err, "open store %s: not a URL (use %s)", url != NULL ? url : "(null)", names);
		return NULL;
	}
	names[0] = '\0';
	for (i = 0; i < SR_ARRAY_LEN(backends); i++) {
		strlcat(names, i > 0 ? ", " : "", sizeof names);
		strlcat(names, backends[i]->scheme, sizeof names);
		strlcat(names, "://", sizeof names);
	}
	sr_err(err, "open store %s: unsupported scheme \"%.*s\" (supported: %s)", url,
	    (int)(strstr(url, "://") - url), url, names);
	return NULL;
}

int
sr_store_url_local(const char *url)
{
	const char *rest;
	const struct sr_store_backend *be = find_backend(url, &rest);

	return be != NULL && be->local;
}

const char *
sr_store_url_path(const char *url)
{
	const char *rest;
	const struct sr_store_backend *be = find_backend(url, &rest);

	return be != NULL && be->local && rest[0] == '/' ? rest : NULL;
}

const char *
sr_store_url_vm_note(const char *url)
{
	const char *rest;
	const struct sr_store_backend *be = find_backend(url, &rest);

	return be != NULL ? be->vm_note : NULL;
}

size_t
sr_store_delete_batch(const struct sr_store *st)
{
	return st->be->delete_batch > 0 ? st->be->delete_batch : 1;
}

enum sr_store_url_status
sr_store_url_explain(const char *url, struct sr_store_url_problem *pb)
{
	const char *rest;
	const struct sr_store_backend *be = find_backend(url, &rest);
	char err[SR_ERRMAX];
	size_t pre;

	pb->reason[0] = pb->fix[0] = '\0';
	if (be == NULL) {
		snprintf(pb->reason, sizeof pb->reason, "not a store URL");
		return SR_STORE_URL_UNKNOWN;
	}
	if (be->root != NULL && (rest[0] == '\0' || rest[0] == '/')) {
		snprintf(pb->reason, sizeof pb->reason, "no %s after %s://", be->root, be->scheme);
		snprintf(pb->fix, sizeof pb->fix, "use %s://%s", be->scheme, be->form);
		return SR_STORE_URL_NO_ROOT;
	}
	if (be->check == NULL || be->check(rest, err) == 0)
		return SR_STORE_URL_OK;
	/* the backends' contract: "open store URL: reason" */
	pre = strlen("open store ") + strlen(url) + 2;
	if (strncmp(err, "open store ", 11) == 0 && strncmp(err + 11, url, strlen(url)) == 0 &&
	    strncmp(err + pre - 2, ": ", 2) == 0)
		snprintf(pb->reason, sizeof pb->reason, "%s", err + pre);
	else
		snprintf(pb->reason, sizeof pb->reason, "%s", err);
	return SR_STORE_URL_BAD;
}

int
sr_store_url_check(const char *url, char *err)
{
	const char *rest;
	const struct sr_store_backend *be = backend_for(url, &rest, err);

	if (be == NULL)
		return -1;
	return be->check != NULL ? be->check(rest, err) : 0;
}

int
sr_store_open(const char *url, struct sr_store **out, char *err)
{
	return sr_store_open_with(url, NULL, out, err);
}

int
sr_store_open_with(const char *url, const struct sr_store_opts *o, struct sr_store **out,
    char *err)
{
	const char *rest;
	const struct sr_store_backend *be = backend_for(url, &rest, err);
	struct sr_store *st;

	*out = NULL;
	if (be == NULL)
		return -1;
	if ((st = sr_try_calloc(1, sizeof *st, err)) == NULL)
		return sr_err_prefix(err, "open store %s", url);
	st->be = be;
	st->no_metadata = o != NULL && o->no_metadata;
	if ((st->url = sr_try_strdup(url, err)) == NULL) {
		free(st);
		return sr_err_prefix(err, "open store %s", url);
	}
	if (be->open(st, rest, err) == -1) {
		free(st->url);
		free(st);
		return -1;
	}
	if (be->write_interval > 0 && (st->pace = sr_pace_new(be->write_interval, err)) == NULL) {
		sr_err_prefix(err, "open store %s", url);
		be->close(st);
		free(st->url);
		free(st);
		return -1;
	}
	*out = st;
	return 0;
}

void
sr_store_close(struct sr_store *st)
{
	if (st == NULL)
		return;
	st->be->close(st);
	sr_pace_free(st->pace);
	free(st->url);
	free(st);
}

double
sr_store_write_interval(const struct sr_store *st)
{
	return st->be->write_interval;
}

/* Before and after a write of keys: kept the backend's interval from this
 * handle's last write of any of them (pace.h). pace_wait: 0, or -1 with
 * err prefixed by "VERB KEY" (then no pace_done, and no write). */
static int
pace_wait(struct sr_store *st, const char *const *keys, size_t n, const char *verb,
    char *err)
{
	char show[SR_KEY_SHOW_MAX];

	if (st->pace == NULL || sr_pace_wait(st->pace, keys, n, err) == 0)
		return 0;
	return sr_err_prefix(err, "%s %s", verb, sr_store_key_show(keys[0], show, sizeof show));
}

static void
pace_done(struct sr_store *st, const char *const *keys, size_t n)
{
	if (st->pace != NULL)
		sr_pace_done(st->pace, keys, n);
}

const char *
sr_store_url(const struct sr_store *st)
{
	return st->url;
}

int
sr_store_put(struct sr_store *st, const char *key, const void *buf, size_t len,
    enum sr_put_mode mode, const char *if_match, char *etag_out, char *err)
{
	char show[SR_KEY_SHOW_MAX];
	int rc;

	if (sr_store_key_check("put", key, err) == -1)
		return SR_STORE_ERROR;
	if (mode != SR_PUT_OVERWRITE && mode != SR_PUT_CREATE && mode != SR_PUT_MATCH)
		return sr_err(err, "put %s: unknown put mode %d",
		    sr_store_key_show(key, show, sizeof show), (int)mode);
	if ((mode == SR_PUT_MATCH) != (if_match != NULL))
		return sr_err(err, "put %s: an etag to match goes with SR_PUT_MATCH only",
		    sr_store_key_show(key, show, sizeof show));
	if (buf == NULL && len > 0)
		return sr_err(err, "put %s: no data", sr_store_key_show(key, show, sizeof show));
	if (pace_wait(st, &key, 1, "put", err) == -1)
		return SR_STORE_ERROR;
	rc = st->be->put(st, key, buf, len, mode, if_match, etag_out, err);
	pace_done(st, &key, 1);
	return rc;
}

int
sr_store_get(struct sr_store *st, const char *key, size_t max, void **buf, size_t *len,
    char *etag_out, char *err)
{
	*buf = NULL;
	if (len != NULL)
		*len = 0;
	if (sr_store_key_check("get", key, err) == -1)
		return SR_STORE_ERROR;
	return st->be->get(st, key, max, buf, len, etag_out, err);
}

int
sr_store_read_range(struct sr_store *st, const char *key, uint64_t off, size_t len,
    void *buf, char *err)
{
	if (sr_store_key_check("read", key, err) == -1)
		return SR_STORE_ERROR;
	return st->be->read_range(st, key, off, len, buf, err);
}

int
sr_store_head(struct sr_store *st, const char *key, struct sr_object_info *info, char *err)
{
	if (sr_store_key_check("head", key, err) == -1)
		return SR_STORE_ERROR;
	return st->be->head(st, key, info, err);
}

int
sr_store_list(struct sr_store *st, const char *prefix,
    int (*fn)(const struct sr_object_info *info, void *arg), void *arg, char *err)
{
	if (prefix == NULL)
		prefix = "";
	if (sr_store_prefix_check("list", prefix, err) == -1)
		return SR_STORE_ERROR;
	return st->be->list(st, prefix, fn, arg, err);
}

int
sr_store_delete(struct sr_store *st, const char *key, char *err)
{
	int rc;

	if (sr_store_key_check("delete", key, err) == -1)
		return SR_STORE_ERROR;
	if (pace_wait(st, &key, 1, "delete", err) == -1)
		return SR_STORE_ERROR;
	rc = st->be->del(st, key, err);
	pace_done(st, &key, 1);
	return rc;
}

void
sr_store_read_plan(const struct sr_store *st, int *streams, uint64_t *piece)
{
	*streams = 2;
	*piece = 0;
	if (st->be->read_plan != NULL)
		st->be->read_plan(st, streams, piece);
}

int
sr_store_delete_many(struct sr_store *st, const char *const *keys, size_t n, char *err)
{
	size_t i;

	int rc = 0;

	for (i = 0; i < n; i++)
		if (sr_store_key_check("delete", keys[i], err) == -1)
			return SR_STORE_ERROR;
	if (n == 0)
		return 0;
	if (pace_wait(st, keys, n, "delete", err) == -1)
		return SR_STORE_ERROR;
	if (st->be->del_many != NULL)
		rc = st->be->del_many(st, keys, n, err);
	else
		for (i = 0; i < n && rc == 0; i++)
			rc = st->be->del(st, keys[i], err);
	pace_done(st, keys, n);
	return rc;
}

struct sr_upload *
sr_store_upload_begin(struct sr_store *st, const char *key, char *err)
{
	struct sr_upload *up;

	if (sr_store_key_check("upload", key, err) == -1)
		return NULL;
	if ((up = sr_try_calloc(1, sizeof *up, err)) == NULL ||
	    (up->key = sr_try_strdup(key, err)) == NULL) {
		char show[SR_KEY_SHOW_MAX];

		free(up);
		sr_err_prefix(err, "upload %s", sr_store_key_show(key, show, sizeof show));
		return NULL;
	}
	up->st = st;
	if (st->be->upload_begin(up, err) == -1) {
		free(up->key);
		free(up);
		return NULL;
	}
	return up;
}

int
sr_upload_write(struct sr_upload *up, const void *buf, size_t len, char *err)
{
	char show[SR_KEY_SHOW_MAX];

	if (buf == NULL && len > 0)
		return sr_err(err, "upload %s: no data",
		    sr_store_key_show(up->key, show, sizeof show));
	return up->st->be->upload_write(up, buf, len, err);
}

size_t
sr_upload_align(const struct sr_upload *up, size_t *min)
{
	*min = 0;
	return up->st->be->upload_align != NULL ? up->st->be->upload_align(up, min) : 0;
}

void
sr_upload_limit(struct sr_upload *up, double deadline, volatile int *cancel)
{
	if (up->st->be->upload_limit != NULL)
		up->st->be->upload_limit(up, deadline, cancel);
}

int
sr_upload_commit(struct sr_upload *up, char *err)
{
	const char *key = up->key;
	int rc;

	if (pace_wait(up->st, &key, 1, "upload", err) == -1) {
		/* committed nothing: the upload is dropped as sr_upload_abort does */
		sr_upload_abort(up);
		return SR_STORE_ERROR;
	}
	rc = up->st->be->upload_commit(up, err);
	pace_done(up->st, &key, 1);
	free(up->key);
	free(up);
	return rc;
}

void
sr_upload_defer_flush(struct sr_upload *up)
{
	up->defer_flush = 1;
}

int
sr_store_flush(struct sr_store *st, const char *const *keys, size_t n, char *err)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (sr_store_key_check("flush", keys[i], err) == -1)
			return SR_STORE_ERROR;
	if (st->be->flush == NULL || n == 0)
		return 0;
	return st->be->flush(st, keys, n, err);
}

void
sr_upload_abort(struct sr_upload *up)
{
	if (up == NULL)
		return;
	up->st->be->upload_abort(up);
	free(up->key);
	free(up);
}

int
sr_store_abort_stale_uploads(struct sr_store *st, const char *prefix, double older_than,
    int *aborted, char *err)
{
	int n = 0, rc;

	if (aborted != NULL)
		*aborted = 0;
	if (prefix == NULL)
		prefix = "";
	if (sr_store_prefix_check("abort uploads", prefix, err) == -1)
		return SR_STORE_ERROR;
	if (st->be->abort_stale == NULL)
		return 0;
	rc = st->be->abort_stale(st, prefix, older_than, NULL, NULL, &n, err);
	if (aborted != NULL)
		*aborted = n;
	return rc;
}

int
sr_store_list_stale_uploads(struct sr_store *st, const char *prefix, double older_than,
    int (*fn)(const char *key, double initiated, void *arg), void *arg, char *err)
{
	int n = 0;

	if (prefix == NULL)
		prefix = "";
	if (sr_store_prefix_check("list uploads", prefix, err) == -1)
		return SR_STORE_ERROR;
	if (st->be->abort_stale == NULL)
		return 0;
	return st->be->abort_stale(st, prefix, older_than, fn, arg, &n, err);
}

void
sr_store_stats(struct sr_store *st, struct sr_store_stats *out)
{
	memset(out, 0, sizeof *out);
	if (st->be->stats != NULL)
		st->be->stats(st, out);
}

int
sr_store_presign(struct sr_store *st, const char *key, double expires_s, char **url,
    char *err)
{
	char show[SR_KEY_SHOW_MAX];

	*url = NULL;
	if (sr_store_key_check("presign", key, err) == -1)
		return SR_STORE_ERROR;
	sr_store_key_show(key, show, sizeof show);
	if (!(expires_s >= 1 && expires_s <= SR_PRESIGN_MAX))
		return sr_err(err, "presign %s: the URL's life must be 1 s to 7 days (%d s), not "
		    "%g s", show, SR_PRESIGN_MAX, expires_s);
	if (st->be->presign == NULL)
		return sr_err(err, "presign %s: a %s:// store has no URL that another machine can "
		    "fetch; use s3://, gs:// or az://", show, st->be->scheme);
	if (st->be->presign(st, key, (long)expires_s, time(NULL), url, err) == -1)
		return sr_err_prefix(err, "presign %s", show);
	return 0;
}

/* The words of the permanent errors, and who writes them. */
static const char *const permanent_words[] = {
	"not a regular file: the file store keeps objects",	/* store-file.c */
	"bytes, more than the",		/* store-file.c: an object too large */
	"the reply is larger than",	/* xfer.c: an object too large */
	"does not exist (create it",	/* s3.c, az.c: no such bucket, container */
	"access denied (AccessDenied)",	/* s3.c */
	": Not a directory",		/* file://: a file where a folder must be */
	": Permission denied",		/* file:// */
	": Read-only file system",	/* file:// */
};

int
sr_store_err_permanent(const char *err)
{
	size_t i;

	if (err == NULL || sr_err_is_oom(err))
		return 0;
	for (i = 0; i < sizeof permanent_words / sizeof permanent_words[0]; i++) {
		if (strstr(err, permanent_words[i]) != NULL)
			return 1;
	}
	return 0;
}

const char *
sr_store_rc_name(int rc)
{
	switch (rc) {
	case SR_STORE_OK:
		return "SR_STORE_OK";
	case SR_STORE_ERROR:
		return "SR_STORE_ERROR";
	case SR_STORE_NOTFOUND:
		return "SR_STORE_NOTFOUND";
	case SR_STORE_EXISTS:
		return "SR_STORE_EXISTS";
	case SR_STORE_PRECONDITION:
		return "SR_STORE_PRECONDITION";
	}
	return "SR_STORE_UNKNOWN";
}
