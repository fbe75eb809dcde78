/*
 * bgwrite.c: a file's writes at offsets on a thread of the writer's own
 * (store-file.c's direct uploads). A direct write returns only when the
 * disk has the bytes, so one thread that writes between producing them
 * leaves the disk one request at a time: beside another process writing
 * to the same disk, 248 MiB in direct writes of 1.5 MiB one after another
 * took 1.1-1.3 s, in 8 MiB ones 0.75-0.89 s, and an upload that waited
 * for each 8 MiB write stalled the checkpoint's workers
 * (doc/benchmarks.md). With a background writer the uploader fills its
 * next buffer while the last goes to the disk.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store-int.h"
#include "util.h"

struct sr_bgwrite {
	int fd;
	pthread_t tid;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	const void *buf;	/* the write handed over, while busy */
	size_t len;
	uint64_t off;
	int busy;		/* a write is handed over and not yet done */
	int stop;
	int errnum;		/* the last write's failure; 0: none */
};

static void *
bg_main(void *arg)
{
	struct sr_bgwrite *b = arg;
	int e;

	pthread_mutex_lock(&b->mu);
	for (;;) {
		while (!b->busy && !b->stop)
			pthread_cond_wait(&b->cv, &b->mu);
		if (!b->busy)
			break;
		pthread_mutex_unlock(&b->mu);
		e = sr_pwrite_all(b->fd, b->buf, b->len, b->off) == -1 ? errno : 0;
		pthread_mutex_lock(&b->mu);
		b->errnum = e;
		b->busy = 0;
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

int
sr_bgwrite_wait(struct sr_bgwrite *b)
{
	int e;

	pthread_mutex_lock(&b->mu);
	while (b->busy)
		pthread_cond_wait(&b->cv, &b->mu);
	e = b->errnum;
	b->errnum = 0;
	pthread_mutex_unlock(&b->mu);
	if (e == 0)
		return 0;
	errno = e;
	return -1;
}

void
sr_bgwrite_put(struct sr_bgwrite *b, const void *buf, size_t len, uint64_t off)
{
	pthread_mutex_lock(&b->mu);
	b->buf = buf;
	b->len = len;
	b->off = off;
	b->busy = 1;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

void
sr_bgwrite_stop(struct sr_bgwrite *b)
{
	if (b == NULL)
		return;
	pthread_mutex_lock(&b->mu);
	b->stop = 1;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
	pthread_join(b->tid, NULL);
	pthread_cond_destroy(&b->cv);
	pthread_mutex_destroy(&b->mu);
	free(b);
}
