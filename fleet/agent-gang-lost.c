/*
 * agent-gang-lost.c: whether a gang's job that failed on node 0 failed
 * because a node was lost without a notice (doc/fleet.md, "Gangs"). Such a
 * node's ranks stop at once, so the others' fail at their next collective
 * within seconds, long before its slot expires (a TTL): node 0's run ends
 * failed while the gang's watch still sees every slot alive. Before the
 * job's lease ends failed, node 0 looks at the members' slots: one that
 * was not renewed within the renewal it was due (TTL/3, plus a margin for
 * the watch's period and the store), waiting up to that long for a sign
 * of life, is a node lost, and the job goes back to the queue as after a
 * preemption. A slot released (or done) is not: its agent ended its part
 * itself, after its own failure or its ranks' (a genuine failure stays
 * one).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agent-int.h"
#include "util.h"

/* Seconds past a slot's due renewal (TTL/3) before its node counts as
 * lost: the watch renews within GANG_WATCH (0.5 s) of it being due, plus
 * a store's write. */
#define LOST_MARGIN 2.0
/* Seconds between two reads of the slots while waiting. */
#define LOST_POLL 0.5

/* The time t (epoch seconds) as HH:MM:SS UTC. */
static void
clock_of(double t, char *buf, size_t len)
{
	time_t s = (time_t)t;
	struct tm tm;

	gmtime_r(&s, &tm);
	strftime(buf, len, "%H:%M:%S UTC", &tm);
}

int
sr_agent_gang_lost(struct sr_agent *ag, struct sr_queue_job *j, const struct sr_agent_gang *g)
{
	struct sr_gang_slot first[SR_QUEUE_NODES_MAX], s;
	char err[SR_ERRMAX], at[32];
	int live[SR_QUEUE_NODES_MAX], node, rc, waiting;
	double lease_at = sr_mono(), now;

	if (g->node != 0 || g->nodes < 2 || g->nodes > SR_QUEUE_NODES_MAX || j->lease == NULL)
		return 0;
	for (node = 1; node < g->nodes; node++) {
		live[node] = 0;
		rc = sr_gang_read(ag->q, j->marker.id, node, &first[node], err);
		if (rc == SR_QUEUE_NOTFOUND || (rc == SR_QUEUE_OK && first[node].epoch != g->epoch)) {
			sr_agent_say("%s: gang node %d's slot is gone: the node is lost, so the job goes "
			    "back to the queue", j->marker.id, node);
			return 1;
		}
		if (rc != SR_QUEUE_OK) {
			/* not known to be lost: the failure stands */
			sr_agent_say("warning: %s: %s", j->marker.id, err);
			return 0;
		}
		if (first[node].state == SR_GANG_RELEASED || first[node].state == SR_GANG_DONE)
			live[node] = 1;	/* it ended its part itself */
	}
	for (;;) {
		now = sr_now();
		waiting = 0;
		for (node = 1; node < g->nodes; node++) {
			if (live[node])
				continue;
			rc = sr_gang_read(ag->q, j->marker.id, node, &s, err);
			if (rc == SR_QUEUE_OK && s.epoch == g->epoch &&
			    (s.renewed != first[node].renewed || s.state == SR_GANG_RELEASED ||
			    s.state == SR_GANG_DONE)) {
				live[node] = 1;
				continue;
			}
			if (now > first[node].renewed + first[node].ttl / 3 + LOST_MARGIN ||
			    rc == SR_QUEUE_NOTFOUND || (rc == SR_QUEUE_OK && s.epoch != g->epoch)) {
				clock_of(first[node].renewed, at, sizeof at);
				sr_agent_say("%s: gang node %d (%s) stopped renewing its slot at %s: lost, "
				    "so the job goes back to the queue", j->marker.id, node,
				    first[node].host, at);
				return 1;
			}
			waiting = 1;
		}
		if (!waiting)
			return 0;
		/* the lease lives on while node 0 waits (its keeper stopped with the run) */
		if (sr_mono() - lease_at >= ag->ttl / 3) {
			lease_at = sr_mono();
			if (sr_lease_renew(j->lease, err) == SR_LEASE_LOST) {
				sr_agent_say("%s: %s", j->marker.id, err);
				return 0;
			}
		}
		sr_sleep(LOST_POLL);
	}
}
