/*
 * request.c: see request.h.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "request.h"
#include "util.h"

int
sr_req_post(const char *request_path, char *const *done_paths, size_t n, uint64_t seq,
    const char *reason, double deadline, char *err)
{
	char buf[256];
	int len = snprintf(buf, sizeof buf, "seq=%llu reason=%s deadline=%.3f\n",
	    (unsigned long long)seq, reason, deadline);
	size_t i;

	for (i = 0; i < n; i++)
		if (unlink(done_paths[i]) == -1 && errno != ENOENT)
			return sr_errno(err, "remove %s", done_paths[i]);
	return sr_write_file_atomic(request_path, buf, (size_t)len, err);
}

int
sr_req_done(const char *done_path, long long *step, char *err)
{
	char *buf, *end, *p;
	long long v;

	if (access(done_path, F_OK) == -1) {
		if (errno == ENOENT)
			return 0;
		return sr_errno(err, "check %s", done_path);
	}
	if (sr_read_file(done_path, 4096, &buf, NULL, err) == -1)
		return -1;
	for (p = buf; *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'; p++)
		;
	if (*p == '\0') {
		free(buf);
		*step = -1;
		return 1;
	}
	errno = 0;
	v = strtoll(p, &end, 10);
	while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
		end++;
	if (errno != 0 || *end != '\0' || v < 0) {
		sr_err(err, "read %s: '%.40s' is not a step number; write the step (e.g. 120) or nothing",
		    done_path, p);
		free(buf);
		return -1;
	}
	free(buf);
	*step = v;
	return 1;
}

void
sr_req_clear(const char *request_path, char *const *done_paths, size_t n)
{
	size_t i;

	unlink(request_path);
	for (i = 0; i < n; i++)
		unlink(done_paths[i]);
}
