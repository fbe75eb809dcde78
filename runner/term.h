/*
 * term.h: the terminal spotrun shares with the job. While a long checkpoint
 * or restore runs, its progress line (progress.c) sits on the terminal's
 * last line; whatever else goes to the same terminal (the job's output,
 * which spotrun relays, and the timeline) first erases it and draws it
 * again after, so no line of the job's is glued onto it and none stays in
 * the scrollback. The line is cut to the terminal's width (TIOCGWINSZ at
 * each draw; sr_term_resize on SIGWINCH draws it again at once), so it never
 * wraps. It is drawn only where a line starts: after output that ended
 * mid-line (a prompt, a job's own \r progress) it waits for the newline.
 * Calls from several threads (the save's progress, the loop's output) are
 * serialised. NULL is a terminal that draws nothing, as is any fd that is
 * not a terminal: nothing is ever written into a pipe or a file.
 */
#ifndef SR_TERM_H
#define SR_TERM_H

#include <stddef.h>

struct sr_term;

/* The terminal on fd (stderr), where the line is drawn. */
struct sr_term *sr_term_new(int fd);
void sr_term_free(struct sr_term *t);
/* 1 when fd is a terminal, where a line can be drawn. */
int sr_term_draws(const struct sr_term *t);

/* Around a write of output to fd (n bytes at p): begin erases the line
 * when fd shows on the same terminal and holds the terminal; end, after the
 * write, draws the line again if the output ended a line, and lets go. */
void sr_term_begin(struct sr_term *t, int fd);
void sr_term_end(struct sr_term *t, int fd, const char *p, size_t n);

/* Show text as the line (drawn now where a line starts, fitted to the
 * width); NULL erases it. A new text is dropped rather than waited for
 * while output holds the terminal (the next one comes a quarter second
 * later); the erase waits. */
void sr_term_show(struct sr_term *t, const char *text);
/* The terminal's size changed: draw the line again at its new width. */
void sr_term_resize(struct sr_term *t);

#endif
