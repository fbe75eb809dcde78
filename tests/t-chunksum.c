/*
 * t-chunksum.c: the chunk sum (kernels/chunksum.h). Its CPU twin against
 * fixed test vectors (the ones doc/format.md lists), its definition written
 * out here with libxxhash, and its sensitivity to every kind of change; the
 * GPU's XXH3-128 (kernels/cs-lanes.h, four threads' lanes and their merge)
 * run on the host against libxxhash's XXH3_128bits for every length from 241
 * to 4400 bytes and large ones, zero padding included; and the two CUDA
 * kernels (chunksum.cu) emulated on the host, leaf groups and root groups,
 * against the twin for buffers cut into chunks of every shape.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "chunksum.h"
#include "cs-lanes.h"
#include "tap.h"
#include "util.h"

/* The test vectors' bytes: b[i] = (131 i + (i >> 9)) mod 256. */
static void
pattern(uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131 + (i >> 9));
}

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void
fill(uint8_t *p, size_t n, uint64_t *seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)rnd(seed);
}

static void
hex(const uint8_t d[16], char out[33])
{
	sr_hex_of(d, 16, out);
}

static void
keys(struct cs_keys *K)
{
	static const uint8_t secret[192] = CS_SECRET_BYTES;
	unsigned j;

	for (j = 0; j < sizeof *K / 8; j++)
		((uint64_t *)K)[j] = cs_key_word(secret, j);
}

/* XXH3-128 the way a group of four GPU threads computes it. */
static void
lanes_hash(const struct cs_keys *K, const uint8_t *p, size_t len, size_t valid,
    uint8_t out[16])
{
	uint64_t acc[2], lo, hi, slo = 0, shi = 0;
	unsigned q;

	for (q = 0; q < 4; q++) {
		cs_lanes(p, len, valid, q, K, acc);
		cs_terms(acc, q, K, &lo, &hi);
		slo += lo;
		shi += hi;
	}
	cs_final(slo, shi, len, out);
}

static void
xxh_canon(const void *p, size_t len, uint8_t out[16])
{
	XXH128_canonical_t c;

	XXH128_canonicalFromHash(&c, XXH3_128bits(p, len));
	memcpy(out, c.digest, 16);
}

/* The definition of chunksum.h, written out again from libxxhash. */
static void
definition(const uint8_t *p, size_t n, uint8_t out[16])
{
	size_t k = (n + SR_CS_LEAF - 1) / SR_CS_LEAF, rlen = 16 * k + 16, i, j;
	uint8_t *root, leaf[SR_CS_MIN];

	if (rlen < SR_CS_MIN)
		rlen = SR_CS_MIN;
	root = sr_calloc(1, rlen);
	for (i = 0; i < k; i++) {
		size_t len = n - i * SR_CS_LEAF < SR_CS_LEAF ? n - i * SR_CS_LEAF : SR_CS_LEAF;

		if (len < SR_CS_MIN) {
			memset(leaf, 0, sizeof leaf);
			memcpy(leaf, p + i * SR_CS_LEAF, len);
			xxh_canon(leaf, SR_CS_MIN, root + 16 * i);
		} else {
			xxh_canon(p + i * SR_CS_LEAF, len, root + 16 * i);
		}
	}
	for (j = 0; j < 8; j++) {
		root[16 * k + j] = (uint8_t)((uint64_t)n >> 8 * j);
		root[16 * k + 8 + j] = (uint8_t)((uint64_t)SR_CS_LEAF >> 8 * j);
	}
	xxh_canon(root, rlen, out);
	free(root);
}

/*
 * The kernels of chunksum.cu on the host: every leaf slot's group of four
 * threads (sr_cs_leaves), then every chunk's (sr_cs_roots), with the
 * scratch slots laid out as chunksum-cuda.c lays them out.
 */
static void
emulate(const struct cs_keys *K, const uint8_t *buf, size_t n, size_t chunk, uint8_t *out)
{
	size_t kc = cs_leaves_in(chunk), nc = cs_chunks(n, chunk), g, c;
	size_t slot = (cs_rootlen(chunk) + 15) & ~(size_t)15;
	uint8_t *scratch = sr_malloc(nc * slot + 1);

	memset(scratch, 0xee, nc * slot + 1);	/* what no kernel writes shows */
	for (g = 0; g < nc * kc; g++) {
		struct cs_leaf L;

		if (!cs_leaf_at(g, n, chunk, kc, &L))
			continue;
		lanes_hash(K, buf + L.off, L.hashed, L.len, scratch + L.chunk * slot + 16 * L.index);
		if (L.index == 0)
			cs_trailer(scratch + L.chunk * slot, L.chunk_len);
	}
	for (c = 0; c < nc; c++) {
		size_t clen = n - c * chunk < chunk ? n - c * chunk : chunk;

		lanes_hash(K, scratch + c * slot, cs_rootlen(clen), cs_rootlen(clen), out + 16 * c);
	}
	free(scratch);
}

int
main(void)
{
	/* Test vectors: the sum of pattern() bytes of each length (doc/format.md).
	 * The next test holds the twin to the definition written out again. */
	static const struct { size_t n; const char *sum; } vec[] = {
		{ 0, "35edc5ab7600ffd7f1206a92aee09453" },
		{ 1, "6d966be8c18793e44d920fb16421b0ae" },
		{ 255, "d672d4aa1dbde57e3dfc144a6498b401" },
		{ 256, "d0b80581bea63b9455062dea0e2a717c" },
		{ 16384, "69df982c733606c1e538144a735bfe6c" },
		{ 16385, "196a6d52ce26a8d13af0bfdf83659371" },
		{ 1048576, "904c5eb366ad2a82092e588cfe6e7b5b" },
		{ 4194309, "f5248374f1dc1014712e7c5326ac2f9e" },
	};
	static const struct { size_t n, chunk; } shapes[] = {
		{ 0, 16384 }, { 1, 16384 }, { 255, 1 << 20 }, { 256, 256 }, { 16384, 16384 },
		{ 16385, 16384 }, { 40000, 1000 }, { (1 << 20) + 7, 65539 },
		{ 3 << 20, 1 << 20 }, { (5 << 20) + 123, 1 << 20 }, { 1 << 20, 300 },
		{ (4 << 20) + 1, 4 << 20 },
	};
	static const size_t big[] = { 16384, 65536 + 17, 1 << 20 };
	size_t cap = (6 << 20) + 64, i, n, bad_n = 0;
	uint8_t *a = sr_malloc(cap), *b = sr_malloc(cap), *sums, *want, d1[16], d2[16];
	uint64_t seed = 0x5eed5eed;
	struct cs_keys K;
	char h[33], w[33];
	int bad;

	keys(&K);
	pattern(a, cap);
	for (i = 0; i < SR_ARRAY_LEN(vec); i++) {
		sr_chunksum(a, vec[i].n, d1);
		hex(d1, h);
		if (!ok(strcmp(h, vec[i].sum) == 0, "test vector: %zu pattern bytes sum to %s",
		    vec[i].n, vec[i].sum))
			tap_diag("got %s", h);
	}

	bad = 0;
	for (i = 0; i < 300 && !bad; i++) {
		n = i < 40 ? i * 977 : rnd(&seed) % (5 << 20);
		fill(b, n, &seed);
		sr_chunksum(b, n, d1);
		definition(b, n, d2);
		if (memcmp(d1, d2, 16) != 0) {
			tap_diag("%zu bytes: %s", n, (hex(d1, h), h));
			bad = 1;
		}
	}
	ok(!bad, "the twin equals the definition written out with libxxhash, 300 sizes "
	    "0 to 5 MiB");

	/* Sensitivity: one flipped bit anywhere, a zero byte more, two leaves
	 * swapped, a leaf's padding made real: all change the sum. */
	n = 3 * SR_CS_LEAF + 100;
	fill(b, n, &seed);
	sr_chunksum(b, n, d1);
	bad = 0;
	for (i = 0; i < 64 && !bad; i++) {
		size_t at = rnd(&seed) % n;
		uint8_t bit = (uint8_t)(1u << (rnd(&seed) % 8));

		b[at] ^= bit;
		sr_chunksum(b, n, d2);
		b[at] ^= bit;
		bad = memcmp(d1, d2, 16) == 0;
	}
	ok(!bad, "a flipped bit at 64 random places changes the sum");
	b[n] = 0;
	sr_chunksum(b, n + 1, d2);
	ok(memcmp(d1, d2, 16) != 0, "a zero byte appended changes the sum (the length is "
	    "hashed, not only the padded leaf)");
	memcpy(a + cap - SR_CS_LEAF, b, SR_CS_LEAF);
	memcpy(b, b + SR_CS_LEAF, SR_CS_LEAF);
	memcpy(b + SR_CS_LEAF, a + cap - SR_CS_LEAF, SR_CS_LEAF);
	sr_chunksum(b, n, d2);
	ok(memcmp(d1, d2, 16) != 0, "two leaves swapped change the sum");
	pattern(a, cap);
	memset(b, 0, SR_CS_MIN);
	b[0] = 7;
	sr_chunksum(b, 1, d1);
	sr_chunksum(b, SR_CS_MIN, d2);
	ok(memcmp(d1, d2, 16) != 0, "1 byte and the same byte with its zero padding differ");

	/* The GPU's XXH3 against libxxhash, every length 241..4400. */
	bad = 0;
	fill(b, cap, &seed);
	for (n = 241; n <= 4400 && !bad; n++) {
		lanes_hash(&K, b + (n % 13), n, n, d1);
		xxh_canon(b + (n % 13), n, d2);
		if (memcmp(d1, d2, 16) != 0) {
			tap_diag("%zu bytes: lanes %s, libxxhash %s", n, (hex(d1, h), h),
			    (hex(d2, w), w));
			bad = 1;
			bad_n = n;
		}
	}
	ok(!bad, "the device's XXH3-128 (four threads' lanes) equals XXH3_128bits, every "
	    "length 241..4400 at odd offsets");
	(void)bad_n;
	bad = 0;
	for (i = 0; i < SR_ARRAY_LEN(big) && !bad; i++) {
		lanes_hash(&K, b, big[i], big[i], d1);
		xxh_canon(b, big[i], d2);
		bad = memcmp(d1, d2, 16) != 0;
	}
	ok(!bad, "the device's XXH3-128 equals XXH3_128bits on 16 KiB, 64 KiB + 17, 1 MiB");
	bad = 0;
	for (n = 1; n < SR_CS_MIN && !bad; n++) {
		memset(a, 0, SR_CS_MIN);
		memcpy(a, b, n);
		lanes_hash(&K, b, SR_CS_MIN, n, d1);	/* reads b only below n */
		xxh_canon(a, SR_CS_MIN, d2);
		bad = memcmp(d1, d2, 16) != 0;
	}
	ok(!bad, "reading past the valid bytes as zeros equals hashing the zero-padded "
	    "copy, 1..255 valid bytes");
	pattern(a, cap);

	/* The kernels, emulated, against the twin. */
	bad = 0;
	for (i = 0; i < SR_ARRAY_LEN(shapes) && !bad; i++) {
		size_t nc = cs_chunks(shapes[i].n, shapes[i].chunk);

		fill(b, shapes[i].n, &seed);
		sums = sr_malloc(16 * nc + 1);
		want = sr_malloc(16 * nc + 1);
		emulate(&K, b, shapes[i].n, shapes[i].chunk, sums);
		sr_chunksum_chunks(b, shapes[i].n, shapes[i].chunk, want);
		if (memcmp(sums, want, 16 * nc) != 0) {
			tap_diag("%zu bytes in chunks of %zu: the emulated kernels differ",
			    shapes[i].n, shapes[i].chunk);
			bad = 1;
		}
		free(sums);
		free(want);
	}
	ok(!bad, "the CUDA kernels, run on the host, equal the twin for %zu buffer shapes "
	    "(0 bytes to 5 MiB; chunks of 256 bytes to 4 MiB, whole leaves or not)",
	    SR_ARRAY_LEN(shapes));
	ok(sr_chunksum_rootlen(0) == SR_CS_MIN && sr_chunksum_rootlen(16 << 20) == 16 * 1024 + 16,
	    "root string: 256 bytes for an empty chunk, 16 KiB + 16 for 16 MiB");
	free(a);
	free(b);
	return tap_done();
}
