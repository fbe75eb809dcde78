/*
 * args.c: see args.h. No global state (unlike getopt's optind): a command
 * can be parsed twice, and the unit test parses many argvs in one process.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "similar.h"
#include "util.h"

static int
nopts(const struct sr_args_template *t)
{
	int n = 0;

	while (t->opts != NULL && (t->opts[n].short_name != 0 || t->opts[n].long_name != NULL))
		n++;
	return n;
}

static int
find_short(const struct sr_args_template *t, char c)
{
	int i, n = nopts(t);

	for (i = 0; i < n; i++) {
		if (t->opts[i].short_name == c)
			return i;
	}
	return -1;
}

static int
find_long(const struct sr_args_template *t, const char *name, size_t len)
{
	int i, n = nopts(t);

	for (i = 0; i < n; i++) {
		const char *l = t->opts[i].long_name;

		if (l != NULL && strlen(l) == len && strncmp(l, name, len) == 0)
			return i;
	}
	return -1;
}

/* "unknown option --NAME", with the closest long option if one is close. */
static int
unknown_long(const struct sr_args_template *t, const char *name, size_t len, char *err)
{
	const char *cand[SR_ARGS_MAXOPTS + 1];
	char typed[72];
	size_t n = 0;
	int i, k;

	for (i = 0; i < nopts(t) && n < SR_ARGS_MAXOPTS; i++) {
		if (t->opts[i].long_name != NULL)
			cand[n++] = t->opts[i].long_name;
	}
	cand[n++] = "help";
	snprintf(typed, sizeof typed, "%.*s", (int)(len < 64 ? len : 64), name);
	k = len <= 64 ? sr_similar_closest(typed, cand, n) : -1;
	if (k >= 0)
		return sr_err(err, "unknown option --%s (did you mean --%s?)", typed, cand[k]);
	return sr_err(err, "unknown option --%s%s", typed, len > 64 ? "..." : "");
}

static int
unknown_short(char c, char *err)
{
	if (isprint((unsigned char)c))
		return sr_err(err, "unknown option -%c", c);
	return sr_err(err, "unknown option -\\x%02x", (unsigned char)c);
}

/* "1", "at most 1" or "at least 1", and what they are. */
static int
count_error(const struct sr_args_template *t, const char *what, int bound, const char *extra,
    char *err)
{
	const char *how = t->min == t->max ? "" : bound == t->max ? "at most " : "at least ";

	if (bound == 0)
		return sr_err(err, "%s%s%.64s%s (takes none)", what, extra ? ": '" : "",
		    extra ? extra : "", extra ? "'" : "");
	return sr_err(err, "%s%s%.64s%s (takes %s%d: %s)", what, extra ? ": '" : "",
	    extra ? extra : "", extra ? "'" : "", how, bound, t->operands);
}

/* Option k's value v, the last and one more of all. */
static void
set_value(struct sr_args *a, int k, const char *v)
{
	a->value[k] = v;
	a->values[k] = sr_reallocarray(a->values[k], (size_t)a->count[k], sizeof *a->values[k]);
	a->values[k][a->count[k] - 1] = v;
}

enum sr_args_result
sr_args_parse(const struct sr_args_template *t, int argc, char *const *argv, struct sr_args *a,
    char *err)
{
	int i, only_operands = 0;

	memset(a, 0, sizeof *a);
	a->argv = sr_calloc((size_t)(argc > 0 ? argc : 1), sizeof *a->argv);
	for (i = 1; i < argc; i++) {
		const char *s = argv[i], *p;
		int k;

		if (only_operands || s[0] != '-' || s[1] == '\0') {
			a->argv[a->argc++] = argv[i];
			continue;
		}
		if (strcmp(s, "--") == 0) {
			only_operands = 1;
			continue;
		}
		if (s[1] == '-') {
			const char *name = s + 2, *eq = strchr(name, '=');
			size_t len = eq != NULL ? (size_t)(eq - name) : strlen(name);

			if (len == 4 && strncmp(name, "help", 4) == 0)
				return SR_ARGS_HELP;
			if ((k = find_long(t, name, len)) == -1) {
				unknown_long(t, name, len, err);
				return SR_ARGS_ERROR;
			}
			a->count[k]++;
			if (t->opts[k].value == NULL) {
				if (eq != NULL) {
					sr_err(err, "option --%s takes no value", t->opts[k].long_name);
					return SR_ARGS_ERROR;
				}
			} else if (eq != NULL) {
				set_value(a, k, eq + 1);
			} else if (i + 1 < argc) {
				set_value(a, k, argv[++i]);
			} else {
				sr_err(err, "option --%s needs a value (%s)", t->opts[k].long_name,
				    t->opts[k].value);
				return SR_ARGS_ERROR;
			}
			continue;
		}
		for (p = s + 1; *p != '\0'; p++) {
			if (*p == 'h')
				return SR_ARGS_HELP;
			if ((k = find_short(t, *p)) == -1) {
				unknown_short(*p, err);
				return SR_ARGS_ERROR;
			}
			a->count[k]++;
			if (t->opts[k].value == NULL)
				continue;
			if (p[1] != '\0') {
				set_value(a, k, p + 1);
			} else if (i + 1 < argc) {
				set_value(a, k, argv[++i]);
			} else {
				sr_err(err, "option -%c needs a value (%s)", *p, t->opts[k].value);
				return SR_ARGS_ERROR;
			}
			break;	/* the rest of the word was the value */
		}
	}
	if (t->max >= 0 && a->argc > t->max) {
		count_error(t, "too many arguments", t->max, a->argv[t->max], err);
		return SR_ARGS_ERROR;
	}
	if (a->argc < t->min) {
		count_error(t, "too few arguments", t->min, NULL, err);
		return SR_ARGS_ERROR;
	}
	return SR_ARGS_OK;
}

void
sr_args_free(struct sr_args *a)
{
	int i;

	for (i = 0; i < SR_ARGS_MAXOPTS; i++) {
		free(a->values[i]);
		a->values[i] = NULL;
	}
	free(a->argv);
	a->argv = NULL;
	a->argc = 0;
}

int
sr_args_has(const struct sr_args *a, int i)
{
	return i >= 0 && i < SR_ARGS_MAXOPTS ? a->count[i] : 0;
}

const char *
sr_args_get(const struct sr_args *a, int i)
{
	return i >= 0 && i < SR_ARGS_MAXOPTS ? a->value[i] : NULL;
}

const char *
sr_args_nth(const struct sr_args *a, int i, int n)
{
	if (i < 0 || i >= SR_ARGS_MAXOPTS || n < 0 || n >= a->count[i] || a->values[i] == NULL)
		return NULL;
	return a->values[i][n];
}

int
sr_args_template_check(const struct sr_args_template *t, char *err)
{
	int i, j, n = nopts(t);

	if (n > SR_ARGS_MAXOPTS)
		return sr_err(err, "check template: %d options, at most %d", n, SR_ARGS_MAXOPTS);
	if (t->operands == NULL || t->min < 0 || (t->max >= 0 && t->max < t->min))
		return sr_err(err, "check template: positional arguments %d..%d (%s)", t->min,
		    t->max, t->operands != NULL ? t->operands : "no usage");
	for (i = 0; i < n; i++) {
		const struct sr_opt *o = &t->opts[i];
		const char *l = o->long_name;

		if (o->help == NULL || *o->help == '\0')
			return sr_err(err, "check template: option %d has no help line", i);
		if (o->short_name == 'h' || (l != NULL && strcmp(l, "help") == 0))
			return sr_err(err, "check template: option %d redeclares -h/--help", i);
		if (o->short_name == '-' || (o->short_name != 0 && !isalnum((unsigned char)o->short_name)))
			return sr_err(err, "check template: option %d: short name is not a letter"
			    " or digit", i);
		if (l != NULL && (*l == '\0' || *l == '-' || strchr(l, '=') != NULL))
			return sr_err(err, "check template: option %d: bad long name '%s'", i, l);
		for (j = 0; j < i; j++) {
			const struct sr_opt *q = &t->opts[j];

			if (o->short_name != 0 && o->short_name == q->short_name)
				return sr_err(err, "check template: -%c declared twice", o->short_name);
			if (l != NULL && q->long_name != NULL && strcmp(l, q->long_name) == 0)
				return sr_err(err, "check template: --%s declared twice", l);
		}
	}
	return 0;
}

/* "-s STORE", "--queue URL", "-q" or "--json" into buf. */
static void
opt_form(const struct sr_opt *o, int both, char *buf, size_t len)
{
	char name[72];

	if (both && o->short_name != 0 && o->long_name != NULL)
		snprintf(name, sizeof name, "-%c, --%s", o->short_name, o->long_name);
	else if (o->short_name != 0)
		snprintf(name, sizeof name, "-%c", o->short_name);
	else
		snprintf(name, sizeof name, "%s--%s", both ? "    " : "", o->long_name);
	snprintf(buf, len, "%s%s%s", name, o->value != NULL ? " " : "",
	    o->value != NULL ? o->value : "");
}

char *
sr_args_synopsis(const struct sr_args_template *t)
{
	int i, n = nopts(t);
	size_t cap = strlen(t->operands) + 1, used = 0;
	char *out, form[160];

	for (i = 0; i < n; i++)
		cap += 160 + 3;
	out = sr_malloc(cap);
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		opt_form(&t->opts[i], 0, form, sizeof form);
		used += (size_t)snprintf(out + used, cap - used, "%s[%s]", used ? " " : "", form);
	}
	snprintf(out + used, cap - used, "%s%s", used && *t->operands ? " " : "", t->operands);
	return out;
}

void
sr_args_print_options(const struct sr_args_template *t, FILE *fp)
{
	static const struct sr_opt help = { 'h', "help", NULL, "show this help" };
	int i, n = nopts(t);
	size_t width = 0;
	char form[160];

	for (i = 0; i <= n; i++) {
		opt_form(i < n ? &t->opts[i] : &help, 1, form, sizeof form);
		if (strlen(form) > width)
			width = strlen(form);
	}
	for (i = 0; i <= n; i++) {
		const struct sr_opt *o = i < n ? &t->opts[i] : &help;

		opt_form(o, 1, form, sizeof form);
		fprintf(fp, "  %-*s  %s\n", (int)width, form, o->help);
	}
}
