/*
 * gang-ckpt.h: the checkpoint of a gang (doc/format.md, "Gangs"): the
 * keys of its parts, J/parts/EPOCH-STEP-NODE.json, one per node but node
 * 0, for the save of one step. Node K > 0 writes its own (the save's
 * part); node 0 waits for those of nodes 1 .. N-1 and commits them with
 * its own directory (the save's merge). Every node's ranks answer a
 * request at the same step (spotrun.torch agrees on it), so the step
 * names the checkpoint across the nodes without a word between them.
 */
#ifndef SR_GANG_CKPT_H
#define SR_GANG_CKPT_H

#include "ckpt.h"
#include "run.h"

/* Seconds node 0 waits for the others' parts at most (a periodic
 * checkpoint's deadline is minutes away: a node that never answers must
 * not hold node 0's save, and a notice's, that long). Above the 60 s a
 * rank of spotrun.torch waits for its own node's request. */
#define SR_GANG_PARTS_WAIT 90.0

struct sr_gang_parts {
	char *part;		/* this node's key (node > 0), else NULL */
	char **merge;		/* node 0: the others' keys */
	size_t nmerge;
};

/* Set o's part or merge for a save of job's step by node g->node of a
 * gang (g NULL or one node: nothing), the keys into k (sr_gang_parts_free). */
void sr_gang_parts_for(const struct sr_run_gang *g, const char *job, long long step,
    struct sr_ckpt_opts *o, struct sr_gang_parts *k);
void sr_gang_parts_free(struct sr_gang_parts *k);

#endif
