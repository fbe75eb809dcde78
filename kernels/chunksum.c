/*
 * chunksum.c: the chunk sum on the CPU (see chunksum.h), the twin of the
 * CUDA kernels in chunksum.cu. Each leaf is hashed by libxxhash's
 * XXH3_128bits, the reference implementation, so the twin runs at XXH3's
 * speed and the device's own XXH3 (cs-lanes.h) is held to the reference.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
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
	size_t rlen = sr_chunksum_rootlen(n), off, k = 0;
	uint8_t small[SR_CS_MIN], *root = rlen <= sizeof small ? small : sr_malloc(rlen);

	for (off = 0; off < n; off += SR_CS_LEAF, k++)
		sr_chunksum_leaf(p + off, n - off < SR_CS_LEAF ? n - off : SR_CS_LEAF, root + 16 * k);
	cs_trailer(root, n);
	sr_chunksum_leaf(root, rlen, out);
	if (root != small)
		free(root);
}

void
sr_chunksum_chunks(const void *buf, size_t n, size_t chunk, uint8_t *out)
{
	const uint8_t *p = buf;
	size_t off, i = 0;

	for (off = 0; off < n; off += chunk, i++)
		sr_chunksum(p + off, n - off < chunk ? n - off : chunk, out + 16 * i);
}
