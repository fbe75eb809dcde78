/*
 * t-joblog.c: the job output log (runner/joblog.c) through real pipes:
 * exact log contents for interleaved stdout and stderr, partial lines,
 * a 200 KiB line, binary bytes, spotrun's notes, the timestamp format, the
 * echoed bytes, and failures (unopenable log, full disk, read error).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "joblog.h"
#include "util.h"
#include "tap.h"

static char tmp[] = "/tmp/t-joblog.XXXXXX";

/* A job stream: the job writes to w, the log reads r. */
struct pipe {
	int r, w;
};

static void
mkpipe(struct pipe *p, int nonblock)
{
	int fds[2];

	if (pipe2(fds, O_CLOEXEC | (nonblock ? O_NONBLOCK : 0)) == -1)
		sr_fatal("pipe");
	p->r = fds[0];
	p->w = fds[1];
	/* Only the read end; the writer blocks when the pipe is full. */
	if (nonblock)
		fcntl(p->w, F_SETFL, fcntl(p->w, F_GETFL) & ~O_NONBLOCK);
}

static void
put(struct pipe *p, const void *buf, size_t len)
{
	if (sr_write_all(p->w, buf, len) == -1)
		sr_fatal("write pipe");
}

/* Everything readable now on a non-blocking fd, appended to buf. */
static size_t
drain(int fd, char *buf, size_t len, size_t size)
{
	ssize_t n;

	while (len < size && (n = read(fd, buf + len, size - len)) > 0)
		len += (size_t)n;
	return len;
}

static char *
read_log(const char *path, size_t *len)
{
	char *s = NULL;

	if (sr_read_file(path, 16 << 20, &s, len, NULL) == -1) {
		*len = 0;
		return sr_strdup("");
	}
	return s;
}

/* Check every line's "+SSSS.sss " prefix against re, strip it, and return
 * the rest (the log without timestamps); *bad counts lines that did not
 * match. */
static char *
strip_stamps(const char *log, size_t len, const char *re, int *bad)
{
	char *out = sr_malloc(len + 1), *line;
	const char *p = log, *end = log + len, *nl;
	regex_t rx;
	size_t o = 0, ll;

	if (regcomp(&rx, re, REG_EXTENDED | REG_NOSUB) != 0)
		sr_fatal("regcomp %s", re);
	*bad = 0;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
		line = sr_strndup(p, ll < 24 ? ll : 24);
		if (regexec(&rx, line, 0, NULL, 0) != 0 || ll < 10) {
			(*bad)++;
			tap_diag("bad stamp: '%s'", line);
		} else {
			memcpy(out + o, p + 10, ll - 10);
			o += ll - 10;
			out[o++] = '\n';
		}
		free(line);
		p += ll + 1;
	}
	out[o] = '\0';
	regfree(&rx);
	return out;
}

static void
test_interleaved(void)
{
	char path[256], err[SR_ERRMAX], echo_out[4096], echo_err[4096];
	char *log, *text;
	size_t len, eo = 0, ee = 0;
	struct sr_joblog *l;
	struct pipe out, er, eout, eerr;
	int bad, r1, r2;

	mkpipe(&out, 1);
	mkpipe(&er, 1);
	mkpipe(&eout, 1);
	mkpipe(&eerr, 1);
	snprintf(path, sizeof path, "%s/attempt-1.log", tmp);
	/* t0 12.5 s ago: the first stamps read +0012.5xx. */
	l = sr_joblog_open(path, sr_mono() - 12.5, err);
	ok(l != NULL, "open the log");
	if (l == NULL)
		return;

	put(&out, "a1\n", 3);
	is_int(sr_joblog_feed(l, SR_JOBLOG_OUT, out.r, eout.w), 1, "feed: open");
	put(&er, "b1\nb2", 5);
	sr_joblog_feed(l, SR_JOBLOG_ERR, er.r, eerr.w);
	put(&out, "a2 part", 7);
	sr_joblog_feed(l, SR_JOBLOG_OUT, out.r, eout.w);
	is_int(sr_joblog_feed(l, SR_JOBLOG_OUT, out.r, eout.w), 1,
	    "feed with nothing to read: still open");
	sr_joblog_note(l, "notice %s, deadline %d s", "simulated", 30);
	put(&out, "ial\n\n", 5);
	sr_joblog_feed(l, SR_JOBLOG_OUT, out.r, eout.w);
	put(&er, " tail", 5);
	close(er.w);
	/* A short read returns (the fd might block); the next call sees EOF. */
	is_int(sr_joblog_feed(l, SR_JOBLOG_ERR, er.r, eerr.w), 1, "feed: last bytes");
	r1 = sr_joblog_feed(l, SR_JOBLOG_ERR, er.r, eerr.w);
	is_int(r1, 0, "feed: end of stderr");
	put(&out, "x\r\ny", 4);
	sr_joblog_feed(l, SR_JOBLOG_OUT, out.r, eout.w);
	sr_joblog_note(l, "two\nlines\n");
	close(out.w);
	r2 = sr_joblog_feed(l, SR_JOBLOG_OUT, out.r, eout.w);
	is_int(r2, 0, "feed: end of stdout");
	ok(sr_joblog_error(l) == NULL, "no log error");
	sr_joblog_close(l);

	log = read_log(path, &len);
	text = strip_stamps(log, len,
	    "^\\+0012\\.[5-9][0-9]{2} (out|err|spotrun) ", &bad);
	is_int(bad, 0, "every line starts with +SSSS.sss and a tag");
	is_str(text,
	    "out a1\n"
	    "err b1\n"
	    "spotrun notice simulated, deadline 30 s\n"
	    "out a2 partial\n"
	    "out \n"
	    "err b2 tail\n"
	    "out x\r\n"
	    "spotrun two\n"
	    "spotrun lines\n"
	    "out y\n",
	    "log: lines of both streams in order, partial lines joined");
	free(log);
	free(text);

	eo = drain(eout.r, echo_out, eo, sizeof echo_out - 1);
	ee = drain(eerr.r, echo_err, ee, sizeof echo_err - 1);
	echo_out[eo] = echo_err[ee] = '\0';
	is_str(echo_out, "a1\na2 partial\n\nx\r\ny", "echo of stdout: the bytes as written");
	is_str(echo_err, "b1\nb2 tail", "echo of stderr: the bytes as written");
	close(out.r);
	close(er.r);
	close(eout.r);
	close(eout.w);
	close(eerr.r);
	close(eerr.w);
}

static void
test_long_binary(void)
{
	char path[256], err[SR_ERRMAX], *big, *log, *p, *echo;
	static const char bin[] = "\0\xff\x01\x1b[31m\t\x7f end";
	size_t len, biglen = 200 * 1024, off, n, elen = 0, want;
	struct sr_joblog *l;
	struct pipe out, eout;
	int ok_lines;

	mkpipe(&out, 1);
	mkpipe(&eout, 1);
	snprintf(path, sizeof path, "%s/long.log", tmp);
	l = sr_joblog_open(path, sr_mono(), err);
	if (!ok(l != NULL, "open the log"))
		return;

	big = sr_malloc(biglen + 1);
	for (off = 0; off < biglen; off++)
		big[off] = (char)('a' + off % 26);
	big[biglen] = '\n';
	echo = sr_malloc(2 * biglen);
	/* Through the pipe in pieces, as a job would write it. */
	for (off = 0; off <= biglen; off += n) {
		n = biglen + 1 - off < 50000 ? biglen + 1 - off : 50000;
		put(&out, big + off, n);
		is_int(sr_joblog_feed(l, SR_JOBLOG_OUT, out.r, eout.w), 1,
		    "feed a piece of the 200 KiB line (%zu bytes)", n);
		elen = drain(eout.r, echo, elen, 2 * biglen);
	}
	/* A line of exactly SR_JOBLOG_LINEMAX bytes stays one line. */
	for (off = 0; off < SR_JOBLOG_LINEMAX; off += n) {
		n = SR_JOBLOG_LINEMAX - off < 50000 ? SR_JOBLOG_LINEMAX - off : 50000;
		put(&out, big + off, n);
		sr_joblog_feed(l, SR_JOBLOG_OUT, out.r, eout.w);
		elen = drain(eout.r, echo, elen, 2 * biglen);
	}
	put(&out, "\n", 1);
	put(&out, bin, sizeof bin - 1);
	put(&out, "\n", 1);
	sr_joblog_feed(l, SR_JOBLOG_OUT, out.r, eout.w);
	elen = drain(eout.r, echo, elen, 2 * biglen);
	sr_joblog_close(l);

	want = biglen + 1 + SR_JOBLOG_LINEMAX + 1 + sizeof bin;
	ok(elen == want && memcmp(echo, big, biglen + 1) == 0 &&
	    memcmp(echo + biglen + 1, big, SR_JOBLOG_LINEMAX) == 0 &&
	    memcmp(echo + elen - sizeof bin, bin, sizeof bin - 1) == 0,
	    "echo: every byte of the long lines and the binary line (%zu of %zu)",
	    elen, want);

	/* 200 KiB = 3 lines of 64 KiB and one of 8 KiB, then 64 KiB, then
	 * the binary line; each line "+SSSS.sss out " then the bytes. */
	log = read_log(path, &len);
	p = log;
	ok_lines = 0;
	for (off = 0; off < biglen; off += n) {
		n = biglen - off < SR_JOBLOG_LINEMAX ? biglen - off : SR_JOBLOG_LINEMAX;
		if (p + 14 + n + 1 <= log + len && p[0] == '+' &&
		    memcmp(p + 9, " out ", 5) == 0 &&
		    memcmp(p + 14, big + off, n) == 0 && p[14 + n] == '\n') {
			ok_lines++;
			p += 14 + n + 1;
		}
	}
	is_int(ok_lines, 4, "the 200 KiB line is 4 log lines: 64+64+64+8 KiB");
	ok(p + 14 + SR_JOBLOG_LINEMAX + 1 <= log + len &&
	    memcmp(p + 14, big, SR_JOBLOG_LINEMAX) == 0 &&
	    p[14 + SR_JOBLOG_LINEMAX] == '\n',
	    "a line of exactly 64 KiB is one log line");
	p += 14 + SR_JOBLOG_LINEMAX + 1;
	ok(p + 14 + sizeof bin == log + len && memcmp(p + 9, " out ", 5) == 0 &&
	    memcmp(p + 14, bin, sizeof bin - 1) == 0 && log[len - 1] == '\n',
	    "binary bytes are logged unchanged, and nothing else follows");
	free(log);
	free(big);
	free(echo);
	close(out.r);
	close(out.w);
	close(eout.r);
	close(eout.w);
}

/* A rank's output with a prefix: only whole lines are echoed, each after
 * the prefix, the last partial one with a newline at the end; the log is
 * as without a prefix. */
static void
test_prefix(void)
{
	char path[256], err[SR_ERRMAX], echo[4096], *log, *body;
	struct pipe job, term;
	struct sr_joblog *l;
	size_t elen = 0, llen;
	int bad;

	snprintf(path, sizeof path, "%s/prefix.log", tmp);
	mkpipe(&job, 1);
	mkpipe(&term, 1);
	l = sr_joblog_open(path, sr_mono(), err);
	sr_joblog_set_prefix(l, "[3] ");
	put(&job, "one\ntw", 6);
	ok(sr_joblog_feed(l, SR_JOBLOG_OUT, job.r, term.w) == 1, "prefix: fed");
	elen = drain(term.r, echo, elen, sizeof echo - 1);
	echo[elen] = '\0';
	is_str(echo, "[3] one\n", "prefix: a whole line echoed, the partial one held");
	put(&job, "o\nthree", 7);
	sr_joblog_feed(l, SR_JOBLOG_OUT, job.r, term.w);
	close(job.w);
	ok(sr_joblog_feed(l, SR_JOBLOG_OUT, job.r, term.w) == 0, "prefix: the stream ends");
	close(job.r);
	elen = drain(term.r, echo, elen, sizeof echo - 1);
	echo[elen] = '\0';
	is_str(echo, "[3] one\n[3] two\n[3] three\n",
	    "prefix: each line after the prefix; the last one gets its newline");
	sr_joblog_close(l);
	log = read_log(path, &llen);
	body = strip_stamps(log, llen, "^\\+[0-9]{4}\\.[0-9]{3} ", &bad);
	is_str(body, "out one\nout two\nout three\n", "prefix: the log has no prefix");
	is_int(bad, 0, "prefix: every log line stamped");
	free(body);
	free(log);
	close(term.r);
	close(term.w);
	unlink(path);
}

/* The last line of stderr is kept for a failed rank's message: control
 * characters as '?', a long one cut before a UTF-8 sequence. */
static void
test_last_err(void)
{
	char err[SR_ERRMAX], line[400];
	struct sr_joblog *l = sr_joblog_open(NULL, sr_mono(), err);
	struct pipe job;
	size_t i;

	mkpipe(&job, 1);
	is_str(sr_joblog_last_err(l), "", "last stderr line: none yet");
	put(&job, "Traceback\n\x1b[31mValueError: bad \xc3\xa9\x1b[0m\n\n", 39);
	sr_joblog_feed(l, SR_JOBLOG_ERR, job.r, -1);
	is_str(sr_joblog_last_err(l), "?[31mValueError: bad \xc3\xa9?[0m",
	    "last stderr line: the last whole non-empty one, escapes as '?'");
	for (i = 0; i < sizeof line - 1; i++)
		line[i] = i % 2 == 0 ? '\xc3' : '\xa9';
	line[158] = 'x';	/* byte 159 starts a sequence the cut would split */
	line[sizeof line - 2] = '\n';
	put(&job, line, sizeof line - 1);
	sr_joblog_feed(l, SR_JOBLOG_ERR, job.r, -1);
	is_int(strlen(sr_joblog_last_err(l)), 158, "a long line: cut before a split UTF-8 character");
	close(job.w);
	close(job.r);
	sr_joblog_close(l);
}

static void
test_edges(void)
{
	char path[256], err[SR_ERRMAX], *log, *text;
	struct sr_joblog *l;
	struct pipe out, eout;
	size_t len;
	int bad;

	/* No log file: echo only. */
	mkpipe(&out, 1);
	mkpipe(&eout, 1);
	l = sr_joblog_open(NULL, sr_mono(), err);
	put(&out, "hi\n", 3);
	is_int(sr_joblog_feed(l, SR_JOBLOG_OUT, out.r, eout.w), 1, "echo-only feed");
	is_int(sr_joblog_note(l, "x"), 0, "echo-only note");
	ok(read(eout.r, path, sizeof path) == 3 && memcmp(path, "hi\n", 3) == 0,
	    "echo-only: echoed");
	sr_joblog_close(l);

	/* Unopenable log. */
	l = sr_joblog_open("/nonexistent-t-joblog/x.log", 0, err);
	ok(l == NULL, "open in a missing directory fails");
	is_str(err, "open /nonexistent-t-joblog/x.log: No such file or directory",
	    "... with the path and the reason");

	/* A full disk stops logging, not echoing nor reading. */
	l = sr_joblog_open("/dev/full", sr_mono(), err);
	ok(l != NULL, "open /dev/full");
	if (l != NULL) {
		put(&out, "lost\n", 5);
		is_int(sr_joblog_feed(l, SR_JOBLOG_OUT, out.r, eout.w), 1,
		    "feed to a full disk goes on");
		is_str(sr_joblog_error(l), "write /dev/full: No space left on device",
		    "the log's error");
		ok(read(eout.r, path, sizeof path) == 5, "still echoed");
		is_int(sr_joblog_note(l, "x"), -1, "note to a full disk fails");
		sr_joblog_close(l);
	}

	/* A read error. */
	l = sr_joblog_open(NULL, 0, err);
	errno = 0;
	is_int(sr_joblog_feed(l, SR_JOBLOG_ERR, out.w, -1), -1, "read error: -1");
	is_int(errno, EBADF, "... with errno");
	sr_joblog_close(l);
	close(out.r);
	close(out.w);
	close(eout.r);
	close(eout.w);

	/* A blocking fd: one short read, no hang; an existing log is
	 * appended to; close logs the partial line. */
	mkpipe(&out, 0);
	snprintf(path, sizeof path, "%s/append.log", tmp);
	l = sr_joblog_open(path, sr_mono(), err);
	sr_joblog_note(l, "attempt 1");
	sr_joblog_close(l);
	l = sr_joblog_open(path, sr_mono(), err);
	put(&out, "no newline", 10);
	alarm(10);	/* a hang fails the test */
	is_int(sr_joblog_feed(l, SR_JOBLOG_OUT, out.r, -1), 1,
	    "blocking fd: returns after a short read");
	alarm(60);
	sr_joblog_close(l);
	log = read_log(path, &len);
	text = strip_stamps(log, len, "^\\+0000\\.[0-4][0-9]{2} ", &bad);
	is_str(text, "spotrun attempt 1\nout no newline\n",
	    "appended; the partial line logged at close");
	free(log);
	free(text);
	close(out.r);
	close(out.w);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	alarm(60);	/* a full pipe would block: fail, do not hang */
	if (mkdtemp(tmp) == NULL)
		sr_fatal("mkdtemp");
	test_interleaved();
	test_long_binary();
	test_prefix();
	test_last_err();
	test_edges();
	sr_rmtree(tmp, NULL);
	return tap_done();
}
