/*
 * chunksum.c: the chunk sum on the CPU (see chunksum.h), the twin of the
 * CUDA kernels in chunksum.cu. Each leaf is hashed by libxxhash's
 * XXH3_128bits, the reference implementation, so the twin runs at XXH3's
 * speed and the device's own XXH3 (cs-lanes.h) is held to the reference.
 * Nothing here allocates: a root string longer than SR_CS_MIN is hashed as
 * it is made, with XXH3's streaming state (the same hash as in one piece),
 * so the sum cannot fail.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#define XXH_STATIC_LINKING_ONLY	/* XXH3_state_t, for a state on the stack */
#include <xxhash.h>

#include "chunksum.h"
#include "cs-lanes.h"
#include "util.h"

size_t
sr_chunksum_rootlen(size_t n)
{
	return cs_rootlen(n);
}

void
sr_chunksum_leaf(const void *buf, size_t len, uint8_t out[16])
{
	const uint8_t *p = buf;
	uint8_t pad[SR_CS_MIN];
	XXH128_canonical_t c;

	if (len < SR_CS_MIN) {
		memset(pad, 0, sizeof pad);
		memcpy(pad, p, len);
		p = pad;
		len = SR_CS_MIN;
	}
	XXH128_canonicalFromHash(&c, XXH3_128bits(p, len));
	memcpy(out, c.digest, 16);
}

void
sr_chunksum(const void *buf, size_t n, uint8_t out[16])
{
	const uint8_t *p = buf;
	size_t rlen = sr_chunksum_rootlen(n), off, k = 0, i;
	uint8_t small[SR_CS_MIN], leaf[16], words[16];
	XXH128_canonical_t c;
	XXH3_state_t st;

	if (rlen <= sizeof small) {	/* padded to SR_CS_MIN: in one piece */
		for (off = 0; off < n; off += SR_CS_LEAF, k++)
			sr_chunksum_leaf(p + off, n - off < SR_CS_LEAF ? n - off : SR_CS_LEAF,
			    small + 16 * k);
		cs_trailer(small, n);
		sr_chunksum_leaf(small, rlen, out);
		return;
	}
	/* longer than SR_CS_MIN, so no padding: the leaves' sums, then
	 * cs_trailer's two words (n and the leaf size, little-endian) */
	XXH3_128bits_reset(&st);
	for (off = 0; off < n; off += SR_CS_LEAF) {
		sr_chunksum_leaf(p + off, n - off < SR_CS_LEAF ? n - off : SR_CS_LEAF, leaf);
		XXH3_128bits_update(&st, leaf, sizeof leaf);
	}
	for (i = 0; i < 8; i++) {
		words[i] = (uint8_t)(n >> 8 * i);
		words[8 + i] = (uint8_t)((uint64_t)SR_CS_LEAF >> 8 * i);
	}
	XXH3_128bits_update(&st, words, sizeof words);
	XXH128_canonicalFromHash(&c, XXH3_128bits_digest(&st));
	memcpy(out, c.digest, 16);
}

void
sr_chunksum_chunks(const void *buf, size_t n, size_t chunk, uint8_t *out)
{
	const uint8_t *p = buf;
	size_t off, i = 0;

	for (off = 0; off < n; off += chunk, i++)
		sr_chunksum(p + off, n - off < chunk ? n - off : chunk, out + 16 * i);
}
