/*
 * gang-ckpt.c: see gang-ckpt.h.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gang-ckpt.h"
#include "jobkeys.h"
#include "util.h"

/* The supervisor's rule: out of memory is fatal. */
static char *
part_key(const char *job, int64_t epoch, long long step, int node)
{
	char err[SR_ERRMAX], *key = sr_jobkey_node_part(job, epoch, step, node, err);

	if (key == NULL)
		sr_fatal("%s", err);
	return key;
}

void
sr_gang_parts_for(const struct sr_run_gang *g, const char *job, long long step,
    struct sr_ckpt_opts *o, struct sr_gang_parts *k)
{
	int i;

	memset(k, 0, sizeof *k);
	if (g == NULL || g->nodes < 2)
		return;
	if (g->node > 0) {
		k->part = part_key(job, g->epoch, step, g->node);
		o->part = k->part;
		return;
	}
	k->nmerge = (size_t)g->nodes - 1;
	k->merge = sr_calloc(k->nmerge, sizeof *k->merge);
	for (i = 1; i < g->nodes; i++)
		k->merge[i - 1] = part_key(job, g->epoch, step, i);
	o->merge = (const char *const *)k->merge;
	o->nmerge = k->nmerge;
	o->merge_wait = SR_GANG_PARTS_WAIT;
	/* every node runs as many ranks (world_size counts them all) */
	o->node_ranks = o->world_size / g->nodes;
}

void
sr_gang_parts_free(struct sr_gang_parts *k)
{
	size_t i;

	free(k->part);
	for (i = 0; i < k->nmerge; i++)
		free(k->merge[i]);
	free(k->merge);
	memset(k, 0, sizeof *k);
}
