/*
 * msg.c: what every entry point of libspotrun needs (lib.h): memory through
 * the caller's allocator hooks, and messages through its callback, kept in
 * the context for spotrun_getErrorString. It calls nothing else of lib/.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib.h"
#include "util.h"

/* ---- memory, through the hooks ---- */

void *
sr_lib_alloc(const spotrun_params *p, size_t n)
{
	return p->alloc != NULL ? p->alloc(p->alloc_opaque, n) : malloc(n);
}

void
sr_lib_free(const spotrun_params *p, void *ptr)
{
	if (ptr == NULL)
		return;
	if (p->free != NULL)
		p->free(p->alloc_opaque, ptr);
	else
		free(ptr);
}

char *
sr_lib_strdup(const spotrun_params *p, const char *s)
{
	size_t n = strlen(s) + 1;
	char *c = sr_lib_alloc(p, n);

	if (c != NULL)
		memcpy(c, s, n);
	return c;
}

/* ---- messages ---- */

void
sr_lib_tell(const spotrun_ctx *ctx, spotrun_msg_level level, const char *text)
{
	if (ctx->p.message != NULL)
		ctx->p.message(ctx->p.message_opaque, level, text);
}

/* Fail the call with code and its message (said as an error). */
spotrun_error
sr_lib_fail(spotrun_ctx *ctx, spotrun_error code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->msg, sizeof ctx->msg, fmt, ap);
	va_end(ap);
	sr_lib_tell(ctx, SPOTRUN_MSG_ERROR, ctx->msg);
	return code;
}

spotrun_error
sr_lib_oom_or(spotrun_error code, const char *err)
{
	return sr_err_is_oom(err) ? SPOTRUN_ERROR_MEMORY : code;
}

/* Start a call: the context's own failure, or a clean slate. */
spotrun_error
sr_lib_begin(spotrun_ctx *ctx)
{
	if (ctx->sticky != SPOTRUN_OK) {
		strlcpy(ctx->msg, ctx->sticky_msg, sizeof ctx->msg);
		sr_lib_tell(ctx, SPOTRUN_MSG_ERROR, ctx->msg);
		return ctx->sticky;
	}
	ctx->msg[0] = '\0';
	return SPOTRUN_OK;
}
