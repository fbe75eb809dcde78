/*
 * gce.c: the transport of the GCP engine (gce.h): the client, its project
 * and endpoint, the bearer token (gce-auth.h), JSON requests sent with
 * common/http.c and retried when they may pass, Google's error documents
 * and the capacity codes' class, the wait on long-running operations, and
 * label values.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "gce-auth.h"
#include "gce-int.h"
#include "gce.h"
#include "http.h"
#include "json.h"
#include "util.h"

#define GCE_ENDPOINT	"https://compute.googleapis.com"
#define GCE_TRIES	4
#define GCE_BODY_MAX	(8 * 1024 * 1024)	/* an aggregated list is large */

/* ---- errors ---- */

enum sr_gce_status
sr_gce_classify(const char *code)
{
	/* ../shared/design.md section 14 and Compute's error catalogue: the
	 * request could succeed elsewhere (another zone, type, cloud) or
	 * later, not here now. The lowercase ones are HTTP errors' reasons
	 * (the bulk API answers 403 quotaExceeded, 503 insufficientCapacity). */
	static const char *const capacity[] = {
		"ZONE_RESOURCE_POOL_EXHAUSTED", "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS",
		"QUOTA_EXCEEDED", "quotaExceeded", "insufficientCapacity",
	};
	size_t i;

	if (code == NULL || code[0] == '\0')
		return SR_GCE_OK;
	for (i = 0; i < SR_ARRAY_LEN(capacity); i++)
		if (strcmp(code, capacity[i]) == 0)
			return SR_GCE_CAPACITY;
	return SR_GCE_ERROR;
}

/* Worth another try: rate limits and Google's own trouble. */
static int
transient(long status, const char *code)
{
	return status >= 500 || status == 429 || strcmp(code, "rateLimitExceeded") == 0 ||
	    strcmp(code, "userRateLimitExceeded") == 0 || strcmp(code, "backendError") == 0;
}

void
gce_str(json_t *o, const char *key, char *dst, size_t cap)
{
	json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	dst[0] = '\0';
	if (json_is_string(v))
		snprintf(dst, cap, "%s", json_string_value(v));
}

void
gce_tail(char *dst, size_t cap, const char *url)
{
	const char *s = strrchr(url, '/');

	snprintf(dst, cap, "%s", s != NULL ? s + 1 : url);
}

int
sr_gce_parse_error(const char *body, size_t len, char *code, size_t code_len, char *message,
    size_t message_len)
{
	json_t *root, *e, *errs, *n;
	json_error_t je;
	int oom;

	code[0] = message[0] = '\0';
	if ((root = sr_json_loadb(body, len, 0, &je, &oom)) == NULL)
		return -1;
	e = json_is_object(root) ? json_object_get(root, "error") : NULL;
	if (!json_is_object(e)) {
		json_decref(root);
		return -1;
	}
	errs = json_object_get(e, "errors");
	if (json_is_array(errs) && json_array_size(errs) > 0)
		gce_str(json_array_get(errs, 0), "reason", code, code_len);
	if (code[0] == '\0')
		gce_str(e, "status", code, code_len);
	if (code[0] == '\0' && json_is_integer(n = json_object_get(e, "code")))
		snprintf(code, code_len, "%lld", (long long)json_integer_value(n));
	gce_str(e, "message", message, message_len);
	json_decref(root);
	if (code[0] == '\0') {
		message[0] = '\0';
		return -1;
	}
	return 0;
}

void
sr_gce_label_value(const char *s, char out[64])
{
	unsigned char md[32];
	unsigned mdlen = 0;
	size_t n = strlen(s);
	char hex[65];

	if (n >= 1 && n <= 63 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n) {
		memcpy(out, s, n + 1);
		return;
	}
	EVP_Digest(s, n, md, &mdlen, EVP_sha256(), NULL);
	sr_hex_of(md, sizeof md, hex);
	snprintf(out, 64, "h-%.61s", hex);
}

int
gce_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= 63 && s[0] >= 'a' && s[0] <= 'z' &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == n;
}

/* ---- the client ---- */

int
sr_gce_open(const struct sr_gce_opts *o, struct sr_gce **out, char *err)
{
	struct sr_gce_auth_opts ao = { o->credentials, o->metadata, o->no_metadata, o->timeout };
	struct sr_gce *c;
	const char *ep, *p;
	char proj[128];
	size_t n;

	*out = NULL;
	if ((c = sr_try_calloc(1, sizeof *c, err)) == NULL)
		return -1;
	c->timeout = o->timeout > 0 ? o->timeout : 30;
	c->op_timeout = o->op_timeout > 0 ? o->op_timeout : 600;
	if (sr_gce_auth_new(&ao, &c->auth, err) == -1) {
		free(c);
		return sr_err_prefix(err, "open GCE client");
	}
	ep = o->endpoint;
	if (ep == NULL && (ep = getenv("SPOTRUN_GCE_ENDPOINT")) != NULL && ep[0] == '\0')
		ep = NULL;
	if (ep == NULL)
		ep = GCE_ENDPOINT;
	n = strlen(ep);
	while (n > 0 && ep[n - 1] == '/')
		n--;
	if ((strncmp(ep, "http://", 7) != 0 && strncmp(ep, "https://", 8) != 0) || n > 400 ||
	    strcspn(ep, "?#@ ") < n) {
		sr_gce_close(c);
		return sr_err(err, "open GCE client: endpoint \"%.200s\": want http(s)://HOST[:PORT]",
		    ep);
	}
	p = o->project;
	if (p == NULL && (p = getenv("CLOUDSDK_CORE_PROJECT")) != NULL && p[0] == '\0')
		p = NULL;
	if (p == NULL && (p = getenv("GOOGLE_CLOUD_PROJECT")) != NULL && p[0] == '\0')
		p = NULL;
	if (p == NULL && sr_gce_auth_project(c->auth)[0] != '\0')
		p = sr_gce_auth_project(c->auth);
	if (p == NULL) {
		if (sr_gce_auth_metadata_project(c->auth, proj, sizeof proj, err) == -1) {
			sr_gce_close(c);
			return sr_err_prefix(err, "open GCE client: no project (set "
			    "CLOUDSDK_CORE_PROJECT or GOOGLE_CLOUD_PROJECT)");
		}
		p = proj;
	}
	if (strlen(p) >= sizeof c->project ||
	    strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789-:.") != strlen(p)) {
		sr_gce_close(c);
		return sr_err(err, "open GCE client: project \"%.128s\" is not a project id", p);
	}
	snprintf(c->project, sizeof c->project, "%s", p);
	snprintf(c->base, sizeof c->base, "%.*s/compute/v1/projects/%s", (int)n, ep, c->project);
	c->root_len = n + strlen("/compute/v1");
	*out = c;
	return 0;
}

void
sr_gce_close(struct sr_gce *c)
{
	if (c == NULL)
		return;
	sr_gce_auth_free(c->auth);
	free(c);
}

const char *
sr_gce_project(const struct sr_gce *c)
{
	return c->project;
}

/* ---- a call ---- */

/* One request. 0 with *resp, or -1 with err (no reply), or -2 with err
 * when no token came (its fetch has been tried already). */
static int
send_once(struct sr_gce *c, const char *method, const char *url, const char *body,
    struct sr_http_resp *resp, char *err)
{
	char tok[4096], *auth = NULL, *quota = NULL;
	const char *h[5];
	struct sr_http_req rq;
	size_t n = 0;
	int rc = -1;

	if (sr_gce_auth_token(c->auth, tok, sizeof tok, err) == -1)
		return -2;
	if ((auth = sr_try_asprintf(err, "Authorization: Bearer %s", tok)) == NULL)
		goto out;
	h[n++] = auth;
	if (sr_gce_auth_quota_project(c->auth)[0] != '\0') {
		if ((quota = sr_try_asprintf(err, "x-goog-user-project: %s",
		    sr_gce_auth_quota_project(c->auth))) == NULL)
			goto out;
		h[n++] = quota;
	}
	h[n++] = "Content-Type: application/json";
	h[n++] = "Expect:";
	h[n] = NULL;
	memset(&rq, 0, sizeof rq);
	rq.method = method;
	rq.url = url;
	rq.headers = h;
	rq.body = body;
	rq.body_len = body != NULL ? strlen(body) : 0;
	rq.connect_timeout = c->timeout < 10 ? c->timeout : 10;
	rq.timeout = c->timeout;
	rq.body_max = GCE_BODY_MAX;
	rc = sr_http_do(&rq, resp, err);
out:
	explicit_bzero(tok, sizeof tok);
	if (auth != NULL)
		explicit_bzero(auth, strlen(auth));
	free(auth);
	free(quota);
	return rc;
}

enum sr_gce_status
gce_call(struct sr_gce *c, const char *what, const char *method, const char *path, json_t *body,
    json_t **reply, char *err)
{
	struct sr_http_resp resp;
	char code[128], msg[512], *url, *text = NULL;
	double pause = 0.25;
	json_error_t je;
	int tries, rejected = 0, oom, rc;
	enum sr_gce_status st = SR_GCE_ERROR;

	if (reply != NULL)
		*reply = NULL;
	c->last_code[0] = '\0';
	if ((url = sr_try_asprintf(err, "%.*s%s", (int)(strncmp(path, "/projects/", 10) == 0 ?
	    c->root_len : strlen(c->base)), c->base, path)) == NULL ||
	    (body != NULL && (text = json_dumps(body, JSON_COMPACT)) == NULL)) {
		free(url);
		sr_err_oom(err, "build request");
		return sr_err_prefix(err, "%s", what);
	}
	for (tries = 1;; tries++) {
		if ((rc = send_once(c, method, url, text, &resp, err)) != 0) {
			if (rc == -2 || sr_err_is_oom(err) || tries >= GCE_TRIES)
				break;
			goto again;
		}
		if (resp.status == 200) {
			st = SR_GCE_OK;
			if (reply != NULL && (*reply = sr_json_loadb(resp.body, resp.len, 0, &je,
			    &oom)) == NULL) {
				if (oom)
					sr_err_oom(err, "read reply");
				else
					sr_err(err, "read reply: not JSON: %s", je.text);
				st = SR_GCE_ERROR;
			}
			sr_http_resp_free(&resp);
			break;
		}
		if (sr_gce_parse_error(resp.body, resp.len, code, sizeof code, msg,
		    sizeof msg) == -1) {
			long status = resp.status;

			sr_err(err, "HTTP %ld from %s without a Google error document", status, url);
			sr_http_resp_free(&resp);
			if ((status >= 500 || status == 429) && tries < GCE_TRIES)
				goto again;
			break;
		}
		sr_err(err, "%s: %s", code, msg);
		snprintf(c->last_code, sizeof c->last_code, "%s", code);
		if (resp.status == 401 && !rejected) {
			sr_http_resp_free(&resp);
			rejected = 1;
			sr_gce_auth_reject(c->auth);
			continue;
		}
		if (!transient(resp.status, code) || tries >= GCE_TRIES) {
			sr_http_resp_free(&resp);
			st = sr_gce_classify(code);
			if (st == SR_GCE_OK)
				st = SR_GCE_ERROR;
			break;
		}
		sr_http_resp_free(&resp);
again:
		sr_sleep(pause);
		pause *= 2;
	}
	free(url);
	free(text);
	if (st != SR_GCE_OK)
		sr_err_prefix(err, "%s", what);
	return st;
}

/* ---- operations ---- */

/* An operation's path below the client's base, from its selfLink
 * (".../projects/P/regions/R/operations/NAME" -> "/regions/R/operations/NAME"). */
static int
op_path(struct sr_gce *c, json_t *op, char *path, size_t cap)
{
	char self[1024], name[128];
	const char *p;

	gce_str(op, "selfLink", self, sizeof self);
	gce_str(op, "name", name, sizeof name);
	if ((p = strstr(self, "/projects/")) == NULL || (p = strchr(p + 10, '/')) == NULL ||
	    !gce_name_ok(name) || strcspn(p, "?# ") != strlen(p))
		return -1;
	(void)c;
	snprintf(path, cap, "%s", p);
	return 0;
}

/* The error of a DONE operation into err, with its class; SR_GCE_OK when
 * it has none. */
static enum sr_gce_status
op_error(json_t *op, const char *what, char *err)
{
	json_t *e = json_object_get(op, "error"), *errs, *first;
	char code[128], msg[512];
	size_t i;

	errs = json_is_object(e) ? json_object_get(e, "errors") : NULL;
	if (!json_is_array(errs) || json_array_size(errs) == 0)
		return SR_GCE_OK;
	/* a capacity error among several decides the class: it is the one a
	 * caller can act on */
	first = json_array_get(errs, 0);
	for (i = 0; i < json_array_size(errs); i++) {
		gce_str(json_array_get(errs, i), "code", code, sizeof code);
		if (sr_gce_classify(code) == SR_GCE_CAPACITY) {
			first = json_array_get(errs, i);
			break;
		}
	}
	gce_str(first, "code", code, sizeof code);
	gce_str(first, "message", msg, sizeof msg);
	sr_err(err, "%s: %s: %s", what, code[0] != '\0' ? code : "(no code)", msg);
	return sr_gce_classify(code) == SR_GCE_CAPACITY ? SR_GCE_CAPACITY : SR_GCE_ERROR;
}

enum sr_gce_status
gce_mutate(struct sr_gce *c, const char *what, const char *method, const char *path, json_t *body,
    char *err)
{
	json_t *op, *next;
	char opp[1100], waitp[1200], status[32];
	double deadline = sr_mono() + c->op_timeout, pause = 0.05, t0;
	enum sr_gce_status st;

	if ((st = gce_call(c, what, method, path, body, &op, err)) != SR_GCE_OK)
		return st;
	if (op_path(c, op, opp, sizeof opp) == -1) {
		json_decref(op);
		sr_err(err, "%s: the reply is not an operation (no selfLink and name)", what);
		return SR_GCE_ERROR;
	}
	snprintf(waitp, sizeof waitp, "%s/wait", opp);
	for (;;) {
		gce_str(op, "status", status, sizeof status);
		if (strcmp(status, "DONE") == 0)
			break;
		if (sr_mono() >= deadline) {
			json_decref(op);
			sr_err(err, "%s: operation %s still %s after %.0f s", what, opp,
			    status[0] != '\0' ? status : "(no status)", c->op_timeout);
			return SR_GCE_ERROR;
		}
		/* operations.wait returns when the operation is done or after
		 * about 2 minutes; one that returns at once is polled with a
		 * growing pause instead of a spin */
		t0 = sr_mono();
		st = gce_call(c, what, "POST", waitp, NULL, &next, err);
		if (st != SR_GCE_OK) {
			json_decref(op);
			return st;
		}
		json_decref(op);
		op = next;
		if (sr_mono() - t0 < 0.5) {
			sr_sleep(pause);
			pause = pause * 2 < 2 ? pause * 2 : 2;
		}
	}
	st = op_error(op, what, err);
	json_decref(op);
	return st;
}
