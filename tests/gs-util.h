/*
 * gs-util.h: helpers for the C tests of the gs:// store against
 * tests/gcsemu.py, our emulator of GCS's XML API: the emulator started on
 * loopback in a directory of the test's (its HMAC key pair in a file, its
 * request log with times), GCS's keys in the environment where spotrun
 * finds them first and nothing of AWS's, the emulator stopped and its
 * directory removed at exit, and the request log read back: lines counted,
 * and GCS's limit of one write a second per object name checked (a 429 is
 * only ever followed by the same request answered). Needs /usr/bin/python3
 * (the whole test is skipped without it); finds the emulator at
 * $top_srcdir/tests/gcsemu.py (set by make check) or next to this source.
 * Header-only, included once per test program after tap.h and
 * store-util.h.
 */
#ifndef SR_GS_UTIL_H
#define SR_GS_UTIL_H

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store-util.h"
#include "util.h"

#define GU_FN static __attribute__((unused))

#define GU_PY "/usr/bin/python3"
/* shaped like GCS's HMAC keys: a 61-character access id, a 40-character
 * base64 secret with '+' and '/' */
#define GU_ACCESS_ID "GOOG1EQX7TESTSPOTRUNEMULATORACCESSIDFORGCSHMACKEYS0123456789AB"
#define GU_SECRET "bGoa+V7g/yqDXvKRqq+JTFn4uQZbPiQJo4pf9RzJ"

/* The one emulator of a test program. */
static struct gu_emu {
	char dir[4096];		/* its files */
	char log[4200];		/* its request log */
	pid_t pid;
	int port;
	double rate;		/* --object-rate */
} gu;

GU_FN void
gu_stop(void)
{
	if (gu.pid > 0) {
		kill(gu.pid, SIGTERM);
		waitpid(gu.pid, NULL, 0);
		gu.pid = 0;
	}
}

GU_FN void
gu_cleanup(void)
{
	char *cmd;

	gu_stop();
	if (gu.dir[0] != '\0' && getenv("TU_KEEP") == NULL) {
		cmd = sr_asprintf("rm -rf '%s'", gu.dir);
		if (system(cmd) != 0)
			printf("# cleanup: %s failed\n", cmd);
		free(cmd);
	}
}

/* Where gcsemu.py is: $top_srcdir/tests, else this file's folder. */
GU_FN char *
gu_emulator_path(void)
{
	const char *top = getenv("top_srcdir");
	char *p, *q;

	if (top != NULL && top[0] != '\0')
		return sr_asprintf("%s/tests/gcsemu.py", top);
	p = sr_strdup(__FILE__);
	if (strrchr(p, '/') != NULL)
		strrchr(p, '/')[1] = '\0';
	else
		p[0] = '\0';
	q = sr_asprintf("%sgcsemu.py", p[0] ? p : "./");
	free(p);
	return q;
}

/* Start the emulator with bucket and the key pair, GCS's limit of one
 * write per object name every rate seconds (0: none), its log with times;
 * put the keys where spotrun looks first (GS_ACCESS_KEY_ID,
 * GS_SECRET_ACCESS_KEY) and AWS's out of the way. Skips the whole test
 * without python3; dies when the emulator does not come up. */
GU_FN void
gu_start(const char *bucket, double rate, const char *tag)
{
	char *emu = gu_emulator_path(), *keys, *portfile, ratebuf[32];
	FILE *f;

	if (access(GU_PY, X_OK) != 0)
		tap_skip_all("no " GU_PY);
	if (access(emu, R_OK) != 0)
		sr_fatal("no emulator at %s (set top_srcdir to the source tree)", emu);
	snprintf(gu.dir, sizeof gu.dir, "%s/%s-gs.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp", tag);
	if (mkdtemp(gu.dir) == NULL)
		sr_fatal("mkdtemp %s: %s", gu.dir, strerror(errno));
	atexit(gu_cleanup);
	keys = sr_asprintf("%s/keys", gu.dir);
	portfile = sr_asprintf("%s/port", gu.dir);
	snprintf(gu.log, sizeof gu.log, "%s/requests.log", gu.dir);
	if ((f = fopen(keys, "w")) == NULL ||
	    fprintf(f, "%s %s\n", GU_ACCESS_ID, GU_SECRET) < 0 || fclose(f) != 0)
		sr_fatal("write %s: %s", keys, strerror(errno));
	snprintf(ratebuf, sizeof ratebuf, "%g", rate);
	gu.rate = rate;
	{
		const char *argv[] = { GU_PY, emu, "--port-file", portfile, "--keys", keys,
			"--bucket", bucket, "--log", gu.log, "--log-times",
			"--object-rate", ratebuf, NULL };

		gu.port = su_server_start(argv, portfile, 10, emu, "", &gu.pid);
	}
	setenv("GS_ACCESS_KEY_ID", GU_ACCESS_ID, 1);
	setenv("GS_SECRET_ACCESS_KEY", GU_SECRET, 1);
	setenv("BOTO_CONFIG", "/dev/null", 1);
	unsetenv("GS_ENDPOINT_URL");
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	free(emu);
	free(keys);
	free(portfile);
}

/* Lines of the emulator's log containing every one of the needles (NULL
 * ends them). */
GU_FN int
gu_log_count(const char *needle, ...)
{
	FILE *f = fopen(gu.log, "r");
	char line[8192];
	int n = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL) {
		va_list ap;
		const char *s;
		int all = 1;

		va_start(ap, needle);
		for (s = needle; s != NULL; s = va_arg(ap, const char *))
			all &= strstr(line, s) != NULL;
		va_end(ap);
		n += all;
	}
	fclose(f);
	return n;
}

/* The last lines of the emulator's log, as TAP comments. */
GU_FN void
gu_log_show(int lines)
{
	char *cmd = sr_asprintf("tail -n %d '%s' | sed 's/^/#   /'", lines, gu.log);

	if (system(cmd) != 0)
		printf("# (no log)\n");
	free(cmd);
}

/* One logged request: "METHOD PATH [x-goog-if-generation-match=V] STATUS
 * [x-goog-generation=G] t=T"; the part before the status as the request. */
struct gu_line {
	char req[4096];
	int status;
	double t;
};

GU_FN int
gu_parse(const char *line, struct gu_line *l)
{
	const char *t = strstr(line, " t="), *p;
	size_t n;

	if (t == NULL)
		return -1;
	l->t = strtod(t + 3, NULL);
	/* the status: the first field of three digits after the path */
	for (p = strchr(line, ' '); p != NULL && p < t; p = strchr(p + 1, ' '))
		if (p[1] >= '1' && p[1] <= '5' && strspn(p + 1, "0123456789") == 3 &&
		    (p[4] == ' ' || p[4] == '\n'))
			break;
	if (p == NULL || p >= t)
		return -1;
	n = (size_t)(p - line);
	if (n >= sizeof l->req)
		n = sizeof l->req - 1;
	memcpy(l->req, line, n);
	l->req[n] = '\0';
	l->status = atoi(p + 1);
	return 0;
}

GU_FN int
gu_by_time(const void *a, const void *b)
{
	double d = ((const struct gu_line *)a)->t - ((const struct gu_line *)b)->t;

	return d < 0 ? -1 : d > 0;
}

/* Check the log against GCS's limit, from line `from` on (0: all):
 * *writes the writes that changed an object (PUT, DELETE or a multipart
 * completion answered 2xx), *refused the 429s, *unanswered the 429s that
 * no later line of the same request answered otherwise (a request given up
 * on), *close the pairs of changes to one object less than the rate apart
 * (the emulator's window broken: 0 unless it is off), in time order.
 * *lines: the log's
 * length, for the next call's from. Fills worst with the first unanswered
 * or close one ("" when none). */
struct gu_rate {
	int lines, writes, refused, unanswered, close;
	char worst[512];
};

GU_FN void
gu_rate_check(int from, struct gu_rate *r)
{
	FILE *f = fopen(gu.log, "r");
	char line[8192];
	struct gu_line *all = NULL;
	size_t n = 0, cap = 0, i, j;

	memset(r, 0, sizeof *r);
	if (f == NULL)
		return;
	while (fgets(line, sizeof line, f) != NULL) {
		struct gu_line l;

		if (r->lines++ < from || gu_parse(line, &l) != 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			all = sr_realloc(all, cap * sizeof *all);
		}
		all[n++] = l;
	}
	fclose(f);
	if (n > 0)
		qsort(all, n, sizeof *all, gu_by_time);
	for (i = 0; i < n; i++) {
		const char *q = all[i].req, *sp = strchr(q, ' ');
		size_t plen;
		int write = strncmp(q, "PUT ", 4) == 0 || strncmp(q, "DELETE ", 7) == 0 ||
		    (strncmp(q, "POST ", 5) == 0 && strstr(q, "uploadId=") != NULL);

		if (all[i].status == 429) {
			r->refused++;
			for (j = i + 1; j < n; j++)
				if (strcmp(all[j].req, q) == 0 && all[j].status != 429)
					break;
			if (j == n && r->unanswered++ == 0)
				snprintf(r->worst, sizeof r->worst, "never answered but 429: %s", q);
			continue;
		}
		if (!write || all[i].status < 200 || all[i].status >= 300 ||
		    (strncmp(q, "PUT ", 4) == 0 && strstr(q, "uploadId=") != NULL))
			continue;	/* a part is no change of the object */
		r->writes++;
		/* the object: the path up to '?' or ' ' */
		plen = strcspn(sp + 1, "? ");
		for (j = i + 1; j < n; j++) {
			const char *q2 = all[j].req, *sp2 = strchr(q2, ' ');
			int w2 = strncmp(q2, "PUT ", 4) == 0 || strncmp(q2, "DELETE ", 7) == 0 ||
			    (strncmp(q2, "POST ", 5) == 0 && strstr(q2, "uploadId=") != NULL);

			/* the emulator's window is on its monotonic clock, the log's
			 * times on the wall clock, read together: a millisecond apart
			 * at most */
			if (all[j].t - all[i].t >= gu.rate - 0.001)
				break;
			if (!w2 || all[j].status < 200 || all[j].status >= 300 ||
			    strcspn(sp2 + 1, "? ") != plen || strncmp(sp + 1, sp2 + 1, plen) != 0 ||
			    (strncmp(q2, "PUT ", 4) == 0 && strstr(q2, "uploadId=") != NULL))
				continue;
			if (r->close++ == 0 && r->unanswered == 0)
				snprintf(r->worst, sizeof r->worst, "%.*s changed twice in %.3f s",
				    (int)plen, sp + 1, all[j].t - all[i].t);
		}
	}
	free(all);
}

/* TAP lines for the whole log so far, what naming whose writes: every 429
 * was retried until answered, and no object was changed twice inside the
 * window (the emulator's own check). */
GU_FN void
gu_rate_ok(const char *what)
{
	struct gu_rate r;

	gu_rate_check(0, &r);
	ok(r.unanswered == 0, "%s %d writes on gs://: each of the %d refused with 429 "
	    "(GCS's one write a second per object) was retried until answered%s%s", what,
	    r.writes, r.refused, r.worst[0] ? ": " : "", r.worst);
	ok(r.close == 0, "... and no object was changed twice within %g s%s%s", gu.rate,
	    r.worst[0] ? ": " : "", r.worst);
}

#endif
