/*
 * s3-xml.h: reading the XML replies of S3 (and of GCS's S3-compatible XML
 * API): ListObjectsV2 pages, the upload id of a new multipart upload,
 * ListMultipartUploads pages, and the per-key errors of a batch delete
 * (error documents are store/xmlwalk.h's, which Azure shares). Each reader
 * takes the whole reply (S3 pages are at most ~1000 keys, a few hundred
 * KiB) and streams it through store/xmlwalk.c, so no document tree is built.
 */
#ifndef SR_S3_XML_H
#define SR_S3_XML_H

#include <stddef.h>

#include "store.h"

/* One ListObjectsV2 page, as xmlwalk.h's sr_xml_list reads it: for each
 * <Contents> its key less the store's prefix base, Size, LastModified and
 * the ETag without quotes, or with gcs the <Generation> (what a gs:// CAS
 * compares); *truncated from IsTruncated, *next the NextContinuationToken.
 * Returns as sr_xml_list. */
int sr_s3_xml_list(const char *body, size_t len, const char *base, int gcs,
    int (*fn)(const struct sr_object_info *info, void *arg), void *arg,
    int *truncated, char **next, char *err);

/* The <UploadId> of an InitiateMultipartUploadResult, malloc'd into *id;
 * -1 with err when the reply lacks one. */
int sr_s3_xml_upload_id(const char *body, size_t len, char **id, char *err);

/* One unfinished multipart upload of a ListMultipartUploads page. */
struct sr_s3_upload {
	const char *key;	/* less the store's prefix; valid during the callback */
	const char *upload_id;	/* valid during the callback */
	double initiated;	/* <Initiated>, epoch seconds; -1 when missing or unreadable */
};

/* One ListMultipartUploads page. For each <Upload> in order, call fn with
 * its key less the store's prefix base (keys not starting with base, or
 * equal to it, are skipped), its UploadId and Initiated time. A nonzero
 * return from fn stops and is returned. Else 0, with *truncated and the
 * markers of the next page (NextKeyMarker and NextUploadIdMarker, malloc'd,
 * NULL when absent or empty; *next_key is set whenever *truncated is) set;
 * or -1 with err for a reply that is not such a page, an upload without
 * <Key> or <UploadId>, or a truncated page without a NextKeyMarker. */
int sr_s3_xml_uploads(const char *body, size_t len, const char *base,
    int (*fn)(const struct sr_s3_upload *u, void *arg), void *arg,
    int *truncated, char **next_key, char **next_id, char *err);

/* A DeleteResult: 0 when it names no <Error>; else -1 with err naming the
 * first failed key and its code. */
int sr_s3_xml_delete_result(const char *body, size_t len, char *err);

#endif
