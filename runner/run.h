/*
 * run.h: supervising one job through its attempts: restore, launch, watch
 * notices, checkpoint, stop, and play the next VM or restart. The engine
 * says how the run ended (struct sr_run_result); what exit status that
 * becomes is the caller's business: `spotrun run` (cmd-run.c) maps it to
 * the codes of doc/spotrun.1.
 */
#ifndef SR_RUN_H
#define SR_RUN_H

#include <stddef.h>

#include "lease.h"
#include "util.h"

struct sr_jobspec;

/* How a run ended. */
enum sr_run_outcome {
	SR_RUN_FINISHED,	/* the job exited 0 */
	SR_RUN_FAILED,		/* the job exited non-zero or was killed, and is
				 * not restarted (no restart left, or not for
				 * this code, or stopped by the user) */
	SR_RUN_PREEMPTED,	/* preempted, and no next machine follows here */
	SR_RUN_CANNOT_EXEC,	/* the command could not be executed */
	SR_RUN_CANCELLED,	/* stopped by a cancel request (sr_run_hooks) */
	SR_RUN_LEASE_HELD,	/* not started: another run holds the job's lease;
				 * err says who and until when */
	SR_RUN_LEASE_LOST,	/* the job's lease was taken over, or could not be
				 * renewed in time: the job was stopped and the
				 * run committed nothing more; err says why */
	/* spotrun's own errors; err says what failed */
	SR_RUN_ERR_SYSTEM,	/* directories, the lock file, pipes, signals */
	SR_RUN_ERR_UNAVAILABLE,	/* this machine lacks what the job needs (GPUs),
				 * or another run of the job holds its lock */
	SR_RUN_ERR_STORE,	/* the store could not be opened */
	SR_RUN_ERR_PROVIDER,	/* the provider could not be set up */
	SR_RUN_ERR_CONFIG,	/* a setting the job file check could not judge
				 * turned out bad (a trace_start the trace, read
				 * only now, does not allow): the job file's to fix */
	SR_RUN_ERR_ATTEMPT	/* an attempt could not go on: its restore, its
				 * log, the provider's VM, the spawn */
};

struct sr_run_result {
	enum sr_run_outcome outcome;
	/* FINISHED, FAILED: the job's exit code (128+N when killed by signal
	 * N); CANNOT_EXEC: 126, or 127 when not found, as a shell gives. */
	int code;
	int exec_errno;		/* CANNOT_EXEC: why */
	int signal;		/* a signal from the user stopped the run (0: none) */
	int next_vm;		/* PREEMPTED with hooks->one_vm: the provider would
				 * have played another machine (local) */
	char err[SR_ERRMAX];	/* CANNOT_EXEC and the errors: "verb object: reason" */
};

/* What a run has done so far, for sr_run_hooks's progress. */
struct sr_run_progress {
	int attempts, preemptions, checkpoints;
	long long step;		/* the newest committed checkpoint's step (-1: none) */
	double seconds;		/* the attempts' time, the running one's up to now */
	double lost;		/* seconds of work lost (done again: run-int.h) */
	int gpus;		/* the GPUs the job has */
	double notice_deadline;	/* SR_RUN_EV_NOTICE: the notice's deadline */
	int notice_machine;	/* SR_RUN_EV_NOTICE: the notice is this machine's
				 * own (it goes), told also when another node's
				 * notice came first; 0: another node's of the gang,
				 * passed on (this machine stays) */
	double request_deadline;	/* SR_RUN_EV_REQUEST: the request's */
};

/* When progress is called. */
enum sr_run_event {
	SR_RUN_EV_ATTEMPT,	/* an attempt's job was launched */
	SR_RUN_EV_NOTICE,	/* a preemption notice came */
	SR_RUN_EV_CHECKPOINT,	/* a checkpoint was committed */
	SR_RUN_EV_ATTEMPT_END,	/* an attempt ended */
	SR_RUN_EV_REQUEST	/* a checkpoint was asked of the job on this run's own
				 * account (periodic, early), by p->request_deadline */
};

/*
 * What the caller of a run (the agent, agent.c) hands in and is told;
 * every member is optional (0 / NULL / -1 as said). Callbacks are called
 * from the run's thread, in its loop: they must not wait on the network.
 */
/* A run as node `node` of a gang of `nodes` machines (doc/fleet.md,
 * "Gangs"); nodes 0 or 1: one machine. */
struct sr_run_gang {
	int node, nodes;
	/* node 0's address and the port its rank 0 hosts the rendezvous at:
	 * MASTER_ADDR and MASTER_PORT of every node's ranks */
	const char *master_addr;
	int master_port;
	/* The gang's epoch (its lease's). Node 0 holds the lease (hooks'
	 * lease) and commits the gang's checkpoints; another node holds
	 * none (lease NULL), fences nothing, saves its part of each
	 * checkpoint for node 0 to commit, writes no FINISHED marker, and
	 * times no periodic checkpoint: node 0's reach it (notice()). */
	int64_t epoch;
};

struct sr_gpus;
struct sr_notice;
struct sr_run_hooks {
	void *arg;
	/* A running lease of the job (lease.h, for js->name in js->store)
	 * the caller claimed: the run keeps it alive, fences with it and
	 * stops the job when it is lost, as with the lease it claims itself
	 * when this is NULL, but does not end it: that is the caller's
	 * (sr_run_lease_state). lease_prev: what its claim found (NULL:
	 * nothing). */
	struct sr_lease *lease;
	const struct sr_lease_info *lease_prev;
	/* This machine's GPUs as the caller found them (gpus.h; NULL: the run
	 * finds them); copied. */
	const struct sr_gpus *gpus;
	/* A preemption ends the run (PREEMPTED), even where the provider
	 * would play the next machine (res->next_vm says so): the caller
	 * puts the job back in its queue. */
	int one_vm;
	/* The machine the run starts on (0: 1) and since when it has been up
	 * (epoch seconds; 0: from the run's start), for the local provider
	 * (provider.h's vm_since): an agent plays its machines one after
	 * another across its jobs, the next after a run that ended with
	 * res->next_vm, so a trace goes on where its last job left it. */
	int vm;
	double vm_since;
	/* The node of a multi-node trace the local provider replays, 1 for
	 * the first (an agent's --trace-node: the same machine's periods
	 * whatever its node in each gang); 0: the run's node in its gang. */
	int trace_node;
	/* SIGTERM to spotrun (when no provider takes it as its notice) is a
	 * notice by [provider] grace: the job is checkpointed and stopped, the
	 * run ends PREEMPTED with res->signal set, for a caller that a
	 * shutdown stops with SIGTERM (an agent under systemd). */
	int term_notice;
	void (*progress)(void *arg, enum sr_run_event ev, const struct sr_run_progress *p);
	/* The attempt's log lines (joblog.h's format), as they are logged. */
	void (*log)(void *arg, int attempt, const char *buf, size_t len);
	/* Readable (-1: none) when the caller wants the job stopped: stop()
	 * then says whether it is a cancel (1, *checkpoint: a final
	 * checkpoint first) or nothing (0). */
	int stop_fd;
	int (*stop)(void *arg, int *checkpoint);
	/* Readable (-1: none) when another machine of the job (a node of its
	 * gang) got a notice: notice() fills n and returns 1, which the run
	 * takes as its own provider's; or when node 0 asked its ranks for a
	 * checkpoint (periodic): 2, with n->deadline the request's, which
	 * the run asks of its ranks too (0: nothing). */
	int notice_fd;
	int (*notice)(void *arg, struct sr_notice *n);
	struct sr_run_gang gang;
	/* The job finished (exit 0), the run's last line said: end the
	 * handed-in lease succeeded, after what must come first (the agent
	 * ships the job's log, which `spotrun logs -f` reads until the lease
	 * ends), before the run writes its FINISHED marker. 0 done; -1 with
	 * err, it could not (no FINISHED then); -2 the lease was lost. NULL:
	 * the run sets the lease succeeded itself. */
	int (*finish)(void *arg, char *err);
};

struct sr_run_opts {
	int quiet;		/* timeline: only the important lines */
	/* The exit status the caller will give for a result, which the run's
	 * last line shows ("exit 75: 1 attempt, ..."); NULL: res->code. */
	int (*exit_code)(const struct sr_run_result *res);
	const struct sr_run_hooks *hooks;	/* NULL: none */
	/* The job's [data] is on this machine already (the agent fetched it,
	 * fleet/agent-data.c); 0: the run fetches it before its first
	 * attempt, into the working directory's .spotrun/data (data.h). */
	int data_done;
};

/* Run the job to its end and say how it ended in *res. The timeline and
 * the job's output go to stderr/stdout as the run goes; the errors of
 * res->err are the caller's to print. */
enum sr_run_outcome sr_run_job(struct sr_jobspec *js, const struct sr_run_opts *o,
    struct sr_run_result *res);

/* The state a run's lease ends in for res (lease.h): succeeded when the
 * job finished, failed when it failed or could not be executed, cancelled,
 * else released (preempted, stopped by the user's signal, or spotrun's own
 * error: another run may do better); -1 for LEASE_HELD and LEASE_LOST,
 * whose lease is not the run's to write. */
int sr_run_lease_state(const struct sr_run_result *res);

/* The node (0-based) of a multi-node trace the local provider of a run
 * with hooks h replays (h's trace_node, else its node in its gang). */
int sr_run_trace_node(const struct sr_run_hooks *h);

/* The lease TTL of runs and agents: SPOTRUN_LEASE_TTL (a duration, 1s to
 * 24h; for tests) or SR_LEASE_TTL_DEFAULT into *ttl: 0, or -1 with err
 * naming the variable and the fix; also -1 when it is below 3 times st's
 * write interval (the lease is renewed every TTL / 3: 3 s on gs://), st
 * the store of the leases (NULL: no such check). */
int sr_run_lease_ttl(double *ttl, const struct sr_store *st, char *err);

#endif
