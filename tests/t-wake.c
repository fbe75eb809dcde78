/*
 * t-wake.c: a gang's agents wake each other (fleet/agent-wake.c) on a
 * file:// queue and loopback: the agent's wake port is a UDP socket at its
 * address whose port its claim writes into its slot; node 0's agent sends
 * "spotrun-gang JOB EPOCH" to the member's wake port and the member's to
 * node 0's, each to the address and port the other's slot names; a waker
 * pokes its job for that datagram, once a burst, and not for another
 * gang's, another epoch's or garbage; it drops what came before it
 * started; an agent whose address is not IPv4 has no wake port (0). An
 * agent's waits (sr_agent_wait: idle between claims, forming a gang) end
 * early on a datagram at its port, but not before WAKE_MIN, and on the
 * signals that end the agent; otherwise they last their time.
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <signal.h>

#include "agent-int.h"
#include "supervise.h"
#include "gang.h"
#include "queue.h"
#include "tap.h"
#include "s3-util.h"
#include "queue-util.h"
#include "util.h"

/* The pokes a waker made, and a way to wait for the next. */
static pthread_mutex_t pk_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pk_cond = PTHREAD_COND_INITIALIZER;
static int pokes;

static void
poke(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pk_lock);
	pokes++;
	pthread_cond_broadcast(&pk_cond);
	pthread_mutex_unlock(&pk_lock);
}

/* Wait up to 10 s for the pokes to reach n; how many there are. */
static int
pokes_reach(int n)
{
	double until = sr_mono() + 10;
	int got;

	pthread_mutex_lock(&pk_lock);
	while (pokes < n && sr_mono() < until) {
		pthread_mutex_unlock(&pk_lock);
		sr_sleep(0.01);
		pthread_mutex_lock(&pk_lock);
	}
	got = pokes;
	pthread_mutex_unlock(&pk_lock);
	return got;
}

/* A datagram from s to port on loopback. */
static void
send_to(int s, int port, const char *text)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	if (sendto(s, text, strlen(text), 0, (struct sockaddr *)&sa, sizeof sa) == -1)
		sr_fatal("sendto: %s", strerror(errno));
}

/* Wait up to 10 s until fd has nothing left to read (the waker took it). */
static int
drained(int fd)
{
	double until = sr_mono() + 10;
	int n = 1;

	while (sr_mono() < until && ioctl(fd, FIONREAD, &n) == 0 && n > 0)
		sr_sleep(0.01);
	return n == 0;
}

/* The next datagram on fd within 10 s, into buf ("" if none). */
static const char *
recv_one(int fd, char *buf, size_t len)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	ssize_t n;

	buf[0] = '\0';
	if (poll(&pf, 1, 10000) == 1 && (n = recv(fd, buf, len - 1, 0)) >= 0)
		buf[n] = '\0';
	return buf;
}

/* sr_agent_wait on agent a (its wake port open): how it ends. */
static void
test_wait(struct sr_agent *a)
{
	char err[SR_ERRMAX], b[64];
	double t;
	int s;

	if (sr_sig_init(&a->sigfd, err) == -1)
		sr_fatal("%s", err);
	if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		sr_fatal("socket: %s", strerror(errno));
	t = sr_mono();
	is_int(sr_agent_wait(a, 0.05, 0), 0, "a wait with nothing at the port ends with 0 ...");
	ok(sr_mono() - t >= 0.05, "... when its time is up (%.3fs)", sr_mono() - t);
	send_to(s, a->claim.wake, "spotrun-gang gw 7");
	t = sr_mono();
	is_int(sr_agent_wait(a, 300, 0), 0, "a datagram at the port ends a wait of 300s with 0 ...");
	ok(sr_mono() - t < 150, "... long before its time (%.3fs)", sr_mono() - t);
	ok(sr_mono() - t >= 0.01, "... but not before WAKE_MIN, 0.01s (%.3fs): a flood of "
	    "datagrams costs a look every 0.01s at most", sr_mono() - t);
	ok(recv(a->wake_fd, b, sizeof b, MSG_DONTWAIT) == -1, "... and it read the datagram");
	t = sr_mono();
	is_int(sr_agent_wait(a, 0.05, 0), 0, "the next wait lasts its time again");
	ok(sr_mono() - t >= 0.05, "... (%.3fs)", sr_mono() - t);
	raise(SIGUSR1);
	raise(SIGTERM);
	is_int(sr_agent_wait(a, 300, 1), SIGTERM, "SIGTERM ends a wait with its number, another "
	    "signal before it is dropped");
	raise(SIGHUP);
	is_int(sr_agent_wait(a, 0, 0), SIGHUP, "a wait of 0s still reads the signals (SIGHUP)");
	sr_sig_reset();
	close(s);
}

static void
test_agents(const char *root)
{
	struct sr_agent a0, a1, bad;
	struct sr_lease_owner o0, o1;
	struct sr_queue_meta m = { .id = "gw", .nodes_min = 2, .nodes_max = 2,
		.submitted = 1764560000.0, .by = "me@laptop" };
	struct sr_gang_form f = { 2, 2, 0, 10, NULL };
	struct sr_queue_job *j0, *j1;
	struct sr_agent_gang g0, g1;
	struct sr_agent_waker *w;
	struct sr_queue *q;
	const char *spec = "[job]\nname = x\n";
	char err[SR_ERRMAX], buf[256], want[256], qurl[1100];
	int nodes, s;

	memset(&a0, 0, sizeof a0);
	memset(&a1, 0, sizeof a1);
	memset(&bad, 0, sizeof bad);
	snprintf(a0.addr, sizeof a0.addr, "127.0.0.1");
	snprintf(a1.addr, sizeof a1.addr, "127.0.0.1");
	snprintf(bad.addr, sizeof bad.addr, "node-0.example");
	is_int(sr_agent_wake_open(&a0, err), 0, "an agent at 127.0.0.1 opens its wake port");
	is_int(sr_agent_wake_open(&a1, err), 0, "... a second one too");
	ok(a0.claim.wake > 0 && a1.claim.wake > 0 && a0.claim.wake != a1.claim.wake,
	    "... each its own port, in what it claims with (%d, %d)", a0.claim.wake, a1.claim.wake);
	is_int(sr_agent_wake_open(&bad, err), -1, "an agent whose address is a host name has none");
	is_str(err, "gang wake port: node-0.example is not an IPv4 address", "... saying why");
	is_int(bad.wake_fd == -1 && bad.claim.wake == 0, 1, "... no socket, wake port 0");

	if (sr_lease_owner_local(&o0, "agent-0", "", "local", err) != 0 ||
	    sr_lease_owner_local(&o1, "agent-1", "", "local", err) != 0)
		sr_fatal("%s", err);
	a0.claim.owner = &o0;
	a1.claim.owner = &o1;
	a0.claim.ttl = a1.claim.ttl = 60;
	a0.claim.addr = a0.addr;
	a1.claim.addr = a1.addr;
	a0.claim.port = 29400;
	snprintf(qurl, sizeof qurl, "file://%s/queue", root);
	if (sr_queue_open(qurl, &q, err) != 0 || sr_queue_add(q, spec, strlen(spec), &m, err) != 0)
		sr_fatal("%s", err);
	if (sr_queue_claim(q, &a0.claim, &j0, err) != 0 || sr_queue_claim(q, &a1.claim, &j1, err) != 0)
		sr_fatal("claim: %s", err);
	f.marker = j0->marker.key;
	if (sr_gang_step(j1->gang, &f, &nodes, NULL, err) != SR_GANG_FORMING ||
	    sr_gang_step(j0->gang, &f, &nodes, NULL, err) != SR_GANG_STARTED ||
	    sr_gang_step(j1->gang, &f, &nodes, NULL, err) != SR_GANG_STARTED)
		sr_fatal("the gang did not start: %s", err);

	/* node 0 wakes the member, the member node 0, at their slots' ports */
	memset(&g0, 0, sizeof g0);
	memset(&g1, 0, sizeof g1);
	g0.slot = j0->gang;
	g1.slot = j1->gang;
	g0.epoch = g1.epoch = sr_gang_epoch(j0->gang);
	snprintf(g0.id, sizeof g0.id, "gw");
	snprintf(g1.id, sizeof g1.id, "gw");
	g0.wake_fd = a0.wake_fd;
	g1.wake_fd = a1.wake_fd;
	snprintf(want, sizeof want, "spotrun-gang gw %lld", (long long)g0.epoch);
	sr_agent_wake_peers(&g0);
	is_str(recv_one(a1.wake_fd, buf, sizeof buf), want,
	    "node 0's agent wakes the member's at its slot's port: '%s'", want);
	sr_agent_wake_peers(&g1);
	is_str(recv_one(a0.wake_fd, buf, sizeof buf), want, "... and the member's wakes node 0's");

	/* the member's waker: its gang's datagram pokes, nothing else does */
	if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		sr_fatal("socket: %s", strerror(errno));
	send_to(s, a1.claim.wake, want);	/* before the waker: old news */
	w = sr_agent_waker_start(a1.wake_fd, "gw", g0.epoch, poke, NULL);
	ok(w != NULL, "the member's waker starts");
	send_to(s, a1.claim.wake, "spotrun-gang other 1");
	send_to(s, a1.claim.wake, "spotrun-gang gw 99");
	send_to(s, a1.claim.wake, "garbage \x01\x02");
	ok(drained(a1.wake_fd), "it reads another gang's datagram, another epoch's and garbage");
	is_int(pokes_reach(0), 0, "... and none of them pokes it, nor the one sent before it started");
	send_to(s, a1.claim.wake, want);
	is_int(pokes_reach(1), 1, "its gang's datagram pokes it");
	sr_agent_wake_peers(&g0);
	is_int(pokes_reach(2), 2, "... and node 0's agent's wake-up again");
	sr_agent_waker_stop(w);
	sr_agent_waker_stop(NULL);
	test_wait(&a1);
	ok(sr_agent_waker_start(-1, "gw", 1, poke, NULL) == NULL, "no wake port: no waker");
	close(s);
	sr_queue_job_free(j0);
	sr_queue_job_free(j1);
	sr_queue_close(q);
	sr_agent_wake_close(&a0);
	sr_agent_wake_close(&a1);
	ok(a0.wake_fd == -1 && a0.claim.wake == 0, "closed: no socket, wake port 0");
}

int
main(void)
{
	char root[512];

	qu_tmpdir(root, sizeof root, "t-wake");
	test_agents(root);
	qu_rmdir(root);
	return tap_done();
}
