/*
 * gangparts.h: the parts of a gang's checkpoint (doc/format.md, "Gangs"): each
 * node but node 0 saves its directory as a part, a manifest at a key of
 * its own that commits nothing; node 0's save waits for every other
 * node's part and adds their entries to its own manifest before it
 * commits, so the gang's checkpoint is one manifest and one move of
 * LATEST. For save.c. The ranks of a library job (lib/ranks.c) do the
 * same with tensors (o->merge_ranks), rank 0 committing.
 */
#ifndef SR_GANGPARTS_H
#define SR_GANGPARTS_H

#include "ckpt.h"
#include "latest.h"
#include "manifest.h"

/* Write m (a part of job o->job) to o->part: 0, or -1 with err. */
int sr_parts_put(struct sr_store *st, const struct sr_ckpt_opts *o, const struct sr_manifest *m,
    char *err);

/* Wait for each of o->merge (polling every 0.1 s until o->deadline, or
 * o->merge_wait seconds from now, or o->cancel) and add to m (sorted, and
 * sorted again) the entries of each whose paths m lacks, in the order
 * given; its files are added to m's stats.files, the chunks copied to its
 * chunks and stored bytes, and what each part uploaded and reused to its
 * new bytes and reused chunks. 0, SR_CKPT_LATE or SR_CKPT_CANCELLED (a
 * part missing: err names it), or -1 (a part that does not parse or fails
 * its checks). With o->merge_ranks the parts' tensors join m's too
 * (pieces copied, shares of replicated tensors joined into one piece
 * each), and each tensor's pieces must tile it: SR_CKPT_MISMATCH, err
 * naming the tensor and the box or chunks in two pieces or in none, or
 * the rank of another type or shape. */
int sr_parts_merge(struct sr_store *st, const struct sr_ckpt_opts *o, struct sr_manifest *m,
    char *err);

/* Delete o->merge's parts, once committed or given up (a failure is only
 * said). */
void sr_parts_drop(struct sr_store *st, const struct sr_ckpt_opts *o);

/* Rank 0, its commit of step made: delete the ranks' parts left by
 * saves that failed (their rank died waiting): those of a lower epoch, or
 * of o->epoch and a lower step. A later save's parts (a higher step) may
 * be being written already and are left alone; failures are only said. */
void sr_parts_sweep(struct sr_store *st, const struct sr_ckpt_opts *o, long long step);

/* A rank above 0, its part o->part written: wait (polling every 0.2 s,
 * until o->deadline, or wait seconds from now when > 0, or o->cancel) for
 * rank 0's commit of step, a checkpoint above base (LATEST before this
 * save) of this step, epoch and world size. 0 once LATEST names it (its
 * seq in *seq);
 * SR_CKPT_LATE when rank 0 gave up (it deleted the part without
 * committing) or the wait ended, SR_CKPT_CANCELLED, SR_CKPT_FENCED, or
 * -1: err says which, naming the step; this rank's part is then deleted,
 * so that no later save takes it. */
int sr_parts_await(struct sr_store *st, const struct sr_ckpt_opts *o, const struct sr_latest *base,
    long long step, double wait, uint64_t *seq, char *err);

#endif
