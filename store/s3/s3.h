/*
 * s3.h: the S3 request engine under the s3:// and gs:// stores. It knows
 * the bucket, the prefix, the endpoint (AWS's virtual-hosted URL, or a
 * custom endpoint path-style), the region, the credentials, and turns one
 * request description into signed HTTP on libcurl with retries: full-jitter
 * exponential backoff on 5xx, SlowDown, RequestTimeout, 409
 * ConditionalRequestConflict and broken connections; the right region taken
 * from an AuthorizationHeaderMalformed reply; role credentials refetched
 * once when the server calls them expired. Every other reply comes back to
 * the caller, whose operation decides what it means (412 = lost race, 404 =
 * not found). Nothing hangs: connects and stalled transfers time out.
 *
 * The engine is thread-safe: restore workers read ranges at once, each on an
 * easy handle from a pool that keeps its connections alive between requests.
 * A multipart upload drives many transfers on one curl multi handle
 * (s3-mpu.c) with the same preparation and verdict functions.
 *
 * Never does a secret reach an error message: messages name the credentials
 * by their source only.
 */
#ifndef SR_S3_H
#define SR_S3_H

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "s3-xml.h"
#include "store.h"

struct sr_s3;

#define SR_S3_HDRS_MAX 8

/* What to send. */
struct sr_s3_req {
	const char *method;		/* "GET", "PUT", "HEAD", "POST", "DELETE" */
	const char *key;		/* object key under the store's prefix; NULL: the bucket */
	const char *query;		/* encoded query without '?', or NULL */
	/* extra headers "Name: value", signed and sent; NULL-terminated */
	const char *hdrs[SR_S3_HDRS_MAX + 1];
	const void *body;		/* request body (PUT, POST) or NULL */
	size_t body_len;
	int unsigned_payload;		/* sign UNSIGNED-PAYLOAD instead of the body's SHA-256 */
	/* Where a 2xx reply body goes: dst_len bytes exactly into dst when dst
	 * is set (a ranged read); else into resp->body, at most max bytes (0:
	 * 1 MiB), longer is an error. Error replies always go to resp->body. */
	void *dst;
	size_t dst_len;
	size_t max;
	/* Give up once the epoch deadline passes (0: none) or *cancel turns
	 * nonzero (checked between attempts; the deadline also bounds each). */
	double deadline;
	volatile int *cancel;
};

/* What came back (the last attempt's reply). */
struct sr_s3_resp {
	long status;
	char *body;			/* NUL-terminated, owned (sr_s3_resp_free) */
	size_t len;
	size_t dst_got;			/* bytes written into req->dst */
	int too_big;			/* the body passed its limit */
	char etag[SR_ETAG_MAX];		/* without quotes */
	char generation[32];		/* GCS's x-goog-generation */
	char bucket_region[64];		/* x-amz-bucket-region */
	uint64_t content_length;
	double mtime;			/* Last-Modified, epoch seconds */
	double date;			/* the server's Date header, epoch seconds (0: none) */
	struct sr_s3_error error;	/* parsed for status >= 300 */
	int attempts;			/* how many tries it took */
	/* An earlier attempt broke off without a reply: a write may have
	 * landed before this attempt (a create-only PUT then sees 412). */
	int maybe_landed;
};

/* Tunables of a store, from its URL's options (doc/spotrun-job.5). */
struct sr_s3_tuning {
	size_t part_size;		/* multipart part size, bytes */
	int concurrency;		/* requests in flight: an upload's parts,
					 * a restore's ranged reads */
	int part_md5;			/* send a Content-MD5 with each part */
	int attempts;			/* tries per request, first included */
	double stall_timeout;		/* seconds without a byte before a transfer is dropped */
};

/* Open the engine for scheme ("s3" or "gs") and the URL's rest
 * ("bucket[/prefix][?opt=value&...]"): resolves config and credentials
 * (creds.h). 0, or -1 with err naming the URL part and the fix. */
int sr_s3_open(const char *scheme, const char *rest, struct sr_s3 **out, char *err);
void sr_s3_close(struct sr_s3 *s);
/* Check the URL's syntax (bucket, prefix, options) as sr_s3_open would,
 * reading no file and making no request. 0, or -1 with err. */
int sr_s3_url_check(const char *scheme, const char *rest, char *err);

int sr_s3_is_gcs(const struct sr_s3 *s);
const struct sr_s3_tuning *sr_s3_tuning(const struct sr_s3 *s);
/* The store's prefix with its trailing '/' ("" when none): keys in listings
 * start with it. */
const char *sr_s3_prefix(const struct sr_s3 *s);

/* Perform rq with retries. 0 when a reply came (any status; resp filled),
 * -1 with err ("VERB KEY: reason") when none did after every attempt or the
 * request could not be made. what names the operation for messages ("put
 * ckpt/a"). */
int sr_s3_do(struct sr_s3 *s, const struct sr_s3_req *rq, struct sr_s3_resp *resp,
    const char *what, char *err);
void sr_s3_resp_free(struct sr_s3_resp *resp);

/* Describe a final non-2xx reply in err as "WHAT: reason" with the fix
 * where one is known (wrong secret, clock skew, no such bucket, access
 * denied, ...); returns -1. */
int sr_s3_fail(struct sr_s3 *s, const char *what, const struct sr_s3_resp *resp, char *err);

/* Content-MD5 of len bytes: base64 into b64 (25 bytes) and/or lowercase hex
 * into hex (33 bytes); either may be NULL. */
void sr_s3_content_md5(const void *buf, size_t len, char *b64, char *hex);

/*
 * For transfers driven elsewhere (a curl multi in s3-mpu.c): one call is
 * one request with its own easy handle, prepared again for each attempt.
 */
struct sr_s3_call;
/* what names the request in messages, as for sr_s3_do. */
struct sr_s3_call *sr_s3_call_new(struct sr_s3 *s, const struct sr_s3_req *rq,
    const char *what);
/* Prepare the handle for the next attempt (signs with the current time and
 * credentials). 0, or -1 with err (no credentials). */
int sr_s3_call_setup(struct sr_s3_call *c, char *err);
CURL *sr_s3_call_handle(struct sr_s3_call *c);
/* After the handle finished with result: 0 when the reply is final (see
 * sr_s3_call_resp), 1 to try again after *delay seconds, -1 when no more
 * attempts are left or the error is not worth retrying (err set). */
int sr_s3_call_verdict(struct sr_s3_call *c, CURLcode result, double *delay, char *err);
struct sr_s3_resp *sr_s3_call_resp(struct sr_s3_call *c);
void sr_s3_call_free(struct sr_s3_call *c);

#endif
