/*
 * termsafe.c: escaping of outside text for a terminal (termsafe.h). It
 * allocates nothing: its callers escape into buffers on their stack.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "termsafe.h"

size_t
sr_utf8_char(const char *s, size_t n, uint32_t *cp)
{
	static const uint32_t least[4] = { 0, 0x80, 0x800, 0x10000 };
	unsigned char c = (unsigned char)s[0];
	size_t need, i;
	uint32_t v;

	*cp = c;
	if (c < 0x80)
		return 1;
	if (c < 0xc0 || c >= 0xf5)	/* a continuation byte, or no character's start */
		return 0;
	need = c < 0xe0 ? 1 : c < 0xf0 ? 2 : 3;
	v = c & (0x3fu >> need);
	for (i = 1; i <= need; i++) {
		if (i >= n || ((unsigned char)s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | ((unsigned char)s[i] & 0x3f);
	}
	if (v < least[need] || (v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff)
		return 0;
	*cp = v;
	return need + 1;
}

int
sr_term_acts_on(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x200e || cp == 0x200f ||
	    (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

const char *
sr_termsafe(const char *s, char *buf, size_t len)
{
	size_t n = strlen(s), i = 0, o = 0;

	if (len == 0)
		return buf;
	while (i < n) {
		char piece[16];
		size_t k, plen;
		uint32_t cp;

		k = sr_utf8_char(s + i, n - i, &cp);
		if (k == 0 || cp < 0x20 || cp == 0x7f) {
			plen = (size_t)snprintf(piece, sizeof piece, "\\x%02x", (unsigned char)s[i]);
			k = 1;
		} else if (sr_term_acts_on(cp)) {
			plen = (size_t)snprintf(piece, sizeof piece, "\\u{%x}", (unsigned)cp);
		} else {
			plen = k;
			memcpy(piece, s + i, k);
		}
		if (o + plen >= len)
			break;
		memcpy(buf + o, piece, plen);
		o += plen;
		i += k;
	}
	buf[o] = '\0';
	return buf;
}
