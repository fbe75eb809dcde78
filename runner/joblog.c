/*
 * joblog.c: the job's stdout and stderr, echoed byte for byte and logged
 * line by line with timestamps (see joblog.h for the log's format).
 *
 * Each stream keeps the start of an unfinished line (at most
 * SR_JOBLOG_LINEMAX bytes); the log lines one read produces are gathered in
 * one buffer and written with one write(2) on an O_APPEND file.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "joblog.h"
#include "term.h"
#include "util.h"

/* Read size, and the most one sr_joblog_feed call reads. */
#define JL_READ		65536
#define JL_FEEDMAX	(1024 * 1024)

struct jl_stream {
	char *buf;		/* SR_JOBLOG_LINEMAX bytes, or NULL */
	size_t len;
	int echo_dead;
	int echo_fd;		/* with a prefix: where its lines go (-1 none) */
	char *echo;		/* with a prefix: lines to echo, not yet written */
	size_t echolen, echocap;
};

struct sr_joblog {
	char *path;
	int fd;			/* -1: no file, or logging stopped */
	double t0;
	struct jl_stream s[2];
	char *out;		/* log lines not yet written */
	size_t outlen, outcap;
	char rbuf[JL_READ];
	char err[SR_ERRMAX];
	struct sr_term *term;	/* NULL: echo straight to the fd */
	void (*sink)(void *arg, const char *buf, size_t len);
	void *sink_arg;
	char *prefix;		/* NULL: echo the bytes as they come */
	char last_err[SR_JOBLOG_LASTMAX];	/* the last whole line of stderr */
};

static const char *const jl_tags[] = { "out", "err" };

struct sr_joblog *
sr_joblog_open(const char *path, double t0, char *err)
{
	struct sr_joblog *l;
	int fd = -1;

	if (path != NULL) {
		fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
		    0644);
		if (fd == -1) {
			sr_errno(err, "open %s", path);
			return NULL;
		}
	}
	l = sr_calloc(1, sizeof *l);
	l->path = path != NULL ? sr_strdup(path) : NULL;
	l->fd = fd;
	l->t0 = t0;
	l->s[0].echo_fd = l->s[1].echo_fd = -1;
	return l;
}

/* Keep a line for a message (SR_JOBLOG_LASTMAX bytes at last): control
 * characters (a colour's escape) as '?', not cut inside a UTF-8 sequence. */
static void
keep_last(char *last, const char *p, size_t len)
{
	size_t n = len < SR_JOBLOG_LASTMAX - 1 ? len : SR_JOBLOG_LASTMAX - 1, i;

	if (n < len)
		while (n > 0 && ((unsigned char)p[n] & 0xc0) == 0x80)
			n--;
	for (i = 0; i < n; i++)
		last[i] = (unsigned char)p[i] < 0x20 || p[i] == 0x7f ? '?' : p[i];
	last[n] = '\0';
}

/* With a prefix: the line (len bytes at p) of stream i, prefixed and with
 * its newline, for the echo. */
static void
jl_echo_line(struct sr_joblog *l, int i, const char *p, size_t len)
{
	struct jl_stream *s = &l->s[i];
	size_t plen = strlen(l->prefix), need = s->echolen + plen + len + 1;

	if (s->echo_fd == -1 || s->echo_dead)
		return;
	if (need > s->echocap) {
		s->echocap = need + 4096;
		s->echo = sr_realloc(s->echo, s->echocap);
	}
	memcpy(s->echo + s->echolen, l->prefix, plen);
	memcpy(s->echo + s->echolen + plen, p, len);
	s->echolen += plen + len;
	s->echo[s->echolen++] = '\n';
}

/* Append one log line: "+SSSS.sss TAG " then len bytes then newline; a
 * line of stream i (0 out, 1 err; -1: spotrun's) is also echoed when
 * there is a prefix. */
static void
jl_line(struct sr_joblog *l, double now, int i, const char *p, size_t len)
{
	const char *tag = i < 0 ? "spotrun" : jl_tags[i];
	char head[64];
	double t = now - l->t0;
	int hn;

	if (i >= 0 && l->prefix != NULL)
		jl_echo_line(l, i, p, len);
	if (i == 1 && len > 0)
		keep_last(l->last_err, p, len);
	if (l->fd == -1 && l->sink == NULL)
		return;
	hn = snprintf(head, sizeof head, "+%08.3f %s ", t < 0 ? 0.0 : t, tag);
	if (l->outlen + (size_t)hn + len + 1 > l->outcap) {
		l->outcap = l->outlen + (size_t)hn + len + 1 + 4096;
		l->out = sr_realloc(l->out, l->outcap);
	}
	memcpy(l->out + l->outlen, head, (size_t)hn);
	l->outlen += (size_t)hn;
	memcpy(l->out + l->outlen, p, len);
	l->outlen += len;
	l->out[l->outlen++] = '\n';
}

/* Write the gathered log lines; on failure stop logging and say why. */
static int
jl_flush(struct sr_joblog *l)
{
	if (l->sink != NULL && l->outlen > 0)
		l->sink(l->sink_arg, l->out, l->outlen);
	if (l->fd == -1 || l->outlen == 0) {
		l->outlen = 0;
		return l->err[0] != '\0' ? -1 : 0;
	}
	if (sr_write_all(l->fd, l->out, l->outlen) == -1) {
		sr_errno(l->err, "write %s", l->path);
		close(l->fd);
		l->fd = -1;
		l->outlen = 0;
		return -1;
	}
	l->outlen = 0;
	/* Do not keep a 64 KiB line's buffer for the rest of the run. */
	if (l->outcap > 4 * JL_READ) {
		free(l->out);
		l->out = NULL;
		l->outcap = 0;
	}
	return 0;
}

/* Split a chunk of stream i into log lines, keeping the unfinished end. */
static void
jl_split(struct sr_joblog *l, int i, const char *p, size_t n, double now)
{
	struct jl_stream *s = &l->s[i];
	const char *nl;
	size_t seg, take;

	while (n > 0) {
		nl = memchr(p, '\n', n);
		seg = nl != NULL ? (size_t)(nl - p) : n;
		/* A whole line with nothing buffered: no copy. */
		if (nl != NULL && s->len == 0 && seg <= SR_JOBLOG_LINEMAX) {
			jl_line(l, now, i, p, seg);
			p += seg + 1;
			n -= seg + 1;
			continue;
		}
		while (seg > 0) {
			/* Split only when more bytes of the line come: a line
			 * of exactly LINEMAX bytes stays one log line. */
			if (s->len == SR_JOBLOG_LINEMAX) {
				jl_line(l, now, i, s->buf, s->len);
				s->len = 0;
			}
			if (s->buf == NULL)
				s->buf = sr_malloc(SR_JOBLOG_LINEMAX);
			take = SR_JOBLOG_LINEMAX - s->len;
			if (take > seg)
				take = seg;
			memcpy(s->buf + s->len, p, take);
			s->len += take;
			p += take;
			n -= take;
			seg -= take;
		}
		if (nl != NULL) {
			jl_line(l, now, i, s->buf, s->len);
			s->len = 0;
			p++;
			n--;
		}
	}
}

/* Log stream i's unfinished line, if any, and free its buffer. */
static void
jl_end(struct sr_joblog *l, int i, double now)
{
	struct jl_stream *s = &l->s[i];

	if (s->len > 0)
		jl_line(l, now, i, s->buf, s->len);
	s->len = 0;
	free(s->buf);
	s->buf = NULL;
}

/* Write all of p to fd, waiting when fd is non-blocking and full (a job
 * that sets O_NONBLOCK on a terminal it shares with spotrun). */
static int
jl_echo(int fd, const char *p, size_t n)
{
	struct pollfd pfd;
	ssize_t w;

	while (n > 0) {
		w = write(fd, p, n);
		if (w == -1) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -1;
			pfd.fd = fd;
			pfd.events = POLLOUT;
			if (poll(&pfd, 1, 1000) == -1 && errno != EINTR)
				return -1;
			continue;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int jl_echo(int fd, const char *p, size_t n);

/* With a prefix: write the whole lines gathered for stream i at once. */
static void
jl_echo_flush(struct sr_joblog *l, int i)
{
	struct jl_stream *s = &l->s[i];

	if (s->echolen == 0)
		return;
	sr_term_begin(l->term, s->echo_fd);
	if (jl_echo(s->echo_fd, s->echo, s->echolen) == -1)
		s->echo_dead = 1;
	sr_term_end(l->term, s->echo_fd, s->echo, s->echolen);
	s->echolen = 0;
	if (s->echocap > 4 * JL_READ) {
		free(s->echo);
		s->echo = NULL;
		s->echocap = 0;
	}
}

int
sr_joblog_feed(struct sr_joblog *l, int stream, int fd, int echo_fd)
{
	struct jl_stream *s;
	size_t total = 0;
	double now;
	ssize_t n;
	int i;

	if (stream != SR_JOBLOG_OUT && stream != SR_JOBLOG_ERR)
		sr_fatal("sr_joblog_feed: bad stream %d", stream);
	i = stream - 1;
	s = &l->s[i];
	s->echo_fd = echo_fd;
	for (;;) {
		n = read(fd, l->rbuf, sizeof l->rbuf);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			return -1;
		}
		now = sr_mono();
		if (n == 0) {
			jl_end(l, i, now);
			jl_echo_flush(l, i);
			jl_flush(l);
			return 0;
		}
		if (echo_fd != -1 && !s->echo_dead && l->prefix == NULL) {
			sr_term_begin(l->term, echo_fd);
			if (jl_echo(echo_fd, l->rbuf, (size_t)n) == -1)
				s->echo_dead = 1;
			sr_term_end(l->term, echo_fd, l->rbuf, (size_t)n);
		}
		jl_split(l, i, l->rbuf, (size_t)n, now);
		total += (size_t)n;
		if ((size_t)n < sizeof l->rbuf || total >= JL_FEEDMAX)
			break;
	}
	jl_echo_flush(l, i);
	jl_flush(l);
	return 1;
}

int
sr_joblog_note(struct sr_joblog *l, const char *fmt, ...)
{
	const char *p, *nl;
	double now = sr_mono();
	va_list ap;
	char *msg;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		sr_fatal("sr_joblog_note: out of memory");
	for (p = msg;; p = nl + 1) {
		nl = strchrnul(p, '\n');
		jl_line(l, now, -1, p, (size_t)(nl - p));
		if (*nl == '\0' || nl[1] == '\0')
			break;
	}
	free(msg);
	return jl_flush(l);
}

void
sr_joblog_set_sink(struct sr_joblog *l, void (*fn)(void *arg, const char *buf, size_t len),
    void *arg)
{
	l->sink = fn;
	l->sink_arg = arg;
}

void
sr_joblog_set_term(struct sr_joblog *l, struct sr_term *term)
{
	l->term = term;
}

void
sr_joblog_set_prefix(struct sr_joblog *l, const char *prefix)
{
	free(l->prefix);
	l->prefix = prefix != NULL ? sr_strdup(prefix) : NULL;
}

const char *
sr_joblog_last_err(const struct sr_joblog *l)
{
	return l->last_err;
}

const char *
sr_joblog_error(const struct sr_joblog *l)
{
	return l->err[0] != '\0' ? l->err : NULL;
}

void
sr_joblog_close(struct sr_joblog *l)
{
	double now = sr_mono();

	if (l == NULL)
		return;
	jl_end(l, 0, now);
	jl_end(l, 1, now);
	jl_echo_flush(l, 0);
	jl_echo_flush(l, 1);
	jl_flush(l);
	if (l->fd != -1)
		close(l->fd);
	free(l->out);
	free(l->s[0].echo);
	free(l->s[1].echo);
	free(l->prefix);
	free(l->path);
	free(l);
}
