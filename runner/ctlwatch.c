/*
 * ctlwatch.c: see ctlwatch.h.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "ctlwatch.h"
#include "util.h"

int
sr_ctlwatch_init(struct sr_ctlwatch *w, char *err)
{
	struct epoll_event ev = { .events = EPOLLIN };

	w->pipe[0] = w->pipe[1] = w->ino = w->ep = -1;
	if (pipe2(w->pipe, O_CLOEXEC) == -1)
		return sr_errno(err, "create pipe");
	if (fcntl(w->pipe[0], F_SETFL, O_NONBLOCK) == -1)
		return sr_errno(err, "set the pipe non-blocking");
	if ((w->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) == -1)
		return sr_errno(err, "inotify_init1");
	if ((w->ep = epoll_create1(EPOLL_CLOEXEC)) == -1)
		return sr_errno(err, "epoll_create1");
	ev.data.fd = w->pipe[0];
	if (epoll_ctl(w->ep, EPOLL_CTL_ADD, w->pipe[0], &ev) == -1)
		return sr_errno(err, "epoll_ctl");
	ev.data.fd = w->ino;
	if (epoll_ctl(w->ep, EPOLL_CTL_ADD, w->ino, &ev) == -1)
		return sr_errno(err, "epoll_ctl");
	return 0;
}

int
sr_ctlwatch_add(struct sr_ctlwatch *w, const char *path, uint32_t mask, char *err)
{
	if (inotify_add_watch(w->ino, path, mask) == -1)
		return sr_errno(err, "watch %s", path);
	return 0;
}

int
sr_ctlwatch_fd(const struct sr_ctlwatch *w)
{
	return w->ep;
}

int
sr_ctlwatch_post(struct sr_ctlwatch *w)
{
	char b = 1;

	return write(w->pipe[1], &b, 1) == 1 ? 0 : -1;
}

int
sr_ctlwatch_take(struct sr_ctlwatch *w)
{
	ssize_t n;
	char b;

	while ((n = read(w->pipe[0], &b, 1)) == -1 && errno == EINTR)
		;
	return n == 1;
}

void
sr_ctlwatch_drain(struct sr_ctlwatch *w)
{
	char ev[4096];

	while (read(w->ino, ev, sizeof ev) > 0)
		;
}

void
sr_ctlwatch_close(struct sr_ctlwatch *w)
{
	int *fds[] = { &w->pipe[0], &w->pipe[1], &w->ino, &w->ep };
	size_t i;

	for (i = 0; i < SR_ARRAY_LEN(fds); i++) {
		if (*fds[i] != -1)
			close(*fds[i]);
		*fds[i] = -1;
	}
}
