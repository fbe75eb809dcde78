/*
 * t-bgwrite.c: store/bgwrite.c's background syncs. With sync_every, a
 * thread of the writer's own fdatasyncs the file as the writes pass each
 * sync_every bytes (one or more syncs, however the threads meet; never
 * more than one a crossing), without one nothing is synced and no second
 * thread runs; the file reads back as written; a sync that fails (on
 * /dev/null, which takes writes and refuses fdatasync with EINVAL) is
 * told by stop, whose errno it returns; stop leaves no thread behind.
 * (That the syncs stop once a write stalls, as on a disk another writer
 * shares, is not made to happen here: bench/ckpt.sh measures it.)
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store-int.h"
#include "tap.h"
#include "util.h"

#define MiB ((size_t)1 << 20)
#define PIECES 8
#define WAIT_SECONDS 60.0	/* a hang guard for a loaded machine, not a timing */

/* This process's threads. */
static int
threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	if (d == NULL)
		sr_fatal("open /proc/self/task: %s", strerror(errno));
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };

	nanosleep(&ts, NULL);
}

/* PIECES writes of 1 MiB through b (piece i filled with byte 'a' + i),
 * reaped in order: the number that failed. */
static int
write_pieces(struct sr_bgwrite *b, uint8_t *bufs[PIECES])
{
	void *buf;
	size_t len;
	uint64_t off;
	int i, failed = 0;

	for (i = 0; i < PIECES; i++) {
		if (sr_bgwrite_pending(b, 0) == SR_BGWRITE_DEPTH)
			failed += sr_bgwrite_reap(b, &buf, &len, &off) == -1;
		memset(bufs[i], 'a' + i, MiB);
		failed += sr_bgwrite_put(b, bufs[i], MiB, (uint64_t)i * MiB) == -1;
	}
	while (sr_bgwrite_pending(b, 0) > 0)
		failed += sr_bgwrite_reap(b, &buf, &len, &off) == -1;
	return failed;
}

/* Wait for b's background syncs to reach want (bounded). */
static unsigned
syncs_reach(struct sr_bgwrite *b, unsigned want)
{
	double until = sr_mono() + WAIT_SECONDS;

	while (sr_bgwrite_syncs(b) < want && sr_mono() < until)
		sleep_ms(10);
	return sr_bgwrite_syncs(b);
}

static int
reads_back(const char *path)
{
	uint8_t *got = sr_malloc(MiB);
	int fd = open(path, O_RDONLY), i, good = fd != -1;

	for (i = 0; good && i < PIECES; i++) {
		size_t k;

		good = pread(fd, got, MiB, (off_t)i * MiB) == (ssize_t)MiB;
		for (k = 0; good && k < MiB; k++)
			good = got[k] == 'a' + i;
	}
	if (fd != -1)
		close(fd);
	free(got);
	return good;
}

int
main(void)
{
	char dir[] = "tests/t-bgwrite.XXXXXX", *path;
	uint8_t *bufs[PIECES];
	struct sr_bgwrite *b;
	int base, fd, i;
	unsigned n;

	if (mkdtemp(dir) == NULL)
		sr_fatal("mkdtemp: %s", strerror(errno));
	path = sr_asprintf("%s/f", dir);
	for (i = 0; i < PIECES; i++)
		bufs[i] = sr_malloc(MiB);
	base = threads();

	/* a sync every 1 MiB: 8 crossings, the first asked for before any
	 * write could look stalled (a loaded machine's: no more syncs) */
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) == -1)
		sr_fatal("create %s: %s", path, strerror(errno));
	ok((b = sr_bgwrite_start(fd, MiB)) != NULL, "a writer with a syncer started");
	is_int(threads() - base, 2, "... two threads of its own: the writer and the syncer");
	is_int(write_pieces(b, bufs), 0, "8 writes of 1 MiB done and reaped");
	n = syncs_reach(b, 1);
	ok(n >= 1 && n <= PIECES, "the file synced in the background, once to 8 times for 8 "
	    "crossings of 1 MiB (%u)", n);
	is_int(sr_bgwrite_stop(b, NULL), 0, "stop: no sync failed");
	is_int(threads(), base, "... and no thread is left");
	close(fd);
	ok(reads_back(path), "the file reads back as written");

	/* without sync_every: no syncer */
	if ((fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)) == -1)
		sr_fatal("open %s: %s", path, strerror(errno));
	ok((b = sr_bgwrite_start(fd, 0)) != NULL, "a writer without a syncer started");
	is_int(threads() - base, 1, "... one thread of its own");
	is_int(write_pieces(b, bufs), 0, "8 writes of 1 MiB done and reaped");
	is_int(sr_bgwrite_syncs(b), 0, "... none synced");
	is_int(sr_bgwrite_stop(b, NULL), 0, "stop: 0");
	close(fd);
	ok(reads_back(path), "the file reads back as written");

	/* a sync that fails: told by stop */
	if ((fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1)
		sr_fatal("open /dev/null: %s", strerror(errno));
	ok((b = sr_bgwrite_start(fd, MiB)) != NULL, "a writer to /dev/null with a syncer started");
	is_int(write_pieces(b, bufs), 0, "its writes succeed");
	ok(syncs_reach(b, 1) >= 1, "a background sync was made");
	errno = 0;
	is_int(sr_bgwrite_stop(b, NULL), EINVAL, "stop returns the sync's errno (EINVAL)");
	is_int(threads(), base, "... and no thread is left");
	close(fd);

	for (i = 0; i < PIECES; i++)
		free(bufs[i]);
	unlink(path);
	rmdir(dir);
	free(path);
	return tap_done();
}
