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
#include "similar.h"

void
sr_js_verror(struct sr_jobspec_errors *e, size_t *dropped, int line, const char *fmt, va_list ap)
{
	if (e->n >= SR_JS_ERRORS_MAX) {
		(*dropped)++;
		return;
	}
	e->v = sr_reallocarray(e->v, e->n + 1, sizeof *e->v);
	e->v[e->n].line = line;
	vsnprintf(e->v[e->n].msg, sizeof e->v[e->n].msg, fmt, ap);
	e->n++;
}

void
sr_js_error(struct sr_js_parse *p, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sr_js_verror(p->errs, &p->nerrs_dropped, line, fmt, ap);
	va_end(ap);
}

void
sr_js_unknown_key_msg(char *msg, size_t size, const char *name, const char *section,
    const char *const *keys, size_t n)
{
	char list[400] = "", b[SR_JS_SHOW_MAX + 4];
	const char *suggest = NULL;
	size_t i;

	for (i = 0; i < n; i++) {
		if (suggest == NULL && sr_similar_close(name, keys[i], SR_SIMILAR_FOLD_CASE))
			suggest = keys[i];
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
		    *list ? ", " : "", keys[i]);
	}
	if (suggest != NULL)
		snprintf(msg, size, "unknown key '%s' in [%s]; did you mean '%s'? Valid keys: %s",
		    sr_js_show(name, b), section, suggest, list);
	else
		snprintf(msg, size, "unknown key '%s' in [%s]; valid keys: %s", sr_js_show(name, b),
		    section, list);
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
