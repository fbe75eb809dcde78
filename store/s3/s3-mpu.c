/*
 * s3-mpu.c: the S3 family of parallel part uploads (s3-mpu.h on
 * store/parts.h): CreateMultipartUpload, each part's query, the
 * CompleteMultipartUpload document of the parts' ETags, the abort, and
 * the single PUT of a small object.
 */
#include "config.h"

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

#define PARTS_MAX	10000	/* S3's limit on parts per upload */

/* One upload's S3 side. */
struct s3_mpu {
	struct sr_s3 *s;
	char *upload_id;		/* NULL until CreateMultipartUpload answered */
};

/* POST ?uploads: the upload's id. 0, or -1 with err. */
static int
initiate(void *arg, struct sr_parts *p, char *err)
{
	struct s3_mpu *m = arg;
	struct sr_xfer_req rq = { .method = "POST", .key = sr_parts_key(p), .query = "uploads=",
		.body = "", .body_len = 0 };
	struct sr_xfer_resp r;
	int rc;

	rq.hdrs[0] = "Content-Type: application/octet-stream";
	rq.deadline = sr_parts_deadline(p);
	rq.cancel = sr_parts_cancel(p);
	if (sr_s3_do(m->s, &rq, &r, sr_parts_what(p), err) == -1)
		return -1;
	/* the store answers: the aborts it missed before can go now */
	sr_s3_mpu_settle(m->s, 0);
	if (r.status == 200)
		rc = sr_s3_xml_upload_id(r.body != NULL ? r.body : "", r.len, &m->upload_id, err);
	else
		rc = sr_s3_fail(m->s, sr_parts_what(p), &r, err);
	if (rc == -1 && r.status == 200)
		sr_err_prefix(err, "%s", sr_parts_what(p));
	sr_xfer_resp_free(&r);
	return rc;
}

/* before + "uploadId=ID" with the id encoded, malloc'd; NULL with err
 * on out-of-memory. */
static char *
id_query(const char *upload_id, const char *before, char *err)
{
	char *eid = sr_sigv4_uri_encode(upload_id, strlen(upload_id), 0, err);
	char *q = eid != NULL ? sr_try_asprintf(err, "%suploadId=%s", before, eid) : NULL;

	free(eid);
	return q;
}

/* NULL on out-of-memory (parts.h's part_query has no err). */
static char *
part_query(void *arg, int num)
{
	const struct s3_mpu *m = arg;
	char before[32];

	snprintf(before, sizeof before, "partNumber=%d&", num);
	return id_query(m->upload_id, before, NULL);
}

/* One PUT for an object smaller than a part. */
static int
put_whole(void *arg, struct sr_parts *p, const void *buf, size_t len, char *err)
{
	struct s3_mpu *m = arg;
	struct sr_xfer_req rq = { .method = "PUT", .key = sr_parts_key(p), .body = buf,
		.body_len = len };
	struct sr_xfer_resp r;
	char sum[SR_SUM_HEADER_MAX];
	int rc = 0;

	/* the parts' checksum; a small object keeps Content-MD5 without one */
	if (sr_digest_header(sr_s3_tuning(m->s)->part_sum == SR_SUM_SHA256 ? SR_SUM_SHA256 :
	    SR_SUM_MD5, buf, len, sum, err) == -1)
		return sr_err_prefix(err, "%s", sr_parts_what(p));
	rq.hdrs[0] = "Content-Type: application/octet-stream";
	rq.hdrs[1] = sum;
	rq.unsigned_payload = 1;
	rq.deadline = sr_parts_deadline(p);
	rq.cancel = sr_parts_cancel(p);
	if (sr_s3_do(m->s, &rq, &r, sr_parts_what(p), err) == -1)
		return -1;
	if (r.status != 200)
		rc = sr_s3_fail(m->s, sr_parts_what(p), &r, err);
	sr_xfer_resp_free(&r);
	return rc;
}

/* POST ?uploadId: make the parts one object. CompleteMultipartUpload may
 * answer 200 and still fail (an <Error> body, sent after the 200 to keep
 * the connection alive), so the body decides. */
static int
complete(void *arg, struct sr_parts *p, char *err)
{
	struct s3_mpu *m = arg;
	int nparts = sr_parts_count(p);
	size_t cap = (size_t)nparts * (64 + SR_ETAG_MAX) + 128, o = 0;
	char *xml = sr_try_malloc(cap, err), *q = NULL;
	struct sr_xfer_req rq = { .method = "POST", .key = sr_parts_key(p) };
	struct sr_xfer_resp r;
	int i, rc = -1, tries, attempts = sr_s3_tuning(m->s)->attempts;

	if (xml == NULL || (q = id_query(m->upload_id, "", err)) == NULL) {
		free(xml);
		return sr_err_prefix(err, "%s", sr_parts_what(p));
	}
	o += (size_t)snprintf(xml + o, cap - o, "<CompleteMultipartUpload>");
	for (i = 0; i < nparts; i++)
		o += (size_t)snprintf(xml + o, cap - o,
		    "<Part><PartNumber>%d</PartNumber><ETag>\"%s\"</ETag></Part>",
		    i + 1, sr_parts_etag(p, i));
	o += (size_t)snprintf(xml + o, cap - o, "</CompleteMultipartUpload>");
	rq.query = q;
	rq.body = xml;
	rq.body_len = o;
	rq.hdrs[0] = "Content-Type: application/xml";
	rq.deadline = sr_parts_deadline(p);
	rq.cancel = sr_parts_cancel(p);
	for (tries = 1; tries <= attempts; tries++) {
		struct sr_xml_error e;
		int doc = 0;

		if (sr_s3_do(m->s, &rq, &r, sr_parts_what(p), err) == -1)
			break;
		if (r.status == 200)
			doc = sr_xml_error(r.body != NULL ? r.body : "", r.len, &e, err);
		if (r.status == 200 && doc == 1) {
			rc = 0;
		} else if (doc == -1) {
			sr_err_prefix(err, "%s", sr_parts_what(p));
		} else if (r.status == 200 && (strcmp(e.code, "InternalError") == 0 ||
		    strcmp(e.code, "SlowDown") == 0) && tries < attempts) {
			sr_xfer_resp_free(&r);
			sr_sleep(0.1 * tries);
			continue;
		} else if (r.status == 200) {
			r.error = e;
			r.status = 500;
			sr_s3_fail(m->s, sr_parts_what(p), &r, err);
		} else
			sr_s3_fail(m->s, sr_parts_what(p), &r, err);
		sr_xfer_resp_free(&r);
		break;
	}
	free(q);
	free(xml);
	return rc;
}

int
sr_s3_mpu_abort(struct sr_s3 *s, const char *key, const char *upload_id, double deadline,
    char *err)
{
	struct sr_xfer_req rq = { .method = "DELETE", .key = key, .deadline = deadline };
	struct sr_xfer_resp r;
	char w[SR_KEY_SHOW_MAX + 16], *q;
	int rc;

	sr_net_what(w, sizeof w, "abort upload", key);
	if ((q = id_query(upload_id, "", err)) == NULL)
		return sr_err_prefix(err, "%s", w);
	rq.query = q;
	rc = sr_s3_do(s, &rq, &r, w, err);
	free(q);
	if (rc == -1)
		return -1;
	if (r.status == 204 || r.status == 200)
		rc = 0;
	else if (sr_xfer_missing(sr_s3_xfer(s), &r))	/* NoSuchUpload */
		rc = r.maybe_landed ? 0 : 1;
	else
		rc = sr_s3_fail(s, w, &r, err);
	sr_xfer_resp_free(&r);
	return rc;
}

int
sr_s3_mpu_settle(struct sr_s3 *s, double deadline)
{
	char **keys, **ids, err[SR_ERRMAX];
	size_t n = sr_s3_owed_take(s, &keys, &ids), i;
	int left = 0;

	for (i = 0; i < n; i++) {
		/* one that cannot be owed again (out of memory) is left to the
		 * stale-upload cleanup: no longer this handle's to count */
		if (sr_s3_mpu_abort(s, keys[i], ids[i], deadline, err) == -1 &&
		    sr_s3_owe_abort(s, keys[i], ids[i], err) == 0)
			left++;
		free(keys[i]);
		free(ids[i]);
	}
	free(keys);
	free(ids);
	return left;
}

/* An upload that will not be completed: aborted now, so that its parts
 * are not kept (and billed) until gc's one-day cleanup; one whose abort
 * does not reach the server is owed, and aborted by this handle as soon
 * as the store answers again (the next upload) or when it closes. */
static void
abort_remote(void *arg, struct sr_parts *p)
{
	struct s3_mpu *m = arg;
	char err[SR_ERRMAX];

	/* an abort that can be neither made nor owed (out of memory) leaves
	 * the upload to the stale-upload cleanup: parts.h's abort has no way
	 * to report it */
	if (m->upload_id != NULL &&
	    sr_s3_mpu_abort(m->s, sr_parts_key(p), m->upload_id, 0, err) == -1)
		(void)sr_s3_owe_abort(m->s, sr_parts_key(p), m->upload_id, err);
}

static void
mpu_free(void *arg)
{
	struct s3_mpu *m = arg;

	free(m->upload_id);
	free(m);
}

static const struct sr_parts_ops s3_parts = {
	.begin = initiate,
	.part_query = part_query,
	.part_etag = 1,
	.max_parts = PARTS_MAX,
	.size_option = "part_size",
	.whole = put_whole,
	.commit = complete,
	.abort = abort_remote,
	.free = mpu_free,
};

struct sr_parts *
sr_s3_mpu_begin(struct sr_s3 *s, const char *key, char *err)
{
	struct s3_mpu *m = sr_try_calloc(1, sizeof *m, err);
	char w[SR_KEY_SHOW_MAX + 16];

	if (m == NULL) {
		sr_err_prefix(err, "%s", sr_net_what(w, sizeof w, "upload", key));
		return NULL;
	}
	m->s = s;
	return sr_parts_begin(sr_s3_xfer(s), &s3_parts, m, key, err);
}
