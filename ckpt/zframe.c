/*
 * zframe.c: raw zstd frames by hand (RFC 8878, section 3.1.1). Frames up to
 * one block long are single-segment (the window is the content, the content
 * size takes 1, 2 or 4 bytes); longer ones declare a 128 KiB window, enough
 * for raw blocks, so that `zstd -d` never needs more memory than its default
 * limit whatever the frame's size.
 */
#include "config.h"

#include <string.h>

#include "zframe.h"

static size_t
raw_blocks(size_t n)
{
	return n == 0 ? 1 : (n + SR_ZFRAME_BLOCK_MAX - 1) / SR_ZFRAME_BLOCK_MAX;
}

/* Bytes of the frame header for n bytes of content. */
static size_t
raw_header_size(size_t n)
{
	if (n <= SR_ZFRAME_BLOCK_MAX)
		return 4 + 1 + (n < 256 ? 1 : n < 65536 + 256 ? 2 : 4);
	return 4 + 1 + 1 + ((uint64_t)n <= 0xffffffffu ? 4 : 8);
}

size_t
sr_zframe_raw_size(size_t n)
{
	return raw_header_size(n) + 3 * raw_blocks(n) + n;
}

static void
put_le(uint8_t *p, uint64_t v, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t
get_le(const uint8_t *p, size_t len)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < len; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

size_t
sr_zframe_write_raw(void *dst, size_t cap, const void *src, size_t n)
{
	uint8_t *o = dst;
	const uint8_t *s = src;
	size_t total = sr_zframe_raw_size(n), pos, left;

	if (cap < total)
		return 0;
	put_le(o, SR_ZFRAME_MAGIC, 4);
	pos = 4;
	if (n <= SR_ZFRAME_BLOCK_MAX) {
		/* Single_Segment_flag (bit 5); FCS_Field_Size flag 0, 1 or 2 */
		if (n < 256) {
			o[pos++] = 0x20;
			o[pos++] = (uint8_t)n;
		} else if (n < 65536 + 256) {
			o[pos++] = 0x60;
			put_le(o + pos, n - 256, 2);
			pos += 2;
		} else {
			o[pos++] = 0xa0;
			put_le(o + pos, n, 4);
			pos += 4;
		}
	} else {
		int wide = (uint64_t)n > 0xffffffffu;

		o[pos++] = wide ? 0xc0 : 0x80;	/* FCS_Field_Size flag 3 or 2 */
		o[pos++] = (17 - 10) << 3;	/* Window_Descriptor: 2^17 bytes */
		put_le(o + pos, n, wide ? 8 : 4);
		pos += wide ? 8 : 4;
	}
	left = n;
	do {
		size_t b = left < SR_ZFRAME_BLOCK_MAX ? left : SR_ZFRAME_BLOCK_MAX;
		int last = b == left;

		/* Last_Block (bit 0), Block_Type 0 = Raw (bits 1-2), Block_Size */
		put_le(o + pos, (uint32_t)(b << 3) | (uint32_t)last, 3);
		pos += 3;
		if (b > 0)
			memcpy(o + pos, s, b);
		pos += b;
		s += b;
		left -= b;
	} while (left > 0);
	return pos;
}

int
sr_zframe_copy_raw(const void *src, size_t len, void *dst, size_t cap,
    size_t *consumed, size_t *produced)
{
	const uint8_t *p = src;
	uint8_t *o = dst;
	static const size_t fcs_len[2][4] = { { 0, 2, 4, 8 }, { 1, 2, 4, 8 } };
	uint64_t window = 0, fcs, done = 0, bmax;
	size_t pos, fl;
	unsigned fhd, single;

	if (len < 6 || get_le(p, 4) != SR_ZFRAME_MAGIC)
		return 0;
	fhd = p[4];
	/* reserved bit, checksum or dictionary: not ours, zstd decides */
	if ((fhd & 0x0f) != 0)
		return 0;
	single = (fhd >> 5) & 1;
	pos = 5;
	if (!single) {
		unsigned wd = p[pos++], wlog = 10 + (wd >> 3);

		window = ((uint64_t)1 << wlog) + (((uint64_t)1 << wlog) / 8) * (wd & 7);
	}
	fl = fcs_len[single][fhd >> 6];
	if (fl == 0 || len < pos + fl)
		return 0;
	fcs = get_le(p + pos, fl) + (fl == 2 ? 256 : 0);
	pos += fl;
	if (single)
		window = fcs;
	if (fcs > cap)
		return 0;
	bmax = window < SR_ZFRAME_BLOCK_MAX ? window : SR_ZFRAME_BLOCK_MAX;
	for (;;) {
		uint32_t bh;
		size_t bsize;

		if (len - pos < 3)
			return 0;
		bh = (uint32_t)get_le(p + pos, 3);
		pos += 3;
		bsize = bh >> 3;
		if (((bh >> 1) & 3) != 0 || bsize > bmax || bsize > fcs - done ||
		    bsize > len - pos)
			return 0;
		if (bsize > 0)
			memcpy(o + done, p + pos, bsize);
		pos += bsize;
		done += bsize;
		if (bh & 1)
			break;
	}
	if (done != fcs)
		return 0;
	*consumed = pos;
	*produced = (size_t)done;
	return 1;
}
