/*
 * ec2.c: the transport of the EC2 engine (ec2.h): the client and its
 * endpoint, a request's form, signing (store/awsauth.h), sending with
 * common/http.c and retrying what may pass, EC2's error documents and their
 * classes, and the walk over XML replies (on store/xmlwalk.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "awsauth.h"
#include "ec2-int.h"
#include "ec2.h"
#include "xmlwalk.h"
#include "http.h"
#include "util.h"

#define EC2_VERSION	"2016-11-15"
#define EC2_BODY_MAX	(8 * 1024 * 1024)	/* a page of DescribeInstances is large */
#define FORM_TYPE	"application/x-www-form-urlencoded; charset=utf-8"

/* ---- errors ---- */

enum sr_ec2_status
sr_ec2_classify(const char *code)
{
	/* the capacity codes of doc/design.md section 14: the request could
	 * succeed elsewhere (another zone, type, cloud), not here now */
	static const char *const capacity[] = {
		"InsufficientInstanceCapacity", "MaxSpotInstanceCountExceeded",
		"SpotMaxPriceTooLow", "Unsupported",
	};
	size_t i;

	if (code == NULL || code[0] == '\0')
		return SR_EC2_OK;
	for (i = 0; i < SR_ARRAY_LEN(capacity); i++)
		if (strcmp(code, capacity[i]) == 0)
			return SR_EC2_CAPACITY;
	return SR_EC2_ERROR;
}

/* Worth another try: throttling and EC2's own trouble. */
int
ec2_transient_code(const char *code)
{
	static const char *const codes[] = {
		"RequestLimitExceeded", "Throttling", "ThrottlingException", "InternalError",
		"InternalFailure", "ServiceUnavailable", "Unavailable",
	};
	size_t i;

	for (i = 0; i < SR_ARRAY_LEN(codes); i++)
		if (strcmp(code, codes[i]) == 0)
			return 1;
	return 0;
}

/* The keys were refused: resolving them again may help (a rotated role). */
int
ec2_auth_code(const char *code)
{
	return strcmp(code, "AuthFailure") == 0 || strcmp(code, "ExpiredToken") == 0 ||
	    strcmp(code, "RequestExpired") == 0 || strcmp(code, "InvalidClientTokenId") == 0;
}

struct error_doc {
	char *code, *message;
	size_t code_len, message_len;
	int seen;
};

static int
on_error_elem(const char *path, const char *text, void *arg)
{
	struct error_doc *d = arg;

	/* EC2: <Response><Errors><Error>; the first error only */
	if (strcmp(path, "Errors/Error/Code") == 0 && d->code[0] == '\0') {
		ec2_copy(d->code, d->code_len, text);
		d->seen = 1;
	} else if (strcmp(path, "Errors/Error/Message") == 0 && d->message[0] == '\0')
		ec2_copy(d->message, d->message_len, text);
	return 0;
}

int
sr_ec2_parse_error(const char *body, size_t len, char *code, size_t code_len, char *message,
    size_t message_len)
{
	struct error_doc d = { code, message, code_len, message_len, 0 };

	code[0] = message[0] = '\0';
	if (ec2_xml_walk(body, len, on_error_elem, &d, NULL) != 0 || !d.seen ||
	    code[0] == '\0') {
		code[0] = message[0] = '\0';
		return -1;
	}
	return 0;
}

/* ---- the XML walk ---- */

/* EC2's replies on the store's walk (xmlwalk.h), their paths taken below
 * the root element, whose name differs by action. */
struct below_root {
	int (*fn)(const char *path, const char *text, void *arg);
	void *arg;
	char *err;
};

static int
on_below_root(const char *path, const char *text, void *arg)
{
	struct below_root *b = arg;
	const char *slash = strchr(path, '/');

	path = slash != NULL ? slash + 1 : "";
	if (text == NULL)
		return sr_err(b->err, "read reply: %s: text longer than %d bytes", path,
		    SR_XML_TEXT_MAX);
	return b->fn(path, text, b->arg);
}

int
ec2_xml_walk(const char *body, size_t len,
    int (*fn)(const char *path, const char *text, void *arg), void *arg, char *err)
{
	struct below_root b = { fn, arg, err };

	return sr_xml_walk(body, len, on_below_root, &b, err);
}

void
ec2_copy(char *dst, size_t cap, const char *text)
{
	sr_xml_copy(dst, cap, text);
}

/* ---- the form ---- */

static void
form_put(struct ec2_form *f, const char *s, size_t n)
{
	char *more;
	size_t want;

	if (f->oom)
		return;
	if (f->len + n + 1 > f->cap) {
		want = (f->len + n + 1) * 2;
		if ((more = sr_try_reallocarray(f->buf, want, 1, NULL)) == NULL) {
			f->oom = 1;
			return;
		}
		f->buf = more;
		f->cap = want;
	}
	memcpy(f->buf + f->len, s, n);
	f->len += n;
	f->buf[f->len] = '\0';
}

/* Percent-encode as SigV4 canonicalises (unreserved bytes kept), so the
 * bytes signed are the bytes sent. */
static void
form_encode(struct ec2_form *f, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p;
	char e[3];

	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_' || *p == '~') {
			form_put(f, (const char *)p, 1);
			continue;
		}
		e[0] = '%';
		e[1] = hex[*p >> 4];
		e[2] = hex[*p & 15];
		form_put(f, e, 3);
	}
}

void
ec2_form_add(struct ec2_form *f, const char *name, const char *value)
{
	if (f->len > 0)
		form_put(f, "&", 1);
	form_encode(f, name);
	form_put(f, "=", 1);
	form_encode(f, value);
}

void
ec2_form_addf(struct ec2_form *f, const char *value, const char *fmt, ...)
{
	char name[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
	ec2_form_add(f, name, value);
}

void
ec2_form_free(struct ec2_form *f)
{
	free(f->buf);
	memset(f, 0, sizeof *f);
}

/* ---- the client ---- */

/* The endpoint of a service: the first of envs set and not empty, or
 * https://SERVICE.REGION.amazonaws.com; into url ("scheme://authority/")
 * and host (the Host header as curl sends it). 0, or -1 with err. */
static int
set_endpoint(const char *given, const char *const *envs, const char *service,
    const char *region, char url[512], char host[512], char *err)
{
	const char *ep = given, *auth, *end;
	size_t alen;

	for (; ep == NULL && *envs != NULL; envs++)
		if ((ep = getenv(*envs)) != NULL && ep[0] == '\0')
			ep = NULL;
	if (ep == NULL) {
		snprintf(host, 512, "%s.%s.amazonaws.com", service, region);
		snprintf(url, 512, "https://%s/", host);
		return 0;
	}
	/* scheme://authority[/], no path: what is signed is the path "/" */
	if (strncmp(ep, "http://", 7) == 0)
		auth = ep + 7;
	else if (strncmp(ep, "https://", 8) == 0)
		auth = ep + 8;
	else
		auth = NULL;
	end = auth != NULL ? auth + strcspn(auth, "/?#") : NULL;
	alen = end != NULL ? (size_t)(end - auth) : 0;
	if (auth == NULL || alen == 0 || alen >= 512 ||
	    (end[0] != '\0' && strcmp(end, "/") != 0) || memchr(auth, '@', alen) != NULL)
		return sr_err(err, "open %s client: endpoint \"%.200s\": want "
		    "http(s)://HOST[:PORT] without a path", service, ep);
	memcpy(host, auth, alen);
	host[alen] = '\0';
	snprintf(url, 512, "%.*s/", (int)(end - ep), ep);
	return 0;
}

int
sr_ec2_open(const struct sr_ec2_opts *o, struct sr_ec2 **out, char *err)
{
	static const char *const ec2_envs[] = { "SPOTRUN_EC2_ENDPOINT", "AWS_ENDPOINT_URL_EC2",
		"AWS_ENDPOINT_URL", NULL };
	static const char *const ssm_envs[] = { "AWS_ENDPOINT_URL_SSM", "AWS_ENDPOINT_URL",
		NULL };
	struct sr_ec2 *c;

	*out = NULL;
	if ((c = sr_try_calloc(1, sizeof *c, err)) == NULL)
		return -1;
	if (sr_aws_auth_new(o->profile, o->no_imds, &c->auth, err) == -1) {
		free(c);
		return sr_err_prefix(err, "open EC2 client");
	}
	snprintf(c->region, sizeof c->region, "%s",
	    o->region != NULL ? o->region : sr_aws_auth_region(c->auth));
	c->timeout = o->timeout > 0 ? o->timeout : 30;
	if (set_endpoint(o->endpoint, ec2_envs, "ec2", c->region, c->url, c->host, err) == -1 ||
	    set_endpoint(o->ssm_endpoint, ssm_envs, "ssm", c->region, c->ssm_url, c->ssm_host,
	    err) == -1) {
		sr_aws_auth_free(c->auth);
		free(c);
		return -1;
	}
	*out = c;
	return 0;
}

void
sr_ec2_close(struct sr_ec2 *c)
{
	if (c == NULL)
		return;
	sr_aws_auth_free(c->auth);
	free(c);
}

int
aws_post(struct sr_ec2 *c, int ssm, const char *ctype, const char *target, const void *body,
    size_t len, struct sr_http_resp *resp, char *err)
{
	struct sr_aws_post p = { ssm ? c->ssm_host : c->host, "/", ctype, body, len, c->region,
		ssm ? "ssm" : "ec2", target };
	struct sr_aws_signed *sg;
	struct sr_http_req rq;
	char *h[6] = { NULL };
	const char *hv[7];
	size_t i, n = 0;
	int rc = -1;

	if ((sg = sr_try_malloc(sizeof *sg, err)) == NULL)
		return -1;
	if (sr_aws_auth_sign(c->auth, &p, sg, err) == -1)
		goto out;
	if ((h[n++] = sr_try_asprintf(err, "Content-Type: %s", ctype)) == NULL ||
	    (h[n++] = sr_try_asprintf(err, "X-Amz-Date: %s", sg->amz_date)) == NULL ||
	    (h[n++] = sr_try_asprintf(err, "Authorization: %s", sg->auth)) == NULL)
		goto out;
	if (sg->token[0] != '\0' &&
	    (h[n++] = sr_try_asprintf(err, "X-Amz-Security-Token: %s", sg->token)) == NULL)
		goto out;
	if (target != NULL && (h[n++] = sr_try_asprintf(err, "X-Amz-Target: %s", target)) == NULL)
		goto out;
	for (i = 0; i < n; i++)
		hv[i] = h[i];
	hv[n] = "Expect:";	/* no 100-continue round trip for a large form */
	hv[n + 1] = NULL;
	memset(&rq, 0, sizeof rq);
	rq.method = "POST";
	rq.url = ssm ? c->ssm_url : c->url;
	rq.headers = hv;
	rq.body = body;
	rq.body_len = len;
	rq.connect_timeout = c->timeout < 10 ? c->timeout : 10;
	rq.timeout = c->timeout;
	rq.body_max = EC2_BODY_MAX;
	rc = sr_http_do(&rq, resp, err);
out:
	for (i = 0; i < SR_ARRAY_LEN(h); i++) {
		if (h[i] != NULL)
			explicit_bzero(h[i], strlen(h[i]));
		free(h[i]);
	}
	explicit_bzero(sg, sizeof *sg);
	free(sg);
	return rc;
}

enum sr_ec2_status
ec2_call(struct sr_ec2 *c, const char *what, struct ec2_form *f, char **body, size_t *len,
    char *err)
{
	struct sr_http_resp resp;
	char code[128], msg[512];
	double pause = 0.25;
	int tries, rejected = 0;
	enum sr_ec2_status st = SR_EC2_ERROR;

	*body = NULL;
	*len = 0;
	ec2_form_add(f, "Version", EC2_VERSION);
	if (f->oom) {
		ec2_form_free(f);
		sr_err_oom(err, "build request");
		return sr_err_prefix(err, "%s", what);
	}
	for (tries = 1;; tries++) {
		if (aws_post(c, 0, FORM_TYPE, NULL, f->buf, f->len, &resp, err) == -1) {
			if (sr_err_is_oom(err) || tries >= EC2_TRIES)
				break;
			goto again;
		}
		if (resp.status == 200) {
			*body = resp.body;
			*len = resp.len;
			resp.body = NULL;
			sr_http_resp_free(&resp);
			st = SR_EC2_OK;
			break;
		}
		if (sr_ec2_parse_error(resp.body, resp.len, code, sizeof code, msg,
		    sizeof msg) == -1) {
			long status = resp.status;

			sr_err(err, "HTTP %ld from %s without an EC2 error document", status,
			    c->url);
			sr_http_resp_free(&resp);
			if (status >= 500 && tries < EC2_TRIES)
				goto again;
			break;
		}
		sr_http_resp_free(&resp);
		sr_err(err, "%s: %s", code, msg);
		if (ec2_auth_code(code) && !rejected) {
			rejected = 1;
			sr_aws_auth_reject(c->auth);
			continue;
		}
		if (!ec2_transient_code(code) || tries >= EC2_TRIES) {
			st = sr_ec2_classify(code);
			break;
		}
again:
		sr_sleep(pause);
		pause *= 2;
	}
	ec2_form_free(f);
	if (st != SR_EC2_OK)
		sr_err_prefix(err, "%s", what);
	return st;
}
