/*
 * t-gang.c: the slots of a gang (queue/gang.h) on file:// and Ceph RGW: a
 * gang job's pending marker (its nodes field), the leader's lease and slot
 * 0 and a member's slot 1 in their exact JSON, 8 processes claiming a job
 * of 2 nodes (exactly 2 win: one leader, one member, the rest find nothing),
 * a stale slot (its TTL over) taken over by another agent, a gang that does
 * not fill released after its timeout (the lease too, its marker put back),
 * a gang of 2-3 started with 2 once the fill time has passed, a member left
 * out of a gang that started without it, notices passed on through slot 0
 * to every node, a gang job whose leader died put back in the queue by a
 * claim of its expired lease, and the end of node 0's job (slot 0 done).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gang.h"
#include "lease.h"
#include "queue.h"
#include "store.h"
#include "tap.h"
#include "mdemu-util.h"
#include "s3-util.h"
#include "queue-util.h"
#include "util.h"

#define T0 1764560000.0		/* 2025-12-01T03:33:20Z */

static char url[1100];		/* the queue of the test running */
static char base[1024];		/* the queues' URL: base-NAME then query */
static const char *query = "";

/* A queue of its own for each test, so that no job of another is claimed. */
static struct sr_queue *
open_queue(const char *name)
{
	struct sr_queue *q;
	char err[SR_ERRMAX];

	snprintf(url, sizeof url, "%s-%s%s", base, name, query);
	if (sr_queue_open(url, &q, err) != 0)
		sr_fatal("%s", err);
	return q;
}

static void
add(struct sr_queue *q, const char *id, int nmin, int nmax, double when)
{
	struct sr_queue_meta m = { .id = id, .nodes_min = nmin, .nodes_max = nmax,
		.submitted = when, .by = "me@laptop" };
	const char *spec = "[job]\nname = x\n";
	char err[SR_ERRMAX];

	if (sr_queue_add(q, spec, strlen(spec), &m, err) != 0)
		sr_fatal("add %s: %s", id, err);
}

static void
owner(struct sr_lease_owner *o, const char *agent)
{
	char err[SR_ERRMAX];

	if (sr_lease_owner_local(o, agent, "", "local", err) != 0)
		sr_fatal("%s", err);
}

static struct sr_queue_agent
agent(const struct sr_lease_owner *o, double ttl)
{
	struct sr_queue_agent a = { .owner = o, .ttl = ttl, .addr = "127.0.0.1", .port = 29400 };

	return a;
}

/* Keys under prefix, tab-separated, into out. */
static const char *
keys(struct sr_queue *q, const char *prefix, char *out, size_t len)
{
	return qu_keys(sr_queue_store(q), prefix, out, len);
}

/* A slot's JSON with its times replaced by T, for exact comparison. */
static char *
slot_text(struct sr_queue *q, const char *id, int node)
{
	char key[256], err[SR_ERRMAX], *t, *p;

	if (sr_gang_key(id, node, key, sizeof key, err) == -1)
		sr_fatal("%s", err);
	if ((t = qu_get(sr_queue_store(q), key, NULL)) == NULL)
		return sr_strdup("(none)");
	/* "since":N,"renewed":N,"expires":N -> T */
	for (p = t; (p = strstr(p, "\":")) != NULL; p += 2) {
		const char *names[] = { "since", "renewed", "expires" };
		size_t i;

		for (i = 0; i < 3; i++) {
			size_t n = strlen(names[i]);

			if ((size_t)(p - t) >= n + 1 && strncmp(p - n, names[i], n) == 0 &&
			    *(p - n - 1) == '"') {
				char *e = p + 2;

				while ((*e >= '0' && *e <= '9') || *e == '.')
					e++;
				p[2] = 'T';
				memmove(p + 3, e, strlen(e) + 1);
			}
		}
	}
	return t;
}

/* The JSON of a fresh slot of job g2 at epoch 1, its times T (slot_text). */
static const char *
want_slot(char *want, size_t len, int node, const struct sr_lease_owner *o, const char *addr,
    int port)
{
	snprintf(want, len, "{\"job\":\"g2\",\"node\":%d,\"epoch\":1,\"state\":\"waiting\","
	    "\"owner\":{\"host\":\"%s\",\"pid\":%ld,\"agent\":\"%s\"},\"addr\":\"%s\","
	    "\"port\":%d,\"wake\":0,\"nodes\":0,\"since\":T,\"renewed\":T,\"expires\":T,"
	    "\"ttl\":60.0,\"deadline\":0.0,\"request\":0,\"request_deadline\":0.0}", node, o->host,
	    o->pid, o->agent, addr, port);
	return want;
}

static void
test_marker_and_lead(struct sr_queue *q, const struct sr_lease_owner *a,
    const struct sr_lease_owner *b)
{
	struct sr_queue_agent aa = agent(a, 60), ab = agent(b, 60);
	struct sr_queue_job *j0, *j1;
	struct sr_gang_slot s;
	char err[SR_ERRMAX], out[1024], want[1024], *t;
	int rc;

	add(q, "g2", 2, 3, T0);
	is_str(keys(q, "pending/", out, sizeof out), "pending/09999~1764560000000~g2~0-0~~q~0~~2-3",
	    "a gang's pending marker ends with its nodes, MIN-MAX");
	t = qu_get(sr_queue_store(q), "jobs/g2/meta.json", NULL);
	ok(t != NULL && strstr(t, "\"nodes\": {\n  \"min\": 2,\n  \"max\": 3\n }") != NULL,
	    "... and meta.json has them");
	free(t);
	rc = sr_queue_claim(q, &aa, &j0, err);
	is_int(rc, SR_QUEUE_OK, "the first agent claims the gang job");
	ok(rc == 0 && j0->gang != NULL && sr_gang_node(j0->gang) == 0 && j0->lease != NULL,
	    "... as its leader: slot 0 and the job's lease");
	if (rc != 0)
		return;
	is_int((int)sr_gang_epoch(j0->gang), 1, "... the gang's epoch is the lease's (1)");
	t = slot_text(q, "g2", 0);
	is_str(t, want_slot(want, sizeof want, 0, a, "127.0.0.1", 29400),
	    "... slot 0 in its exact JSON: waiting, node 0's address and port");
	free(t);
	is_str(keys(q, "pending/", out, sizeof out), "pending/09999~1764560000000~g2~0-0~~q~0~~2-3",
	    "... the marker stays while the gang forms");
	rc = sr_queue_claim(q, &ab, &j1, err);
	ok(rc == 0 && j1->gang != NULL && sr_gang_node(j1->gang) == 1 && j1->lease == NULL,
	    "the second agent joins it: slot 1, no lease");
	if (rc != 0)
		return;
	ok(j1->spec != NULL && strcmp(j1->spec, "[job]\nname = x\n") == 0 &&
	    j1->store != NULL, "... with the job's spec and store");
	is_int((int)sr_gang_epoch(j1->gang), 1, "... at the gang's epoch");
	t = slot_text(q, "g2", 1);
	is_str(t, want_slot(want, sizeof want, 1, b, "127.0.0.1", 0),
	    "... slot 1 in its exact JSON: its agent's address, no port, no wake port");
	free(t);
	rc = sr_gang_read(q, "g2", 1, &s, err);
	ok(rc == 0 && s.state == SR_GANG_WAITING && sr_gang_live(&s, sr_now()), "... read back: live");
	sr_queue_job_free(j0);
	sr_queue_job_free(j1);
}

/* 8 agents for a gang of 2 nodes: 100 + the node each got. */
static int
node_got(const struct sr_queue_job *j)
{
	return 100 + sr_gang_node(j->gang);
}

static int
claimer(int i, void *arg)
{
	(void)arg;
	return qu_claimer(url, i, agent(NULL, 60), node_got);
}

static void
test_race(struct sr_queue *q)
{
	struct qu_crowd c;
	struct sr_gang_slot s;
	char err[SR_ERRMAX];

	add(q, "race", 2, 2, T0 + 10);
	qu_crowd_run(&c, 8, claimer, NULL);
	is_int(qu_crowd_count(&c, 100), 1, "8 agents claim a job of 2 nodes: one leads (slot 0)");
	is_int(qu_crowd_count(&c, 101), 1, "... one joins (slot 1)");
	is_int(qu_crowd_count(&c, SR_QUEUE_EMPTY), 6, "... the other 6 find nothing to run");
	ok(sr_gang_read(q, "race", 2, &s, err) == SR_QUEUE_NOTFOUND, "... no slot 2 was written");
	qu_crowd_free(&c);
}

static void
test_stale(struct sr_queue *q, const struct sr_lease_owner *a, const struct sr_lease_owner *b)
{
	struct sr_gang_claim c1 = { a, 1, 5, 3, NULL, 0, 0, 0 }, c2 = { b, 60, 5, 3, NULL, 0, 0, 0 };
	struct sr_gang *g1, *g2, *g3;
	struct sr_gang_slot s;
	char err[SR_ERRMAX];
	int rc;

	rc = sr_gang_join(q, "stale", &c1, &g1, err);
	ok(rc == 0 && sr_gang_node(g1) == 1, "a member with a TTL of 1 s holds slot 1 of epoch 5");
	is_int(c1.requests, 1, "... in one request (create-only)");
	rc = sr_gang_join(q, "stale", &c2, &g2, err);
	ok(rc == 0 && sr_gang_node(g2) == 2, "another agent gets slot 2 while it lives");
	sr_gang_free(g2);
	c2.requests = 0;
	rc = sr_gang_join(q, "stale", &c2, &g3, err);
	is_int(rc, SR_GANG_FULL, "a third finds the 2 member slots of a gang of 3 held");
	is_str(err, "join gang of job stale: its 3 slots are held", "... and says so");
	sr_sleep(1.2);
	rc = sr_gang_join(q, "stale", &c2, &g3, err);
	ok(rc == 0 && sr_gang_node(g3) == 1, "once slot 1's TTL is over, another agent takes it");
	rc = sr_gang_read(q, "stale", 1, &s, err);
	ok(rc == 0 && strcmp(s.agent, "b") == 0 && s.epoch == 5, "... slot 1 is now b's, epoch 5");
	is_int(sr_gang_renew(g1, err), SR_GANG_LOST, "the stale holder's renewal is refused (lost)");
	is_str(err, "write gang slot 1 of job stale: it was taken over", "... saying why");
	c2.epoch = 4;
	c2.requests = 0;
	rc = sr_gang_join(q, "stale", &c2, &g2, err);
	is_int(rc, SR_GANG_STALE, "a claim at an older epoch (4) is stale");
	sr_gang_free(g1);
	sr_gang_free(g3);
}

static void
test_timeout(struct sr_queue *q, const struct sr_lease_owner *a, const struct sr_lease_owner *b,
    const struct sr_lease_owner *c)
{
	struct sr_queue_agent aa = agent(a, 60), ab = agent(b, 60), ac = agent(c, 60);
	struct sr_gang_form f = { 2, 3, 0.8, 0.5, NULL };
	struct sr_queue_job *j0, *j1, *j2;
	struct sr_gang_slot s, lead;
	struct sr_lease_info li;
	char err[SR_ERRMAX], out[1024];
	double t0;
	int rc, nodes = 0, n;

	add(q, "lonely", 2, 2, T0 + 20);
	if (sr_queue_claim(q, &aa, &j0, err) != 0)
		sr_fatal("claim lonely: %s", err);
	f.marker = j0->marker.key;
	f.nodes_min = f.nodes_max = 2;
	t0 = sr_mono();
	n = 0;
	while ((rc = sr_gang_step(j0->gang, &f, &nodes, NULL, err)) == SR_GANG_FORMING) {
		n++;
		sr_sleep(0.1);
	}
	is_int(rc, SR_GANG_TIMEDOUT, "a leader alone in a gang of 2 times out");
	ok(sr_mono() - t0 >= 0.45 && sr_mono() - t0 < 2, "... after its timeout (0.5 s)");
	ok(sr_gang_read(q, "lonely", 0, &s, err) == 0 && s.state == SR_GANG_RELEASED,
	    "... its slot 0 is released");
	is_int(sr_queue_job_end(q, j0, SR_LEASE_RELEASED, err), SR_QUEUE_OK, "... so is the lease");
	ok(sr_lease_read(j0->store, "lonely", &li, err) == 0 && li.state == SR_LEASE_RELEASED &&
	    li.epoch == 1, "... at epoch 1");
	snprintf(err, sizeof err, "pending/09999~1764560020000~lonely~0-0~~q~1~");
	qu_like(keys(q, "pending/", out, sizeof out), err, "~2-2",
	    "... one marker, with the lease's epoch and etag, for the next gang");
	sr_queue_job_free(j0);

	/* 2-3: leader and one member; it starts with 2 after the fill time. */
	sr_queue_close(q);
	q = open_queue("range");
	add(q, "range", 2, 3, T0 + 30);
	aa.wake = 29501;	/* the agents' wake ports, in their slots */
	ab.wake = 29502;
	if (sr_queue_claim(q, &aa, &j0, err) != 0 || sr_queue_claim(q, &ab, &j1, err) != 0)
		sr_fatal("claim range: %s", err);
	aa.wake = ab.wake = 0;
	f.nodes_min = 2;
	f.nodes_max = 3;
	f.fill = 0.6;
	f.timeout = 10;
	f.marker = j0->marker.key;
	rc = sr_gang_step(j1->gang, &f, &nodes, NULL, err);
	is_int(rc, SR_GANG_FORMING, "a member of 2-3 waits while the leader does");
	rc = sr_gang_step(j0->gang, &f, &nodes, &lead, err);
	is_int(rc, SR_GANG_FORMING, "the leader with 2 of 3 waits for the fill time");
	sr_sleep(0.7);
	rc = sr_gang_step(j0->gang, &f, &nodes, &lead, err);
	is_int(rc, SR_GANG_STARTED, "... then starts with 2");
	is_int(nodes, 2, "... nodes 2");
	is_str(keys(q, "pending/", out, sizeof out), "", "... and deletes the marker");
	ok(sr_gang_read(q, "range", 0, &s, err) == 0 && s.state == SR_GANG_RUNNING &&
	    s.nodes == 2 && s.port == 29400 && strcmp(s.addr, "127.0.0.1") == 0,
	    "slot 0 says running, nodes 2, with node 0's address and port");
	rc = sr_gang_step(j1->gang, &f, &nodes, &lead, err);
	ok(rc == SR_GANG_STARTED && nodes == 2 && lead.port == 29400 &&
	    strcmp(lead.addr, "127.0.0.1") == 0, "the member starts as node 1 of 2, node 0's "
	    "address and port known");
	{
		struct sr_gang_peer pe[4];
		int np0 = sr_gang_peers(j0->gang, pe, 4);

		ok(np0 == 1 && strcmp(pe[0].addr, "127.0.0.1") == 0 && pe[0].wake == 29502,
		    "node 0 wakes its member at the wake port of its slot (127.0.0.1:29502)");
		np0 = sr_gang_peers(j1->gang, pe, 4);
		ok(np0 == 1 && strcmp(pe[0].addr, "127.0.0.1") == 0 && pe[0].wake == 29501,
		    "... the member wakes node 0 at slot 0's (127.0.0.1:29501)");
	}
	/* a third agent: the gang runs already and has no marker: nothing. */
	rc = sr_queue_claim(q, &ac, &j2, err);
	is_int(rc, SR_QUEUE_EMPTY, "a third agent finds nothing: the gang started without it");

	/* node 0's checkpoint requests reach the members, each once */
	double dl;
	is_int(sr_gang_watch(j0->gang, 2, &dl, err), SR_GANG_QUIET, "a running gang is quiet");
	is_int(sr_gang_watch(j1->gang, 2, &dl, err), SR_GANG_QUIET, "... for node 1 too");
	is_int(sr_gang_request(j0->gang, T0 + 600, err), SR_QUEUE_OK,
	    "node 0 asks its ranks for a checkpoint: slot 0 says so");
	ok(sr_gang_read(q, "range", 0, &s, err) == 0 && s.request == 1 &&
	    s.request_deadline == T0 + 600, "... request 1, with its deadline");
	rc = sr_gang_watch(j1->gang, 2, &dl, err);
	ok(rc == SR_GANG_REQUESTED && dl == T0 + 600, "node 1 reads the request, with its deadline");
	is_int(sr_gang_watch(j1->gang, 2, &dl, err), SR_GANG_QUIET, "... once");
	sr_gang_request(j0->gang, T0 + 700, err);
	sr_gang_request(j0->gang, T0 + 800, err);
	rc = sr_gang_watch(j1->gang, 2, &dl, err);
	ok(rc == SR_GANG_REQUESTED && dl == T0 + 800, "two more between two looks: the newest");

	/* notices: a member's reaches the leader, then every member */
	is_int(sr_gang_set(j1->gang, SR_GANG_NOTICE, 0, T0 + 99, err), SR_QUEUE_OK,
	    "node 1 writes its notice into its slot");
	rc = sr_gang_watch(j0->gang, 2, &dl, err);
	ok(rc == SR_GANG_NOTICED && dl == T0 + 99, "the leader sees it, with its deadline");
	ok(sr_gang_read(q, "range", 0, &s, err) == 0 && s.state == SR_GANG_NOTICE &&
	    s.deadline == T0 + 99, "... and passes it on in slot 0");
	is_int(sr_gang_set(j0->gang, SR_GANG_NOTICE, 0, T0 + 150, err), SR_QUEUE_OK,
	    "node 0's own machine's notice after it, later");
	ok(sr_gang_read(q, "range", 0, &s, err) == 0 && s.state == SR_GANG_NOTICE &&
	    s.deadline == T0 + 99, "... slot 0 keeps the earlier deadline");
	is_int(sr_gang_set(j0->gang, SR_GANG_NOTICE, 0, T0 + 90, err), SR_QUEUE_OK,
	    "an earlier one still");
	ok(sr_gang_read(q, "range", 0, &s, err) == 0 && s.deadline == T0 + 90, "... slot 0 takes it");
	is_int(sr_gang_set(j1->gang, SR_GANG_RUNNING, 0, 0, err), SR_QUEUE_OK, "(node 1 again)");
	rc = sr_gang_watch(j1->gang, 2, &dl, err);
	ok(rc == SR_GANG_NOTICED && dl == T0 + 90, "a member reads the notice from slot 0");
	is_int(sr_gang_set(j1->gang, SR_GANG_RELEASED, 0, 0, err), SR_QUEUE_OK, "node 1 lets go");
	rc = sr_gang_watch(j0->gang, 2, &dl, err);
	is_int(rc, SR_GANG_NOTICED, "the leader still has its notice");
	{
		struct sr_gang_peer pe[4];
		int np0 = sr_gang_peers(j0->gang, pe, 4);

		/* it waits for the job put back: the release must wake it */
		ok(np0 == 1 && pe[0].wake == 29502,
		    "node 0 still wakes node 1 after node 1 released its slot (%d peers)", np0);
	}
	sr_gang_free(j1->gang);
	j1->gang = NULL;
	sr_queue_job_free(j1);
	sr_queue_job_free(j0);

	/* a member left out: the gang of 2-3 started with 2, slot 2 joined late */
	{
		struct sr_gang_claim cl = { c, 60, 0, 3, NULL, 0, 0, 0 };
		struct sr_gang *g;

		sr_queue_close(q);
		q = open_queue("late");
		add(q, "late", 2, 3, T0 + 40);
		if (sr_queue_claim(q, &aa, &j0, err) != 0 || sr_queue_claim(q, &ab, &j1, err) != 0)
			sr_fatal("claim late: %s", err);
		cl.epoch = sr_gang_epoch(j0->gang);
		f.fill = 0;
		f.marker = j0->marker.key;
		rc = sr_gang_step(j0->gang, &f, &nodes, NULL, err);
		ok(rc == SR_GANG_STARTED && nodes == 2, "a leader with fill 0 starts with 2 of 2-3");
		rc = sr_gang_join(q, "late", &cl, &g, err);
		ok(rc == 0 && sr_gang_node(g) == 2, "a late agent holds slot 2 (joined directly)");
		rc = sr_gang_step(g, &f, &nodes, NULL, err);
		is_int(rc, SR_GANG_OUT, "... and is left out: its slot released");
		ok(sr_gang_read(q, "late", 2, &s, err) == 0 && s.state == SR_GANG_RELEASED,
		    "... slot 2 says released");
		sr_gang_free(g);
		is_int(sr_gang_set(j0->gang, SR_GANG_RELEASED, 0, 0, err), SR_QUEUE_OK,
		    "the leader lets go");
		rc = sr_gang_watch(j1->gang, 2, &dl, err);
		is_int(rc, SR_GANG_BROKEN, "node 1 finds the gang broken");
		is_str(err, "gang of job late: node 0 is gone (its slot is released)", "... saying why");
		sr_queue_job_free(j0);
		sr_queue_job_free(j1);
	}
	sr_queue_close(q);
}

/* A gang's leader dies: its lease expires, and a claim of the job by id
 * (an agent's scan for dead leases) puts it back for a new gang. */
static void
test_dead(struct sr_queue *q, const struct sr_lease_owner *a, const struct sr_lease_owner *b)
{
	struct sr_queue_agent aa = agent(a, 1), ab = agent(b, 60);
	struct sr_queue_job *j0, *j;
	struct sr_lease_info li;
	char err[SR_ERRMAX], out[1024], want[256];
	int rc;

	add(q, "dead", 2, 2, T0 + 50);
	if (sr_queue_claim(q, &aa, &j0, err) != 0)
		sr_fatal("claim dead: %s", err);
	/* b sees the lease (held), then unchanged for its TTL of 1 s */
	ab.seen = sr_lease_seen_new();
	is_int(sr_queue_claim_id(q, &ab, "dead", &j, err), SR_QUEUE_BUSY,
	    "a gang job's lease, held: SR_QUEUE_BUSY");
	sr_sleep(1.2);
	rc = sr_queue_claim_id(q, &ab, "dead", &j, err);
	is_int(rc, SR_QUEUE_BUSY, "a gang job's expired lease claimed by id: not run by one agent");
	is_str(err, "claim job dead: it runs on a gang of 2-2 nodes: put back in the queue for a "
	    "new gang to form", "... saying why");
	ok(sr_lease_read(j0->store, "dead", &li, err) == 0 && li.state == SR_LEASE_RELEASED &&
	    li.epoch == 2, "... its lease released at epoch 2");
	snprintf(want, sizeof want, "pending/09999~1764560050000~dead~0-0~~q~2~");
	qu_like(keys(q, "pending/", out, sizeof out), want, "~2-2",
	    "... one pending marker, at epoch 2, for the next gang");
	sr_queue_job_free(j0);
	sr_lease_seen_free(ab.seen);
}

/* Node 0's job ends: slot 0 says done, which members do not take for a
 * node gone. */
static void
test_done(struct sr_queue *q, const struct sr_lease_owner *a, const struct sr_lease_owner *b)
{
	struct sr_gang_claim c0 = { a, 60, 9, 2, "127.0.0.1", 29999, 0, 0 };
	struct sr_gang_claim c1 = { b, 60, 9, 2, NULL, 0, 0, 0 };
	struct sr_gang *g0, *g1;
	struct sr_gang_slot s;
	char err[SR_ERRMAX];
	double dl;

	if (sr_gang_lead(q, "fin", &c0, &g0, err) != 0 || sr_gang_join(q, "fin", &c1, &g1, err) != 0)
		sr_fatal("fin: %s", err);
	is_int(sr_gang_set(g0, SR_GANG_RUNNING, 2, 0, err), SR_QUEUE_OK, "a gang of 2 runs");
	is_int(sr_gang_set(g0, SR_GANG_DONE, 0, 0, err), SR_QUEUE_OK, "node 0's job ends: done");
	ok(sr_gang_read(q, "fin", 0, &s, err) == 0 && s.state == SR_GANG_DONE &&
	    !sr_gang_live(&s, sr_now()), "... slot 0 says done, no longer live");
	is_int(sr_gang_watch(g1, 2, &dl, err), SR_GANG_QUIET,
	    "... a member takes it for the end, not for a node gone");
	is_int(sr_gang_renew(g0, err), SR_GANG_LOST, "... and node 0 holds it no more");
	sr_gang_free(g0);
	sr_gang_free(g1);

	/* a member whose job succeeded first: node 0's job runs on */
	if (sr_gang_lead(q, "fin2", &c0, &g0, err) != 0 || sr_gang_join(q, "fin2", &c1, &g1, err) != 0)
		sr_fatal("fin2: %s", err);
	is_int(sr_gang_set(g0, SR_GANG_RUNNING, 2, 0, err), SR_QUEUE_OK, "fin2: a gang of 2 runs");
	is_int(sr_gang_set(g1, SR_GANG_DONE, 0, 0, err), SR_QUEUE_OK, "fin2: node 1's job ends: done");
	is_int(sr_gang_watch(g0, 2, &dl, err), SR_GANG_QUIET,
	    "fin2: node 0 takes a member's done for no node gone");
	ok(sr_gang_read(q, "fin2", 0, &s, err) == 0 && s.state == SR_GANG_RUNNING,
	    "fin2: ... slot 0 still says running (no notice written)");
	sr_gang_free(g0);
	sr_gang_free(g1);
}

static void
suite(const char *name)
{
	struct sr_lease_owner a, b, c;
	struct sr_queue *q;

	printf("# == %s: %s\n", name, base);
	owner(&a, "a");
	owner(&b, "b");
	owner(&c, "c");
	test_marker_and_lead(q = open_queue("lead"), &a, &b);
	sr_queue_close(q);
	test_race(q = open_queue("race"));
	sr_queue_close(q);
	test_stale(q = open_queue("stale"), &a, &b);
	sr_queue_close(q);
	test_timeout(open_queue("timeout"), &a, &b, &c);
	test_dead(q = open_queue("dead"), &a, &b);
	sr_queue_close(q);
	test_done(q = open_queue("done"), &a, &b);
	sr_queue_close(q);
}

int
main(void)
{
	char root[512], bucket[64];

	no_cloud();
	qu_tmpdir(root, sizeof root, "t-gang");
	snprintf(base, sizeof base, "file://%s/queue", root);
	suite("file://");
	qu_rmdir(root);
	if (qu_s3_start(bucket, sizeof bucket, "t-gang")) {
		char q[1024];

		snprintf(base, sizeof base, "s3://%s/queue", bucket);
		snprintf(q, sizeof q, "?endpoint=%s", su_env("SPOTRUN_TEST_S3_ENDPOINT"));
		query = q;
		suite("RGW");
		su_bucket_rm(bucket);
	}
	return tap_done();
}
