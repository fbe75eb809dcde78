/*
 * conns.c: the sockets of one request engine and the quick ACK (conns.h).
 * A small table of the sockets curl opened through the engine's handles,
 * each with its local and peer port once connected (looked up the first
 * time a transfer asks, since curl records a socket before it connects).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "conns.h"
#include "util.h"

struct conn {
	curl_socket_t fd;
	long local_port;		/* 0: not looked up yet */
	long peer_port;
};

struct sr_conns {
	pthread_mutex_t lock;
	struct conn *v;
	size_t n, cap;
};

/* Sockets one attempt may open at once (happy eyeballs: IPv6 and IPv4)
 * with one to spare. */
#define ATTEMPT_SOCKETS 3

struct sr_conns *
sr_conns_new(char *err)
{
	struct sr_conns *cs = sr_try_calloc(1, sizeof *cs, err);

	if (cs == NULL)
		return NULL;
	if (pthread_mutex_init(&cs->lock, NULL) != 0) {
		free(cs);
		sr_err(err, "pthread_mutex_init failed");
		return NULL;
	}
	return cs;
}

void
sr_conns_free(struct sr_conns *cs)
{
	if (cs == NULL)
		return;
	pthread_mutex_destroy(&cs->lock);
	free(cs->v);
	free(cs);
}

/* Drop the entry of fd, if any; with cs->lock held. */
static void
forget(struct sr_conns *cs, curl_socket_t fd)
{
	size_t i;

	for (i = 0; i < cs->n; i++)
		if (cs->v[i].fd == fd) {
			cs->v[i] = cs->v[--cs->n];
			return;
		}
}

static int
on_open(void *arg, curl_socket_t fd, curlsocktype purpose)
{
	struct sr_conns *cs = arg;

	if (purpose != CURLSOCKTYPE_IPCXN)
		return CURL_SOCKOPT_OK;
	pthread_mutex_lock(&cs->lock);
	forget(cs, fd);		/* a socket closed without on_close had this number */
	/* sr_conns_attach made room for one attempt of each handle, but
	 * handles attached together open their sockets later, side by side:
	 * a socket not in the table is never acknowledged at once, so the
	 * table grows here too (and a socket goes untracked only without
	 * memory) */
	if (cs->n == cs->cap) {
		char err[SR_ERRMAX];
		size_t cap = cs->cap ? cs->cap * 2 : 8;
		struct conn *v = sr_try_reallocarray(cs->v, cap, sizeof *v, err);

		if (v != NULL) {
			cs->v = v;
			cs->cap = cap;
		}
	}
	if (cs->n < cs->cap)
		cs->v[cs->n++] = (struct conn){ .fd = fd };
	pthread_mutex_unlock(&cs->lock);
	return CURL_SOCKOPT_OK;
}

static int
on_close(void *arg, curl_socket_t fd)
{
	struct sr_conns *cs = arg;

	/* forget it before the number can be given to another socket */
	pthread_mutex_lock(&cs->lock);
	forget(cs, fd);
	pthread_mutex_unlock(&cs->lock);
	return close(fd);
}

int
sr_conns_attach(struct sr_conns *cs, CURL *e, char *err)
{
	int rc = 0;

	pthread_mutex_lock(&cs->lock);
	if (cs->n + ATTEMPT_SOCKETS > cs->cap) {
		size_t cap = cs->cap ? cs->cap * 2 : 8;
		struct conn *v = sr_try_reallocarray(cs->v, cap, sizeof *v, err);

		if (v != NULL) {
			cs->v = v;
			cs->cap = cap;
		} else
			rc = -1;
	}
	pthread_mutex_unlock(&cs->lock);
	if (rc == -1)
		return -1;
	curl_easy_setopt(e, CURLOPT_SOCKOPTFUNCTION, on_open);
	curl_easy_setopt(e, CURLOPT_SOCKOPTDATA, cs);
	curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, on_close);
	curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, cs);
	return 0;
}

/* The port of a socket address, 0 when it has none. */
static long
port_of(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return 0;
}

/* Fill in c's ports once it is connected. */
static void
conn_ports(struct conn *c)
{
	struct sockaddr_storage l, p;
	socklen_t ll = sizeof l, pl = sizeof p;

	if (c->local_port != 0)
		return;
	if (getsockname(c->fd, (struct sockaddr *)&l, &ll) == -1 ||
	    getpeername(c->fd, (struct sockaddr *)&p, &pl) == -1)
		return;		/* not connected yet */
	c->local_port = port_of(&l);
	c->peer_port = port_of(&p);
}

curl_socket_t
sr_conns_find(struct sr_conns *cs, CURL *e)
{
	curl_socket_t fd = CURL_SOCKET_BAD;
	long local = 0, peer = 0;
	size_t i;

	if (curl_easy_getinfo(e, CURLINFO_LOCAL_PORT, &local) != CURLE_OK ||
	    curl_easy_getinfo(e, CURLINFO_PRIMARY_PORT, &peer) != CURLE_OK || local <= 0)
		return CURL_SOCKET_BAD;
	pthread_mutex_lock(&cs->lock);
	for (i = 0; i < cs->n && fd == CURL_SOCKET_BAD; i++) {
		conn_ports(&cs->v[i]);
		if (cs->v[i].local_port == local && cs->v[i].peer_port == peer)
			fd = cs->v[i].fd;
	}
	pthread_mutex_unlock(&cs->lock);
	return fd;
}

int
sr_conns_ack_now(curl_socket_t fd)
{
#ifdef TCP_QUICKACK
	int one = 1;

	if (fd == CURL_SOCKET_BAD)
		return -1;
	return setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
#else
	(void)fd;
	return -1;
#endif
}
