/*
 * strbuf.c: the growing string of strbuf.h. Capacity doubles from 128
 * bytes, so appending n bytes in any pieces costs O(n) copies.
 */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

int
sr_strbuf_room(struct sr_strbuf *b, size_t n)
{
	size_t cap;
	char *p;

	if (b->failed)
		return -1;
	if (b->p != NULL && n < b->cap - b->len)
		return 0;
	if (n >= SIZE_MAX / 2 - b->len) {
		b->failed = 1;
		sr_err(b->err, "grow a string by %zu bytes: " SR_OOM_TEXT " (the size overflows)",
		    n);
		return -1;
	}
	for (cap = b->cap ? b->cap : 128; n >= cap - b->len; cap *= 2)
		;
	if ((p = sr_try_reallocarray(b->p, cap, 1, b->err)) == NULL) {
		b->failed = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

void
sr_strbuf_add(struct sr_strbuf *b, const void *s, size_t n)
{
	if (sr_strbuf_room(b, n) == -1)
		return;
	if (n > 0)
		memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void
sr_strbuf_str(struct sr_strbuf *b, const char *s)
{
	sr_strbuf_add(b, s, strlen(s));
}

void
sr_strbuf_ch(struct sr_strbuf *b, char c)
{
	sr_strbuf_add(b, &c, 1);
}

void
sr_strbuf_printf(struct sr_strbuf *b, const char *fmt, ...)
{
	va_list ap;
	size_t left;
	int n;

	/* one try in the room there is (most numbers fit in 64 bytes), a
	 * second with the room the first said it needs */
	if (sr_strbuf_room(b, 64) == -1)
		return;
	left = b->cap - b->len;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, left, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->p[b->len] = '\0';
		return;
	}
	if ((size_t)n >= left) {
		if (sr_strbuf_room(b, (size_t)n) == -1) {
			b->p[b->len] = '\0';
			return;
		}
		va_start(ap, fmt);
		vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

char *
sr_strbuf_take(struct sr_strbuf *b)
{
	char *p;

	sr_strbuf_add(b, "", 0);
	if (b->failed) {
		sr_strbuf_free(b);
		return NULL;
	}
	p = b->p;
	b->p = NULL;
	b->len = b->cap = 0;
	return p;
}

void
sr_strbuf_free(struct sr_strbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	b->failed = 0;
}
