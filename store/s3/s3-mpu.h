/*
 * s3-mpu.h: S3's multipart uploads as the family of store/parts.h: an
 * upload starts with CreateMultipartUpload, parts are UploadPart requests
 * whose ETags CompleteMultipartUpload names, and an upload that will not
 * be completed is aborted (AbortMultipartUpload). An object smaller than
 * one part is one PUT with a Content-MD5.
 */
#ifndef SR_S3_MPU_H
#define SR_S3_MPU_H

struct sr_s3;
struct sr_parts;

/* Start an upload of key (under the store's prefix); drive it with
 * parts.h's sr_parts_write, _limit, _commit and _abort. Nothing is sent
 * yet. NULL with err on out-of-memory. */
struct sr_parts *sr_s3_mpu_begin(struct sr_s3 *s, const char *key, char *err);

/* AbortMultipartUpload (DELETE ?uploadId=) of key's upload_id, retried
 * until the epoch deadline when one is given (0: the tuning's count): 0
 * when aborted, 1 when the server no longer has the upload (completed or
 * aborted meanwhile), -1 with err. After an attempt that broke off,
 * NoSuchUpload is that attempt's doing: counted as aborted. */
int sr_s3_mpu_abort(struct sr_s3 *s, const char *key, const char *upload_id, double deadline,
    char *err);

/* Abort the uploads whose abort did not reach the server before (s3.h's
 * owed aborts), each as sr_s3_mpu_abort with deadline; those that fail
 * again stay owed. Returns how many are still owed. */
int sr_s3_mpu_settle(struct sr_s3 *s, double deadline);

#endif
