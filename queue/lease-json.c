/*
 * lease-json.c: the lease object's JSON (doc/fleet.md, "The lease object"):
 * writing it, and parsing it strictly: every field present with its type
 * and range, the job its key names, at most SR_LEASE_BYTES_MAX bytes, no
 * duplicate keys; unknown fields are ignored, so that a later version may
 * add some. What does not parse is named field by field, for the message
 * that calls the object malformed.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lease-int.h"
#include "util.h"

/* The states' words in the JSON. */
static const char *const state_names[SR_LEASE_NSTATES] = {
	[SR_LEASE_QUEUED] = "queued",
	[SR_LEASE_RUNNING] = "running",
	[SR_LEASE_RELEASED] = "released",
	[SR_LEASE_SUCCEEDED] = "succeeded",
	[SR_LEASE_FAILED] = "failed",
	[SR_LEASE_CANCELLED] = "cancelled",
};

const char *
sr_lease_state_name(enum sr_lease_state s)
{
	return (unsigned)s < SR_LEASE_NSTATES ? state_names[s] : "unknown";
}

int
sr_lease_state_parse(const char *name, enum sr_lease_state *out)
{
	int i;

	for (i = 0; i < SR_LEASE_NSTATES; i++)
		if (strcmp(name, state_names[i]) == 0) {
			*out = (enum sr_lease_state)i;
			return 0;
		}
	return -1;
}

char *
sr_lease_json_format(const struct sr_lease_info *li, char *err)
{
	const struct sr_lease_owner *o = &li->owner;
	json_t *root = json_pack("{s:s, s:I, s:s, s:{s:s?, s:I, s:s?, s:s?, s:s?, s:s?}, "
	    "s:f, s:f, s:f, s:f}",
	    "job", li->job, "epoch", (json_int_t)li->epoch, "state", sr_lease_state_name(li->state),
	    "owner", "host", o->host, "pid", (json_int_t)o->pid, "boot_id", o->boot_id,
	    "agent", o->agent, "instance", o->instance, "provider", o->provider,
	    "claimed", li->claimed, "renewed", li->renewed, "expires", li->expires, "ttl", li->ttl);
	char *s;

	if (root == NULL) {
		sr_err(err, "write lease %s: an owner string is not UTF-8", li->job);
		return NULL;
	}
	/* 13 significant digits: milliseconds for times of this century */
	s = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(13));
	json_decref(root);
	if (s == NULL)
		sr_fatal("json_dumps: out of memory");
	return s;
}

static const char *
json_type_word(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "unknown";
}

/* Field name of obj (named path in messages) as a string into dst (cap
 * bytes; empty allowed unless nonempty). NULL, or why it is wrong. */
static const char *
get_str(json_t *obj, const char *path, const char *name, char *dst, size_t cap, int nonempty,
    char *why, size_t wlen)
{
	json_t *v = json_object_get(obj, name);

	if (v == NULL)
		snprintf(why, wlen, "no \"%s%s\"", path, name);
	else if (!json_is_string(v))
		snprintf(why, wlen, "\"%s%s\" is %s, not a string", path, name, json_type_word(v));
	else if (json_string_length(v) >= cap || strlen(json_string_value(v)) != json_string_length(v))
		snprintf(why, wlen, "\"%s%s\" is %zu bytes long, at most %zu allowed", path, name,
		    json_string_length(v), cap - 1);
	else if (nonempty && json_string_length(v) == 0)
		snprintf(why, wlen, "\"%s%s\" is empty", path, name);
	else {
		memcpy(dst, json_string_value(v), json_string_length(v) + 1);
		return NULL;
	}
	return why;
}

/* An integer field in [lo, hi]. */
static const char *
get_int(json_t *obj, const char *path, const char *name, json_int_t lo, json_int_t hi,
    json_int_t *out, char *why, size_t wlen)
{
	json_t *v = json_object_get(obj, name);

	if (v == NULL)
		snprintf(why, wlen, "no \"%s%s\"", path, name);
	else if (!json_is_integer(v))
		snprintf(why, wlen, "\"%s%s\" is %s, not an integer", path, name, json_type_word(v));
	else if (json_integer_value(v) < lo || json_integer_value(v) > hi)
		snprintf(why, wlen, "\"%s%s\" is %lld, not an integer from %lld to %lld", path, name,
		    (long long)json_integer_value(v), (long long)lo, (long long)hi);
	else {
		*out = json_integer_value(v);
		return NULL;
	}
	return why;
}

/* A number field (integer or real) in [lo, hi]. */
static const char *
get_num(json_t *obj, const char *name, double lo, double hi, double *out, char *why,
    size_t wlen)
{
	json_t *v = json_object_get(obj, name);
	double d;

	if (v == NULL) {
		snprintf(why, wlen, "no \"%s\"", name);
		return why;
	}
	if (!json_is_number(v)) {
		snprintf(why, wlen, "\"%s\" is %s, not a number", name, json_type_word(v));
		return why;
	}
	d = json_number_value(v);
	if (!isfinite(d) || d < lo || d > hi) {
		snprintf(why, wlen, "\"%s\" is %g, not a number from %g to %g", name, d, lo, hi);
		return why;
	}
	*out = d;
	return NULL;
}

const char *
sr_lease_json_parse(const char *job, const char *buf, size_t len, struct sr_lease_info *li, char *why,
    size_t wlen)
{
	json_error_t je;
	json_t *root, *owner = NULL, *v;
	json_int_t epoch, pid;
	const char *p = NULL;
	char state[32];

	memset(li, 0, sizeof *li);
	if (len > SR_LEASE_BYTES_MAX) {
		snprintf(why, wlen, "%zu bytes, more than the %d a lease may have", len,
		    SR_LEASE_BYTES_MAX);
		return why;
	}
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL) {
		snprintf(why, wlen, "not JSON: %s at line %d, column %d", je.text, je.line,
		    je.column);
		return why;
	}
	if (!json_is_object(root)) {
		snprintf(why, wlen, "not a JSON object but %s", json_type_word(root));
		json_decref(root);
		return why;
	}
	if ((p = get_str(root, "", "job", li->job, sizeof li->job, 1, why, wlen)) == NULL &&
	    strcmp(li->job, job) != 0) {
		snprintf(why, wlen, "\"job\" is \"%s\", not \"%s\" (the job its key names)",
		    li->job, job);
		p = why;
	}
	if (p == NULL)
		p = get_int(root, "", "epoch", 1, INT64_MAX, &epoch, why, wlen);
	if (p == NULL && (p = get_str(root, "", "state", state, sizeof state, 1, why, wlen)) ==
	    NULL && sr_lease_state_parse(state, &li->state) == -1) {
		snprintf(why, wlen, "\"state\" is \"%s\", not one of queued, running, released, "
		    "succeeded, failed, cancelled", state);
		p = why;
	}
	if (p == NULL && !json_is_object(owner = json_object_get(root, "owner"))) {
		if ((v = json_object_get(root, "owner")) == NULL)
			snprintf(why, wlen, "no \"owner\"");
		else
			snprintf(why, wlen, "\"owner\" is %s, not an object", json_type_word(v));
		p = why;
	}
	if (p == NULL)
		p = get_str(owner, "owner.", "host", li->owner.host, sizeof li->owner.host, 1, why,
		    wlen);
	if (p == NULL)
		p = get_int(owner, "owner.", "pid", 1, 0x7fffffff, &pid, why, wlen);
	if (p == NULL)
		p = get_str(owner, "owner.", "boot_id", li->owner.boot_id,
		    sizeof li->owner.boot_id, 0, why, wlen);
	if (p == NULL)
		p = get_str(owner, "owner.", "agent", li->owner.agent, sizeof li->owner.agent, 0,
		    why, wlen);
	if (p == NULL)
		p = get_str(owner, "owner.", "instance", li->owner.instance,
		    sizeof li->owner.instance, 0, why, wlen);
	if (p == NULL)
		p = get_str(owner, "owner.", "provider", li->owner.provider,
		    sizeof li->owner.provider, 0, why, wlen);
	if (p == NULL)
		p = get_num(root, "claimed", 0, 1e11, &li->claimed, why, wlen);
	if (p == NULL)
		p = get_num(root, "renewed", 0, 1e11, &li->renewed, why, wlen);
	if (p == NULL)
		p = get_num(root, "expires", 0, 1e11, &li->expires, why, wlen);
	if (p == NULL)
		p = get_num(root, "ttl", SR_LEASE_TTL_MIN, SR_LEASE_TTL_MAX, &li->ttl, why, wlen);
	json_decref(root);
	if (p != NULL)
		return p;
	li->epoch = (int64_t)epoch;
	li->owner.pid = (long)pid;
	return NULL;
}
