/*
 * t-fence.c: checkpoints of one job written by more than one run at once,
 * on a file:// store and on a real S3 server (Ceph RGW, started by
 * build-aux/test-all; its part skips without one, or fails under
 * SPOTRUN_TEST_REQUIRE_S3=1). Each writer is a process of its own, as on
 * another machine, paused or slowed at a named fault point
 * (common/fault.h):
 *
 * 1. The race found in acceptance (issue 11): writer A's gc is delayed just
 *    before it lists the packs, writer B commits a checkpoint meanwhile (and
 *    runs its own retention): the newest checkpoint must stay restorable,
 *    during the race and after it. Before the fix, A's gc deleted B's new
 *    pack: LATEST named a checkpoint whose pack was gone ("pack ... is
 *    missing; no older checkpoint").
 * 2. A stale writer: a run of epoch 1 stopped (SIGSTOP) after its packs,
 *    before or after its manifest; a run of epoch 2 fences, restores and
 *    commits; the old one resumes (SIGCONT): SR_CKPT_FENCED with the exact
 *    message, LATEST unchanged, its manifest gone (or never written). Killed
 *    instead, its manifest stays off the chain: never listed, never
 *    restored (a fallback takes the parent), removed by gc.
 * 3. 16 runs of distinct epochs, each fencing then saving, at once: each
 *    commits or is fenced out; LATEST's epoch and seq never go down while
 *    they run; every commit is on the chain; epoch 16's wins.
 * 4. sr_ckpt_fence on a job without a checkpoint ("none EPOCH"), again at
 *    the same epoch, at a lower one (refused), over garbage and a missing
 *    LATEST; a save and a gc of a lower epoch change nothing.
 * 5. What versions before the chain wrote (no parent, no epoch, LATEST
 *    "SEQ"): listed, restored and fallen back by the old rule; a fenced
 *    save on top chains to it.
 * 6. gc's grace period: a save stopped with its pack written keeps it; one
 *    that outlives half of the grace finds what a gc took and commits
 *    nothing.
 * 7. Lost races within one epoch: a commit that finds LATEST moved below
 *    it names the new one as its parent; one moved past it is overtaken;
 *    one whose reused pack a retention dropped meanwhile commits nothing.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "ckpt-util.h"
#include "ckpt-store-util.h"
#include "s3-util.h"

#include "catalog.h"
#include "ckpt.h"
#include "jobkeys.h"
#include "manifest.h"
#include "store.h"
#include "util.h"

static char *top;
static struct tu_log lg;

/* Where the checkpoints go: a file:// store, or the S3 server. */
struct target {
	const char *name;	/* "file" or "s3", in test names */
	char *url;		/* NULL: not available (the S3 part skips) */
	struct sr_store *st;	/* this process's handle */
};

static void
opts_init(struct sr_ckpt_opts *o, const char *job)
{
	tu_opts(o, job, 64 * 1024, 1, &lg);
}

/* A source tree of one writer: f says who wrote it, noise is its own. */
static char *
source(const char *name, const char *text, uint64_t seed)
{
	char *p = tu_path(top, name);

	if (mkdir(p, 0755) == -1 && errno != EEXIST)
		sr_fatal("mkdir %s: %s", p, strerror(errno));
	tu_write(p, "f", text, strlen(text));
	tu_write_noise(p, "noise", 200 * 1024, seed);
	return p;
}

/* Restore the job into a fresh directory; 0 when it restored checkpoint
 * seq and equals src, else a line saying what happened. */
static int
restores(struct target *t, const char *job, uint64_t seq, const char *src, char *why,
    size_t wlen)
{
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s;
	char err[SR_ERRMAX] = "", *dst = tu_path(top, "dst");
	char diff[512] = "";
	int rc;

	opts_init(&o, job);
	memset(&s, 0, sizeof s);
	rc = sr_ckpt_restore(t->st, &o, dst, &s, err);
	if (rc != 0)
		snprintf(why, wlen, "rc %d: %s", rc, err);
	else if (s.seq != seq)
		snprintf(why, wlen, "restored checkpoint %" PRIu64 ", not %" PRIu64, s.seq, seq);
	else if (tu_tree_cmp(src, dst, "", diff, sizeof diff) != 0)
		snprintf(why, wlen, "checkpoint %" PRIu64 " differs from its source: %s", seq, diff);
	else
		rc = 0, why[0] = '\0';
	if (access(dst, F_OK) == 0)
		tu_rmtree(dst);
	free(dst);
	return why[0] == '\0' ? 0 : -1;
}

/* ---- writers in processes of their own ---- */

enum op { OP_SAVE, OP_GC, OP_FENCE, OP_HOLD };

/* What a child does: op on job at epoch (opts.epoch, the fence's), with
 * SPOTRUN_FAULT = fault (NULL: none). OP_HOLD is a new holder: fence, then
 * keep saves (saying "committed SEQ" on stderr for each). */
struct work {
	enum op op;
	const char *job, *src;
	long long step;
	int keep;
	uint64_t epoch;
	double grace;		/* opts.gc_grace */
	const char *fault;
};

struct child {
	pid_t pid;
	int errfd;		/* read end of its stderr */
	int resfd;		/* read end of its result line */
	char said[2048];	/* its stderr so far */
};

/* Do wk against a store of its own at url, as another machine would: save
 * (keep: its retention), gc (keep) or fence. 0 with rc, seq and err. */
static void
work_do(const char *url, const struct work *wk, int *rc, uint64_t *seq, char *err)
{
	struct sr_store *st;
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s;

	memset(&s, 0, sizeof s);
	if (sr_store_open(url, &st, err) != 0) {
		*rc = -100;
		return;
	}
	opts_init(&o, wk->job);
	o.log = NULL;
	o.keep = wk->op == OP_HOLD ? 0 : wk->keep;
	o.epoch = wk->epoch;
	o.gc_grace = wk->grace;
	if (wk->op == OP_SAVE)
		*rc = sr_ckpt_save(st, &o, wk->src, wk->step, &s, err);
	else if (wk->op == OP_GC)
		*rc = sr_ckpt_gc_log(st, &o, wk->job, wk->keep, sr_now() - 86400, NULL, err);
	else if (wk->op == OP_FENCE)
		*rc = sr_ckpt_fence(st, wk->job, wk->epoch, err);
	else {
		/* a new holder: fence first, then save; a lost race (not a
		 * fence) is retried, as a runner would at its next period */
		int tries = 0;

		int saves = 0;

		if ((*rc = sr_ckpt_fence(st, wk->job, wk->epoch, err)) != 0)
			saves = wk->keep;
		for (; saves < wk->keep; saves++) {
			while ((*rc = sr_ckpt_save(st, &o, wk->src, wk->step, &s, err)) == -1 &&
			    (strstr(err, "was committed by another writer") != NULL ||
			    strstr(err, "of another writer; nothing committed") != NULL) &&
			    ++tries < 50)
				;
			if (*rc != 0)
				break;
			/* what it committed, for the parent to find on the chain */
			fprintf(stderr, "committed %" PRIu64 "\n", s.seq);
		}
	}
	*seq = s.seq;
	sr_store_close(st);
}

/* Run wk in a new process. The child reports "RC SEQ ERR" on its result
 * pipe; its stderr (where fault points speak) comes to c->said. */
static void
child_start(struct child *c, const char *url, const struct work *wk)
{
	int ep[2], rp[2];

	memset(c, 0, sizeof *c);
	if (pipe(ep) == -1 || pipe(rp) == -1)
		sr_fatal("pipe: %s", strerror(errno));
	fflush(stdout);
	if ((c->pid = fork()) == -1)
		sr_fatal("fork: %s", strerror(errno));
	if (c->pid == 0) {
		char err[SR_ERRMAX] = "", *line;
		uint64_t seq = 0;
		int rc;

		close(ep[0]);
		close(rp[0]);
		dup2(ep[1], 2);
		if (wk->fault != NULL)
			setenv("SPOTRUN_FAULT", wk->fault, 1);
		else
			unsetenv("SPOTRUN_FAULT");
		work_do(url, wk, &rc, &seq, err);
		line = sr_asprintf("%d %" PRIu64 " %s\n", rc, seq, rc == 0 ? "" : err);
		if (sr_write_all(rp[1], line, strlen(line)) == -1)
			_exit(3);
		_exit(0);
	}
	close(ep[1]);
	close(rp[1]);
	c->errfd = ep[0];
	c->resfd = rp[0];
}

/* Wait until the child stopped itself (a fault point's stop): 1, or 0 if
 * it ended instead. */
static int
child_stopped(struct child *c)
{
	int status;

	return waitpid(c->pid, &status, WUNTRACED) == c->pid && WIFSTOPPED(status);
}

/* Read what the child wrote to stderr for up to secs seconds, until a line
 * holds want: 1 once it does, 0 if it exited or the time ran out first. */
static int
child_wait_said(struct child *c, const char *want, double secs)
{
	double end = sr_mono() + secs;
	size_t n = strlen(c->said);

	while (strstr(c->said, want) == NULL) {
		struct pollfd p = { .fd = c->errfd, .events = POLLIN };
		double left = end - sr_mono();
		ssize_t r;

		if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			return 0;
		r = read(c->errfd, c->said + n, sizeof c->said - 1 - n);
		if (r <= 0)
			return 0;
		n += (size_t)r;
		c->said[n] = '\0';
	}
	return 1;
}

/* Whether the child has reported (or died): its result pipe is readable. */
static int
child_done(struct child *c)
{
	struct pollfd p = { .fd = c->resfd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

/* Wait for the child's end; its rc, seq and message. -1 if it did not
 * report (it died). */
static int
child_end(struct child *c, int *rc, uint64_t *seq, char *err)
{
	char buf[SR_ERRMAX + 64];
	ssize_t n;
	size_t got = 0;
	unsigned long long s = 0;
	int status, off = 0;

	while ((n = read(c->resfd, buf + got, sizeof buf - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	child_wait_said(c, "\n\n(never)", 0.01);
	close(c->resfd);
	close(c->errfd);
	waitpid(c->pid, &status, 0);
	if (got == 0 || sscanf(buf, "%d %llu %n", rc, &s, &off) != 2) {
		snprintf(err, SR_ERRMAX, "child %d died (status %#x): %s", (int)c->pid, status,
		    c->said);
		return -1;
	}
	buf[strcspn(buf, "\n")] = '\0';
	snprintf(err, SR_ERRMAX, "%s", buf + off);
	if (seq != NULL)
		*seq = s;
	return 0;
}

/* rc, with err emptied when rc is 0 (a success may leave a store's
 * "no such key" behind, which would only confuse a test's line). */
static int
quiet(int rc, char *err)
{
	if (rc == 0)
		err[0] = '\0';
	return rc;
}

/* A save from this process at epoch, keeping keep (0: all). */
static int
save_at(struct target *t, const char *job, const char *src, long long step, int keep,
    uint64_t epoch, struct sr_ckpt_stats *s, char *err)
{
	struct sr_ckpt_opts o;

	opts_init(&o, job);
	o.keep = keep;
	o.epoch = epoch;
	memset(s, 0, sizeof *s);
	return quiet(sr_ckpt_save(t->st, &o, src, step, s, err), err);
}

/* sr_ckpt_fence from this process. */
static int
fence(struct target *t, const char *job, uint64_t epoch, char *err)
{
	return quiet(sr_ckpt_fence(t->st, job, epoch, err), err);
}

/* gc from this process at epoch, with grace (seconds; < 0 none). */
static int
gc_at(struct target *t, const char *job, int keep, uint64_t epoch, double grace, char *err)
{
	struct sr_ckpt_opts o;

	opts_init(&o, job);
	o.epoch = epoch;
	o.gc_grace = grace;
	return quiet(sr_ckpt_gc_log(t->st, &o, job, keep, sr_now() - 86400, NULL, err), err);
}

/* An object's contents as a string ("" when missing). */
static char *
text_of(struct target *t, const char *key)
{
	char err[SR_ERRMAX];
	void *buf;
	size_t len;

	if (sr_store_get(t->st, key, 1 << 20, &buf, &len, NULL, err) != 0)
		return sr_strdup("");
	return buf;
}

static void
put_text(struct target *t, const char *key, const char *text)
{
	char err[SR_ERRMAX];

	if (sr_store_put(t->st, key, text, strlen(text), SR_PUT_OVERWRITE, NULL, NULL, err) != 0)
		sr_fatal("%s", err);
}

/* Whether job's LATEST holds exactly want. */
static int
latest_is(struct target *t, const char *job, const char *want)
{
	char *key = sr_jobkey_latest(job, NULL), *got = text_of(t, key);
	int same = strcmp(got, want) == 0;

	if (!same)
		printf("# %s holds \"%s\", not \"%s\"\n", key, got, want);
	free(got);
	free(key);
	return same;
}

static int
manifest_exists(struct target *t, const char *job, uint64_t seq)
{
	struct sr_object_info info;
	char *key = sr_jobkey_manifest(job, seq, NULL), err[SR_ERRMAX];
	int rc = sr_store_head(t->st, key, &info, err);

	free(key);
	return rc == 0;
}

static int
count_cb(const struct sr_object_info *info, void *arg)
{
	(void)info;
	++*(int *)arg;
	return 0;
}

/* Objects under job/packs/. */
static int
packs_of(struct target *t, const char *job)
{
	char *prefix = sr_asprintf("%s/packs/", job), err[SR_ERRMAX];
	int n = 0;

	sr_store_list(t->st, prefix, count_cb, &n, err);
	free(prefix);
	return n;
}

static int
list_cb(const struct sr_ckpt_stats *ck, int is_latest, void *arg)
{
	char *l = arg;
	size_t n = strlen(l);

	snprintf(l + n, 512 - n, "%s%" PRIu64 ":%lld%s%s", n ? " " : "", ck->seq, ck->step,
	    is_latest ? "*" : "", ck->problem ? "!" : "");
	return 0;
}

/* The listing as "SEQ:STEP" words, the latest starred, a problem "!". */
static char *
listing(struct target *t, const char *job)
{
	char l[512] = "", err[SR_ERRMAX];

	if (sr_ckpt_list(t->st, job, list_cb, l, err) != 0)
		return sr_strdup(err);
	return sr_strdup(l);
}

/* The pack key of manifest seq's first chunk (malloc'd; "" if none). */
static char *
first_pack(struct target *t, const char *job, uint64_t seq)
{
	struct sr_manifest m;
	char err[SR_ERRMAX], *k = sr_strdup("");
	size_t i;

	if (sr_catalog_load(t->st, job, seq, &m, err) == 0) {
		for (i = 0; i < m.nentries && *k == '\0'; i++) {
			if (m.entries[i].nchunks > 0) {
				free(k);
				k = sr_strdup(m.entries[i].chunks[0].pack);
			}
		}
	}
	sr_manifest_free(&m);
	return k;
}

/* ---- 1. the acceptance race: a gc delayed, a commit meanwhile ---- */

static void
test_gc_race(struct target *t)
{
	char *a = source("gr-a", "writer A", 1), *b = source("gr-b", "writer B", 2);
	char err[SR_ERRMAX] = "", why[SR_ERRMAX + 64] = "", first[SR_ERRMAX + 64] = "";
	struct sr_ckpt_stats s;
	struct child g;
	uint64_t seq;
	int rc, polls = 0, broken = 0;

	rc = save_at(t, "gr", a, 1, 0, 0, &s, err);
	ok(rc == 0 && s.seq == 0, "%s: gc race: A commits checkpoint 0 %s", t->name,
	    rc ? err : "");
	/* A's retention: its gc stops for 4 s just before it lists the packs */
	child_start(&g, t->url, &(struct work){ .op = OP_GC, .job = "gr", .keep = 1,
	    .fault = "ckpt-gc-list:delay=4" });
	ok(child_wait_said(&g, "spotrun: fault injected at ckpt-gc-list: delaying 4 s", 30),
	    "%s: gc race: A's gc is delayed before it lists the packs", t->name);
	/* meanwhile B commits checkpoint 1 and keeps 1 */
	rc = save_at(t, "gr", b, 2, 1, 0, &s, err);
	ok(rc == 0 && s.seq == 1 && !child_done(&g), "%s: gc race: B commits checkpoint 1 while "
	    "A's gc waits (rc %d, seq %" PRIu64 ") %s", t->name, rc, s.seq, rc ? err : "");
	/* while A's gc goes on, and once it is done: the newest is restorable */
	while (!child_done(&g) && polls < 1000) {
		polls++;
		usleep(20000);
		if (restores(t, "gr", 1, b, why, sizeof why) != 0 && broken++ == 0)
			snprintf(first, sizeof first, "%s", why);
	}
	rc = -99;
	is_int(child_end(&g, &rc, &seq, err), 0, "%s: gc race: A's gc ends %s", t->name, err);
	is_int(rc, 0, "%s: gc race: A's gc succeeds %s", t->name, err);
	if (restores(t, "gr", 1, b, why, sizeof why) != 0 && broken++ == 0)
		snprintf(first, sizeof first, "%s", why);
	ok(broken == 0, "%s: gc race: checkpoint 1 restored with B's files each time (%d "
	    "restores during A's gc, %d failed)%s%s", t->name, polls + 1, broken,
	    broken ? ": " : "", first);
	free(a);
	free(b);
}


/* ---- 2. a stale writer: stopped, fenced out, resumed ---- */

/* Old run (epoch 1) commits 0, then stops at point in its next save; a new
 * run takes over (fence 2), restores and commits; the old one resumes, or
 * is killed (kill). */
static void
stale_case(struct target *t, const char *job, const char *point, int kill_it)
{
	char *old = source("st-old", "old run", 10), *nu = source("st-new", "new run", 11);
	char err[SR_ERRMAX] = "", want[512], fault[64], why[SR_ERRMAX + 64] = "", *l, *pack;
	struct sr_ckpt_stats s;
	struct child c;
	uint64_t seq = 0, newseq = strcmp(point, "ckpt-pointer") == 0 ? 2 : 1;
	int rc = -99;

	ok(fence(t, job, 1, err) == 0 && save_at(t, job, old, 1, 0, 1, &s, err) == 0 &&
	    s.seq == 0 && latest_is(t, job, "0 1\n"), "%s: %s: the old run (epoch 1) fences and "
	    "commits 0: LATEST \"0 1\" %s", t->name, job, err);
	tu_write(old, "f", "old run, later", 14);
	snprintf(fault, sizeof fault, "%s:stop", point);
	child_start(&c, t->url, &(struct work){ .op = OP_SAVE, .job = job, .src = old, .step = 2,
	    .epoch = 1, .fault = fault });
	ok(child_stopped(&c), "%s: %s: the old run's next save stops (SIGSTOP) at %s", t->name, job,
	    point);
	snprintf(want, sizeof want, "spotrun: fault injected at %s: stopping", point);
	ok(child_wait_said(&c, want, 5), "%s: %s: ... with its packs written%s", t->name, job,
	    newseq == 2 ? " and its manifest" : "");
	ok(manifest_exists(t, job, 1) == (newseq == 2), "%s: %s: manifest 1 %s", t->name, job,
	    newseq == 2 ? "is there (written before the stop)" : "is not there yet");
	/* the new run: fence first, then restore, then save */
	is_int(fence(t, job, 2, err), 0, "%s: %s: the new run fences at epoch 2 %s",
	    t->name, job, err);
	ok(latest_is(t, job, "0 2\n"), "%s: %s: LATEST \"0 2\": the same seq, the new epoch",
	    t->name, job);
	ok(restores(t, job, 0, old, why, sizeof why) != 0 && strstr(why, "differs") != NULL,
	    "%s: %s: the new run restores checkpoint 0 (the old run changed its files since)",
	    t->name, job);
	rc = save_at(t, job, nu, 3, 0, 2, &s, err);
	ok(rc == 0 && s.seq == newseq, "%s: %s: the new run commits %" PRIu64 " (rc %d, seq %"
	    PRIu64 ") %s", t->name, job, newseq, rc, s.seq, rc ? err : "");
	snprintf(want, sizeof want, "%" PRIu64 " 2\n", newseq);
	ok(latest_is(t, job, want), "%s: %s: LATEST \"%" PRIu64 " 2\"", t->name, job, newseq);
	if (kill_it) {
		kill(c.pid, SIGKILL);
		ok(child_end(&c, &rc, &seq, err) == -1, "%s: %s: the old run is killed while "
		    "stopped", t->name, job);
		ok(manifest_exists(t, job, 1), "%s: %s: its manifest 1 stays, off the chain",
		    t->name, job);
		l = listing(t, job);
		is_str(l, "0:1 2:3*", "%s: %s: listed: 0 and 2, never 1 (2's parent is 0)", t->name,
		    job);
		free(l);
		/* the newest fails: the restore falls back along the chain */
		pack = first_pack(t, job, 2);
		ok(sr_store_delete(t->st, pack, err) == 0, "%s: %s: delete checkpoint 2's pack",
		    t->name, job);
		tu_log_clear(&lg);
		ok(restores(t, job, 0, old, why, sizeof why) != 0 && strstr(why, "checkpoint 0 "
		    "differs") != NULL, "%s: %s: the restore falls back to 0, not to the stale 1: %s",
		    t->name, job, why);
		ok(lg.n > 0 && strstr(lg.lines[0], "; falling back to checkpoint 0") != NULL,
		    "%s: %s: ... and says so: %s", t->name, job, lg.n > 0 ? lg.lines[0] : "");
		free(pack);
		is_int(gc_at(t, job, 0, 2, -1, err), 0, "%s: %s: gc (no grace) %s", t->name, job, err);
		ok(!manifest_exists(t, job, 1) && manifest_exists(t, job, 0) &&
		    manifest_exists(t, job, 2), "%s: %s: gc removed the stale manifest 1 only",
		    t->name, job);
	} else {
		kill(c.pid, SIGCONT);
		ok(child_end(&c, &rc, &seq, err) == 0, "%s: %s: the old run resumes (SIGCONT)",
		    t->name, job);
		is_int(rc, SR_CKPT_FENCED, "%s: %s: its commit is refused: SR_CKPT_FENCED", t->name,
		    job);
		snprintf(want, sizeof want, "save %s: nothing committed: job %s is now run by epoch 2 "
		    "(a newer run took it over)", job, job);
		is_str(err, want, "%s: %s: ... with the message", t->name, job);
		snprintf(want, sizeof want, "%" PRIu64 " 2\n", newseq);
		ok(latest_is(t, job, want), "%s: %s: LATEST unchanged", t->name, job);
		if (newseq == 2)
			ok(!manifest_exists(t, job, 1), "%s: %s: the old run's manifest 1 is gone "
			    "again", t->name, job);
		else
			ok(manifest_exists(t, job, 1) && restores(t, job, 1, nu, why, sizeof why) == 0,
			    "%s: %s: manifest 1 is the new run's (the old run lost the create-only "
			    "write) %s", t->name, job, why);
		snprintf(want, sizeof want, "0:1 %" PRIu64 ":3*", newseq);
		l = listing(t, job);
		is_str(l, want, "%s: %s: listed: the new run's chain", t->name, job);
		free(l);
		ok(restores(t, job, newseq, nu, why, sizeof why) == 0, "%s: %s: the restore is the "
		    "new run's checkpoint %s", t->name, job, why);
	}
	tu_rmtree(old);
	tu_rmtree(nu);
	free(old);
	free(nu);
}

static void
test_stale(struct target *t)
{
	stale_case(t, "st-manifest", "ckpt-manifest", 0);
	stale_case(t, "st-pointer", "ckpt-pointer", 0);
	stale_case(t, "st-killed", "ckpt-pointer", 1);
}

/* ---- 3. 16 runs of distinct epochs at once ---- */

#define NW 16

/* Read ep's LATEST; count it in *reads, and in *back when its epoch or
 * seq went down from *prev (or it is no form at all). */
static void
poll_latest(struct target *t, struct sr_latest *prev, int *reads, int *back)
{
	struct sr_latest l;
	char err[SR_ERRMAX];
	void *buf;
	size_t len;

	if (sr_store_get(t->st, "ep/LATEST", 256, &buf, &len, NULL, err) != 0)
		return;
	sr_latest_parse("ep", buf, len, &l);
	free(buf);
	++*reads;
	if (l.state != SR_LATEST_OK && l.state != SR_LATEST_NONE) {
		++*back;
		printf("# LATEST: %s\n", l.warning);
	} else if (l.epoch < prev->epoch || (prev->state == SR_LATEST_OK &&
	    (l.state != SR_LATEST_OK || l.seq < prev->seq))) {
		++*back;
		printf("# LATEST went back: %" PRIu64 " at %" PRIu64 " -> %" PRIu64 " at %" PRIu64
		    "\n", prev->seq, prev->epoch, l.seq, l.epoch);
	}
	*prev = l;
}

static void
test_epochs(struct target *t)
{
	/* the order in which the epochs start: rising, with neighbours swapped,
	 * so that some runs commit before a newer one takes over and some find
	 * a newer one there already */
	static const int order[NW] = { 1, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 16, 14, 15 };
	struct child c[NW];
	struct sr_latest prev;
	struct sr_manifest m;
	char *src[NW], name[32], err[SR_ERRMAX], *text;
	int rc[NW], committed = 0, fenced = 0, other = 0, reads = 0, backwards = 0, running, i;
	int on_chain = 0, epoch_order = 0, links = 0, ncs = 0, k;
	uint64_t seq[NW], at, last_epoch = UINT64_MAX, cs[3 * NW], ce[3 * NW];

	for (i = 0; i < NW; i++) {
		snprintf(name, sizeof name, "ep-%d", i);
		src[i] = source(name, name, 100 + (uint64_t)i);
	}
	/* started apart (30 ms; 200 ms on S3, where a save takes longer), 3
	 * saves each: a run of a lower epoch is still saving when one of a
	 * higher epoch fences; LATEST is read all along: its epoch never goes
	 * down, nor its seq */
	memset(&prev, 0, sizeof prev);
	for (i = 0; i < NW; i++) {
		double until = sr_mono() + (strcmp(t->name, "s3") == 0 ? 0.2 : 0.03);

		child_start(&c[i], t->url, &(struct work){ .op = OP_HOLD, .job = "ep", .src = src[i],
		    .step = order[i], .epoch = (uint64_t)order[i], .keep = 3 });
		while (sr_mono() < until) {
			poll_latest(t, &prev, &reads, &backwards);
			usleep(2000);
		}
	}
	do {
		running = 0;
		for (i = 0; i < NW; i++)
			running += !child_done(&c[i]);
		poll_latest(t, &prev, &reads, &backwards);
		usleep(2000);
	} while (running > 0);
	for (i = 0; i < NW; i++) {
		char want[256];
		const char *p;
		if (child_end(&c[i], &rc[i], &seq[i], err) == -1) {
			other++;
			printf("# %s\n", err);
			continue;
		}
		for (p = c[i].said; (p = strstr(p, "committed ")) != NULL && ncs < 3 * NW; p++) {
			cs[ncs] = strtoull(p + 10, NULL, 10);
			ce[ncs++] = (uint64_t)order[i];
		}
		if (rc[i] == 0)
			continue;
		snprintf(want, sizeof want, "fence ep at epoch %d: job ep is now run by epoch ",
		    order[i]);
		if (rc[i] == SR_CKPT_FENCED && (strncmp(err, want, strlen(want)) == 0 ||
		    strncmp(err, "save ep: nothing committed: job ep is now run by epoch ", 55) == 0) &&
		    strstr(err, " (a newer run took it over)") != NULL)
			fenced++;
		else {
			other++;
			printf("# epoch %d: rc %d: %s\n", order[i], rc[i], err);
		}
	}
	committed = ncs;
	is_int(other, 0, "%s: 16 epochs: each run fenced and committed 3, or was fenced out "
	    "(SR_CKPT_FENCED, with the message): %d commits, %d runs fenced out", t->name,
	    committed, fenced);
	ok(rc[13] == 0, "%s: 16 epochs: epoch 16's run committed", t->name);
	ok(reads > 0 && backwards == 0, "%s: 16 epochs: LATEST's epoch and seq never went down "
	    "(%d reads)", t->name, reads);
	ok(latest_is(t, "ep", text = sr_asprintf("%" PRIu64 " 16\n", seq[13])), "%s: 16 epochs: "
	    "LATEST ends at epoch 16's checkpoint", t->name);
	free(text);
	/* the chain from LATEST: every commit on it, epochs falling backwards */
	for (at = seq[13];;) {
		if (sr_catalog_load(t->st, "ep", at, &m, err) != 0) {
			printf("# chain at %" PRIu64 ": %s\n", at, err);
			sr_manifest_free(&m);
			break;
		}
		links++;
		for (k = 0; k < ncs; k++)
			on_chain += cs[k] == at && m.stats.epoch == ce[k];
		epoch_order += m.stats.epoch > last_epoch;
		last_epoch = m.stats.epoch;
		if (m.link != SR_LINK_PARENT) {
			sr_manifest_free(&m);
			break;
		}
		at = m.parent;
		sr_manifest_free(&m);
	}
	is_int(on_chain, committed, "%s: 16 epochs: each of the %d commits is on LATEST's chain "
	    "(%d links)", t->name, committed, links);
	is_int(epoch_order, 0, "%s: 16 epochs: each checkpoint's epoch is at least its parent's",
	    t->name);
	text = listing(t, "ep");
	{
		int words = *text != '\0';
		const char *p;

		for (p = text; (p = strchr(p, ' ')) != NULL; p++)
			words++;
		is_int(words, links, "%s: 16 epochs: the listing is the chain: %s", t->name, text);
	}
	free(text);
	for (i = 0; i < NW; i++) {
		tu_rmtree(src[i]);
		free(src[i]);
	}
}

/* ---- 4. fence: a job with no checkpoint, idempotent, never lower ---- */

static void
test_fence(struct target *t)
{
	char *src = source("fn-src", "fenced", 20), err[SR_ERRMAX] = "", *txt;
	struct sr_ckpt_stats s;
	struct sr_ckpt_opts o;
	int rc;

	is_int(fence(t, "fn", 3, err), 0, "%s: fence a job without a checkpoint %s",
	    t->name, err);
	ok(latest_is(t, "fn", "none 3\n"), "%s: ... LATEST \"none 3\"", t->name);
	is_int(restores(t, "fn", 0, src, err, sizeof err), -1, "%s: ... nothing to restore",
	    t->name);
	is_str(err, "rc -3: restore fn: no checkpoint", "%s: ... SR_CKPT_NONE: \"restore fn: no "
	    "checkpoint\"", t->name);
	txt = listing(t, "fn");
	is_str(txt, "", "%s: ... nothing listed", t->name);
	free(txt);
	is_int(fence(t, "fn", 3, err), 0, "%s: the same epoch again: nothing to do",
	    t->name);
	is_int(fence(t, "fn", 2, err), SR_CKPT_FENCED, "%s: a lower epoch: "
	    "SR_CKPT_FENCED", t->name);
	is_str(err, "fence fn at epoch 2: job fn is now run by epoch 3 (a newer run took it over)",
	    "%s: ... with the message", t->name);
	ok(latest_is(t, "fn", "none 3\n"), "%s: ... LATEST unchanged", t->name);
	is_int(save_at(t, "fn", src, 1, 0, 2, &s, err), SR_CKPT_FENCED, "%s: a save at epoch 2: "
	    "SR_CKPT_FENCED", t->name);
	is_str(err, "save fn: nothing committed: job fn is now run by epoch 3 (a newer run took it "
	    "over)", "%s: ... with the message", t->name);
	ok(packs_of(t, "fn") == 0 && !manifest_exists(t, "fn", 0), "%s: ... and not a byte "
	    "uploaded", t->name);
	is_int(save_at(t, "fn", src, 1, 0, 0, &s, err), SR_CKPT_FENCED, "%s: an unfenced save "
	    "(epoch 0) too", t->name);
	rc = save_at(t, "fn", src, 1, 0, 3, &s, err);
	ok(rc == 0 && s.seq == 0 && s.epoch == 3, "%s: a save at epoch 3 commits 0 %s", t->name,
	    rc ? err : "");
	ok(latest_is(t, "fn", "0 3\n"), "%s: ... LATEST \"0 3\"", t->name);
	txt = text_of(t, "fn/manifests/0000000000.json");
	ok(strstr(txt, "\n \"parent\": null,\n \"epoch\": 3,\n") != NULL, "%s: ... its "
	    "manifest says \"parent\": null, \"epoch\": 3", t->name);
	free(txt);
	is_int(fence(t, "fn", 4, err), 0, "%s: fence at 4", t->name);
	ok(latest_is(t, "fn", "0 4\n"), "%s: ... LATEST \"0 4\"", t->name);
	rc = save_at(t, "fn", src, 2, 0, 4, &s, err);
	ok(rc == 0 && s.seq == 1 && latest_is(t, "fn", "1 4\n"), "%s: a save at 4 commits 1 %s",
	    t->name, rc ? err : "");
	txt = text_of(t, "fn/manifests/0000000001.json");
	ok(strstr(txt, "\n \"parent\": 0,\n \"epoch\": 4,\n") != NULL, "%s: ... whose "
	    "manifest says \"parent\": 0, \"epoch\": 4", t->name);
	free(txt);
	tu_write(src, "f", "fenced, 2", 9);
	rc = save_at(t, "fn", src, 3, 0, 4, &s, err);
	ok(rc == 0 && s.seq == 2 && packs_of(t, "fn") == 2, "%s: and 2, in a pack of its own %s",
	    t->name, rc ? err : "");
	is_int(gc_at(t, "fn", 1, 3, -1, err), SR_CKPT_FENCED, "%s: gc at epoch 3: SR_CKPT_FENCED",
	    t->name);
	is_str(err, "gc fn: nothing deleted: job fn is now run by epoch 4 (a newer run took it "
	    "over)", "%s: ... with the message", t->name);
	ok(manifest_exists(t, "fn", 0) && manifest_exists(t, "fn", 1) && packs_of(t, "fn") == 2,
	    "%s: ... and nothing deleted", t->name);
	/* a garbage or missing LATEST: fenced at what readers take as the newest */
	put_text(t, "fn/LATEST", "garbage");
	opts_init(&o, "fn");
	tu_log_clear(&lg);
	is_int(sr_ckpt_fence_log(t->st, &o, "fn", 5, err), 0, "%s: fence over a garbage LATEST %s",
	    t->name, err);
	ok(latest_is(t, "fn", "2 5\n"), "%s: ... LATEST \"2 5\": the newest manifest", t->name);
	ok(lg.n == 1 && strcmp(lg.lines[0], "warning: fn/LATEST is not a checkpoint number (it "
	    "holds \"garbage\"): every manifest counts as committed and the newest is the latest; "
	    "the next save rewrites LATEST") == 0, "%s: ... saying what it found", t->name);
	sr_store_delete(t->st, "fn/LATEST", err);
	is_int(fence(t, "fn", 6, err), 0, "%s: fence over a missing LATEST", t->name);
	ok(latest_is(t, "fn", "2 6\n"), "%s: ... LATEST \"2 6\"", t->name);
	put_text(t, "fn/LATEST", "2 6");
	tu_log_clear(&lg);
	ok(restores(t, "fn", 2, src, err, sizeof err) == 0 && lg.n == 1 && strcmp(lg.lines[0],
	    "warning: fn/LATEST holds 2 6 without the newline that ends it: read as 2 at epoch 6; "
	    "the next save rewrites LATEST") == 0, "%s: \"2 6\" without its newline: read, with "
	    "a warning %s", t->name, err);
	is_int(fence(t, "fn", 0, err), SR_CKPT_FENCED, "%s: fence at 0 of a fenced job: "
	    "SR_CKPT_FENCED", t->name);
	put_text(t, "fn/LATEST", "2\n");
	ok(fence(t, "fn", 0, err) == 0 && latest_is(t, "fn", "2\n"), "%s: fence at 0 "
	    "of an unfenced job: nothing changes", t->name);
	tu_rmtree(src);
	free(src);
}

/* ---- 5. what versions before the chain wrote ---- */

/* Drop the lines `"parent": ...` and `"epoch": ...` from a manifest. */
static char *
without_link(const char *json)
{
	char *out = sr_strdup(json), *p;

	while ((p = strstr(out, "\n \"parent\": ")) != NULL || (p = strstr(out,
	    "\n \"epoch\": ")) != NULL) {
		char *nl = strchr(p + 1, '\n');
		memmove(p, nl, strlen(nl) + 1);
	}
	return out;
}

static void
test_old_format(struct target *t)
{
	char *src = source("old-src", "old 0", 30), err[SR_ERRMAX] = "", why[SR_ERRMAX + 64];
	char *key, *txt, *old, *pack;
	struct sr_ckpt_stats s;
	uint64_t i;

	save_at(t, "old", src, 0, 0, 0, &s, err);
	tu_write(src, "f", "old 1", 5);
	save_at(t, "old", src, 10, 0, 0, &s, err);
	for (i = 0; i < 2; i++) {
		key = sr_jobkey_manifest("old", i, NULL);
		txt = text_of(t, key);
		old = without_link(txt);
		put_text(t, key, old);
		if (i == 1) {
			/* and a copy above LATEST: a commit in flight, by then */
			char *p = strstr(old, "\"seq\": 1");
			p[7] = '2';
			put_text(t, "old/manifests/0000000002.json", old);
		}
		free(key);
		free(txt);
		free(old);
	}
	txt = text_of(t, "old/manifests/0000000001.json");
	ok(strstr(txt, "parent") == NULL && strstr(txt, "epoch") == NULL, "%s: old format: "
	    "manifests without parent or epoch", t->name);
	free(txt);
	ok(latest_is(t, "old", "1\n"), "%s: old format: LATEST \"1\" (the form every version "
	    "writes at epoch 0)", t->name);
	txt = listing(t, "old");
	is_str(txt, "0:0 1:10*", "%s: old format: listed by the old rule (2 is above LATEST)",
	    t->name);
	free(txt);
	ok(restores(t, "old", 1, src, why, sizeof why) == 0, "%s: old format: restored %s", t->name,
	    why);
	pack = first_pack(t, "old", 1);
	sr_store_delete(t->st, pack, err);
	free(pack);
	tu_log_clear(&lg);
	ok(restores(t, "old", 0, src, why, sizeof why) != 0 && strstr(why, "checkpoint 0 differs") !=
	    NULL && lg.n > 0 && strstr(lg.lines[0], "; falling back to checkpoint 0") != NULL,
	    "%s: old format: a bad checkpoint 1 falls back to 0 %s", t->name, why);
	tu_write(src, "f", "new 3", 5);
	ok(save_at(t, "old", src, 30, 0, 5, &s, err) == 0 && s.seq == 3 && latest_is(t, "old",
	    "3 5\n"), "%s: old format: a fenced save on top commits 3 at epoch 5 %s", t->name, err);
	txt = listing(t, "old");
	is_str(txt, "0:0 1:10 3:30*", "%s: old format: 3's parent is 1, below which the old rule "
	    "holds", t->name);
	free(txt);
	ok(restores(t, "old", 3, src, why, sizeof why) == 0, "%s: old format: 3 restores %s",
	    t->name, why);
	tu_rmtree(src);
	free(src);
}

/* ---- 6. the grace period: a commit in flight elsewhere keeps its packs ---- */

static void
test_grace(struct target *t)
{
	char *src = source("gg-src", "grace 0", 40), err[SR_ERRMAX] = "", why[SR_ERRMAX + 64];
	char *p, *txt;
	struct sr_ckpt_stats s;
	struct child c;
	uint64_t seq;
	int rc, ended;

	save_at(t, "gg", src, 0, 0, 0, &s, err);
	/* a save stopped with its pack written, its manifest not yet */
	tu_write(src, "f", "grace 1", 7);
	child_start(&c, t->url, &(struct work){ .op = OP_SAVE, .job = "gg", .src = src, .step = 1,
	    .fault = "ckpt-manifest:stop" });
	ok(child_stopped(&c), "%s: grace: a save stops before its manifest", t->name);
	is_int(packs_of(t, "gg"), 2, "%s: grace: ... its pack written", t->name);
	is_int(gc_at(t, "gg", 1, 0, 0, err), 0, "%s: grace: gc keep 1, the default grace %s",
	    t->name, err);
	is_int(packs_of(t, "gg"), 2, "%s: grace: ... keeps the pack no manifest references yet",
	    t->name);
	kill(c.pid, SIGCONT);
	ok(child_end(&c, &rc, &seq, err) == 0 && rc == 0 && seq == 1, "%s: grace: the save "
	    "resumes and commits 1 %s", t->name, err);
	ok(restores(t, "gg", 1, src, why, sizeof why) == 0, "%s: grace: 1 restores %s", t->name,
	    why);

	/* a save that outlives half of gc's grace checks its packs first */
	tu_write(src, "f", "grace 2", 7);
	child_start(&c, t->url, &(struct work){ .op = OP_SAVE, .job = "gg", .src = src, .step = 2,
	    .grace = 3, .fault = "ckpt-manifest:stop" });
	ok(child_stopped(&c), "%s: grace: a save with a grace of 3 s stops before its manifest",
	    t->name);
	usleep(3200 * 1000);
	is_int(gc_at(t, "gg", 0, 0, 3, err), 0, "%s: grace: gc with a grace of 3 s, 3.2 s later %s",
	    t->name, err);
	is_int(packs_of(t, "gg"), 2, "%s: grace: ... deleted the stopped save's pack", t->name);
	kill(c.pid, SIGCONT);
	ended = child_end(&c, &rc, &seq, err);
	ok(ended == 0 && rc == -1, "%s: grace: the save resumes and fails (rc %d)", t->name, rc);
	p = strstr(err, " is gone after ");
	ok(strncmp(err, "save gg: pack gg/packs/0000000002-", 34) == 0 && p != NULL &&
	    strstr(p, " s (a gc elsewhere took it for garbage: this save outlived half of gc's "
	    "grace period of 3 s); nothing committed") != NULL, "%s: grace: ... saying why: %s",
	    t->name, err);
	ok(!manifest_exists(t, "gg", 2) && latest_is(t, "gg", "1\n"), "%s: grace: ... and "
	    "nothing committed", t->name);

	/* the same with its manifest written: a commit paused that long */
	tu_write(src, "f", "grace 3", 7);
	child_start(&c, t->url, &(struct work){ .op = OP_SAVE, .job = "gg", .src = src, .step = 3,
	    .grace = 3, .fault = "ckpt-pointer:stop" });
	ok(child_stopped(&c), "%s: grace: a save with a grace of 3 s stops before its commit",
	    t->name);
	is_int(gc_at(t, "gg", 0, 0, 3, err), 0, "%s: grace: gc at once %s", t->name, err);
	ok(manifest_exists(t, "gg", 2), "%s: grace: ... keeps its manifest, above LATEST and young",
	    t->name);
	usleep(3200 * 1000);
	is_int(gc_at(t, "gg", 0, 0, 3, err), 0, "%s: grace: gc 3.2 s later %s", t->name, err);
	ok(!manifest_exists(t, "gg", 2), "%s: grace: ... removes it", t->name);
	kill(c.pid, SIGCONT);
	ended = child_end(&c, &rc, &seq, err);
	ok(ended == 0 && rc == -1, "%s: grace: the save resumes and fails (rc %d)", t->name, rc);
	p = strstr(err, " is gone after ");
	ok(strncmp(err, "save gg: pack gg/packs/0000000002-", 34) == 0 && p != NULL &&
	    strstr(p, "; nothing committed") != NULL, "%s: grace: ... its pack is gone: %s",
	    t->name, err);
	ok(latest_is(t, "gg", "1\n") && restores(t, "gg", 1, src, why, sizeof why) != 0 &&
	    strstr(why, "checkpoint 1 differs") != NULL, "%s: grace: LATEST still 1, which "
	    "restores", t->name);
	txt = listing(t, "gg");
	is_str(txt, "0:0 1:1*", "%s: grace: listed: 0 and 1", t->name);
	free(txt);
	tu_rmtree(src);
	free(src);
}

/* ---- 7. lost races of one epoch: rebased or overtaken ---- */

static void
test_rebase(struct target *t)
{
	char *src = source("rb-src", "rebase 0", 50), *other = source("rb-other", "other", 51);
	char err[SR_ERRMAX] = "", why[SR_ERRMAX + 64], *txt, *p;
	struct sr_ckpt_stats s;
	struct sr_manifest m;
	struct child y, x;
	uint64_t seq;
	int rc, ry, ended;

	save_at(t, "rb", src, 0, 0, 0, &s, err);
	/* Y stops before its commit (seq 1); X then saves seq 2 on 0 and stops
	 * too; Y commits; X finds LATEST at 1: it names 1 as its parent */
	tu_write(src, "f", "rebase 1", 8);
	child_start(&y, t->url, &(struct work){ .op = OP_SAVE, .job = "rb", .src = src, .step = 1,
	    .fault = "ckpt-pointer:stop" });
	ok(child_stopped(&y), "%s: rebase: Y stops before committing 1", t->name);
	tu_write(src, "f", "rebase 2", 8);
	child_start(&x, t->url, &(struct work){ .op = OP_SAVE, .job = "rb", .src = src, .step = 2,
	    .fault = "ckpt-pointer:stop" });
	ok(child_stopped(&x), "%s: rebase: X stops before committing 2", t->name);
	kill(y.pid, SIGCONT);
	ok(child_end(&y, &rc, &seq, err) == 0 && rc == 0 && seq == 1, "%s: rebase: Y commits 1 %s",
	    t->name, err);
	kill(x.pid, SIGCONT);
	ok(child_end(&x, &rc, &seq, err) == 0 && rc == 0 && seq == 2, "%s: rebase: X commits 2 "
	    "after its lost race %s", t->name, err);
	ok(sr_catalog_load(t->st, "rb", 2, &m, err) == 0 && m.link == SR_LINK_PARENT &&
	    m.parent == 1, "%s: rebase: 2's parent is 1 now, not 0", t->name);
	sr_manifest_free(&m);
	txt = listing(t, "rb");
	is_str(txt, "0:0 1:1 2:2*", "%s: rebase: both on the chain", t->name);
	free(txt);

	/* Y stops before committing 3; X commits 4 meanwhile: Y is overtaken */
	tu_write(src, "f", "rebase 3", 8);
	child_start(&y, t->url, &(struct work){ .op = OP_SAVE, .job = "rb", .src = src, .step = 3,
	    .fault = "ckpt-pointer:stop" });
	ok(child_stopped(&y), "%s: overtaken: Y stops before committing 3", t->name);
	tu_write(src, "f", "rebase 4", 8);
	rc = save_at(t, "rb", src, 4, 0, 0, &s, err);
	ok(rc == 0 && s.seq == 4, "%s: overtaken: X commits 4 %s", t->name, rc ? err : "");
	kill(y.pid, SIGCONT);
	ended = child_end(&y, &rc, &seq, err);
	ok(ended == 0 && rc == -1, "%s: overtaken: Y's commit fails (rc %d)", t->name, rc);
	is_str(err, "save rb: checkpoint 3 was overtaken by checkpoint 4 of another writer; nothing "
	    "committed", "%s: overtaken: ... with the message", t->name);
	ok(!manifest_exists(t, "rb", 3) && latest_is(t, "rb", "4\n"), "%s: overtaken: Y's "
	    "manifest is gone, LATEST is 4", t->name);

	/* Z's save reuses 4's pack and stops before its manifest; Y commits
	 * 5, and its retention (keep 1) drops 4 with that pack; Z's lost race
	 * finds it gone */
	child_start(&y, t->url, &(struct work){ .op = OP_SAVE, .job = "rb", .src = other, .step = 5,
	    .keep = 1, .fault = "ckpt-pointer:stop" });
	ok(child_stopped(&y), "%s: reused: Y stops before committing 5", t->name);
	tu_write(src, "f", "rebase 6", 8);
	child_start(&x, t->url, &(struct work){ .op = OP_SAVE, .job = "rb", .src = src, .step = 6,
	    .fault = "ckpt-manifest:stop" });
	ok(child_stopped(&x), "%s: reused: Z (seq 6, reusing 4's noise) stops before its manifest",
	    t->name);
	kill(y.pid, SIGCONT);
	ok(child_end(&y, &ry, &seq, err) == 0 && ry == 0 && seq == 5, "%s: reused: Y commits 5 and "
	    "keeps 1 %s", t->name, err);
	txt = listing(t, "rb");
	is_str(txt, "5:5*", "%s: reused: only 5 is left", t->name);
	free(txt);
	kill(x.pid, SIGCONT);
	ended = child_end(&x, &rc, &seq, err);
	ok(ended == 0 && rc == -1, "%s: reused: Z's commit fails (rc %d)", t->name, rc);
	p = strstr(err, ".tar, which checkpoint 6 reuses, was deleted while it was saved (by the "
	    "retention of another writer); nothing committed");
	ok(strncmp(err, "save rb: pack rb/packs/00000000", 31) == 0 && p != NULL, "%s: reused: ... "
	    "the pack it reuses is gone: %s", t->name, err);
	ok(!manifest_exists(t, "rb", 6) && latest_is(t, "rb", "5\n"), "%s: reused: nothing "
	    "committed", t->name);
	ok(restores(t, "rb", 5, other, why, sizeof why) == 0, "%s: reused: 5 restores %s", t->name,
	    why);
	tu_rmtree(src);
	tu_rmtree(other);
	free(src);
	free(other);
}

/* ---- the two stores ---- */

static void
run_all(struct target *t)
{
	test_gc_race(t);
	test_stale(t);
	test_epochs(t);
	test_fence(t);
	test_old_format(t);
	test_grace(t);
	test_rebase(t);
}

int
main(void)
{
	struct target file = { "file", NULL, NULL }, s3 = { "s3", NULL, NULL };
	char err[SR_ERRMAX], bucket[64] = "", *dir;

	top = tu_tmpdir("t-fence");
	dir = tu_path(top, "store");
	if (mkdir(dir, 0755) == -1)
		sr_fatal("mkdir %s", dir);
	file.url = sr_asprintf("file://%s", dir);
	free(dir);
	if (sr_store_open(file.url, &file.st, err) != 0) {
		printf("Bail out! open %s: %s\n", file.url, err);
		return 1;
	}
	run_all(&file);
	sr_store_close(file.st);

	if (su_env("SPOTRUN_TEST_S3_ENDPOINT")[0] != '\0') {
		setenv("AWS_ACCESS_KEY_ID", su_env("SPOTRUN_TEST_S3_ACCESS_KEY"), 1);
		setenv("AWS_SECRET_ACCESS_KEY", su_env("SPOTRUN_TEST_S3_SECRET_KEY"), 1);
		su_isolate();
		su_bucket_new(bucket, sizeof bucket, "t-fence");
		s3.url = sr_asprintf("s3://%s/jobs?endpoint=%s", bucket,
		    su_env("SPOTRUN_TEST_S3_ENDPOINT"));
		s3.st = su_store_open(s3.url, 1);
		run_all(&s3);
		sr_store_close(s3.st);
		su_bucket_rm(bucket);
	} else if (strcmp(su_env("SPOTRUN_TEST_REQUIRE_S3"), "1") == 0)
		ok(0, "no S3 server (SPOTRUN_TEST_S3_ENDPOINT unset) and SPOTRUN_TEST_REQUIRE_S3=1: "
		    "build-aux/test-all could not start Ceph RGW");
	else
		ok(1, "the same on S3 # SKIP no S3 server (SPOTRUN_TEST_S3_ENDPOINT unset; "
		    "build-aux/test-all starts Ceph RGW)");
	if (getenv("TU_KEEP") == NULL)
		tu_rmtree(top);
	else
		printf("# kept %s\n", top);
	tu_log_clear(&lg);
	free(lg.lines);
	free(file.url);
	free(s3.url);
	free(top);
	return tap_done();
}
