/*
 * group.c: ctrain's ranks over TCP (group.h): the star of connections to
 * rank 0, the ordered reduce-scatter of the gradients and the all-gather
 * of the parameters. Blocking sockets, whole messages: a rank that dies
 * is an end of file for the others, which fail with its name (spotrun
 * then stops the job's every rank).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "group.h"

/* What a rank says first: who it is, in which world. */
struct hello {
	uint32_t magic;
	int32_t rank, world;
	uint64_t agree;
};
#define HELLO_MAGIC 0x63747231u		/* "ctr1" */

void
ct_group_slice(size_t n, int world, int rank, size_t *lo, size_t *hi)
{
	size_t q = n / (size_t)world, r = n % (size_t)world, k = (size_t)rank;

	*lo = k * q + (k < r ? k : r);
	*hi = *lo + q + (k < r ? 1 : 0);
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
send_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* -1 with errno 0 at an end of file. */
static int
recv_all(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n > 0) {
		ssize_t r = recv(fd, p, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			errno = 0;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* "send to rank 2: Broken pipe", "receive from rank 0: the rank went
 * away" */
static int
peer_fail(char *err, const char *verb, int peer)
{
	snprintf(err, CT_ERRMAX, "%s rank %d: %s", verb, peer,
	    errno != 0 ? strerror(errno) : "the rank went away (end of file)");
	return -1;
}

static void
no_delay(int fd)
{
	int one = 1;

	/* the collectives are a message and its answer: no Nagle wait */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int
listen_on(const char *addr, const char *port, char *err)
{
	struct addrinfo hints, *res, *ai;
	int fd = -1, one = 1, rc;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	if ((rc = getaddrinfo(addr, port, &hints, &res)) != 0) {
		snprintf(err, CT_ERRMAX, "listen on %s:%s: %s", addr, port, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if ((fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0)) == -1)
			continue;
		/* the port of the attempt before may still be in TIME_WAIT */
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 64) == 0)
			break;
		snprintf(err, CT_ERRMAX, "listen on %s:%s: %s", addr, port, strerror(errno));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

/* Receives on fd give up after seconds (0: never). */
static int
recv_timeout(int fd, double seconds)
{
	struct timeval tv = { 0, 0 };

	if (seconds > 0) {
		tv.tv_sec = (time_t)seconds;
		tv.tv_usec = (suseconds_t)((seconds - (double)tv.tv_sec) * 1e6) + 1;
	}
	return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

/* Rank 0: accept the world's other ranks, each in its slot. */
static int
accept_ranks(struct ct_group *g, int lfd, const char *addr, const char *port, uint64_t agree,
    int timeout, char *err)
{
	double end = now() + timeout;
	struct hello h;
	int joined = 0, fd;

	while (joined < g->world - 1) {
		struct pollfd pfd = { lfd, POLLIN, 0 };
		double left = end - now();
		if (left <= 0 || poll(&pfd, 1, (int)(left * 1000) + 1) == 0) {
			snprintf(err, CT_ERRMAX, "wait for the ranks on %s:%s: %d of %d joined in %d s",
			    addr, port, joined + 1, g->world, timeout);
			return -1;
		}
		if ((fd = accept(lfd, NULL, NULL)) == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			snprintf(err, CT_ERRMAX, "accept a rank on %s:%s: %s", addr, port, strerror(errno));
			return -1;
		}
		/* a peer that connects and says nothing holds the wait up to its
		 * end, not for ever */
		if (recv_timeout(fd, end - now()) == -1 || recv_all(fd, &h, sizeof h) == -1 ||
		    h.magic != HELLO_MAGIC || recv_timeout(fd, 0) == -1) {
			close(fd);	/* not one of ours: a port scanner, a stale rank */
			continue;
		}
		if (h.world != g->world || h.rank < 1 || h.rank >= g->world || g->fd[h.rank] != -1) {
			snprintf(err, CT_ERRMAX, "join the ranks: a process says it is rank %d of %d, "
			    "this is rank 0 of %d", (int)h.rank, (int)h.world, g->world);
			close(fd);
			return -1;
		}
		if (h.agree != agree) {
			snprintf(err, CT_ERRMAX, "join the ranks: rank %d runs with other settings than "
			    "rank 0 (options, text or ranks): give every rank the same", (int)h.rank);
			close(fd);
			return -1;
		}
		no_delay(fd);
		g->fd[h.rank] = fd;
		joined++;
	}
	return 0;
}

/* Another rank: connect to rank 0, which may not listen yet. */
static int
connect_rank0(struct ct_group *g, const char *addr, const char *port, uint64_t agree, int timeout,
    char *err)
{
	double end = now() + timeout;
	struct addrinfo hints, *res, *ai;
	struct hello h = { HELLO_MAGIC, g->rank, g->world, agree };
	int fd, rc, e = 0;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(addr, port, &hints, &res)) != 0) {
		snprintf(err, CT_ERRMAX, "connect to rank 0 at %s:%s: %s", addr, port, gai_strerror(rc));
		return -1;
	}
	for (;;) {
		for (ai = res; ai != NULL; ai = ai->ai_next) {
			if ((fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0)) == -1) {
				e = errno;
				continue;
			}
			if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
				goto connected;
			e = errno;
			close(fd);
		}
		if (now() >= end)
			break;
		nanosleep(&(struct timespec){ 0, 20 * 1000 * 1000 }, NULL);
	}
	freeaddrinfo(res);
	snprintf(err, CT_ERRMAX, "connect to rank 0 at %s:%s: %s (for %d s)", addr, port, strerror(e),
	    timeout);
	return -1;
connected:
	freeaddrinfo(res);
	no_delay(fd);
	g->fd[0] = fd;
	if (send_all(fd, &h, sizeof h) == -1)
		return peer_fail(err, "send to", 0);
	return 0;
}

int
ct_group_open(struct ct_group *g, int rank, int world, const char *addr, const char *port,
    uint64_t agree, int timeout, char *err)
{
	int i, lfd, rc;

	g->rank = rank;
	g->world = world;
	if ((g->fd = malloc((size_t)world * sizeof *g->fd)) == NULL) {
		snprintf(err, CT_ERRMAX, "join the ranks: out of memory");
		return -1;
	}
	for (i = 0; i < world; i++)
		g->fd[i] = -1;
	if (world == 1)
		return 0;
	if (rank != 0)
		return connect_rank0(g, addr, port, agree, timeout, err);
	if ((lfd = listen_on(addr, port, err)) == -1)
		return -1;
	rc = accept_ranks(g, lfd, addr, port, agree, timeout, err);
	close(lfd);
	return rc;
}

void
ct_group_close(struct ct_group *g)
{
	int i;

	for (i = 0; g->fd != NULL && i < g->world; i++)
		if (g->fd[i] != -1)
			close(g->fd[i]);
	free(g->fd);
	g->fd = NULL;
}

static void
add_parts(float *acc, const float *parts, int nparts, size_t n)
{
	int p;
	size_t i;

	for (p = 0; p < nparts; p++)
		for (i = 0; i < n; i++)
			acc[i] += parts[(size_t)p * n + i];
}

/* The running sum and the running vote, from one rank to another. */
static int
send_sum(int fd, int32_t vote, const float *v, size_t n)
{
	return send_all(fd, &vote, sizeof vote) == -1 || send_all(fd, v, n * sizeof *v) == -1 ? -1 : 0;
}

static int
recv_sum(int fd, int32_t *vote, float *v, size_t n)
{
	return recv_all(fd, vote, sizeof *vote) == -1 || recv_all(fd, v, n * sizeof *v) == -1 ? -1 : 0;
}

int
ct_group_reduce_scatter(struct ct_group *g, const float *parts, int nparts, size_t n,
    size_t tail, int vote, float *sum, int *vote_max, char *err)
{
	size_t lo, hi;
	int32_t v = vote, got;
	int r;

	if (g->rank != 0) {
		/* the sum of the ranks before, plus ours, back to rank 0 */
		if (recv_sum(g->fd[0], &got, sum, n) == -1)
			return peer_fail(err, "receive from", 0);
		add_parts(sum, parts, nparts, n);
		if (send_sum(g->fd[0], got > v ? got : v, sum, n) == -1)
			return peer_fail(err, "send to", 0);
		/* then the total: our slice, the tail and the vote */
		ct_group_slice(n - tail, g->world, g->rank, &lo, &hi);
		if (recv_all(g->fd[0], &got, sizeof got) == -1 ||
		    recv_all(g->fd[0], sum + lo, (hi - lo) * sizeof *sum) == -1 ||
		    recv_all(g->fd[0], sum + n - tail, tail * sizeof *sum) == -1)
			return peer_fail(err, "receive from", 0);
		*vote_max = got;
		return 0;
	}
	memset(sum, 0, n * sizeof *sum);
	add_parts(sum, parts, nparts, n);
	for (r = 1; r < g->world; r++) {
		if (send_sum(g->fd[r], v, sum, n) == -1)
			return peer_fail(err, "send to", r);
		if (recv_sum(g->fd[r], &v, sum, n) == -1)
			return peer_fail(err, "receive from", r);
	}
	for (r = 1; r < g->world; r++) {
		ct_group_slice(n - tail, g->world, r, &lo, &hi);
		if (send_all(g->fd[r], &v, sizeof v) == -1 ||
		    send_all(g->fd[r], sum + lo, (hi - lo) * sizeof *sum) == -1 ||
		    send_all(g->fd[r], sum + n - tail, tail * sizeof *sum) == -1)
			return peer_fail(err, "send to", r);
	}
	*vote_max = v;
	return 0;
}

int
ct_group_bcast(struct ct_group *g, void *buf, size_t n, char *err)
{
	int r;

	if (g->rank != 0)
		return recv_all(g->fd[0], buf, n) == -1 ? peer_fail(err, "receive from", 0) : 0;
	for (r = 1; r < g->world; r++)
		if (send_all(g->fd[r], buf, n) == -1)
			return peer_fail(err, "send to", r);
	return 0;
}

int
ct_group_allgather(struct ct_group *g, float *buf, size_t n, char *err)
{
	size_t lo, hi;
	int r;

	if (g->rank != 0) {
		ct_group_slice(n, g->world, g->rank, &lo, &hi);
		if (send_all(g->fd[0], buf + lo, (hi - lo) * sizeof *buf) == -1)
			return peer_fail(err, "send to", 0);
		if (recv_all(g->fd[0], buf, n * sizeof *buf) == -1)
			return peer_fail(err, "receive from", 0);
		return 0;
	}
	for (r = 1; r < g->world; r++) {
		ct_group_slice(n, g->world, r, &lo, &hi);
		if (recv_all(g->fd[r], buf + lo, (hi - lo) * sizeof *buf) == -1)
			return peer_fail(err, "receive from", r);
	}
	for (r = 1; r < g->world; r++)
		if (send_all(g->fd[r], buf, n * sizeof *buf) == -1)
			return peer_fail(err, "send to", r);
	return 0;
}
