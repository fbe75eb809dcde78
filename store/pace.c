/*
 * pace.c: a store handle's writes of one key kept an interval apart
 * (pace.h). A hash table of the keys written in the last interval, with
 * when each write ended; entries older than the interval are dropped as
 * their bucket is visited, and all of them whenever the table has doubled
 * since the last sweep, so it holds about one interval's writes. The handle
 * is shared by threads (a lease's keeper, a checkpoint's save, the agent's
 * heartbeat): a key being written is marked busy from the wait to the end
 * of its write, and a second writer of it waits for that end (two writers
 * that both waited for the same last write would reach the server
 * together, and one of them get 429). The mutex is never held while
 * sleeping; a writer marks all its keys busy at once, or none, so two
 * writers never wait for each other.
 */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pace.h"
#include "util.h"

#define BUCKETS 256

struct entry {
	struct entry *next;
	double end;		/* sr_mono() when its last write ended */
	int busy;		/* a write of it is under way */
	char key[];
};

struct sr_pace {
	pthread_mutex_t lock;
	pthread_cond_t done;	/* a busy key's write ended */
	double interval;
	struct entry *b[BUCKETS];
	size_t n, swept_at;	/* entries now, and after the last sweep */
};

struct sr_pace *
sr_pace_new(double interval, char *err)
{
	struct sr_pace *p = sr_try_calloc(1, sizeof *p, err);

	if (p == NULL)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->done, NULL);
	p->interval = interval;
	return p;
}

static void
drop_old(struct sr_pace *p, struct entry **at, double now)
{
	while (*at != NULL) {
		struct entry *e = *at;

		if (!e->busy && now - e->end >= p->interval) {
			*at = e->next;
			free(e);
			p->n--;
		} else
			at = &e->next;
	}
}

void
sr_pace_free(struct sr_pace *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < BUCKETS; i++)
		while (p->b[i] != NULL) {
			struct entry *e = p->b[i];

			p->b[i] = e->next;
			free(e);
		}
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* FNV-1a */
static size_t
bucket_of(const char *key)
{
	uint32_t h = 2166136261u;

	for (; *key != '\0'; key++)
		h = (h ^ (unsigned char)*key) * 16777619u;
	return h % BUCKETS;
}

/* key's entry with the lock held, its bucket's old ones dropped; made
 * (idle, long ago) when there is none and make is set. NULL when there is
 * none, or with err when it cannot be made. */
static struct entry *
find(struct sr_pace *p, const char *key, double now, int make, char *err)
{
	struct entry *e;
	size_t i = bucket_of(key), len;

	drop_old(p, &p->b[i], now);
	for (e = p->b[i]; e != NULL; e = e->next)
		if (strcmp(e->key, key) == 0)
			return e;
	if (!make)
		return NULL;
	len = strlen(key);
	if ((e = sr_try_malloc(sizeof *e + len + 1, err)) == NULL)
		return NULL;
	memcpy(e->key, key, len + 1);
	e->end = now - p->interval;
	e->busy = 0;
	e->next = p->b[i];
	p->b[i] = e;
	p->n++;
	return e;
}

int
sr_pace_wait(struct sr_pace *p, const char *const *keys, size_t n, char *err)
{
	double now, due;
	size_t i;
	int busy;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		now = sr_mono();
		due = now;
		busy = 0;
		for (i = 0; i < n && !busy; i++) {
			struct entry *e = find(p, keys[i], now, 1, err);

			if (e == NULL) {	/* none marked busy yet */
				pthread_mutex_unlock(&p->lock);
				return -1;
			}
			busy = e->busy;
			if (e->end + p->interval > due)
				due = e->end + p->interval;
		}
		if (!busy)
			break;
		pthread_cond_wait(&p->done, &p->lock);
	}
	/* (made again where a later find dropped an idle one) */
	for (i = 0; i < n; i++) {
		struct entry *e = find(p, keys[i], now, 1, err);

		if (e == NULL) {
			while (i-- > 0)		/* busy ones are never dropped */
				find(p, keys[i], now, 0, NULL)->busy = 0;
			pthread_cond_broadcast(&p->done);
			pthread_mutex_unlock(&p->lock);
			return -1;
		}
		e->busy = 1;
	}
	pthread_mutex_unlock(&p->lock);
	if (due > now)
		sr_sleep(due - now);
	return 0;
}

void
sr_pace_done(struct sr_pace *p, const char *const *keys, size_t n)
{
	double now = sr_mono();
	size_t i;

	pthread_mutex_lock(&p->lock);
	for (i = 0; i < n; i++) {
		/* made by sr_pace_wait, and kept while busy */
		struct entry *e = find(p, keys[i], now, 0, NULL);

		if (e == NULL)
			continue;
		e->end = now;
		e->busy = 0;
	}
	if (p->n > 2 * p->swept_at + 64) {
		for (i = 0; i < BUCKETS; i++)
			drop_old(p, &p->b[i], now);
		p->swept_at = p->n;
	}
	pthread_cond_broadcast(&p->done);
	pthread_mutex_unlock(&p->lock);
}
