/*
 * ckpt-store-util.h: what the tests of checkpoints in a store share
 * (t-ckpt, t-fence, t-gangparts): a save's options with the test's log,
 * and an object's text. Header-only, included after ckpt-util.h.
 */
#ifndef SR_CKPT_STORE_UTIL_H
#define SR_CKPT_STORE_UTIL_H

#include "ckpt.h"
#include "store.h"

/* Options for job: chunks of chunk bytes, threads workers, messages to lg. */
TU_FN void
tu_opts(struct sr_ckpt_opts *o, const char *job, size_t chunk, int threads, struct tu_log *lg)
{
	memset(o, 0, sizeof *o);
	o->job = job;
	o->chunk_size = chunk;
	o->threads = threads;
	o->log = tu_log_fn;
	o->log_arg = lg;
}

/* The content of a store object as a string (malloc'd; "" if missing). */
TU_FN char *
tu_store_text(struct sr_store *st, const char *key)
{
	char err[SR_ERRMAX];
	void *buf;
	size_t len;

	if (sr_store_get(st, key, 1 << 20, &buf, &len, NULL, err) != 0)
		return sr_strdup("");
	return buf;
}

#endif
