/*
 * lease-seen.c: what one observer has seen of leases (lease.h,
 * sr_lease_seen_*), so that it judges a lease expired by its own
 * monotonic clock, not by the holder's wall clock or its own: a lease
 * whose etag it has seen unchanged for longer than the lease's TTL was
 * not renewed for that long (a live holder renews every TTL / 3, and each
 * write changes the etag). A sorted array of (lease, etag, first seen,
 * last noted), found by binary search: an agent notes every running
 * lease of its queue at each scan, in listing (key) order, so that
 * inserts mostly append.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lease.h"
#include "util.h"

struct seen_one {
	char *id;			/* "URL\nJOB": the lease */
	char etag[SR_ETAG_MAX];		/* as last noted */
	double since;			/* monotonic time that etag was first noted */
	double last;			/* ... and last */
};

struct sr_lease_seen {
	struct seen_one *v;
	size_t n, cap;
};

struct sr_lease_seen *
sr_lease_seen_new(void)
{
	return sr_calloc(1, sizeof(struct sr_lease_seen));
}

void
sr_lease_seen_free(struct sr_lease_seen *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++)
		free(s->v[i].id);
	free(s->v);
	free(s);
}

/* The index of id in s, or where it would go (*found 0). */
static size_t
find(const struct sr_lease_seen *s, const char *id, int *found)
{
	size_t lo = 0, hi = s->n;

	*found = 0;
	if (s->n > 0 && strcmp(s->v[s->n - 1].id, id) < 0)
		return s->n;	/* the common case: listings come in key order */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(s->v[mid].id, id);

		if (c == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

double
sr_lease_seen_note(struct sr_lease_seen *s, const char *url, const char *job, const char *etag,
    double mono)
{
	size_t lu = strlen(url), lj = strlen(job), i;
	char *id = sr_calloc(1, lu + lj + 2);
	struct seen_one *e;
	int found;

	memcpy(id, url, lu);
	id[lu] = '\n';
	memcpy(id + lu + 1, job, lj);
	i = find(s, id, &found);
	if (found) {
		free(id);
		e = &s->v[i];
		e->last = mono;
		if (strcmp(e->etag, etag) == 0)
			return mono > e->since ? mono - e->since : 0;
		snprintf(e->etag, sizeof e->etag, "%s", etag);
		e->since = mono;
		return 0;
	}
	if (s->n == s->cap) {
		s->cap = s->cap > 0 ? 2 * s->cap : 16;
		s->v = sr_reallocarray(s->v, s->cap, sizeof *s->v);
	}
	memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof *s->v);
	s->n++;
	e = &s->v[i];
	e->id = id;
	snprintf(e->etag, sizeof e->etag, "%s", etag);
	e->since = e->last = mono;
	return 0;
}

void
sr_lease_seen_forget(struct sr_lease_seen *s, double before)
{
	size_t i, k = 0;

	for (i = 0; i < s->n; i++) {
		if (s->v[i].last < before)
			free(s->v[i].id);
		else
			s->v[k++] = s->v[i];
	}
	s->n = k;
}

size_t
sr_lease_seen_count(const struct sr_lease_seen *s)
{
	return s->n;
}
