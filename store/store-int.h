/*
 * store-int.h: what a store backend (file://, s3://, gs:// and az://)
 * provides to store.c, and the helpers store.c shares with the backends.
 * Not for users of the store: they include store.h.
 *
 * store.c parses the URL's scheme, validates every key and argument, and
 * then calls the backend, so a backend may assume: keys pass
 * sr_store_key_check, list (and abort_stale) prefixes pass
 * sr_store_prefix_check, if_match is
 * non-NULL exactly when mode is SR_PUT_MATCH, and buffers are non-NULL when
 * their length is not zero. Backends fill err as store.h promises
 * ("verb key: reason") and return the sr_store_rc codes.
 */
#ifndef SR_STORE_INT_H
#define SR_STORE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "store.h"

struct sr_store_backend {
	const char *scheme;	/* "file": matches URLs "file://..." */
	/* The URL's form in messages, after "scheme://" ("bucket/prefix"),
	 * and what names its root, which must follow "scheme://" ("bucket",
	 * "account"; NULL: the form itself says, as file's "/absolute/path"). */
	const char *form;
	const char *root;
	/* A directory of this machine: agents elsewhere do not see it. */
	int local;
	/* Keys one delete request takes (sr_store_delete_many); 0: 1. */
	size_t delete_batch;
	/* What a VM must bring to reach it that its cloud role does not
	 * give (sr_store_url_vm_note); NULL: nothing. */
	const char *vm_note;
	/* Seconds the service wants between two writes of one key (GCS: one a
	 * second per object name); 0: no such limit. store.c paces a handle's
	 * own writes by it (pace.h). */
	double write_interval;
	/* Check rest's syntax with no I/O (sr_store_url_check): 0, or -1
	 * with err "open store SCHEME://REST: reason"; NULL: none. */
	int (*check)(const char *rest, char *err);
	/* Open the store; rest is the URL after "scheme://". Set st->priv. */
	int (*open)(struct sr_store *st, const char *rest, char *err);
	/* Free st->priv (st itself is store.c's). */
	void (*close)(struct sr_store *st);

	int (*put)(struct sr_store *st, const char *key, const void *buf, size_t len,
	    enum sr_put_mode mode, const char *if_match, char *etag_out, char *err);
	int (*get)(struct sr_store *st, const char *key, size_t max, void **buf,
	    size_t *len, char *etag_out, char *err);
	int (*read_range)(struct sr_store *st, const char *key, uint64_t off, size_t len,
	    void *buf, char *err);
	int (*head)(struct sr_store *st, const char *key, struct sr_object_info *info,
	    char *err);
	int (*list)(struct sr_store *st, const char *prefix,
	    int (*fn)(const struct sr_object_info *info, void *arg), void *arg, char *err);
	int (*del)(struct sr_store *st, const char *key, char *err);
	/* Delete n keys, missing ones included, in as few requests as the
	 * backend can; NULL: store.c calls del for each. */
	int (*del_many)(struct sr_store *st, const char *const *keys, size_t n, char *err);

	/* Streaming upload: begin sets up->priv; commit and abort free it
	 * (store.c frees up itself). */
	int (*upload_begin)(struct sr_upload *up, char *err);
	int (*upload_write)(struct sr_upload *up, const void *buf, size_t len, char *err);
	/* Commits up->defer_flush ones too: visible, not yet made durable. */
	int (*upload_commit)(struct sr_upload *up, char *err);
	/* sr_store_flush; NULL: every commit is durable by itself. */
	int (*flush)(struct sr_store *st, const char *const *keys, size_t n, char *err);
	/* sr_upload_align; NULL: every piece is copied (0). */
	size_t (*upload_align)(const struct sr_upload *up, size_t *min);
	/* sr_upload_limit; NULL: the backend cannot hang (a local disk). */
	void (*upload_limit)(struct sr_upload *up, double deadline, volatile int *cancel);
	void (*upload_abort)(struct sr_upload *up);
	/* sr_store_read_plan; NULL: 2 streams, whole chunks. */
	void (*read_plan)(const struct sr_store *st, int *streams, uint64_t *piece);
	/* sr_store_abort_stale_uploads, *aborted zeroed by store.c; with fn
	 * (sr_store_list_stale_uploads) each is told to fn instead, none
	 * aborted. NULL: the backend leaves no unfinished uploads behind
	 * (file:// removes its temp files at open). */
	int (*abort_stale)(struct sr_store *st, const char *prefix, double older_than,
	    int (*fn)(const char *key, double initiated, void *arg), void *arg, int *aborted,
	    char *err);
	/* sr_store_stats, out zeroed by store.c; NULL: no requests to count. */
	void (*stats)(struct sr_store *st, struct sr_store_stats *out);
	/* sr_store_presign: a malloc'd URL into *url that GETs key for
	 * expires seconds (1 to SR_PRESIGN_MAX) after now; err without the
	 * "presign KEY: " that store.c adds. NULL: the store has no such URLs
	 * (file://). */
	int (*presign)(struct sr_store *st, const char *key, long expires, time_t now, char **url,
	    char *err);
};

struct sr_store {
	const struct sr_store_backend *be;
	char *url;
	void *priv;
	struct sr_pace *pace;	/* NULL when be->write_interval is 0 */
	int no_metadata;	/* sr_store_opts's, set before be->open */
};

struct sr_upload {
	struct sr_store *st;
	char *key;
	void *priv;
	int defer_flush;	/* sr_upload_defer_flush */
};

/* Backends, in store.c's table. */
extern const struct sr_store_backend sr_store_file_backend;
extern const struct sr_store_backend sr_store_s3_backend;
extern const struct sr_store_backend sr_store_gs_backend;
extern const struct sr_store_backend sr_store_az_backend;

/* Longest key, in bytes. */
#define SR_KEY_MAX 1024

/* Check that key is a valid object key (store.h); else fill err with
 * "verb key: invalid key: why" and return -1. */
int sr_store_key_check(const char *verb, const char *key, char *err);
/* The same for a list prefix: may be empty, end in '/', or end in part of
 * a segment. */
int sr_store_prefix_check(const char *verb, const char *prefix, char *err);
/* The offset granularity for direct writes to fd (dio-align.c): the
 * largest of kernel_align (statx's stx_dio_offset_align), 4096, and the
 * physical block or minimum I/O size of the disk under fd where that is a
 * power of two no larger than most. */
size_t sr_dio_write_align(int fd, size_t kernel_align, size_t most);
/* A background writer of fd (bgwrite.c), a thread of its own (NULL: none
 * could be started; write in the foreground with sr_pwrite_all) that does
 * the writes queued, up to SR_BGWRITE_DEPTH, in order. sr_bgwrite_put
 * queues buf to write at off: 0, or -1 (EBUSY) where DEPTH are queued
 * already; the caller must neither touch nor free buf until reaped.
 * sr_bgwrite_pending: the writes queued and not yet reaped, or with
 * done_only of them those written (a reap of one does not wait).
 * sr_bgwrite_reap: once the oldest of them is done, its buf, len and off
 * back to the caller: 0, or -1 with that write's errno (EINVAL and buf
 * NULL where none is queued). With sync_every > 0 a second thread
 * fdatasyncs fd each time that many more bytes are written, until a write
 * stalls as on a disk shared with another writer (best effort: none where
 * the thread cannot start); sr_bgwrite_syncs: how many it has done.
 * sr_bgwrite_stop (NULL-able): after the write and the sync in progress,
 * the threads end, the writes not begun are dropped, each (NULL-able) is
 * called with the buffer of every write not reaped, and b is freed; 0, or
 * the errno of the first background sync that failed (what was written
 * may not be durable, and a later fsync of fd need not say so). */
#define SR_BGWRITE_DEPTH 4
/* A file store's direct upload is fdatasync'd in the background every
 * this many bytes, so that its commit's fsync has little left (and
 * bench-ckpt's floor writes its bytes the same way). */
#define SR_DIRECT_SYNC_EVERY ((uint64_t)64 << 20)
struct sr_bgwrite;
struct sr_bgwrite *sr_bgwrite_start(int fd, uint64_t sync_every);
int sr_bgwrite_put(struct sr_bgwrite *b, const void *buf, size_t len, uint64_t off);
unsigned sr_bgwrite_pending(struct sr_bgwrite *b, int done_only);
int sr_bgwrite_reap(struct sr_bgwrite *b, void **buf, size_t *len, uint64_t *off);
unsigned sr_bgwrite_syncs(struct sr_bgwrite *b);
int sr_bgwrite_stop(struct sr_bgwrite *b, void (*each)(void *buf));
/* Key as shown in messages: control bytes escaped, long keys shortened. */
const char *sr_store_key_show(const char *key, char *buf, size_t len);
#define SR_KEY_SHOW_MAX 128

#endif
