/*
 * faultproxy.c: a fault-injecting TCP proxy for the S3 fault tests. It sits
 * between a client (spotrun, curl) and a real server (Ceph RGW) on loopback
 * and does to chosen connections what networks and overloaded stores do:
 * reset them half-way, stall them, answer 503 SlowDown or 500 InternalError
 * in the server's place, hang up after the request headers, pass the request
 * on and lose the reply, crawl, or refuse requests signed for the wrong
 * region as AWS does. One thread per connection (two in region mode); libc
 * only.
 *
 * usage: faultproxy -p PORTFILE -t HOST:PORT [-P PORT] [-c CONTROLFILE]
 *                  [-l LOGFILE]
 *   -p  listen on 127.0.0.1 with a port the kernel picks; write it (one
 *       line) to PORTFILE once listening (atomically: temp file + rename)
 *   -P  listen on PORT instead (SO_REUSEADDR): a proxy killed (a gateway
 *       gone: every connection cut, new ones refused) and started again
 *       on the port its clients know (the gateway back)
 *   -t  the target every connection that is not faulted is forwarded to
 *   -c  the fault to apply, one line; reread before each new connection
 *       when the file changed (inode, size or mtime), or at once on SIGHUP
 *       (which also rearms an unchanged file). A missing file means pass.
 *   -l  one line per connection (appended, written when it ends), else
 *       stderr; a stall writes one more when it begins, so that a test
 *       can see its client give up before the stall ends:
 *         conn N: stall S s begins
 *         conn N: stalled request: METHOD PATH   (or: none within 1 s, or within a shorter stall)
 *         conn N: pass: I bytes in, O bytes out
 *         conn N: reset after I bytes from the client
 *         conn N: stall S s, then pass: I bytes in, O bytes out
 *         conn N: stall S s, then close
 *         conn N: slowdown: 503 SlowDown to METHOD PATH
 *         conn N: internal: 500 InternalError to METHOD PATH
 *         conn N: drop after the request headers of METHOD PATH
 *         conn N: lose: forwarded I bytes of METHOD PATH, reset before the reply
 *         conn N: slow R B/s: pass: I bytes in, O bytes out
 *         conn N: wan R B/s: pass: I bytes in, O bytes out
 *         conn N: flip byte F: pass: I bytes in, O bytes out
 *         conn N: flip: byte not reached: pass: I bytes in, O bytes out
 *         conn N: region: 400 AuthorizationHeaderMalformed to METHOD PATH
 *             (signed for REGION)
 *         conn N: region NAME: K requests forwarded: I bytes in, O bytes out
 *         conn N: header NAME of METHOD PATH: VALUE   (or: absent)
 *         conn N: header NAME: K requests forwarded: I bytes in, O bytes out
 *         conn N: MODE: connect HOST:PORT: REASON   (target unreachable)
 *       and "control FILE: ..." when the control file is read or is wrong.
 *
 * The control line: MODE [count=K|all] [after=N] [seconds=S] [then=pass|close]
 *                   [rate=R] [name=REGION]
 *   pass                      forward byte for byte
 *   reset after=N             forward the first N bytes from the client, then
 *                             reset both sides (RST: SO_LINGER 0); N=0 resets
 *                             at once
 *   stall seconds=S then=X    accept, then leave the request unread and
 *                             send nothing for S seconds; then forward
 *                             (X=pass, the default: a slow server) or close
 *                             without a reply (X=close: a hung one)
 *   slowdown                  read the request headers, answer 503 with an
 *                             S3 <Error><Code>SlowDown</Code> body and
 *                             Connection: close, never forward
 *   internal                  the same with 500 InternalError
 *   drop                      read the request headers, close with no reply
 *   lose                      forward the request; when the server's reply
 *                             begins, reset both sides: the request took
 *                             effect but the client never hears of it
 *   slow rate=R               forward at most R bytes a second from the
 *                             client (an upload crawls); replies at full
 *                             speed
 *   wan rate=R                forward at most R bytes a second each way on
 *                             every connection: a remote store whose
 *                             connections each carry R, however many
 *                             there are (count=all by default)
 *   flip after=N              forward byte for byte, but invert the lowest
 *                             bit of the client's byte N (0-based): a body
 *                             damaged on the way, which only the server's
 *                             check of a checksum can catch
 *   region name=NAME          read each request's headers; one signed with
 *                             SigV4 for another region than NAME (the
 *                             Authorization header's Credential=AK/DATE/
 *                             REGION/SERVICE/aws4_request) gets what AWS
 *                             answers: 400 with an S3 <Error><Code>
 *                             AuthorizationHeaderMalformed</Code> body
 *                             naming NAME in <Message> and <Region> (no body
 *                             to a HEAD), an x-amz-bucket-region: NAME
 *                             header, and Connection: close. Requests for
 *                             NAME, and unsigned ones, are forwarded (their
 *                             bodies by Content-Length; after a chunked one
 *                             the rest of the connection passes unchecked).
 *   header name=NAME          forward every request as region mode does,
 *                             logging the value of its header NAME (what a
 *                             server would see, e.g. name=User-Agent)
 * count=K applies the fault to the next K connections (default 1; all for
 * pass, region, header and wan), then passes; count=all to every connection. '#' starts
 * a comment. A connection carries one request in the modes that fault a
 * request (faulted replies close it); pass, stall-then-pass, slow, wan and
 * region and header keep connections alive.
 */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HEADER_MAX 65536
#define RELAY_BUF 65536
/* How long a faulted reply waits for the client to hang up before closing,
 * so that unread request bytes do not turn our FIN into an RST. */
#define DRAIN_SECS 5

enum mode {
	M_PASS,
	M_RESET,
	M_STALL,
	M_SLOWDOWN,
	M_INTERNAL,
	M_DROP,
	M_LOSE,
	M_SLOW,
	M_REGION,
	M_WAN,
	M_HEADER,
	M_FLIP
};

static const char *mode_names[] = {
	"pass", "reset", "stall", "slowdown", "internal", "drop", "lose", "slow",
	"region", "wan", "header", "flip"
};

struct fault {
	enum mode	 mode;
	long		 count;		/* connections left; -1: all */
	long long	 after;		/* reset: client bytes forwarded first;
					 * flip: the client byte inverted */
	double		 seconds;	/* stall */
	int		 then_close;	/* stall: close instead of forwarding */
	long long	 rate;		/* slow: client bytes a second; wan: each way */
	char		 name[64];	/* region: the one the server accepts;
					   header: the header logged */
};

/* Everything a connection's thread needs; owned by that thread. */
struct conn {
	int		 fd;
	long		 n;
	struct fault	 fault;
	const char	*host;
	const char	*port;
	int		 log_fd;
};

/* The control file as last read, to notice a rewrite. */
struct control {
	const char	*path;
	int		 seen;
	dev_t		 dev;
	ino_t		 ino;
	off_t		 size;
	struct timespec	 mtime;
};

static volatile sig_atomic_t got_hup;
static volatile sig_atomic_t got_term;

static void
on_signal(int sig)
{
	if (sig == SIGHUP)
		got_hup = 1;
	else
		got_term = 1;
}

static void
usage(void)
{
	fprintf(stderr, "usage: faultproxy -p PORTFILE -t HOST:PORT "
	    "[-P PORT] [-c CONTROLFILE] [-l LOGFILE]\n");
	exit(2);
}

/* Append one line to the log with a single write, so that lines from
 * several threads do not interleave. */
static void
logf_line(int fd, const char *fmt, ...)
{
	char	line[1024];
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof line - 2)
		n = sizeof line - 2;
	line[n++] = '\n';
	if (write(fd, line, n) < 0) {
		/* Nowhere left to report it. */
	}
}

static double
mono(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
sleep_secs(double s)
{
	struct timespec	ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static int
write_all(int fd, const char *p, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/* Parse one KEY=VALUE word of the control line into f; 0 or -1 with why. */
static int
parse_option(struct fault *f, const char *word, char *why, size_t whylen)
{
	const char	*v = strchr(word, '=');
	char		*end;

	if (v == NULL) {
		snprintf(why, whylen, "'%s' is not KEY=VALUE", word);
		return -1;
	}
	v++;
	errno = 0;
	if (strncmp(word, "count=", 6) == 0) {
		if (strcmp(v, "all") == 0) {
			f->count = -1;
			return 0;
		}
		f->count = strtol(v, &end, 10);
		if (*v != '\0' && *end == '\0' && errno == 0 && f->count > 0)
			return 0;
		snprintf(why, whylen, "count '%s': use a number > 0 or all", v);
		return -1;
	}
	if (strncmp(word, "after=", 6) == 0) {
		f->after = strtoll(v, &end, 10);
		if (*v != '\0' && *end == '\0' && errno == 0 && f->after >= 0)
			return 0;
		snprintf(why, whylen, "after '%s': use a byte count >= 0", v);
		return -1;
	}
	if (strncmp(word, "seconds=", 8) == 0) {
		f->seconds = strtod(v, &end);
		if (*v != '\0' && *end == '\0' && errno == 0 &&
		    f->seconds >= 0 && f->seconds < 86400)
			return 0;
		snprintf(why, whylen, "seconds '%s': use 0 to 86400", v);
		return -1;
	}
	if (strncmp(word, "then=", 5) == 0) {
		if (strcmp(v, "pass") == 0 || strcmp(v, "close") == 0) {
			f->then_close = strcmp(v, "close") == 0;
			return 0;
		}
		snprintf(why, whylen, "then '%s': use pass or close", v);
		return -1;
	}
	if (strncmp(word, "rate=", 5) == 0) {
		f->rate = strtoll(v, &end, 10);
		if (*v != '\0' && *end == '\0' && errno == 0 && f->rate > 0)
			return 0;
		snprintf(why, whylen, "rate '%s': use bytes a second > 0", v);
		return -1;
	}
	if (strncmp(word, "name=", 5) == 0) {
		size_t	i, n = strlen(v);

		for (i = 0; i < n; i++) {
			if (!isalnum((unsigned char)v[i]) && v[i] != '-')
				break;
		}
		if (n > 0 && n < sizeof f->name && i == n) {
			memcpy(f->name, v, n + 1);
			return 0;
		}
		snprintf(why, whylen, "name '%s': use a region such as "
		    "eu-central-1", v);
		return -1;
	}
	snprintf(why, whylen, "unknown key in '%s': use count, after, seconds, "
	    "then, rate or name", word);
	return -1;
}

/* Parse a control line ("MODE [KEY=VALUE...]"); 0 or -1 with why. */
static int
parse_fault(char *line, struct fault *f, char *why, size_t whylen)
{
	char	*word, *save = NULL;
	size_t	 i;

	memset(f, 0, sizeof *f);
	f->count = 1;
	line[strcspn(line, "#")] = '\0';
	word = strtok_r(line, " \t\r\n", &save);
	if (word == NULL) {
		f->mode = M_PASS;
		return 0;
	}
	for (i = 0; i < sizeof mode_names / sizeof mode_names[0]; i++) {
		if (strcmp(word, mode_names[i]) == 0)
			break;
	}
	if (i == sizeof mode_names / sizeof mode_names[0]) {
		snprintf(why, whylen, "unknown mode '%s': use pass, reset, "
		    "stall, slowdown, internal, drop, lose, slow, region, wan, header or flip",
		    word);
		return -1;
	}
	f->mode = i;
	if (f->mode == M_REGION || f->mode == M_WAN || f->mode == M_HEADER)
		f->count = -1;
	while ((word = strtok_r(NULL, " \t\r\n", &save)) != NULL) {
		if (parse_option(f, word, why, whylen) != 0)
			return -1;
	}
	if (f->mode == M_PASS)
		f->count = -1;
	if ((f->mode == M_SLOW || f->mode == M_WAN) && f->rate == 0) {
		snprintf(why, whylen, "%s needs rate=BYTES (a second)", mode_names[f->mode]);
		return -1;
	}
	if (f->mode == M_REGION && f->name[0] == '\0') {
		snprintf(why, whylen, "region needs name=REGION, e.g. "
		    "name=eu-central-1");
		return -1;
	}
	if (f->mode == M_HEADER && f->name[0] == '\0') {
		snprintf(why, whylen, "header needs name=HEADER, e.g. "
		    "name=User-Agent");
		return -1;
	}
	return 0;
}

/* Reread the control file into *f if it changed (or force is set). A bad
 * file is logged and means pass. */
static void
reload_control(struct control *c, struct fault *f, int force, int log_fd)
{
	struct stat	 st;
	char		 buf[1024], why[256];
	FILE		*fp;
	size_t		 n;

	if (c->path == NULL)
		return;
	if (stat(c->path, &st) != 0) {
		if (c->seen || force) {
			logf_line(log_fd, "control %s: missing: pass", c->path);
			memset(f, 0, sizeof *f);
			f->count = -1;
		}
		c->seen = 0;
		return;
	}
	if (!force && c->seen && st.st_dev == c->dev && st.st_ino == c->ino &&
	    st.st_size == c->size && st.st_mtim.tv_sec == c->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == c->mtime.tv_nsec)
		return;
	c->seen = 1;
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	c->size = st.st_size;
	c->mtime = st.st_mtim;

	if ((fp = fopen(c->path, "r")) == NULL) {
		logf_line(log_fd, "control %s: %s: pass", c->path,
		    strerror(errno));
		memset(f, 0, sizeof *f);
		f->count = -1;
		return;
	}
	n = fread(buf, 1, sizeof buf - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	logf_line(log_fd, "control %s: %s", c->path, buf);
	if (parse_fault(buf, f, why, sizeof why) != 0) {
		logf_line(log_fd, "control %s line 1: %s: pass", c->path, why);
		memset(f, 0, sizeof *f);
		f->count = -1;
	}
}

/* Connect to the target; the fd, or -1 with why. */
static int
connect_target(const char *host, const char *port, char *why, size_t whylen)
{
	struct addrinfo	 hints, *res, *ai;
	int		 fd = -1, r, one = 1;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((r = getaddrinfo(host, port, &hints, &res)) != 0) {
		snprintf(why, whylen, "%s", gai_strerror(r));
		return -1;
	}
	snprintf(why, whylen, "no address");
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
		    ai->ai_protocol);
		if (fd < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		snprintf(why, whylen, "%s", strerror(errno));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}

/* Close fd with an RST rather than a FIN. */
static void
close_reset(int fd)
{
	struct linger	l = { 1, 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
	close(fd);
}

enum relay_end {
	R_CLOSED,	/* both sides closed */
	R_LIMIT,	/* reset after the limit */
	R_LOST		/* reset as the reply began */
};

/*
 * Forward between the client cfd and the target ufd until both sides
 * closed. With limit >= 0, reset both once limit bytes from the client were
 * forwarded. With up_rate > 0, forward at most up_rate client bytes a
 * second, and with down_rate > 0 at most that many reply bytes a second.
 * With lose, reset both when the first reply bytes arrive, passing none on.
 * With flip >= 0, invert the lowest bit of client byte number flip.
 * Counts bytes in *in and *out (already forwarded bytes may be counted in
 * *in before the call: the rate counts from there).
 */
static enum relay_end
relay(int cfd, int ufd, long long limit, long long up_rate, long long down_rate, int lose,
    long long flip, long long *in, long long *out)
{
	struct pollfd	 p[2];
	char		*buf;
	int		 c_open = 1, u_open = 1;
	enum relay_end	 end = R_CLOSED;
	ssize_t		 n;
	size_t		 want;
	long long	 in0 = *in, out0 = *out;
	double		 t0 = mono();

	if ((buf = malloc(RELAY_BUF)) == NULL)
		return R_CLOSED;
	while (c_open || u_open) {
		if (limit >= 0 && *in >= limit) {
			end = R_LIMIT;
			break;
		}
		p[0].fd = c_open ? cfd : -1;
		p[0].events = POLLIN;
		p[1].fd = u_open ? ufd : -1;
		p[1].events = POLLIN;
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents != 0) {
			want = RELAY_BUF;
			if (limit >= 0 && (long long)want > limit - *in)
				want = limit - *in;
			/* small steps keep a slow transfer smooth */
			if (up_rate > 0 && (long long)want > up_rate / 20 + 1)
				want = up_rate / 20 + 1;
			n = recv(cfd, buf, want, 0);
			if (n > 0) {
				if (flip >= *in && flip < *in + n)
					buf[flip - *in] ^= 1;
				*in += n;
				if (write_all(ufd, buf, n) != 0)
					break;
				if (up_rate > 0)
					sleep_secs(t0 + (double)(*in - in0) / up_rate -
					    mono());
			} else if (n == 0 || errno != EINTR) {
				c_open = 0;
				shutdown(ufd, SHUT_WR);
			}
		}
		if (p[1].revents != 0) {
			want = RELAY_BUF;
			if (down_rate > 0 && (long long)want > down_rate / 20 + 1)
				want = down_rate / 20 + 1;
			n = recv(ufd, buf, want, 0);
			if (n > 0 && lose) {
				end = R_LOST;
				break;
			}
			if (n > 0) {
				*out += n;
				if (write_all(cfd, buf, n) != 0)
					break;
				if (down_rate > 0)
					sleep_secs(t0 + (double)(*out - out0) / down_rate -
					    mono());
			} else if (n == 0 || errno != EINTR) {
				u_open = 0;
				shutdown(cfd, SHUT_WR);
			}
		}
	}
	free(buf);
	return end;
}

/* Read the request headers (up to the blank line) into buf (NUL-ended);
 * their length, or -1 when the client closed or sent too much first. */
static ssize_t
read_headers(int fd, char *buf, size_t size)
{
	size_t	len = 0;
	ssize_t	n;

	while (len < size - 1) {
		n = recv(fd, buf + len, size - 1 - len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		len += n;
		buf[len] = '\0';
		if (strstr(buf, "\r\n\r\n") != NULL)
			return len;
	}
	return -1;
}

/* "METHOD PATH" of the request line in headers, into out. */
static void
request_line(const char *headers, char *out, size_t outlen)
{
	size_t	n = strcspn(headers, "\r\n");
	const char *sp;

	/* Drop " HTTP/1.1". */
	sp = memchr(headers, ' ', n);
	if (sp != NULL && (sp = memchr(sp + 1, ' ', n - (sp + 1 - headers))))
		n = sp - headers;
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, headers, n);
	out[n] = '\0';
}

/* Say which request a stall of secs holds: its request line, peeked
 * (MSG_PEEK: the bytes stay unread, so the stall is the same), when it
 * comes within a second and within the stall. */
static void
stalled_request(struct conn *c, double secs)
{
	char		buf[1024], req[512];
	struct pollfd	p = { c->fd, POLLIN, 0 };
	ssize_t		n;
	int		ms = secs < 1 ? (int)(secs * 1000) : 1000;

	if (poll(&p, 1, ms) != 1 ||
	    (n = recv(c->fd, buf, sizeof buf - 1, MSG_PEEK | MSG_DONTWAIT)) <= 0) {
		logf_line(c->log_fd, "conn %ld: stalled request: none within %.3g s", c->n,
		    ms / 1000.0);
		return;
	}
	buf[n] = '\0';
	request_line(buf, req, sizeof req);
	logf_line(c->log_fd, "conn %ld: stalled request: %s", c->n, req);
}

/* After a faulted reply: half-close, then read and discard until the client
 * hangs up (or DRAIN_SECS pass), so that the kernel sends a FIN, not an RST
 * for unread request bytes. */
static void
drain_close(int fd)
{
	char		buf[4096];
	struct pollfd	p = { fd, POLLIN, 0 };
	double		end = mono() + DRAIN_SECS;
	int		ms;

	shutdown(fd, SHUT_WR);
	while ((ms = (int)((end - mono()) * 1000)) > 0) {
		if (poll(&p, 1, ms) <= 0)
			break;
		if (recv(fd, buf, sizeof buf, 0) <= 0)
			break;
	}
	close(fd);
}

/* Answer an S3 error in the server's place and close. */
static void
answer_error(struct conn *c, const char *what)
{
	char		 req[512], headers[HEADER_MAX], body[512], head[1024];
	const char	*status, *code, *msg;
	int		 blen, hlen, is_head;

	if (read_headers(c->fd, headers, sizeof headers) < 0) {
		logf_line(c->log_fd, "conn %ld: %s: the client closed before "
		    "the end of the request headers", c->n, what);
		close(c->fd);
		return;
	}
	request_line(headers, req, sizeof req);
	if (c->fault.mode == M_SLOWDOWN) {
		status = "503 Slow Down";
		code = "SlowDown";
		msg = "Please reduce your request rate.";
	} else {
		status = "500 Internal Server Error";
		code = "InternalError";
		msg = "We encountered an internal error. Please try again.";
	}
	blen = snprintf(body, sizeof body,
	    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<Error><Code>%s</Code><Message>%s</Message>"
	    "<RequestId>faultproxy-%ld</RequestId></Error>\n", code, msg, c->n);
	hlen = snprintf(head, sizeof head,
	    "HTTP/1.1 %s\r\n"
	    "Content-Type: application/xml\r\n"
	    "Content-Length: %d\r\n"
	    "x-amz-request-id: faultproxy-%ld\r\n"
	    "Connection: close\r\n\r\n", status, blen, c->n);
	is_head = strncmp(req, "HEAD ", 5) == 0;
	if (write_all(c->fd, head, hlen) == 0 && !is_head)
		write_all(c->fd, body, blen);
	logf_line(c->log_fd, "conn %ld: %s: %.3s %s to %s", c->n, what,
	    status, code, req);
	drain_close(c->fd);
}

static void
drop(struct conn *c)
{
	char	req[512], headers[HEADER_MAX];

	if (read_headers(c->fd, headers, sizeof headers) < 0) {
		logf_line(c->log_fd, "conn %ld: drop: the client closed before "
		    "the end of the request headers", c->n);
		close(c->fd);
		return;
	}
	request_line(headers, req, sizeof req);
	logf_line(c->log_fd, "conn %ld: drop after the request headers of %s",
	    c->n, req);
	drain_close(c->fd);
}

/* Forward (after a stall of prefix, e.g. "stall 2.0 s, then "); reset after
 * limit client bytes when limit >= 0. */
static void
forward(struct conn *c, const char *prefix, long long limit)
{
	char		why[256];
	long long	in = 0, out = 0;
	int		ufd;

	if (limit == 0) {
		close_reset(c->fd);
		logf_line(c->log_fd, "conn %ld: reset after 0 bytes from the "
		    "client", c->n);
		return;
	}
	if ((ufd = connect_target(c->host, c->port, why, sizeof why)) < 0) {
		logf_line(c->log_fd, "conn %ld: %s%s: connect %s:%s: %s", c->n,
		    prefix, mode_names[c->fault.mode], c->host, c->port, why);
		close(c->fd);
		return;
	}
	if (relay(c->fd, ufd, limit,
	    c->fault.mode == M_SLOW || c->fault.mode == M_WAN ? c->fault.rate : 0,
	    c->fault.mode == M_WAN ? c->fault.rate : 0, 0,
	    c->fault.mode == M_FLIP ? c->fault.after : -1, &in, &out) == R_LIMIT) {
		close_reset(c->fd);
		close_reset(ufd);
		logf_line(c->log_fd, "conn %ld: reset after %lld bytes from the "
		    "client", c->n, in);
		return;
	}
	close(ufd);
	close(c->fd);
	if (c->fault.mode == M_FLIP && in <= c->fault.after)
		prefix = "flip: byte not reached: ";
	logf_line(c->log_fd, "conn %ld: %spass: %lld bytes in, %lld bytes out",
	    c->n, prefix, in, out);
}

/* Forward the request, reset both sides as the reply begins. */
static void
lose(struct conn *c)
{
	char		 req[512], headers[HEADER_MAX], why[256];
	long long	 in, out = 0;
	ssize_t		 n;
	int		 ufd;

	if ((n = read_headers(c->fd, headers, sizeof headers)) < 0) {
		logf_line(c->log_fd, "conn %ld: lose: the client closed before "
		    "the end of the request headers", c->n);
		close(c->fd);
		return;
	}
	request_line(headers, req, sizeof req);
	if ((ufd = connect_target(c->host, c->port, why, sizeof why)) < 0) {
		logf_line(c->log_fd, "conn %ld: lose: connect %s:%s: %s", c->n,
		    c->host, c->port, why);
		close(c->fd);
		return;
	}
	in = n;
	if (write_all(ufd, headers, n) == 0 &&
	    relay(c->fd, ufd, -1, 0, 0, 1, -1, &in, &out) == R_LOST) {
		close_reset(c->fd);
		close_reset(ufd);
		logf_line(c->log_fd, "conn %ld: lose: forwarded %lld bytes of %s, "
		    "reset before the reply", c->n, in, req);
		return;
	}
	close(ufd);
	close(c->fd);
	logf_line(c->log_fd, "conn %ld: lose: %s: the server closed without a "
	    "reply (%lld bytes in)", c->n, req, in);
}

/* ---- region and header: one request at a time ---- */

/* Bytes read from the client and not yet dealt with. */
struct inbuf {
	char	b[HEADER_MAX];
	size_t	len;
};

/* Read until inb holds a whole header block; its length, 0 when the
 * client closed between requests, -1 on a broken or oversized one. */
static ssize_t
next_headers(int fd, struct inbuf *inb)
{
	char	*e;
	ssize_t	 n;

	for (;;) {
		e = memmem(inb->b, inb->len, "\r\n\r\n", 4);
		if (e != NULL)
			return e + 4 - inb->b;
		if (inb->len == sizeof inb->b)
			return -1;
		n = recv(fd, inb->b + inb->len, sizeof inb->b - inb->len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return inb->len == 0 && n == 0 ? 0 : -1;
		inb->len += n;
	}
}

/* The value of header name in the block h (hlen bytes), into out; 0 when
 * absent. */
static int
header_value(const char *h, size_t hlen, const char *name, char *out,
    size_t outlen)
{
	size_t		 nl = strlen(name), vl;
	const char	*p = h, *end = h + hlen, *eol, *v;

	while (p < end && (eol = memmem(p, end - p, "\r\n", 2)) != NULL) {
		if ((size_t)(eol - p) > nl && strncasecmp(p, name, nl) == 0 &&
		    p[nl] == ':') {
			v = p + nl + 1;
			while (v < eol && (*v == ' ' || *v == '\t'))
				v++;
			vl = eol - v;
			if (vl >= outlen)
				vl = outlen - 1;
			memcpy(out, v, vl);
			out[vl] = '\0';
			return 1;
		}
		p = eol + 2;
	}
	return 0;
}

/* The region of a SigV4 Authorization value ("... Credential=AK/DATE/
 * REGION/SERVICE/aws4_request, ..."), into out; 0 when it has none. */
static int
sigv4_region(const char *auth, char *out, size_t outlen)
{
	const char	*p = strstr(auth, "Credential="), *r;
	size_t		 n;
	int		 i;

	if (p == NULL)
		return 0;
	r = p + strlen("Credential=");
	for (i = 0; i < 2; i++) {
		if ((r = strchr(r, '/')) == NULL)
			return 0;
		r++;
	}
	n = strcspn(r, "/,");
	if (r[n] != '/' || n >= outlen)
		return 0;
	memcpy(out, r, n);
	out[n] = '\0';
	return 1;
}

/* Answer what AWS does to a request signed for the wrong region. */
static void
answer_region(struct conn *c, const char *req, const char *signed_for)
{
	char	body[1024], head[1024];
	int	blen, hlen;

	blen = snprintf(body, sizeof body,
	    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<Error><Code>AuthorizationHeaderMalformed</Code><Message>The "
	    "authorization header is malformed; the region '%s' is wrong; "
	    "expecting '%s'</Message><Region>%s</Region>"
	    "<RequestId>faultproxy-%ld</RequestId>"
	    "<HostId>faultproxy</HostId></Error>\n", signed_for, c->fault.name,
	    c->fault.name, c->n);
	hlen = snprintf(head, sizeof head,
	    "HTTP/1.1 400 Bad Request\r\n"
	    "Content-Type: application/xml\r\n"
	    "Content-Length: %d\r\n"
	    "x-amz-request-id: faultproxy-%ld\r\n"
	    "x-amz-bucket-region: %s\r\n"
	    "Connection: close\r\n\r\n", blen, c->n, c->fault.name);
	if (write_all(c->fd, head, hlen) == 0 && strncmp(req, "HEAD ", 5) != 0)
		write_all(c->fd, body, blen);
}

/* The target's replies to the client, on a thread of their own while the
 * connection's thread reads requests. */
struct back {
	int		cfd, ufd;
	long long	out;
};

static void *
back_main(void *arg)
{
	struct back	*bk = arg;
	char		 buf[RELAY_BUF];
	ssize_t		 n;

	for (;;) {
		n = recv(bk->ufd, buf, sizeof buf, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || write_all(bk->cfd, buf, n) != 0)
			break;
		bk->out += n;
	}
	shutdown(bk->cfd, SHUT_WR);
	return NULL;
}

/* Forward len bytes of a request body: first what inb holds past hlen,
 * then from the client. 0, or -1 when either side broke. */
static int
forward_body(struct conn *c, int ufd, struct inbuf *inb, size_t hlen,
    unsigned long long len, long long *in)
{
	char		buf[RELAY_BUF];
	size_t		have = inb->len - hlen, k;
	ssize_t		n;

	k = have < len ? have : (size_t)len;
	if (write_all(ufd, inb->b + hlen, k) != 0)
		return -1;
	*in += k;
	len -= k;
	memmove(inb->b, inb->b + hlen + k, inb->len - hlen - k);
	inb->len -= hlen + k;
	while (len > 0) {
		n = recv(c->fd, buf, len < sizeof buf ? len : sizeof buf, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || write_all(ufd, buf, n) != 0)
			return -1;
		*in += n;
		len -= n;
	}
	return 0;
}

/* Region and header modes: each request of the connection read and judged
 * or logged, then forwarded; the replies flow back on a thread. */
static void
by_request(struct conn *c)
{
	struct inbuf	*inb = calloc(1, sizeof *inb);
	struct back	 bk = { c->fd, -1, 0 };
	pthread_t	 th;
	char		 req[512], val[1024], reg[64], why[256];
	long long	 in = 0;
	long		 forwarded = 0;
	ssize_t		 hlen;
	int		 started = 0, rejected = 0;

	if (inb == NULL) {
		close(c->fd);
		return;
	}
	while ((hlen = next_headers(c->fd, inb)) > 0) {
		unsigned long long len = 0;

		request_line(inb->b, req, sizeof req);
		if (c->fault.mode == M_HEADER)
			logf_line(c->log_fd, "conn %ld: header %s of %s: %s", c->n,
			    c->fault.name, req, header_value(inb->b, hlen,
			    c->fault.name, val, sizeof val) ? val : "absent");
		else if (header_value(inb->b, hlen, "Authorization", val, sizeof val) &&
		    sigv4_region(val, reg, sizeof reg) &&
		    strcmp(reg, c->fault.name) != 0) {
			answer_region(c, req, reg);
			logf_line(c->log_fd, "conn %ld: region: 400 "
			    "AuthorizationHeaderMalformed to %s (signed for %s)",
			    c->n, req, reg);
			rejected = 1;
			break;
		}
		if (bk.ufd < 0) {
			bk.ufd = connect_target(c->host, c->port, why, sizeof why);
			if (bk.ufd < 0) {
				logf_line(c->log_fd, "conn %ld: %s: connect "
				    "%s:%s: %s", c->n, mode_names[c->fault.mode],
				    c->host, c->port, why);
				break;
			}
			if (pthread_create(&th, NULL, back_main, &bk) != 0) {
				logf_line(c->log_fd, "conn %ld: cannot start a "
				    "thread", c->n);
				break;
			}
			started = 1;
		}
		forwarded++;
		if (write_all(bk.ufd, inb->b, hlen) != 0)
			break;
		in += hlen;
		if (header_value(inb->b, hlen, "Transfer-Encoding", val,
		    sizeof val) && strcasecmp(val, "identity") != 0) {
			/* no framing to follow: the rest passes unchecked */
			if (write_all(bk.ufd, inb->b + hlen, inb->len - hlen) != 0)
				break;
			in += inb->len - hlen;
			relay(c->fd, bk.ufd, -1, 0, 0, 0, -1, &in, &bk.out);
			break;
		}
		if (header_value(inb->b, hlen, "Content-Length", val, sizeof val))
			len = strtoull(val, NULL, 10);
		if (forward_body(c, bk.ufd, inb, hlen, len, &in) != 0)
			break;
	}
	if (bk.ufd >= 0)
		shutdown(bk.ufd, rejected ? SHUT_RDWR : SHUT_WR);
	if (started)
		pthread_join(th, NULL);
	if (bk.ufd >= 0)
		close(bk.ufd);
	if (rejected)
		drain_close(c->fd);
	else
		close(c->fd);
	if (forwarded > 0 || !rejected)
		logf_line(c->log_fd, "conn %ld: %s %s: %ld requests "
		    "forwarded: %lld bytes in, %lld bytes out", c->n,
		    mode_names[c->fault.mode], c->fault.name, forwarded, in,
		    bk.out);
	free(inb);
}

static void *
conn_main(void *arg)
{
	struct conn	*c = arg;
	char		 prefix[64];
	double		 begun;

	switch (c->fault.mode) {
	case M_PASS:
		forward(c, "", -1);
		break;
	case M_RESET:
		forward(c, "", c->fault.after);
		break;
	case M_STALL:
		logf_line(c->log_fd, "conn %ld: stall %.1f s begins", c->n,
		    c->fault.seconds);
		begun = mono();
		stalled_request(c, c->fault.seconds);	/* up to 1 s, within the stall */
		sleep_secs(c->fault.seconds - (mono() - begun));
		if (c->fault.then_close) {
			drain_close(c->fd);
			logf_line(c->log_fd, "conn %ld: stall %.1f s, then close",
			    c->n, c->fault.seconds);
			break;
		}
		snprintf(prefix, sizeof prefix, "stall %.1f s, then ",
		    c->fault.seconds);
		forward(c, prefix, -1);
		break;
	case M_SLOWDOWN:
		answer_error(c, "slowdown");
		break;
	case M_INTERNAL:
		answer_error(c, "internal");
		break;
	case M_DROP:
		drop(c);
		break;
	case M_LOSE:
		lose(c);
		break;
	case M_SLOW:
		snprintf(prefix, sizeof prefix, "slow %lld B/s: ", c->fault.rate);
		forward(c, prefix, -1);
		break;
	case M_REGION:
	case M_HEADER:
		by_request(c);
		break;
	case M_WAN:
		snprintf(prefix, sizeof prefix, "wan %lld B/s: ", c->fault.rate);
		forward(c, prefix, -1);
		break;
	case M_FLIP:
		snprintf(prefix, sizeof prefix, "flip byte %lld: ", c->fault.after);
		forward(c, prefix, -1);
		break;
	}
	free(c);
	return NULL;
}

/* Listen on 127.0.0.1 with a kernel-chosen port; the fd, its port in *port. */
static int
listen_loopback(int *port)
{
	struct sockaddr_in	sin;
	socklen_t		len = sizeof sin;
	int			fd, one = 1;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(*port);
	/* on every listener, so that the connections it accepts (inheriting
	 * it) do not keep a later proxy from the port once it is killed */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&sin, sizeof sin) != 0 ||
	    listen(fd, 128) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) != 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(sin.sin_port);
	return fd;
}

static int
write_portfile(const char *path, int port)
{
	char	tmp[4096];
	FILE	*fp;

	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	if ((fp = fopen(tmp, "w")) == NULL)
		return -1;
	fprintf(fp, "%d\n", port);
	if (fclose(fp) != 0 || rename(tmp, path) != 0)
		return -1;
	return 0;
}

/* Split HOST:PORT (the last ':'; [v6]:port too) in place. */
static int
split_target(char *s, const char **host, const char **port)
{
	char	*colon = strrchr(s, ':');

	if (colon == NULL || colon == s || colon[1] == '\0')
		return -1;
	*colon = '\0';
	*port = colon + 1;
	*host = s;
	if (s[0] == '[' && colon[-1] == ']') {
		colon[-1] = '\0';
		*host = s + 1;
	}
	return 0;
}

static void
install_signals(void)
{
	struct sigaction	sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: poll() in the accept loop must see EINTR. */
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* Start a thread for the accepted fd with the fault now in force. */
static void
spawn(int fd, long n, struct fault *f, const char *host, const char *port,
    int log_fd)
{
	struct conn	*c;
	pthread_t	 t;
	pthread_attr_t	 attr;

	if ((c = calloc(1, sizeof *c)) == NULL) {
		close(fd);
		return;
	}
	c->fd = fd;
	c->n = n;
	c->fault = *f;
	c->host = host;
	c->port = port;
	c->log_fd = log_fd;
	if (f->count > 0 && --f->count == 0) {
		memset(f, 0, sizeof *f);
		f->count = -1;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, conn_main, c) != 0) {
		logf_line(log_fd, "conn %ld: cannot start a thread", n);
		close(fd);
		free(c);
	}
	pthread_attr_destroy(&attr);
}

int
main(int argc, char **argv)
{
	struct control	 ctl;
	struct fault	 fault;
	struct pollfd	 p;
	const char	*portfile = NULL, *logfile = NULL, *host, *port;
	char		*target = NULL;
	int		 ch, lfd, fd, log_fd = STDERR_FILENO, listen_port = 0;
	long		 n = 0;

	memset(&ctl, 0, sizeof ctl);
	while ((ch = getopt(argc, argv, "p:P:t:c:l:")) != -1) {
		switch (ch) {
		case 'p':
			portfile = optarg;
			break;
		case 'P':
			listen_port = atoi(optarg);
			break;
		case 't':
			target = optarg;
			break;
		case 'c':
			ctl.path = optarg;
			break;
		case 'l':
			logfile = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || portfile == NULL || target == NULL)
		usage();
	if (split_target(target, &host, &port) != 0) {
		fprintf(stderr, "faultproxy: -t %s: use HOST:PORT, e.g. "
		    "127.0.0.1:7480\n", target);
		return 2;
	}
	if (logfile != NULL && (log_fd = open(logfile,
	    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0) {
		fprintf(stderr, "faultproxy: open %s: %s\n", logfile,
		    strerror(errno));
		return 1;
	}
	install_signals();
	memset(&fault, 0, sizeof fault);
	fault.count = -1;
	reload_control(&ctl, &fault, 0, log_fd);
	if ((lfd = listen_loopback(&listen_port)) < 0) {
		fprintf(stderr, "faultproxy: listen on 127.0.0.1: %s\n",
		    strerror(errno));
		return 1;
	}
	if (write_portfile(portfile, listen_port) != 0) {
		fprintf(stderr, "faultproxy: write %s: %s\n", portfile,
		    strerror(errno));
		return 1;
	}

	p.fd = lfd;
	p.events = POLLIN;
	while (!got_term) {
		if (poll(&p, 1, -1) < 0) {
			if (errno == EINTR && got_hup) {
				got_hup = 0;
				reload_control(&ctl, &fault, 1, log_fd);
			}
			continue;
		}
		if ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) < 0)
			continue;
		if (got_hup) {
			got_hup = 0;
			reload_control(&ctl, &fault, 1, log_fd);
		} else
			reload_control(&ctl, &fault, 0, log_fd);
		spawn(fd, ++n, &fault, host, port, log_fd);
	}
	close(lfd);
	return 0;
}
