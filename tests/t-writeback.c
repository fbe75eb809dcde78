/*
 * t-writeback.c: ckpt/writeback.c, the writeback a restore starts on a
 * thread of its own. A range offered goes to the disk long before the
 * kernel's flusher would take it (dirty_expire_centisecs, 30 s here):
 * cachestat(2) counts the file's dirty pages falling to none, within
 * half that time; the caller's descriptor may close at once; offers
 * beyond the queue's room never block, and stop leaves no descriptor
 * open; the file reads back unchanged.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "util.h"
#include "writeback.h"

#define MiB ((size_t)1 << 20)
#define SYS_CACHESTAT 451	/* the same number on every architecture */
#define TMPFS_MAGIC_NR 0x01021994

struct cs_range {
	uint64_t off, len;
};
struct cs_stat {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

/* Dirty pages of the file at path (all of it), or -1 with errno. */
static long
dirty_pages(const char *path)
{
	struct cs_range r = { 0, 0 };	/* len 0: to the end */
	struct cs_stat cs;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc, e;

	if (fd == -1)
		return -1;
	rc = (int)syscall(SYS_CACHESTAT, fd, &r, &cs, 0);
	e = errno;
	close(fd);
	errno = e;
	return rc == -1 ? -1 : (long)cs.nr_dirty;
}

static int
open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (d == NULL)
		sr_fatal("open /proc/self/fd: %s", strerror(errno));
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1;	/* the directory's own */
}

static uint8_t
byte_at(size_t i)
{
	return (uint8_t)(i * 2654435761u >> 13);
}

/* 8 MiB of the pattern into a new file at path, through the page cache;
 * the descriptor, still open. */
static int
write_file(const char *path)
{
	uint8_t *buf = sr_malloc(8 * MiB);
	size_t i;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd == -1)
		sr_fatal("create %s: %s", path, strerror(errno));
	for (i = 0; i < 8 * MiB; i++)
		buf[i] = byte_at(i);
	if (sr_write_all(fd, buf, 8 * MiB) == -1)
		sr_fatal("write %s: %s", path, strerror(errno));
	free(buf);
	return fd;
}

static int
reads_back(const char *path)
{
	size_t len, i;
	char err[SR_ERRMAX], *text;
	uint8_t *buf;
	int good;

	if (sr_read_file(path, 16 * MiB, &text, &len, err) == -1)
		return 0;
	buf = (uint8_t *)text;
	good = len == 8 * MiB;
	for (i = 0; good && i < len; i++)
		good = buf[i] == byte_at(i);
	free(buf);
	return good;
}

int
main(void)
{
	char dir[] = "tests/t-writeback.XXXXXX", *path, *small;
	struct sr_writeback *wb;
	struct statfs sf;
	long dirty, expire_cs = 3000;
	double until;
	FILE *f;
	int fds, fd, i;

	/* in the build tree, on a disk (a tmpfs has no writeback), where
	 * .gitignore covers what a killed run leaves */
	if (mkdtemp(dir) == NULL)
		sr_fatal("mkdtemp: %s", strerror(errno));
	path = sr_asprintf("%s/big", dir);
	small = sr_asprintf("%s/small", dir);
	if ((f = fopen("/proc/sys/vm/dirty_expire_centisecs", "r")) != NULL) {
		if (fscanf(f, "%ld", &expire_cs) != 1 || expire_cs < 200)
			expire_cs = 3000;
		fclose(f);
	}
	fds = open_fds();

	ok((wb = sr_writeback_start()) != NULL, "a writeback thread started");
	fd = write_file(path);
	dirty = dirty_pages(path);
	if (dirty == -1 && errno == ENOSYS)
		ok(1, "# SKIP the kernel has no cachestat(2) (Linux 6.5): the writeback is not "
		    "observed");
	else if (statfs(dir, &sf) == 0 && (unsigned long)sf.f_type == TMPFS_MAGIC_NR)
		ok(1, "# SKIP %s is a tmpfs: nothing to write back", dir);
	else if (dirty <= 0)
		ok(1, "# SKIP the kernel wrote the file back before it was offered (%ld dirty)",
		    dirty);
	else {
		sr_writeback_offer(wb, fd, 0, 8 * MiB);
		close(fd);
		fd = -1;
		/* half the age at which the flusher would take them */
		until = sr_mono() + expire_cs / 200.0;
		while ((dirty = dirty_pages(path)) > 0 && sr_mono() < until)
			usleep(10000);
		is_int((int)dirty, 0, "%s: the dirty pages offered went to the disk within %.0f s "
		    "(the flusher's age: %.0f s)", path, expire_cs / 200.0, expire_cs / 100.0);
	}
	if (fd != -1)
		close(fd);

	/* far more offers than the queue holds: none waits, and stop closes
	 * every descriptor the queue took */
	fd = write_file(small);
	for (i = 0; i < 500; i++)
		sr_writeback_offer(wb, fd, (uint64_t)(i % 8) * MiB, MiB);
	sr_writeback_offer(wb, fd, 0, 0);
	close(fd);
	sr_writeback_stop(wb);
	is_int(open_fds(), fds, "after stop, no descriptor of the queue's is left open");
	ok(reads_back(path) && reads_back(small), "both files read back unchanged");

	/* NULL: where no thread could be had, the calls do nothing: no
	 * descriptor is taken */
	sr_writeback_offer(NULL, 0, 0, MiB);
	sr_writeback_stop(NULL);
	is_int(open_fds(), fds, "a NULL writeback takes an offer and a stop, and no descriptor");

	unlink(path);
	unlink(small);
	rmdir(dir);
	free(path);
	free(small);
	return tap_done();
}
