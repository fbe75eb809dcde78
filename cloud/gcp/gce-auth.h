/*
 * gce-auth.h: the GCP engine's OAuth 2 access tokens, found as gcloud and
 * Google's client libraries find application default credentials, first
 * found wins:
 *
 *   1. the file the caller names, else $GOOGLE_APPLICATION_CREDENTIALS
 *      (set but unreadable is an error, not a fall-through);
 *   2. gcloud's file: $CLOUDSDK_CONFIG/application_default_credentials.json,
 *      else ~/.config/gcloud/application_default_credentials.json (`gcloud
 *      auth application-default login` writes it);
 *   3. the VM's metadata server: GET METADATA/computeMetadata/v1/instance/
 *      service-accounts/default/token with "Metadata-Flavor: Google",
 *      whose reply must carry the same header (as the providers' probe
 *      checks it, so that a captive portal cannot pass for it); not when
 *      the caller or $NO_GCE_CHECK forbids it. METADATA is the caller's,
 *      else http://$GCE_METADATA_HOST, else http://metadata.google.internal;
 *      1 s to connect, so a laptop without credentials fails fast.
 *
 * A file is one of gcloud's two kinds ("type"): "authorized_user"
 * (client_id, client_secret, refresh_token: a refresh-token grant POSTed to
 * its token_uri) or "service_account" (client_email, private_key, a PEM
 * RSA key, private_key_id: a JWT signed RS256 with OpenSSL, exchanged at
 * token_uri with the jwt-bearer grant). token_uri is the file's, else
 * $SPOTRUN_GCE_TOKEN_URI, else https://oauth2.googleapis.com/token. The
 * scope is cloud-platform. A token is kept until 5 minutes before its
 * expires_in runs out (or until rejected). Errors name the file and the
 * key ("read credentials FILE: service_account: no \"private_key\""),
 * never a secret.
 */
#ifndef SR_GCE_AUTH_H
#define SR_GCE_AUTH_H

#include <stddef.h>

#define SR_GCE_SCOPE		"https://www.googleapis.com/auth/cloud-platform"
#define SR_GCE_TOKEN_URI	"https://oauth2.googleapis.com/token"
#define SR_GCE_METADATA		"http://metadata.google.internal"

struct sr_gce_auth;

struct sr_gce_auth_opts {
	const char *file;		/* NULL: as above */
	const char *metadata;		/* NULL: as above */
	int no_metadata;
	double timeout;			/* seconds per token request; <= 0: 30 */
};

/* Find the credentials (reading a file now, so its errors come at once).
 * 0, or -1 with err. */
int sr_gce_auth_new(const struct sr_gce_auth_opts *o, struct sr_gce_auth **out, char *err);
void sr_gce_auth_free(struct sr_gce_auth *a);

/* A valid access token into tok (len bytes), fetched when none is kept or
 * it is near its expiry. 0, or -1 with err ("get token from SOURCE: ...").
 * Thread-safe. */
int sr_gce_auth_token(struct sr_gce_auth *a, char *tok, size_t len, char *err);
/* Forget the kept token (Compute answered 401). */
void sr_gce_auth_reject(struct sr_gce_auth *a);

/* What the credentials say of the project: a key's project_id, a user's
 * quota_project_id; "" when they say nothing. */
const char *sr_gce_auth_project(const struct sr_gce_auth *a);
/* The project to bill an authorized user's requests to (the
 * x-goog-user-project header), or "". */
const char *sr_gce_auth_quota_project(const struct sr_gce_auth *a);
/* Where the token comes from, for messages: "service account EMAIL (FILE)",
 * "authorized user (FILE)", "metadata server URL". */
const char *sr_gce_auth_source(const struct sr_gce_auth *a);
/* The metadata server's project-id (GET .../project/project-id): 0 with
 * out filled, or -1 with err; -1 at once when the credentials are no
 * metadata server's. */
int sr_gce_auth_metadata_project(struct sr_gce_auth *a, char *out, size_t len, char *err);

/* A JWT for Google's token endpoint, signed RS256 with pem (a PEM private
 * key): header {"alg":"RS256","typ":"JWT","kid":kid}, claims iss, scope,
 * aud, iat, exp = iat + 3600. *out (malloc'd) holds it. 0, or -1 with err. */
int sr_gce_jwt(const char *pem, const char *kid, const char *iss, const char *aud,
    const char *scope, long iat, char **out, char *err);

#endif
