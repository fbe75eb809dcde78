/*
 * status-json.c: `spotrun status --json`, the view as one JSON object
 * (schema in doc/fleet.md, "status --json"): numbers as numbers, money in
 * dollars to 1/10000, times in epoch seconds, null where nothing is known.
 * Printed in ASCII: every control character a marker's host may hold (C0,
 * DEL, C1) is a \uXXXX escape, so that the JSON on a terminal is inert.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "status-pools.h"
#include "status-view.h"
#include "util.h"

/* x to 1/10000, so that sums print as the markers wrote them. */
static json_t *
money(double x)
{
	return json_real(round(x * 10000.0) / 10000.0);
}

/* A string as JSON; one that is not UTF-8 (a host name in a marker
 * written by something else) with its bytes above 0x7f as '?'. */
static json_t *
text(const char *s)
{
	json_t *j = json_string(s);
	char *c;
	size_t i;

	if (j != NULL)
		return j;
	c = sr_strdup(s);
	for (i = 0; c[i] != '\0'; i++)
		if ((unsigned char)c[i] >= 0x80)
			c[i] = '?';
	j = json_string(c);
	free(c);
	return j;
}

static json_t *
totals_json(const struct sr_status_totals *t)
{
	json_t *states = json_object();
	size_t i;

	for (i = 0; i < SR_LEASE_NSTATES; i++)
		json_object_set_new(states, sr_lease_state_name(sr_status_state_order[i]),
		    json_integer(t->states[sr_status_state_order[i]]));
	return json_pack("{s:I, s:o, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o}",
	    "jobs", (json_int_t)t->jobs, "states", states,
	    "attempts", (json_int_t)t->attempts, "preemptions", (json_int_t)t->preemptions,
	    "gpu_seconds", (json_int_t)t->gpu_seconds,
	    "lost_gpu_seconds", (json_int_t)t->lost_gpu_seconds,
	    "gpu_hours", money((double)t->gpu_seconds / 3600.0),
	    "lost_gpu_hours", money((double)t->lost_gpu_seconds / 3600.0),
	    "cost", money(t->cost), "on_demand_cost", money(t->on_demand_cost),
	    "saved", money(t->on_demand_cost - t->cost));
}

static json_t *
job_json(const struct sr_fleet_row *r, const char *sweep)
{
	return json_pack("{s:s, s:o, s:s, s:I, s:o, s:i, s:i, s:I, s:I, s:o, s:o, s:o, s:o, s:o, "
	    "s:o}", "id", r->id, "sweep", sweep[0] != '\0' ? json_string(sweep) : json_null(),
	    "state", sr_lease_state_name(r->state), "epoch", (json_int_t)r->epoch,
	    "updated", json_real(round(r->time * 1000.0) / 1000.0),
	    "attempts", r->attempts, "preemptions", r->preemptions,
	    "gpu_seconds", (json_int_t)r->gpu_seconds,
	    "lost_gpu_seconds", (json_int_t)r->lost_gpu_seconds,
	    "gpu_hours", money((double)r->gpu_seconds / 3600.0),
	    "lost_gpu_hours", money((double)r->lost_gpu_seconds / 3600.0),
	    "cost", money(r->cost), "on_demand_cost", money(r->on_demand_cost),
	    "step", r->step >= 0 ? json_integer(r->step) : json_null(), "host", text(r->host));
}

static json_t *
machine_json(const struct sr_queue_machine *m)
{
	return json_pack("{s:o, s:o, s:o, s:i, s:i, s:o, s:o}", "agent", text(m->agent),
	    "host", text(m->host), "time", json_real(round(m->time * 1000.0) / 1000.0),
	    "gpu_nodes", m->gpu_nodes, "gpus", m->gpus, "gpu_type", text(m->gpu_type),
	    "no_driver", text(m->no_driver));
}

/* A time in epoch seconds to the millisecond; null when not known (0). */
static json_t *
when(double t)
{
	return t > 0 ? json_real(round(t * 1000.0) / 1000.0) : json_null();
}

static json_t *
vm_json(const struct sr_status_pool *p, size_t i, double now)
{
	static const char *const from[] = { [SR_STATUS_PRICE_NONE] = NULL,
		[SR_STATUS_PRICE_LAUNCH] = "launch", [SR_STATUS_PRICE_TABLE] = "table" };
	const struct sr_pool_vm *v = &p->vms[i];

	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:b, s:b, s:o, s:o, s:o, s:o}",
	    "id", text(v->id), "name", text(v->name), "state", text(v->state),
	    "zone", text(v->zone), "type", text(v->type), "spot", v->spot, "billed", v->billed,
	    "price_per_hour", p->price[i] > 0 ? money(p->price[i]) : json_null(),
	    "price_from", from[p->from[i]] != NULL ? json_string(from[p->from[i]]) : json_null(),
	    "launched", when(v->launched), "age_seconds", v->launched > 0 ?
	    json_integer(now > v->launched ? (json_int_t)(now - v->launched) : 0) : json_null());
}

/* A pool: its record's fields (queue/qpool.c's, tried null when none),
 * its engine, and its VMs (null when not listed: --no-cloud, an engine
 * that cannot, or a failure, said in vms_error). */
static json_t *
pool_json(const struct sr_status_pool *p, double now)
{
	const struct sr_queue_pool *r = &p->rec;
	json_t *vms = json_null(), *j;
	size_t i;

	if (p->listed) {
		vms = json_array();
		for (i = 0; i < p->nvms; i++)
			json_array_append_new(vms, vm_json(p, i, now));
	}
	j = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:o, s:o, s:o, s:b, s:i, s:o, s:o, "
	    "s:o, s:o, s:o, s:o, s:I, s:o, s:o, s:o, s:o}", "name", text(r->name), "cloud", text(r->cloud),
	    "region", text(r->region), "engine", p->e != NULL ? json_string(p->e->what) :
	    json_null(), "group", text(r->group), "template", text(r->template_id),
	    "target", (json_int_t)r->target, "created", when(r->created),
	    "updated", when(r->updated), "tried", r->tried[0] != '\0' ? text(r->tried) :
	    json_null(), "waiting", r->waiting, "max_vms", r->max_vms,
	    "cost_cap", r->cost_cap > 0 ? money(r->cost_cap) : json_null(),
	    "idle_timeout", json_real(r->idle_timeout), "spent", money(r->spent),
	    "in_jobs", money(r->in_jobs), "idle", money(r->idle),
	    "spent_at", when(r->spent_at), "fence", (json_int_t)r->fence, "by", text(r->by),
	    "why", text(r->why), "vms", vms, "vms_error", p->list_err[0] != '\0' ?
	    text(p->list_err) : json_null());
	if (j == NULL)
		sr_fatal("status: building the JSON failed");
	return j;
}

void
sr_status_print_json(const struct sr_status_view *v, const char *url, const char *from,
    const struct sr_fleet_index *ix, const struct sr_queue_machine *m, size_t n,
    const struct sr_status_pools *pools, const struct sr_queue_counts *counts)
{
	json_t *jobs = json_array(), *sweeps = json_array(), *agents = json_array(), *root;
	json_t *pl = json_array();
	char *dump, *p;
	size_t g, i;

	for (g = 0; g < v->ngroups; g++) {
		const struct sr_status_group *gr = &v->groups[g];

		for (i = 0; i < gr->n; i++)
			json_array_append_new(jobs, job_json(gr->rows[i], gr->name));
		if (gr->name[0] != '\0')
			json_array_append_new(sweeps, json_pack("{s:s, s:o}", "name", gr->name,
			    "totals", totals_json(&gr->totals)));
	}
	for (i = 0; i < n; i++)
		json_array_append_new(agents, machine_json(&m[i]));
	for (i = 0; pools != NULL && i < pools->n; i++)
		json_array_append_new(pl, pool_json(&pools->v[i], pools->now));
	root = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:{s:i, s:i, s:I}, s:{s:I, s:I, "
	    "s:I, s:I, s:I, s:I}}", "queue", text(url), "from", text(from),
	    "time", json_real(round(sr_now() * 1000.0) / 1000.0),
	    "jobs", jobs, "sweeps", sweeps, "totals", totals_json(&v->totals), "agents", agents,
	    "pools", pl,
	    "markers", "stale", ix->stale, "unreadable", ix->bad,
	    "malformed", (json_int_t)ix->malformed,
	    "requests", "total", (json_int_t)counts->requests, "lists", (json_int_t)counts->lists,
	    "gets", (json_int_t)counts->gets, "puts", (json_int_t)counts->puts,
	    "deletes", (json_int_t)counts->deletes, "heads", (json_int_t)counts->heads);
	if (root == NULL)	/* every string went through text(): out of memory */
		sr_fatal("status: building the JSON failed");
	/* jansson escapes C0 and, in ASCII, all above 0x7f; DEL, which JSON
	 * lets through, can only be in a string, where \u007F means it too */
	if ((dump = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(15) |
	    JSON_ENSURE_ASCII)) == NULL)
		sr_fatal("status: printing the JSON failed");
	for (p = dump; *p != '\0'; p++) {
		if (*p == 0x7f)
			fputs("\\u007F", stdout);
		else
			putchar(*p);
	}
	fputc('\n', stdout);
	free(dump);
	json_decref(root);
}
