/*
 * fleet-target.c: the fleet's commands' arguments as job ids
 * (fleet-target.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "fleet-target.h"
#include "jobfile.h"
#include "similar.h"
#include "sweep.h"
#include "target.h"
#include "termsafe.h"
#include "util.h"

/* Add id unless an earlier argument gave it (the ids one argument gives
 * are distinct: scanning only the earlier ones keeps a sweep of 10,000
 * trials linear). */
static void
add_id(struct sr_fleet_ids *ids, size_t earlier, const char *id, int of_sweep)
{
	size_t i;

	for (i = 0; i < earlier; i++)
		if (strcmp(ids->v[i], id) == 0)
			return;
	ids->v = sr_reallocarray(ids->v, ids->n + 1, sizeof *ids->v);
	ids->of_sweep = sr_reallocarray(ids->of_sweep, ids->n + 1, 1);
	ids->v[ids->n] = sr_strdup(id);
	ids->of_sweep[ids->n++] = (unsigned char)of_sweep;
}

/* A job file's ids: its job's, or its trials'. */
static int
file_ids(const char *path, struct sr_fleet_ids *ids, size_t earlier)
{
	struct sr_jobspec *js;
	char name[SR_JOBSPEC_NAME_MAX + 1], err[SR_ERRMAX];
	size_t t, n;

	if (sr_jobfile_load(path, &js) != SR_JOBFILE_OK)
		return SR_EXIT_BADSPEC;
	n = sr_sweep_count(js);
	if (n == 0)
		add_id(ids, earlier, js->name, 0);
	for (t = 0; t < n; t++) {
		if (sr_sweep_trial_name(js, t, name, err) == -1) {	/* the parser refuses such */
			fprintf(stderr, "spotrun: %s: %s\n", path, err);
			sr_jobspec_free(js);
			return SR_EXIT_BADSPEC;
		}
		add_id(ids, earlier, name, 1);
	}
	sr_jobspec_free(js);
	return 0;
}

/* Say that name is no job or sweep of ix, with the closest that is. */
static void
not_found(const char *name, const struct sr_fleet_index *ix, const char *where)
{
	const char **cands = sr_calloc(2 * ix->n + 1, sizeof *cands);
	char **sweeps = sr_calloc(ix->n + 1, sizeof *sweeps), sweep[SR_QUEUE_ID_MAX + 1];
	size_t i, n = 0, ns = 0;
	int k;

	for (i = 0; i < ix->n; i++) {
		cands[n++] = ix->v[i].id;
		if (sr_fleet_sweep_of(ix->v[i].id, sweep, sizeof sweep) &&
		    (ns == 0 || strcmp(sweeps[ns - 1], sweep) != 0))
			cands[n++] = sweeps[ns++] = sr_strdup(sweep);
	}
	k = sr_similar_closest(name, cands, n);
	if (k >= 0)
		fprintf(stderr, "spotrun: %s: no such job or sweep in queue %s; did you mean %s? "
		    "(spotrun status lists the jobs)\n", name, where, cands[k]);
	else
		fprintf(stderr, "spotrun: %s: no such job or sweep in queue %s; spotrun status "
		    "lists the jobs\n", name, where);
	for (i = 0; i < ns; i++)
		free(sweeps[i]);
	free(sweeps);
	free(cands);
}

int
sr_fleet_targets(char *const *args, int n, const struct sr_fleet_index *ix,
    const char *where, struct sr_fleet_ids *out)
{
	char err[SR_ERRMAX], safe[SR_TERMSAFE_LEN(SR_QUEUE_KEY_MAX)];
	const char *broken;
	size_t *rows, nrows, k, earlier;
	int i, rc;

	memset(out, 0, sizeof *out);
	for (i = 0; i < n; i++) {
		earlier = out->n;
		if (sr_target_is_file(args[i])) {
			if ((rc = file_ids(args[i], out, earlier)) != 0)
				goto fail;
			continue;
		}
		if (sr_lease_job_check(args[i], err) == -1) {
			fprintf(stderr, "spotrun: %s is not a job file, and %s\n", args[i], err);
			rc = SR_EXIT_USAGE;
			goto fail;
		}
		if (ix == NULL || sr_fleet_index_find(ix, args[i]) != NULL) {
			add_id(out, earlier, args[i], 0);
			continue;
		}
		if ((broken = sr_fleet_index_broken(ix, args[i])) != NULL) {
			/* its lease and meta.json are what cancel and requeue trust */
			fprintf(stderr, "spotrun: warning: job %s: status marker %s in queue %s does "
			    "not parse (not of the form index/ID~EPOCH~...; doc/fleet.md): going by "
			    "the job's meta.json and lease; the next write of its state replaces the "
			    "marker\n", args[i], sr_termsafe(broken, safe, sizeof safe), where);
			add_id(out, earlier, args[i], 0);
			continue;
		}
		if ((nrows = sr_fleet_index_sweep(ix, args[i], &rows)) == 0) {
			not_found(args[i], ix, where);
			rc = SR_EXIT_NOINPUT;
			goto fail;
		}
		for (k = 0; k < nrows; k++)
			add_id(out, earlier, ix->v[rows[k]].id, 1);
		free(rows);
	}
	return 0;
fail:
	sr_fleet_ids_free(out);
	return rc;
}

void
sr_fleet_ids_free(struct sr_fleet_ids *ids)
{
	size_t i;

	for (i = 0; i < ids->n; i++)
		free(ids->v[i]);
	free(ids->v);
	free(ids->of_sweep);
	memset(ids, 0, sizeof *ids);
}

int
sr_fleet_targets_need_index(char *const *args, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!sr_target_is_file(args[i]))
			return 1;
	return 0;
}

int
sr_fleet_read_targets(struct sr_fleet *fl, char *const *args, int n,
    struct sr_fleet_index *ix, struct sr_fleet_ids *out)
{
	char err[SR_ERRMAX];
	int rc;

	memset(ix, 0, sizeof *ix);
	memset(out, 0, sizeof *out);
	if (sr_fleet_targets_need_index(args, n) && sr_fleet_index_read(fl->q, ix, err) == -1) {
		fprintf(stderr, "spotrun: queue %s: %s\n", fl->where, err);
		return SR_EXIT_IOERR;
	}
	if ((rc = sr_fleet_targets(args, n, ix, fl->where, out)) != 0)
		sr_fleet_index_free(ix);
	return rc;
}
