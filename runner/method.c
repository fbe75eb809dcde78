/*
 * method.c: see method.h.
 */
#include "config.h"

#include "method.h"
#include "util.h"

const char *
sr_ckpt_reason_name(enum sr_ckpt_reason reason)
{
	static const char *const names[] = {
		[SR_REASON_PERIODIC] = "periodic",
		[SR_REASON_NOTICE] = "notice",
		[SR_REASON_EARLY] = "early",
	};

	if ((size_t)reason >= SR_ARRAY_LEN(names))
		sr_fatal("method: no checkpoint reason %d", (int)reason);
	return names[reason];
}
