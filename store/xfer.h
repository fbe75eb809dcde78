/*
 * xfer.h: the HTTP request engine the network stores share (the S3 family
 * in store/s3/, Azure Blob in store/azure/). A family describes its
 * requests (method, key, query, headers, body) and signs each attempt; the
 * engine turns them into libcurl transfers with bounded time and memory and
 * retries them: full-jitter exponential backoff on broken or stalled
 * connections and on the replies the family calls transient (5xx,
 * throttling), a deadline and a cancel flag that bound every attempt, and
 * nothing sent once the deadline passed. Every other reply comes back to
 * the caller, whose operation decides what it means (412 = lost race, 404 =
 * not found). Nothing hangs: connects and stalled transfers time out.
 *
 * The engine is thread-safe: restore workers read ranges at once, each on
 * an easy handle from a pool that keeps its connections alive between
 * requests. Parallel uploads (parts.h) drive many transfers on one curl
 * multi handle with the same preparation and verdict functions.
 *
 * What the family provides (struct sr_xfer_family): the signer (the
 * attempt's URL and its signed headers, with the time and credentials of
 * that attempt), the judge of an error reply (retry at once after fixing
 * something, such as a region or expired credentials; retry after a
 * backoff; or final), the reply headers it wants kept, and the words of
 * its messages. Never does a secret reach an error message: families name
 * credentials by their source only.
 */
#ifndef SR_XFER_H
#define SR_XFER_H

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "digest.h"
#include "store.h"
#include "xmlwalk.h"

struct sr_xfer;

#define SR_XFER_HDRS_MAX	8	/* extra headers of one request */
#define SR_XFER_CAPTURE_MAX	4	/* family reply headers kept */
#define SR_XFER_CAPTURE_LEN	256	/* ... each cut to this length */

/* What to send. */
struct sr_xfer_req {
	const char *method;		/* "GET", "PUT", "HEAD", "POST", "DELETE" */
	const char *key;		/* object key under the store's prefix; NULL: the bucket/container */
	const char *query;		/* encoded query without '?', or NULL */
	/* extra headers "Name: value", signed and sent; NULL-terminated */
	const char *hdrs[SR_XFER_HDRS_MAX + 1];
	const void *body;		/* request body (PUT, POST) or NULL */
	size_t body_len;
	int unsigned_payload;		/* S3's signer: UNSIGNED-PAYLOAD instead of the body's SHA-256 */
	/* Where a 2xx reply body goes: dst_len bytes exactly into dst when dst
	 * is set (a ranged read); else into resp->body, at most max bytes (0:
	 * 1 MiB), longer is an error. Error replies always go to resp->body. */
	void *dst;
	size_t dst_len;
	size_t max;
	/* Give up once the epoch deadline passes (0: none) or *cancel turns
	 * nonzero (checked between attempts; the deadline also bounds each).
	 * An attempt the server answered with a 2xx is kept even so: what it
	 * did has happened, and its reply says what (an upload's id). */
	double deadline;
	volatile int *cancel;
};

/* What came back (the last attempt's reply). */
struct sr_xfer_resp {
	long status;
	char *body;			/* NUL-terminated, owned (sr_xfer_resp_free) */
	size_t len;
	size_t dst_got;			/* bytes written into req->dst */
	int too_big;			/* the body passed its limit */
	char etag[SR_ETAG_MAX];		/* without quotes */
	/* the family's headers (struct sr_xfer_family's capture), by index;
	 * "" when absent */
	char captured[SR_XFER_CAPTURE_MAX][SR_XFER_CAPTURE_LEN];
	uint64_t content_length;
	double mtime;			/* Last-Modified, epoch seconds */
	double date;			/* the server's Date header, epoch seconds (0: none) */
	struct sr_xml_error error;	/* an <Error> body of a status >= 300, parsed */
	int attempts;			/* how many tries it took */
	/* An earlier attempt broke off without a reply: a write may have
	 * landed before this attempt (a create-only PUT then sees 412). */
	int maybe_landed;
};

/* Tunables of a store, from its URL's options (doc/spotrun-job.5). */
struct sr_xfer_tuning {
	size_t part_size;		/* upload part (S3) or block (Azure) size, bytes */
	int concurrency;		/* requests in flight: an upload's parts,
					 * a restore's ranged reads */
	enum sr_sum part_sum;		/* each part's checksum (digest.h) */
	int attempts;			/* tries per request, first included */
	double stall_timeout;		/* seconds without a byte before a transfer is dropped */
};

/* One request's attempts (opaque). */
struct sr_xfer_call;

/* What a family tells the engine after an error reply. */
enum sr_xfer_judgement {
	SR_XFER_FINAL = 0,	/* the reply is the answer */
	SR_XFER_AGAIN,		/* something was fixed: sign and send again at once */
	SR_XFER_TRANSIENT	/* retry after a backoff while attempts remain */
};

struct sr_xfer_family {
	/* Bytes of per-call state the family keeps between the attempts of
	 * one request (what it signed with); zeroed at the call's start. */
	size_t state_size;
	/* Sign one attempt: *url (malloc'd) and the signed headers, added to
	 * *hl with sr_xfer_header (the engine adds the transport's own). 0,
	 * or -1 with err prefixed by what (no credentials). */
	int (*sign)(void *fam, const struct sr_xfer_req *rq, void *state, const char *what,
	    char **url, struct curl_slist **hl, char *err);
	/* A reply with status >= 300 (resp->error parsed from its body when
	 * it had one): what to do. A family that fixes something (AGAIN)
	 * keeps count in state, so that it does not fix forever. */
	enum sr_xfer_judgement (*judge)(void *fam, const struct sr_xfer_req *rq, void *state,
	    struct sr_xfer_resp *resp);
	/* Wipe what state holds when the call ends (a secret); NULL: nothing. */
	void (*state_wipe)(void *state);
	/* Describe a final non-2xx reply in err as "WHAT: reason" with the fix
	 * where one is known; returns -1. */
	int (*fail)(void *fam, const char *what, const struct sr_xfer_resp *resp, char *err);
	/* The etag store.h's callers see in a 2xx reply; NULL: resp->etag. */
	const char *(*etag)(void *fam, const struct sr_xfer_resp *resp);
	/* Whether a 404 reply says the key is missing, not its bucket or
	 * container; NULL: every 404 does. */
	int (*missing)(void *fam, const struct sr_xfer_resp *resp);
	/* Reply headers kept in resp->captured (NULL-terminated, at most
	 * SR_XFER_CAPTURE_MAX; matched without regard to case). */
	const char *capture[SR_XFER_CAPTURE_MAX + 1];
	/* Appended to the message for an untrusted TLS certificate: how to
	 * name a private CA ("set AWS_CA_BUNDLE to its PEM file"). */
	const char *ca_hint;
};

/* An engine for family (fam is its first argument) with tuning t (kept by
 * pointer: the family owns it) and a CA bundle ("" or NULL: the system's).
 * NULL with err ("set up the request engine: ...") on OOM only. */
struct sr_xfer *sr_xfer_new(const struct sr_xfer_family *family, void *fam,
    const struct sr_xfer_tuning *t, const char *ca_bundle, char *err);
void sr_xfer_free(struct sr_xfer *x);
const struct sr_xfer_tuning *sr_xfer_tuning(const struct sr_xfer *x);
/* What x's requests cost so far (store.h's struct sr_store_stats). */
void sr_xfer_stats(struct sr_xfer *x, struct sr_store_stats *out);

/* Perform rq with retries. 0 when a reply came (any status; resp filled),
 * -1 with err ("WHAT: reason") when none did after every attempt or the
 * request could not be made. what names the operation for messages ("put
 * ckpt/a"). Out of memory (ours, curl's, the signer's) ends the request at
 * once, never retried, with err saying so (sr_err_is_oom). */
int sr_xfer_do(struct sr_xfer *x, const struct sr_xfer_req *rq, struct sr_xfer_resp *resp,
    const char *what, char *err);
void sr_xfer_resp_free(struct sr_xfer_resp *resp);

/*
 * Perform n requests (rq[i], named what[i] in messages), at most the
 * tuning's concurrency of them in flight on one curl multi handle, each
 * retried as sr_xfer_do's. done is called in the caller's thread for each
 * reply, in the order they come: 0 goes on, -1 (err set) stops. 0 when
 * every request had its reply and done took it; -1 with err when one got
 * no reply after every attempt or done stopped (requests in flight are
 * then dropped; some may have reached the server).
 */
int sr_xfer_do_many(struct sr_xfer *x, const struct sr_xfer_req *rq, const char *const *what,
    size_t n, int (*done)(void *arg, size_t i, const struct sr_xfer_resp *resp, char *err),
    void *arg, char *err);
/* The etag of a 2xx reply as the family gives it (its etag hook). */
const char *sr_xfer_etag(struct sr_xfer *x, const struct sr_xfer_resp *resp);
/* Whether resp is a 404 for the key (the family's missing hook). */
int sr_xfer_missing(struct sr_xfer *x, const struct sr_xfer_resp *resp);
/* The family's description of a final non-2xx reply (its fail); -1. */
int sr_xfer_fail(struct sr_xfer *x, const char *what, const struct sr_xfer_resp *resp,
    char *err);

/* Append "Name: value" (a whole line) to *hl: 0, or -1 with err on OOM
 * (*hl as it was, still the caller's to free). */
int sr_xfer_header(struct curl_slist **hl, const char *line, char *err);

/*
 * For transfers driven elsewhere (a curl multi in parts.c): one call is
 * one request with its own easy handle, prepared again for each attempt.
 * what names the request in messages, as for sr_xfer_do. sr_xfer_call_new:
 * NULL with err ("WHAT: ...") on OOM.
 */
struct sr_xfer_call *sr_xfer_call_new(struct sr_xfer *x, const struct sr_xfer_req *rq,
    const char *what, char *err);
/* Prepare the handle for the next attempt (signed with the current time
 * and credentials). 0, or -1 with err (deadline passed, cancelled, no
 * credentials). */
int sr_xfer_call_setup(struct sr_xfer_call *c, char *err);
CURL *sr_xfer_call_handle(struct sr_xfer_call *c);
/* After the handle finished with result: 0 when the reply is final (see
 * sr_xfer_call_resp), 1 to try again after *delay seconds, -1 when no more
 * attempts are left or the error is not worth retrying (err set; out of
 * memory never is). */
int sr_xfer_call_verdict(struct sr_xfer_call *c, CURLcode result, double *delay, char *err);
struct sr_xfer_resp *sr_xfer_call_resp(struct sr_xfer_call *c);
void sr_xfer_call_free(struct sr_xfer_call *c);

#endif
