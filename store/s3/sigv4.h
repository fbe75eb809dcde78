/*
 * sigv4.h: AWS Signature Version 4 (AWS4-HMAC-SHA256) for the S3 and GCS
 * stores: the canonical request, the string to sign and the Authorization
 * header value, with OpenSSL's HMAC-SHA256. Pure functions of their inputs
 * (no clock, no environment), so that tests/t-sigv4.c checks them byte for
 * byte against the AWS signing test suite and AWS's S3 examples.
 *
 * Why our own: curl 7.88's --aws-sigv4 neither sorts nor re-encodes the
 * query and sends no x-amz-content-sha256 (design.md section 6).
 *
 * Canonical form, as S3 and the AWS suite check it:
 *  - the path is the RAW path, percent-encoded exactly once here ('/' kept);
 *    with normalize_path, "." and ".." segments are removed and "//" merged
 *    first (RFC 3986 remove_dot_segments; other services), never for S3;
 *  - the query is split at '&', each part at its first '='; names and
 *    values are percent-decoded (a '+' is a plus, not a space), re-encoded
 *    ('/' too) and sorted by name, then value; "uploads" becomes "uploads=".
 *    A '%' not starting an escape is refused. Servers may read a raw '+'
 *    on the wire as a space: send names and values encoded with
 *    sr_sigv4_uri_encode(v, len, 0), which is exactly the canonical form;
 *  - header names are lowercased and sorted; values are trimmed of spaces
 *    and tabs, inner runs of them become one space, and repeated names are
 *    joined with ',' in the order given;
 *  - service "s3" requires an x-amz-content-sha256 header; wherever present
 *    it must equal payload_hash, and x-amz-date must equal amz_date, since a
 *    signature over values that differ from what is sent is refused later
 *    as a bare SignatureDoesNotMatch; a host header is required.
 */
#ifndef SR_SIGV4_H
#define SR_SIGV4_H

#include <stddef.h>

#define SR_SIGV4_AUTH_MAX 1024

struct sr_sigv4_header {
	const char *name;
	const char *value;
};

struct sr_sigv4_key {
	const char *access_key;
	const char *secret_key;
};

struct sr_sigv4_request {
	const char *method;		/* "GET" */
	const char *path;		/* RAW, not percent-encoded ("/bucket/a b+c"); the signer encodes it once */
	const char *query;		/* as sent, without '?'; parts may be percent-encoded or raw (the signer
					 * decodes each name and value, re-encodes canonically, sorts); NULL or "" for none */
	const struct sr_sigv4_header *headers;	/* every header to sign: host, x-amz-date, x-amz-content-sha256, ... */
	size_t nheaders;
	const char *payload_hash;	/* 64 lowercase hex chars, or "UNSIGNED-PAYLOAD" */
	const char *amz_date;		/* "YYYYMMDDTHHMMSSZ" */
	const char *region;		/* "us-east-1"; GCS uses "auto" */
	const char *service;		/* "s3" */
	int normalize_path;		/* 1: remove "." and ".." segments and merge "//" (other services, the suite's normalize:true); 0: S3 */
	/* 1: a presigned URL's signature (sr_sigv4_query_signature): the
	 * X-Amz-* (X-Goog-*) parameters are in query, no x-amz-content-sha256
	 * header is sent, so service "s3" needs none. */
	int query_auth;
	/* 1: GCS's own V4 (GOOG4-HMAC-SHA256: the key chain starts at "GOOG4"
	 * + secret and the scope ends in "goog4_request"); 0: AWS4. */
	int goog4;
};

/* Fill auth (SR_SIGV4_AUTH_MAX bytes) with the Authorization header's value:
 * "AWS4-HMAC-SHA256 Credential=AK/DATE/REGION/SERVICE/aws4_request, SignedHeaders=..., Signature=...".
 * 0, or -1 with err ("sign request: reason", never containing the secret) for bad input
 * (bad date, missing fields, too long) or out-of-memory (ours or OpenSSL's:
 * sr_err_is_oom); auth is then "". */
int sr_sigv4_sign(const struct sr_sigv4_request *rq, const struct sr_sigv4_key *key, char *auth, char *err);

/* The signature alone, 64 lowercase hex digits into sig: what a presigned
 * URL carries as X-Amz-Signature (X-Goog-Signature with goog4), its
 * other parameters being in rq->query already (AWS's "Authenticating
 * Requests: Using Query Parameters"; GCS's "V4 signing process"). 0, or
 * -1 with err as sr_sigv4_sign's; sig is then "". */
int sr_sigv4_query_signature(const struct sr_sigv4_request *rq, const struct sr_sigv4_key *key,
    char sig[65], char *err);

/* The pieces, malloc'd (free()), for tests and debugging; NULL on bad input
 * or out-of-memory. */
char *sr_sigv4_canonical_request(const struct sr_sigv4_request *rq);
/* The string to sign for canonical_request; NULL with err ("sign request:
 * ...") when canonical_request is NULL, the scope is bad or memory ran out. */
char *sr_sigv4_string_to_sign(const struct sr_sigv4_request *rq, const char *canonical_request,
    char *err);
/* Like sr_sigv4_canonical_request, with the reason for NULL in err
 * ("sign request: ..."; sr_err_is_oom for out-of-memory). */
char *sr_sigv4_canonical_request_err(const struct sr_sigv4_request *rq, char *err);

/* Percent-encode len bytes of s the SigV4 way (A-Za-z0-9-._~ kept, every other byte %XX uppercase);
 * '/' kept when keep_slash. malloc'd; NULL with err ("sign request: out of memory") when
 * memory ran out. The S3 backend uses it to build the URL path it sends, so the wire and
 * the signature agree. */
char *sr_sigv4_uri_encode(const char *s, size_t len, int keep_slash, char *err);

/* SHA-256 of len bytes as 64 lowercase hex chars + NUL. 0, or -1 with err
 * ("compute SHA-256: out of memory": OpenSSL's context); hex is then "". */
int sr_sha256_hex(const void *buf, size_t len, char hex[65], char *err);

#endif
