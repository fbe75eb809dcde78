/*
 * s3-mpu.h: streaming uploads to S3 for store.h's sr_upload: bytes are cut
 * into parts of the store's part size, and the parts go up in parallel
 * (the store's concurrency) on one curl multi handle driven by a thread of
 * the upload's own, while the writer goes on filling the next part. The
 * writer waits only when every slot is busy, so memory stays at most
 * (concurrency + 1) parts. An object smaller than one part is one PUT.
 * Each part carries a Content-MD5; a part that fails is retried (s3.h's
 * policy); when one cannot be sent, the upload is aborted on the server
 * and nothing becomes visible.
 */
#ifndef SR_S3_MPU_H
#define SR_S3_MPU_H

#include <stddef.h>

struct sr_s3;
struct sr_s3_mpu;

/* Start an upload of key (under the store's prefix). Nothing is sent yet. */
struct sr_s3_mpu *sr_s3_mpu_begin(struct sr_s3 *s, const char *key);
/* Append bytes. 0, or -1 with err when the upload has failed (then only
 * abort is left to call). */
int sr_s3_mpu_write(struct sr_s3_mpu *m, const void *buf, size_t len, char *err);
/* Send what is left, wait for every part and complete the upload: the
 * object becomes visible whole. Frees m. 0, or -1 with err (the multipart
 * upload is then aborted on the server). */
int sr_s3_mpu_commit(struct sr_s3_mpu *m, char *err);
/* Give up (fail writes and the commit) once the epoch deadline passes (0:
 * none) or *cancel (may be NULL) turns nonzero. */
void sr_s3_mpu_limit(struct sr_s3_mpu *m, double deadline, volatile int *cancel);
/* Stop, abort the multipart upload on the server, free m. Safe on NULL. */
void sr_s3_mpu_abort(struct sr_s3_mpu *m);

#endif
