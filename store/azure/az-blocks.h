/*
 * az-blocks.h: uploads to Azure Blob: a whole blob in one Put Blob (control
 * objects, conditional or not, and uploads smaller than a block), and large
 * objects as the family of store/parts.h: blocks of the store's block_size
 * go up in parallel as Put Block (ids of one length, "blk-NNNNNNNN" in
 * base64), then one Put Block List makes them the blob. An upload that
 * will not be committed is dropped at once where nothing was at its key:
 * an empty block list committed create-only (which discards every
 * uncommitted block, as Put Block List does with the blocks it does not
 * name) and that empty blob deleted by its ETag. Over an existing blob its
 * blocks are left to Azure, which discards uncommitted blocks after 7 days
 * or at the blob's next Put Block List.
 */
#ifndef SR_AZ_BLOCKS_H
#define SR_AZ_BLOCKS_H

#include <stddef.h>

#include "xfer.h"

struct sr_az;
struct sr_parts;

#define SR_AZ_BLOCKS_MAX 50000	/* Azure's limit on committed blocks per blob */

/*
 * Put Blob of len bytes at key (under the store's prefix), with its
 * Content-MD5 (which the server checks and keeps as the blob's: HEAD then
 * returns it; md5_b64, 25 bytes, may be NULL) and cond, a conditional
 * header line or NULL ("If-None-Match: *", "If-Match: \"ETAG\""), bounded
 * by deadline and cancel (as struct sr_xfer_req's). 0 when a reply came
 * (*resp filled, any status), -1 with err when none did.
 */
int sr_az_put_blob(struct sr_az *a, const char *key, const void *buf, size_t len,
    const char *cond, double deadline, volatile int *cancel, char *md5_b64,
    struct sr_xfer_resp *resp, const char *what, char *err);

/* Start a block upload of key; drive it with parts.h's sr_parts_write,
 * _limit, _commit and _abort. Nothing is sent yet. NULL with err on OOM. */
struct sr_parts *sr_az_blocks_begin(struct sr_az *a, const char *key, char *err);

/*
 * Drop the uncommitted blocks staged at key, when no blob is committed
 * there (the empty create-only commit and its delete, above): 1 when they
 * were dropped, 0 when a blob is there (they are left to expire), -1 with
 * err when the server could not be asked.
 */
int sr_az_drop_blocks(struct sr_az *a, const char *key, double deadline, volatile int *cancel,
    char *err);

#endif
