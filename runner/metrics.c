/*
 * metrics.c: see metrics.h. The shipper's thread owns the file's offset,
 * the partial line and the counts; the caller's thread only starts and
 * stops it, so the one lock guards the stop flag and its condition.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jobkeys.h"
#include "metrics.h"
#include "util.h"

#define READ_CHUNK 65536
#define CLOSE_TRIES 3
#define SEG_READ_MAX (SR_METRICS_BUF + SR_METRICS_LINE_MAX)
#define STRIDE_MAX (1LL << 40)

struct sr_metrics_ship {
	struct sr_store *st;
	char *job, *path;
	int64_t run;
	int attempt;
	double interval;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* on CLOCK_MONOTONIC */
	int stop;
	/* the thread's own */
	int fd;
	char part[SR_METRICS_LINE_MAX + 2];	/* the line not yet ended */
	size_t partlen;
	int part_long;			/* the line in part is longer than a line may be */
	long lineno;
	long long stride;		/* past the cap: keep steps that are multiples */
	long at_stride;			/* lines kept at this stride */
	char last[SR_METRICS_LINE_MAX + SR_METRICS_PER_LINE * 24];	/* the last line, when thinned */
	size_t lastlen;
	char *out;			/* normalised lines not yet shipped */
	size_t outlen;
	int seg;
	struct sr_metrics_counts c;
	char err[SR_ERRMAX];		/* the last failure to ship */
};

static void
bad_line(struct sr_metrics_ship *m, const char *why)
{
	if (m->c.bad++ == 0)
		snprintf(m->c.first_bad, sizeof m->c.first_bad, "line %ld: %s", m->lineno, why);
}

static void
append(struct sr_metrics_ship *m, const char *p, size_t n)
{
	if (m->outlen + n > SR_METRICS_BUF) {
		m->c.dropped++;
		return;
	}
	memcpy(m->out + m->outlen, p, n);
	m->outlen += n;
}

/* Whether the cap keeps a line of step (metrics.h). */
static int
keep(struct sr_metrics_ship *m, long long step)
{
	if (m->c.kept < SR_METRICS_FULL)
		return 1;
	if (step % m->stride != 0)
		return 0;
	if (++m->at_stride > SR_METRICS_FULL / 2 && m->stride < STRIDE_MAX) {
		m->stride *= 2;
		m->at_stride = 1;
		if (step % m->stride != 0)
			return 0;
	}
	return 1;
}

/* One whole line of the file (n bytes, no newline). */
static void
take_line(struct sr_metrics_ship *m, const char *p, size_t n)
{
	struct sr_metrics_line l;
	char why[SR_ERRMAX], buf[sizeof m->last];
	size_t k;
	int rc;

	m->lineno++;
	if ((rc = sr_metrics_parse(p, n, &l, why)) == 0)
		return;
	if (rc == -1) {
		bad_line(m, why);
		return;
	}
	m->c.lines++;
	if ((k = sr_metrics_format(&l, buf, sizeof buf)) == 0) {
		bad_line(m, "too long once normalised");
		return;
	}
	if (keep(m, l.step)) {
		m->c.kept++;
		m->lastlen = 0;
		append(m, buf, k);
	} else {
		m->c.thinned++;
		memcpy(m->last, buf, k);
		m->lastlen = k;
	}
}

/* Split n bytes read from the file into lines; a line longer than a line
 * may be is bad once, skipped to its end. */
static void
take(struct sr_metrics_ship *m, const char *p, size_t n)
{
	const char *nl;
	size_t seg, room;

	while (n > 0) {
		nl = memchr(p, '\n', n);
		seg = nl != NULL ? (size_t)(nl - p) : n;
		if (!m->part_long) {
			room = sizeof m->part - m->partlen;
			if (seg > room - 1) {
				m->part_long = 1;
			} else {
				memcpy(m->part + m->partlen, p, seg);
				m->partlen += seg;
			}
		}
		if (nl == NULL)
			return;
		if (m->part_long || m->partlen > SR_METRICS_LINE_MAX + 1) {
			m->lineno++;
			bad_line(m, "longer than a line may be");
		} else {
			take_line(m, m->part, m->partlen);
		}
		m->partlen = 0;
		m->part_long = 0;
		p = nl + 1;
		n -= seg + 1;
	}
}

/* Read what the file has past the last read. */
static void
read_new(struct sr_metrics_ship *m)
{
	char buf[READ_CHUNK];
	ssize_t n;

	for (;;) {
		n = read(m->fd, buf, sizeof buf);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		take(m, buf, (size_t)n);
	}
}

/* Ship what is gathered as the next segment: 0, or -1 (kept for a retry). */
static int
ship(struct sr_metrics_ship *m)
{
	char err[SR_ERRMAX], *key;
	int rc;

	if (m->outlen == 0)
		return 0;
	for (;;) {
		if ((key = sr_jobkey_metrics(m->job, m->run, m->attempt, m->seg, err)) == NULL) {
			snprintf(m->err, sizeof m->err, "%s", err);
			return -1;
		}
		rc = sr_store_put(m->st, key, m->out, m->outlen, SR_PUT_CREATE, NULL, NULL, err);
		free(key);
		if (rc != SR_STORE_EXISTS)
			break;
		m->seg++;	/* another writer of this attempt's numbers: the next */
	}
	if (rc != SR_STORE_OK) {
		snprintf(m->err, sizeof m->err, "metrics of %s: %s", m->job, err);
		return -1;
	}
	m->seg++;
	m->c.segments++;
	m->outlen = 0;
	return 0;
}

static void *
ship_main(void *arg)
{
	struct sr_metrics_ship *m = arg;
	struct timespec ts;
	int stop = 0, tries = 0;

	while (!stop) {
		pthread_mutex_lock(&m->lock);
		sr_timespec(sr_mono() + m->interval, &ts);
		while (!m->stop && pthread_cond_timedwait(&m->cond, &m->lock, &ts) != ETIMEDOUT)
			;
		stop = m->stop;
		pthread_mutex_unlock(&m->lock);
		read_new(m);
		if (stop && m->partlen > 0 && !m->part_long) {	/* a last line without newline */
			take_line(m, m->part, m->partlen);
			m->partlen = 0;
		}
		if (stop && m->lastlen > 0) {	/* the attempt's last line */
			append(m, m->last, m->lastlen);
			m->c.kept++;
			m->c.thinned--;
			m->lastlen = 0;
		}
		ship(m);
	}
	while (m->outlen > 0 && ++tries < CLOSE_TRIES) {
		sr_sleep(0.2 * tries);
		ship(m);
	}
	return NULL;
}

struct sr_metrics_ship *
sr_metrics_ship_start(struct sr_store *st, const char *job, int64_t run, int attempt,
    const char *path, double interval, char *err)
{
	struct sr_metrics_ship *m;
	pthread_condattr_t ca;
	sigset_t all, old;
	int fd, r;

	if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) == -1) {
		sr_errno(err, "create %s", path);
		return NULL;
	}
	m = sr_calloc(1, sizeof *m);
	m->st = st;
	m->job = sr_strdup(job);
	m->path = sr_strdup(path);
	m->run = run;
	m->attempt = attempt;
	m->interval = interval > 0 ? interval : 5.0;
	m->fd = fd;
	m->stride = 2;
	m->out = sr_malloc(SR_METRICS_BUF);
	if (pthread_mutex_init(&m->lock, NULL) != 0 || pthread_condattr_init(&ca) != 0 ||
	    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
	    pthread_cond_init(&m->cond, &ca) != 0)
		sr_fatal("metrics: pthread init failed");
	pthread_condattr_destroy(&ca);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&m->thread, NULL, ship_main, m);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		errno = r;
		sr_errno(err, "metrics of %s: create its thread", job);
		pthread_cond_destroy(&m->cond);
		pthread_mutex_destroy(&m->lock);
		close(fd);
		free(m->out);
		free(m->job);
		free(m->path);
		free(m);
		return NULL;
	}
	return m;
}

int
sr_metrics_ship_stop(struct sr_metrics_ship *m, struct sr_metrics_counts *c, char *err)
{
	int rc = 0;

	if (m == NULL)
		return 0;
	pthread_mutex_lock(&m->lock);
	m->stop = 1;
	pthread_cond_signal(&m->cond);
	pthread_mutex_unlock(&m->lock);
	pthread_join(m->thread, NULL);
	if (m->outlen > 0) {
		const char *p;

		for (p = m->out; p < m->out + m->outlen; p++)
			m->c.dropped += *p == '\n';
		rc = sr_err(err, "%s; %ld lines of metrics not shipped", m->err, m->c.dropped);
	}
	if (c != NULL)
		*c = m->c;
	close(m->fd);
	pthread_cond_destroy(&m->cond);
	pthread_mutex_destroy(&m->lock);
	free(m->out);
	free(m->job);
	free(m->path);
	free(m);
	return rc;
}

/* ---- reading ---- */

/* A line read back, before the merge. */
struct entry {
	long long step;
	size_t order;			/* in key order, then line order */
	size_t first, n;		/* its cells in the scratch table */
	int dead;			/* redone by a later attempt */
};

struct reader {
	const char *job;
	char **keys;
	size_t nkeys;
	int rc;
	char *err;
};

static int
list_cb(const struct sr_object_info *info, void *arg)
{
	struct reader *r = arg;
	int64_t run;
	int attempt;

	if (sr_jobkey_metrics_parse(r->job, info->key, &run, &attempt) == 0) {
		r->keys = sr_reallocarray(r->keys, r->nkeys + 1, sizeof *r->keys);
		r->keys[r->nkeys++] = sr_strdup(info->key);
	}
	return 0;
}

static int
intern(struct sr_metrics_table *t, const char *name)
{
	int i = sr_metrics_find(t, name);

	if (i >= 0)
		return i;
	t->names = sr_reallocarray(t->names, t->nnames + 1, sizeof *t->names);
	t->names[t->nnames] = sr_strdup(name);
	return (int)t->nnames++;
}

static int
entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The lines of one segment into the entries; a new attempt's first line
 * drops what earlier attempts did from its step on. */
static void
read_segment(struct sr_metrics_table *t, struct sr_metrics_cell **cells, size_t *ncells,
    struct entry **ev, size_t *n, int new_attempt, const char *data, size_t len)
{
	struct sr_metrics_line l;
	const char *p = data, *end = data + len, *nl;
	char why[SR_ERRMAX];
	size_t i;
	int j, first = new_attempt;

	for (; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		if (sr_metrics_parse(p, (size_t)(nl - p), &l, why) != 1) {
			t->bad += nl > p;
			continue;
		}
		if (first) {
			for (i = 0; i < *n; i++)
				if ((*ev)[i].step >= l.step)
					(*ev)[i].dead = 1;
			first = 0;
		}
		*ev = sr_reallocarray(*ev, *n + 1, sizeof **ev);
		(*ev)[*n] = (struct entry){ l.step, *n, *ncells, (size_t)l.n, 0 };
		*cells = sr_reallocarray(*cells, *ncells + (size_t)l.n, sizeof **cells);
		for (j = 0; j < l.n; j++)
			(*cells)[(*ncells)++] = (struct sr_metrics_cell){ intern(t, l.m[j].name),
			    l.m[j].value };
		(*n)++;
	}
}

/* The entries alive, merged a row per step into t. */
static void
merge(struct sr_metrics_table *t, const struct sr_metrics_cell *cells, struct entry *ev, size_t n)
{
	size_t i, j, k;

	sr_sort(ev, n, sizeof *ev, entry_cmp);
	for (i = 0; i < n; i++) {
		struct sr_metrics_row *row;

		if (ev[i].dead)
			continue;
		if (t->nrows == 0 || t->rows[t->nrows - 1].step != ev[i].step) {
			t->rows = sr_reallocarray(t->rows, t->nrows + 1, sizeof *t->rows);
			t->rows[t->nrows++] = (struct sr_metrics_row){ ev[i].step, t->ncells, 0 };
		}
		row = &t->rows[t->nrows - 1];
		for (j = 0; j < ev[i].n; j++) {
			const struct sr_metrics_cell *c = &cells[ev[i].first + j];

			for (k = row->first; k < row->first + row->n; k++)
				if (t->cells[k].name == c->name)
					break;
			if (k < row->first + row->n) {
				t->cells[k].value = c->value;	/* the later wins */
				continue;
			}
			t->cells = sr_reallocarray(t->cells, t->ncells + 1, sizeof *t->cells);
			t->cells[t->ncells++] = *c;
			row->n++;
		}
	}
}

int
sr_metrics_read(struct sr_store *st, const char *job, struct sr_metrics_table *t, char *err)
{
	struct reader r = { job, NULL, 0, 0, err };
	struct sr_metrics_cell *cells = NULL;
	struct entry *ev = NULL;
	size_t i, n = 0, ncells = 0;
	int64_t run, prev_run = -1;
	int attempt, prev_attempt = -1, rc = 0;
	char *prefix;

	memset(t, 0, sizeof *t);
	if ((prefix = sr_jobkey_prefix(job, SR_JOBKEY_METRICS, err)) == NULL)
		sr_fatal("%s", err);
	if (sr_store_list(st, prefix, list_cb, &r, err) != SR_STORE_OK)
		rc = sr_err_prefix(err, "metrics of %s", job);
	free(prefix);
	for (i = 0; i < r.nkeys; i++) {
		void *buf;
		size_t len;
		int g;

		if (rc == 0) {
			g = sr_store_get(st, r.keys[i], SEG_READ_MAX, &buf, &len, NULL, err);
			if (g == SR_STORE_OK) {
				sr_jobkey_metrics_parse(job, r.keys[i], &run, &attempt);
				read_segment(t, &cells, &ncells, &ev, &n,
				    run != prev_run || attempt != prev_attempt, buf, len);
				prev_run = run;
				prev_attempt = attempt;
				t->segments++;
				free(buf);
			} else if (g != SR_STORE_NOTFOUND) {
				rc = sr_err_prefix(err, "metrics of %s", job);
			}
		}
		free(r.keys[i]);
	}
	free(r.keys);
	if (rc == 0)
		merge(t, cells, ev, n);
	free(cells);
	free(ev);
	if (rc != 0)
		sr_metrics_table_free(t);
	return rc;
}

void
sr_metrics_table_free(struct sr_metrics_table *t)
{
	size_t i;

	for (i = 0; i < t->nnames; i++)
		free(t->names[i]);
	free(t->names);
	free(t->rows);
	free(t->cells);
	memset(t, 0, sizeof *t);
}

int
sr_metrics_find(const struct sr_metrics_table *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->nnames; i++)
		if (strcmp(t->names[i], name) == 0)
			return (int)i;
	return -1;
}

int
sr_metrics_value(const struct sr_metrics_table *t, size_t r, int name, double *v)
{
	size_t k;

	for (k = t->rows[r].first; k < t->rows[r].first + t->rows[r].n; k++)
		if (t->cells[k].name == name) {
			*v = t->cells[k].value;
			return 1;
		}
	return 0;
}
