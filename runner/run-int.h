/*
 * run-int.h: what the parts of the supervisor share: the state of a run
 * and of its current attempt, and the functions between the files. Not for
 * use outside them. The files, each calling only those below it:
 *
 *   run.c            the run: attempts, restarts, the outcome
 *   run-setup.c      before and after: lock, logs, GPUs (and their
 *                    locks), store, provider,
 *                    the checkpoint method
 *   attempt.c        one attempt: launch, the poll loop, signals, output
 *   attempt-ranks.c  its processes, one per rank: spawn, reap, the first
 *                    to fail stopping the others
 *   attempt-ckpt.c   the checkpoints of an attempt: restore, requests,
 *                    notices, the end of a save (policy; the mechanism is
 *                    the method's, method.h)
 *   attempt-intr.c   a signal from the user: passed on, or held while a
 *                    save runs (a second abandons it); the last line's words
 *   attempt-signal.c the signals sent to the job, and what its death by
 *                    one means (spotrun's request signal; one from outside
 *                    before a notice's checkpoint)
 *   attempt-record.c the attempt's record in the store, and the work lost
 *   run-lease.c      the job's lease: claimed (or handed in), kept, lost,
 *                    ended; the fencing epoch of the run's writes
 *   finished.c       the FINISHED marker of a job that ended with exit 0
 */
#ifndef SR_RUN_INT_H
#define SR_RUN_INT_H

#include <stdint.h>
#include <time.h>

#include "ckpt.h"
#include "contain.h"
#include "gpulock.h"
#include "joblog.h"
#include "lease.h"
#include "jobspec.h"
#include "method.h"
#include "metrics.h"
#include "provider.h"
#include "ranks.h"
#include "record.h"
#include "run.h"
#include "supervise.h"
#include "timeline.h"

/* What became of the save that ran when the user's signal came. */
enum sr_intr_save {
	SR_INTR_NONE,			/* none ran */
	SR_INTR_COMMITTED,		/* it was committed first */
	SR_INTR_ABANDONED,		/* a second signal cancelled it */
	SR_INTR_FAILED			/* it failed, or was late */
};

struct run {
	struct sr_jobspec *js;
	struct sr_store *st;
	struct sr_provider *prov;
	struct sr_method *method;
	struct sr_timeline tl;
	struct sr_term *term;		/* stderr, shared with a progress line */
	int sigfd;
	int lockfd;
	struct sr_contain *contain;	/* its processes kept from outliving it */
	struct sr_container *container;	/* [job] image's runtime; NULL: no image */
	char *ckpt_dir, *log_dir;
	char *python_dir;		/* appended to the jobs' PYTHONPATH; NULL: none */
	struct sr_ckpt_opts copts;	/* the job's, with the log to the timeline */
	/* Counters over the whole run, for the final line. */
	int attempt, preemptions, restarts, checkpoints, missed;
	int vm;				/* machine number: grows with preemptions only */
	struct sr_gpus gpus_found;	/* this machine's GPUs (gpus.h), those the run
					 * holds once locked */
	struct sr_gpulock gpulock;	/* their locks, held to the run's end */
	struct sr_ranks ranks;		/* the job's processes on it (ranks.h) */
	int master_port;		/* this attempt's MASTER_PORT */
	char run_id[40];		/* names this run's attempt records */
	time_t named_at;		/* the second of its log folder and its id */
	int name_seq;			/* 1, or N > 1: the Nth run of this process
					 * in that second, ".N" after both names */
	double lost;			/* seconds of work lost: done by an attempt
					 * (this run's, or a vanished one before it)
					 * after its last committed state, and done
					 * again (attempt-record.c) */
	uint64_t req_seq;
	int interrupted;		/* signal from the user: no restarts */
	enum sr_intr_save intr_save;
	int last_save_rc;		/* how the last save ended (sr_ckpt_result.rc) */
	long long newest_seq, newest_step;	/* the newest checkpoint: restored or
					 * committed in this run; -1 none, unknown */
	const struct sr_run_hooks *hooks;	/* never NULL (all empty when not given) */
	double used;			/* seconds of the attempts that ended */
	int cancelled;			/* a cancel request came: no restarts */
	/* The job's lease (run-lease.c). */
	struct sr_lease *lease;
	struct sr_lease_keeper *keeper;
	int lease_own;			/* claimed by the run (else handed in) */
	int lease_lost;			/* lost: stop the job, write nothing more */
	int64_t epoch;			/* the lease's: the fencing token */
	struct sr_lease_info lease_prev;	/* what the claim found ... */
	int lease_found;		/* ... if it found one */
	char lease_why[SR_ERRMAX];	/* why it was lost */
	/* The record as it is to read once the running save commits, written
	 * by the method's thread (attempt-record.c); armed by the loop before
	 * the save starts, read back by it after the save ended. */
	struct sr_record_note {
		int armed;
		struct sr_store *st;
		const char *job;
		struct sr_attempt_record rec;
		char err[SR_ERRMAX];	/* a failed write, for the loop to say */
	} note;
	/* A preempted attempt's record with its end, written once the next
	 * machine's job has started (sr_run_record_flush). */
	struct sr_attempt_record rec_later;
	int rec_later_due;
};

/* How an attempt ended. */
enum sr_attempt_end {
	SR_ATTEMPT_EXITED,		/* the job exited (a->status) */
	SR_ATTEMPT_PREEMPTED,		/* a notice came: the machine goes */
	SR_ATTEMPT_EXEC_FAILED,		/* the command could not be executed */
	SR_ATTEMPT_ERROR		/* spotrun could not go on (err) */
};

/* One rank of an attempt: a process group of its own, whose leader's pid
 * is the group's id (why a group each: doc/design.md, "Ranks"). */
struct rank {
	struct sr_joblog *log;		/* its output (attempt-N.rank-R.log); with
					 * one rank, the attempt's log */
	int done, status;		/* its leader was reaped, with this status */
	double done_at;			/* mono */
	int out_open, err_open;
	int req_signal;			/* the request signal its leader got, 0 none */
	char *error_file;		/* TORCHELASTIC_ERROR_FILE */
	struct run *run;		/* for its log's sink (hooks->log) */
	int index;
};

struct attempt {
	int nranks;			/* processes spotrun started (r->ranks.n) */
	struct sr_child *child;		/* nranks, for the process layer */
	struct rank *rank;		/* nranks */
	struct sr_joblog *log;		/* the attempt's: the timeline (and the output
					 * of a job of one process) */
	double started;			/* epoch */
	double ended;			/* epoch: when the job ended (or the attempt) */
	char *metrics_path;		/* rank 0's SPOTRUN_METRICS; NULL: none */
	struct sr_metrics_ship *metrics;	/* its lines to the store (metrics.h) */
	int ndone;			/* ranks reaped so far */
	/* The job ended: every rank was reaped. Its status as a whole is
	 * that of the first rank that failed (status_rank), or 0 (-1: every
	 * rank exited 0; with one process, its own status). */
	int job_done, status, status_rank;
	double job_done_at;		/* mono */
	int exec_errno;			/* SR_ATTEMPT_EXEC_FAILED: why */
	/* what spotrun sent the job (attempt-signal.c) */
	uint64_t sent;			/* bit N-1: signal N, to stop it or from the user */
	uint64_t status_sent;		/* what sent held when the job's status was
					 * taken: a stop of the other ranks after a
					 * death from outside must not count */
	/* the pending request */
	int req_pending;
	enum sr_ckpt_reason req_reason;
	double req_deadline;		/* epoch; the job must answer by then */
	double req_posted;		/* epoch; when it was asked */
	/* the running save */
	int saving;			/* between the method's save and saved */
	enum sr_ckpt_reason save_reason;
	double save_state_at;		/* epoch: when the job's state was complete */
	/* the notice */
	int noticed;
	struct sr_notice notice;
	/* this machine's own notice (its provider's, or SIGTERM), which in a
	 * gang may follow another node's that stops the attempt already: its
	 * deadline, for the caller (the machine goes) */
	int machine_noticed;
	double machine_deadline;
	double ckpt_deadline;		/* epoch: notice deadline minus margin */
	int emergency_pending;		/* request once the running save ends */
	int undeclared_at_notice;	/* the method's starting was -1 then */
	int notice_saved;		/* the notice's checkpoint went to the store */
	/* a signal from the user while a save runs (attempt-intr.c) */
	int held_sig;			/* for the job once the save ends; 0 none */
	int abandoning;			/* a second one cancelled the save */
	/* stopping the job */
	int stopping;
	double stop_at;			/* mono: when stopping began */
	int rank_stop;			/* because a rank failed: the job ended itself */
	/* A rank killed from outside: the others are stopped at this time
	 * (mono; 0 none) unless a notice comes first (Slurm's SIGTERM reaches
	 * spotrun too, maybe a little later than the rank). */
	double rank_stop_at;
	char rank_stop_why[128];
	double kill_at;			/* mono */
	double last_state_at;		/* epoch of the newest committed state, 0 = none */
	double next_periodic;		/* mono; 0 = off */
	/* for the attempt's record in the store */
	struct sr_attempt_record rec;
	int checkpoints_before;		/* r->checkpoints when it started */
	/* a cancel's final checkpoint: stop the job once it is answered */
	int final_ckpt;
	/* The job's last checkpoint (its done marker said "last"): the save
	 * running is one (save_last); one committed (last_committed), so
	 * only the job's end is left: a notice asks for no other and lets
	 * it end on its own until the machine goes away. */
	int save_last, last_committed;
};

/* run-setup.c: everything the attempts need (0), or -1 with res's outcome
 * and err set; sr_run_teardown undoes what setup did, also after a failure. */
int sr_run_setup(struct run *r, struct sr_run_result *res);
void sr_run_teardown(struct run *r);

/* run-lease.c */
/* Claim the job's lease for this run (or take the one handed in), say so,
 * and keep it renewed: 0, or -1 with res's outcome (LEASE_HELD, a store
 * error) and err. */
int sr_run_lease_take(struct run *r, struct sr_run_result *res);
/* The keeper's descriptor (readable once the lease is lost), or -1. */
int sr_run_lease_fd(const struct run *r);
/* Whether the lease is still held: 0 held; 1 lost, which is said on the
 * timeline once; the caller then stops what runs (sr_run_give_up). why:
 * the caller's reason for knowing it is lost (NULL: ask the keeper). */
int sr_run_lease_gone(struct run *r, const char *why);
/* The job finished: its lease, the run's own or handed in, is set
 * succeeded now, before the FINISHED marker is written, so that a run
 * killed between the two leaves a job no one runs again (a run that took
 * it over from a FINISHED marker would start it afresh). 0 set; -1 when
 * it could not be (a warning; write no marker), -2 when the lease is lost,
 * 1 for a gang's other node (no lease: node 0 ends it and writes the marker).
 * alone: the job ended on its own, not stopped by this run; then a lease
 * past the holder's give-up time is still set succeeded when no other run
 * took it (the store's compare-and-swap decides), so a job whose end met
 * a late renewal is not run again. */
int sr_run_lease_finish(struct run *r, int alone);
/* The run's end: its lease moves to the state of res (when the run
 * claimed it and still holds it) and its keeper stops. */
void sr_run_lease_end(struct run *r, struct sr_run_result *res);

/* attempt.c: run attempt r->attempt to its end; err set for
 * SR_ATTEMPT_ERROR and SR_ATTEMPT_EXEC_FAILED. a->log, the attempt's log
 * (NULL if it could not be opened), gets the timeline until the caller
 * closes it, after what follows the attempt. */
enum sr_attempt_end sr_run_attempt(struct run *r, struct attempt *a, char *err);

/* attempt-ranks.c */
/* The timer of a rank killed from outside (now: sr_mono()): stop the
 * others when no notice came in time. */
void sr_run_ranks_timer(struct run *r, struct attempt *a, double now);
/* The attempt's ranks (r->ranks.n): the arrays and each rank's log; 0 or
 * -1 with err. sr_run_ranks_free releases them (and the ranks' logs, not
 * a->log), also after a failure. */
int sr_run_ranks_init(struct run *r, struct attempt *a, char *err);
void sr_run_ranks_free(struct attempt *a);
/* Spawn every rank with its environment (the method's launch l): 0, or -1
 * with *end and err, nothing left running. */
int sr_run_ranks_spawn(struct run *r, struct attempt *a, const struct sr_launch *l,
    long long step, int prev_world, enum sr_attempt_end *end, char *err);
/* SIGCHLD: reap every child; a rank that fails first gives the job its
 * status and, while others run, stops them. */
void sr_run_ranks_reap(struct run *r, struct attempt *a);
/* Stop whatever is left of the job (every rank's group and every
 * descendant; SIGKILL after grace seconds), recording the ranks reaped. */
void sr_run_ranks_stop(struct run *r, struct attempt *a, double grace);

/* attempt-ckpt.c */
/* Restore the job's world before the launch, saying so on the timeline;
 * *step: the restored step, -1 for a fresh start; *world: the ranks that
 * wrote it, 0 none or not known. 0 or -1 with err. */
int sr_run_restore(struct run *r, long long *step, int *world, char *err);
/* Ask the job for a periodic checkpoint by deadline (its interval's, or
 * node 0's of its gang), unless a request, a save, a notice or the job's
 * end is under way. */
void sr_run_request_periodic(struct run *r, struct attempt *a, double deadline);
/* A notice came: machine, this machine's own (its provider's, SIGTERM);
 * else another node's of the gang, passed on. */
void sr_run_notice(struct run *r, struct attempt *a, const struct sr_notice *n, int machine);
/* The pending request: its answer, or its deadline passing. */
void sr_run_check_request(struct run *r, struct attempt *a);
/* The periodic timer (now: sr_mono()): ask for one when it is due. */
void sr_run_periodic(struct run *r, struct attempt *a, double now);
/* The method's fd was readable. */
void sr_run_method_news(struct run *r, struct attempt *a);
/* The saves the job reported itself and the loop has not said yet (also
 * at the attempt's end, for a commit made just before the job exited). */
void sr_run_job_saves(struct run *r, struct attempt *a);
/* Begin stopping the job (SIGTERM, SIGKILL at a->kill_at), saying why;
 * the grace period is 10 s, or what is left of a notice's. */
void sr_run_begin_stop(struct run *r, struct attempt *a, const char *why);
/* The same with grace seconds, at most what is left of a notice's. */
void sr_run_begin_stop_grace(struct run *r, struct attempt *a, const char *why, double grace);
/* The lease is lost: no more requests, give up the running save, stop
 * the job. */
void sr_run_give_up(struct run *r, struct attempt *a);
/* A cancel request (hooks->stop): stop the job, after a final checkpoint
 * if asked. */
void sr_run_cancel(struct run *r, struct attempt *a, int checkpoint);
/* Tell hooks->progress of ev, with a (NULL: between attempts). */
void sr_run_tell(struct run *r, const struct attempt *a, enum sr_run_event ev);

/* attempt-intr.c */
/* A signal from the user (sig): no restarts; to the job now, or held
 * while a save runs, a second one abandoning the save. */
void sr_run_user_signal(struct run *r, struct attempt *a, int sig);
/* The save ended (or none runs): pass on the held signal. */
void sr_run_user_release(struct run *r, struct attempt *a);
/* The last line's words for an interrupted run: the signal, what became of
 * the save it came during, the newest checkpoint. */
const char *sr_run_interrupt_what(const struct run *r, char *buf, size_t len);

/* attempt-signal.c */
/* Send sig to the process group of each rank still running, and remember
 * it was spotrun's. */
void sr_run_signal_job(struct attempt *a, int sig);
/* The job ended (a->status) and the attempt ends: say why, when it was
 * killed by spotrun's request signal or ended before the notice's
 * checkpoint, and with several ranks how each one ended. */
void sr_run_job_ended(struct run *r, struct attempt *a);
/* 1 when the job (the rank whose status is the job's) was killed by a
 * signal someone sends (TERM, INT, HUP, ...) that spotrun did not send. */
int sr_run_killed_outside(const struct attempt *a);
/* The same for rank i alone, once reaped (while the others may run on). */
int sr_run_rank_killed_outside(const struct attempt *a, int i);
/* How a rank ended, for the timeline: "exit 1", "SIGSEGV", "SIGTERM from
 * spotrun", into buf. */
const char *sr_run_rank_end(const struct attempt *a, int i, char *buf, size_t len);
/* How long the attempt waits, after such a death, for the notice that the
 * same sender may have sent spotrun. */
#define SR_OUTSIDE_NOTICE_WAIT	0.3

/* Whether an attempt preempted now is followed by a next machine in this
 * process (the local provider's, not a user's signal, not an agent's run
 * of one machine): what the old machine leaves may then run beside it. */
static inline int
sr_run_next_here(const struct run *r)
{
	return !r->interrupted && !r->hooks->one_vm && sr_provider_next_vm(r->prov);
}

/* attempt-record.c: the record, written as the attempt starts and
 * rewritten as it ends; a failure is a warning, never the job's end. */
void sr_run_record_start(struct run *r, struct attempt *a, long long step);
/* later: a next machine follows in this run; the record is written after
 * its job started (sr_run_record_start flushes it first), off the path
 * from the stop to the next start, as a cloud's old machine writes it
 * beside the new one's start. */
void sr_run_record_end(struct run *r, struct attempt *a, const char *outcome, int code,
    int later);
/* Write the record sr_run_record_end left for later, if any (the next
 * start, the run's last line). */
void sr_run_record_flush(struct run *r);
/* Before a save starts: arm the record's rewrite on commit (not for a
 * notice's save, whose stop must not wait for it: the record's end follows
 * at once). After it ended: say what the rewrite could not write. The
 * method's on_commit hook, with the attempt's note as its arg. */
void sr_run_record_arm(struct run *r, struct attempt *a, int armed);
void sr_run_record_disarm(struct run *r, struct attempt *a);
void sr_run_record_on_commit(void *arg, const struct sr_ckpt_stats *stats);
/* Work lost: attempt a ended (a->ended) and the next attempt, here or in
 * a later run, starts again from the newest committed state: its time
 * since then (or since its start) is added to r->lost and to its record,
 * which sr_run_record_end writes (or this, when the record has its end
 * already). Called once per attempt, by the caller that knows the work
 * will be done again (a preemption; a restart, once its backoff is over). */
void sr_run_count_lost(struct run *r, struct attempt *a);
/* The first attempt of a run that took over a running lease (its holder
 * killed, its machine gone, or stopped past its TTL): the holder's last
 * attempt left a record without an end, and its work from the restored
 * checkpoint's commit (created; 0: none restored) to its last sign of
 * life, the lease's last renewal, is lost. Added to r->lost once: the
 * record is rewritten with that end, outcome "vanished" and its lost
 * seconds, so no later run counts it again. */
void sr_run_count_vanished(struct run *r, double created);

/* finished.c */
/* Mark the job finished with the newest checkpoint it has now. */
void sr_run_mark_finished(struct run *r);
/* 1 if it finished with the newest checkpoint it has now (*seq: that
 * checkpoint, -1 none), else 0. */
int sr_run_finished_before(struct run *r, long long *seq);

#endif
