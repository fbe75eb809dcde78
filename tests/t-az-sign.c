/*
 * t-az-sign.c: Shared Key signing (store/azure/az-sign.c) against what the
 * Azure SDK signs: the string to sign and the Authorization header of three
 * requests (a create-only Put Blob of a key with a space, '+', 'ü' and '%'
 * under a path-style endpoint; a List Blobs page with prefix and marker; a
 * Put Block with its id and a CRC-64), as azure-storage-blob's
 * SharedKeyCredentialPolicy (the Azure CLI 2.45 of Debian 12) computed them
 * for Azurite's well-known account key. Also what the SDK does not cover:
 * a repeated query name (its values sorted and joined by ','), a
 * Content-Length of 0 signed as empty, headers trimmed and matched without
 * regard to case, and the errors: a key that is not base64, a query with a
 * broken escape, neither quoting the key. And both under out-of-memory
 * (tests/oom.c): every allocation failing in turn, spotrun's own for the
 * string to sign, the C library's and OpenSSL's too for the signature;
 * each run fails with an OOM error or gives the SDK's result, and leaks
 * nothing.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "az-sign.h"
#include "tap.h"
#include "oom.h"
#include "oom-trial.h"
#include "util.h"

/* Azurite's devstoreaccount1 key, published in its README. */
#define KEY "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
#define DATE "x-ms-date: Tue, 01 Dec 2026 12:00:00 GMT"
#define XMS_VERSION "x-ms-version: 2021-08-06"

static void
check(const struct sr_az_request *r, const char *want_sts, const char *want_auth,
    const char *name)
{
	char err[SR_ERRMAX] = "", auth[SR_AZ_AUTH_MAX] = "";
	char *sts = sr_az_string_to_sign(r, err);

	is_str(sts != NULL ? sts : err, want_sts, "%s: string to sign", name);
	free(sts);
	if (want_auth == NULL)
		return;
	is_int(sr_az_sign(r, KEY, auth, err), 0, "%s: signed", name);
	is_str(auth, want_auth, "%s: Authorization is the SDK's", name);
}

/* The OOM trials' operation: a List Blobs request (x-ms-* headers and a
 * query to sort and decode), its string to sign or its signature. */
struct sign_trial {
	struct sr_az_request r;
	int sign;			/* the Authorization, not the string to sign */
	const char *want;
	char *sts, auth[SR_AZ_AUTH_MAX];
};

static int
sign_op(void *arg, char *err)
{
	struct sign_trial *t = arg;

	if (t->sign)
		return sr_az_sign(&t->r, KEY, t->auth, err);
	return (t->sts = sr_az_string_to_sign(&t->r, err)) != NULL ? 0 : -1;
}

static int
sign_check(void *arg, int rc, char *why)
{
	struct sign_trial *t = arg;
	const char *got = t->sign ? t->auth : t->sts;

	if (rc != 0 || strcmp(got, t->want) == 0)
		return 1;
	snprintf(why, SR_ERRMAX, "got '%s'", got);
	return 0;
}

static void
sign_reset(void *arg)
{
	struct sign_trial *t = arg;

	free(t->sts);
	t->sts = NULL;
	t->auth[0] = '\0';
}

static void
test_oom(void)
{
	static const char *const h[] = { XMS_VERSION, DATE, "x-ms-client-request-id: 7",
		"If-Match: \"0x8D1\"", NULL };
	struct sign_trial t = { { "GET", "devstoreaccount1", "/devstoreaccount1/c01",
		"restype=container&comp=list&prefix=run%201%2Fa&maxresults=5000&"
		"marker=2%211%21MDAw&include=b&include=a", h, -1 }, 0,
		"GET\n\n\n\n\n\n\n\n\"0x8D1\"\n\n\n\nx-ms-client-request-id:7\n"
		"x-ms-date:Tue, 01 Dec 2026 12:00:00 GMT\nx-ms-version:2021-08-06\n"
		"/devstoreaccount1/devstoreaccount1/c01\ncomp:list\ninclude:a,b\nmarker:2!1!MDAw\n"
		"maxresults:5000\nprefix:run 1/a\nrestype:container", NULL, "" };
	char err[SR_ERRMAX];

	oom_trial("sr_az_string_to_sign", OOM_OURS, sign_op, sign_check, sign_reset, &t);
	/* the signature of the same request, unarmed, is what the trials must give */
	t.sign = 1;
	if (sr_az_sign(&t.r, KEY, t.auth, err) == -1)
		sr_fatal("%s", err);
	t.want = sr_strdup(t.auth);
	oom_trial("sr_az_sign (OpenSSL's allocations too)", OOM_ALL, sign_op, sign_check,
	    sign_reset, &t);
	free((char *)t.want);
}

int
main(void)
{
	char err[SR_ERRMAX], auth[SR_AZ_AUTH_MAX];

	{
		const char *h[] = { XMS_VERSION, DATE, "x-ms-blob-type: BlockBlob",
			"Content-MD5: XUFAKrxLKna5cZ2REBfFkg==", "If-None-Match: *",
			"Content-Type: application/octet-stream", NULL };
		struct sr_az_request r = { "PUT", "devstoreaccount1",
			"/devstoreaccount1/c01/run%201/a%2Bb/%C3%BC%25.txt", NULL, h, 5 };

		check(&r, "PUT\n\n\n5\nXUFAKrxLKna5cZ2REBfFkg==\napplication/octet-stream\n\n\n\n*\n"
		    "\n\nx-ms-blob-type:BlockBlob\nx-ms-date:Tue, 01 Dec 2026 12:00:00 GMT\n"
		    "x-ms-version:2021-08-06\n/devstoreaccount1/devstoreaccount1/c01/run%201/a%2Bb/"
		    "%C3%BC%25.txt", "SharedKey devstoreaccount1:"
		    "FCl56HKm+Xji9dTAxtIBdtmz/YvPy9kTFeQzTdnwv+U=", "create-only Put Blob");
	}
	{
		const char *h[] = { XMS_VERSION, DATE, NULL };
		struct sr_az_request r = { "GET", "devstoreaccount1", "/devstoreaccount1/c01",
			"restype=container&comp=list&prefix=run%201%2Fa&maxresults=5000&"
			"marker=2%211%21MDAw", h, -1 };

		check(&r, "GET\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:Tue, 01 Dec 2026 12:00:00 GMT\n"
		    "x-ms-version:2021-08-06\n/devstoreaccount1/devstoreaccount1/c01\ncomp:list\n"
		    "marker:2!1!MDAw\nmaxresults:5000\nprefix:run 1/a\nrestype:container",
		    "SharedKey devstoreaccount1:L0w+XK/NzXJZsZah4yZ+coxkCsiDhLK7JjSl8mOgOpg=",
		    "List Blobs");
	}
	{
		const char *h[] = { XMS_VERSION, DATE, "x-ms-content-crc64: YeJLfssylmU=", NULL };
		struct sr_az_request r = { "PUT", "devstoreaccount1", "/devstoreaccount1/c01/p",
			"comp=block&blockid=MDAwMDAwMDAwMQ%3D%3D", h, 0 };

		check(&r, "PUT\n\n\n\n\n\n\n\n\n\n\n\nx-ms-content-crc64:YeJLfssylmU=\n"
		    "x-ms-date:Tue, 01 Dec 2026 12:00:00 GMT\nx-ms-version:2021-08-06\n"
		    "/devstoreaccount1/devstoreaccount1/c01/p\nblockid:MDAwMDAwMDAwMQ==\ncomp:block",
		    "SharedKey devstoreaccount1:yrH0IqCuZGMTmTOs9gOFSrHwKAbLZ093OZiaKB9w2f4=",
		    "Put Block (Content-Length 0 signed as empty)");
	}
	{
		const char *h[] = { "X-MS-Version:   2021-08-06  ", "x-ms-date: d", "range: bytes=0-9",
			"if-match: \"0x8D1\"", NULL };
		struct sr_az_request r = { "DELETE", "acct", "/c/k", "Include=b&include=a&comp=x",
			h, -1 };

		check(&r, "DELETE\n\n\n\n\n\n\n\n\"0x8D1\"\n\n\nbytes=0-9\nx-ms-date:d\n"
		    "x-ms-version:2021-08-06\n/acct/c/k\ncomp:x\ninclude:a,b",
		    NULL, "repeated query names joined, headers in any case, trimmed");
	}
	{
		const char *h[] = { DATE, NULL };
		struct sr_az_request r = { "GET", "acct", "/c", "prefix=%zz", h, -1 };

		ok(sr_az_string_to_sign(&r, err) == NULL, "a broken escape in the query fails");
		is_str(err, "sign request: the query has a '%' without two hex digits",
		    "... message");
		r.query = "prefix=ab%2";
		ok(sr_az_string_to_sign(&r, err) == NULL, "a '%%' at the end with one digit fails");
		r.query = "restype=container";
		is_int(sr_az_sign(&r, "not base64!", auth, err), -1, "a key that is not base64");
		is_str(err, "the account key is not base64 (as the portal and `az storage account "
		    "keys list` give it)", "... message, without the key");
		is_int(sr_az_sign(&r, "abc", auth, err), -1, "a key of the wrong length");
	}
	test_oom();
	return tap_done();
}
