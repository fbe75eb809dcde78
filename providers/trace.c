/*
 * trace.c: reading a spot availability trace (see trace.h) with jansson and
 * cutting it into up-periods once, so replay and benchmarks only index an
 * array. Every way a file can be wrong gets its own message naming the key
 * or the index, because a trace is often edited or cut by hand.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "trace.h"
#include "util.h"

struct sr_trace {
	double gap;
	int nodes;		/* metadata.nodes, 1 when absent */
	int node;		/* the node (0-based) whose up-periods these are */
	size_t nticks;
	struct sr_trace_period *periods;
	size_t nperiods;
};

#define TRACE_SHAPE "{\"metadata\": {\"gap_seconds\": N}, \"data\": [0|1|..., ...]}"

/* "an object", "a string", ... for messages about a value of the wrong type. */
static const char *
json_kind(const json_t *v)
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
		return "true";
	case JSON_FALSE:
		return "false";
	case JSON_NULL:
		return "null";
	}
	return "a value";
}

/* The JSON of the file at path, or NULL with err set; *unopened says
 * whether it could not even be opened. Opened non-blocking, so a FIFO is
 * refused rather than waited on (for a regular file the flag changes
 * nothing). */
static json_t *
load_json(const char *path, int *unopened, char *err)
{
	json_error_t je;
	struct stat st;
	json_t *root;
	FILE *fp;
	int fd;

	*unopened = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd == -1) {
		*unopened = 1;
		sr_errno(err, "load trace %s", path);
		return NULL;
	}
	if (fstat(fd, &st) == -1) {
		sr_errno(err, "load trace %s", path);
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		sr_err(err, "load trace %s: not a regular file", path);
		close(fd);
		return NULL;
	}
	fp = fdopen(fd, "r");
	if (fp == NULL) {
		sr_errno(err, "load trace %s", path);
		close(fd);
		return NULL;
	}
	root = json_loadf(fp, 0, &je);
	fclose(fp);
	if (root == NULL)
		sr_err(err, "load trace %s: bad JSON at line %d, column %d: %s",
		    path, je.line, je.column, je.text);
	return root;
}

/* Check the shape; on success *gap, *nodes (0: not said, the data's
 * largest value then) and *data are set (data borrowed from root). */
static int
check_shape(const char *path, json_t *root, double *gap, int *nodes, json_t **data,
    char *err)
{
	json_t *meta, *g, *nv;

	if (!json_is_object(root))
		return sr_err(err, "load trace %s: the top level is %s; expected %s",
		    path, json_kind(root), TRACE_SHAPE);
	meta = json_object_get(root, "metadata");
	if (meta == NULL)
		return sr_err(err, "load trace %s: \"metadata\" is missing; expected %s",
		    path, TRACE_SHAPE);
	if (!json_is_object(meta))
		return sr_err(err, "load trace %s: \"metadata\" is %s, not an object",
		    path, json_kind(meta));
	g = json_object_get(meta, "gap_seconds");
	if (g == NULL)
		return sr_err(err, "load trace %s: \"metadata\".\"gap_seconds\" is "
		    "missing; it gives the seconds between two values of \"data\"", path);
	if (!json_is_number(g))
		return sr_err(err, "load trace %s: \"metadata\".\"gap_seconds\" is %s, "
		    "not a number", path, json_kind(g));
	*gap = json_number_value(g);
	if (!(*gap > 0))
		return sr_err(err, "load trace %s: \"metadata\".\"gap_seconds\" is %g; "
		    "it must be > 0", path, *gap);
	*nodes = 0;
	nv = json_object_get(meta, "nodes");
	if (nv != NULL) {
		if (!json_is_integer(nv))
			return sr_err(err, "load trace %s: \"metadata\".\"nodes\" is %s, "
			    "not an integer", path, json_kind(nv));
		if (json_integer_value(nv) < 1 || json_integer_value(nv) > SR_TRACE_NODES_MAX)
			return sr_err(err, "load trace %s: \"metadata\".\"nodes\" is %lld; "
			    "it must be 1 to %d (the nodes a value of \"data\" counts)",
			    path, (long long)json_integer_value(nv), SR_TRACE_NODES_MAX);
		*nodes = (int)json_integer_value(nv);
	}
	*data = json_object_get(root, "data");
	if (*data == NULL)
		return sr_err(err, "load trace %s: \"data\" is missing; expected %s",
		    path, TRACE_SHAPE);
	if (!json_is_array(*data))
		return sr_err(err, "load trace %s: \"data\" is %s, not an array",
		    path, json_kind(*data));
	return 0;
}

/* The error for "data"[i], which is what (a kind or a number): 0..nodes
 * when the file says "nodes", else 0 to SR_TRACE_NODES_MAX. */
static int
bad_value(const char *path, size_t i, const char *what, int nodes, char *err)
{
	if (nodes == 0)
		return sr_err(err, "load trace %s: \"data\"[%zu] is %s; each value "
		    "must be an integer from 0 to %d: the instances up (0: down, 1: "
		    "up, N: N nodes of a multi-node trace)", path, i, what, SR_TRACE_NODES_MAX);
	return sr_err(err, "load trace %s: \"data\"[%zu] is %s; each value must be "
	    "an integer from 0 to %d (\"metadata\".\"nodes\"): the nodes up", path, i,
	    what, nodes);
}

/* Every value of data checked (0..*nodes, or 0..SR_TRACE_NODES_MAX when *nodes is
 * 0); a *nodes of 0 becomes the largest value (at least 1): the
 * spot-traces format counts the instances up, so a 4-node trace's values
 * run from 0 to 4 with no "nodes" of its own. 0, or -1 with err. */
static int
check_values(const char *path, json_t *data, int *nodes, char *err)
{
	size_t i, n = json_array_size(data);
	json_int_t v, max = 1, cap = *nodes > 0 ? *nodes : SR_TRACE_NODES_MAX;
	char num[32];
	json_t *e;

	for (i = 0; i < n; i++) {
		e = json_array_get(data, i);
		if (!json_is_integer(e))
			return bad_value(path, i, json_kind(e), *nodes, err);
		v = json_integer_value(e);
		if (v < 0 || v > cap) {
			snprintf(num, sizeof num, "%lld", (long long)v);
			return bad_value(path, i, num, *nodes, err);
		}
		max = v > max ? v : max;
	}
	if (*nodes == 0)
		*nodes = (int)max;
	return 0;
}

/* Cut data (its values checked) into node t->node's up-periods; 0, or
 * -1 with err when the node has none. */
static int
cut_periods(const char *path, struct sr_trace *t, json_t *data, char *err)
{
	size_t i, n = json_array_size(data), run = 0, cap = 0;

	t->nticks = n;
	for (i = 0; i <= n; i++) {
		json_int_t v = i < n ? json_integer_value(json_array_get(data, i)) : 0;

		/* Node j (0-based) is up while more than j nodes are. */
		if (v > t->node) {

			run++;
			continue;
		}
		if (run == 0)
			continue;
		if (t->nperiods == cap) {
			cap = cap ? cap * 2 : 64;
			t->periods = sr_reallocarray(t->periods, cap, sizeof *t->periods);
		}
		t->periods[t->nperiods].start = (double)(i - run) * t->gap;
		t->periods[t->nperiods].length = (double)run * t->gap;
		t->periods[t->nperiods].reaches_end = (i == n);
		t->nperiods++;
		run = 0;
	}
	if (t->nperiods == 0 && t->nodes == 1)
		return sr_err(err, "load trace %s: no up-period: \"data\" has no 1 "
		    "in its %zu values", path, n);
	if (t->nperiods == 0)
		return sr_err(err, "load trace %s: no up-period for node %d of %d: "
		    "\"data\" has no value >= %d in its %zu values", path, t->node + 1,
		    t->nodes, t->node + 1, n);
	return 0;
}

/* sr_trace_load_node, and whether the file could not be opened at all. */
static int
load(const char *path, int node, struct sr_trace **out, int *unopened, char *err)
{
	struct sr_trace *t;
	json_t *root, *data = NULL;
	double gap = 0;
	int nodes = 1, said;

	root = load_json(path, unopened, err);
	if (root == NULL)
		return -1;
	if (check_shape(path, root, &gap, &nodes, &data, err) == -1) {
		json_decref(root);
		return -1;
	}
	said = nodes > 0;
	if (check_values(path, data, &nodes, err) == -1) {
		json_decref(root);
		return -1;
	}
	if (node < 0 || node >= nodes) {
		json_decref(root);
		return sr_err(err, "load trace %s: node %d is not in it: it has %d "
		    "node%s (%s); a gang replaying it may have at most that many", path,
		    node + 1, nodes, nodes == 1 ? "" : "s", said ? "\"metadata\".\"nodes\"" :
		    "the largest value of \"data\"");
	}
	t = sr_calloc(1, sizeof *t);
	t->gap = gap;
	t->nodes = nodes;
	t->node = node;
	if (cut_periods(path, t, data, err) == -1) {
		json_decref(root);
		sr_trace_free(t);
		return -1;
	}
	json_decref(root);
	*out = t;
	return 0;
}

int
sr_trace_load(const char *path, struct sr_trace **out, char *err)
{
	int unopened;

	return load(path, 0, out, &unopened, err);
}

int
sr_trace_load_node(const char *path, int node, struct sr_trace **out, char *err)
{
	int unopened;

	return load(path, node, out, &unopened, err);
}

int
sr_trace_nodes(const struct sr_trace *t)
{
	return t->nodes;
}

void
sr_trace_free(struct sr_trace *t)
{
	if (t == NULL)
		return;
	free(t->periods);
	free(t);
}

double
sr_trace_gap(const struct sr_trace *t)
{
	return t->gap;
}

double
sr_trace_duration(const struct sr_trace *t)
{
	return (double)t->nticks * t->gap;
}

size_t
sr_trace_nperiods(const struct sr_trace *t)
{
	return t->nperiods;
}

const struct sr_trace_period *
sr_trace_period(const struct sr_trace *t, size_t k)
{
	if (k >= t->nperiods)
		sr_fatal("sr_trace_period: period %zu of %zu", k, t->nperiods);
	return &t->periods[k];
}

size_t
sr_trace_first_period(const struct sr_trace *t, double start)
{
	size_t k;

	for (k = 0; k < t->nperiods; k++) {
		if (t->periods[k].start >= start)
			break;
	}
	return k;
}

int
sr_trace_start_period(const struct sr_trace *t, const char *path, double start,
    size_t *k, char *err)
{
	const struct sr_trace_period *last = &t->periods[t->nperiods - 1];
	double end = last->start + last->length;
	char where[SR_ERRMAX];

	if ((*k = sr_trace_first_period(t, start)) < t->nperiods)
		return 0;
	if (start < end)
		snprintf(where, sizeof where, "inside the last up-period of trace %s "
		    "(%.10g s to %.10g s)", path, last->start, end);
	else if (start < sr_trace_duration(t))
		snprintf(where, sizeof where, "after the last up-period of trace %s "
		    "(%.10g s to %.10g s)", path, last->start, end);
	else
		snprintf(where, sizeof where, "past the end of trace %s (it lasts %.10g s)",
		    path, sr_trace_duration(t));
	return sr_err(err, "%s; no up-period starts at or after it; use a start time of "
	    "at most %.10g s, where the last one starts", where, last->start);
}

enum sr_trace_status
sr_trace_check(const char *path, double start, int nodes, char *err)
{
	struct sr_trace *t;
	size_t k;
	int unopened, r;

	if (load(path, 0, &t, &unopened, err) == -1)
		return unopened ? SR_TRACE_UNREADABLE : SR_TRACE_BAD_FILE;
	if (sr_trace_nodes(t) > 1 && nodes > sr_trace_nodes(t)) {
		/* the gang's last node: the run's own error */
		sr_trace_free(t);
		if (load(path, nodes - 1, &t, &unopened, err) == -1)
			return SR_TRACE_BAD_FILE;
	}
	r = sr_trace_start_period(t, path, start, &k, err);
	sr_trace_free(t);
	return r == 0 ? SR_TRACE_OK : SR_TRACE_BAD_START;
}
