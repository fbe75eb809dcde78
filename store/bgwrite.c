/*
 * bgwrite.c: a file's writes at offsets on a thread of the writer's own
 * (store-file.c's direct uploads), up to SR_BGWRITE_DEPTH queued and done
 * in order. A direct write returns only when the disk has the bytes, so
 * one thread that writes between producing them leaves the disk one
 * request at a time: beside another process writing to the same disk,
 * 248 MiB in direct writes of 1.5 MiB one after another took 1.1-1.3 s,
 * in 8 MiB ones 0.75-0.89 s, and an upload that waited for each 8 MiB
 * write stalled the checkpoint's workers (doc/benchmarks.md). With a
 * background writer the uploader fills its next buffer while the last
 * goes to the disk; with several queued, a write that stalls (another
 * writer's flush ahead of it on the disk, 50-230 ms here) no longer
 * stops the uploader after one buffer: 10,000 small files beside a
 * writer saved in 0.92-1.10 s instead of 1.03-1.16 s (medians of three
 * sets of alternating saves; doc/design.md).
 *
 * A direct write is on the disk but not yet durable: a virtual disk holds
 * it in its host's cache until a flush, and the flush of a whole save at
 * its commit waited for all of it there (260 MB: fsync 128 ms after the
 * last write). With sync_every, a second thread of the writer's
 * fdatasyncs the file each time that many more bytes are written, beside
 * the writes, so that the commit's fsync finds little left (256 MiB:
 * 0.19-0.20 s without, 0.03-0.05 s with one every 64 MiB, the writes no
 * slower). Requests that come while one runs make one more, not a queue.
 * Not where the disk is shared (SHARED_SLOWER below): there a sync pays
 * for the other writer's data too.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store-int.h"
#include "util.h"

struct bg_job {
	const void *buf;
	size_t len;
	uint64_t off;
	int errnum;		/* once done: 0, or the write's errno */
};

struct sr_bgwrite {
	int fd;
	pthread_t tid;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* Queued and not yet reaped: q[(head + i) % DEPTH] for i < n, of
	 * which the first ndone are written. */
	struct bg_job q[SR_BGWRITE_DEPTH];
	unsigned head, n, ndone;
	int stop;
	/* the syncer: a request made once since_sync reaches sync_every
	 * (0: no syncer), the count done, the first failure's errno */
	uint64_t sync_every, since_sync;
	pthread_t sync_tid;
	int syncer;		/* the thread runs */
	int sync_want;
	unsigned syncs;
	int sync_err;
	/* the fastest write so far, and whether a write since took over
	 * SHARED_SLOWER times that: the disk is shared, no more syncs */
	double fastest;
	int shared;
};

/* A write this many times slower than the upload's fastest, and slower
 * than SHARED_MIN, says that the disk is busy with another writer's
 * data. A sync then flushes the other's data too: a 1 GiB save beside a
 * writer took 2.26 s with syncs against 1.90 s without (medians of 5
 * alternating), so they stop for the rest of the upload. Quiet, this
 * disk's 8 MiB writes took 1.5 ms (median) and up to 63 ms while a sync
 * of our own ran beside them (20 ms was passed quiet too, and the syncs
 * stopped where they help most); beside a writer 130-240 ms. */
#define SHARED_SLOWER 8.0
#define SHARED_MIN 0.1

static void *
sync_main(void *arg)
{
	struct sr_bgwrite *b = arg;
	int e;

	pthread_mutex_lock(&b->mu);
	for (;;) {
		while (!b->stop && !b->sync_want)
			pthread_cond_wait(&b->cv, &b->mu);
		if (b->stop)
			break;
		b->sync_want = 0;
		pthread_mutex_unlock(&b->mu);
		e = fdatasync(b->fd) == -1 ? errno : 0;
		pthread_mutex_lock(&b->mu);
		/* Linux tells a failed writeback to one sync only: kept for
		 * stop, or the commit's fsync after it could succeed */
		if (e != 0 && b->sync_err == 0)
			b->sync_err = e;
		b->syncs++;
		pthread_cond_broadcast(&b->cv);
	}
	pthread_mutex_unlock(&b->mu);
	return NULL;
}

static void *
bg_main(void *arg)
{
	struct sr_bgwrite *b = arg;
	struct bg_job *j;
	double t;
	int e;

	pthread_mutex_lock(&b->mu);
	for (;;) {
		while (!b->stop && b->ndone == b->n)
			pthread_cond_wait(&b->cv, &b->mu);
		if (b->stop)
			break;
		j = &b->q[(b->head + b->ndone) % SR_BGWRITE_DEPTH];
		pthread_mutex_unlock(&b->mu);
		t = sr_mono();
		e = sr_pwrite_all(b->fd, j->buf, j->len, j->off) == -1 ? errno : 0;
		t = sr_mono() - t;
		pthread_mutex_lock(&b->mu);
		j->errnum = e;
		b->ndone++;
		if (b->fastest > 0 && t > SHARED_MIN && t > SHARED_SLOWER * b->fastest)
			b->shared = 1;
		if (b->fastest == 0 || t < b->fastest)
			b->fastest = t;
		if (b->syncer && !b->shared && e == 0 &&
		    (b->since_sync += j->len) >= b->sync_every) {
			b->since_sync = 0;
			b->sync_want = 1;
		}
		pthread_cond_broadcast(&b->cv);
	}
	pthread_mutex_unlock(&b->mu);
	return NULL;
}

struct sr_bgwrite *
sr_bgwrite_start(int fd, uint64_t sync_every)
{
	struct sr_bgwrite *b = calloc(1, sizeof *b);

	if (b == NULL)
		return NULL;
	b->fd = fd;
	b->sync_every = sync_every;
	if (pthread_mutex_init(&b->mu, NULL) != 0) {
		free(b);
		return NULL;
	}
	if (pthread_cond_init(&b->cv, NULL) != 0) {
		pthread_mutex_destroy(&b->mu);
		free(b);
		return NULL;
	}
	if (pthread_create(&b->tid, NULL, bg_main, b) != 0) {
		pthread_cond_destroy(&b->cv);
		pthread_mutex_destroy(&b->mu);
		free(b);
		return NULL;
	}
	/* without a syncer the commit's fsync does it all, as before */
	pthread_mutex_lock(&b->mu);	/* the writer reads syncer under it */
	b->syncer = sync_every > 0 && pthread_create(&b->sync_tid, NULL, sync_main, b) == 0;
	pthread_mutex_unlock(&b->mu);
	return b;
}

unsigned
sr_bgwrite_syncs(struct sr_bgwrite *b)
{
	unsigned n;

	pthread_mutex_lock(&b->mu);
	n = b->syncs;
	pthread_mutex_unlock(&b->mu);
	return n;
}

unsigned
sr_bgwrite_pending(struct sr_bgwrite *b, int done_only)
{
	unsigned n;

	pthread_mutex_lock(&b->mu);
	n = done_only ? b->ndone : b->n;
	pthread_mutex_unlock(&b->mu);
	return n;
}

int
sr_bgwrite_reap(struct sr_bgwrite *b, void **buf, size_t *len, uint64_t *off)
{
	struct bg_job j;

	pthread_mutex_lock(&b->mu);
	if (b->n == 0) {	/* a caller's bug, told as one: never a wait for ever */
		pthread_mutex_unlock(&b->mu);
		*buf = NULL;
		errno = EINVAL;
		return -1;
	}
	while (b->ndone == 0)
		pthread_cond_wait(&b->cv, &b->mu);
	j = b->q[b->head];
	b->head = (b->head + 1) % SR_BGWRITE_DEPTH;
	b->n--;
	b->ndone--;
	pthread_mutex_unlock(&b->mu);
	*buf = (void *)(uintptr_t)j.buf;
	*len = j.len;
	*off = j.off;
	if (j.errnum == 0)
		return 0;
	errno = j.errnum;
	return -1;
}

int
sr_bgwrite_put(struct sr_bgwrite *b, const void *buf, size_t len, uint64_t off)
{
	struct bg_job *j;

	pthread_mutex_lock(&b->mu);
	if (b->n == SR_BGWRITE_DEPTH) {	/* a caller's bug: reap first */
		pthread_mutex_unlock(&b->mu);
		errno = EBUSY;
		return -1;
	}
	j = &b->q[(b->head + b->n) % SR_BGWRITE_DEPTH];
	j->buf = buf;
	j->len = len;
	j->off = off;
	j->errnum = 0;
	b->n++;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
	return 0;
}

int
sr_bgwrite_stop(struct sr_bgwrite *b, void (*each)(void *buf))
{
	unsigned i;
	int e;

	if (b == NULL)
		return 0;
	pthread_mutex_lock(&b->mu);
	b->stop = 1;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
	pthread_join(b->tid, NULL);
	if (b->syncer)
		pthread_join(b->sync_tid, NULL);
	for (i = 0; each != NULL && i < b->n; i++)
		each((void *)(uintptr_t)b->q[(b->head + i) % SR_BGWRITE_DEPTH].buf);
	e = b->sync_err;
	pthread_cond_destroy(&b->cv);
	pthread_mutex_destroy(&b->mu);
	free(b);
	return e;
}
