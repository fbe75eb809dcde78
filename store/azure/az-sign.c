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
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "az-sign.h"
#include "util.h"

/* The standard headers of the string to sign, in its order. */
static const char *const standard[] = {
	"Content-Encoding", "Content-Language", "Content-Length", "Content-MD5",
	"Content-Type", "Date", "If-Modified-Since", "If-Match", "If-None-Match",
	"If-Unmodified-Since", "Range",
};

/* A growing string. */
struct sbuf {
	char *p;
	size_t len, cap;
};

static void
sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = sr_realloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

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
lower(const char *s, size_t n)
{
	char *p = sr_strndup(s, n);
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (char)tolower((unsigned char)p[i]);
	return p;
}

/* Percent-decode n bytes of s; NULL for a bad escape. ('+' is kept: the
 * store never sends one unencoded, and Azure reads it literally.) */
static char *
decode(const char *s, size_t n)
{
	char *out = sr_malloc(n + 1);
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		int hi, lo;

		if (s[i] != '%') {
			out[o++] = s[i];
			continue;
		}
		if (i + 2 >= n) {
			free(out);
			return NULL;
		}
		hi = sr_hexval((unsigned char)s[i + 1]);
		lo = sr_hexval((unsigned char)s[i + 2]);
		if (hi < 0 || lo < 0) {
			free(out);
			return NULL;
		}
		out[o++] = (char)(hi << 4 | lo);
		i += 2;
	}
	out[o] = '\0';
	return out;
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

char *
sr_az_string_to_sign(const struct sr_az_request *r, char *err)
{
	struct sbuf b = { 0 };
	struct pair *ph = NULL, *pq = NULL;
	size_t nh = 0, nq = 0, i, vlen, nl;
	const char *v;
	char num[32];

	sb_str(&b, r->method);
	sb_str(&b, "\n");
	for (i = 0; i < SR_ARRAY_LEN(standard); i++) {
		if (strcmp(standard[i], "Content-Length") == 0) {
			/* 0 is signed as empty (versions 2015-02-21 and later) */
			if (r->content_length > 0) {
				snprintf(num, sizeof num, "%lld", r->content_length);
				sb_str(&b, num);
			}
		} else if ((v = find(r, standard[i], &vlen)) != NULL)
			sb_add(&b, v, vlen);
		sb_str(&b, "\n");
	}

	for (i = 0; r->headers[i] != NULL; i++) {
		if (split(r->headers[i], &nl, &v, &vlen) == -1 || nl < 5 ||
		    strncasecmp(r->headers[i], "x-ms-", 5) != 0)
			continue;
		ph = sr_reallocarray(ph, nh + 1, sizeof *ph);
		ph[nh].name = lower(r->headers[i], nl);
		ph[nh++].value = sr_strndup(v, vlen);
	}
	if (nh > 0)
		qsort(ph, nh, sizeof *ph, pair_cmp);
	for (i = 0; i < nh; i++) {
		sb_str(&b, ph[i].name);
		sb_str(&b, ":");
		sb_str(&b, ph[i].value);
		sb_str(&b, "\n");
	}

	sb_str(&b, "/");
	sb_str(&b, r->account);
	sb_str(&b, r->path);
	for (v = r->query; v != NULL && *v != '\0';) {
		size_t n = strcspn(v, "&"), k = strcspn(v, "=");

		if (k > n)
			k = n;
		if (n > 0) {
			pq = sr_reallocarray(pq, nq + 1, sizeof *pq);
			pq[nq].value = k < n ? decode(v + k + 1, n - k - 1) : sr_strdup("");
			pq[nq].name = decode(v, k);
			if (pq[nq].name == NULL || pq[nq].value == NULL) {
				nq++;
				pairs_free(ph, nh);
				pairs_free(pq, nq);
				free(b.p);
				sr_err(err, "sign request: the query has a '%%' without two hex digits");
				return NULL;
			}
			for (char *c = pq[nq].name; *c != '\0'; c++)
				*c = (char)tolower((unsigned char)*c);
			nq++;
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
			sb_str(&b, ",");
		} else {
			sb_str(&b, "\n");
			sb_str(&b, pq[i].name);
			sb_str(&b, ":");
		}
		sb_str(&b, pq[i].value);
	}
	pairs_free(ph, nh);
	pairs_free(pq, nq);
	return b.p;
}

int
sr_az_sign(const struct sr_az_request *r, const char *key_b64, char *auth, char *err)
{
	unsigned char key[128], mac[EVP_MAX_MD_SIZE], sig[64];
	size_t klen = strlen(key_b64), pad = 0;
	unsigned int mlen = 0;
	int n;
	char *sts;

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
	if ((sts = sr_az_string_to_sign(r, err)) == NULL) {
		OPENSSL_cleanse(key, sizeof key);
		return -1;
	}
	if (HMAC(EVP_sha256(), key, n - (int)pad, (const unsigned char *)sts, strlen(sts), mac,
	    &mlen) == NULL || mlen != 32)
		sr_fatal("HMAC-SHA256 failed");
	OPENSSL_cleanse(key, sizeof key);
	free(sts);
	EVP_EncodeBlock(sig, mac, 32);
	snprintf(auth, SR_AZ_AUTH_MAX, "SharedKey %s:%s", r->account, (char *)sig);
	return 0;
}
