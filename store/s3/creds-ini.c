/*
 * creds-ini.c: reading ~/.aws/credentials, ~/.aws/config and ~/.boto the
 * way the AWS CLI and gsutil do (Python's configparser), on inih.
 *
 * inih does the "key = value" splitting and its comment rules; a reader of
 * our own feeds it one vetted line at a time, as runner/jobspec.c does, so
 * that each error can name its line and reason. The reader also follows
 * configparser where inih differs: section names of any length (inih cuts
 * them at 50 bytes, so the reader tracks sections itself), indented lines
 * continuing the previous key (the CLI's nested `s3 =` settings), and
 * strictness about duplicate sections and keys. No message quotes a line:
 * a broken line in a credentials file is likely to hold a secret.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "creds-int.h"
#include "iniparse.h"
#include "util.h"

#define FILE_MAX	(4 * 1024 * 1024)	/* SSO-generated configs can be long */
#define LINE_MAX_LEN	65536			/* the same as runner/jobspec.c's */
#define NAME_SHOW_MAX	64			/* longest key name a message shows */

struct ent {
	const char *section;	/* the sec's name */
	char *key;		/* lower-cased */
	char *value;
	int line;
};

struct sec {
	char *name;
	int line;
};

struct sr_ini {
	char *path;
	int exists;
	struct ent *v;
	size_t n, cap;
	struct sec *secs;
	size_t nsecs;
};

/* The reader's state while inih parses one file. */
struct rd {
	struct sr_ini *f;
	const char *buf;
	size_t len, off;
	int line;
	const char *section;	/* the current section (f's copy); NULL before any */
	char parent[256];	/* the last key of this section, lower-cased; "" none */
	size_t parent_indent;
	int parent_nested;	/* its value was empty: indented lines are sub-keys */
	char *err;
	int failed;
};

static int
fail(struct rd *r, const char *fmt, ...) SR_PRINTF(2, 3);

static int
fail(struct rd *r, const char *fmt, ...)
{
	char reason[SR_ERRMAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
	if (!r->failed)
		sr_err(r->err, "read %s:%d: %s", r->f->path, r->line, reason);
	r->failed = 1;
	return 0;
}

/* An allocation failed (its message in r->err, unless a failure came
 * first): "read PATH: allocate N bytes: out of memory". Returns 0, as
 * fail. */
static int
fail_oom(struct rd *r, const char *what)
{
	if (!r->failed)
		sr_err_prefix(r->err, "read %s: %s", r->f->path, what);
	r->failed = 1;
	return 0;
}

/* Whether a key name may appear in a message: configuration keys are
 * words in one case; mixed case could be a piece of a wrapped secret. */
static int
showable(const char *name)
{
	size_t n = strlen(name);

	return n > 0 && n <= NAME_SHOW_MAX &&
	    (strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_.-") == n ||
	    strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n);
}

static struct ent *
find(const struct sr_ini *f, const char *section, const char *key)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (strcmp(f->v[i].section, section) == 0 &&
		    strcasecmp(f->v[i].key, key) == 0)
			return &f->v[i];
	return NULL;
}

/* inih's callback: one "name = value" line, of the reader's section. */
static int
on_key(void *user, const char *section, const char *name, const char *value)
{
	struct rd *r = user;
	struct sr_ini *f = r->f;
	struct ent *e;
	char *key, *val;
	size_t i;

	(void)section;	/* the reader tracks sections: inih cuts long names */
	if (r->failed || r->section == NULL)
		return 1;
	if ((key = sr_try_strdup(name, r->err)) == NULL) {
		fail_oom(r, "keep a key");
		return 1;
	}
	for (i = 0; key[i] != '\0'; i++)
		key[i] = (char)tolower((unsigned char)key[i]);
	if ((e = find(f, r->section, key)) != NULL) {
		if (showable(name))
			fail(r, "key '%s' appears twice in [%s] (first on line %d); keep one",
			    key, r->section, e->line);
		else
			fail(r, "a key appears twice in [%s] (first on line %d); keep one",
			    r->section, e->line);
		free(key);
		return 1;
	}
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 16;
		struct ent *v = sr_try_reallocarray(f->v, cap, sizeof *f->v, r->err);

		if (v == NULL) {
			free(key);
			fail_oom(r, "keep a key");
			return 1;
		}
		f->v = v;
		f->cap = cap;
	}
	if ((val = sr_try_strdup(value, r->err)) == NULL) {
		free(key);
		fail_oom(r, "keep a value");
		return 1;
	}
	e = &f->v[f->n++];
	e->section = r->section;
	e->key = key;
	e->value = val;
	e->line = r->line;
	return 1;
}

/* A "[name]" line (a..e, trimmed). 1 when it is good. */
static int
section_header(struct rd *r, const char *a, const char *e)
{
	struct sr_ini *f = r->f;
	const char *close = memchr(a, ']', (size_t)(e - a));
	struct sec *secs;
	char *name;
	size_t i;

	if (close == NULL)
		return fail(r, "the section header has no closing ']'");
	if (close == a + 1)
		return fail(r, "empty section name []");
	if ((name = sr_try_strndup(a + 1, (size_t)(close - a - 1), r->err)) == NULL)
		return fail_oom(r, "keep a section");
	for (i = 0; i < f->nsecs; i++) {
		if (strcmp(f->secs[i].name, name) == 0) {
			fail(r, "section [%s] appears twice (first on line %d); merge them",
			    name, f->secs[i].line);
			free(name);
			return 0;
		}
	}
	if ((secs = sr_try_reallocarray(f->secs, f->nsecs + 1, sizeof *f->secs, r->err)) == NULL) {
		free(name);
		return fail_oom(r, "keep a section");
	}
	f->secs = secs;
	f->secs[f->nsecs].name = name;
	f->secs[f->nsecs].line = r->line;
	f->nsecs++;
	r->section = name;
	r->parent[0] = '\0';
	return 1;
}

/* The position of the first '=' or ':' in a..e, or NULL. */
static const char *
delimiter(const char *a, const char *e)
{
	for (; a < e; a++)
		if (*a == '=' || *a == ':')
			return a;
	return NULL;
}

/* Copy the key of "key = value" (a..e) into out, lower-cased and trimmed;
 * sets *nested when the value is empty. */
static void
key_of(const char *a, const char *e, char *out, size_t len, int *nested)
{
	const char *d = delimiter(a, e), *k = d, *v = d + 1;
	size_t n, i;

	while (k > a && isspace((unsigned char)k[-1]))
		k--;
	n = (size_t)(k - a) < len - 1 ? (size_t)(k - a) : len - 1;
	for (i = 0; i < n; i++)
		out[i] = (char)tolower((unsigned char)a[i]);
	out[n] = '\0';
	while (v < e && isspace((unsigned char)*v))
		v++;
	*nested = v == e;
}

/*
 * Vet line a..e (without its newline) and write what inih is to see into
 * str (num bytes): "" for lines it must skip (blank, comment, section
 * header: the reader keeps the section), "key = value" or
 * "parent.sub = value" otherwise. 0 when the line is bad (reported).
 */
static int
vet_line(struct rd *r, const char *a, const char *e, char *str, int num)
{
	const char *s = a, *d;
	size_t indent, n;
	int nested;

	str[0] = '\0';
	while (e > a && isspace((unsigned char)e[-1]))
		e--;
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	indent = (size_t)(s - a);
	if (s == e || *s == '#' || *s == ';')
		return 1;
	if (indent > 0 && r->section != NULL && r->parent[0] != '\0' &&
	    indent > r->parent_indent) {
		/* configparser: the previous key's value goes on. Nested
		 * settings become "parent.sub"; other continuations (a
		 * multi-line value) are none of ours. */
		if (!r->parent_nested || (d = delimiter(s, e)) == NULL)
			return 1;
		n = strlen(r->parent) + 1 + (size_t)(e - s);
		if (n > (size_t)num - 2)
			return fail(r, "the line is longer than %d characters", num - 2);
		snprintf(str, (size_t)num, "%s.%.*s", r->parent, (int)(e - s), s);
		return 1;
	}
	if (*s == '[')
		return section_header(r, s, e);
	if ((d = delimiter(s, e)) == NULL)
		return fail(r, "expected key = value or [section] (the line is not shown: "
		    "it may hold a secret)");
	if (d == s)
		return fail(r, "no key name before '%c'", *d);
	if (r->section == NULL)
		return fail(r, "a key comes before any [section] header; put it under one, "
		    "such as [default]");
	if ((size_t)(e - s) > (size_t)num - 2)
		return fail(r, "the line is longer than %d characters", num - 2);
	key_of(s, e, r->parent, sizeof r->parent, &nested);
	r->parent_indent = indent;
	r->parent_nested = nested;
	memcpy(str, s, (size_t)(e - s));
	str[e - s] = '\0';
	return 1;
}

/* inih's reader: one line of the file per call, vetted. NULL at the end
 * or after an error. */
static char *
read_line(char *str, int num, void *stream)
{
	struct rd *r = stream;
	const char *a, *e;

	if (r->failed || !sr_ini_next_line(r->buf, r->len, &r->off, &r->line, &a, &e))
		return NULL;
	if (memchr(a, '\0', (size_t)(e - a)) != NULL) {
		fail(r, "the line contains a NUL byte; the file must be text");
		return NULL;
	}
	if (e - a > LINE_MAX_LEN) {
		fail(r, "the line is longer than %d characters", LINE_MAX_LEN);
		return NULL;
	}
	if (!vet_line(r, a, e, str, num))
		return NULL;
	return str;
}

int
sr_ini_load(const char *path, struct sr_ini **out, char *err)
{
	struct sr_ini *f;
	struct rd r;
	char *buf = NULL;
	size_t len = 0;
	int fd, ret;

	*out = NULL;
	if ((f = sr_try_calloc(1, sizeof *f, err)) == NULL)
		return sr_err_prefix(err, "read %s", path);
	if ((f->path = sr_try_strdup(path, err)) == NULL) {
		free(f);
		return sr_err_prefix(err, "read %s", path);
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		if (errno == ENOENT || errno == ENOTDIR) {
			*out = f;
			return 0;
		}
		sr_errno(err, "read %s", path);
		sr_ini_free(f);
		return -1;
	}
	close(fd);
	if (sr_read_file(path, FILE_MAX, &buf, &len, err) == -1) {
		sr_ini_free(f);
		return -1;
	}
	f->exists = 1;
	memset(&r, 0, sizeof r);
	r.f = f;
	r.buf = buf;
	r.len = len;
	r.err = err;
	/* The line buffer must be long enough for a session token (Debian's
	 * default is 200 bytes); sr_ini_parse_stream is thread-safe. Only
	 * " ;" ends a value, inih's default: a secret may hold " #". */
	ret = sr_ini_parse_stream(read_line, &r, on_key, &r, LINE_MAX_LEN, ";");
	if (ret == -2 && !r.failed) {
		/* inih's line buffer */
		sr_err_oom(err, "parse");
		sr_err_prefix(err, "read %s", path);
		r.failed = 1;
	}
	if (ret != 0 && !r.failed) {
		/* The reader vets every line: inih should find nothing. */
		sr_err(err, "read %s:%d: cannot parse this line", path, ret);
		r.failed = 1;
	}
	explicit_bzero(buf, len);
	free(buf);
	if (r.failed) {
		sr_ini_free(f);
		return -1;
	}
	*out = f;
	return 0;
}

int
sr_ini_exists(const struct sr_ini *f)
{
	return f->exists;
}

const char *
sr_ini_path(const struct sr_ini *f)
{
	return f->path;
}

int
sr_ini_has_section(const struct sr_ini *f, const char *section)
{
	size_t i;

	for (i = 0; i < f->nsecs; i++)
		if (strcmp(f->secs[i].name, section) == 0)
			return 1;
	return 0;
}

const char *
sr_ini_get(const struct sr_ini *f, const char *section, const char *key)
{
	const struct ent *e = find(f, section, key);

	return e != NULL ? e->value : NULL;
}

int
sr_ini_line(const struct sr_ini *f, const char *section, const char *key)
{
	const struct ent *e = find(f, section, key);

	return e != NULL ? e->line : 0;
}

void
sr_ini_free(struct sr_ini *f)
{
	size_t i;

	if (f == NULL)
		return;
	for (i = 0; i < f->n; i++) {
		explicit_bzero(f->v[i].value, strlen(f->v[i].value));
		free(f->v[i].value);
		free(f->v[i].key);
	}
	for (i = 0; i < f->nsecs; i++)
		free(f->secs[i].name);
	free(f->v);
	free(f->secs);
	free(f->path);
	free(f);
}
