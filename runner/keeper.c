/*
 * keeper.c: the keeper of a run (contain.h): a process of its own that
 * stops the job when its supervisor can no longer. It reads words from
 * the supervisor's socket: "L UNTIL EXPIRES" (the lease is held; monotonic
 * seconds) and "E" (the run ended as it should). The end of the socket
 * without "E" means the supervisor died; a lease time passed with no newer
 * word means it is stopped or cut off. Either way every process of the job
 * is killed: its cgroup through cgroup.kill (or each process of
 * cgroup.procs, on kernels before 5.14), else every process carrying the
 * run's environment entry (leftover.c). After a lapsed lease the keeper
 * goes on killing what appears until a word of a renewed lease comes.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "contain.h"
#include "leftover.h"
#include "util.h"

#define KILL_WAIT	5.0	/* seconds to wait for the killed to go */
#define REKILL		0.5	/* seconds between sweeps once the lease lapsed */

/* The pids of cgroup dir's cgroup.procs into pids (at most max); how
 * many, or -1 when it cannot be read. */
static int
cgroup_pids(const char *dir, pid_t *pids, int max)
{
	char path[4200], buf[8192], *s, *end;
	ssize_t n;
	int fd, k = 0;

	snprintf(path, sizeof path, "%s/cgroup.procs", dir);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	for (s = buf; k < max; s = end) {
		long v = strtol(s, &end, 10);

		if (end == s)
			break;
		pids[k++] = (pid_t)v;
	}
	return k;
}

/* Kill every process of the cgroup and wait for it to be empty. Returns
 * how many there were when it began. */
static int
kill_cgroup(const char *dir)
{
	char path[4200];
	pid_t pids[1024];
	double until = sr_mono() + KILL_WAIT;
	int n, first, fd, i, whole = 0;

	first = n = cgroup_pids(dir, pids, (int)SR_ARRAY_LEN(pids));
	if (n <= 0)
		return 0;
	snprintf(path, sizeof path, "%s/cgroup.kill", dir);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) != -1) {
		whole = write(fd, "1", 1) == 1;
		close(fd);
	}
	while (n > 0 && sr_mono() < until) {
		if (!whole)
			for (i = 0; i < n; i++)
				kill(pids[i], SIGKILL);
		sr_sleep(0.02);
		n = cgroup_pids(dir, pids, (int)SR_ARRAY_LEN(pids));
	}
	return first;
}

/* Stop the job: its cgroup, which no process of the job can leave, or
 * without one what carries its entry. */
static void
stop_job(const char *dir, const char *entry, const char *why, int quiet)
{
	char err[SR_ERRMAX];
	int n;

	if (dir != NULL)
		n = kill_cgroup(dir);
	else if ((n = sr_leftover_kill(entry, err)) == -1) {
		fprintf(stderr, "spotrun: keeper: %s\n", err);
		n = 0;
	}
	if (n > 0 || !quiet)
		fprintf(stderr, "spotrun: keeper: %s: killed %d process%s of the job (%s)\n", why, n,
		    n == 1 ? "" : "es", entry);
}

/* The cgroup, emptied and removed (a process just exiting keeps it busy
 * for a moment). */
static void
remove_cgroup(const char *dir, const char *entry)
{
	double until = sr_mono() + KILL_WAIT;

	while (rmdir(dir) == -1 && errno == EBUSY && sr_mono() < until) {
		stop_job(dir, entry, "the run ended with processes left", 1);
		sr_sleep(0.02);
	}
}

int
sr_keeper_main(int argc, char **argv)
{
	const char *dir, *entry;
	double kill_at = -1, until, expires;
	char buf[4096];
	size_t have = 0;
	struct pollfd pf;
	int fd, timeout;
	ssize_t n;

	if (argc != 4) {
		fprintf(stderr, "spotrun: __keeper is spotrun's own (FD CGROUP ENTRY)\n");
		return 64;
	}
	fd = atoi(argv[1]);
	dir = strcmp(argv[2], "-") == 0 ? NULL : argv[2];
	entry = argv[3];
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	/* Ahead of the job on a loaded machine, where that is allowed (root,
	 * CAP_SYS_NICE): its kill must come before the lease's expiry, and it
	 * sleeps but for a word a second. Refused, it runs as it is. */
	(void)setpriority(PRIO_PROCESS, 0, SR_KEEPER_NICE);
	for (;;) {
		double now = sr_mono();

		if (kill_at >= 0 && now >= kill_at) {
			stop_job(dir, entry, "the lease was not renewed in time (its spotrun is "
			    "stopped or cut off)", 1);
			kill_at = now + REKILL;	/* until a renewed lease is heard of */
			continue;
		}
		timeout = kill_at < 0 ? -1 : (int)((kill_at - now) * 1000) + 1;
		pf.fd = fd;
		pf.events = POLLIN;
		if (poll(&pf, 1, timeout) <= 0)
			continue;
		n = read(fd, buf + have, sizeof buf - 1 - have);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			stop_job(dir, entry, "its spotrun ended without a word (killed)", 1);
			break;
		}
		have += (size_t)n;
		buf[have] = '\0';
		for (;;) {
			char *nl = strchr(buf, '\n');

			if (nl == NULL)
				break;
			*nl = '\0';
			if (strcmp(buf, "E") == 0) {
				if (dir != NULL)
					remove_cgroup(dir, entry);
				return 0;
			}
			if (sscanf(buf, "L %lf %lf", &until, &expires) == 2)
				kill_at = until + (expires - until) / 2;
			have -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, have + 1);
		}
		if (have == sizeof buf - 1)
			have = 0;	/* no line is this long: not a word of ours */
	}
	if (dir != NULL)
		remove_cgroup(dir, entry);
	return 0;
}
