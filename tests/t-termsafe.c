/*
 * t-termsafe.c: common/termsafe.c, the one escaping of outside text for a
 * terminal: printable UTF-8 kept, every C0 control, DEL and C1 control
 * escaped, the line separators and bidirectional controls escaped, every
 * way UTF-8 can be malformed (a stray continuation byte, a character cut
 * short, overlong forms, surrogates, above U+10FFFF) escaped byte by byte,
 * the backslash kept, and a short buffer cut between pieces.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "termsafe.h"
#include "tap.h"

static const char *
esc(const char *s)
{
	static char buf[1024];

	return sr_termsafe(s, buf, sizeof buf);
}

static void
test_kept(void)
{
	is_str(esc(""), "", "the empty string");
	is_str(esc("ip-10-0-1-5 gpu host 7"), "ip-10-0-1-5 gpu host 7", "printable ASCII kept");
	is_str(esc("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80 \xe4\xb8\xad"),
	    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80 \xe4\xb8\xad",
	    "printable UTF-8 of 2, 3 and 4 bytes kept");
	is_str(esc("\xc2\xa0\xef\xbf\xbd\xf4\x8f\xbf\xbf"), "\xc2\xa0\xef\xbf\xbd\xf4\x8f\xbf\xbf",
	    "U+00A0 (the first after C1), U+FFFD and U+10FFFF kept");
	is_str(esc("a\\x1b \\"), "a\\x1b \\", "a backslash kept: a message escaped before reads the same");
}

static void
test_controls(void)
{
	char s[2] = "", want[8], buf[64];
	int c, bad = 0;

	for (c = 1; c < 0x20; c++) {
		s[0] = (char)c;
		snprintf(want, sizeof want, "\\x%02x", c);
		if (strcmp(sr_termsafe(s, buf, sizeof buf), want) != 0) {
			tap_diag("C0 %#x: got '%s'", c, buf);
			bad++;
		}
	}
	ok(bad == 0, "every C0 control (\\x01 to \\x1f) as \\xNN");
	is_str(esc("\x7f"), "\\x7f", "DEL as \\x7f");
	for (bad = 0, c = 0x80; c <= 0x9f; c++) {
		char u[3] = { (char)(0xc0 | c >> 6), (char)(0x80 | (c & 0x3f)), 0 };

		snprintf(want, sizeof want, "\\u{%x}", c);
		if (strcmp(sr_termsafe(u, buf, sizeof buf), want) != 0) {
			tap_diag("C1 %#x: got '%s'", c, buf);
			bad++;
		}
	}
	ok(bad == 0, "every C1 control (U+0080 to U+009F) as \\u{N}");
	is_str(esc("\x9b" "2J"), "\\x9b2J", "a raw C1 byte (no UTF-8) as \\x9b");
	is_str(esc("\xe2\x80\xa8|\xe2\x80\xa9|\xe2\x80\xae|\xe2\x81\xa6|\xe2\x80\x8f"),
	    "\\u{2028}|\\u{2029}|\\u{202e}|\\u{2066}|\\u{200f}",
	    "line and paragraph separators, bidirectional overrides and isolates escaped");
	is_str(esc("\x1b]0;pwned\a\x1b[2J"), "\\x1b]0;pwned\\x07\\x1b[2J",
	    "a title-setting and screen-clearing sequence, inert");
	is_str(esc("lr.1\n   forged row\r\t"), "lr.1\\x0a   forged row\\x0d\\x09",
	    "newline, carriage return and tab escaped: no forged row");
}

static void
test_malformed(void)
{
	is_str(esc("a\x80z"), "a\\x80z", "a stray continuation byte");
	is_str(esc("a\xc3"), "a\\xc3", "a 2-byte character cut short at the end");
	is_str(esc("a\xe2\x82z"), "a\\xe2\\x82z", "a 3-byte character cut short: each byte");
	is_str(esc("\xf0\x9f\x9a"), "\\xf0\\x9f\\x9a", "a 4-byte character cut short");
	is_str(esc("\xc0\xaf"), "\\xc0\\xaf", "an overlong '/' of 2 bytes");
	is_str(esc("\xc1\x9b"), "\\xc1\\x9b", "an overlong ESC-[ of 2 bytes");
	is_str(esc("\xe0\x80\x9b"), "\\xe0\\x80\\x9b", "an overlong of 3 bytes");
	is_str(esc("\xf0\x80\x80\x9b"), "\\xf0\\x80\\x80\\x9b", "an overlong of 4 bytes");
	is_str(esc("\xed\xa0\x80"), "\\xed\\xa0\\x80", "a surrogate (U+D800)");
	is_str(esc("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80", "above U+10FFFF");
	is_str(esc("\xf8\x88\x80\x80\x80\xff\xfe"), "\\xf8\\x88\\x80\\x80\\x80\\xff\\xfe",
	    "bytes that start no character (F8, FF, FE)");
	is_str(esc("\xc3\xc3\xa9"), "\\xc3\xc3\xa9", "a cut character, then a whole one kept");
}

static void
test_buffer(void)
{
	char buf[SR_TERMSAFE_LEN(4)], small[8];
	uint32_t cp;

	is_str(sr_termsafe("\x01\x02\x03\x04", buf, sizeof buf), "\\x01\\x02\\x03\\x04",
	    "SR_TERMSAFE_LEN holds the worst case");
	is_str(sr_termsafe("ab\x1b" "cdef", small, sizeof small), "ab\\x1bc",
	    "a short buffer: cut between pieces");
	is_str(sr_termsafe("abcdef\x1b", small, sizeof small), "abcdef",
	    "... never inside an escape");
	is_str(sr_termsafe("abcdef\xc3\xa9", small, sizeof small), "abcdef",
	    "... nor inside a character");
	is_int(sr_utf8_char("\xe2\x80\xa8", 3, &cp), 3, "sr_utf8_char: U+2028 is 3 bytes");
	is_int(cp, 0x2028, "... its code point");
	is_int(sr_utf8_char("\xe2\x80\xa8", 2, &cp), 0, "... cut by n: not a character");
	is_int(cp, 0xe2, "... *cp is the byte");
}

int
main(void)
{
	test_kept();
	test_controls();
	test_malformed();
	test_buffer();
	return tap_done();
}
