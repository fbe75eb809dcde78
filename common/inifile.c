/*
 * inifile.c: a small INI file as settings with their lines; see inifile.h.
 * inih splits "key = value" and drops inline comments (';' or '#' after a
 * blank); the reader below
 * hands it one vetted line at a time and blanks comment lines, so inih
 * never meets a line it could misread (a ':' delimiter, a header it cuts
 * short) and every error is ours, with its line.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "inifile.h"
#include "iniparse.h"
#include "util.h"

struct rd {
	const char *name, *buf;
	size_t len, off;
	int line;
	int (*fn)(void *arg, const char *section, const char *key, const char *value, int line,
	    char *err);
	void *arg;
	char *err;
	int failed;
};

static void
fail(struct rd *r, const char *why)
{
	if (!r->failed)
		sr_err(r->err, "%s:%d: %s", r->name, r->line, why);
	r->failed = 1;
}

/* What is wrong with the line a..*e (trimmed), or NULL; a section
 * header's *e is moved to just after its ']' (a comment may follow). */
static const char *
vet(const char *a, const char **e)
{
	const char *eq, *close, *c;

	if (a == *e || *a == ';' || *a == '#')
		return NULL;
	if (memchr(a, '\0', (size_t)(*e - a)) != NULL)
		return "a NUL byte; a settings file is text";
	if (*a == '[') {
		if ((close = memchr(a, ']', (size_t)(*e - a))) == NULL)
			return "a section header must end with ']'";
		for (c = close + 1; c < *e && isspace((unsigned char)*c); c++)
			;
		if (c < *e && *c != ';' && *c != '#')
			return "text after a section header's ']'; only a comment may follow it";
		if (close == a + 1)
			return "an empty section name []";
		if (close - a - 1 > SR_INIFILE_SECTION_MAX)
			return "a section name longer than 48 bytes";
		*e = close + 1;
		return NULL;
	}
	if ((eq = memchr(a, '=', (size_t)(*e - a))) == NULL)
		return "not a setting: write key = value, a [section] header, or a comment "
		    "starting with ';' or '#'";
	if (eq == a)
		return "a setting without a key before its '='";
	if (memchr(a, ':', (size_t)(eq - a)) != NULL)
		return "a key may not hold ':'; write key = value";
	return NULL;
}

/* inih's reader: the next line, vetted; a comment or a bad line is given
 * to inih as an empty one. */
static char *
reader(char *str, int num, void *stream)
{
	struct rd *r = stream;
	const char *a, *e, *t, *why;
	size_t n;

	if (!sr_ini_next_line(r->buf, r->len, &r->off, &r->line, &a, &e))
		return NULL;
	if (e > a && e[-1] == '\r')
		e--;
	for (t = a; t < e && isspace((unsigned char)*t); t++)
		;
	while (e > t && isspace((unsigned char)e[-1]))
		e--;
	n = (size_t)(e - t);
	why = n > SR_INIFILE_LINE_MAX ? "a line longer than 4096 bytes" : vet(t, &e);
	n = (size_t)(e - t);
	if (why != NULL)
		fail(r, why);
	if (why != NULL || n == 0 || *t == ';' || *t == '#' || n + 2 > (size_t)num)
		n = 0;
	memcpy(str, t, n);
	str[n] = '\n';
	str[n + 1] = '\0';
	return str;
}

static int
handler(void *user, const char *section, const char *name, const char *value)
{
	struct rd *r = user;

	if (r->failed)
		return 1;
	if (r->fn(r->arg, section, name, value, r->line, r->err) == -1)
		r->failed = 1;
	return 1;
}

int
sr_inifile_each(const char *name, const char *buf, size_t len,
    int (*fn)(void *arg, const char *section, const char *key, const char *value, int line,
    char *err), void *arg, char *err)
{
	struct rd r = { name, buf, len, 0, 0, fn, arg, err, 0 };
	int rc = sr_ini_parse_stream(reader, &r, handler, &r, SR_INIFILE_LINE_MAX,
	    SR_INI_COMMENTS);

	if (r.failed)
		return -1;
	if (rc != 0)	/* the reader vetted every line inih sees: a bug */
		return sr_err(err, "%s:%d: inih could not read this line", name, rc > 0 ? rc : 0);
	return 0;
}
