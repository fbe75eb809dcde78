/*
 * chunkhash.h: the two hashes of a chunk's raw bytes. XXH3-128 is the check
 * a restore makes on what it decoded: it catches a corrupt pack or a codec
 * fault as surely (2^-128 for random damage) at a twentieth of SHA-256's
 * cost; in manifests of version 2 it is also the chunk's id, the key of
 * content addressing (doc/format.md, "Chunk ids", says why that needs no
 * cryptographic hash). SHA-256 is the id of version 1 manifests, which a
 * save writes only on request (struct sr_ckpt_opts' sha256_ids): then it
 * computes both in one pass over the chunk, block by block while each block
 * is in cache. A restore computes only the check (or the SHA-256 id, for
 * version 1 chunks without a check).
 */
#ifndef SR_CHUNKHASH_H
#define SR_CHUNKHASH_H

#include <stddef.h>
#include <stdint.h>

/* What to compute (bits of `want`). */
#define SR_CH_ID	1u	/* SHA-256 -> id[32] */
#define SR_CH_CHECK	2u	/* XXH3-128 -> check[16], canonical (big-endian) */

/* Bytes hashed per step by sr_chunkhash_buf: small enough that the block
 * read by the first hash is still in L2 for the second. */
#define SR_CH_BLOCK	((size_t)256 << 10)

struct sr_chunkhash;

/* A hasher for one thread; NULL with err on out-of-memory. */
struct sr_chunkhash *sr_chunkhash_new(char *err);
void sr_chunkhash_free(struct sr_chunkhash *h);

/* Start a chunk; then update with its bytes in order; then end, which
 * fills the outputs `want` asked for (the others may be NULL). Each
 * returns 0, or -1 with err filled when the library fails. */
int sr_chunkhash_begin(struct sr_chunkhash *h, unsigned want, char *err);
int sr_chunkhash_update(struct sr_chunkhash *h, const void *p, size_t n, char *err);
int sr_chunkhash_end(struct sr_chunkhash *h, uint8_t id[32], uint8_t check[16], char *err);

/* begin, update in SR_CH_BLOCK steps, end: the hashes of buf[0, n). */
int sr_chunkhash_buf(struct sr_chunkhash *h, unsigned want, const void *buf, size_t n,
    uint8_t id[32], uint8_t check[16], char *err);

#endif
