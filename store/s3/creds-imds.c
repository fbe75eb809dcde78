/*
 * creds-imds.c: the EC2 instance role's credentials from IMDSv2, the last
 * link of the AWS chain (creds.c): a session token (PUT
 * /latest/api/token), the role's name (GET
 * /latest/meta-data/iam/security-credentials/), then its keys as JSON.
 * Every request is short (1 s to connect, 2 s in all, as the AWS CLI), so
 * a machine off EC2 gives up at once. The replies carry secrets: they are
 * wiped after use and never quoted in a message.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "creds-int.h"
#include "http.h"
#include "json.h"
#include "imds.h"
#include "util.h"

#define TOKEN_TTL	21600		/* seconds; as the AWS CLI asks */
#define ROLE_PATH	"/latest/meta-data/iam/security-credentials/"
#define ROLE_MAX	64		/* IAM's limit on a role name */
#define SHOW_MAX	80		/* longest reply field a message quotes */

/* Free a reply that may hold secrets. */
static void
wipe_free(struct sr_http_resp *resp)
{
	if (resp->body != NULL)
		explicit_bzero(resp->body, resp->len);
	sr_http_resp_free(resp);
}

/* The role's name (the listing's first line) into role. */
static int
get_role(const struct sr_imds *m, const char *tok, char *role, char *err)
{
	char *url = sr_try_asprintf(err, "%s" ROLE_PATH, m->base);
	struct sr_http_resp resp;
	const char *s;
	size_t n;
	int r = -1;

	if (url == NULL)
		return sr_err_prefix(err, "GET %s" ROLE_PATH, m->base);
	if (sr_imds_get(m, ROLE_PATH, tok, &resp, err) == -1)
		goto out;
	s = resp.body + strspn(resp.body, " \t\r\n");
	n = strcspn(s, " \t\r\n");
	if (resp.status == 404)
		sr_err(err, "GET %s: HTTP status 404 (no IAM role is attached to this "
		    "instance)", url);
	else if (resp.status != 200)
		sr_err(err, "GET %s: HTTP status %ld", url, resp.status);
	else if (n == 0)
		sr_err(err, "GET %s: no role name in the reply", url);
	else if (n > ROLE_MAX || strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789+=,.@_-") < n)
		sr_err(err, "GET %s: the reply is not a role name (%zu bytes)", url, resp.len);
	else {
		memcpy(role, s, n);
		role[n] = '\0';
		r = 0;
	}
	sr_http_resp_free(&resp);
out:
	free(url);
	return r;
}

/* A string field of the role's JSON into out (len bytes). */
static int
field(json_t *o, const char *name, const char *url, char *out, size_t len, char *err)
{
	json_t *v = json_object_get(o, name);
	size_t n;

	if (!json_is_string(v))
		return sr_err(err, "GET %s: the reply has no %s string", url, name);
	n = json_string_length(v);
	if (n == 0 || n >= len || strlen(json_string_value(v)) != n)
		return sr_err(err, "GET %s: %s is %s", url, name, n == 0 ? "empty" :
		    n >= len ? "too long for spotrun" : "not text");
	memcpy(out, json_string_value(v), n + 1);
	return 0;
}

static int
get_keys(const struct sr_imds *m, const char *tok, const char *role,
    struct sr_creds *out, char *err)
{
	char *path = sr_try_asprintf(err, ROLE_PATH "%s", role), b1[SHOW_MAX + 4],
	    b2[SHOW_MAX + 4], when[64];
	char *url = path != NULL ? sr_try_asprintf(err, "%s%s", m->base, path) : NULL;
	struct sr_http_resp resp;
	json_error_t jerr;
	json_t *o = NULL, *code, *msg;
	int r = -1, oom;

	if (url == NULL) {
		sr_err_prefix(err, "GET %s" ROLE_PATH "%s", m->base, role);
		goto out;
	}
	if (sr_imds_get(m, path, tok, &resp, err) == -1)
		goto out;
	if (resp.status != 200) {
		sr_err(err, "GET %s: HTTP status %ld", url, resp.status);
		goto done;
	}
	/* jansson's out-of-memory told from a bad reply (json.h). Its
	 * message quotes the text near the fault: not shown. */
	o = sr_json_loadb(resp.body, resp.len, 0, &jerr, &oom);
	if (oom) {
		sr_err_oom(err, "read the reply");
		sr_err_prefix(err, "GET %s", url);
		goto done;
	}
	if (o == NULL || !json_is_object(o)) {
		sr_err(err, "GET %s: the reply is not a JSON object (%zu bytes)", url, resp.len);
		goto done;
	}
	code = json_object_get(o, "Code");
	if (json_is_string(code) && strcmp(json_string_value(code), "Success") != 0) {
		msg = json_object_get(o, "Message");
		sr_err(err, "GET %s: Code is \"%s\", not Success%s%s%s", url,
		    sr_creds_shown(json_string_value(code), SHOW_MAX, b1, sizeof b1),
		    json_is_string(msg) ? " (" : "",
		    json_is_string(msg) ? sr_creds_shown(json_string_value(msg), SHOW_MAX, b2,
		    sizeof b2) : "",
		    json_is_string(msg) ? ")" : "");
		goto done;
	}
	if (field(o, "AccessKeyId", url, out->access_key, sizeof out->access_key, err) == -1 ||
	    field(o, "SecretAccessKey", url, out->secret_key, sizeof out->secret_key, err) == -1 ||
	    field(o, "Token", url, out->session_token, sizeof out->session_token, err) == -1 ||
	    field(o, "Expiration", url, when, sizeof when, err) == -1)
		goto done;
	if (sr_imds_parse_time(when, &out->expires) == -1) {
		sr_err(err, "GET %s: Expiration \"%s\" is not a time like 2026-11-30T12:00:00Z",
		    url, sr_creds_shown(when, SHOW_MAX, b1, sizeof b1));
		goto done;
	}
	snprintf(out->source, sizeof out->source, "instance role %s", role);
	r = 0;
done:
	json_decref(o);
	wipe_free(&resp);
out:
	free(url);
	free(path);
	return r;
}

int
sr_imds_role_creds(const char *base, struct sr_creds *out, char *err)
{
	const struct sr_imds m = { .base = base,
	    .connect_timeout = SR_IMDS_CONNECT_TIMEOUT, .timeout = SR_IMDS_TIMEOUT };
	char tok[256], role[ROLE_MAX + 1];
	int r = -1;

	memset(out, 0, sizeof *out);
	if (sr_imds_token(&m, TOKEN_TTL, 0, tok, sizeof tok, err) == -1)
		return -1;
	if (get_role(&m, tok, role, err) == 0)
		r = get_keys(&m, tok, role, out, err);
	if (r == -1)
		sr_creds_wipe(out);
	explicit_bzero(tok, sizeof tok);
	return r;
}
