/*
 * creds.h: where the s3:// and gs:// stores get their keys and settings,
 * resolved the way the AWS CLI (and, for gs://, gsutil) resolves them.
 *
 * AWS credentials, first found wins:
 *   1. env: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN);
 *   2. the profile (opts, else $AWS_PROFILE, else "default"): [NAME] in the
 *      shared credentials file ($AWS_SHARED_CREDENTIALS_FILE, else
 *      ~/.aws/credentials), then [profile NAME] ([default] for default) in
 *      the config file ($AWS_CONFIG_FILE, else ~/.aws/config); keys come
 *      all from one file, the credentials file first;
 *   3. the EC2 instance role through IMDSv2 (opts, else
 *      $SPOTRUN_AWS_ENDPOINT, else $AWS_EC2_METADATA_SERVICE_ENDPOINT, else
 *      http://169.254.169.254), unless AWS_EC2_METADATA_DISABLED=true; 1 s
 *      to connect, 2 s per request, so a laptop without keys fails fast.
 * Role credentials are cached (store/credcache.c) and fetched again within
 * 5 minutes of their Expiration or after sr_creds_invalidate.
 *
 * GCS HMAC keys (gs:// speaks S3's XML API, SigV4 with region "auto"): env
 * GS_ACCESS_KEY_ID + GS_SECRET_ACCESS_KEY, else gs_access_key_id and
 * gs_secret_access_key under [Credentials] in the boto config gsutil reads
 * ($BOTO_CONFIG, else ~/.boto).
 *
 * The files are INI as Python's configparser reads them (comments, unknown
 * keys and sections, indented sub-keys tolerated; a duplicate section or key
 * is an error, as for the CLI). A missing file is no error; a malformed one
 * is "read FILE:LINE: reason".
 *
 * No function here prints or returns a secret in a message: the `source`
 * field and every error name where keys came from, never the keys.
 */
#ifndef SR_CREDS_H
#define SR_CREDS_H

#include "credcache.h"

enum sr_creds_kind { SR_CREDS_AWS = 0, SR_CREDS_GCS };

struct sr_store_config {
	char region[64];		/* never empty: "us-east-1" by default, "auto" for GCS */
	char endpoint[512];		/* "" when none: the backend then uses AWS's virtual-hosted URL */
	char ca_bundle[4096];		/* "" when none */
	char profile[128];		/* the AWS profile used; "" for GCS */
};

struct sr_creds_opts {
	enum sr_creds_kind kind;
	const char *profile;		/* NULL: $AWS_PROFILE, else "default" */
	const char *imds_endpoint;	/* NULL: $SPOTRUN_AWS_ENDPOINT, else http://169.254.169.254 */
	int no_imds;			/* never ask IMDS, as AWS_EC2_METADATA_DISABLED=true */
};

/*
 * Load the store settings for o->kind into cfg. AWS: region from
 * AWS_REGION, AWS_DEFAULT_REGION, the profile's `region` in the config
 * file, else "us-east-1"; endpoint from AWS_ENDPOINT_URL_S3,
 * AWS_ENDPOINT_URL, the profile's services section (`s3 =` then an
 * indented `endpoint_url = URL`), the profile's `endpoint_url`, else ""
 * (all ignored when AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true or the
 * profile says ignore_configured_endpoint_urls = true); trailing '/'
 * dropped; CA bundle from AWS_CA_BUNDLE, else the profile's ca_bundle.
 * A profile named explicitly (opts or AWS_PROFILE) must exist in one of
 * the two files. GCS: region "auto", endpoint $GS_ENDPOINT_URL else
 * https://storage.googleapis.com, CA bundle from the boto config's
 * [Boto] ca_certificates_file. 0, or -1 with err.
 */
int sr_store_config_load(const struct sr_creds_opts *o, struct sr_store_config *cfg, char *err);

/* A chain (credcache.h) over the sources of o (copied; o's strings need
 * not outlive the call), for sr_creds_get and the rest of credcache.h.
 * Nothing is read until the first sr_creds_get. 0, or -1 with err. */
int sr_creds_chain_new(const struct sr_creds_opts *o, struct sr_creds_chain **out, char *err);

#endif
