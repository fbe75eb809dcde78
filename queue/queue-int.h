/*
 * queue-int.h: what the queue's files share and its users do not: the
 * queue handle, the counted store calls every file of the queue makes
 * (queue.c), and the keys of the markers (qkey.c).
 */
#ifndef SR_QUEUE_INT_H
#define SR_QUEUE_INT_H

#include <pthread.h>

#include "queue.h"

/* A checkpoint store a job uses, opened once. */
struct sr_qstore {
	char hash[20];		/* "q" for Q/ckpt, else 16 hex digits of its URL's SHA-256 */
	char *url;
	struct sr_store *st;
	int registered;		/* stores/HASH known to exist */
};

struct sr_queue {
	struct sr_store *st;
	char *url, *ckpt_url;
	pthread_mutex_t lock;	/* the stores and skip lists (the log thread shares q) */
	struct sr_qstore *stores;
	size_t nstores;
	char **skip;		/* ids whose lease is malformed: warned once, skipped */
	size_t nskip;
	int junk_names;		/* the last claim met pending markers of no job (qclaim.c) */
	unsigned rng;
	long counts[6];		/* requests, lists, gets, puts, deletes, heads (atomic) */
	struct sr_store_opts sopts;	/* how its stores are opened */
};

/* The kinds of requests counted (sr_queue_counts's order). */
enum sr_qcount { SR_QC_ALL, SR_QC_LIST, SR_QC_GET, SR_QC_PUT, SR_QC_DEL, SR_QC_HEAD };

/* The store calls of the queue, counted as S3 needs them (queue.h). */
int sr_q_put(struct sr_queue *q, struct sr_store *st, const char *key, const void *buf,
    size_t len, enum sr_put_mode mode, const char *if_match, char *etag_out, char *err);
int sr_q_get(struct sr_queue *q, struct sr_store *st, const char *key, size_t max, void **buf,
    size_t *len, char *etag_out, char *err);
int sr_q_list(struct sr_queue *q, struct sr_store *st, const char *prefix,
    int (*fn)(const struct sr_object_info *info, void *arg), void *arg, char *err);
int sr_q_delete(struct sr_queue *q, struct sr_store *st, const char *key, char *err);
/* The keys of q's store under prefix, in key order (one sr_q_list), into
 * *v (malloc'd strings; sr_q_keys_free) and *n: 0, or -1 with err. */
int sr_q_keys(struct sr_queue *q, const char *prefix, char ***v, size_t *n, char *err);
void sr_q_keys_free(char **v, size_t n);
int sr_q_delete_many(struct sr_queue *q, struct sr_store *st, const char *const *keys, size_t n,
    char *err);
/* Add n requests made elsewhere (a lease's) to q's counts as kind
 * (SR_QC_ALL: to the total only, for a mix). */
void sr_q_count(struct sr_queue *q, enum sr_qcount kind, long n);

/* The checkpoint store of hash ("q", or a stores/ entry, read once:
 * *requests, may be NULL, counts that GET): NULL with err. *url (may be
 * NULL) gets its URL, borrowed. */
struct sr_store *sr_q_store_of_hash(struct sr_queue *q, const char *hash, const char **url,
    int *requests, char *err);
/* The hash of url into hash (20 bytes): "q" for Q/ckpt (or NULL, ""), else
 * 16 hex digits of its SHA-256. */
void sr_q_hash_of_url(const struct sr_queue *q, const char *url, char *hash);
/* The hash of url ("q" for Q/ckpt) into hash (20 bytes), registering it
 * under stores/ once per handle. */
int sr_q_store_register(struct sr_queue *q, const char *url, char *hash, char *err);
/* Every checkpoint store of the queue: Q/ckpt first, then stores/. fn
 * gets each open store; a store that cannot be opened is an error, but
 * one whose registration is unusable for good (sr_store_err_permanent:
 * too large, not a file) is skipped: its jobs fail at their claims. */
int sr_q_stores_each(struct sr_queue *q, int (*fn)(struct sr_store *st, void *arg), void *arg,
    char *err);
/* The id's skip entry: 1 when it is on the list; add puts it there. */
int sr_q_skipped(struct sr_queue *q, const char *id, int add);
/* A random number in [0, n) from the handle's generator. */
unsigned sr_q_random(struct sr_queue *q, unsigned n);

/* Pending markers (qjob.c): one from a job's meta and its lease's epoch
 * and etag (0, "": no lease yet); put one (p->key set). */
void sr_q_pending_of_meta(const struct sr_queue_job_meta *m, const char *hash, int64_t epoch,
    const char *etag, struct sr_queue_pending *p);
int sr_q_pending_put(struct sr_queue *q, struct sr_queue_pending *p, char *err);

/* Keys (qkey.c). Each returns 0, or -1 with err; the parsers -1 when the
 * key is not theirs or does not parse (why into err). */
int sr_qkey_pending(const struct sr_queue_pending *p, char *key, size_t len, char *err);
int sr_qkey_pending_parse(const char *key, struct sr_queue_pending *p, char *err);
int sr_qkey_index(const struct sr_queue_status *s, char *key, size_t len, char *err);
int sr_qkey_index_parse(const char *key, struct sr_queue_status *s, char *err);
/* The key of job id's file (spec.ini, meta.json, cancel), after checking id. */
int sr_qkey_job(const char *id, const char *file, char *key, size_t len, char *err);
/* agents/AGENT, the agent's id percent-encoded (qmachine.c). */
void sr_qkey_machine(const char *agent, char *key, size_t len);
/* pools/NAME (qpool.c), the name checked. */
#define SR_QKEY_POOLS "pools/"
int sr_qkey_pool(const char *name, char *key, size_t len, char *err);

#endif
