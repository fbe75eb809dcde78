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
};

static void *
bg_main(void *arg)
{
	struct sr_bgwrite *b = arg;
	struct bg_job *j;
	int e;

	pthread_mutex_lock(&b->mu);
	for (;;) {
		while (!b->stop && b->ndone == b->n)
			pthread_cond_wait(&b->cv, &b->mu);
		if (b->stop)
			break;
		j = &b->q[(b->head + b->ndone) % SR_BGWRITE_DEPTH];
		pthread_mutex_unlock(&b->mu);
		e = sr_pwrite_all(b->fd, j->buf, j->len, j->off) == -1 ? errno : 0;
		pthread_mutex_lock(&b->mu);
		j->errnum = e;
		b->ndone++;
		pthread_cond_broadcast(&b->cv);
	}
	pthread_mutex_unlock(&b->mu);
	return NULL;
}

struct sr_bgwrite *
sr_bgwrite_start(int fd)
{
	struct sr_bgwrite *b = calloc(1, sizeof *b);

	if (b == NULL)
		return NULL;
	b->fd = fd;
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
	return b;
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

void
sr_bgwrite_stop(struct sr_bgwrite *b, void (*each)(void *buf))
{
	unsigned i;

	if (b == NULL)
		return;
	pthread_mutex_lock(&b->mu);
	b->stop = 1;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
	pthread_join(b->tid, NULL);
	for (i = 0; each != NULL && i < b->n; i++)
		each((void *)(uintptr_t)b->q[(b->head + i) % SR_BGWRITE_DEPTH].buf);
	pthread_cond_destroy(&b->cv);
	pthread_mutex_destroy(&b->mu);
	free(b);
}
