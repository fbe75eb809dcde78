/*
 * az-blocks.c: Put Blob, and block uploads as a family of store/parts.c
 * (az-blocks.h): each block's query, the block list that commits them,
 * dropping an upload's blocks, the single Put Blob of a small object.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "az-blocks.h"
#include "az.h"
#include "parts.h"
#include "store-int.h"
#include "util.h"

#define ID_RAW_LEN	12	/* "blk-%08d": 16 base64 characters, no padding */

/* One upload's Azure side: the store and the ids' encoding. */
struct az_up {
	struct sr_az *a;
};

int
sr_az_put_blob(struct sr_az *a, const char *key, const void *buf, size_t len,
    const char *cond, double deadline, volatile int *cancel, char *md5_b64,
    struct sr_xfer_resp *resp, const char *what, char *err)
{
	struct sr_xfer_req rq = { .method = "PUT", .key = key, .body = buf != NULL ? buf : "",
		.body_len = len, .deadline = deadline, .cancel = cancel };
	char md5[SR_SUM_HEADER_MAX];
	int n = 0;

	if (sr_digest_header(SR_SUM_MD5, rq.body, len, md5, err) == -1) {
		memset(resp, 0, sizeof *resp);
		return sr_err_prefix(err, "%s", what);
	}
	if (md5_b64 != NULL)
		snprintf(md5_b64, 25, "%s", md5 + strlen("Content-MD5: "));
	rq.hdrs[n++] = "x-ms-blob-type: BlockBlob";
	rq.hdrs[n++] = "Content-Type: application/octet-stream";
	rq.hdrs[n++] = md5;
	if (cond != NULL)
		rq.hdrs[n++] = cond;
	return sr_az_do(a, &rq, resp, what, err);
}

/* The base64 id of block num ("blk-00000001"). */
static void
block_id(int num, char *out)
{
	char raw[ID_RAW_LEN + 1];

	snprintf(raw, sizeof raw, "blk-%08d", num);
	EVP_EncodeBlock((unsigned char *)out, (unsigned char *)raw, ID_RAW_LEN);
}

static char *
part_query(void *arg, int num)
{
	char id[32], *eid, *q;

	(void)arg;
	block_id(num, id);
	eid = sr_az_encode(id, 0);
	q = sr_asprintf("comp=block&blockid=%s", eid);
	free(eid);
	return q;
}

static int
put_whole(void *arg, struct sr_parts *p, const void *buf, size_t len, char *err)
{
	struct az_up *u = arg;
	struct sr_xfer_resp r;
	int rc = 0;

	if (sr_az_put_blob(u->a, sr_parts_key(p), buf, len, NULL, sr_parts_deadline(p),
	    sr_parts_cancel(p), NULL, &r, sr_parts_what(p), err) == -1)
		return -1;
	if (r.status != 201)
		rc = sr_az_fail(u->a, sr_parts_what(p), &r, err);
	sr_xfer_resp_free(&r);
	return rc;
}

/* Put Block List of blocks 1..n (0: an empty blob) with cond (or NULL):
 * 0 when a reply came (resp filled), -1 with err. */
static int
put_list(struct sr_az *a, const char *key, int n, const char *cond, double deadline,
    volatile int *cancel, struct sr_xfer_resp *resp, const char *what, char *err)
{
	static const char head[] = "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>",
	    tail[] = "</BlockList>";
	size_t cap = sizeof head + sizeof tail + (size_t)n * 40, o = 0;
	char *xml = sr_malloc(cap), id[32], md5[SR_SUM_HEADER_MAX];
	struct sr_xfer_req rq = { .method = "PUT", .key = key, .query = "comp=blocklist",
		.deadline = deadline, .cancel = cancel };
	int i, k = 0, rc;

	o += (size_t)snprintf(xml + o, cap - o, "%s", head);
	for (i = 1; i <= n; i++) {
		block_id(i, id);
		o += (size_t)snprintf(xml + o, cap - o, "<Latest>%s</Latest>", id);
	}
	o += (size_t)snprintf(xml + o, cap - o, "%s", tail);
	if (sr_digest_header(SR_SUM_MD5, xml, o, md5, err) == -1) {
		free(xml);
		memset(resp, 0, sizeof *resp);
		return sr_err_prefix(err, "%s", what);
	}
	rq.body = xml;
	rq.body_len = o;
	rq.hdrs[k++] = "Content-Type: application/xml";
	rq.hdrs[k++] = md5;
	rq.hdrs[k++] = "x-ms-blob-content-type: application/octet-stream";
	if (cond != NULL)
		rq.hdrs[k++] = cond;
	rc = sr_az_do(a, &rq, resp, what, err);
	free(xml);
	return rc;
}

static int
commit(void *arg, struct sr_parts *p, char *err)
{
	struct az_up *u = arg;
	struct sr_xfer_resp r;
	int rc = 0;

	if (put_list(u->a, sr_parts_key(p), sr_parts_count(p), NULL, sr_parts_deadline(p),
	    sr_parts_cancel(p), &r, sr_parts_what(p), err) == -1)
		return -1;
	if (r.status != 201)
		rc = sr_az_fail(u->a, sr_parts_what(p), &r, err);
	sr_xfer_resp_free(&r);
	return rc;
}

int
sr_az_drop_blocks(struct sr_az *a, const char *key, double deadline, volatile int *cancel,
    char *err)
{
	struct sr_xfer_req rq = { .method = "DELETE", .key = key, .deadline = deadline,
		.cancel = cancel };
	struct sr_xfer_resp r;
	char show[SR_KEY_SHOW_MAX], what[SR_KEY_SHOW_MAX + 32], cond[SR_ETAG_MAX + 16];
	int rc;

	snprintf(what, sizeof what, "drop the blocks of %s",
	    sr_store_key_show(key, show, sizeof show));
	if (put_list(a, key, 0, "If-None-Match: *", deadline, cancel, &r, what, err) == -1)
		return -1;
	if (r.status == 409 || r.status == 412) {
		/* a blob is committed there: its uncommitted blocks expire */
		sr_xfer_resp_free(&r);
		return 0;
	}
	if (r.status != 201) {
		rc = sr_az_fail(a, what, &r, err);
		sr_xfer_resp_free(&r);
		return rc;
	}
	snprintf(cond, sizeof cond, "If-Match: \"%s\"", r.etag);
	sr_xfer_resp_free(&r);
	rq.hdrs[0] = cond;
	if (sr_az_do(a, &rq, &r, what, err) == -1)
		return -1;
	/* 412: someone wrote the key meanwhile; theirs stays */
	rc = r.status == 202 || r.status == 412 || r.status == 404 ? 1 : sr_az_fail(a, what, &r, err);
	sr_xfer_resp_free(&r);
	return rc;
}

static void
abort_blocks(void *arg, struct sr_parts *p)
{
	struct az_up *u = arg;
	char err[SR_ERRMAX];

	/* best effort: what cannot be dropped now, Azure drops in 7 days */
	sr_az_drop_blocks(u->a, sr_parts_key(p), 0, NULL, err);
}

static const struct sr_parts_ops az_parts = {
	.part_query = part_query,
	.max_parts = SR_AZ_BLOCKS_MAX,
	.size_option = "block_size",
	.whole = put_whole,
	.commit = commit,
	.abort = abort_blocks,
	.free = free,
};

struct sr_parts *
sr_az_blocks_begin(struct sr_az *a, const char *key, char *err)
{
	struct az_up *u = sr_calloc(1, sizeof *u);

	u->a = a;
	return sr_parts_begin(sr_az_xfer(a), &az_parts, u, key, err);
}
