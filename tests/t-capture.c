/*
 * t-capture.c: common/capture.c, a program run and its output read: stdout
 * and stderr apart with the exit status, a signal's status, stdin empty,
 * a megabyte read whole, a program not on PATH, more output than allowed,
 * and a timeout that kills the whole process group (a grandchild too),
 * each with its error; then from several threads at once.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/wait.h>

#include "capture.h"
#include "tap.h"
#include "util.h"

static int
sh(const char *script, double timeout, size_t max, struct sr_capture *c, char *err)
{
	const char *argv[] = { "sh", "-c", script, NULL };

	err[0] = '\0';
	return sr_capture_run(argv, timeout, max, c, err);
}

/* Whether process pid ends (gone, or a zombie that init has yet to reap)
 * within a minute: a SIGKILL is delivered at once, but not seen at once. */
static int
dead(long pid)
{
	double t0 = sr_mono();
	char path[64], buf[512], *st;
	size_t len;

	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	while (sr_mono() - t0 < 60) {
		char err[SR_ERRMAX], *text;

		if (sr_read_file(path, sizeof buf, &text, &len, err) == -1)
			return 1;
		snprintf(buf, sizeof buf, "%s", text);
		free(text);
		if ((st = strrchr(buf, ')')) != NULL && st[1] == ' ' && st[2] == 'Z')
			return 1;
		sr_sleep(0.01);
	}
	return 0;
}

static void *
in_thread(void *arg)
{
	struct sr_capture c;
	char err[SR_ERRMAX], script[64];
	long k = (long)arg;
	int good;

	snprintf(script, sizeof script, "echo thread %ld", k);
	good = sh(script, 60, 1024, &c, err) == 0 && c.out != NULL &&
	    strncmp(c.out, script + 5, strlen(script + 5)) == 0 && WIFEXITED(c.status);
	sr_capture_free(&c);
	return good ? arg : NULL;
}

int
main(void)
{
	struct sr_capture c;
	char err[SR_ERRMAX];
	const char *nope[] = { "spotrun-no-such-program", "x", NULL };
	pthread_t th[8];
	double t0;
	long i, good;
	size_t k;

	is_int(sh("echo out; echo err >&2; exit 3", 60, 1024, &c, err), 0,
	    "a program that ends: 0 (%s)", err);
	is_str(c.out, "out\n", "its stdout");
	is_str(c.errout, "err\n", "its stderr, apart");
	ok(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 3, "its exit status (3)");
	sr_capture_free(&c);

	is_int(sh("cat; kill -TERM $$", 60, 1024, &c, err), 0, "one killed by a signal: 0");
	ok(c.out == NULL && c.out_len == 0, "stdin is empty (/dev/null): nothing printed");
	ok(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGTERM, "its status says SIGTERM");
	sr_capture_free(&c);

	is_int(sh("head -c 1048576 /dev/zero | tr '\\0' x", 60, 1 << 20, &c, err), 0,
	    "a megabyte at a limit of one: 0 (%s)", err);
	for (k = 0; c.out != NULL && k < c.out_len && c.out[k] == 'x'; k++)
		;
	ok(c.out_len == 1 << 20 && k == c.out_len && c.out[k] == '\0',
	    "read whole, NUL-terminated (%zu bytes)", c.out_len);
	sr_capture_free(&c);

	is_int(sr_capture_run(nope, 60, 1024, &c, err), -1, "a program not on PATH: -1");
	is_str(err, "run spotrun-no-such-program: not found (not on PATH)", "the error says so");
	sr_capture_free(&c);

	is_int(sh("head -c 5000 /dev/zero", 60, 4096, &c, err), -1,
	    "more output than allowed: -1");
	is_str(err, "run sh: more output than expected", "the error says so");
	sr_capture_free(&c);

	/* the grandchild is in the group: it holds the pipes open, and is
	 * killed with its parent */
	t0 = sr_mono();
	is_int(sh("sleep 300 & echo $!; wait", 0.5, 1024, &c, err), -1,
	    "a program past its timeout: -1");
	is_str(err, "run sh: no answer in 0.5 s", "the error says so");
	ok(sr_mono() - t0 < 200, "it did not wait for the grandchild's 300 s");
	ok(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGKILL, "it was killed (SIGKILL)");
	if (c.out != NULL) {
		long g = atol(c.out);

		ok(g > 0 && dead(g), "its grandchild (pid %ld, printed before) is killed too", g);
	} else
		ok(0, "the grandchild's pid was read before the timeout");
	sr_capture_free(&c);

	for (i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, in_thread, (void *)(i + 1));
	for (good = 0, i = 0; i < 8; i++) {
		void *r;

		pthread_join(th[i], &r);
		good += r == (void *)(i + 1);
	}
	is_int(good, 8, "eight threads at once each read their own program's output");
	return tap_done();
}
