/*
 * sigcatch.c: see sigcatch.h. Each process of /proc is read once: its
 * group, state and name from /proc/PID/stat, its handled signals from the
 * SigCgt line of /proc/PID/status. A pidfd taken before the reads pins the
 * process: if it exits while it is read (its pid could then name another
 * process), the pidfd says so and it is skipped, and the signal goes
 * through the pidfd, never to a pid that was reused.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sigcatch.h"
#include "util.h"

/* One process as /proc describes it. */
struct proc_info {
	pid_t pgrp;
	char state;
	char name[32];
	unsigned long long caught;	/* SigCgt: bit N-1 for signal N */
};

/* Read a small /proc file into buf; its length, or -1. */
static ssize_t
read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd == -1)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/* 0, or -1 when the process is gone or its files unreadable. */
static int
read_proc(pid_t pid, struct proc_info *pi)
{
	char path[64], buf[4096], *open_paren, *close_paren, *p;
	int pgrp;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (read_small(path, buf, sizeof buf) <= 0)
		return -1;
	/* "pid (comm) state ppid pgrp ..."; comm may hold spaces and ')'. */
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (open_paren == NULL || close_paren == NULL || close_paren < open_paren ||
	    sscanf(close_paren + 1, " %c %*d %d", &pi->state, &pgrp) != 2)
		return -1;
	pi->pgrp = pgrp;
	snprintf(pi->name, sizeof pi->name, "%.*s", (int)(close_paren - open_paren - 1),
	    open_paren + 1);
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if (read_small(path, buf, sizeof buf) <= 0 || (p = strstr(buf, "\nSigCgt:")) == NULL)
		return -1;
	pi->caught = strtoull(p + 8, NULL, 16);
	return 0;
}

static int
pidfd_open_(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	errno = ENOSYS;
	return -1;
#endif
}

/* Signal the process the pidfd names (or pid, without pidfds). */
static int
send_to(int pidfd, pid_t pid, int sig)
{
#ifdef SYS_pidfd_send_signal
	if (pidfd >= 0)
		return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
#endif
	return kill(pid, sig);
}

/* Has the process the pidfd names exited? (A pidfd is readable then.) */
static int
exited(int pidfd)
{
	struct pollfd pf = { .fd = pidfd, .events = POLLIN };

	return pidfd >= 0 && poll(&pf, 1, 0) == 1;
}

static int
seen_has(const struct sr_sigcatch_seen *seen, pid_t pid)
{
	size_t i;

	for (i = 0; seen != NULL && i < seen->n; i++)
		if (seen->pid[i] == pid)
			return 1;
	return 0;
}

/* Look at one process: signal it if it is of the group, catches sig and
 * was not signalled before (seen). */
static void
visit(pid_t pid, pid_t pgid, int sig, struct sr_sigcatch_seen *seen, struct sr_sigcatch *out)
{
	struct proc_info pi;
	int pidfd;

	if (seen_has(seen, pid))
		return;
	pidfd = pidfd_open_(pid);

	if (pidfd == -1 && errno != ENOSYS)
		return;		/* gone already */
	if (read_proc(pid, &pi) == 0 && pi.pgrp == pgid && pi.state != 'Z' && !exited(pidfd)) {
		if (pi.caught & (1ULL << (sig - 1))) {
			if (send_to(pidfd, pid, sig) == 0) {
				out->sent++;
				out->leader |= pid == pgid;
				if (seen != NULL && seen->n < SR_SIGCATCH_SEEN_MAX)
					seen->pid[seen->n++] = pid;
			}
		} else {
			out->skipped++;
			if (out->skipped_pid == 0 || pid == pgid) {
				out->skipped_pid = pid;
				strlcpy(out->skipped_name, pi.name, sizeof out->skipped_name);
			}
		}
	}
	if (pidfd >= 0)
		close(pidfd);
}

int
sr_sigcatch_send(pid_t pgid, int sig, struct sr_sigcatch_seen *seen, struct sr_sigcatch *out,
    char *err)
{
	struct dirent *de;
	char *end;
	long l;
	DIR *d;

	memset(out, 0, sizeof *out);
	if (pgid <= 1 || pgid == getpgrp() || sig <= 0 || sig > 64)
		return sr_err(err, "signal group %d: no such job", (int)pgid);
	d = opendir("/proc");
	if (d == NULL)
		return sr_errno(err, "read /proc");
	while ((de = readdir(d)) != NULL) {
		l = strtol(de->d_name, &end, 10);
		if (*end == '\0' && l > 1)
			visit((pid_t)l, pgid, sig, seen, out);
	}
	closedir(d);
	return 0;
}
