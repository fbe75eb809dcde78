/*
 * method.c: see method.h. The table of the checkpoint methods by mode:
 * adding one is a file filling struct sr_method_ops and a line here.
 */
#include "config.h"

#include <stdlib.h>

#include "method.h"
#include "util.h"

static const struct sr_method_ops *const methods[] = {
	[SR_MODE_DIRECTORY] = &sr_method_dir_ops,
	[SR_MODE_LIBRARY] = &sr_method_lib_ops,
	[SR_MODE_TRANSPARENT] = NULL,		/* to come: method-cuda.c */
};

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

int
sr_method_new(enum sr_ckpt_mode mode, const struct sr_method_ctx *ctx, struct sr_method **out,
    char *err)
{
	struct sr_method *m;

	*out = NULL;
	if ((size_t)mode >= SR_ARRAY_LEN(methods) || methods[mode] == NULL)
		return sr_err(err, "set up checkpoints: mode %d is not supported yet", (int)mode);
	m = sr_calloc(1, sizeof *m);
	m->ops = methods[mode];
	m->ctx = *ctx;
	if (m->ops->init(m, err) == -1) {
		free(m);
		return -1;
	}
	*out = m;
	return 0;
}

void
sr_method_free(struct sr_method *m)
{
	if (m == NULL)
		return;
	m->ops->free(m);
	free(m);
}
