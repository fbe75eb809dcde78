/*
 * az-creds.c: the az:// store's credentials (az-creds.h): the connection
 * string and the variables the Azure CLI reads, then the managed identity's
 * token from the instance metadata service through common/http.c. Values
 * that hold secrets (AccountKey, SharedAccessSignature, tokens) are wiped
 * once copied and never quoted.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "az-creds.h"
#include "http.h"
#include "imds.h"
#include "json.h"
#include "util.h"

#define WHAT		"find Azure credentials"
#define FIX		"set AZURE_STORAGE_KEY, AZURE_STORAGE_SAS_TOKEN or " \
			"AZURE_STORAGE_CONNECTION_STRING, or run on an Azure VM with a managed identity"
#define IMDS_DEFAULT	"http://169.254.169.254"
#define TOKEN_PATH	"/metadata/identity/oauth2/token"
#define TOKEN_QUERY	"?api-version=2018-02-01&resource=https%3A%2F%2Fstorage.azure.com%2F"
#define CONNECT_TIMEOUT	1.0	/* seconds, as for EC2's metadata service */
#define TIMEOUT		2.0	/* seconds per request */
#define SHOW_MAX	80	/* longest reply field a message quotes */
#define CONN_PARTS	24	/* settings of one connection string */
/* Azurite's published key of devstoreaccount1 (its README). */
#define DEV_KEY		"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/" \
			"K1SZFPTOtr/KBHBeksoGMGw=="

/* The chain's argument. */
struct sources {
	char *account;
	char *imds;		/* NULL: $SPOTRUN_AZURE_ENDPOINT or the default */
	int no_metadata;	/* never ask the managed identity */
};

/* A parsed connection string: its NAME=VALUE settings. */
struct conn {
	char *name[CONN_PARTS], *value[CONN_PARTS];
	int n;
};

static void
conn_free(struct conn *c)
{
	int i;

	for (i = 0; i < c->n; i++) {
		explicit_bzero(c->value[i], strlen(c->value[i]));
		free(c->name[i]);
		free(c->value[i]);
	}
	c->n = 0;
}

/* The value of setting name (matched without regard to case), or NULL. */
static const char *
conn_get(const struct conn *c, const char *name)
{
	int i;

	for (i = 0; i < c->n; i++)
		if (strcasecmp(c->name[i], name) == 0)
			return c->value[i][0] != '\0' ? c->value[i] : NULL;
	return NULL;
}

/* Parse s ("Name=value;Name=value;...", values may hold '='): 0, or -1
 * with err naming the part that is wrong, never its value. */
static int
conn_parse(const char *s, struct conn *c, char *err)
{
	const char *p = s;
	int part = 0;

	memset(c, 0, sizeof *c);
	while (*p != '\0') {
		size_t n = strcspn(p, ";"), k;

		part++;
		k = strcspn(p, "=");
		if (n == 0) {
			p++;
			continue;
		}
		if (k >= n || k == 0) {
			conn_free(c);
			return sr_err(err, "read AZURE_STORAGE_CONNECTION_STRING: part %d is not "
			    "Name=value (the form is AccountName=...;AccountKey=...)", part);
		}
		if (c->n == CONN_PARTS) {
			conn_free(c);
			return sr_err(err, "read AZURE_STORAGE_CONNECTION_STRING: more than %d "
			    "settings", CONN_PARTS);
		}
		if ((c->name[c->n] = sr_try_strndup(p, k, err)) == NULL)
			goto oom;
		if ((c->value[c->n] = sr_try_strndup(p + k + 1, n - k - 1, err)) == NULL) {
			free(c->name[c->n]);
			goto oom;
		}
		c->n++;
		p += n;
		if (*p == ';')
			p++;
	}
	return 0;
oom:
	conn_free(c);
	return sr_err_prefix(err, "read AZURE_STORAGE_CONNECTION_STRING");
}

/* The account the credentials beside AZURE_STORAGE_ACCOUNT (or a
 * connection string's AccountName, from) are for must be the store's;
 * err is prefixed by what when it is not NULL. */
static int
same_account(const char *account, const char *other, const char *from, const char *what,
    char *err)
{
	char b[SHOW_MAX + 4];

	if (other == NULL || strcmp(other, account) == 0)
		return 0;
	return sr_err(err, "%s%s%s names account %s, but the store is in account %s; use the "
	    "credentials of %s", what != NULL ? what : "", what != NULL ? ": " : "", from,
	    sr_creds_shown(other, SHOW_MAX, b, sizeof b), account, account);
}

int
sr_az_env_endpoint(const char *account, char *endpoint, size_t len, char *err)
{
	const char *s = sr_creds_env("AZURE_STORAGE_CONNECTION_STRING"), *v, *proto, *suffix;
	struct conn c;
	int rc = 0;

	endpoint[0] = '\0';
	if (s == NULL)
		return 0;
	if (conn_parse(s, &c, err) == -1)
		return -1;
	if ((v = conn_get(&c, "UseDevelopmentStorage")) != NULL && strcasecmp(v, "true") == 0) {
		rc = same_account(account, SR_AZ_DEV_ACCOUNT,
		    "AZURE_STORAGE_CONNECTION_STRING (UseDevelopmentStorage=true)", NULL, err);
		if (rc == 0)
			snprintf(endpoint, len, "%s", SR_AZ_DEV_ENDPOINT);
	} else if ((rc = same_account(account, conn_get(&c, "AccountName"),
	    "AZURE_STORAGE_CONNECTION_STRING's AccountName", NULL, err)) == 0) {
		proto = conn_get(&c, "DefaultEndpointsProtocol");
		suffix = conn_get(&c, "EndpointSuffix");
		if ((v = conn_get(&c, "BlobEndpoint")) != NULL)
			snprintf(endpoint, len, "%s", v);
		else if (suffix != NULL)
			snprintf(endpoint, len, "%s://%s.blob.%s", proto != NULL ? proto : "https",
			    account, suffix);
	}
	conn_free(&c);
	return rc;
}

/* A SAS without its leading '?' into out->session_token. */
static int
put_sas(struct sr_creds *out, const char *sas, const char *from, char *err)
{
	if (*sas == '?')
		sas++;
	if (*sas == '\0' || strchr(sas, '=') == NULL || strpbrk(sas, " \t\r\n#") != NULL)
		return sr_err(err, "%s: %s is not a SAS token (sv=...&sig=..., as `az storage "
		    "container generate-sas` prints it)", WHAT, from);
	if (sr_creds_copy(out->session_token, sizeof out->session_token, sas) == -1)
		return sr_err(err, "%s: %s is longer than %zu bytes", WHAT, from,
		    sizeof out->session_token - 1);
	out->form = SR_AZ_SAS;
	return 0;
}

/* A connection string: 1 when it gave credentials, -1 with err. */
static int
from_conn(const char *account, const char *s, struct sr_creds *out, char *err)
{
	struct conn c;
	const char *v;
	int rc = -1;

	if (conn_parse(s, &c, err) == -1)
		return -1;
	snprintf(out->source, sizeof out->source, "AZURE_STORAGE_CONNECTION_STRING");
	if ((v = conn_get(&c, "UseDevelopmentStorage")) != NULL && strcasecmp(v, "true") == 0) {
		if (same_account(account, SR_AZ_DEV_ACCOUNT, "AZURE_STORAGE_CONNECTION_STRING "
		    "(UseDevelopmentStorage=true)", WHAT, err) == 0) {
			snprintf(out->secret_key, sizeof out->secret_key, "%s", DEV_KEY);
			out->form = SR_AZ_SHARED_KEY;
			rc = 1;
		}
	} else if (same_account(account, conn_get(&c, "AccountName"),
	    "AZURE_STORAGE_CONNECTION_STRING's AccountName", WHAT, err) == -1) {
		rc = -1;
	} else if ((v = conn_get(&c, "AccountKey")) != NULL) {
		if (sr_creds_copy(out->secret_key, sizeof out->secret_key, v) == -1)
			sr_err(err, "%s: the AccountKey of AZURE_STORAGE_CONNECTION_STRING is longer "
			    "than %zu bytes", WHAT, sizeof out->secret_key - 1);
		else {
			out->form = SR_AZ_SHARED_KEY;
			rc = 1;
		}
	} else if ((v = conn_get(&c, "SharedAccessSignature")) != NULL) {
		if (put_sas(out, v, "the SharedAccessSignature of AZURE_STORAGE_CONNECTION_STRING",
		    err) == 0)
			rc = 1;
	} else
		sr_err(err, "%s: AZURE_STORAGE_CONNECTION_STRING has neither AccountKey nor "
		    "SharedAccessSignature", WHAT);
	conn_free(&c);
	return rc;
}

int
sr_az_token_reply(long status, const char *body, size_t len, const char *url,
    const char *client, struct sr_creds *out, char *err)
{
	char b1[SHOW_MAX + 4], b2[SHOW_MAX + 4];
	json_error_t jerr;
	json_t *o, *tok, *exp, *e, *ed;
	double when = 0;
	int rc = -1, oom;

	/* jansson's out-of-memory told from a bad reply (json.h) */
	o = sr_json_loadb(body, len, 0, &jerr, &oom);
	if (oom) {
		sr_err_oom(err, "read the reply");
		rc = sr_err_prefix(err, "GET %s", url);
		goto done;
	}
	if (status != 200) {
		/* IMDS says why: {"error":"invalid_request","error_description":
		 * "Identity not found"} (neither is a secret) */
		e = json_object_get(o, "error");
		ed = json_object_get(o, "error_description");
		if (json_is_string(e))
			sr_err(err, "GET %s: HTTP status %ld: %s%s%s%s%s", url, status,
			    sr_creds_shown(json_string_value(e), SHOW_MAX, b1, sizeof b1),
			    json_is_string(ed) ? " (" : "",
			    json_is_string(ed) ? sr_creds_shown(json_string_value(ed), SHOW_MAX, b2, sizeof b2) : "",
			    json_is_string(ed) ? ")" : "", status == 400 ?
			    "; assign the VM a managed identity (`az vm identity assign`)" : "");
		else
			sr_err(err, "GET %s: HTTP status %ld", url, status);
		goto done;
	}
	/* jansson's message quotes the text near the fault: not shown */
	if (o == NULL || !json_is_object(o)) {
		sr_err(err, "GET %s: the reply is not a JSON object (%zu bytes)", url, len);
		goto done;
	}
	tok = json_object_get(o, "access_token");
	exp = json_object_get(o, "expires_on");
	if (!json_is_string(tok) || json_string_length(tok) == 0) {
		sr_err(err, "GET %s: the reply has no access_token", url);
		goto done;
	}
	if (json_is_string(exp)) {
		char *end;

		when = strtod(json_string_value(exp), &end);
		if (end == json_string_value(exp) || *end != '\0')
			when = 0;
	} else if (json_is_number(exp))
		when = json_number_value(exp);
	if (when <= 0) {
		sr_err(err, "GET %s: expires_on is not a time in epoch seconds", url);
		goto done;
	}
	if (sr_creds_copy(out->session_token, sizeof out->session_token, json_string_value(tok)) == -1 ||
	    strlen(json_string_value(tok)) != json_string_length(tok)) {
		sr_err(err, "GET %s: the access_token is too long for spotrun (%zu bytes)", url,
		    json_string_length(tok));
		goto done;
	}
	out->form = SR_AZ_BEARER;
	out->expires = when;
	snprintf(out->source, sizeof out->source, "managed identity%s%s",
	    client != NULL ? " " : "", client != NULL ? client : "");
	rc = 0;
done:
	if (o != NULL) {
		/* the token's copy inside jansson's object, wiped where it lies
		 * (json_string_set would allocate, and could fail) */
		tok = json_object_get(o, "access_token");
		if (json_is_string(tok))
			explicit_bzero((char *)json_string_value(tok), json_string_length(tok));
		json_decref(o);
	}
	return rc;
}

/* The managed identity's token. 0 with out filled, or -1 with err saying
 * what failed ("GET URL: ..."); never quotes the token. */
static int
from_identity(const char *base, struct sr_creds *out, char *err)
{
	const char *client = sr_creds_env("AZURE_CLIENT_ID");
	const char *hdrs[] = { "Metadata: true", NULL };
	char *url, *query, ierr[SR_ERRMAX];
	struct sr_http_req rq = { .method = "GET", .headers = hdrs,
		.connect_timeout = CONNECT_TIMEOUT, .timeout = TIMEOUT };
	struct sr_http_resp resp;
	int rc = -1;

	if (client != NULL && strspn(client, "0123456789abcdefABCDEF-") != strlen(client))
		return sr_err(err, "AZURE_CLIENT_ID is not a client id (a GUID such as "
		    "a1b2c3d4-...)");
	/* messages name the URL without its query, which only says what for */
	if ((url = sr_try_asprintf(err, "%s" TOKEN_PATH, base)) == NULL)
		return sr_err_prefix(err, "GET %s" TOKEN_PATH, base);
	if ((query = sr_try_asprintf(err, "%s%s%s%s", url, TOKEN_QUERY, client != NULL ?
	    "&client_id=" : "", client != NULL ? client : "")) == NULL) {
		sr_err_prefix(err, "GET %s", url);
		free(url);
		return -1;
	}
	rq.url = query;
	if (sr_http_do(&rq, &resp, ierr) == -1) {
		size_t skip = strlen("GET ") + strlen(query);

		sr_err(err, "GET %s: %s", url, strlen(ierr) > skip + 2 && strncmp(ierr + 4, query,
		    strlen(query)) == 0 ? ierr + skip + 2 : ierr);
	} else {
		rc = sr_az_token_reply(resp.status, resp.body, resp.len, url, client, out, err);
		if (resp.body != NULL)
			explicit_bzero(resp.body, resp.len);
		sr_http_resp_free(&resp);
	}
	free(query);
	free(url);
	return rc;
}

/* ", " between the notes of what was tried. */
static void
tried_add(char *buf, size_t len, const char *note)
{
	size_t n = strlen(buf);

	snprintf(buf + n, len - n, "%s%s", n > 0 ? ", " : "", note);
}

static int
resolve(void *arg, struct sr_creds *out, char *err)
{
	struct sources *src = arg;
	const char *account = src->account, *v, *base;
	char tried[SR_ERRMAX] = "", ierr[SR_ERRMAX], *note, b[1024];
	size_t n;
	int r;

	snprintf(out->access_key, sizeof out->access_key, "%s", account);
	if ((v = sr_creds_env("AZURE_STORAGE_CONNECTION_STRING")) != NULL)
		return from_conn(account, v, out, err) == 1 ? 0 : -1;

	if ((v = sr_creds_env("AZURE_STORAGE_KEY")) != NULL) {
		if (same_account(account, sr_creds_env("AZURE_STORAGE_ACCOUNT"), "AZURE_STORAGE_ACCOUNT",
		    WHAT, err) == -1)
			return -1;
		if (sr_creds_copy(out->secret_key, sizeof out->secret_key, v) == -1)
			return sr_err(err, "%s: AZURE_STORAGE_KEY is longer than %zu bytes", WHAT,
			    sizeof out->secret_key - 1);
		out->form = SR_AZ_SHARED_KEY;
		snprintf(out->source, sizeof out->source, "AZURE_STORAGE_KEY");
		return 0;
	}

	if ((v = sr_creds_env("AZURE_STORAGE_SAS_TOKEN")) != NULL) {
		if (same_account(account, sr_creds_env("AZURE_STORAGE_ACCOUNT"), "AZURE_STORAGE_ACCOUNT",
		    WHAT, err) == -1 || put_sas(out, v, "AZURE_STORAGE_SAS_TOKEN", err) == -1)
			return -1;
		snprintf(out->source, sizeof out->source, "AZURE_STORAGE_SAS_TOKEN");
		return 0;
	}
	tried_add(tried, sizeof tried, "AZURE_STORAGE_CONNECTION_STRING, AZURE_STORAGE_KEY and "
	    "AZURE_STORAGE_SAS_TOKEN (not set)");
	if (sr_imds_off(SR_IMDS_OFF_AZURE) || src->no_metadata) {
		tried_add(tried, sizeof tried, sr_imds_off(SR_IMDS_OFF_AZURE) ?
		    "managed identity (" SR_IMDS_OFF_AZURE "=true)" :
		    "managed identity (not asked: this provider asks no metadata address)");
		return sr_creds_none_found(err, WHAT, tried, FIX);
	}
	base = src->imds != NULL ? src->imds : sr_creds_env("SPOTRUN_AZURE_ENDPOINT");
	snprintf(b, sizeof b, "%s", base != NULL ? base : IMDS_DEFAULT);
	n = strlen(b);
	while (n > 0 && b[n - 1] == '/')
		b[--n] = '\0';
	r = from_identity(b, out, ierr);
	if (r == 0)
		return 0;
	/* not "none found": the identity may well be there */
	if (sr_err_is_oom(ierr))
		return sr_err(err, "%s: managed identity: %s", WHAT, ierr);
	if ((note = sr_try_asprintf(err, "managed identity (%s)", ierr)) == NULL)
		return sr_err_prefix(err, "%s", WHAT);
	tried_add(tried, sizeof tried, note);
	free(note);
	return sr_creds_none_found(err, WHAT, tried, FIX);
}

static void
sources_free(void *arg)
{
	struct sources *src = arg;

	free(src->account);
	free(src->imds);
	free(src);
}

struct sr_creds_chain *
sr_az_creds_chain(const char *account, const char *imds, int no_metadata, char *err)
{
	struct sources *src = sr_try_calloc(1, sizeof *src, err);

	if (src == NULL)
		return NULL;
	if ((src->account = sr_try_strdup(account, err)) == NULL ||
	    (imds != NULL && (src->imds = sr_try_strdup(imds, err)) == NULL)) {
		sources_free(src);
		return NULL;
	}
	src->no_metadata = no_metadata;
	/* which frees src when it fails */
	return sr_creds_chain_make(resolve, src, sources_free, err);
}
