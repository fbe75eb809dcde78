/*
 * method.h: a way of taking checkpoints ([checkpoint] mode) behind one table
 * of operations, so that the attempt loop (attempt.c, attempt-ckpt.c) holds
 * the policy (when to ask, by when, what a notice does, when to stop the
 * job) and knows no method, and a method holds the mechanism and knows no
 * policy. Adding one is a new file filling struct sr_method_ops and one line
 * in method.c's table; the loop does not change.
 *
 * One checkpoint goes through the table in this order, one at a time:
 *
 *   request     ask the job for its state, by a deadline
 *   state       polled until the job's state is complete
 *   clear       the request is over (answered, or given up)
 *   save        take the state to the store, without blocking the loop
 *   cancel      (the user's second ^C, a lost lease) abandon the running save
 *   fd, saved   the save ended: committed, late, cancelled or failed
 *   committed   what follows a commit
 *
 * and around the attempt: restore before the launch, launch for what the
 * job's processes need, stop when the attempt ends, discard when the run
 * ends for good, free at the end of the run. The modes fill it like this:
 *
 * - directory (method-dir.c): restore unpacks the newest checkpoint into
 *   SPOTRUN_CKPT_DIR; launch adds the marker files' paths (a done marker
 *   for each rank) and the signal's name; request writes the one request
 *   file and signals the processes of each rank that catch the signal
 *   (sigcatch.c), never one it would kill; state sees every rank's done
 *   marker, at one step; save packs and commits the directory on a thread
 *   whose end makes fd readable; discard removes the directory and the
 *   markers' folder.
 * - library (method-lib.c: a job linking libspotrun saves its registered
 *   buffers itself): restore only learns the newest checkpoint (the library
 *   reads its buffers from the store); launch adds the store, the request
 *   file, the done marker, the epoch and keep; request writes the request
 *   file (the library polls it, no signal); state reads the done marker the
 *   library writes after its commit, with the commit's stats; save starts
 *   nothing, it only reports that commit through fd and saved.
 * - transparent (to come: cuda-checkpoint and CRIU snapshot the whole,
 *   unmodified process): restore fetches the snapshot, and launch puts the
 *   restorer in the command's place; request freezes the job (it gets the
 *   job's processes for that) and dumps it on a thread; state says when the
 *   dump is on disk; save uploads it like a directory; committed drops the
 *   local copy.
 */
#ifndef SR_METHOD_H
#define SR_METHOD_H

#include <stdint.h>

#include "ckpt.h"
#include "jobspec.h"
#include "supervise.h"
#include "term.h"
#include "timeline.h"
#include "util.h"

/* Why a checkpoint is asked for. */
enum sr_ckpt_reason {
	SR_REASON_PERIODIC,	/* interval elapsed */
	SR_REASON_NOTICE,	/* a preemption notice: due by its deadline minus margin */
	SR_REASON_EARLY		/* an early warning (rebalance, migrate): the job goes on */
};

/* "periodic", "notice", "early": the word the timeline shows and the
 * request file carries (doc/spotrun.1, CHECKPOINT PROTOCOL). */
const char *sr_ckpt_reason_name(enum sr_ckpt_reason reason);

/* A checkpoint asked of the job. */
struct sr_ckpt_request {
	uint64_t seq;			/* numbers the run's requests, from 1 */
	enum sr_ckpt_reason reason;
	double deadline;		/* epoch: the job must answer by then */
};

/* How a save ended. */
struct sr_ckpt_result {
	int rc;				/* 0 committed (stats filled), SR_CKPT_LATE,
					 * SR_CKPT_CANCELLED, or -1 (err) */
	struct sr_ckpt_stats stats;
	char err[SR_ERRMAX];
};

/* What the launch of the job takes from the method. */
struct sr_launch {
	char *const *argv;		/* comes as the job's command (js->argv); a
					 * method may put its own in its place */
	int nprocs;			/* comes as the processes to start (ranks.h) */
	char **env;			/* the method's variables for every process,
					 * KEY=VALUE, NULL-terminated, malloc'd (freed
					 * with sr_jobenv_free); NULL: none */
	char ***proc_env;		/* nprocs lists of the variables of each
					 * process alone, like env (each freed with
					 * sr_jobenv_free, then the array); NULL: none */
};

/* What a method works with: the run's, borrowed for the method's life. */
struct sr_method_ctx {
	const struct sr_jobspec *js;
	struct sr_store *st;
	struct sr_timeline *tl;		/* for what the method has to say */
	struct sr_term *term;		/* where a progress line goes (term.h) */
	const struct sr_ckpt_opts *copts;	/* the job's checkpoint settings */
	const char *ckpt_dir;		/* SPOTRUN_CKPT_DIR: the job's own files */
	/* Called on the method's own thread (never the supervisor's loop)
	 * right after each commit and before the method reports the save
	 * (saved): for store writes that must follow a commit without
	 * holding the loop, such as the attempt's record (a machine that dies
	 * after a commit then still shows it). NULL: none. */
	void (*on_commit)(void *arg, const struct sr_ckpt_stats *stats);
	void *on_commit_arg;
	/* The run's node of a gang (run.h; nodes < 2: one machine): a save
	 * is then a part, or node 0's commit of the parts (gang-ckpt.h). */
	const struct sr_run_gang *gang;
};

struct sr_method;

/* Every operation but those marked NULL-able is required. Those returning
 * int return 0 or -1 with err ("verb object: reason") unless said. */
struct sr_method_ops {
	const char *name;		/* the mode's word: "directory" */
	/* Set up m->priv (once per run, after the store and the provider);
	 * a failure ends the run as a system error. */
	int (*init)(struct sr_method *m, char *err);
	/* Release m->priv; a save still running is cancelled and joined. */
	void (*free)(struct sr_method *m);

	/* Before each attempt: make the job's world ready and, unless fresh
	 * (the job finished before: start afresh), bring the newest committed
	 * checkpoint into it. 0 restored (*cs filled: at least seq and step),
	 * SR_CKPT_NONE (nothing to restore, or fresh), -1. The caller says
	 * so on the timeline. */
	int (*restore)(struct sr_method *m, int fresh, struct sr_ckpt_stats *cs, char *err);
	/* 1: restore only names the checkpoint; the job reads its data itself
	 * (library mode), so the timeline has no time or rate of its. */
	int job_reads;
	/* Just before the job is spawned: what its launch needs from the
	 * method (l comes with argv set and env NULL). */
	void (*launch)(struct sr_method *m, struct sr_launch *l);

	/* Ask the job (its processes: job, njob of them, one per rank, each
	 * the leader of its process group) for a checkpoint. The caller says
	 * so on the timeline and keeps the deadline. signalled[i]: the signal
	 * job[i].pid was sent, 0 none, so that its death by it can be
	 * explained. */
	int (*request)(struct sr_method *m, const struct sr_child *job, size_t njob,
	    const struct sr_ckpt_request *rq, int *signalled, char *err);
	/* Whether the job's state for the pending request is complete:
	 * 1 (*step: the step it holds, -1 unknown; *last: 1 when the job
	 * says it is its last checkpoint, only its end follows), 0 not yet, or -1 when it
	 * is complete but unusable (the ranks answered at different steps):
	 * the request is over and nothing is saved; the method said why on
	 * the timeline. Called on every wake of the loop while a request is
	 * pending, and at least every state_poll seconds. A bad answer of one
	 * process is a warning the method shows, and counts as its answer. */
	int (*state)(struct sr_method *m, long long *step, int *last);
	double state_poll;		/* 0: when fd is readable is enough */
	/* NULL-able. After state: the signal job[i] (as request's) was sent
	 * since request returned, 0 none: a process that began to catch the
	 * signal later, or a rank asked again, was signalled by state, so
	 * that its death by it is explained as request's signalled[i] is. */
	int (*late_signal)(struct sr_method *m, size_t i);
	/* The pending request is over (answered, or given up), or none may
	 * linger (before the launch, at the attempt's end). */
	void (*clear)(struct sr_method *m);
	/* Take the complete state (step) to the store and commit it, by
	 * deadline (epoch; 0 none), without blocking the loop: the end is
	 * reported through fd and saved. */
	int (*save)(struct sr_method *m, long long step, double deadline, char *err);
	/* Readable when the method has news for the loop (a save ended);
	 * -1: nothing to watch. Polled all through the attempt. */
	int (*fd)(const struct sr_method *m);
	/* fd was readable: 1 a save ended (*res filled), 0 nothing for the
	 * loop (news the method keeps for state). */
	int (*saved)(struct sr_method *m, struct sr_ckpt_result *res);
	/* NULL-able. fd was readable: 1 the job reported a save of its own
	 * (library mode: one it made unasked, or one that answered a request
	 * a newer one replaced, rc 0 with the stats and, for the latter, err
	 * saying so for the timeline, else empty; or any save of its that
	 * failed, rc -1 with err, stats.seq the request it answered, 0 none),
	 * 0 no more. Called until 0, after each state and when the attempt
	 * ends. */
	int (*job_saved)(struct sr_method *m, struct sr_ckpt_result *res);
	/* NULL-able. Abandon the running save (the user asked twice, or the
	 * run's lease is lost): it ends soon, through fd and saved as ever,
	 * as SR_CKPT_CANCELLED, having committed nothing (or committed, if it
	 * was done by then). */
	void (*cancel)(struct sr_method *m);
	/* NULL-able. A save committed (res->stats), after the loop counted
	 * it and before the provider is told the machine may go. */
	void (*committed)(struct sr_method *m, const struct sr_ckpt_result *res);
	/* NULL-able. 1 when the job is still starting: every process that
	 * answers said it marks its first look at a request (it created its
	 * SPOTRUN_CKPT_LOOK empty; the Python module does at import) and none
	 * has looked since the launch, so none has ended a step; 0 when one
	 * has looked; -1 when it cannot tell (a process has not said it marks:
	 * it marks nothing, or has not come so far). */
	int (*starting)(struct sr_method *m);
	/* NULL-able. Who has not answered the pending request yet, for the
	 * message when its deadline passes ("ranks 2 and 3 of 4"), into buf;
	 * "" when the method cannot tell. */
	const char *(*waiting)(struct sr_method *m, char *buf, size_t len);
	/* NULL-able. The save's outcome is in the timeline (its "ckpt" line):
	 * say what the save did after it (the retention that followed a
	 * commit), so that the timeline reads in the order things happened. */
	void (*reported)(struct sr_method *m);
	/* NULL-able. The attempt ended: its job is stopped and no save runs;
	 * let go of what belonged to this attempt. background: a next machine
	 * follows in this run, so what is left to do may run beside its
	 * restore and start (settle ends it). */
	void (*stop)(struct sr_method *m, int background);
	/* NULL-able. Wait for what stop left running and say what it did
	 * (the run's end, the next attempt's); free calls it too. */
	void (*settle)(struct sr_method *m);
	/* NULL-able. The run is over for good (the job finished, or failed
	 * and is not restarted; no attempt follows): remove what the method
	 * keeps on this machine for the job (a copy of its state, its
	 * control files), which no later run uses, since each restores from
	 * the store. The run's logs and lock are not the method's. */
	int (*discard)(struct sr_method *m, char *err);
};

struct sr_method {
	const struct sr_method_ops *ops;
	struct sr_method_ctx ctx;
	void *priv;			/* the implementation's state */
};

/* The methods (method-NAME.c). */
extern const struct sr_method_ops sr_method_dir_ops;
extern const struct sr_method_ops sr_method_lib_ops;

/* The methods' names, in table order (directory first, the job file's
 * default), for the job file's parser (sr_jobspec_load's names). */
void sr_method_names(struct sr_jobspec_names *names);
/* Make the method named mode (a job file's [checkpoint] mode) for ctx
 * (copied; what it points to must live as long as the method); 0, or -1
 * with err when no method has that name (the job file refuses those) or
 * its init failed. */
int sr_method_new(const char *mode, const struct sr_method_ctx *ctx,
    struct sr_method **out, char *err);
/* NULL is allowed. */
void sr_method_free(struct sr_method *m);

#endif
