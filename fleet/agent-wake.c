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
 * forged, it costs one read of the slots. The agent's waits between its
 * looks at the queue (idle, and forming a gang: sr_agent_wait) end on
 * any datagram too, so that a gang put back or forming is taken up at
 * once by the agents it names: node 0 wakes the members after putting the
 * gang back, a member the leader when it joined, the leader the members
 * when it started the gang.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent-int.h"
#include "supervise.h"
#include "util.h"

#define WAKE_PEERS_MAX 64	/* datagrams sent for one write; the rest read at their watch */
/* Seconds a wait lasts at least when a datagram cuts it short: a flood of
 * datagrams (forged ones too) makes an agent look at the queue or the
 * slots at most this often. */
#define WAKE_MIN 0.01

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

int
sr_agent_wait(struct sr_agent *ag, double seconds, int reap)
{
	double start = sr_mono(), until = start + seconds;
	char b[64];
	int sig, got, woken = 0;

	for (;;) {
		struct pollfd pf[3] = { { .fd = ag->sigfd, .events = POLLIN },
			{ .fd = woken ? -1 : ag->wake_fd, .events = POLLIN },
			{ .fd = sr_agent_watch_fd(ag), .events = POLLIN } };
		double left = until - sr_mono();

		while (sr_sig_next(ag->sigfd, &sig) == 1) {
			if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT)
				return sig;
			if (sig == SIGCHLD && reap)
				while (waitpid(-1, NULL, WNOHANG) > 0)
					;
		}
		if (left <= 0)
			return 0;
		(void)poll(pf, 3, (int)(left * 1000) + 1);
		if (pf[2].revents != 0)
			return 0;	/* the machine's notice: the caller looks */
		if (pf[1].revents == 0)
			continue;
		for (got = 0; recv(ag->wake_fd, b, sizeof b, 0) >= 0; got = 1)
			;
		if (got || pf[1].revents & (POLLERR | POLLNVAL)) {
			woken = 1;	/* the port is left alone for the rest */
			if (got && start + WAKE_MIN < until)
				until = sr_mono() > start + WAKE_MIN ? sr_mono() : start + WAKE_MIN;
		}
	}
}

struct sr_agent_waker {
	int fd;
	char want[SR_QUEUE_ID_MAX + 48];
	void (*poke)(void *arg);
	void *arg;
	/* Its stop: a byte on this pipe. The thread waits on it beside the
	 * port, so that a gang's end, on the way to the next claim, does not
	 * wait for a timed look at a flag (it waited 0-250 ms a notice, node
	 * 0's release of the gang included, in bench/goodput-gang.sh). */
	int stop[2];
	pthread_t th;
};

static void *
waker_main(void *arg)
{
	struct sr_agent_waker *w = arg;
	struct pollfd pf[2] = { { .fd = w->fd, .events = POLLIN },
		{ .fd = w->stop[0], .events = POLLIN } };
	char buf[SR_QUEUE_ID_MAX + 48];
	ssize_t n;
	int hit;

	for (;;) {
		if (poll(pf, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			break;		/* no wake-ups: the watch reads the slots */
		}
		if (pf[1].revents != 0)
			break;
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
	/* without a pipe or a thread, no wake-ups: the watch reads the slots */
	if (pipe2(w->stop, O_CLOEXEC) == -1) {
		free(w);
		return NULL;
	}
	if (pthread_create(&w->th, NULL, waker_main, w) != 0) {
		close(w->stop[0]);
		close(w->stop[1]);
		free(w);
		return NULL;
	}
	return w;
}

void
sr_agent_waker_stop(struct sr_agent_waker *w)
{
	if (w == NULL)
		return;
	/* a pipe's first byte never blocks; a failed write would leave
	 * the thread waiting, so it is a bug */
	if (write(w->stop[1], "", 1) != 1)
		sr_fatal("stop the gang's waker: %s", strerror(errno));
	pthread_join(w->th, NULL);
	close(w->stop[0]);
	close(w->stop[1]);
	free(w);
}
