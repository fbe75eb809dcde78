/*
 * gangparts.h: the parts of a gang's checkpoint (doc/format.md, "Gangs"): each
 * node but node 0 saves its directory as a part, a manifest at a key of
 * its own that commits nothing; node 0's save waits for every other
 * node's part and adds their entries to its own manifest before it
 * commits, so the gang's checkpoint is one manifest and one move of
 * LATEST. For save.c.
 */
#ifndef SR_GANGPARTS_H
#define SR_GANGPARTS_H

#include "ckpt.h"
#include "manifest.h"

/* Write m (a part of job o->job) to o->part: 0, or -1 with err. */
int sr_parts_put(struct sr_store *st, const struct sr_ckpt_opts *o, const struct sr_manifest *m,
    char *err);

/* Wait for each of o->merge (polling every 0.1 s until o->deadline, or
 * o->merge_wait seconds from now, or o->cancel) and add to m (sorted, and sorted again) the entries of each
 * whose paths m lacks, in the order given; its files are added to m's
 * stats.files. 0, SR_CKPT_LATE or SR_CKPT_CANCELLED (a part missing: err
 * names it), or -1 (a part that does not parse or fails its checks). */
int sr_parts_merge(struct sr_store *st, const struct sr_ckpt_opts *o, struct sr_manifest *m,
    char *err);

/* Delete o->merge's parts, once committed (a failure is only said). */
void sr_parts_drop(struct sr_store *st, const struct sr_ckpt_opts *o);

#endif
