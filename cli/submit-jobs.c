/*
 * submit-jobs.c: the plan of a submission (submit-jobs.h): files loaded,
 * sweeps expanded, ids checked against each other, all before the queue
 * is touched, so that a bad file means nothing is written.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "iniparse.h"
#include "jobfile.h"
#include "submit-jobs.h"
#include "sweep.h"
#include "util.h"

static void
job_free(struct sr_submit_job *j)
{
	size_t k;

	free(j->id);
	for (k = 0; k < j->nparams; k++) {
		free((char *)j->params[k].name);
		free((char *)j->params[k].value);
	}
	free(j->params);
	free(j->spec);
	memset(j, 0, sizeof *j);
}

/* The job file's text with its name line rewritten to name (a plain job
 * under `--again`; names hold no ';', so the line reads back as it is). */
static char *
renamed_text(const struct sr_jobspec *js, const char *name, size_t *len)
{
	const char *a, *e;
	size_t off = 0;
	char *out;
	int line = 0;
	FILE *f = open_memstream(&out, len);

	if (f == NULL)
		sr_fatal("submit: open_memstream failed");
	while (sr_ini_next_line(js->text, js->text_len, &off, &line, &a, &e)) {
		if (line == js->name_line)
			fprintf(f, "name = %s\n", name);
		else {
			fwrite(a, 1, (size_t)(e - a), f);
			if (e < js->text + js->text_len)	/* it ended with a newline */
				fputc('\n', f);
		}
	}
	if (fclose(f) != 0)
		sr_fatal("submit: writing a job file failed");
	return out;
}

/* Fill the jobs of file f (p->jobs[fl->first ..]) from its spec under
 * fl->name. */
static int
expand(struct sr_submit_plan *p, size_t f, char *err)
{
	struct sr_submit_file *fl = &p->files[f];
	struct sr_jobspec *js = fl->js;
	struct sr_sweep_trial tr;
	size_t t, k;

	for (t = 0; t < fl->n; t++)
		job_free(&p->jobs[fl->first + t]);
	if (!fl->sweep) {
		struct sr_submit_job *j = &p->jobs[fl->first];

		j->id = sr_strdup(fl->name);
		j->file = f;
		if (strcmp(fl->name, js->name) == 0) {
			j->spec = sr_strndup(js->text, js->text_len);
			j->spec_len = js->text_len;
		} else
			j->spec = renamed_text(js, fl->name, &j->spec_len);
		return 0;
	}
	if (strcmp(js->name, fl->name) != 0) {	/* the trials are named after js->name */
		free(js->name);
		js->name = sr_strdup(fl->name);
	}
	for (t = 0; t < fl->n; t++) {
		struct sr_submit_job *j = &p->jobs[fl->first + t];

		if (sr_sweep_trial(js, t, &tr, err) == -1)
			return -1;
		j->id = tr.name;
		j->file = f;
		j->spec = tr.ini;
		j->spec_len = tr.ini_len;
		j->nparams = js->nsweep;
		j->params = sr_calloc(js->nsweep + 1, sizeof *j->params);
		for (k = 0; k < js->nsweep; k++) {
			j->params[k].name = sr_strdup(js->sweep[k].key);
			j->params[k].value = sr_strdup(tr.values[k]);
		}
		tr.name = tr.ini = NULL;
		sr_sweep_trial_free(&tr);
	}
	return 0;
}

int
sr_submit_rename(struct sr_submit_plan *p, size_t f, const char *name, char *err)
{
	struct sr_submit_file *fl = &p->files[f];
	char trial[SR_JOBSPEC_NAME_MAX + 1];
	char *old = fl->name;

	if (strlen(name) > SR_JOBSPEC_NAME_MAX)
		return sr_err(err, "submit %s as %s: longer than %d characters; shorten the job's "
		    "name", fl->path, name, SR_JOBSPEC_NAME_MAX);
	if (fl->sweep) {
		free(fl->js->name);
		fl->js->name = sr_strdup(name);
		if (sr_sweep_trial_name(fl->js, fl->n - 1, trial, err) == -1)
			return sr_err_prefix(err, "submit %s as sweep %s: its trial", fl->path, name);
	}
	fl->name = sr_strdup(name);
	free(old);
	return expand(p, f, err);
}

/* The file given before f with the same bytes, or (size_t)-1. */
static size_t
repeats(const struct sr_submit_plan *p, size_t f)
{
	const struct sr_jobspec *js = p->files[f].js;
	size_t g;

	for (g = 0; g < f; g++)
		if (p->files[g].same_as == (size_t)-1 && p->files[g].js->text_len == js->text_len &&
		    memcmp(p->files[g].js->text, js->text, js->text_len) == 0)
			return g;
	return (size_t)-1;
}

static int
id_cmp(const void *a, const void *b)
{
	const struct sr_submit_job *const *x = a, *const *y = b;

	return strcmp((*x)->id, (*y)->id);
}

/* Two files making one id: say so (65), else 0. */
static int
check_ids(const struct sr_submit_plan *p)
{
	const struct sr_submit_job **v = sr_calloc(p->njobs + 1, sizeof *v);
	size_t i, n = 0;
	int rc = 0;

	for (i = 0; i < p->njobs; i++)
		if (p->files[p->jobs[i].file].same_as == (size_t)-1)
			v[n++] = &p->jobs[i];
	sr_sort(v, n, sizeof *v, id_cmp);
	for (i = 1; i < n && rc == 0; i++)
		if (strcmp(v[i - 1]->id, v[i]->id) == 0) {
			fprintf(stderr, "spotrun: %s and %s both make job %s; give one of them another "
			    "name, nothing was submitted\n", p->files[v[i - 1]->file].path,
			    p->files[v[i]->file].path, v[i]->id);
			rc = SR_EXIT_BADSPEC;
		}
	free(v);
	return rc;
}

int
sr_submit_plan(char *const *paths, int n, struct sr_submit_plan *p)
{
	char err[SR_ERRMAX];
	size_t f, total = 0;
	int i, bad = 0;

	memset(p, 0, sizeof *p);
	p->files = sr_calloc((size_t)n + 1, sizeof *p->files);
	for (i = 0; i < n; i++) {
		struct sr_submit_file *fl = &p->files[p->nfiles];

		if (sr_jobfile_load(paths[i], &fl->js) != SR_JOBFILE_OK) {
			bad = 1;
			continue;
		}
		fl->path = paths[i];
		fl->name = sr_strdup(fl->js->name);
		fl->sweep = fl->js->nsweep > 0;
		fl->n = fl->sweep ? sr_sweep_count(fl->js) : 1;
		fl->same_as = repeats(p, p->nfiles);
		fl->first = total;
		total += fl->n;
		p->nfiles++;
	}
	if (bad) {
		sr_submit_plan_free(p);
		return SR_EXIT_BADSPEC;
	}
	p->jobs = sr_calloc(total + 1, sizeof *p->jobs);
	p->njobs = total;
	for (f = 0; f < p->nfiles; f++)
		if (expand(p, f, err) == -1) {	/* never for a file the parser took */
			fprintf(stderr, "spotrun: %s: %s\n", p->files[f].path, err);
			sr_submit_plan_free(p);
			return SR_EXIT_BADSPEC;
		}
	if ((i = check_ids(p)) != 0) {
		sr_submit_plan_free(p);
		return i;
	}
	return 0;
}

void
sr_submit_plan_free(struct sr_submit_plan *p)
{
	size_t i;

	for (i = 0; i < p->njobs; i++)
		job_free(&p->jobs[i]);
	for (i = 0; i < p->nfiles; i++) {
		sr_jobspec_free(p->files[i].js);
		free(p->files[i].name);
	}
	free(p->jobs);
	free(p->files);
	memset(p, 0, sizeof *p);
}

char *
sr_submit_params(const struct sr_submit_job *j)
{
	char *out;
	size_t len, k;
	FILE *f = open_memstream(&out, &len);

	if (f == NULL)
		sr_fatal("submit: open_memstream failed");
	for (k = 0; k < j->nparams; k++)
		fprintf(f, "%s%s=%s", k > 0 ? ", " : "", j->params[k].name, j->params[k].value);
	if (fclose(f) != 0)
		sr_fatal("submit: writing parameters failed");
	return out;
}

/* Line n (from 1) of the text, cut to len - 1 bytes, into out; "" past its end. */
static void
line_of(const char *s, size_t slen, int n, char *out, size_t len)
{
	const char *a = NULL, *e = NULL;
	size_t off = 0, k;
	int line = 0;

	out[0] = '\0';
	while (line < n && sr_ini_next_line(s, slen, &off, &line, &a, &e))
		;
	if (line != n || a == NULL)
		return;
	if (e > a && e[-1] == '\r')
		e--;
	k = (size_t)(e - a) < len - 1 ? (size_t)(e - a) : len - 1;
	memcpy(out, a, k);
	out[k] = '\0';
}

int
sr_submit_diff(const char *x, size_t xlen, const char *y, size_t ylen, char *a, char *b,
    size_t len)
{
	static const char trial[] = "; spotrun: trial ";
	const char *xa, *xe, *ya, *ye;
	size_t xo = 0, yo = 0;
	int xl = 0, yl = 0, more_x, more_y;

	if (xlen == ylen && memcmp(x, y, xlen) == 0)
		return 0;
	for (;;) {
		more_x = sr_ini_next_line(x, xlen, &xo, &xl, &xa, &xe);
		more_y = sr_ini_next_line(y, ylen, &yo, &yl, &ya, &ye);
		if (!more_x && !more_y)
			break;
		if (more_x && more_y && xe - xa == ye - ya && memcmp(xa, ya, (size_t)(xe - xa)) == 0)
			continue;
		if (xl == 1 && more_x && more_y && strncmp(xa, trial, sizeof trial - 1) == 0 &&
		    strncmp(ya, trial, sizeof trial - 1) == 0)
			continue;
		line_of(x, xlen, more_x ? xl : xl + 1, a, len);
		line_of(y, ylen, more_y ? yl : yl + 1, b, len);
		return more_x ? xl : yl;
	}
	/* only a trial's first line differs: the sweep's file changed elsewhere */
	line_of(x, xlen, 1, a, len);
	line_of(y, ylen, 1, b, len);
	return 1;
}
