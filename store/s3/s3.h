/*
 * s3.h: the S3 family of the store's request engine (store/xfer.h) under
 * the s3:// and gs:// stores. It knows the bucket, the prefix, the
 * endpoint (AWS's virtual-hosted URL, or a custom endpoint path-style), the
 * region, the credentials, and signs each attempt with SigV4; it judges
 * S3's error replies: full-jitter backoff on 5xx, 429, SlowDown,
 * RequestTimeout and 409 ConditionalRequestConflict; the right region taken
 * from an AuthorizationHeaderMalformed reply; role credentials refetched
 * once when the server calls them expired; and it words the messages that
 * turn S3's error codes into what to fix. The engine (retries, stalls,
 * deadlines, the pool of connections) is store/xfer.c's.
 *
 * Never does a secret reach an error message: messages name the credentials
 * by their source only.
 */
#ifndef SR_S3_H
#define SR_S3_H

#include <stddef.h>
#include <time.h>

#include "s3-xml.h"
#include "store.h"
#include "xfer.h"

struct sr_s3;

/* Which of the reply headers the S3 family keeps (struct
 * sr_xfer_resp's captured). */
enum { SR_S3_GENERATION = 0, SR_S3_BUCKET_REGION };

/* Open the engine for scheme ("s3" or "gs") and the URL's rest
 * ("bucket[/prefix][?opt=value&...]"): resolves config and credentials
 * (creds.h); no_metadata: the instance role is never asked (sr_store_opts).
 * 0, or -1 with err naming the URL part and the fix. */
int sr_s3_open(const char *scheme, const char *rest, int no_metadata, struct sr_s3 **out,
    char *err);
void sr_s3_close(struct sr_s3 *s);
/* Check the URL's syntax (bucket, prefix, options) as sr_s3_open would,
 * reading no file and making no request. 0, or -1 with err. */
int sr_s3_url_check(const char *scheme, const char *rest, char *err);

int sr_s3_is_gcs(const struct sr_s3 *s);
const struct sr_xfer_tuning *sr_s3_tuning(const struct sr_s3 *s);
/* The store's prefix with its trailing '/' ("" when none): keys in listings
 * start with it. */
const char *sr_s3_prefix(const struct sr_s3 *s);

/* The request engine of the store (xfer.h): sr_xfer_do and the part
 * uploads run on it. */
struct sr_xfer *sr_s3_xfer(const struct sr_s3 *s);

/* Keep (copies of) key and upload_id: an upload whose abort did not
 * reach the server, for s3-mpu.c to abort when it can. 0, or -1 with err
 * on out-of-memory (the upload is then left to the store's stale-upload
 * cleanup, sr_store_abort_stale_uploads). Thread-safe. */
int sr_s3_owe_abort(struct sr_s3 *s, const char *key, const char *upload_id, char *err);
/* Hand over every owed abort: their count, the keys and upload ids in
 * malloc'd arrays of malloc'd strings (the caller frees them all); the
 * handle owes none after. Thread-safe. */
size_t sr_s3_owed_take(struct sr_s3 *s, char ***keys, char ***ids);

/* A presigned GET URL of key (relative to the store's prefix) valid for
 * expires seconds from now (store.h's sr_store_presign): S3's query
 * signing (X-Amz-*), or GCS's V4 signed URL with HMAC keys
 * (GOOG4-HMAC-SHA256, X-Goog-*). *url malloc'd. 0, or -1 with err. */
int sr_s3_presign(struct sr_s3 *s, const char *key, long expires, time_t now, char **url,
    char *err);

/* sr_xfer_do on the store's engine. */
int sr_s3_do(struct sr_s3 *s, const struct sr_xfer_req *rq, struct sr_xfer_resp *resp,
    const char *what, char *err);

/* Describe a final non-2xx reply in err as "WHAT: reason" with the fix
 * where one is known (wrong secret, clock skew, no such bucket, access
 * denied, ...); returns -1. */
int sr_s3_fail(struct sr_s3 *s, const char *what, const struct sr_xfer_resp *resp, char *err);

#endif
