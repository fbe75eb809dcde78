/*
 * az-creds.h: where the az:// store gets its credentials, found by the
 * Azure CLI's conventions for `az storage`, first found wins:
 *
 *   1. AZURE_STORAGE_CONNECTION_STRING: AccountName with AccountKey (Shared
 *      Key) or SharedAccessSignature (a SAS); its BlobEndpoint, or
 *      DefaultEndpointsProtocol with EndpointSuffix, is also the store's
 *      endpoint unless the URL names one; UseDevelopmentStorage=true is
 *      Azurite's well-known account on http://127.0.0.1:10000;
 *   2. AZURE_STORAGE_KEY: the account key (Shared Key);
 *   3. AZURE_STORAGE_SAS_TOKEN: a SAS (with or without its leading '?');
 *   4. the VM's managed identity: an OAuth token for
 *      https://storage.azure.com/ from the instance metadata service (GET
 *      /metadata/identity/oauth2/token?api-version=2018-02-01 with
 *      "Metadata: true"; a user-assigned identity by AZURE_CLIENT_ID), at
 *      $SPOTRUN_AZURE_ENDPOINT, else http://169.254.169.254; 1 s to
 *      connect, 2 s per request, so a laptop without keys fails fast. No
 *      key is kept on the VM: the token is refreshed 5 minutes before its
 *      expires_on (store/credcache.c).
 *
 * The account is the store URL's; AZURE_STORAGE_ACCOUNT, when set, must
 * name the same one (the key or SAS beside it is that account's), as must
 * a connection string's AccountName. The secrets never reach a message: the
 * `source` field and every error name the variable, never its value.
 */
#ifndef SR_AZ_CREDS_H
#define SR_AZ_CREDS_H

#include <stddef.h>

#include "credcache.h"

/* struct sr_creds's form for the az:// store: what session_token or
 * secret_key holds. */
enum sr_az_form { SR_AZ_SHARED_KEY = 1, SR_AZ_SAS, SR_AZ_BEARER };

/* Azurite's account and its published key (UseDevelopmentStorage=true). */
#define SR_AZ_DEV_ACCOUNT "devstoreaccount1"
#define SR_AZ_DEV_ENDPOINT "http://127.0.0.1:10000/devstoreaccount1"

/*
 * The endpoint the environment gives for account: a connection string's
 * BlobEndpoint, or PROTOCOL://ACCOUNT.blob.SUFFIX from its
 * DefaultEndpointsProtocol (https when absent) and EndpointSuffix, or
 * Azurite's for UseDevelopmentStorage=true; "" when none (the store then
 * uses https://ACCOUNT.blob.core.windows.net). Reads the environment only.
 * 0, or -1 with err (a malformed connection string, another account's).
 */
int sr_az_env_endpoint(const char *account, char *endpoint, size_t len, char *err);

/*
 * The token service's reply (status and body) to the GET of url (named in
 * messages; its query left out) as the managed identity's credentials into
 * out (form, session_token, expires, source naming client, the
 * AZURE_CLIENT_ID or NULL). 0, or -1 with err ("GET URL: ...": the
 * service's own reason for a refusal, a reply that is no token, out of
 * memory), which never quotes the token; the token's copies made while
 * reading are wiped.
 */
int sr_az_token_reply(long status, const char *body, size_t len, const char *url,
    const char *client, struct sr_creds *out, char *err);

/* The chain (credcache.h) over the sources above for account; imds is
 * the metadata service's base URL, NULL for $SPOTRUN_AZURE_ENDPOINT or
 * http://169.254.169.254; the managed identity is not asked with
 * no_metadata or SPOTRUN_AZURE_METADATA_DISABLED=true. Nothing is read
 * until the first sr_creds_get. NULL with err when out of memory. */
struct sr_creds_chain *sr_az_creds_chain(const char *account, const char *imds, int no_metadata,
    char *err);

#endif
