/*
 * prices.c: the price table (prices.h): its INI file read setting by
 * setting (common/inifile.h), every fault named with its line and the
 * fix, and lookups by instance type.
 */
#include "config.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "inifile.h"
#include "prices.h"
#include "similar.h"
#include "util.h"

#define TYPE_MAX 63		/* an instance type's name (Azure's are the longest) */
#define BUILTIN_NAME "the built-in price table"

/* A [cloud] section and what it says of its prices. */
struct section {
	char *name, *as_of, *region, *source;
	int line;		/* of its first setting: inih reports no header line */
	int as_of_line, region_line, source_line;
};

struct sr_prices {
	char *name;
	struct sr_price *v;
	size_t n;
	struct section *secs;
	size_t nsecs;
};

/* A price line that failed is an attempt at one of these: say which. */
static const char *const meta_keys[] = { "as_of", "region", "source" };

static struct section *
section_of(struct sr_prices *t, const char *name, int line)
{
	size_t i;

	for (i = 0; i < t->nsecs; i++)
		if (strcmp(t->secs[i].name, name) == 0)
			return &t->secs[i];
	t->secs = sr_reallocarray(t->secs, t->nsecs + 1, sizeof *t->secs);
	memset(&t->secs[t->nsecs], 0, sizeof *t->secs);
	t->secs[t->nsecs].name = sr_strdup(name);
	t->secs[t->nsecs].line = line;
	return &t->secs[t->nsecs++];
}

static int
is_word(const char *s, const char *extra)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (!isalnum((unsigned char)s[i]) && strchr(extra, s[i]) == NULL)
			return 0;
	return i > 0;
}

/* YYYY-MM-DD with a month and a day that exist (leap years counted). */
static int
is_date(const char *s)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, m, d, n = 0;

	if (strlen(s) != 10 || sscanf(s, "%4d-%2d-%2d%n", &y, &m, &d, &n) != 3 || n != 10 ||
	    s[4] != '-' || s[7] != '-' || !isdigit((unsigned char)s[5]) ||
	    !isdigit((unsigned char)s[8]))
		return 0;
	if (y < 2000 || m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
		return 0;
	return !(m == 2 && d == 29 && (y % 4 != 0 || (y % 100 == 0 && y % 400 != 0)));
}

/* A section's as_of, region or source: once, not empty, a date for as_of. */
static int
set_meta(const char *tname, struct section *s, const char *key, const char *value, int line,
    char *err)
{
	char **slot = strcmp(key, "as_of") == 0 ? &s->as_of :
	    strcmp(key, "region") == 0 ? &s->region : &s->source;
	int *at = slot == &s->as_of ? &s->as_of_line : slot == &s->region ? &s->region_line :
	    &s->source_line;

	if (*slot != NULL)
		return sr_err(err, "%s:%d: %s appears twice in [%s] (first on line %d); keep one",
		    tname, line, key, s->name, *at);
	if (value[0] == '\0')
		return sr_err(err, "%s:%d: %s is empty; %s", tname, line, key,
		    slot == &s->as_of ? "give the date the prices were read, as YYYY-MM-DD" :
		    slot == &s->region ? "name the region the prices are for, or remove the line" :
		    "give the page the prices come from");
	if (slot == &s->as_of && !is_date(value))
		return sr_err(err, "%s:%d: as_of = %.64s: not a date; write YYYY-MM-DD, as in "
		    "as_of = 2024-12-01", tname, line, value);
	*slot = sr_strdup(value);
	*at = line;
	return 0;
}

/* "ON_DEMAND SPOT": two prices from 0 to SR_PRICES_MAX. */
static int
parse_pair(const char *value, double *od, double *spot)
{
	char *end;

	*od = strtod(value, &end);
	if (end == value || !isspace((unsigned char)*end))
		return -1;
	value = end;
	*spot = strtod(value, &end);
	if (end == value)
		return -1;
	while (isspace((unsigned char)*end))
		end++;
	if (*end != '\0' || !isfinite(*od) || !isfinite(*spot))
		return -1;
	return *od >= 0 && *spot >= 0 && *od <= SR_PRICES_MAX && *spot <= SR_PRICES_MAX ? 0 : -1;
}

static int
on_setting(void *arg, const char *section, const char *key, const char *value, int line,
    char *err)
{
	struct sr_prices *t = arg;
	struct section *s;
	struct sr_price *p;
	double od, spot;
	size_t i;

	if (section[0] == '\0')
		return sr_err(err, "%s:%d: %.64s = ...: a setting before any [cloud] section; put "
		    "it under one, as in [aws]", t->name, line, key);
	if (!is_word(section, "_-"))
		return sr_err(err, "%s:%d: section [%s]: a cloud's name is letters, digits, '_' and "
		    "'-', as in [aws]", t->name, line, section);
	s = section_of(t, section, line);
	for (i = 0; i < SR_ARRAY_LEN(meta_keys); i++)
		if (strcmp(key, meta_keys[i]) == 0)
			return set_meta(t->name, s, key, value, line, err);
	if (!is_word(key, "._-") || strlen(key) > TYPE_MAX)
		return sr_err(err, "%s:%d: %.64s: not an instance type (1 to %d letters, digits, '.', "
		    "'_' and '-', as in p4d.24xlarge)", t->name, line, key, TYPE_MAX);
	if (parse_pair(value, &od, &spot) == -1) {
		for (i = 0; i < SR_ARRAY_LEN(meta_keys); i++)
			if (sr_similar_close(key, meta_keys[i], SR_SIMILAR_FOLD_CASE))
				return sr_err(err, "%s:%d: unknown key '%s' (did you mean '%s'?); a "
				    "section takes as_of, region, source and TYPE = ON_DEMAND SPOT lines",
				    t->name, line, key, meta_keys[i]);
		return sr_err(err, "%s:%d: %s = %.64s: want ON_DEMAND SPOT, two prices in dollars "
		    "an hour from 0 to 1000000, as in %s = 32.7726 12.5", t->name, line, key, value,
		    key);
	}
	for (i = 0; i < t->n; i++)
		if (strcasecmp(t->v[i].type, key) == 0)
			return sr_err(err, "%s:%d: instance type %s is in the table twice (first on "
			    "line %d, in [%s]); keep one", t->name, line, key, t->v[i].line,
			    t->v[i].cloud);
	t->v = sr_reallocarray(t->v, t->n + 1, sizeof *t->v);
	p = &t->v[t->n++];
	memset(p, 0, sizeof *p);
	p->type = sr_strdup(key);
	p->cloud = s->name;	/* the strings below are filled in once all is read */
	p->on_demand = od;
	p->spot = spot;
	p->line = line;
	return 0;
}

/* What the whole file must say: a date and a source for every section
 * that prices anything, and at least one price. */
static int
finish(struct sr_prices *t, char *err)
{
	size_t i, j;

	if (t->n == 0)
		return sr_err(err, "%s: no instance types; add lines TYPE = ON_DEMAND SPOT (dollars "
		    "an hour) under a [cloud] section", t->name);
	for (i = 0; i < t->nsecs; i++) {
		struct section *s = &t->secs[i];

		for (j = 0; j < t->n && t->v[j].cloud != s->name; j++)
			;
		if (j == t->n)
			continue;
		if (s->as_of == NULL)
			return sr_err(err, "%s:%d: section [%s] (its first setting is on this line) "
			    "has no as_of; add as_of = YYYY-MM-DD, the date its prices were read",
			    t->name, s->line, s->name);
		if (s->source == NULL)
			return sr_err(err, "%s:%d: section [%s] (its first setting is on this line) "
			    "has no source; add source = the page its prices come from", t->name,
			    s->line, s->name);
	}
	for (j = 0; j < t->n; j++) {
		for (i = 0; t->secs[i].name != t->v[j].cloud; i++)
			;
		t->v[j].as_of = t->secs[i].as_of;
		t->v[j].region = t->secs[i].region != NULL ? t->secs[i].region : "";
	}
	return 0;
}

void
sr_prices_free(struct sr_prices *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->n; i++)
		free((char *)t->v[i].type);
	for (i = 0; i < t->nsecs; i++) {
		free(t->secs[i].name);
		free(t->secs[i].as_of);
		free(t->secs[i].region);
		free(t->secs[i].source);
	}
	free(t->v);
	free(t->secs);
	free(t->name);
	free(t);
}

int
sr_prices_parse(const char *name, const char *text, size_t len, struct sr_prices **out,
    char *err)
{
	struct sr_prices *t = sr_calloc(1, sizeof *t);

	*out = NULL;
	t->name = sr_strdup(name);
	if (sr_inifile_each(name, text, len, on_setting, t, err) == -1 || finish(t, err) == -1) {
		sr_prices_free(t);
		return -1;
	}
	*out = t;
	return 0;
}

int
sr_prices_load(const char *path, struct sr_prices **out, char *err)
{
	char *text;
	size_t len;
	int rc;

	*out = NULL;
	if (sr_read_file(path, SR_PRICES_FILE_MAX, &text, &len, err) == -1)
		return sr_err_prefix(err, "read price table");
	rc = sr_prices_parse(path, text, len, out, err);
	free(text);
	return rc;
}

int
sr_prices_builtin(struct sr_prices **out, char *err)
{
	return sr_prices_parse(BUILTIN_NAME, sr_prices_builtin_text, strlen(sr_prices_builtin_text),
	    out, err);
}

const char *
sr_prices_name(const struct sr_prices *t)
{
	return t->name;
}

size_t
sr_prices_count(const struct sr_prices *t)
{
	return t->n;
}

const struct sr_price *
sr_prices_at(const struct sr_prices *t, size_t i)
{
	return i < t->n ? &t->v[i] : NULL;
}

const struct sr_price *
sr_prices_find(const struct sr_prices *t, const char *type)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcasecmp(t->v[i].type, type) == 0)
			return &t->v[i];
	return NULL;
}

int
sr_prices_cost(const struct sr_prices *t, const char *type, int spot, double seconds,
    double *dollars, char *err)
{
	const struct sr_price *p = sr_prices_find(t, type);

	*dollars = 0;
	if (!isfinite(seconds) || seconds < 0)
		return sr_err(err, "price %g seconds of %s: not a duration", seconds, type);
	if (type[0] == '\0')
		return sr_err(err, "price a machine of no known instance type: name its type, or "
		    "price a machine spotrun does not rent as local");
	if (p == NULL)
		return sr_err(err, "price instance type %.64s: not in %s; add a line %.64s = "
		    "ON_DEMAND SPOT (dollars an hour) to it", type, t->name, type);
	*dollars = (spot ? p->spot : p->on_demand) * seconds / 3600.0;
	return 0;
}
