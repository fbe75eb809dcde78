/*
 * url-same.c: whether two store URLs name the same store, whatever their
 * spelling (store.h, sr_store_url_same). A queue opened by one machine as
 * s3://b/q?endpoint=http://localhost:7480 and by another as
 * s3://b/q?endpoint=http://127.0.0.1:7480&concurrency=8 is one queue: the
 * jobs one submits are the other's to take over.
 *
 * What names a store: the scheme, what follows "scheme://" up to the
 * options (bucket or account, container, prefix; file://localhost/p is
 * file:///p; trailing slashes do not count) and the endpoint option (its
 * scheme and host without case, localhost, 127.0.0.1 and ::1 as one, a
 * port that is the scheme's default as none, no trailing slash). Every
 * other option tunes the client (concurrency, part sizes, retries, the
 * region, credentials' profile) and does not count.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"
#include "util.h"

#define ID_MAX 4096

/* The endpoint's value e (len bytes, percent-encoded or not) in canonical
 * form into out. */
static void
endpoint_id(const char *e, size_t len, char *out, size_t olen)
{
	char raw[1024], host[512];
	const char *h, *end, *port;
	size_t o = 0, i, hl;
	int https;

	for (i = 0; i < len && o + 1 < sizeof raw; i++) {
		int hi, lo;

		if (e[i] == '%' && i + 2 < len && (hi = sr_hexval(e[i + 1])) >= 0 &&
		    (lo = sr_hexval(e[i + 2])) >= 0) {
			raw[o++] = (char)(hi * 16 + lo);
			i += 2;
		} else
			raw[o++] = e[i];
	}
	raw[o] = '\0';
	/* scheme and host without case; a path (Azurite's /account) keeps it */
	h = strstr(raw, "://");
	for (i = 0, end = h != NULL ? h + 3 + strcspn(h + 3, "/") : raw + o; raw + i < end; i++)
		raw[i] = (char)tolower((unsigned char)raw[i]);
	while (o > 0 && raw[o - 1] == '/')
		raw[--o] = '\0';
	https = strncmp(raw, "https://", 8) == 0;
	h = strstr(raw, "://");
	h = h != NULL ? h + 3 : raw;
	end = h + strcspn(h, "/");
	if (*h == '[') {		/* [v6]:port */
		const char *rb = memchr(h, ']', (size_t)(end - h));

		port = rb != NULL && rb + 1 < end && rb[1] == ':' ? rb + 1 : NULL;
		hl = rb != NULL ? (size_t)(rb + 1 - h) : (size_t)(end - h);
	} else {
		port = memchr(h, ':', (size_t)(end - h));
		hl = port != NULL ? (size_t)(port - h) : (size_t)(end - h);
	}
	snprintf(host, sizeof host, "%.*s", (int)hl, h);
	if (strcmp(host, "localhost") == 0 || strcmp(host, "127.0.0.1") == 0 ||
	    strcmp(host, "[::1]") == 0)
		snprintf(host, sizeof host, "loopback");
	if (port != NULL) {
		const char *dflt = https ? ":443" : ":80";

		if (end - port == 1 || ((size_t)(end - port) == strlen(dflt) &&
		    strncmp(port, dflt, strlen(dflt)) == 0))
			port = NULL;
	}
	snprintf(out, olen, "%s://%s%.*s%s", https ? "https" : "http", host,
	    port != NULL ? (int)(end - port) : 0, port != NULL ? port : "", end);
}

/* url's identity into out: "SCHEME://REST ENDPOINT". */
static void
url_id(const char *url, char *out, size_t olen)
{
	const char *q = strchr(url, '?'), *sep = strstr(url, "://"), *opt;
	size_t n = q != NULL ? (size_t)(q - url) : strlen(url), skip = 0;
	char ep[1100] = "";

	if (sep != NULL && (size_t)(sep - url) == 4 && strncmp(url, "file", 4) == 0 &&
	    strncmp(sep + 3, "localhost/", 10) == 0)
		skip = 9;	/* file://localhost/p is file:///p */
	while (n > 0 && url[n - 1] == '/' && (sep == NULL || url + n > sep + 3))
		n--;
	for (opt = q; opt != NULL; opt = strchr(opt + 1, '&')) {
		const char *v = opt + 1;

		if (strncmp(v, "endpoint=", 9) == 0)
			endpoint_id(v + 9, strcspn(v + 9, "&"), ep, sizeof ep);
	}
	if (sep != NULL && skip > 0)
		snprintf(out, olen, "%.*s%.*s %s", (int)(sep + 3 - url), url,
		    (int)(n - (size_t)(sep + 3 + skip - url)), sep + 3 + skip, ep);
	else
		snprintf(out, olen, "%.*s %s", (int)n, url, ep);
}

int
sr_store_url_same(const char *a, const char *b)
{
	char ia[ID_MAX], ib[ID_MAX];

	if (a == NULL || b == NULL)
		return 0;
	url_id(a, ia, sizeof ia);
	url_id(b, ib, sizeof ib);
	return strcmp(ia, ib) == 0;
}
