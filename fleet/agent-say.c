/*
 * agent-say.c: the agent's messages, "spotrun agent: MESSAGE" on stderr,
 * for every file of the agent (agent-int.h).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent-int.h"
#include "util.h"

void
sr_agent_say(const char *fmt, ...)
{
	char *msg;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		sr_fatal("sr_agent_say: out of memory");
	va_end(ap);
	fprintf(stderr, "spotrun agent: %s\n", msg);
	fflush(stderr);
	free(msg);
}
