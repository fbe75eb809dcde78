/*
 * sup-driver.c: a tiny init over runner/supervise.c, for the shell tests
 * (tests/t20-supervise.sh); not a test itself.
 *
 *	sup-driver [-g GRACE] CMD ARGS...
 *
 * Runs CMD in a process group of its own with this process's environment,
 * forwards SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 to that
 * group, reaps everything, and when CMD exits stops what it left behind
 * (sr_child_stop with GRACE seconds, 1 by default) and exits with CMD's
 * code: its status, 128+N when killed by signal N, 126/127 when it could
 * not be executed. Its own failures exit 70.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervise.h"
#include "util.h"

extern char **environ;

int
main(int argc, char **argv)
{
	struct sr_spawn_opts o;
	struct sr_child c;
	struct pollfd pfd;
	char err[SR_ERRMAX];
	double grace = 1.0;
	int sigfd, signo, status = 0, done = 0, opt;

	while ((opt = getopt(argc, argv, "+g:")) != -1) {
		if (opt != 'g')
			goto usage;
		grace = atof(optarg);
	}
	if (optind >= argc)
		goto usage;

	if (sr_subreaper_enable(err) == -1 || sr_sig_init(&sigfd, err) == -1) {
		fprintf(stderr, "sup-driver: %s\n", err);
		return 70;
	}
	memset(&o, 0, sizeof o);
	o.argv = argv + optind;
	o.envp = environ;
	if (sr_spawn(&o, &c, err) == -1) {
		fprintf(stderr, "sup-driver: %s\n", err);
		return 70;
	}
	if (c.exec_errno != 0)
		fprintf(stderr, "sup-driver: %s: %s\n", o.argv[0],
		    strerror(c.exec_errno));

	pfd.fd = sigfd;
	pfd.events = POLLIN;
	while (!done) {
		/* The timeout only guards against a lost wake-up. */
		if (poll(&pfd, 1, 1000) == -1 && errno != EINTR) {
			perror("sup-driver: poll");
			return 70;
		}
		while (sr_sig_next(sigfd, &signo)) {
			switch (signo) {
			case SIGINT:
			case SIGTERM:
			case SIGHUP:
			case SIGQUIT:
			case SIGUSR1:
			case SIGUSR2:
				sr_child_signal(&c, signo);
				break;
			}
		}
		done = sr_reap(&c, &status);
	}
	sr_child_stop(&c, grace);
	if (c.exec_errno != 0)
		return sr_exec_code(c.exec_errno);
	return sr_exit_code(status);

usage:
	fprintf(stderr, "usage: sup-driver [-g GRACE] CMD ARGS...\n");
	return 64;
}
