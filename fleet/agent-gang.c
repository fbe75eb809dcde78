/*
 * agent-gang.c: an agent's part in a gang (doc/fleet.md, "Gangs"), for
 * agent-job.c: waiting, its slot renewed (and node 0's lease), until the
 * gang of a job of several machines is full or its timeout passes; then,
 * while the run goes, every GANG_WATCH seconds from the job's heartbeat
 * thread: this node's notice written into its slot, the others' read
 * (sr_gang_watch) and a notice of another node (or a node gone) passed to
 * the run through a pipe (sr_run_hooks's notice_fd), which takes it as its
 * own; and node 0's periodic requests passed on to the others the same
 * way (slot 0's request count). The address node 0 offers is the agent's label addr, else this
 * machine's first IPv4 address that is up and not loopback, else
 * 127.0.0.1.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent-int.h"
#include "provider.h"
#include "ranks.h"
#include "supervise.h"
#include "units.h"
#include "util.h"

/* Seconds between two looks at the other slots, forming and running: a
 * notice reaches every node within two of them (a member's through node
 * 0's slot). */
#define GANG_WATCH 0.5
/* Seconds between two steps of forming: from the first, doubling to the
 * most, and from the first again when the leader sees another member. A
 * gang forms in two rounds (the members join, the leader starts it, the
 * members follow), which at GANG_WATCH each cost a re-formed gang half a
 * second a notice (doc/benchmarks.md); the most bounds what a gang that
 * waits for machines costs the store (with 4 nodes, 20 reads a second). */
#define GANG_FORM_FIRST 0.05
#define GANG_FORM_MOST 0.2
/* What the fill time is by default: the leader of a range of nodes starts
 * with fewer than the maximum (at least the minimum) once it waited so long. */
#define GANG_FILL_DEFAULT 30.0

/* A duration from the environment: 0 (*out set or left), or -1 with err. */
static int
env_duration(const char *name, double min, double *out, char *err)
{
	const char *s = getenv(name);
	double v;

	if (s == NULL || *s == '\0')
		return 0;
	if (sr_parse_duration(s, &v) != 0 || v < min)
		return sr_err(err, "%s=%.40s: not a duration of at least %gs; give one (e.g. 5m), "
		    "or unset it for the default", name, s, min);
	*out = v;
	return 0;
}

int
sr_agent_gang_setup(struct sr_agent *ag, const char *addr, char *err)
{
	struct ifaddrs *ifs, *i;

	ag->gang_timeout = SR_GANG_TIMEOUT_DEFAULT;
	ag->gang_fill = GANG_FILL_DEFAULT;
	if (env_duration("SPOTRUN_GANG_TIMEOUT", 1, &ag->gang_timeout, err) == -1 ||
	    env_duration("SPOTRUN_GANG_FILL", 0, &ag->gang_fill, err) == -1)
		return -1;
	snprintf(ag->addr, sizeof ag->addr, "127.0.0.1");
	if (addr != NULL)
		snprintf(ag->addr, sizeof ag->addr, "%s", addr);
	else if (getifaddrs(&ifs) == 0) {
		for (i = ifs; i != NULL; i = i->ifa_next) {
			if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
			    !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
				continue;
			inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, ag->addr,
			    sizeof ag->addr);
			break;
		}
		freeifaddrs(ifs);
	}
	if (sr_agent_wake_open(ag, err) == -1) {
		sr_agent_say("warning: %s; its gangs pass notices through the queue's slots alone",
		    err);
		err[0] = '\0';
	}
	return 0;
}

void
sr_agent_gang_port(struct sr_agent *ag)
{
	char err[SR_ERRMAX];

	ag->claim.addr = ag->addr;
	if (sr_ranks_free_port(&ag->claim.port, err) == -1) {
		sr_agent_say("warning: %s", err);
		ag->claim.port = 0;
	}
}

int
sr_agent_gang_form(struct sr_agent *ag, struct sr_queue_job *j, struct sr_agent_gang *g,
    int *sig)
{
	struct sr_gang_form f = { j->marker.nodes_min, j->marker.nodes_max, ag->gang_fill,
		ag->gang_timeout, j->lease != NULL ? j->marker.key : NULL };
	struct sr_gang_slot lead;
	double lease_at = sr_mono(), step = GANG_FORM_FIRST;
	char err[SR_ERRMAX], said[SR_ERRMAX] = "";
	int rc, held = 0, seen = 0, told = 0;

	memset(g, 0, sizeof *g);
	g->slot = j->gang;
	g->node = sr_gang_node(j->gang);
	g->epoch = sr_gang_epoch(j->gang);
	g->notice_pipe[0] = g->notice_pipe[1] = -1;
	g->wake_fd = ag->wake_fd;
	snprintf(g->id, sizeof g->id, "%s", j->marker.id);
	*sig = 0;
	if (f.nodes_min < f.nodes_max)
		snprintf(said, sizeof said, "-%d", f.nodes_max);
	sr_agent_say("%s: gang node %d, epoch %lld: waiting for %d%s nodes (at most %.0fs)",
	    j->marker.id, g->node, (long long)g->epoch, f.nodes_min, said, f.timeout);
	said[0] = '\0';
	for (;;) {
		rc = sr_gang_step(g->slot, &f, &held, &lead, err);
		/* A gang forms in two rounds, each a wait of its own: the
		 * members join, the leader starts it. Each side wakes the
		 * other's wait (the leader learns its members, a member slot
		 * 0, from this step's reads) instead of leaving it to the next
		 * step's read, 0.05-0.2 s later. */
		if (rc == SR_GANG_STARTED) {
			g->nodes = held;
			if (g->node == 0)
				sr_agent_wake_peers(g);
			break;
		}
		if (rc == SR_GANG_FORMING && g->node != 0 && !told) {
			sr_agent_wake_peers(g);
			told = 1;
		}
		if (rc == SR_GANG_TIMEDOUT || rc == SR_GANG_OUT || rc == SR_GANG_LOST) {
			sr_agent_say("%s: gang node %d: %s", j->marker.id, g->node,
			    rc == SR_GANG_TIMEDOUT ? "no full gang in time: its slot is released" :
			    rc == SR_GANG_OUT ? "the gang goes on without this node" : err);
			return 1;
		}
		if (rc == SR_QUEUE_ERROR && strcmp(err, said) != 0) {
			snprintf(said, sizeof said, "%s", err);
			sr_agent_say("warning: %s: %s", j->marker.id, err);
		}
		/* the leader's lease lives on while its gang forms */
		if (j->lease != NULL && sr_mono() - lease_at >= ag->ttl / 3) {
			lease_at = sr_mono();
			if (sr_lease_renew(j->lease, err) == SR_LEASE_LOST) {
				sr_agent_say("%s: %s", j->marker.id, err);
				/* the job is another's now: its marker too */
				(void)sr_gang_set(g->slot, SR_GANG_RELEASED, 0, 0, err);
				return 1;
			}
		}
		if (held != seen) {
			seen = held;
			step = GANG_FORM_FIRST;	/* a member came: others may follow */
		}
		if ((*sig = sr_agent_wait(ag, step, 0)) != 0) {
			(void)sr_gang_abandon(g->slot, &f, err);
			return -1;
		}
		/* a node whose machine goes would stop the gang at its start:
		 * it leaves (the next machine's agent joins again) */
		if ((rc = sr_agent_watch_check(ag, "as the gang formed")) != 0) {
			if (sr_gang_abandon(g->slot, &f, err) != SR_QUEUE_OK)
				sr_agent_say("warning: %s: %s", j->marker.id, err);
			sr_agent_say("%s: gang node %d: its slot is released", j->marker.id, g->node);
			return rc == 2 ? 3 : 2;
		}
		step = step * 2 > GANG_FORM_MOST ? GANG_FORM_MOST : step * 2;
	}
	snprintf(g->addr, sizeof g->addr, "%s", lead.addr);
	g->port = lead.port;
	sr_agent_say("%s: gang of %d nodes started: this is node %d, MASTER_ADDR %s, MASTER_PORT %d",
	    j->marker.id, g->nodes, g->node, g->addr, g->port);
	if (pipe2(g->notice_pipe, O_CLOEXEC | O_NONBLOCK) == -1) {
		sr_errno(err, "agent: pipe");
		sr_agent_say("%s: %s", j->marker.id, err);
		(void)sr_gang_set(g->slot, SR_GANG_RELEASED, 0, 0, err);
		return 1;
	}
	if (pthread_mutex_init(&g->lock, NULL) != 0)
		sr_fatal("agent: pthread init failed");
	g->lock_init = 1;
	return 0;
}

int
sr_agent_gang_notice(struct sr_agent_gang *g, struct sr_notice *n)
{
	char c;

	if (read(g->notice_pipe[0], &c, 1) != 1)
		return 0;
	memset(n, 0, sizeof *n);
	if (c == 'r') {
		pthread_mutex_lock(&g->lock);
		n->deadline = g->peer_request;
		pthread_mutex_unlock(&g->lock);
		return 2;
	}
	n->kind = SR_NOTICE_PREEMPT;
	n->seen = sr_now();
	pthread_mutex_lock(&g->lock);
	n->deadline = g->peer_deadline;
	snprintf(n->reason, sizeof n->reason, "%s", g->peer_why);
	pthread_mutex_unlock(&g->lock);
	return 1;
}

void
sr_agent_gang_hooks(struct sr_agent_gang *g, struct sr_run_hooks *h)
{
	h->gang.node = g->node;
	h->gang.nodes = g->nodes;
	h->gang.master_addr = g->addr;
	h->gang.master_port = g->port;
	h->gang.epoch = g->epoch;
	h->notice_fd = g->notice_pipe[0];
}

void
sr_agent_gang_noticed(struct sr_agent_gang *g, double deadline)
{
	pthread_mutex_lock(&g->lock);
	if (g->own_deadline == 0)
		g->own_deadline = deadline > 0 ? deadline : sr_now();
	pthread_mutex_unlock(&g->lock);
}

void
sr_agent_gang_requested(struct sr_agent_gang *g, double deadline)
{
	pthread_mutex_lock(&g->lock);
	if (g->node == 0)
		g->own_request = deadline > 0 ? deadline : sr_now() + 60;
	pthread_mutex_unlock(&g->lock);
}

int
sr_agent_gang_own_notice(struct sr_agent_gang *g)
{
	int own;

	pthread_mutex_lock(&g->lock);
	own = g->own_deadline > 0;
	pthread_mutex_unlock(&g->lock);
	return own;
}

void
sr_agent_gang_beat(struct sr_agent_gang *g, const char *id)
{
	char err[SR_ERRMAX], one = 'n', req = 'r';
	double own, request, deadline;
	int rc, over;

	pthread_mutex_lock(&g->lock);
	own = g->own_published ? 0 : g->own_deadline;
	request = g->own_request;
	g->own_request = 0;
	pthread_mutex_unlock(&g->lock);
	if (request > 0 && own == 0) {
		if (sr_gang_request(g->slot, request, err) == SR_QUEUE_OK)
			sr_agent_wake_peers(g);	/* the members ask their ranks now */
		else
			sr_agent_say("warning: %s: %s", id, err);
	}
	if (own > 0) {
		if (sr_gang_set(g->slot, SR_GANG_NOTICE, 0, own, err) == SR_QUEUE_OK) {
			g->own_published = 1;
			g->woke_notice = 1;
			sr_agent_wake_peers(g);	/* node 0, or node 0's members, read it now */
			sr_agent_say("%s: gang node %d: its notice is passed to the gang", id, g->node);
		} else
			sr_agent_say("warning: %s: %s", id, err);
	}
	pthread_mutex_lock(&g->lock);
	over = g->over;
	pthread_mutex_unlock(&g->lock);
	if (over)
		return;
	rc = sr_gang_watch(g->slot, g->nodes, &deadline, err);
	if (g->node == 0 && (rc == SR_GANG_NOTICED || rc == SR_GANG_BROKEN) && !g->woke_notice) {
		/* slot 0 says notice now: the members read it at once */
		g->woke_notice = 1;
		sr_agent_wake_peers(g);
	}
	if (rc == SR_GANG_REQUESTED) {
		/* node 0 asked its ranks: this node's are asked too */
		pthread_mutex_lock(&g->lock);
		g->peer_request = deadline;
		pthread_mutex_unlock(&g->lock);
		if (write(g->notice_pipe[1], &req, 1) == -1)
			sr_agent_say("warning: %s: notice pipe: %s", id, strerror(errno));
		return;
	}
	if (rc != SR_GANG_NOTICED && rc != SR_GANG_BROKEN) {
		if ((rc == SR_QUEUE_ERROR || rc == SR_GANG_LOST) && strcmp(err, g->said) != 0) {
			snprintf(g->said, sizeof g->said, "%s", err);
			sr_agent_say("warning: %s: %s", id, err);
		}
		return;
	}
	pthread_mutex_lock(&g->lock);
	if (g->injected || g->own_deadline > 0 || g->over) {
		pthread_mutex_unlock(&g->lock);
		return;
	}
	g->injected = 1;
	/* a node gone stops the gang as a notice would: what can be saved is */
	g->peer_deadline = rc == SR_GANG_NOTICED && deadline > 0 ? deadline : sr_now() + 30;
	snprintf(g->peer_why, sizeof g->peer_why, "%s", rc == SR_GANG_NOTICED ?
	    "a notice on another node of the gang" : "a node of the gang is gone");
	pthread_mutex_unlock(&g->lock);
	sr_agent_say("%s: gang node %d: %s", id, g->node, rc == SR_GANG_NOTICED ?
	    "another node got a notice: this one checkpoints and stops too" : err);
	if (write(g->notice_pipe[1], &one, 1) == -1)
		sr_agent_say("warning: %s: notice pipe: %s", id, strerror(errno));
}

double
sr_agent_gang_interval(void)
{
	return GANG_WATCH;
}

void
sr_agent_gang_over(struct sr_agent_gang *g)
{
	pthread_mutex_lock(&g->lock);
	g->over = 1;
	pthread_mutex_unlock(&g->lock);
}

void
sr_agent_gang_end(struct sr_agent_gang *g, int done)
{
	char err[SR_ERRMAX];
	int rc = SR_QUEUE_OK;

	/* A node that got a notice leaves its slot saying so until it expires
	 * (the others may not have read it yet: a notice, not a node gone);
	 * the others release theirs. */
	if (g->slot != NULL && g->lock_init && g->own_deadline > 0)
		rc = g->own_published ? SR_QUEUE_OK :
		    sr_gang_set(g->slot, SR_GANG_NOTICE, 0, g->own_deadline, err);
	else if (g->slot != NULL)
		rc = sr_gang_set(g->slot, done ? SR_GANG_DONE : SR_GANG_RELEASED, 0, 0, err);
	if (rc != SR_QUEUE_OK)
		sr_agent_say("warning: %s", err);
	g->slot = NULL;
	if (g->notice_pipe[0] != -1) {
		close(g->notice_pipe[0]);
		close(g->notice_pipe[1]);
		g->notice_pipe[0] = g->notice_pipe[1] = -1;
	}
	if (g->lock_init)
		pthread_mutex_destroy(&g->lock);
	g->lock_init = 0;
}
