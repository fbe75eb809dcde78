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
 * yet. */
struct sr_parts *sr_s3_mpu_begin(struct sr_s3 *s, const char *key);

#endif
