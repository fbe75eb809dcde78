/*
 * joblog.h: the job's output, as it arrives, to the terminal (unchanged
 * bytes, or whole lines after a rank's prefix) and to a per-attempt log file with a timestamp on every line,
 * together with spotrun's own events. A log line reads
 *
 *	+0012.345 out <the job's line>
 *	+0012.350 err <a line of the job's stderr>
 *	+0013.000 spotrun <an event of spotrun's>
 *
 * where the number is seconds since t0 (when the line was complete), then
 * the bytes of the line as the job wrote them (binary included), without
 * its newline. A line longer than SR_JOBLOG_LINEMAX bytes is split into
 * several log lines of at most that many bytes, so memory stays bounded.
 * A last line without newline is logged when its stream ends or the log is
 * closed.
 */
#ifndef SR_JOBLOG_H
#define SR_JOBLOG_H

#include "util.h"

struct sr_term;

#define SR_JOBLOG_LINEMAX	65536
#define SR_JOBLOG_LASTMAX	160	/* bytes kept of the last line of stderr */

#define SR_JOBLOG_OUT	1
#define SR_JOBLOG_ERR	2

struct sr_joblog;

/* Open (create, or append to) the log at path; t0 is an sr_mono() reading,
 * the zero of the timestamps. path NULL: no file, echo only. NULL with err
 * set when the file cannot be opened. */
struct sr_joblog *sr_joblog_open(const char *path, double t0, char *err);

/* Read what is available on fd (the job's stream SR_JOBLOG_OUT or
 * SR_JOBLOG_ERR), echo it unchanged to echo_fd (-1: no echo) and log its
 * complete lines. Reads at most 1 MiB per call, and stops after a short
 * read, so a blocking fd works too and a chatty job cannot starve the
 * caller's loop. Returns 1 while the stream is open, 0 at its end (its
 * partial line is then logged; the caller closes fd), -1 with errno set when
 * read failed. Failures to echo or to write the log do not fail the call:
 * the job must not block on a full pipe because a terminal went away or the
 * disk filled. Echo stops on the first failure; logging stops on the first
 * failure and sr_joblog_error says why. */
int sr_joblog_feed(struct sr_joblog *l, int stream, int fd, int echo_fd);

/* Log one of spotrun's events (printf format); each line of the message
 * becomes a log line tagged "spotrun". 0, or -1 when the log is not
 * writable (see sr_joblog_error). */
int sr_joblog_note(struct sr_joblog *l, const char *fmt, ...) SR_PRINTF(2, 3);

/* Give every log line to fn as well, from now on: the lines one read or
 * note produces come in one call (buf, len: whole lines, each ending with
 * its newline), in the same order as in the file, also when the file is
 * not written (path NULL, or after a failure). fn NULL: no sink. */
void sr_joblog_set_sink(struct sr_joblog *l, void (*fn)(void *arg, const char *buf, size_t len),
    void *arg);

/* Echo through term (term.h): a progress line it shows is erased before
 * the job's bytes and drawn again after them. NULL (the default): none. */
void sr_joblog_set_term(struct sr_joblog *l, struct sr_term *term);

/* Echo with prefix before each line (one rank of several: "[2] "): then
 * only whole lines are echoed, each with the prefix and its newline, all
 * those of one read in one write, so that the lines of ranks echoed to one
 * terminal never mix; a last line without newline goes out with one when
 * its stream ends. A line over SR_JOBLOG_LINEMAX bytes goes out in pieces,
 * as it is logged. NULL (the default): the bytes go out unchanged, as
 * they come. */
void sr_joblog_set_prefix(struct sr_joblog *l, const char *prefix);

/* The last non-empty line of the job's stderr seen so far, its first
 * SR_JOBLOG_LASTMAX - 1 bytes ("": none), for the message of a rank that
 * failed: what a Python job's traceback ends with. */
const char *sr_joblog_last_err(const struct sr_joblog *l);

/* The first failure to write the log ("write PATH: reason"), or NULL. */
const char *sr_joblog_error(const struct sr_joblog *l);

/* Log the partial lines left, close the file and free l (NULL is fine). */
void sr_joblog_close(struct sr_joblog *l);

#endif
