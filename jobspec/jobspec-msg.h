/*
 * jobspec-msg.h: the error messages of the job file parser: recording an
 * error at a line, and showing a user's value safely inside a message.
 * Shared by the reader (jobspec.c) and the value parsers (jobspec-keys.c),
 * which both call down into it and never into each other's helpers, so the
 * files' call graph has no loop. Not for use outside the parser.
 */
#ifndef SR_JOBSPEC_MSG_H
#define SR_JOBSPEC_MSG_H

#include <stdarg.h>
#include <stddef.h>

#include "util.h"

#define SR_JS_SHOW_MAX		48	/* longest value echoed in a message */
#define SR_JS_ERRORS_MAX	100	/* errors recorded; the rest are counted */

struct sr_js_parse;
struct sr_jobspec_errors;

/* Record an error at line (0: none) into errs, the list of a job file's or
 * a pool file's (pool.c) load; past SR_JS_ERRORS_MAX it is only counted in
 * *dropped. sr_js_error is this for the job file's parse. */
void sr_js_verror(struct sr_jobspec_errors *errs, size_t *dropped, int line, const char *fmt,
    va_list ap);

/* The message for a key that section does not have, into msg (size
 * bytes): "unknown key 'NAME' in [SECTION]; did you mean 'KEY'? Valid
 * keys: A, B" when one of the n keys is close to name (without case),
 * else "unknown key 'NAME' in [SECTION]; valid keys: A, B". Shared by the
 * job file and the pool file so that both languages answer alike. */
void sr_js_unknown_key_msg(char *msg, size_t size, const char *name, const char *section,
    const char *const *keys, size_t n);

/* Record an error at line (0: none) of the file being loaded; past
 * SR_JS_ERRORS_MAX it is only counted (p->nerrs_dropped). */
void sr_js_error(struct sr_js_parse *p, int line, const char *fmt, ...) SR_PRINTF(3, 4);

/* A value made safe and short for a message in buf: control characters
 * (tab too) and bytes that are not UTF-8 become '?', and a value of more
 * than SR_JS_SHOW_MAX bytes is cut, between characters, with "...".
 * Returns buf. */
const char *sr_js_show(const char *s, char buf[SR_JS_SHOW_MAX + 4]);
/* The same for the n bytes at s, not NUL-terminated. */
const char *sr_js_show_span(const char *s, size_t n, char buf[SR_JS_SHOW_MAX + 4]);

#endif
