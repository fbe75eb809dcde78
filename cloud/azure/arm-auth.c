/*
 * arm-auth.c: the Azure engine's access tokens (arm-auth.h): the service
 * principal's client-credentials grant and the managed identity's token
 * from the instance metadata service, both through common/http.c, or the
 * Azure CLI's `az account get-access-token` (common/capture.c), read with
 * jansson, the token kept under a mutex until near its expiry.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/wait.h>

#include <jansson.h>

#include "arm-auth.h"
#include "arm-int.h"
#include "capture.h"
#include "http.h"
#include "imds.h"
#include "json.h"
#include "termsafe.h"
#include "util.h"

#define TOKEN_MAX	8192		/* Entra ID's tokens run to ~2.5 KB */
#define EARLY		300.0		/* refresh this long before expiry */
#define MD_CONNECT	1.0
#define WHAT		"find Azure credentials"
#define CLI_OUT_MAX	(64 * 1024)	/* get-access-token's JSON: ~3 KB */
#define PROFILE_MAX	(4 << 20)	/* azureProfile.json */

enum kind { K_PRINCIPAL = 1, K_CLI, K_IDENTITY };

struct sr_arm_auth {
	enum kind kind;
	char tenant[128], client[128];
	char *secret;			/* K_PRINCIPAL */
	char token_url[640];		/* K_PRINCIPAL: AUTHORITY/TENANT/oauth2/v2.0/token */
	char metadata[512];		/* K_IDENTITY: the base URL */
	char cli_sub[64];		/* K_CLI: --subscription, "" for az's default */
	char cli_said_sub[64];		/* K_CLI: the subscription az's last answer named */
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

/* The Azure CLI's configuration directory: $AZURE_CONFIG_DIR, else
 * $HOME/.azure; 0, or -1 with neither set. */
static int
cli_dir(char *dir, size_t len)
{
	const char *d = env("AZURE_CONFIG_DIR"), *home = env("HOME");

	if (d != NULL)
		snprintf(dir, len, "%s", d);
	else if (home != NULL)
		snprintf(dir, len, "%s/.azure", home);
	else
		return -1;
	return 0;
}

/* Whether the Azure CLI is logged in: its azureProfile.json (which az
 * writes with a UTF-8 byte order mark) lists a subscription; `az logout`
 * and `az account clear` empty the list. */
static int
cli_logged_in(const char *dir)
{
	char path[600], e[SR_ERRMAX], *text;
	const char *p;
	json_t *root, *subs;
	size_t len;
	int oom, yes;

	snprintf(path, sizeof path, "%s/azureProfile.json", dir);
	if (sr_read_file(path, PROFILE_MAX, &text, &len, e) == -1)
		return 0;
	p = text;
	if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) {
		p += 3;
		len -= 3;
	}
	root = sr_json_loadb(p, len, 0, NULL, &oom);
	subs = json_is_object(root) ? json_object_get(root, "subscriptions") : NULL;
	yes = json_is_array(subs) && json_array_size(subs) > 0;
	json_decref(root);
	free(text);
	return yes;
}

int
sr_arm_auth_new(const struct sr_arm_auth_opts *o, struct sr_arm_auth **out, char *err)
{
	struct sr_arm_auth *a;
	const char *tenant = env("AZURE_TENANT_ID"), *client = env("AZURE_CLIENT_ID");
	const char *secret = env("AZURE_CLIENT_SECRET"), *auth, *md;
	char dir[512] = "";
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
	if (cli_dir(dir, sizeof dir) == 0 && cli_logged_in(dir)) {
		if (o->subscription != NULL && o->subscription[0] != '\0') {
			if (strlen(o->subscription) >= sizeof a->cli_sub ||
			    !id_ok(o->subscription)) {
				sr_arm_auth_free(a);
				return sr_err(err, WHAT ": subscription \"%.64s\" is not a "
				    "subscription id (a GUID)", o->subscription);
			}
			snprintf(a->cli_sub, sizeof a->cli_sub, "%s", o->subscription);
		}
		a->kind = K_CLI;
		snprintf(a->source, sizeof a->source, "the Azure CLI's login (az account "
		    "get-access-token, %s)", dir);
		*out = a;
		return 0;
	}
	if (o->no_metadata || sr_imds_off(SR_IMDS_OFF_AZURE)) {
		sr_arm_auth_free(a);
		return sr_err(err, WHAT ": none: set AZURE_TENANT_ID, AZURE_CLIENT_ID and "
		    "AZURE_CLIENT_SECRET (a service principal), run `az login` (the Azure "
		    "CLI's login, found in %s), or run on an Azure VM with a managed identity "
		    "(the metadata service is not asked: %s)", dir[0] != '\0' ? dir :
		    "$AZURE_CONFIG_DIR or $HOME/.azure",
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

/* Seconds from now to the expiry az states: "expires_on" (POSIX seconds,
 * az 2.54 on) or "expiresOn" ("2026-12-04 05:12:33.000000", local time,
 * as every version writes it); -1 when it states neither. */
static double
cli_ttl(json_t *root)
{
	json_t *v = json_object_get(root, "expires_on");
	const char *s, *end;
	struct tm tm;
	double at;

	if ((at = number(v)) > 0)
		return at - (double)time(NULL);
	v = json_object_get(root, "expiresOn");
	if (!json_is_string(v))
		return -1;
	s = json_string_value(v);
	memset(&tm, 0, sizeof tm);
	if ((end = strptime(s, "%Y-%m-%d %H:%M:%S", &tm)) == NULL ||
	    (*end != '\0' && *end != '.'))
		return -1;
	tm.tm_isdst = -1;
	return (double)mktime(&tm) - (double)time(NULL);
}

/* What a failed az said: the first line of its stderr that says
 * something ("ERROR: Please run 'az login' to setup account."), escaped
 * for the terminal, else its status. */
static void
cli_said(const struct sr_capture *c, char *out, size_t len)
{
	const char *p = c->errout != NULL ? c->errout : "";
	char line[320], safe[640];
	size_t n;

	while (*p == '\n' || *p == '\r' || *p == ' ')
		p++;
	n = strcspn(p, "\r\n");
	if (n > 0) {
		snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line - 1 ? n : sizeof line - 1),
		    p);
		snprintf(out, len, "%s", sr_termsafe(line, safe, sizeof safe));
	} else if (WIFEXITED(c->status))
		snprintf(out, len, "exit %d, nothing on stderr", WEXITSTATUS(c->status));
	else
		snprintf(out, len, "killed by signal %d", WTERMSIG(c->status));
}

/* A token from the Azure CLI: `az account get-access-token --resource
 * ARM [--subscription S] --output json`, as azure-identity's
 * AzureCliCredential asks it; its JSON's accessToken, its expiry, and the
 * subscription it names (a->cli_said_sub). With a->mu held. */
static int
fetch_cli(struct sr_arm_auth *a, const char *what, char *err)
{
	const char *argv[] = { "az", "account", "get-access-token", "--resource",
	    SR_ARM_RESOURCE, "--output", "json", NULL, NULL, NULL };
	struct sr_capture c;
	json_t *root = NULL, *t, *sub;
	char said[400];
	double ttl;
	int oom, rc = -1;

	if (a->cli_sub[0] != '\0') {
		argv[7] = "--subscription";
		argv[8] = a->cli_sub;
	}
	/* az is Python: its start alone takes seconds on a busy machine */
	if (sr_capture_run(argv, a->timeout < 60 ? 60 : a->timeout, CLI_OUT_MAX, &c, err) == -1) {
		sr_err_prefix(err, "%s", what);
		goto out;
	}
	if (!WIFEXITED(c.status) || WEXITSTATUS(c.status) != 0) {
		cli_said(&c, said, sizeof said);
		sr_err(err, "%s: az account get-access-token failed: %s", what, said);
		goto out;
	}
	root = sr_json_loadb(c.out != NULL ? c.out : "", c.out_len, 0, NULL, &oom);
	if (oom) {
		sr_err_oom(err, what);
		goto out;
	}
	t = json_is_object(root) ? json_object_get(root, "accessToken") : NULL;
	ttl = json_is_object(root) ? cli_ttl(root) : -1;
	if (!json_is_string(t) || json_string_length(t) == 0 ||
	    json_string_length(t) >= sizeof a->token || ttl < 0) {
		sr_err(err, "%s: az account get-access-token printed no accessToken with an "
		    "expiresOn still to come", what);
		goto out;
	}
	memcpy(a->token, json_string_value(t), json_string_length(t) + 1);
	a->expires = sr_mono() + (ttl > 2 * EARLY ? ttl - EARLY : ttl / 2);
	sub = json_object_get(root, "subscription");
	if (json_is_string(sub) && json_string_length(sub) < sizeof a->cli_said_sub)
		memcpy(a->cli_said_sub, json_string_value(sub), json_string_length(sub) + 1);
	rc = 0;
out:
	if (json_is_object(root) && json_is_string(json_object_get(root, "accessToken"))) {
		t = json_object_get(root, "accessToken");
		explicit_bzero((char *)json_string_value(t), json_string_length(t));
	}
	json_decref(root);
	if (c.out != NULL)
		explicit_bzero(c.out, c.out_len);
	sr_capture_free(&c);
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
	if (a->kind == K_CLI)
		return fetch_cli(a, what, err);
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
sr_arm_auth_subscription(struct sr_arm_auth *a, char *out, size_t len, char *err)
{
	const char *hdr[] = { "Metadata: true", NULL };
	struct sr_http_req rq;
	struct sr_http_resp r;
	char *url;
	int rc = -1;

	if (a->kind == K_CLI) {
		pthread_mutex_lock(&a->mu);
		if (a->cli_said_sub[0] == '\0' && (rc = fetch(a, err)) == 0 &&
		    a->cli_said_sub[0] == '\0')
			rc = sr_err(err, "get subscription from %s: az names none", a->source);
		if (a->cli_said_sub[0] != '\0' && strlen(a->cli_said_sub) < len) {
			memcpy(out, a->cli_said_sub, strlen(a->cli_said_sub) + 1);
			rc = 0;
		}
		pthread_mutex_unlock(&a->mu);
		return rc;
	}
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
