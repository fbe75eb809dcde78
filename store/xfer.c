/*
 * xfer.c: the request engine of xfer.h: a pool of curl easy handles, one
 * attempt's transfer (reply headers, a body into a buffer or straight into
 * the caller's, the request body from memory, a progress callback that
 * drops stalled transfers), the verdict after each attempt and the retry
 * loop, and what the requests cost (sr_xfer_stats). Each reply's bytes are
 * acknowledged as they are read (conns.h: a server with Nagle's algorithm
 * on otherwise holds a small body 40 ms for the ACK of its headers). What
 * is particular to a store (its URL, signature, error codes and messages)
 * is the family's (struct sr_xfer_family).
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "conns.h"
#include "http.h"
#include "util.h"
#include "xfer.h"

#define ERR_BODY_MAX	(64 * 1024)	/* error replies are small XML */
#define BODY_MAX	(1024 * 1024)	/* default limit on a 2xx body */
#define POOL_MAX	32		/* idle easy handles kept */
#define CONNECT_TIMEOUT	5L		/* seconds */
#define BACKOFF_BASE	0.1		/* seconds: first retry waits up to this */
#define BACKOFF_CAP	5.0		/* seconds: no wait is longer */

struct sr_xfer {
	const struct sr_xfer_family *fam;
	void *fam_arg;
	const struct sr_xfer_tuning *tune;
	char *ca_bundle;		/* NULL: the system's */
	pthread_mutex_t lock;		/* guards the pool and the counts */
	CURL *pool[POOL_MAX];
	int npool;
	struct sr_conns *conns;		/* the sockets its handles opened */
	struct sr_store_stats stats;
};

struct sr_xfer_call {
	struct sr_xfer *x;
	const struct sr_xfer_req *rq;
	CURL *e;
	struct curl_slist *hl;
	size_t sent;			/* request body bytes read by curl */
	struct sr_xfer_resp resp;
	size_t body_cap;
	void *state;			/* the family's, state_size bytes */
	curl_off_t moved;		/* bytes up and down so far in this attempt */
	double moved_at;		/* sr_mono() when that last grew */
	int stalled;			/* this attempt was dropped for moving nothing */
	int oom;			/* ... or for want of memory for its reply */
	curl_socket_t fd;		/* this attempt's connection, once its reply began */
	int acked;			/* ... whose first bytes were acknowledged at once */
	unsigned rng;
	char curl_err[CURL_ERROR_SIZE];
	char what[256];
};

struct sr_xfer *
sr_xfer_new(const struct sr_xfer_family *family, void *fam, const struct sr_xfer_tuning *t,
    const char *ca_bundle, char *err)
{
	struct sr_xfer *x = sr_try_calloc(1, sizeof *x, err);

	if (x == NULL)
		goto fail;
	x->fam = family;
	x->fam_arg = fam;
	x->tune = t;
	if (ca_bundle != NULL && ca_bundle[0] != '\0' &&
	    (x->ca_bundle = sr_try_strdup(ca_bundle, err)) == NULL) {
		free(x);
		goto fail;
	}
	if ((x->conns = sr_conns_new(err)) == NULL) {
		free(x->ca_bundle);
		free(x);
		goto fail;
	}
	if (pthread_mutex_init(&x->lock, NULL) != 0) {
		sr_conns_free(x->conns);
		free(x->ca_bundle);
		free(x);
		sr_err(err, "pthread_mutex_init failed");
		goto fail;
	}
	return x;
fail:
	sr_err_prefix(err, "set up the request engine");
	return NULL;
}

void
sr_xfer_free(struct sr_xfer *x)
{
	int i;

	if (x == NULL)
		return;
	for (i = 0; i < x->npool; i++)
		curl_easy_cleanup(x->pool[i]);
	sr_conns_free(x->conns);	/* after the handles: their sockets close through it */
	pthread_mutex_destroy(&x->lock);
	free(x->ca_bundle);
	free(x);
}

const struct sr_xfer_tuning *
sr_xfer_tuning(const struct sr_xfer *x)
{
	return x->tune;
}

void
sr_xfer_stats(struct sr_xfer *x, struct sr_store_stats *out)
{
	pthread_mutex_lock(&x->lock);
	*out = x->stats;
	pthread_mutex_unlock(&x->lock);
}

/* ---- one attempt ---- */

static size_t
on_header(char *line, size_t size, size_t n, void *arg)
{
	struct sr_xfer_call *c = arg;
	struct sr_xfer_resp *r = &c->resp;
	const char *const *cap = c->x->fam->capture;
	size_t len = size * n, vlen, nlen, i;
	const char *colon, *v;
	char val[SR_XFER_CAPTURE_LEN];

	if (len >= 5 && strncmp(line, "HTTP/", 5) == 0) {
		/* a new reply (after 100 Continue): forget the last one's headers */
		r->etag[0] = '\0';
		for (i = 0; i < SR_XFER_CAPTURE_MAX; i++)
			r->captured[i][0] = '\0';
		r->content_length = 0;
		/* the headers' ACK now, not at the delayed-ACK timer (conns.h) */
		c->fd = sr_conns_find(c->x->conns, c->e);
		c->acked = sr_conns_ack_now(c->fd) == 0;
		return len;
	}
	if ((colon = memchr(line, ':', len)) == NULL)
		return len;
	nlen = (size_t)(colon - line);
	v = colon + 1;
	while (v < line + len && (*v == ' ' || *v == '\t'))
		v++;
	vlen = (size_t)(line + len - v);
	while (vlen > 0 && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' || v[vlen - 1] == ' '))
		vlen--;
	if (vlen >= sizeof val)
		vlen = sizeof val - 1;
	memcpy(val, v, vlen);
	val[vlen] = '\0';
#define IS(name) (nlen == strlen(name) && strncasecmp(line, name, nlen) == 0)
	if (IS("etag")) {
		size_t m = strlen(val);
		const char *p = val;

		if (m >= 2 && val[0] == '"' && val[m - 1] == '"')
			p++, m -= 2;
		snprintf(r->etag, sizeof r->etag, "%.*s", (int)m, p);
	} else if (IS("content-length"))
		r->content_length = strtoull(val, NULL, 10);
	else if (IS("last-modified"))
		r->mtime = (double)curl_getdate(val, NULL);
	else if (IS("date"))
		r->date = (double)curl_getdate(val, NULL);
	else
		for (i = 0; i < SR_XFER_CAPTURE_MAX && cap[i] != NULL; i++)
			if (IS(cap[i]))
				snprintf(r->captured[i], sizeof r->captured[i], "%s", val);
#undef IS
	return len;
}

static size_t
on_body(char *data, size_t size, size_t n, void *arg)
{
	struct sr_xfer_call *c = arg;
	struct sr_xfer_resp *r = &c->resp;
	const struct sr_xfer_req *rq = c->rq;
	size_t len = size * n;
	long status = 0;
	size_t cap;

	curl_easy_getinfo(c->e, CURLINFO_RESPONSE_CODE, &status);
	if (c->acked)
		sr_conns_ack_now(c->fd);	/* and the body's as it comes (conns.h) */
	if (status >= 200 && status < 300 && rq->dst != NULL) {
		if (r->dst_got + len > rq->dst_len) {
			r->too_big = 1;
			return 0;	/* more than asked for: stop */
		}
		memcpy((char *)rq->dst + r->dst_got, data, len);
		r->dst_got += len;
		return len;
	}
	cap = status >= 200 && status < 300 ? (rq->max ? rq->max : BODY_MAX) : ERR_BODY_MAX;
	if (r->len + len > cap) {
		r->too_big = 1;
		return 0;
	}
	if (r->len + len + 1 > c->body_cap) {
		size_t want = (r->len + len + 1) * 2;
		char *more = sr_try_reallocarray(r->body, want, 1, NULL);

		if (more == NULL) {
			c->oom = 1;	/* the verdict says so, and does not retry */
			return 0;
		}
		r->body = more;
		c->body_cap = want;
	}
	memcpy(r->body + r->len, data, len);
	r->len += len;
	r->body[r->len] = '\0';
	return len;
}

static size_t
on_read(char *buf, size_t size, size_t n, void *arg)
{
	struct sr_xfer_call *c = arg;
	size_t want = size * n, left = c->rq->body_len - c->sent;

	if (want > left)
		want = left;
	memcpy(buf, (const char *)c->rq->body + c->sent, want);
	c->sent += want;
	return want;
}

static int
on_seek(void *arg, curl_off_t off, int origin)
{
	struct sr_xfer_call *c = arg;

	if (origin != SEEK_SET || off < 0 || (size_t)off > c->rq->body_len)
		return CURL_SEEKFUNC_CANTSEEK;
	c->sent = (size_t)off;
	return CURL_SEEKFUNC_OK;
}

/* Drop a transfer that moved no byte for stall_timeout seconds. (curl's
 * low-speed limit averages over several seconds, so a burst before a stall
 * kept a dead transfer alive for 5 s past the limit.) */
static int
on_xfer(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	struct sr_xfer_call *c = arg;
	double now = sr_mono();

	(void)dltotal;
	(void)ultotal;
	if (dlnow + ulnow != c->moved) {
		c->moved = dlnow + ulnow;
		c->moved_at = now;
		return 0;
	}
	if (now - c->moved_at < c->x->tune->stall_timeout)
		return 0;
	c->stalled = 1;
	return 1;
}

/* An easy handle from the pool, or a new one; NULL with err. */
static CURL *
pool_take(struct sr_xfer *x, char *err)
{
	CURL *e = NULL;

	pthread_mutex_lock(&x->lock);
	if (x->npool > 0)
		e = x->pool[--x->npool];
	pthread_mutex_unlock(&x->lock);
	if (e == NULL && (e = curl_easy_init()) == NULL)
		sr_err_oom(err, "curl_easy_init");
	return e;
}

static void
pool_give(struct sr_xfer *x, CURL *e)
{
	pthread_mutex_lock(&x->lock);
	if (x->npool < POOL_MAX) {
		x->pool[x->npool++] = e;
		e = NULL;
	}
	pthread_mutex_unlock(&x->lock);
	if (e != NULL)
		curl_easy_cleanup(e);
}

struct sr_xfer_call *
sr_xfer_call_new(struct sr_xfer *x, const struct sr_xfer_req *rq, const char *what,
    char *err)
{
	struct sr_xfer_call *c = sr_try_calloc(1, sizeof *c, err);
	struct timespec ts;

	if (c == NULL) {
		sr_err_prefix(err, "%s", what);
		return NULL;
	}
	c->x = x;
	snprintf(c->what, sizeof c->what, "%s", what);
	c->rq = rq;
	if ((c->e = pool_take(x, err)) == NULL ||
	    (x->fam->state_size > 0 &&
	    (c->state = sr_try_calloc(1, x->fam->state_size, err)) == NULL)) {
		if (c->e != NULL)
			pool_give(x, c->e);
		free(c);
		sr_err_prefix(err, "%s", what);
		return NULL;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	c->rng = (unsigned)ts.tv_nsec ^ (unsigned)(uintptr_t)c;
	return c;
}

CURL *
sr_xfer_call_handle(struct sr_xfer_call *c)
{
	return c->e;
}

struct sr_xfer_resp *
sr_xfer_call_resp(struct sr_xfer_call *c)
{
	return &c->resp;
}

void
sr_xfer_call_free(struct sr_xfer_call *c)
{
	if (c == NULL)
		return;
	curl_slist_free_all(c->hl);
	if (c->state != NULL && c->x->fam->state_wipe != NULL)
		c->x->fam->state_wipe(c->state);
	free(c->state);
	pool_give(c->x, c->e);
	sr_xfer_resp_free(&c->resp);
	free(c);
}

void
sr_xfer_resp_free(struct sr_xfer_resp *resp)
{
	free(resp->body);
	memset(resp, 0, sizeof *resp);
}

int
sr_xfer_header(struct curl_slist **hl, const char *line, char *err)
{
	struct curl_slist *n = curl_slist_append(*hl, line);

	if (n == NULL)
		return sr_err_oom(err, "add a request header (curl_slist_append)");
	*hl = n;
	return 0;
}

/* The deadline's error, with what the last try met when there was one:
 * the cause, not only the clock, is what a user needs to hear. */
static int
deadline_passed(const struct sr_xfer_call *c, char *err)
{
	if (c->resp.attempts > 0 && c->curl_err[0] != '\0')
		return sr_err(err, "%s: the checkpoint's deadline passed after %d tries (the last: "
		    "%s)", c->what, c->resp.attempts, c->curl_err);
	if (c->resp.attempts > 0 && c->resp.status >= 300)
		return sr_err(err, "%s: the checkpoint's deadline passed after %d tries (the last: "
		    "HTTP %ld%s%s)", c->what, c->resp.attempts, c->resp.status,
		    c->resp.error.code[0] != '\0' ? " " : "", c->resp.error.code);
	return sr_err(err, "%s: the checkpoint's deadline passed", c->what);
}

/* Whether tries attempts are all a request may have: a request with a
 * deadline (a notice's checkpoint) tries until the deadline, however
 * many tries that takes; others stop at the tuning's count. */
static int
out_of_tries(const struct sr_xfer_call *c, int tries)
{
	return c->rq->deadline > 0 ? 0 : tries >= c->x->tune->attempts;
}

int
sr_xfer_call_setup(struct sr_xfer_call *c, char *err)
{
	struct sr_xfer *x = c->x;
	const struct sr_xfer_req *rq = c->rq;
	int maybe_landed = c->resp.maybe_landed, attempts = c->resp.attempts;
	char *url = NULL;
	CURLcode cc;

	/* never send what the deadline no longer allows: a request that
	 * reached the server could create what nobody then cleans up */
	if (rq->deadline > 0 && sr_now() >= rq->deadline)
		return deadline_passed(c, err);
	if (sr_flag_get(rq->cancel))
		return sr_err(err, "%s: cancelled", c->what);
	curl_slist_free_all(c->hl);
	c->hl = NULL;
	if (x->fam->sign(x->fam_arg, rq, c->state, c->what, &url, &c->hl, err) == -1)
		return -1;
	/* no 100-continue round trip */
	if (sr_xfer_header(&c->hl, "Expect:", err) == -1) {
		free(url);
		return sr_err_prefix(err, "%s", c->what);
	}

	curl_easy_reset(c->e);
	sr_xfer_resp_free(&c->resp);
	c->resp.maybe_landed = maybe_landed;
	c->resp.attempts = attempts;
	c->body_cap = 0;
	c->sent = 0;
	c->curl_err[0] = '\0';
	c->fd = CURL_SOCKET_BAD;
	c->acked = 0;
	c->oom = 0;
	/* the string options are copied by curl: each may fail on OOM */
	if ((cc = curl_easy_setopt(c->e, CURLOPT_URL, url)) != CURLE_OK ||
	    (cc = curl_easy_setopt(c->e, CURLOPT_CUSTOMREQUEST, rq->method)) != CURLE_OK ||
	    (cc = curl_easy_setopt(c->e, CURLOPT_PROTOCOLS_STR, "http,https")) != CURLE_OK ||
	    /* no proxy from the environment */
	    (cc = curl_easy_setopt(c->e, CURLOPT_PROXY, "")) != CURLE_OK ||
	    (cc = curl_easy_setopt(c->e, CURLOPT_USERAGENT, SR_HTTP_USER_AGENT)) != CURLE_OK ||
	    (x->ca_bundle != NULL &&
	    (cc = curl_easy_setopt(c->e, CURLOPT_CAINFO, x->ca_bundle)) != CURLE_OK)) {
		free(url);
		sr_http_easy_err(cc, "set up the request (curl_easy_setopt)", err);
		return sr_err_prefix(err, "%s", c->what);
	}
	curl_easy_setopt(c->e, CURLOPT_HTTPHEADER, c->hl);
	curl_easy_setopt(c->e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c->e, CURLOPT_HEADERDATA, c);
	curl_easy_setopt(c->e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c->e, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(c->e, CURLOPT_ERRORBUFFER, c->curl_err);
	curl_easy_setopt(c->e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->e, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT);
	c->moved = 0;
	c->moved_at = sr_mono();
	c->stalled = 0;
	curl_easy_setopt(c->e, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c->e, CURLOPT_XFERINFOFUNCTION, on_xfer);
	curl_easy_setopt(c->e, CURLOPT_XFERINFODATA, c);
	curl_easy_setopt(c->e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c->e, CURLOPT_TCP_NODELAY, 1L);
	if (sr_conns_attach(x->conns, c->e, err) == -1) {
		free(url);
		return sr_err_prefix(err, "%s", c->what);
	}
	if (rq->deadline > 0) {
		double left = rq->deadline - sr_now();

		curl_easy_setopt(c->e, CURLOPT_TIMEOUT_MS, left > 0.001 ? (long)(left * 1000) : 1L);
	}
	if (strcmp(rq->method, "HEAD") == 0)
		curl_easy_setopt(c->e, CURLOPT_NOBODY, 1L);
	else if (rq->body != NULL || strcmp(rq->method, "PUT") == 0 ||
	    strcmp(rq->method, "POST") == 0) {
		curl_easy_setopt(c->e, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(c->e, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(c->e, CURLOPT_READDATA, c);
		curl_easy_setopt(c->e, CURLOPT_SEEKFUNCTION, on_seek);
		curl_easy_setopt(c->e, CURLOPT_SEEKDATA, c);
		curl_easy_setopt(c->e, CURLOPT_INFILESIZE_LARGE, (curl_off_t)rq->body_len);
	}
	free(url);
	return 0;
}

/* ---- verdicts ---- */

static int
retryable_curl(CURLcode r)
{
	switch (r) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return 1;
	default:
		return 0;
	}
}

/* Full jitter (AWS Architecture Blog, "Exponential Backoff and Jitter"):
 * a uniform wait in [0, min(cap, base * 2^n)), so clients that failed
 * together do not come back together. */
static double
backoff(struct sr_xfer_call *c, int n)
{
	double top = BACKOFF_BASE * (double)(1u << (n < 16 ? n : 16));

	if (top > BACKOFF_CAP)
		top = BACKOFF_CAP;
	c->rng = c->rng * 1103515245u + 12345u;
	return top * (double)((c->rng >> 8) & 0xffff) / 65536.0;
}

/* The wait before try tries + 1: the backoff, but never past the
 * deadline (the try at the deadline says what the last one met). */
static double
retry_delay(struct sr_xfer_call *c, int tries)
{
	double d = backoff(c, tries - 1), left;

	if (c->rq->deadline > 0 && d > (left = c->rq->deadline - sr_now()))
		d = left > 0 ? left : 0;
	return d;
}

int
sr_xfer_call_verdict(struct sr_xfer_call *c, CURLcode result, double *delay, char *err)
{
	struct sr_xfer *x = c->x;
	struct sr_xfer_resp *r = &c->resp;
	int tries = ++r->attempts;
	long connects = 0;

	curl_easy_getinfo(c->e, CURLINFO_NUM_CONNECTS, &connects);
	pthread_mutex_lock(&x->lock);
	x->stats.requests++;
	x->stats.connections += connects;
	x->stats.quick_acks += c->acked;
	pthread_mutex_unlock(&x->lock);
	*delay = 0;
	/* Out of memory, curl's or ours, is no fault of the network or the
	 * server: the request is not tried again */
	if (c->oom || result == CURLE_OUT_OF_MEMORY) {
		sr_err_oom(err, c->oom ? "keep the reply" : "curl");
		return sr_err_prefix(err, "%s", c->what);
	}
	/* A cancel or a passed deadline stops what comes next, not what has
	 * happened: an attempt the server answered with success is kept. Its
	 * effect is real (a multipart upload created, an object written), and
	 * dropping the reply would leave it unknown, so never cleaned up. */
	if (result == CURLE_OK)
		curl_easy_getinfo(c->e, CURLINFO_RESPONSE_CODE, &r->status);
	if (result == CURLE_OK && r->status >= 200 && r->status < 300 && !r->too_big)
		return 0;
	if (sr_flag_get(c->rq->cancel))
		return sr_err(err, "%s: cancelled", c->what);
	if (c->rq->deadline > 0 && sr_now() >= c->rq->deadline) {
		if (result != CURLE_OK && c->curl_err[0] == '\0')
			strlcpy(c->curl_err, curl_easy_strerror(result), sizeof c->curl_err);
		return deadline_passed(c, err);
	}
	if (result != CURLE_OK && r->too_big) {
		if (c->rq->dst != NULL && r->status >= 200 && r->status < 300)
			return sr_err(err, "%s: the server sent more than the %zu bytes asked for",
			    c->what, c->rq->dst_len);
		return sr_err(err, "%s: the reply is larger than %zu bytes", c->what,
		    c->rq->max ? c->rq->max : (size_t)BODY_MAX);
	}
	if (result == CURLE_ABORTED_BY_CALLBACK && c->stalled) {
		snprintf(c->curl_err, sizeof c->curl_err, "no byte moved for %.0f s (stall_timeout)",
		    x->tune->stall_timeout);
		result = CURLE_OPERATION_TIMEDOUT;	/* retried like a timeout */
	}
	if (result != CURLE_OK) {
		if (result == CURLE_PEER_FAILED_VERIFICATION)
			return sr_err(err, "%s: the server's TLS certificate is not trusted: %s "
			    "(for a private CA %s)", c->what,
			    c->curl_err[0] ? c->curl_err : curl_easy_strerror(result), x->fam->ca_hint);
		if (!retryable_curl(result) || out_of_tries(c, tries))
			return sr_err(err, "%s: %s%s", c->what,
			    c->curl_err[0] ? c->curl_err : curl_easy_strerror(result),
			    tries > 1 ? " (after retries)" : "");
		if (c->rq->body != NULL)
			r->maybe_landed = 1;
		*delay = retry_delay(c, tries);
		return 1;
	}
	if (r->status < 300)
		return 0;
	if (sr_xml_error(r->body != NULL ? r->body : "", r->len, &r->error, err) == -1)
		return sr_err_prefix(err, "%s: read the error reply", c->what);
	switch (x->fam->judge(x->fam_arg, c->rq, c->state, r)) {
	case SR_XFER_AGAIN:
		return 1;
	case SR_XFER_TRANSIENT:
		if (out_of_tries(c, tries))
			return 0;
		*delay = retry_delay(c, tries);
		return 1;
	case SR_XFER_FINAL:
		break;
	}
	return 0;
}

int
sr_xfer_do(struct sr_xfer *x, const struct sr_xfer_req *rq, struct sr_xfer_resp *resp,
    const char *what, char *err)
{
	struct sr_xfer_call *c;
	double delay;
	int v;

	memset(resp, 0, sizeof *resp);
	if ((c = sr_xfer_call_new(x, rq, what, err)) == NULL)
		return -1;
	for (;;) {
		CURLcode r;

		if (sr_xfer_call_setup(c, err) == -1) {
			sr_xfer_call_free(c);
			return -1;
		}
		r = curl_easy_perform(c->e);
		v = sr_xfer_call_verdict(c, r, &delay, err);
		if (v != 1)
			break;
		if (delay > 0)
			sr_sleep(delay);
	}
	if (v == 0) {
		*resp = c->resp;
		memset(&c->resp, 0, sizeof c->resp);
	}
	sr_xfer_call_free(c);
	return v == 0 ? 0 : -1;
}

/* One of sr_xfer_do_many's requests. */
struct many_slot {
	struct sr_xfer_call *c;
	double not_before;		/* waiting for its retry until this sr_mono() */
	int active;
};

int
sr_xfer_do_many(struct sr_xfer *x, const struct sr_xfer_req *rq, const char *const *what,
    size_t n, int (*done)(void *arg, size_t i, const struct sr_xfer_resp *resp, char *err),
    void *arg, char *err)
{
	int conc = x->tune->concurrency > 0 ? x->tune->concurrency : 1;
	struct many_slot *slot = sr_try_calloc((size_t)conc, sizeof *slot, err);
	size_t *index = slot != NULL ? sr_try_calloc((size_t)conc, sizeof *index, err) : NULL;
	size_t next = 0, finished = 0;
	CURLM *multi = index != NULL ? curl_multi_init() : NULL;
	int rc = 0, i;

	if (multi == NULL) {
		if (index != NULL)
			sr_err_oom(err, "curl_multi_init");
		free(slot);
		free(index);
		return sr_err_prefix(err, "%s", n > 0 ? what[0] : "requests");
	}
	while (rc == 0 && finished < n) {
		double now = sr_mono(), delay;
		int running, left, wait_ms = 100;
		CURLMcode mc;
		CURLMsg *msg;

		/* fill free slots, start the retries that are due */
		for (i = 0; i < conc && rc == 0; i++) {
			if (slot[i].c == NULL && next < n) {
				index[i] = next;
				slot[i].c = sr_xfer_call_new(x, &rq[next], what[next], err);
				if (slot[i].c == NULL) {
					rc = -1;
					break;
				}
				slot[i].not_before = 0;
				next++;
			}
			if (slot[i].c == NULL || slot[i].active)
				continue;
			if (slot[i].not_before > now) {
				int ms = (int)((slot[i].not_before - now) * 1000) + 1;

				wait_ms = ms < wait_ms ? ms : wait_ms;
				continue;
			}
			if (sr_xfer_call_setup(slot[i].c, err) == -1) {
				rc = -1;
				break;
			}
			curl_easy_setopt(slot[i].c->e, CURLOPT_PRIVATE, &slot[i]);
			if ((mc = curl_multi_add_handle(multi, slot[i].c->e)) != CURLM_OK) {
				sr_http_multi_err(mc, "curl_multi_add_handle", err);
				rc = sr_err_prefix(err, "%s", slot[i].c->what);
				break;
			}
			slot[i].active = 1;
		}
		if (rc != 0)
			break;
		if ((mc = curl_multi_perform(multi, &running)) != CURLM_OK) {
			rc = sr_http_multi_err(mc, "curl_multi_perform", err);
			break;
		}
		while (rc == 0 && (msg = curl_multi_info_read(multi, &left)) != NULL) {
			struct many_slot *sl = NULL;
			int v;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&sl);
			curl_multi_remove_handle(multi, sl->c->e);
			sl->active = 0;
			v = sr_xfer_call_verdict(sl->c, msg->data.result, &delay, err);
			if (v == 1) {
				sl->not_before = sr_mono() + delay;
				continue;
			}
			if (v == -1 || done(arg, index[sl - slot], &sl->c->resp, err) == -1)
				rc = -1;
			sr_xfer_call_free(sl->c);
			sl->c = NULL;
			finished++;
		}
		if (rc == 0 && finished < n)
			curl_multi_poll(multi, NULL, 0, wait_ms, NULL);
	}
	for (i = 0; i < conc; i++) {
		if (slot[i].c == NULL)
			continue;
		if (slot[i].active)
			curl_multi_remove_handle(multi, slot[i].c->e);
		sr_xfer_call_free(slot[i].c);
	}
	curl_multi_cleanup(multi);
	free(slot);
	free(index);
	return rc;
}

const char *
sr_xfer_etag(struct sr_xfer *x, const struct sr_xfer_resp *resp)
{
	return x->fam->etag != NULL ? x->fam->etag(x->fam_arg, resp) : resp->etag;
}

int
sr_xfer_missing(struct sr_xfer *x, const struct sr_xfer_resp *resp)
{
	return resp->status == 404 &&
	    (x->fam->missing == NULL || x->fam->missing(x->fam_arg, resp));
}

int
sr_xfer_fail(struct sr_xfer *x, const char *what, const struct sr_xfer_resp *resp, char *err)
{
	return x->fam->fail(x->fam_arg, what, resp, err);
}
