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
#include "s3-util.h"

#include "catalog.h"
#include "ckpt.h"
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
	memset(o, 0, sizeof *o);
	o->job = job;
	o->chunk_size = 64 * 1024;
	o->threads = 1;
	o->log = tu_log_fn;
	o->log_arg = &lg;
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

enum op { OP_SAVE, OP_GC };

struct child {
	pid_t pid;
	int errfd;		/* read end of its stderr */
	int resfd;		/* read end of its result line */
	char said[2048];	/* its stderr so far */
};

/* Run op in a new process against the store at url, with SPOTRUN_FAULT =
 * fault (NULL: none). The child reports "RC SEQ ERR" on its result pipe. */
static void
child_start(struct child *c, const char *url, enum op op, const char *job, const char *src,
    long long step, int keep, const char *fault)
{
	int ep[2], rp[2];

	memset(c, 0, sizeof *c);
	if (pipe(ep) == -1 || pipe(rp) == -1)
		sr_fatal("pipe: %s", strerror(errno));
	fflush(stdout);
	if ((c->pid = fork()) == -1)
		sr_fatal("fork: %s", strerror(errno));
	if (c->pid == 0) {
		struct sr_store *st;
		struct sr_ckpt_opts o;
		struct sr_ckpt_stats s;
		char err[SR_ERRMAX] = "", *line;
		uint64_t freed;
		int rc;

		close(ep[0]);
		close(rp[0]);
		dup2(ep[1], 2);
		if (fault != NULL)
			setenv("SPOTRUN_FAULT", fault, 1);
		else
			unsetenv("SPOTRUN_FAULT");
		memset(&s, 0, sizeof s);
		if (sr_store_open(url, &st, err) != 0)
			rc = -100;
		else {
			opts_init(&o, job);
			o.log = NULL;
			o.keep = keep;
			if (op == OP_SAVE)
				rc = sr_ckpt_save(st, &o, src, step, &s, err);
			else
				rc = sr_ckpt_gc(st, job, keep, &freed, err);
			sr_store_close(st);
		}
		line = sr_asprintf("%d %" PRIu64 " %s\n", rc, s.seq, err);
		if (sr_write_all(rp[1], line, strlen(line)) == -1)
			_exit(3);
		_exit(0);
	}
	close(ep[1]);
	close(rp[1]);
	c->errfd = ep[0];
	c->resfd = rp[0];
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

/* A save from this process (writer B). */
static int
save(struct target *t, const char *job, const char *src, long long step, int keep,
    struct sr_ckpt_stats *s, char *err)
{
	struct sr_ckpt_opts o;

	opts_init(&o, job);
	o.keep = keep;
	return sr_ckpt_save(t->st, &o, src, step, s, err);
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

	rc = save(t, "gr", a, 1, 0, &s, err);
	ok(rc == 0 && s.seq == 0, "%s: gc race: A commits checkpoint 0 %s", t->name,
	    rc ? err : "");
	/* A's retention: its gc stops for 3 s just before it lists the packs */
	child_start(&g, t->url, OP_GC, "gr", NULL, 0, 1, "ckpt-gc-list:delay=3");
	ok(child_wait_said(&g, "spotrun: fault injected at ckpt-gc-list: delaying 3 s", 30),
	    "%s: gc race: A's gc is delayed before it lists the packs", t->name);
	/* meanwhile B commits checkpoint 1 and keeps 1 */
	rc = save(t, "gr", b, 2, 1, &s, err);
	ok(rc == 0 && s.seq == 1, "%s: gc race: B commits checkpoint 1 meanwhile (rc %d, seq %"
	    PRIu64 ") %s", t->name, rc, s.seq, rc ? err : "");
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

/* ---- the two stores ---- */

static void
run_all(struct target *t)
{
	test_gc_race(t);
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
