/*
 * agent-wake.c: a gang's agents wake each other (doc/fleet.md, "Gangs").
 * The slots in the queue stay the record of a gang; each agent reads the
 * others' every GANG_WATCH (0.5 s), so a notice took up to a second, node
 * 0's and then each member's read, to reach every node: longer than a
 * notice's window in the scaled traces of bench/goodput-gang.sh, and a
 * second of every node's deadline on a cloud. So an agent that writes
 * what the others must read (its notice, node 0's passing a notice or a
 * checkpoint request on) also sends each of them a datagram, "spotrun-gang
 * JOB EPOCH", to the wake port its slot names; one that gets such a
 * datagram for its gang reads the slots at once. A datagram is only a
 * hint, never trusted: lost, the slots are read at the next watch anyway;
 * forged, it costs one read of the slots.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent-int.h"
#include "util.h"

#define WAKE_PEERS_MAX 64	/* datagrams sent for one write; the rest read at their watch */
#define WAKE_STOP_POLL 250	/* ms between the receiver's looks at its stop flag */

int
sr_agent_wake_open(struct sr_agent *ag, char *err)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof sa;
	int fd;

	ag->wake_fd = -1;
	ag->claim.wake = 0;
	if (inet_pton(AF_INET, ag->addr, &sa.sin_addr) != 1)
		return sr_err(err, "gang wake port: %s is not an IPv4 address", ag->addr);
	if ((fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1)
		return sr_errno(err, "gang wake port: socket");
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) == -1) {
		sr_errno(err, "gang wake port: bind to %s", ag->addr);
		close(fd);
		return -1;
	}
	ag->wake_fd = fd;
	ag->claim.wake = ntohs(sa.sin_port);
	return 0;
}

void
sr_agent_wake_close(struct sr_agent *ag)
{
	if (ag->wake_fd != -1)
		close(ag->wake_fd);
	ag->wake_fd = -1;
	ag->claim.wake = 0;
}

/* The datagram of job id's gang at epoch. */
static int
wake_text(char *buf, size_t len, const char *id, int64_t epoch)
{
	return snprintf(buf, len, "spotrun-gang %s %lld", id, (long long)epoch);
}

void
sr_agent_wake_peers(struct sr_agent_gang *g)
{
	struct sr_gang_peer p[WAKE_PEERS_MAX];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char msg[SR_QUEUE_ID_MAX + 48];
	int n, i, len;

	if (g->wake_fd == -1 || g->slot == NULL)
		return;
	len = wake_text(msg, sizeof msg, g->id, g->epoch);
	n = sr_gang_peers(g->slot, p, WAKE_PEERS_MAX);
	for (i = 0; i < n; i++) {
		if (inet_pton(AF_INET, p[i].addr, &sa.sin_addr) != 1)
			continue;
		sa.sin_port = htons((uint16_t)p[i].wake);
		/* a hint: a full buffer or an unreachable peer is the watch's */
		(void)sendto(g->wake_fd, msg, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL,
		    (struct sockaddr *)&sa, sizeof sa);
	}
}

struct sr_agent_waker {
	int fd;
	char want[SR_QUEUE_ID_MAX + 48];
	void (*poke)(void *arg);
	void *arg;
	int stop;			/* __atomic */
	pthread_t th;
};

static void *
waker_main(void *arg)
{
	struct sr_agent_waker *w = arg;
	struct pollfd pf = { .fd = w->fd, .events = POLLIN };
	char buf[SR_QUEUE_ID_MAX + 48];
	ssize_t n;
	int hit;

	while (!__atomic_load_n(&w->stop, __ATOMIC_RELAXED)) {
		if (poll(&pf, 1, WAKE_STOP_POLL) <= 0)
			continue;
		hit = 0;
		while ((n = recv(w->fd, buf, sizeof buf - 1, 0)) >= 0) {
			buf[n] = '\0';
			hit |= strcmp(buf, w->want) == 0;	/* another gang's, or an older epoch's: not ours */
		}
		if (hit)
			w->poke(w->arg);
	}
	return NULL;
}

struct sr_agent_waker *
sr_agent_waker_start(int fd, const char *id, int64_t epoch, void (*poke)(void *arg), void *arg)
{
	struct sr_agent_waker *w;
	char b[64];

	if (fd == -1)
		return NULL;
	/* what earlier gangs sent this agent is not news */
	while (recv(fd, b, sizeof b, 0) >= 0)
		;
	w = sr_calloc(1, sizeof *w);
	w->fd = fd;
	(void)wake_text(w->want, sizeof w->want, id, epoch);
	w->poke = poke;
	w->arg = arg;
	if (pthread_create(&w->th, NULL, waker_main, w) != 0) {
		free(w);
		return NULL;	/* no wake-ups: the watch reads the slots as before */
	}
	return w;
}

void
sr_agent_waker_stop(struct sr_agent_waker *w)
{
	if (w == NULL)
		return;
	__atomic_store_n(&w->stop, 1, __ATOMIC_RELAXED);
	pthread_join(w->th, NULL);
	free(w);
}
