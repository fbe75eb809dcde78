/*
 * s3.c: the S3 family of the request engine (s3.h): the store URL and its
 * options, the endpoint and addressing style, signing every attempt with
 * SigV4, the judgement of S3's error replies (region corrections, expired
 * role keys, what is transient), and the messages that turn S3's error
 * codes into what to fix. Transfers and retries are store/xfer.c's.
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

#include "creds.h"
#include "netops.h"
#include "s3.h"
#include "sigv4.h"
#include "store-int.h"
#include "util.h"
#include "xfer.h"

struct sr_s3 {
	int gcs;
	char *bucket;
	char *prefix;			/* "" or "a/b/" */
	char *endpoint;			/* "scheme://authority" without a path; NULL: AWS */
	int path_style;
	char ca_bundle[4096];
	struct sr_xfer_tuning tune;
	struct sr_creds_chain *creds;
	pthread_mutex_t lock;		/* guards region and the owed aborts */
	char region[64];
	/* uploads whose abort did not reach the server (s3-mpu.c tries
	 * again): keys and upload ids, nowed of each */
	char **owed_keys, **owed_ids;
	size_t nowed;
	struct sr_xfer *x;		/* the request engine */
};

/* ---- options ---- */

/* Apply one "name=value" option of the URL. */
static int
apply_option(struct sr_s3 *s, const char *url, char *opt, struct sr_creds_opts *co,
    char **endpoint, char **region, char *err)
{
	char *eq = strchr(opt, '=');
	const char *v;
	int r;

	if (eq == NULL)
		return sr_net_bad_option(url, opt, "want name=value", err);
	*eq = '\0';
	v = eq + 1;
	if (strcmp(opt, "endpoint") == 0) {
		free(*endpoint);
		if ((*endpoint = sr_try_strdup(v, err)) == NULL)
			return sr_err_prefix(err, "open store %s", url);
	} else if (strcmp(opt, "region") == 0) {
		if (v[0] == '\0' || strlen(v) >= sizeof s->region)
			return sr_net_bad_option(url, opt, "want a region such as us-east-1", err);
		free(*region);
		if ((*region = sr_try_strdup(v, err)) == NULL)
			return sr_err_prefix(err, "open store %s", url);
	} else if (strcmp(opt, "profile") == 0) {
		co->profile = v;
	} else if (strcmp(opt, "part_size") == 0) {
		uint64_t n = sr_net_parse_size(v);

		/* S3's limits: parts of 5 MiB to 5 GiB (the last may be smaller) */
		if (n < 5ULL * 1024 * 1024 || n > 5ULL * 1024 * 1024 * 1024)
			return sr_net_bad_option(url, opt, "want a size from 5MiB to 5GiB, e.g. "
			    "part_size=16MiB", err);
		s->tune.part_size = (size_t)n;
	} else if (strcmp(opt, "checksum") == 0) {
		static const enum sr_sum sums[] = { SR_SUM_SHA256, SR_SUM_MD5, SR_SUM_NONE };

		return sr_net_sum_option(&s->tune, url, opt, v, sums, SR_ARRAY_LEN(sums), err);
	} else if (strcmp(opt, "md5") == 0) {
		/* the older spelling: checksum=md5 or checksum=none */
		if (strcmp(v, "yes") != 0 && strcmp(v, "no") != 0)
			return sr_net_bad_option(url, opt, "want yes or no", err);
		s->tune.part_sum = strcmp(v, "yes") == 0 ? SR_SUM_MD5 : SR_SUM_NONE;
	} else if ((r = sr_net_tuning_option(&s->tune, url, opt, v, err)) != 1)
		return r == 0 ? sr_net_bad_option(url, opt, "unknown (known: endpoint, region, "
		    "profile, part_size, concurrency, checksum, md5, attempts, stall_timeout)",
		    err) : -1;
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

/* "http://host:port" (no path, no query) into *out (malloc'd): 0; 1 when
 * ep is not one; -1 with err "open store URL: ..." on out-of-memory. */
static int
endpoint_norm(const char *ep, const char *url, char **out, char *err)
{
	const char *auth;
	size_t n;

	if (strncmp(ep, "http://", 7) == 0)
		auth = ep + 7;
	else if (strncmp(ep, "https://", 8) == 0)
		auth = ep + 8;
	else
		return 1;
	n = strlen(auth);
	while (n > 0 && auth[n - 1] == '/')
		n--;
	if (n == 0 || memchr(auth, '/', n) != NULL || memchr(auth, '?', n) != NULL ||
	    memchr(auth, '@', n) != NULL)
		return 1;
	if ((*out = sr_try_strndup(ep, (size_t)(auth - ep) + n, err)) == NULL)
		return sr_err_prefix(err, "open store %s", url);
	return 0;
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
	char *copy, *q, *slash;
	const char *why;
	int rc = -1, r;

	memset(pa, 0, sizeof *pa);
	if ((copy = sr_try_strdup(rest, err)) == NULL)
		return sr_err_prefix(err, "open store %s", url);
	s->gcs = strcmp(scheme, "gs") == 0;
	pa->co.kind = s->gcs ? SR_CREDS_GCS : SR_CREDS_AWS;
	sr_net_tuning_defaults(&s->tune);
	/* S3 and RGW check a signed payload's SHA-256 against the body (400
	 * XAmzContentSHA256Mismatch) and SHA-256 costs less than half of MD5
	 * with SHA-NI; GCS documents the check of Content-MD5 only */
	s->tune.part_sum = s->gcs ? SR_SUM_MD5 : SR_SUM_SHA256;
	if ((q = strchr(copy, '?')) != NULL) {
		char *opt, *save = NULL;

		*q++ = '\0';
		for (opt = strtok_r(q, "&", &save); opt != NULL; opt = strtok_r(NULL, "&", &save))
			if (apply_option(s, url, opt, &pa->co, &pa->endpoint, &pa->region, err) == -1)
				goto out;
	}
	if (pa->endpoint != NULL) {
		char *norm = NULL;

		if ((r = endpoint_norm(pa->endpoint, url, &norm, err)) != 0) {
			if (r == 1)
				sr_err(err, "open store %s: endpoint \"%s\" is not "
				    "http(s)://host[:port]", url, pa->endpoint);
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
	if ((s->bucket = sr_try_strdup(copy, err)) == NULL) {
		sr_err_prefix(err, "open store %s", url);
		goto out;
	}
	if ((s->prefix = sr_net_prefix(url, slash, err)) == NULL)
		goto out;
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

/* ---- the family: signing, judging ---- */

/* The header line of a payload hash the caller computed (digest.h). */
#define SHA_HDR "x-amz-content-sha256: "

/* What one request's attempts keep between them. */
struct s3_state {
	char payload_hash[65];		/* hex SHA-256 of the body, or UNSIGNED-PAYLOAD */
	int region_fixes;		/* region corrections so far */
	int creds_refreshed;
	struct sr_creds used;		/* the keys the last attempt was signed with */
	char region[64];		/* ... and the region */
};

/* Where a request for key (NULL: the bucket) goes: the host (600 bytes;
 * path-style on custom endpoints, virtual-hosted on AWS), the raw path
 * and the path as sent (both malloc'd). 0, or -1 with err (out of memory;
 * nothing to free). */
static int
where(const struct sr_s3 *s, const char *region, const char *key, char host[600], char **path,
    char **wire, char *err)
{
	if (s->endpoint != NULL)
		snprintf(host, 600, "%s", strstr(s->endpoint, "://") + 3);
	else if (s->gcs)
		snprintf(host, 600, "storage.googleapis.com");
	else if (s->path_style)
		snprintf(host, 600, "s3.%s.amazonaws.com", region);
	else
		snprintf(host, 600, "%s.s3.%s.amazonaws.com", s->bucket, region);
	if (s->path_style || s->gcs || s->endpoint != NULL)
		*path = sr_try_asprintf(err, "/%s/%s%s", s->bucket, key != NULL ? s->prefix : "",
		    key != NULL ? key : "");
	else
		*path = sr_try_asprintf(err, "/%s%s", key != NULL ? s->prefix : "",
		    key != NULL ? key : "");
	*wire = *path != NULL ? sr_sigv4_uri_encode(*path, strlen(*path), 1, err) : NULL;
	if (*wire == NULL) {
		free(*path);
		*path = NULL;
		return -1;
	}
	return 0;
}

/* "http" or "https": the endpoint's, else AWS's and GCS's https. */
static const char *
url_scheme(const struct sr_s3 *s)
{
	return s->endpoint != NULL && strncmp(s->endpoint, "http://", 7) == 0 ? "http" : "https";
}

static int
s3_sign(void *fam, const struct sr_xfer_req *rq, void *state, const char *what, char **url,
    struct curl_slist **hl, char *err)
{
	struct sr_s3 *s = fam;
	struct s3_state *st = state;
	struct sr_creds cr;
	struct sr_sigv4_header h[SR_XFER_HDRS_MAX + 4];
	struct sr_sigv4_request sr;
	struct sr_sigv4_key k;
	char region[64], host[600], amz_date[20], auth[SR_SIGV4_AUTH_MAX], *line;
	char *path, *wire;
	char names[SR_XFER_HDRS_MAX][64];
	struct tm tm;
	time_t now;
	size_t nh = 0, i;
	int rc;

	/* a caller that hashed the body already (parts.c's hashers, with the
	 * store's checksum=sha256) passes the hash as a header: it is the
	 * payload hash, signed once and not sent twice */
	for (i = 0; st->payload_hash[0] == '\0' && rq->hdrs[i] != NULL && i < SR_XFER_HDRS_MAX;
	    i++)
		if (strncasecmp(rq->hdrs[i], SHA_HDR, sizeof SHA_HDR - 1) == 0)
			snprintf(st->payload_hash, sizeof st->payload_hash, "%s",
			    rq->hdrs[i] + sizeof SHA_HDR - 1);
	if (st->payload_hash[0] == '\0') {
		if (rq->unsigned_payload)
			snprintf(st->payload_hash, sizeof st->payload_hash, "UNSIGNED-PAYLOAD");
		else if (sr_sha256_hex(rq->body != NULL ? rq->body : "",
		    rq->body != NULL ? rq->body_len : 0, st->payload_hash, err) == -1)
			return sr_err_prefix(err, "%s", what);
	}
	if (sr_creds_get(s->creds, &cr, err) == -1)
		return sr_err_prefix(err, "%s", what);
	sr_creds_wipe(&st->used);
	st->used = cr;
	pthread_mutex_lock(&s->lock);
	snprintf(region, sizeof region, "%s", s->region);
	pthread_mutex_unlock(&s->lock);
	snprintf(st->region, sizeof st->region, "%s", region);

	if (where(s, region, rq->key, host, &path, &wire, err) == -1) {
		sr_creds_wipe(&cr);
		free(path);
		return sr_err_prefix(err, "%s", what);
	}

	now = time(NULL);
	gmtime_r(&now, &tm);
	strftime(amz_date, sizeof amz_date, "%Y%m%dT%H%M%SZ", &tm);

	h[nh++] = (struct sr_sigv4_header){ "host", host };
	h[nh++] = (struct sr_sigv4_header){ "x-amz-date", amz_date };
	h[nh++] = (struct sr_sigv4_header){ "x-amz-content-sha256", st->payload_hash };
	if (cr.session_token[0] != '\0')
		h[nh++] = (struct sr_sigv4_header){ "x-amz-security-token", cr.session_token };
	for (i = 0; rq->hdrs[i] != NULL && i < SR_XFER_HDRS_MAX; i++) {
		const char *colon = strchr(rq->hdrs[i], ':');
		size_t nl = colon != NULL ? (size_t)(colon - rq->hdrs[i]) : 0;

		if (strncasecmp(rq->hdrs[i], SHA_HDR, sizeof SHA_HDR - 1) == 0)
			continue;	/* the payload hash, in h already */

		if (colon == NULL || nl >= sizeof names[i]) {
			/* the callers' own headers: a bug, said, not the job's end */
			sr_err(err, "%s: sign request: header \"%.80s\" is not \"name: value\" "
			    "with a name under 64 bytes (a bug)", what, rq->hdrs[i]);
			sr_creds_wipe(&cr);
			free(wire);
			free(path);
			return -1;
		}
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
	sr.payload_hash = st->payload_hash;
	sr.amz_date = amz_date;
	sr.region = region;
	sr.service = "s3";
	sr.normalize_path = 0;
	k.access_key = cr.access_key;
	k.secret_key = cr.secret_key;
	rc = sr_sigv4_sign(&sr, &k, auth, err);
	/* the headers, the session token's among them, then the signature
	 * (the engine frees *hl, added to so far, on failure) */
	for (i = 0; rc == 0 && i <= nh; i++) {
		line = i < nh ? sr_try_asprintf(err, "%s: %s", h[i].name, h[i].value) :
		    sr_try_asprintf(err, "Authorization: %s", auth);
		if (line == NULL) {
			rc = -1;
			break;
		}
		rc = sr_xfer_header(hl, line, err);
		free(line);
	}
	sr_creds_wipe(&cr);
	if (rc == 0 && (*url = sr_try_asprintf(err, "%s://%s%s%s%s", url_scheme(s), host, wire,
	    rq->query != NULL && rq->query[0] != '\0' ? "?" : "",
	    rq->query != NULL ? rq->query : "")) == NULL)
		rc = -1;
	free(path);
	free(wire);
	return rc == 0 ? 0 : sr_err_prefix(err, "%s", what);
}

static int
retryable_reply(const struct sr_xfer_resp *r)
{
	const char *code = r->error.code;

	if (r->status >= 500 || r->status == 429)
		return 1;	/* 500 InternalError, 503 SlowDown, GCS's 429 rate limit */
	if (r->status == 409 && strcmp(code, "ConditionalRequestConflict") == 0)
		return 1;
	if (strcmp(code, "RequestTimeout") == 0 || strcmp(code, "SlowDown") == 0)
		return 1;
	/* the body was damaged on the way (the checksum or signed payload
	 * hash the server computed differs): the bytes sent again are ours */
	if (r->status == 400 && (strcmp(code, "BadDigest") == 0 ||
	    strcmp(code, "XAmzContentSHA256Mismatch") == 0))
		return 1;
	return 0;
}

static enum sr_xfer_judgement
s3_judge(void *fam, const struct sr_xfer_req *rq, void *state, struct sr_xfer_resp *r)
{
	struct sr_s3 *s = fam;
	struct s3_state *st = state;

	(void)rq;
	/* the bucket lives in another region: take it from the reply (the
	 * error's <Region>, or x-amz-bucket-region on a 301 or a bodiless 400,
	 * as for a HEAD) and sign again; compare with the region this attempt
	 * was signed with, as another thread may have corrected the store */
	if ((r->status == 400 && (strcmp(r->error.code, "AuthorizationHeaderMalformed") == 0 ||
	    r->error.code[0] == '\0')) || r->status == 301) {
		const char *right = r->error.region[0] != '\0' ? r->error.region :
		    r->captured[SR_S3_BUCKET_REGION];

		if (right[0] != '\0' && strcmp(right, st->region) != 0 && st->region_fixes < 2) {
			pthread_mutex_lock(&s->lock);
			snprintf(s->region, sizeof s->region, "%s", right);
			pthread_mutex_unlock(&s->lock);
			st->region_fixes++;
			return SR_XFER_AGAIN;
		}
		return SR_XFER_FINAL;
	}
	/* role credentials expire; fetch new ones once */
	if (r->status == 400 || r->status == 403) {
		if ((strcmp(r->error.code, "ExpiredToken") == 0 ||
		    strcmp(r->error.code, "TokenRefreshRequired") == 0 ||
		    strcmp(r->error.code, "InvalidToken") == 0) && !st->creds_refreshed) {
			/* only these keys: many parts failing at once refetch once */
			sr_creds_reject(s->creds, &st->used);
			st->creds_refreshed = 1;
			return SR_XFER_AGAIN;
		}
	}
	return retryable_reply(r) ? SR_XFER_TRANSIENT : SR_XFER_FINAL;
}

static void
s3_state_wipe(void *state)
{
	sr_creds_wipe(&((struct s3_state *)state)->used);
}

static int
s3_fail_cb(void *fam, const char *what, const struct sr_xfer_resp *resp, char *err)
{
	return sr_s3_fail(fam, what, resp, err);
}

/* The etag store.h's callers see: S3's ETag, GCS's generation (what
 * x-goog-if-generation-match compares). */
static const char *
s3_etag(void *fam, const struct sr_xfer_resp *r)
{
	return ((struct sr_s3 *)fam)->gcs ? r->captured[SR_S3_GENERATION] : r->etag;
}

/* A 404 is the key's unless it names the bucket (a HEAD's has no body). */
static int
s3_missing(void *fam, const struct sr_xfer_resp *r)
{
	(void)fam;
	return strcmp(r->error.code, "NoSuchBucket") != 0;
}

static const struct sr_xfer_family s3_family = {
	.state_size = sizeof(struct s3_state),
	.sign = s3_sign,
	.judge = s3_judge,
	.state_wipe = s3_state_wipe,
	.fail = s3_fail_cb,
	.etag = s3_etag,
	.missing = s3_missing,
	.capture = { [SR_S3_GENERATION] = "x-goog-generation",
		[SR_S3_BUCKET_REGION] = "x-amz-bucket-region", NULL },
	.ca_hint = "set AWS_CA_BUNDLE to its PEM file",
};

struct sr_xfer *
sr_s3_xfer(const struct sr_s3 *s)
{
	return s->x;
}

int
sr_s3_do(struct sr_s3 *s, const struct sr_xfer_req *rq, struct sr_xfer_resp *resp,
    const char *what, char *err)
{
	return sr_xfer_do(s->x, rq, resp, what, err);
}

/* ---- the store ---- */

/* The handle's first pieces: itself, zeroed, and the whole URL (for
 * messages). 0, or -1 with err "open store SCHEME://REST: ...". */
static int
s3_alloc(const char *scheme, const char *rest, struct sr_s3 **s, char **url, char *err)
{
	if ((*s = sr_try_calloc(1, sizeof **s, err)) == NULL)
		return sr_err_prefix(err, "open store %s://%s", scheme, rest);
	if ((*url = sr_try_asprintf(err, "%s://%s", scheme, rest)) == NULL) {
		free(*s);
		*s = NULL;
		return sr_err_prefix(err, "open store %s://%s", scheme, rest);
	}
	return 0;
}

int
sr_s3_url_check(const char *scheme, const char *rest, char *err)
{
	struct sr_s3 *s;
	struct parsed pa;
	char *url;
	int rc;

	if (s3_alloc(scheme, rest, &s, &url, err) == -1)
		return -1;
	rc = parse(s, scheme, rest, url, &pa, err);
	parsed_free(&pa);
	free(s->bucket);
	free(s->prefix);
	free(s);
	free(url);
	return rc;
}

int
sr_s3_open(const char *scheme, const char *rest, int no_metadata, struct sr_s3 **out,
    char *err)
{
	struct sr_s3 *s;
	struct sr_store_config cfg;
	struct parsed pa;
	char *url;
	int rc = -1, r;

	*out = NULL;
	if (s3_alloc(scheme, rest, &s, &url, err) == -1)
		return -1;
	pthread_mutex_init(&s->lock, NULL);
	if (parse(s, scheme, rest, url, &pa, err) == -1)
		goto out;
	if (sr_store_config_load(&pa.co, &cfg, err) == -1) {
		sr_err_prefix(err, "open store %s", url);
		goto out;
	}
	snprintf(s->region, sizeof s->region, "%s", pa.region != NULL ? pa.region : cfg.region);
	snprintf(s->ca_bundle, sizeof s->ca_bundle, "%s", cfg.ca_bundle);
	if (pa.endpoint != NULL) {
		s->endpoint = pa.endpoint;
		pa.endpoint = NULL;
	} else if (cfg.endpoint[0] != '\0' &&
	    (r = endpoint_norm(cfg.endpoint, url, &s->endpoint, err)) != 0) {
		if (r == 1)
			sr_err(err, "open store %s: the configured endpoint \"%s\" is not "
			    "http(s)://host[:port]", url, cfg.endpoint);
		goto out;
	}
	/* path-style on custom endpoints; on AWS virtual-hosted, unless the
	 * bucket's name does not fit in a host name */
	s->path_style = s->endpoint != NULL || strchr(s->bucket, '.') != NULL ||
	    strchr(s->bucket, '_') != NULL;
	pa.co.no_imds = no_metadata;
	if (sr_creds_chain_new(&pa.co, &s->creds, err) == -1) {
		sr_err_prefix(err, "open store %s", url);
		goto out;
	}
	if ((s->x = sr_xfer_new(&s3_family, s, &s->tune, s->ca_bundle, err)) == NULL) {
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
	if (s == NULL)
		return;
	sr_xfer_free(s->x);
	while (s->nowed > 0) {
		s->nowed--;
		free(s->owed_keys[s->nowed]);
		free(s->owed_ids[s->nowed]);
	}
	free(s->owed_keys);
	free(s->owed_ids);
	if (s->creds != NULL)
		sr_creds_chain_free(s->creds);
	pthread_mutex_destroy(&s->lock);
	free(s->bucket);
	free(s->prefix);
	free(s->endpoint);
	free(s);
}

int
sr_s3_owe_abort(struct sr_s3 *s, const char *key, const char *upload_id, char *err)
{
	char **keys, **ids, *k = NULL, *id = NULL;
	int rc = -1;

	pthread_mutex_lock(&s->lock);
	/* each array grown on its own: one kept (larger) when the other
	 * fails is still right for nowed entries */
	if ((keys = sr_try_reallocarray(s->owed_keys, s->nowed + 1, sizeof *keys, err)) == NULL)
		goto out;
	s->owed_keys = keys;
	if ((ids = sr_try_reallocarray(s->owed_ids, s->nowed + 1, sizeof *ids, err)) == NULL)
		goto out;
	s->owed_ids = ids;
	if ((k = sr_try_strdup(key, err)) == NULL || (id = sr_try_strdup(upload_id, err)) == NULL)
		goto out;
	s->owed_keys[s->nowed] = k;
	s->owed_ids[s->nowed++] = id;
	k = id = NULL;
	rc = 0;
out:
	pthread_mutex_unlock(&s->lock);
	free(k);
	free(id);
	return rc == 0 ? 0 : sr_err_prefix(err, "remember the abort of upload %s", upload_id);
}

size_t
sr_s3_owed_take(struct sr_s3 *s, char ***keys, char ***ids)
{
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = s->nowed;
	*keys = s->owed_keys;
	*ids = s->owed_ids;
	s->owed_keys = s->owed_ids = NULL;
	s->nowed = 0;
	pthread_mutex_unlock(&s->lock);
	return n;
}

int
sr_s3_is_gcs(const struct sr_s3 *s)
{
	return s->gcs;
}

const struct sr_xfer_tuning *
sr_s3_tuning(const struct sr_s3 *s)
{
	return &s->tune;
}

const char *
sr_s3_prefix(const struct sr_s3 *s)
{
	return s->prefix;
}

/* ---- messages ---- */

int
sr_s3_fail(struct sr_s3 *s, const char *what, const struct sr_xfer_resp *r, char *err)
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
		double st = sr_xml_parse_iso8601(r->error.server_time);
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

/* ---- presigned URLs ---- */

/* One "&name=value" of a presigned URL's query, the value encoded as
 * SigV4's canonical form has it, so the wire and the signature agree.
 * 0, or -1 with err (out of memory). */
static int
query_add(char *q, size_t len, const char *name, const char *value, char *err)
{
	char *v = sr_sigv4_uri_encode(value, strlen(value), 0, err);
	size_t n = strlen(q);

	if (v == NULL)
		return -1;
	snprintf(q + n, len - n, "%s%s=%s", n > 0 ? "&" : "", name, v);
	explicit_bzero(v, strlen(v));
	free(v);
	return 0;
}

int
sr_s3_presign(struct sr_s3 *s, const char *key, long expires, time_t now, char **url, char *err)
{
	/* GCS: its own V4 with HMAC keys (X-Goog-*, scope auto/storage);
	 * S3: AWS's (X-Amz-*); the session token is signed too */
	const char *x = s->gcs ? "X-Goog-" : "X-Amz-";
	struct sr_creds cr;
	struct sr_sigv4_header h[1];
	struct sr_sigv4_request sr;
	struct sr_sigv4_key k;
	char region[64], host[600], amz_date[20], cred[256], secs[24], sig[65], name[40];
	char *path = NULL, *wire = NULL, *q;
	size_t qlen = sizeof cr.session_token * 3 + 1024;
	struct tm tm;
	int rc = -1, bad = 0;

	*url = NULL;
	if (sr_creds_get(s->creds, &cr, err) == -1)
		return -1;
	if ((q = sr_try_malloc(qlen, err)) == NULL) {
		sr_creds_wipe(&cr);
		return -1;
	}
	q[0] = '\0';
	pthread_mutex_lock(&s->lock);
	snprintf(region, sizeof region, "%s", s->region);
	pthread_mutex_unlock(&s->lock);
	if (where(s, region, key, host, &path, &wire, err) == -1)
		goto out;
	gmtime_r(&now, &tm);
	strftime(amz_date, sizeof amz_date, "%Y%m%dT%H%M%SZ", &tm);
	snprintf(cred, sizeof cred, "%s/%.8s/%s/%s/%s", cr.access_key, amz_date, region,
	    s->gcs ? "storage" : "s3", s->gcs ? "goog4_request" : "aws4_request");
	snprintf(secs, sizeof secs, "%ld", expires);
	snprintf(name, sizeof name, "%sAlgorithm", x);
	bad |= query_add(q, qlen, name, s->gcs ? "GOOG4-HMAC-SHA256" : "AWS4-HMAC-SHA256", err);
	snprintf(name, sizeof name, "%sCredential", x);
	bad |= query_add(q, qlen, name, cred, err);
	snprintf(name, sizeof name, "%sDate", x);
	bad |= query_add(q, qlen, name, amz_date, err);
	snprintf(name, sizeof name, "%sExpires", x);
	bad |= query_add(q, qlen, name, secs, err);
	if (cr.session_token[0] != '\0') {
		snprintf(name, sizeof name, "%sSecurity-Token", x);
		bad |= query_add(q, qlen, name, cr.session_token, err);
	}
	snprintf(name, sizeof name, "%sSignedHeaders", x);
	bad |= query_add(q, qlen, name, "host", err);
	if (bad)
		goto out;
	h[0] = (struct sr_sigv4_header){ "host", host };
	memset(&sr, 0, sizeof sr);
	sr.method = "GET";
	sr.path = path;
	sr.query = q;
	sr.headers = h;
	sr.nheaders = 1;
	sr.payload_hash = "UNSIGNED-PAYLOAD";
	sr.amz_date = amz_date;
	sr.region = region;
	sr.service = s->gcs ? "storage" : "s3";
	sr.query_auth = 1;
	sr.goog4 = s->gcs;
	k.access_key = cr.access_key;
	k.secret_key = cr.secret_key;
	if (sr_sigv4_query_signature(&sr, &k, sig, err) == -1)
		goto out;
	if ((*url = sr_try_asprintf(err, "%s://%s%s?%s&%sSignature=%s", url_scheme(s), host, wire,
	    q, x, sig)) != NULL)
		rc = 0;
out:
	sr_creds_wipe(&cr);
	explicit_bzero(q, qlen);
	free(q);
	free(path);
	free(wire);
	return rc;
}
