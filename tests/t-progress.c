/*
 * t-progress.c: the progress line of a checkpoint transfer
 * (runner/progress.c): its exact text, that it is drawn on a terminal (a
 * pseudo-terminal here) and erased at the end, and that nothing at all is
 * written to a pipe or before the first second.
 */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "progress.h"
#include "tap.h"
#include "util.h"

#define MiB (1024ULL * 1024)

/* What is waiting on fd (non-blocking), as a string. */
static char *
drain(int fd)
{
	static char buf[4096];
	ssize_t n = read(fd, buf, sizeof buf - 1);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

int
main(void)
{
	struct sr_progress p;
	char line[256], *want;
	int master, slave, pfd[2];

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
	sr_progress_start(&p, slave, "checkpoint");
	ok(p.fd == slave, "a terminal gets the line");
	sr_progress_update(&p, 10, 100);
	usleep(50000);
	is_str(drain(master), "", "nothing in the first second");
	p.delay = 0;
	p.t0 -= 2;
	sr_progress_update(&p, 50 * MiB, 100 * MiB);
	usleep(50000);
	want = drain(master);
	ok(strncmp(want, "\rcheckpoint: 50.0 MiB of 100.0 MiB (50%), ", 42) == 0 &&
	    strcmp(want + strlen(want) - 3, "\033[K") == 0, "drawn in place: %s", want + 1);
	sr_progress_update(&p, 100 * MiB, 100 * MiB);
	usleep(50000);
	is_str(drain(master), "\r\033[K", "the end erases the line");
	sr_progress_end(&p);
	usleep(50000);
	is_str(drain(master), "", "nothing more to erase");

	if (pipe(pfd) == -1)
		sr_fatal("pipe");
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	sr_progress_start(&p, pfd[1], "checkpoint");
	is_int(p.fd, -1, "a pipe gets no line");
	p.delay = 0;
	p.t0 -= 2;
	sr_progress_update(&p, 50, 100);
	sr_progress_end(&p);
	is_str(drain(pfd[0]), "", "nothing written to the pipe");
	return tap_done();
}
