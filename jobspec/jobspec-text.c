/*
 * jobspec-text.c: the job file's text rules; see jobspec-text.h. A job
 * file is read by people and by other tools (editors, diff, the queue's
 * listing): a byte that is not text is never what its author meant, and a
 * control character in a value would reach the job's environment or a
 * terminal unseen.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "jobspec-text.h"

enum sr_js_text
sr_js_text_char(const char *s, size_t n, size_t *len, uint32_t *cp)
{
	static const uint32_t least[4] = { 0, 0x80, 0x800, 0x10000 };
	unsigned char c = (unsigned char)s[0];
	size_t need, i;
	uint32_t v;

	*cp = 0;
	*len = 1;
	if (c < 0x80) {
		*cp = c;
		return (c < 0x20 && c != '\t') || c == 0x7f ? SR_TEXT_CONTROL : SR_TEXT_OK;
	}
	if (c < 0xc0 || c >= 0xf5)	/* a continuation byte, or no character at all */
		return SR_TEXT_INVALID;
	need = c < 0xe0 ? 1 : c < 0xf0 ? 2 : 3;
	v = c & (0x3fu >> need);
	for (i = 1; i <= need; i++) {
		if (i >= n || ((unsigned char)s[i] & 0xc0) != 0x80) {
			*len = i;
			return SR_TEXT_INCOMPLETE;
		}
		v = v << 6 | ((unsigned char)s[i] & 0x3f);
	}
	*len = need + 1;
	*cp = v;
	if (v < least[need])
		return SR_TEXT_OVERLONG;
	if (v >= 0xd800 && v <= 0xdfff)
		return SR_TEXT_SURROGATE;
	if (v > 0x10ffff)
		return SR_TEXT_TOO_BIG;
	if (v <= 0x9f)
		return SR_TEXT_CONTROL;	/* C1: a terminal acts on U+009B */
	return SR_TEXT_OK;
}

enum sr_js_text
sr_js_text_scan(const char *s, size_t n, size_t *off, size_t *len)
{
	enum sr_js_text t;
	uint32_t cp;
	size_t i, l;

	for (i = 0; i < n; i += l) {
		if ((unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f) {
			l = 1;	/* the common case */
			continue;
		}
		if ((t = sr_js_text_char(s + i, n - i, &l, &cp)) != SR_TEXT_OK) {
			*off = i;
			*len = l;
			return t;
		}
	}
	return SR_TEXT_OK;
}

const char *
sr_js_text_describe(enum sr_js_text t, const char *s, size_t len, char *buf, size_t size)
{
	static const char *const what[] = {
		[SR_TEXT_INVALID] = "invalid UTF-8",
		[SR_TEXT_INCOMPLETE] = "an incomplete UTF-8 sequence",
		[SR_TEXT_OVERLONG] = "an overlong UTF-8 sequence",
		[SR_TEXT_SURROGATE] = "a UTF-16 surrogate encoded as UTF-8",
		[SR_TEXT_TOO_BIG] = "a UTF-8 sequence beyond U+10FFFF",
	};
	char bytes[24] = "";
	size_t i;
	uint32_t cp;

	if (t == SR_TEXT_CONTROL) {
		sr_js_text_char(s, len, &len, &cp);
		if (cp == 0x7f)
			snprintf(buf, size, "control character DEL (0x7f)");
		else if (cp < 0x80)
			snprintf(buf, size, "control character 0x%02x", (unsigned)cp);
		else
			snprintf(buf, size, "control character U+%04X", (unsigned)cp);
		return buf;
	}
	if (t == SR_TEXT_OK || t > SR_TEXT_TOO_BIG) {
		snprintf(buf, size, "text");
		return buf;
	}
	for (i = 0; i < len && i < 4; i++)
		snprintf(bytes + strlen(bytes), sizeof bytes - strlen(bytes), "%s0x%02x",
		    i ? " " : "", (unsigned char)s[i]);
	snprintf(buf, size, "%s (%s)", what[t], bytes);
	return buf;
}

const char *
sr_js_text_fix(enum sr_js_text t)
{
	if (t == SR_TEXT_CONTROL)
		return "remove it (a job file holds text and tabs, no other control character)";
	return "a job file is UTF-8 text: save it as UTF-8, or remove the bytes";
}
