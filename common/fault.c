/*
 * fault.c: fault points for the fault tests (see fault.h). The environment
 * is read each time, which keeps this free of global state; the points sit
 * at step boundaries, not in hot loops, so the cost does not matter.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fault.h"

/* Sleep secs seconds, whatever signals interrupt the sleep. */
static void
fault_sleep(double secs)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)secs;
	until.tv_nsec += (long)((secs - (double)(time_t)secs) * 1e9);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
		;
}

void
sr_fault(const char *point)
{
	const char *spec = getenv("SPOTRUN_FAULT"), *action;
	size_t n = strlen(point);
	char *end;
	double secs;

	if (spec == NULL || strncmp(spec, point, n) != 0 || (spec[n] != '\0' && spec[n] != ':'))
		return;
	action = spec[n] == ':' ? spec + n + 1 : "";
	if (strcmp(action, "stop") == 0) {
		fprintf(stderr, "spotrun: fault injected at %s: stopping\n", point);
		fflush(stderr);
		raise(SIGSTOP);
		return;
	}
	if (strncmp(action, "delay=", 6) == 0) {
		secs = strtod(action + 6, &end);
		if (end != action + 6 && *end == '\0' && secs >= 0 && secs < 86400) {
			fprintf(stderr, "spotrun: fault injected at %s: delaying %g s\n", point, secs);
			fflush(stderr);
			fault_sleep(secs);
			return;
		}
	}
	if (*action != '\0') {
		/* A typo must not pass for a fault that never fires. */
		fprintf(stderr, "spotrun: SPOTRUN_FAULT=%s: unknown action (use POINT, "
		    "POINT:stop or POINT:delay=SECONDS); killing at %s\n", spec, point);
	} else
		fprintf(stderr, "spotrun: fault injected at %s\n", point);
	fflush(stderr);
	kill(getpid(), SIGKILL);
}
