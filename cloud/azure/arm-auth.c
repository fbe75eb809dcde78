/*
 * arm-auth.c: the Azure engine's access tokens (arm-auth.h): the service
 * principal's client-credentials grant and the managed identity's token
 * from the instance metadata service, both through common/http.c, read
 * with jansson, the token kept under a mutex until near its expiry.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "arm-auth.h"
#include "arm-int.h"
#include "http.h"
#include "imds.h"
#include "json.h"
#include "util.h"

#define TOKEN_MAX	8192		/* Entra ID's tokens run to ~2.5 KB */
#define EARLY		300.0		/* refresh this long before expiry */
#define MD_CONNECT	1.0
#define WHAT		"find Azure credentials"

enum kind { K_PRINCIPAL = 1, K_IDENTITY };

struct sr_arm_auth {
	enum kind kind;
	char tenant[128], client[128];
	char *secret;			/* K_PRINCIPAL */
	char token_url[640];		/* K_PRINCIPAL: AUTHORITY/TENANT/oauth2/v2.0/token */
	char metadata[512];		/* K_IDENTITY: the base URL */
	char source[800];
	double timeout;
	pthread_mutex_t mu;
	char token[TOKEN_MAX];		/* "" when none kept */
	double expires;			/* sr_mono() */
};

static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && v[0] != '\0' ? v : NULL;
}

/* Whether s is a tenant or client id safe in a URL and a form: a GUID,
 * or a tenant's domain name. */
static int
id_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n < 128 && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789-.") == n;
}

/* Here, below arm.c, which calls into this file (no loop of calls). */
void
arm_escape(char *dst, size_t cap, const char *src)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p;
	size_t k = 0;

	for (p = (const unsigned char *)src; *p != '\0' && k + 4 < cap; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_' || *p == '~')
			dst[k++] = (char)*p;
		else {
			dst[k++] = '%';
			dst[k++] = hex[*p >> 4];
			dst[k++] = hex[*p & 15];
		}
	}
	dst[k] = '\0';
}

int
sr_arm_auth_new(const struct sr_arm_auth_opts *o, struct sr_arm_auth **out, char *err)
{
	struct sr_arm_auth *a;
	const char *tenant = env("AZURE_TENANT_ID"), *client = env("AZURE_CLIENT_ID");
	const char *secret = env("AZURE_CLIENT_SECRET"), *auth, *md;
	size_t n;

	*out = NULL;
	if (client != NULL && !id_ok(client))
		return sr_err(err, WHAT ": AZURE_CLIENT_ID is not a client id (a GUID)");
	if ((a = sr_try_calloc(1, sizeof *a, err)) == NULL)
		return -1;
	pthread_mutex_init(&a->mu, NULL);
	a->timeout = o->timeout > 0 ? o->timeout : 30;
	if (client != NULL)
		snprintf(a->client, sizeof a->client, "%s", client);
	if (secret != NULL) {
		if (tenant == NULL || client == NULL) {
			sr_arm_auth_free(a);
			return sr_err(err, WHAT ": AZURE_CLIENT_SECRET is set without %s: set it "
			    "too (a service principal's tenant and application id)",
			    tenant == NULL ? "AZURE_TENANT_ID" : "AZURE_CLIENT_ID");
		}
		if (!id_ok(tenant)) {
			sr_arm_auth_free(a);
			return sr_err(err, WHAT ": AZURE_TENANT_ID is not a tenant id (a GUID or a "
			    "domain)");
		}
		auth = o->authority != NULL ? o->authority : env("AZURE_AUTHORITY_HOST");
		if (auth == NULL)
			auth = SR_ARM_AUTHORITY;
		n = strlen(auth);
		while (n > 0 && auth[n - 1] == '/')
			n--;
		if ((strncmp(auth, "https://", 8) != 0 && strncmp(auth, "http://", 7) != 0) ||
		    n > 400 || strcspn(auth, "?# ") < n) {
			sr_arm_auth_free(a);
			return sr_err(err, WHAT ": AZURE_AUTHORITY_HOST \"%.200s\": want "
			    "https://HOST[:PORT]", auth);
		}
		if ((a->secret = sr_try_strdup(secret, err)) == NULL) {
			sr_arm_auth_free(a);
			return -1;
		}
		a->kind = K_PRINCIPAL;
		snprintf(a->tenant, sizeof a->tenant, "%s", tenant);
		snprintf(a->token_url, sizeof a->token_url, "%.*s/%s/oauth2/v2.0/token", (int)n,
		    auth, tenant);
		snprintf(a->source, sizeof a->source, "service principal %s (tenant %s)", client,
		    tenant);
		*out = a;
		return 0;
	}
	if (o->no_metadata || sr_imds_off(SR_IMDS_OFF_AZURE)) {
		sr_arm_auth_free(a);
		return sr_err(err, WHAT ": none: set AZURE_TENANT_ID, AZURE_CLIENT_ID and "
		    "AZURE_CLIENT_SECRET (a service principal), or run on an Azure VM with a "
		    "managed identity (the metadata service is not asked: %s)",
		    o->no_metadata ? "the caller forbids it" : SR_IMDS_OFF_AZURE "=true");
	}
	a->kind = K_IDENTITY;
	md = o->metadata != NULL ? o->metadata : env("SPOTRUN_AZURE_ENDPOINT");
	snprintf(a->metadata, sizeof a->metadata, "%s", md != NULL ? md : SR_ARM_METADATA);
	for (n = strlen(a->metadata); n > 0 && a->metadata[n - 1] == '/'; n--)
		a->metadata[n - 1] = '\0';
	snprintf(a->source, sizeof a->source, "managed identity%s%s at %s",
	    client != NULL ? " " : "", client != NULL ? client : "", a->metadata);
	*out = a;
	return 0;
}

void
sr_arm_auth_free(struct sr_arm_auth *a)
{
	if (a == NULL)
		return;
	if (a->secret != NULL) {
		explicit_bzero(a->secret, strlen(a->secret));
		free(a->secret);
	}
	pthread_mutex_destroy(&a->mu);
	explicit_bzero(a, sizeof *a);
	free(a);
}

const char *
sr_arm_auth_source(const struct sr_arm_auth *a)
{
	return a->source;
}

/* A number that may come as a string (the metadata service writes
 * expires_in as "3599"), or -1. */
static double
number(json_t *v)
{
	char *end;
	double d;

	if (json_is_number(v))
		return json_number_value(v);
	if (json_is_string(v)) {
		d = strtod(json_string_value(v), &end);
		if (end != json_string_value(v) && *end == '\0')
			return d;
	}
	return -1;
}

/* Read {"access_token": ..., "expires_in": N} from a 200, or an OAuth
 * error ({"error": ..., "error_description": ...}) from another status. */
static int
read_token(struct sr_arm_auth *a, const char *what, const struct sr_http_resp *r, char *err)
{
	json_t *root, *t, *e, *d;
	json_error_t je;
	double ttl;
	int oom, rc = -1;

	root = sr_json_loadb(r->body, r->len, 0, &je, &oom);
	if (oom)
		return sr_err_oom(err, what);
	if (r->status != 200) {
		e = json_is_object(root) ? json_object_get(root, "error") : NULL;
		d = json_is_object(root) ? json_object_get(root, "error_description") : NULL;
		if (json_is_string(e))
			sr_err(err, "%s: HTTP %ld: %.100s%s%.240s", what, r->status,
			    json_string_value(e), json_is_string(d) ? ": " : "",
			    json_is_string(d) ? json_string_value(d) : "");
		else
			sr_err(err, "%s: HTTP %ld", what, r->status);
		json_decref(root);
		return -1;
	}
	t = json_is_object(root) ? json_object_get(root, "access_token") : NULL;
	ttl = json_is_object(root) ? number(json_object_get(root, "expires_in")) : -1;
	if (!json_is_string(t) || json_string_length(t) == 0 ||
	    json_string_length(t) >= sizeof a->token || ttl < 0) {
		sr_err(err, "%s: the reply has no access_token and expires_in", what);
		goto out;
	}
	memcpy(a->token, json_string_value(t), json_string_length(t) + 1);
	/* a short-lived token is used for half its life rather than not at all */
	a->expires = sr_mono() + (ttl > 2 * EARLY ? ttl - EARLY : ttl / 2);
	rc = 0;
out:
	if (json_is_string(t))
		explicit_bzero((char *)json_string_value(t), json_string_length(t));
	json_decref(root);
	return rc;
}

static int
fetch(struct sr_arm_auth *a, char *err)
{
	const char *form_hdr[] = { "Content-Type: application/x-www-form-urlencoded", NULL };
	const char *md_hdr[] = { "Metadata: true", NULL };
	struct sr_http_req rq;
	struct sr_http_resp r;
	char what[1000], res[128], cid[400], *form = NULL, *url = NULL, *sec = NULL;
	int rc = -1;

	memset(&rq, 0, sizeof rq);
	rq.connect_timeout = a->timeout < 10 ? a->timeout : 10;
	rq.timeout = a->timeout;
	snprintf(what, sizeof what, "get token from %s", a->source);
	arm_escape(res, sizeof res, SR_ARM_RESOURCE);
	if (a->kind == K_IDENTITY) {
		arm_escape(cid, sizeof cid, a->client);
		if ((url = sr_try_asprintf(err, "%s/metadata/identity/oauth2/token?api-version="
		    "2018-02-01&resource=%s%s%s", a->metadata, res, cid[0] != '\0' ?
		    "&client_id=" : "", cid)) == NULL)
			return -1;
		rq.method = "GET";
		rq.url = url;
		rq.headers = md_hdr;
		rq.connect_timeout = MD_CONNECT;
	} else {
		size_t cap = 3 * strlen(a->secret) + 1;

		if ((sec = sr_try_calloc(1, cap, err)) == NULL)
			return -1;
		arm_escape(sec, cap, a->secret);
		arm_escape(cid, sizeof cid, a->client);
		form = sr_try_asprintf(err, "grant_type=client_credentials&client_id=%s&"
		    "client_secret=%s&scope=%s.default", cid, sec, res);
		explicit_bzero(sec, cap);
		free(sec);
		if (form == NULL)
			return -1;
		rq.method = "POST";
		rq.url = a->token_url;
		rq.headers = form_hdr;
		rq.body = form;
		rq.body_len = strlen(form);
	}
	if (sr_http_do(&rq, &r, err) == -1) {
		sr_err_prefix(err, "%s", what);
		goto out;
	}
	rc = read_token(a, what, &r, err);
	if (r.body != NULL)
		explicit_bzero(r.body, r.len);
	sr_http_resp_free(&r);
out:
	if (form != NULL) {
		explicit_bzero(form, strlen(form));
		free(form);
	}
	free(url);
	return rc;
}

int
sr_arm_auth_token(struct sr_arm_auth *a, char *tok, size_t len, char *err)
{
	int rc = 0;

	pthread_mutex_lock(&a->mu);
	if (a->token[0] == '\0' || sr_mono() >= a->expires)
		rc = fetch(a, err);
	if (rc == 0 && strlen(a->token) >= len)
		rc = sr_err(err, "get token from %s: longer than %zu bytes", a->source, len - 1);
	if (rc == 0)
		memcpy(tok, a->token, strlen(a->token) + 1);
	pthread_mutex_unlock(&a->mu);
	return rc;
}

void
sr_arm_auth_reject(struct sr_arm_auth *a)
{
	pthread_mutex_lock(&a->mu);
	explicit_bzero(a->token, sizeof a->token);
	pthread_mutex_unlock(&a->mu);
}

int
sr_arm_auth_metadata_subscription(struct sr_arm_auth *a, char *out, size_t len, char *err)
{
	const char *hdr[] = { "Metadata: true", NULL };
	struct sr_http_req rq;
	struct sr_http_resp r;
	char *url;
	int rc = -1;

	if (a->kind != K_IDENTITY)
		return sr_err(err, "get subscription: the credentials (%s) name none", a->source);
	if ((url = sr_try_asprintf(err, "%s/metadata/instance/compute/subscriptionId?api-version="
	    "2021-02-01&format=text", a->metadata)) == NULL)
		return -1;
	memset(&rq, 0, sizeof rq);
	rq.method = "GET";
	rq.url = url;
	rq.headers = hdr;
	rq.connect_timeout = MD_CONNECT;
	rq.timeout = a->timeout;
	if (sr_http_do(&rq, &r, err) == -1)
		sr_err_prefix(err, "get subscription from %s", a->source);
	else if (r.status != 200 || r.len == 0 || r.len >= len ||
	    strspn(r.body, "0123456789abcdefABCDEF-") != r.len)
		sr_err(err, "get subscription from %s: HTTP %ld, %zu bytes: not a subscription id",
		    a->source, r.status, r.len);
	else {
		memcpy(out, r.body, r.len + 1);
		rc = 0;
	}
	sr_http_resp_free(&r);
	free(url);
	return rc;
}
