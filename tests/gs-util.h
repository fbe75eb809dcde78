/*
 * gs-util.h: helpers for the C tests of the gs:// store against
 * tests/gcsemu.py, our emulator of GCS's XML API: the emulator started on
 * loopback in a directory of the test's (its HMAC key pair in a file, its
 * request log with times), GCS's keys in the environment where spotrun
 * finds them first and nothing of AWS's, the emulator stopped and its
 * directory removed at exit, and the request log read back: lines counted,
 * and GCS's limit of one write a second per object name checked by
 * gcsemu.py --check-log (every 429 followed by the same request answered,
 * no object changed twice within the limit). Needs /usr/bin/python3
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

/* TAP lines for the whole log so far, what naming whose writes, from
 * gcsemu.py --check-log: every 429 was retried until answered, and no
 * object was changed twice within the limit (the emulator's own window). */
GU_FN void
gu_rate_ok(const char *what)
{
	char *emu = gu_emulator_path(), *cmd, first[256] = "", notes[1024] = "", line[512];
	int writes = -1, refused = -1, unanswered = -1, close = -1;
	FILE *f;

	cmd = sr_asprintf("'%s' '%s' --check-log '%s' --object-rate %g 2>&1", GU_PY, emu,
	    gu.log, gu.rate);
	if ((f = popen(cmd, "r")) != NULL) {
		if (fgets(first, sizeof first, f) != NULL)
			sscanf(first, "writes=%d refused=%d unanswered=%d close=%d", &writes,
			    &refused, &unanswered, &close);
		while (fgets(line, sizeof line, f) != NULL)
			if (strlen(notes) + strlen(line) + 3 < sizeof notes) {
				strcat(notes, "; ");
				strncat(notes, line, strcspn(line, "\n"));
			}
		pclose(f);
	}
	ok(writes > 0 && unanswered == 0, "%s %d writes on gs://: each of the %d refused with "
	    "429 (GCS's one write a second per object) was retried until answered%s", what,
	    writes, refused, notes);
	ok(close == 0, "... and no object was changed twice within %g s", gu.rate);
	free(cmd);
	free(emu);
}

#endif
