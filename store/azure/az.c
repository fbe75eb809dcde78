/*
 * az.c: the Azure Blob family of the request engine (az.h): the store URL
 * and its options, the endpoint, signing every attempt (az-sign.c for
 * Shared Key; a SAS or a bearer token from az-creds.c), the judgement of
 * Azure's error replies, and the messages that say what to fix.
 * Transfers and retries are store/xfer.c's.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "az-creds.h"
#include "az-sign.h"
#include "az.h"
#include "netops.h"
#include "store-int.h"
#include "util.h"
#include "xfer.h"

#define BLOCK_MIN	(1024ULL * 1024)		/* our floor: smaller blocks only cost requests */
#define BLOCK_MAX	(4000ULL * 1024 * 1024)	/* Put Block's limit (x-ms-version 2019-12-12+) */
#define SHOW_MAX	100

struct sr_az {
	char *account;
	char *container;
	char *prefix;			/* "" or "a/b/" */
	char *origin;			/* "https://host[:port]" */
	char *ep_path;			/* the endpoint's path: "" or "/devstoreaccount1" */
	char ca_bundle[4096];
	struct sr_xfer_tuning tune;
	struct sr_creds_chain *creds;
	struct sr_xfer *x;
};

/* ---- options ---- */

/* Apply one "name=value" option; *endpoint gets the endpoint option. */
static int
apply_option(struct sr_az *a, const char *url, char *opt, char **endpoint, char *err)
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
	} else if (strcmp(opt, "block_size") == 0) {
		uint64_t s = sr_net_parse_size(v);

		if (s < BLOCK_MIN || s > BLOCK_MAX)
			return sr_net_bad_option(url, opt, "want a size from 1MiB to 4000MiB, e.g. "
			    "block_size=16MiB", err);
		a->tune.part_size = (size_t)s;
	} else if (strcmp(opt, "checksum") == 0) {
		static const enum sr_sum sums[] = { SR_SUM_MD5, SR_SUM_CRC64, SR_SUM_NONE };

		return sr_net_sum_option(&a->tune, url, opt, v, sums, SR_ARRAY_LEN(sums), err);
	} else if ((r = sr_net_tuning_option(&a->tune, url, opt, v, err)) != 1)
		return r == 0 ? sr_net_bad_option(url, opt, "unknown (known: endpoint, block_size, "
		    "concurrency, checksum, attempts, stall_timeout)", err) : -1;
	return 0;
}

/* Azure's naming rules for a storage account. */
static const char *
account_problem(const char *s)
{
	size_t n = strlen(s);

	if (n < 3 || n > 24)
		return "an account name has 3 to 24 characters";
	if (strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789") != n)
		return "an account name has lowercase letters and digits only";
	return NULL;
}

/* ... and for a container. */
static const char *
container_problem(const char *s)
{
	size_t n = strlen(s);

	if (n < 3 || n > 63)
		return "a container name has 3 to 63 characters";
	if (strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") != n)
		return "a container name has lowercase letters, digits and '-' only";
	if (s[0] == '-' || s[n - 1] == '-' || strstr(s, "--") != NULL)
		return "a container name starts and ends with a letter or digit, with no \"--\"";
	return NULL;
}

/* Where endpoint "http(s)://authority[/path]" ends its origin (*olen
 * bytes) and its path without a trailing '/' (*end); -1 when it is not
 * such a URL. */
static int
endpoint_parse(const char *ep, size_t *olen, size_t *end)
{
	const char *auth, *slash;
	size_t n;

	if (strncmp(ep, "http://", 7) == 0)
		auth = ep + 7;
	else if (strncmp(ep, "https://", 8) == 0)
		auth = ep + 8;
	else
		return -1;
	n = strlen(ep);
	while (n > (size_t)(auth - ep) && ep[n - 1] == '/')
		n--;
	slash = memchr(auth, '/', n - (size_t)(auth - ep));
	if (slash == auth || memchr(ep, '?', n) != NULL || memchr(ep, '#', n) != NULL ||
	    memchr(auth, '@', (size_t)((slash != NULL ? slash : ep + n) - auth)) != NULL ||
	    strcspn(ep, " \t\r\n") < n || (size_t)(auth - ep) == n)
		return -1;
	*olen = slash != NULL ? (size_t)(slash - ep) : n;
	*end = n;
	return 0;
}

/* The store's origin and endpoint path from ep, which endpoint_parse
 * took. 0, or -1 with err (out of memory). */
static int
endpoint_split(struct sr_az *a, const char *ep, char *err)
{
	size_t olen, end;

	if (endpoint_parse(ep, &olen, &end) == -1)
		return sr_err(err, "endpoint is not http(s)://host[:port][/path]");	/* a bug */
	if ((a->origin = sr_try_strndup(ep, olen, err)) == NULL ||
	    (a->ep_path = sr_try_strndup(ep + olen, end - olen, err)) == NULL)
		return -1;
	return 0;
}

/* The URL's parts, checked, with no I/O; url is the whole URL (messages). */
static int
parse(struct sr_az *a, const char *rest, const char *url, char **endpoint, char *err)
{
	char *copy, *q, *slash, *slash2;
	const char *why;
	size_t olen, end;
	int rc = -1;

	*endpoint = NULL;
	if ((copy = sr_try_strdup(rest, err)) == NULL)
		return sr_err_prefix(err, "open store %s", url);
	/* as the S3 stores: 8 MiB x 8 (so the same memory per upload); each
	 * block's checksum a CRC-64, which Azure checks as it checks an MD5,
	 * at 2.2 GB/s a core against MD5's 0.74: a save's client CPU per GiB
	 * 1.55 s against 2.08, quiet (bench/azure.sh, doc/benchmarks.md) */
	sr_net_tuning_defaults(&a->tune);
	a->tune.part_sum = SR_SUM_CRC64;
	if ((q = strchr(copy, '?')) != NULL) {
		char *opt, *save = NULL;

		*q++ = '\0';
		for (opt = strtok_r(q, "&", &save); opt != NULL; opt = strtok_r(NULL, "&", &save))
			if (apply_option(a, url, opt, endpoint, err) == -1)
				goto out;
	}
	if (*endpoint != NULL && endpoint_parse(*endpoint, &olen, &end) == -1) {
		sr_err(err, "open store %s: endpoint \"%s\" is not http(s)://host[:port][/path]",
		    url, *endpoint);
		goto out;
	}
	if ((slash = strchr(copy, '/')) != NULL)
		*slash++ = '\0';
	if ((why = account_problem(copy)) != NULL) {
		sr_err(err, "open store %s: account \"%s\": %s", url, copy, why);
		goto out;
	}
	if ((a->account = sr_try_strdup(copy, err)) == NULL) {
		sr_err_prefix(err, "open store %s", url);
		goto out;
	}
	if (slash == NULL || *slash == '\0' || *slash == '/') {
		sr_err(err, "open store %s: no container (the form is az://ACCOUNT/CONTAINER/PREFIX)",
		    url);
		goto out;
	}
	if ((slash2 = strchr(slash, '/')) != NULL)
		*slash2++ = '\0';
	if ((why = container_problem(slash)) != NULL) {
		sr_err(err, "open store %s: container \"%s\": %s", url, slash, why);
		goto out;
	}
	if ((a->container = sr_try_strdup(slash, err)) == NULL) {
		sr_err_prefix(err, "open store %s", url);
		goto out;
	}
	if ((a->prefix = sr_net_prefix(url, slash2, err)) == NULL)
		goto out;
	rc = 0;
out:
	free(copy);
	return rc;
}

static void
az_free_parts(struct sr_az *a)
{
	free(a->account);
	free(a->container);
	free(a->prefix);
	free(a->origin);
	free(a->ep_path);
}

int
sr_az_url_check(const char *rest, char *err)
{
	struct sr_az a;
	char *url, *ep = NULL;
	int rc;

	if ((url = sr_try_asprintf(err, "az://%s", rest)) == NULL)
		return sr_err_prefix(err, "open store az://%s", rest);
	memset(&a, 0, sizeof a);
	rc = parse(&a, rest, url, &ep, err);
	free(ep);
	az_free_parts(&a);
	free(url);
	return rc;
}

/* ---- the family: signing, judging ---- */

char *
sr_az_encode(const char *s, int keep_slash, char *err)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(s), o = 0, i;
	char *out = sr_try_calloc(n + 1, 3, err);

	if (out == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
		    (c == '/' && keep_slash)) {
			out[o++] = (char)c;
			continue;
		}
		out[o++] = '%';
		out[o++] = hex[c >> 4];
		out[o++] = hex[c & 15];
	}
	out[o] = '\0';
	return out;
}

/* What one request's attempts keep between them. */
struct az_state {
	struct sr_creds used;		/* what the last attempt was signed with */
	int refreshed;			/* a rejected token was fetched again */
};

/* RFC 1123 in GMT, with English names whatever the locale. */
static void
http_date(char *buf, size_t len)
{
	static const char days[] = "SunMonTueWedThuFriSat", months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	snprintf(buf, len, "%.3s, %02d %.3s %04d %02d:%02d:%02d GMT", days + 3 * tm.tm_wday,
	    tm.tm_mday, months + 3 * tm.tm_mon, tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
	    tm.tm_sec);
}

/* The request's path under the endpoint: "/EP_PATH/CONTAINER[/BLOB]",
 * the blob's name percent-encoded. NULL with err (out of memory). */
static char *
request_path(const struct sr_az *a, const char *key, char *err)
{
	char *name, *ename, *path;

	if (key == NULL)
		return sr_try_asprintf(err, "%s/%s", a->ep_path, a->container);
	if ((name = sr_try_asprintf(err, "%s%s", a->prefix, key)) == NULL)
		return NULL;
	ename = sr_az_encode(name, 1, err);
	free(name);
	if (ename == NULL)
		return NULL;
	path = sr_try_asprintf(err, "%s/%s/%s", a->ep_path, a->container, ename);
	free(ename);
	return path;
}

/* Free s after wiping it (it may hold a SAS or a token); safe on NULL. */
static void
free_wiped(char *s)
{
	if (s == NULL)
		return;
	explicit_bzero(s, strlen(s));
	free(s);
}

static int
az_sign(void *fam, const struct sr_xfer_req *rq, void *state, const char *what, char **url,
    struct curl_slist **hl, char *err)
{
	struct sr_az *a = fam;
	struct az_state *st = state;
	struct sr_creds cr;
	const char *lines[SR_XFER_HDRS_MAX + 4];
	char date[64], dateh[80], auth[SR_AZ_AUTH_MAX + 32], *path = NULL, *query = NULL;
	char *bearer = NULL;
	size_t n = 0, i;
	int has_body = rq->body != NULL || strcmp(rq->method, "PUT") == 0 ||
	    strcmp(rq->method, "POST") == 0, rc = -1;

	if (sr_creds_get(a->creds, &cr, err) == -1)
		return sr_err_prefix(err, "%s", what);
	sr_creds_wipe(&st->used);
	st->used = cr;
	if ((path = request_path(a, rq->key, err)) == NULL)
		goto out;
	/* a SAS goes after the request's own parameters; signed by itself */
	if (cr.form == SR_AZ_SAS)
		query = sr_try_asprintf(err, "%s%s%s", rq->query != NULL ? rq->query : "",
		    rq->query != NULL && rq->query[0] != '\0' ? "&" : "", cr.session_token);
	else
		query = sr_try_strdup(rq->query != NULL ? rq->query : "", err);
	if (query == NULL)
		goto out;

	http_date(date, sizeof date);
	snprintf(dateh, sizeof dateh, "x-ms-date: %s", date);
	lines[n++] = dateh;
	lines[n++] = "x-ms-version: " SR_AZ_VERSION;
	for (i = 0; rq->hdrs[i] != NULL && i < SR_XFER_HDRS_MAX; i++)
		lines[n++] = rq->hdrs[i];
	lines[n] = NULL;
	auth[0] = '\0';
	if (cr.form == SR_AZ_SHARED_KEY) {
		struct sr_az_request sr = { rq->method, a->account, path, query, lines,
			has_body ? (long long)rq->body_len : -1 };
		char sig[SR_AZ_AUTH_MAX];

		if (sr_az_sign(&sr, cr.secret_key, sig, err) == -1) {
			/* out of memory is not the key's fault */
			if (!sr_err_is_oom(err))
				sr_err_prefix(err, "%s", cr.source);
			goto out;
		}
		snprintf(auth, sizeof auth, "Authorization: %s", sig);
	} else if (cr.form == SR_AZ_BEARER &&
	    (bearer = sr_try_asprintf(err, "Authorization: Bearer %s", cr.session_token)) == NULL)
		goto out;
	for (i = 0; i < n; i++)
		if (sr_xfer_header(hl, lines[i], err) == -1)
			goto out;
	if ((auth[0] != '\0' && sr_xfer_header(hl, auth, err) == -1) ||
	    (bearer != NULL && sr_xfer_header(hl, bearer, err) == -1))
		goto out;
	if ((*url = sr_try_asprintf(err, "%s%s%s%s", a->origin, path, query[0] != '\0' ? "?" : "",
	    query)) == NULL)
		goto out;
	rc = 0;
out:
	if (rc == -1)
		sr_err_prefix(err, "%s", what);
	free_wiped(bearer);
	free_wiped(query);
	sr_creds_wipe(&cr);
	free(path);
	return rc;
}

const char *
sr_az_code(const struct sr_xfer_resp *r)
{
	return r->error.code[0] != '\0' ? r->error.code : r->captured[SR_AZ_ERROR_CODE];
}

static enum sr_xfer_judgement
az_judge(void *fam, const struct sr_xfer_req *rq, void *state, struct sr_xfer_resp *r)
{
	struct sr_az *a = fam;
	struct az_state *st = state;
	const char *code = sr_az_code(r);

	(void)rq;
	/* 500 InternalError and OperationTimedOut, 503 ServerBusy: Azure's
	 * throttling and its own timeouts; but a server that does not support
	 * what was asked (Azurite's strict mode: 500 FeatureNotSupported)
	 * answers the same every time */
	if (strcmp(code, "FeatureNotSupported") == 0)
		return SR_XFER_FINAL;
	if (r->status >= 500 || r->status == 429 || r->status == 408)
		return SR_XFER_TRANSIENT;
	/* a managed identity's token that expired: fetch a new one, once */
	if ((r->status == 401 || r->status == 403) && st->used.form == SR_AZ_BEARER &&
	    !st->refreshed && (strcmp(code, "InvalidAuthenticationInfo") == 0 ||
	    strcmp(code, "AuthenticationFailed") == 0)) {
		sr_creds_reject(a->creds, &st->used);
		st->refreshed = 1;
		return SR_XFER_AGAIN;
	}
	return SR_XFER_FINAL;
}

static void
az_state_wipe(void *state)
{
	sr_creds_wipe(&((struct az_state *)state)->used);
}

static int
az_fail_cb(void *fam, const char *what, const struct sr_xfer_resp *resp, char *err)
{
	return sr_az_fail(fam, what, resp, err);
}

/* A 404 says in x-ms-error-code (HEAD too) whether the container is the
 * one missing. */
static int
az_missing(void *fam, const struct sr_xfer_resp *r)
{
	(void)fam;
	return strcmp(sr_az_code(r), "ContainerNotFound") != 0;
}

static const struct sr_xfer_family az_family = {
	.state_size = sizeof(struct az_state),
	.sign = az_sign,
	.judge = az_judge,
	.state_wipe = az_state_wipe,
	.fail = az_fail_cb,
	.missing = az_missing,
	.capture = { [SR_AZ_ERROR_CODE] = "x-ms-error-code",
		[SR_AZ_CONTENT_MD5] = "content-md5", NULL },
	.ca_hint = "set REQUESTS_CA_BUNDLE to its PEM file, as for the Azure CLI",
};

/* ---- the store ---- */

int
sr_az_open(const char *rest, int no_metadata, struct sr_az **out, char *err)
{
	struct sr_az *a;
	char *url, *ep = NULL, envep[1024];
	const char *ca = getenv("REQUESTS_CA_BUNDLE");
	int rc = -1;

	*out = NULL;
	if ((url = sr_try_asprintf(err, "az://%s", rest)) == NULL)
		return sr_err_prefix(err, "open store az://%s", rest);
	if ((a = sr_try_calloc(1, sizeof *a, err)) == NULL) {
		sr_err_prefix(err, "open store %s", url);
		free(url);
		return -1;
	}
	if (parse(a, rest, url, &ep, err) == -1)
		goto out;
	if (ep == NULL) {
		size_t olen, end;

		if (sr_az_env_endpoint(a->account, envep, sizeof envep, err) == -1) {
			sr_err_prefix(err, "open store %s", url);
			goto out;
		}
		ep = envep[0] != '\0' ? sr_try_strdup(envep, err) :
		    sr_try_asprintf(err, "https://%s.blob.core.windows.net", a->account);
		if (ep == NULL) {
			sr_err_prefix(err, "open store %s", url);
			goto out;
		}
		if (endpoint_parse(ep, &olen, &end) == -1) {
			sr_err(err, "open store %s: the connection string's endpoint \"%.*s\" is not "
			    "http(s)://host[:port][/path]", url, SHOW_MAX, ep);
			goto out;
		}
	}
	if (endpoint_split(a, ep, err) == -1) {
		sr_err_prefix(err, "open store %s", url);
		goto out;
	}
	if (ca != NULL && ca[0] != '\0')
		snprintf(a->ca_bundle, sizeof a->ca_bundle, "%s", ca);
	if ((a->creds = sr_az_creds_chain(a->account, NULL, no_metadata, err)) == NULL ||
	    (a->x = sr_xfer_new(&az_family, a, &a->tune, a->ca_bundle, err)) == NULL) {
		sr_err_prefix(err, "open store %s", url);
		goto out;
	}
	rc = 0;
out:
	free(ep);
	free(url);
	if (rc == -1) {
		sr_az_close(a);
		return -1;
	}
	*out = a;
	return 0;
}

void
sr_az_close(struct sr_az *a)
{
	if (a == NULL)
		return;
	sr_xfer_free(a->x);
	sr_creds_chain_free(a->creds);
	az_free_parts(a);
	free(a);
}

const struct sr_xfer_tuning *
sr_az_tuning(const struct sr_az *a)
{
	return &a->tune;
}

const char *
sr_az_prefix(const struct sr_az *a)
{
	return a->prefix;
}

struct sr_xfer *
sr_az_xfer(const struct sr_az *a)
{
	return a->x;
}

int
sr_az_do(struct sr_az *a, const struct sr_xfer_req *rq, struct sr_xfer_resp *resp,
    const char *what, char *err)
{
	return sr_xfer_do(a->x, rq, resp, what, err);
}

/* ---- messages ---- */

int
sr_az_fail(struct sr_az *a, const char *what, const struct sr_xfer_resp *r, char *err)
{
	const char *code = sr_az_code(r);
	char source[256] = "", cerr[SR_ERRMAX], msg[SHOW_MAX + 4];
	struct sr_creds cr;
	int form = 0;
	size_t n;

	if (sr_creds_get(a->creds, &cr, cerr) == 0) {
		snprintf(source, sizeof source, "%s", cr.source);
		form = cr.form;
		sr_creds_wipe(&cr);
	}
	/* Azure's messages end in "\nRequestId:...\nTime:...": the first line */
	n = strcspn(r->error.message, "\r\n");
	snprintf(msg, sizeof msg, "%.*s", (int)(n < SHOW_MAX ? n : SHOW_MAX), r->error.message);
	if (strstr(r->error.detail, "Request date header too old") != NULL ||
	    strstr(r->error.detail, "Request date header is too far in the future") != NULL)
		return sr_err(err, "%s: this machine's clock is too far from the server's (%s; "
		    "at most 15 min are allowed): set the clock right, e.g. `timedatectl set-ntp "
		    "true` or chrony", what, code);
	if (strcmp(code, "AuthenticationFailed") == 0 || (strcmp(code, "AuthorizationFailure") == 0 &&
	    strncmp(r->error.message, "Server failed to authenticate", 29) == 0)) {
		if (form == SR_AZ_SAS)
			return sr_err(err, "%s: the server rejects the SAS token from %s (%s: it is "
			    "wrong, expired or for another account); make a new one, e.g. `az storage "
			    "container generate-sas --account-name %s -n %s --permissions racwdl "
			    "--expiry DATE`", what, source, code, a->account, a->container);
		if (form == SR_AZ_BEARER)
			return sr_err(err, "%s: the server rejects the token of the %s (%s)", what,
			    source, code);
		return sr_err(err, "%s: the server rejects the signature (%s): the account key "
		    "from %s is wrong for account %s; check AZURE_STORAGE_KEY or the connection "
		    "string's AccountKey", what, code, source, a->account);
	}
	if (strcmp(code, "AuthorizationPermissionMismatch") == 0 ||
	    strcmp(code, "AuthorizationFailure") == 0 ||
	    strcmp(code, "AuthorizationResourceTypeMismatch") == 0)
		return sr_err(err, "%s: access denied (%s) for the credentials from %s: %s on "
		    "az://%s/%s", what, code, source, form == SR_AZ_SAS ? "the SAS needs the "
		    "permissions racwdl (read, add, create, write, delete, list) for the container" :
		    "a managed identity needs the role Storage Blob Data Contributor (or a storage "
		    "firewall refuses this machine)", a->account, a->container);
	if (strcmp(code, "InvalidAuthenticationInfo") == 0)
		return sr_err(err, "%s: the server rejects the credentials from %s (%s)", what,
		    source, code);
	if (strcmp(code, "ContainerNotFound") == 0)
		return sr_err(err, "%s: container %s does not exist in account %s (create it, "
		    "e.g. `az storage container create --account-name %s -n %s`)", what,
		    a->container, a->account, a->account, a->container);
	if (strcmp(code, "FeatureNotSupported") == 0 && a->tune.part_sum == SR_SUM_CRC64)
		return sr_err(err, "%s: HTTP %ld %s%s%s; the server takes no x-ms-content-crc64 "
		    "(Azurite does only with --loose): add checksum=md5 to the store's URL",
		    what, r->status, code, msg[0] ? ": " : "", msg);
	if (code[0] != '\0')
		return sr_err(err, "%s: HTTP %ld %s%s%s", what, r->status, code,
		    msg[0] ? ": " : "", msg);
	return sr_err(err, "%s: HTTP %ld", what, r->status);
}

int
sr_az_presign(struct sr_az *a, const char *key, long expires, time_t now, char **url,
    char *err)
{
	struct sr_creds cr;
	char expiry[32], *path = NULL, *name = NULL, *query = NULL;
	struct tm tm;
	int rc = -1;

	*url = NULL;
	if (sr_creds_get(a->creds, &cr, err) == -1)
		return -1;
	if ((path = request_path(a, key, err)) == NULL ||
	    (name = sr_try_asprintf(err, "%s%s", a->prefix, key)) == NULL)
		goto out;
	now += expires;
	gmtime_r(&now, &tm);
	strftime(expiry, sizeof expiry, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (cr.form == SR_AZ_SHARED_KEY) {
		char sig[45], *esig, *ese;

		if (sr_az_sas_sign(a->account, a->container, name, expiry, cr.secret_key, sig,
		    err) == -1) {
			if (!sr_err_is_oom(err))
				sr_err_prefix(err, "%s", cr.source);
			goto out;
		}
		esig = sr_az_encode(sig, 0, err);
		ese = esig != NULL ? sr_az_encode(expiry, 0, err) : NULL;
		if (ese != NULL)
			query = sr_try_asprintf(err, "sv=%s&sr=b&sp=r&se=%s&sig=%s",
			    SR_AZ_SAS_VERSION, ese, esig);
		explicit_bzero(sig, sizeof sig);
		free_wiped(esig);
		free(ese);
		if (query == NULL)
			goto out;
	} else if (cr.form == SR_AZ_SAS) {
		/* the SAS's own se rules: it may end before expires */
		if ((query = sr_try_strdup(cr.session_token, err)) == NULL)
			goto out;
	} else {
		sr_err(err, "the credentials (%s) are an OAuth token, which signs no URL; give "
		    "the account key (AZURE_STORAGE_KEY) or a SAS (AZURE_STORAGE_SAS_TOKEN)",
		    cr.source);
		goto out;
	}
	if ((*url = sr_try_asprintf(err, "%s%s?%s", a->origin, path, query)) != NULL)
		rc = 0;
out:
	sr_creds_wipe(&cr);
	free(path);
	free(name);
	free_wiped(query);
	return rc;
}
