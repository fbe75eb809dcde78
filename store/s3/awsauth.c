/*
 * awsauth.c: store/awsauth.h, the store's SigV4 signing and AWS credentials
 * chain lent to the clients of other AWS APIs (cloud/aws/): a POST of the
 * Query API or of the JSON protocol signed as botocore signs it, on sigv4.c
 * and creds.c.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "awsauth.h"
#include "creds.h"
#include "sigv4.h"
#include "util.h"

struct sr_aws_auth {
	struct sr_creds_chain *chain;
	char region[64];
};

int
sr_aws_sign_post(const struct sr_aws_post *p, time_t when, const char *access_key,
    const char *secret_key, const char *token, struct sr_aws_signed *out, char *err)
{
	struct sr_sigv4_header h[5];
	struct sr_sigv4_request rq;
	struct sr_sigv4_key k;
	char hash[65];
	struct tm tm;
	size_t nh = 0;

	memset(out, 0, sizeof *out);
	if (token != NULL && strlen(token) >= sizeof out->token)
		return sr_err(err, "sign request: the session token is longer than %zu bytes",
		    sizeof out->token - 1);
	if (gmtime_r(&when, &tm) == NULL ||
	    strftime(out->amz_date, sizeof out->amz_date, "%Y%m%dT%H%M%SZ", &tm) == 0)
		return sr_err(err, "sign request: bad time %lld", (long long)when);
	if (sr_sha256_hex(p->body, p->body_len, hash, err) == -1)
		return -1;
	h[nh++] = (struct sr_sigv4_header){ "content-type", p->content_type };
	h[nh++] = (struct sr_sigv4_header){ "host", p->host };
	h[nh++] = (struct sr_sigv4_header){ "x-amz-date", out->amz_date };
	if (token != NULL && token[0] != '\0') {
		h[nh++] = (struct sr_sigv4_header){ "x-amz-security-token", token };
		snprintf(out->token, sizeof out->token, "%s", token);
	}
	if (p->target != NULL)
		h[nh++] = (struct sr_sigv4_header){ "x-amz-target", p->target };
	memset(&rq, 0, sizeof rq);
	rq.method = "POST";
	rq.path = p->path;
	rq.query = "";
	rq.headers = h;
	rq.nheaders = nh;
	rq.payload_hash = hash;
	rq.amz_date = out->amz_date;
	rq.region = p->region;
	rq.service = p->service;
	rq.normalize_path = 1;		/* every service but S3 */
	k.access_key = access_key;
	k.secret_key = secret_key;
	if (sr_sigv4_sign(&rq, &k, out->auth, err) == -1) {
		explicit_bzero(out, sizeof *out);
		return -1;
	}
	return 0;
}

int
sr_aws_auth_new(const char *profile, int no_imds, struct sr_aws_auth **out, char *err)
{
	struct sr_creds_opts co;
	struct sr_store_config cfg;
	struct sr_aws_auth *a;

	*out = NULL;
	memset(&co, 0, sizeof co);
	co.kind = SR_CREDS_AWS;
	co.profile = profile;
	co.no_imds = no_imds;
	if (sr_store_config_load(&co, &cfg, err) == -1)
		return -1;
	if ((a = sr_try_calloc(1, sizeof *a, err)) == NULL)
		return -1;
	snprintf(a->region, sizeof a->region, "%s", cfg.region);
	if (sr_creds_chain_new(&co, &a->chain, err) == -1) {
		free(a);
		return -1;
	}
	*out = a;
	return 0;
}

const char *
sr_aws_auth_region(const struct sr_aws_auth *a)
{
	return a->region;
}

int
sr_aws_auth_sign(struct sr_aws_auth *a, const struct sr_aws_post *p, struct sr_aws_signed *out,
    char *err)
{
	struct sr_creds cr;
	int rc;

	memset(out, 0, sizeof *out);
	if (sr_creds_get(a->chain, &cr, err) == -1)
		return -1;
	rc = sr_aws_sign_post(p, time(NULL), cr.access_key, cr.secret_key, cr.session_token,
	    out, err);
	sr_creds_wipe(&cr);
	return rc;
}

void
sr_aws_auth_reject(struct sr_aws_auth *a)
{
	sr_creds_invalidate(a->chain);
}

void
sr_aws_auth_free(struct sr_aws_auth *a)
{
	if (a == NULL)
		return;
	sr_creds_chain_free(a->chain);
	free(a);
}
