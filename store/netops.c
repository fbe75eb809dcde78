/*
 * netops.c: the operations the network backends share (netops.h). Each is
 * one request (or many, in parallel, for deletes) whose reply is read the
 * same way for every family; the family's hooks say what its etag is and
 * whether a 404 is the key's, and its fail words every other error.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netops.h"
#include "store-int.h"
#include "util.h"

const char *
sr_net_what(char *buf, size_t len, const char *verb, const char *key)
{
	char show[SR_KEY_SHOW_MAX];

	snprintf(buf, len, "%s %s", verb, sr_store_key_show(key, show, sizeof show));
	return buf;
}

int
sr_net_say(char *err, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, SR_ERRMAX, fmt, ap);
	va_end(ap);
	return code;
}

int
sr_net_get(struct sr_xfer *x, const char *key, size_t max, void **buf, size_t *len,
    char *etag_out, char *err)
{
	struct sr_xfer_req rq = { .method = "GET", .key = key, .max = max ? max : 1 };
	struct sr_xfer_resp r;
	char w[SR_KEY_SHOW_MAX + 16];
	int rc;

	sr_net_what(w, sizeof w, "get", key);
	if (sr_xfer_do(x, &rq, &r, w, err) == -1)
		return SR_STORE_ERROR;
	if (r.status == 200) {
		if (max == 0 && r.len > 0) {
			sr_xfer_resp_free(&r);
			return sr_err(err, "%s: larger than 0 bytes", w);
		}
		if (r.body == NULL && (r.body = sr_try_calloc(1, 1, err)) == NULL) {
			sr_xfer_resp_free(&r);
			return sr_err_prefix(err, "%s", w);
		}
		*buf = r.body;
		if (len != NULL)
			*len = r.len;
		if (etag_out != NULL)
			snprintf(etag_out, SR_ETAG_MAX, "%s", sr_xfer_etag(x, &r));
		r.body = NULL;
		rc = SR_STORE_OK;
	} else if (sr_xfer_missing(x, &r))
		rc = sr_net_say(err, SR_STORE_NOTFOUND, "%s: no such key", w);
	else
		rc = sr_xfer_fail(x, w, &r, err);
	sr_xfer_resp_free(&r);
	return rc;
}

int
sr_net_read_range(struct sr_xfer *x, const char *key, uint64_t off, size_t len, void *buf,
    char *err)
{
	struct sr_xfer_req rq = { .method = "GET", .key = key, .dst = buf, .dst_len = len };
	struct sr_xfer_resp r;
	char w[SR_KEY_SHOW_MAX + 16], range[64];
	int rc;

	sr_net_what(w, sizeof w, "read", key);
	if (len == 0)
		return SR_STORE_OK;
	snprintf(range, sizeof range, "Range: bytes=%llu-%llu", (unsigned long long)off,
	    (unsigned long long)(off + len - 1));
	rq.hdrs[0] = range;
	if (sr_xfer_do(x, &rq, &r, w, err) == -1)
		return SR_STORE_ERROR;
	if ((r.status == 206 || (r.status == 200 && off == 0)) && r.dst_got == len)
		rc = SR_STORE_OK;
	else if (r.status == 206 || r.status == 200 || r.status == 416)
		rc = sr_err(err, "%s: the object is shorter than %llu bytes",
		    w, (unsigned long long)(off + len));
	else if (sr_xfer_missing(x, &r))
		rc = sr_net_say(err, SR_STORE_NOTFOUND, "%s: no such key", w);
	else
		rc = sr_xfer_fail(x, w, &r, err);
	sr_xfer_resp_free(&r);
	return rc;
}

int
sr_net_head(struct sr_xfer *x, const char *key, struct sr_object_info *info, char *err)
{
	struct sr_xfer_req rq = { .method = "HEAD", .key = key };
	struct sr_xfer_resp r;
	char w[SR_KEY_SHOW_MAX + 16];
	int rc;

	sr_net_what(w, sizeof w, "head", key);
	if (sr_xfer_do(x, &rq, &r, w, err) == -1)
		return SR_STORE_ERROR;
	if (r.status == 200) {
		memset(info, 0, sizeof *info);
		info->key = key;
		info->size = r.content_length;
		info->mtime = r.mtime;
		snprintf(info->etag, sizeof info->etag, "%s", sr_xfer_etag(x, &r));
		rc = SR_STORE_OK;
	} else if (sr_xfer_missing(x, &r))
		rc = sr_net_say(err, SR_STORE_NOTFOUND, "%s: no such key", w);
	else
		rc = sr_xfer_fail(x, w, &r, err);
	sr_xfer_resp_free(&r);
	return rc;
}

/* What a delete's reply means: a 2xx or a missing key is success. */
static int
deleted(struct sr_xfer *x, const char *what, const struct sr_xfer_resp *r, char *err)
{
	if ((r->status >= 200 && r->status < 300) || sr_xfer_missing(x, r))
		return 0;
	return sr_xfer_fail(x, what, r, err);
}

int
sr_net_del(struct sr_xfer *x, const char *key, const char *hdr, char *err)
{
	struct sr_xfer_req rq = { .method = "DELETE", .key = key };
	struct sr_xfer_resp r;
	char w[SR_KEY_SHOW_MAX + 16];
	int rc;

	sr_net_what(w, sizeof w, "delete", key);
	rq.hdrs[0] = hdr;
	if (sr_xfer_do(x, &rq, &r, w, err) == -1)
		return SR_STORE_ERROR;
	rc = deleted(x, w, &r, err) == 0 ? SR_STORE_OK : SR_STORE_ERROR;
	sr_xfer_resp_free(&r);
	return rc;
}

struct del_arg {
	struct sr_xfer *x;
	char **what;
};

static int
del_done(void *arg, size_t i, const struct sr_xfer_resp *r, char *err)
{
	const struct del_arg *da = arg;

	return deleted(da->x, da->what[i], r, err);
}

int
sr_net_del_many(struct sr_xfer *x, const char *const *keys, size_t n, const char *hdr,
    char *err)
{
	struct sr_xfer_req *rq = sr_try_calloc(n, sizeof *rq, err);
	struct del_arg da = { x, rq != NULL ? sr_try_calloc(n, sizeof *da.what, err) : NULL };
	char show[SR_KEY_SHOW_MAX];
	size_t i;
	int rc = da.what != NULL ? 0 : -1;

	for (i = 0; rc == 0 && i < n; i++) {
		rq[i].method = "DELETE";
		rq[i].key = keys[i];
		rq[i].hdrs[0] = hdr;
		da.what[i] = sr_try_asprintf(err, "delete %s",
		    sr_store_key_show(keys[i], show, sizeof show));
		if (da.what[i] == NULL)
			rc = -1;
	}
	if (rc == 0)
		rc = sr_xfer_do_many(x, rq, (const char *const *)da.what, n, del_done, &da, err);
	else
		sr_err_prefix(err, "delete %s", n > 0 ? sr_store_key_show(keys[0], show,
		    sizeof show) : "");
	for (i = 0; da.what != NULL && i < n; i++)
		free(da.what[i]);
	free(da.what);
	free(rq);
	return rc == 0 ? 0 : SR_STORE_ERROR;
}

void
sr_net_read_plan(struct sr_xfer *x, int *streams, uint64_t *piece)
{
	*streams = sr_xfer_tuning(x)->concurrency;
	*piece = sr_xfer_tuning(x)->part_size;
}
