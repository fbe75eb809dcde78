/*
 * term.c: see term.h. The line is drawn as "\r" TEXT "\033[K" and erased as
 * "\r\033[K", each with one write(2); TEXT is cut to one column less than
 * the width, since a line that fills the last column leaves some terminals
 * in a pending wrap that the next byte completes. Which output shares the
 * terminal is told by the device (st_rdev) behind the fd.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "term.h"
#include "util.h"

#define TERM_LINEMAX	512
#define TERM_COLS	80	/* when the terminal does not say */

struct sr_term {
	pthread_mutex_t lock;
	int fd;			/* -1: not a terminal, draws nothing */
	dev_t rdev;		/* its device */
	char text[TERM_LINEMAX];	/* the line to show; "" none */
	int shown;		/* it is on the screen */
	int at_bol;		/* the last output to the terminal ended a line */
};

struct sr_term *
sr_term_new(int fd)
{
	struct sr_term *t = sr_calloc(1, sizeof *t);
	struct stat st;

	pthread_mutex_init(&t->lock, NULL);
	t->fd = -1;
	t->at_bol = 1;
	if (fd >= 0 && isatty(fd) && fstat(fd, &st) == 0) {
		t->fd = fd;
		t->rdev = st.st_rdev;
	}
	return t;
}

void
sr_term_free(struct sr_term *t)
{
	if (t == NULL)
		return;
	pthread_mutex_destroy(&t->lock);
	free(t);
}

int
sr_term_draws(const struct sr_term *t)
{
	return t != NULL && t->fd != -1;
}

/* Does output to fd land on this terminal? */
static int
shares(const struct sr_term *t, int fd)
{
	struct stat st;

	return fd == t->fd || (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == t->rdev);
}

static int
columns(const struct sr_term *t)
{
	struct winsize ws;

	if (ioctl(t->fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1)
		return ws.ws_col;
	return TERM_COLS;
}

/* With the lock held. */
static void
draw(struct sr_term *t)
{
	char buf[TERM_LINEMAX + 8];
	size_t n = strlen(t->text), max = (size_t)columns(t) - 1;

	if (n > max)
		n = max;
	buf[0] = '\r';
	memcpy(buf + 1, t->text, n);
	memcpy(buf + 1 + n, "\033[K", 3);
	if (sr_write_all(t->fd, buf, n + 4) >= 0)
		t->shown = 1;
}

static void
erase(struct sr_term *t)
{
	if (t->shown)
		(void)sr_write_all(t->fd, "\r\033[K", 4);
	t->shown = 0;
}

void
sr_term_begin(struct sr_term *t, int fd)
{
	if (!sr_term_draws(t))
		return;
	pthread_mutex_lock(&t->lock);
	if (shares(t, fd))
		erase(t);
}

void
sr_term_end(struct sr_term *t, int fd, const char *p, size_t n)
{
	if (!sr_term_draws(t))
		return;
	if (n > 0 && shares(t, fd)) {
		t->at_bol = p[n - 1] == '\n';
		if (t->at_bol && t->text[0] != '\0')
			draw(t);
	}
	pthread_mutex_unlock(&t->lock);
}

void
sr_term_show(struct sr_term *t, const char *text)
{
	if (!sr_term_draws(t))
		return;
	if (text == NULL) {
		pthread_mutex_lock(&t->lock);
		erase(t);
		t->text[0] = '\0';
	} else {
		if (pthread_mutex_trylock(&t->lock) != 0)
			return;
		strlcpy(t->text, text, sizeof t->text);
		if (t->at_bol)
			draw(t);
	}
	pthread_mutex_unlock(&t->lock);
}

void
sr_term_resize(struct sr_term *t)
{
	if (!sr_term_draws(t))
		return;
	pthread_mutex_lock(&t->lock);
	if (t->shown)
		draw(t);
	pthread_mutex_unlock(&t->lock);
}
