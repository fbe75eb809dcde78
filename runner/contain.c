/*
 * contain.c: see contain.h. The supervisor's side: the run's cgroup, the
 * keeper's start, and the words it is sent ("L UNTIL EXPIRES", "E").
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "contain.h"
#include "keeper-bin.h"
#include "util.h"
#include "vclone.h"

struct sr_contain {
	int fd;			/* our end of the keeper's socket */
	char *dir;		/* the run's cgroup, or NULL */
	char *procs;		/* dir/cgroup.procs, or NULL */
	char how[SR_ERRMAX + 64];
};

/* The mount point of the cgroup2 hierarchy (mountinfo: the field after
 * " - " is the type), and this process's cgroup in it ("0::/path"). 0, or
 * -1 with why. */
static int
own_cgroup(char *mnt, size_t mlen, char *path, size_t plen, char *why)
{
	char line[4096], *sep, *f[5], *save = NULL;
	FILE *fp;
	int i, found = 0;

	if ((fp = fopen("/proc/self/mountinfo", "re")) == NULL)
		return sr_errno(why, "read /proc/self/mountinfo");
	while (!found && fgets(line, sizeof line, fp) != NULL) {
		if ((sep = strstr(line, " - ")) == NULL || strncmp(sep + 3, "cgroup2 ", 8) != 0)
			continue;
		*sep = '\0';
		for (i = 0; i < 5; i++)
			f[i] = strtok_r(i == 0 ? line : NULL, " ", &save);
		if (f[4] != NULL) {
			snprintf(mnt, mlen, "%s", f[4]);
			found = 1;
		}
	}
	fclose(fp);
	if (!found)
		return sr_err(why, "no cgroup2 file system is mounted");
	if ((fp = fopen("/proc/self/cgroup", "re")) == NULL)
		return sr_errno(why, "read /proc/self/cgroup");
	found = 0;
	while (!found && fgets(line, sizeof line, fp) != NULL) {
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(path, plen, "%s", strcmp(line + 3, "/") == 0 ? "" : line + 3);
			found = 1;
		}
	}
	fclose(fp);
	return found ? 0 : sr_err(why, "this process is in no cgroup2 group");
}

/* The run's cgroup, beside nothing: a child of this process's own. */
static void
make_cgroup(struct sr_contain *c)
{
	char mnt[1024], path[2048], why[SR_ERRMAX];
	struct timespec ts;
	int fd;

	if (own_cgroup(mnt, sizeof mnt, path, sizeof path, why) == -1)
		goto none;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	c->dir = sr_asprintf("%s%s/spotrun-%ld-%lx%06lx", mnt, path, (long)getpid(),
	    (unsigned long)ts.tv_sec, (unsigned long)(ts.tv_nsec / 1000));
	if (mkdir(c->dir, 0755) == -1) {
		sr_errno(why, "mkdir %s", c->dir);
		goto none;
	}
	c->procs = sr_asprintf("%s/cgroup.procs", c->dir);
	if ((fd = open(c->procs, O_WRONLY | O_CLOEXEC)) == -1) {
		sr_errno(why, "open %s", c->procs);
		rmdir(c->dir);
		goto none;
	}
	close(fd);
	snprintf(c->how, sizeof c->how, "cgroup %s", c->dir);
	return;
none:
	free(c->dir);
	free(c->procs);
	c->dir = c->procs = NULL;
	snprintf(c->how, sizeof c->how, "processes found by environment (no cgroup: %s)", why);
}

/* What the keeper's two starts need (vclone.h: they share our memory). */
struct keeper_args {
	char **argv;
	int fd;			/* the keeper's end of the socket */
	int image;		/* the keeper's program to exec (keeper_image), or -1 */
	sigset_t mask;		/* the caller's signal mask, the keeper's */
};

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U	/* Linux 6.3: executable, whatever vm.memfd_noexec says */
#endif

/* The keeper's own program (keeper-bin.h) in a memory file, sealed and
 * opened again read-only (exec refuses a file open for writing), or -1
 * where this machine makes no such file (vm.memfd_noexec=2 among others):
 * spotrun itself is exec'd then, the same keeper at ~13 ms more CPU. */
static int
keeper_image(void)
{
	char path[64];
	size_t off = 0;
	ssize_t n;
	int fd, ro;

	fd = memfd_create("spotrun-keeper", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
	if (fd == -1 && errno == EINVAL)	/* a kernel before 6.3 */
		fd = memfd_create("spotrun-keeper", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd == -1)
		return -1;
	while (off < sr_keeper_bin_size) {
		n = write(fd, sr_keeper_bin + off, sr_keeper_bin_size - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	(void)fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	close(fd);
	return ro;
}

/* The keeper itself: a session of its own, the socket kept across exec;
 * its own program where there is one, else spotrun's. */
SR_VCLONE_CHILD static int
keeper_exec(void *arg)
{
	const struct keeper_args *k = arg;

	setsid();
	if (fcntl(k->fd, F_SETFD, 0) == -1)
		_exit(1);
	/* Nothing can signal it by now but its pid, which no one has yet. */
	sigprocmask(SIG_SETMASK, &k->mask, NULL);
	if (k->image != -1)
		fexecve(k->image, k->argv, environ);
	execv("/proc/self/exe", k->argv);
	_exit(127);
}

/* Between us and the keeper: it exits once the keeper has exec'd, so
 * that the keeper is reparented away. */
SR_VCLONE_CHILD static int
keeper_parent(void *arg)
{
	_exit(sr_vclone(keeper_exec, arg) == -1 ? 1 : 0);
}

/* Start the keeper, reparented away from us: a subreaper's grandchild
 * would stay its descendant, and the supervisor takes every descendant
 * for the job's (supervise.c), so the subreaper bit is off for the start.
 * Both starts are vclone's (vclone.h), which wait for the exec: this
 * returns with the keeper exec'd, its loading of spotrun left to it. */
static int
start_keeper(struct sr_contain *c, const char *entry, char *err)
{
	char fdarg[16];
	char *argv[] = { "spotrun", "__keeper", fdarg, c->dir != NULL ? c->dir : "-",
		(char *)entry, NULL };
	struct keeper_args k;
	int p[2], st, reaper = 0;
	sigset_t all;
	pid_t pid, got;

	/* a socket: a word sent to a keeper that is gone is EPIPE, never
	 * SIGPIPE (MSG_NOSIGNAL), whatever the caller does with the signal */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) == -1)
		return sr_errno(err, "start the run's keeper: socketpair");
	snprintf(fdarg, sizeof fdarg, "%d", p[0]);
	k.argv = argv;
	k.fd = p[0];
	k.image = keeper_image();
	/* no handler of ours may run in the two children (vclone.h) */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &k.mask);
	(void)prctl(PR_GET_CHILD_SUBREAPER, &reaper, 0, 0, 0);
	if (reaper)
		(void)prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
	pid = sr_vclone(keeper_parent, &k);
	got = pid > 0 ? waitpid(pid, &st, 0) : -1;
	if (reaper)
		(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	pthread_sigmask(SIG_SETMASK, &k.mask, NULL);
	close(p[0]);
	if (k.image != -1)
		close(k.image);
	if (pid == -1 || got != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		close(p[1]);
		return sr_errno(err, "start the run's keeper: clone");
	}
	c->fd = p[1];
	return 0;
}

int
sr_contain_start(const char *entry, struct sr_contain **out, char *err)
{
	struct sr_contain *c = sr_calloc(1, sizeof *c);

	*out = NULL;
	c->fd = -1;
	make_cgroup(c);
	if (start_keeper(c, entry, err) == -1) {
		if (c->dir != NULL)
			rmdir(c->dir);
		free(c->dir);
		free(c->procs);
		free(c);
		return -1;
	}
	*out = c;
	return 0;
}

const char *
sr_contain_procs(const struct sr_contain *c)
{
	return c != NULL ? c->procs : NULL;
}

const char *
sr_contain_how(const struct sr_contain *c)
{
	return c->how;
}

/* One word to the keeper, a line in one send; a keeper that is gone
 * (EPIPE) or slow (EAGAIN) misses it, and the next word says the same
 * again, so nothing waits. */
static void
tell(struct sr_contain *c, const char *line)
{
	if (c != NULL && c->fd != -1 &&
	    send(c->fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT) == -1) {
		/* nothing to do: see above */
	}
}

void
sr_contain_lease(struct sr_contain *c, double until, double expires)
{
	char line[96];

	snprintf(line, sizeof line, "L %.6f %.6f\n", until, expires);
	tell(c, line);
}

void
sr_contain_end(struct sr_contain *c)
{
	if (c == NULL)
		return;
	tell(c, "E\n");
	if (c->fd != -1)
		close(c->fd);
	free(c->dir);
	free(c->procs);
	free(c);
}
