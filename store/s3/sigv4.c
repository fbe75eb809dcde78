/*
 * sigv4.c: AWS Signature Version 4 for the S3 and GCS stores (sigv4.h): the
 * canonical request, the string to sign, the signing key chain and the
 * Authorization value. Every input is checked, and what cannot be signed
 * faithfully (a header value with a line break, a stray '%' in the query,
 * a date in the wrong form) is refused with a reason rather than signed
 * into a request that a server would answer with a bare 403.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "digest.h"
#include "sigv4.h"
#include "strbuf.h"
#include "util.h"

#define ALGORITHM "AWS4-HMAC-SHA256"
#define TERMINATOR "aws4_request"
#define GOOG4_ALGORITHM "GOOG4-HMAC-SHA256"
#define GOOG4_TERMINATOR "goog4_request"
#define ALGO(rq) ((rq)->goog4 ? GOOG4_ALGORITHM : ALGORITHM)
#define TERM(rq) ((rq)->goog4 ? GOOG4_TERMINATOR : TERMINATOR)
#define UNSIGNED_PAYLOAD "UNSIGNED-PAYLOAD"
#define SECRET_MAX 4096		/* far above any real secret; keeps lengths in int */

/* The buffer's string (strbuf.h), allocated even when empty; the buffer
 * is reset. NULL with err "sign request: out of memory" when an add
 * failed. */
static char *
buf_take(struct sr_strbuf *b, char *err)
{
	char *p = sr_strbuf_take(b);

	if (p == NULL)
		sr_err_oom(err, "sign request");
	return p;
}

static int
is_unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
}

/* RFC 7230 tchar: the characters of a header name or a method. */
static int
is_tchar(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static int
is_token(const char *s)
{
	if (s == NULL || *s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!is_tchar((unsigned char)*s))
			return 0;
	return 1;
}

/* A credential scope part (access key, region, service): no separator of
 * the Credential= field, no space or control character. */
static int
is_scope_part(const char *s)
{
	if (s == NULL || *s == '\0')
		return 0;
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c <= ' ' || c == 0x7f || c == '/' || c == ',' || c == ';' || c == '=')
			return 0;
	}
	return 1;
}

static void
encode_into(struct sr_strbuf *out, const char *s, size_t len, int keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[3];

		if (is_unreserved(c) || (c == '/' && keep_slash)) {
			sr_strbuf_ch(out, (char)c);
			continue;
		}
		esc[0] = '%';
		esc[1] = hex[c >> 4];
		esc[2] = hex[c & 15];
		sr_strbuf_add(out, esc, 3);
	}
}

char *
sr_sigv4_uri_encode(const char *s, size_t len, int keep_slash, char *err)
{
	struct sr_strbuf b = { 0 };

	encode_into(&b, s, len, keep_slash);
	return buf_take(&b, err);
}

/* Percent-decode n bytes of s into out (which may then hold NULs; its len
 * counts). -1 for a '%' not followed by two hex digits: that byte would be
 * read differently by each server, so the caller must write it as %25. */
static int
decode_into(struct sr_strbuf *out, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int hi, lo;

		if (s[i] != '%') {
			sr_strbuf_ch(out, s[i]);
			continue;
		}
		if (i + 2 >= n)
			return -1;
		hi = sr_hexval((unsigned char)s[i + 1]);
		lo = sr_hexval((unsigned char)s[i + 2]);
		if (hi < 0 || lo < 0)
			return -1;
		sr_strbuf_ch(out, (char)(hi << 4 | lo));
		i += 2;
	}
	return 0;
}

/* The 32 bytes of md as 64 lowercase hex digits and a NUL. */
static void
hex32(const unsigned char md[SHA256_DIGEST_LENGTH], char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	int i;

	for (i = 0; i < SHA256_DIGEST_LENGTH; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[64] = '\0';
}

int
sr_sha256_hex(const void *buf, size_t len, char hex[65], char *err)
{
	unsigned char md[SHA256_DIGEST_LENGTH];

	/* OpenSSL 3's one-shot digest allocates its context: NULL is its
	 * out-of-memory (digest.h) */
	hex[0] = '\0';
	if (SHA256(buf, len, md) == NULL)
		return sr_digest_ssl_err(err, "compute SHA-256");
	hex32(md, hex);
	return 0;
}

static int
valid_payload_hash(const char *h)
{
	int i;

	if (h == NULL)
		return 0;
	if (strcmp(h, UNSIGNED_PAYLOAD) == 0)
		return 1;
	for (i = 0; i < 64; i++)
		if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f')))
			return 0;
	return h[64] == '\0';
}

/* Two decimal digits at s, or -1. */
static int
two_digits(const char *s)
{
	if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9')
		return -1;
	return (s[0] - '0') * 10 + (s[1] - '0');
}

static int
valid_amz_date(const char *d)
{
	int i, mon, day;

	if (d == NULL || strlen(d) != 16 || d[8] != 'T' || d[15] != 'Z')
		return 0;
	for (i = 0; i < 15; i++)
		if (i != 8 && (d[i] < '0' || d[i] > '9'))
			return 0;
	mon = two_digits(d + 4);
	day = two_digits(d + 6);
	return mon >= 1 && mon <= 12 && day >= 1 && day <= 31 &&
	    two_digits(d + 9) <= 23 && two_digits(d + 11) <= 59 && two_digits(d + 13) <= 60;
}

/* The fields the string to sign needs (date and credential scope). */
static int
check_scope(const struct sr_sigv4_request *rq, char *err)
{
	if (rq == NULL)
		return sr_err(err, "sign request: no request");
	if (!valid_amz_date(rq->amz_date))
		return sr_err(err, "sign request: amz_date must be YYYYMMDDTHHMMSSZ (UTC)");
	if (!is_scope_part(rq->region))
		return sr_err(err, "sign request: bad region (empty, or with a space, '/', ',', ';', '=' or control character)");
	if (!is_scope_part(rq->service))
		return sr_err(err, "sign request: bad service (empty, or with a space, '/', ',', ';', '=' or control character)");
	return 0;
}

/*
 * The canonical URI: the raw path, dot segments removed and empty ones
 * merged when normalize (RFC 3986 section 5.2.4: a trailing "." or ".."
 * leaves a trailing '/'; ".." at the root stays at the root), then
 * percent-encoded once with '/' kept.
 */
static int
canonical_uri(struct sr_strbuf *out, const char *path, int normalize, char *err)
{
	const char **seg;
	size_t *seglen;
	size_t n = 0, i;
	int trailing = 0;
	const char *p;

	if (!normalize) {
		encode_into(out, path, strlen(path), 1);
		return 0;
	}
	/* At most one segment per two bytes of path ("/a/b"). */
	seg = sr_try_calloc(strlen(path) / 2 + 1, sizeof *seg, err);
	seglen = seg != NULL ? sr_try_calloc(strlen(path) / 2 + 1, sizeof *seglen, err) : NULL;
	if (seglen == NULL) {
		free(seg);
		return sr_err_prefix(err, "sign request");
	}
	for (p = path; *p != '\0';) {
		size_t len;

		if (*p == '/') {
			while (*p == '/')
				p++;
			if (*p == '\0')
				trailing = 1;
			continue;
		}
		len = strcspn(p, "/");
		if (len == 1 && p[0] == '.') {
			trailing = 1;
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (n > 0)
				n--;
			trailing = 1;
		} else {
			seg[n] = p;
			seglen[n] = len;
			n++;
			trailing = 0;
		}
		p += len;
	}
	sr_strbuf_ch(out, '/');
	for (i = 0; i < n; i++) {
		if (i > 0)
			sr_strbuf_ch(out, '/');
		encode_into(out, seg[i], seglen[i], 1);
	}
	if (trailing && n > 0)
		sr_strbuf_ch(out, '/');
	free(seg);
	free(seglen);
	return 0;
}

struct qpair {
	char *name;	/* canonically encoded */
	char *value;
};

static int
qpair_cmp(const void *a, const void *b)
{
	const struct qpair *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c != 0 ? c : strcmp(x->value, y->value);
}

/* Decode n bytes of s and encode them canonically ('/' too) into *out
 * (malloc'd): 0; 1 for a bad escape; -1 with err for out-of-memory. */
static int
reencode(const char *s, size_t n, char **out, char *err)
{
	struct sr_strbuf raw = { 0 }, enc = { 0 };
	int rc;

	*out = NULL;
	if (decode_into(&raw, s, n) == -1) {
		sr_strbuf_free(&raw);
		return 1;
	}
	if (raw.failed)
		rc = sr_err_oom(err, "sign request");
	else {
		encode_into(&enc, raw.p != NULL ? raw.p : "", raw.len, 0);
		rc = (*out = buf_take(&enc, err)) != NULL ? 0 : -1;
	}
	sr_strbuf_free(&raw);
	return rc;
}

/* The canonical query string: each name and value decoded and re-encoded,
 * sorted by name then value (byte order of the encoded forms), "name="
 * for a name without '='. Empty parts ("a&&b") are not parameters. */
static int
canonical_query(struct sr_strbuf *out, const char *query, char *err)
{
	struct qpair *pairs = NULL;
	size_t n = 0, cap = 0, i;
	const char *p = query != NULL ? query : "";
	int rc = 0;

	while (*p != '\0') {
		size_t plen = strcspn(p, "&");

		if (plen > 0) {
			const char *eq = memchr(p, '=', plen);
			size_t nlen = eq != NULL ? (size_t)(eq - p) : plen;
			char *name = NULL, *value = NULL;
			int r;

			r = reencode(p, nlen, &name, err);
			if (r == 0)
				r = reencode(eq != NULL ? eq + 1 : "", eq != NULL ? plen - nlen - 1 : 0,
				    &value, err);
			if (r == 0 && n == cap) {
				struct qpair *np = sr_try_reallocarray(pairs, cap > 0 ? cap * 2 : 8,
				    sizeof *pairs, err);

				if (np == NULL)
					r = sr_err_prefix(err, "sign request");
				else {
					pairs = np;
					cap = cap > 0 ? cap * 2 : 8;
				}
			}
			if (r != 0) {
				free(name);
				free(value);
				rc = r == 1 ? sr_err(err, "sign request: query has a '%%' not followed by two hex digits (write a literal '%%' as %%25)") : -1;
				break;
			}
			pairs[n].name = name;
			pairs[n].value = value;
			n++;
		}
		p += plen;
		if (*p == '&')
			p++;
	}
	if (rc == 0 && n > 0)
		qsort(pairs, n, sizeof *pairs, qpair_cmp);
	for (i = 0; i < n; i++) {
		if (rc == 0) {
			if (i > 0)
				sr_strbuf_ch(out, '&');
			sr_strbuf_str(out, pairs[i].name);
			sr_strbuf_ch(out, '=');
			sr_strbuf_str(out, pairs[i].value);
		}
		free(pairs[i].name);
		free(pairs[i].value);
	}
	free(pairs);
	return rc;
}

struct chdr {
	char *name;	/* lowercased */
	char *value;	/* trimmed, inner runs of blanks made one space */
	size_t idx;	/* the position given, to keep repeated names in order */
};

static int
chdr_cmp(const void *a, const void *b)
{
	const struct chdr *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c != 0)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The canonical form of a header value, or -1 for a control character: a
 * line break would split the header on the wire (obs-fold is the caller's
 * to unfold into spaces), and servers differ on the others. */
static int
canonical_value(struct sr_strbuf *out, const char *v)
{
	int blank = 0;

	sr_strbuf_add(out, "", 0);
	for (; *v != '\0'; v++) {
		unsigned char c = (unsigned char)*v;

		if (c == ' ' || c == '\t') {
			blank = out->len > 0;
			continue;
		}
		if (c < 0x20 || c == 0x7f)
			return -1;
		if (blank)
			sr_strbuf_ch(out, ' ');
		blank = 0;
		sr_strbuf_ch(out, (char)c);
	}
	return 0;
}

/* The canonical headers block (each "name:value\n") into out and the
 * signed headers list into signed_out, after checking the headers that
 * must be there or must agree with the request's fields. */
static int
canonical_headers(struct sr_strbuf *out, struct sr_strbuf *signed_out,
    const struct sr_sigv4_request *rq, char *err)
{
	struct chdr *h;
	size_t i, j;
	int rc = 0, have_host = 0, have_sha = 0;

	if (rq->nheaders > 0 && rq->headers == NULL)
		return sr_err(err, "sign request: nheaders is %zu but headers is NULL", rq->nheaders);
	if ((h = sr_try_calloc(rq->nheaders + 1, sizeof *h, err)) == NULL)
		return sr_err_prefix(err, "sign request");
	for (i = 0; i < rq->nheaders && rc == 0; i++) {
		const struct sr_sigv4_header *in = &rq->headers[i];
		struct sr_strbuf v = { 0 };

		if (!is_token(in->name)) {
			rc = sr_err(err, "sign request: header %zu: the name is empty or not an HTTP token", i + 1);
			break;
		}
		if (in->value == NULL) {
			rc = sr_err(err, "sign request: header '%s' has no value", in->name);
			break;
		}
		if (canonical_value(&v, in->value) == -1) {
			free(v.p);
			rc = sr_err(err, "sign request: header '%s': the value has a line break or control character", in->name);
			break;
		}
		if ((h[i].value = buf_take(&v, err)) == NULL) {
			rc = -1;
			break;
		}
		if ((h[i].name = sr_try_strdup(in->name, err)) == NULL) {
			rc = sr_err_prefix(err, "sign request");
			break;
		}
		for (j = 0; h[i].name[j] != '\0'; j++)
			if (h[i].name[j] >= 'A' && h[i].name[j] <= 'Z')
				h[i].name[j] += 'a' - 'A';
		h[i].idx = i;
	}
	if (rc == 0 && rq->nheaders > 0)
		qsort(h, rq->nheaders, sizeof *h, chdr_cmp);
	for (i = 0; rc == 0 && i < rq->nheaders; i = j) {
		struct sr_strbuf v = { 0 };

		/* h[i..j) share one name: one line, values joined with ','. */
		sr_strbuf_str(&v, h[i].value);
		for (j = i + 1; j < rq->nheaders && strcmp(h[j].name, h[i].name) == 0; j++) {
			sr_strbuf_ch(&v, ',');
			sr_strbuf_str(&v, h[j].value);
		}
		if (v.failed) {
			sr_strbuf_free(&v);
			rc = sr_err_oom(err, "sign request");
			break;
		}
		if (strcmp(h[i].name, "host") == 0) {
			have_host = 1;
		} else if (strcmp(h[i].name, "x-amz-content-sha256") == 0) {
			have_sha = 1;
			if (strcmp(v.p, rq->payload_hash) != 0)
				rc = sr_err(err, "sign request: the x-amz-content-sha256 header differs from payload_hash");
		} else if (strcmp(h[i].name, "x-amz-date") == 0) {
			if (strcmp(v.p, rq->amz_date) != 0)
				rc = sr_err(err, "sign request: the x-amz-date header differs from amz_date");
		}
		sr_strbuf_str(out, h[i].name);
		sr_strbuf_ch(out, ':');
		sr_strbuf_str(out, v.p);
		sr_strbuf_ch(out, '\n');
		if (i > 0)
			sr_strbuf_ch(signed_out, ';');
		sr_strbuf_str(signed_out, h[i].name);
		free(v.p);
	}
	if (rc == 0 && !have_host)
		rc = sr_err(err, "sign request: no host header (SigV4 always signs it)");
	if (rc == 0 && !have_sha && !rq->query_auth && strcmp(rq->service, "s3") == 0)
		rc = sr_err(err, "sign request: S3 needs an x-amz-content-sha256 header "
		    "(the payload hash or UNSIGNED-PAYLOAD)");
	for (i = 0; i < rq->nheaders; i++) {
		free(h[i].name);
		free(h[i].value);
	}
	free(h);
	return rc;
}

/* The canonical request, and the signed headers list when signed_headers
 * is not NULL; NULL with err set for bad input. */
static char *
build_canonical(const struct sr_sigv4_request *rq, char **signed_headers, char *err)
{
	struct sr_strbuf out = { 0 }, sh = { 0 };
	char *p;

	if (check_scope(rq, err) == -1)
		return NULL;
	if (!is_token(rq->method)) {
		sr_err(err, "sign request: the method is empty or not an HTTP token");
		return NULL;
	}
	if (rq->path == NULL || rq->path[0] != '/') {
		sr_err(err, "sign request: the path must start with '/'");
		return NULL;
	}
	if (!valid_payload_hash(rq->payload_hash)) {
		sr_err(err, "sign request: payload_hash must be 64 lowercase hex digits or UNSIGNED-PAYLOAD");
		return NULL;
	}
	sr_strbuf_str(&out, rq->method);
	sr_strbuf_ch(&out, '\n');
	if (canonical_uri(&out, rq->path, rq->normalize_path, err) == -1)
		goto fail;
	sr_strbuf_ch(&out, '\n');
	if (canonical_query(&out, rq->query, err) == -1)
		goto fail;
	sr_strbuf_ch(&out, '\n');
	if (canonical_headers(&out, &sh, rq, err) == -1)
		goto fail;
	if (sh.failed) {
		sr_err_oom(err, "sign request");
		goto fail;
	}
	sr_strbuf_ch(&out, '\n');
	sr_strbuf_str(&out, sh.p);
	sr_strbuf_ch(&out, '\n');
	sr_strbuf_str(&out, rq->payload_hash);
	if (signed_headers != NULL && (*signed_headers = buf_take(&sh, err)) == NULL)
		goto fail;
	sr_strbuf_free(&sh);
	if ((p = buf_take(&out, err)) == NULL && signed_headers != NULL) {
		free(*signed_headers);
		*signed_headers = NULL;
	}
	return p;
fail:
	sr_strbuf_free(&out);
	sr_strbuf_free(&sh);
	return NULL;
}

char *
sr_sigv4_canonical_request_err(const struct sr_sigv4_request *rq, char *err)
{
	return build_canonical(rq, NULL, err);
}

char *
sr_sigv4_canonical_request(const struct sr_sigv4_request *rq)
{
	return build_canonical(rq, NULL, NULL);
}

char *
sr_sigv4_string_to_sign(const struct sr_sigv4_request *rq, const char *canonical_request,
    char *err)
{
	char hash[65], *sts;

	if (canonical_request == NULL) {
		sr_err(err, "sign request: no canonical request");
		return NULL;
	}
	if (check_scope(rq, err) == -1)
		return NULL;
	if (sr_sha256_hex(canonical_request, strlen(canonical_request), hash, err) == -1) {
		sr_err_prefix(err, "sign request");
		return NULL;
	}
	sts = sr_try_asprintf(err, "%s\n%s\n%.8s/%s/%s/%s\n%s", ALGO(rq), rq->amz_date,
	    rq->amz_date, rq->region, rq->service, TERM(rq), hash);
	if (sts == NULL)
		sr_err_prefix(err, "sign request");
	return sts;
}

/* HMAC-SHA256 of msg under key into out. OpenSSL 3's one-shot HMAC
 * fetches and allocates its MAC context: NULL is its out-of-memory
 * (digest.h). */
static int
hmac(const void *key, size_t keylen, const void *msg, size_t msglen,
    unsigned char out[SHA256_DIGEST_LENGTH], char *err)
{
	unsigned int outlen = 0;

	if (HMAC(EVP_sha256(), key, (int)keylen, msg, msglen, out, &outlen) == NULL)
		return sr_digest_ssl_err(err, "sign request: compute HMAC-SHA256");
	if (outlen != SHA256_DIGEST_LENGTH)
		return sr_err(err, "sign request: HMAC-SHA256 gave %u bytes, not %d (OpenSSL's bug)",
		    outlen, SHA256_DIGEST_LENGTH);
	return 0;
}

/* The signature of sts: HMAC chain "AWS4"+secret -> date -> region ->
 * service -> "aws4_request" ("GOOG4"+secret ... "goog4_request" with
 * goog4), then HMAC of sts; 64 hex digits into sig.
 * 0, or -1 with err (out-of-memory). */
static int
signature(const struct sr_sigv4_request *rq, const char *secret, const char *sts, char sig[65],
    char *err)
{
	size_t slen = strlen(secret);
	const char *k0prefix = rq->goog4 ? "GOOG4" : "AWS4";
	size_t plen = strlen(k0prefix);
	char *k0 = sr_try_malloc(slen + plen + 1, err);
	unsigned char k[SHA256_DIGEST_LENGTH], md[SHA256_DIGEST_LENGTH];
	int rc;

	if (k0 == NULL)
		return sr_err_prefix(err, "sign request");
	memcpy(k0, k0prefix, plen);
	memcpy(k0 + plen, secret, slen + 1);
	rc = hmac(k0, slen + plen, rq->amz_date, 8, k, err);
	if (rc == 0)
		rc = hmac(k, sizeof k, rq->region, strlen(rq->region), k, err);
	if (rc == 0)
		rc = hmac(k, sizeof k, rq->service, strlen(rq->service), k, err);
	if (rc == 0)
		rc = hmac(k, sizeof k, TERM(rq), strlen(TERM(rq)), k, err);
	if (rc == 0)
		rc = hmac(k, sizeof k, sts, strlen(sts), md, err);
	if (rc == 0)
		hex32(md, sig);
	/* The derived keys sign for a whole day: leave none behind. */
	OPENSSL_cleanse(k0, slen + plen + 1);
	OPENSSL_cleanse(k, sizeof k);
	free(k0);
	return rc;
}

/* The signature of rq under key into sig, and the signed headers list
 * (malloc'd) into *sh. 0, or -1 with err. */
static int
sign_with(const struct sr_sigv4_request *rq, const struct sr_sigv4_key *key, char sig[65],
    char **sh, char *err)
{
	char *creq, *sts;

	sig[0] = '\0';
	*sh = NULL;
	if (key == NULL || !is_scope_part(key->access_key))
		return sr_err(err, "sign request: bad access key (empty, or with a space, '/', ',', ';', '=' or control character)");
	if (key->secret_key == NULL || key->secret_key[0] == '\0')
		return sr_err(err, "sign request: no secret key");
	if (strlen(key->secret_key) > SECRET_MAX)
		return sr_err(err, "sign request: the secret key is longer than %d bytes", SECRET_MAX);
	creq = build_canonical(rq, sh, err);
	if (creq == NULL)
		return -1;
	sts = sr_sigv4_string_to_sign(rq, creq, err);
	free(creq);
	if (sts == NULL || signature(rq, key->secret_key, sts, sig, err) == -1) {
		free(sts);
		free(*sh);
		*sh = NULL;
		sig[0] = '\0';
		return -1;
	}
	free(sts);
	return 0;
}

int
sr_sigv4_query_signature(const struct sr_sigv4_request *rq, const struct sr_sigv4_key *key,
    char sig[65], char *err)
{
	char *sh;

	if (sign_with(rq, key, sig, &sh, err) == -1)
		return -1;
	free(sh);
	return 0;
}

int
sr_sigv4_sign(const struct sr_sigv4_request *rq, const struct sr_sigv4_key *key, char *auth, char *err)
{
	char sig[65], *sh;
	int n;

	if (auth == NULL)
		return sr_err(err, "sign request: no output buffer");
	auth[0] = '\0';
	if (sign_with(rq, key, sig, &sh, err) == -1)
		return -1;
	n = snprintf(auth, SR_SIGV4_AUTH_MAX,
	    "%s Credential=%s/%.8s/%s/%s/%s, SignedHeaders=%s, Signature=%s", ALGO(rq),
	    key->access_key, rq->amz_date, rq->region, rq->service, TERM(rq), sh, sig);
	free(sh);
	if (n < 0 || n >= SR_SIGV4_AUTH_MAX) {
		auth[0] = '\0';
		return sr_err(err, "sign request: the Authorization value would be %d bytes, more than %d "
		    "(fewer or shorter signed headers)", n, SR_SIGV4_AUTH_MAX - 1);
	}
	return 0;
}
