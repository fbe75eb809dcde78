/*
 * ignore.c: the rules of .gitignore files (ignore.h), matched with
 * fnmatch(3) and FNM_PATHNAME, "**" segments by recursion.
 */
#include "config.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "ignore.h"
#include "util.h"

struct rule {
	char *dir;		/* the directory of its file ("": the root) */
	char *pat;		/* without '!', a leading '/' or a trailing '/' */
	int neg, dir_only, anchored;
};

struct sr_ignore {
	struct rule *v;
	size_t n, cap;
};

struct sr_ignore *
sr_ignore_new(char *err)
{
	return sr_try_calloc(1, sizeof(struct sr_ignore), err);
}

static void
rule_free(struct rule *r)
{
	free(r->dir);
	free(r->pat);
}

void
sr_ignore_free(struct sr_ignore *ig)
{
	size_t i;

	if (ig == NULL)
		return;
	for (i = 0; i < ig->n; i++)
		rule_free(&ig->v[i]);
	free(ig->v);
	free(ig);
}

/* The "**" segments of the pattern [a, e): whole segments only. */
static int
globstars(const char *a, const char *e)
{
	const char *p;
	int n = 0;

	for (p = a; p + 1 < e; p++)
		if (p[0] == '*' && p[1] == '*' && (p == a || p[-1] == '/') &&
		    (p + 2 == e || p[2] == '/'))
			n++;
	return n;
}

/* Line number line, [a, e): a rule added, or nothing. 0 or -1 (out of
 * memory, or a pattern of too many "**" segments). */
static int
add_line(struct sr_ignore *ig, const char *dir, size_t line, const char *a, const char *e,
    char *err)
{
	struct rule r = { NULL, NULL, 0, 0, 0 };

	if (e > a && e[-1] == '\r')
		e--;
	/* trailing blanks go, unless the last one is escaped */
	while (e > a && (e[-1] == ' ' || e[-1] == '\t') && !(e - 1 > a && e[-2] == '\\'))
		e--;
	if (e == a || *a == '#')
		return 0;
	if (*a == '!') {
		r.neg = 1;
		a++;
	} else if (*a == '\\' && e - a > 1 && (a[1] == '!' || a[1] == '#'))
		a++;
	if (e > a && e[-1] == '/') {
		r.dir_only = 1;
		e--;
	}
	if (e <= a)
		return 0;
	if (globstars(a, e) > SR_IGNORE_GLOBSTARS_MAX)
		return sr_err(err, "line %zu: %.*s: more than %d \"**\" segments, each of which "
		    "multiplies the work of matching a path: split it into rules of fewer",
		    line, (int)(e - a), a, SR_IGNORE_GLOBSTARS_MAX);
	r.anchored = memchr(a, '/', (size_t)(e - a)) != NULL;
	if (*a == '/')
		a++;
	if (e == a)
		return 0;
	if (ig->n == ig->cap) {
		size_t cap = ig->cap ? ig->cap * 2 : 16;
		struct rule *v = sr_try_reallocarray(ig->v, cap, sizeof *v, err);

		if (v == NULL)
			return -1;
		ig->v = v;
		ig->cap = cap;
	}
	if ((r.dir = sr_try_strdup(dir, err)) == NULL ||
	    (r.pat = sr_try_strndup(a, (size_t)(e - a), err)) == NULL) {
		rule_free(&r);
		return -1;
	}
	ig->v[ig->n++] = r;
	return 0;
}

int
sr_ignore_push(struct sr_ignore *ig, const char *dir, const char *text, size_t len, char *err)
{
	const char *p = text, *end = text + len, *nl;
	size_t line = 0;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		if (add_line(ig, dir, ++line, p, nl, err) == -1)
			return -1;
		p = nl + 1;
	}
	return 0;
}

void
sr_ignore_pop(struct sr_ignore *ig, const char *dir)
{
	while (ig->n > 0 && strcmp(ig->v[ig->n - 1].dir, dir) == 0)
		rule_free(&ig->v[--ig->n]);
}

/* fnmatch on the first n bytes of s. */
static int
match_prefix(const char *p, const char *s, size_t n)
{
	char *t = strndup(s, n);
	int ok;

	if (t == NULL)
		return 0;	/* out of memory: no match, the file is taken */
	ok = fnmatch(p, t, FNM_PATHNAME) == 0;
	free(t);
	return ok;
}

int
sr_ignore_glob(const char *p, const char *s)
{
	const char *k, *q;
	char *head;
	int ok = 0;

	if (strncmp(p, "**/", 3) == 0) {	/* any leading directories, none too */
		if (sr_ignore_glob(p + 3, s))
			return 1;
		for (q = strchr(s, '/'); q != NULL; q = strchr(q + 1, '/'))
			if (sr_ignore_glob(p + 3, q + 1))
				return 1;
		return 0;
	}
	if (strcmp(p, "**") == 0)
		return 1;
	/* the first slash-and-double-star that is a whole segment: what is
	 * before it matches a leading run of s's directories, the rest (from
	 * the double star) what follows */
	for (k = strstr(p, "/**"); k != NULL; k = strstr(k + 1, "/**"))
		if (k[3] == '/' || k[3] == '\0')
			break;
	if (k == NULL)
		return fnmatch(p, s, FNM_PATHNAME) == 0;
	if ((head = strndup(p, (size_t)(k - p))) == NULL)
		return 0;
	for (q = strchr(s, '/'); q != NULL && !ok; q = strchr(q + 1, '/'))
		ok = match_prefix(head, s, (size_t)(q - s)) && sr_ignore_glob(k + 1, q + 1);
	free(head);
	return ok;
}

int
sr_ignore_match(const struct sr_ignore *ig, const char *path, int is_dir)
{
	const char *base = strrchr(path, '/'), *rel;
	size_t i, n;
	int out = 0;

	base = base != NULL ? base + 1 : path;
	for (i = 0; i < ig->n; i++) {
		const struct rule *r = &ig->v[i];

		if (r->dir_only && !is_dir)
			continue;
		n = strlen(r->dir);
		if (n == 0)
			rel = path;
		else if (strncmp(path, r->dir, n) == 0 && path[n] == '/')
			rel = path + n + 1;
		else
			continue;
		if (r->anchored ? sr_ignore_glob(r->pat, rel) : fnmatch(r->pat, base, 0) == 0)
			out = !r->neg;
	}
	return out;
}
