/*
 * pack.h: writing a pack, the pax tar archive that holds a checkpoint's new
 * chunks as members named <id hex>.zst. The archive streams through a
 * store upload (never whole in memory), and each member's data offset in
 * the object is recorded exactly, so a restore reads one chunk with one
 * ranged read while `tar -tf` still lists the pack and `zstd -d` opens a
 * member.
 */
#ifndef SR_PACK_H
#define SR_PACK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "store.h"

struct sr_pack;

/* Start a pack at key; its members get mtime. NULL with err on failure. */
struct sr_pack *sr_pack_begin(struct sr_store *st, const char *key, time_t mtime, char *err);
/* Leave the pack's flush to sr_store_flush of its key (sr_upload_defer_flush). */
void sr_pack_defer_flush(struct sr_pack *p);
/* Bound the pack's upload (sr_upload_limit). */
void sr_pack_limit(struct sr_pack *p, double deadline, volatile int *cancel);
/* Append a regular-file member of len bytes; *offset receives the offset
 * of its first data byte in the pack. 0 or -1 with err. */
int sr_pack_add(struct sr_pack *p, const char *name, const void *data, size_t len,
    uint64_t *offset, char *err);
/* Bytes written so far. */
uint64_t sr_pack_size(const struct sr_pack *p);
/* Members written so far. */
uint64_t sr_pack_members(const struct sr_pack *p);
/* The pack's key (valid until commit or abort). */
const char *sr_pack_key(const struct sr_pack *p);
/* Finish the archive and make the object visible (fault point
 * "ckpt-upload" just before); frees p whatever happens. 0 or -1. */
int sr_pack_commit(struct sr_pack *p, char *err);
/* Drop the pack: nothing becomes visible. Safe on NULL. */
void sr_pack_abort(struct sr_pack *p);

#endif
