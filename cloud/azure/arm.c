/*
 * arm.c: the transport of the Azure engine (arm.h): the client, its
 * subscription and endpoint, the bearer token (arm-auth.h), JSON requests
 * sent with common/http.c and retried when they may pass, ARM's error
 * documents and the capacity codes' class, and the following of
 * long-running operations through Azure-AsyncOperation or Location.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "arm-auth.h"
#include "arm-int.h"
#include "arm.h"
#include "http.h"
#include "json.h"
#include "util.h"

#define ARM_ENDPOINT	"https://management.azure.com"
#define ARM_TRIES	4
#define ARM_BODY_MAX	(8 * 1024 * 1024)
#define POLL_MAX	10.0		/* the longest pause between polls, Retry-After or not */

/* ---- errors ---- */

enum sr_arm_status
sr_arm_classify(const char *code)
{
	/* ../shared/design.md and ARM's error catalogue for Compute: the
	 * request could succeed in another region, size or zone, or later */
	static const char *const capacity[] = {
		"SkuNotAvailable", "OperationNotAllowed", "ZonalAllocationFailed",
		"AllocationFailed", "OverconstrainedAllocationRequest",
		"OverconstrainedZonalAllocationRequest",
	};
	size_t i;

	if (code == NULL || code[0] == '\0')
		return SR_ARM_OK;
	for (i = 0; i < SR_ARRAY_LEN(capacity); i++)
		if (strcmp(code, capacity[i]) == 0)
			return SR_ARM_CAPACITY;
	return SR_ARM_ERROR;
}

void
arm_str(json_t *o, const char *key, char *dst, size_t cap)
{
	json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	dst[0] = '\0';
	if (json_is_string(v))
		snprintf(dst, cap, "%s", json_string_value(v));
}

/* The error object e's code and message, or its first capacity detail's
 * (depth-first: ARM nests an allocation failure's reason). */
static void
error_of(json_t *e, char *code, size_t code_len, char *msg, size_t msg_len)
{
	json_t *d = json_object_get(e, "details"), *x;
	char c2[128], m2[512];
	size_t i;

	arm_str(e, "code", code, code_len);
	arm_str(e, "message", msg, msg_len);
	if (sr_arm_classify(code) == SR_ARM_CAPACITY || !json_is_array(d))
		return;
	json_array_foreach(d, i, x) {
		if (!json_is_object(x))
			continue;
		error_of(x, c2, sizeof c2, m2, sizeof m2);
		if (sr_arm_classify(c2) == SR_ARM_CAPACITY) {
			snprintf(code, code_len, "%s", c2);
			snprintf(msg, msg_len, "%s", m2);
			return;
		}
	}
}

int
sr_arm_parse_error(const char *body, size_t len, char *code, size_t code_len, char *message,
    size_t message_len)
{
	json_t *root, *e;
	json_error_t je;
	int oom;

	code[0] = message[0] = '\0';
	if (body == NULL || (root = sr_json_loadb(body, len, 0, &je, &oom)) == NULL)
		return -1;
	e = json_is_object(root) ? json_object_get(root, "error") : NULL;
	if (json_is_object(e))
		error_of(e, code, code_len, message, message_len);
	json_decref(root);
	if (code[0] == '\0') {
		message[0] = '\0';
		return -1;
	}
	return 0;
}

int
arm_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= 89 && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789._-") == n;
}

/* ---- the client ---- */

int
sr_arm_open(const struct sr_arm_opts *o, struct sr_arm **out, char *err)
{
	struct sr_arm_auth_opts ao = { o->authority, o->metadata, o->no_metadata, o->timeout,
		NULL };
	struct sr_arm *c;
	const char *ep, *s;
	char sub[64];
	size_t n;

	*out = NULL;
	if ((c = sr_try_calloc(1, sizeof *c, err)) == NULL)
		return -1;
	c->timeout = o->timeout > 0 ? o->timeout : 30;
	c->op_timeout = o->op_timeout > 0 ? o->op_timeout : 900;
	ep = o->endpoint;
	if (ep == NULL && (ep = getenv("SPOTRUN_ARM_ENDPOINT")) != NULL && ep[0] == '\0')
		ep = NULL;
	if (ep == NULL)
		ep = ARM_ENDPOINT;
	n = strlen(ep);
	while (n > 0 && ep[n - 1] == '/')
		n--;
	if ((strncmp(ep, "http://", 7) != 0 && strncmp(ep, "https://", 8) != 0) || n > 400 ||
	    strcspn(ep, "?#@ ") < n) {
		free(c);
		return sr_err(err, "open ARM client: endpoint \"%.200s\": want http(s)://HOST[:PORT]",
		    ep);
	}
	snprintf(c->endpoint, sizeof c->endpoint, "%.*s", (int)n, ep);
	s = o->subscription;
	if (s == NULL && (s = getenv("AZURE_SUBSCRIPTION_ID")) != NULL && s[0] == '\0')
		s = NULL;
	ao.subscription = s;
	if (sr_arm_auth_new(&ao, &c->auth, err) == -1) {
		free(c);
		return sr_err_prefix(err, "open ARM client");
	}
	if (s == NULL) {
		if (sr_arm_auth_subscription(c->auth, sub, sizeof sub, err) == -1) {
			sr_arm_close(c);
			return sr_err_prefix(err, "open ARM client: no subscription (set "
			    "AZURE_SUBSCRIPTION_ID)");
		}
		s = sub;
	}
	if (strlen(s) == 0 || strlen(s) >= sizeof c->subscription ||
	    strspn(s, "0123456789abcdefABCDEF-") != strlen(s)) {
		sr_arm_close(c);
		return sr_err(err, "open ARM client: subscription \"%.64s\" is not a subscription "
		    "id (a GUID)", s);
	}
	snprintf(c->subscription, sizeof c->subscription, "%s", s);
	snprintf(c->base, sizeof c->base, "%s/subscriptions/%s", c->endpoint, c->subscription);
	*out = c;
	return 0;
}

void
sr_arm_close(struct sr_arm *c)
{
	if (c == NULL)
		return;
	sr_arm_auth_free(c->auth);
	free(c);
}

const char *
sr_arm_subscription(const struct sr_arm *c)
{
	return c->subscription;
}

/* ---- a request ---- */

enum { H_ASYNC, H_LOCATION, H_RETRY };

/* One request. 0 with *resp, or -1 with err (no reply), or -2 with err
 * when no token came (its fetch has been tried already). */
static int
send_once(struct sr_arm *c, const char *method, const char *url, const char *body,
    struct sr_http_resp *resp, char *err)
{
	static const char *const capture[] = { "Azure-AsyncOperation", "Location",
		"Retry-After", NULL };
	char tok[8192], *auth = NULL;
	const char *h[4];
	struct sr_http_req rq;
	int rc = -1;

	if (sr_arm_auth_token(c->auth, tok, sizeof tok, err) == -1)
		return -2;
	if ((auth = sr_try_asprintf(err, "Authorization: Bearer %s", tok)) == NULL)
		goto out;
	h[0] = auth;
	h[1] = "Content-Type: application/json";
	h[2] = "Expect:";
	h[3] = NULL;
	memset(&rq, 0, sizeof rq);
	rq.method = method;
	rq.url = url;
	rq.headers = h;
	rq.body = body;
	rq.body_len = body != NULL ? strlen(body) : 0;
	rq.connect_timeout = c->timeout < 10 ? c->timeout : 10;
	rq.timeout = c->timeout;
	rq.body_max = ARM_BODY_MAX;
	rq.capture = capture;
	rc = sr_http_do(&rq, resp, err);
out:
	explicit_bzero(tok, sizeof tok);
	if (auth != NULL)
		explicit_bzero(auth, strlen(auth));
	free(auth);
	return rc;
}

/* url with retries and one fresh token on a 401: SR_ARM_OK with *resp (a
 * 2xx), else the class with err "CODE: MESSAGE" (or the reason). */
static enum sr_arm_status
request(struct sr_arm *c, const char *method, const char *url, const char *text,
    struct sr_http_resp *resp, char *err)
{
	char code[128], msg[512];
	double pause = 0.25;
	int tries, rejected = 0, rc;
	long status;
	enum sr_arm_status st;

	c->last_code[0] = '\0';
	c->last_status = 0;
	for (tries = 1;; tries++) {
		if ((rc = send_once(c, method, url, text, resp, err)) != 0) {
			if (rc == -2 || sr_err_is_oom(err) || tries >= ARM_TRIES)
				return SR_ARM_ERROR;
			goto again;
		}
		status = c->last_status = resp->status;
		if (status >= 200 && status < 300)
			return SR_ARM_OK;
		if (sr_arm_parse_error(resp->body, resp->len, code, sizeof code, msg,
		    sizeof msg) == -1) {
			sr_err(err, "HTTP %ld from %s without an ARM error document", status, url);
			sr_http_resp_free(resp);
			if ((status >= 500 || status == 429) && tries < ARM_TRIES)
				goto again;
			return SR_ARM_ERROR;
		}
		sr_err(err, "%s: %s", code, msg);
		snprintf(c->last_code, sizeof c->last_code, "%s", code);
		sr_http_resp_free(resp);
		if (status == 401 && !rejected) {
			rejected = 1;
			sr_arm_auth_reject(c->auth);
			continue;
		}
		if ((status < 500 && status != 429) || tries >= ARM_TRIES) {
			st = sr_arm_classify(code);
			return st == SR_ARM_OK ? SR_ARM_ERROR : st;
		}
again:
		sr_sleep(pause);
		pause *= 2;
	}
}

/* The pause before the next poll: Retry-After's seconds, within
 * POLL_MAX, else a growing one. */
static double
next_pause(const char *retry_after, double *grow)
{
	double d = *grow;
	char *end;

	if (retry_after != NULL) {
		d = strtod(retry_after, &end);
		if (end == retry_after || *end != '\0' || d < 0)
			d = *grow;
	}
	*grow = *grow * 2 < 2 ? *grow * 2 : 2;
	return d < POLL_MAX ? d : POLL_MAX;
}

/* Follow an operation at url (async: an Azure-AsyncOperation status
 * document, else a Location answering 202 until done) to its end. */
static enum sr_arm_status
follow(struct sr_arm *c, const char *what, char *url, int async, const char *retry,
    char *err)
{
	struct sr_http_resp r;
	json_t *doc;
	json_error_t je;
	char status[32], code[128], msg[512], ra[32];
	double deadline = sr_mono() + c->op_timeout, grow = 0.05;
	int oom;
	enum sr_arm_status st;

	/* the token goes to ARM alone: an operation elsewhere is refused */
	if (strncmp(url, c->endpoint, strlen(c->endpoint)) != 0 ||
	    url[strlen(c->endpoint)] != '/')
		return sr_err(err, "%s: the operation's URL is not below %s", what, c->endpoint);
	snprintf(ra, sizeof ra, "%s", retry != NULL ? retry : "");
	for (;;) {
		if (sr_mono() >= deadline)
			return sr_err(err, "%s: operation still running after %.0f s", what,
			    c->op_timeout);
		sr_sleep(next_pause(ra[0] != '\0' ? ra : NULL, &grow));
		if ((st = request(c, "GET", url, NULL, &r, err)) != SR_ARM_OK) {
			sr_err_prefix(err, "%s", what);
			return st;
		}
		snprintf(ra, sizeof ra, "%s", r.captured[H_RETRY] != NULL ? r.captured[H_RETRY] :
		    "");
		if (!async) {
			long s = r.status;

			sr_http_resp_free(&r);
			if (s == 202)
				continue;
			return SR_ARM_OK;
		}
		doc = sr_json_loadb(r.body, r.len, 0, &je, &oom);
		sr_http_resp_free(&r);
		arm_str(doc, "status", status, sizeof status);
		if (strcmp(status, "InProgress") == 0 || (doc != NULL && status[0] != '\0' &&
		    strcmp(status, "Succeeded") != 0 && strcmp(status, "Failed") != 0 &&
		    strcmp(status, "Canceled") != 0)) {
			json_decref(doc);
			continue;
		}
		if (strcmp(status, "Succeeded") == 0) {
			json_decref(doc);
			return SR_ARM_OK;
		}
		code[0] = msg[0] = '\0';
		if (json_is_object(json_object_get(doc, "error")))
			error_of(json_object_get(doc, "error"), code, sizeof code, msg, sizeof msg);
		json_decref(doc);
		if (status[0] == '\0')
			return sr_err(err, "%s: the operation's status is not a status document",
			    what);
		snprintf(c->last_code, sizeof c->last_code, "%s", code);
		sr_err(err, "%s: %s: %s", what, code[0] != '\0' ? code : status, msg[0] != '\0' ?
		    msg : "the operation ended without saying why");
		return sr_arm_classify(code) == SR_ARM_CAPACITY ? SR_ARM_CAPACITY : SR_ARM_ERROR;
	}
}

enum sr_arm_status
arm_call(struct sr_arm *c, const char *what, const char *method, const char *path, json_t *body,
    json_t **reply, int follow_op, char *err)
{
	struct sr_http_resp resp;
	json_error_t je;
	char *url, *text = NULL, *op = NULL;
	int oom, async = 0;
	enum sr_arm_status st;

	if (reply != NULL)
		*reply = NULL;
	if (path[0] != '/' && (strncmp(path, c->endpoint, strlen(c->endpoint)) != 0 ||
	    path[strlen(c->endpoint)] != '/'))
		return sr_err(err, "%s: the URL is not below %s", what, c->endpoint);
	if ((url = path[0] == '/' ? sr_try_asprintf(err, "%s%s", c->base, path) :
	    sr_try_strdup(path, err)) == NULL ||
	    (body != NULL && (text = json_dumps(body, JSON_COMPACT)) == NULL)) {
		free(url);
		sr_err_oom(err, "build request");
		return sr_err_prefix(err, "%s", what);
	}
	c->accepted = 0;
	if ((st = request(c, method, url, text, &resp, err)) != SR_ARM_OK) {
		sr_err_prefix(err, "%s", what);
		goto out;
	}
	c->accepted = 1;
	if (reply != NULL) {
		*reply = resp.len == 0 ? json_null() : sr_json_loadb(resp.body, resp.len, 0, &je,
		    &oom);
		if (*reply == NULL) {
			st = oom ? sr_err_oom(err, what) : sr_err(err, "%s: read reply: not JSON: %s",
			    what, je.text);
			sr_http_resp_free(&resp);
			goto out;
		}
	}
	if (follow_op && resp.captured[H_ASYNC] != NULL)
		async = 1;
	if (follow_op && (async || (resp.status == 202 && resp.captured[H_LOCATION] != NULL))) {
		if ((op = sr_try_strdup(resp.captured[async ? H_ASYNC : H_LOCATION], err)) == NULL)
			st = SR_ARM_ERROR;
		else
			st = follow(c, what, op, async, resp.captured[H_RETRY], err);
	}
	sr_http_resp_free(&resp);
	if (st != SR_ARM_OK && reply != NULL) {
		json_decref(*reply);
		*reply = NULL;
	}
out:
	free(op);
	free(url);
	free(text);
	return st;
}
