/*
 * qjob.c: a job's own objects in the queue (queue.h): submitting it
 * (spec.ini create-only as the id's claim, then its markers, then
 * meta.json as the last write), reading them back, pending markers,
 * cancel requests, and requeue.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lease-int.h"
#include "queue-int.h"
#include "util.h"

#define META_MAX (64 * 1024)
#define TEXT_MAX 256		/* name, sweep, by, a parameter's name */
#define VALUE_MAX 4096		/* a parameter's value */

/* ---- pending markers ---- */

void
sr_q_pending_of_meta(const struct sr_queue_job_meta *m, const char *hash, int64_t epoch,
    const char *etag, struct sr_queue_pending *p)
{
	memset(p, 0, sizeof *p);
	snprintf(p->id, sizeof p->id, "%s", m->id);
	p->priority = m->priority;
	p->submitted = m->submitted;
	p->gpus_min = m->gpus_min;
	p->gpus_max = m->gpus_max;
	p->nodes_min = m->nodes_min > 1 ? m->nodes_min : 1;
	p->nodes_max = m->nodes_max > 1 ? m->nodes_max : 1;
	snprintf(p->gpu_type, sizeof p->gpu_type, "%s", m->gpu_type);
	snprintf(p->store, sizeof p->store, "%s", hash);
	p->epoch = epoch;
	snprintf(p->etag, sizeof p->etag, "%s", epoch > 0 ? etag : "");
}

int
sr_q_pending_put(struct sr_queue *q, struct sr_queue_pending *p, char *err)
{
	if (sr_qkey_pending(p, p->key, sizeof p->key, err) == -1)
		return -1;
	if (sr_q_put(q, q->st, p->key, "", 0, SR_PUT_OVERWRITE, NULL, NULL, err) != SR_STORE_OK)
		return sr_err_prefix(err, "queue job %s", p->id);
	return 0;
}

struct pending_walk {
	int (*fn)(const struct sr_queue_pending *p, void *arg);
	void *arg;
	int bad;
};

static int
pending_cb(const struct sr_object_info *info, void *arg)
{
	struct pending_walk *w = arg;
	struct sr_queue_pending p;

	if (sr_qkey_pending_parse(info->key, &p, NULL) == -1) {
		w->bad++;
		return 0;
	}
	return w->fn(&p, w->arg);
}

int
sr_queue_pending_list(struct sr_queue *q,
    int (*fn)(const struct sr_queue_pending *p, void *arg), void *arg, int *bad, char *err)
{
	struct pending_walk w = { fn, arg, 0 };
	int rc = sr_q_list(q, q->st, "pending/", pending_cb, &w, err);

	if (bad != NULL)
		*bad = w.bad;
	return rc;
}

/* ---- meta.json ---- */

static char *
meta_json(const struct sr_queue_meta *m, const char *store, double submitted, char *err)
{
	json_t *root, *params = json_object();
	char *s;
	size_t i;

	for (i = 0; i < m->nparams; i++) {
		json_t *v = json_string(m->params[i].value);

		if (v == NULL || json_object_set_new(params, m->params[i].name, v) == -1) {
			json_decref(params);
			sr_err(err, "add job %s: parameter %s: not UTF-8", m->id, m->params[i].name);
			return NULL;
		}
	}
	root = json_pack("{s:s, s:s, s:s, s:o, s:{s:i, s:i}, s:s, s:i, s:s, s:f, s:s, s:s}",
	    "id", m->id, "name", m->name != NULL ? m->name : m->id,
	    "sweep", m->sweep != NULL ? m->sweep : "", "params", params,
	    "gpus", "min", m->gpus_min, "max", m->gpus_max,
	    "gpu_type", m->gpu_type != NULL ? m->gpu_type : "", "priority", m->priority,
	    "store", store, "submitted", submitted, "by", m->by != NULL ? m->by : "",
	    "dir", m->dir != NULL ? m->dir : "");
	if (root == NULL) {
		sr_err(err, "add job %s: a field is not UTF-8", m->id);
		return NULL;
	}
	/* a shipped working directory; without one meta.json is as before */
	if (m->workdir != NULL && m->workdir[0] != '\0' &&
	    json_object_set_new(root, "workdir", json_string(m->workdir)) == -1) {
		json_decref(root);
		sr_err(err, "add job %s: its workdir snapshot is not UTF-8", m->id);
		return NULL;
	}
	/* a gang's machines; a job of one machine's meta.json is as before */
	if (m->nodes_max > 1 && json_object_set_new(root, "nodes", json_pack("{s:i, s:i}", "min",
	    m->nodes_min > 1 ? m->nodes_min : 1, "max", m->nodes_max)) == -1)
		sr_fatal("json_object_set_new: out of memory");
	s = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(13));
	json_decref(root);
	if (s == NULL)
		sr_fatal("json_dumps: out of memory");
	return s;
}

/* A string field of meta.json, copied. NULL, or why it is wrong. */
static const char *
meta_str(json_t *root, const char *name, size_t max, char **out, char *why, size_t wlen)
{
	json_t *v = json_object_get(root, name);

	if (!json_is_string(v) || json_string_length(v) > max)
		snprintf(why, wlen, "\"%s\" is %s", name, v == NULL ? "missing" :
		    json_is_string(v) ? "too long" : "not a string");
	else {
		*out = sr_strdup(json_string_value(v));
		return NULL;
	}
	return why;
}

static const char *
meta_int(json_t *root, const char *name, long long lo, long long hi, int *out, char *why,
    size_t wlen)
{
	json_t *v = json_object_get(root, name);

	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
		snprintf(why, wlen, "\"%s\" is %s", name, v == NULL ? "missing" :
		    "not an integer in range");
		return why;
	}
	*out = (int)json_integer_value(v);
	return NULL;
}

static const char *
meta_parse(const char *id, const char *buf, size_t len, struct sr_queue_job_meta *m,
    char *why, size_t wlen)
{
	json_error_t je;
	json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je), *v, *gpus;
	const char *p = NULL, *name;

	memset(m, 0, sizeof *m);
	if (root == NULL) {
		snprintf(why, wlen, "not JSON: %s at line %d, column %d", je.text, je.line,
		    je.column);
		return why;
	}
	if (!json_is_object(root))
		p = "not a JSON object";
	if (p == NULL && (p = meta_str(root, "id", SR_QUEUE_ID_MAX, &m->id, why, wlen)) == NULL &&
	    strcmp(m->id, id) != 0) {
		snprintf(why, wlen, "\"id\" is \"%.*s\", not %s (the job its key names)", 64, m->id,
		    id);
		p = why;
	}
	if (p == NULL)
		p = meta_str(root, "name", TEXT_MAX, &m->name, why, wlen);
	if (p == NULL)
		p = meta_str(root, "sweep", TEXT_MAX, &m->sweep, why, wlen);
	if (p == NULL)
		p = meta_str(root, "gpu_type", SR_QUEUE_GPU_TYPE_MAX, &m->gpu_type, why, wlen);
	if (p == NULL)
		p = meta_str(root, "store", 4096, &m->store, why, wlen);
	if (p == NULL)
		p = meta_str(root, "by", TEXT_MAX, &m->by, why, wlen);
	/* "dir" came later: a meta.json without it is not malformed */
	if (p == NULL && json_object_get(root, "dir") == NULL)
		m->dir = sr_strdup("");
	else if (p == NULL)
		p = meta_str(root, "dir", 4096, &m->dir, why, wlen);
	/* "workdir" is there only when the job's directory was shipped */
	if (p == NULL && json_object_get(root, "workdir") == NULL)
		m->workdir = sr_strdup("");
	else if (p == NULL)
		p = meta_str(root, "workdir", 4096, &m->workdir, why, wlen);
	if (p == NULL)
		p = meta_int(root, "priority", SR_QUEUE_PRIORITY_MIN, SR_QUEUE_PRIORITY_MAX,
		    &m->priority, why, wlen);
	if (p == NULL && !json_is_object(gpus = json_object_get(root, "gpus")))
		p = "\"gpus\" is not an object";
	if (p == NULL)
		p = meta_int(gpus, "min", 0, SR_QUEUE_GPUS_MAX, &m->gpus_min, why, wlen);
	if (p == NULL)
		p = meta_int(gpus, "max", m->gpus_min, SR_QUEUE_GPUS_MAX, &m->gpus_max, why, wlen);
	/* "nodes" came with gangs: without it, one machine */
	m->nodes_min = m->nodes_max = 1;
	if (p == NULL && (v = json_object_get(root, "nodes")) != NULL) {
		if (!json_is_object(v))
			p = "\"nodes\" is not an object";
		if (p == NULL)
			p = meta_int(v, "min", 1, SR_QUEUE_NODES_MAX, &m->nodes_min, why, wlen);
		if (p == NULL)
			p = meta_int(v, "max", m->nodes_min, SR_QUEUE_NODES_MAX, &m->nodes_max, why,
			    wlen);
	}
	if (p == NULL && (!json_is_number(v = json_object_get(root, "submitted")) ||
	    !isfinite(json_number_value(v)) || json_number_value(v) < 0))
		p = "\"submitted\" is not a time";
	if (p == NULL)
		m->submitted = json_number_value(v);
	if (p == NULL && !json_is_object(v = json_object_get(root, "params")))
		p = "\"params\" is not an object";
	if (p == NULL) {
		json_t *val;

		m->param_names = sr_calloc(json_object_size(v) + 1, sizeof *m->param_names);
		m->param_values = sr_calloc(json_object_size(v) + 1, sizeof *m->param_values);
		json_object_foreach(v, name, val) {
			if (!json_is_string(val)) {
				snprintf(why, wlen, "parameter \"%.64s\" is not a string", name);
				p = why;
				break;
			}
			m->param_names[m->nparams] = sr_strdup(name);
			m->param_values[m->nparams++] = sr_strdup(json_string_value(val));
		}
	}
	json_decref(root);
	if (p != NULL && p != why)
		snprintf(why, wlen, "%s", p);
	return p != NULL ? why : NULL;
}

void
sr_queue_job_meta_free(struct sr_queue_job_meta *m)
{
	size_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->nparams; i++) {
		free(m->param_names[i]);
		free(m->param_values[i]);
	}
	free(m->param_names);
	free(m->param_values);
	free(m->id);
	free(m->name);
	free(m->sweep);
	free(m->gpu_type);
	free(m->store);
	free(m->by);
	free(m->dir);
	free(m->workdir);
	memset(m, 0, sizeof *m);
}

int
sr_queue_meta_read(struct sr_queue *q, const char *id, struct sr_queue_job_meta *out,
    char *err)
{
	char key[SR_QUEUE_ID_MAX + 32], why[320];
	void *buf;
	size_t len;
	int rc;

	memset(out, 0, sizeof *out);
	if (sr_qkey_job(id, "meta.json", key, sizeof key, err) == -1)
		return SR_QUEUE_ERROR;
	rc = sr_q_get(q, q->st, key, META_MAX, &buf, &len, NULL, err);
	if (rc == SR_STORE_NOTFOUND) {
		sr_err(err, "job %s: not in queue %s", id, q->url);
		return SR_QUEUE_NOTFOUND;
	}
	if (rc != SR_STORE_OK) {
		sr_err_prefix(err, "job %s", id);
		return SR_QUEUE_ERROR;
	}
	if (meta_parse(id, buf, len, out, why, sizeof why) != NULL) {
		sr_queue_job_meta_free(out);
		free(buf);
		return sr_err(err, "job %s: %s in %s: malformed: %s", id, key, q->url, why);
	}
	free(buf);
	return SR_QUEUE_OK;
}

int
sr_queue_spec_read(struct sr_queue *q, const char *id, char **spec, size_t *len, char *err)
{
	char key[SR_QUEUE_ID_MAX + 32];
	int rc;

	*spec = NULL;
	if (sr_qkey_job(id, "spec.ini", key, sizeof key, err) == -1)
		return SR_QUEUE_ERROR;
	rc = sr_q_get(q, q->st, key, SR_QUEUE_SPEC_MAX, (void **)spec, len, NULL, err);
	if (rc == SR_STORE_NOTFOUND) {
		sr_err(err, "job %s: no %s in queue %s", id, key, q->url);
		return SR_QUEUE_NOTFOUND;
	}
	if (rc != SR_STORE_OK) {
		sr_err_prefix(err, "job %s", id);
		return SR_QUEUE_ERROR;
	}
	return SR_QUEUE_OK;
}

/* ---- submitting ---- */

static int
check_meta(const struct sr_queue_meta *m, size_t spec_len, char *err)
{
	size_t i;

	if (sr_lease_job_check(m->id, err) == -1)
		return sr_err_prefix(err, "add job");
	if (spec_len > SR_QUEUE_SPEC_MAX)
		return sr_err(err, "add job %s: the job file is %zu bytes, more than the %d "
		    "allowed", m->id, spec_len, SR_QUEUE_SPEC_MAX);
	if (m->priority < SR_QUEUE_PRIORITY_MIN || m->priority > SR_QUEUE_PRIORITY_MAX)
		return sr_err(err, "add job %s: priority %d is out of range (%d to %d)", m->id,
		    m->priority, SR_QUEUE_PRIORITY_MIN, SR_QUEUE_PRIORITY_MAX);
	if (m->gpus_min < 0 || m->gpus_max < m->gpus_min || m->gpus_max > SR_QUEUE_GPUS_MAX)
		return sr_err(err, "add job %s: gpus %d-%d is not a range from 0 to %d", m->id,
		    m->gpus_min, m->gpus_max, SR_QUEUE_GPUS_MAX);
	if (m->gpu_type != NULL && strlen(m->gpu_type) > SR_QUEUE_GPU_TYPE_MAX)
		return sr_err(err, "add job %s: gpu_type is longer than %d bytes", m->id,
		    SR_QUEUE_GPU_TYPE_MAX);
	if ((m->name != NULL && strlen(m->name) > TEXT_MAX) ||
	    (m->sweep != NULL && strlen(m->sweep) > TEXT_MAX) ||
	    (m->by != NULL && strlen(m->by) > TEXT_MAX))
		return sr_err(err, "add job %s: name, sweep and by are at most %d bytes each", m->id,
		    TEXT_MAX);
	for (i = 0; i < m->nparams; i++)
		if (m->params[i].name == NULL || m->params[i].name[0] == '\0' ||
		    strlen(m->params[i].name) > TEXT_MAX || m->params[i].value == NULL ||
		    strlen(m->params[i].value) > VALUE_MAX)
			return sr_err(err, "add job %s: parameter %zu: a name of 1-%d bytes and a "
			    "value of at most %d", m->id, i + 1, TEXT_MAX, VALUE_MAX);
	if (m->store != NULL && m->store[0] != '\0' && sr_store_url_check(m->store, err) == -1)
		return sr_err_prefix(err, "add job %s: store", m->id);
	return 0;
}

/* The spec already under key is the same as spec: 1, 0, or -1 with err. */
static int
same_spec(struct sr_queue *q, const char *key, const char *spec, size_t len, char *err)
{
	void *buf;
	size_t have;
	int same;

	if (sr_q_get(q, q->st, key, SR_QUEUE_SPEC_MAX, &buf, &have, NULL, err) != SR_STORE_OK)
		return -1;
	same = have == len && memcmp(buf, spec, len) == 0;
	free(buf);
	return same;
}

/* spec.ini exists: refuse with who submitted it, or (no meta.json yet,
 * the same spec) 1: go on completing the submission. */
static int
already(struct sr_queue *q, const char *spec, size_t spec_len, const struct sr_queue_meta *m,
    const char *key, char *err)
{
	struct sr_queue_job_meta had;
	char when[32];
	int rc, same = same_spec(q, key, spec, spec_len, err);

	if (same == -1)
		return sr_err_prefix(err, "add job %s", m->id);
	rc = sr_queue_meta_read(q, m->id, &had, err);
	if (rc == SR_QUEUE_NOTFOUND && same)
		return 1;
	if (rc == SR_QUEUE_NOTFOUND) {
		sr_err(err, "add job %s to queue %s: a submission of it with another job file was "
		    "cut short (%s has no meta.json): delete jobs/%s/ in the queue, or submit "
		    "under another name", m->id, q->url, key, m->id);
		return SR_QUEUE_EXISTS;
	}
	if (rc != SR_QUEUE_OK)
		return sr_err_prefix(err, "add job %s: already in the queue", m->id);
	sr_err(err, "add job %s to queue %s: already in the queue (submitted %s by %s, %s); "
	    "to run it again: `spotrun requeue %s`, or submit it under another name", m->id,
	    q->url, sr_lease_fmt_time(had.submitted, when, sizeof when),
	    had.by[0] != '\0' ? had.by : "someone", same ? "the same job file" :
	    "another job file", m->id);
	sr_queue_job_meta_free(&had);
	return SR_QUEUE_EXISTS;
}

int
sr_queue_add(struct sr_queue *q, const char *spec, size_t spec_len,
    const struct sr_queue_meta *m, char *err)
{
	char key[SR_QUEUE_ID_MAX + 32], hash[20], *meta;
	const char *store;
	struct sr_queue_job_meta jm;
	struct sr_queue_status s;
	struct sr_queue_pending p;
	double submitted = m->submitted > 0 ? m->submitted : sr_now();
	int rc, resumed = 0;

	if (check_meta(m, spec_len, err) == -1)
		return SR_QUEUE_ERROR;
	store = m->store != NULL && m->store[0] != '\0' ? m->store : q->ckpt_url;
	/* the times in the markers are milliseconds: keep meta.json's the same */
	submitted = floor(submitted * 1000.0 + 0.5) / 1000.0;
	if (sr_q_store_register(q, store, hash, err) == -1)
		return SR_QUEUE_ERROR;
	sr_qkey_job(m->id, "spec.ini", key, sizeof key, err);
	rc = sr_q_put(q, q->st, key, spec, spec_len, SR_PUT_CREATE, NULL, NULL, err);
	if (rc == SR_STORE_EXISTS) {
		if ((rc = already(q, spec, spec_len, m, key, err)) != 1)
			return rc == SR_QUEUE_EXISTS ? SR_QUEUE_EXISTS : SR_QUEUE_ERROR;
		resumed = 1;
	} else if (rc != SR_STORE_OK) {
		sr_err_prefix(err, "add job %s", m->id);
		return SR_QUEUE_ERROR;
	}
	memset(&s, 0, sizeof s);
	snprintf(s.id, sizeof s.id, "%s", m->id);
	s.time = submitted;
	s.state = SR_LEASE_QUEUED;
	s.step = -1;
	if (sr_queue_status_set(q, &s, resumed ? NULL : "", err) != SR_QUEUE_OK)
		return SR_QUEUE_ERROR;
	memset(&jm, 0, sizeof jm);
	jm.id = (char *)m->id;
	jm.priority = m->priority;
	jm.submitted = submitted;
	jm.gpus_min = m->gpus_min;
	jm.gpus_max = m->gpus_max;
	jm.nodes_min = m->nodes_min;
	jm.nodes_max = m->nodes_max;
	jm.gpu_type = (char *)(m->gpu_type != NULL ? m->gpu_type : "");
	sr_q_pending_of_meta(&jm, hash, 0, "", &p);
	if (sr_q_pending_put(q, &p, err) == -1)
		return SR_QUEUE_ERROR;
	if ((meta = meta_json(m, store, submitted, err)) == NULL)
		return SR_QUEUE_ERROR;
	sr_qkey_job(m->id, "meta.json", key, sizeof key, err);
	rc = sr_q_put(q, q->st, key, meta, strlen(meta), SR_PUT_CREATE, NULL, NULL, err);
	free(meta);
	if (rc == SR_STORE_EXISTS) {
		sr_err(err, "add job %s to queue %s: already in the queue (submitted at the same "
		    "time elsewhere)", m->id, q->url);
		return SR_QUEUE_EXISTS;
	}
	if (rc != SR_STORE_OK) {
		sr_err_prefix(err, "add job %s", m->id);
		return SR_QUEUE_ERROR;
	}
	return SR_QUEUE_OK;
}

/* ---- cancel ---- */

/* The job's meta and its open checkpoint store, for cancel and requeue. */
static int
job_store(struct sr_queue *q, const char *id, const char *verb, struct sr_queue_job_meta *m,
    struct sr_store **st, char *err)
{
	int rc = sr_queue_meta_read(q, id, m, err);

	if (rc != SR_QUEUE_OK) {
		sr_err_prefix(err, "%s", verb);
		return rc;
	}
	if ((*st = sr_queue_ckpt_store(q, m->store, err)) == NULL) {
		sr_queue_job_meta_free(m);
		sr_err_prefix(err, "%s %s", verb, id);
		return SR_QUEUE_ERROR;
	}
	return SR_QUEUE_OK;
}

/* Set job id's status marker to state at epoch, its counts kept; when
 * none of its markers parses, they are replaced. */
static int
status_to(struct sr_queue *q, const char *id, enum sr_lease_state state, int64_t epoch,
    char *err)
{
	struct sr_queue_status s;
	char old[SR_QUEUE_KEY_MAX];
	const char *old_key;
	int rc = sr_queue_status_get(q, id, &s, err);

	if (rc == SR_QUEUE_NOTFOUND) {
		memset(&s, 0, sizeof s);
		snprintf(s.id, sizeof s.id, "%s", id);
		s.step = -1;
	} else if (rc != SR_QUEUE_OK)
		return rc;
	/* no marker that parses: the job's broken ones (index/ID~...) go too */
	old_key = rc == SR_QUEUE_OK ? s.key : NULL;
	if (old_key != NULL)
		snprintf(old, sizeof old, "%s", old_key);
	s.state = state;
	s.epoch = epoch;
	s.time = 0;
	return sr_queue_status_set(q, &s, old_key != NULL ? old : NULL, err);
}

int
sr_queue_cancel(struct sr_queue *q, const char *id, int checkpoint,
    const struct sr_lease_owner *by, enum sr_queue_cancel *how, char *err)
{
	struct sr_queue_job_meta m;
	struct sr_lease_claim c = { .owner = by };
	struct sr_lease *l;
	struct sr_store *st;
	char key[SR_QUEUE_ID_MAX + 32], body[32];
	int rc;

	*how = SR_QUEUE_CANCEL_ENDED;
	if ((rc = job_store(q, id, "cancel", &m, &st, err)) != SR_QUEUE_OK)
		return rc;
	sr_queue_job_meta_free(&m);
	rc = sr_lease_claim(st, id, &c, &l, err);
	sr_q_count(q, SR_QC_ALL, c.requests);
	if (rc == SR_LEASE_TERMINAL)
		return SR_QUEUE_OK;	/* err says how it ended */
	if (rc == SR_LEASE_OK) {
		int64_t epoch = sr_lease_epoch(l);

		rc = sr_lease_set_state(l, SR_LEASE_CANCELLED, err);
		sr_q_count(q, SR_QC_PUT, 1);
		sr_lease_free(l);
		if (rc != SR_LEASE_OK)
			return sr_err_prefix(err, "cancel %s", id);
		*how = SR_QUEUE_CANCEL_DONE;
		return status_to(q, id, SR_LEASE_CANCELLED, epoch, err) == SR_QUEUE_OK ?
		    SR_QUEUE_OK : sr_err_prefix(err, "cancel %s (cancelled)", id);
	}
	if (rc != SR_LEASE_HELD)
		return sr_err_prefix(err, "cancel %s", id);
	/* running: its holder reads the request at its next heartbeat */
	sr_qkey_job(id, "cancel", key, sizeof key, err);
	snprintf(body, sizeof body, "{\"checkpoint\": %s}\n", checkpoint ? "true" : "false");
	if (sr_q_put(q, q->st, key, body, strlen(body), SR_PUT_OVERWRITE, NULL, NULL, err) !=
	    SR_STORE_OK)
		return sr_err_prefix(err, "cancel %s", id);
	*how = SR_QUEUE_CANCEL_ASKED;
	return SR_QUEUE_OK;
}

int
sr_queue_cancel_requested(struct sr_queue *q, const char *id, int *checkpoint, char *err)
{
	char key[SR_QUEUE_ID_MAX + 32];
	json_t *root, *v;
	void *buf;
	size_t len;
	int rc;

	*checkpoint = 0;
	if (sr_qkey_job(id, "cancel", key, sizeof key, err) == -1)
		return -1;
	rc = sr_q_get(q, q->st, key, 4096, &buf, &len, NULL, err);
	if (rc == SR_STORE_NOTFOUND)
		return 0;
	if (rc != SR_STORE_OK)
		return sr_err_prefix(err, "cancel request of %s", id);
	root = json_loadb(buf, len, 0, NULL);
	v = json_is_object(root) ? json_object_get(root, "checkpoint") : NULL;
	/* a request we cannot read is still a request: the safe reading keeps the work */
	*checkpoint = json_is_boolean(v) ? json_is_true(v) : 1;
	json_decref(root);
	free(buf);
	return 1;
}

/* ---- requeue ---- */

int
sr_queue_requeue(struct sr_queue *q, const char *id, unsigned states, int64_t min_epoch,
    const struct sr_lease_owner *by, char *err)
{
	struct sr_queue_job_meta m;
	struct sr_queue_pending p;
	struct sr_lease_info next;
	struct sr_store *st;
	char key[SR_QUEUE_ID_MAX + 32], hash[20];
	int rc;

	if ((rc = job_store(q, id, "requeue", &m, &st, err)) != SR_QUEUE_OK)
		return rc;
	rc = sr_lease_requeue(st, id, states, min_epoch, by, NULL, &next, err);
	sr_q_count(q, SR_QC_GET, 1);	/* the lease read, and its CAS */
	sr_q_count(q, SR_QC_PUT, 1);
	if (rc != SR_LEASE_OK) {
		sr_queue_job_meta_free(&m);
		if (rc == SR_LEASE_NOTFOUND) {
			sr_err(err, "requeue %s: it was never claimed: it is still waiting in the "
			    "queue", id);
			return SR_QUEUE_NOTFOUND;
		}
		return rc == SR_LEASE_STATE || rc == SR_LEASE_HELD ? SR_QUEUE_BUSY : SR_QUEUE_ERROR;
	}
	sr_qkey_job(id, "cancel", key, sizeof key, err);
	sr_q_hash_of_url(q, m.store, hash);
	if (sr_q_delete(q, q->st, key, err) != SR_STORE_OK) {
		sr_queue_job_meta_free(&m);
		return sr_err_prefix(err, "requeue %s", id);
	}
	sr_q_pending_of_meta(&m, hash, next.epoch, next.etag, &p);
	sr_queue_job_meta_free(&m);
	if (sr_q_pending_put(q, &p, err) == -1)
		return sr_err_prefix(err, "requeue %s", id);
	return status_to(q, id, SR_LEASE_QUEUED, next.epoch, err);
}
