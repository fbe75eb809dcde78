/*
 * sweep.c: a sweep file's trials (see sweep.h): the grid's points, the
 * substitution of ${name}, the trials' names and ids, and each trial's
 * job file, written by rewriting the sweep's own file line by line rather
 * than printing the parsed spec, so that what is queued is the file as
 * its author wrote it (comments, order, relative paths), with only the
 * trial's lines changed.
 */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "iniparse.h"
#include "jobspec.h"
#include "strbuf.h"
#include "sweep.h"
#include "util.h"

size_t
sr_sweep_count(const struct sr_jobspec *js)
{
	size_t n = 1, k;

	if (js->nsweep == 0)
		return 0;
	for (k = 0; k < js->nsweep; k++) {
		if (js->sweep[k].nvalues != 0 && n > SIZE_MAX / js->sweep[k].nvalues)
			return SIZE_MAX;
		n *= js->sweep[k].nvalues;
	}
	return n;
}

/* The index into js->sweep[k].values of trial t: the last parameter moves
 * fastest, as in nested loops written in the file's order. */
static size_t
value_index(const struct sr_jobspec *js, size_t t, size_t k)
{
	size_t j;

	for (j = js->nsweep; j-- > k + 1;)
		t /= js->sweep[j].nvalues;
	return t % js->sweep[k].nvalues;
}

const char *
sr_sweep_value(const struct sr_jobspec *js, size_t t, size_t k)
{
	return js->sweep[k].values[value_index(js, t, k)];
}

size_t
sr_sweep_longest(const struct sr_jobspec *js)
{
	size_t t = 0, k, i, best;

	for (k = 0; k < js->nsweep; k++) {
		for (best = 0, i = 1; i < js->sweep[k].nvalues; i++) {
			if (strlen(js->sweep[k].values[i]) > strlen(js->sweep[k].values[best]))
				best = i;
		}
		t = t * js->sweep[k].nvalues + best;
	}
	return t;
}

/* Digits of n: the width of the trials' numbers. */
static int
width_of(size_t n)
{
	int w = 1;

	while (n >= 10) {
		n /= 10;
		w++;
	}
	return w;
}

int
sr_sweep_trial_name(const struct sr_jobspec *js, size_t t, char *name, char *err)
{
	int w = width_of(sr_sweep_count(js));

	if (strlen(js->name) + 1 + (size_t)w > SR_JOBSPEC_NAME_MAX)
		return sr_err(err, "%s.%0*zu is longer than %d characters", js->name, w, t + 1,
		    SR_JOBSPEC_NAME_MAX);
	snprintf(name, SR_JOBSPEC_NAME_MAX + 1, "%s.%0*zu", js->name, w, t + 1);
	return 0;
}

/* The parameter named by the n bytes at name, or -1. */
static long
param_of(const struct sr_jobspec *js, const char *name, size_t n)
{
	size_t k;

	for (k = 0; k < js->nsweep; k++) {
		if (strlen(js->sweep[k].key) == n && memcmp(js->sweep[k].key, name, n) == 0)
			return (long)k;
	}
	return -1;
}

/* "lr, seed": the parameters' names for a message, cut at about 200. */
static void
param_list(const struct sr_jobspec *js, char *list, size_t size)
{
	size_t k;

	list[0] = '\0';
	for (k = 0; k < js->nsweep && strlen(list) < 200; k++)
		snprintf(list + strlen(list), size - strlen(list), "%s%s", k ? ", " : "",
		    js->sweep[k].key);
	if (k < js->nsweep)
		snprintf(list + strlen(list), size - strlen(list), ", ...");
}

int
sr_sweep_subst(const struct sr_jobspec *js, size_t t, const char *s, char **out, char *err)
{
	struct sr_strbuf b = SR_STRBUF_INIT(NULL);
	char list[256];
	const char *p = s, *name, *v;
	size_t n;
	long k;

	while (*p != '\0') {
		if (p[0] == '$' && p[1] == '$' && p[2] == '{') {
			if (t != SR_SWEEP_CHECK)
				sr_strbuf_add(&b, "${", 2);
			p += 3;
		} else if (p[0] == '$' && p[1] == '{') {
			name = p + 2;
			for (n = 0; isalnum((unsigned char)name[n]) || name[n] == '_'; n++)
				;
			if (n == 0 || isdigit((unsigned char)name[0]) || name[n] != '}' ||
			    n > SR_SWEEP_NAME_MAX) {
				sr_strbuf_free(&b);
				/* Shown: "${", the name, and what follows it when it is a
				 * printable ASCII character (never half of a UTF-8 one). */
				param_list(js, list, sizeof list);
				return sr_err(err, "${%.*s%s%.*s at character %zu is not a reference "
				    "to a parameter; write ${NAME} with a name from [sweep] (%s), or "
				    "$${ for a literal ${", (int)(n > 20 ? 20 : n), name,
				    n > 20 ? "..." : "", name[n] >= ' ' && name[n] <= '~' ? 1 : 0,
				    name + n, (size_t)(p - s) + 1, list);
			}
			if ((k = param_of(js, name, n)) < 0) {
				sr_strbuf_free(&b);
				param_list(js, list, sizeof list);
				return sr_err(err, "${%.*s} is not a parameter of [sweep] (%s); write "
				    "$${%.*s} for a literal ${%.*s}", (int)n, name, list, (int)n, name,
				    (int)n, name);
			}
			if (t != SR_SWEEP_CHECK) {
				v = sr_sweep_value(js, t, (size_t)k);
				sr_strbuf_str(&b, v);
			}
			p = name + n + 1;
		} else {
			n = strcspn(p + 1, "$") + 1;
			if (t != SR_SWEEP_CHECK)
				sr_strbuf_add(&b, p, n);
			p += n;
		}
		if (b.len > SR_JOBSPEC_LINE_MAX) {
			sr_strbuf_free(&b);
			return sr_err(err, "longer than %d bytes once the values are substituted",
			    SR_JOBSPEC_LINE_MAX);
		}
	}
	if (t == SR_SWEEP_CHECK) {
		sr_strbuf_free(&b);	/* empty: nothing is written when only checking */
		return 0;
	}
	if ((*out = sr_strbuf_take(&b)) == NULL)
		return sr_err_oom(err, "substitute the sweep's values");
	return 0;
}

void
sr_sweep_id(const char *text, size_t len, char id[SR_SWEEP_ID_LEN + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	char hex[2 * EVP_MAX_MD_SIZE + 1];

	if (EVP_Digest(text, len, md, NULL, EVP_sha256(), NULL) != 1)
		sr_fatal("sweep: SHA-256 failed");
	sr_hex_of(md, SR_SWEEP_ID_LEN / 2, hex);
	memcpy(id, hex, SR_SWEEP_ID_LEN + 1);
}

void
sr_sweep_trial_free(struct sr_sweep_trial *tr)
{
	free(tr->name);
	free(tr->id);
	free(tr->values);
	free(tr->ini);
	memset(tr, 0, sizeof *tr);
}

/* Write "key = value" as a line that a job file reads back as exactly
 * that value: ' =' before a value starting with ';' or '#', which " = ;"
 * would make a comment (the parser keeps such values only where no blank
 * came before them). */
static void
put_setting(FILE *f, const char *key, const char *value)
{
	fprintf(f, "%s =%s%s\n", key, value[0] == ';' || value[0] == '#' ? "" : " ", value);
}

/* Is line the next of the ascending lines in v[*i..n)? Moves *i past it. */
static int
next_is(const int *v, size_t n, size_t *i, int line)
{
	if (*i < n && v[*i] == line) {
		++*i;
		return 1;
	}
	return 0;
}

/* Write the job file of trial t (tr's name and values set) to f; -1 with
 * err when a substitution fails. Lines are matched by number with what
 * the parser recorded: env_line and the sweep's lines are ascending. */
static int
write_trial(const struct sr_jobspec *js, size_t t, const struct sr_sweep_trial *tr, char *sweep_id,
    FILE *f, char *err)
{
	size_t off = 0, ie = 0, is = 0, ih = 0, k, klen;
	const char *a, *e, *eq;
	char *v, *name;
	int line = 0;

	fprintf(f, "; spotrun: trial %zu of %zu of sweep %s (id %s), expanded from its job\n"
	    "; file: [sweep] is commented out, this trial's values replace ${NAME} in the\n"
	    "; command and [env], and [env] at the end sets them as SPOTRUN_PARAM_<NAME>.\n",
	    t + 1, sr_sweep_count(js), js->name, sweep_id);
	for (k = 0; k < js->nsweep; k++)
		fprintf(f, "; %s = %s\n", js->sweep[k].key, tr->values[k]);
	while (sr_ini_next_line(js->text, js->text_len, &off, &line, &a, &e)) {
		while (js->env[ie] != NULL && js->env_line[ie] < line)
			ie++;
		if (line == js->name_line) {
			put_setting(f, "name", tr->name);
		} else if (line == js->command_line && js->command != NULL) {
			if (sr_sweep_subst(js, t, js->command, &v, err) == -1)
				return sr_err_prefix(err, "command");
			put_setting(f, "command", v);
			free(v);
		} else if (js->env[ie] != NULL && js->env_line[ie] == line &&
		    strstr(js->env[ie], "${") != NULL) {
			eq = strchr(js->env[ie], '=');
			name = sr_strndup(js->env[ie], (size_t)(eq - js->env[ie]));
			if (sr_sweep_subst(js, t, eq + 1, &v, err) == -1) {
				sr_err_prefix(err, "[env] %s", name);
				free(name);
				return -1;
			}
			put_setting(f, name, v);
			free(name);
			free(v);
		} else if (next_is(js->sweep_header_line, js->nsweep_headers, &ih, line)) {
			fprintf(f, "; [sweep] (expanded: this trial's values are at the top)\n");
		} else if (is < js->nsweep && js->sweep[is].line == line) {
			fprintf(f, "; %s: a parameter of the sweep\n", js->sweep[is++].key);
		} else {
			if (e > a && e[-1] == '\r')
				e--;
			fwrite(a, 1, (size_t)(e - a), f);
			fputc('\n', f);
		}
	}
	fprintf(f, "[env]\n");
	for (k = 0; k < js->nsweep; k++) {
		name = sr_asprintf("SPOTRUN_PARAM_%s", js->sweep[k].key);
		for (klen = 0; name[klen] != '\0'; klen++)
			name[klen] = (char)toupper((unsigned char)name[klen]);
		put_setting(f, name, tr->values[k]);
		free(name);
	}
	return 0;
}

int
sr_sweep_trial(const struct sr_jobspec *js, size_t t, struct sr_sweep_trial *tr, char *err)
{
	char name[SR_JOBSPEC_NAME_MAX + 1], id[SR_SWEEP_ID_LEN + 1];
	size_t n = sr_sweep_count(js), k;
	FILE *f;
	int r;

	memset(tr, 0, sizeof *tr);
	if (t >= n)
		return sr_err(err, "expand trial %zu of %s: the sweep has %zu trials", t + 1,
		    js->name, n);
	if (js->text == NULL)
		return sr_err(err, "expand trial %zu of %s: the spec holds no job file text", t + 1,
		    js->name);
	if (sr_sweep_trial_name(js, t, name, err) == -1)
		return sr_err_prefix(err, "expand trial %zu of %s", t + 1, js->name);
	sr_sweep_id(js->text, js->text_len, id);
	tr->index = t;
	tr->name = sr_strdup(name);
	tr->id = sr_asprintf("%s.%0*zu", id, width_of(n), t + 1);
	tr->values = sr_calloc(js->nsweep + 1, sizeof *tr->values);
	for (k = 0; k < js->nsweep; k++)
		tr->values[k] = sr_sweep_value(js, t, k);
	if ((f = open_memstream(&tr->ini, &tr->ini_len)) == NULL)
		sr_fatal("sweep: open_memstream failed");
	r = write_trial(js, t, tr, id, f, err);
	if (fclose(f) != 0)
		sr_fatal("sweep: writing trial %zu failed", t + 1);
	if (r == -1) {
		sr_err_prefix(err, "expand trial %s", name);
		sr_sweep_trial_free(tr);
		return -1;
	}
	if (tr->ini_len > SR_JOBSPEC_FILE_MAX) {
		sr_err(err, "expand trial %s: its job file would be %zu bytes, more than %d", name,
		    tr->ini_len, SR_JOBSPEC_FILE_MAX);
		sr_sweep_trial_free(tr);
		return -1;
	}
	return 0;
}
