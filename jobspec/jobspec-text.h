/*
 * jobspec-text.h: what bytes a job file may hold: UTF-8 text (RFC 3629: no
 * overlong forms, no encoded UTF-16 surrogates, nothing past U+10FFFF)
 * without control characters, tab excepted. Shared by the reader
 * (jobspec.c), which refuses the rest with the place and the byte offset,
 * and the messages (jobspec-msg.c), which never echo it. Not for use
 * outside the parser.
 */
#ifndef SR_JOBSPEC_TEXT_H
#define SR_JOBSPEC_TEXT_H

#include <stddef.h>
#include <stdint.h>

enum sr_js_text {
	SR_TEXT_OK = 0,
	SR_TEXT_CONTROL,	/* C0 but tab, DEL, or C1 (U+0080..U+009F) */
	SR_TEXT_INVALID,	/* a byte that cannot start a character */
	SR_TEXT_INCOMPLETE,	/* a lead byte without all its continuation bytes */
	SR_TEXT_OVERLONG,	/* a longer encoding than the character needs */
	SR_TEXT_SURROGATE,	/* U+D800..U+DFFF */
	SR_TEXT_TOO_BIG		/* beyond U+10FFFF */
};

/* The character at s, n > 0 bytes being left: what it is, with its length
 * in *len (for a fault: the bytes that make the fault, 1 to 4) and its code
 * point in *cp (0 where it has none). */
enum sr_js_text sr_js_text_char(const char *s, size_t n, size_t *len, uint32_t *cp);

/* The first fault in the n bytes at s: SR_TEXT_OK if there is none, else
 * its kind, with its offset in *off and its length in *len. */
enum sr_js_text sr_js_text_scan(const char *s, size_t n, size_t *off, size_t *len);

/* What the fault of kind t made of the len bytes at s is, for a message:
 * "invalid UTF-8 (0xff)", "control character 0x01", ... into buf. Returns
 * buf. */
const char *sr_js_text_describe(enum sr_js_text t, const char *s, size_t len, char *buf,
    size_t size);

/* The fix to offer for a fault of kind t. */
const char *sr_js_text_fix(enum sr_js_text t);

#endif
