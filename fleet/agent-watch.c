/*
 * agent-watch.c: the agent's machine between its runs. A run watches its
 * machine's notices through a provider of its own; between runs (idle,
 * claiming, a gang forming) the agent watches them itself, with the
 * settings of the last job it ran ([provider] as that run used them: the
 * local provider's trace node and machine, a cloud's metadata service) or,
 * before its first job, with its own provider's when that is a cloud. So a
 * machine whose notice comes then is given no job and no node of a gang:
 * the agent moves to the next machine (the local provider's, up at once)
 * or ends as preempted (a cloud's machine goes). A job whose provider is
 * auto, on an agent without --provider, is not watched between runs: the
 * probes would be paid at every idle.
 *
 * The provider is made anew for each machine watched and freed when a job
 * is claimed for it (the run's own watches then): the local provider counts
 * a machine's age from vm_since only for the first machine it starts.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent-int.h"
#include "util.h"

struct sr_agent_watch {
	struct sr_provider_conf conf;	/* its strings its own */
	int set;			/* conf holds settings to watch with */
	struct sr_provider *p;		/* NULL: not watching now */
	int vm;				/* the machine p watches (ag->vm then) */
	int broken;			/* these settings failed: not tried again */
};

static void
conf_clear(struct sr_provider_conf *c)
{
	free((char *)c->name);
	free((char *)c->notice_file);
	free((char *)c->trace);
	free((char *)c->endpoint);
	memset(c, 0, sizeof *c);
}

static char *
dup_or_null(const char *s)
{
	return s != NULL ? sr_strdup(s) : NULL;
}

void
sr_agent_watch_stop(struct sr_agent *ag)
{
	struct sr_agent_watch *w = ag->watch;

	if (w == NULL || w->p == NULL)
		return;
	sr_provider_stop_vm(w->p, NULL);
	sr_provider_free(w->p);
	w->p = NULL;
	w->vm = 0;
}

void
sr_agent_watch_keep(struct sr_agent *ag, const struct sr_provider_conf *c, int trace_node)
{
	struct sr_agent_watch *w = ag->watch;

	if (w == NULL)
		w = ag->watch = sr_calloc(1, sizeof *w);
	sr_agent_watch_stop(ag);
	conf_clear(&w->conf);
	w->set = 0;
	w->broken = 0;
	if (c->name == NULL || strcmp(c->name, "auto") == 0)
		return;
	w->conf = *c;
	w->conf.name = sr_strdup(c->name);
	w->conf.notice_file = dup_or_null(c->notice_file);
	w->conf.trace = dup_or_null(c->trace);
	w->conf.endpoint = dup_or_null(c->endpoint);
	w->conf.trace_node = trace_node;
	w->conf.machine_only = 1;
	w->set = 1;
}

void
sr_agent_watch_free(struct sr_agent *ag)
{
	if (ag->watch == NULL)
		return;
	sr_agent_watch_stop(ag);
	conf_clear(&ag->watch->conf);
	free(ag->watch);
	ag->watch = NULL;
}

/* Watching ag->vm: 0, or -1 (said once: these settings are not tried
 * again until the next job's). */
static int
watching(struct sr_agent *ag)
{
	struct sr_agent_watch *w = ag->watch;
	char err[SR_ERRMAX];

	if (w->p != NULL && w->vm == ag->vm)
		return 0;
	sr_agent_watch_stop(ag);
	w->conf.vm_since = ag->vm_since;
	if (sr_provider_new(&w->conf, &w->p, err) != 0)
		w->p = NULL;
	else if (sr_provider_start_vm(w->p, ag->vm, err) == 0) {
		w->vm = ag->vm;
		return 0;
	}
	if (w->p != NULL)
		sr_provider_free(w->p);
	w->p = NULL;
	w->broken = 1;
	sr_agent_say("warning: this machine is not watched between jobs: %s", err);
	return -1;
}

/* Whether machine ag->vm's preemption notice came (into *n). */
static int
going(struct sr_agent *ag, struct sr_notice *n)
{
	struct sr_agent_watch *w = ag->watch;
	char err[SR_ERRMAX];
	int rc;

	if (w == NULL || !w->set || w->broken || watching(ag) == -1)
		return 0;
	while ((rc = sr_provider_read(w->p, n, err)) == 1)
		if (n->kind == SR_NOTICE_PREEMPT)
			return 1;
	if (rc == -1)
		sr_agent_say("warning: this machine's notices between jobs: %s", err);
	return 0;
}

int
sr_agent_watch_fd(const struct sr_agent *ag)
{
	return ag->watch != NULL && ag->watch->p != NULL ? sr_provider_fd(ag->watch->p) : -1;
}

int
sr_agent_machine_goes(struct sr_agent *ag, int next_vm)
{
	if (!next_vm) {
		sr_agent_place_preempted(ag);
		return 1;
	}
	/* the next machine is up: its scaler may go on */
	ag->vm++;
	ag->vm_since = sr_now();
	__atomic_store_n(&ag->going, 0, __ATOMIC_RELAXED);
	return 0;
}

int
sr_agent_watch_check(struct sr_agent *ag, const char *what)
{
	struct sr_notice n;
	char left[32];
	int next_vm;

	if (!going(ag, &n))
		return 0;
	next_vm = sr_provider_next_vm(ag->watch->p);
	sr_agent_watch_stop(ag);
	if (n.deadline > n.seen)
		sr_fmt_duration(n.deadline - n.seen, left, sizeof left);
	else
		snprintf(left, sizeof left, "none");
	if (next_vm)
		sr_agent_say("this machine's notice came %s: %s, deadline in %s; on to machine %d",
		    what, n.reason, left, ag->vm + 1);
	else
		sr_agent_say("this machine's notice came %s: %s, deadline in %s; the machine goes, "
		    "the agent ends", what, n.reason, left);
	return sr_agent_machine_goes(ag, next_vm) ? 2 : 1;
}
