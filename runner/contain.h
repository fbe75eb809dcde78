/*
 * contain.h: no process of a job outlives its supervisor, nor runs on
 * after its lease could have passed to another machine.
 *
 * The supervisor is a subreaper and stops every descendant when a run
 * ends (supervise.h), but a supervisor killed with SIGKILL, or stopped
 * (SIGSTOP, a hang) while its lease runs out, can do nothing: its job's
 * processes would run on beside the next run of the job, wrappers,
 * double forks and setsid() included. So each run has:
 *
 *  - a cgroup (v2) of its own, where this machine gives one (a writable
 *    cgroup2 hierarchy: root, or a delegated subtree), which every process
 *    of the job joins before exec and cannot leave;
 *  - a keeper: a small process of its own (keeper-main.c's program, from
 *    memory; spotrun re-executed as `spotrun __keeper` where that cannot
 *    be), in a session of its own and not a descendant of
 *    the supervisor, that reads a pipe from it. When the pipe ends without
 *    the supervisor's word (it died), or the lease's time runs out with no
 *    renewal heard (it is stopped, or cannot reach the store), the keeper
 *    kills the cgroup (cgroup.kill), or, where there is none, every process
 *    whose environment carries the run's SPOTRUN_CKPT_DIR.
 *
 * The lease's time (sr_contain_lease) is on CLOCK_MONOTONIC, which the two
 * processes share; the keeper acts halfway between the holder's give-up
 * time and the lease's expiry, after the supervisor's own watchdog
 * (lease-keeper.c) would have stopped the job and before another machine
 * can see the lease expired.
 */
#ifndef SR_CONTAIN_H
#define SR_CONTAIN_H

/* The keeper's nice value, where the machine allows one below 0: its kill
 * must not wait behind a loaded machine's runnable processes. */
#define SR_KEEPER_NICE (-10)

struct sr_contain;

/* Contain the run whose job processes carry the environment entry `entry`
 * (SPOTRUN_CKPT_DIR=...): make its cgroup where one can be had and start
 * its keeper. 0 with *out set, or -1 with err when the keeper cannot be
 * started (no cgroup is no error: see sr_contain_how). */
int sr_contain_start(const char *entry, struct sr_contain **out, char *err);
/* The cgroup.procs file the job's processes join before exec
 * (sr_spawn_opts.cgroup_procs), or NULL when the run has no cgroup. */
const char *sr_contain_procs(const struct sr_contain *c);
/* How the run is contained, in words for the timeline: "cgroup PATH" or
 * "processes found by environment (no cgroup: REASON)". */
const char *sr_contain_how(const struct sr_contain *c);
/* The lease is held until the monotonic time until (the holder's give-up
 * time) and expires at expires: the keeper stops the job at the midpoint
 * unless a later word comes. Safe from any thread; never blocks. */
void sr_contain_lease(struct sr_contain *c, double until, double expires);
/* The run ends as it should (its job stopped already): the keeper removes
 * the cgroup and exits. Frees c; NULL is allowed. */
void sr_contain_end(struct sr_contain *c);

/* The keeper's process: `spotrun __keeper FD CGROUP|- ENTRY` (argv[0] is
 * "__keeper"). Returns its exit status. */
int sr_keeper_main(int argc, char **argv);

#endif
