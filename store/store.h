/*
 * store.h: the object store interface. Checkpoints, manifests and pointers
 * live behind it; a backend gives object-storage semantics whatever is
 * underneath (a local directory, S3 or an S3-compatible server, GCS):
 *
 *  - objects are written whole and become visible atomically (never half);
 *  - a create-only put fails with SR_STORE_EXISTS if the key exists;
 *  - a compare-and-swap put succeeds only if the object's current etag is
 *    the one given, else SR_STORE_PRECONDITION;
 *  - reads may be ranged; listing is by prefix, in key order.
 *
 * Keys are relative paths of '/'-separated segments, without "." or ".."
 * segments and without a leading '/'. URLs: file:///abs/path (embedded
 * default), s3://bucket[/prefix][?options], gs://bucket[/prefix][?options]
 * (options in doc/spotrun-job.5).
 */
#ifndef SR_STORE_H
#define SR_STORE_H

#include <stddef.h>
#include <stdint.h>

/* Return codes of the store functions (0 is success). */
enum sr_store_rc {
	SR_STORE_OK = 0,
	SR_STORE_ERROR = -1,		/* I/O, network, permission: see err */
	SR_STORE_NOTFOUND = -2,		/* no such key */
	SR_STORE_EXISTS = -3,		/* create-only put: key exists (lost race) */
	SR_STORE_PRECONDITION = -4	/* CAS put: etag changed (lost race) */
};

/* How a put treats an existing object. */
enum sr_put_mode {
	SR_PUT_OVERWRITE = 0,	/* last writer wins */
	SR_PUT_CREATE,		/* only if absent (If-None-Match: *) */
	SR_PUT_MATCH		/* only if its etag equals if_match (If-Match) */
};

#define SR_ETAG_MAX 128

struct sr_store;
struct sr_upload;

struct sr_object_info {
	const char *key;	/* full key, valid during the callback */
	uint64_t size;
	double mtime;		/* epoch seconds */
	char etag[SR_ETAG_MAX];
};

/* Open the store at url; *out is freed with sr_store_close. */
int sr_store_open(const char *url, struct sr_store **out, char *err);
/* How a store is opened (sr_store_open_with); all zero: as sr_store_open. */
struct sr_store_opts {
	/* Ask no cloud metadata address (169.254.169.254) for credentials:
	 * neither AWS's instance role nor Azure's managed identity. The
	 * caller's reason (a run or agent whose provider is local or
	 * signal) is its own: the store knows no providers. */
	int no_metadata;
};
/* sr_store_open with o (NULL: all zero). */
int sr_store_open_with(const char *url, const struct sr_store_opts *o, struct sr_store **out,
    char *err);
void sr_store_close(struct sr_store *st);
/* Check url as sr_store_open would parse it, reading no file and making no
 * request (for `spotrun check` on a laptop): 0, or -1 with err. */
int sr_store_url_check(const char *url, char *err);
/* What is wrong with a store URL (sr_store_url_explain). */
enum sr_store_url_status {
	SR_STORE_URL_OK = 0,
	SR_STORE_URL_UNKNOWN,	/* no backend's "scheme://": not a store URL */
	SR_STORE_URL_NO_ROOT,	/* "scheme://" with no bucket (account) after it */
	SR_STORE_URL_BAD	/* the backend refused the rest */
};
struct sr_store_url_problem {
	char reason[512];	/* what is wrong, alone: no "open store URL: " (SR_ERRMAX) */
	char fix[160];		/* what to write ("use s3://bucket/prefix"), or "" */
};
/* sr_store_url_check's answer taken apart for a message of the caller's
 * own, such as a job file's "FILE:LINE: store = URL: reason; fix": the
 * status, and pb filled unless it is SR_STORE_URL_OK. */
enum sr_store_url_status sr_store_url_explain(const char *url, struct sr_store_url_problem *pb);
/* Every URL form the backends take, in words, for a hint:
 * "file:///absolute/path, s3://bucket/prefix, ... or az://...". */
void sr_store_url_forms(char *buf, size_t len);
/* Whether url names a directory of this machine (file://), which agents
 * on other machines do not see: 1 or 0 (0 too for no backend's scheme). */
int sr_store_url_local(const char *url);
/* The absolute path that a URL of this machine's directory (local: see
 * sr_store_url_local) gives as it is written, not percent-decoded
 * ("file:///srv/x" -> "/srv/x"); NULL when url is not local or names no
 * absolute path. A pointer into url. */
const char *sr_store_url_path(const char *url);
/* What a VM must bring to reach url's store that its cloud's role does
 * not give, in words for a warning ("spotrun reaches gs:// with HMAC keys
 * ..."); NULL: nothing, or no backend's scheme. */
const char *sr_store_url_vm_note(const char *url);
/* Keys that one delete request of sr_store_delete_many takes on st: 1000
 * on S3's DeleteObjects, 1 where each key is a request of its own. */
size_t sr_store_delete_batch(const struct sr_store *st);
/* Whether URLs a and b name the same store, however each is spelt: the
 * same scheme, bucket (account, container) and prefix (trailing slashes
 * and file://localhost/ aside) and endpoint (its host without case,
 * localhost, 127.0.0.1 and [::1] as one, the scheme's default port as
 * none); the options that only tune the client do not count. 1 or 0. */
int sr_store_url_same(const char *a, const char *b);
/* The URL the store was opened with (for messages). */
const char *sr_store_url(const struct sr_store *st);
/* Seconds the store wants between two writes (put, delete, upload commit)
 * of one key: 1 for gs:// (GCS takes about one write a second per object
 * name, and answers more with 429), 0 for the others. A handle keeps its
 * own writes of a key that far apart, waiting before the next one; what
 * writes a key periodically (a lease's renewals) must not ask for more. */
double sr_store_write_interval(const struct sr_store *st);

/* Put a small object in one request. etag_out (SR_ETAG_MAX bytes) may be NULL. */
int sr_store_put(struct sr_store *st, const char *key, const void *buf, size_t len,
    enum sr_put_mode mode, const char *if_match, char *etag_out, char *err);
/* Get a whole object of at most max bytes into a malloc'd buffer (NUL-terminated). */
int sr_store_get(struct sr_store *st, const char *key, size_t max, void **buf, size_t *len,
    char *etag_out, char *err);
/* Read exactly len bytes at offset off; short objects are an error. */
int sr_store_read_range(struct sr_store *st, const char *key, uint64_t off, size_t len,
    void *buf, char *err);
int sr_store_head(struct sr_store *st, const char *key, struct sr_object_info *info, char *err);
/* Call fn for each object whose key starts with prefix, in key order; a
 * non-zero return from fn stops the listing and is returned. */
int sr_store_list(struct sr_store *st, const char *prefix,
    int (*fn)(const struct sr_object_info *info, void *arg), void *arg, char *err);
/* Delete a key; deleting a missing key succeeds. */
int sr_store_delete(struct sr_store *st, const char *key, char *err);
/* Delete n keys as sr_store_delete does, batched where the store can (S3:
 * up to 1000 keys a request). On an error some keys may be gone. */
int sr_store_delete_many(struct sr_store *st, const char *const *keys, size_t n, char *err);

/* Streaming upload of a large object: visible only after sr_upload_commit. */
struct sr_upload *sr_store_upload_begin(struct sr_store *st, const char *key, char *err);
int sr_upload_write(struct sr_upload *up, const void *buf, size_t len, char *err);
/* Where the upload's large pieces are best placed (file:// with direct
 * I/O): a piece of at least *min bytes that begins at an object offset
 * that is a multiple of the returned alignment (4 KiB or the disk's
 * block) is read back later with direct I/O on any disk that allows it,
 * one of 4 KiB logical blocks too. A writer that can place its large
 * pieces so (a pack's member data) does. 0 (and *min 0): no placement
 * helps (the network stores, a buffered file). */
size_t sr_upload_align(const struct sr_upload *up, size_t *min);
/* Bound the upload: once the epoch deadline passes (0: none) or *cancel
 * (may be NULL) turns nonzero, its writes and commit fail, with nothing
 * made visible. For a checkpoint that must fit a preemption notice. */
void sr_upload_limit(struct sr_upload *up, double deadline, volatile int *cancel);
/* Make the object visible (plain overwrite semantics); frees up. */
int sr_upload_commit(struct sr_upload *up, char *err);
/* Leave the upload's flush to sr_store_flush: its commit makes the object
 * visible, whole, but a crash of the machine may lose it until flushed.
 * For objects that need to be durable only together, before something
 * names them (a checkpoint's packs, before its manifest): one flush of the
 * disk for all of them, at the end, instead of one each in the middle of
 * the work. No effect where a commit is durable by itself (the network
 * stores). Call before sr_upload_commit. */
void sr_upload_defer_flush(struct sr_upload *up);
/* Make the n objects whose uploads deferred their flush durable, as their
 * own commits would have: 0, or -1 with err ("flush KEY: reason", a
 * missing object among them). 0 at once on the network stores. */
int sr_store_flush(struct sr_store *st, const char *const *keys, size_t n, char *err);
/* Drop what was written; frees up. Safe on NULL. */
void sr_upload_abort(struct sr_upload *up);

/* Abort the unfinished multipart uploads whose key starts with prefix
 * (relative to the store, as for sr_store_list) and that were started
 * before the epoch time older_than: a save whose machine died mid-upload,
 * or whose abort could not reach the server, leaves one behind, and S3
 * keeps (and bills) its parts until it is aborted. An upload still being
 * written elsewhere is aborted too when it is old enough, so choose
 * older_than far before any upload still running could have started.
 * An upload the server no longer has (completed or aborted meanwhile) is
 * no error. *aborted (may be NULL) is how many were aborted, also when
 * the call fails midway. Backends without such uploads (file://, whose
 * temp files are removed at open) do nothing and return 0. Returns 0, or
 * SR_STORE_ERROR with err. */
int sr_store_abort_stale_uploads(struct sr_store *st, const char *prefix, double older_than,
    int *aborted, char *err);
/* The uploads sr_store_abort_stale_uploads(st, prefix, older_than) would
 * abort, each told to fn with its key (relative to the store) and when it
 * began (epoch seconds), none aborted: what a dry run of gc lists. fn
 * returns 0, or -1 to stop (with the caller's own error), which is then
 * SR_STORE_ERROR here. Backends without such uploads tell none. Returns
 * 0, or SR_STORE_ERROR with err. */
int sr_store_list_stale_uploads(struct sr_store *st, const char *prefix, double older_than,
    int (*fn)(const char *key, double initiated, void *arg), void *arg, char *err);

/* How to read a large object back fast: *streams ranged reads in flight,
 * each of at most *piece bytes (0: one read per chunk). A local disk: 2
 * reads of whole chunks (one queued while the other is served); a network
 * store: its `concurrency` reads of `part_size`, since one connection
 * carries only part of a link (AWS's advice for S3: concurrent ranged GETs
 * of 8-16 MB, aligned with the parts: a restore ends its reads at the
 * object's multiples of *piece). */
void sr_store_read_plan(const struct sr_store *st, int *streams, uint64_t *piece);

/* What a network store's requests cost since it was opened, for tests and
 * benchmarks (file://: all 0). */
struct sr_store_stats {
	long requests;		/* HTTP requests sent, each retry counted */
	long connections;	/* TCP connections opened for them */
	long quick_acks;	/* replies whose first bytes were acknowledged at
				 * once, not at the delayed-ACK timer (store/conns.h) */
};
void sr_store_stats(struct sr_store *st, struct sr_store_stats *out);

/* Whether err, the message of a store function's SR_STORE_ERROR, says
 * the error is permanent: the same request can never succeed until a
 * person changes something (a bucket or container that does not exist,
 * access denied, an object larger than the reader takes, something not a
 * regular file at a key of file://, a folder that cannot be made there).
 * Anything else (network, 5xx, throttling, timeouts, a disk's I/O error)
 * is transient: worth another try. Told by the fixed words the backends
 * use for those (store.c lists them), as sr_err_is_oom tells out of
 * memory; out of memory is transient. */
int sr_store_err_permanent(const char *err);

/* Longest life of a presigned URL, in seconds: 7 days, S3's and GCS's
 * limit for a V4 signature. */
#define SR_PRESIGN_MAX (7 * 24 * 3600)
/* A URL that GETs key's object with no credentials and no client but an
 * HTTP one (curl), for expires_s seconds from now (at least 1, at most
 * SR_PRESIGN_MAX; fractions are dropped): s3:// signs it with SigV4 in
 * the query (X-Amz-*, the session token included, UNSIGNED-PAYLOAD),
 * gs:// with GCS's V4 signed URL and the HMAC keys (GOOG4-HMAC-SHA256),
 * az:// with a service SAS (sv=2021-08-06, sr=b, sp=r) under the account
 * key, or by appending the SAS it was given (whose own expiry then
 * rules). The signing makes no request: the key need not exist yet. A URL
 * signed with temporary credentials (an assumed role's, SSO's) stops
 * working when they expire, whatever expires_s says. *url is malloc'd
 * (free()). Returns 0, or SR_STORE_ERROR with err ("presign KEY:
 * reason"): file:// (no URL another machine can fetch), az:// with only
 * a managed identity's token, no credentials, a bad expiry. */
int sr_store_presign(struct sr_store *st, const char *key, double expires_s, char **url,
    char *err);

/* Name of a return code, e.g. "SR_STORE_EXISTS". */
const char *sr_store_rc_name(int rc);

#endif
