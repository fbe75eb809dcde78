/*
 * jobspec-msg.c: see jobspec-msg.h.
 */
#include "config.h"

#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jobspec-int.h"
#include "jobspec-msg.h"
#include "jobspec-text.h"

void
sr_js_error(struct sr_js_parse *p, int line, const char *fmt, ...)
{
	struct sr_jobspec_errors *e = p->errs;
	va_list ap;

	if (e->n >= SR_JS_ERRORS_MAX) {
		p->nerrs_dropped++;
		return;
	}
	e->v = sr_reallocarray(e->v, e->n + 1, sizeof *e->v);
	e->v[e->n].line = line;
	va_start(ap, fmt);
	vsnprintf(e->v[e->n].msg, sizeof e->v[e->n].msg, fmt, ap);
	va_end(ap);
	e->n++;
}

const char *
sr_js_show(const char *s, char buf[SR_JS_SHOW_MAX + 4])
{
	size_t i = 0, o = 0, len;
	uint32_t cp;

	while (s[i] != '\0' && o < SR_JS_SHOW_MAX) {
		if (sr_js_text_char(s + i, strnlen(s + i, 4), &len, &cp) != SR_TEXT_OK || cp == '\t') {
			buf[o++] = '?';	/* never a control or a broken character in a message */
			i += len;
			continue;
		}
		if (o + len > SR_JS_SHOW_MAX)
			break;	/* not half a character either */
		memcpy(buf + o, s + i, len);
		o += len;
		i += len;
	}
	if (s[i] != '\0') {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

const char *
sr_js_show_span(const char *s, size_t n, char buf[SR_JS_SHOW_MAX + 4])
{
	char tmp[SR_JS_SHOW_MAX + 2];

	if (n > SR_JS_SHOW_MAX + 1)
		n = SR_JS_SHOW_MAX + 1;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	return sr_js_show(tmp, buf);
}
