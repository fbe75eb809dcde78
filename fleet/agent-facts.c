/*
 * agent-facts.c: the machine's facts said plainly (agent-int.h): GPU
 * device nodes with no working driver, warned about at the start and
 * published in the queue's agents/ for `spotrun status`, so that a VM that
 * takes no GPU job says why on the laptop too; and why each pending job
 * the agent cannot take is skipped, once per job and reason (an agent
 * polls every few seconds: the same line at every poll would drown its
 * log).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent-int.h"
#include "util.h"

/* ag->record into the queue; a failure said, and tried again at the next
 * renewal (put sets .time, so not at every poll). */
static void
publish(struct sr_agent *ag)
{
	char err[SR_ERRMAX];

	if (sr_queue_machine_put(ag->q, &ag->record, err) == -1)
		sr_agent_say("warning: %s (spotrun status will not show it)", err);
	else
		ag->published = 1;
}

void
sr_agent_facts_say(struct sr_agent *ag, const char *gpus_label)
{
	const struct sr_gpus *g = &ag->found;
	struct sr_queue_machine *m = &ag->record;
	char then[128];

	if (g->no_driver[0] != '\0') {
		if (gpus_label != NULL)
			snprintf(then, sizeof then, "the label gpus=%s offers %d all the same",
			    gpus_label, ag->gpus);
		else
			snprintf(then, sizeof then, "this agent claims only jobs that need no GPU");
		sr_agent_say("warning: %zu GPU device node%s (%s), but the NVIDIA driver is not "
		    "working: %s; %s: install or load the NVIDIA driver (nvidia-smi must list the "
		    "GPUs), then restart the agent", g->nodes, g->nodes == 1 ? "" : "s",
		    g->node_paths, g->no_driver, then);
	}
	memset(m, 0, sizeof *m);
	snprintf(m->agent, sizeof m->agent, "%s", ag->me.agent);
	snprintf(m->host, sizeof m->host, "%s", ag->me.host);
	m->gpu_nodes = (int)g->nodes;
	m->gpus = ag->gpus;
	snprintf(m->gpu_type, sizeof m->gpu_type, "%s", ag->gpu_type);
	snprintf(m->no_driver, sizeof m->no_driver, "%s", g->no_driver);
	/* the pool's scaler finds this VM's jobs by it (pool-scale.c) */
	snprintf(m->instance, sizeof m->instance, "%s", ag->me.instance);
	/* `down --drain` finds this VM's jobs by it (pool-drain.c) */
	snprintf(m->pool, sizeof m->pool, "%s", ag->pool);
	publish(ag);
}

void
sr_agent_facts_renew(struct sr_agent *ag)
{
	/* a lease TTL shorter than the renewal (SPOTRUN_LEASE_TTL, tests)
	 * renews at the TTL: a test sees it without waiting minutes */
	double every = ag->ttl > 0 && ag->ttl < SR_QUEUE_MACHINE_RENEW ? ag->ttl :
	    SR_QUEUE_MACHINE_RENEW;

	if (ag->record.agent[0] != '\0' && sr_now() - ag->record.time >= every)
		publish(ag);
}

void
sr_agent_facts_end(struct sr_agent *ag)
{
	char err[SR_ERRMAX];

	if (ag->published && sr_queue_machine_delete(ag->q, ag->me.agent, err) == -1)
		sr_agent_say("warning: %s", err);
	ag->published = 0;
	free(ag->said);
	ag->said = NULL;
	ag->nsaid = ag->said_cap = 0;
}

/* FNV-1a of the job's id and the reason (never 0: 0 marks a free slot). */
static uint64_t
said_hash(const char *id, const char *why)
{
	uint64_t h = 1469598103934665603ULL;
	const char *s;

	for (s = id; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	h = (h ^ 0xff) * 1099511628211ULL;	/* no id-reason split looks like another */
	for (s = why; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h != 0 ? h : 1;
}

/* Add h to the set of skips said: 1 when it is new, 0 when said before.
 * Open addressing, grown at half full. */
static int
said_add(struct sr_agent *ag, uint64_t h)
{
	size_t i, cap;
	uint64_t *old;

	if (2 * (ag->nsaid + 1) > ag->said_cap) {
		old = ag->said;
		cap = ag->said_cap;
		ag->said_cap = cap > 0 ? cap * 2 : 64;
		ag->said = sr_calloc(ag->said_cap, sizeof *ag->said);
		ag->nsaid = 0;
		for (i = 0; i < cap; i++)
			if (old[i] != 0)
				(void)said_add(ag, old[i]);
		free(old);
	}
	for (i = h % ag->said_cap; ag->said[i] != 0; i = (i + 1) % ag->said_cap)
		if (ag->said[i] == h)
			return 0;
	ag->said[i] = h;
	ag->nsaid++;
	return 1;
}

void
sr_agent_unfit(void *arg, const struct sr_queue_pending *p)
{
	struct sr_agent *ag = arg;
	const struct sr_gpus *g = &ag->found;
	char why[SR_ERRMAX], type[SR_QUEUE_GPU_TYPE_MAX + 16] = "";
	int n = p->gpus_min;

	if (p->gpu_type[0] != '\0')
		snprintf(type, sizeof type, " of type %s", p->gpu_type);
	if (g->no_driver[0] != '\0' && ag->gpus == 0)
		snprintf(why, sizeof why, "needs %d GPU%s%s, this machine has 0 working (driver not "
		    "working: %s)", n, n == 1 ? "" : "s", type, g->no_driver);
	else if (n > ag->gpus)
		snprintf(why, sizeof why, "needs %d GPU%s%s, this machine has %d", n,
		    n == 1 ? "" : "s", type, ag->gpus);
	else if (p->gpu_type[0] != '\0' && strcasecmp(p->gpu_type, ag->gpu_type) != 0)
		snprintf(why, sizeof why, "needs %d GPU%s%s, this machine's are %s", n,
		    n == 1 ? "" : "s", type, ag->gpu_type[0] != '\0' ? ag->gpu_type :
		    "of no known model (give it with --label gpu_type=MODEL)");
	else
		snprintf(why, sizeof why, "needs %d GPU%s%s, %d free%s%s%s", n, n == 1 ? "" : "s",
		    type, ag->claim.gpus, ag->held[0] != '\0' ? " (" : "", ag->held,
		    ag->held[0] != '\0' ? ")" : "");
	if (said_add(ag, said_hash(p->id, why)))
		sr_agent_say("skip job %s: %s", p->id, why);
}
