/*
 * record.c: see record.h. JSON through jansson, as for manifests.
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobkeys.h"
#include "record.h"
#include "util.h"

#define RECORD_MAX 16384

/* A key of the records, or with r NULL their prefix; out of memory is
 * fatal, as everywhere in the supervisor. */
static char *
record_key(const char *job, const struct sr_attempt_record *r)
{
	char err[SR_ERRMAX], *key = r != NULL ? sr_jobkey_attempt(job, r->run, r->attempt, err) :
	    sr_jobkey_prefix(job, SR_JOBKEY_ATTEMPTS, err);

	if (key == NULL)
		sr_fatal("%s", err);
	return key;
}

int
sr_record_put(struct sr_store *st, const char *job, const struct sr_attempt_record *r, char *err)
{
	json_t *o = json_pack("{s:s, s:i, s:i, s:f, s:f, s:s, s:i, s:i, s:I, s:i, s:i, s:i, s:s, s:f, "
	    "s:{s:s, s:s, s:s, s:s, s:s}}",
	    "run", r->run, "attempt", r->attempt, "vm", r->vm, "started", r->started,
	    "ended", r->ended, "outcome", r->outcome, "exit_code", r->exit_code,
	    "signal", r->signal,
	    "restored_step", (json_int_t)r->restored_step, "checkpoints", r->checkpoints,
	    "ranks", r->ranks, "gpus", r->gpus, "gpu_model", r->gpu_model, "lost", r->lost,
	    "machine", "provider", r->facts.provider, "instance_id", r->facts.instance_id,
	    "instance_type", r->facts.instance_type, "zone", r->facts.zone,
	    "lifecycle", r->facts.lifecycle);
	char *text, *key;
	int rc;

	if (o == NULL)
		return sr_err(err, "record attempt %d: cannot build its JSON", r->attempt);
	text = json_dumps(o, JSON_INDENT(1) | JSON_SORT_KEYS);
	json_decref(o);
	if (text == NULL)
		sr_fatal("out of memory writing an attempt record");
	key = record_key(job, r);
	rc = sr_store_put(st, key, text, strlen(text), SR_PUT_OVERWRITE, NULL, NULL, err);
	if (rc != SR_STORE_OK)
		sr_err_prefix(err, "record attempt %d", r->attempt);
	free(key);
	free(text);
	return rc == SR_STORE_OK ? 0 : -1;
}

static void
copy_str(json_t *o, const char *name, char *dst, size_t len)
{
	const char *v = json_string_value(json_object_get(o, name));

	strlcpy(dst, v != NULL ? v : "", len);
}

static int
parse(const char *text, size_t len, struct sr_attempt_record *r)
{
	json_t *o = json_loadb(text, len, 0, NULL), *m;
	int ok;

	if (o == NULL)
		return -1;
	memset(r, 0, sizeof *r);
	copy_str(o, "run", r->run, sizeof r->run);
	r->attempt = (int)json_integer_value(json_object_get(o, "attempt"));
	r->vm = (int)json_integer_value(json_object_get(o, "vm"));
	r->started = json_number_value(json_object_get(o, "started"));
	r->ended = json_number_value(json_object_get(o, "ended"));
	copy_str(o, "outcome", r->outcome, sizeof r->outcome);
	r->exit_code = (int)json_integer_value(json_object_get(o, "exit_code"));
	r->restored_step = json_integer_value(json_object_get(o, "restored_step"));
	r->checkpoints = (int)json_integer_value(json_object_get(o, "checkpoints"));
	/* absent from records of versions before them: 0 and "" */
	r->ranks = (int)json_integer_value(json_object_get(o, "ranks"));
	r->gpus = (int)json_integer_value(json_object_get(o, "gpus"));
	copy_str(o, "gpu_model", r->gpu_model, sizeof r->gpu_model);
	r->lost = json_number_value(json_object_get(o, "lost"));
	r->signal = (int)json_integer_value(json_object_get(o, "signal"));
	m = json_object_get(o, "machine");
	copy_str(m, "provider", r->facts.provider, sizeof r->facts.provider);
	copy_str(m, "instance_id", r->facts.instance_id, sizeof r->facts.instance_id);
	copy_str(m, "instance_type", r->facts.instance_type, sizeof r->facts.instance_type);
	copy_str(m, "zone", r->facts.zone, sizeof r->facts.zone);
	copy_str(m, "lifecycle", r->facts.lifecycle, sizeof r->facts.lifecycle);
	ok = r->run[0] != '\0' && r->attempt > 0 && r->started > 0;
	json_decref(o);
	return ok ? 0 : -1;
}

struct list_state {
	struct sr_store *st;
	char **keys;
	size_t n, cap;
};

static int
collect(const struct sr_object_info *info, void *arg)
{
	struct list_state *ls = arg;

	if (!sr_jobkey_is_attempt(info->key))
		return 0;
	if (ls->n == ls->cap) {
		ls->cap = ls->cap ? ls->cap * 2 : 32;
		ls->keys = sr_reallocarray(ls->keys, ls->cap, sizeof *ls->keys);
	}
	ls->keys[ls->n++] = sr_strdup(info->key);
	return 0;
}

/* A record with the start of its run's first attempt, the sort key. */
struct sorted {
	struct sr_attempt_record r;
	double run_started;
};

static int
by_run_attempt(const void *x, const void *y)
{
	const struct sorted *a = x, *b = y;
	int c = strcmp(a->r.run, b->r.run);

	return c != 0 ? c : (a->r.attempt > b->r.attempt) - (a->r.attempt < b->r.attempt);
}

static int
by_run_start(const void *x, const void *y)
{
	const struct sorted *a = x, *b = y;

	if (a->run_started != b->run_started)
		return a->run_started < b->run_started ? -1 : 1;
	return by_run_attempt(x, y);
}

int
sr_record_list(struct sr_store *st, const char *job,
    int (*fn)(const struct sr_attempt_record *r, void *arg), void *arg, char *err)
{
	struct list_state ls = { st, NULL, 0, 0 };
	struct sorted *recs;
	char *prefix = record_key(job, NULL);
	size_t i, j, n = 0;
	int rc;

	rc = sr_store_list(st, prefix, collect, &ls, err);
	free(prefix);
	recs = sr_calloc(ls.n ? ls.n : 1, sizeof *recs);
	for (i = 0; rc == 0 && i < ls.n; i++) {
		void *buf;
		size_t len;
		char gerr[SR_ERRMAX];

		if (sr_store_get(st, ls.keys[i], RECORD_MAX, &buf, &len, NULL, gerr) != SR_STORE_OK)
			continue;
		if (parse(buf, len, &recs[n].r) == 0)
			n++;
		free(buf);
	}
	/* Group by run, each run's attempts in order; then the runs in the
	 * order their first attempts started (a run's id begins with its
	 * start time, but only to the second, and pids do not sort). */
	sr_sort(recs, n, sizeof *recs, by_run_attempt);
	for (i = 0; i < n; i = j) {
		double first = recs[i].r.started;

		for (j = i; j < n && strcmp(recs[j].r.run, recs[i].r.run) == 0; j++)
			first = recs[j].r.started < first ? recs[j].r.started : first;
		while (i < j)
			recs[i++].run_started = first;
	}
	sr_sort(recs, n, sizeof *recs, by_run_start);
	for (i = 0; rc == 0 && i < n; i++)
		rc = fn(&recs[i].r, arg);
	free(recs);
	for (i = 0; i < ls.n; i++)
		free(ls.keys[i]);
	free(ls.keys);
	return rc == -1 ? -1 : 0;
}
