/*
 * agent-workdir.c: a claimed job's shipped working directory made real on
 * this machine (sr_agent_workdir, agent-int.h): its snapshot (the id its
 * meta.json names, in the queue's checkpoint store; ckpt/snapshot.h)
 * restored once per machine into DIR/workdirs/<name>, <name> unique to the
 * store and the id, which stays pristine, then copied for each claim into
 * DIR/jobs/ID/workdir, the job's own to write in. A flock on
 * DIR/workdirs/<name>.lock keeps two agents of one machine from restoring
 * one snapshot at once, or one from swapping a tree in under the other's
 * copy. A job resumed on another machine restores it there.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent-int.h"
#include "ckpt.h"
#include "copytree.h"
#include "snapshot.h"
#include "util.h"

static void
say_restore(void *arg, const char *msg)
{
	sr_agent_say("%s: workdir: %s", (const char *)arg, msg);
}

/* Restore snapshot snap into cache, unless it is there: 0, or -1 with err. */
static int
restore_once(struct sr_agent *ag, const char *id, const char *snap, const char *cache,
    char *err)
{
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats stats;
	struct sr_store *st;
	struct stat sb;
	char b[32];
	int rc;

	if (stat(cache, &sb) == 0 && S_ISDIR(sb.st_mode))
		return 0;	/* a restore swaps in only a whole, checked tree */
	if (sr_store_open(sr_queue_ckpt_url(ag->q), &st, err) == -1)
		return sr_err_prefix(err, "restore workdir %s", snap);
	memset(&o, 0, sizeof o);
	o.job = "";
	o.log = say_restore;
	o.log_arg = (void *)id;
	rc = sr_snapshot_restore(st, &o, snap, cache, &stats, err);
	sr_store_close(st);
	if (rc == 0)
		sr_agent_say("%s: workdir: snapshot %s restored into %s (%" PRIu64 " files, %s)", id,
		    snap, cache, stats.files, sr_fmt_bytes(stats.raw_bytes, b, sizeof b));
	return rc;
}

int
sr_agent_workdir(struct sr_agent *ag, const char *id, const char *snap, char **out, char *err)
{
	char name[33], *cache = NULL, *lock = NULL, *copy = NULL, *top;
	int fd = -1, rc = -1;

	if (sr_snapshot_cache_name(sr_queue_ckpt_url(ag->q), snap, name, err) == -1)
		return -1;
	top = sr_asprintf("%s/workdirs", ag->dir);
	cache = sr_asprintf("%s/%s", top, name);
	lock = sr_asprintf("%s/%s.lock", top, name);
	copy = sr_asprintf("%s/jobs/%s/workdir", ag->dir, id);
	if (sr_mkdirs(top, 0755, err) == -1)
		goto out;
	if ((fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644)) == -1) {
		sr_errno(err, "open %s", lock);
		goto out;
	}
	while (flock(fd, LOCK_EX) == -1) {
		if (errno != EINTR) {
			sr_errno(err, "lock %s", lock);
			goto out;
		}
	}
	if (restore_once(ag, id, snap, cache, err) == -1)
		goto out;
	/* a copy of an earlier claim of the job goes: each claim starts
	 * from the snapshot */
	if (sr_rmtree(copy, err) == -1)
		goto out;
	if (sr_copytree(cache, copy, err) == -1) {
		char e2[SR_ERRMAX];

		(void)sr_rmtree(copy, e2);
		goto out;
	}
	*out = copy;
	copy = NULL;
	rc = 0;
out:
	if (fd != -1)
		close(fd);	/* and its lock */
	free(top);
	free(cache);
	free(lock);
	free(copy);
	return rc;
}
