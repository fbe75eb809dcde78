/*
 * strbuf.h: a growing NUL-terminated string for code that builds text
 * piece by piece (a request to sign, a manifest, a job's expanded name).
 * An allocation that fails marks the buffer failed, with the reason in the
 * caller's error buffer when it gave one, and every later add does
 * nothing: a builder checks once, at its end, instead of after each piece.
 * Never fatal: the job-side library builds with it too.
 */
#ifndef SR_STRBUF_H
#define SR_STRBUF_H

#include <stddef.h>

#include "util.h"

struct sr_strbuf {
	char *p;		/* the text, NUL-terminated once anything was added */
	size_t len, cap;
	int failed;		/* an allocation failed: the text is incomplete */
	char *err;		/* NULL, or where that failure is told (SR_ERRMAX) */
};

/* An empty buffer telling a failure into err (which may be NULL). */
#define SR_STRBUF_INIT(errbuf) { NULL, 0, 0, 0, (errbuf) }

/* Room for n more bytes and the NUL at p + len: 0, or -1 (failed). */
int sr_strbuf_room(struct sr_strbuf *b, size_t n);
/* Append n bytes of s (which may hold NULs) / a C string / one byte. */
void sr_strbuf_add(struct sr_strbuf *b, const void *s, size_t n);
void sr_strbuf_str(struct sr_strbuf *b, const char *s);
void sr_strbuf_ch(struct sr_strbuf *b, char c);
/* Append printf's output, of any length. */
void sr_strbuf_printf(struct sr_strbuf *b, const char *fmt, ...) SR_PRINTF(2, 3);
/* The text (allocated even when nothing was added; the caller frees it)
 * and the buffer emptied; NULL when an add failed (the text is freed). */
char *sr_strbuf_take(struct sr_strbuf *b);
/* Free the text; the buffer is empty again. */
void sr_strbuf_free(struct sr_strbuf *b);

#endif
