/*
 * xmlwalk.h: reading the XML replies of the network stores (S3 and GCS's
 * XML API in store/s3/, Azure Blob in store/azure/) with expat as a stream
 * of closed elements, each named by its path of local names
 * ("ListBucketResult/Contents/Key", "EnumerationResults/Blobs/Blob/Name"),
 * so no document tree is built and a page of thousands of keys costs no
 * more memory than its text. Readers pick the paths they know; anything
 * else in a reply is ignored, so new elements from a server do no harm.
 * Also the <Error> document both families answer failures with, and their
 * listing pages, whose shapes differ only in names.
 */
#ifndef SR_XMLWALK_H
#define SR_XMLWALK_H

#include <stddef.h>

#include "store.h"

#define SR_XML_TEXT_MAX	4096	/* longest element text kept (keys are <= 1024 bytes) */

/*
 * Walk body (len bytes), calling end for every element that closes, in
 * document order, with its path and its text (NULL when the text was longer
 * than SR_XML_TEXT_MAX: the reader decides whether that is an error). A
 * nonzero return from end stops the walk and is returned. Else 0 when the
 * document was read through, or -1 with err ("read reply: not XML: REASON
 * at line N") when it is not well-formed XML, or ("read reply: ...: out of
 * memory") when expat or the walk could not allocate.
 */
int sr_xml_walk(const char *body, size_t len,
    int (*end)(const char *path, const char *text, void *arg), void *arg, char *err);

/* Copy text (NULL reads as "") into dst of cap bytes, cut to fit. */
void sr_xml_copy(char *dst, size_t cap, const char *text);

/* The parts of an <Error> document (S3, GCS, Azure) the stores act on. */
struct sr_xml_error {
	char code[64];		/* "NoSuchKey", "SlowDown", "BlobAlreadyExists" ("" if none) */
	char message[256];
	char region[64];	/* S3's AuthorizationHeaderMalformed: the right region */
	char server_time[40];	/* S3's RequestTimeTooSkewed: the server's clock */
	char request_time[40];	/*   ... and what the request said */
	char detail[256];	/* Azure's AuthenticationErrorDetail */
};

/* Parse an error reply. 0 when body is an <Error> document with a <Code>
 * (e filled, its strings cut to fit), 1 when it is not (e zeroed), -1 with
 * err when it could not be read for want of memory (e zeroed). */
int sr_xml_error(const char *body, size_t len, struct sr_xml_error *e, char *err);

/* Where a listing page (S3's ListObjectsV2, Azure's List Blobs) keeps what
 * store.h's listing gives: paths below root, those of an entry's fields
 * below the entry. */
struct sr_xml_listing {
	const char *root;	/* "ListBucketResult", "EnumerationResults" */
	const char *entry;	/* "Contents", "Blobs/Blob" */
	const char *entry_noun;	/* for messages: "an entry", "a blob" */
	const char *key;	/* "Key", "Name" */
	const char *size;	/* "Size", "Properties/Content-Length" */
	const char *mtime;	/* ISO 8601 or RFC 1123: "LastModified" */
	const char *etag;	/* "ETag" (quotes dropped), "Generation" */
	const char *next;	/* "NextContinuationToken", "NextMarker" */
	const char *truncated;	/* "IsTruncated"; NULL: truncated when next is there */
};

/*
 * One listing page of that shape. For each entry in order, call fn with
 * its key less the store's prefix base (keys not starting with it, or
 * equal to it, are skipped: a server that ignores prefix= gives no key of
 * another's), its size, time and etag. A nonzero return from fn stops and
 * is returned. Else 0, with *truncated and *next (malloc'd, NULL on the
 * last page) set; or -1 with err ("read listing: ...") for a reply that is
 * not such a page, an entry without a key, or a field too long.
 */
int sr_xml_list(const char *body, size_t len, const struct sr_xml_listing *shape,
    const char *base, int (*fn)(const struct sr_object_info *info, void *arg), void *arg,
    int *truncated, char **next, char *err);

/* "2026-11-30T05:10:00.000Z" (S3's listings and error times) to epoch
 * seconds; -1 for anything else. */
double sr_xml_parse_iso8601(const char *s);

#endif
