/*
 * fleet-target.h: what the fleet's commands are pointed at, as job ids in
 * the queue: a job file (its job; a sweep file, its trials), a job's id,
 * or a sweep's name (its trials, found in the status markers).
 */
#ifndef SR_FLEET_TARGET_H
#define SR_FLEET_TARGET_H

#include <stddef.h>

#include "fleet-index.h"
#include "fleet.h"

struct sr_fleet_ids {
	char **v;			/* each job once, in the order given */
	unsigned char *of_sweep;	/* 1: named as a sweep's (its name or file) */
	size_t n;
};

/*
 * Resolve the n arguments: a job file (sr_target_is_file; loaded as every
 * command loads one, its errors printed) gives its job's id, a sweep file
 * its trials' ids (NAME.NNN); a NAME is, with ix, the job of that id in
 * ix, else the trials of sweep NAME in ix; without ix (NULL), the id of a
 * job as it is. where names the queue in messages. 0 with *out
 * (sr_fleet_ids_free), or after saying why on stderr 65 (a job file that
 * is not valid), 64 (a NAME that cannot be a job's), 66 (a NAME of no job
 * or sweep in ix).
 */
int sr_fleet_targets(char *const *args, int n, const struct sr_fleet_index *ix,
    const char *where, struct sr_fleet_ids *out);
void sr_fleet_ids_free(struct sr_fleet_ids *ids);

/* Whether any of the n arguments is a NAME, not a job file: a caller
 * reads the index only then (status reads it anyway). */
int sr_fleet_targets_need_index(char *const *args, int n);

/* sr_fleet_targets for a command on fl's queue, with the index read
 * into ix first when a NAME may be a sweep's (sr_fleet_index_free ix
 * after, whatever was read): 0, or an exit code (74: the listing failed). */
int sr_fleet_read_targets(struct sr_fleet *fl, char *const *args, int n,
    struct sr_fleet_index *ix, struct sr_fleet_ids *out);

#endif
