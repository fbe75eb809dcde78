/*
 * agent.h: the fleet's agent (doc/fleet.md), the engine of `spotrun agent`.
 * On a machine of the fleet it finds its GPUs (NVML) and its provider,
 * then claims jobs it can run from a queue (queue.h) and runs each exactly
 * as `spotrun run` does (sr_run_job, with the claimed lease handed in),
 * while a thread of the job's heartbeats its status markers, ships its
 * output to the queue and checks its cancel request. A finished job's
 * lease ends succeeded or failed and the agent claims the next; a
 * preempted one is released (back in the queue for another agent) and the
 * agent stops claiming, the machine being about to go. A malformed job or
 * lease is reported and skipped. What happens is said on stderr, each line
 * starting "spotrun agent: ".
 */
#ifndef SR_AGENT_H
#define SR_AGENT_H

#include <stddef.h>

#include "prices.h"
#include "run.h"

/* The labels an agent takes (--label K=V), which describe its machine.
 * Five mean something, over what the agent found: "gpus" (how many it
 * offers), "gpu_type" (the model jobs' gpu_type is matched against),
 * "host" (its name in leases and status), "provider" and "instance"; the
 * others only describe (its first line shows them). Names of letters,
 * digits, '_', '.', '-'; values of those, ':' and '/'. */
struct sr_agent_label {
	const char *key, *value;
};

struct sr_agent_opts {
	const char *queue;		/* the queue's URL */
	const char *queue_where;	/* "URL (from WHERE)" for its first line (NULL: the URL) */
	/* What its machine costs, to price each attempt (prices.h; NULL:
	 * nothing, cost 0). */
	const struct sr_prices *prices;
	const char *dir;		/* jobs run in DIR/jobs/ID (NULL: sr_agent_default_dir) */
	/* The machine's provider (provider.h's names), also for its jobs
	 * whose [provider] is auto; NULL or "auto": found by auto's probes.
	 * With one that asks no metadata address (local, signal), nothing
	 * the agent opens asks one, its stores' credentials included. */
	const char *provider;
	double idle_timeout;		/* seconds without a job before it ends (0: never) */
	const char *idle_command;	/* then run with /bin/sh -c (NULL: none) */
	int once;			/* end when there is nothing to claim (drain the queue) */
	int max_jobs;			/* end after running this many (0: no limit) */
	const struct sr_agent_label *labels;
	size_t nlabels;
	int quiet;			/* the runs' timelines: important lines only */
	/* The node of a multi-node trace the local provider replays for this
	 * machine, whatever its node in each gang: 1 for the first (up while
	 * a value is >= 1), N for the N-th; 0: its gang node (run.h's hooks). */
	int trace_node;
	/* The exit status a run's result is given in its last line. */
	int (*exit_code)(const struct sr_run_result *res);
};

/* How the agent ended. */
enum sr_agent_end {
	SR_AGENT_IDLE,		/* idle for idle_timeout; the idle command ran */
	SR_AGENT_DRAINED,	/* once: nothing was left to claim */
	SR_AGENT_MAX_JOBS,	/* it ran max_jobs jobs */
	SR_AGENT_PREEMPTED,	/* a preemption notice: the machine is going */
	SR_AGENT_SIGNALLED,	/* a signal from the user (SIGINT, SIGTERM, ...) */
	/* its own errors; err says what failed */
	SR_AGENT_ERR_CONFIG,	/* a bad label, or SPOTRUN_LEASE_TTL */
	SR_AGENT_ERR_QUEUE,	/* the queue could not be opened */
	SR_AGENT_ERR_SYSTEM	/* the signal pipe, a thread, the job folders */
};

struct sr_agent_result {
	enum sr_agent_end end;
	int jobs;			/* jobs claimed and run */
	int succeeded, failed, released, cancelled, lost;
	int signal;			/* SIGNALLED: which */
	int idle_status;		/* IDLE with an idle command: its exit code */
	char err[SR_ERRMAX];
};

/* $XDG_STATE_HOME/spotrun/agent, or $HOME/.local/state/spotrun/agent,
 * into buf: 0, or -1 with err when neither is an absolute path. */
int sr_agent_default_dir(char *buf, size_t len, char *err);

/* Check a label (key and value) as sr_agent_run takes it: 0, or -1 with
 * err naming it and what would be valid. */
int sr_agent_label_check(const struct sr_agent_label *l, char *err);

/* Run the agent until it ends (res). */
enum sr_agent_end sr_agent_run(const struct sr_agent_opts *o, struct sr_agent_result *res);

#endif
