/*
 * agent-int.h: what the agent's two files share: its state (agent.c: the
 * machine, the queue, the claims, idling) and the run of one claimed job
 * (agent-job.c, which agent.c calls, never the other way: its messages and
 * the list of jobs skipped for a while are there too). Not for use outside
 * them.
 */
#ifndef SR_AGENT_INT_H
#define SR_AGENT_INT_H

#include <limits.h>

#include "agent.h"
#include "provider.h"
#include "gpus.h"
#include "queue.h"

/* A job the agent released after a failure of its own (its store, its
 * GPUs): not claimed again here for a while, so that another agent gets
 * it first and this one does not loop on it. */
struct sr_agent_skip {
	char id[SR_QUEUE_ID_MAX + 1];
	double until;			/* monotonic */
};

struct sr_agent {
	const struct sr_agent_opts *o;
	struct sr_queue *q;
	struct sr_lease_owner me;
	struct sr_queue_agent claim;	/* how it claims: me, its GPUs, the TTL */
	struct sr_gpus found;		/* its GPUs (gpus.h), as labels say */
	int gpus;			/* found.n */
	char gpu_type[SR_QUEUE_GPU_TYPE_MAX + 1];
	struct sr_facts facts;		/* its provider's, for cost */
	char price_type[64];		/* the instance type it is priced as ("local") */
	int spot;			/* priced at the spot price */
	int price_warned;		/* a price it could not find was said */
	double ttl;
	char dir[PATH_MAX];		/* jobs run in dir/jobs/ID */
	int sigfd;
	struct sr_agent_skip *skip;
	size_t nskip;
};

/* agent-job.c: print "spotrun agent: MESSAGE" on stderr. */
void sr_agent_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* agent-job.c */
/* Put id on the skip list for seconds; whether it is on it (1 or 0). */
void sr_agent_skip_add(struct sr_agent *ag, const char *id, double seconds);
int sr_agent_skipped(struct sr_agent *ag, const char *id);
/* Run claimed job j (the agent's: freed here) to its end,
 * counting it in res: -1 to go on claiming, or the sr_agent_end the
 * agent ends with (PREEMPTED, SIGNALLED). */
int sr_agent_job(struct sr_agent *ag, struct sr_queue_job *j, struct sr_agent_result *res);

#endif
