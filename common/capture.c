/*
 * capture.c: run a program and read its output (capture.h), with
 * posix_spawnp, so that a threaded caller (the agent's scaler) forks
 * nothing but the child, and poll over the two pipes against a deadline.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/wait.h>

#include "capture.h"
#include "util.h"

extern char **environ;

/* One output pipe being read. */
struct sink {
	int fd;			/* -1 once at its end */
	char *buf;
	size_t len, cap;
};

/* Read what fd has into s (at most max bytes): 0, 1 at its end, or -1 with
 * errno (E2BIG past max). */
static int
drain(struct sink *s, size_t max)
{
	char tmp[8192];
	ssize_t n = read(s->fd, tmp, sizeof tmp);

	if (n == 0)
		return 1;
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -1;
	if (s->len + (size_t)n > max) {
		errno = E2BIG;
		return -1;
	}
	if (s->len + (size_t)n + 1 > s->cap) {
		size_t cap = (s->len + (size_t)n + 1) * 2;
		char *b = realloc(s->buf, cap);

		if (b == NULL)
			return -1;
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, tmp, (size_t)n);
	s->len += (size_t)n;
	s->buf[s->len] = '\0';
	return 0;
}

/* Start argv with stdout and stderr on the write ends of out and errp:
 * 0 with *pid, or an errno. */
static int
start(const char *const *argv, int out[2], int errp[2], pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, dfl;
	int e;

	if ((e = posix_spawn_file_actions_init(&fa)) != 0)
		return e;
	if ((e = posix_spawnattr_init(&at)) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return e;
	}
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	sigaddset(&dfl, SIGINT);
	sigaddset(&dfl, SIGTERM);
	sigaddset(&dfl, SIGCHLD);
	/* a group of its own, so that a timeout kills what it started too;
	 * the caller's blocked and ignored signals are not its */
	if ((e = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
	    POSIX_SPAWN_SETSIGDEF)) == 0 && (e = posix_spawnattr_setpgroup(&at, 0)) == 0 &&
	    (e = posix_spawnattr_setsigmask(&at, &none)) == 0 &&
	    (e = posix_spawnattr_setsigdefault(&at, &dfl)) == 0 &&
	    (e = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)) == 0 &&
	    (e = posix_spawn_file_actions_adddup2(&fa, out[1], 1)) == 0 &&
	    (e = posix_spawn_file_actions_adddup2(&fa, errp[1], 2)) == 0)
		e = posix_spawnp(pid, argv[0], &fa, &at, (char *const *)argv, environ);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return e;
}

int
sr_capture_run(const char *const *argv, double timeout, size_t max, struct sr_capture *c,
    char *err)
{
	struct sink s[2] = { { -1, NULL, 0, 0 }, { -1, NULL, 0, 0 } };
	int out[2] = { -1, -1 }, errp[2] = { -1, -1 }, rc = -1, e, i, killed = 0;
	double deadline = sr_mono() + timeout;
	pid_t pid = -1;

	memset(c, 0, sizeof *c);
	if (pipe2(out, O_CLOEXEC) == -1 || pipe2(errp, O_CLOEXEC) == -1) {
		sr_err(err, "run %s: pipe: %s", argv[0], strerror(errno));
		goto out;
	}
	if ((e = start(argv, out, errp, &pid)) != 0) {
		pid = -1;
		sr_err(err, "run %s: %s", argv[0], e == ENOENT ? "not found (not on PATH)" :
		    strerror(e));
		goto out;
	}
	close(out[1]);
	close(errp[1]);
	out[1] = errp[1] = -1;
	s[0].fd = out[0];
	s[1].fd = errp[0];
	while (s[0].fd != -1 || s[1].fd != -1) {
		struct pollfd p[2];
		double left = deadline - sr_mono();
		int n = 0, r;

		if (left <= 0) {
			sr_err(err, "run %s: no answer in %g s", argv[0], timeout);
			killed = 1;
			break;
		}
		for (i = 0; i < 2; i++)
			if (s[i].fd != -1)
				p[n++] = (struct pollfd){ .fd = s[i].fd, .events = POLLIN };
		if ((r = poll(p, (nfds_t)n, (int)(left * 1000) + 1)) == -1 && errno != EINTR) {
			sr_err(err, "run %s: poll: %s", argv[0], strerror(errno));
			killed = 1;
			break;
		}
		for (i = 0; r > 0 && i < 2; i++) {
			int k;

			if (s[i].fd == -1)
				continue;
			for (k = 0; k < n && p[k].fd != s[i].fd; k++)
				;
			if (k == n || p[k].revents == 0)
				continue;
			if ((e = drain(&s[i], max)) == 1)
				s[i].fd = -1;
			else if (e == -1) {
				sr_err(err, "run %s: %s", argv[0], errno == E2BIG ? "more output than "
				    "expected" : strerror(errno));
				killed = 1;
				break;
			}
		}
		if (killed)
			break;
	}
	if (killed)
		kill(-pid, SIGKILL);
	while (waitpid(pid, &c->status, 0) == -1 && errno == EINTR)
		;
	if (!killed)
		rc = 0;
out:
	for (i = 0; i < 2; i++) {
		if (out[i] != -1)
			close(out[i]);
		if (errp[i] != -1)
			close(errp[i]);
	}
	c->out = s[0].buf;
	c->out_len = s[0].len;
	c->errout = s[1].buf;
	c->err_len = s[1].len;
	return rc;
}

void
sr_capture_free(struct sr_capture *c)
{
	free(c->out);
	free(c->errout);
	memset(c, 0, sizeof *c);
}
