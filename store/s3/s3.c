/*
 * s3.c: the S3 request engine (s3.h): the store URL and its options, the
 * endpoint and addressing style, signing every attempt with SigV4, libcurl
 * transfers with bounded time and memory, the retry policy, and the
 * messages that turn S3's error codes into what to fix.
 */
#include "config.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <openssl/evp.h>

#include "creds.h"
#include "s3.h"
#include "sigv4.h"
#include "store-int.h"
#include "util.h"

#define ERR_BODY_MAX	(64 * 1024)	/* error replies are small XML */
#define BODY_MAX	(1024 * 1024)	/* default limit on a 2xx body */
#define POOL_MAX	32		/* idle easy handles kept */
#define CONNECT_TIMEOUT	5L		/* seconds */
#define BACKOFF_BASE	0.1		/* seconds: first retry waits up to this */
#define BACKOFF_CAP	5.0		/* seconds: no wait is longer */

struct sr_s3 {
	int gcs;
	char *bucket;
	char *prefix;			/* "" or "a/b/" */
	char *endpoint;			/* "scheme://authority" without a path; NULL: AWS */
	int path_style;
	char ca_bundle[4096];
	struct sr_s3_tuning tune;
	struct sr_creds_chain *creds;
	pthread_mutex_t lock;		/* guards region and pool */
	char region[64];
	CURL *pool[POOL_MAX];
	int npool;
};

struct sr_s3_call {
	struct sr_s3 *s;
	const struct sr_s3_req *rq;
	CURL *e;
	struct curl_slist *hl;
	size_t sent;			/* request body bytes read by curl */
	struct sr_s3_resp resp;
	size_t body_cap;
	char payload_hash[65];
	int region_fixes;		/* region corrections so far */
	int creds_refreshed;
	struct sr_creds used;		/* the keys the last attempt was signed with */
	char region[64];		/* ... and the region */
	curl_off_t moved;		/* bytes up and down so far in this attempt */
	double moved_at;		/* sr_mono() when that last grew */
	int stalled;			/* this attempt was dropped for moving nothing */
	unsigned rng;
	char curl_err[CURL_ERROR_SIZE];
	char what[256];
};

/* ---- options ---- */

/* "16M" -> bytes; 0 on a bad value. */
static uint64_t
parse_size(const char *v)
{
	char *end;
	unsigned long long n = strtoull(v, &end, 10);
	uint64_t mul = 1;

	if (end == v)
		return 0;
	if (*end == 'K' || *end == 'k')
		mul = 1024, end++;
	else if (*end == 'M' || *end == 'm')
		mul = 1024 * 1024, end++;
	else if (*end == 'G' || *end == 'g')
		mul = 1024ULL * 1024 * 1024, end++;
	if (*end == 'i' && mul > 1)
		end++;
	if (*end == 'B' && mul > 1)
		end++;
	if (*end != '\0')
		return 0;
	return (uint64_t)n * mul;
}

static int
bad_option(const char *url, const char *name, const char *why, char *err)
{
	return sr_err(err, "open store %s: option %s: %s", url, name, why);
}

/* Apply one "name=value" option of the URL. */
static int
apply_option(struct sr_s3 *s, const char *url, char *opt, struct sr_creds_opts *co,
    char **endpoint, char **region, char *err)
{
	char *eq = strchr(opt, '=');
	const char *v;

	if (eq == NULL)
		return bad_option(url, opt, "want name=value", err);
	*eq = '\0';
	v = eq + 1;
	if (strcmp(opt, "endpoint") == 0) {
		free(*endpoint);
		*endpoint = sr_strdup(v);
	} else if (strcmp(opt, "region") == 0) {
		if (v[0] == '\0' || strlen(v) >= sizeof s->region)
			return bad_option(url, opt, "want a region such as us-east-1", err);
		free(*region);
		*region = sr_strdup(v);
	} else if (strcmp(opt, "profile") == 0) {
		co->profile = v;
	} else if (strcmp(opt, "part_size") == 0) {
		uint64_t n = parse_size(v);

		/* S3's limits: parts of 5 MiB to 5 GiB (the last may be smaller) */
		if (n < 5ULL * 1024 * 1024 || n > 5ULL * 1024 * 1024 * 1024)
			return bad_option(url, opt, "want a size from 5MiB to 5GiB, e.g. part_size=16MiB",
			    err);
		s->tune.part_size = (size_t)n;
	} else if (strcmp(opt, "concurrency") == 0) {
		char *end;
		long n = strtol(v, &end, 10);

		if (end == v || *end != '\0' || n < 1 || n > 64)
			return bad_option(url, opt, "want 1 to 64 requests in flight (an upload's "
			    "parts, a restore's ranged reads)", err);
		s->tune.concurrency = (int)n;
	} else if (strcmp(opt, "attempts") == 0) {
		char *end;
		long n = strtol(v, &end, 10);

		if (end == v || *end != '\0' || n < 1 || n > 100)
			return bad_option(url, opt, "want 1 to 100 tries per request", err);
		s->tune.attempts = (int)n;
	} else if (strcmp(opt, "md5") == 0) {
		if (strcmp(v, "yes") != 0 && strcmp(v, "no") != 0)
			return bad_option(url, opt, "want yes or no", err);
		s->tune.part_md5 = strcmp(v, "yes") == 0;
	} else if (strcmp(opt, "stall_timeout") == 0) {
		char *end;
		double n = strtod(v, &end);

		if (end == v || *end != '\0' || !(n >= 1 && n <= 3600))
			return bad_option(url, opt, "want 1 to 3600 seconds", err);
		s->tune.stall_timeout = n;
	} else
		return bad_option(url, opt, "unknown (known: endpoint, region, profile, "
		    "part_size, concurrency, md5, attempts, stall_timeout)", err);
	return 0;
}

/* S3's bucket naming rules, which GCS shares for XML API names. */
static const char *
bucket_problem(const char *b)
{
	size_t n = strlen(b), i;

	if (n < 3 || n > 63)
		return "a bucket name has 3 to 63 characters";
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)b[i];

		if (!(islower(ch) || isdigit(ch) || ch == '-' || ch == '.' || ch == '_'))
			return "a bucket name has lowercase letters, digits, '.', '-' and '_' only";
	}
	if (!isalnum((unsigned char)b[0]) || !isalnum((unsigned char)b[n - 1]))
		return "a bucket name starts and ends with a letter or digit";
	return NULL;
}

/* "http://host:port" (no path, no query) or NULL when endpoint is not one. */
static char *
endpoint_norm(const char *ep)
{
	const char *auth;
	size_t n;

	if (strncmp(ep, "http://", 7) == 0)
		auth = ep + 7;
	else if (strncmp(ep, "https://", 8) == 0)
		auth = ep + 8;
	else
		return NULL;
	n = strlen(auth);
	while (n > 0 && auth[n - 1] == '/')
		n--;
	if (n == 0 || memchr(auth, '/', n) != NULL || memchr(auth, '?', n) != NULL ||
	    memchr(auth, '@', n) != NULL)
		return NULL;
	return sr_strndup(ep, (size_t)(auth - ep) + n);
}

/* The URL's parts, checked, with no I/O: what sr_s3_url_check checks and
 * sr_s3_open builds on. url is the whole URL (for messages). */
struct parsed {
	struct sr_creds_opts co;
	char *endpoint;		/* the endpoint option, normalised, or NULL */
	char *region;		/* the region option, or NULL */
};

static int
parse(struct sr_s3 *s, const char *scheme, const char *rest, const char *url,
    struct parsed *pa, char *err)
{
	char *copy = sr_strdup(rest), *q, *slash;
	const char *why;
	size_t n;
	int rc = -1;

	memset(pa, 0, sizeof *pa);
	s->gcs = strcmp(scheme, "gs") == 0;
	pa->co.kind = s->gcs ? SR_CREDS_GCS : SR_CREDS_AWS;
	/* bench/s3.sh: as fast as 16-64 MiB parts, and in the 256 MiB budget */
	s->tune.part_size = 8 * 1024 * 1024;
	s->tune.concurrency = 8;
	s->tune.part_md5 = 1;
	s->tune.attempts = 8;
	s->tune.stall_timeout = 30;
	if ((q = strchr(copy, '?')) != NULL) {
		char *opt, *save = NULL;

		*q++ = '\0';
		for (opt = strtok_r(q, "&", &save); opt != NULL; opt = strtok_r(NULL, "&", &save))
			if (apply_option(s, url, opt, &pa->co, &pa->endpoint, &pa->region, err) == -1)
				goto out;
	}
	if (pa->endpoint != NULL) {
		char *norm = endpoint_norm(pa->endpoint);

		if (norm == NULL) {
			sr_err(err, "open store %s: endpoint \"%s\" is not http(s)://host[:port]",
			    url, pa->endpoint);
			goto out;
		}
		free(pa->endpoint);
		pa->endpoint = norm;
	}
	if ((slash = strchr(copy, '/')) != NULL)
		*slash++ = '\0';
	if ((why = bucket_problem(copy)) != NULL) {
		sr_err(err, "open store %s: bucket \"%s\": %s", url, copy, why);
		goto out;
	}
	s->bucket = sr_strdup(copy);
	n = slash != NULL ? strlen(slash) : 0;
	while (n > 0 && slash[n - 1] == '/')
		n--;
	if (n > 0) {
		char *p = sr_strndup(slash, n);

		if (sr_store_prefix_check("open store", p, err) == -1 || strstr(p, "//") != NULL) {
			if (strstr(p, "//") != NULL)
				sr_err(err, "open store %s: the prefix has an empty segment", url);
			free(p);
			goto out;
		}
		s->prefix = sr_asprintf("%s/", p);
		free(p);
	} else
		s->prefix = sr_strdup("");
	rc = 0;
out:
	free(copy);
	return rc;
}

static void
parsed_free(struct parsed *pa)
{
	free(pa->endpoint);
	free(pa->region);
}

int
sr_s3_url_check(const char *scheme, const char *rest, char *err)
{
	struct sr_s3 *s = sr_calloc(1, sizeof *s);
	struct parsed pa;
	char *url = sr_asprintf("%s://%s", scheme, rest);
	int rc = parse(s, scheme, rest, url, &pa, err);

	parsed_free(&pa);
	free(s->bucket);
	free(s->prefix);
	free(s);
	free(url);
	return rc;
}

int
sr_s3_open(const char *scheme, const char *rest, struct sr_s3 **out, char *err)
{
	struct sr_s3 *s = sr_calloc(1, sizeof *s);
	struct sr_store_config cfg;
	struct parsed pa;
	char *url = sr_asprintf("%s://%s", scheme, rest);
	int rc = -1;

	*out = NULL;
	pthread_mutex_init(&s->lock, NULL);
	if (parse(s, scheme, rest, url, &pa, err) == -1)
		goto out;
	if (sr_store_config_load(&pa.co, &cfg, err) == -1) {
		sr_err_prefix(err, "open store %s", url);
		goto out;
	}
	snprintf(s->region, sizeof s->region, "%s", pa.region != NULL ? pa.region : cfg.region);
	snprintf(s->ca_bundle, sizeof s->ca_bundle, "%s", cfg.ca_bundle);
	if (pa.endpoint != NULL)
		s->endpoint = sr_strdup(pa.endpoint);
	else if (cfg.endpoint[0] != '\0' && (s->endpoint = endpoint_norm(cfg.endpoint)) == NULL) {
		sr_err(err, "open store %s: the configured endpoint \"%s\" is not "
		    "http(s)://host[:port]", url, cfg.endpoint);
		goto out;
	}
	/* path-style on custom endpoints; on AWS virtual-hosted, unless the
	 * bucket's name does not fit in a host name */
	s->path_style = s->endpoint != NULL || strchr(s->bucket, '.') != NULL ||
	    strchr(s->bucket, '_') != NULL;
	if (sr_creds_chain_new(&pa.co, &s->creds, err) == -1) {
		sr_err_prefix(err, "open store %s", url);
		goto out;
	}
	rc = 0;
out:
	parsed_free(&pa);
	free(url);
	if (rc == -1) {
		sr_s3_close(s);
		return -1;
	}
	*out = s;
	return 0;
}

void
sr_s3_close(struct sr_s3 *s)
{
	int i;

	if (s == NULL)
		return;
	for (i = 0; i < s->npool; i++)
		curl_easy_cleanup(s->pool[i]);
	if (s->creds != NULL)
		sr_creds_chain_free(s->creds);
	pthread_mutex_destroy(&s->lock);
	free(s->bucket);
	free(s->prefix);
	free(s->endpoint);
	free(s);
}

int
sr_s3_is_gcs(const struct sr_s3 *s)
{
	return s->gcs;
}

const struct sr_s3_tuning *
sr_s3_tuning(const struct sr_s3 *s)
{
	return &s->tune;
}

const char *
sr_s3_prefix(const struct sr_s3 *s)
{
	return s->prefix;
}

/* ---- one attempt ---- */

static size_t
on_header(char *line, size_t size, size_t n, void *arg)
{
	struct sr_s3_call *c = arg;
	struct sr_s3_resp *r = &c->resp;
	size_t len = size * n, vlen;
	const char *colon, *v;
	char val[256];

	if (len >= 5 && strncmp(line, "HTTP/", 5) == 0) {
		/* a new reply (after 100 Continue): forget the last one's headers */
		r->etag[0] = r->generation[0] = r->bucket_region[0] = '\0';
		r->content_length = 0;
		return len;
	}
	if ((colon = memchr(line, ':', len)) == NULL)
		return len;
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
#define IS(name) ((size_t)(colon - line) == strlen(name) && strncasecmp(line, name, strlen(name)) == 0)
	if (IS("etag")) {
		size_t m = strlen(val);
		const char *p = val;

		if (m >= 2 && val[0] == '"' && val[m - 1] == '"')
			p++, m -= 2;
		snprintf(r->etag, sizeof r->etag, "%.*s", (int)m, p);
	} else if (IS("x-goog-generation"))
		snprintf(r->generation, sizeof r->generation, "%.31s", val);
	else if (IS("x-amz-bucket-region"))
		snprintf(r->bucket_region, sizeof r->bucket_region, "%.63s", val);
	else if (IS("content-length"))
		r->content_length = strtoull(val, NULL, 10);
	else if (IS("last-modified"))
		r->mtime = (double)curl_getdate(val, NULL);
	else if (IS("date"))
		r->date = (double)curl_getdate(val, NULL);
#undef IS
	return len;
}

static size_t
on_body(char *data, size_t size, size_t n, void *arg)
{
	struct sr_s3_call *c = arg;
	struct sr_s3_resp *r = &c->resp;
	const struct sr_s3_req *rq = c->rq;
	size_t len = size * n;
	long status = 0;
	size_t cap;

	curl_easy_getinfo(c->e, CURLINFO_RESPONSE_CODE, &status);
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
		c->body_cap = (r->len + len + 1) * 2;
		r->body = sr_realloc(r->body, c->body_cap);
	}
	memcpy(r->body + r->len, data, len);
	r->len += len;
	r->body[r->len] = '\0';
	return len;
}

static size_t
on_read(char *buf, size_t size, size_t n, void *arg)
{
	struct sr_s3_call *c = arg;
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
	struct sr_s3_call *c = arg;

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
	struct sr_s3_call *c = arg;
	double now = sr_mono();

	(void)dltotal;
	(void)ultotal;
	if (dlnow + ulnow != c->moved) {
		c->moved = dlnow + ulnow;
		c->moved_at = now;
		return 0;
	}
	if (now - c->moved_at < c->s->tune.stall_timeout)
		return 0;
	c->stalled = 1;
	return 1;
}

static CURL *
pool_take(struct sr_s3 *s)
{
	CURL *e = NULL;

	pthread_mutex_lock(&s->lock);
	if (s->npool > 0)
		e = s->pool[--s->npool];
	pthread_mutex_unlock(&s->lock);
	if (e == NULL && (e = curl_easy_init()) == NULL)
		sr_fatal("curl_easy_init: out of memory");
	return e;
}

static void
pool_give(struct sr_s3 *s, CURL *e)
{
	pthread_mutex_lock(&s->lock);
	if (s->npool < POOL_MAX) {
		s->pool[s->npool++] = e;
		e = NULL;
	}
	pthread_mutex_unlock(&s->lock);
	if (e != NULL)
		curl_easy_cleanup(e);
}

struct sr_s3_call *
sr_s3_call_new(struct sr_s3 *s, const struct sr_s3_req *rq, const char *what)
{
	struct sr_s3_call *c = sr_calloc(1, sizeof *c);
	struct timespec ts;

	c->s = s;
	snprintf(c->what, sizeof c->what, "%s", what);
	c->rq = rq;
	c->e = pool_take(s);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	c->rng = (unsigned)ts.tv_nsec ^ (unsigned)(uintptr_t)c;
	if (rq->body != NULL && !rq->unsigned_payload)
		sr_sha256_hex(rq->body, rq->body_len, c->payload_hash);
	else if (rq->unsigned_payload)
		snprintf(c->payload_hash, sizeof c->payload_hash, "UNSIGNED-PAYLOAD");
	else
		sr_sha256_hex("", 0, c->payload_hash);
	return c;
}

CURL *
sr_s3_call_handle(struct sr_s3_call *c)
{
	return c->e;
}

struct sr_s3_resp *
sr_s3_call_resp(struct sr_s3_call *c)
{
	return &c->resp;
}

void
sr_s3_call_free(struct sr_s3_call *c)
{
	if (c == NULL)
		return;
	curl_slist_free_all(c->hl);
	sr_creds_wipe(&c->used);
	pool_give(c->s, c->e);
	sr_s3_resp_free(&c->resp);
	free(c);
}

void
sr_s3_resp_free(struct sr_s3_resp *resp)
{
	free(resp->body);
	memset(resp, 0, sizeof *resp);
}

static struct curl_slist *
add_header(struct curl_slist *hl, const char *h)
{
	struct curl_slist *n = curl_slist_append(hl, h);

	if (n == NULL)
		sr_fatal("curl_slist_append: out of memory");
	return n;
}

int
sr_s3_call_setup(struct sr_s3_call *c, char *err)
{
	struct sr_s3 *s = c->s;
	const struct sr_s3_req *rq = c->rq;
	struct sr_creds cr;
	struct sr_sigv4_header h[SR_S3_HDRS_MAX + 4];
	struct sr_sigv4_request sr;
	struct sr_sigv4_key k;
	char region[64], host[600], amz_date[20], auth[SR_SIGV4_AUTH_MAX], *line;
	char *path, *wire, *url;
	char names[SR_S3_HDRS_MAX][64];
	struct tm tm;
	time_t now;
	size_t nh = 0, i;
	int maybe_landed = c->resp.maybe_landed, attempts = c->resp.attempts;

	/* never send what the deadline no longer allows: a request that
	 * reached the server could create what nobody then cleans up */
	if (rq->deadline > 0 && sr_now() >= rq->deadline)
		return sr_err(err, "%s: the checkpoint's deadline passed", c->what);
	if (sr_flag_get(rq->cancel))
		return sr_err(err, "%s: cancelled", c->what);
	if (sr_creds_get(s->creds, &cr, err) == -1)
		return sr_err_prefix(err, "%s", c->what);
	c->used = cr;
	pthread_mutex_lock(&s->lock);
	snprintf(region, sizeof region, "%s", s->region);
	pthread_mutex_unlock(&s->lock);
	snprintf(c->region, sizeof c->region, "%s", region);

	/* where: path-style on custom endpoints, virtual-hosted on AWS */
	if (s->endpoint != NULL)
		snprintf(host, sizeof host, "%s", strstr(s->endpoint, "://") + 3);
	else if (s->gcs)
		snprintf(host, sizeof host, "storage.googleapis.com");
	else if (s->path_style)
		snprintf(host, sizeof host, "s3.%s.amazonaws.com", region);
	else
		snprintf(host, sizeof host, "%s.s3.%s.amazonaws.com", s->bucket, region);
	if (s->path_style || s->gcs || s->endpoint != NULL)
		path = sr_asprintf("/%s/%s%s", s->bucket, rq->key != NULL ? s->prefix : "",
		    rq->key != NULL ? rq->key : "");
	else
		path = sr_asprintf("/%s%s", rq->key != NULL ? s->prefix : "",
		    rq->key != NULL ? rq->key : "");
	wire = sr_sigv4_uri_encode(path, strlen(path), 1);
	url = sr_asprintf("%s://%s%s%s%s", s->endpoint != NULL &&
	    strncmp(s->endpoint, "http://", 7) == 0 ? "http" : "https", host, wire,
	    rq->query != NULL && rq->query[0] != '\0' ? "?" : "",
	    rq->query != NULL ? rq->query : "");

	now = time(NULL);
	gmtime_r(&now, &tm);
	strftime(amz_date, sizeof amz_date, "%Y%m%dT%H%M%SZ", &tm);

	h[nh++] = (struct sr_sigv4_header){ "host", host };
	h[nh++] = (struct sr_sigv4_header){ "x-amz-date", amz_date };
	h[nh++] = (struct sr_sigv4_header){ "x-amz-content-sha256", c->payload_hash };
	if (cr.session_token[0] != '\0')
		h[nh++] = (struct sr_sigv4_header){ "x-amz-security-token", cr.session_token };
	for (i = 0; rq->hdrs[i] != NULL && i < SR_S3_HDRS_MAX; i++) {
		const char *colon = strchr(rq->hdrs[i], ':');
		size_t nl = colon != NULL ? (size_t)(colon - rq->hdrs[i]) : 0;

		if (colon == NULL || nl >= sizeof names[i])
			sr_fatal("s3: bad header \"%s\"", rq->hdrs[i]);
		memcpy(names[i], rq->hdrs[i], nl);
		names[i][nl] = '\0';
		colon++;
		while (*colon == ' ')
			colon++;
		h[nh++] = (struct sr_sigv4_header){ names[i], colon };
	}
	memset(&sr, 0, sizeof sr);
	sr.method = rq->method;
	sr.path = path;
	sr.query = rq->query;
	sr.headers = h;
	sr.nheaders = nh;
	sr.payload_hash = c->payload_hash;
	sr.amz_date = amz_date;
	sr.region = region;
	sr.service = "s3";
	sr.normalize_path = 0;
	k.access_key = cr.access_key;
	k.secret_key = cr.secret_key;
	if (sr_sigv4_sign(&sr, &k, auth, err) == -1) {
		free(path);
		free(wire);
		free(url);
		return sr_err_prefix(err, "%s", c->what);
	}

	curl_slist_free_all(c->hl);
	c->hl = NULL;
	for (i = 0; i < nh; i++) {
		line = sr_asprintf("%s: %s", h[i].name, h[i].value);
		c->hl = add_header(c->hl, line);
		free(line);
	}
	line = sr_asprintf("Authorization: %s", auth);
	c->hl = add_header(c->hl, line);
	free(line);
	sr_creds_wipe(&cr);
	c->hl = add_header(c->hl, "Expect:");	/* no 100-continue round trip */

	curl_easy_reset(c->e);
	sr_s3_resp_free(&c->resp);
	c->resp.maybe_landed = maybe_landed;
	c->resp.attempts = attempts;
	c->body_cap = 0;
	c->sent = 0;
	c->curl_err[0] = '\0';
	curl_easy_setopt(c->e, CURLOPT_URL, url);
	curl_easy_setopt(c->e, CURLOPT_HTTPHEADER, c->hl);
	curl_easy_setopt(c->e, CURLOPT_CUSTOMREQUEST, rq->method);
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
	curl_easy_setopt(c->e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c->e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c->e, CURLOPT_PROXY, "");	/* no proxy from the environment */
	curl_easy_setopt(c->e, CURLOPT_TCP_NODELAY, 1L);
	if (s->ca_bundle[0] != '\0')
		curl_easy_setopt(c->e, CURLOPT_CAINFO, s->ca_bundle);
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
	free(path);
	free(wire);
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

static int
retryable_reply(const struct sr_s3_resp *r)
{
	const char *code = r->error.code;

	if (r->status >= 500 || r->status == 429)
		return 1;	/* 500 InternalError, 503 SlowDown, GCS's 429 rate limit */
	if (r->status == 409 && strcmp(code, "ConditionalRequestConflict") == 0)
		return 1;
	if (strcmp(code, "RequestTimeout") == 0 || strcmp(code, "SlowDown") == 0)
		return 1;
	return 0;
}

/* Full jitter (AWS Architecture Blog, "Exponential Backoff and Jitter"):
 * a uniform wait in [0, min(cap, base * 2^n)), so clients that failed
 * together do not come back together. */
static double
backoff(struct sr_s3_call *c, int n)
{
	double top = BACKOFF_BASE * (double)(1u << (n < 16 ? n : 16));

	if (top > BACKOFF_CAP)
		top = BACKOFF_CAP;
	c->rng = c->rng * 1103515245u + 12345u;
	return top * (double)((c->rng >> 8) & 0xffff) / 65536.0;
}

int
sr_s3_call_verdict(struct sr_s3_call *c, CURLcode result, double *delay, char *err)
{
	struct sr_s3 *s = c->s;
	struct sr_s3_resp *r = &c->resp;
	int tries = ++r->attempts;

	*delay = 0;
	if (sr_flag_get(c->rq->cancel))
		return sr_err(err, "%s: cancelled", c->what);
	if (c->rq->deadline > 0 && sr_now() >= c->rq->deadline)
		return sr_err(err, "%s: the checkpoint's deadline passed", c->what);
	if (result != CURLE_OK && r->too_big) {
		if (c->rq->dst != NULL && r->status >= 200 && r->status < 300)
			return sr_err(err, "%s: the server sent more than the %zu bytes asked for",
			    c->what, c->rq->dst_len);
		return sr_err(err, "%s: the reply is larger than %zu bytes", c->what,
		    c->rq->max ? c->rq->max : (size_t)BODY_MAX);
	}
	if (result == CURLE_ABORTED_BY_CALLBACK && c->stalled) {
		snprintf(c->curl_err, sizeof c->curl_err, "no byte moved for %.0f s (stall_timeout)",
		    c->s->tune.stall_timeout);
		result = CURLE_OPERATION_TIMEDOUT;	/* retried like a timeout */
	}
	if (result != CURLE_OK) {
		if (result == CURLE_PEER_FAILED_VERIFICATION)
			return sr_err(err, "%s: the server's TLS certificate is not trusted: %s "
			    "(for a private CA set AWS_CA_BUNDLE to its PEM file)", c->what,
			    c->curl_err[0] ? c->curl_err : curl_easy_strerror(result));
		if (!retryable_curl(result) || tries >= s->tune.attempts)
			return sr_err(err, "%s: %s%s", c->what,
			    c->curl_err[0] ? c->curl_err : curl_easy_strerror(result),
			    tries > 1 ? " (after retries)" : "");
		if (c->rq->body != NULL)
			r->maybe_landed = 1;
		*delay = backoff(c, tries - 1);
		return 1;
	}
	curl_easy_getinfo(c->e, CURLINFO_RESPONSE_CODE, &r->status);
	if (r->status < 300)
		return 0;
	sr_s3_xml_error(r->body != NULL ? r->body : "", r->len, &r->error);

	/* the bucket lives in another region: take it from the reply (the
	 * error's <Region>, or x-amz-bucket-region on a 301 or a bodiless 400,
	 * as for a HEAD) and sign again; compare with the region this attempt
	 * was signed with, as another thread may have corrected the store */
	if ((r->status == 400 && (strcmp(r->error.code, "AuthorizationHeaderMalformed") == 0 ||
	    r->error.code[0] == '\0')) || r->status == 301) {
		const char *right = r->error.region[0] != '\0' ? r->error.region : r->bucket_region;

		if (right[0] != '\0' && strcmp(right, c->region) != 0 && c->region_fixes < 2) {
			pthread_mutex_lock(&s->lock);
			snprintf(s->region, sizeof s->region, "%s", right);
			pthread_mutex_unlock(&s->lock);
			c->region_fixes++;
			return 1;
		}
		return 0;
	}
	/* role credentials expire; fetch new ones once */
	if (r->status == 400 || r->status == 403) {
		if ((strcmp(r->error.code, "ExpiredToken") == 0 ||
		    strcmp(r->error.code, "TokenRefreshRequired") == 0 ||
		    strcmp(r->error.code, "InvalidToken") == 0) && !c->creds_refreshed) {
			/* only these keys: many parts failing at once refetch once */
			sr_creds_reject(s->creds, &c->used);
			c->creds_refreshed = 1;
			return 1;
		}
	}
	if (retryable_reply(r) && tries < s->tune.attempts) {
		*delay = backoff(c, tries - 1);
		return 1;
	}
	return 0;
}

int
sr_s3_do(struct sr_s3 *s, const struct sr_s3_req *rq, struct sr_s3_resp *resp,
    const char *what, char *err)
{
	struct sr_s3_call *c = sr_s3_call_new(s, rq, what);
	double delay;
	int v;

	memset(resp, 0, sizeof *resp);
	for (;;) {
		CURLcode r;

		if (sr_s3_call_setup(c, err) == -1) {
			sr_s3_call_free(c);
			return -1;
		}
		r = curl_easy_perform(c->e);
		v = sr_s3_call_verdict(c, r, &delay, err);
		if (v != 1)
			break;
		if (delay > 0)
			sr_sleep(delay);
	}
	if (v == 0) {
		*resp = c->resp;
		memset(&c->resp, 0, sizeof c->resp);
	}
	sr_s3_call_free(c);
	return v == 0 ? 0 : -1;
}

void
sr_s3_content_md5(const void *buf, size_t len, char *b64, char *hex)
{
	unsigned char md[16];
	unsigned int n = 0;

	if (EVP_Digest(buf, len, md, &n, EVP_md5(), NULL) != 1 || n != 16)
		sr_fatal("EVP_Digest(md5) failed");
	if (b64 != NULL)
		EVP_EncodeBlock((unsigned char *)b64, md, 16);
	if (hex != NULL)
		sr_hex_of(md, sizeof md, hex);
}

/* ---- messages ---- */

int
sr_s3_fail(struct sr_s3 *s, const char *what, const struct sr_s3_resp *r, char *err)
{
	const char *code = r->error.code;
	const char *msg = r->error.message;
	/* the fixes name the tools and variables of the store's cloud */
	const char *secret_var = s->gcs ? "GS_SECRET_ACCESS_KEY or the boto config" :
	    "AWS_SECRET_ACCESS_KEY or the profile";
	const char *scheme = s->gcs ? "gs" : "s3";
	struct sr_creds cr;
	char source[256] = "", cerr[SR_ERRMAX];

	if (sr_creds_get(s->creds, &cr, cerr) == 0) {
		snprintf(source, sizeof source, "%s", cr.source);
		sr_creds_wipe(&cr);
	}
	if (strcmp(code, "SignatureDoesNotMatch") == 0)
		return sr_err(err, "%s: the server rejects the signature (SignatureDoesNotMatch): "
		    "the secret key is wrong for access key in %s; check %s", what, source,
		    secret_var);
	if (strcmp(code, "InvalidAccessKeyId") == 0)
		return sr_err(err, "%s: the server does not know the access key (InvalidAccessKeyId) "
		    "from %s; check the credentials and the endpoint", what, source);
	if (strcmp(code, "RequestTimeTooSkewed") == 0) {
		/* AWS says ServerTime in the error; RGW only in its Date header */
		double st = sr_s3_parse_iso8601(r->error.server_time);
		double skew;

		if (st <= 0 && r->date > 0)
			st = r->date;
		skew = st > 0 ? sr_now() - st : 0;

		if (st > 0)
			return sr_err(err, "%s: this machine's clock is %.0f s %s the server's "
			    "(RequestTimeTooSkewed; at most 15 min are allowed): set the clock right, "
			    "e.g. `timedatectl set-ntp true` or chrony", what, skew < 0 ? -skew : skew,
			    skew < 0 ? "behind" : "ahead of");
		return sr_err(err, "%s: this machine's clock is too far from the server's "
		    "(RequestTimeTooSkewed; at most 15 min are allowed): set the clock right, e.g. "
		    "`timedatectl set-ntp true` or chrony", what);
	}
	if (strcmp(code, "NoSuchBucket") == 0)
		return sr_err(err, "%s: bucket %s does not exist (create it, e.g. `%s %s://%s`)",
		    what, s->bucket, s->gcs ? "gcloud storage buckets create" : "aws s3 mb", scheme,
		    s->bucket);
	if (strcmp(code, "AccessDenied") == 0)
		return sr_err(err, "%s: access denied (AccessDenied) for the credentials from %s: "
		    "%s on %s://%s", what, source, s->gcs ? "the HMAC key's service account needs "
		    "roles/storage.objectAdmin" : "the policy must allow s3:GetObject, s3:PutObject, "
		    "s3:ListBucket, s3:DeleteObject, s3:AbortMultipartUpload and "
		    "s3:ListBucketMultipartUploads", scheme, s->bucket);
	if (strcmp(code, "AuthorizationHeaderMalformed") == 0)
		return sr_err(err, "%s: the server rejects region %s (%s)%s%s", what, s->region,
		    msg[0] ? msg : code, r->error.region[0] ? "; the bucket is in " : "",
		    r->error.region);
	if (code[0] != '\0')
		return sr_err(err, "%s: HTTP %ld %s%s%s", what, r->status, code,
		    msg[0] ? ": " : "", msg);
	return sr_err(err, "%s: HTTP %ld", what, r->status);
}
