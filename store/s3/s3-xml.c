/*
 * s3-xml.c: the S3 reply readers of s3-xml.h, each a function over the
 * closed elements that store/xmlwalk.c hands it, picking the elements it
 * knows by path ("ListBucketResult/Contents/Key").
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "s3-xml.h"
#include "util.h"
#include "xmlwalk.h"

static const struct sr_xml_listing s3_shape = {
	.root = "ListBucketResult", .entry = "Contents", .entry_noun = "an entry", .key = "Key",
	.size = "Size", .mtime = "LastModified", .etag = "ETag", .next = "NextContinuationToken",
	.truncated = "IsTruncated",
};

/* GCS's XML API lists as S3, with the generation as the etag. */
static const struct sr_xml_listing gcs_shape = {
	.root = "ListBucketResult", .entry = "Contents", .entry_noun = "an entry", .key = "Key",
	.size = "Size", .mtime = "LastModified", .etag = "Generation",
	.next = "NextContinuationToken", .truncated = "IsTruncated",
};

int
sr_s3_xml_list(const char *body, size_t len, const char *base, int gcs,
    int (*fn)(const struct sr_object_info *info, void *arg), void *arg,
    int *truncated, char **next, char *err)
{
	return sr_xml_list(body, len, gcs ? &gcs_shape : &s3_shape, base, fn, arg, truncated,
	    next, err);
}

struct upload_id_state {
	char *id;
	char *err;
};

static int
upload_id_end(const char *path, const char *text, void *arg)
{
	struct upload_id_state *st = arg;

	if (strcmp(path, "InitiateMultipartUploadResult/UploadId") == 0 &&
	    text != NULL && text[0] != '\0') {
		free(st->id);
		if ((st->id = sr_try_strdup(text, st->err)) == NULL)
			return sr_err_prefix(st->err, "start multipart upload");
	}
	return 0;
}

int
sr_s3_xml_upload_id(const char *body, size_t len, char **id, char *err)
{
	struct upload_id_state st = { NULL, err };

	*id = NULL;
	if (sr_xml_walk(body, len, upload_id_end, &st, err) != 0) {
		free(st.id);
		return -1;
	}
	if (st.id == NULL)
		return sr_err(err, "start multipart upload: the reply has no UploadId");
	*id = st.id;
	return 0;
}

struct uploads_state {
	const char *base;
	int (*fn)(const struct sr_s3_upload *, void *);
	void *fn_arg;
	char key[SR_XML_TEXT_MAX + 1];
	char id[SR_XML_TEXT_MAX + 1];
	int have_key, have_id;
	double initiated;
	int truncated;
	char *next_key, *next_id;
	int is_page;
	char err[SR_ERRMAX];
	int bad;
};

/* Keep text as *dst (malloc'd), or NULL when it is empty. 0, or -1 with
 * us->err on out-of-memory. */
static int
set_marker(struct uploads_state *us, char **dst, const char *text)
{
	free(*dst);
	*dst = NULL;
	if (text[0] != '\0' && (*dst = sr_try_strdup(text, us->err)) == NULL) {
		sr_err_prefix(us->err, "read upload listing");
		us->bad = 1;
		return -1;
	}
	return 0;
}

static int
uploads_end(const char *path, const char *text, void *arg)
{
	static const char root[] = "ListMultipartUploadsResult";
	struct uploads_state *us = arg;
	size_t blen = strlen(us->base);

	if (strcmp(path, root) == 0) {
		us->is_page = 1;
		return 0;
	}
	if (strncmp(path, root, sizeof root - 1) != 0 || path[sizeof root - 1] != '/')
		return 0;
	path += sizeof root;
	if (text == NULL) {
		snprintf(us->err, sizeof us->err, "read upload listing: <%s> is too long", path);
		us->bad = 1;
		return -1;
	}
	if (strcmp(path, "IsTruncated") == 0)
		us->truncated = strcmp(text, "true") == 0;
	else if (strcmp(path, "NextKeyMarker") == 0)
		return set_marker(us, &us->next_key, text);
	else if (strcmp(path, "NextUploadIdMarker") == 0)
		return set_marker(us, &us->next_id, text);
	else if (strcmp(path, "Upload/Key") == 0) {
		sr_xml_copy(us->key, sizeof us->key, text);
		us->have_key = 1;
	} else if (strcmp(path, "Upload/UploadId") == 0 && text[0] != '\0') {
		sr_xml_copy(us->id, sizeof us->id, text);
		us->have_id = 1;
	} else if (strcmp(path, "Upload/Initiated") == 0)
		us->initiated = sr_xml_parse_iso8601(text);
	else if (strcmp(path, "Upload") == 0) {
		struct sr_s3_upload u;
		int rc = 0;

		if (!us->have_key || !us->have_id) {
			snprintf(us->err, sizeof us->err,
			    "read upload listing: an upload without <%s>",
			    us->have_key ? "UploadId" : "Key");
			us->bad = 1;
			return -1;
		}
		if (strlen(us->key) > blen && strncmp(us->key, us->base, blen) == 0) {
			u.key = us->key + blen;
			u.upload_id = us->id;
			u.initiated = us->initiated;
			rc = us->fn(&u, us->fn_arg);
		}
		us->have_key = us->have_id = 0;
		us->initiated = -1;
		return rc;
	}
	return 0;
}

int
sr_s3_xml_uploads(const char *body, size_t len, const char *base,
    int (*fn)(const struct sr_s3_upload *u, void *arg), void *arg,
    int *truncated, char **next_key, char **next_id, char *err)
{
	struct uploads_state *us;
	int rc;

	*truncated = 0;
	*next_key = *next_id = NULL;
	if ((us = sr_try_calloc(1, sizeof *us, err)) == NULL)
		return sr_err_prefix(err, "read upload listing");
	us->base = base;
	us->fn = fn;
	us->fn_arg = arg;
	us->initiated = -1;
	rc = sr_xml_walk(body, len, uploads_end, us, err);
	if (us->bad)
		rc = sr_err(err, "%s", us->err);
	else if (rc == 0 && !us->is_page)
		rc = sr_err(err, "read upload listing: the reply is not a "
		    "ListMultipartUploadsResult");
	else if (rc == 0 && us->truncated && us->next_key == NULL)
		rc = sr_err(err, "read upload listing: truncated without a NextKeyMarker");
	if (rc == 0) {
		*truncated = us->truncated;
		*next_key = us->next_key;
		*next_id = us->next_id;
		us->next_key = us->next_id = NULL;
	}
	free(us->next_key);
	free(us->next_id);
	free(us);
	return rc;
}

struct del_state {
	char key[1100];
	char code[64];
	int failed;
};

static int
delete_end(const char *path, const char *text, void *arg)
{
	struct del_state *d = arg;

	if (d->failed)
		return 0;
	if (strcmp(path, "DeleteResult/Error/Key") == 0)
		sr_xml_copy(d->key, sizeof d->key, text);
	else if (strcmp(path, "DeleteResult/Error/Code") == 0)
		sr_xml_copy(d->code, sizeof d->code, text);
	else if (strcmp(path, "DeleteResult/Error") == 0)
		d->failed = 1;
	return 0;
}

int
sr_s3_xml_delete_result(const char *body, size_t len, char *err)
{
	struct del_state d;

	memset(&d, 0, sizeof d);
	if (sr_xml_walk(body, len, delete_end, &d, err) != 0)
		return -1;
	if (d.failed)
		return sr_err(err, "delete %s: %s", d.key, d.code[0] ? d.code : "failed");
	return 0;
}
