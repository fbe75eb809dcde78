/*
 * imds.h: IMDSv2, EC2's instance metadata service: the session token, GETs
 * that carry it, and the form of its times. Both the aws provider
 * (notices, facts, detection) and the instance-role credentials
 * (store/s3/creds-imds.c) talk to it, and the store must not depend on providers,
 * so it lives in common/ on top of http.h.
 */
#ifndef SR_IMDS_H
#define SR_IMDS_H

#include <stddef.h>

#include "http.h"

#define SR_IMDS_TOKEN_PATH	"/latest/api/token"

/* The variables that forbid asking a cloud's metadata address, each for
 * its cloud, that the providers' probes (auto) and the store's
 * credentials honour: AWS's, as its SDKs read it; Azure's SDKs have none,
 * so spotrun's own; gcloud's and oauth2client's. */
#define SR_IMDS_OFF_AWS		"AWS_EC2_METADATA_DISABLED"
#define SR_IMDS_OFF_AZURE	"SPOTRUN_AZURE_METADATA_DISABLED"
#define SR_IMDS_OFF_GCP		"NO_GCE_CHECK"

/* Whether the environment variable var is "true" (in any case: the AWS
 * SDKs' test, and NO_GCE_CHECK=True as gcloud sets it). */
int sr_imds_off(const char *var);

/* Where IMDS is and how each request to it is bounded. */
struct sr_imds {
	const char *base;		/* the endpoint, without a trailing '/' */
	double connect_timeout;		/* seconds, as struct sr_http_req */
	double timeout;			/* seconds, as struct sr_http_req */
	size_t body_max;		/* as struct sr_http_req: 0 is its default */
	int (*cancel)(void *arg);	/* as struct sr_http_req: NULL or a check */
	void *cancel_arg;
};

/*
 * PUT BASE/latest/api/token with "X-aws-ec2-metadata-token-ttl-seconds:
 * TTL" (1..21600) and copy the token (the reply's first line: 1 to len - 1
 * bytes of [A-Za-z0-9+/=_.-]) into tok, NUL-terminated. 0, or -1 with err
 * set: sr_http_do's message when no reply came, "PUT URL: HTTP status N"
 * for any status but 200, else "PUT URL: the reply is not a token (N
 * bytes)" with N the whole reply's length, or with explain nonzero "(N
 * bytes; at most len - 1 of [A-Za-z0-9+/=_.-])" with N its first line's.
 * tok is untouched on failure. No message quotes the reply, and the reply
 * is wiped before it is freed: a token is a secret. Thread-safe;
 * sr_http_init must have been called.
 */
int sr_imds_token(const struct sr_imds *m, int ttl, int explain, char *tok, size_t len,
    char *err);

/*
 * GET BASE PATH with "X-aws-ec2-metadata-token: TOKEN" (path starts with
 * '/'). What sr_http_do returns, resp and err included: the caller judges
 * the status (401: the token is no longer valid). The header is wiped
 * after use. Thread-safe.
 */
int sr_imds_get(const struct sr_imds *m, const char *path, const char *token,
    struct sr_http_resp *resp, char *err);

/*
 * A time as IMDS writes them (a spot instance-action's "time", a role's
 * "Expiration"): "2017-09-18T08:22:00Z", optionally with fractional
 * seconds (dropped), to epoch seconds in *out. 0, or -1 when s is not of
 * that form (*out untouched).
 */
int sr_imds_parse_time(const char *s, double *out);

#endif
