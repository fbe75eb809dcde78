/*
 * json.h: jansson's parser, with its out-of-memory told apart from bad
 * input. jansson (2.14) words most of its own allocation failures as
 * syntax errors ("invalid token") and ignores some, handing back a string
 * or number short of the character it could not store: a manifest or a
 * key read that way is wrong, not corrupt. What tells them is malloc's
 * ENOMEM during the parse.
 */
#ifndef SR_JSON_H
#define SR_JSON_H

#include <stddef.h>

#include <jansson.h>

/* json_loadb(buf, len, flags, je) (je may be NULL), and *oom: 1 when an
 * allocation failed during the parse, and then NULL (whatever jansson
 * built is freed); else 0 and jansson's answer (NULL with je filled for
 * bad JSON). The caller says "out of memory" (sr_err_oom) for *oom. */
json_t *sr_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *je, int *oom);

#endif
