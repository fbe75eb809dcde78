/*
 * supervise.h: launching and supervising the job's processes, with the
 * signal and exit-status semantics of an init (tini, dumb-init):
 *
 *  - the job runs in a process group of its own, so signals reach all of it;
 *  - spotrun is a child subreaper: orphaned descendants are reparented to it
 *    and reaped, and on exit nothing of the job is left running;
 *  - the exit status is the job's code, 128+N when killed by signal N, 126
 *    when the command exists but cannot be executed, 127 when not found.
 *
 * Signals reach the supervisor's poll loop through a self-pipe: sr_sig_init
 * installs handlers that only write the signal number to it.
 */
#ifndef SR_SUPERVISE_H
#define SR_SUPERVISE_H

#include <stddef.h>
#include <sys/types.h>

struct sr_spawn_opts {
	char *const *argv;	/* argv[0] is looked up in PATH (of envp) */
	char *const *envp;	/* the job's whole environment */
	const char *cwd;	/* NULL: inherit */
	int capture;		/* 1: stdout/stderr through pipes (out_fd, err_fd) */
	int stdin_null;		/* 1: stdin from /dev/null */
	int parent_death_signal; /* non-zero: the leader gets it if spotrun dies */
	/* The cgroup.procs file of the run's cgroup (contain.h), which the
	 * child joins before exec; NULL: none. */
	const char *cgroup_procs;
};

/* The exit code of a child whose parent died before it could exec. */
#define SR_SPAWN_ORPHANED 125

struct sr_child {
	pid_t pid;		/* also the process group id */
	int out_fd;		/* read end of the job's stdout pipe, or -1 */
	int err_fd;		/* read end of the job's stderr pipe, or -1 */
	int exec_errno;		/* non-zero: exec failed with this errno */
};

/* Make this process a child subreaper (Linux); 0 or -1 with err set. */
int sr_subreaper_enable(char *err);

/* Install handlers for SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
 * SIGUSR2, SIGALRM and SIGWINCH writing to a non-blocking self-pipe; *fd is
 * its read end (the same pipe at every call: call again after
 * sr_sig_reset). SIGPIPE is ignored. 0 or -1 with err set. */
int sr_sig_init(int *fd, char *err);
/* Restore default dispositions (in the child before exec, and at exit). */
void sr_sig_reset(void);
/* Read one pending signal number from the pipe: 1 got one, 0 none. */
int sr_sig_next(int fd, int *signo);

/* Start and exec the job in a new process group (vclone.h: it returns
 * once the child has exec'd or failed to). Returns 0 when the child
 * exists (check exec_errno: then the child has already exited 126/127 and
 * must still be reaped), -1 with err set when clone/pipe failed or cwd
 * cannot be entered ("chdir DIR: reason"). The read ends out_fd and err_fd
 * are non-blocking and the caller's to close. A file without #! that is not
 * a binary is not run through /bin/sh as execvp would: ENOEXEC, 126. */
int sr_spawn(const struct sr_spawn_opts *o, struct sr_child *c, char *err);

/* Send signo to the job's whole process group. */
int sr_child_signal(const struct sr_child *c, int signo);

/* Reap every exited child without blocking. Returns 1 and stores the
 * leader's wait status in *status when the leader (c->pid) was among them,
 * else 0. */
int sr_reap(const struct sr_child *c, int *status);
/* The same for n jobs (one per GPU): for each cs[i] reaped now, sets
 * status[i] (the wait status) and reaped[i] = 1 (either may be NULL; other
 * entries are left alone). Returns how many of cs were reaped now.
 * Like an init, both reap every child of this process, not only the jobs:
 * other code must not fork children that it waits for by pid. */
int sr_reap_set(const struct sr_child *cs, size_t n, int *status, int *reaped);

/* Stop whatever is left of the job: SIGTERM to the group and to every
 * process reparented to us, wait up to grace seconds, then SIGKILL; reaps
 * everything. Safe to call after the leader exited. */
void sr_child_stop(const struct sr_child *c, double grace);
/* The same for n jobs, reporting like sr_reap_set the wait status of each
 * job reaped meanwhile (a leader that had not been reaped yet). "Every
 * process reparented to us" means every descendant of this process, found
 * in /proc: children (including other code's), processes that left the
 * job's group with setsid(), and their children. SIGTERM goes once, SIGKILL
 * after grace seconds, repeated for at most 5 s more. Returns 0 when nothing
 * is left, -1 when something survived (uninterruptible sleep). */
int sr_child_stop_set(const struct sr_child *cs, size_t n, double grace,
    int *status, int *reaped);

/* The exit code for a wait status: WEXITSTATUS, or 128+N for signal N. */
int sr_exit_code(int wstatus);
/* The exit code for a failed exec: 127 for ENOENT/ENOTDIR, else 126. */
int sr_exec_code(int exec_errno);

#endif
