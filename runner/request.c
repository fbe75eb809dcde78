/*
 * request.c: see request.h.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
	return sr_write_file_atomic(request_path, buf, (size_t)len, 0, err);
}

/* Whether c separates the words of a done marker. */
static int
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The whitespace at p skipped. */
static char *
skip_space(char *p)
{
	while (is_space(*p))
		p++;
	return p;
}

/* A whole number >= 0 at *p, *p moved past it; -1 when there is none. */
static long long
read_number(char **p)
{
	char *end;
	long long v;

	if (**p < '0' || **p > '9')
		return -1;
	errno = 0;
	v = strtoll(*p, &end, 10);
	if (errno != 0)
		return -1;
	*p = end;
	return v;
}

/* Whether p starts with the word w (followed by a space or the end). */
static int
is_word(const char *p, const char *w)
{
	size_t n = strlen(w);

	return strncmp(p, w, n) == 0 && (p[n] == '\0' || is_space(p[n]));
}

int
sr_req_done(const char *done_path, long long *step, long long *seq, int *last, char *err)
{
	char *buf, *p, *start;
	size_t len;
	int bad = 0;

	*last = 0;
	if (access(done_path, F_OK) == -1) {
		if (errno == ENOENT)
			return 0;
		return sr_errno(err, "check %s", done_path);
	}
	if (sr_read_file(done_path, 4096, &buf, NULL, err) == -1)
		return -1;
	start = p = skip_space(buf);
	*step = *seq = -1;
	if (*p != '\0' && strncmp(p, "seq=", 4) != 0 && !is_word(p, "last")) {
		*step = read_number(&p);
		bad = *step < 0 || (*p != '\0' && p == skip_space(p));
		p = skip_space(p);
	}
	if (!bad && strncmp(p, "seq=", 4) == 0) {
		p += 4;
		*seq = read_number(&p);
		bad = *seq < 0 || (*p != '\0' && p == skip_space(p));
		p = skip_space(p);
	}
	if (!bad && is_word(p, "last")) {
		*last = 1;
		p = skip_space(p + 4);
	}
	if (bad || *p != '\0') {
		len = strlen(start);
		while (len > 0 && is_space(start[len - 1]))
			len--;
		sr_err(err, "read %s: '%.*s' is not a step, the request's seq and 'last'; write "
		    "them (e.g. 120 seq=3, or 120 seq=3 last for the job's last checkpoint), the "
		    "step alone, or nothing", done_path, len < 40 ? (int)len : 40, start);
		*last = 0;
		free(buf);
		return -1;
	}
	free(buf);
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

int
sr_req_look(const char *look_path)
{
	struct stat sb;

	if (stat(look_path, &sb) == -1)
		return -1;
	return sb.st_size == 0;
}
