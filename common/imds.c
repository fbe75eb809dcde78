/*
 * imds.c: IMDSv2 requests (the session token, GETs with it) and IMDS's
 * times; see imds.h.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "imds.h"
#include "util.h"

#define TOKEN_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-."

int
sr_imds_off(const char *var)
{
	const char *v = getenv(var);

	return v != NULL && strcasecmp(v, "true") == 0;
}

/* One request to BASE PATH with one header. */
static int
request(const struct sr_imds *m, const char *method, const char *path, const char *header,
    struct sr_http_resp *resp, char *err)
{
	const char *headers[2] = { header, NULL };
	struct sr_http_req req;
	char *url = sr_try_asprintf(err, "%s%s", m->base, path);
	int r;

	if (url == NULL) {
		memset(resp, 0, sizeof *resp);
		return sr_err_prefix(err, "%s %s%s", method, m->base, path);
	}
	memset(&req, 0, sizeof req);
	req.method = method;
	req.url = url;
	req.headers = headers;
	req.connect_timeout = m->connect_timeout;
	req.timeout = m->timeout;
	req.body_max = m->body_max;
	req.cancel = m->cancel;
	req.cancel_arg = m->cancel_arg;
	r = sr_http_do(&req, resp, err);
	free(url);
	return r;
}

int
sr_imds_token(const struct sr_imds *m, int ttl, int explain, char *tok, size_t len,
    char *err)
{
	struct sr_http_resp resp;
	char hdr[64];
	size_t n;
	int r = -1;

	snprintf(hdr, sizeof hdr, "X-aws-ec2-metadata-token-ttl-seconds: %d", ttl);
	if (request(m, "PUT", SR_IMDS_TOKEN_PATH, hdr, &resp, err) == -1)
		return -1;
	/* The first line; strspn stops at its end too ('\r', '\n' and the
	 * NUL are no token characters). */
	n = strcspn(resp.body, "\r\n");
	if (resp.status != 200)
		sr_err(err, "PUT %s" SR_IMDS_TOKEN_PATH ": HTTP status %ld", m->base,
		    resp.status);
	else if (n == 0 || n >= len || strspn(resp.body, TOKEN_CHARS) != n) {
		if (explain)
			sr_err(err, "PUT %s" SR_IMDS_TOKEN_PATH ": the reply is not a token "
			    "(%zu bytes; at most %zu of [A-Za-z0-9+/=_.-])", m->base, n,
			    len - 1);
		else
			sr_err(err, "PUT %s" SR_IMDS_TOKEN_PATH ": the reply is not a token "
			    "(%zu bytes)", m->base, resp.len);
	} else {
		memcpy(tok, resp.body, n);
		tok[n] = '\0';
		r = 0;
	}
	explicit_bzero(resp.body, resp.len);
	sr_http_resp_free(&resp);
	return r;
}

int
sr_imds_get(const struct sr_imds *m, const char *path, const char *token,
    struct sr_http_resp *resp, char *err)
{
	char *hdr = sr_try_asprintf(err, "X-aws-ec2-metadata-token: %s", token);
	int r;

	if (hdr == NULL) {
		memset(resp, 0, sizeof *resp);
		return sr_err_prefix(err, "GET %s%s", m->base, path);
	}
	r = request(m, "GET", path, hdr, resp, err);
	explicit_bzero(hdr, strlen(hdr));
	free(hdr);
	return r;
}

int
sr_imds_parse_time(const char *s, double *out)
{
	struct tm tm;
	const char *e;
	time_t t;

	memset(&tm, 0, sizeof tm);
	if ((e = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)) == NULL)
		return -1;
	if (*e == '.') {
		e++;
		if (*e < '0' || *e > '9')
			return -1;
		while (*e >= '0' && *e <= '9')
			e++;
	}
	if (strcmp(e, "Z") != 0 || (t = timegm(&tm)) == (time_t)-1)
		return -1;
	*out = (double)t;
	return 0;
}
