/*
 * store-util.h: what the C tests of the network stores share, whichever the
 * server (tests/s3-util.h adds Ceph RGW and the aws CLI, tests/az-util.h
 * Azurite and the Azure CLI): what every store must do alike (keys, missing
 * keys, conditional writes and their races, ranged reads, small reads on
 * one connection acknowledged at once, bounded uploads: su_check_*), the
 * requests a step cost (su_stats_since), a command's output, opening a store, seeded bytes, counting a
 * listing, 16 threads racing one conditional put, many keys put from 4
 * threads (and the list of them to delete), a save that dies mid-upload, a
 * server started that writes its port to a file (an emulator, the proxy),
 * tests/faultproxy in front of a server with its fault switched and its log
 * counted, and a return code checked with the error shown. Header-only,
 * included once per test program after tap.h.
 */
#ifndef SR_STORE_UTIL_H
#define SR_STORE_UTIL_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "store.h"
#include "util.h"

#define SU_FN static __attribute__((unused))

SU_FN const char *
su_env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL ? v : "";
}

/* The output of the shell command cmd (trailing newlines removed) into
 * out; its status (-1 when it cannot be run). */
SU_FN int
su_cmd_out(char *out, size_t len, const char *cmd)
{
	FILE *p;
	size_t n = 0;
	int rc = -1;

	out[0] = '\0';
	fflush(stdout);
	if ((p = popen(cmd, "r")) != NULL) {
		n = fread(out, 1, len - 1, p);
		out[n] = '\0';
		rc = pclose(p);
	}
	while (n > 0 && out[n - 1] == '\n')
		out[--n] = '\0';
	return rc;
}

/* Open the store at u; NULL, the reason as a TAP comment, when it cannot,
 * or with must set die then. */
SU_FN struct sr_store *
su_store_open(const char *u, int must)
{
	struct sr_store *st;
	char err[SR_ERRMAX];

	if (sr_store_open(u, &st, err) == -1) {
		if (must)
			sr_fatal("open %s: %s", u, err);
		printf("# open %s: %s\n", u, err);
		return NULL;
	}
	return st;
}

/* len pseudo-random bytes from seed into buf, the same for the same seed. */
SU_FN void
su_fill(char *buf, size_t len, unsigned seed)
{
	size_t i;

	for (i = 0; i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (char)(seed >> 16);
	}
}

/* sr_store_list's callback that counts the objects into *(int *)arg. */
SU_FN int
su_count_cb(const struct sr_object_info *info, void *arg)
{
	(void)info;
	(*(int *)arg)++;
	return 0;
}

/* rc is want; else say so, with err. */
SU_FN void
su_rc_is(int rc, int want, const char *err, const char *desc)
{
	if (!ok(rc == want, "%s", desc))
		tap_diag("got %d, want %d: %s", rc, want, err);
}

/* One of su_race's threads. */
struct su_racer {
	struct sr_store *st;
	const char *key;
	enum sr_put_mode mode;
	const char *etag;
	int rc;
	pthread_barrier_t *go;
	int id;
};

SU_FN void *
su_racer_main(void *arg)
{
	struct su_racer *r = arg;
	char err[SR_ERRMAX], body[32];

	snprintf(body, sizeof body, "writer %d", r->id);
	pthread_barrier_wait(r->go);
	r->rc = sr_store_put(r->st, r->key, body, strlen(body), r->mode, r->etag, NULL, err);
	return NULL;
}

/* 16 threads put key at once in mode (from etag): exactly one wins (rc 0),
 * the other 15 lose cleanly with lose_rc; two TAP lines named name. */
SU_FN void
su_race(struct sr_store *st, const char *key, enum sr_put_mode mode, const char *etag,
    int lose_rc, const char *name)
{
	struct su_racer r[16];
	pthread_t th[16];
	pthread_barrier_t go;
	int i, won = 0, lost = 0;

	pthread_barrier_init(&go, NULL, 16);
	for (i = 0; i < 16; i++) {
		r[i] = (struct su_racer){ st, key, mode, etag, 99, &go, i };
		pthread_create(&th[i], NULL, su_racer_main, &r[i]);
	}
	for (i = 0; i < 16; i++) {
		pthread_join(th[i], NULL);
		won += r[i].rc == 0;
		lost += r[i].rc == lose_rc;
	}
	pthread_barrier_destroy(&go);
	is_int(won, 1, "%s: exactly one of 16 wins", name);
	is_int(lost, 15, "%s: the other 15 lose cleanly", name);
}

/* One of su_put_many's threads: keys many/kNNNNN from..to-1. */
struct su_filler {
	struct sr_store *st;
	int from, to, bad;
};

SU_FN void *
su_filler_main(void *arg)
{
	struct su_filler *f = arg;
	char key[64], err[SR_ERRMAX];
	int i;

	for (i = f->from; i < f->to; i++) {
		snprintf(key, sizeof key, "many/k%05d", i);
		if (sr_store_put(f->st, key, "x", 1, SR_PUT_OVERWRITE, NULL, NULL, err) != 0)
			f->bad++;
	}
	return NULL;
}

/* Put n one-byte keys many/k00000.. from 4 threads; how many puts failed. */
SU_FN int
su_put_many(struct sr_store *st, int n)
{
	pthread_t th[4];
	struct su_filler f[4];
	int i, bad = 0;

	for (i = 0; i < 4; i++) {
		f[i] = (struct su_filler){ st, i * n / 4, (i + 1) * n / 4, 0 };
		pthread_create(&th[i], NULL, su_filler_main, &f[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		bad += f[i].bad;
	}
	return bad;
}

/* The n keys su_put_many puts, then the extra keys given (NULL ends
 * them), in one NULL-terminated array; free it with su_many_keys_free. */
SU_FN const char **
su_many_keys(int n, ...)
{
	const char **keys, *k;
	va_list ap;
	int i, nextra = 0;

	va_start(ap, n);
	while (va_arg(ap, const char *) != NULL)
		nextra++;
	va_end(ap);
	keys = sr_calloc((size_t)(n + nextra + 1), sizeof *keys);
	for (i = 0; i < n; i++)
		keys[i] = sr_asprintf("many/k%05d", i);
	va_start(ap, n);
	while ((k = va_arg(ap, const char *)) != NULL)
		keys[i++] = k;
	va_end(ap);
	return keys;
}

/* Free what su_many_keys(n, ...) returned (not the extra keys). */
SU_FN void
su_many_keys_free(const char **keys, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free((char *)keys[i]);
	free(keys);
}

/* A save whose machine dies mid-upload: a child process starts an upload
 * of key in the store at u, writes more than one 5 MiB part (so the
 * multipart upload is started on the server) and exits without a commit
 * or an abort. 0 when the child got that far. */
SU_FN int
su_dying_upload(const char *u, const char *key)
{
	size_t len = 6 * 1024 * 1024;
	pid_t pid;
	int status;

	fflush(stdout);
	if ((pid = fork()) == -1)
		sr_fatal("fork: %s", strerror(errno));
	if (pid == 0) {
		struct sr_store *cst;
		struct sr_upload *cup;
		char cerr[SR_ERRMAX], *data = sr_calloc(1, len);

		if (sr_store_open(u, &cst, cerr) == -1 ||
		    (cup = sr_store_upload_begin(cst, key, cerr)) == NULL ||
		    sr_upload_write(cup, data, len, cerr) == -1) {
			fprintf(stderr, "dying upload %s: %s\n", key, cerr);
			_exit(1);
		}
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		sr_fatal("waitpid: %s", strerror(errno));
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Start a test server: fork and exec argv (argv[0] a path, NULL ends
 * it), its pid into *pid, then wait up to secs seconds for the port it
 * writes to portfile; that port. Dies, naming what (hint added), when the
 * server exits first (*pid then 0) or writes no port in time. */
SU_FN int
su_server_start(const char *const argv[], const char *portfile, int secs, const char *what,
    const char *hint, pid_t *pid)
{
	FILE *f;
	int i, port;

	fflush(stdout);
	if ((*pid = fork()) == -1)
		sr_fatal("fork: %s", strerror(errno));
	if (*pid == 0) {
		execv(argv[0], (char *const *)argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	for (i = 0; i < secs * 20; i++) {
		if ((f = fopen(portfile, "r")) != NULL) {
			int got = fscanf(f, "%d", &port) == 1;

			fclose(f);
			if (got)
				return port;
		}
		if (waitpid(*pid, NULL, WNOHANG) == *pid) {
			*pid = 0;
			sr_fatal("%s exited at start%s", what, hint);
		}
		usleep(50000);
	}
	sr_fatal("%s wrote no port file in %d s", what, secs);
}

/* tests/faultproxy in front of the test server. */
struct su_proxy {
	pid_t pid;
	int port;
	char *dir, *control, *log;
};

/* Write the control line (a new file each time, so the proxy sees it). */
SU_FN void
su_proxy_fault(struct su_proxy *p, const char *line)
{
	char *tmp = sr_asprintf("%s.new", p->control);
	FILE *f = fopen(tmp, "w");

	if (f == NULL || fprintf(f, "%s\n", line) < 0 || fclose(f) != 0 ||
	    rename(tmp, p->control) != 0)
		sr_fatal("write %s: %s", p->control, strerror(errno));
	free(tmp);
}

/* Start the proxy in front of the server at endpoint (http://HOST:PORT,
 * any path after it ignored) with fault line in force, its files in a new
 * directory under $TMPDIR; dies when it does not come up. */
SU_FN void
su_proxy_start_to(struct su_proxy *p, const char *ep, const char *fault)
{
	const char *bd = getenv("top_builddir");
	char *bin = sr_asprintf("%s/tests/faultproxy", bd != NULL ? bd : "."), *portfile;
	char *target, tmpl[4096];

	snprintf(tmpl, sizeof tmpl, "%s/s3-proxy.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tmpl) == NULL)
		sr_fatal("mkdtemp %s: %s", tmpl, strerror(errno));
	p->dir = sr_strdup(tmpl);
	p->control = sr_asprintf("%s/control", p->dir);
	p->log = sr_asprintf("%s/proxy.log", p->dir);
	portfile = sr_asprintf("%s/port", p->dir);
	if (strncmp(ep, "http://", 7) != 0)
		sr_fatal("the server's endpoint %s is not http://HOST:PORT", ep);
	target = sr_strdup(ep + 7);
	target[strcspn(target, "/")] = '\0';
	su_proxy_fault(p, fault);
	{
		const char *argv[] = { bin, "-p", portfile, "-t", target, "-c", p->control,
			"-l", p->log, NULL };

		p->port = su_server_start(argv, portfile, 5, bin, " (run `make` first?)",
		    &p->pid);
	}
	free(bin);
	free(portfile);
	free(target);
}

/* Lines of the proxy's log containing needle. */
SU_FN int
su_proxy_count(const struct su_proxy *p, const char *needle)
{
	FILE *f = fopen(p->log, "r");
	char line[2048];
	int n = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL)
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

/* Print the proxy's log as TAP comments (after a failure). */
SU_FN void
su_proxy_show(const struct su_proxy *p)
{
	FILE *f = fopen(p->log, "r");
	char line[2048];

	if (f == NULL)
		return;
	while (fgets(line, sizeof line, f) != NULL)
		printf("# proxy: %s", line);
	fclose(f);
}

SU_FN void
su_proxy_stop(struct su_proxy *p)
{
	char *cmd;

	if (p->pid > 0) {
		kill(p->pid, SIGTERM);
		waitpid(p->pid, NULL, 0);
		p->pid = 0;
	}
	if (p->dir != NULL && getenv("TU_KEEP") == NULL) {
		cmd = sr_asprintf("rm -rf '%s'", p->dir);
		if (system(cmd) != 0)
			printf("# cleanup: %s failed\n", cmd);
		free(cmd);
	}
	free(p->dir);
	free(p->control);
	free(p->log);
	p->dir = p->control = p->log = NULL;
}

/* ---- what every store must do alike (store.h's contract), one TAP line a
 * check; the backends' tests call these with their own store ---- */

/* Put, get and the etags of each key (NULL-terminated), then a listing of
 * the store's root that sees exactly those keys. */
SU_FN void
su_check_keys(struct sr_store *st, const char *const *keys)
{
	char err[SR_ERRMAX], etag[SR_ETAG_MAX], etag2[SR_ETAG_MAX];
	void *buf;
	size_t len;
	int i, n = 0;

	for (i = 0; keys[i] != NULL; i++) {
		char body[64];

		snprintf(body, sizeof body, "body of %d", i);
		is_int(sr_store_put(st, keys[i], body, strlen(body), SR_PUT_OVERWRITE, NULL,
		    etag, err), 0, "put \"%s\"", keys[i]);
		is_int(sr_store_get(st, keys[i], 100, &buf, &len, etag2, err), 0,
		    "get \"%s\"", keys[i]);
		ok(len == strlen(body) && memcmp(buf, body, len) == 0, "\"%s\" read back", keys[i]);
		is_str(etag2, etag, "\"%s\": get's etag is put's", keys[i]);
		free(buf);
	}
	is_int(sr_store_list(st, "", su_count_cb, &n, err), 0, "list all");
	is_int(n, i, "list: the %d keys, under the store's prefix only", i);
}

/* A missing key to get, head, read and delete; a delete; a get over its
 * limit. Needs "plain" (more than 3 bytes) and "md5" put before. */
SU_FN void
su_check_missing(struct sr_store *st)
{
	struct sr_object_info info;
	char err[SR_ERRMAX], b[4];
	void *buf;
	size_t len;

	is_int(sr_store_get(st, "nope", 100, &buf, &len, NULL, err), SR_STORE_NOTFOUND,
	    "get missing");
	is_str(err, "get nope: no such key", "get missing: message");
	is_int(sr_store_head(st, "nope", &info, err), SR_STORE_NOTFOUND, "head missing");
	is_int(sr_store_read_range(st, "nope", 0, 1, b, err), SR_STORE_NOTFOUND, "read missing");
	is_int(sr_store_delete(st, "nope", err), 0, "delete missing succeeds");
	is_int(sr_store_delete(st, "md5", err), 0, "delete");
	is_int(sr_store_head(st, "md5", &info, err), SR_STORE_NOTFOUND, "deleted is gone");
	is_int(sr_store_get(st, "plain", 3, &buf, &len, NULL, err), SR_STORE_ERROR,
	    "get over max");
	is_str(err, "get plain: the reply is larger than 3 bytes", "get over max: message");
}

/* Create-only and compare-and-swap at "ptr" with their messages, a CAS of
 * a missing key, and 16 racers of each: one wins. */
SU_FN void
su_check_conditional(struct sr_store *st)
{
	struct sr_object_info info;
	char err[SR_ERRMAX], etag[SR_ETAG_MAX], etag2[SR_ETAG_MAX], *u;
	void *buf;
	size_t len;

	is_int(sr_store_put(st, "ptr", "1", 1, SR_PUT_CREATE, NULL, etag, err), 0, "create-only");
	is_int(sr_store_put(st, "ptr", "2", 1, SR_PUT_CREATE, NULL, NULL, err), SR_STORE_EXISTS,
	    "create-only again: exists");
	is_str(err, "put ptr: exists (create-only put lost the race)", "exists: message");
	is_int(sr_store_put(st, "ptr", "3", 1, SR_PUT_MATCH, etag, etag2, err), 0,
	    "CAS from etag");
	ok(strcmp(etag, etag2) != 0, "the CAS made a new etag");
	is_int(sr_store_put(st, "ptr", "4", 1, SR_PUT_MATCH, etag, NULL, err),
	    SR_STORE_PRECONDITION, "CAS from a stale etag: precondition");
	u = sr_asprintf("put ptr: changed since etag %s (compare-and-swap lost the race)", etag);
	is_str(err, u, "stale CAS: message");
	free(u);
	is_int(sr_store_put(st, "never", "5", 1, SR_PUT_MATCH, etag, NULL, err),
	    SR_STORE_PRECONDITION, "CAS of a missing key: precondition");
	ok(strncmp(err, "put never: ", 11) == 0 && strstr(err, "compare-and-swap lost the race"),
	    "... message: %s", err);
	is_int(sr_store_get(st, "ptr", 10, &buf, &len, NULL, err), 0, "get ptr");
	ok(len == 1 && ((char *)buf)[0] == '3', "the CAS's value stands");
	free(buf);
	su_race(st, "raced-manifest", SR_PUT_CREATE, NULL, SR_STORE_EXISTS,
	    "16 create-only puts");
	is_int(sr_store_head(st, "ptr", &info, err), 0, "head ptr");
	su_race(st, "ptr", SR_PUT_MATCH, info.etag, SR_STORE_PRECONDITION, "16 CAS from one etag");
}

/* Ranged reads of a 1000-byte object "r" of big's bytes: the first byte,
 * the last, to the end, past the end and at it (with their message). */
SU_FN void
su_check_ranges(struct sr_store *st, const char *big, char *back)
{
	char err[SR_ERRMAX];

	is_int(sr_store_put(st, "r", big, 1000, SR_PUT_OVERWRITE, NULL, NULL, err), 0, "put 1000 B");
	is_int(sr_store_read_range(st, "r", 0, 1, back, err), 0, "read byte 0");
	ok(back[0] == big[0], "byte 0 right");
	is_int(sr_store_read_range(st, "r", 999, 1, back, err), 0, "read the last byte");
	ok(back[0] == big[999], "last byte right");
	is_int(sr_store_read_range(st, "r", 100, 900, back, err), 0, "read to the end");
	ok(memcmp(back, big + 100, 900) == 0, "tail right");
	is_int(sr_store_read_range(st, "r", 999, 2, back, err), SR_STORE_ERROR, "read past the end");
	is_str(err, "read r: the object is shorter than 1001 bytes", "past the end: message");
	is_int(sr_store_read_range(st, "r", 1000, 1, back, err), SR_STORE_ERROR, "read at the end");
	is_str(err, "read r: the object is shorter than 1001 bytes", "at the end: message");
}

/* What st's requests cost since before (sr_store_stats then). */
SU_FN struct sr_store_stats
su_stats_since(struct sr_store *st, const struct sr_store_stats *before)
{
	struct sr_store_stats now;

	sr_store_stats(st, &now);
	now.requests -= before->requests;
	now.connections -= before->connections;
	now.quick_acks -= before->quick_acks;
	return now;
}

/* Every request since before had its reply's first bytes acknowledged
 * at once (parts in flight together on a curl multi's shared connections
 * find theirs too); what names the step. */
SU_FN void
su_check_all_acked(struct sr_store *st, const struct sr_store_stats *before, long min,
    const char *what)
{
	struct sr_store_stats d = su_stats_since(st, before);

	ok(d.requests >= min, "%s: at least %ld requests (%ld)", what, min, d.requests);
	is_int(d.quick_acks, d.requests, "%s: every reply acknowledged at once", what);
}

/* 20 ranged reads of 4 KiB one after the other, as a library restore
 * makes them (one a chunk), of an 80 KiB object "acks" of big's bytes just
 * put: 20 requests, no connection opened for them (the put's is kept and
 * reused), each reply's first bytes acknowledged at once (store/conns.h:
 * otherwise a server with Nagle's algorithm on, as RGW and gcsemu.py are,
 * holds each small body 40 ms for the delayed ACK of its headers: a
 * library restore of 200 chunks took 8.9 s), every byte right. what
 * names the store in the tests' names. */
SU_FN void
su_check_acks(struct sr_store *st, const char *big, char *back, const char *what)
{
	struct sr_store_stats before, d;
	char err[SR_ERRMAX];
	int i, rc = 0, same = 1;

	is_int(sr_store_put(st, "acks", big, 20 * 4096, SR_PUT_OVERWRITE, NULL, NULL, err), 0,
	    "%s: put 80 KiB", what);
	sr_store_stats(st, &before);
	for (i = 0; i < 20 && rc == 0; i++) {
		rc = sr_store_read_range(st, "acks", (uint64_t)i * 4096, 4096, back, err);
		same = same && memcmp(back, big + (size_t)i * 4096, 4096) == 0;
	}
	is_int(rc, 0, "%s: 20 reads of 4 KiB one after the other", what);
	ok(same, "%s: ... every byte right", what);
	d = su_stats_since(st, &before);
	is_int(d.requests, 20, "%s: ... 20 requests", what);
	is_int(d.connections, 0, "%s: ... on the connection the put left open", what);
	is_int(d.quick_acks, 20, "%s: ... each reply acknowledged at once", what);
	is_int(sr_store_delete(st, "acks", err), 0, "%s: delete it", what);
}

/* An upload whose flush is deferred: on a network store its commit is
 * durable by itself, so it is whole and visible at once, and
 * sr_store_flush of it costs no request. Key "mp/deferred", big's first
 * len bytes. */
SU_FN void
su_check_deferred(struct sr_store *st, const char *big, size_t len)
{
	const char *key = "mp/deferred";
	struct sr_store_stats before, d;
	struct sr_object_info info;
	struct sr_upload *up;
	char err[SR_ERRMAX] = "";
	int rc = -1;

	if ((up = sr_store_upload_begin(st, key, err)) != NULL &&
	    (rc = sr_upload_write(up, big, len, err)) == 0) {
		sr_upload_defer_flush(up);
		rc = sr_upload_commit(up, err);
	} else if (up != NULL)
		sr_upload_abort(up);
	is_int(rc, 0, "an upload with its flush deferred commits %s", err);
	ok(sr_store_head(st, key, &info, err) == 0 && info.size == len,
	    "and is visible, whole, at once");
	sr_store_stats(st, &before);
	is_int(sr_store_flush(st, &key, 1, err), 0, "its flush %s", err);
	d = su_stats_since(st, &before);
	is_int(d.requests, 0, "costs no request");
	sr_store_delete(st, key, err);
}

/* Uploads bound by sr_upload_limit, with part the store's part size: one
 * past its deadline fails at its first full part and leaves nothing; one
 * cancelled after two parts fails with "cancelled"; a small one past its
 * deadline fails at its one PUT. Keys under "mp/". */
SU_FN void
su_check_limits(struct sr_store *st, const char *big, size_t part)
{
	struct sr_object_info info;
	struct sr_upload *up;
	char err[SR_ERRMAX];
	volatile int cancel = 0;
	int rc = 0, i;

	up = sr_store_upload_begin(st, "mp/late", err);
	sr_upload_limit(up, sr_now() - 1, NULL);
	is_int(sr_upload_write(up, big, part + 1, err), -1, "a write past the deadline fails");
	is_str(err, "upload mp/late: the checkpoint's deadline passed", "past the deadline: message");
	sr_upload_abort(up);
	is_int(sr_store_head(st, "mp/late", &info, err), SR_STORE_NOTFOUND, "late: not visible");

	up = sr_store_upload_begin(st, "mp/cancelled", err);
	sr_upload_limit(up, sr_now() + 600, &cancel);
	is_int(sr_upload_write(up, big, 2 * part + 10, err), 0, "two parts before the cancel");
	sr_flag_set(&cancel, 1);
	for (i = 0; i < 6 && rc == 0; i++)
		rc = sr_upload_write(up, big, part, err);
	if (rc == 0)
		rc = sr_upload_commit(up, err);
	else
		sr_upload_abort(up);
	is_int(rc, -1, "the cancelled upload fails");
	ok(strstr(err, "upload mp/cancelled") != NULL && strstr(err, "cancelled") != NULL,
	    "cancelled: message: %s", err);
	is_int(sr_store_head(st, "mp/cancelled", &info, err), SR_STORE_NOTFOUND,
	    "cancelled: not visible");

	up = sr_store_upload_begin(st, "mp/small-late", err);
	sr_upload_limit(up, sr_now() - 1, NULL);
	is_int(sr_upload_write(up, big, 100, err), 0, "a small write is only buffered");
	is_int(sr_upload_commit(up, err), -1, "its one PUT past the deadline fails");
	is_str(err, "upload mp/small-late: the checkpoint's deadline passed", "small late: message");
}

#endif
