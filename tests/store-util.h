/*
 * store-util.h: what the C tests of the network stores share, whichever the
 * server (tests/s3-util.h adds Ceph RGW and the aws CLI, tests/az-util.h
 * Azurite and the Azure CLI): opening a store, seeded bytes, counting a
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

#endif
