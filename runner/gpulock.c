/*
 * gpulock.c: see gpulock.h.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpulock.h"
#include "util.h"

const char *
sr_gpulock_dir(void)
{
	const char *d = getenv("SPOTRUN_GPU_LOCK_DIR");

	return d != NULL && d[0] != '\0' ? d : SR_GPULOCK_DIR_DEFAULT;
}

/* Whether x names one GPU of the machine: by its UUID, or by the driver's
 * index (NVML, the device nodes). An inherited CUDA_VISIBLE_DEVICES entry
 * whose UUID NVML did not give is that process's view only (a container's
 * or Slurm's numbering starts at 0 in each job): not locked, lest two jobs
 * with different GPUs both named "0" shut each other out. */
static int
lockable(const struct sr_gpus *g, const struct sr_gpu *x)
{
	return x->uuid[0] != '\0' || g->by_index;
}

/* DIR/gpu-KEY: the UUID where known (the same GPU whatever index a run's
 * CUDA_VISIBLE_DEVICES gives it), else its id; a character a file name
 * must not hold ('/' of a MIG id) becomes '_'. */
static char *
lock_path(const char *dir, const struct sr_gpu *x)
{
	char *p = sr_asprintf("%s/gpu-%s", dir, x->uuid[0] != '\0' ? x->uuid : x->id), *s;

	for (s = p + strlen(dir) + 1; *s != '\0'; s++)
		if (strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-", *s) == NULL)
			*s = '_';
	return p;
}

/* The folder, sticky and world-writable when this call made it (every
 * user's runs share it, as /tmp). */
static int
make_dir(const char *dir, char *err)
{
	if (mkdir(dir, 01777) == 0)
		return chmod(dir, 01777) == -1 ? sr_errno(err, "chmod %s", dir) : 0;
	if (errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return sr_errno(err, "create %s", dir);
	if (sr_mkdirs(dir, 01777, err) == -1)
		return -1;
	return chmod(dir, 01777) == -1 ? sr_errno(err, "chmod %s", dir) : 0;
}

/* The lock file of path opened for writing (an OFD write lock needs it),
 * made 0666 when create says so and it is not there: the descriptor, -1
 * with errno ENOENT when absent and not to be made, or -1 with err. Opened
 * without O_CREAT first: in a sticky folder, O_CREAT of another user's file
 * fails under fs.protected_regular. */
static int
open_lock(const char *dir, const char *path, int create, char *err)
{
	int fd, tries;

	for (tries = 0; tries < 3; tries++) {
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd >= 0 || errno != ENOENT)
			break;
		if (!create)
			return -1;
		if (make_dir(dir, err) == -1)
			return -1;
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd >= 0) {
			(void)fchmod(fd, 0666);	/* past the umask: for every user */
			return fd;
		}
		if (errno != EEXIST)
			break;
	}
	if (fd == -1)
		sr_errno(err, "open %s", path);
	return fd;
}

/* The pid written in the lock file of fd, 0 when none (yet). */
static long
holder(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

size_t
sr_gpulock_free(const char *dir, const struct sr_gpus *g)
{
	return sr_gpulock_free_held(dir, g, NULL, 0);
}

/* "6 held by spotrun pid P, 2 by spotrun pid Q" for the holders of pids
 * (n of them, each counted once, in the order first met), into held. */
static void
say_held(const long *pids, size_t n, char *held, size_t len)
{
	size_t i, j, o = 0, k;

	held[0] = '\0';
	for (i = 0; i < n && o < len; i++) {
		for (j = 0; j < i && pids[j] != pids[i]; j++)
			;
		if (j < i)
			continue;	/* counted with its first */
		for (j = i, k = 0; j < n; j++)
			k += pids[j] == pids[i];
		if (pids[i] > 0)
			o += (size_t)snprintf(held + o, len - o, "%s%zu %sby spotrun pid %ld",
			    o > 0 ? ", " : "", k, o > 0 ? "" : "held ", pids[i]);
		else
			o += (size_t)snprintf(held + o, len - o, "%s%zu %sby another run",
			    o > 0 ? ", " : "", k, o > 0 ? "" : "held ");
	}
}

size_t
sr_gpulock_free_held(const char *dir, const struct sr_gpus *g, char *held, size_t len)
{
	char err[SR_ERRMAX], *path;
	size_t i, n = 0, nheld = 0;
	long *pids = sr_calloc(g->n + 1, sizeof *pids);
	int fd;

	for (i = 0; i < g->n; i++) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

		if (!lockable(g, &g->v[i])) {
			n++;
			continue;
		}
		path = lock_path(dir, &g->v[i]);
		fd = open_lock(dir, path, 0, err);
		free(path);
		if (fd == -1 || fcntl(fd, F_OFD_GETLK, &fl) == -1 || fl.l_type == F_UNLCK)
			n++;
		else
			pids[nheld++] = holder(fd);
		if (fd >= 0)
			close(fd);
	}
	if (held != NULL && len > 0)
		say_held(pids, nheld, held, len);
	free(pids);
	return n;
}

void
sr_gpulock_release(struct sr_gpulock *lk)
{
	size_t i;

	for (i = 0; i < lk->n; i++)
		close(lk->fd[i]);
	free(lk->fd);
	lk->fd = NULL;
	lk->n = 0;
}

/* The UUID of x when its id is not that UUID, else "". */
static const char *
other_uuid(const struct sr_gpu *x)
{
	return strcmp(x->uuid, x->id) != 0 ? x->uuid : "";
}

/* Append "ID (pid N)" to busy. */
static void
add_busy(char *busy, size_t len, const struct sr_gpu *x, long pid)
{
	size_t used = strlen(busy);

	if (len > used)
		snprintf(busy + used, len - used, "%s%s (pid %ld)", used > 0 ? ", " : "", x->id, pid);
}

int
sr_gpulock_take(const char *dir, struct sr_gpus *g, size_t min, size_t max, const char *job,
    struct sr_gpulock *lk, char *busy, size_t busylen, char *err)
{
	char said[SR_ERRMAX] = "", *path;
	size_t i, keep = 0, nbusy = 0, total = g->n;	/* keep: GPUs taken */
	int fd;

	memset(lk, 0, sizeof *lk);
	if (busy != NULL && busylen > 0)
		busy[0] = '\0';
	lk->fd = sr_calloc(g->n + 1, sizeof *lk->fd);
	for (i = 0; i < g->n && keep < max; i++) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
		char pid[24];
		long who;

		if (!lockable(g, &g->v[i])) {
			g->v[keep++] = g->v[i];	/* taken, with no lock */
			continue;
		}
		path = lock_path(dir, &g->v[i]);
		if ((fd = open_lock(dir, path, 1, err)) == -1) {
			free(path);
			goto fail;
		}
		if (fcntl(fd, F_OFD_SETLK, &fl) == -1) {
			if (errno != EAGAIN && errno != EACCES) {
				sr_errno(err, "lock %s", path);
				free(path);
				close(fd);
				goto fail;
			}
			who = holder(fd);
			close(fd);
			if (nbusy++ == 0)
				snprintf(said, sizeof said, "GPU %s%s%s%s is in use by %s%.0ld (lock %s)",
				    g->v[i].id, other_uuid(&g->v[i])[0] != '\0' ? " (" : "",
				    other_uuid(&g->v[i]), other_uuid(&g->v[i])[0] != '\0' ? ")" : "",
				    who > 0 ? "spotrun pid " : "another spotrun run", who, path);
			if (busy != NULL)
				add_busy(busy, busylen, &g->v[i], who);
			free(path);
			continue;
		}
		free(path);
		snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
		if (ftruncate(fd, 0) == 0)
			(void)!pwrite(fd, pid, strlen(pid), 0);
		lk->fd[lk->n++] = fd;
		g->v[keep++] = g->v[i];
	}
	g->n = keep;
	if (keep >= min)
		return 0;
	sr_err(err, "job %s needs at least %zu GPU%s; %zu of this machine's %zu %s free: %s", job,
	    min, min == 1 ? "" : "s", total - nbusy, total, total - nbusy == 1 ? "is" : "are", said);
fail:
	sr_gpulock_release(lk);
	return -1;
}
