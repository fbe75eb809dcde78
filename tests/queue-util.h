/*
 * queue-util.h: what the tests of the lease and the queue (t-lease,
 * t-queue) share: a fresh file:// store, the RGW store when there is one
 * (its S3 part skipped without a server, failed under
 * SPOTRUN_TEST_REQUIRE_S3=1, as tests/s3-util.h does for whole tests),
 * raw objects put and read back, the keys under a prefix, message checks
 * with a variable middle,
 * and a crowd of forked processes that act at once and report one int
 * each. Header-only, included once per test program after tap.h and
 * s3-util.h.
 */
#ifndef SR_QUEUE_UTIL_H
#define SR_QUEUE_UTIL_H

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "queue.h"
#include "store.h"
#include "util.h"

#define QU_FN static __attribute__((unused))

/* A fresh directory under $TMPDIR into dir (len bytes); dies when it cannot. */
QU_FN void
qu_tmpdir(char *dir, size_t len, const char *tag)
{
	snprintf(dir, len, "%s/%s.XXXXXX", getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp",
	    tag);
	if (mkdtemp(dir) == NULL)
		sr_fatal("mkdtemp %s: %s", dir, strerror(errno));
}

/* Remove the directory (unless TU_KEEP is set). */
QU_FN void
qu_rmdir(const char *dir)
{
	char *cmd = sr_asprintf("rm -rf '%s'", dir);

	if (getenv("TU_KEEP") == NULL && system(cmd) != 0)
		printf("# cleanup: %s failed\n", cmd);
	free(cmd);
}

/* The S3 part of a test: 1 with a new bucket's name in bucket (len bytes)
 * when the test server is there; else 0 after a TAP line that skips the
 * part, or fails it under SPOTRUN_TEST_REQUIRE_S3=1. */
QU_FN int
qu_s3_start(char *bucket, size_t len, const char *tag)
{
	if (su_env("SPOTRUN_TEST_S3_ENDPOINT")[0] == '\0') {
		if (strcmp(su_env("SPOTRUN_TEST_REQUIRE_S3"), "1") == 0)
			ok(0, "no S3 server (SPOTRUN_TEST_S3_ENDPOINT unset) and "
			    "SPOTRUN_TEST_REQUIRE_S3=1: build-aux/test-all could not start Ceph RGW");
		else
			ok(1, "the RGW part # SKIP no S3 server (SPOTRUN_TEST_S3_ENDPOINT unset; "
			    "build-aux/test-all starts Ceph RGW)");
		return 0;
	}
	setenv("AWS_ACCESS_KEY_ID", su_env("SPOTRUN_TEST_S3_ACCESS_KEY"), 1);
	setenv("AWS_SECRET_ACCESS_KEY", su_env("SPOTRUN_TEST_S3_SECRET_KEY"), 1);
	su_isolate();
	su_bucket_new(bucket, len, tag);
	return 1;
}

/* Put raw bytes at key; dies when it cannot. */
QU_FN void
qu_put(struct sr_store *st, const char *key, const void *buf, size_t len)
{
	char err[SR_ERRMAX];

	if (sr_store_put(st, key, buf, len, SR_PUT_OVERWRITE, NULL, NULL, err) != 0)
		sr_fatal("put %s: %s", key, err);
}

/* The object at key, malloc'd and NUL-terminated, or NULL when absent. */
QU_FN char *
qu_get(struct sr_store *st, const char *key, size_t *len)
{
	char err[SR_ERRMAX];
	void *buf;
	size_t n;

	if (sr_store_get(st, key, 1 << 20, &buf, &n, NULL, err) != 0)
		return NULL;
	if (len != NULL)
		*len = n;
	return buf;
}

/* The keys under prefix in st, tab-separated, into out (len bytes). */
struct qu_keycat {
	char *out;
	size_t len, o;
};

QU_FN int
qu_keycat_cb(const struct sr_object_info *info, void *arg)
{
	struct qu_keycat *k = arg;

	k->o += (size_t)snprintf(k->out + k->o, k->len - k->o, "%s%s", k->o > 0 ? "\t" : "",
	    info->key);
	if (k->o >= k->len)
		k->o = k->len - 1;
	return 0;
}

QU_FN const char *
qu_keys(struct sr_store *st, const char *prefix, char *out, size_t len)
{
	struct qu_keycat k = { out, len, 0 };
	char err[SR_ERRMAX];

	out[0] = '\0';
	if (sr_store_list(st, prefix, qu_keycat_cb, &k, err) != 0)
		snprintf(out, len, "(list failed: %s)", err);
	return out;
}

/* got starts with prefix and ends with suffix; else say what it was. */
QU_FN void
qu_like(const char *got, const char *prefix, const char *suffix, const char *desc)
{
	size_t g = strlen(got), p = strlen(prefix), s = strlen(suffix);

	if (!ok(g >= p + s && strncmp(got, prefix, p) == 0 && strcmp(got + g - s, suffix) == 0,
	    "%s", desc))
		tap_diag("got  '%s'\n# want '%s...%s'", got, prefix, suffix);
}

/* A crowd of n forked processes: each runs fn(i, arg) at the same moment
 * and reports its int; all stay alive until every one has reported, so
 * that a winner's lease is never seen as its dead process's. */
struct qu_crowd {
	int n;
	pid_t *pids;
	int *result;
};

QU_FN void
qu_crowd_run(struct qu_crowd *c, int n, int (*fn)(int i, void *arg), void *arg)
{
	int go[2], res[2], stay[2], i;

	c->n = n;
	c->pids = sr_calloc((size_t)n, sizeof *c->pids);
	c->result = sr_calloc((size_t)n, sizeof *c->result);
	if (pipe(go) == -1 || pipe(res) == -1 || pipe(stay) == -1)
		sr_fatal("pipe: %s", strerror(errno));
	fflush(stdout);
	for (i = 0; i < n; i++) {
		if ((c->pids[i] = fork()) == -1)
			sr_fatal("fork: %s", strerror(errno));
		if (c->pids[i] == 0) {
			char b;
			int r[2];

			close(go[1]);
			close(res[0]);
			close(stay[1]);
			if (read(go[0], &b, 1) != 1)
				_exit(2);
			r[0] = i;
			r[1] = fn(i, arg);
			if (write(res[1], r, sizeof r) != (ssize_t)sizeof r)
				_exit(3);
			while (read(stay[0], &b, 1) == -1 && errno == EINTR)
				;
			_exit(0);
		}
	}
	close(go[0]);
	close(res[1]);
	close(stay[0]);
	for (i = 0; i < n; i++)
		if (write(go[1], "g", 1) != 1)
			sr_fatal("write: %s", strerror(errno));
	for (i = 0; i < n; i++) {
		int r[2];

		if (read(res[0], r, sizeof r) != (ssize_t)sizeof r)
			sr_fatal("crowd: a process died before it reported");
		c->result[r[0]] = r[1];
	}
	close(stay[1]);
	for (i = 0; i < n; i++)
		waitpid(c->pids[i], NULL, 0);
	close(go[1]);
	close(res[0]);
}

/* Process i of a crowd of agents: open the queue at url and claim as
 * agent "claimer-I" (a, its owner set here): what(j) of the job claimed
 * (NULL: 0), else the claim's code; 99 when the queue does not open. */
QU_FN int
qu_claimer(const char *url, int i, struct sr_queue_agent a,
    int (*what)(const struct sr_queue_job *j))
{
	struct sr_lease_owner me;
	struct sr_queue_job *j;
	struct sr_queue *q;
	char err[SR_ERRMAX], id[32];
	int rc;

	snprintf(id, sizeof id, "claimer-%d", i);
	if (sr_lease_owner_local(&me, id, "", "local", err) != 0)
		sr_fatal("%s", err);
	a.owner = &me;
	if (sr_queue_open(url, &q, err) != 0)
		return 99;
	rc = sr_queue_claim(q, &a, &j, err);
	if (rc == 0) {
		rc = what != NULL ? what(j) : 0;
		sr_queue_job_free(j);
	}
	sr_queue_close(q);
	return rc;
}

/* How many of the crowd reported v. */
QU_FN int
qu_crowd_count(const struct qu_crowd *c, int v)
{
	int i, k = 0;

	for (i = 0; i < c->n; i++)
		k += c->result[i] == v;
	return k;
}

QU_FN void
qu_crowd_free(struct qu_crowd *c)
{
	free(c->pids);
	free(c->result);
}

/* Wait up to secs for fd to be readable: 1, or 0. */
QU_FN int
qu_readable(int fd, double secs)
{
	struct pollfd p = { fd, POLLIN, 0 };

	return poll(&p, 1, (int)(secs * 1000)) == 1;
}

#endif
