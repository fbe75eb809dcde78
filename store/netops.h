/*
 * netops.h: the store operations that the network backends (s3:// and
 * gs:// in store/s3/, az:// in store/azure/) do alike on their request
 * engine (xfer.h): get, ranged read, head, delete, many deletes in
 * parallel, the read plan, the words of their messages, and the URL
 * options they share (netopts.c). Where the
 * families differ in what a reply means (the etag a caller sees, whether a
 * 404 is the key's or its bucket's) their struct sr_xfer_family says. Each
 * function fills err and returns store.h's codes as store-int.h wants of a
 * backend.
 */
#ifndef SR_NETOPS_H
#define SR_NETOPS_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"
#include "util.h"
#include "xfer.h"

/* "verb key" for messages, the key shown safely, into buf. */
const char *sr_net_what(char *buf, size_t len, const char *verb, const char *key);
/* Fill err and return code (a lost race or a missing key: not an error). */
int sr_net_say(char *err, int code, const char *fmt, ...) SR_PRINTF(3, 4);

int sr_net_get(struct sr_xfer *x, const char *key, size_t max, void **buf, size_t *len,
    char *etag_out, char *err);
int sr_net_read_range(struct sr_xfer *x, const char *key, uint64_t off, size_t len, void *buf,
    char *err);
int sr_net_head(struct sr_xfer *x, const char *key, struct sr_object_info *info, char *err);
/* Delete key, with the extra header line hdr (NULL: none); a 2xx reply or
 * a missing key is success. */
int sr_net_del(struct sr_xfer *x, const char *key, const char *hdr, char *err);
/* The same for n keys, up to the tuning's concurrency in flight. */
int sr_net_del_many(struct sr_xfer *x, const char *const *keys, size_t n, const char *hdr,
    char *err);
/* The read plan of a network store: `concurrency` reads of `part_size`. */
void sr_net_read_plan(struct sr_xfer *x, int *streams, uint64_t *piece);

/* The URL options every network store takes (netopts.c). */

/* The tuning before any option: 8 MiB parts, 8 in flight, Content-MD5, 8
 * tries, 30 s without a byte. */
void sr_net_tuning_defaults(struct sr_xfer_tuning *t);
/* Apply concurrency, attempts or stall_timeout (doc/spotrun-job.5): 1 when
 * name is one of them (t set), 0 when it is none of them, -1 with err
 * ("open store URL: option NAME: want ...") for a value out of bounds. */
int sr_net_tuning_option(struct sr_xfer_tuning *t, const char *url, const char *name,
    const char *v, char *err);
/* The checksum option (checksum=NAME, doc/spotrun-job.5): v is the name
 * of one of the n checksums in allowed (sha256, md5, crc64, none): 0 with
 * t->part_sum set, else -1 with err naming the choices ("want md5, crc64
 * or none"). */
int sr_net_sum_option(struct sr_xfer_tuning *t, const char *url, const char *name,
    const char *v, const enum sr_sum *allowed, size_t n, char *err);
/* "16M", "8MiB", "1G", "4096" -> bytes; 0 for anything else. */
uint64_t sr_net_parse_size(const char *v);
/* The store's key prefix from what follows the bucket or container in the
 * URL (rest, may be NULL): "" or "a/b/" (trailing '/' dropped, one added),
 * malloc'd; NULL with err ("open store URL: ...") for a prefix that is not
 * one (an empty segment, a "." segment, a control character), or on OOM. */
char *sr_net_prefix(const char *url, const char *rest, char *err);
/* "open store URL: option NAME: WHY" into err; -1. */
int sr_net_bad_option(const char *url, const char *name, const char *why, char *err);

#endif
