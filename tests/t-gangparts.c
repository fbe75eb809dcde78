/*
 * t-gangparts.c: one checkpoint of a gang's nodes (ckpt/gangparts.c,
 * doc/format.md "Gangs") on a file:// store: a node's part (its manifest
 * at its key, LATEST untouched, its packs under J/packs/), node 0's save
 * waiting for the parts of the others (written while it waits, from
 * another process) and committing every node's files as one checkpoint
 * (one manifest, one LATEST, world_size of all, the parts deleted, a path
 * of two nodes taken from node 0's), restored whole on any node; the
 * next checkpoint after such a restore takes each rank's folder from its
 * own node, not node 0's restored copy; a part
 * that never comes: SR_CKPT_LATE at the deadline, its exact message,
 * nothing committed; a part at a fenced epoch: refused, nothing written.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "ckpt-util.h"
#include "ckpt-store-util.h"
#include "mdemu-util.h"

#include "catalog.h"
#include "ckpt.h"
#include "manifest.h"
#include "store.h"
#include "util.h"

static char *top;
static struct sr_store *st;
static struct tu_log lg;

/* Saves of the gang of epoch 3. */
static void
opts_init(struct sr_ckpt_opts *o, const char *job)
{
	tu_opts(o, job, 64 * 1024, 1, &lg);
	o->epoch = 3;
}

/* A node's directory: rank-R/optim of its ranks, a model on node 0, and
 * a file every node writes (meta, which node 0's wins). */
static char *
node_dir(int node, int ranks_per_node)
{
	char name[32], rel[64], text[64];
	char *p;
	int r;

	snprintf(name, sizeof name, "node%d", node);
	p = tu_path(top, name);
	if (mkdir(p, 0755) == -1)
		sr_fatal("mkdir %s: %s", p, strerror(errno));
	for (r = node * ranks_per_node; r < (node + 1) * ranks_per_node; r++) {
		snprintf(rel, sizeof rel, "rank-%d", r);
		tu_mkdir(p, rel, 0755);
		snprintf(rel, sizeof rel, "rank-%d/optim", r);
		tu_write_noise(p, rel, 100 * 1024, 100 + (uint64_t)r);
	}
	if (node == 0)
		tu_write_noise(p, "model", 300 * 1024, 7);
	snprintf(text, sizeof text, "written by node %d\n", node);
	tu_write(p, "meta", text, strlen(text));
	return p;
}

static int
exists(const char *key)
{
	struct sr_object_info info;
	char err[SR_ERRMAX];

	return sr_store_head(st, key, &info, err) == 0;
}

/* Save dir as node's part at key: 0, or the save's code. */
static int
save_part(const char *job, const char *dir, long long step, const char *key, char *err)
{
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s;

	opts_init(&o, job);
	o.part = key;
	return sr_ckpt_save(st, &o, dir, step, &s, err);
}

static void
test_commit(void)
{
	const char *merge[] = { "gj/parts/3-40-1.json", "gj/parts/3-40-2.json" };
	char *d0 = node_dir(0, 2), *d1 = node_dir(1, 2), *d2 = node_dir(2, 2), *dst, *t;
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s;
	struct sr_manifest m;
	char err[SR_ERRMAX] = "";
	int rc, status;
	pid_t pid;

	is_int(sr_ckpt_fence(st, "gj", 3, err), 0, "the job is fenced at the gang's epoch 3");
	rc = save_part("gj", d1, 40, merge[0], err);
	is_int(rc, 0, "node 1 saves its part at step 40");
	t = tu_store_text(st, "gj/LATEST");
	is_str(t, "none 3\n", "... LATEST is untouched");
	free(t);
	memset(&m, 0, sizeof m);
	t = tu_store_text(st, merge[0]);
	rc = sr_manifest_parse(t, strlen(t), &m, err);
	ok(rc == 0 && m.nentries == 5 && strcmp(m.entries[0].path, "meta") == 0 &&
	    strcmp(m.entries[1].path, "rank-2") == 0 && strcmp(m.entries[4].path,
	    "rank-3/optim") == 0 && m.entries[2].nchunks == 2 &&
	    strncmp(m.entries[2].chunks[0].pack, "gj/packs/", 9) == 0,
	    "... a manifest at its key: meta, rank-2, rank-3 and their files, packs under gj/packs/");
	ok(rc == 0 && m.stats.step == 40 && m.stats.epoch == 3, "... at step 40, epoch 3");
	sr_manifest_free(&m);
	free(t);

	/* node 0 waits; node 2's part comes 0.5 s later from another process */
	fflush(stdout);
	if ((pid = fork()) == 0) {
		char e[SR_ERRMAX];

		sr_sleep(0.5);
		_exit(save_part("gj", d2, 40, merge[1], e) == 0 ? 0 : 1);
	}
	opts_init(&o, "gj");
	o.world_size = 6;
	o.merge = merge;
	o.nmerge = 2;
	o.deadline = sr_now() + 20;
	rc = sr_ckpt_save(st, &o, d0, 40, &s, err);
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "node 2 saves its part meanwhile");
	is_int(rc, 0, "node 0 waits for both parts and commits");
	ok(rc == 0 && s.seq == 0 && s.step == 40 && s.files == 8 && s.world_size == 6,
	    "... checkpoint 0, step 40, the 8 files of 3 nodes, world size 6");
	t = tu_store_text(st, "gj/LATEST");
	is_str(t, "0 3\n", "... one move of LATEST, at epoch 3");
	free(t);
	ok(!exists(merge[0]) && !exists(merge[1]), "... the parts are deleted");

	dst = tu_path(top, "restored");
	opts_init(&o, "gj");
	rc = sr_ckpt_restore(st, &o, dst, &s, err);
	is_int(rc, 0, "a node restores it");
	ok(rc == 0 && s.world_size == 6, "... world size 6 (SPOTRUN_PREV_WORLD_SIZE)");
	t = tu_ls(dst);
	is_str(t, "meta model rank-0 rank-1 rank-2 rank-3 rank-4 rank-5", "... every node's files");
	free(t);
	for (rc = 0; rc < 6; rc++) {
		char rel[32], *p, *src;

		snprintf(rel, sizeof rel, "rank-%d/optim", rc);
		p = tu_path(dst, rel);
		src = tu_path(rc < 2 ? d0 : rc < 4 ? d1 : d2, rel);
		ok(tu_files_equal(src, p), "... rank %d's part, byte for byte", rc);
		free(p);
		free(src);
	}
	{
		char *a = tu_path(d0, "model"), *b = tu_path(dst, "model");
		char *c = tu_path(d0, "meta"), *d = tu_path(dst, "meta");

		ok(tu_files_equal(a, b), "... node 0's model too");
		ok(tu_files_equal(c, d), "a path every node wrote is node 0's");
		free(a);
		free(b);
		free(c);
		free(d);
	}
	free(dst);
	free(d0);
	free(d1);
	free(d2);
}

/* The gang's next checkpoint, after every node restored checkpoint 0
 * whole: each node's folder holds every rank's as checkpoint 0 left
 * them, and its own ranks rewrite theirs (rank 5 deletes its file). The
 * commit takes each rank's folder from its own node (node_ranks), not
 * node 0's stale copies; a folder of a rank this gang does not run is
 * taken as any other path. */
static void
test_resume(void)
{
	const char *merge[] = { "gj/parts/3-41-1.json", "gj/parts/3-41-2.json" };
	char *d[3], *dst, *t, name[16], rel[32], err[SR_ERRMAX] = "";
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s;
	int n, r, rc, restored = 0;

	for (n = 0; n < 3; n++) {
		snprintf(name, sizeof name, "again%d", n);
		d[n] = tu_path(top, name);
		opts_init(&o, "gj");
		restored += sr_ckpt_restore(st, &o, d[n], &s, err) == 0;
		for (r = 2 * n; r < 2 * n + 2; r++) {
			snprintf(rel, sizeof rel, "rank-%d/optim", r);
			if (r == 5) {
				t = tu_path(d[n], rel);
				if (unlink(t) == -1)
					sr_fatal("unlink %s: %s", t, strerror(errno));
				free(t);
			} else
				tu_write_noise(d[n], rel, 100 * 1024, 200 + (uint64_t)r);
		}
	}
	is_int(restored, 3, "every node restores checkpoint 0 whole");
	tu_write(d[1], "rank-7", "a larger gang's\n", 16);
	tu_write(d[2], "rank-01", "not rank 1's\n", 13);
	is_int(save_part("gj", d[1], 41, merge[0], err), 0, "node 1 saves its part at step 41");
	is_int(save_part("gj", d[2], 41, merge[1], err), 0, "node 2 saves its part at step 41");
	opts_init(&o, "gj");
	o.world_size = 6;
	o.merge = merge;
	o.nmerge = 2;
	o.node_ranks = 2;
	o.deadline = sr_now() + 20;
	rc = sr_ckpt_save(st, &o, d[0], 41, &s, err);
	is_int(rc, 0, "node 0 commits the parts with its own folder");
	ok(rc == 0 && s.seq == 1 && s.files == 9,
	    "... checkpoint 1: meta, model, rank-7, rank-01 and 5 ranks' files (rank 5 deleted its own)");
	dst = tu_path(top, "restored1");
	opts_init(&o, "gj");
	rc = sr_ckpt_restore(st, &o, dst, &s, err);
	is_int(rc, 0, "a node restores it");
	for (r = 0; r < 5; r++) {
		char *p, *src;

		snprintf(rel, sizeof rel, "rank-%d/optim", r);
		p = tu_path(dst, rel);
		src = tu_path(d[r / 2], rel);
		ok(tu_files_equal(src, p), "... rank %d's file as its own node wrote it", r);
		free(p);
		free(src);
	}
	t = tu_path(dst, "rank-5/optim");
	ok(access(t, F_OK) == -1 && errno == ENOENT, "... rank 5's deleted file is gone");
	free(t);
	t = tu_ls(dst);
	is_str(t, "meta model rank-0 rank-01 rank-1 rank-2 rank-3 rank-4 rank-5 rank-7",
	    "... with the paths of no rank of this gang's, from the nodes that had them");
	free(t);
	free(dst);
	for (n = 0; n < 3; n++)
		free(d[n]);
}

/* Node 0's save of dir at step 50 waiting for the one part merge[0], the
 * deadline in deadline seconds, merge_wait wait: the save's code. */
static int
merge_save(const char *dir, const char *const *merge, double deadline, double wait, char *err)
{
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s;

	opts_init(&o, "gj");
	o.merge = merge;
	o.nmerge = 1;
	o.deadline = sr_now() + deadline;
	o.merge_wait = wait;
	return sr_ckpt_save(st, &o, dir, 50, &s, err);
}

static void
test_late(void)
{
	const char *merge[] = { "gj/parts/3-50-1.json" };
	char *d0 = tu_path(top, "node0"), *t;
	char err[SR_ERRMAX] = "";
	double t0;
	int rc;

	t0 = sr_mono();
	rc = merge_save(d0, merge, 0.5, 0, err);
	is_int(rc, SR_CKPT_LATE, "a part that never comes: SR_CKPT_LATE at the deadline");
	ok(sr_mono() - t0 >= 0.45 && sr_mono() - t0 < 5, "... after 0.5 s");
	is_str(err, "checkpoint of gj missed its deadline waiting for part gj/parts/3-50-1.json "
	    "(another node of the gang did not save its part); nothing committed", "... its message");
	t = tu_store_text(st, "gj/LATEST");
	is_str(t, "1 3\n", "... LATEST unchanged (test_resume's checkpoint 1)");
	free(t);
	ok(!exists("gj/manifests/0000000002.json"), "... no manifest written");

	t0 = sr_mono();
	rc = merge_save(d0, merge, 600, 0.5, err);
	is_int(rc, SR_CKPT_LATE, "a part that does not come within merge_wait: SR_CKPT_LATE");
	ok(sr_mono() - t0 >= 0.45 && sr_mono() - t0 < 5, "... after 0.5 s, the deadline far off");
	is_str(err, "checkpoint of gj: part gj/parts/3-50-1.json did not come within 0.5s (another "
	    "node of the gang did not save its part); nothing committed", "... its message");

	is_int(sr_ckpt_fence(st, "gj", 4, err), 0, "(a newer gang fences the job at epoch 4)");
	rc = save_part("gj", d0, 60, "gj/parts/3-60-1.json", err);
	is_int(rc, SR_CKPT_FENCED, "a part of the old gang (epoch 3) is fenced out");
	ok(!exists("gj/parts/3-60-1.json"), "... nothing written");
	free(d0);
}

int
main(void)
{
	char err[SR_ERRMAX], *url, *dir;

	no_cloud();
	top = tu_tmpdir("t-gangparts");
	dir = tu_path(top, "store");
	url = sr_asprintf("file://%s", dir);
	if (mkdir(dir, 0755) == -1 || sr_store_open(url, &st, err) != 0) {
		printf("Bail out! open store %s: %s\n", url, err);
		return 1;
	}
	test_commit();
	test_resume();
	test_late();
	sr_store_close(st);
	tu_rmtree(top);
	free(url);
	free(dir);
	return tap_done();
}
