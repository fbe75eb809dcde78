/*
 * agent-data.c: a claimed job's [data] made real on this machine before
 * its run (sr_agent_data, agent-int.h; doc/fleet.md "Data"), by the
 * runner's fetcher (data.h) into the machine's cache, DIR/data, which
 * every job and every later claim of the agents of the machine share: a
 * second job, or the same job resumed here, fetches only what changed in
 * the store. Its lines go to the agent's log and to the job's log as
 * setup's do (attempt 0); while it fetches, the agent's signals, the
 * job's cancel pipe and its lease (renewed by the caller's keeper) are
 * watched, and each stops it.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent-int.h"
#include "data.h"
#include "joblog.h"
#include "jobspec.h"
#include "supervise.h"
#include "util.h"

struct ctx {
	struct sr_agent *ag;
	struct sr_agent_data *d;
	struct sr_joblog *l;
};

static void
say(void *arg, const char *line)
{
	struct ctx *c = arg;

	sr_agent_say("%s: %s", c->d->id, line);
	if (c->l != NULL)
		(void)sr_joblog_note(c->l, "%s", line);
}

static int
stop(void *arg)
{
	struct ctx *c = arg;
	struct sr_agent_data *d = c->d;
	int sig;
	char b;

	while (sr_sig_next(c->ag->sigfd, &sig) == 1) {
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT)
			d->signal = sig;
		else if (sig == SIGCHLD)
			while (waitpid(-1, NULL, WNOHANG) > 0)
				;
	}
	if (d->signal == 0 && !d->cancelled && d->stop_fd != -1 && read(d->stop_fd, &b, 1) == 1)
		d->cancelled = 1;
	if (d->signal == 0 && !d->cancelled && !d->lost && d->keeper != NULL &&
	    sr_lease_keeper_status(d->keeper, d->lost_why) != SR_LEASE_OK)
		d->lost = 1;
	return d->signal != 0 || d->cancelled || d->lost;
}

int
sr_agent_data(struct sr_agent *ag, struct sr_agent_data *d, char *err)
{
	struct sr_data_opts o;
	struct ctx c;
	char *cache = sr_asprintf("%s/data", ag->dir);
	int rc;

	d->signal = d->cancelled = d->lost = 0;
	d->lost_why[0] = '\0';
	memset(&d->res, 0, sizeof d->res);
	c.ag = ag;
	c.d = d;
	if ((c.l = sr_joblog_open(NULL, sr_mono(), err)) == NULL) {
		free(cache);
		return -1;
	}
	if (d->log != NULL)
		sr_joblog_set_sink(c.l, d->log, d->log_arg);
	memset(&o, 0, sizeof o);
	o.cache = cache;
	o.say = say;
	o.stop = stop;
	o.arg = &c;
	rc = sr_data_fetch(d->js, &o, &d->res, err);
	if (rc == -1)
		say(&c, err);
	else if (rc == 1)
		say(&c, d->signal != 0 ? "data: stopped (the agent was signalled)" :
		    d->cancelled ? "data: stopped (the job was cancelled)" :
		    "data: stopped (its lease was lost)");
	sr_joblog_close(c.l);
	free(cache);
	return rc == 1 ? 0 : rc;
}
