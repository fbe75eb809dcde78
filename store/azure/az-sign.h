/*
 * az-sign.h: Azure Storage's Shared Key authorization (learn.microsoft.com,
 * "Authorize with Shared Key"), the signature of the az:// store's requests
 * when it holds the account key. The string to sign is
 *
 *   VERB \n Content-Encoding \n Content-Language \n Content-Length \n
 *   Content-MD5 \n Content-Type \n Date \n If-Modified-Since \n If-Match \n
 *   If-None-Match \n If-Unmodified-Since \n Range \n
 *   CanonicalizedHeaders CanonicalizedResource
 *
 * where a Content-Length of 0 is signed as empty (versions 2015-02-21 and
 * later), the canonicalized headers are every x-ms-* header, its name in
 * lower case, sorted by name, "name:value\n" with the value trimmed, and
 * the canonicalized resource is "/" ACCOUNT followed by the URL's path as
 * sent (so a path-style endpoint, Azurite's /devstoreaccount1/..., names
 * the account twice), then "\nname:value" for each query parameter, the
 * name in lower case, the value decoded, sorted by name, the values of a
 * repeated name sorted and joined by ','. The Authorization header is
 * "SharedKey ACCOUNT:" + base64(HMAC-SHA256(base64-decoded key, string)).
 */
#ifndef SR_AZ_SIGN_H
#define SR_AZ_SIGN_H

#include <stddef.h>

#define SR_AZ_AUTH_MAX 256	/* "SharedKey " + account + ":" + 44 characters */

/* One request as Shared Key signs it. */
struct sr_az_request {
	const char *method;
	const char *account;
	const char *path;		/* the URL's path as sent (percent-encoded), from its '/' */
	const char *query;		/* the URL's query as sent, without '?', or NULL */
	const char *const *headers;	/* "Name: value" lines, NULL-terminated */
	long long content_length;	/* the body's length; -1 when no body is sent */
};

/* The string to sign of r, malloc'd; NULL with err for a query with a
 * '%' not followed by two hex digits. */
char *sr_az_string_to_sign(const struct sr_az_request *r, char *err);

/* The Authorization value for r signed with the account key key_b64 (its
 * base64 form, as the portal and connection strings give it) into auth
 * (SR_AZ_AUTH_MAX bytes). 0, or -1 with err ("the account key is not
 * base64"), which never quotes the key. */
int sr_az_sign(const struct sr_az_request *r, const char *key_b64, char *auth, char *err);

/* The version of the service SAS that sr_az_sas makes: its sv, which
 * fixes the string to sign's fields (learn.microsoft.com, "Create a
 * service SAS", version 2020-12-06 and later). */
#define SR_AZ_SAS_VERSION "2021-08-06"

/* The string to sign of a read-only service SAS for one blob (sp=r,
 * sr=b, no start, IP, protocol or response headers) expiring at expiry
 * ("YYYY-MM-DDTHH:MM:SSZ"): "r\n\nEXPIRY\n/blob/ACCOUNT/CONTAINER/BLOB\n
 * \n\n\nVERSION\nb\n\n\n\n\n\n\n", the blob's name as it is (not
 * encoded). malloc'd; NULL with err (out of memory). */
char *sr_az_sas_string_to_sign(const char *account, const char *container, const char *blob,
    const char *expiry, char *err);
/* That SAS's signature under the account key key_b64: base64 (44
 * characters and a NUL into sig), to be percent-encoded as the sig=
 * parameter beside sv=SR_AZ_SAS_VERSION&sr=b&sp=r&se=EXPIRY. 0, or -1
 * with err as sr_az_sign's. */
int sr_az_sas_sign(const char *account, const char *container, const char *blob,
    const char *expiry, const char *key_b64, char sig[45], char *err);

#endif
