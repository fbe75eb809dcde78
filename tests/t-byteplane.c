/*
 * t-byteplane.c: the CPU byte-plane split/join (kernels/byteplane.c): the
 * exact layout on hand-checked examples, split against a naive reference and
 * join as its inverse for widths 1..16 and sizes 0..1000 plus large ones
 * (which run the SIMD loops and their scalar remainders).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "byteplane.h"
#include "tap.h"
#include "util.h"

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* The definition in byteplane.h, written out the slow way. */
static void
ref_split(const uint8_t *src, size_t n, unsigned w, uint8_t *dst)
{
	size_t m = n / w, i;
	unsigned k;

	for (k = 0; k < w; k++)
		for (i = 0; i < m; i++)
			dst[k * m + i] = src[i * w + k];
	for (i = m * w; i < n; i++)
		dst[i] = src[i];
}

/* Split and join n random bytes at width w; 0 if both match. */
static int
roundtrip(size_t n, unsigned w, uint64_t *seed, uint8_t *a, uint8_t *b, uint8_t *c,
    uint8_t *d)
{
	size_t i;

	for (i = 0; i < n; i++)
		a[i] = (uint8_t)rnd(seed);
	ref_split(a, n, w, b);
	/* a canary past the end catches writes beyond n */
	memset(c, 0xa5, n + 64);
	sr_byteplane_split(a, n, w, c);
	if (memcmp(b, c, n) != 0)
		return 1;
	for (i = n; i < n + 64; i++)
		if (c[i] != 0xa5)
			return 2;
	memset(d, 0x5a, n + 64);
	sr_byteplane_join(c, n, w, d);
	if (memcmp(a, d, n) != 0)
		return 3;
	for (i = n; i < n + 64; i++)
		if (d[i] != 0x5a)
			return 4;
	return 0;
}

int
main(void)
{
	static const uint8_t src2[] = { 0x10, 0x11, 0x20, 0x21, 0x30, 0x31, 0x40 };
	static const uint8_t want2[] = { 0x10, 0x20, 0x30, 0x11, 0x21, 0x31, 0x40 };
	static const uint8_t src4[] = { 'a', 'b', 'c', 'd', 'A', 'B', 'C', 'D', 'x', 'y' };
	static const uint8_t want4[] = { 'a', 'A', 'b', 'B', 'c', 'C', 'd', 'D', 'x', 'y' };
	static const uint8_t src3[] = { 1, 2, 3, 4, 5, 6 };
	static const uint8_t want3[] = { 1, 4, 2, 5, 3, 6 };
	static const size_t large[] = { 1 << 20, (1 << 20) + 13, (3 << 20) + 4095 };
	uint8_t out[16], back[16];
	uint8_t *a, *b, *c, *d;
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	size_t n, i;
	unsigned w;
	int bad, rc;

	/* hand-checked layouts: planes, then the n % width tail */
	sr_byteplane_split(src2, sizeof src2, 2, out);
	ok(memcmp(out, want2, sizeof want2) == 0, "width 2: planes 10 20 30 | 11 21 31 | tail 40");
	sr_byteplane_join(out, sizeof src2, 2, back);
	ok(memcmp(back, src2, sizeof src2) == 0, "width 2: join restores the input");
	sr_byteplane_split(src4, sizeof src4, 4, out);
	ok(memcmp(out, want4, sizeof want4) == 0, "width 4: planes aA bB cC dD, tail xy");
	sr_byteplane_join(out, sizeof src4, 4, back);
	ok(memcmp(back, src4, sizeof src4) == 0, "width 4: join restores the input");
	sr_byteplane_split(src3, sizeof src3, 3, out);
	ok(memcmp(out, want3, sizeof want3) == 0, "width 3: planes 1 4 | 2 5 | 3 6");
	sr_byteplane_split(src2, 3, 4, out);
	ok(memcmp(out, src2, 3) == 0, "fewer bytes than one element: all tail, copied");
	sr_byteplane_split(NULL, 0, 2, NULL);
	sr_byteplane_join(NULL, 0, 16, NULL);
	ok(1, "zero bytes touch nothing");

	a = sr_malloc((3 << 20) + 8192);
	b = sr_malloc((3 << 20) + 8192);
	c = sr_malloc((3 << 20) + 8192);
	d = sr_malloc((3 << 20) + 8192);
	for (w = 1; w <= 16; w++) {
		bad = 0;
		for (n = 0; n <= 1000 && !bad; n++)
			if ((rc = roundtrip(n, w, &seed, a, b, c, d)) != 0) {
				tap_diag("width %u, %zu bytes: failure %d", w, n, rc);
				bad = 1;
			}
		for (i = 0; i < SR_ARRAY_LEN(large) && !bad; i++)
			if ((rc = roundtrip(large[i], w, &seed, a, b, c, d)) != 0) {
				tap_diag("width %u, %zu bytes: failure %d", w, large[i], rc);
				bad = 1;
			}
		ok(!bad, "width %u: split matches the reference, join inverts it, "
		    "0..1000 bytes and 1-3 MiB", w);
	}
	free(a);
	free(b);
	free(c);
	free(d);
	return tap_done();
}
