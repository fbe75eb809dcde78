/*
 * az-sign.c: Shared Key signing (az-sign.h): the string to sign from the
 * request's headers, path and query, and its HMAC-SHA256 under the
 * decoded account key. The decoded key is wiped after use.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "az-sign.h"
#include "strbuf.h"
#include "util.h"

/* The standard headers of the string to sign, in its order. */
static const char *const standard[] = {
	"Content-Encoding", "Content-Language", "Content-Length", "Content-MD5",
	"Content-Type", "Date", "If-Modified-Since", "If-Match", "If-None-Match",
	"If-Unmodified-Since", "Range",
};

/* A header line split: its name's length, and its value trimmed. */
static int
split(const char *line, size_t *nlen, const char **v, size_t *vlen)
{
	const char *colon = strchr(line, ':');
	size_t n;

	if (colon == NULL)
		return -1;
	*nlen = (size_t)(colon - line);
	colon++;
	while (*colon == ' ' || *colon == '\t')
		colon++;
	n = strlen(colon);
	while (n > 0 && (colon[n - 1] == ' ' || colon[n - 1] == '\t'))
		n--;
	*v = colon;
	*vlen = n;
	return 0;
}

/* The value of the standard header name among r's, or NULL. */
static const char *
find(const struct sr_az_request *r, const char *name, size_t *vlen)
{
	size_t i, nl, n = strlen(name);
	const char *v;

	for (i = 0; r->headers[i] != NULL; i++)
		if (split(r->headers[i], &nl, &v, vlen) == 0 && nl == n &&
		    strncasecmp(r->headers[i], name, n) == 0)
			return v;
	return NULL;
}

/* One x-ms-* header or query parameter, lower-cased name and value. */
struct pair {
	char *name, *value;
};

static int
pair_cmp(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c != 0 ? c : strcmp(x->value, y->value);
}

static char *
lower(const char *s, size_t n, char *err)
{
	char *p = sr_try_strndup(s, n, err);
	size_t i;

	for (i = 0; p != NULL && i < n; i++)
		p[i] = (char)tolower((unsigned char)p[i]);
	return p;
}

/* Percent-decode n bytes of s into *out (malloc'd). 0, or -1 with err for
 * a bad escape or out of memory. ('+' is kept: the store never sends one
 * unencoded, and Azure reads it literally.) */
static int
decode(const char *s, size_t n, char **out, char *err)
{
	char *d = sr_try_malloc(n + 1, err);
	size_t i, o = 0;

	*out = NULL;
	if (d == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		int hi, lo;

		if (s[i] != '%') {
			d[o++] = s[i];
			continue;
		}
		hi = i + 2 < n ? sr_hexval((unsigned char)s[i + 1]) : -1;
		lo = i + 2 < n ? sr_hexval((unsigned char)s[i + 2]) : -1;
		if (hi < 0 || lo < 0) {
			free(d);
			return sr_err(err, "the query has a '%%' without two hex digits");
		}
		d[o++] = (char)(hi << 4 | lo);
		i += 2;
	}
	d[o] = '\0';
	*out = d;
	return 0;
}

static void
pairs_free(struct pair *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(p[i].name);
		free(p[i].value);
	}
	free(p);
}

/* Make room for one more pair after the n of *p, its strings NULL until
 * the caller fills them. 0, or -1 with err (*p is still the caller's). */
static int
pairs_grow(struct pair **p, size_t n, char *err)
{
	struct pair *np = sr_try_reallocarray(*p, n + 1, sizeof *np, err);

	if (np == NULL)
		return -1;
	np[n].name = np[n].value = NULL;
	*p = np;
	return 0;
}

char *
sr_az_string_to_sign(const struct sr_az_request *r, char *err)
{
	struct sr_strbuf b = SR_STRBUF_INIT(err);
	struct pair *ph = NULL, *pq = NULL;
	size_t nh = 0, nq = 0, i, vlen, nl;
	const char *v;
	char num[32];

	sr_strbuf_str(&b, r->method);
	sr_strbuf_str(&b, "\n");
	for (i = 0; i < SR_ARRAY_LEN(standard); i++) {
		if (strcmp(standard[i], "Content-Length") == 0) {
			/* 0 is signed as empty (versions 2015-02-21 and later) */
			if (r->content_length > 0) {
				snprintf(num, sizeof num, "%lld", r->content_length);
				sr_strbuf_str(&b, num);
			}
		} else if ((v = find(r, standard[i], &vlen)) != NULL)
			sr_strbuf_add(&b, v, vlen);
		sr_strbuf_str(&b, "\n");
	}
	if (b.failed)
		goto fail;

	for (i = 0; r->headers[i] != NULL; i++) {
		if (split(r->headers[i], &nl, &v, &vlen) == -1 || nl < 5 ||
		    strncasecmp(r->headers[i], "x-ms-", 5) != 0)
			continue;
		if (pairs_grow(&ph, nh, err) == -1)
			goto fail;
		nh++;
		if ((ph[nh - 1].name = lower(r->headers[i], nl, err)) == NULL ||
		    (ph[nh - 1].value = sr_try_strndup(v, vlen, err)) == NULL)
			goto fail;
	}
	if (nh > 0)
		qsort(ph, nh, sizeof *ph, pair_cmp);
	for (i = 0; i < nh; i++) {
		sr_strbuf_str(&b, ph[i].name);
		sr_strbuf_str(&b, ":");
		sr_strbuf_str(&b, ph[i].value);
		sr_strbuf_str(&b, "\n");
	}

	sr_strbuf_str(&b, "/");
	sr_strbuf_str(&b, r->account);
	sr_strbuf_str(&b, r->path);
	if (b.failed)
		goto fail;
	for (v = r->query; v != NULL && *v != '\0';) {
		size_t n = strcspn(v, "&"), k = strcspn(v, "="), vs;

		if (k > n)
			k = n;
		if (n > 0) {
			if (pairs_grow(&pq, nq, err) == -1)
				goto fail;
			nq++;
			/* a name without '=' has the empty value */
			vs = k < n ? k + 1 : n;
			if (decode(v, k, &pq[nq - 1].name, err) == -1 ||
			    decode(v + vs, n - vs, &pq[nq - 1].value, err) == -1)
				goto fail;
			for (char *c = pq[nq - 1].name; *c != '\0'; c++)
				*c = (char)tolower((unsigned char)*c);
		}
		v += n;
		if (*v == '&')
			v++;
	}
	if (nq > 0)
		qsort(pq, nq, sizeof *pq, pair_cmp);
	for (i = 0; i < nq; i++) {
		/* a repeated name: its values, sorted, joined by ',' */
		if (i > 0 && strcmp(pq[i].name, pq[i - 1].name) == 0) {
			sr_strbuf_str(&b, ",");
		} else {
			sr_strbuf_str(&b, "\n");
			sr_strbuf_str(&b, pq[i].name);
			sr_strbuf_str(&b, ":");
		}
		sr_strbuf_str(&b, pq[i].value);
	}
	if (b.failed)
		goto fail;
	pairs_free(ph, nh);
	pairs_free(pq, nq);
	return sr_strbuf_take(&b);
fail:
	pairs_free(ph, nh);
	pairs_free(pq, nq);
	sr_strbuf_free(&b);
	sr_err_prefix(err, "sign request");
	return NULL;
}

/* base64(HMAC-SHA256(base64-decoded key_b64, msg)) into sig (45 bytes).
 * 0, or -1 with err (a key that is not base64, out of memory), which
 * never quotes the key. */
static int
hmac_b64(const char *key_b64, const char *msg, char sig[45], char *err)
{
	unsigned char key[128], mac[EVP_MAX_MD_SIZE];
	size_t klen = strlen(key_b64), pad = 0;
	unsigned int mlen = 0;
	int n;

	if (klen == 0 || klen % 4 != 0 || klen / 4 * 3 > sizeof key ||
	    strspn(key_b64, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") != klen)
		return sr_err(err, "the account key is not base64 (as the portal and "
		    "`az storage account keys list` give it)");
	while (pad < 2 && key_b64[klen - 1 - pad] == '=')
		pad++;
	if ((n = EVP_DecodeBlock(key, (const unsigned char *)key_b64, (int)klen)) < 0) {
		OPENSSL_cleanse(key, sizeof key);
		return sr_err(err, "the account key is not base64 (as the portal and "
		    "`az storage account keys list` give it)");
	}
	/* with a valid key and digest HMAC fails only when OpenSSL cannot
	 * allocate its context */
	if (HMAC(EVP_sha256(), key, n - (int)pad, (const unsigned char *)msg, strlen(msg), mac,
	    &mlen) == NULL || mlen != 32) {
		OPENSSL_cleanse(key, sizeof key);
		ERR_clear_error();
		return sr_err_oom(err, "sign request: HMAC-SHA256");
	}
	OPENSSL_cleanse(key, sizeof key);
	EVP_EncodeBlock((unsigned char *)sig, mac, 32);
	return 0;
}

int
sr_az_sign(const struct sr_az_request *r, const char *key_b64, char *auth, char *err)
{
	char sig[45], *sts;
	int rc;

	if ((sts = sr_az_string_to_sign(r, err)) == NULL)
		return -1;
	rc = hmac_b64(key_b64, sts, sig, err);
	free(sts);
	if (rc == 0)
		snprintf(auth, SR_AZ_AUTH_MAX, "SharedKey %s:%s", r->account, sig);
	return rc;
}

char *
sr_az_sas_string_to_sign(const char *account, const char *container, const char *blob,
    const char *expiry, char *err)
{
	/* sp, st, se, canonicalized resource, si, sip, spr, sv, sr, snapshot
	 * time, encryption scope, rscc, rscd, rsce, rscl, rsct */
	return sr_try_asprintf(err, "r\n\n%s\n/blob/%s/%s/%s\n\n\n\n%s\nb\n\n\n\n\n\n\n",
	    expiry, account, container, blob, SR_AZ_SAS_VERSION);
}

int
sr_az_sas_sign(const char *account, const char *container, const char *blob,
    const char *expiry, const char *key_b64, char sig[45], char *err)
{
	char *sts;
	int rc;

	sig[0] = '\0';
	if ((sts = sr_az_sas_string_to_sign(account, container, blob, expiry, err)) == NULL)
		return -1;
	rc = hmac_b64(key_b64, sts, sig, err);
	free(sts);
	return rc;
}
