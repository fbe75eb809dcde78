/*
 * agent-place.c: a preemption of the agent's own machine added to the
 * queue's placement history (queue.h, Q/placement/CLOUD; doc/design.md,
 * "Provisioning"), so that the next `spotrun up` of a pool tries places
 * preempted again and again after the others (pool-failover.h's rank).
 * The place is the provider's facts: its cloud, zone (the region derived
 * from it) and instance type. Best effort: a failed write is a warning in
 * the agent's log and the job's end is as it was.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "agent-int.h"
#include "pool-failover.h"
#include "util.h"

void
sr_agent_place_preempted(struct sr_agent *ag)
{
	const struct sr_facts *f = &ag->facts;
	struct sr_queue_place_event e;
	char err[SR_ERRMAX];
	int c;

	memset(&e, 0, sizeof e);
	for (c = 0; c < SR_POOL_NCLOUDS; c++)
		if (strcmp(f->provider, sr_pool_cloud_name((enum sr_pool_cloud)c)) == 0)
			break;
	if (c == SR_POOL_NCLOUDS)
		return;		/* no cloud's place: local, signal */
	if (f->instance_type[0] == '\0' || strcmp(f->instance_type, "unknown") == 0 ||
	    sr_pool_zone_region((enum sr_pool_cloud)c, f->zone, e.region, sizeof e.region) == -1) {
		sr_agent_say("warning: preemption not added to the placement history: the "
		    "provider's facts name no zone and type (zone %s, type %s)",
		    f->zone[0] != '\0' ? f->zone : "none",
		    f->instance_type[0] != '\0' ? f->instance_type : "none");
		return;
	}
	snprintf(e.cloud, sizeof e.cloud, "%s", f->provider);
	/* Azure's facts name a location alone when the VM has no zone */
	snprintf(e.zone, sizeof e.zone, "%s", strcmp(f->zone, e.region) == 0 ? "" : f->zone);
	snprintf(e.type, sizeof e.type, "%s", f->instance_type);
	snprintf(e.why, sizeof e.why, "%s", SR_POOL_PREEMPTED);
	e.at = sr_now();
	if (sr_queue_placement_add(ag->q, e.cloud, &e, 1, err) == -1)
		sr_agent_say("warning: preemption not added to the placement history: %s", err);
	else
		sr_agent_say("preemption of %s in %s noted in the placement history", e.type,
		    e.zone[0] != '\0' ? e.zone : e.region);
}
