/*
 * awsauth.h: what the store lends to the clients of other AWS APIs (the EC2
 * engine in cloud/aws/): SigV4 signing of a form-encoded POST (the Query API
 * of EC2 and its kin) with the credentials chain and the settings the s3://
 * store resolves (store/s3/creds.h: env, profile, instance role; region).
 * The second public header of the store, beside store.h: the signing and
 * the chain stay in store/s3/, and a module above reaches them only here
 * (doc/design.md, "The house"). Implemented in store/s3/awsauth.c.
 *
 * No function here puts a secret in a message.
 */
#ifndef SR_AWSAUTH_H
#define SR_AWSAUTH_H

#include <stddef.h>
#include <time.h>

#define SR_AWS_AUTH_MAX 1024		/* an Authorization header's value */
#define SR_AWS_TOKEN_MAX 8192		/* a session token */

/* The headers a signed request sends besides Host and Content-Type. */
struct sr_aws_signed {
	char amz_date[20];		/* X-Amz-Date: "YYYYMMDDTHHMMSSZ" */
	char auth[SR_AWS_AUTH_MAX];	/* Authorization */
	char token[SR_AWS_TOKEN_MAX];	/* X-Amz-Security-Token; "" when none */
};

/* What one POST is: host is the Host header as sent ("ec2.us-east-1.
 * amazonaws.com", or "127.0.0.1:5000" with the port), path the raw path
 * ("/"), content_type the Content-Type as sent, body the form. */
struct sr_aws_post {
	const char *host;
	const char *path;
	const char *content_type;
	const void *body;
	size_t body_len;
	const char *region;		/* "us-east-1" */
	const char *service;		/* "ec2" */
	/* the JSON protocol's X-Amz-Target ("AmazonSSM.GetParameter"), sent
	 * and signed; NULL for the Query API */
	const char *target;
};

/*
 * Sign p at time when with the given keys (token NULL or "" for none):
 * SignedHeaders content-type;host;x-amz-date (and x-amz-security-token with
 * a token, x-amz-target with a target), the payload's SHA-256 in the canonical request, as botocore
 * signs a Query API request. Pure (no clock, no environment): tests compare
 * it with botocore's. 0, or -1 with err ("sign request: reason").
 */
int sr_aws_sign_post(const struct sr_aws_post *p, time_t when, const char *access_key,
    const char *secret_key, const char *token, struct sr_aws_signed *out, char *err);

struct sr_aws_auth;

/*
 * Credentials and region for AWS APIs, as the s3:// store resolves them
 * (store/s3/creds.h): keys from AWS_ACCESS_KEY_ID..., the profile
 * (profile, else $AWS_PROFILE, else "default"), then the instance role
 * (never when no_imds); region from AWS_REGION, AWS_DEFAULT_REGION, the
 * profile's, else "us-east-1". Nothing is fetched until the first sign.
 * 0, or -1 with err.
 */
int sr_aws_auth_new(const char *profile, int no_imds, struct sr_aws_auth **out, char *err);

/* The region resolved by sr_aws_auth_new ("us-east-1"). */
const char *sr_aws_auth_region(const struct sr_aws_auth *a);

/* Sign p now with the chain's current credentials (resolved or refreshed
 * as store/credcache.h says). 0, or -1 with err naming where credentials
 * were looked for. Thread-safe. */
int sr_aws_auth_sign(struct sr_aws_auth *a, const struct sr_aws_post *p,
    struct sr_aws_signed *out, char *err);

/* The server refused the credentials last signed with (AuthFailure, an
 * expired token): the next sign resolves them again. */
void sr_aws_auth_reject(struct sr_aws_auth *a);

void sr_aws_auth_free(struct sr_aws_auth *a);

#endif
