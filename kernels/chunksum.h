/*
 * chunksum.h: the chunk sum, a 128-bit checksum of a chunk's bytes that a
 * GPU computes at memory speed and a CPU at XXH3's: a tree of XXH3-128
 * (doc/format.md, "The chunk sum", has the definition and test vectors;
 * doc/design.md says why). Its use: a chunk of device memory whose sum
 * equals the one recorded for the same piece of the previous checkpoint is
 * referenced, not copied off the GPU, hashed or uploaded again.
 *
 * Definition, for a chunk of n bytes: cut it into leaves of SR_CS_LEAF
 * bytes (the last one shorter); each leaf's digest is XXH3-128 (seed 0,
 * canonical big-endian form) of the leaf, zero-padded to SR_CS_MIN bytes
 * if shorter. The sum is XXH3-128 of the digests in order, followed by n
 * and SR_CS_LEAF as little-endian 64-bit words, zero-padded to SR_CS_MIN
 * bytes if shorter. n = 0 has no leaf.
 *
 * sr_chunksum (the CPU twin, on libxxhash) is the reference the CUDA
 * kernels (chunksum.cu, cs-lanes.h) are tested against.
 */
#ifndef SR_CHUNKSUM_H
#define SR_CHUNKSUM_H

#include <stddef.h>
#include <stdint.h>

#define SR_CS_LEAF ((size_t)16384)	/* bytes per leaf */
#define SR_CS_MIN ((size_t)256)		/* shortest input hashed: XXH3's long path */

/* The sum of buf[0, n) into out. */
void sr_chunksum(const void *buf, size_t n, uint8_t out[16]);

/* The sums of buf[0, n) cut into chunks of `chunk` bytes (the last one
 * shorter): out[16 * i] for chunk i, ceil(n / chunk) of them. chunk > 0. */
void sr_chunksum_chunks(const void *buf, size_t n, size_t chunk, uint8_t *out);

/* XXH3-128 of p[0, len) zero-padded to SR_CS_MIN bytes, canonical: a
 * leaf's digest, and the sum of a root string. */
void sr_chunksum_leaf(const void *p, size_t len, uint8_t out[16]);

/* Bytes of the string the sum hashes for a chunk of n bytes: the digests
 * and the two words, at least SR_CS_MIN. */
size_t sr_chunksum_rootlen(size_t n);

struct sr_cuda;
/* Bytes of device scratch memory sr_chunksum_cuda needs for n bytes in
 * chunks of `chunk` bytes (about 1/1000 of n). */
size_t sr_chunksum_cuda_scratch(size_t n, size_t chunk);
/* The sums of device memory dbuf[0, n) in chunks of `chunk` bytes into
 * device memory dout (16 bytes a chunk, as sr_chunksum_chunks), queued on
 * `stream` (a CUstream; NULL: the default stream) without waiting, with
 * dscratch of sr_chunksum_cuda_scratch bytes: 0, or -1 with err set for a
 * chunk of 0 bytes, a build without the kernels or a failed launch. */
int sr_chunksum_cuda(struct sr_cuda *cu, uint64_t dbuf, size_t n, size_t chunk,
    uint64_t dscratch, uint64_t dout, void *stream, char *err);
#endif
