/*
 * report.c: what the supervisor hears of the saves it did not ask for.
 * Under library mode the done marker answers a request (async.c); the
 * saves the job makes on its own, and every save that fails, asked for or
 * not, are a line each appended to SPOTRUN_CKPT_SAVES (rank 0's), which
 * the supervisor watches (runner/method-lib.c). So its timeline, its count
 * of checkpoints and the attempt's end show every commit of the job, and a
 * failure is seen when it happens, not when the request's deadline passes.
 *
 *	commit step=S checkpoint=C raw=R stored=T new=W reused=U seconds=X blocked=B
 *	failed seq=N step=S error=MESSAGE	(seq 0: no request asked for it)
 *
 * One write(2) per line to a file opened O_APPEND: the lines of several
 * saves never interleave, and the reader takes whole lines only.
 */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib.h"

/* Bytes of a line at most (the message is cut to fit). */
#define REPORT_LINE 1024

void
sr_lib_report_save(const spotrun_ctx *ctx, unsigned long long seq, long long step,
    const struct sr_ckpt_stats *cs, double blocked, const char *failure)
{
	char line[REPORT_LINE];
	size_t i, n;
	int fd, len;

	if (ctx->saves_path == NULL)
		return;
	if (failure == NULL)
		len = snprintf(line, sizeof line, "commit step=%lld checkpoint=%" PRIu64 " raw=%"
		    PRIu64 " stored=%" PRIu64 " new=%" PRIu64 " reused=%" PRIu64 " seconds=%.3f "
		    "blocked=%.3f\n", step, cs->seq, cs->raw_bytes, cs->stored_bytes,
		    cs->new_bytes, cs->reused_chunks, cs->seconds, blocked);
	else
		len = snprintf(line, sizeof line, "failed seq=%llu step=%lld error=%s\n", seq, step,
		    failure);
	if (len < 0)
		return;
	n = (size_t)len < sizeof line ? (size_t)len : sizeof line - 1;
	/* one line: a message's own newlines become spaces, a cut one ends */
	for (i = 0; i + 1 < n; i++) {
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	}
	line[n - 1] = '\n';
	if ((fd = open(ctx->saves_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) == -1) {
		sr_lib_tell(ctx, SPOTRUN_MSG_WARNING, "report a save to spotrun: cannot open "
		    "SPOTRUN_CKPT_SAVES");
		return;
	}
	if (write(fd, line, n) != (ssize_t)n)
		sr_lib_tell(ctx, SPOTRUN_MSG_WARNING, "report a save to spotrun: cannot write "
		    "SPOTRUN_CKPT_SAVES");
	close(fd);
}
