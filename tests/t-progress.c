/*
 * t-progress.c: the progress line of a checkpoint transfer
 * (runner/progress.c) on the terminal it shares with the job's output and
 * the timeline (runner/term.c), byte for byte on a pseudo-terminal: its
 * text, cut to the terminal's width (and again after a resize), erased
 * before a line of the job's output or of the timeline and drawn again
 * after it, held back while the job's output ends mid-line, erased at the
 * end; nothing at all written to a pipe or before the first second.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "joblog.h"
#include "progress.h"
#include "tap.h"
#include "term.h"
#include "timeline.h"
#include "util.h"

#define MiB (1024ULL * 1024)

/* What is waiting on fd (non-blocking), as a string. */
static char *
drain(int fd)
{
	static char buf[4096];
	ssize_t n;

	usleep(50000);
	n = read(fd, buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void
set_cols(int fd, int cols)
{
	struct winsize ws = { .ws_row = 24, .ws_col = (unsigned short)cols };

	ioctl(fd, TIOCSWINSZ, &ws);
}

/* The job writes s; spotrun relays it to echo_fd through the log. */
static void
job_says(struct sr_joblog *l, int jobpipe[2], int echo_fd, const char *s)
{
	(void)!write(jobpipe[1], s, strlen(s));
	sr_joblog_feed(l, SR_JOBLOG_OUT, jobpipe[0], echo_fd);
}

int
main(void)
{
	const char *line40 = "\rcheckpoint: 50.0 MiB of 100.0 MiB (50%)\033[K";
	const char *line20 = "\rcheckpoint: 50.0 Mi\033[K";
	struct sr_progress p;
	struct sr_term *term, *piped;
	struct sr_joblog *l;
	struct sr_timeline tl;
	char line[256], want[512], err[SR_ERRMAX];
	int master, slave, pfd[2], job[2];
	FILE *fp;

	sr_progress_format(line, sizeof line, "checkpoint", 512 * MiB, 1024 * MiB, 2.0);
	is_str(line, "checkpoint: 512.0 MiB of 1.0 GiB (50%), 256.0 MiB/s, 2.0s left", "format: half way");
	sr_progress_format(line, sizeof line, "restore", 0, 3 * MiB, 0);
	is_str(line, "restore: 0 B of 3.0 MiB (0%), 0 B/s, 0ms left", "format: at the start");
	sr_progress_format(line, sizeof line, "restore", 3 * MiB, 3 * MiB, 1.5);
	is_str(line, "restore: 3.0 MiB of 3.0 MiB (100%), 2.0 MiB/s, 0ms left", "format: the end");

	master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master == -1 || grantpt(master) == -1 || unlockpt(master) == -1 ||
	    (slave = open(ptsname(master), O_RDWR | O_NOCTTY)) == -1) {
		ok(0, "open a pseudo-terminal");
		return tap_done();
	}
	fcntl(master, F_SETFL, O_NONBLOCK);
	{
		/* raw: no \n -> \r\n translation in what we read back */
		struct termios t;

		tcgetattr(slave, &t);
		cfmakeraw(&t);
		tcsetattr(slave, TCSANOW, &t);
	}
	set_cols(slave, 40);
	if (pipe(job) == -1 || pipe(pfd) == -1)
		sr_fatal("pipe");
	fcntl(job[0], F_SETFL, O_NONBLOCK);
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);

	term = sr_term_new(slave);
	ok(sr_term_draws(term), "a terminal can show the line");
	sr_progress_start(&p, term, "checkpoint");
	ok(p.term == term, "the transfer draws on it");
	sr_progress_update(&p, 10, 100);
	is_str(drain(master), "", "nothing in the first second");
	p.delay = 0;
	p.t0 -= 2;
	sr_progress_update(&p, 50 * MiB, 100 * MiB);
	is_str(drain(master), line40, "drawn in place, cut to 39 of the 40 columns");

	l = sr_joblog_open(NULL, sr_mono(), err);
	sr_joblog_set_term(l, term);
	job_says(l, job, slave, "working 30\n");
	snprintf(want, sizeof want, "\r\033[Kworking 30\n%s", line40);
	is_str(drain(master), want, "the job's line: the line erased before it, drawn again after");
	job_says(l, job, slave, "abc");
	is_str(drain(master), "\r\033[Kabc", "output that ends mid-line: erased, not drawn again");
	sr_progress_update(&p, 50 * MiB, 100 * MiB);
	is_str(drain(master), "", "... nor by the next update, which would glue onto it");
	job_says(l, job, slave, "def\n");
	snprintf(want, sizeof want, "def\n%s", line40);
	is_str(drain(master), want, "once the line ends, the progress line is back");
	job_says(l, job, pfd[1], "to a file\n");
	is_str(drain(master), "", "output to another file leaves the terminal alone");
	is_str(drain(pfd[0]), "to a file\n", "... and gets the bytes unchanged");

	set_cols(slave, 20);
	sr_term_resize(term);
	is_str(drain(master), line20, "a resize draws it again at the new width (19 columns)");

	fp = fdopen(dup(slave), "w");
	setvbuf(fp, NULL, _IONBF, 0);
	sr_tl_init(&tl, fp, 0);
	sr_tl_set_term(&tl, term);
	sr_tl(&tl, 1, "ckpt", "one line");
	snprintf(want, sizeof want, "\r\033[K00:00  ckpt     one line\n%s", line20);
	is_str(drain(master), want, "a timeline line: the same");

	sr_progress_update(&p, 100 * MiB, 100 * MiB);
	is_str(drain(master), "\r\033[K", "the end erases the line");
	sr_progress_end(&p);
	is_str(drain(master), "", "nothing more to erase");
	job_says(l, job, slave, "after\n");
	is_str(drain(master), "after\n", "after the end the job's output goes out as it is");
	sr_tl_destroy(&tl);
	fclose(fp);
	sr_joblog_close(l);

	piped = sr_term_new(pfd[1]);
	ok(!sr_term_draws(piped), "a pipe is no terminal");
	sr_progress_start(&p, piped, "checkpoint");
	ok(p.term == NULL, "a pipe gets no line");
	p.delay = 0;
	p.t0 -= 2;
	sr_progress_update(&p, 50, 100);
	sr_progress_end(&p);
	is_str(drain(pfd[0]), "", "nothing written to the pipe");
	sr_term_free(piped);
	sr_term_free(term);
	return tap_done();
}
