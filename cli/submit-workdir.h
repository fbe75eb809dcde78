/*
 * submit-workdir.h: what `spotrun submit` ships with a job: its working
 * directory as a snapshot in the queue's checkpoint store (ckpt/snapshot.h),
 * on the chain of its file's name, taken once per file given (a sweep's
 * trials share it) before anything is queued; its id goes into each job's
 * meta.json, and the agent restores exactly that one (doc/fleet.md, "Your
 * code on the machines").
 */
#ifndef SR_SUBMIT_WORKDIR_H
#define SR_SUBMIT_WORKDIR_H

#include <stddef.h>

#include "fleet.h"
#include "store.h"
#include "submit-jobs.h"

struct sr_submit_ship {
	struct sr_store *st;		/* Q/ckpt, opened at the first snapshot */
	char **ids;			/* per file: its snapshot's id, NULL: none (yet) */
	size_t n;
};

/* Ship file f of p (nothing for a file with ship_workdir = no, or one
 * shipped already): the snapshot taken and said on stdout ("NAME: workdir
 * DIR: snapshot SEQ, N files, B bytes; uploaded C chunks, U bytes (R
 * chunks already in the store)"), its id in sh->ids[f]. 0, or an exit code
 * after saying why on stderr: 65 for a directory over workdir_max (the
 * total, the biggest entries and the fix), 74 when the directory cannot
 * be read or the store written. */
int sr_submit_ship(struct sr_submit_ship *sh, struct sr_fleet *fl, const struct sr_submit_plan *p,
    size_t f);
void sr_submit_ship_free(struct sr_submit_ship *sh);

#endif
