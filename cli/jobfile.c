/*
 * jobfile.c: see jobfile.h. The script test runs only after the job file
 * failed to load, so a valid job file is never misjudged, whatever its
 * name or first line.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jobfile.h"
#include "method.h"
#include "util.h"

#define HEAD_MAX 65536

/* How much of the file we read: enough for its first significant line. */
static ssize_t
read_head(const char *path, char *buf, size_t len)
{
	struct stat sb;
	ssize_t n, got = 0;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd == -1)
		return -1;
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -1;
	}
	while ((size_t)got < len && ((n = read(fd, buf + got, len - (size_t)got)) > 0 ||
	    (n == -1 && errno == EINTR)))
		got += n > 0 ? n : 0;
	close(fd);
	return got;
}

/* The interpreter a script's extension calls for, or NULL. */
static const char *
by_extension(const char *path)
{
	static const char *const ext[][2] = {
		{ ".py", "python3" }, { ".sh", "sh" }, { ".bash", "bash" }, { ".zsh", "zsh" },
		{ ".pl", "perl" }, { ".rb", "ruby" }, { ".js", "node" }, { ".lua", "lua" },
		{ ".jl", "julia" }, { ".R", "Rscript" },
	};
	const char *base = strrchr(path, '/'), *dot;
	size_t i;

	base = base != NULL ? base + 1 : path;
	if ((dot = strrchr(base, '.')) == NULL || dot == base)
		return NULL;
	for (i = 0; i < SR_ARRAY_LEN(ext); i++) {
		if (strcmp(dot, ext[i][0]) == 0)
			return ext[i][1];
	}
	return NULL;
}

/* Whether the first line that is not blank or a comment opens a section. */
static int
starts_with_section(const char *buf, size_t len)
{
	size_t i = 0;

	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		i = 3;	/* a UTF-8 byte-order mark */
	while (i < len) {
		while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r'))
			i++;
		if (i < len && buf[i] != '\n' && buf[i] != ';' && buf[i] != '#')
			return buf[i] == '[';
		while (i < len && buf[i] != '\n')
			i++;
		i++;
	}
	return 0;
}

/* One word of a "#!" line at *p (advanced past it) into w (wlen bytes). */
static int
shebang_word(const char **p, const char *end, char *w, size_t wlen)
{
	size_t n = 0;

	while (*p < end && (**p == ' ' || **p == '\t'))
		(*p)++;
	while (*p < end && **p != ' ' && **p != '\t' && **p != '\n' && **p != '\r') {
		if (n + 1 < wlen)
			w[n++] = **p;
		(*p)++;
	}
	w[n] = '\0';
	return n > 0;
}

static int
plain_word(const char *s)
{
	return *s != '\0' && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789._+-") == strlen(s);
}

/* The interpreter named by a "#!" line (env's argument for env), or "". */
static void
from_shebang(const char *buf, size_t len, char *interp, size_t ilen)
{
	const char *p = buf + 2, *end = memchr(buf, '\n', len), *base;
	char w[256];

	interp[0] = '\0';
	end = end != NULL ? end : buf + len;
	if (!shebang_word(&p, end, w, sizeof w))
		return;
	base = strrchr(w, '/') != NULL ? strrchr(w, '/') + 1 : w;
	if (strcmp(base, "env") == 0) {
		/* env's options (-S, -i) and NAME=VALUE come before the program */
		while (shebang_word(&p, end, w, sizeof w) && (w[0] == '-' || strchr(w, '=')))
			;
		base = w;
	}
	if (plain_word(base))
		strlcpy(interp, base, ilen);
}

/* path as one word of a job file's command: quoted unless plain. */
static void
quote_path(const char *path, char *out, size_t len)
{
	size_t n = 0;
	const char *p;

	if (strspn(path, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	    "._+-/:@%,=") == strlen(path)) {
		strlcpy(out, path, len);
		return;
	}
	/* '...' with each ' written as '\'' as in sh */
	out[n++] = '\'';
	for (p = path; *p != '\0' && n + 6 < len; p++) {
		if (*p == '\'') {
			memcpy(out + n, "'\\''", 4);
			n += 4;
		} else {
			out[n++] = *p;
		}
	}
	out[n++] = '\'';
	out[n] = '\0';
}

int
sr_jobfile_not_job(const char *path, char *cmd, size_t len, const char **what)
{
	char *buf = sr_malloc(HEAD_MAX), interp[256], word[1024];
	const char *ext = by_extension(path);
	ssize_t n = read_head(path, buf, HEAD_MAX);
	int elf, shebang;

	elf = n >= 4 && memcmp(buf, "\x7f" "ELF", 4) == 0;
	shebang = n >= 2 && buf[0] == '#' && buf[1] == '!';
	if (n < 0 || (!elf && ((!shebang && ext == NULL) ||
	    starts_with_section(buf, (size_t)n)))) {
		free(buf);
		return 0;
	}
	interp[0] = '\0';
	if (shebang)
		from_shebang(buf, (size_t)n, interp, sizeof interp);
	if (!elf && interp[0] == '\0' && ext != NULL)
		strlcpy(interp, ext, sizeof interp);
	quote_path(path, word, sizeof word);
	if (interp[0] != '\0')
		snprintf(cmd, len, "%s %s", interp, word);
	else
		snprintf(cmd, len, "%s%s", strchr(path, '/') != NULL ? "" : "./", word);
	*what = elf ? "a program" : "a script";
	free(buf);
	return 1;
}

enum sr_jobfile_result
sr_jobfile_load(const char *path, struct sr_jobspec **js)
{
	struct sr_jobspec_errors errs = { NULL, 0 };
	struct sr_jobspec_names names;
	const char *what;
	char cmd[1400];

	sr_method_names(&names);
	if (sr_jobspec_load(path, &names, js, &errs) == 0)
		return SR_JOBFILE_OK;
	if (sr_jobfile_not_job(path, cmd, sizeof cmd, &what)) {
		sr_jobspec_errors_free(&errs);
		fprintf(stderr, "spotrun: %s is %s, not a job file; write a job file with command ="
		    " %s (see spotrun-job(5), examples/quickstart.ini)\n", path, what, cmd);
		return SR_JOBFILE_NOT_JOB;
	}
	sr_jobspec_errors_print(path, &errs, stderr);
	sr_jobspec_errors_free(&errs);
	return SR_JOBFILE_INVALID;
}
