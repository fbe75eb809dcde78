/*
 * status-reason.c: a failed trial's reason in a line (status-reason.h):
 * its record's end and its output's last error line; and the width of
 * what the tables print, counted in characters, not bytes.
 */
#include "config.h"

#include <ctype.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status-reason.h"
#include "termsafe.h"
#include "util.h"

/* The length of s (n bytes) cut to at most max bytes on a UTF-8
 * character's boundary. */
static size_t
utf8_cut(const char *s, size_t n, size_t max)
{
	size_t at = 0, c;
	uint32_t cp;

	while (at < n) {
		c = sr_utf8_char(s + at, n - at, &cp);
		c = c == 0 ? 1 : c;
		if (at + c > max)
			break;
		at += c;
	}
	return at;
}

/* Of log line p..e ("+SSSS.mmm TAG TEXT"), TEXT as a line shows it (what
 * follows its last carriage return, blanks around it dropped) in *s, *n;
 * returns the stream, 0 out, 1 err, or -1 for spotrun's lines, lines that
 * are not of that form and blank ones. */
static int
log_line(const char *p, const char *e, const char **s, size_t *n)
{
	const char *t = p, *cr;
	int stream;

	if (t == e || *t++ != '+')
		return -1;
	while (t < e && (isdigit((unsigned char)*t) || *t == '.'))
		t++;
	if (e - t >= 5 && strncmp(t, " out ", 5) == 0)
		stream = 0;
	else if (e - t >= 5 && strncmp(t, " err ", 5) == 0)
		stream = 1;
	else
		return -1;
	t += 5;
	while ((cr = memchr(t, '\r', (size_t)(e - t))) != NULL && cr + 1 < e)
		t = cr + 1;	/* what a progress bar's line shows last */
	while (t < e && isspace((unsigned char)*t))
		t++;
	while (e > t && isspace((unsigned char)e[-1]))
		e--;
	*s = t;
	*n = (size_t)(e - t);
	return *n > 0 ? stream : -1;
}

const char *
sr_status_error_line(const char *log, size_t len, char *line)
{
	const char *p = log, *end = log + len, *last[2] = { NULL, NULL }, *s;
	size_t lastn[2] = { 0, 0 }, n;
	int k;

	line[0] = '\0';
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl != NULL ? nl : end;

		if ((k = log_line(p, e, &s, &n)) >= 0) {
			last[k] = s;
			lastn[k] = n;
		}
		p = nl != NULL ? nl + 1 : end;
	}
	k = last[1] != NULL ? 1 : 0;
	if (last[k] == NULL)
		return line;
	n = utf8_cut(last[k], lastn[k], SR_STATUS_LINE_MAX);
	memcpy(line, last[k], n);
	line[n] = '\0';
	return line;
}

char *
sr_status_end_reason(const struct sr_attempt_record *r, const char *line)
{
	char how[128];
	const char *abbrev;

	if (r->signal > 0) {
		abbrev = sigabbrev_np(r->signal);
		if (abbrev != NULL)
			snprintf(how, sizeof how, "killed by SIG%s", abbrev);
		else
			snprintf(how, sizeof how, "killed by signal %d", r->signal);
	} else if (strncmp(r->outcome, "exit ", 5) == 0 || r->exit_code < 0)
		snprintf(how, sizeof how, "%s", r->outcome);
	else
		snprintf(how, sizeof how, "%s (exit %d)", r->outcome, r->exit_code);
	return line[0] != '\0' ? sr_asprintf("%s: %s", how, line) : sr_strdup(how);
}

size_t
sr_status_cols(const char *s)
{
	size_t n = strlen(s), at = 0, cols = 0, c;
	uint32_t cp;

	while (at < n) {
		c = sr_utf8_char(s + at, n - at, &cp);
		at += c == 0 ? 1 : c;
		cols++;
	}
	return cols;
}

char *
sr_status_cut(char *s, size_t w)
{
	size_t n = strlen(s), at = 0, cols = 0, c;
	uint32_t cp;

	if (sr_status_cols(s) <= w)
		return s;
	while (at < n && cols + 1 < w) {
		c = sr_utf8_char(s + at, n - at, &cp);
		at += c == 0 ? 1 : c;
		cols++;
	}
	s[at] = '~';
	s[at + 1] = '\0';
	return s;
}
