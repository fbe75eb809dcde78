/*
 * trace.h: a spot availability trace (the skypilot-org/spot-traces format,
 * see shared/data/spot-traces/README.md) read into its up-periods, so the
 * local provider can replay real preemption times and a benchmark can
 * compute goodput from the same schedule.
 *
 * File format: {"metadata": {"gap_seconds": N}, "data": [0|1, ...]}: one
 * tick every gap_seconds, each value the count of instances up: 1 = the
 * instance is up, 0 = preempted and not yet re-acquired. An up-period is a
 * maximal run of ticks up; tick i starts at trace second i * gap_seconds.
 * All times here are in trace seconds.
 *
 * A multi-node trace (the format's 4-node ones) counts its nodes up, 0 to
 * N: N is "metadata": {"nodes": N} where the file says it (a value above
 * it is an error), else the largest value of "data". Node j (0-based)
 * counts as up while the value is > j, so node 0 is up while any node is,
 * and the last node only while all are: a gang of N replaying it loses its
 * highest nodes first.
 */
#ifndef SR_TRACE_H
#define SR_TRACE_H

#include <stddef.h>

struct sr_trace;

struct sr_trace_period {
	double start;		/* trace seconds from the trace's first tick */
	double length;		/* trace seconds the instance stays up */
	int reaches_end;	/* 1: still up at the end of the trace, so no
				 * preemption (and no notice) ends this period */
};

/* Nodes of a trace at most. */
#define SR_TRACE_NODES_MAX 4096

/* Read and validate the trace file at path. Errors ("load trace PATH:
 * reason") name what is wrong: a missing or unreadable file, bad JSON (with
 * line and column), a missing or mistyped "metadata", "gap_seconds" or
 * "data", a data value that is not an integer from 0 to "nodes" (to 4096
 * without it; with its index), a bad "nodes", gap_seconds <= 0,
 * or no up-period at all. 0 with *out set, or -1 with err set. */
int sr_trace_load(const char *path, struct sr_trace **out, char *err);
/* As sr_trace_load, but the up-periods of node `node` (0-based) of a
 * multi-node trace; also an error when node is not below "nodes" ("node 5
 * is not in it: it has 4 nodes"). A value above "nodes" names its index
 * and the allowed range. sr_trace_load is node 0. */
int sr_trace_load_node(const char *path, int node, struct sr_trace **out, char *err);
/* The trace's node count: metadata.nodes, else its largest value (>= 1). */
int sr_trace_nodes(const struct sr_trace *t);
void sr_trace_free(struct sr_trace *t);

/* Seconds between ticks (metadata.gap_seconds, > 0). */
double sr_trace_gap(const struct sr_trace *t);
/* Length of the whole trace: ticks * gap. */
double sr_trace_duration(const struct sr_trace *t);
/* Number of up-periods (at least 1 in a loaded trace). */
size_t sr_trace_nperiods(const struct sr_trace *t);
/* Up-period k (0-based, in time order); k must be < sr_trace_nperiods. */
const struct sr_trace_period *sr_trace_period(const struct sr_trace *t, size_t k);
/* Index of the first up-period that starts at or after trace second
 * `start`; sr_trace_nperiods(t) when none does. */
size_t sr_trace_first_period(const struct sr_trace *t, double start);

/* The up-period VM 1 replays from trace second `start` (as
 * sr_trace_first_period) into *k: 0, or -1 when none starts at or after
 * start, with err saying where start lies (inside the last up-period,
 * after it, past the end) and the latest start that works, without naming
 * the key: "inside the last up-period of trace PATH (4800 s to 5600 s); no
 * up-period starts at or after it; use a start time of at most 4800 s, where
 * the last one starts". path names the trace in the message. */
int sr_trace_start_period(const struct sr_trace *t, const char *path, double start,
    size_t *k, char *err);

/* What sr_trace_check found. */
enum sr_trace_status {
	SR_TRACE_OK = 0,
	SR_TRACE_UNREADABLE,	/* it cannot be opened: nothing is known of it yet */
	SR_TRACE_BAD_FILE,	/* it is not a trace (err as sr_trace_load's), or
				 * a multi-node one of fewer nodes than the gang
				 * (err as sr_trace_load_node's) */
	SR_TRACE_BAD_START	/* no up-period starts at or after start (err as
				 * sr_trace_start_period's) */
};

/* Whether replaying the trace at path from trace second `start` with a
 * gang of up to `nodes` nodes (1: no gang) works, for checking a job file
 * before it runs: load it (never blocking: a FIFO or a device is "not a
 * regular file"), refuse a multi-node trace of fewer nodes (a one-node
 * one replays the same for each node), and find VM 1's period. Returns a
 * status; err is set for all but SR_TRACE_OK. */
enum sr_trace_status sr_trace_check(const char *path, double start, int nodes, char *err);

#endif
