/*
 * supervise.c: the process layer of the supervisor, with the semantics of an
 * init such as tini or dumb-init. The job runs in a process group of its own
 * (its leader's pid is the group id) so that one kill() reaches all of it;
 * spotrun is a child subreaper, so whatever the job leaves behind is
 * reparented to spotrun, reaped here, and killed when the job is stopped.
 *
 * The job does not get the controlling terminal's job control: its group is
 * never made the terminal's foreground group, so a Ctrl-C reaches spotrun
 * (foreground) and spotrun forwards it to the job's group. A job that reads
 * the terminal from a background group gets SIGTTIN; jobs should not.
 *
 * Signals reach the poll loop of the caller through a self-pipe: the handlers
 * only write the signal number to it (one byte each).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "supervise.h"
#include "util.h"
#include "vclone.h"

/* How long sr_child_stop keeps sending SIGKILL and reaping before it gives
 * up on processes that do not die (uninterruptible sleep). */
#define SUP_KILL_WAIT	5.0
/* The polling period of sr_child_stop's waits. */
#define SUP_POLL	0.02
/* glibc's search path when the environment has no PATH (execvp(3)). */
#define SUP_DEFPATH	"/bin:/usr/bin"

/* The signals the supervisor handles; SIGPIPE is ignored instead. */
static const int sup_signals[] = {
	SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGWINCH
};

/* The self-pipe, written by the handlers (signal state, hence global). */
static int sup_sig_rfd = -1;
static int sup_sig_wfd = -1;

int
sr_subreaper_enable(char *err)
{
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == -1)
		return sr_errno(err, "enable child subreaper");
	return 0;
}

static void
sup_handler(int signo)
{
	int saved = errno;
	unsigned char b = (unsigned char)signo;

	/* A full pipe drops the byte: SIGCHLD is level-like (sr_reap reaps
	 * everything) and hundreds of pending signals add nothing. */
	if (sup_sig_wfd != -1)
		(void)!write(sup_sig_wfd, &b, 1);
	errno = saved;
}

int
sr_sig_init(int *fd, char *err)
{
	struct sigaction sa;
	int p[2];
	size_t i;

	/* The pipe is made once; the handlers are installed at every call,
	 * since sr_sig_reset takes them away (an agent runs jobs one after
	 * another in one process). */
	if (sup_sig_rfd == -1) {
		if (pipe2(p, O_NONBLOCK | O_CLOEXEC) == -1)
			return sr_errno(err, "create signal pipe");
		sup_sig_rfd = p[0];
		sup_sig_wfd = p[1];
	}

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = sup_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < SR_ARRAY_LEN(sup_signals); i++) {
		if (sigaction(sup_signals[i], &sa, NULL) == -1)
			return sr_errno(err, "install handler for %s",
			    strsignal(sup_signals[i]));
	}
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGPIPE, &sa, NULL) == -1)
		return sr_errno(err, "ignore SIGPIPE");
	*fd = sup_sig_rfd;
	return 0;
}

void
sr_sig_reset(void)
{
	struct sigaction sa;
	sigset_t set;
	size_t i;

	/* Only async-signal-safe calls: this runs in the child before exec. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&set);
	for (i = 0; i < SR_ARRAY_LEN(sup_signals); i++) {
		sigaction(sup_signals[i], &sa, NULL);
		sigaddset(&set, sup_signals[i]);
	}
	/* An ignored SIGPIPE would survive exec and turn "write to a closed
	 * pipe" from a death into EPIPE in the job. */
	sigaction(SIGPIPE, &sa, NULL);
	sigaddset(&set, SIGPIPE);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

int
sr_sig_next(int fd, int *signo)
{
	unsigned char b;
	ssize_t n;

	do
		n = read(fd, &b, 1);
	while (n == -1 && errno == EINTR);
	if (n != 1)
		return 0;
	*signo = b;
	return 1;
}

int
sr_exit_code(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 255;	/* stopped/continued: not reported without WUNTRACED */
}

int
sr_exec_code(int exec_errno)
{
	if (exec_errno == ENOENT || exec_errno == ENOTDIR)
		return 127;
	return 126;
}

/* Move fd to a number above 2 (keeping O_CLOEXEC), so that the child's
 * dup2 onto 0, 1 and 2 can never overwrite one of its own sources. That
 * happens when spotrun itself was started with 0, 1 or 2 closed. */
static int
sup_fd_high(int fd)
{
	int nfd;

	if (fd > 2)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return nfd;
}

static void
sup_close(int *fd)
{
	if (*fd != -1) {
		close(*fd);
		*fd = -1;
	}
}

/* The list of paths to try for argv[0], built before the child starts (no
 * allocation in it): argv[0] itself when it has a slash, else each directory of
 * the job's PATH (not spotrun's), an empty element meaning the job's cwd. */
static char **
sup_candidates(const char *name, char *const *envp)
{
	const char *path = SUP_DEFPATH, *p, *end;
	char **v;
	size_t n = 0, i;

	if (strchr(name, '/') != NULL || *name == '\0') {
		v = sr_calloc(2, sizeof *v);
		v[0] = sr_strdup(name);
		return v;
	}
	for (i = 0; envp != NULL && envp[i] != NULL; i++) {
		if (strncmp(envp[i], "PATH=", 5) == 0) {
			path = envp[i] + 5;
			break;
		}
	}
	for (n = 1, p = path; *p != '\0'; p++)
		n += (*p == ':');
	v = sr_calloc(n + 1, sizeof *v);
	n = 0;
	for (p = path; p != NULL; p = (*end == ':') ? end + 1 : NULL) {
		end = strchrnul(p, ':');
		if (end == p)
			v[n++] = sr_strdup(name);
		else
			v[n++] = sr_asprintf("%.*s/%s", (int)(end - p), p, name);
	}
	return v;
}

static void
sup_free_candidates(char **v)
{
	size_t i;

	for (i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/* What the child needs, from sr_spawn's frame (vclone.h: the child shares
 * our memory and reads it before exec). */
struct sup_args {
	const struct sr_spawn_opts *o;
	char **cand;
	int errw, outw, errpw, nullfd, cwdfd;
	pid_t parent;
};

/* The child between its start and exec (vclone.h): async-signal-safe
 * calls only, writing nothing of ours. Never returns. */
SR_VCLONE_CHILD static int
sup_child(void *arg)
{
	const struct sup_args *a = arg;
	const struct sr_spawn_opts *o = a->o;
	char **cand = a->cand;
	int errw = a->errw, outw = a->outw, errpw = a->errpw, nullfd = a->nullfd;
	int cwdfd = a->cwdfd;
	pid_t parent = a->parent;
	sigset_t none;
	int e = 0, eacces = 0;
	size_t i;

	setpgid(0, 0);
	/* Into the run's cgroup (contain.h) before anything of the job runs,
	 * so that all it ever starts is in it too. A cgroup that takes no
	 * process leaves the job to the keeper's search by environment. */
	if (o->cgroup_procs != NULL) {
		int fd = open(o->cgroup_procs, O_WRONLY | O_CLOEXEC);

		if (fd != -1) {
			if (write(fd, "0", 1) == -1) {
				/* see above */
			}
			close(fd);
		}
	}
	/* If spotrun is killed outright the job must not run on unsupervised,
	 * writing into a checkpoint directory the next run restores into. The
	 * next run also kills what is left of the group (see run.c). */
	if (o->parent_death_signal != 0 &&
	    (prctl(PR_SET_PDEATHSIG, o->parent_death_signal, 0, 0, 0) == -1 || getppid() != parent))
		_exit(SR_SPAWN_ORPHANED);
	sr_sig_reset();
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	if ((nullfd != -1 && dup2(nullfd, 0) == -1) ||
	    (outw != -1 && dup2(outw, 1) == -1) ||
	    (errpw != -1 && dup2(errpw, 2) == -1) ||
	    (cwdfd != -1 && fchdir(cwdfd) == -1)) {
		e = errno;
		goto fail;
	}
	/* The search of execvp(3): EACCES is remembered and the search goes
	 * on; "not there" goes on; anything else stops it. Unlike execvp, a
	 * file without a known format (ENOEXEC) is not run with /bin/sh: the
	 * job then fails with 126, as the job file should say "sh x". */
	for (i = 0; cand[i] != NULL; i++) {
		if (cand[i][0] == '\0') {
			e = ENOENT;
			break;
		}
		execve(cand[i], o->argv, o->envp);
		e = errno;
		if (e == EACCES)
			eacces = 1;
		else if (e != ENOENT && e != ENOTDIR && e != ESTALE &&
		    e != ENODEV && e != ETIMEDOUT)
			break;
	}
	if (eacces && (e == ENOENT || e == ENOTDIR || e == ESTALE ||
	    e == ENODEV || e == ETIMEDOUT || e == EACCES))
		e = EACCES;
fail:
	(void)!write(errw, &e, sizeof e);
	_exit(sr_exec_code(e));
}

int
sr_spawn(const struct sr_spawn_opts *o, struct sr_child *c, char *err)
{
	int ep[2] = { -1, -1 }, op[2] = { -1, -1 }, xp[2] = { -1, -1 };
	int nullfd = -1, cwdfd = -1, e = 0, saved;
	sigset_t all, old;
	struct sup_args args;
	char **cand = NULL;
	ssize_t n;
	pid_t pid;

	c->pid = -1;
	c->out_fd = c->err_fd = -1;
	c->exec_errno = 0;
	if (o->argv == NULL || o->argv[0] == NULL)
		return sr_err(err, "start job: empty command");

	/* Open what can fail for a reason worth a message in the parent. */
	if (o->cwd != NULL) {
		cwdfd = open(o->cwd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cwdfd == -1 || (cwdfd = sup_fd_high(cwdfd)) == -1) {
			sr_errno(err, "chdir %s", o->cwd);
			goto fail;
		}
	}
	if (o->stdin_null) {
		nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (nullfd == -1 || (nullfd = sup_fd_high(nullfd)) == -1) {
			sr_errno(err, "open /dev/null");
			goto fail;
		}
	}
	if (pipe2(xp, O_CLOEXEC) == -1) {
		sr_errno(err, "create exec status pipe");
		goto fail;
	}
	if (o->capture && (pipe2(op, O_CLOEXEC) == -1 ||
	    pipe2(ep, O_CLOEXEC) == -1)) {
		sr_errno(err, "create output pipe");
		goto fail;
	}
	xp[0] = sup_fd_high(xp[0]);
	xp[1] = sup_fd_high(xp[1]);
	if (o->capture) {
		op[0] = sup_fd_high(op[0]);
		op[1] = sup_fd_high(op[1]);
		ep[0] = sup_fd_high(ep[0]);
		ep[1] = sup_fd_high(ep[1]);
	}
	if (xp[0] == -1 || xp[1] == -1 || (o->capture && (op[0] == -1 ||
	    op[1] == -1 || ep[0] == -1 || ep[1] == -1))) {
		sr_errno(err, "create pipe");
		goto fail;
	}
	cand = sup_candidates(o->argv[0], o->envp);

	/* Block every signal across the child's start: it must not run
	 * spotrun's handlers (they would write to spotrun's self-pipe, on our
	 * memory: vclone.h) before it has reset them; what arrives meanwhile
	 * stays pending for the job. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	args.o = o;
	args.cand = cand;
	args.errw = xp[1];
	args.outw = op[1];
	args.errpw = ep[1];
	args.nullfd = nullfd;
	args.cwdfd = cwdfd;
	args.parent = getpid();
	pid = sr_vclone(sup_child, &args);
	saved = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid == -1) {
		errno = saved;
		sr_errno(err, "start job: clone");
		goto fail;
	}
	/* Both sides set the group, so that a signal sent to it right after
	 * we return cannot miss the child (the race tini and dumb-init note).
	 * EACCES here means the child has already exec'd: fine. */
	setpgid(pid, pid);

	sup_close(&xp[1]);
	sup_close(&op[1]);
	sup_close(&ep[1]);
	do
		n = read(xp[0], &e, sizeof e);
	while (n == -1 && errno == EINTR);
	sup_close(&xp[0]);

	c->pid = pid;
	c->exec_errno = (n == (ssize_t)sizeof e) ? e : 0;
	if (o->capture) {
		/* Non-blocking read ends for the poll loop; the write ends in
		 * the job stay blocking (a full pipe makes it wait). */
		fcntl(op[0], F_SETFL, fcntl(op[0], F_GETFL) | O_NONBLOCK);
		fcntl(ep[0], F_SETFL, fcntl(ep[0], F_GETFL) | O_NONBLOCK);
		c->out_fd = op[0];
		c->err_fd = ep[0];
	}
	sup_free_candidates(cand);
	sup_close(&nullfd);
	sup_close(&cwdfd);
	return 0;

fail:
	if (cand != NULL)
		sup_free_candidates(cand);
	sup_close(&xp[0]);
	sup_close(&xp[1]);
	sup_close(&op[0]);
	sup_close(&op[1]);
	sup_close(&ep[0]);
	sup_close(&ep[1]);
	sup_close(&nullfd);
	sup_close(&cwdfd);
	return -1;
}

/* Is pgid a group we may signal as a whole? Never spotrun's own group, and
 * never 0 or 1 (kill(0) or kill(-1) would hit spotrun or everything). */
static int
sup_group_ok(pid_t pgid)
{
	return pgid > 1 && pgid != getpgrp();
}

int
sr_child_signal(const struct sr_child *c, int signo)
{
	if (!sup_group_ok(c->pid)) {
		errno = ESRCH;
		return -1;
	}
	return kill(-c->pid, signo);
}

int
sr_reap_set(const struct sr_child *cs, size_t n, int *status, int *reaped)
{
	int st, found = 0;
	size_t i;
	pid_t pid;

	for (;;) {
		pid = waitpid(-1, &st, WNOHANG);
		if (pid == -1 && errno == EINTR)
			continue;
		if (pid <= 0)
			return found;
		for (i = 0; i < n; i++) {
			if (cs[i].pid != pid)
				continue;
			if (status != NULL)
				status[i] = st;
			if (reaped != NULL)
				reaped[i] = 1;
			found++;
		}
	}
}

int
sr_reap(const struct sr_child *c, int *status)
{
	int st, done = 0;

	sr_reap_set(c, 1, &st, &done);
	if (done)
		*status = st;
	return done;
}

/* One process of the table read from /proc. */
struct sup_proc {
	pid_t pid;
	pid_t ppid;
	unsigned long long start;	/* start time, tells reused pids apart */
	int mark;
};

/* Read pid's ppid and start time from /proc/PID/stat; 0 or -1. */
static int
sup_stat(pid_t pid, pid_t *ppid, unsigned long long *start)
{
	char path[64], buf[1024], *p;
	unsigned long long st = 0;
	ssize_t n;
	int fd, field, pp;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "pid (comm) state ppid pgrp ..."; comm may hold spaces and ')'. */
	p = strrchr(buf, ')');
	if (p == NULL || sscanf(p + 1, " %*c %d", &pp) != 1)
		return -1;
	/* Field 22 is the start time; fields 3.. follow the ')'. */
	for (field = 2; field < 22 && p != NULL; field++)
		p = strchr(p + 1, ' ');
	if (p == NULL || sscanf(p, " %llu", &st) != 1)
		return -1;
	*ppid = pp;
	*start = st;
	return 0;
}

/* Every descendant of this process, from a snapshot of /proc. A process
 * that called setsid() and so left the job's group is still found here,
 * through its parent chain or, once orphaned, as our child (subreaper). */
static struct sup_proc *
sup_descendants(size_t *np)
{
	struct sup_proc *v = NULL;
	size_t n = 0, cap = 0, i, k;
	struct dirent *de;
	pid_t self = getpid(), pid;
	int changed;
	DIR *d;
	char *end;
	long l;

	*np = 0;
	d = opendir("/proc");
	if (d == NULL)
		return NULL;
	while ((de = readdir(d)) != NULL) {
		l = strtol(de->d_name, &end, 10);
		if (*end != '\0' || l <= 1 || l == self)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			v = sr_reallocarray(v, cap, sizeof *v);
		}
		pid = (pid_t)l;
		if (sup_stat(pid, &v[n].ppid, &v[n].start) == -1)
			continue;
		v[n].pid = pid;
		v[n].mark = (v[n].ppid == self);
		n++;
	}
	closedir(d);
	do {
		changed = 0;
		for (i = 0; i < n; i++) {
			if (!v[i].mark)
				continue;
			for (k = 0; k < n; k++) {
				if (!v[k].mark && v[k].ppid == v[i].pid) {
					v[k].mark = 1;
					changed = 1;
				}
			}
		}
	} while (changed);
	for (i = k = 0; i < n; i++) {
		if (v[i].mark)
			v[k++] = v[i];
	}
	*np = k;
	return v;
}

/* Signal one descendant of the snapshot, checking through a pidfd that the
 * pid still names the same process (a grandchild's pid can be reused once
 * its own parent reaped it; a child's cannot until we reap it). */
static void
sup_kill_one(const struct sup_proc *p, int signo)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_send_signal)
	unsigned long long start;
	pid_t ppid;
	int fd;

	fd = (int)syscall(SYS_pidfd_open, p->pid, 0);
	if (fd >= 0) {
		if (sup_stat(p->pid, &ppid, &start) == 0 && start == p->start)
			syscall(SYS_pidfd_send_signal, fd, signo, NULL, 0);
		close(fd);
		return;
	}
	if (errno != ENOSYS)
		return;		/* gone already */
#endif
	kill(p->pid, signo);
}

/* signo to the groups of cs and to every descendant of ours. */
static void
sup_kill_all(const struct sr_child *cs, size_t n, int signo)
{
	struct sup_proc *v;
	size_t i, np;

	for (i = 0; i < n; i++) {
		if (sup_group_ok(cs[i].pid))
			kill(-cs[i].pid, signo);
	}
	v = sup_descendants(&np);
	for (i = 0; i < np; i++)
		sup_kill_one(&v[i], signo);
	free(v);
}

/* Is anything of the job left? A child of ours (alive or zombie), or a
 * member of one of the groups (without the subreaper, orphans of the job
 * are not our children but keep their group). Reaps what has exited. */
static int
sup_left(const struct sr_child *cs, size_t n, int *status, int *reaped)
{
	siginfo_t si;
	size_t i;

	sr_reap_set(cs, n, status, reaped);
	memset(&si, 0, sizeof si);
	if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0)
		return 1;	/* children exist (si.si_pid 0: running) */
	for (i = 0; i < n; i++) {
		if (sup_group_ok(cs[i].pid) && kill(-cs[i].pid, 0) == 0)
			return 1;
	}
	return 0;
}

static void
sup_nap(double s)
{
	struct timespec ts;

	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);	/* a signal cuts it short: fine, we poll */
}

int
sr_child_stop_set(const struct sr_child *cs, size_t n, double grace,
    int *status, int *reaped)
{
	double deadline;
	int left;

	/* SIGTERM once, to what exists now: processes started afterwards (a
	 * trap's cleanup command) are the job's shutdown, not its work. */
	if (!sup_left(cs, n, status, reaped))
		return 0;
	sup_kill_all(cs, n, SIGTERM);
	deadline = sr_mono() + grace;
	while ((left = sup_left(cs, n, status, reaped)) && sr_mono() < deadline)
		sup_nap(SUP_POLL);
	if (!left)
		return 0;

	/* SIGKILL, again and again: killing a process reparents its children
	 * to us, and a fork may race with the snapshot. Bounded, because a
	 * process in uninterruptible sleep ignores even SIGKILL. */
	deadline = sr_mono() + SUP_KILL_WAIT;
	do {
		sup_kill_all(cs, n, SIGKILL);
		sup_nap(SUP_POLL);
	} while ((left = sup_left(cs, n, status, reaped)) && sr_mono() < deadline);
	return left ? -1 : 0;
}

void
sr_child_stop(const struct sr_child *c, double grace)
{
	sr_child_stop_set(c, c != NULL ? 1 : 0, grace, NULL, NULL);
}
