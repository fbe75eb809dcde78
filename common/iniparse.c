/*
 * iniparse.c: inih's process-wide settings and its parse under one lock,
 * and the readers' line splitting; see iniparse.h.
 */
#include "config.h"

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "iniparse.h"
#include "util.h"

/*
 * The one piece of global mutable state here, and on purpose: it guards
 * state that is already global, inih's settings variables. Without it a
 * job file parsed on one thread while another reads credentials could see
 * its settings changed under it.
 */
static pthread_mutex_t ini_lock = PTHREAD_MUTEX_INITIALIZER;

int
sr_ini_parse_stream(ini_reader reader, void *stream, ini_handler handler,
    void *user, int line_max, const char *comments)
{
	int r;

	if (line_max < 1 || line_max > INT_MAX - 2)
		return -3;	/* a caller's bug: no abort in the job-side library */
	pthread_mutex_lock(&ini_lock);
	ini_use_stack = false;
	ini_initial_alloc = line_max + 2;
	ini_max_line = line_max + 2;
	ini_allow_realloc = false;
	ini_allow_multiline = false;
	ini_stop_on_first_error = false;
	/* inih only reads the prefixes: its variable is not const-qualified */
	ini_allow_inline_comments = comments != NULL && comments[0] != '\0';
	ini_inline_comment_prefixes = (char *)(comments != NULL ? comments : "");
	r = ini_parse_stream(reader, stream, handler, user);
	pthread_mutex_unlock(&ini_lock);
	return r;
}

int
sr_ini_next_line(const char *buf, size_t len, size_t *off, int *line,
    const char **a, const char **e)
{
	const char *nl;

	if (*off >= len)
		return 0;
	*a = buf + *off;
	nl = memchr(*a, '\n', len - *off);
	*e = nl != NULL ? nl : buf + len;
	*off = (size_t)(*e - buf) + (nl != NULL);
	++*line;
	if (*line == 1 && *e - *a >= 3 && memcmp(*a, "\xEF\xBB\xBF", 3) == 0)
		*a += 3;	/* a UTF-8 byte order mark */
	return 1;
}
