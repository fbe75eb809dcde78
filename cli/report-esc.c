/*
 * report-esc.c: text from a queue or a store made inert in an HTML page
 * (report.h): a job's id, parameters, host, outcome, job file are anyone's
 * bytes, so each reaches the page as text, never as markup, and always as
 * well-formed UTF-8 (the page says it is UTF-8).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "report.h"
#include "termsafe.h"

void
sr_html_text(FILE *fp, const char *s, size_t n)
{
	size_t i = 0, k;
	uint32_t cp;

	n = strnlen(s, n);
	while (i < n) {
		switch (s[i]) {
		case '&': fputs("&amp;", fp); i++; continue;
		case '<': fputs("&lt;", fp); i++; continue;
		case '>': fputs("&gt;", fp); i++; continue;
		case '"': fputs("&quot;", fp); i++; continue;
		case '\'': fputs("&#39;", fp); i++; continue;
		case '\n': case '\t': fputc(s[i], fp); i++; continue;
		default: break;
		}
		k = sr_utf8_char(s + i, n - i, &cp);
		if (k == 0 || sr_term_acts_on(cp)) {
			fputs("\xef\xbf\xbd", fp);	/* U+FFFD */
			i += k == 0 ? 1 : k;
			continue;
		}
		fwrite(s + i, 1, k, fp);
		i += k;
	}
}

void
sr_html(FILE *fp, const char *s)
{
	sr_html_text(fp, s, strlen(s));
}
