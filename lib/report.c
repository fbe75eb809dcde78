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
 *
 * spotrun_report, the job's metrics: a line of common/metricline.h's form
 * to $SPOTRUN_METRICS in the same way (runner/metrics.c ships rank 0's).
 */
#include "config.h"

#include <fcntl.h>
#include <math.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib.h"
#include "metricline.h"

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

spotrun_error
spotrun_report(spotrun_ctx *ctx, long long step, int n, const char *const *names,
    const double *values)
{
	struct sr_metrics_line l;
	char line[SR_METRICS_LINE_MAX + SR_METRICS_PER_LINE * 24];
	const char *path = getenv("SPOTRUN_METRICS");
	size_t len;
	int i, fd;

	if (ctx == NULL)
		return SPOTRUN_ERROR_PARAMETER;
	ctx->msg[0] = '\0';
	if (step < 0 || step > SR_METRICS_STEP_MAX)
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "report metrics: step %lld is not "
		    "from 0 to %lld", step, SR_METRICS_STEP_MAX);
	if (n < 1 || n > SR_METRICS_PER_LINE || names == NULL || values == NULL)
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "report metrics: 1 to %d names "
		    "and values, not %d", SR_METRICS_PER_LINE, n);
	l.step = step;
	l.n = 0;
	for (i = 0; i < n; i++) {
		int j;

		if (names[i] == NULL || !sr_metrics_name_ok(names[i]) ||
		    strcmp(names[i], "step") == 0)
			return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "report metrics: name %d "
			    "is no metric name (a letter or _, then letters, digits and _.-/; at "
			    "most %d bytes)", i, SR_METRICS_NAME_MAX);
		for (j = 0; j < i; j++)
			if (strcmp(names[j], names[i]) == 0)
				return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "report metrics: "
				    "%s twice", names[i]);
		if (!isfinite(values[i]))
			return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "report metrics: %s is "
			    "not a finite number", names[i]);
		strlcpy(l.m[i].name, names[i], sizeof l.m[i].name);
		l.m[i].value = values[i];
		l.n++;
	}
	if ((len = sr_metrics_format(&l, line, sizeof line)) == 0 || len > SR_METRICS_LINE_MAX)
		return sr_lib_fail(ctx, SPOTRUN_ERROR_PARAMETER, "report metrics: the line would "
		    "be longer than %d bytes", SR_METRICS_LINE_MAX);
	if (path == NULL || *path == '\0')
		return SPOTRUN_OK;
	if ((fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) == -1) {
		sr_lib_tell(ctx, SPOTRUN_MSG_WARNING, "report metrics: cannot open SPOTRUN_METRICS");
		return SPOTRUN_OK;
	}
	if (write(fd, line, len) != (ssize_t)len)
		sr_lib_tell(ctx, SPOTRUN_MSG_WARNING, "report metrics: cannot write SPOTRUN_METRICS");
	close(fd);
	return SPOTRUN_OK;
}
