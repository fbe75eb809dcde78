/*
 * fleet-index.c: the status markers read once into rows (fleet-index.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fleet-index.h"
#include "util.h"

static int
add_row(const struct sr_queue_status *s, void *arg)
{
	struct sr_fleet_index *ix = arg;
	struct sr_fleet_row *r;

	if ((ix->n & (ix->n - 1)) == 0)	/* grow at powers of two */
		ix->v = sr_reallocarray(ix->v, ix->n ? ix->n * 2 : 16, sizeof *ix->v);
	r = &ix->v[ix->n++];
	r->id = sr_strdup(s->id);
	r->epoch = s->epoch;
	r->time = s->time;
	r->state = s->state;
	r->attempts = s->attempts;
	r->preemptions = s->preemptions;
	r->gpu_seconds = s->gpu_seconds;
	r->lost_gpu_seconds = s->lost_gpu_seconds;
	r->cost = s->cost;
	r->on_demand_cost = s->on_demand_cost;
	r->step = s->step;
	r->host = sr_strdup(s->host);
	return 0;
}

static void
add_broken(const char *key, void *arg)
{
	struct sr_fleet_index *ix = arg;

	ix->broken = sr_reallocarray(ix->broken, ix->nbroken + 1, sizeof *ix->broken);
	ix->broken[ix->nbroken++] = sr_strdup(key);
}

static int
row_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sr_fleet_row *)a)->id, ((const struct sr_fleet_row *)b)->id);
}

int
sr_fleet_index_read(struct sr_queue *q, struct sr_fleet_index *ix, char *err)
{
	memset(ix, 0, sizeof *ix);
	if (sr_queue_status_walk(q, add_row, add_broken, ix, &ix->stale, &ix->bad, err) != 0) {
		sr_fleet_index_free(ix);
		return -1;
	}
	/* the listing is in key order, ID~...: the same as id order but where
	 * an id is a prefix of another ('~' sorts after every id character) */
	if (ix->n > 1)
		sr_sort(ix->v, ix->n, sizeof *ix->v, row_cmp);
	return 0;
}

void
sr_fleet_index_free(struct sr_fleet_index *ix)
{
	size_t i;

	for (i = 0; i < ix->n; i++) {
		free(ix->v[i].id);
		free(ix->v[i].host);
	}
	for (i = 0; i < ix->nbroken; i++)
		free(ix->broken[i]);
	free(ix->broken);
	free(ix->v);
	memset(ix, 0, sizeof *ix);
}

const char *
sr_fleet_index_broken(const struct sr_fleet_index *ix, const char *id)
{
	size_t i, n = strlen(id);

	for (i = 0; i < ix->nbroken; i++)
		if (strncmp(ix->broken[i] + strlen("index/"), id, n) == 0 &&
		    ix->broken[i][strlen("index/") + n] == '~')
			return ix->broken[i];
	return NULL;
}

/* The first row whose id is not below id. */
static size_t
lower_bound(const struct sr_fleet_index *ix, const char *id)
{
	size_t lo = 0, hi = ix->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(ix->v[mid].id, id) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct sr_fleet_row *
sr_fleet_index_find(const struct sr_fleet_index *ix, const char *id)
{
	size_t i = lower_bound(ix, id);

	return i < ix->n && strcmp(ix->v[i].id, id) == 0 ? &ix->v[i] : NULL;
}

int
sr_fleet_sweep_of(const char *id, char *name, size_t len)
{
	const char *dot = strrchr(id, '.');
	size_t n;

	if (dot == NULL || dot == id || dot[1] == '\0' || strspn(dot + 1, "0123456789") !=
	    strlen(dot + 1))
		return 0;
	n = (size_t)(dot - id);
	if (n >= len)
		return 0;
	memcpy(name, id, n);
	name[n] = '\0';
	return 1;
}

size_t
sr_fleet_index_sweep(const struct sr_fleet_index *ix, const char *name, size_t **rows)
{
	char *prefix = sr_asprintf("%s.", name), sweep[SR_QUEUE_ID_MAX + 1];
	size_t plen = strlen(prefix), i, n = 0;

	*rows = NULL;
	for (i = lower_bound(ix, prefix); i < ix->n && strncmp(ix->v[i].id, prefix, plen) == 0;
	    i++) {
		if (!sr_fleet_sweep_of(ix->v[i].id, sweep, sizeof sweep) || strcmp(sweep, name) != 0)
			continue;
		*rows = sr_reallocarray(*rows, n + 1, sizeof **rows);
		(*rows)[n++] = i;
	}
	free(prefix);
	return n;
}
