/*
 * fault.c: crash points for the fault tests (see fault.h). The environment
 * is read each time, which keeps this free of global state; the points sit
 * at step boundaries, not in hot loops, so the cost does not matter.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault.h"

void
sr_fault(const char *point)
{
	const char *spec = getenv("SPOTRUN_FAULT");

	if (spec == NULL || strcmp(spec, point) != 0)
		return;
	fprintf(stderr, "spotrun: fault injected at %s\n", point);
	fflush(stderr);
	kill(getpid(), SIGKILL);
}
