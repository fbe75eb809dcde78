/*
 * status-view.c: the status markers grouped by sweep, with totals
 * (status-view.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status-view.h"
#include "util.h"

const enum sr_lease_state sr_status_state_order[SR_LEASE_NSTATES] = {
	SR_LEASE_RUNNING, SR_LEASE_RELEASED, SR_LEASE_QUEUED, SR_LEASE_SUCCEEDED, SR_LEASE_FAILED,
	SR_LEASE_CANCELLED
};

/* A row with the name of its group. */
struct keyed {
	char group[SR_QUEUE_ID_MAX + 1];	/* "" for a job of no sweep */
	const struct sr_fleet_row *row;
};

/* Sweeps by name, the jobs of none last; each by id. */
static int
keyed_cmp(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int c;

	if ((x->group[0] == '\0') != (y->group[0] == '\0'))
		return x->group[0] == '\0' ? 1 : -1;
	if ((c = strcmp(x->group, y->group)) != 0)
		return c;
	return strcmp(x->row->id, y->row->id);
}

static void
add_to(struct sr_status_totals *t, const struct sr_fleet_row *r)
{
	t->jobs++;
	t->states[r->state]++;
	t->attempts += r->attempts;
	t->preemptions += r->preemptions;
	t->gpu_seconds += r->gpu_seconds;
	t->lost_gpu_seconds += r->lost_gpu_seconds;
	t->cost += r->cost;
	t->on_demand_cost += r->on_demand_cost;
}

void
sr_status_view_build(const struct sr_fleet_row *const *rows, size_t n, struct sr_status_view *v)
{
	struct keyed *k = sr_calloc(n + 1, sizeof *k);
	struct sr_status_group *g = NULL;
	size_t i;

	memset(v, 0, sizeof *v);
	for (i = 0; i < n; i++) {
		if (!sr_fleet_sweep_of(rows[i]->id, k[i].group, sizeof k[i].group))
			k[i].group[0] = '\0';
		k[i].row = rows[i];
	}
	sr_sort(k, n, sizeof *k, keyed_cmp);
	for (i = 0; i < n; i++) {
		if (g == NULL || strcmp(g->name, k[i].group) != 0) {
			v->groups = sr_reallocarray(v->groups, v->ngroups + 1, sizeof *v->groups);
			g = &v->groups[v->ngroups++];
			memset(g, 0, sizeof *g);
			g->name = sr_strdup(k[i].group);
		}
		if ((g->n & (g->n - 1)) == 0)
			g->rows = sr_reallocarray(g->rows, g->n ? g->n * 2 : 4, sizeof *g->rows);
		g->rows[g->n++] = k[i].row;
		add_to(&g->totals, k[i].row);
		add_to(&v->totals, k[i].row);
	}
	free(k);
}

void
sr_status_view_free(struct sr_status_view *v)
{
	size_t i;

	for (i = 0; i < v->ngroups; i++) {
		free(v->groups[i].name);
		free(v->groups[i].rows);
	}
	free(v->groups);
	memset(v, 0, sizeof *v);
}

const char *
sr_status_states_line(const long *counts, char *buf, size_t len)
{
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < SR_LEASE_NSTATES; i++) {
		long k = counts[sr_status_state_order[i]];

		if (k > 0 && o < len)
			o += (size_t)snprintf(buf + o, len - o, "%s%ld %s", o > 0 ? ", " : "", k,
			    sr_lease_state_name(sr_status_state_order[i]));
	}
	return buf;
}
