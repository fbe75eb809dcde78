/*
 * vclone.h: start a child process that shares this one's memory until it
 * execs or exits, its caller's thread stopped meanwhile: vfork(2)'s
 * semantics through clone(2), on a stack of the child's own, as
 * posix_spawn(3) does inside glibc. For the job's ranks (supervise.c) and
 * the run's keeper (contain.c).
 *
 * Why not fork(2): it copies the supervisor's page tables, which the child
 * throws away at exec, and until then every page either side writes is
 * copied on its first write. On a paravirtualised VM each page-table
 * update is a trip to the hypervisor: a fork of the supervisor took 1-5 ms
 * and its child 3-8 ms more to exec, on every rank of every launch after a
 * notice (doc/benchmarks.md). Why not posix_spawn(3): a rank joins the
 * run's cgroup and sets its parent-death signal before exec, and the
 * keeper's start forks twice; posix_spawn has no such steps.
 */
#ifndef SR_VCLONE_H
#define SR_VCLONE_H

#include <sys/types.h>

/* Run fn(arg) in a new process (its exit signal SIGCHLD) that shares this
 * one's memory, and return once it has exec'd or exited: its pid, or -1
 * with errno set when it could not be started. fn runs on a stack of its
 * own and must end in exec or _exit; it may make only async-signal-safe
 * calls (no malloc, no stdio, no locks) and write no memory but its own
 * stack and what arg points to, which the caller reads once this returns.
 * The caller blocks the signals whose handlers must not run in the child
 * (they would run on this process's memory) and the child unblocks them
 * once it has reset those handlers. */
pid_t sr_vclone(int (*fn)(void *), void *arg);

/* Mark fn so: AddressSanitizer's bookkeeping before a call that does not
 * return (_exit, a failed exec's end) expects the thread's own stack, and
 * on the child's it writes a warning to stderr, which is the job's by
 * then. */
#if defined(__has_attribute)
#if __has_attribute(no_sanitize)
#define SR_VCLONE_CHILD __attribute__((no_sanitize("address")))
#endif
#endif
#ifndef SR_VCLONE_CHILD
#define SR_VCLONE_CHILD
#endif

#endif
