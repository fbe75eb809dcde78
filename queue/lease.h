/*
 * lease.h: the job lease of doc/fleet.md. One JSON object per job J in the
 * job's checkpoint store, S/_leases/J, written whole with the store's
 * conditional puts: claimed create-only (epoch 1) when absent, or by a
 * compare-and-swap that raises the epoch by one over a lease that is
 * released, queued, or running and expired; renewed, and moved between
 * states, by compare-and-swap. Whoever holds it is the only writer of S/J/;
 * the epoch is the fencing token the checkpoint commits carry.
 *
 * Clocks: no wall clock decides anything. A running lease is expired to
 * an observer once it has seen the object unchanged (the same etag) for
 * longer than the lease's TTL by its own monotonic clock (sr_lease_seen):
 * a live holder renews every TTL / 3, and every write changes the etag.
 * So a claimer whose clock runs minutes fast or slow neither takes a live
 * lease early nor waits past the TTL for a dead one; an observer with no
 * history of a lease (a one-shot claim) must watch it for up to a TTL
 * (sr_lease_claim's watch). The holder gives a lease up by its own
 * monotonic clock, SR_LEASE_GIVEUP before the end of its TTL counted from
 * when it sent its last good write, which every observer saw later. The
 * "claimed", "renewed" and "expires" the holder writes (by its wall clock)
 * are for people (`spotrun status`, sr_lease_describe). A lease whose
 * owner runs on this machine (same host name and boot id) and whose pid is
 * gone is taken over at once.
 *
 * A lease object that is not a valid lease (not JSON, wrong types, an
 * epoch below 1, an unknown state, over SR_LEASE_BYTES_MAX bytes) is never
 * claimed or renewed: every function reports it as SR_LEASE_MALFORMED with a
 * message that names the key and the fix; only sr_lease_requeue with
 * SR_LEASE_FROM_MALFORMED replaces it.
 *
 * The store handle is used from the keeper's thread too: the store must
 * allow calls from two threads at once (every backend does).
 */
#ifndef SR_LEASE_H
#define SR_LEASE_H

#include <stdint.h>

#include "store.h"

/* Return codes (0 is success). */
enum sr_lease_rc {
	SR_LEASE_OK = 0,
	SR_LEASE_ERROR = -1,		/* store I/O or a bad argument: see err */
	SR_LEASE_HELD = -2,		/* claim: running under another owner, not expired */
	SR_LEASE_LOST = -3,		/* renew/set_state: the lease moved on (taken over,
					   deleted, or not renewed in time): stop writing */
	SR_LEASE_MALFORMED = -4,	/* the object is not a valid lease: err names it */
	SR_LEASE_TERMINAL = -5,		/* claim: the job ended (succeeded, failed, cancelled) */
	SR_LEASE_NOTFOUND = -6,		/* read, requeue: no lease object */
	SR_LEASE_STATE = -7		/* requeue: the lease is in a state not asked for */
};

/* The states of a lease; the names in the JSON are the lower-case words. */
enum sr_lease_state {
	SR_LEASE_QUEUED = 0,	/* requeued by a user: claimable */
	SR_LEASE_RUNNING,	/* held until "expires" */
	SR_LEASE_RELEASED,	/* let go by its holder (preempted): claimable */
	SR_LEASE_SUCCEEDED,	/* terminal: claimed again only after sr_lease_requeue */
	SR_LEASE_FAILED,	/* terminal */
	SR_LEASE_CANCELLED	/* terminal */
};
#define SR_LEASE_NSTATES 6

/* Masks of states for sr_lease_requeue: bit (1u << state). */
#define SR_LEASE_BIT(s) (1u << (s))
#define SR_LEASE_TERMINALS (SR_LEASE_BIT(SR_LEASE_SUCCEEDED) | \
	SR_LEASE_BIT(SR_LEASE_FAILED) | SR_LEASE_BIT(SR_LEASE_CANCELLED))
/* With sr_lease_requeue: also replace a malformed lease object. */
#define SR_LEASE_FROM_MALFORMED (1u << 16)

#define SR_LEASE_TTL_DEFAULT 60.0	/* seconds; renewed every TTL / 3 */
#define SR_LEASE_TTL_MIN 1.0
#define SR_LEASE_TTL_MAX 86400.0
#define SR_LEASE_GIVEUP(ttl) ((ttl) / 6)	/* the holder's margin for clock skew */
#define SR_LEASE_WATCHDOG_NICE (-10)	/* the keeper's watchdog thread, where allowed */
#define SR_LEASE_BYTES_MAX 4096		/* a larger object is malformed */
#define SR_LEASE_JOB_MAX 128		/* job names: [A-Za-z0-9][A-Za-z0-9._-]* */

/* Who holds a lease. Strings are NUL-terminated; empty when unknown. */
struct sr_lease_owner {
	char host[256];		/* host name */
	long pid;		/* the holding process */
	char boot_id[40];	/* /proc/sys/kernel/random/boot_id */
	char agent[128];	/* the agent's id ("" for a plain `spotrun run`) */
	char instance[128];	/* cloud instance id */
	char provider[32];	/* aws, gcp, azure, local, ... */
};

/* A lease as read from the store. */
struct sr_lease_info {
	char job[SR_LEASE_JOB_MAX + 1];
	int64_t epoch;			/* >= 1 */
	enum sr_lease_state state;
	struct sr_lease_owner owner;
	double claimed, renewed, expires;	/* wall-clock epoch seconds */
	double ttl;			/* seconds */
	char etag[SR_ETAG_MAX];		/* the object's etag when read */
};

/* How to claim: in, and what was found (out). */
struct sr_lease_claim {
	const struct sr_lease_owner *owner;	/* who claims (sr_lease_owner_local) */
	double ttl;			/* 0: SR_LEASE_TTL_DEFAULT */
	/* What a queue marker saw, to save the GET: hint_etag NULL: no hint
	 * (GET first); "" with hint_epoch 0: there was no lease (create-only
	 * first); else the etag and epoch of a claimable lease (CAS over it
	 * with hint_epoch + 1 at once). A stale hint costs one request more
	 * than none would. */
	const char *hint_etag;
	int64_t hint_epoch;
	/* out */
	int requests;			/* store requests made */
	int found;			/* 1: prev holds the lease as found */
	struct sr_lease_info prev;	/* on HELD/TERMINAL: the holder; on OK: what
					   was taken over (found == 0: it was absent) */
	int took_over;			/* OK: a running lease was taken:
					   SR_LEASE_TOOK_EXPIRED or SR_LEASE_TOOK_GONE */
	/* The claimer's record of the leases it saw (sr_lease_seen_new), kept
	 * from one claim to the next by a long-running claimer (an agent); a
	 * running lease counts as expired once this record has seen it
	 * unchanged past its TTL. NULL: this claim keeps one of its own. */
	struct sr_lease_seen *seen;
	/* 1: a one-shot claimer (`spotrun run`): a running lease held elsewhere
	 * that seen has not watched past its TTL yet, and whose holder's
	 * `expires` has passed by this machine's clock (a live-looking one is
	 * SR_LEASE_HELD at once: refusing runs nothing twice), is watched, re-read every
	 * TTL / 6 (0.1 to 2 s), until it changes (SR_LEASE_HELD: its holder
	 * renews) or has stayed unchanged past its TTL (taken over): the claim
	 * then takes up to the lease's TTL and a re-read. 0: SR_LEASE_HELD at
	 * once. */
	int watch;
};

/* took_over: why a running lease was taken. */
#define SR_LEASE_TOOK_EXPIRED 1	/* seen unchanged for longer than its TTL */
#define SR_LEASE_TOOK_GONE 2	/* its owner on this machine is gone */

struct sr_lease;
struct sr_lease_keeper;
struct sr_lease_seen;

/* An observer's record of leases: per lease (store URL and job) the etag
 * it last saw and the monotonic time it first saw that etag. One per
 * observer (an agent, a claim), used from one thread; never shared. */
struct sr_lease_seen *sr_lease_seen_new(void);
/* Safe on NULL. */
void sr_lease_seen_free(struct sr_lease_seen *s);
/* Note that the lease of job in the store at url has etag at the
 * monotonic time mono: the seconds s has seen that etag unchanged (mono
 * less the time it first noted it), 0 when it is new to s. */
double sr_lease_seen_note(struct sr_lease_seen *s, const char *url, const char *job,
    const char *etag, double mono);
/* Forget the leases last noted before the monotonic time before (ended,
 * deleted, or not looked at since): a later note starts afresh. */
void sr_lease_seen_forget(struct sr_lease_seen *s, double before);
/* How many leases s remembers. */
size_t sr_lease_seen_count(const struct sr_lease_seen *s);

/* Fill o with this process: host name, pid, boot id; agent, instance and
 * provider as given (NULL: ""). 0, or -1 with err (a string too long). */
int sr_lease_owner_local(struct sr_lease_owner *o, const char *agent, const char *instance,
    const char *provider, char *err);

/* Whether job is a valid job name for a lease key (1-128 of letters,
 * digits, '.', '_', '-', starting with a letter or digit): 0, or -1 with
 * err naming it and the rule. */
int sr_lease_job_check(const char *job, char *err);

/* Read job's lease: SR_LEASE_OK, SR_LEASE_NOTFOUND, SR_LEASE_MALFORMED or
 * SR_LEASE_ERROR, with err. */
int sr_lease_read(struct sr_store *st, const char *job, struct sr_lease_info *out, char *err);

/* Claim job's lease for c->owner: SR_LEASE_OK with *out (free with
 * sr_lease_free), state running, epoch one above the one found (1 when
 * there was none); SR_LEASE_HELD or SR_LEASE_TERMINAL with c->prev and a
 * message saying who holds it and until when, or how it ended;
 * SR_LEASE_MALFORMED; SR_LEASE_ERROR. A lost race is retried over what
 * won it, so of many claimers exactly one gets SR_LEASE_OK. A running
 * lease held elsewhere is taken over only once c->seen has seen it
 * unchanged past its TTL (or its owner on this machine is gone); with
 * c->watch the call may sleep that long. */
int sr_lease_claim(struct sr_store *st, const char *job, struct sr_lease_claim *c,
    struct sr_lease **out, char *err);

/* Whether me may claim li, which its observer has seen unchanged for
 * `unchanged` seconds (sr_lease_seen_note): 1 when it is queued or
 * released, or running and unchanged for longer than its TTL, or running
 * under an owner on this machine (same host and boot id) whose pid is
 * gone; else 0. *wait (may be NULL) gets the seconds until a running
 * lease expires so, if it stays unchanged (0 when claimable). No clock
 * is read: the judgement is the observer's. */
int sr_lease_may_claim(const struct sr_lease_info *li, const struct sr_lease_owner *me,
    double unchanged, double *wait);

/* Renew a held running lease (renewed = now, expires = now + ttl) by CAS.
 * SR_LEASE_LOST when the CAS is lost or the object is gone: the lease was
 * taken over, and nothing more may be written for the job. SR_LEASE_ERROR
 * (network) leaves the lease held: retry while it has not expired. */
int sr_lease_renew(struct sr_lease *l, char *err);

/* Move a held lease to state by CAS (running: as a renewal; released,
 * queued, or a terminal state: the lease is let go and no longer held;
 * renew and set_state then fail). SR_LEASE_LOST as for renew. */
int sr_lease_set_state(struct sr_lease *l, enum sr_lease_state state, char *err);

/* Move job's lease, when its state is in the mask states (bits
 * SR_LEASE_BIT; a running lease only when its owner on this machine, as
 * by says, is gone: a one-shot read cannot tell a remote one expired),
 * or when it is
 * malformed and the mask has SR_LEASE_FROM_MALFORMED, back to queued, by
 * CAS, keeping its epoch but never below min_epoch (a malformed lease
 * becomes epoch max(min_epoch, 1)): `spotrun requeue` and `retry`. Pass
 * the epoch the job's checkpoints carry as min_epoch, so the next claim is
 * above it. prev (may be NULL) gets the lease as found; out (may be NULL)
 * the one written. SR_LEASE_STATE when its state is not in the mask
 * (err says which it is), SR_LEASE_HELD for any other running one,
 * SR_LEASE_NOTFOUND, SR_LEASE_MALFORMED, SR_LEASE_ERROR. */
int sr_lease_requeue(struct sr_store *st, const char *job, unsigned states, int64_t min_epoch,
    const struct sr_lease_owner *by, struct sr_lease_info *prev, struct sr_lease_info *out,
    char *err);

/* The lease as last written by its holder (a copy, consistent under the
 * keeper's renewals). */
void sr_lease_get_info(struct sr_lease *l, struct sr_lease_info *out);
/* The epoch of a held lease (the fencing token). */
int64_t sr_lease_epoch(const struct sr_lease *l);
/* Free a lease handle; writes nothing (the lease stays as last written:
 * a running one expires after its TTL). Safe on NULL. */
void sr_lease_free(struct sr_lease *l);

/* "running", "released", ...; and back: 0 with *out, or -1. */
const char *sr_lease_state_name(enum sr_lease_state s);
int sr_lease_state_parse(const char *name, enum sr_lease_state *out);
/* Name of a return code, e.g. "SR_LEASE_LOST". */
const char *sr_lease_rc_name(int rc);
/* Who holds li and until when, by now: "ip-10-0-1-5-4242 (host ip-10-0-1-5,
 * pid 4242, aws i-0abc) until 2025-12-01T03:35:00Z (in 42 s)": the
 * holder's "expires" by its clock, against now by the reader's, for
 * people only. */
const char *sr_lease_describe(const struct sr_lease_info *li, double now, char *buf,
    size_t len);

/* Whether l is held now: ours, running, and its last good write less
 * than its TTL's give-up time ago by the monotonic clock. A holder that
 * was stopped past that may no longer write anything under the lease,
 * even before its renewal tells it that the lease moved on. 1 or 0. */
int sr_lease_fresh(struct sr_lease *l);

/* Keep a held running lease alive from a thread of its own: renew every
 * ttl / 3 by the monotonic clock, sooner again (every second or so) after a
 * failed renewal. When a renewal is lost, or none succeeded and the TTL is
 * within SR_LEASE_GIVEUP of its end, the lease is lost: lost(arg, rc, why)
 * is called once from the keeper's thread (lost may be NULL), the fd
 * becomes readable, and the keeper stops renewing. NULL with err when the
 * thread cannot start. */
struct sr_lease_keeper *sr_lease_keeper_start(struct sr_lease *l,
    void (*lost)(void *arg, int rc, const char *why), void *arg, char *err);
/* Have held(arg, until, expires) called with the monotonic time until
 * which the holder may act (its give-up time) and the one at which the
 * lease expires: at once, and from the keeper's thread after each
 * renewal. For a watcher outside this process (CLOCK_MONOTONIC is the
 * machine's). One watcher; NULL stops it. */
void sr_lease_keeper_watch(struct sr_lease_keeper *k,
    void (*held)(void *arg, double until, double expires), void *arg);
/* A descriptor to poll: readable once the lease is lost. */
int sr_lease_keeper_fd(const struct sr_lease_keeper *k);
/* SR_LEASE_OK while held, else SR_LEASE_LOST with why (SR_ERRMAX, may be
 * NULL). Past the give-up time by the clock it is lost, said as the
 * watchdog would (the lost callback, the fd), even before that thread ran. */
int sr_lease_keeper_status(struct sr_lease_keeper *k, char *why);
/* How many renewals succeeded (for tests and status). */
int sr_lease_keeper_renewals(struct sr_lease_keeper *k);
/* Stop the keeper and free it: returns at once when it is waiting, after
 * the renewal in flight otherwise. Writes nothing. Safe on NULL. */
void sr_lease_keeper_stop(struct sr_lease_keeper *k);

#endif
