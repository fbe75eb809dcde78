/*
 * mdemu-util.h: driving tests/mdemu (the metadata emulator) from the
 * provider tests: start it on a random port with its options, read its
 * request log, wait for a provider's notice. Header-only, included once per
 * test program after tap.h.
 */
#ifndef SR_MDEMU_UTIL_H
#define SR_MDEMU_UTIL_H

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "provider.h"
#include "util.h"

#define MU_FN static __attribute__((unused))

/* A loopback port where nothing listens: a connection is refused at once. */
#define MU_CLOSED "http://127.0.0.1:1"

/* Point all three metadata endpoints at MU_CLOSED, so that no provider and
 * no "auto" probe in a test ever reaches the real addresses
 * (169.254.169.254, metadata.google.internal, fd00:ec2::254): call it first
 * in main, and to undo a test's own override. */
MU_FN void
no_cloud(void)
{
	setenv("SPOTRUN_AWS_ENDPOINT", MU_CLOSED, 1);
	setenv("SPOTRUN_GCP_ENDPOINT", MU_CLOSED, 1);
	setenv("SPOTRUN_AZURE_ENDPOINT", MU_CLOSED, 1);
}

struct emu {
	pid_t pid;
	int port;
	double t0;		/* wall clock just before it started */
	char log[512];
	char url[64];
};

/* Start tests/mdemu with the options in args (NULL-terminated); its port
 * file and log go to dir. */
MU_FN void
emu_start(struct emu *e, const char *dir, const char *const *args)
{
	const char *bd = getenv("top_builddir");
	char bin[512], portfile[512], *line = NULL;
	const char *argv[32];
	static int serial;	/* names each emulator's files */
	double end;
	int n = 0;

	snprintf(bin, sizeof bin, "%s/tests/mdemu", bd != NULL ? bd : ".");
	snprintf(portfile, sizeof portfile, "%s/port.%d", dir, ++serial);
	snprintf(e->log, sizeof e->log, "%s/log.%d", dir, serial);
	argv[n++] = bin;
	argv[n++] = "-p";
	argv[n++] = portfile;
	argv[n++] = "-l";
	argv[n++] = e->log;
	while (args != NULL && *args != NULL && n < 30)
		argv[n++] = *args++;
	argv[n] = NULL;
	e->t0 = sr_now();
	if ((e->pid = fork()) == -1)
		sr_fatal("fork: %s", strerror(errno));
	if (e->pid == 0) {
		/* Never outlive the test, and never hold the harness's pipe:
		 * a test that dies must not leave the harness waiting. */
		int null = open("/dev/null", O_RDWR);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (null != -1) {
			dup2(null, 0);
			dup2(null, 1);
		}
		execv(bin, (char *const *)argv);
		fprintf(stderr, "exec %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	end = sr_mono() + 5;
	while (sr_read_file(portfile, 64, &line, NULL, NULL) == -1) {
		if (sr_mono() > end)
			sr_fatal("mdemu did not start (%s)", bin);
		sr_sleep(0.01);
	}
	e->port = atoi(line);
	free(line);
	snprintf(e->url, sizeof e->url, "http://127.0.0.1:%d", e->port);
}

MU_FN void
emu_stop(struct emu *e)
{
	kill(e->pid, SIGTERM);
	waitpid(e->pid, NULL, 0);
}

/* The end of a test's watch: provider p (its VM stopped first) and the
 * emulator e. */
MU_FN void
unwatch(struct sr_provider *p, struct emu *e)
{
	sr_provider_free(p);
	emu_stop(e);
}

/* How many lines of the emulator's log are exactly line. */
MU_FN int
log_count(const struct emu *e, const char *line)
{
	char buf[1024];
	FILE *f = fopen(e->log, "r");
	int n = 0;

	if (f == NULL)
		return -1;
	while (fgets(buf, sizeof buf, f) != NULL) {
		buf[strcspn(buf, "\n")] = '\0';
		if (strcmp(buf, line) == 0)
			n++;
	}
	fclose(f);
	return n;
}

/* log_count, waiting up to secs for at least want such lines: the
 * emulator logs a request after it has sent the reply, so a client can
 * see the reply before the line is there. */
MU_FN int
log_count_wait(const struct emu *e, const char *line, int want, double secs)
{
	double end = sr_mono() + secs;
	int n;

	while ((n = log_count(e, line)) < want && sr_mono() < end)
		usleep(20000);
	return n;
}

/* How many lines of the log contain s. */
MU_FN int
log_grep(const struct emu *e, const char *s)
{
	char buf[1024];
	FILE *f = fopen(e->log, "r");
	int n = 0;

	if (f == NULL)
		return -1;
	while (fgets(buf, sizeof buf, f) != NULL)
		if (strstr(buf, s) != NULL)
			n++;
	fclose(f);
	return n;
}

MU_FN int
wait_notice(struct sr_provider *p, double timeout, struct sr_notice *n)
{
	double end = sr_mono() + timeout;
	char err[SR_ERRMAX];
	struct pollfd pfd;
	int r;

	for (;;) {
		if ((r = sr_provider_read(p, n, err)) != 0)
			return r == 1;
		if (sr_mono() >= end)
			return 0;
		pfd.fd = sr_provider_fd(p);
		pfd.events = POLLIN;
		poll(&pfd, 1, (int)((end - sr_mono()) * 1000) + 1);
	}
}

/* Start a VM of provider p; dies on failure (the tests' set-up). */
MU_FN void
start(struct sr_provider *p)
{
	char err[SR_ERRMAX];

	if (sr_provider_start_vm(p, 1, err) == -1)
		sr_fatal("start_vm: %s", err);
}

/* Stop p's VM; how long that took, in seconds. */
MU_FN double
timed_stop(struct sr_provider *p)
{
	double t = sr_mono();

	sr_provider_stop_vm(p, NULL);
	return sr_mono() - t;
}

/* Start the emulator as emu_start does, and take its start time (wall
 * clock) from the first line of its log. */
MU_FN void
emu_run(struct emu *e, const char *dir, const char *const *args)
{
	char *text = NULL;

	emu_start(e, dir, args);
	if (sr_read_file(e->log, 1 << 20, &text, NULL, NULL) == -1 ||
	    sscanf(text, "start %lf", &e->t0) != 1)
		sr_fatal("mdemu's log lacks its start line");
	free(text);
}

#endif
