/*
 * status-view.h: what `spotrun status` shows, worked out from the status
 * markers (fleet-index.h): the jobs chosen, grouped by sweep (a trial's
 * sweep is in its id), with totals per sweep and for all; printed as
 * tables (cmd-status.c) or JSON (status-json.c, schema in doc/fleet.md).
 */
#ifndef SR_STATUS_VIEW_H
#define SR_STATUS_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "fleet-index.h"
#include "lease.h"
#include "queue.h"

struct sr_status_totals {
	long jobs;
	long states[SR_LEASE_NSTATES];
	long attempts, preemptions;
	int64_t gpu_seconds, lost_gpu_seconds;
	double cost, on_demand_cost;
};

/* The jobs of one sweep, or those of no sweep (name ""). */
struct sr_status_group {
	char *name;
	const struct sr_fleet_row **rows;	/* in id order */
	size_t n;
	struct sr_status_totals totals;
};

struct sr_status_view {
	struct sr_status_group *groups;	/* sweeps by name, then the jobs of none */
	size_t ngroups;
	struct sr_status_totals totals;	/* of every job shown */
};

/* Group the rows chosen (pointers into an index; n of them). */
void sr_status_view_build(const struct sr_fleet_row *const *rows, size_t n,
    struct sr_status_view *v);
void sr_status_view_free(struct sr_status_view *v);

/* The states in the order status tells them: running first, ended last. */
extern const enum sr_lease_state sr_status_state_order[SR_LEASE_NSTATES];

/* "2 running, 1 queued": the states whose count (counts[state]) is not 0,
 * in that order, into buf. */
const char *sr_status_states_line(const long *counts, char *buf, size_t len);

/* Print v as JSON to stdout (doc/fleet.md, "status --json"), with the n
 * records m of agents/ (sr_queue_machines_read) and the pools
 * (status-pools.h: none when not read); counts are the requests the
 * command made. */
struct sr_status_pools;
void sr_status_print_json(const struct sr_status_view *v, const char *url, const char *from,
    const struct sr_fleet_index *ix, const struct sr_queue_machine *m, size_t n,
    const struct sr_status_pools *pools, const struct sr_queue_counts *counts);

#endif
