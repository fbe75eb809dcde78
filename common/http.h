/*
 * http.h: a small blocking HTTP client for the metadata services (AWS IMDS,
 * GCP, Azure), on libcurl. It lives in common/ because both the providers
 * (notices, facts) and the stores (instance-role credentials) read metadata. Every request is bounded: a connect
 * timeout, a total timeout, a cap on the reply body, and no redirects are
 * followed (a metadata service never redirects; a reply that tries is an
 * error), so a hostile or broken endpoint cannot hang or bloat the watcher.
 */
#ifndef SR_HTTP_H
#define SR_HTTP_H

#include <stddef.h>

#include <curl/curl.h>

#define SR_HTTP_BODY_MAX (64 * 1024)	/* the default cap on a reply body */
#define SR_HTTP_CAPTURE_MAX 4		/* reply headers one request may capture */
#define SR_HTTP_HEADER_MAX 1024		/* a captured value is cut to this many bytes */
/* The User-Agent of every request spotrun makes, to the metadata services
 * here and to the stores (store/xfer.c): servers' logs and their operators'
 * support name the client by it. No metadata service reads it (IMDS, GCP's
 * and Azure's go by their own headers), so it changes nothing they answer.
 * PACKAGE_VERSION is config.h's, which every file includes first. */
#define SR_HTTP_USER_AGENT "spotrun/" PACKAGE_VERSION

struct sr_http_req {
	const char *method;		/* "GET", "PUT", "POST" */
	const char *url;
	const char *const *headers;	/* "Name: value" strings, NULL-terminated; may be NULL */
	const char *body;		/* request body or NULL (sent with PUT/POST) */
	size_t body_len;
	double connect_timeout;		/* seconds; > 0 */
	double timeout;			/* seconds for the whole request; > 0 */
	size_t body_max;		/* reply bytes allowed; 0: SR_HTTP_BODY_MAX */
	/* NULL, or checked while the request runs (at least every 50 ms):
	 * nonzero aborts it, so a watcher thread can be stopped promptly. */
	int (*cancel)(void *arg);
	void *cancel_arg;
	/* NULL, or up to SR_HTTP_CAPTURE_MAX reply header names (matched
	 * without regard to case), NULL-terminated: the value of each comes
	 * back in resp->captured[i] (GCP's ETag and Metadata-Flavor). */
	const char *const *capture;
};

struct sr_http_resp {
	long status;			/* the HTTP status code (3xx included) */
	char *body;			/* NUL-terminated, owned: sr_http_resp_free */
	size_t len;
	/* For req->capture[i]: the header's value without surrounding blanks
	 * (the last one when it repeats), or NULL when the reply lacks it;
	 * owned, freed by sr_http_resp_free. */
	char *captured[SR_HTTP_CAPTURE_MAX];
};

/* Call once from the main thread before any thread uses sr_http_do (wraps
 * curl_global_init, which is reference counted); pair with sr_http_cleanup.
 * 0 or -1 with err set. */
int sr_http_init(char *err);
void sr_http_cleanup(void);

/* Perform one request. 0: a reply came (whatever its status; resp->body
 * holds it); -1: no usable reply (connect failure, timeout, a body over the
 * cap, a bad URL), with err as "METHOD URL: reason" and resp zeroed; on
 * out-of-memory (ours or curl's) the reason says so (sr_err_is_oom).
 * Thread-safe: each call uses its own curl handle. */
int sr_http_do(const struct sr_http_req *req, struct sr_http_resp *resp, char *err);
void sr_http_resp_free(struct sr_http_resp *resp);

/* The error of a curl call that returned c (not CURLE_OK), or of a multi
 * call that returned mc: "WHAT: out of memory" for curl's out-of-memory
 * (sr_err_is_oom), else "WHAT: curl's reason"; -1. For every curl user. */
int sr_http_easy_err(CURLcode c, const char *what, char *err);
int sr_http_multi_err(CURLMcode mc, const char *what, char *err);

#endif
