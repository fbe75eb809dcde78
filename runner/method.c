/*
 * method.c: see method.h. The table of the checkpoint methods by name:
 * adding one is a file filling struct sr_method_ops and a line here (the
 * job file's parser takes the names from here, sr_method_names).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "method.h"
#include "util.h"

/* The checkpoint methods, by the name [checkpoint] mode gives (ops->name);
 * the first is the default. To come: method-cuda.c, the transparent mode. */
static const struct sr_method_ops *const methods[] = {
	&sr_method_dir_ops,
	&sr_method_lib_ops,
};

_Static_assert(SR_ARRAY_LEN(methods) <= SR_JOBSPEC_METHODS_MAX,
    "the job file's parser takes SR_JOBSPEC_METHODS_MAX methods");

void
sr_method_names(struct sr_jobspec_names *names)
{
	size_t i;

	memset(names, 0, sizeof *names);
	for (i = 0; i < SR_ARRAY_LEN(methods); i++)
		names->methods[i] = methods[i]->name;
}

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
sr_method_new(const char *mode, const struct sr_method_ctx *ctx, struct sr_method **out,
    char *err)
{
	const struct sr_method_ops *ops = NULL;
	struct sr_method *m;
	size_t i;

	*out = NULL;
	for (i = 0; i < SR_ARRAY_LEN(methods); i++)
		if (strcmp(mode, methods[i]->name) == 0)
			ops = methods[i];
	if (ops == NULL)
		return sr_err(err, "set up checkpoints: no checkpoint method is called %s", mode);
	m = sr_calloc(1, sizeof *m);
	m->ops = ops;
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
