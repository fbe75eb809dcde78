/*
 * metrics.h: the job's metrics (doc/spotrun.1, METRICS) taken to the
 * store and read back. Rank 0 of an attempt appends lines
 * (metricline.h) to the file named by $SPOTRUN_METRICS; a thread of the
 * shipper reads what is new every interval, skips and counts bad lines,
 * thins the lines past the cap, and appends the rest, normalised, to the
 * job's store as create-only segments J/metrics/<E>-<NNNN>-<M>.txt
 * (jobkeys.h), as the queue's log writer does with the output: the
 * supervisor's loop never waits on the store, and the metrics outlive the
 * machine. A resumed attempt (the next machine, the next run) appends
 * segments of its own; the reader merges them (sr_metrics_read).
 *
 * The cap, per attempt: its first SR_METRICS_FULL lines are all kept;
 * past them, a line is kept when its step is a multiple of a stride of 2,
 * which doubles every SR_METRICS_FULL / 2 lines kept so (a curve of any
 * length keeps its shape in O(log steps) lines); the attempt's last line
 * is always kept. Unshipped text beyond SR_METRICS_BUF (the store out of
 * reach) is dropped and counted.
 */
#ifndef SR_METRICS_H
#define SR_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "metricline.h"
#include "store.h"
#include "util.h"

#define SR_METRICS_FULL 10000
#define SR_METRICS_BUF (8 * 1024 * 1024)

/* What a shipper saw, at its end. */
struct sr_metrics_counts {
	long lines;			/* metrics lines read (bad ones not counted) */
	long kept;			/* shipped, or to be */
	long thinned;			/* left out past the cap */
	long dropped;			/* kept, but lost: the store out of reach */
	long bad;			/* lines that were no metrics line */
	char first_bad[SR_ERRMAX];	/* "line N: why" of the first bad one */
	int segments;			/* written */
};

struct sr_metrics_ship;

/* Create (truncate) the metrics file path and start shipping it, as job's
 * attempt of the run of lease epoch run, to st every interval seconds (0:
 * 5). st is used from the shipper's thread until sr_metrics_ship_stop.
 * NULL with err when the file cannot be created or the thread started. */
struct sr_metrics_ship *sr_metrics_ship_start(struct sr_store *st, const char *job, int64_t run,
    int attempt, const char *path, double interval, char *err);

/* Read what is left of the file, ship it (three tries at most), stop the
 * thread and free m, the counts into *c (may be NULL). 0, or -1 with err
 * when lines stayed unshipped (c->dropped counts them). NULL m: 0. */
int sr_metrics_ship_stop(struct sr_metrics_ship *m, struct sr_metrics_counts *c, char *err);

/* A job's metrics read back: one row per step, in step order, with the
 * values reported for it (several lines of one step merge; a name given
 * twice keeps the later value). When an attempt's first line has step S,
 * the lines of earlier attempts with a step of S or more are dropped:
 * they are work lost to a preemption, done again. So each step is there
 * once, from the attempt that last did it. */
struct sr_metrics_cell {
	int name;			/* index into names */
	double value;
};
struct sr_metrics_row {
	long long step;
	size_t first, n;		/* its cells */
};
struct sr_metrics_table {
	char **names;			/* in the order first seen */
	size_t nnames;
	struct sr_metrics_row *rows;
	size_t nrows;
	struct sr_metrics_cell *cells;
	size_t ncells;
	long bad;			/* lines of the segments that did not parse */
	int segments;
};

/* Read job's segments from st into t (zeroed first): 0 (no segment: an
 * empty table), or -1 with err. */
int sr_metrics_read(struct sr_store *st, const char *job, struct sr_metrics_table *t, char *err);
void sr_metrics_table_free(struct sr_metrics_table *t);
/* The index of metric name in t, or -1. */
int sr_metrics_find(const struct sr_metrics_table *t, const char *name);
/* Row r's value of metric index name: 1 with *v, or 0 when it has none. */
int sr_metrics_value(const struct sr_metrics_table *t, size_t r, int name, double *v);

#endif
