/*
 * agent-int.h: what the agent's files share: its state (agent.c: the
 * machine, the queue, the claims, idling), a gang's node (agent-gang.c),
 * its messages (agent-say.c) and the run of one claimed job
 * (agent-job.c, which agent.c calls, never the other way: the list of
 * jobs skipped for a while is there too). Not for use outside them.
 */
#ifndef SR_AGENT_INT_H
#define SR_AGENT_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdint.h>

#include "agent.h"
#include "data.h"
#include "gang.h"
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
	char pool[SR_QUEUE_POOL_NAME_MAX + 1];	/* its label pool ("": none) */
	struct sr_queue_agent claim;	/* how it claims: me, its GPUs, the TTL */
	struct sr_lease_seen *seen;	/* the leases it saw, for their expiry (lease.h) */
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
	/* the machine's facts (agent-facts.c) */
	char held[192];			/* who holds its GPUs not free (count_free_gpus) */
	uint64_t *said;			/* hashes of the skips said (job, reason): a set */
	size_t nsaid, said_cap;
	int published;			/* its record is in the queue's agents/ */
	struct sr_queue_machine record;	/* what it wrote there (.time: when) */
	/* gangs (agent-gang.c) */
	char addr[SR_GANG_ADDR_MAX + 1];	/* what node 0 offers (label addr) */
	int wake_fd;			/* its gang wake port's socket (agent-wake.c; -1: none) */
	double gang_timeout, gang_fill;	/* SPOTRUN_GANG_TIMEOUT, SPOTRUN_GANG_FILL */
	struct sr_store_opts so;	/* how its queue's stores are opened */
	struct sr_agent_scale *scale;	/* its scaler (agent-scale.c; NULL: none) */
	/* The local provider's machine it plays now (from 1) and since when
	 * (epoch seconds): the next one after a job's run ended with its own
	 * preemption and the provider's next machine (run.h's next_vm), so
	 * a trace replays on across the agent's jobs. */
	int vm;
	double vm_since;
	/* Its machine's own notice came (the run's, not a gang peer's): the
	 * scaler lets its pools' leases go and takes no step until it is
	 * cleared (the local provider's next machine is up; a job that ended
	 * on its own after the notice leaves it set: the machine still
	 * goes), since a
	 * machine about to go counts itself out and asks for one more VM
	 * that the cloud's own replacement then doubles. The run's thread
	 * sets it, the scaler's reads it: __atomic. */
	int going;
	struct sr_agent_watch *watch;	/* its machine between runs (agent-watch.c) */
};

/* This agent's node of a gang's job, from its start to its end. */
struct sr_agent_gang {
	struct sr_gang *slot;		/* the job's (j->gang, freed with it) */
	int node, nodes;
	int64_t epoch;
	char addr[SR_GANG_ADDR_MAX + 1];	/* node 0's */
	int port;
	int notice_pipe[2];		/* another node's notice, for the run */
	pthread_mutex_t lock;		/* the rest, between the run and the heartbeat */
	int lock_init;
	double own_deadline;		/* this node's notice (0: none) */
	int own_published;		/* written into its slot */
	int injected;			/* another node's was passed to the run */
	int over;			/* the run's attempt ended: no peer to watch */
	double peer_deadline;
	char peer_why[128];
	double own_request;		/* node 0: a request to pass on (its deadline) */
	double peer_request;		/* a member: node 0's last, for the run */
	char said[SR_ERRMAX];		/* the last warning (said once) */
	/* waking the other nodes (agent-wake.c): the agent's socket, the
	 * job's id, and whether node 0 woke the members for a notice */
	int wake_fd;
	char id[SR_QUEUE_ID_MAX + 1];
	int woke_notice;
};

/* agent-wake.c */
/* The agent's wake port: a UDP socket at ag->addr, its port into
 * ag->claim.wake (which its gang slots name). 0, or -1 with err (then it
 * has none: its gangs pass notices through the slots alone). */
int sr_agent_wake_open(struct sr_agent *ag, char *err);
void sr_agent_wake_close(struct sr_agent *ag);
/* Wake the nodes g's agent last read in the slots (sr_gang_peers): it
 * wrote what they must read. Never blocks; a datagram lost is no error. */
void sr_agent_wake_peers(struct sr_agent_gang *g);
/* Wait up to seconds for a signal that ends the agent (SIGINT, SIGTERM,
 * SIGHUP, SIGQUIT: its number) or a datagram on the agent's wake port (0
 * early: another node wrote what this one waits for, a gang's marker put
 * back or its slots changed; a hint, so at most one look in WAKE_MIN;
 * or a notice of its machine posted between runs: agent-watch.c);
 * 0 at the end. Other signals are dropped, and with reap the children
 * reparented to the agent are reaped on SIGCHLD. */
int sr_agent_wait(struct sr_agent *ag, double seconds, int reap);
/* A thread that calls poke(arg) whenever the agent's wake port (fd) gets
 * the datagram of job id's gang at epoch; NULL when fd is -1 or no thread
 * could be started (then nothing pokes: the watch reads the slots). */
struct sr_agent_waker;
struct sr_agent_waker *sr_agent_waker_start(int fd, const char *id, int64_t epoch,
    void (*poke)(void *arg), void *arg);
void sr_agent_waker_stop(struct sr_agent_waker *w);

/* agent-watch.c: its machine's notices between its runs. */
struct sr_agent_watch;
/* Watch between runs with settings c (a job's [provider]: its strings are
 * copied) and trace node trace_node (0-based, as the run used it); "auto"
 * (or a NULL name): nothing is watched. Any watch under way stops. */
void sr_agent_watch_keep(struct sr_agent *ag, const struct sr_provider_conf *c, int trace_node);
/* Stop watching (a run, which watches for itself, comes next); the next
 * check starts again. */
void sr_agent_watch_stop(struct sr_agent *ag);
void sr_agent_watch_free(struct sr_agent *ag);
/* Readable when a notice came while watching; -1 when not watching. */
int sr_agent_watch_fd(const struct sr_agent *ag);
/* Its machine goes: with next_vm, on to the next one (ag->vm, vm_since,
 * going cleared: 0); else the preemption noted in the placement history,
 * 1: the agent ends as preempted. */
int sr_agent_machine_goes(struct sr_agent *ag, int next_vm);
/* Look for the machine's notice, `what` saying when ("between jobs"),
 * watching machine ag->vm from the first call (a notice due before it is
 * posted at once; settings that fail are said once and not tried again
 * until the next job's): 0 none; 1 it came, said, and the agent is on its next machine; 2 it came,
 * said: the machine goes and the agent must end (SR_AGENT_PREEMPTED). */
int sr_agent_watch_check(struct sr_agent *ag, const char *what);

/* agent-workdir.c */
/* Job id's working directory, shipped as snapshot snap (its meta.json's
 * "workdir"): restored into this machine's cache once, copied for this
 * claim into DIR/jobs/ID/workdir (any earlier copy replaced), its path in
 * *out (malloc'd). 0, or -1 with err (the store, this machine's disk). */
int sr_agent_workdir(struct sr_agent *ag, const char *id, const char *snap, char **out, char *err);

/* agent-setup.c */
#define SR_AGENT_SETUP_TAIL	10	/* lines of a failed setup's output said */
#define SR_AGENT_SETUP_LINEMAX	240	/* bytes kept of each */

struct sr_jobspec;

/* One job's [job] setup on this machine (doc/fleet.md, "Setup"). */
struct sr_agent_setup {
	const char *id;			/* the job's */
	const struct sr_jobspec *js;	/* its setup, workdir, [env], provider */
	/* its shipped working directory's snapshot, and the job's copy of it
	 * (agent-workdir.c), made again from the set-up tree; NULL: not
	 * shipped, set up in place (js->workdir) */
	const char *snap, *copy;
	int stop_fd;			/* readable: the job is cancelled (-1: none) */
	struct sr_lease_keeper *keeper;	/* the job's lease, renewed meanwhile (NULL: none) */
	/* each line of its log (joblog.h's format), as it comes; NULL: none */
	void (*log)(void *arg, const char *buf, size_t len);
	void *log_arg;
	/* out: its exit code (0: set up, or done before); or why it was
	 * stopped: a signal that ends the agent, a cancel, the lease lost */
	int code, signal, cancelled, lost;
	char lost_why[SR_ERRMAX];
	double seconds;			/* it ran so long (0: done before) */
};

/* Run s->js->setup unless this machine did for the same code and setup
 * text; its messages in the agent's log and s->log. 0 with s's out fields
 * (a failed or stopped setup is 0 too: s->code, s->signal...), or -1 with
 * err when it could not be run (the disk, a fork). */
int sr_agent_setup(struct sr_agent *ag, struct sr_agent_setup *s, char *err);

/* agent-data.c */
/* One job's [data] on this machine (doc/fleet.md, "Data"). */
struct sr_agent_data {
	const char *id;			/* the job's */
	const struct sr_jobspec *js;	/* its [data], workdir, provider */
	int stop_fd;			/* readable: the job is cancelled (-1: none) */
	struct sr_lease_keeper *keeper;	/* the job's lease, renewed meanwhile (NULL: none) */
	/* each line of its log (joblog.h's format), as it comes; NULL: none */
	void (*log)(void *arg, const char *buf, size_t len);
	void *log_arg;
	/* out: why it was stopped: a signal that ends the agent, a cancel,
	 * the lease lost; and what it fetched (data.h; res.permanent with
	 * the error) */
	int signal, cancelled, lost;
	char lost_why[SR_ERRMAX];
	struct sr_data_result res;
};

/* Fetch s->js's [data] into this machine's cache, DIR/data, and link each
 * destination (data.h), its lines in the agent's log and d->log. 0 when
 * done or stopped (d->signal...), or -1 with err naming the entry, which
 * the job's log has too (d->res.permanent: it would fail again). */
int sr_agent_data(struct sr_agent *ag, struct sr_agent_data *d, char *err);

/* agent-gang.c */
/* The gang settings (SPOTRUN_GANG_TIMEOUT, SPOTRUN_GANG_FILL) and the
 * address node 0 offers (addr: the label's, NULL: found): 0, or -1 with err. */
int sr_agent_gang_setup(struct sr_agent *ag, const char *addr, char *err);
/* A free port for a gang this claim may lead (ag->claim.addr, .port). */
void sr_agent_gang_port(struct sr_agent *ag);
/* Wait for the gang of claimed job j (j->gang) to form: 0 it started (g
 * set up: sr_agent_gang_end), 1 it did not (the slot is released; the
 * caller releases the lease of node 0), -1 a signal (*sig) ended the wait;
 * 2 and 3 as 1, for the machine's notice came meanwhile
 * (sr_agent_watch_check): 2 the agent is on its next machine, 3 it must end
 * as preempted. */
int sr_agent_gang_form(struct sr_agent *ag, struct sr_queue_job *j, struct sr_agent_gang *g,
    int *sig);
/* The run's hooks of node g: h->gang and notice_fd (h->notice is the
 * caller's, calling sr_agent_gang_notice). */
void sr_agent_gang_hooks(struct sr_agent_gang *g, struct sr_run_hooks *h);
/* Another node's notice for the run, once: 1 with n; node 0's checkpoint
 * request: 2 with n->deadline; or 0. */
int sr_agent_gang_notice(struct sr_agent_gang *g, struct sr_notice *n);
/* This machine's own notice came to its run (before or after another
 * node's, passed on): the machine goes; its slot says so. */
void sr_agent_gang_noticed(struct sr_agent_gang *g, double deadline);
/* Node 0's run asked its ranks for a checkpoint by deadline: the others
 * are asked too (slot 0). */
void sr_agent_gang_requested(struct sr_agent_gang *g, double deadline);
/* Whether this node got a notice of its own (its machine goes). */
int sr_agent_gang_own_notice(struct sr_agent_gang *g);
/* From the heartbeat thread every sr_agent_gang_interval() seconds: this
 * node's notice written, the others' slots read. */
void sr_agent_gang_beat(struct sr_agent_gang *g, const char *id);
double sr_agent_gang_interval(void);
/* The run's attempt ended (its job is over, whatever its end): the
 * watch no longer reads the others' slots, so that a node that ended
 * first, its slot released, is not said to be gone. */
void sr_agent_gang_over(struct sr_agent_gang *g);
/* The node's part ends: its slot says notice (its machine's, kept until
 * it expires), done (done: node 0's job ended, or a member's succeeded)
 * or released. */
void sr_agent_gang_end(struct sr_agent_gang *g, int done);

/* agent-gang-lost.c */
/* Node 0 of gang g, whose run of job j failed: 1 when a member's node was
 * lost without a notice (its slot gone, or not renewed within TTL/3 and a
 * margin, waited for up to that long, the lease renewed meanwhile), said
 * in the agent's log: the job goes back to the queue; 0 when every member
 * is alive or ended its part itself (released, done), or for any other
 * node, or when the slots cannot be read: the failure stands. */
int sr_agent_gang_lost(struct sr_agent *ag, struct sr_queue_job *j, const struct sr_agent_gang *g);

/* agent-facts.c */
/* Publish the machine in the queue's agents/ (sr_queue_machine_put) for
 * `spotrun status`: the GPUs it offers, their model, and what is wrong
 * with it, said at the start too as a warning naming what was seen, why
 * and the fix: GPU device nodes with no working driver
 * (ag->found.no_driver). gpus_label: the label gpus's value (NULL: none),
 * which offers GPUs all the same. */
void sr_agent_facts_say(struct sr_agent *ag, const char *gpus_label);
/* The record written again when SR_QUEUE_MACHINE_RENEW (or the lease TTL,
 * when shorter) has passed since it last was (or a write failed), so that status tells a live agent from
 * one killed without a word: from the idle loop, and from a job's
 * heartbeat thread while the agent's own thread waits for the job. */
void sr_agent_facts_renew(struct sr_agent *ag);
/* At the agent's end: its record deleted, the skips said forgotten. */
void sr_agent_facts_end(struct sr_agent *ag);
/* The claim's unfit hook (sr_queue_agent.unfit; arg is the agent): say
 * why pending job p is skipped, once per job and reason. */
void sr_agent_unfit(void *arg, const struct sr_queue_pending *p);

/* agent-scale.c */
/* Start the agent's scaler thread (SPOTRUN_SCALE_INTERVAL 0: none,
 * ag->scale NULL): 0, or -1 with err (a bad setting, the queue, a thread). */
int sr_agent_scale_start(struct sr_agent *ag, char *err);
/* Stop it: after a last step of each pool it scales when drained (the
 * agent ends idle or drained), its leases released. Safe with none. */
void sr_agent_scale_stop(struct sr_agent *ag, int drained);

/* This machine's preemption (its provider's cloud, zone and type) added
 * to the queue's placement history (agent-place.c); a failure said as a
 * warning, nothing else. */
void sr_agent_place_preempted(struct sr_agent *ag);

/* agent-say.c: print "spotrun agent: MESSAGE" on stderr. */
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
