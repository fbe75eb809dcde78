/*
 * submit-workdir.c: a submitted job's working directory shipped as a
 * snapshot (submit-workdir.h). Besides what the snapshot always leaves
 * out (.git, .spotrun, the ignore files' rules), the job's local
 * checkpoint folder and the queue's and the job's store folders, when they
 * lie inside the directory, are never taken: they are the job's state,
 * not its code.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"
#include "cmd.h"
#include "jobkeys.h"
#include "snapshot.h"
#include "submit-workdir.h"
#include "util.h"

/* path below dir, as a path relative to it (malloc'd), or NULL. */
static char *
below(const char *dir, const char *path)
{
	size_t n = strlen(dir);

	if (path == NULL || strncmp(path, dir, n) != 0 || path[n] != '/' || path[n + 1] == '\0')
		return NULL;
	return sr_strdup(path + n + 1);
}

static void
say_warning(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "spotrun: %s: %s\n", (const char *)arg, msg);
}

int
sr_submit_ship(struct sr_submit_ship *sh, struct sr_fleet *fl, const struct sr_submit_plan *p,
    size_t f)
{
	const struct sr_submit_file *file = &p->files[f];
	const struct sr_jobspec *js = file->js;
	struct sr_snapshot_opts so;
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats stats;
	char err[SR_ERRMAX], *chain, *never[3], as[64] = "";
	size_t i, nnever = 0;
	uint64_t up, same;
	int rc;

	if (!js->ship_workdir)
		return 0;
	if (sh->ids == NULL) {
		sh->n = p->nfiles;
		sh->ids = sr_calloc(sh->n + 1, sizeof *sh->ids);
	}
	if (sh->ids[f] != NULL)
		return 0;
	if (sh->st == NULL && sr_store_open(sr_queue_ckpt_url(fl->q), &sh->st, err) == -1) {
		fprintf(stderr, "spotrun: %s: ship its workdir: %s\n", file->path, err);
		return SR_EXIT_IOERR;
	}
	if ((never[nnever] = below(js->workdir, js->local_dir)) != NULL)
		nnever++;
	if ((never[nnever] = below(js->workdir, sr_store_url_path(fl->url))) != NULL)
		nnever++;
	if (js->store_line != 0 && (never[nnever] = below(js->workdir,
	    sr_store_url_path(js->store))) != NULL)
		nnever++;
	memset(&so, 0, sizeof so);
	so.max_bytes = js->workdir_max;
	so.never = (const char *const *)never;
	so.nnever = nnever;
	memset(&o, 0, sizeof o);
	chain = sr_jobkey_workdir(file->name, err);
	if (chain == NULL)
		sr_fatal("%s", err);
	o.job = chain;
	o.log = say_warning;
	o.log_arg = (void *)file->path;
	rc = sr_snapshot_save(sh->st, &o, js->workdir, &so, &stats, err);
	for (i = 0; i < nnever; i++)
		free(never[i]);
	if (rc == SR_SNAPSHOT_TOO_BIG) {
		fprintf(stderr, "spotrun: %s: workdir %s; leave files out with a .spotrunignore "
		    "(gitignore's syntax) or raise workdir_max in [job] (e.g. workdir_max = 4GiB); "
		    "nothing was submitted\n", file->path, err);
		free(chain);
		return SR_EXIT_BADSPEC;
	}
	if (rc == SR_SNAPSHOT_BAD_RULES) {
		fprintf(stderr, "spotrun: %s: ship its workdir: %s; fix or remove that rule; "
		    "nothing was submitted\n", file->path, err);
		free(chain);
		return SR_EXIT_BADSPEC;
	}
	if (rc != 0) {
		fprintf(stderr, "spotrun: %s: ship its workdir: %s\n", file->path, err);
		free(chain);
		return SR_EXIT_IOERR;
	}
	if (sr_snapshot_settle(sh->st, chain, stats.seq, &same, err) == -1) {
		fprintf(stderr, "spotrun: %s: ship its workdir: %s\n", file->path, err);
		free(chain);
		return SR_EXIT_IOERR;
	}
	if ((sh->ids[f] = sr_snapshot_id(chain, same, err)) == NULL)
		sr_fatal("%s", err);
	up = stats.chunks - stats.reused_chunks;
	if (same != stats.seq)
		snprintf(as, sizeof as, " (the tree of snapshot %llu)", (unsigned long long)same);
	printf("%s: workdir %s: snapshot %llu%s, %llu file%s, %llu bytes; uploaded %llu chunk%s, "
	    "%llu bytes (%llu chunk%s already in the store)\n", file->name, js->workdir,
	    (unsigned long long)stats.seq, as, (unsigned long long)stats.files,
	    stats.files == 1 ? "" : "s", (unsigned long long)stats.raw_bytes,
	    (unsigned long long)up, up == 1 ? "" : "s", (unsigned long long)stats.new_bytes,
	    (unsigned long long)stats.reused_chunks, stats.reused_chunks == 1 ? "" : "s");
	free(chain);
	return 0;
}

void
sr_submit_ship_free(struct sr_submit_ship *sh)
{
	size_t i;

	for (i = 0; i < sh->n; i++)
		free(sh->ids[i]);
	free(sh->ids);
	if (sh->st != NULL)
		sr_store_close(sh->st);
	memset(sh, 0, sizeof *sh);
}
