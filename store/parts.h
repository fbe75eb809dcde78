/*
 * parts.h: streaming uploads in parallel parts, for store.h's sr_upload on
 * the network stores: S3's multipart uploads (store/s3/s3-mpu.c) and
 * Azure's Put Block + Put Block List (store/azure/). Bytes are cut into
 * parts of the store's part size, and the parts go up in parallel (the
 * store's concurrency) on one curl multi handle driven by a thread of the
 * upload's own, while the writer goes on filling the next part. The writer
 * waits only when every slot is busy, so memory stays at most (concurrency
 * + 1) parts, whatever the family. Each part carries the store's checksum
 * (digest.h), computed on hasher threads; a part that fails is retried
 * (xfer.h's policy); when one cannot be sent, the upload is dropped on the
 * server and nothing becomes visible. An object smaller than one part is
 * one request.
 *
 * What differs between families is in struct sr_parts_ops: how an upload
 * starts, what a part's request is, how the parts become one object, how
 * an unfinished upload is dropped.
 */
#ifndef SR_PARTS_H
#define SR_PARTS_H

#include <stddef.h>

#include "xfer.h"

struct sr_parts;

struct sr_parts_ops {
	/* Start the upload on the server before its first part goes (S3's
	 * CreateMultipartUpload); NULL: nothing to start. 0, or -1 with err. */
	int (*begin)(void *arg, struct sr_parts *p, char *err);
	/* The query of part num (1-based), malloc'd; NULL on OOM (the upload
	 * then fails with "out of memory"). */
	char *(*part_query)(void *arg, int num);
	/* A part's reply must carry an ETag, which the commit names (S3). */
	int part_etag;
	/* The server's limit on parts per object. */
	int max_parts;
	/* The store option that sets the part size (for the message when an
	 * object needs more than max_parts). */
	const char *size_option;
	/* The whole object in one request, when it is smaller than a part. */
	int (*whole)(void *arg, struct sr_parts *p, const void *buf, size_t len, char *err);
	/* Make the parts, all on the server, one visible object. 0, or -1. */
	int (*commit)(void *arg, struct sr_parts *p, char *err);
	/* Best effort: drop what the server holds of an upload that will not
	 * be committed; called only when begin succeeded or a part's request
	 * was prepared (it may have reached the server). */
	void (*abort)(void *arg, struct sr_parts *p);
	/* Free arg when the upload ends. */
	void (*free)(void *arg);
};

/* Start an upload of key (under the store's prefix) on engine x; ops and
 * arg (handed to every op) describe the family. Nothing is sent yet. arg
 * is the upload's from here on, freed by ops->free when it ends; NULL
 * with err ("upload KEY: ...") on OOM, when arg is freed at once. */
struct sr_parts *sr_parts_begin(struct sr_xfer *x, const struct sr_parts_ops *ops, void *arg,
    const char *key, char *err);
/* Append bytes. 0, or -1 with err when the upload has failed (then only
 * abort is left to call). */
int sr_parts_write(struct sr_parts *p, const void *buf, size_t len, char *err);
/* Send what is left, wait for every part and commit: the object becomes
 * visible whole. Frees p. 0, or -1 with err (the upload is then dropped on
 * the server). */
int sr_parts_commit(struct sr_parts *p, char *err);
/* Give up (fail writes and the commit) once the epoch deadline passes (0:
 * none) or *cancel (may be NULL) turns nonzero. */
void sr_parts_limit(struct sr_parts *p, double deadline, volatile int *cancel);
/* Stop, drop the upload on the server, free p. Safe on NULL. */
void sr_parts_abort(struct sr_parts *p);

/* store-int.h's upload operations for a backend whose sr_upload's priv is
 * a struct sr_parts (set by its upload_begin). */
struct sr_upload;
int sr_parts_up_write(struct sr_upload *up, const void *buf, size_t len, char *err);
int sr_parts_up_commit(struct sr_upload *up, char *err);
void sr_parts_up_limit(struct sr_upload *up, double deadline, volatile int *cancel);
void sr_parts_up_abort(struct sr_upload *up);

/* For the ops: the key, "upload KEY" for messages, the parts so far, the
 * ETag the server gave part i (0-based; "" without one), and the limits
 * every request of the upload must honour. */
const char *sr_parts_key(const struct sr_parts *p);
const char *sr_parts_what(const struct sr_parts *p);
int sr_parts_count(const struct sr_parts *p);
const char *sr_parts_etag(const struct sr_parts *p, int i);
double sr_parts_deadline(const struct sr_parts *p);
volatile int *sr_parts_cancel(const struct sr_parts *p);

#endif
