/*
 * az.h: the Azure Blob family of the store's request engine
 * (store/xfer.h) under the az:// store. It knows the account, the
 * container, the prefix and the endpoint (https://ACCOUNT.blob.core.
 * windows.net, or one the URL or a connection string names: Azurite's
 * http://127.0.0.1:10000/ACCOUNT, a sovereign cloud's), signs each attempt
 * (Shared Key, a SAS in the query, or a managed identity's bearer token;
 * x-ms-date and x-ms-version on every request), judges Azure's error
 * replies (backoff on 500 InternalError and OperationTimedOut, 503
 * ServerBusy, 429 and 408; an expired token fetched again once) and words
 * the messages that turn its error codes into what to fix.
 *
 * Never does a secret reach a message: credentials are named by their
 * source, a SAS rides in URLs that no message quotes, and the server's
 * AuthenticationErrorDetail (which can quote a SAS signature) is not shown.
 */
#ifndef SR_AZ_H
#define SR_AZ_H

#include <stddef.h>
#include <time.h>

#include "xfer.h"

struct sr_az;

#define SR_AZ_VERSION "2021-08-06"	/* x-ms-version: Put Block up to 4000 MiB */

/* Which of the reply headers the family keeps (sr_xfer_resp's captured). */
enum { SR_AZ_ERROR_CODE = 0, SR_AZ_CONTENT_MD5 };

/* Open the engine for the URL's rest ("ACCOUNT/CONTAINER[/PREFIX][?opt=
 * value&...]"); reads the environment for the endpoint and the CA bundle
 * (REQUESTS_CA_BUNDLE, as the Azure CLI), fetches nothing; no_metadata:
 * the managed identity is never asked (sr_store_opts). 0, or -1 with err
 * naming the URL part and the fix. */
int sr_az_open(const char *rest, int no_metadata, struct sr_az **out, char *err);
void sr_az_close(struct sr_az *a);
/* Check the URL's syntax (account, container, prefix, options) as
 * sr_az_open would, reading no file or variable and making no request. */
int sr_az_url_check(const char *rest, char *err);

const struct sr_xfer_tuning *sr_az_tuning(const struct sr_az *a);
/* The store's prefix with its trailing '/' ("" when none). */
const char *sr_az_prefix(const struct sr_az *a);
struct sr_xfer *sr_az_xfer(const struct sr_az *a);

/* sr_xfer_do on the store's engine. */
int sr_az_do(struct sr_az *a, const struct sr_xfer_req *rq, struct sr_xfer_resp *resp,
    const char *what, char *err);
/* A presigned GET URL of key (relative to the store's prefix) valid for
 * expires seconds from now (store.h's sr_store_presign): a service SAS
 * signed with the account key, or the URL with the SAS the store was
 * given. *url malloc'd. 0, or -1 with err (a managed identity's token,
 * which signs no URL). */
int sr_az_presign(struct sr_az *a, const char *key, long expires, time_t now, char **url,
    char *err);

/* Describe a final non-2xx reply in err as "WHAT: reason" with the fix
 * where one is known (a wrong key, a rejected SAS or token, no such
 * container, access denied); returns -1. */
int sr_az_fail(struct sr_az *a, const char *what, const struct sr_xfer_resp *resp, char *err);
/* The reply's error code: the body's <Code>, else x-ms-error-code (HEAD
 * replies have no body); "" when none. */
const char *sr_az_code(const struct sr_xfer_resp *resp);

/* "%XX"-encode s (RFC 3986: unreserved characters kept, and '/' when
 * keep_slash), malloc'd: blob names in paths, values in queries. NULL with
 * err when out of memory. */
char *sr_az_encode(const char *s, int keep_slash, char *err);

#endif
